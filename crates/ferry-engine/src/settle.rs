//! Settlement of held deliveries: the AMQP outcomes a consumer sends for messages it
//! received unsettled ([`crate::ConsumeMode::Unsettled`]), mapped onto MQ's get,
//! backout and BackoutCount.
//!
//! | outcome | the held message | log record (persistent message) |
//! |---|---|---|
//! | `Accepted` | removed (a committed destructive get) | one Get record |
//! | `Rejected` | removed like `Accepted` (MQ would dead-letter it; Ferry discards it until dead-letter handling exists) | one Get record |
//! | `Released` | back to its original place, BackoutCount unchanged | none |
//! | `Modified { delivery_failed, undeliverable_here }` | back to its place; BackoutCount + 1 when `delivery_failed`; never again to that consumer when `undeliverable_here` | a BackoutCount record when the count changed |
//!
//! No settlement makes its reply wait for the log ([`crate::Effects::reply_needs_durable`]
//! stays false): if the server crashes before an accept's Get record is durable, the
//! message is delivered again after restart, which at-least-once allows; a lost
//! BackoutCount record only undercounts. A message returned to the queue is offered to
//! waiters and consumers at once, as a backout's is (a failed one after the queue's
//! BODELAY, `crate::redelivery_delay`); one whose raised BackoutCount reached the
//! queue's BOTHRESH goes to BOQNAME or DEADQ instead ([`crate::backout_threshold`]). An
//! accepted message that asks for confirm on delivery makes its COD report
//! (`crate::report`); for a persistent one the Get record and the report's are one unit
//! of work of their own.

use crate::clock::Timestamp;
use crate::connection::ConnId;
use crate::consumer::DeliveryToken;
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::qmgr::QueueManager;
use crate::report::ReportUow;

/// An AMQP delivery outcome for a held message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Settlement {
    /// Consumed: the message is removed.
    Accepted,
    /// Not consumed: back to its place, BackoutCount unchanged.
    Released,
    /// Back to its place, BackoutCount + 1 when `delivery_failed`, and never again to
    /// the same consumer when `undeliverable_here`.
    Modified {
        /// The delivery counts as a failed attempt (AMQP delivery-count + 1).
        delivery_failed: bool,
        /// Do not give the message to this consumer again.
        undeliverable_here: bool,
    },
    /// Poison: removed (see the module documentation).
    Rejected,
}

impl Settlement {
    /// Qpid JMS's default outcome, applied to held messages when a consumer or its
    /// connection ends: `Modified { delivery_failed: true, undeliverable_here: false }`.
    pub const DEFAULT_OUTCOME: Settlement = Settlement::Modified {
        delivery_failed: true,
        undeliverable_here: false,
    };
}

/// A settlement that could not be applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SettleError {
    /// The connection is not known (2018 MQRC_HCONN_ERROR).
    #[error("connection not known (2018 MQRC_HCONN_ERROR)")]
    UnknownConnection,
    /// No held delivery of this connection has this token (already settled, or its
    /// consumer ended).
    #[error("no unsettled delivery {0} on this connection")]
    UnknownDelivery(DeliveryToken),
}

impl QueueManager {
    /// Settles one held delivery of `conn` (allowed while stopping, like MQBACK).
    pub fn settle(
        &mut self,
        conn: ConnId,
        token: DeliveryToken,
        outcome: Settlement,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), SettleError> {
        self.settle_many(conn, &[token], outcome, now, fx)
    }

    /// Settles a batch of held deliveries of `conn` with one outcome (the AMQP layer
    /// batches accepts per BATCHSZ/BATCHINT). Every known token is settled; the first
    /// unknown one, if any, is reported after the rest are done.
    pub fn settle_many(
        &mut self,
        conn: ConnId,
        tokens: &[DeliveryToken],
        outcome: Settlement,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), SettleError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), SettleError> {
            if !self.conns.contains_key(&conn) {
                return Err(SettleError::UnknownConnection);
            }
            let mut unknown = None;
            for &token in tokens {
                let ours = self
                    .consumers
                    .held
                    .get(&token)
                    .is_some_and(|h| h.conn == conn);
                if !ours || !self.settle_held(token, outcome, now, fx) {
                    unknown.get_or_insert(token);
                }
            }
            match unknown {
                Some(t) => Err(SettleError::UnknownDelivery(t)),
                None => Ok(()),
            }
        })();
        self.debug_check();
        result
    }

    /// Removes the deliveries of `conn` a transaction acquired, for the commit that
    /// ends it (AMQP transactional acquisition): [`QueueManager::settle_many`] with
    /// `Accepted`, except that the call's reply waits for the Get records, since a
    /// commit's answer promises the messages are gone for good (MQCMIT's promise).
    pub fn settle_for_commit(
        &mut self,
        conn: ConnId,
        tokens: &[DeliveryToken],
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), SettleError> {
        let r = self.settle_many(conn, tokens, Settlement::Accepted, now, fx);
        if fx.has_log() {
            fx.reply_waits();
        }
        r
    }

    /// Applies `outcome` to held delivery `token`; false when there is no such
    /// delivery. A message whose queue was deleted is simply forgotten.
    pub(crate) fn settle_held(
        &mut self,
        token: DeliveryToken,
        outcome: Settlement,
        now: Timestamp,
        fx: &mut Effects,
    ) -> bool {
        let Some(h) = self.consumers.held.remove(&token) else {
            return false;
        };
        let logging = self.logging;
        let consumer = self.consumers.map.get_mut(&h.consumer);
        let Some(entry) = self.queues.get_mut(h.queue) else {
            return true;
        };
        let Some(lq) = entry.local.as_mut() else {
            return true;
        };
        let Some(mut msg) = lq.store.remove(h.seq) else {
            return true;
        };
        let log = logging && msg.md.is_persistent();
        if let Some(c) = consumer {
            c.held.remove(&token);
            if let Settlement::Modified {
                undeliverable_here: true,
                ..
            } = outcome
            {
                c.refuse(h.seq, &lq.store);
            }
        }
        match outcome {
            Settlement::Accepted if crate::report::wants_cod(&msg.md) => {
                // Delivered: its confirm-on-delivery report, in one unit of work with
                // the get when persistent.
                let uow = if log {
                    let id = Self::own_uow_id(&mut self.next_uow);
                    fx.log(LogRecord::get(Some(id), &entry.def.name, h.seq));
                    ReportUow::Own(id)
                } else {
                    ReportUow::Outside
                };
                let body = msg.body.load().unwrap_or_default();
                self.send_cod(&msg.md, &body, msg.expires_at, uow, now, fx);
                return true;
            }
            Settlement::Accepted | Settlement::Rejected => {
                if log {
                    fx.log(LogRecord::get(None, &entry.def.name, h.seq));
                }
                return true;
            }
            Settlement::Released => {}
            Settlement::Modified {
                delivery_failed, ..
            } => {
                if delivery_failed {
                    msg.md.backout_count = msg.md.backout_count.saturating_add(1);
                    if log {
                        fx.log(LogRecord::backout_count(
                            &entry.def.name,
                            h.seq,
                            msg.md.backout_count,
                        ));
                    }
                    self.return_backed_out(h.queue, *msg, now, fx);
                    return true;
                }
            }
        }
        self.place(h.queue, *msg, now, fx);
        true
    }
}
