//! The redelivery delay: a queue attribute (BODELAY, milliseconds; Artemis's
//! redelivery-delay) that keeps a backed-out message invisible for a while before it is
//! offered again, so a consumer that fails on a message does not spin on it.
//!
//! It applies where the backout threshold does (`crate::backout_threshold`): to a
//! message that returns to its queue with a raised BackoutCount (MQBACK, a broken
//! connection's backout, an AMQP `modified` with `delivery-failed`, a consumer that ends
//! with unsettled deliveries) and stays there, below BOTHRESH. A `released` delivery is
//! not a failed attempt (its count is unchanged) and is offered again at once.
//!
//! The message stays in its queue's store (it counts in CURDEPTH, a checkpoint carries
//! it) in state [`MsgState::Delayed`], outside the get order and the id indexes, so no
//! get, browse or consumer sees it. Its due time goes into one ordered set for the whole
//! queue manager, read by [`QueueManager::next_deadline`]: the server's single wait
//! timer also ends delays ([`QueueManager::expire_waits`]), and the message is then
//! handed off as any message that becomes available (a waiting get or consumer takes
//! it at once). Nothing is scheduled, and no timer armed, when BODELAY is 0.
//!
//! The delay is not logged: after a restart a delayed persistent message is available
//! at once (MQ-like simplicity; its BackoutCount is kept).

use crate::clock::Timestamp;
use crate::effects::{Effect, Effects};
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use std::collections::BTreeSet;

/// Messages waiting out a redelivery delay, by due time (ms), queue and arrival number.
#[derive(Debug, Default)]
pub(crate) struct RedeliverySchedule {
    due: BTreeSet<(u64, QueueId, u64)>,
}

impl RedeliverySchedule {
    /// When the first delay ends, if any message waits.
    pub fn next_due(&self) -> Option<u64> {
        self.due.first().map(|(at, _, _)| *at)
    }
}

impl QueueManager {
    /// Returns a backed-out message to queue `qid`: offered at once when the queue's
    /// BODELAY is 0, otherwise stored hidden until the delay is over.
    pub(crate) fn redeliver(
        &mut self,
        qid: QueueId,
        mut msg: StoredMsg,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let delay = self
            .queues
            .get(qid)
            .map_or(0, |e| e.def.attributes.backout_delay);
        if delay <= 0 {
            return self.place(qid, msg, now, fx);
        }
        let earliest = self.next_deadline();
        let Some(lq) = self.queues.local_mut(qid) else {
            return;
        };
        let at = now.0.saturating_add(delay as u64);
        let seq = msg.key.seq;
        debug_assert!(
            lq.store.get(seq).is_none(),
            "a delayed message is stored twice"
        );
        msg.state = MsgState::Delayed;
        lq.store.insert(msg);
        self.redelivery.due.insert((at, qid, seq));
        if earliest.is_none_or(|e| at < e.0) {
            fx.push(Effect::RedeliveryScheduled { at: Timestamp(at) });
        }
        debug_assert!(self.next_deadline().is_some_and(|d| d.0 <= at));
    }

    /// Offers every message whose delay is over at `now` (see the module documentation).
    /// A message no longer delayed (its queue cleared or deleted) is skipped.
    pub(crate) fn release_due_redeliveries(&mut self, now: Timestamp, fx: &mut Effects) {
        while let Some(&(at, qid, seq)) = self.redelivery.due.first() {
            if at > now.0 {
                break;
            }
            self.redelivery.due.remove(&(at, qid, seq));
            let Some(lq) = self.queues.local_mut(qid) else {
                continue;
            };
            let delayed = lq
                .store
                .get(seq)
                .is_some_and(|m| m.state == MsgState::Delayed);
            if !delayed {
                continue;
            }
            if let Some(msg) = lq.store.remove(seq) {
                self.place(qid, *msg, now, fx);
            }
        }
        debug_assert!(self.redelivery.next_due().is_none_or(|d| d > now.0));
    }

    /// Makes the delayed messages of queue `qid` available at once, in place (no
    /// hand-off): CLEAR QLOCAL removes them with the rest.
    pub(crate) fn end_redelivery_delays(&mut self, qid: QueueId) {
        let mine: Vec<(u64, QueueId, u64)> = self
            .redelivery
            .due
            .iter()
            .filter(|(_, q, _)| *q == qid)
            .copied()
            .collect();
        for entry in mine {
            self.redelivery.due.remove(&entry);
            if let Some(lq) = self.queues.local_mut(qid) {
                if lq
                    .store
                    .get(entry.2)
                    .is_some_and(|m| m.state == MsgState::Delayed)
                {
                    lq.store.set_state(entry.2, MsgState::Available);
                }
            }
        }
    }

    /// Panics unless every delayed message has exactly one due time in the schedule
    /// (queues too deep to scan are skipped, as the store's own checks do).
    pub(crate) fn check_redelivery_invariants(&self) {
        for (qid, e) in self.queues.iter() {
            let Some(lq) = e.local.as_ref() else {
                continue;
            };
            let Some(delayed) = lq.store.count_delayed() else {
                continue;
            };
            let scheduled = self
                .redelivery
                .due
                .iter()
                .filter(|(_, q, seq)| {
                    *q == qid
                        && lq
                            .store
                            .get(*seq)
                            .is_some_and(|m| m.state == MsgState::Delayed)
                })
                .count();
            assert_eq!(
                delayed, scheduled,
                "{}: {delayed} delayed messages but {scheduled} due times",
                e.def.name
            );
        }
    }
}
