//! MQOPEN and MQPUT1 of a cluster queue a partial repository knows nothing of: the
//! engine answers 2189 MQRC_CLUSTER_RESOLUTION_ERROR and asks the full repositories
//! (`ferry_engine::cluster::partial`); the call is answered once their answer came, by
//! making it again, or 2189 after `QUERY_PATIENCE_MS` without one, as MQ's MQOPEN waits
//! for the full repositories. The socket's other conversations carry on meanwhile.

use super::reply::{self, fail};
use super::socket::SocketShared;
use crate::runtime::reply_wait::ReplyWait;
use crate::runtime::server::Server;
use bytes::Bytes;
use ferry_engine::cluster::partial::QUERY_PATIENCE_MS;
use ferry_engine::ConnId;
use ferry_mqi::{MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptions, ReasonCode};
use ferry_wire::{Reply, Status, Verb};
use std::rc::Rc;
use std::time::Duration;

/// How often the answer is looked for.
const POLL: Duration = Duration::from_millis(25);

/// True when `reason` says the engine asked the full repositories about `od`'s queue
/// and waits for their answer: the call is then answered later.
pub(super) fn asked(server: &Server, od: &ObjectDescriptor, reason: ReasonCode) -> bool {
    reason == ReasonCode::ClusterResolutionError
        && server
            .engine
            .borrow()
            .cluster_query_pending(od.object_name.as_str())
}

/// Waits until the question about `queue` is answered: false when it was not within
/// `QUERY_PATIENCE_MS`.
async fn answered(server: &Server, queue: &str) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_millis(QUERY_PATIENCE_MS);
    loop {
        if !server.engine.borrow().cluster_query_pending(queue) {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Answers an MQOPEN of `od` once the full repositories answered (the open made again).
pub(super) fn open_later(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    (conversation, request_id): (u32, u32),
    conn: ConnId,
    od: ObjectDescriptor,
    options: OpenOptions,
) {
    let (server, socket) = (server.clone(), socket.clone());
    tokio::task::spawn_local(async move {
        if !answered(&server, od.object_name.as_str()).await {
            let reply = fail(Verb::Open, ReasonCode::ClusterResolutionError);
            socket.send_reply(conversation, request_id, &reply);
            return;
        }
        let mut wait = ReplyWait::default();
        let reply = match server.call(&mut wait, |e, now, fx| e.open(conn, &od, options, now, fx)) {
            Ok(opened) => Reply::Open {
                status: Status::OK,
                hobj: opened.hobj.0,
                resolved_q_name: ferry_mqi::FixedStr::truncating(&opened.resolved_q_name),
                resolved_qmgr_name: ferry_mqi::FixedStr::truncating(&opened.resolved_qmgr_name),
            },
            Err(e) => fail(Verb::Open, e.reason),
        };
        reply::send(&server, &socket, conversation, request_id, &reply, wait);
    });
}

/// What an MQPUT1 made again needs.
pub(super) struct Put1Call {
    /// The object.
    pub od: ObjectDescriptor,
    /// The descriptor as the application gave it.
    pub md: MessageDescriptor,
    /// The put options.
    pub pmo: PutOptions,
    /// The message's properties (their `MessageProperties` encoding; empty: none).
    pub properties: Bytes,
    /// The body.
    pub body: Bytes,
}

/// Answers an MQPUT1 once the full repositories answered (the put made again).
pub(super) fn put1_later(
    server: &Rc<Server>,
    socket: &Rc<SocketShared>,
    (conversation, request_id): (u32, u32),
    conn: ConnId,
    call: Put1Call,
) {
    let (server, socket) = (server.clone(), socket.clone());
    tokio::task::spawn_local(async move {
        let Put1Call {
            od,
            mut md,
            pmo,
            properties,
            body,
        } = call;
        if !answered(&server, od.object_name.as_str()).await {
            let reply = fail(Verb::Put1, ReasonCode::ClusterResolutionError);
            socket.send_reply(conversation, request_id, &reply);
            return;
        }
        let mut wait = ReplyWait::default();
        let r = server.call(&mut wait, |e, now, fx| {
            e.put1_with_properties(conn, &od, &mut md, &pmo, body, properties, now, fx)
        });
        let status = match r {
            Ok(None) => Status::OK,
            Ok(Some(warning)) => Status::from_reason(warning),
            Err(e) => e.into(),
        };
        let reply = Reply::Put1 { status, md };
        reply::send(&server, &socket, conversation, request_id, &reply, wait);
    });
}
