//! How a native reply reaches its client: at once, held until the recovery log is
//! durable past the call's records, after the definitions it changed are saved, or as a
//! failure when either could not be written.

use super::socket::SocketShared;
use crate::runtime::reply_wait::{ReplyHold, ReplyWait};
use crate::runtime::server::Server;
use ferry_durability::Hold;
use ferry_engine::GetResult;
use ferry_mqi::ReasonCode;
use ferry_wire::{Reply, Status, Verb};
use std::rc::Rc;

/// Sends `reply` of request `request_id` on `conversation` once what it waits for is
/// durable: the definitions its call changed, then its log records.
#[inline]
pub(super) fn send(
    server: &Server,
    socket: &Rc<SocketShared>,
    conversation: u32,
    request_id: u32,
    reply: &Reply,
    wait: ReplyWait,
) {
    let Some(ticket) = wait.definitions else {
        return send_held(server, socket, wait.log, conversation, request_id, reply);
    };
    // Rare (a definition changed): the reply is kept until the writer has decided.
    let socket = socket.clone();
    let reply = reply.clone();
    server.after_definitions(ticket, move |server, saved| {
        let reply = if saved {
            reply
        } else {
            definitions_not_saved(&reply)
        };
        // A log position it waits for that became durable meanwhile sends it at once
        // (`Server::log_hold` asks the durability decisions).
        send_held(server, &socket, wait.log, conversation, request_id, &reply);
    });
}

/// Sends `reply` as `hold` says: now, held on the socket until the log is durable past
/// the position, or as 2102 MQRC_RESOURCE_PROBLEM when its records were not logged.
#[inline]
pub(super) fn send_held(
    server: &Server,
    socket: &Rc<SocketShared>,
    hold: ReplyHold,
    conversation: u32,
    request_id: u32,
    reply: &Reply,
) {
    let lsn = match hold {
        ReplyHold::Now => return socket.send_reply(conversation, request_id, reply),
        ReplyHold::Fail => {
            let failed = resource_problem(reply.verb());
            return socket.send_reply(conversation, request_id, &failed);
        }
        ReplyHold::Until(lsn) => lsn,
    };
    match server.log_hold(lsn) {
        Hold::Now => socket.send_reply(conversation, request_id, reply),
        Hold::Fail => socket.send_reply(conversation, request_id, &resource_problem(reply.verb())),
        Hold::Until(lsn) => {
            if socket.hold_reply(lsn, conversation, request_id, reply) {
                // The decisions release it at the first flush they hear of that passes
                // `lsn`: none has yet (they said to hold).
                server.note_held(socket.clone());
            }
        }
    }
}

/// The failure reply of `verb` with `reason`.
pub(super) fn fail(verb: Verb, reason: ReasonCode) -> Reply {
    Reply::failure(verb, Status::from_reason(reason)).unwrap_or(Reply::Heartbeat)
}

/// The failure reply of `verb` with 2102 MQRC_RESOURCE_PROBLEM.
pub(super) fn resource_problem(verb: Verb) -> Reply {
    fail(verb, ReasonCode::ResourceProblem)
}

/// `reply` for a request whose definition change could not be written: MQSC output gets
/// the failure line (FRY8101S with 2102) and counts as failed; any other call fails
/// with 2102 MQRC_RESOURCE_PROBLEM.
fn definitions_not_saved(reply: &Reply) -> Reply {
    match reply {
        Reply::Mqsc { status, output } => {
            let mut output = output.clone();
            output.failed = true;
            output.lines.extend(
                ferry_mqsc::executor::admin_failure(
                    ferry_objects::AdminError::Failed {
                        reason: ReasonCode::ResourceProblem,
                        text: "the change is in effect but could not be saved to disk (see the error log, FRY7075E)".into(),
                    },
                    false,
                )
                .lines,
            );
            Reply::Mqsc {
                status: *status,
                output,
            }
        }
        other => resource_problem(other.verb()),
    }
}

/// The wire reply of a finished GET: the message, 2079 with truncated data, or a failure
/// (2080 carries the descriptor, the part that fits and the real length, as MQ does).
pub(super) fn get_reply(result: GetResult) -> Reply {
    let (status, got) = match result {
        Ok(got) => (
            got.warning.map_or(Status::OK, Status::from_reason),
            Some(got),
        ),
        Err(e) => (Status::from(e.error), e.truncated.map(|b| *b)),
    };
    match got {
        Some(got) => Reply::Get {
            status,
            md: got.md,
            data_length: u32::try_from(got.data_length).unwrap_or(u32::MAX),
            // Sent to clients of protocol minor 5 and later (left out below).
            properties: got.properties,
            body: got.data,
        },
        None => Reply::failure(Verb::Get, status).unwrap_or(Reply::Heartbeat),
    }
}
