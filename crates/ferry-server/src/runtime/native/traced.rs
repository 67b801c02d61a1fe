//! The native protocol's calls when tracing is on: the same engine calls `dispatch`
//! makes, wrapped in their spans (`runtime::telemetry`). Out of line, so the dispatch hot
//! path, taken when tracing is off, stays as it was but for one branch.

use bytes::Bytes;
use ferry_engine::{ConnId, GetResult, Hobj};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, MqError, ObjectDescriptor, PutOptionFlags,
    PutOptions, ReasonCode,
};

use crate::runtime::reply_wait::ReplyWait;
use crate::runtime::server::Server;
use crate::runtime::telemetry::{MessageFacts, Protocol};

/// MQPUT with its `send` span.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn put(
    server: &Server,
    wait: &mut ReplyWait,
    conn: ConnId,
    hobj: Hobj,
    md: &mut MessageDescriptor,
    pmo: &PutOptions,
    body: Bytes,
    mut properties: Bytes,
) -> Result<Option<ReasonCode>, MqError> {
    let span = server
        .telemetry
        .start_send("MQPUT", Protocol::Native, &mut properties);
    let body_len = body.len();
    let r = server.call(wait, |e, now, fx| {
        e.put_with_properties(conn, hobj, md, pmo, body, properties, now, fx)
    });
    if let Some(span) = span {
        let engine = server.engine.borrow();
        let facts = MessageFacts {
            destination: engine.handle_name(conn, hobj).unwrap_or(""),
            md,
            body_len,
            conn: Some(conn),
            channel: None,
        };
        let in_unit = pmo.options.contains(PutOptionFlags::SYNCPOINT);
        span.end(&server.telemetry, &facts, outcome(&r), in_unit);
    }
    r
}

/// MQPUT1 with its `send` span.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn put1(
    server: &Server,
    wait: &mut ReplyWait,
    conn: ConnId,
    od: &ObjectDescriptor,
    md: &mut MessageDescriptor,
    pmo: &PutOptions,
    body: Bytes,
    mut properties: Bytes,
) -> Result<Option<ReasonCode>, MqError> {
    let span = server
        .telemetry
        .start_send("MQPUT1", Protocol::Native, &mut properties);
    let body_len = body.len();
    let r = server.call(wait, |e, now, fx| {
        e.put1_with_properties(conn, od, md, pmo, body, properties, now, fx)
    });
    if let Some(span) = span {
        let facts = MessageFacts {
            destination: od.object_name.as_str(),
            md,
            body_len,
            conn: Some(conn),
            channel: None,
        };
        let in_unit = pmo.options.contains(PutOptionFlags::SYNCPOINT);
        span.end(&server.telemetry, &facts, outcome(&r), in_unit);
    }
    r
}

/// Records the `receive` span of an MQGET on `hobj` that returned `result`.
#[inline(never)]
pub(super) fn got(server: &Server, conn: ConnId, hobj: Hobj, gmo: &GetOptions, result: &GetResult) {
    let Ok(m) = result else {
        return;
    };
    if gmo.options.intersects(
        GetOptionFlags::BROWSE_FIRST
            | GetOptionFlags::BROWSE_NEXT
            | GetOptionFlags::BROWSE_MSG_UNDER_CURSOR,
    ) {
        // A browse reads without receiving: no span.
        return;
    }
    let Some(span) = server
        .telemetry
        .start_receive("MQGET", Protocol::Native, &m.properties)
    else {
        return;
    };
    let engine = server.engine.borrow();
    let facts = MessageFacts {
        destination: engine.handle_name(conn, hobj).unwrap_or(""),
        md: &m.md,
        body_len: m.data_length,
        conn: Some(conn),
        channel: None,
    };
    let in_unit = gmo.options.contains(GetOptionFlags::SYNCPOINT);
    span.end(&server.telemetry, &facts, Ok(()), in_unit);
}

/// The outcome a span records for a put's result.
fn outcome(r: &Result<Option<ReasonCode>, MqError>) -> Result<(), ReasonCode> {
    r.as_ref().map(drop).map_err(|e| e.reason)
}
