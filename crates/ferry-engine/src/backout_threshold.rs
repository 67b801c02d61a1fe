//! The backout threshold, enforced by the queue manager for every protocol.
//!
//! MQ leaves BOTHRESH and BOQNAME to its applications; Ferry acts on them itself. When a
//! message returns to its queue with a raised BackoutCount (MQBACK, a broken
//! connection's backout, an AMQP `modified` with `delivery-failed`, a JMS recover or
//! rollback) and the count has reached the queue's BOTHRESH (> 0), the message is moved
//! instead:
//!
//! 1. to the queue named by BOQNAME, unchanged (BackoutCount kept, as MQ's JMS classes
//!    requeue it);
//! 2. else (BOQNAME blank, not a local queue, or the put there refused) to the queue
//!    manager's DEADQ, headed by an MQDLH whose Reason is 2362
//!    MQRC_BACKOUT_THRESHOLD_REACHED;
//! 3. else it stays on its queue, and the error log says why, once per queue
//!    ([`crate::Effect::BackoutRequeueFailed`]).
//!
//! A message whose Report has MQRO_DISCARD_MSG is discarded instead of step 2. A message
//! dead-lettered or discarded so gets its exception report (Feedback 2362) if it asks for
//! one, as MQ's JMS classes make it; a move to BOQNAME is a delivery and makes none.
//!
//! A persistent message's move is logged as a unit of work of its own (the get from
//! its queue, the put to the new one, the commit), in the same record buffer as the
//! backout that raised its count: a crash keeps exactly one copy, on one queue or the
//! other.

use crate::clock::{put_date_time, Timestamp};
use crate::effects::{Effect, Effects};
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::put_checks::{check_put_allowed, place_for};
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use crate::report::ReportUow;
use bytes::Bytes;
use ferry_mqi::dead_letter::{
    DeadLetterHeader, APPL_TYPE_QMGR, DEAD_LETTER_HEADER_LEN, FORMAT_DEAD_LETTER_HEADER,
};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::ReasonCode;

/// The PutApplName the queue manager writes in the MQDLH of a message it dead-letters.
const PUT_APPL_NAME: &str = "ferry backout threshold";

impl QueueManager {
    /// Returns `msg`, whose BackoutCount was just raised, to queue `qid`, or moves it
    /// to BOQNAME or DEADQ when the count has reached the queue's BOTHRESH (see the
    /// module documentation).
    pub(crate) fn return_backed_out(
        &mut self,
        qid: QueueId,
        msg: StoredMsg,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(entry) = self.queues.get(qid) else {
            return;
        };
        let threshold = entry.def.attributes.backout_threshold;
        if threshold <= 0 || msg.md.backout_count < threshold {
            self.redeliver(qid, msg, now, fx);
            return;
        }
        let source = entry.def.name.clone();
        let boq = entry.def.attributes.backout_requeue_q.trim().to_string();
        let body = match msg.body.load() {
            Ok(b) => b,
            Err(reason) => return self.keep_backed_out(qid, msg, reason, now, fx),
        };
        let mut refused = ReasonCode::UnknownObjectName;
        if !boq.is_empty() {
            match self.requeue_to(
                qid,
                &source,
                &boq,
                &msg,
                msg.md,
                body.clone(),
                false,
                now,
                fx,
            ) {
                Ok(()) => return,
                Err(r) => refused = r,
            }
        }
        if ferry_mqi::report::discard_when_undeliverable(&msg.md) {
            return self.discard_backed_out(&source, msg, now, fx);
        }
        let dlq = self.qmgr.dead_letter_q.trim().to_string();
        if !dlq.is_empty() {
            let header = DeadLetterHeader::for_message(
                &msg.md,
                ReasonCode::BackoutThresholdReached,
                &source,
                &self.name,
                (APPL_TYPE_QMGR, PUT_APPL_NAME),
                put_date_time(now),
            );
            let mut dl_body = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + body.len());
            header.encode(msg.md.encoding, &mut dl_body);
            dl_body.extend_from_slice(&body);
            let mut md = msg.md;
            md.format = FORMAT_DEAD_LETTER_HEADER;
            let dl_body = Bytes::from(dl_body);
            match self.requeue_to(qid, &source, &dlq, &msg, md, dl_body, true, now, fx) {
                Ok(()) => return,
                Err(r) => refused = r,
            }
        }
        self.keep_backed_out(qid, msg, refused, now, fx);
    }

    /// Applies the backout threshold to message `seq` of queue `qid`, just returned by
    /// restart recovery's backout of a unit of work in flight at the crash: when its
    /// count has reached BOTHRESH it moves as at any backout, its move logged (recovery
    /// runs with logging off, so it is turned on for the move).
    pub(crate) fn backout_threshold_at_restart(
        &mut self,
        qid: QueueId,
        seq: u64,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(entry) = self.queues.get_mut(qid) else {
            return;
        };
        let threshold = entry.def.attributes.backout_threshold;
        let Some(lq) = entry.local.as_mut() else {
            return;
        };
        let reached = lq
            .store
            .get(seq)
            .is_some_and(|m| threshold > 0 && m.md.backout_count >= threshold);
        if !reached {
            return;
        }
        let Some(msg) = lq.store.remove(seq) else {
            return;
        };
        let logging = std::mem::replace(&mut self.logging, true);
        self.return_backed_out(qid, *msg, now, fx);
        self.logging = logging;
    }

    /// Leaves `msg` on its queue after no move was possible, telling the server once
    /// per queue.
    fn keep_backed_out(
        &mut self,
        qid: QueueId,
        msg: StoredMsg,
        reason: ReasonCode,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        if self.backout_requeue_reported.insert(qid) {
            if let Some(e) = self.queues.get(qid) {
                fx.push(Effect::BackoutRequeueFailed {
                    queue: e.def.name.clone(),
                    reason,
                });
            }
        }
        self.redeliver(qid, msg, now, fx);
    }

    /// Puts a copy of `msg` (descriptor `md`, body `body`) on queue `target` and logs
    /// the move from `source` as one unit of work, with the exception report of a
    /// message `dead_lettered`. Nothing changes when it is refused.
    #[allow(clippy::too_many_arguments)]
    fn requeue_to(
        &mut self,
        from: QueueId,
        source: &str,
        target: &str,
        msg: &StoredMsg,
        md: ferry_mqi::MessageDescriptor,
        body: Bytes,
        dead_lettered: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), ReasonCode> {
        let tid = self
            .queues
            .lookup(target)
            .ok_or(ReasonCode::UnknownObjectName)?;
        if tid == from {
            // Requeueing onto the queue itself would only count on.
            return Err(ReasonCode::QTypeError);
        }
        let logging = self.logging;
        let entry = self.queues.get_mut(tid).ok_or(ReasonCode::QDeleted)?;
        let attrs = &entry.def.attributes;
        let msg_len = body.len().saturating_add(msg.properties.len());
        check_put_allowed(attrs, msg_len)?;
        let persistent = md.persistence == persistence::PERSISTENT;
        let lq = entry.local.as_mut().ok_or(ReasonCode::QTypeError)?;
        let rank = place_for(attrs, &lq.store, persistent, md.priority, msg_len)?;
        let moved = StoredMsg {
            key: lq.store.next_key(rank),
            md,
            body: body.into(),
            properties: msg.properties.clone(),
            put_ms: msg.put_ms,
            expires_at: msg.expires_at,
            state: MsgState::Available,
            delivered_persistent: false,
        };
        lq.last_put_ms = Some(now.0);
        let mut uow = ReportUow::Outside;
        if logging && persistent {
            let id = Self::own_uow_id(&mut self.next_uow);
            fx.log(LogRecord::put(Some(id), target, &moved.logged()?));
            fx.log(LogRecord::get(Some(id), source, msg.key.seq));
            uow = ReportUow::Own(id);
        }
        debug_assert!(self
            .queues
            .get(from)
            .and_then(|e| e.local.as_ref())
            .is_none_or(|lq| lq.store.get(msg.key.seq).is_none()));
        if dead_lettered {
            // Not delivered: an exception report, in the move's unit of work.
            self.report_backout_exception(msg, uow, now, fx);
        } else if let ReportUow::Own(id) = uow {
            fx.log(LogRecord::end_uow(id, true));
            fx.reply_waits();
        }
        self.place(tid, moved, now, fx);
        Ok(())
    }
}
