//! The hand-off: where a message goes the moment it becomes available (a put outside
//! syncpoint, a committed put, a backed-out get, a released or modified delivery).
//!
//! Browse consumers with credit that want it get a copy first. Then it goes, whole, to
//! the one destructive taker that comes first among the MQGET waiters that want it
//! (lowest arrival token) and the consumers with credit that want it (lowest turn; see
//! `consumer` for the fairness rule): a waiting get completes
//! ([`crate::Effect::GetCompleted`]), a consumer receives it ([`crate::Effect::Delivered`]).
//! Browse waiters see it and pass it on (a waiting BROWSE_NEXT only a message after its
//! cursor: `waiters`; one with UNMARKED_BROWSE_MSG only a message its handle has not
//! marked), except a browse with MQGMO_LOCK, which takes it like a destructive getter
//! and locks it (`crate::browse_lock`). With no taker it is stored as available. A
//! message never enters the queue when someone is waiting for it. A waiting get's
//! confirm-on-delivery report and an expired message's expiration report are made here
//! too (`crate::report`).

use crate::body::Body;
use crate::browse_marks::{cooperates, Browser};
use crate::clock::Timestamp;
use crate::connection::{ConnId, Connection, Hobj};
use crate::consumer::Delivery;
use crate::effects::{Effect, Effects};
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use crate::report::{wants_cod, ReportUow};
use crate::uow::UowEntry;
use crate::waiters::Waiter;
use ferry_mqi::{GetOptionFlags, MqError, ReasonCode};
use ferry_objects::queue::Enablement;
use std::collections::BTreeMap;

impl QueueManager {
    /// Places a message that just became available on queue `qid` (see the module
    /// documentation). The message must not be in the store.
    pub(crate) fn place(&mut self, qid: QueueId, msg: StoredMsg, now: Timestamp, fx: &mut Effects) {
        self.place_message(qid, msg, now, fx);
        // Gets with group options wait apart: whatever arrived, each looks again.
        if self
            .queues
            .local_mut(qid)
            .is_some_and(|lq| !lq.group_waiters.is_empty())
        {
            self.wake_group_waiters(qid, now, fx);
        }
    }

    fn place_message(
        &mut self,
        qid: QueueId,
        mut msg: StoredMsg,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let max_uncommitted = self.qmgr.max_uncommitted_msgs.max(0) as usize;
        let mark_interval = self.qmgr.msg_mark_browse_interval;
        let logging = self.logging;
        if msg.expired(now) {
            self.report_expired(qid, &msg, now, fx);
            return;
        }
        let Some(entry) = self.queues.get_mut(qid) else {
            return;
        };
        let get_enabled = entry.def.attributes.get == Enablement::Enabled;
        let qname = &entry.def.name;
        let Some(lq) = entry.local.as_mut() else {
            return;
        };
        // Whoever takes it may return it: its body comes back into memory first
        // (`crate::body`). If it cannot be read, the message stays on the queue.
        let body = match msg.body.load() {
            Ok(b) => b,
            Err(_) => {
                msg.state = MsgState::Available;
                lq.store.insert(msg);
                return;
            }
        };
        if !msg.body.is_resident() {
            msg.body = Body::Resident(body.clone());
        }
        let consumers = get_enabled && !lq.consumers.is_empty();
        if consumers {
            self.consumers
                .offer_copies(lq.consumers.browsers(), &msg, now, fx);
        }
        loop {
            let (marks, conns, seq) = (&lq.marks, &self.conns, msg.key.seq);
            // Only a message unmarked for its handle fits a waiting UNMARKED_BROWSE_MSG.
            let unmarked_for = |w: &Waiter| {
                marks.is_none()
                    || conns.get(&w.conn).and_then(|c| c.pending).is_none_or(|p| {
                        !p.gmo.options.contains(GetOptionFlags::UNMARKED_BROWSE_MSG) || {
                            let b = browser_of(conns, w.conn, p.hobj, mark_interval, now);
                            !crate::browse_marks::is_marked(marks, seq, &b)
                        }
                    })
            };
            let waiter = lq
                .waiters
                .best(msg.key, &msg.md, &msg.properties, unmarked_for);
            if consumers {
                let takers = lq.consumers.takers_for(&msg.md);
                if let Some((turn, id)) = self.consumers.best_taker(takers, &msg) {
                    if waiter.is_none_or(|(token, _)| turn < token) {
                        let mut at = Delivery {
                            queue: qid,
                            qname,
                            logging,
                            now,
                            next_token: &mut self.next_token,
                            next_uow: &mut self.next_uow,
                            stats: &mut self.mqi_stats,
                        };
                        self.consumers.deliver_taken(id, lq, msg, &mut at, fx);
                        self.report_settled_deliveries(now, fx);
                        return;
                    }
                }
            }
            let Some((_, slot)) = waiter else {
                break;
            };
            let Some(w) = lq.waiters.take(slot, &msg.md) else {
                break;
            };
            let Some(c) = self.conns.get_mut(&w.conn) else {
                continue;
            };
            let Some(p) = c.pending.take() else {
                continue;
            };
            if let Some(d) = p.deadline {
                self.deadlines.remove(&(d, p.token, w.conn));
            }
            let opts = p.gmo.options;
            let got = crate::get::got_message(&msg, body.clone(), p.max_len, opts, now);
            if opts.is_browse() {
                let lock = got.is_ok() && opts.contains(GetOptionFlags::LOCK);
                if let Some(h) = c.handle_mut(p.hobj) {
                    if got.is_ok() {
                        h.cursor = Some(msg.key);
                        debug_assert!(h.lock.is_none(), "a browse waited holding a lock");
                        h.lock = lock.then_some(msg.key);
                        h.note_got(true, &msg.md);
                    }
                }
                if got.is_ok() {
                    let co_op = c.handle(p.hobj).is_some_and(cooperates);
                    let b = Browser::new(w.conn, p.hobj, co_op, mark_interval, now);
                    let (marks, store) = (&mut lq.marks, &lq.store);
                    crate::browse_marks::browsed(marks, store, seq, &b, opts);
                }
                fx.push(Effect::GetCompleted {
                    conn: w.conn,
                    hobj: p.hobj,
                    result: got,
                    needs_durable: fx.has_log(),
                });
                if lock {
                    msg.state = MsgState::Locked(w.conn, p.hobj);
                    lq.store.insert(msg);
                    return;
                }
                continue;
            }
            let got = match got {
                Ok(g) => g,
                Err(e) => {
                    fx.push(Effect::GetCompleted {
                        conn: w.conn,
                        hobj: p.hobj,
                        result: Err(e),
                        needs_durable: false,
                    });
                    continue;
                }
            };
            let sync = crate::get::under_syncpoint(opts, &msg.md);
            if sync && c.uow.len() >= max_uncommitted {
                fx.push(Effect::GetCompleted {
                    conn: w.conn,
                    hobj: p.hobj,
                    result: Err(MqError::from(ReasonCode::SyncpointLimitReached).into()),
                    needs_durable: false,
                });
                continue;
            }
            lq.last_get_ms = Some(now.0);
            let persistent = msg.md.is_persistent();
            let waited = now.0.saturating_sub(msg.put_ms);
            lq.stats.note_get(persistent, body.len(), waited);
            self.mqi_stats.note_get(persistent, body.len());
            crate::browse_marks::message_got(&mut lq.marks, seq);
            if let Some(h) = c.handle_mut(p.hobj) {
                h.note_got(false, &got.md);
            }
            let cod = if wants_cod(&msg.md) {
                Some((msg.md, msg.expires_at))
            } else {
                None
            };
            let mut report_uow = match sync {
                true => ReportUow::Syncpoint(w.conn),
                false => ReportUow::Outside,
            };
            if logging && msg.md.is_persistent() {
                let uow = if sync {
                    Some(c.uow.log_id(&mut self.next_uow))
                } else if cod.is_some() {
                    // The get and its report: one unit of work of their own.
                    let id = Self::own_uow_id(&mut self.next_uow);
                    report_uow = ReportUow::Own(id);
                    Some(id)
                } else {
                    None
                };
                fx.log(LogRecord::get(uow, qname, msg.key.seq));
            }
            if sync {
                c.uow.entries.push(UowEntry::Get {
                    queue: qid,
                    seq: msg.key.seq,
                });
                msg.state = MsgState::UncommittedGet(w.conn);
                lq.joined_uow();
                lq.store.insert(msg);
            }
            fx.push(Effect::GetCompleted {
                conn: w.conn,
                hobj: p.hobj,
                result: Ok(got),
                needs_durable: fx.has_log(),
            });
            if let Some((md, expires_at)) = cod {
                self.send_cod(&md, &body, expires_at, report_uow, now, fx);
            }
            return;
        }
        msg.state = MsgState::Available;
        lq.store.insert(msg);
        if lq.store.resident_non_persistent_bytes() > self.buffers.non_persistent {
            self.spill_hint = true;
        }
    }
}

/// Handle `hobj` of `conn` as the browse marks see it (cooperating when opened with
/// MQOO_CO_OP).
fn browser_of(
    conns: &BTreeMap<ConnId, Connection>,
    conn: ConnId,
    hobj: Hobj,
    mark_interval: i32,
    now: Timestamp,
) -> Browser {
    let co_op = conns
        .get(&conn)
        .and_then(|c| c.handle(hobj))
        .is_some_and(cooperates);
    Browser::new(conn, hobj, co_op, mark_interval, now)
}
