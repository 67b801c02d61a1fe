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
        self.check_running(false)?;
        if !self.conns.contains_key(&conn) {
            return Err(ReasonCode::HconnError.into());
        }
        self.commit_uow(conn, now, fx);
        Ok(())
    }

    /// MQBACK (allowed while stopping, so applications can clean up).
    pub fn backout(
        &mut self,
        conn: ConnId,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        if !self.conns.contains_key(&conn) {
            return Err(ReasonCode::HconnError.into());
        }
        self.backout_uow(conn, now, fx);
        Ok(())
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
            lq.uncommitted = lq.uncommitted.saturating_sub(1);
            let Some(mut msg) = lq.store.remove(seq) else {
                continue;
            };
            match (e, outcome) {
                (UowEntry::Put { .. }, Outcome::Commit) => self.place(queue, msg, now, fx),
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
                    self.place(queue, msg, now, fx);
                }
                // A committed get and a backed-out put leave the queue for good.
                _ => {}
            }
        }
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
