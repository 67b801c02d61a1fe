//! Report messages the queue manager makes: confirm on arrival (COA, when a message is
//! put), confirm on delivery (COD, when it is got destructively), expiration (when an
//! expired message is discarded) and exception (when a message reached its backout
//! threshold and was dead-lettered or discarded). What a report holds is
//! [`ferry_mqi::report`]'s; this module decides where it goes and with which unit of work.
//!
//! A report goes to the original's ReplyToQ (a local queue, or an alias of one) when
//! its ReplyToQMgr is blank or this queue manager. A report that cannot be put there
//! (no such queue, put inhibited, full, too big, another queue manager: Ferry has no
//! channels yet) goes to DEADQ headed by an MQDLH with the reason; without a usable
//! DEADQ it is discarded and the error log says so ([`Effect::ReportDiscarded`]).
//!
//! A report is part of the operation that caused it ([`ReportUow`]): a COA of a put under
//! syncpoint, or a COD of a get under syncpoint, is an uncommitted put in the same unit
//! of work (a backout leaves no report); outside syncpoint, the report of a persistent
//! message and the operation are logged as one unit of work of their own, in the same
//! record buffer, so a crash keeps both or neither.

use crate::clock::{put_date_time, Timestamp};
use crate::connection::ConnId;
use crate::effects::{Effect, Effects};
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::put_checks::{check_put_allowed, place_for};
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use crate::uow::UowEntry;
use bytes::Bytes;
use ferry_mqi::dead_letter::{
    DeadLetterHeader, APPL_TYPE_QMGR, DEAD_LETTER_HEADER_LEN, FORMAT_DEAD_LETTER_HEADER,
};
use ferry_mqi::descriptor::{EXPIRY_UNLIMITED, NONE_ID};
use ferry_mqi::report::{report_data, report_descriptor, ReportKind, ReportOrigin};
use ferry_mqi::{MessageDescriptor, ReasonCode};
use ferry_objects::queue::{Enablement, QueueType};

/// Which unit of work a report joins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReportUow {
    /// None: the report is put at once (a non-persistent report, or logging off).
    Outside,
    /// The connection's unit of work: the report is an uncommitted put in it.
    Syncpoint(ConnId),
    /// A unit of work of its own with this log id, which already holds the records of
    /// the operation that caused the report; the report's record and the commit end it.
    Own(u64),
}

/// The original message a report is about.
pub(crate) struct Original<'a> {
    /// Its descriptor as stored.
    pub md: &'a MessageDescriptor,
    /// Its body.
    pub body: &'a Bytes,
    /// When it expires, if it does (for MQRO_PASS_DISCARD_AND_EXPIRY).
    pub expires_at: Option<u64>,
}

impl QueueManager {
    /// A fresh log id for a unit of work the queue manager runs for itself.
    pub(crate) fn own_uow_id(next_uow: &mut u64) -> u64 {
        let id = *next_uow;
        *next_uow = next_uow.wrapping_add(1);
        id
    }

    /// The confirm-on-delivery report of a message got or settled, when it asks for one
    /// (see [`QueueManager::send_report`]).
    pub(crate) fn send_cod(
        &mut self,
        md: &MessageDescriptor,
        body: &Bytes,
        expires_at: Option<u64>,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let original = Original {
            md,
            body,
            expires_at,
        };
        self.send_report(ReportKind::Cod, original, uow, now, fx);
    }

    /// Makes and puts a report of `kind` about `original`, if it asks for one, in unit of
    /// work `uow`. With [`ReportUow::Own`] the unit of work is ended (committed) here
    /// whether a report was put or not.
    pub(crate) fn send_report(
        &mut self,
        kind: ReportKind,
        original: Original<'_>,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        if let Some(data) = kind.requested(original.md.report) {
            if !original.md.reply_to_q.is_blank() {
                let expiry_left = match original.expires_at {
                    Some(at) => {
                        let left = at.saturating_sub(now.0).div_ceil(100);
                        i32::try_from(left).unwrap_or(i32::MAX).max(1)
                    }
                    None => EXPIRY_UNLIMITED,
                };
                let origin = ReportOrigin {
                    qmgr_name: &self.name,
                    put_date_time: put_date_time(now),
                    expiry_left,
                    original_length: original.body.len(),
                };
                let mut md = report_descriptor(kind, original.md, data, &origin);
                if md.msg_id == NONE_ID {
                    md.msg_id = self.ids.next_id();
                }
                let body = original.body.slice(report_data(data, original.body));
                self.deliver_report(original.md, md, body, uow, now, fx);
            }
        }
        if let ReportUow::Own(id) = uow {
            fx.log(LogRecord::end_uow(id, true));
            fx.reply_waits();
        }
    }

    /// Puts the report `md`/`body` to the ReplyToQ of `original`, else to DEADQ with an
    /// MQDLH, else discards it and tells the server.
    fn deliver_report(
        &mut self,
        original: &MessageDescriptor,
        md: MessageDescriptor,
        body: Bytes,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let dest_q = original.reply_to_q.as_str().trim_end().to_string();
        let dest_qmgr = original.reply_to_qmgr.as_str().trim_end().to_string();
        let local = dest_qmgr.is_empty() || dest_qmgr == self.name;
        let reason = if local {
            match self.put_report(&dest_q, md, body.clone(), uow, now, fx) {
                Ok(()) => return,
                Err(r) => r,
            }
        } else {
            ReasonCode::UnknownRemoteQMgr
        };
        let dlq = self.qmgr.dead_letter_q.trim().to_string();
        let mut refused = reason;
        if !dlq.is_empty() {
            let header = DeadLetterHeader::for_message(
                &md,
                reason,
                &dest_q,
                &dest_qmgr,
                (APPL_TYPE_QMGR, &self.name),
                put_date_time(now),
            );
            let mut dl_body = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + body.len());
            header.encode(md.encoding, &mut dl_body);
            dl_body.extend_from_slice(&body);
            let mut dl_md = md;
            dl_md.format = FORMAT_DEAD_LETTER_HEADER;
            match self.put_report(&dlq, dl_md, Bytes::from(dl_body), uow, now, fx) {
                Ok(()) => return,
                Err(r) => refused = r,
            }
        }
        fx.push(Effect::ReportDiscarded {
            reply_to_q: dest_q,
            reply_to_qmgr: dest_qmgr,
            feedback: md.feedback,
            reason: refused,
        });
    }

    /// Puts a report on queue `name` (a local queue or an alias of one) with MQ's put
    /// checks, in unit of work `uow`. Nothing changes when it is refused.
    fn put_report(
        &mut self,
        name: &str,
        md: MessageDescriptor,
        body: Bytes,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), ReasonCode> {
        let qid = self.local_for_report(name)?;
        self.put_internal(qid, md, body, Bytes::new(), false, uow, now, fx)
    }

    /// A put the queue manager makes itself (a report, a publication's copy) of a
    /// complete descriptor on local queue `qid`, with MQ's put checks, in unit of work
    /// `uow`. `delivered_persistent`: a non-persistent `md` that is a persistent
    /// publication's copy on a temporary queue (see [`StoredMsg`]). Nothing changes when
    /// it is refused.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_internal(
        &mut self,
        qid: QueueId,
        md: MessageDescriptor,
        body: Bytes,
        properties: Bytes,
        delivered_persistent: bool,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), ReasonCode> {
        let (msg, qname) =
            self.prepare_internal(qid, md, body, properties, delivered_persistent, uow, now)?;
        if self.logging && msg.md.is_persistent() {
            let log_id = self.internal_log_id(uow);
            fx.log(LogRecord::put(log_id, &qname, &msg.logged()?));
            if uow == ReportUow::Outside {
                fx.reply_waits();
            }
        }
        self.commit_internal(qid, msg, uow, now, fx);
        Ok(())
    }

    /// The first half of [`QueueManager::put_internal`]: MQ's put checks and the
    /// message as it will be stored (its place on the queue taken), not yet logged nor
    /// visible. Nothing changes when it is refused.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn prepare_internal(
        &mut self,
        qid: QueueId,
        md: MessageDescriptor,
        body: Bytes,
        properties: Bytes,
        delivered_persistent: bool,
        uow: ReportUow,
        now: Timestamp,
    ) -> Result<(StoredMsg, String), ReasonCode> {
        if let ReportUow::Syncpoint(conn) = uow {
            self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        }
        let entry = self.queues.get_mut(qid).ok_or(ReasonCode::QDeleted)?;
        let attrs = &entry.def.attributes;
        let msg_len = body.len() + properties.len();
        check_put_allowed(attrs, msg_len)?;
        let persistent = md.is_persistent();
        let qname = entry.def.name.clone();
        let lq = entry.local.as_mut().ok_or(ReasonCode::QTypeError)?;
        let rank = place_for(attrs, &lq.store, persistent, md.priority, msg_len)?;
        let key = lq.store.next_key(rank);
        let expires_at = (md.expiry > 0).then(|| now.0.saturating_add(md.expiry as u64 * 100));
        lq.last_put_ms = Some(now.0);
        let msg = StoredMsg {
            key,
            md,
            body: body.into(),
            properties,
            put_ms: now.0,
            expires_at,
            state: MsgState::Available,
            delivered_persistent,
        };
        Ok((msg, qname))
    }

    /// The log id of an internal put's unit of work (None outside any).
    pub(crate) fn internal_log_id(&mut self, uow: ReportUow) -> Option<u64> {
        match uow {
            ReportUow::Outside => None,
            ReportUow::Own(id) => Some(id),
            ReportUow::Syncpoint(conn) => self
                .conns
                .get_mut(&conn)
                .map(|c| c.uow.log_id(&mut self.next_uow)),
        }
    }

    /// The second half of [`QueueManager::put_internal`], once the message is logged:
    /// it joins `uow` (a report is never refused for MAXUMSGS: its cause was admitted
    /// already; once in the unit of work it counts like any message there) or becomes
    /// available at once.
    pub(crate) fn commit_internal(
        &mut self,
        qid: QueueId,
        mut msg: StoredMsg,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let in_uow = match uow {
            ReportUow::Syncpoint(conn) => Some(conn),
            _ => None,
        };
        self.trigger_on_put(qid, msg.md.priority, in_uow, now, fx);
        match uow {
            ReportUow::Syncpoint(conn) => {
                let seq = msg.key.seq;
                msg.state = MsgState::UncommittedPut(conn);
                if let Some(lq) = self.queues.local_mut(qid) {
                    lq.store.insert(msg);
                    lq.joined_uow();
                }
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.uow.entries.push(UowEntry::Put { queue: qid, seq });
                }
            }
            _ => self.place(qid, msg, now, fx),
        }
    }

    /// The local queue a report to `name` goes to: `name` itself, or an alias's target.
    fn local_for_report(&self, name: &str) -> Result<QueueId, ReasonCode> {
        let id = self
            .queues
            .lookup(name)
            .ok_or(ReasonCode::UnknownObjectName)?;
        let entry = self.queues.get(id).ok_or(ReasonCode::UnknownObjectName)?;
        match entry.def.queue_type {
            QueueType::Local => Ok(id),
            QueueType::Alias => {
                if entry.def.attributes.put == Enablement::Disabled {
                    return Err(ReasonCode::PutInhibited);
                }
                self.queues.alias_base(entry)
            }
            _ => Err(ReasonCode::QTypeError),
        }
    }

    /// The expired message `msg`, just discarded from queue `qid`: its expiration
    /// report, if it asks for one. A persistent message's discard is logged (a get
    /// record) in one unit of work with its report.
    pub(crate) fn report_expired(
        &mut self,
        qid: QueueId,
        msg: &StoredMsg,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        if !ferry_mqi::report::wanted(ReportKind::Expiration, &msg.md) {
            return;
        }
        let Ok(body) = msg.body.load() else {
            return;
        };
        let uow = match self.queues.get(qid) {
            Some(e) if self.logging && msg.md.is_persistent() => {
                let id = Self::own_uow_id(&mut self.next_uow);
                fx.log(LogRecord::get(Some(id), &e.def.name, msg.key.seq));
                ReportUow::Own(id)
            }
            _ => ReportUow::Outside,
        };
        let original = Original {
            md: &msg.md,
            body: &body,
            expires_at: None,
        };
        self.send_report(ReportKind::Expiration, original, uow, now, fx);
    }

    /// Sends the expiration reports of the messages gets and consumers discarded as
    /// expired during this call (kept by their queue's store, the queue noted in
    /// `expired_to_report`). Costs one check when there are none.
    pub(crate) fn report_expired_met(&mut self, now: Timestamp, fx: &mut Effects) {
        if self.expired_to_report.is_empty() {
            return;
        }
        for qid in std::mem::take(&mut self.expired_to_report) {
            let Some(lq) = self.queues.local_mut(qid) else {
                continue;
            };
            for msg in std::mem::take(&mut lq.store.expired_for_report) {
                self.report_expired(qid, &msg, now, fx);
            }
        }
    }
}

impl QueueManager {
    /// The exception report (Feedback 2362 MQRC_BACKOUT_THRESHOLD_REACHED) of `msg`,
    /// dead-lettered or discarded at its backout threshold, in unit of work `uow` (which
    /// holds the move's records; ended here).
    pub(crate) fn report_backout_exception(
        &mut self,
        msg: &StoredMsg,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let body = msg.body.load().unwrap_or_default();
        let original = Original {
            md: &msg.md,
            body: &body,
            expires_at: msg.expires_at,
        };
        let kind = ReportKind::Exception(ReasonCode::BackoutThresholdReached);
        self.send_report(kind, original, uow, now, fx);
    }

    /// Discards `msg`, backed out BOTHRESH times from queue `source` with no usable
    /// BOQNAME and MQRO_DISCARD_MSG in its Report, with its exception report. A
    /// persistent message's removal and its report are one unit of work.
    pub(crate) fn discard_backed_out(
        &mut self,
        source: &str,
        msg: StoredMsg,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let uow = if self.logging && msg.md.is_persistent() {
            let id = Self::own_uow_id(&mut self.next_uow);
            fx.log(LogRecord::get(Some(id), source, msg.key.seq));
            ReportUow::Own(id)
        } else {
            ReportUow::Outside
        };
        self.report_backout_exception(&msg, uow, now, fx);
    }
}

impl QueueManager {
    /// Makes the COD reports of the messages consumers received settled during this
    /// call (kept by the consumer table until now). Costs one check when there are none.
    pub(crate) fn report_settled_deliveries(&mut self, now: Timestamp, fx: &mut Effects) {
        if self.consumers.cod_pending.is_empty() {
            return;
        }
        for (msg, uow) in std::mem::take(&mut self.consumers.cod_pending) {
            let body = msg.body.load().unwrap_or_default();
            self.send_cod(&msg.md, &body, msg.expires_at, uow, now, fx);
        }
    }
}

/// True when `md` asks for a confirm-on-arrival report the queue manager would make.
pub(crate) fn wants_coa(md: &MessageDescriptor) -> bool {
    md.report != 0 && ferry_mqi::report::wanted(ReportKind::Coa, md)
}

/// True when `md` asks for a confirm-on-delivery report the queue manager would make.
pub(crate) fn wants_cod(md: &MessageDescriptor) -> bool {
    md.report != 0 && ferry_mqi::report::wanted(ReportKind::Cod, md)
}

/// True when `md` asks for an expiration report the queue manager would make.
pub(crate) fn wants_expiration(md: &MessageDescriptor) -> bool {
    md.report != 0 && ferry_mqi::report::wanted(ReportKind::Expiration, md)
}
