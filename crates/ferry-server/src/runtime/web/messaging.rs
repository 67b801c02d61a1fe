//! The messaging REST API, shaped like IBM MQ's v2:
//!
//! - `POST /ibmmq/rest/v2/messaging/qmgr/{qmgr}/queue/{queue}/message`: puts the body (text)
//!   to the queue, its descriptor and properties from the request's `ibm-mq-md-*` and
//!   `ibm-mq-usr-*` headers ([`super::message_headers`]). 201 with `ibm-mq-md-messageId`
//!   (hex).
//! - `DELETE` of the same path: destructive get of the next message (or the one the
//!   `messageId` / `correlationId` query parameters match, in hex), waiting up to `wait`
//!   milliseconds; 200 with the body, its descriptor as `ibm-mq-md-*` headers and its
//!   properties as `ibm-mq-usr-*` headers, 204 when there is none.
//! - `GET` of the same path, and `GET .../messagelist`: browse ([`super::browse`]).
//!
//! Each request is an MQI application of its own on the queue manager's thread: MQCONN
//! as the authenticated user (so CONNECT and the queue's PUT, GET or BROWSE authorities
//! are checked), then MQPUT1, or MQOPEN and MQGET (under syncpoint unless it browses),
//! then MQDISC. A get is committed only while the HTTP client still waits for its answer;
//! one that went (a dropped connection, RequestTimeout) has its message backed out onto
//! the queue.

use super::super::reply_wait::{ReplyHold, ReplyWait};
use super::super::server::{Connection, Server};
use super::auth::Authenticated;
use super::bridge::settled;
use super::errors::{self, RestError};
use super::message_headers::{
    id_from_hex, id_to_hex, message_headers, request_descriptor, request_properties,
};
use super::{browse, RouteProvider, WebContext, WebRouter};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get as get_route, post};
use ferry_engine::{ConnId, ConsumerId, DeliveryToken, GetOutcome, GetResult, GotMessage, Hobj};
use ferry_mqi::descriptor::format;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
    PutOptionFlags, PutOptions, ReasonCode,
};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use tokio::sync::oneshot;

/// The largest message a get returns (MQ's largest MAXMSGL).
pub(super) const MAX_MESSAGE: usize = 104_857_600;

/// The messaging routes.
pub(crate) struct MessagingApi;

impl RouteProvider for MessagingApi {
    fn name(&self) -> &'static str {
        "messaging REST API"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new()
            .route(
                "/ibmmq/rest/v2/messaging/qmgr/{qmgr}/queue/{queue}/message",
                post(put).delete(get).get(browse::browse_message),
            )
            .route(
                "/ibmmq/rest/v2/messaging/qmgr/{qmgr}/queue/{queue}/messagelist",
                get_route(browse::browse_list),
            )
    }
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
    let prepared = queue_name(&queue).and_then(|od| {
        Ok((
            od,
            request_descriptor(&headers)?,
            request_properties(&headers)?,
        ))
    });
    let (od, md, properties) = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
    if std::str::from_utf8(&body).is_err() {
        return errors::bad_request(2110, "the body is not UTF-8 text".into()).into_response();
    }
    let ran =
        ctx.bridge()
            .run(move |server| async move {
                put_message(&server, &who, &od, md, body, properties).await
            })
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
    properties: Bytes,
) -> Result<[u8; 24], RestError> {
    let (conn, _carrier) = connect(server, who)?;
    let mut wait = ReplyWait::default();
    let pmo = PutOptions::new(
        PutOptionFlags::NO_SYNCPOINT
            | PutOptionFlags::FAIL_IF_QUIESCING
            | PutOptionFlags::NEW_MSG_ID,
    );
    let put = server.call(&mut wait, |e, now, fx| {
        e.put1_with_properties(conn, od, &mut md, &pmo, body, properties, now, fx)
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
    let prepared =
        queue_name(&queue).and_then(|od| Ok((od, Selection::from_query(&query, &[], &ctx)?)));
    let (od, selection) = match prepared {
        Ok(p) => p,
        Err(e) => return e.into_response(),
    };
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

/// Which messages a request reads, and how long it waits for one.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Selection {
    msg_id: Option<[u8; 24]>,
    correl_id: Option<[u8; 24]>,
    wait_ms: u32,
}

impl Selection {
    /// The selection a request's query asks for (`messageId`, `correlationId` in hex,
    /// `wait` in milliseconds, cut so the wait ends before RequestTimeout does and the
    /// answer can still be sent). `extra` names the parameters the caller reads itself;
    /// any other is refused.
    pub(super) fn from_query(
        query: &HashMap<String, String>,
        extra: &[&str],
        ctx: &WebContext,
    ) -> Result<Self, RestError> {
        let mut selection = Selection::default();
        for (key, value) in query {
            match key.as_str() {
                "messageId" => {
                    selection.msg_id =
                        Some(id_from_hex(value.trim_matches('"')).ok_or_else(|| {
                            errors::bad_request(
                                ReasonCode::MsgIdError.number(),
                                "messageId must be up to 48 hex digits".into(),
                            )
                        })?)
                }
                "correlationId" => {
                    selection.correl_id =
                        Some(id_from_hex(value.trim_matches('"')).ok_or_else(|| {
                            errors::bad_request(
                                ReasonCode::CorrelIdError.number(),
                                "correlationId must be up to 48 hex digits".into(),
                            )
                        })?)
                }
                "wait" => {
                    selection.wait_ms = value.parse::<u32>().map_err(|_| {
                        errors::bad_request(
                            ReasonCode::WaitIntervalError.number(),
                            "wait must be milliseconds (0 or more)".into(),
                        )
                    })?
                }
                other if extra.contains(&other) => {}
                other => {
                    return Err(errors::bad_request(
                        0,
                        format!(
                            "unknown query parameter '{}'",
                            other.chars().take(64).collect::<String>()
                        ),
                    ))
                }
            }
        }
        let limit = ctx
            .limits()
            .request_timeout
            .as_millis()
            .saturating_sub(1_000);
        selection.wait_ms = selection
            .wait_ms
            .min(u32::try_from(limit).unwrap_or(u32::MAX));
        Ok(selection)
    }

    /// The MQGET options of this selection: `access` plus the wait, the descriptor and
    /// match options that select by identifier.
    fn get_options(&self, access: GetOptionFlags) -> (MessageDescriptor, GetOptions) {
        let mut md = MessageDescriptor::default();
        let mut match_options = MatchOptions::empty();
        if let Some(id) = self.msg_id {
            md.msg_id = id;
            match_options |= MatchOptions::MSG_ID;
        }
        if let Some(id) = self.correl_id {
            md.correl_id = id;
            match_options |= MatchOptions::CORREL_ID;
        }
        let mut options = access | GetOptionFlags::FAIL_IF_QUIESCING;
        if self.wait_ms > 0 {
            options |= GetOptionFlags::WAIT;
        }
        let gmo = GetOptions {
            options,
            wait_interval: i32::try_from(self.wait_ms).unwrap_or(i32::MAX),
            match_options,
        };
        (md, gmo)
    }
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
    let got = match open_queue(server, conn, od, OpenOptions::INPUT_AS_Q_DEF, &mut wait) {
        Ok(hobj) => {
            get_from(
                server,
                conn,
                &carrier,
                hobj,
                &selection,
                GetOptionFlags::SYNCPOINT,
                MAX_MESSAGE,
                &mut wait,
            )
            .await
        }
        Err(e) => Err(e),
    };
    let still_waiting = matches!(gone.try_recv(), Err(oneshot::error::TryRecvError::Empty));
    wait = wait.and(server.end_conversation(conn, still_waiting));
    let got = got?;
    if !settled(server, wait).await {
        return Err(errors::mqi_failed(ReasonCode::ResourceProblem, "MQGET"));
    }
    Ok(got)
}

/// MQOPEN of `od` with `access` (and FAIL_IF_QUIESCING) on `conn`.
pub(super) fn open_queue(
    server: &Rc<Server>,
    conn: ConnId,
    od: &ObjectDescriptor,
    access: OpenOptions,
    wait: &mut ReplyWait,
) -> Result<Hobj, RestError> {
    server
        .call(wait, |e, now, fx| {
            e.open(conn, od, access | OpenOptions::FAIL_IF_QUIESCING, now, fx)
        })
        .map(|opened| opened.hobj)
        .map_err(|e| errors::mqi_failed(e.reason, "MQOPEN"))
}

/// One MQGET on `hobj` with `access` (SYNCPOINT, or a BROWSE_* option) for the message
/// `selection` names, waiting as it asks, returning at most `max_len` bytes of its body
/// (a browse that asks for fewer accepts the truncation). `None`: no message (2033).
#[allow(clippy::too_many_arguments)]
pub(super) async fn get_from(
    server: &Rc<Server>,
    conn: ConnId,
    carrier: &RestConnection,
    hobj: Hobj,
    selection: &Selection,
    access: GetOptionFlags,
    max_len: usize,
    wait: &mut ReplyWait,
) -> Result<Option<GotMessage>, RestError> {
    let (md, mut gmo) = selection.get_options(access);
    if max_len < MAX_MESSAGE {
        gmo.options |= GetOptionFlags::ACCEPT_TRUNCATED_MSG;
    }
    let (tx, rx) = oneshot::channel();
    *carrier.got.borrow_mut() = Some(tx);
    let outcome = server.call(wait, |e, now, fx| {
        e.get(conn, hobj, &md, &gmo, max_len, now, fx)
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

/// 200 with the body, the descriptor as IBM's `ibm-mq-md-*` headers and the properties
/// as `ibm-mq-usr-*` headers.
pub(super) fn message_response(got: GotMessage) -> Response {
    let text = got.md.format == format::STRING;
    let mut r = Response::new(Body::from(got.data.clone()));
    r.headers_mut().insert(
        "content-type",
        HeaderValue::from_static(if text {
            "text/plain;charset=utf-8"
        } else {
            "application/octet-stream"
        }),
    );
    message_headers(&got, r.headers_mut());
    r
}
