//! MQCMIT and MQBACK: finishing a connection's unit of work.
//!
//! Commit makes syncpoint puts available (handing each to a waiter when one fits) and
//! forgets syncpoint gets. Backout drops the puts and returns each got message to its
//! original position with BackoutCount + 1 (which may wake a waiter).

use crate::clock::Timestamp;
use crate::connection::ConnId;
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::qmgr::QueueManager;
use crate::uow::UowEntry;
use ferry_mqi::{MqError, ReasonCode};

impl QueueManager {
    /// MQCMIT.
    pub fn commit(
        &mut self,
        conn: ConnId,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), MqError> {
            self.check_running(false)?;
            let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
            if std::mem::take(&mut c.uow.backed_out) {
                // Backed out by the queue manager: so is whatever came after.
                self.backout_uow(conn, now, fx);
                return Err(ReasonCode::BackedOut.into());
            }
            self.commit_uow(conn, now, fx);
            Ok(())
        })();
        self.mqi_stats
            .note_result(&result, |m| &mut m.commits, |m| &mut m.backouts);
        self.debug_check();
        result
    }

    /// MQBACK (allowed while stopping, so applications can clean up).
    pub fn backout(
        &mut self,
        conn: ConnId,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), MqError> {
            let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
            c.uow.backed_out = false;
            self.backout_uow(conn, now, fx);
            Ok(())
        })();
        if result.is_ok() {
            self.mqi_stats.backouts += 1;
        }
        self.debug_check();
        result
    }

    /// The connection whose unit of work in flight has logged for longest (the lowest
    /// log id), with the bytes of persistent messages it put: what a full recovery log
    /// backs out ([`QueueManager::back_out_for_log_space`]).
    pub fn oldest_logged_unit_of_work(&self) -> Option<(ConnId, u64)> {
        let (conn, c) = self
            .conns
            .iter()
            .filter(|(_, c)| c.uow.log_id.is_some() && !c.uow.is_empty())
            .min_by_key(|(_, c)| c.uow.log_id)?;
        let bytes = c
            .uow
            .entries
            .iter()
            .filter_map(|e| match *e {
                UowEntry::Put { queue, seq } => {
                    self.queues.get(queue)?.local.as_ref()?.store.get(seq)
                }
                UowEntry::Get { .. } => None,
            })
            .filter(|m| m.md.is_persistent())
            .map(|m| m.body.len() as u64 + m.properties.len() as u64)
            .sum();
        Some((*conn, bytes))
    }

    /// Backs out `conn`'s unit of work on the queue manager's behalf, as MQ does when a
    /// long unit of work would fill the circular recovery log: every checkpoint must
    /// carry its records, so only ending it frees the space. Its messages are released
    /// as by MQBACK; the application's next MQCMIT fails with 2003 MQRC_BACKED_OUT (an
    /// MQBACK succeeds). False when it has no unit of work in flight.
    pub fn back_out_for_log_space(
        &mut self,
        conn: ConnId,
        now: Timestamp,
        fx: &mut Effects,
    ) -> bool {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> bool {
            let Some(c) = self.conns.get_mut(&conn) else {
                return false;
            };
            if c.uow.is_empty() {
                return false;
            }
            c.uow.backed_out = true;
            self.backout_uow(conn, now, fx);
            true
        })();
        self.debug_check();
        result
    }

    /// True when `conn` has uncommitted work.
    pub fn in_unit_of_work(&self, conn: ConnId) -> bool {
        self.conns.get(&conn).is_some_and(|c| !c.uow.is_empty())
    }

    pub(crate) fn commit_uow(&mut self, conn: ConnId, now: Timestamp, fx: &mut Effects) {
        self.end_uow(conn, Outcome::Commit, now, fx);
    }

    pub(crate) fn backout_uow(&mut self, conn: ConnId, now: Timestamp, fx: &mut Effects) {
        self.end_uow(conn, Outcome::Backout, now, fx);
    }

    /// Ends `conn`'s unit of work. Commit makes its puts visible and forgets its gets;
    /// backout forgets its puts and returns each got message to its place with
    /// BackoutCount + 1. Either way a message made visible may go straight to a waiter.
    fn end_uow(&mut self, conn: ConnId, outcome: Outcome, now: Timestamp, fx: &mut Effects) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let entries = std::mem::take(&mut c.uow.entries);
        let logged = c.uow.log_id.is_some();
        if let Some(id) = c.uow.log_id.take() {
            // The outcome is logged before any message it releases can be got: a
            // waiter's get record follows it.
            fx.log(LogRecord::end_uow(id, outcome == Outcome::Commit));
            fx.reply_waits();
        }
        for e in &entries {
            let (UowEntry::Put { queue, seq } | UowEntry::Get { queue, seq }) = *e;
            let Some(lq) = self.queues.local_mut(queue) else {
                continue;
            };
            lq.left_uow();
            let Some(mut msg) = lq.store.remove(seq) else {
                continue;
            };
            match (e, outcome) {
                (UowEntry::Put { .. }, Outcome::Commit) => self.place(queue, *msg, now, fx),
                (UowEntry::Get { .. }, Outcome::Backout) => {
                    msg.md.backout_count = msg.md.backout_count.saturating_add(1);
                    if logged && msg.md.is_persistent() {
                        // The new count as a value, not only as "+1 at backout": replay
                        // over a queue file that already has it stays exact.
                        if let Some(e) = self.queues.get(queue) {
                            fx.log(LogRecord::backout_count(
                                &e.def.name,
                                seq,
                                msg.md.backout_count,
                            ));
                        }
                    }
                    self.return_backed_out(queue, *msg, now, fx);
                }
                // A committed get and a backed-out put leave the queue for good.
                _ => {}
            }
        }
        self.release_triggers(conn, outcome == Outcome::Commit, now, fx);
        self.recycle(conn, entries);
    }

    /// Gives the emptied entry vector back to the connection to keep its allocation.
    fn recycle(&mut self, conn: ConnId, mut entries: Vec<UowEntry>) {
        if let Some(c) = self.conns.get_mut(&conn) {
            if c.uow.entries.is_empty() {
                entries.clear();
                c.uow.entries = entries;
            }
        }
    }
}

/// How a unit of work ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Commit,
    Backout,
}
