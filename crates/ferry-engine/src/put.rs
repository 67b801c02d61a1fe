//! MQPUT and MQPUT1: checks in MQ's order, descriptor completion (ids, context, put
//! date/time, AS_Q_DEF values from the first definition in the resolution path), then
//! the message goes straight to a waiting getter or consumer, or onto the queue. A
//! message may carry properties (encoded [`ferry_mqi::MessageProperties`]), stored and
//! logged with it; they count towards MAXMSGL as in MQ. A message that asks for a
//! confirm-on-arrival report gets it in the put's unit of work (`crate::report`).

use crate::clock::Timestamp;
use crate::connection::{ConnId, HandleTarget, Hobj};
use crate::context::{check_put_context, passed_context, put1_open_options};
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::put_checks::{
    check_descriptor, complete_descriptor, place_for, stored_priority_persistence, Settled,
};
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use crate::report::{wants_coa, Original, ReportUow};
use crate::uow::UowEntry;
use bytes::Bytes;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::report::ReportKind;
use ferry_mqi::{
    CloseOptions, MessageDescriptor, MqError, ObjectDescriptor, OpenOptions, PutOptionFlags,
    PutOptions, ReasonCode,
};
use ferry_objects::queue::{Enablement, YesNo};

pub use crate::context::APPL_TYPE_UNIX;

impl QueueManager {
    /// MQPUT on `hobj`. `md` is completed in place (MsgId, context, PutDate/PutTime,
    /// resolved persistence and priority). Returns a warning (2049) when the call
    /// succeeded with one.
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.put_with_properties(conn, hobj, md, pmo, body, Bytes::new(), now, fx)
    }

    /// MQPUT of a message with properties: `properties` is a
    /// [`ferry_mqi::MessageProperties`] encoding (empty for none), stored as it is.
    #[allow(clippy::too_many_arguments)]
    pub fn put_with_properties(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        properties: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        let r = self.put_uncounted(conn, hobj, md, pmo, body, properties, false, now, fx);
        self.note_put_result(&r, false);
        r
    }

    /// Counts one MQPUT or MQPUT1 (`put1`) that ended with `r` (`md` completed):
    /// STATMQI's PUT or, for a handle on a topic, PUBLISH counts.
    fn note_put_result(&mut self, r: &Result<Option<ReasonCode>, MqError>, put1: bool) {
        let (topic, persistent, bytes) = std::mem::take(&mut self.last_put);
        let m = &mut self.mqi_stats;
        match (topic, r.is_ok()) {
            (true, true) => m.note_topic_put(persistent, bytes),
            (true, false) => m.topic_puts_failed += 1,
            (false, true) => m.note_put(put1, persistent, bytes),
            (false, false) if put1 => m.put1s_failed += 1,
            (false, false) => m.puts_failed += 1,
        }
    }

    /// MQPUT without counting it in STATMQI (a segment of a message MQPUT counts
    /// once, MQPUT1's put); the queue's own counts (STATQ) are kept, with `put1` saying
    /// which verb it was. Leaves what [`QueueManager::note_put_result`] needs in
    /// `last_put`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_uncounted(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        properties: Bytes,
        put1: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.debug_check();
        self.last_put = (false, false, body.len());
        if let Some(max) = self.segmentation_needed(conn, hobj, md, &body, &properties) {
            let total = body.len();
            let r = self.put_segmented(conn, hobj, md, pmo, body, max, now, fx);
            // The segments' puts each noted their own length: the call put them all.
            self.last_put.2 = total;
            self.debug_check();
            return r;
        }
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<Option<ReasonCode>, MqError> {
            let o = pmo.options;
            self.check_running(o.contains(PutOptionFlags::FAIL_IF_QUIESCING))?;
            let reply_to = self.reply_to_resolution(md);
            let max_uncommitted = self.qmgr.max_uncommitted_msgs.max(0) as usize;
            let qm_max_len = self.qmgr.max_msg_length.max(0) as usize;
            let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
            let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
            if h.target == HandleTarget::Topic {
                self.last_put.0 = true;
                let r = self.publish(conn, hobj, md, pmo, body, properties, now, fx);
                self.last_put.1 = md.persistence == persistence::PERSISTENT;
                return r;
            }
            if let HandleTarget::Remote(target) = h.target {
                let r = self.put_remote(conn, hobj, target, md, pmo, body, properties, now, fx);
                self.last_put.1 = md.persistence == persistence::PERSISTENT;
                return r;
            }
            let HandleTarget::Queue { opened, local } = h.target else {
                return Err(ReasonCode::NotOpenForOutput.into());
            };
            if !h.options.contains(OpenOptions::OUTPUT) {
                return Err(ReasonCode::NotOpenForOutput.into());
            }
            if o.contains(PutOptionFlags::SYNCPOINT | PutOptionFlags::NO_SYNCPOINT) {
                return Err(ReasonCode::OptionsError.into());
            }
            check_put_context(o, h.options)?;
            let passed = passed_context(c, pmo)?;

            let first = &self.queues.get(opened).ok_or(ReasonCode::QDeleted)?.def;
            let first_put = first.attributes.put;
            let def_persistence = first.attributes.def_persistence;
            let def_priority = first.attributes.def_priority;
            let entry = self.queues.get_mut(local).ok_or(ReasonCode::QDeleted)?;
            let attrs = &entry.def.attributes;
            if first_put == Enablement::Disabled || attrs.put == Enablement::Disabled {
                return Err(ReasonCode::PutInhibited.into());
            }
            let msg_len = body.len().saturating_add(properties.len());
            if msg_len > qm_max_len {
                return Err(ReasonCode::MsgTooBigForQMgr.into());
            }
            if msg_len > attrs.max_msg_length.max(0) as usize {
                return Err(ReasonCode::MsgTooBigForQ.into());
            }
            check_descriptor(md)?;
            let (prio, pers, mut warning) =
                stored_priority_persistence(md, def_priority, def_persistence == YesNo::Yes);
            let lq = entry.local.as_mut().ok_or(ReasonCode::QTypeError)?;
            let persistent = pers == persistence::PERSISTENT;
            let rank = place_for(attrs, &lq.store, persistent, prio, msg_len)?;
            let sync = o.contains(PutOptionFlags::SYNCPOINT);
            if sync && c.uow.len() >= max_uncommitted {
                return Err(ReasonCode::SyncpointLimitReached.into());
            }
            // Groups and segments (`crate::group`): checked now, applied below.
            let group_plan =
                crate::group::plan_put(h.groups.put.as_ref(), md, o, sync, body.len())?;
            if let Some(w) = group_plan.and_then(|p| p.warning) {
                warning = Some(w);
            }

            // All checks passed: complete the descriptor.
            let settled = Settled {
                priority_persistence: (prio, pers),
                group_plan,
                reply_to,
                passed: passed.as_ref(),
                put_date_time: self.put_stamp.of(now),
            };
            complete_descriptor(md, o, settled, &mut self.ids, c, hobj);

            let key = lq.store.next_key(rank);
            let expires_at = (md.expiry > 0).then(|| now.0.saturating_add(md.expiry as u64 * 100));
            let coa_body = wants_coa(md).then(|| body.clone());
            let mut msg = StoredMsg {
                key,
                md: *md,
                body: body.into(),
                properties,
                put_ms: now.0,
                expires_at,
                state: MsgState::Available,
                delivered_persistent: false,
            };
            lq.last_put_ms = Some(now.0);
            lq.stats.note_put(put1, persistent, self.last_put.2);
            self.last_put.1 = persistent;
            let mut report_uow = ReportUow::Outside;
            if self.logging && pers == persistence::PERSISTENT {
                // Logged before the message can be seen: a waiter's get record follows it.
                let uow = if sync {
                    Some(c.uow.log_id(&mut self.next_uow))
                } else if coa_body.is_some() {
                    // The put and its report: one unit of work of their own.
                    let id = Self::own_uow_id(&mut self.next_uow);
                    report_uow = ReportUow::Own(id);
                    Some(id)
                } else {
                    None
                };
                fx.log(LogRecord::put(uow, &entry.def.name, &msg.logged()?));
                if !sync {
                    fx.reply_waits();
                }
            }
            // Triggering counts the messages there were before this one.
            let trigger = crate::trigger::on_arrival(
                attrs,
                lq,
                md.priority,
                self.triggers.last_made(local),
                self.qmgr.trigger_interval,
                now,
            );
            let to_place = if sync {
                msg.state = MsgState::UncommittedPut(conn);
                lq.store.insert(msg);
                lq.joined_uow();
                c.uow.entries.push(UowEntry::Put {
                    queue: local,
                    seq: key.seq,
                });
                report_uow = ReportUow::Syncpoint(conn);
                None
            } else {
                Some(msg)
            };
            if let Some(body) = coa_body {
                let original = Original {
                    md,
                    body: &body,
                    expires_at,
                };
                self.send_report(ReportKind::Coa, original, report_uow, now, fx);
            }
            if let Some(msg) = to_place {
                self.place(local, msg, now, fx);
            }
            if let Some(kind) = trigger {
                self.fire_trigger(local, kind, sync.then_some(conn), now, fx);
            }
            Ok(warning)
        })();
        self.debug_check();
        result
    }

    /// MQPUT1: open for output, put one message, close; the same checks as both.
    #[allow(clippy::too_many_arguments)]
    pub fn put1(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.put1_with_properties(conn, od, md, pmo, body, Bytes::new(), now, fx)
    }

    /// MQPUT1 of a message with properties (see [`QueueManager::put_with_properties`]).
    #[allow(clippy::too_many_arguments)]
    pub fn put1_with_properties(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        properties: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<Option<ReasonCode>, MqError> {
            let oo = put1_open_options(pmo.options);
            self.last_put = (false, false, body.len());
            let opened = self.open_inner(conn, od, oo, true, now, fx)?;
            let r = self.put_uncounted(conn, opened.hobj, md, pmo, body, properties, true, now, fx);
            // Closing a handle just opened cannot fail.
            let _ = self.close_uncounted(conn, opened.hobj, CloseOptions::empty(), now, fx);
            r
        })();
        self.note_put_result(&result, true);
        self.debug_check();
        result
    }
}
