//! Browsing over the messaging REST API, as IBM MQ's v2 does it; the messages stay on the
//! queue.
//!
//! - `GET /ibmmq/rest/v2/messaging/qmgr/{qmgr}/queue/{queue}/message`: the first message
//!   (or the one `messageId` / `correlationId` select), waiting up to `wait`
//!   milliseconds; 200 with its body and its descriptor and properties as headers
//!   ([`super::message_headers`]), 204 when there is none.
//! - `GET .../queue/{queue}/messagelist`: up to `limit` messages (at most
//!   [`MAX_LIST`]) in the order a get would take them, without bodies:
//!   `{"messages":[{"messageId":..,"correlationId":..,"format":..,"persistence":..,
//!   "expiry":..,"priority":..,"replyTo":..}]}`, the same `messageId` / `correlationId`
//!   selection.
//!
//! Each request is MQCONN as the authenticated user, MQOPEN with MQOO_BROWSE (so the
//! queue's BROWSE authority is checked: 403 with 2035 without it), MQGET with
//! MQGMO_BROWSE_FIRST then BROWSE_NEXT, MQDISC.

use super::super::reply_wait::ReplyWait;
use super::super::server::Server;
use super::auth::Authenticated;
use super::errors::{self, RestError};
use super::message_headers::{expiry_text, id_to_hex, persistence_text, reply_to_text};
use super::messaging::{
    connect, get_from, message_response, open_queue, queue_name, Selection, MAX_MESSAGE,
};
use super::WebContext;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use ferry_engine::GotMessage;
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{GetOptionFlags, ObjectDescriptor, OpenOptions, ReasonCode};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::rc::Rc;

/// The most messages one `messagelist` request lists.
pub(super) const MAX_LIST: usize = 10_000;

/// `GET .../message`: browses one message.
pub(super) async fn browse_message(
    State(ctx): State<WebContext>,
    Path((qmgr, queue)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    who: Authenticated,
) -> Response {
    if qmgr != ctx.qmgr() {
        return errors::unknown_qmgr(&qmgr).into_response();
    }
    let prepared =
        queue_name(&queue).and_then(|od| Ok((od, Selection::from_query(&query, &[], &ctx)?)));
    let (od, selection) = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let ran =
        ctx.bridge()
            .run(move |server| async move {
                browse(&server, &who, &od, selection, 1, MAX_MESSAGE).await
            })
            .await;
    match ran {
        Ok(Ok(mut got)) => match got.pop() {
            Some(got) => message_response(got),
            None => StatusCode::NO_CONTENT.into_response(),
        },
        Ok(Err(e)) => e.into_response(),
        Err(e) => errors::unavailable(2162, e.to_string()).into_response(),
    }
}

/// `GET .../messagelist`: lists the messages' descriptors.
pub(super) async fn browse_list(
    State(ctx): State<WebContext>,
    Path((qmgr, queue)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    who: Authenticated,
) -> Response {
    if qmgr != ctx.qmgr() {
        return errors::unknown_qmgr(&qmgr).into_response();
    }
    if query.contains_key("wait") {
        return errors::bad_request(0, "messagelist does not wait: no 'wait' parameter".into())
            .into_response();
    }
    let prepared = queue_name(&queue).and_then(|od| {
        Ok((
            od,
            Selection::from_query(&query, &["limit"], &ctx)?,
            list_limit(query.get("limit"))?,
        ))
    });
    let (od, selection, limit) = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    let ran = ctx
        .bridge()
        .run(move |server| async move { browse(&server, &who, &od, selection, limit, 0).await })
        .await;
    match ran {
        // A GET-inhibited queue lists nothing, as MQ's does.
        Ok(Err(e)) if e.reason == ReasonCode::GetInhibited.number() => {
            axum::Json(json!({ "messages": [] })).into_response()
        }
        Ok(Ok(got)) => {
            let messages: Vec<Value> = got.iter().map(list_entry).collect();
            axum::Json(json!({ "messages": messages })).into_response()
        }
        Ok(Err(e)) => e.into_response(),
        Err(e) => errors::unavailable(2162, e.to_string()).into_response(),
    }
}

/// The `limit` query parameter: 1 to [`MAX_LIST`], [`MAX_LIST`] when absent.
fn list_limit(limit: Option<&String>) -> Result<usize, RestError> {
    let Some(text) = limit else {
        return Ok(MAX_LIST);
    };
    text.trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_LIST).contains(n))
        .ok_or_else(|| {
            errors::bad_request(0, format!("limit must be a number from 1 to {MAX_LIST}"))
        })
}

/// One message of a list, as JSON.
fn list_entry(got: &GotMessage) -> Value {
    let md = &got.md;
    let mut entry = json!({
        "messageId": id_to_hex(&md.msg_id),
        "format": md.format.as_str().trim(),
        "persistence": persistence_text(md),
        "expiry": expiry_text(md),
        "priority": md.priority,
    });
    if md.correl_id != NONE_ID {
        entry["correlationId"] = json!(id_to_hex(&md.correl_id));
    }
    if let Some(reply_to) = reply_to_text(md) {
        entry["replyTo"] = json!(reply_to);
    }
    entry
}

/// MQCONN, MQOPEN for browse, up to `limit` browses (first, then next) returning at most
/// `max_len` bytes of each body, MQDISC.
async fn browse(
    server: &Rc<Server>,
    who: &Authenticated,
    od: &ObjectDescriptor,
    selection: Selection,
    limit: usize,
    max_len: usize,
) -> Result<Vec<GotMessage>, RestError> {
    debug_assert!(limit >= 1);
    let (conn, carrier) = connect(server, who)?;
    let mut wait = ReplyWait::default();
    let mut found = Vec::new();
    let mut result = Ok(());
    match open_queue(server, conn, od, OpenOptions::BROWSE, &mut wait) {
        Ok(hobj) => {
            let mut access = GetOptionFlags::BROWSE_FIRST;
            while found.len() < limit {
                let got = get_from(
                    server,
                    conn,
                    &carrier,
                    hobj,
                    &selection,
                    access | GetOptionFlags::NO_SYNCPOINT,
                    max_len,
                    &mut wait,
                )
                .await;
                match got {
                    Ok(Some(got)) => found.push(got),
                    Ok(None) => break,
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
                access = GetOptionFlags::BROWSE_NEXT;
            }
        }
        Err(e) => result = Err(e),
    }
    // A browse changes nothing: there is nothing to commit or wait for.
    let _ = server.end_conversation(conn, true);
    result.map(|()| found)
}
