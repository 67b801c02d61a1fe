//! Triggering: the trigger messages (MQTM) the queue manager puts on a queue's
//! initiation queue when a trigger event happens, for a trigger monitor (`ferry
//! trigmon`) or the channel initiator to act on.
//!
//! MQ's conditions for a trigger event, all of which must hold:
//!
//! 1. a message is put on a local queue (by an application, a channel, or the queue
//!    manager itself: a report, a publication);
//! 2. its priority is TRIGMPRI or higher;
//! 3. the messages of TRIGMPRI or higher on the queue, committed or not, were before it:
//!    none (TRIGTYPE(FIRST)), any number (EVERY), TRIGDPTH - 1 (DEPTH);
//! 4. for FIRST and DEPTH, no handle has the queue open for input (IPPROCS 0);
//! 5. the queue has TRIGGER and a TRIGTYPE other than NONE;
//! 6. INITQ is not blank and names a local queue;
//! 7. some handle has the initiation queue open for input (a trigger monitor);
//! 8. PROCESS names a process definition, or is blank on a transmission queue;
//! 9. the queue is not get-inhibited.
//!
//! FIRST also triggers on a queue that was not empty when the queue manager's TRIGINT
//! has passed since the queue's last trigger message (the application started then may
//! have failed). DEPTH turns the queue's TRIGGER off when it triggers, as MQ does (the
//! served application turns it on again, ALTER or MQSET).
//!
//! Conditions are re-evaluated, without a put, when they may have become true with
//! messages already waiting: when the last input handle of a FIRST or DEPTH queue
//! closes (the server found the queue empty and went, and a message came in between);
//! when a handle opens an initiation queue for input (a trigger monitor starting, or the
//! channel initiator at queue manager start: every queue served by it that holds enough
//! messages triggers); and when TRIGGER is turned on or GET enabled again (ALTER, MQSET).
//! Then a FIRST or EVERY queue needs one message of TRIGMPRI or higher, a DEPTH queue
//! TRIGDPTH of them.
//!
//! A trigger message is non-persistent, put outside any unit of work with MQ's
//! descriptor (MsgType DATAGRAM, Format MQTRIG, the initiation queue's default priority,
//! the queue manager as putter). A put under syncpoint that triggers holds its trigger
//! message until the unit of work ends: FIRST and DEPTH put it whether it commits or
//! backs out (the condition was met, and is not met again by the next put), EVERY only
//! when it commits. A trigger message the initiation queue refuses (full, put-inhibited,
//! deleted since) goes to DEADQ headed by an MQDLH with the reason; without a usable
//! DEADQ it is dropped and the server says so ([`Effect::TriggerMessageDiscarded`]).

use crate::clock::{put_date_time, Timestamp};
use crate::connection::ConnId;
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::LocalQueue;
use crate::report::ReportUow;
use bytes::Bytes;
use ferry_mqi::dead_letter::{
    DeadLetterHeader, APPL_TYPE_QMGR, DEAD_LETTER_HEADER_LEN, FORMAT_DEAD_LETTER_HEADER,
};
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::trigger::{TriggerMessage, FORMAT_TRIGGER, TRIGGER_MESSAGE_LEN};
use ferry_mqi::{FixedStr, MessageDescriptor, ReasonCode};
use ferry_objects::queue::{
    Enablement, MsgDeliverySequence, QueueAttributes, QueueType, TriggerType, Usage,
};
use std::collections::HashMap;

/// What triggering remembers between calls: when each queue last made a trigger
/// message (for TRIGINT). Not saved: after a restart every queue may trigger again.
#[derive(Debug, Default)]
pub(crate) struct TriggerState {
    last_made: HashMap<QueueId, u64>,
}

/// A trigger message made under a unit of work, put when the unit of work ends.
#[derive(Debug, Clone)]
pub(crate) struct PendingTrigger {
    /// The initiation queue's name.
    initiation_q: String,
    /// The application queue's name.
    queue: String,
    /// The MQTM.
    message: TriggerMessage,
    /// Made by TRIGTYPE(EVERY): put only if the unit of work commits.
    every: bool,
}

/// Whether a put of a message of `priority` on a queue with `attrs` and state `lq`,
/// taken before the message is stored, is a trigger event by conditions 2 to 5 (the
/// rest, which need the rest of the queue manager, are [`QueueManager::armed`]'s). The
/// trigger type when it is. Cheap when the queue has no TRIGGER, as most have not.
pub(crate) fn on_arrival(
    attrs: &QueueAttributes,
    lq: &LocalQueue,
    priority: i32,
    last_made: Option<u64>,
    trigger_interval: i32,
    now: Timestamp,
) -> Option<TriggerType> {
    if !attrs.trigger || priority < attrs.trigger_msg_priority {
        return None;
    }
    let ranked = attrs.msg_delivery_sequence == MsgDeliverySequence::Priority;
    let min = attrs.trigger_msg_priority;
    let fires = match attrs.trigger_type {
        TriggerType::None => false,
        TriggerType::Every => true,
        TriggerType::First => {
            lq.open_input() == 0
                && (lq.store.count_at_priority(min, 1, ranked) == 0
                    || interval_passed(last_made, trigger_interval, now))
        }
        TriggerType::Depth => {
            let depth = attrs.trigger_depth.max(1) as usize;
            lq.open_input() == 0 && lq.store.count_at_priority(min, depth, ranked) == depth - 1
        }
    };
    fires.then_some(attrs.trigger_type)
}

/// Whether TRIGINT has passed since the queue's last trigger message (never made: yes).
fn interval_passed(last_made: Option<u64>, trigger_interval: i32, now: Timestamp) -> bool {
    last_made.is_none_or(|at| now.0.saturating_sub(at) >= trigger_interval.max(0) as u64)
}

impl TriggerState {
    /// When queue `qid` last made a trigger message.
    pub(crate) fn last_made(&self, qid: QueueId) -> Option<u64> {
        self.last_made.get(&qid).copied()
    }

    /// Queue `qid` is gone: forget it.
    pub(crate) fn forget(&mut self, qid: QueueId) {
        self.last_made.remove(&qid);
    }
}

impl QueueManager {
    /// Conditions 5 to 9 for queue `qid`: its initiation queue's name and the trigger
    /// message it would make, or None.
    fn armed(&self, qid: QueueId) -> Option<(String, TriggerMessage)> {
        let entry = self.queues.get(qid)?;
        let a = &entry.def.attributes;
        if entry.def.queue_type != QueueType::Local
            || !a.trigger
            || a.trigger_type == TriggerType::None
            || a.get == Enablement::Disabled
        {
            return None;
        }
        let initq = a.initiation_q.trim();
        if initq.is_empty() || initq == entry.def.name {
            return None;
        }
        let init = self.queues.get(self.queues.lookup(initq)?)?;
        if init.local.as_ref()?.open_input() == 0 {
            return None;
        }
        let process_name = a.process.trim();
        let mut message = TriggerMessage {
            q_name: FixedStr::truncating(&entry.def.name),
            process_name: FixedStr::truncating(process_name),
            trigger_data: FixedStr::truncating(&a.trigger_data),
            ..TriggerMessage::default()
        };
        if process_name.is_empty() {
            if a.usage != Usage::TransmissionQueue {
                return None;
            }
        } else {
            let p = &self.processes.get(process_name)?.attributes;
            message.appl_type = p.appl_type.mqat();
            message.appl_id = FixedStr::truncating(&p.appl_id);
            message.env_data = FixedStr::truncating(&p.env_data);
            message.user_data = FixedStr::truncating(&p.user_data);
        }
        Some((init.def.name.clone(), message))
    }

    /// A put on `qid` was a trigger event of `kind` ([`on_arrival`], taken before the
    /// message was stored): makes the trigger message if conditions 5 to 9 hold, and
    /// puts it now or, for a put in `uow`'s unit of work, when that ends.
    pub(crate) fn fire_trigger(
        &mut self,
        qid: QueueId,
        kind: TriggerType,
        uow: Option<ConnId>,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some((initiation_q, message)) = self.armed(qid) else {
            return;
        };
        self.triggers.last_made.insert(qid, now.0);
        let Some(entry) = self.queues.get_mut(qid) else {
            return;
        };
        let queue = entry.def.name.clone();
        if kind == TriggerType::Depth {
            entry.def.attributes.trigger = false;
            if !entry.is_temporary() {
                fx.push(Effect::CatalogueChanged(CatalogueChange::Queue(
                    queue.clone(),
                )));
            }
        }
        let pending = PendingTrigger {
            initiation_q,
            queue,
            message,
            every: kind == TriggerType::Every,
        };
        match uow.and_then(|c| self.conns.get_mut(&c)) {
            Some(c) => c.uow.triggers.push(pending),
            None => self.put_trigger(pending, now, fx),
        }
    }

    /// A put of a message of `priority` on local queue `qid`, about to be stored or
    /// handed over, in `uow`'s unit of work (None: outside one): makes the trigger
    /// message the put calls for, if any. For puts whose queue is not borrowed already;
    /// MQPUT uses [`on_arrival`] and [`QueueManager::fire_trigger`] directly.
    pub(crate) fn trigger_on_put(
        &mut self,
        qid: QueueId,
        priority: i32,
        uow: Option<ConnId>,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(entry) = self.queues.get(qid) else {
            return;
        };
        let Some(lq) = entry.local.as_ref() else {
            return;
        };
        if !entry.def.attributes.trigger {
            // Most queues: nothing more to look at.
            return;
        }
        let last = self.triggers.last_made(qid);
        let interval = self.qmgr.trigger_interval;
        if let Some(kind) = on_arrival(&entry.def.attributes, lq, priority, last, interval, now) {
            self.fire_trigger(qid, kind, uow, now, fx);
        }
    }

    /// Re-evaluates queue `qid` without a put (see the module documentation): it
    /// triggers when it holds enough messages of TRIGMPRI or higher. `closing`: its last
    /// input handle just closed (then only FIRST and DEPTH queues trigger).
    pub(crate) fn trigger_reevaluate(
        &mut self,
        qid: QueueId,
        closing: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(entry) = self.queues.get(qid) else {
            return;
        };
        let a = &entry.def.attributes;
        let Some(lq) = entry.local.as_ref() else {
            return;
        };
        if !a.trigger {
            return;
        }
        let ranked = a.msg_delivery_sequence == MsgDeliverySequence::Priority;
        let min = a.trigger_msg_priority;
        let kind = a.trigger_type;
        let needed = match kind {
            TriggerType::None => return,
            TriggerType::Every if closing => return,
            TriggerType::Every | TriggerType::First => 1,
            TriggerType::Depth => a.trigger_depth.max(1) as usize,
        };
        if kind != TriggerType::Every && lq.open_input() > 0 {
            return;
        }
        if lq.store.count_at_priority(min, needed, ranked) < needed {
            return;
        }
        self.fire_trigger(qid, kind, None, now, fx);
    }

    /// A handle opened queue `initq` for input, the first to: every queue it is the
    /// initiation queue of is re-evaluated.
    pub(crate) fn trigger_initiation_queue_opened(
        &mut self,
        initq: QueueId,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(name) = self.queues.get(initq).map(|e| e.def.name.clone()) else {
            return;
        };
        let served: Vec<QueueId> = self
            .queues
            .iter()
            .filter(|(_, e)| {
                e.def.attributes.trigger && e.def.attributes.initiation_q.trim() == name
            })
            .map(|(id, _)| id)
            .collect();
        for qid in served {
            self.trigger_reevaluate(qid, false, now, fx);
        }
    }

    /// `conn`'s unit of work ended: its held trigger messages are put (EVERY's only on
    /// commit).
    pub(crate) fn release_triggers(
        &mut self,
        conn: ConnId,
        committed: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.uow.triggers.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut c.uow.triggers);
        for p in pending {
            if committed || !p.every {
                self.put_trigger(p, now, fx);
            }
        }
    }

    /// Puts a trigger message on its initiation queue, else on DEADQ with an MQDLH,
    /// else drops it and tells the server.
    fn put_trigger(&mut self, p: PendingTrigger, now: Timestamp, fx: &mut Effects) {
        let initq = self.queues.lookup(&p.initiation_q);
        let priority = initq
            .and_then(|id| self.queues.get(id))
            .map_or(0, |e| e.def.attributes.def_priority);
        let md = MessageDescriptor {
            msg_type: msg_type::DATAGRAM,
            format: FORMAT_TRIGGER,
            persistence: persistence::NOT_PERSISTENT,
            priority,
            ccsid: self.qmgr.ccsid,
            msg_id: self.ids.next_id(),
            put_appl_type: APPL_TYPE_QMGR,
            put_appl_name: FixedStr::truncating(&self.name),
            put_date: put_date_time(now).0,
            put_time: put_date_time(now).1,
            ..MessageDescriptor::default()
        };
        let mut body = Vec::with_capacity(TRIGGER_MESSAGE_LEN);
        p.message.encode(md.encoding, &mut body);
        let body = Bytes::from(body);
        let reason = match initq {
            Some(id) => match self.put_trigger_on(id, md, body.clone(), now, fx) {
                Ok(()) => return,
                Err(r) => r,
            },
            None => ReasonCode::UnknownObjectName,
        };
        let dlq = self.qmgr.dead_letter_q.trim().to_string();
        let mut refused = reason;
        if let Some(id) = self.queues.lookup(&dlq) {
            let header = DeadLetterHeader::for_message(
                &md,
                reason,
                &p.initiation_q,
                &self.name,
                (APPL_TYPE_QMGR, &self.name),
                put_date_time(now),
            );
            let mut dl = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + body.len());
            header.encode(md.encoding, &mut dl);
            dl.extend_from_slice(&body);
            let mut dl_md = md;
            dl_md.format = FORMAT_DEAD_LETTER_HEADER;
            match self.put_trigger_on(id, dl_md, Bytes::from(dl), now, fx) {
                Ok(()) => return,
                Err(r) => refused = r,
            }
        }
        fx.push(Effect::TriggerMessageDiscarded {
            queue: p.queue,
            initiation_q: p.initiation_q,
            reason: refused,
        });
    }

    /// A trigger message (or its dead-lettered form) on local queue `id`, with MQ's put
    /// checks, outside any unit of work. It makes no trigger event itself: an initiation
    /// queue is not triggered.
    fn put_trigger_on(
        &mut self,
        id: QueueId,
        md: MessageDescriptor,
        body: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), ReasonCode> {
        let entry = self.queues.get(id).ok_or(ReasonCode::UnknownObjectName)?;
        if entry.def.queue_type != QueueType::Local {
            return Err(ReasonCode::QTypeError);
        }
        let (msg, _) =
            self.prepare_internal(id, md, body, Bytes::new(), false, ReportUow::Outside, now)?;
        self.place(id, msg, now, fx);
        Ok(())
    }
}
