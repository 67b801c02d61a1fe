//! Async consumers (MQ's MQCB/MQCTL) fed by credit: how the AMQP channel's receiving
//! links take messages.
//!
//! A consumer lives on an input or browse handle ([`QueueManager::consume`]) and receives
//! messages as [`Effect::Delivered`] while it has credit ([`QueueManager::add_credit`],
//! AMQP link credit): at once for messages already available, later as puts, commits,
//! backouts and settlements make messages available. A connection may run many
//! consumers at once. Three modes:
//!
//! - [`ConsumeMode::Browse`]: copy distribution (a JMS QueueBrowser). Each message is
//!   delivered once per consumer without being removed or locked; the consumer keeps a
//!   browse cursor in get order, plus the few messages that became available *behind*
//!   its cursor while it had no credit. A message returned to the queue (backout,
//!   release, unlock) counts as a new one and is browsed again. Unlike MQ's BROWSE_NEXT,
//!   which passes over a message that sorts before its cursor, a browser thus sees every
//!   message: an AMQP `copy` link promises the queue's messages, not a position in it.
//! - [`ConsumeMode::Settled`]: destructive at once, like MQGET without syncpoint
//!   (at-most-once). A persistent message pushes its get record and its delivery has
//!   `needs_durable`, so the server holds it until the record is durable (else a crash
//!   could deliver it twice). A message that asks for a COD report gets it at delivery
//!   (kept in `ConsumerTable::cod_pending` until the call ends; `crate::report`).
//! - [`ConsumeMode::Unsettled`]: at-least-once. The message is **held** for the consumer
//!   ([`DeliveryToken`]): invisible to everyone else, still in CURDEPTH, part of no unit
//!   of work, until settled ([`QueueManager::settle`]) or the consumer ends.
//!
//! **Fairness** with MQGET waiters: every consumer with credit has a *turn*, a number from
//! the same sequence as waiters' arrival tokens, taken when its credit goes from 0 to
//! more and renewed each time it receives a message.
//! A message that becomes available goes to the lowest turn or token among the consumers
//! and waiters that want it: a consumer with 1000 credit takes one message, then queues
//! behind the getters already waiting (round robin, waiters by arrival).
//!
//! **Byte window**: besides credit, a consumer may be given a window of bytes
//! ([`QueueManager::set_window`]; unbounded until set). Each delivery takes its body and
//! properties from the window, and a consumer whose window is spent receives nothing more
//! until it is widened, whatever its credit: credit alone lets a deep queue of large
//! messages out at once (a held message's body stays in memory until settled), the
//! window bounds it in bytes. A delivery may take the window below zero (one message over),
//! so a message larger than any window still goes.
//!
//! A consumer ends with [`QueueManager::cancel_consumer`], when its handle closes or its
//! connection ends (held messages are then settled `Modified { delivery_failed: true }`,
//! Qpid JMS's default outcome), or when its queue is deleted
//! ([`Effect::ConsumerCancelled`], held messages vanish with the queue). While the queue
//! is get-inhibited a consumer keeps its credit and receives nothing; deliveries resume
//! with the next message made available or the next `add_credit`.

use crate::body::Body;
use crate::clock::Timestamp;
use crate::connection::{ConnId, Connection, HandleTarget, Hobj};
use crate::effects::{Effect, Effects};
use crate::get::whole_message;
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{Criteria, LocalQueue, MessageStore, MsgKey, MsgState, StoredMsg};
use crate::report::ReportUow;
use crate::selection::{find_next, selected, MessageFilter, SharedFilter};
use crate::settle::Settlement;
use ferry_mqi::{CorrelId, MqError, MsgId, OpenOptions, ReasonCode};
use ferry_objects::queue::Enablement;
use foldhash::{HashMap, HashSet, HashSetExt};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::rc::Rc;

/// An async consumer, unique for the life of the queue manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConsumerId(pub u64);

/// A message delivered unsettled and held for its consumer until settled (the AMQP
/// delivery the server tracks); unique for the life of the queue manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct DeliveryToken(pub u64);

impl fmt::Display for DeliveryToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How a consumer takes messages (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConsumeMode {
    /// Copies: nothing removed or locked; needs a handle open for browse.
    Browse,
    /// Removed at delivery (at-most-once); needs a handle open for input.
    Settled,
    /// Held until settled (at-least-once); needs a handle open for input.
    Unsettled,
}

/// What [`QueueManager::consume`] registers.
#[derive(Clone)]
pub struct ConsumeSpec {
    /// Only messages with this MsgId (an index lookup).
    pub msg_id: Option<MsgId>,
    /// Only messages with this CorrelId (an index lookup).
    pub correl_id: Option<CorrelId>,
    /// Only messages this selector selects; `None` uses the handle's selector, if any.
    pub filter: Option<Rc<dyn MessageFilter>>,
    /// Browse, settled or unsettled.
    pub mode: ConsumeMode,
}

impl ConsumeSpec {
    /// Every message, in `mode`.
    pub fn new(mode: ConsumeMode) -> Self {
        ConsumeSpec {
            msg_id: None,
            correl_id: None,
            filter: None,
            mode,
        }
    }
}

impl fmt::Debug for ConsumeSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConsumeSpec")
            .field("msg_id", &self.msg_id)
            .field("correl_id", &self.correl_id)
            .field("filter", &self.filter.is_some())
            .field("mode", &self.mode)
            .finish()
    }
}

/// Messages refused (`undeliverable_here`) kept per consumer before stale entries are
/// pruned.
const REFUSED_PRUNE_AT: usize = 1024;

/// One registered consumer.
#[derive(Debug)]
pub(crate) struct Consumer {
    pub conn: ConnId,
    pub hobj: Hobj,
    /// The local queue it takes from.
    pub queue: QueueId,
    /// The queue named at open (an alias's get-inhibit applies too).
    pub opened: QueueId,
    pub criteria: Criteria,
    pub filter: Option<SharedFilter>,
    pub mode: ConsumeMode,
    pub credit: u32,
    /// Bytes it may still be delivered ([`QueueManager::set_window`]; `u64::MAX`: no
    /// window).
    pub window: u64,
    /// Fairness: lower goes first (see the module documentation).
    pub turn: u64,
    /// Browse: the last message delivered in get order.
    pub cursor: Option<MsgKey>,
    /// Browse: messages that became available behind the cursor without credit.
    pub behind: BTreeSet<MsgKey>,
    /// Deliveries held for it.
    pub held: BTreeSet<DeliveryToken>,
    /// Messages settled `undeliverable_here`: never again to this consumer.
    pub refused: HashSet<u64>,
}

impl Consumer {
    /// True while it may be delivered a message: credit left, and room in its window.
    pub fn has_room(&self) -> bool {
        self.credit > 0 && self.window > 0
    }

    /// Takes one delivery of `bytes` from its credit and window.
    fn spend(&mut self, bytes: usize) {
        debug_assert!(self.has_room(), "a delivery without credit or window");
        self.credit = self.credit.saturating_sub(1);
        if self.window != u64::MAX {
            self.window = self.window.saturating_sub(bytes as u64);
        }
    }

    /// True when the consumer wants `msg` (criteria, not refused, selector).
    pub fn wants(&self, msg: &StoredMsg) -> bool {
        self.criteria.matches(&msg.md)
            && !self.refused.contains(&msg.key.seq)
            && selected(self.filter.as_ref(), msg)
    }

    /// Remembers that message `seq` must not come back to this consumer; forgets
    /// messages no longer on the queue once the set grows.
    pub fn refuse(&mut self, seq: u64, store: &MessageStore) {
        if self.refused.len() >= REFUSED_PRUNE_AT {
            self.refused.retain(|s| store.contains(*s));
        }
        self.refused.insert(seq);
    }

    /// Browse: delivers a copy of `msg`, moving the cursor forward past it (also when
    /// its body, left in the queue file, cannot be read: it is skipped, not retried).
    fn deliver_copy(&mut self, id: ConsumerId, msg: &StoredMsg, now: Timestamp, fx: &mut Effects) {
        if self.cursor.is_none_or(|k| msg.key > k) {
            self.cursor = Some(msg.key);
        }
        let Ok(body) = msg.body.load() else {
            return;
        };
        self.spend(body.len() + msg.properties.len());
        fx.push(Effect::Delivered {
            conn: self.conn,
            consumer: id,
            delivery: None,
            message: Box::new(whole_message(msg, body, now)),
            needs_durable: fx.has_log(),
        });
    }
}

/// A message held for a consumer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    pub conn: ConnId,
    pub consumer: ConsumerId,
    pub queue: QueueId,
    pub seq: u64,
}

/// Where a delivery happens: the queue and the queue manager's state it needs, borrowed
/// field by field so deliveries can run while the queue is borrowed.
pub(crate) struct Delivery<'a> {
    pub queue: QueueId,
    pub qname: &'a str,
    pub logging: bool,
    pub now: Timestamp,
    /// The queue manager's arrival/turn sequence (shared with waiters).
    pub next_token: &'a mut u64,
    /// The queue manager's next unit-of-work log id (a settled delivery's get and its
    /// COD report are one unit of work: `crate::report`).
    pub next_uow: &'a mut u64,
    /// The queue manager's MQI statistics: a delivery is a destructive get.
    pub stats: &'a mut ferry_monitoring::MqiCounters,
}

/// Every consumer and held delivery of the queue manager.
#[derive(Debug, Default)]
pub(crate) struct ConsumerTable {
    pub map: HashMap<ConsumerId, Consumer>,
    pub held: HashMap<DeliveryToken, Held>,
    next_id: u64,
    next_delivery: u64,
    /// Messages delivered settled during the current call that ask for a COD report,
    /// with the unit of work their get record opened, until the queue manager makes
    /// the reports (`crate::report`).
    pub cod_pending: Vec<(StoredMsg, ReportUow)>,
}

impl ConsumerTable {
    /// Browse consumers among `ids` that want `msg` get a copy now (with credit) or
    /// remember it (behind their cursor, without credit).
    pub fn offer_copies(
        &mut self,
        ids: &[ConsumerId],
        msg: &StoredMsg,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        for id in ids {
            let Some(c) = self.map.get_mut(id) else {
                continue;
            };
            if c.mode != ConsumeMode::Browse || !c.wants(msg) {
                continue;
            }
            if c.has_room() {
                c.deliver_copy(*id, msg, now, fx);
            } else if c.cursor.is_some_and(|k| msg.key < k) {
                c.behind.insert(msg.key);
            }
        }
    }

    /// The destructive consumer among `ids` with credit that wants `msg` and has the
    /// lowest turn: (turn, id).
    pub fn best_taker<'a>(
        &self,
        ids: impl Iterator<Item = &'a ConsumerId>,
        msg: &StoredMsg,
    ) -> Option<(u64, ConsumerId)> {
        ids.filter_map(|id| Some((id, self.map.get(id)?)))
            .filter(|(_, c)| c.mode != ConsumeMode::Browse && c.has_room() && c.wants(msg))
            .map(|(id, c)| (c.turn, *id))
            .min()
    }

    /// Delivers `msg` (already out of the store) to destructive consumer `id`: removed
    /// (settled) or held (unsettled).
    pub fn deliver_taken(
        &mut self,
        id: ConsumerId,
        lq: &mut LocalQueue,
        msg: impl Into<Box<StoredMsg>>,
        at: &mut Delivery<'_>,
        fx: &mut Effects,
    ) {
        let mut msg = msg.into();
        let (Some(c), Ok(body)) = (self.map.get_mut(&id), msg.body.load()) else {
            // No such consumer, or a body left in the queue file that cannot be read:
            // the message stays on the queue.
            msg.state = MsgState::Available;
            lq.store.insert(msg);
            return;
        };
        // Held, it may come back: its body is in memory from now on (`crate::body`).
        if !msg.body.is_resident() {
            msg.body = Body::Resident(body.clone());
        }
        crate::browse_marks::message_got(&mut lq.marks, msg.key.seq);
        c.spend(body.len() + msg.properties.len());
        c.turn = *at.next_token;
        *at.next_token += 1;
        lq.last_get_ms = Some(at.now.0);
        let persistent = msg.md.is_persistent();
        let waited = at.now.0.saturating_sub(msg.put_ms);
        lq.stats.note_get(persistent, body.len(), waited);
        at.stats.note_get(persistent, body.len());
        let message = Box::new(whole_message(&msg, body, at.now));
        let delivery = match c.mode {
            ConsumeMode::Unsettled => {
                let token = DeliveryToken(self.next_delivery);
                self.next_delivery += 1;
                c.held.insert(token);
                self.held.insert(
                    token,
                    Held {
                        conn: c.conn,
                        consumer: id,
                        queue: at.queue,
                        seq: msg.key.seq,
                    },
                );
                msg.state = MsgState::Held(id);
                lq.store.insert(msg);
                Some(token)
            }
            ConsumeMode::Settled | ConsumeMode::Browse => {
                let cod = c.mode == ConsumeMode::Settled && crate::report::wants_cod(&msg.md);
                let mut report_uow = ReportUow::Outside;
                if at.logging && msg.md.is_persistent() {
                    let uow = cod.then(|| QueueManager::own_uow_id(at.next_uow));
                    report_uow = uow.map_or(ReportUow::Outside, ReportUow::Own);
                    fx.log(LogRecord::get(uow, at.qname, msg.key.seq));
                }
                if cod {
                    self.cod_pending.push((*msg, report_uow));
                }
                None
            }
        };
        fx.push(Effect::Delivered {
            conn: c.conn,
            consumer: id,
            delivery,
            message,
            needs_durable: fx.has_log(),
        });
    }
}

impl QueueManager {
    /// MQCB (register): an async consumer on `hobj` with no credit yet. Browse needs a
    /// handle open for browse (2036), the other modes one open for input (2037).
    pub fn consume(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        spec: ConsumeSpec,
    ) -> Result<ConsumerId, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<ConsumerId, MqError> {
            self.check_running(false)?;
            let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
            let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
            let HandleTarget::Queue { opened, local } = h.target else {
                return Err(ReasonCode::NotOpenForInput.into());
            };
            match spec.mode {
                ConsumeMode::Browse if !h.options.contains(OpenOptions::BROWSE) => {
                    return Err(ReasonCode::NotOpenForBrowse.into())
                }
                ConsumeMode::Settled | ConsumeMode::Unsettled if !h.options.wants_input() => {
                    return Err(ReasonCode::NotOpenForInput.into())
                }
                _ => {}
            }
            let filter = spec
                .filter
                .map(SharedFilter)
                .or_else(|| h.selection.clone());
            let lq = self.queues.local_mut(local).ok_or(ReasonCode::QDeleted)?;
            let t = &mut self.consumers;
            let id = ConsumerId(t.next_id);
            t.next_id += 1;
            let turn = self.next_token;
            self.next_token += 1;
            t.map.insert(
                id,
                Consumer {
                    conn,
                    hobj,
                    queue: local,
                    opened,
                    criteria: Criteria {
                        msg_id: spec.msg_id,
                        correl_id: spec.correl_id,
                        group: None,
                    },
                    filter,
                    mode: spec.mode,
                    credit: 0,
                    window: u64::MAX,
                    turn,
                    cursor: None,
                    behind: BTreeSet::new(),
                    held: BTreeSet::new(),
                    refused: HashSet::new(),
                },
            );
            if let Some(added) = t.map.get(&id) {
                lq.consumers
                    .add(id, added.mode == ConsumeMode::Browse, &added.criteria);
            }
            c.consumers.push(id);
            Ok(id)
        })();
        self.debug_check();
        result
    }

    /// Adds `n` credit to `consumer` (AMQP flow) and delivers at once up to that many
    /// available messages it wants, in get order; the rest of the credit stays for
    /// messages made available later. 2019 for a consumer this connection does not run.
    pub fn add_credit(
        &mut self,
        conn: ConnId,
        consumer: ConsumerId,
        n: u32,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), MqError> {
            self.check_running(false)?;
            let next_token = &mut self.next_token;
            let c = own_consumer(&self.conns, &mut self.consumers, conn, consumer)?;
            if c.credit == 0 && n > 0 {
                // It starts waiting now: it queues behind those already waiting.
                c.turn = *next_token;
                *next_token += 1;
            }
            c.credit = c.credit.saturating_add(n);
            let (queue, opened) = (c.queue, c.opened);
            let alias_get = self.queues.get(opened).map(|e| e.def.attributes.get);
            let logging = self.logging;
            let Some(entry) = self.queues.get_mut(queue) else {
                return Err(ReasonCode::QDeleted.into());
            };
            if alias_get == Some(Enablement::Disabled)
                || entry.def.attributes.get == Enablement::Disabled
            {
                return Ok(());
            }
            let qname = &entry.def.name;
            let Some(lq) = entry.local.as_mut() else {
                return Err(ReasonCode::QTypeError.into());
            };
            let mut at = Delivery {
                queue,
                qname,
                logging,
                now,
                next_token: &mut self.next_token,
                next_uow: &mut self.next_uow,
                stats: &mut self.mqi_stats,
            };
            let t = &mut self.consumers;
            let mut after = None;
            while let Some(c) = t.map.get_mut(&consumer) {
                if !c.has_room() {
                    break;
                }
                if c.mode == ConsumeMode::Browse {
                    let Some(k) = next_browse(c, &mut lq.store, now) else {
                        break;
                    };
                    if let Some(m) = lq.store.get(k.seq) {
                        c.deliver_copy(consumer, &m, now, fx);
                    }
                    continue;
                }
                let Some(k) = find_next(&mut lq.store, &c.criteria, after, now, |m| c.wants(m))
                else {
                    break;
                };
                after = Some(k);
                let Some(msg) = lq.store.remove(k.seq) else {
                    break;
                };
                t.deliver_taken(consumer, lq, msg, &mut at, fx);
            }
            if !lq.store.expired_for_report.is_empty() {
                self.expired_to_report.push(queue);
            }
            Ok(())
        })();
        self.report_expired_met(now, fx);
        self.report_settled_deliveries(now, fx);
        self.debug_check();
        result
    }

    /// Sets the bytes `consumer` may still be delivered (see the module's "Byte window")
    /// and, when that opens room, delivers available messages as [`add_credit`] does.
    ///
    /// [`add_credit`]: QueueManager::add_credit
    pub fn set_window(
        &mut self,
        conn: ConnId,
        consumer: ConsumerId,
        bytes: u64,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), MqError> {
            let c = self.own_consumer(conn, consumer)?;
            let opened = c.window == 0 && bytes > 0;
            c.window = bytes;
            if opened {
                self.add_credit(conn, consumer, 0, now, fx)?;
            }
            Ok(())
        })();
        self.debug_check();
        result
    }

    /// The bytes `consumer` may still be delivered (`u64::MAX`: no window).
    pub fn window(&self, conn: ConnId, consumer: ConsumerId) -> Result<u64, MqError> {
        match self.consumers.map.get(&consumer) {
            Some(c) if c.conn == conn => Ok(c.window),
            _ => Err(ReasonCode::HobjError.into()),
        }
    }

    /// AMQP drain: the credit `consumer` had left, now 0.
    pub fn drain(&mut self, conn: ConnId, consumer: ConsumerId) -> Result<u32, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<u32, MqError> {
            let c = self.own_consumer(conn, consumer)?;
            Ok(std::mem::take(&mut c.credit))
        })();
        self.debug_check();
        result
    }

    /// The credit `consumer` has left.
    pub fn credit(&self, conn: ConnId, consumer: ConsumerId) -> Result<u32, MqError> {
        match self.consumers.map.get(&consumer) {
            Some(c) if c.conn == conn => Ok(c.credit),
            _ => Err(ReasonCode::HobjError.into()),
        }
    }

    /// How many deliveries are held unsettled for `consumer` (0 when unknown).
    pub fn held_count(&self, consumer: ConsumerId) -> usize {
        self.consumers
            .map
            .get(&consumer)
            .map_or(0, |c| c.held.len())
    }

    /// MQCB (deregister): ends `consumer`; its held messages are settled with
    /// `unsettled` (Qpid's default outcome is `Modified { delivery_failed: true }`).
    pub fn cancel_consumer(
        &mut self,
        conn: ConnId,
        consumer: ConsumerId,
        unsettled: Settlement,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), MqError> {
            self.own_consumer(conn, consumer)?;
            self.end_consumers(&[consumer], unsettled, now, fx);
            Ok(())
        })();
        self.debug_check();
        result
    }

    /// The consumer `id` if `conn` runs it (2019 otherwise).
    fn own_consumer(&mut self, conn: ConnId, id: ConsumerId) -> Result<&mut Consumer, MqError> {
        own_consumer(&self.conns, &mut self.consumers, conn, id)
    }

    /// The consumers `conn` runs on `hobj` (every handle when `None`).
    pub(crate) fn consumers_of(&self, conn: ConnId, hobj: Option<Hobj>) -> Vec<ConsumerId> {
        let Some(c) = self.conns.get(&conn) else {
            return Vec::new();
        };
        c.consumers
            .iter()
            .copied()
            .filter(|id| {
                self.consumers
                    .map
                    .get(id)
                    .is_some_and(|k| hobj.is_none_or(|h| k.hobj == h))
            })
            .collect()
    }

    /// Ends consumers: first every one is unregistered (so none receives what another
    /// returns), then their held messages are settled with `settlement`.
    pub(crate) fn end_consumers(
        &mut self,
        ids: &[ConsumerId],
        settlement: Settlement,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let mut tokens = Vec::new();
        for id in ids {
            let Some(c) = self.consumers.map.remove(id) else {
                continue;
            };
            if let Some(conn) = self.conns.get_mut(&c.conn) {
                conn.consumers.retain(|x| x != id);
            }
            if let Some(lq) = self.queues.local_mut(c.queue) {
                lq.consumers.remove(*id);
            }
            tokens.extend(c.held);
        }
        for token in tokens {
            self.settle_held(token, settlement, now, fx);
        }
    }

    /// Queue `qid` is being deleted: its consumers end with 2052 and their held
    /// messages vanish with it.
    pub(crate) fn drop_queue_consumers(&mut self, qid: QueueId, fx: &mut Effects) {
        let ids = self
            .queues
            .local_mut(qid)
            .map(|lq| lq.consumers.take_all())
            .unwrap_or_default();
        for id in ids {
            let Some(c) = self.consumers.map.remove(&id) else {
                continue;
            };
            for token in &c.held {
                self.consumers.held.remove(token);
            }
            if let Some(conn) = self.conns.get_mut(&c.conn) {
                conn.consumers.retain(|x| *x != id);
            }
            fx.push(Effect::ConsumerCancelled {
                conn: c.conn,
                consumer: id,
                reason: ReasonCode::QDeleted,
            });
        }
    }
}

/// The consumer `id` in `table` if connection `conn` (in `conns`) runs it: 2018 for an
/// unknown connection, 2019 for a consumer it does not run.
fn own_consumer<'a>(
    conns: &BTreeMap<ConnId, Connection>,
    table: &'a mut ConsumerTable,
    conn: ConnId,
    id: ConsumerId,
) -> Result<&'a mut Consumer, MqError> {
    if !conns.contains_key(&conn) {
        return Err(ReasonCode::HconnError.into());
    }
    match table.map.get_mut(&id) {
        Some(c) if c.conn == conn => Ok(c),
        _ => Err(ReasonCode::HobjError.into()),
    }
}

/// Browse: the next message for `c`: first those left behind its cursor, then the next
/// after it in get order.
fn next_browse(c: &mut Consumer, store: &mut MessageStore, now: Timestamp) -> Option<MsgKey> {
    while let Some(k) = c.behind.pop_first() {
        let live = store.is_available(k)
            && store
                .get(k.seq)
                .is_some_and(|m| !m.expired(now) && c.wants(&m));
        if live {
            return Some(k);
        }
    }
    find_next(store, &c.criteria, c.cursor, now, |m| c.wants(m))
}
