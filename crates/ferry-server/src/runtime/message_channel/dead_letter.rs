//! Dead-lettering by a channel agent: a message it cannot deliver goes to the queue
//! manager's dead-letter queue with an MQDLH saying why and where it was going, as MQ's
//! channel agents do, so the channel keeps running.
//!
//! The receiving end dead-letters what it cannot put (an unknown queue, a full queue, a
//! message too long); the sending end what it cannot send (a message longer than the
//! channel's MAXMSGL, a transmission queue message without a valid header). Inside the
//! batch's unit of work when the message travelled in it, so a backed-out batch takes
//! its dead letters back too.

use super::engine_session::EngineSession;
use bytes::Bytes;
use ferry_mqi::dead_letter::{
    DeadLetterHeader, APPL_TYPE_QMGR, DEAD_LETTER_HEADER_LEN, FORMAT_DEAD_LETTER_HEADER,
};
use ferry_mqi::options::PutOptionFlags;
use ferry_mqi::{MessageDescriptor, MqError, ObjectDescriptor, PutOptions, ReasonCode};

/// A message a channel agent could not deliver, and why.
pub(crate) struct Undelivered<'a> {
    /// Its descriptor (the application's, with its context).
    pub md: &'a MessageDescriptor,
    /// Its data.
    pub data: &'a [u8],
    /// Its encoded properties.
    pub properties: Bytes,
    /// Why it could not be delivered.
    pub reason: ReasonCode,
    /// The queue it was going to.
    pub queue: &'a str,
    /// That queue's queue manager.
    pub qmgr: &'a str,
    /// It travelled inside the batch's unit of work.
    pub in_unit: bool,
}

/// Puts `message` on the dead-letter queue behind an MQDLH saying why, written by
/// channel `channel`; inside the session's unit of work when the message travelled in
/// it. Returns the dead-letter queue's name; fails when there is none or the put fails.
pub(crate) async fn put(
    session: &EngineSession,
    channel: &str,
    message: Undelivered<'_>,
) -> Result<String, MqError> {
    let Undelivered {
        md,
        data,
        properties,
        reason,
        queue,
        qmgr,
        in_unit,
    } = message;
    let server = session.server();
    let dead_letter_q = server
        .engine
        .borrow()
        .qmgr()
        .dead_letter_q
        .trim()
        .to_string();
    if dead_letter_q.is_empty() {
        return Err(ReasonCode::UnknownObjectName.into());
    }
    let now = crate::runtime::clock::now();
    let header = DeadLetterHeader::for_message(
        md,
        reason,
        queue,
        qmgr,
        (APPL_TYPE_QMGR, channel),
        ferry_engine::clock::put_date_time(now),
    );
    let mut body = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + data.len());
    header.encode(md.encoding, &mut body);
    body.extend_from_slice(data);
    let mut dlq_md = *md;
    dlq_md.format = FORMAT_DEAD_LETTER_HEADER;
    let od = ObjectDescriptor::queue(&dead_letter_q).map_err(|_| ReasonCode::ObjectNameError)?;
    let syncpoint = if in_unit {
        PutOptionFlags::SYNCPOINT
    } else {
        PutOptionFlags::NO_SYNCPOINT
    };
    let pmo = PutOptions::new(
        syncpoint | PutOptionFlags::SET_ALL_CONTEXT | PutOptionFlags::FAIL_IF_QUIESCING,
    );
    session
        .put1(&od, &mut dlq_md, &pmo, Bytes::from(body), properties)
        .await?;
    Ok(dead_letter_q)
}
