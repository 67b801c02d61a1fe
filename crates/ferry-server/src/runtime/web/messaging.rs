//! The messaging REST API, shaped like IBM MQ's v2:
//!
//! - `POST /ibmmq/rest/v2/messaging/qmgr/{qmgr}/queue/{queue}/message`: puts the body (text)
//!   to the queue; headers `ibm-mq-md-correlationId` (hex), `ibm-mq-md-expiry`
//!   (`unlimited` or milliseconds), `ibm-mq-md-persistence` (`persistent` or
//!   `nonPersistent`), `ibm-mq-md-replyTo` (`queue[@qmgr]`). 201 with
//!   `ibm-mq-md-messageId` (hex).
//! - `DELETE` of the same path: destructive get of the next message (or the one the
//!   `messageId` / `correlationId` query parameters match, in hex), waiting up to `wait`
//!   milliseconds; 200 with the body and its descriptor as `ibm-mq-md-*` headers, 204
//!   when there is none.
//!
//! Each request is an MQI application of its own on the queue manager's thread: MQCONN
//! as the authenticated user (so CONNECT and the queue's PUT or GET authorities are
//! checked), then MQPUT1, or MQOPEN and MQGET under syncpoint, then MQDISC. A get is
//! committed only while the HTTP client still waits for its answer; one that went (a
//! dropped connection, RequestTimeout) has its message backed out onto the queue.

use super::super::reply_wait::{ReplyHold, ReplyWait};
use super::super::server::{Connection, Server};
use super::auth::Authenticated;
use super::bridge::settled;
use super::errors::{self, RestError};
use super::{RouteProvider, WebContext, WebRouter};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use ferry_engine::{ConnId, ConsumerId, DeliveryToken, GetOutcome, GetResult, GotMessage};
use ferry_mqi::descriptor::{format, persistence, EXPIRY_UNLIMITED, NONE_ID};
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor,
    OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tokio::sync::oneshot;

/// The largest message a get returns (MQ's largest MAXMSGL).
const MAX_MESSAGE: usize = 104_857_600;

/// The messaging routes.
pub(crate) struct MessagingApi;

impl RouteProvider for MessagingApi {
    fn name(&self) -> &'static str {
        "messaging REST API"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new().route(
            "/ibmmq/rest/v2/messaging/qmgr/{qmgr}/queue/{queue}/message",
            post(put).delete(get),
        )
    }
}

/// A 24-byte identifier from up to 48 hex digits (padded with zeros, as MQ pads).
fn id_from_hex(text: &str) -> Option<[u8; 24]> {
    let text = text.trim();
    if text.is_empty() || text.len() > 48 || !text.len().is_multiple_of(2) {
        return None;
    }
    let mut id = [0u8; 24];
    for (i, pair) in text.as_bytes().chunks(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        id[i] = u8::try_from(hi * 16 + lo).ok()?;
    }
    Some(id)
}

/// An identifier as 48 hex digits (upper case, as IBM's REST API shows them).
pub(crate) fn id_to_hex(id: &[u8; 24]) -> String {
    id.iter().map(|b| format!("{b:02X}")).collect()
}

/// The queue of a path, checked as MQ names are: 400 with 2085's neighbour 2152
/// MQRC_OBJECT_NAME_ERROR when it cannot be one.
pub(crate) fn queue_name(name: &str) -> Result<ObjectDescriptor, RestError> {
    if name.is_empty() || ferry_mqi::validate_object_name(name).is_err() {
        return Err(errors::bad_request(
            ReasonCode::ObjectNameError.number(),
            format!(
                "'{}' is not a valid queue name (1-48 of A-Z a-z 0-9 . / _ %).",
                name.chars().take(64).collect::<String>()
            ),
        ));
    }
    ObjectDescriptor::queue(name)
        .map_err(|e| errors::bad_request(ReasonCode::ObjectNameError.number(), e.to_string()))
}

fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Result<Option<&'a str>, RestError> {
    match headers.get(name) {
        None => Ok(None),
        Some(v) => v
            .to_str()
            .map(|s| Some(s.trim()))
            .map_err(|_| errors::bad_request(0, format!("the {name} header is not text"))),
    }
}

/// The descriptor the request's `ibm-mq-md-*` headers ask for.
fn descriptor(headers: &HeaderMap) -> Result<MessageDescriptor, RestError> {
    let mut md = MessageDescriptor {
        format: format::STRING,
        ccsid: 1208,
        ..MessageDescriptor::default()
    };
    if let Some(c) = header_text(headers, "ibm-mq-md-correlationId")? {
        md.correl_id = id_from_hex(c).ok_or_else(|| {
            errors::bad_request(
                2207,
                "ibm-mq-md-correlationId must be up to 48 hex digits".into(),
            )
        })?;
    }
    if let Some(p) = header_text(headers, "ibm-mq-md-persistence")? {
        md.persistence = match p {
            "persistent" => persistence::PERSISTENT,
            "nonPersistent" => persistence::NOT_PERSISTENT,
            _ => {
                return Err(errors::bad_request(
                    2047,
                    "ibm-mq-md-persistence must be 'persistent' or 'nonPersistent'".into(),
                ))
            }
        };
    }
    if let Some(e) = header_text(headers, "ibm-mq-md-expiry")? {
        md.expiry = if e.eq_ignore_ascii_case("unlimited") {
            EXPIRY_UNLIMITED
        } else {
            let ms: u64 = e.parse().ok().filter(|ms| *ms > 0).ok_or_else(|| {
                errors::bad_request(
                    2013,
                    "ibm-mq-md-expiry must be 'unlimited' or milliseconds".into(),
                )
            })?;
            // MQMD Expiry counts tenths of a second.
            i32::try_from(ms.div_ceil(100)).unwrap_or(i32::MAX)
        };
    }
    if let Some(r) = header_text(headers, "ibm-mq-md-replyTo")? {
        let (q, qm) = r.split_once('@').unwrap_or((r, ""));
        let bad = || errors::bad_request(2027, "ibm-mq-md-replyTo must be queue[@qmgr]".into());
        md.reply_to_q = FixedStr::new(q).map_err(|_| bad())?;
        md.reply_to_qmgr = FixedStr::new(qm).map_err(|_| bad())?;
    }
    if let Some(t) = header_text(headers, "content-type")? {
        if !t.to_ascii_lowercase().starts_with("text/") {
            return Err(RestError {
                status: StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ..errors::bad_request(
                    0,
                    format!("Content-Type '{t}' is not text: send text/plain;charset=utf-8"),
                )
            });
        }
    }
    Ok(md)
}

async fn put(
    State(ctx): State<WebContext>,
    Path((qmgr, queue)): Path<(String, String)>,
    headers: HeaderMap,
    who: Authenticated,
    body: Bytes,
) -> Response {
    if qmgr != ctx.qmgr() {
        return errors::unknown_qmgr(&qmgr).into_response();
    }
    let prepared = queue_name(&queue).and_then(|od| Ok((od, descriptor(&headers)?)));
    let (od, md) = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if std::str::from_utf8(&body).is_err() {
        return errors::bad_request(2110, "the body is not UTF-8 text".into()).into_response();
    }
    let ran = ctx
        .bridge()
        .run(move |server| async move { put_message(&server, &who, &od, md, body).await })
        .await;
    match ran {
        Ok(Ok(msg_id)) => {
            let mut r = StatusCode::CREATED.into_response();
            if let Ok(v) = HeaderValue::from_str(&id_to_hex(&msg_id)) {
                r.headers_mut().insert("ibm-mq-md-messageId", v);
            }
            r
        }
        Ok(Err(e)) => e.into_response(),
        Err(e) => errors::unavailable(2162, e.to_string()).into_response(),
    }
}

/// What carries a REST request's engine connection: it only ever waits for one get.
#[derive(Default)]
pub(crate) struct RestConnection {
    got: RefCell<Option<oneshot::Sender<(GetResult, ReplyHold)>>>,
}

impl Connection for RestConnection {
    fn get_completed(
        self: Rc<Self>,
        _server: &Server,
        _conn: ConnId,
        result: GetResult,
        hold: ReplyHold,
    ) {
        if let Some(tx) = self.got.borrow_mut().take() {
            let _ = tx.send((result, hold));
        }
    }

    fn message_delivered(
        self: Rc<Self>,
        _server: &Server,
        _conn: ConnId,
        _consumer: ConsumerId,
        _token: Option<DeliveryToken>,
        _message: Box<GotMessage>,
        _hold: ReplyHold,
    ) {
        // A REST request never consumes.
    }

    fn consumer_ended(&self, _conn: ConnId, _consumer: ConsumerId, _reason: ReasonCode) {}

    fn retry_log_room(self: Rc<Self>, _server: &Rc<Server>, _call: u32) {}

    fn is_closing(&self) -> bool {
        false
    }
}

/// MQCONN as `who`, carried by a [`RestConnection`].
pub(crate) fn connect(
    server: &Rc<Server>,
    who: &Authenticated,
) -> Result<(ConnId, Rc<RestConnection>), RestError> {
    let info = ferry_engine::ConnectionInfo {
        application_name: "Ferry REST API".into(),
        channel: String::new(),
        connection_name: who.address.clone(),
        user_id: who.user.clone(),
        pid: None,
    };
    let conn = server
        .with_engine(|e, now, fx| e.connect(info, now, fx))
        .map_err(|e| errors::mqi_failed(e.reason, "MQCONN"))?;
    let carrier = Rc::new(RestConnection::default());
    server.begin_conversation(conn, carrier.clone());
    Ok((conn, carrier))
}

/// MQPUT1 outside syncpoint; answered once a persistent message is durable.
pub(crate) async fn put_message(
    server: &Rc<Server>,
    who: &Authenticated,
    od: &ObjectDescriptor,
    mut md: MessageDescriptor,
    body: Bytes,
) -> Result<[u8; 24], RestError> {
    let (conn, _carrier) = connect(server, who)?;
    let mut wait = ReplyWait::default();
    let pmo = PutOptions::new(
        PutOptionFlags::NO_SYNCPOINT
            | PutOptionFlags::FAIL_IF_QUIESCING
            | PutOptionFlags::NEW_MSG_ID,
    );
    let put = server.call(&mut wait, |e, now, fx| {
        e.put1(conn, od, &mut md, &pmo, body, now, fx)
    });
    wait = wait.and(server.end_conversation(conn, true));
    put.map_err(|e| errors::mqi_failed(e.reason, "MQPUT1"))?;
    if !settled(server, wait).await {
        return Err(errors::mqi_failed(ReasonCode::ResourceProblem, "MQPUT1"));
    }
    Ok(md.msg_id)
}

async fn get(
    State(ctx): State<WebContext>,
    Path((qmgr, queue)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    who: Authenticated,
) -> Response {
    if qmgr != ctx.qmgr() {
        return errors::unknown_qmgr(&qmgr).into_response();
    }
    let od = match queue_name(&queue) {
        Ok(od) => od,
        Err(e) => return e.into_response(),
    };
    let mut selection = Selection::default();
    for (key, value) in &query {
        match key.as_str() {
            "messageId" => match id_from_hex(value.trim_matches('"')) {
                Some(id) => selection.msg_id = Some(id),
                None => {
                    return errors::bad_request(
                        2206,
                        "messageId must be up to 48 hex digits".into(),
                    )
                    .into_response()
                }
            },
            "correlationId" => match id_from_hex(value.trim_matches('"')) {
                Some(id) => selection.correl_id = Some(id),
                None => {
                    return errors::bad_request(
                        2207,
                        "correlationId must be up to 48 hex digits".into(),
                    )
                    .into_response()
                }
            },
            "wait" => match value.parse::<u32>() {
                Ok(ms) => selection.wait_ms = ms,
                Err(_) => {
                    return errors::bad_request(
                        2090,
                        "wait must be milliseconds (0 or more)".into(),
                    )
                    .into_response()
                }
            },
            other => {
                return errors::bad_request(0, format!("unknown query parameter '{other}'"))
                    .into_response()
            }
        }
    }
    // The wait ends before RequestTimeout does, so the answer can still be sent.
    let limit = ctx
        .limits()
        .request_timeout
        .as_millis()
        .saturating_sub(1_000);
    selection.wait_ms = selection
        .wait_ms
        .min(u32::try_from(limit).unwrap_or(u32::MAX));
    // Dropped with this request (its client went, RequestTimeout): the get backs out.
    let (_waiting, gone) = oneshot::channel::<()>();
    let ran = ctx
        .bridge()
        .run(move |server| async move { get_message(&server, &who, &od, selection, gone).await })
        .await;
    match ran {
        Ok(Ok(Some(got))) => message_response(got),
        Ok(Ok(None)) => StatusCode::NO_CONTENT.into_response(),
        Ok(Err(e)) => e.into_response(),
        Err(e) => errors::unavailable(2162, e.to_string()).into_response(),
    }
}

/// Which message a get takes, and how long it waits.
#[derive(Clone, Copy, Debug, Default)]
struct Selection {
    msg_id: Option<[u8; 24]>,
    correl_id: Option<[u8; 24]>,
    wait_ms: u32,
}

/// MQOPEN, MQGET under syncpoint (waiting as asked), then MQDISC: committed while the
/// client waits (`gone` open), backed out otherwise. `None`: no message (2033).
async fn get_message(
    server: &Rc<Server>,
    who: &Authenticated,
    od: &ObjectDescriptor,
    selection: Selection,
    mut gone: oneshot::Receiver<()>,
) -> Result<Option<GotMessage>, RestError> {
    let (conn, carrier) = connect(server, who)?;
    let mut wait = ReplyWait::default();
    let got = get_on(server, conn, &carrier, od, selection, &mut wait).await;
    let still_waiting = matches!(gone.try_recv(), Err(oneshot::error::TryRecvError::Empty));
    wait = wait.and(server.end_conversation(conn, still_waiting));
    let got = got?;
    if !settled(server, wait).await {
        return Err(errors::mqi_failed(ReasonCode::ResourceProblem, "MQGET"));
    }
    Ok(got)
}

async fn get_on(
    server: &Rc<Server>,
    conn: ConnId,
    carrier: &RestConnection,
    od: &ObjectDescriptor,
    selection: Selection,
    wait: &mut ReplyWait,
) -> Result<Option<GotMessage>, RestError> {
    let opened = server
        .call(wait, |e, now, fx| {
            e.open(
                conn,
                od,
                OpenOptions::INPUT_AS_Q_DEF | OpenOptions::FAIL_IF_QUIESCING,
                now,
                fx,
            )
        })
        .map_err(|e| errors::mqi_failed(e.reason, "MQOPEN"))?;
    let mut md = MessageDescriptor::default();
    let mut match_options = MatchOptions::empty();
    if let Some(id) = selection.msg_id {
        md.msg_id = id;
        match_options |= MatchOptions::MSG_ID;
    }
    if let Some(id) = selection.correl_id {
        md.correl_id = id;
        match_options |= MatchOptions::CORREL_ID;
    }
    let mut options = GetOptionFlags::SYNCPOINT | GetOptionFlags::FAIL_IF_QUIESCING;
    if selection.wait_ms > 0 {
        options |= GetOptionFlags::WAIT;
    }
    let gmo = GetOptions {
        options,
        wait_interval: i32::try_from(selection.wait_ms).unwrap_or(i32::MAX),
        match_options,
    };
    let (tx, rx) = oneshot::channel();
    *carrier.got.borrow_mut() = Some(tx);
    let outcome = server.call(wait, |e, now, fx| {
        e.get(conn, opened.hobj, &md, &gmo, MAX_MESSAGE, now, fx)
    });
    let result = match outcome {
        GetOutcome::Done(r) => r,
        GetOutcome::Waiting => {
            server.get_waits();
            let (result, hold) = rx
                .await
                .map_err(|_| errors::mqi_failed(ReasonCode::QMgrStopping, "MQGET"))?;
            wait.log = wait.log.and(hold);
            result
        }
    };
    match result {
        Ok(got) => Ok(Some(got)),
        Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => Ok(None),
        Err(e) => Err(errors::mqi_failed(e.error.reason, "MQGET")),
    }
}

/// 200 with the body and the descriptor as IBM's `ibm-mq-md-*` headers.
fn message_response(got: GotMessage) -> Response {
    let md = &got.md;
    let text = md.format == format::STRING;
    let mut r = Response::new(Body::from(got.data));
    let headers = r.headers_mut();
    let mut set = |name: &'static str, value: String| {
        if let Ok(v) = HeaderValue::from_str(&value) {
            headers.insert(name, v);
        }
    };
    set(
        "content-type",
        if text {
            "text/plain;charset=utf-8"
        } else {
            "application/octet-stream"
        }
        .to_string(),
    );
    set("ibm-mq-md-messageId", id_to_hex(&md.msg_id));
    if md.correl_id != NONE_ID {
        set("ibm-mq-md-correlationId", id_to_hex(&md.correl_id));
    }
    set(
        "ibm-mq-md-persistence",
        if md.persistence == persistence::PERSISTENT {
            "persistent"
        } else {
            "nonPersistent"
        }
        .to_string(),
    );
    set(
        "ibm-mq-md-expiry",
        if md.expiry < 0 {
            "unlimited".to_string()
        } else {
            (i64::from(md.expiry) * 100).to_string()
        },
    );
    let reply_q = md.reply_to_q.as_str().trim();
    if !reply_q.is_empty() {
        let qm = md.reply_to_qmgr.as_str().trim();
        set(
            "ibm-mq-md-replyTo",
            if qm.is_empty() {
                reply_q.to_string()
            } else {
                format!("{reply_q}@{qm}")
            },
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_hex() {
        let id = id_from_hex("414D51").unwrap();
        assert_eq!(&id[..3], b"AMQ");
        assert_eq!(id[3..], [0u8; 21]);
        assert_eq!(id_to_hex(&id).len(), 48);
        assert_eq!(id_from_hex(&id_to_hex(&id)), Some(id));
        for bad in ["", "4", "zz", &"00".repeat(25), "é0"] {
            assert_eq!(id_from_hex(bad), None, "{bad}");
        }
    }
}
