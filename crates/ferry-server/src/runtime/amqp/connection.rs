//! One AMQP connection: a task that reads frames, drives the sans-I/O
//! [`Connection`], maps what the client does onto the engine, and writes what the
//! state machine and the engine produce.
//!
//! - SASL PLAIN and ANONYMOUS are accepted (checking users comes with the security issue;
//!   the user is recorded for DISPLAY CHSTATUS). `open` makes one engine connection.
//! - A link the client sends on (`attach` with role sender) opens its target queue for
//!   output; each transfer is mapped ([`crate::amqp_mapping::amqp_to_mq_compact`]) and put outside
//!   syncpoint. An unsettled transfer is answered `accepted` (or `rejected` with the MQ
//!   reason as an AMQP condition) — for a persistent message only once the log is durable,
//!   MQPUT's promise. A link without a target address is ANONYMOUS-RELAY: each message's
//!   `to` names the queue. A dynamic target makes a temporary queue (JMS TemporaryQueue)
//!   that lives until the link or connection ends.
//! - A link the client receives on opens its source queue for input (or browse, for
//!   distribution-mode copy) with an engine consumer: a JMS selector filter becomes the
//!   consumer's selection (`JMSCorrelationID = 'x'` an index lookup); the link's credit is
//!   the consumer's credit; pre-settled links consume at-most-once, unsettled ones hold each
//!   message until the client's outcome: accepted (removed, in batches of BATCHSZ or after
//!   BATCHINT ms, as IBM MQ 9.3.3), released, modified (delivery-failed: BackoutCount + 1),
//!   rejected (discarded). A link, session or connection that ends returns its unsettled
//!   messages with the source's default-outcome (Qpid JMS asks for modified with
//!   delivery-failed: BackoutCount + 1), or released when the source names none.
//! - A link to the transaction coordinator (local transactions) gets its own engine
//!   connection, whose unit of work carries the link's transactions: transfers in
//!   `transactional-state` are put under syncpoint there, deliveries accepted in one stay
//!   held until its discharge commits (removed) or rolls back (returned, BackoutCount + 1),
//!   and a commit is answered once the log is durable past it (see `transaction`).
//!
//! Deliveries made by other connections' work (a put handed to this connection's
//! consumer) arrive as [`Action`]s in [`AmqpShared`]'s inbox and wake the task; actions
//! that must wait for the log are held in order and released by the log's flush notice
//! ([`DurableHold`]). The task never calls the engine while the engine is reporting
//! effects: it only queues, so there is no re-entrance.
//!
//! What a crash can redeliver: accepted deliveries whose batch was not yet applied
//! (at most BATCHSZ per consumer, or BATCHINT ms of them), and deliveries whose
//! acceptance was applied but whose log record was not yet flushed. At-least-once allows
//! both; docs/protocol.md says so.
//!
//! What a client can make the connection hold or wait for is bounded by qm.ini's
//! `Limits:` ([`crate::limits`]): frame size, sessions, links and incomplete messages in
//! the state machine's [`Config`]; unsettled deliveries per link and per connection and
//! bytes waiting to go out here, by the credit the engine consumers get (topped up as the
//! client settles and reads, never beyond); time from accept to open, silence in the
//! middle of a frame, and a socket that takes nothing, by the connection's one timer.
//! The read buffer grows with what arrives and is released once every byte is used.
//! Work per frame is bounded by what the connection holds: a disposition over any range
//! of delivery ids walks the unsettled deliveries it has, not the range. A pre-settled
//! transfer that cannot be put goes to the dead-letter queue (or is discarded), counted
//! and reported by FRY9544W once per interval.

use super::outcome::error_of;
use super::transaction::{control_of, unknown_id, Control, Coordinator, Transaction};
use super::{ChannelSettings, Counters};
use crate::amqp_mapping::{amqp_to_mq_compact, mq_to_amqp, JmsSelection};
use crate::lifecycle::QmgrState;
use crate::limits::{Limits, MAX_SELECTOR_LENGTH};
use crate::messages;
use crate::runtime::clock;
use crate::runtime::log_driver::{DurableHold, LogUse};
use crate::runtime::reply_wait::{ReplyHold, ReplyWait};
use crate::runtime::server::Connection as RuntimeConnection;
use crate::runtime::server::{LogRoom, Server};
use bytes::{Bytes, BytesMut};
use ferry_amqp::condition;
use ferry_amqp::connection::{Config, Connection, Event, LinkId, SaslServer, SessionId};
use ferry_amqp::{
    Attach, DeliveryState, Descriptor, ErrorCondition, LinkTarget, Open, Role, SenderSettleMode,
    Source, Symbol, Target, Value,
};
use ferry_engine::{
    ConnId, ConnectionInfo, ConsumeMode, ConsumeSpec, ConsumerId, DeliveryToken, GotMessage, Hobj,
    MessageFilter, Settlement,
};
use ferry_mqi::dead_letter::{
    DeadLetterHeader, APPL_TYPE_AMQP, DEAD_LETTER_HEADER_LEN, FORMAT_DEAD_LETTER_HEADER,
};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{
    CloseOptions, FixedStr, ObjectDescriptor, OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};
use ferry_objects::status::ChannelClientStatus;
use foldhash::{HashMap, HashMapExt};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// The most room a read is given (more only for a frame larger than that).
const READ_BUFFER: usize = 64 * 1024;
/// The least room a read is given: what an idle connection keeps.
const READ_AT_LEAST: usize = 4 * 1024;
/// Bodies below this size are copied out of the read buffer when put.
const COPY_BODY_BELOW: usize = 16 * 1024;
/// Credit given to a link the client sends on, topped up when half is used.
const SENDER_CREDIT: u32 = 1000;
/// How much earlier than the armed one a deadline must be to move the connection's
/// timer (heartbeats, BATCHINT and the handshake and partial-frame limits may fire this
/// much late).
const TIMER_SLACK: Duration = Duration::from_millis(2);
/// The model a dynamic node (temporary queue) is made from.
const TEMPORARY_MODEL: &str = "SYSTEM.DEFAULT.MODEL.QUEUE";
/// The name pattern of dynamic nodes.
const TEMPORARY_NAME: &str = "AMQP.*";
/// Something for the connection task to do, queued by engine effects or released by the
/// log. (The message stays inline: boxing it would cost an allocation per delivery.)
#[allow(clippy::large_enum_variant)]
pub enum Action {
    /// Send a message to a consumer's link (`token`: unsettled, held for the client).
    Deliver {
        /// The consumer.
        consumer: ConsumerId,
        /// The held delivery, for an unsettled link.
        token: Option<DeliveryToken>,
        /// The message.
        message: Box<GotMessage>,
    },
    /// Send the outcome of a transfer the client sent.
    Settle {
        /// Its session.
        session: SessionId,
        /// Its delivery id.
        delivery_id: u32,
        /// Accepted or rejected.
        state: DeliveryState,
    },
    /// Accept and settle a transfer the client sent, with the next frame that goes to
    /// it (or after AmqpAcceptDelay): see `Session::accepts_may_wait`.
    AcceptLater {
        /// Its session.
        session: SessionId,
        /// Its delivery id.
        delivery_id: u32,
    },
    /// A consumer ended in the engine (its queue was deleted): detach its link.
    Cancelled {
        /// The consumer.
        consumer: ConsumerId,
        /// Why (2052 MQRC_Q_DELETED).
        reason: ReasonCode,
    },
}

/// What the connection task shares with the rest of the server: the inbox of actions,
/// the actions held for the log, counters and identity for DISPLAY CHSTATUS.
pub struct AmqpShared {
    settings: ChannelSettings,
    peer_ip: String,
    channel_counters: Rc<Counters>,
    counters: Counters,
    connected_ms: u64,
    client_id: RefCell<Option<String>>,
    user_id: RefCell<String>,
    inbox: RefCell<VecDeque<Action>>,
    held: RefCell<VecDeque<(u64, Action)>>,
    /// Deliveries in the inbox or held for the log, by consumer: the engine delivered
    /// them and the client has not been sent them yet.
    in_flight: RefCell<HashMap<ConsumerId, u32>>,
    wake: Notify,
    /// The connection task is running (not awaiting): it looks at the inbox before it
    /// awaits again, so what is queued meanwhile needs no wake-up (a stored wake-up
    /// would only make it go round its loop once more for nothing).
    busy: Cell<bool>,
    forced: RefCell<Option<String>>,
    finished: Cell<bool>,
    /// When the acceptances waiting for the next frame must go alone (ms since epoch; 0:
    /// none wait). The channel's overdue task looks at it (no timer per connection).
    accepts_due_ms: Cell<u64>,
}

impl AmqpShared {
    /// A connection accepted on a channel with `settings`, from `peer_ip`.
    pub fn new(
        settings: ChannelSettings,
        peer_ip: String,
        channel_counters: Rc<Counters>,
        connected_ms: u64,
    ) -> Self {
        AmqpShared {
            settings,
            peer_ip,
            channel_counters,
            counters: Counters::default(),
            connected_ms,
            client_id: RefCell::new(None),
            user_id: RefCell::new(String::new()),
            inbox: RefCell::new(VecDeque::new()),
            held: RefCell::new(VecDeque::new()),
            in_flight: RefCell::new(HashMap::new()),
            wake: Notify::new(),
            busy: Cell::new(false),
            forced: RefCell::new(None),
            finished: Cell::new(false),
            accepts_due_ms: Cell::new(0),
        }
    }

    /// True when acceptances wait for the next frame past their due time at `now_ms`.
    pub(super) fn accepts_overdue(&self, now_ms: u64) -> bool {
        let due = self.accepts_due_ms.get();
        due != 0 && due <= now_ms
    }

    /// Wakes the connection task for what was queued, unless it is running and will see
    /// it anyway.
    pub(super) fn wake_task(&self) {
        if !self.busy.get() {
            self.wake.notify_one();
        }
    }

    /// The client's address.
    pub fn peer_ip(&self) -> &str {
        &self.peer_ip
    }

    /// Its DISPLAY CHSTATUS record, once the client has opened the connection.
    pub fn client_status(&self) -> Option<ChannelClientStatus> {
        let client_id = self.client_id.borrow().clone()?;
        Some(ChannelClientStatus {
            client_id,
            connection_name: self.peer_ip.clone(),
            user_id: self.user_id.borrow().clone(),
            messages_sent: self.counters.messages_sent.get(),
            messages_received: self.counters.messages_received.get(),
            bytes_sent: self.counters.bytes_sent.get(),
            bytes_received: self.counters.bytes_received.get(),
            last_message_ms: self.counters.last_message_ms.get(),
            connected_ms: self.connected_ms,
        })
    }

    /// Wakes the connection task to try its transfer waiting for log space again.
    pub(crate) fn wake_for_log_room(&self) {
        self.wake.notify_one();
    }

    /// Closes the connection with `amqp:connection:forced` (STOP CHANNEL, queue manager
    /// stop).
    pub fn force_close(&self, why: &str) {
        *self.forced.borrow_mut() = Some(why.to_string());
        self.wake.notify_one();
    }

    /// An engine delivery for one of this connection's consumers (from `perform_effects`).
    pub fn deliver(
        self: &Rc<Self>,
        server: &Server,
        consumer: ConsumerId,
        token: Option<DeliveryToken>,
        message: Box<GotMessage>,
        hold: ReplyHold,
    ) {
        let action = Action::Deliver {
            consumer,
            token,
            message,
        };
        match hold {
            ReplyHold::Now => self.push(server, 0, action),
            ReplyHold::Until(lsn) => self.push(server, lsn, action),
            // The log failed: nothing more is acknowledged; a pre-settled persistent
            // delivery is not sent (the queue manager must restart, which recovers it).
            ReplyHold::Fail => return,
        }
        *self.in_flight.borrow_mut().entry(consumer).or_insert(0) += 1;
    }

    /// Deliveries for `consumer` not yet sent to the client.
    fn in_flight(&self, consumer: ConsumerId) -> u32 {
        self.in_flight.borrow().get(&consumer).copied().unwrap_or(0)
    }

    /// A delivery for `consumer` left the inbox (sent, or dropped). The entry stays at
    /// zero (no hashing in and out per message) until the consumer ends ([`forget`]).
    ///
    /// [`forget`]: AmqpShared::forget_consumer
    fn delivered(&self, consumer: ConsumerId) {
        if let Some(n) = self.in_flight.borrow_mut().get_mut(&consumer) {
            debug_assert!(*n > 0, "a delivery left the inbox twice");
            *n = n.saturating_sub(1);
        }
    }

    /// `consumer` ended: its count goes.
    fn forget_consumer(&self, consumer: ConsumerId) {
        self.in_flight.borrow_mut().remove(&consumer);
    }

    /// The engine ended a consumer (its queue was deleted).
    pub fn consumer_cancelled(&self, consumer: ConsumerId, reason: ReasonCode) {
        self.inbox
            .borrow_mut()
            .push_back(Action::Cancelled { consumer, reason });
        self.wake_task();
    }

    /// Queues `action`, after everything already held; held until the log is durable
    /// past `lsn` (0: no wait).
    fn push(self: &Rc<Self>, server: &Server, lsn: u64, action: Action) {
        let mut held = self.held.borrow_mut();
        let log = server.log.as_ref();
        if (lsn == 0 && held.is_empty()) || log.is_none() {
            drop(held);
            self.inbox.borrow_mut().push_back(action);
            self.wake_task();
            return;
        }
        let until = held.back().map_or(lsn, |(l, _)| (*l).max(lsn));
        let first = held.is_empty();
        // The durability decisions hear of every position waited for (they release
        // held output until the highest), and say whether it waits at all.
        let hold = match (lsn, log) {
            (0, _) | (_, None) => ferry_durability::Hold::Until(until),
            (_, Some(log)) => log.hold(until),
        };
        match hold {
            ferry_durability::Hold::Until(_) => {}
            // Durable already: nothing held before it, so it goes in order now.
            ferry_durability::Hold::Now if first => {
                drop(held);
                self.inbox.borrow_mut().push_back(action);
                self.wake_task();
                return;
            }
            // (Durable with output still held cannot be: a flush releases all it passes.)
            ferry_durability::Hold::Now => {}
            // The log failed: what is held fails with it.
            ferry_durability::Hold::Fail => {
                held.push_back((until, action));
                drop(held);
                DurableHold::fail_held(&**self);
                return;
            }
        }
        held.push_back((until, action));
        drop(held);
        if first {
            if let Some(log) = log {
                log.note_held(self.clone());
            }
        }
    }
}

impl RuntimeConnection for AmqpShared {
    fn get_completed(
        self: Rc<Self>,
        _server: &Server,
        conn: ConnId,
        _result: ferry_engine::GetResult,
        _hold: ReplyHold,
    ) {
        // An AMQP connection makes no MQGET that waits: its consumers are fed deliveries.
        tracing::error!("{conn:?}: a waiting get completed on an AMQP connection; dropped");
    }

    fn message_delivered(
        self: Rc<Self>,
        server: &Server,
        _conn: ConnId,
        consumer: ConsumerId,
        token: Option<DeliveryToken>,
        message: Box<GotMessage>,
        hold: ReplyHold,
    ) {
        self.deliver(server, consumer, token, message, hold);
    }

    fn consumer_ended(&self, _conn: ConnId, consumer: ConsumerId, reason: ReasonCode) {
        AmqpShared::consumer_cancelled(self, consumer, reason);
    }

    fn retry_log_room(self: Rc<Self>, _server: &Rc<Server>, _call: u32) {
        // The connection task tries its waiting transfer again (it keeps since when).
        self.wake_for_log_room();
    }

    fn is_closing(&self) -> bool {
        self.finished.get()
    }
}

impl DurableHold for AmqpShared {
    fn release_held(&self, durable: u64) -> bool {
        let mut held = self.held.borrow_mut();
        let mut moved = false;
        while held.front().is_some_and(|(l, _)| *l <= durable) {
            if let Some((_, a)) = held.pop_front() {
                self.inbox.borrow_mut().push_back(a);
                moved = true;
            }
        }
        if moved {
            self.wake_task();
        }
        !held.is_empty()
    }

    fn fail_held(&self) {
        let held = std::mem::take(&mut *self.held.borrow_mut());
        let mut inbox = self.inbox.borrow_mut();
        for (_, a) in held {
            if let Action::Deliver { consumer, .. } = &a {
                self.delivered(*consumer);
            }
            if let Action::Settle {
                session,
                delivery_id,
                ..
            } = a
            {
                inbox.push_back(Action::Settle {
                    session,
                    delivery_id,
                    state: rejected(error_of(
                        ReasonCode::ResourceProblem,
                        "the recovery log failed",
                    )),
                });
            }
        }
        self.wake_task();
    }
}

fn rejected(error: ErrorCondition) -> DeliveryState {
    DeliveryState::Rejected { error: Some(error) }
}

/// A link of this connection.
enum Link {
    /// The client sends: messages are put to `hobj` (None: ANONYMOUS-RELAY, by `to`).
    Inbound { hobj: Option<Hobj>, address: String },
    /// The client receives from `consumer` on `hobj`.
    Outbound {
        hobj: Hobj,
        consumer: ConsumerId,
        drain_requested: bool,
        /// Deliveries sent on it and not settled by the client.
        held: u32,
        /// What happens to unsettled deliveries when the link ends: the source's
        /// default-outcome (Qpid JMS: modified, delivery-failed), else released.
        unsettled: Settlement,
    },
}

/// The connection task's own state.
/// What became of a transfer's put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Put {
    /// Put; its settlement waits for the log as the hold says.
    Done(ReplyHold),
    /// Not tried: the recovery log is full until a checkpoint under way finishes.
    WaitForLog,
}

struct Session {
    server: Rc<Server>,
    shared: Rc<AmqpShared>,
    amqp: Connection,
    conn: Option<ConnId>,
    links: HashMap<LinkId, Link>,
    consumers: HashMap<ConsumerId, LinkId>,
    /// Unsettled deliveries we sent: (channel, delivery id) → (link, held message, its
    /// size in bytes).
    deliveries: HashMap<(u16, u32), (LinkId, DeliveryToken, u32)>,
    /// The bytes of the messages in `deliveries` (AmqpMaxUnsettledBytes).
    held_bytes: u64,
    /// The byte window last given to each of the queues' consumers, and the bytes sent
    /// since: once half of it is spent and written out, the windows are opened again
    /// without waiting for the client (a consumer that only receives sends nothing).
    window_given: u64,
    sent_since_window: u64,
    /// The last `sync_credits` found a bound of ours (not the client's credit) holding the
    /// engine's credit or window down: settlements and pre-settled deliveries sent must
    /// look again.
    credit_capped: bool,
    /// `sync_credits`' buffers, kept from pass to pass.
    scratch_links: Vec<(ConsumerId, u64, u64, u64)>,
    scratch_plan: Vec<(ConsumerId, CreditChange)>,
    /// Accepted deliveries not yet removed (BATCHSZ / BATCHINT).
    accepted: Vec<DeliveryToken>,
    batch_due: Option<tokio::time::Instant>,
    /// ANONYMOUS-RELAY output handles by queue name.
    relay: HashMap<String, Hobj>,
    next_tag: u64,
    events: Vec<Event>,
    /// Some link's drain may be waiting to complete (most connections never drain: the
    /// links are not scanned for one after every batch then).
    drains_pending: bool,
    /// Why the connection is refused (MAXINST/MAXINSTC): answered at the client's open.
    refused: Option<String>,
    /// The time of the batch being handled (ms since epoch): one clock read per read
    /// or wake-up, not one per message.
    now_ms: u64,
    /// Delivery tags are cut from this buffer (8 bytes each, no allocation per message).
    tags: BytesMut,
    /// When the socket was accepted (for the handshake deadline).
    started: tokio::time::Instant,
    /// Events set aside behind a transfer that waits for log space, oldest first: events
    /// read meanwhile are handled after them (see `handle_events`).
    deferred: Vec<Event>,
    /// Since when a transfer waits for log space, and the checkpoints completed then.
    log_wait: Option<(std::time::Instant, u64)>,
    /// The queue manager's limits (qm.ini `Limits:`), as read at start.
    limits: Limits,
    /// The engine consumers' credit may be topped up (a flow, a settlement, a
    /// pre-settled delivery sent, output drained): checked once per pass.
    credit_check: bool,
    /// Some consumer wanted more credit while AmqpOutputBuffer bytes waited to go out:
    /// checked again on every pass until it is given.
    credit_blocked: bool,
    /// `process_inbox` stopped at a delivery because AmqpOutputBuffer bytes wait to go
    /// out: it goes on once they are written.
    inbox_paused: bool,
    /// When the last byte of a frame still incomplete arrived.
    partial_since: Option<tokio::time::Instant>,
    /// The dead-letter queue's output handle, once opened.
    dead_letter_hobj: Option<(String, Hobj)>,
    /// Coordinator links (AMQP transactions), each with its own engine connection.
    coordinators: HashMap<LinkId, Coordinator>,
    /// Times in a row the acceptances went out at `accepts_due`, with no frame to ride on.
    accepts_timed_out: u32,
    /// The client waited for its acceptances (they went out at `accepts_due` twice in a
    /// row): from then on each is sent at once.
    accepts_at_once: bool,
    /// The next transaction id (ids are unique within the connection).
    next_txn: u64,
    /// Who connected, for the engine connections coordinators make.
    conn_info: Option<ConnectionInfo>,
}

/// A change to an engine consumer's credit (see `Session::sync_credits`).
enum CreditChange {
    /// Set the bytes it may still be delivered (AmqpOutputBuffer, AmqpMaxUnsettledBytes).
    Window(u64),
    /// Take it all back, then give this much.
    Lower(u32),
    /// Give this much more.
    Add(u32),
}

/// A transfer's put that failed: the MQ reason when the engine (or the mapping of a
/// queue name) gave one, the condition for the client, and the queue it was for.
struct PutFailure {
    reason: Option<ReasonCode>,
    error: ErrorCondition,
    queue: String,
}

impl From<ErrorCondition> for PutFailure {
    fn from(error: ErrorCondition) -> Self {
        PutFailure {
            reason: None,
            error,
            queue: String::new(),
        }
    }
}

/// Serves one accepted socket until the connection ends; `refuse` closes it at once
/// (MAXINST/MAXINSTC) with `amqp:resource-limit-exceeded`.
pub async fn serve(
    server: Rc<Server>,
    shared: Rc<AmqpShared>,
    stream: TcpStream,
    refuse: Option<String>,
) {
    let settings = &shared.settings;
    let limits = server.ini.limits.clone();
    let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    let config = Config {
        idle_time_out: (settings.heartbeat_secs > 0)
            .then(|| settings.heartbeat_secs.saturating_mul(1000)),
        max_message_size: (settings.max_message_length > 0).then_some(settings.max_message_length),
        max_frame_size: u32::try_from(limits.amqp_max_frame_size).unwrap_or(u32::MAX),
        channel_max: u16::try_from(limits.amqp_max_sessions.saturating_sub(1)).unwrap_or(u16::MAX),
        handle_max: u32::try_from(limits.amqp_max_links.saturating_sub(1)).unwrap_or(u32::MAX),
        max_links: count(limits.amqp_max_links),
        max_incomplete_bytes: count(limits.amqp_max_incomplete_bytes),
        ..Config::default()
    };
    let mut s = Session {
        server,
        shared: shared.clone(),
        amqp: Connection::server(config, SaslServer::plain_and_anonymous()),
        conn: None,
        links: HashMap::new(),
        consumers: HashMap::new(),
        deliveries: HashMap::new(),
        held_bytes: 0,
        window_given: 0,
        sent_since_window: 0,
        credit_capped: false,
        scratch_links: Vec::new(),
        scratch_plan: Vec::new(),
        accepted: Vec::new(),
        batch_due: None,
        relay: HashMap::new(),
        next_tag: 0,
        events: Vec::new(),
        drains_pending: false,
        refused: None,
        now_ms: clock::now().0,
        tags: BytesMut::new(),
        started: tokio::time::Instant::now(),
        deferred: Vec::new(),
        log_wait: None,
        limits,
        credit_check: false,
        credit_blocked: false,
        inbox_paused: false,
        partial_since: None,
        dead_letter_hobj: None,
        coordinators: HashMap::new(),
        accepts_timed_out: 0,
        accepts_at_once: false,
        next_txn: 1,
        conn_info: None,
    };
    s.refused = refuse;
    s.run(stream).await;
    s.finish();
    shared.finished.set(true);
}

impl Session {
    async fn run(&mut self, stream: TcpStream) {
        let (mut rd, mut wr) = stream.into_split();
        // Its room follows what the reads bring (twice the last read, from READ_AT_LEAST
        // to READ_BUFFER), never what a frame header claims: an idle connection keeps a
        // few KiB, a busy one reads 64 KiB at a time, and it is not allocated anew for
        // every read.
        let mut input = BytesMut::new();
        let mut last_read = 0usize;
        // The connection's timer (heartbeats, BATCHINT, the handshake and partial-frame
        // deadlines) and the deadline it is set to, if any.
        let timer = tokio::time::sleep_until(tokio::time::Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<tokio::time::Instant> = None;
        loop {
            // Running until the next await: what is queued for this task meanwhile is
            // handled below without a wake-up.
            self.shared.busy.set(true);
            if let Some(why) = self.shared.forced.borrow_mut().take() {
                if !self.amqp.is_finished() {
                    let _ = self
                        .amqp
                        .close(Some(ErrorCondition::new(condition::CONNECTION_FORCED, why)));
                }
            }
            // Everything done until the next await shares one clock reading.
            let now = self.server.begin_batch().0;
            self.now_ms = now;
            self.pump_deliveries();
            let next_tick = self.amqp.tick(now, &mut self.events);
            self.handle_events();
            self.pump_deliveries();
            if self.amqp.has_deferred_accepts() && self.shared.accepts_overdue(now) {
                self.send_overdue_accepts();
            }
            self.watch_deferred_accepts();
            self.server.end_batch();
            let wrote = self.amqp.wants_write();
            if wrote {
                // Written at once, as the native channel's writer does. (Yielding first, to
                // gather what other connections hand this one, made the queue manager and
                // its clients take turns in big batches instead of working in parallel:
                // fewer writes, but fewer round trips per second on two cores.)
                self.shared.busy.set(false);
                if !self.write_output(&mut wr).await {
                    return;
                }
            }
            if self.amqp.is_finished() {
                let _ = wr.shutdown().await;
                return;
            }
            if wrote && self.inbox_paused {
                // Deliveries waited for the output to drain: it has.
                continue;
            }
            if wrote
                && self.sent_since_window > 0
                && self.sent_since_window >= self.window_given / 2
            {
                // Half the consumers' byte windows went out: open them again now.
                self.credit_check = true;
                continue;
            }
            let tick_at = next_tick.map(|ms| {
                tokio::time::Instant::now() + Duration::from_millis(ms.saturating_sub(now))
            });
            let partial_due = self
                .partial_since
                .map(|t| t + self.limits.partial_frame_timeout());
            let wake_at = [
                tick_at,
                self.batch_due,
                self.handshake_deadline(),
                partial_due,
            ]
            .into_iter()
            .flatten()
            .min();
            // One timer for the connection, moved only to an earlier deadline: a timer
            // that fires early costs one pass through this loop, while setting a new one
            // for every read and wake-up cost a timer-wheel insertion and removal each.
            // Deadlines computed from the millisecond clock jitter by a millisecond from
            // pass to pass (the heartbeat's, when nothing was sent): one no more than
            // TIMER_SLACK earlier than the armed one leaves it, or the timer would be
            // reset on about every other pass.
            if let Some(t) = wake_at.filter(|t| armed.is_none_or(|a| *t + TIMER_SLACK < a)) {
                timer.as_mut().reset(t);
                armed = Some(t);
            }
            // Transfers waiting for log space hold their bytes: past the bound on
            // incomplete messages, nothing more is read until they are put.
            let reading = self.deferred.is_empty()
                || self.deferred_bytes() as u64 <= self.limits.amqp_max_incomplete_bytes;
            self.shared.busy.set(false);
            let room = last_read
                .saturating_mul(2)
                .clamp(READ_AT_LEAST, READ_BUFFER);
            if reading && input.capacity() - input.len() < room / 2 {
                // A frame larger than the room doubles it (what arrived, not what the
                // header claims).
                input.reserve(room.max(input.len()));
            }
            tokio::select! {
                r = rd.read_buf(&mut input), if reading => match r {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        self.shared.busy.set(true);
                        last_read = n;
                        Counters::add(&self.shared.counters.bytes_received, n as u64);
                        Counters::add(&self.shared.channel_counters.bytes_received, n as u64);
                        self.receive(&mut input);
                        self.partial_since = (!input.is_empty()).then(tokio::time::Instant::now);
                        self.server.memory.note_buffer(trim_input(&mut input));
                    }
                },
                _ = self.shared.wake.notified() => {}
                _ = &mut timer, if armed.is_some() => {
                    armed = None;
                    self.shared.busy.set(true);
                    let now = tokio::time::Instant::now();
                    if self.batch_due.is_some_and(|t| t <= now) {
                        self.flush_accepts();
                    }
                    if self.handshake_deadline().is_some_and(|t| t <= now) {
                        // Never opened: free the socket (and its MAXINST place).
                        let why = format!(
                            "no open within {} s of connecting",
                            self.handshake_timeout().as_secs()
                        );
                        self.give_up(&mut wr, why, false).await;
                        return;
                    }
                    if partial_due.is_some_and(|t| t <= now) {
                        let why = format!(
                            "no byte for {} s in the middle of a frame",
                            self.limits.partial_frame_timeout_secs
                        );
                        self.give_up(&mut wr, why, true).await;
                        return;
                    }
                }
            }
        }
    }

    /// Writes out what the state machine has to send; false when the connection is
    /// over (the socket failed, or the client read nothing for AmqpSendTimeout).
    async fn write_output(&mut self, wr: &mut tokio::net::tcp::OwnedWriteHalf) -> bool {
        let out = self.amqp.output();
        Counters::add(&self.shared.counters.bytes_sent, out.len() as u64);
        Counters::add(&self.shared.channel_counters.bytes_sent, out.len() as u64);
        let timeout = self.limits.amqp_send_timeout();
        let mut at = 0;
        let mut result = true;
        while at < out.len() {
            // Most writes go at once: the timer is armed only when the socket is full.
            match wr.try_write(&out[at..]) {
                Ok(n) if n > 0 => {
                    at += n;
                    continue;
                }
                Ok(_) => {
                    result = false;
                    break;
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => {
                    result = false;
                    break;
                }
            }
            match tokio::time::timeout(timeout, wr.write(&out[at..])).await {
                Ok(Ok(n)) if n > 0 => at += n,
                Ok(_) => {
                    result = false;
                    break;
                }
                Err(_) => {
                    // The client takes nothing: it cannot hold the connection (and its
                    // unsettled messages) for ever.
                    let why = format!(
                        "the client read nothing for {} s",
                        self.limits.amqp_send_timeout_secs
                    );
                    self.server.error_log.borrow_mut().write(
                        &messages::AMQP_PROTOCOL_ERROR,
                        &[&self.shared.peer_ip, &self.shared.settings.name, &why],
                    );
                    result = false;
                    break;
                }
            }
        }
        // Cleared, not taken: the buffer keeps its capacity for the next batch, unless it
        // grew large (a burst of deliveries) and would sit idle.
        let out = self.amqp.output();
        out.clear();
        if out.capacity() > READ_BUFFER {
            *out = BytesMut::new();
        }
        result
    }

    /// Ends a connection that stalled (`why`): a close frame with
    /// amqp:resource-limit-exceeded when AMQP frames flow, FRY9505E when `log`.
    async fn give_up(&mut self, wr: &mut tokio::net::tcp::OwnedWriteHalf, why: String, log: bool) {
        if log {
            self.server.error_log.borrow_mut().write(
                &messages::AMQP_PROTOCOL_ERROR,
                &[&self.shared.peer_ip, &self.shared.settings.name, &why],
            );
        }
        if !self.amqp.is_finished() {
            let _ = self.amqp.close(Some(ErrorCondition::new(
                condition::RESOURCE_LIMIT_EXCEEDED,
                why,
            )));
        }
        if self.amqp.wants_write() && self.write_output(wr).await {
            let _ = wr.shutdown().await;
        }
    }

    /// HandshakeTimeout (qm.ini Limits), or HBINT when it is shorter.
    fn handshake_timeout(&self) -> Duration {
        let limit = self.limits.handshake_timeout();
        match self.shared.settings.heartbeat_secs {
            0 => limit,
            n => limit.min(Duration::from_secs(u64::from(n))),
        }
    }

    /// Until the client's open arrives, when the connection is given up: a client must
    /// complete SASL and open within HandshakeTimeout (or HBINT, when shorter), so a
    /// socket that never speaks does not hold a MAXINST place for ever.
    fn handshake_deadline(&self) -> Option<tokio::time::Instant> {
        if self.conn.is_some() || self.amqp.is_finished() {
            return None;
        }
        Some(self.started + self.handshake_timeout())
    }

    /// The bytes of the transfers waiting for log space.
    fn deferred_bytes(&self) -> usize {
        self.deferred
            .iter()
            .map(|e| match e {
                Event::Message { message, .. } => message.len(),
                _ => 0,
            })
            .sum()
    }

    /// Feeds what was read to the state machine and handles its events (again after a
    /// SASL decision, which the state machine waits for).
    fn receive(&mut self, input: &mut BytesMut) {
        // The frames of one read share one clock reading (as the native channel's).
        let now = self.server.begin_batch().0;
        self.now_ms = now;
        loop {
            self.amqp.receive(input, now, &mut self.events);
            let sasl_answered = self.handle_events();
            if !sasl_answered || input.is_empty() {
                break;
            }
        }
        self.server.end_batch();
    }

    /// Handles the queued events; true when a SASL outcome was given (more input may
    /// then be decodable).
    fn handle_events(&mut self) -> bool {
        let mut sasl = false;
        // Taken and given back, so the vector keeps its capacity from batch to batch.
        let mut events = std::mem::take(&mut self.events);
        if !self.deferred.is_empty() {
            if self.amqp.is_open() {
                // What waited for log space comes first, in its order. (Reading goes on
                // meanwhile, so heartbeats keep the connection alive; the client's link
                // credit, not topped up while a transfer waits, bounds what queues here.)
                let mut first = std::mem::take(&mut self.deferred);
                first.append(&mut events);
                events = first;
            } else {
                // Closing (STOP CHANNEL, a protocol error): the transfers are not put.
                self.deferred.clear();
                if self.log_wait.take().is_some() {
                    self.server.stop_waiting_for_log_room(&*self.shared, 0);
                }
            }
        }
        let mut pending = events.drain(..);
        while let Some(e) = pending.next() {
            if let Event::Message {
                link,
                delivery_id,
                settled,
                message,
                state,
                ..
            } = &e
            {
                if !self.on_message(*link, *delivery_id, *settled, state.as_ref(), message) {
                    // It waits for log space: so does everything after it.
                    self.deferred.push(e);
                    self.deferred.extend(pending.by_ref());
                    break;
                }
                continue;
            }
            match e {
                Event::SaslInit {
                    mechanism,
                    initial_response,
                    ..
                } => {
                    let user = match mechanism.as_str() {
                        "PLAIN" => initial_response
                            .as_deref()
                            .and_then(ferry_amqp::connection::parse_plain)
                            .map(|(_, user, _)| user.to_string()),
                        _ => Some(String::new()),
                    };
                    let ok = user.is_some();
                    *self.shared.user_id.borrow_mut() = user.unwrap_or_default();
                    let _ = self.amqp.sasl_outcome(ok);
                    sasl = true;
                }
                Event::Open(open) => self.on_open(&open),
                Event::Attach { link, attach } => self.on_attach(link, &attach),
                Event::Flow { link, drain, .. } => self.on_flow(link, drain),
                Event::Message { .. } => {}
                Event::Disposition {
                    session,
                    role: Role::Receiver,
                    first,
                    last,
                    settled,
                    state,
                } => self.on_disposition(session, first, last, settled, state),
                Event::Detach { link, .. } => self.on_detach(link),
                Event::Closed { remote, error } => {
                    if let (false, Some(e)) = (remote, &error) {
                        let c = e.condition.as_str();
                        if c == condition::DECODE_ERROR || c == condition::FRAMING_ERROR {
                            let what = e.description.as_ref().map_or(c, |d| d.as_str()).to_string();
                            self.server.error_log.borrow_mut().write(
                                &messages::AMQP_PROTOCOL_ERROR,
                                &[&self.shared.peer_ip, &self.shared.settings.name, &what],
                            );
                        }
                    }
                }
                Event::SaslOutcome(_)
                | Event::Begin { .. }
                | Event::Attached { .. }
                | Event::Disposition { .. }
                | Event::End { .. } => {}
            }
        }
        drop(pending);
        if self.events.is_empty() {
            self.events = events;
        }
        sasl
    }

    fn on_open(&mut self, open: &Open) {
        let server = self.server.clone();
        // A refusal still answers with our open (the spec's order), then closes.
        let refuse = |s: &mut Self, cond: &'static str, why: String| {
            let _ = s.amqp.open(Open::new(s.server.name.as_str()));
            let _ = s.amqp.close(Some(ErrorCondition::new(cond, why)));
        };
        if server.state.get() != QmgrState::Running {
            refuse(
                self,
                condition::CONNECTION_FORCED,
                "the queue manager is stopping".into(),
            );
            return;
        }
        if let Some(why) = self.refused.take() {
            refuse(self, condition::RESOURCE_LIMIT_EXCEEDED, why);
            return;
        }
        let info = ConnectionInfo {
            application_name: app_name(open),
            channel: self.shared.settings.name.clone(),
            connection_name: self.shared.peer_ip.clone(),
            user_id: self.shared.user_id.borrow().clone(),
            // The process serving the channel, as for a native client.
            pid: Some(std::process::id()),
        };
        self.conn_info = Some(info.clone());
        match server.with_engine(|e, now, _fx| e.connect(info, now)) {
            Ok(conn) => {
                self.conn = Some(conn);
                server.begin_conversation(conn, self.shared.clone());
                *self.shared.client_id.borrow_mut() = Some(open.container_id.as_str().to_string());
                let mut reply = Open::new(server.name.as_str());
                reply.offered_capabilities =
                    vec![Symbol::from_static(condition::CAPABILITY_ANONYMOUS_RELAY)];
                let _ = self.amqp.open(reply);
            }
            Err(e) => {
                let _ = self
                    .amqp
                    .close(Some(error_of(e.reason, "connection refused")));
            }
        }
    }

    fn refuse(&mut self, link: LinkId, error: ErrorCondition) {
        let _ = self.amqp.refuse_attach(link, error);
    }

    /// Opens `name` (or, for a dynamic node, a new temporary queue) with `options`.
    fn open_queue(
        &mut self,
        name: Option<&str>,
        dynamic: bool,
        options: OpenOptions,
    ) -> Result<(Hobj, String), ErrorCondition> {
        let conn = self.conn.ok_or_else(not_open)?;
        let od = if dynamic {
            let mut od = ObjectDescriptor::queue(TEMPORARY_MODEL)
                .map_err(|e| ErrorCondition::new(condition::INTERNAL_ERROR, e.to_string()))?;
            od.dynamic_q_name = FixedStr::truncating(TEMPORARY_NAME);
            od
        } else {
            let name = name.unwrap_or_default();
            ObjectDescriptor::queue(name).map_err(|e| {
                ErrorCondition::new(
                    condition::NOT_FOUND,
                    format!("'{name}' is not a valid queue name: {e}"),
                )
            })?
        };
        let what = if dynamic {
            "a temporary queue cannot be made".to_string()
        } else {
            format!("queue '{}' cannot be opened", name.unwrap_or_default())
        };
        self.server
            .with_engine(|e, now, fx| {
                e.open(conn, &od, options | OpenOptions::FAIL_IF_QUIESCING, now, fx)
            })
            .map(|o| (o.hobj, o.object_name.trim().to_string()))
            .map_err(|e| error_of(e.reason, &what))
    }

    fn close_handle(&mut self, hobj: Hobj) {
        if let Some(conn) = self.conn {
            let _ = self
                .server
                .with_engine(|e, now, fx| e.close(conn, hobj, CloseOptions::empty(), now, fx));
        }
    }

    fn on_attach(&mut self, link: LinkId, attach: &Attach) {
        match attach.role {
            Role::Sender => self.attach_inbound(link, attach),
            Role::Receiver => self.attach_outbound(link, attach),
        }
    }

    /// The client will send on `link`.
    fn attach_inbound(&mut self, link: LinkId, attach: &Attach) {
        let target = match &attach.target {
            Some(LinkTarget::Node(t)) => t.clone(),
            Some(LinkTarget::Coordinator(_)) => return self.attach_coordinator(link, attach),
            None => {
                return self.refuse(
                    link,
                    ErrorCondition::new(condition::INVALID_FIELD, "the attach has no target"),
                )
            }
        };
        let (hobj, address) = if target.dynamic {
            match self.open_queue(None, true, OpenOptions::OUTPUT) {
                Ok((h, name)) => (Some(h), name),
                Err(e) => return self.refuse(link, e),
            }
        } else if let Some(a) = target.address.as_ref().map(|a| a.as_str().to_string()) {
            match self.open_queue(Some(&a), false, OpenOptions::OUTPUT) {
                Ok((h, _)) => (Some(h), a),
                Err(e) => return self.refuse(link, e),
            }
        } else {
            (None, String::new())
        };
        let mut reply_target = target;
        if reply_target.dynamic {
            reply_target.address = Some(address.as_str().into());
        }
        self.links.insert(link, Link::Inbound { hobj, address });
        let _ = self.amqp.attach_reply(
            link,
            attach.source.clone(),
            Some(LinkTarget::Node(reply_target)),
        );
        let _ = self.amqp.grant_credit(link, SENDER_CREDIT);
    }

    /// The client attaches a transaction controller: the link gets its own engine
    /// connection, whose unit of work carries its transactions (see `transaction`).
    fn attach_coordinator(&mut self, link: LinkId, attach: &Attach) {
        let Some(info) = self.conn_info.clone().filter(|_| self.conn.is_some()) else {
            return self.refuse(link, not_open());
        };
        let conn = match self.server.with_engine(|e, now, _fx| e.connect(info, now)) {
            Ok(c) => c,
            Err(e) => return self.refuse(link, error_of(e.reason, "no transaction can start")),
        };
        self.server.begin_conversation(conn, self.shared.clone());
        let old = self.coordinators.insert(
            link,
            Coordinator {
                conn,
                open: None,
                outputs: HashMap::new(),
            },
        );
        debug_assert!(old.is_none(), "{link:?} attached twice");
        let target = ferry_amqp::Coordinator {
            capabilities: vec![Symbol::from_static(
                condition::CAPABILITY_LOCAL_TRANSACTIONS,
            )],
        };
        let _ = self.amqp.attach_reply(
            link,
            attach.source.clone(),
            Some(LinkTarget::Coordinator(target)),
        );
        let _ = self.amqp.grant_credit(link, SENDER_CREDIT);
    }

    /// A declare or discharge sent to coordinator `link`: answered with `declared`, or
    /// `accepted` once a commit is durable, or `rejected` with the reason.
    fn on_control(&mut self, link: LinkId, delivery_id: u32, settled: bool, message: &Bytes) {
        let (state, hold) = match control_of(message) {
            Err(error) => (rejected(error), ReplyHold::Now),
            Ok(Control::Declare) => match self.coordinators.get_mut(&link) {
                Some(c) if c.open.is_none() => {
                    let id = Bytes::copy_from_slice(&self.next_txn.to_be_bytes());
                    self.next_txn += 1;
                    c.open = Some(Transaction {
                        id: id.clone(),
                        acquired: Vec::new(),
                    });
                    (DeliveryState::Declared { txn_id: id }, ReplyHold::Now)
                }
                _ => (
                    rejected(ErrorCondition::new(
                        condition::NOT_ALLOWED,
                        "one transaction at a time per coordinator: discharge the open one first",
                    )),
                    ReplyHold::Now,
                ),
            },
            Ok(Control::Discharge { txn_id, fail }) => match self.coordinator_of(&txn_id) {
                None => (rejected(unknown_id(&txn_id)), ReplyHold::Now),
                Some(owner) => self.discharge(owner, fail),
            },
        };
        // A pre-settled control message is done: nobody waits for an answer.
        if !settled {
            self.settle_received(
                link,
                delivery_id,
                state,
                hold,
                "the commit could not be logged",
            );
        }
        self.top_up_credit(link);
    }

    /// The coordinator link whose open transaction is `txn_id`.
    fn coordinator_of(&self, txn_id: &Bytes) -> Option<LinkId> {
        self.coordinators
            .iter()
            .find(|(_, c)| c.open.as_ref().is_some_and(|t| t.id == *txn_id))
            .map(|(l, _)| *l)
    }

    /// Ends the open transaction of coordinator `link`: commit (the deliveries it
    /// acquired removed, then MQCMIT, so the commit's log position covers both) or,
    /// when `fail`, backout (the acquired deliveries returned with BackoutCount + 1).
    fn discharge(&mut self, link: LinkId, fail: bool) -> (DeliveryState, ReplyHold) {
        let (Some(consumer_conn), Some(c)) = (self.conn, self.coordinators.get_mut(&link)) else {
            return (rejected(not_open()), ReplyHold::Now);
        };
        let Some(txn) = c.open.take() else {
            return (rejected(not_open()), ReplyHold::Now);
        };
        let conn = c.conn;
        debug_assert!(c.open.is_none());
        let mut wait = ReplyWait::default();
        let committed = self.server.call(&mut wait, |e, now, fx| {
            if fail {
                let _ = e.backout(conn, now, fx);
                let _ = e.settle_many(
                    consumer_conn,
                    &txn.acquired,
                    Settlement::DEFAULT_OUTCOME,
                    now,
                    fx,
                );
                Ok(())
            } else {
                // Deliveries whose consumer ended meanwhile were returned already: an
                // unknown token is not an error of the commit.
                let _ = e.settle_for_commit(consumer_conn, &txn.acquired, now, fx);
                e.commit(conn, now, fx)
            }
        });
        self.credit_check = true;
        match committed {
            Ok(()) => (DeliveryState::Accepted, wait.log),
            Err(e) => (
                rejected(ErrorCondition::new(
                    condition::TRANSACTION_ROLLBACK,
                    format!("the transaction was backed out ({})", e.reason),
                )),
                ReplyHold::Now,
            ),
        }
    }

    /// A coordinator link ends (or its connection): its open transaction is backed out,
    /// its handles closed and its engine connection ended.
    fn detach_coordinator(&mut self, link: LinkId) {
        let Some(c) = self.coordinators.get(&link) else {
            return;
        };
        if c.open.is_some() {
            let _ = self.discharge(link, true);
        }
        let Some(c) = self.coordinators.remove(&link) else {
            return;
        };
        for (_, hobj) in c.outputs {
            let _ = self
                .server
                .with_engine(|e, now, fx| e.close(c.conn, hobj, CloseOptions::empty(), now, fx));
        }
        // Backed out above: nothing is left for the end to commit.
        let _ = self.server.end_conversation(c.conn, false);
    }

    /// The client will receive on `link`.
    fn attach_outbound(&mut self, link: LinkId, attach: &Attach) {
        let Some(conn) = self.conn else {
            return self.refuse(link, not_open());
        };
        let Some(source) = attach.source.clone() else {
            return self.refuse(
                link,
                ErrorCondition::new(condition::INVALID_FIELD, "the attach has no source"),
            );
        };
        let browse = source
            .distribution_mode
            .as_ref()
            .is_some_and(|m| m.as_str() == "copy");
        let (selection, selector_entry) = match selector_of(&source) {
            Ok(s) => s,
            Err(e) => return self.refuse(link, e),
        };
        let options = if browse {
            OpenOptions::BROWSE
        } else {
            OpenOptions::INPUT_SHARED
        };
        let address = source.address.as_ref().map(|a| a.as_str().to_string());
        let (hobj, name) = match self.open_queue(address.as_deref(), source.dynamic, options) {
            Ok(x) => x,
            Err(e) => return self.refuse(link, e),
        };
        let mode = if browse {
            ConsumeMode::Browse
        } else if attach.snd_settle_mode == SenderSettleMode::Settled {
            ConsumeMode::Settled
        } else {
            ConsumeMode::Unsettled
        };
        let mut spec = ConsumeSpec::new(mode);
        if let Some(sel) = &selection {
            spec.correl_id = sel.correlation_lookup();
            spec.msg_id = sel.message_lookup();
        }
        spec.filter = selection.map(|s| Rc::new(s) as Rc<dyn MessageFilter>);
        let consumer = match self
            .server
            .with_engine(|e, _now, _fx| e.consume(conn, hobj, spec))
        {
            Ok(c) => c,
            Err(e) => {
                self.close_handle(hobj);
                return self.refuse(link, error_of(e.reason, "the consumer cannot start"));
            }
        };
        let mut reply_source = source;
        if reply_source.dynamic {
            reply_source.address = Some(name.as_str().into());
        }
        // Echo only the filters applied (a client fails a consumer whose filter is
        // missing from the reply, rather than receive unfiltered messages).
        reply_source.filter = selector_entry.into_iter().collect();
        let unsettled = default_outcome(reply_source.default_outcome.as_ref());
        self.links.insert(
            link,
            Link::Outbound {
                hobj,
                consumer,
                drain_requested: false,
                held: 0,
                unsettled,
            },
        );
        self.consumers.insert(consumer, link);
        let target = attach
            .target
            .clone()
            .or_else(|| Some(LinkTarget::Node(Target::default())));
        let _ = self.amqp.attach_reply(link, Some(reply_source), target);
    }

    /// The client's credit for a link we send on becomes the consumer's credit (at the
    /// end of the pass, see `sync_credits`).
    fn on_flow(&mut self, link: LinkId, drain: bool) {
        let Some(Link::Outbound {
            drain_requested, ..
        }) = self.links.get_mut(&link)
        else {
            return;
        };
        if drain {
            *drain_requested = true;
            self.drains_pending = true;
        }
        self.credit_check = true;
    }

    /// Gives each link's engine consumer the credit it may have: the link's credit less
    /// what is on its way to the client, within AmqpMaxUnsettledPerLink (with what the
    /// client has not settled) and AmqpMaxUnsettledPerConnection, and no more at all
    /// while AmqpOutputBuffer bytes wait to go out. A client that grants 2^32-1 credit and
    /// never settles or never reads thus holds a bounded number of messages; settling
    /// and reading top the credit up. Takes credit back when the client lowered the
    /// link's. One engine call for all links.
    fn sync_credits(&mut self) {
        if !self.credit_check && !self.credit_blocked {
            return;
        }
        self.credit_check = false;
        self.credit_blocked = false;
        let Some(conn) = self.conn else { return };
        let per_link = self.limits.amqp_max_unsettled_per_link;
        let per_conn = self.limits.amqp_max_unsettled_per_connection;
        let pending_output = self.amqp.pending_output_bytes() as u64;
        let blocked = pending_output >= self.limits.amqp_output_buffer;
        // Each outbound link: its consumer, the link credit, deliveries held unsettled
        // and deliveries on their way.
        // Buffers kept from pass to pass: this runs for most messages.
        let mut links = std::mem::take(&mut self.scratch_links);
        let mut plan = std::mem::take(&mut self.scratch_plan);
        links.clear();
        plan.clear();
        links.extend(self.links.iter().filter_map(|(link, l)| match l {
            Link::Outbound { consumer, held, .. } => Some((
                *consumer,
                u64::from(self.amqp.credit(*link)),
                u64::from(*held),
                u64::from(self.shared.in_flight(*consumer)),
            )),
            Link::Inbound { .. } => None,
        }));
        if links.is_empty() {
            self.scratch_links = links;
            self.scratch_plan = plan;
            return;
        }
        // The byte bounds, shared by the links as their consumers' windows: credit given
        // on a deep queue is delivered at once, so the bytes it may bring in must fit
        // what is left of AmqpOutputBuffer and AmqpMaxUnsettledBytes.
        let byte_room = if blocked {
            0
        } else {
            (self.limits.amqp_output_buffer - pending_output).min(
                self.limits
                    .amqp_max_unsettled_bytes
                    .saturating_sub(self.held_bytes),
            )
        };
        let share = byte_room / links.len() as u64;
        // Decided on a look at the engine: most passes change nothing and make no engine
        // call (a settlement rarely frees credit the link's own credit does not bind).
        let as_u32 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let mut wants_more = false;
        let mut capped = false;
        {
            let engine = self.server.engine.borrow();
            let credit = |c| u64::from(engine.credit(conn, c).unwrap_or(0));
            let mut committed: u64 = links
                .iter()
                .map(|(c, _, held, on_way)| credit(*c) + held + on_way)
                .sum();
            // Nothing held, nothing on its way: one message may always go, however large,
            // or a message bigger than the bounds would never be delivered.
            let window = if committed == 0 && !blocked {
                share.max(1)
            } else {
                share
            };
            self.window_given = window;
            self.sent_since_window = 0;
            // Windows move only by a step of some size (or from zero): deliveries and
            // settlements move them a message at a time, and an engine call for each
            // would cost more than the bound saves. Stale by a step at most.
            let step = self.limits.amqp_output_buffer / 8;
            for (consumer, link_credit, held, on_way) in &links {
                let current = engine.window(conn, *consumer).unwrap_or(u64::MAX);
                if (current == 0 && window > 0) || current.abs_diff(window) > step {
                    plan.push((*consumer, CreditChange::Window(window)));
                }
                let current = credit(*consumer);
                let wanted = link_credit
                    .saturating_sub(*on_way)
                    .min(per_link.saturating_sub(held + on_way));
                // A bound of ours, not the client's credit, keeps the engine's credit down:
                // settlements and deliveries sent may then let more go.
                capped |= wanted < link_credit.saturating_sub(*on_way);
                if current + on_way > *link_credit {
                    // The client lowered the link's credit: the engine keeps no more.
                    let keep = wanted.min(current);
                    plan.push((*consumer, CreditChange::Lower(as_u32(keep))));
                    committed -= current - keep;
                } else if wanted > current {
                    let add = (wanted - current).min(per_conn.saturating_sub(committed));
                    capped |= add < wanted - current;
                    if blocked {
                        wants_more = true;
                    } else if add > 0 {
                        plan.push((*consumer, CreditChange::Add(as_u32(add))));
                        committed += add;
                        debug_assert!(committed <= per_conn);
                    }
                }
            }
            // A window spent while output waits or unsettled bytes are at their bound is
            // opened again once output drains (the client settling checks anyway).
            wants_more |= blocked;
            // Byte room below half its bound: settlements widen the windows.
            capped |= byte_room < self.limits.amqp_output_buffer / 2;
        }
        self.credit_blocked = wants_more;
        self.credit_capped = capped;
        self.scratch_links = links;
        if plan.is_empty() {
            self.scratch_plan = plan;
            return;
        }
        self.server.with_engine(|e, now, fx| {
            for (consumer, change) in plan.drain(..) {
                match change {
                    CreditChange::Window(bytes) => {
                        let _ = e.set_window(conn, consumer, bytes, now, fx);
                    }
                    CreditChange::Lower(keep) => {
                        let _ = e.drain(conn, consumer);
                        if keep > 0 {
                            let _ = e.add_credit(conn, consumer, keep, now, fx);
                        }
                    }
                    CreditChange::Add(n) => {
                        let _ = e.add_credit(conn, consumer, n, now, fx);
                    }
                }
            }
        });
        self.scratch_plan = plan;
    }

    /// Tops up the consumers' credit (first, so a drain sees what it delivers), then
    /// does what the inbox holds; again while that frees credit (a pre-settled link's,
    /// as it sends), until the output bound stops it.
    fn pump_deliveries(&mut self) {
        // Bounded: each round sends at most the credit one round gives.
        for _ in 0..16 {
            self.sync_credits();
            self.process_inbox();
            if self.inbox_paused || !self.credit_check {
                break;
            }
        }
    }

    /// A message from the client: put it, and answer (after the log, when persistent).
    /// False when it must wait for log space (nothing done yet: it is tried again).
    fn on_message(
        &mut self,
        link: LinkId,
        delivery_id: u32,
        settled: bool,
        transfer_state: Option<&DeliveryState>,
        message: &Bytes,
    ) -> bool {
        if self.coordinators.contains_key(&link) {
            self.on_control(link, delivery_id, settled, message);
            return true;
        }
        let now = self.now_ms;
        // A transactional transfer is put in its transaction's unit of work, answered
        // at once with the provisional outcome: what waits for the log is the commit.
        let txn = match transfer_state {
            Some(DeliveryState::Transactional { txn_id, .. }) => {
                match self.coordinator_of(txn_id) {
                    Some(c) => Some((c, txn_id.clone())),
                    None => {
                        let state = rejected(unknown_id(txn_id));
                        if !settled {
                            let action = Action::Settle {
                                session: link.session(),
                                delivery_id,
                                state,
                            };
                            self.shared.push(&self.server, 0, action);
                        }
                        return true;
                    }
                }
            }
            _ => None,
        };
        let (state, hold) = match self.put(link, message, now, txn.as_ref().map(|(c, _)| *c)) {
            Ok(Put::Done(hold)) => (DeliveryState::Accepted, hold),
            Ok(Put::WaitForLog) => return false,
            Err(failure) => {
                if settled && txn.is_none() {
                    // Nobody can be told: it must not vanish without a trace.
                    self.not_put(&failure, message, now);
                }
                (rejected(failure.error), ReplyHold::Now)
            }
        };
        let (state, hold) = match txn {
            Some((_, txn_id)) => (
                DeliveryState::Transactional {
                    txn_id,
                    outcome: Some(Box::new(state)),
                },
                ReplyHold::Now,
            ),
            None => (state, hold),
        };
        for c in [&self.shared.counters, &*self.shared.channel_counters] {
            Counters::add(&c.messages_received, 1);
            c.last_message_ms.set(Some(now));
        }
        if !settled {
            if matches!((&state, &hold), (DeliveryState::Accepted, ReplyHold::Now))
                && self.accepts_may_wait()
            {
                let action = Action::AcceptLater {
                    session: link.session(),
                    delivery_id,
                };
                self.shared.push(&self.server, 0, action);
            } else {
                self.settle_received(
                    link,
                    delivery_id,
                    state,
                    hold,
                    "the message could not be logged",
                );
            }
        }
        self.top_up_credit(link);
        true
    }

    /// Whether the acceptance of a transfer that needs no log may wait for the next frame
    /// to the client: only on a connection that consumes too (so a frame will come: the
    /// next message, as for a requester its reply and for a responder its next request),
    /// unless AmqpAcceptDelay is 0 or the client was seen to wait for its acceptances. A
    /// producer-only connection, a persistent message (answered once logged) and a
    /// transaction's work (answered by the discharge) are answered at once.
    fn accepts_may_wait(&self) -> bool {
        self.limits.amqp_accept_delay_ms > 0 && !self.accepts_at_once && !self.consumers.is_empty()
    }

    /// Sets when acceptances that wait for the next frame are due to go alone
    /// (AmqpAcceptDelay from now), and clears it once they went with a frame.
    fn watch_deferred_accepts(&mut self) {
        let due = &self.shared.accepts_due_ms;
        if self.amqp.has_deferred_accepts() {
            if due.get() == 0 {
                due.set(self.now_ms + self.limits.amqp_accept_delay_ms);
            }
        } else if due.replace(0) != 0 {
            // They rode on a frame: the client is not waiting for them.
            self.accepts_timed_out = 0;
        }
    }

    /// AmqpAcceptDelay passed with no frame to the client: the acceptances go alone.
    /// Twice in a row means the client waits for them (a synchronous send on a
    /// connection that also consumes): answer it at once from now on.
    fn send_overdue_accepts(&mut self) {
        self.shared.accepts_due_ms.set(0);
        self.amqp.send_deferred_accepts();
        self.accepts_timed_out += 1;
        if self.accepts_timed_out >= 2 {
            self.accepts_at_once = true;
        }
        debug_assert!(!self.amqp.has_deferred_accepts());
    }

    /// Answers the client's transfer `delivery_id` on `link` with `state`, once the log
    /// is durable as `hold` says; when its records could not be logged, rejected with
    /// 2102 and `unlogged`.
    fn settle_received(
        &self,
        link: LinkId,
        delivery_id: u32,
        state: DeliveryState,
        hold: ReplyHold,
        unlogged: &str,
    ) {
        let (lsn, state) = match hold {
            ReplyHold::Now => (0, state),
            ReplyHold::Until(lsn) => (lsn, state),
            ReplyHold::Fail => (0, rejected(error_of(ReasonCode::ResourceProblem, unlogged))),
        };
        let action = Action::Settle {
            session: link.session(),
            delivery_id,
            state,
        };
        self.shared.push(&self.server, lsn, action);
    }

    /// Grants the sender on `link` credit again once half of it is used.
    fn top_up_credit(&mut self, link: LinkId) {
        if self.amqp.credit_outstanding(link) < SENDER_CREDIT / 2 {
            let top_up = SENDER_CREDIT - self.amqp.credit_outstanding(link);
            let _ = self.amqp.grant_credit(link, top_up);
        }
    }

    /// Whether a persistent put of `bytes` may run now (see `Server::log_room`): a transfer
    /// that must wait is tried again when the server wakes this task (after flushes,
    /// checkpoints, and once a second), and refused after the same patience as an MQI
    /// call. Once one has been refused, those after it are refused at once while the log
    /// stays full, so a batch of transfers cannot hold the connection for a wait each.
    fn log_room_for_put(&mut self, bytes: usize) -> Result<Put, ErrorCondition> {
        let usage = LogUse::Put(bytes);
        let refused = || error_of(ReasonCode::ResourceProblem, "the recovery log is full");
        let room = match self.log_wait {
            None if self.server.has_put_waiters() => LogRoom::Wait,
            None => self.server.log_room(usage, 0),
            Some((_, base)) => {
                let waited = self.server.checkpoints_completed().saturating_sub(base);
                self.server.log_room(usage, waited)
            }
        };
        if room != LogRoom::Wait && self.log_wait.take().is_some() {
            self.server.stop_waiting_for_log_room(&*self.shared, 0);
        }
        match room {
            LogRoom::Ready => Ok(Put::Done(ReplyHold::Now)),
            LogRoom::Refused => Err(refused()),
            LogRoom::Wait => {
                let server = &self.server;
                let (since, _) = *self.log_wait.get_or_insert_with(|| {
                    (std::time::Instant::now(), server.checkpoints_completed())
                });
                if self.server.waited_too_long_for_log_room(since) {
                    self.server.refuse_log_room(usage);
                    return Err(refused());
                }
                // One call at a time waits: the connection's next transfer (tag 0).
                self.server.wait_for_log_room(self.shared.clone(), 0, usage);
                Ok(Put::WaitForLog)
            }
        }
    }

    /// Puts a transfer's message: outside syncpoint, or under `txn` (a coordinator link)
    /// in its unit of work.
    fn put(
        &mut self,
        link: LinkId,
        message: &Bytes,
        now: u64,
        txn: Option<LinkId>,
    ) -> Result<Put, PutFailure> {
        let conn = self.conn.ok_or_else(not_open)?;
        // A small body is copied out of the read buffer, so a message that stays queued
        // does not pin the whole read chunk it arrived in (as the native path does); the
        // copy shares one allocation with the properties.
        let mq = amqp_to_mq_compact(message, now, COPY_BODY_BELOW)
            .map_err(|e| ErrorCondition::new(e.condition(), e.to_string()))?;
        let (conn, hobj) = match txn {
            Some(coordinator) => self.transaction_output(coordinator, link, mq.to.as_ref())?,
            None => (conn, self.output_of(link, mq.to.as_ref())?),
        };
        let mut md = mq.md;
        if md.persistence != persistence::NOT_PERSISTENT {
            match self.log_room_for_put(mq.body.len() + mq.properties.len()) {
                Ok(Put::WaitForLog) => return Ok(Put::WaitForLog),
                Ok(Put::Done(_)) => {}
                Err(error) => {
                    return Err(PutFailure {
                        reason: Some(ReasonCode::ResourceProblem),
                        error,
                        queue: self.queue_of(link, mq.to.as_ref()),
                    })
                }
            }
        }
        let syncpoint = if txn.is_some() {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        };
        let pmo = PutOptions::new(syncpoint | PutOptionFlags::FAIL_IF_QUIESCING);
        let body = mq.body;
        let props = mq.properties;
        let to = mq.to;
        let mut wait = ReplyWait::default();
        let mut put = |md: &mut ferry_mqi::MessageDescriptor, body: Bytes, props: Bytes| {
            self.server.call(&mut wait, |e, now, fx| {
                e.put_with_properties(conn, hobj, md, &pmo, body, props, now, fx)
            })
        };
        let r = if md.persistence == persistence::NOT_PERSISTENT {
            // Nothing to retry: body and properties move in (a clone of the properties,
            // which own their buffer, would allocate).
            put(&mut md, body, props)
        } else {
            let r = put(&mut md, body.clone(), props.clone());
            if matches!(&r, Err(e) if e.reason == ReasonCode::PersistentNotAllowed) {
                // A temporary queue (JMS TemporaryQueue) holds no persistent messages
                // (MQ's 2048); it ends with its connection anyway, so a durable message
                // sent to one is kept as a non-persistent one instead of failing the JMS
                // send.
                md.persistence = persistence::NOT_PERSISTENT;
                put(&mut md, body, props)
            } else {
                r
            }
        };
        r.map(|_| Put::Done(wait.log)).map_err(|e| {
            // The queue's name, only for the error (no copy per message put).
            let queue = self.queue_of(link, to.as_ref());
            PutFailure {
                reason: Some(e.reason),
                error: error_of(e.reason, &format!("the message was not put on '{queue}'")),
                queue,
            }
        })
    }

    /// The output handle of inbound `link` (ANONYMOUS-RELAY: of the message's `to`).
    fn output_of(
        &mut self,
        link: LinkId,
        to: Option<&ferry_amqp::Str>,
    ) -> Result<Hobj, PutFailure> {
        let hobj = match self.links.get(&link) {
            Some(Link::Inbound { hobj: Some(h), .. }) => *h,
            Some(Link::Inbound { hobj: None, .. }) => {
                let Some(to) = to.map(|t| t.as_str()) else {
                    return Err(PutFailure {
                        reason: Some(ReasonCode::UnknownObjectName),
                        error: ErrorCondition::new(
                            condition::NOT_FOUND,
                            "a message on an anonymous link needs a 'to' address",
                        ),
                        queue: String::new(),
                    });
                };
                match self.relay.get(to) {
                    Some(h) => *h,
                    None => {
                        let (h, _) =
                            self.open_queue_for_put(to)
                                .map_err(|(reason, error)| PutFailure {
                                    reason,
                                    error,
                                    queue: to.to_string(),
                                })?;
                        self.relay.insert(to.to_string(), h);
                        h
                    }
                }
            }
            _ => {
                return Err(ErrorCondition::new(
                    condition::ILLEGAL_STATE,
                    "the link does not receive messages",
                )
                .into())
            }
        };
        Ok(hobj)
    }

    /// The output handle, on coordinator `coordinator`'s engine connection, of the queue
    /// a transactional transfer on `link` is for (opened at its first use).
    fn transaction_output(
        &mut self,
        coordinator: LinkId,
        link: LinkId,
        to: Option<&ferry_amqp::Str>,
    ) -> Result<(ConnId, Hobj), PutFailure> {
        if !matches!(self.links.get(&link), Some(Link::Inbound { .. })) {
            return Err(ErrorCondition::new(
                condition::ILLEGAL_STATE,
                "the link does not receive messages",
            )
            .into());
        }
        let queue = self.queue_of(link, to);
        if queue.is_empty() {
            return Err(PutFailure {
                reason: Some(ReasonCode::UnknownObjectName),
                error: ErrorCondition::new(
                    condition::NOT_FOUND,
                    "a message on an anonymous link needs a 'to' address",
                ),
                queue,
            });
        }
        let Some(c) = self.coordinators.get(&coordinator) else {
            return Err(not_open().into());
        };
        let conn = c.conn;
        if let Some(h) = c.outputs.get(&queue) {
            return Ok((conn, *h));
        }
        let (h, _) = self
            .open_queue_for_put_on(conn, &queue)
            .map_err(|(reason, error)| PutFailure {
                reason,
                error,
                queue: queue.clone(),
            })?;
        if let Some(c) = self.coordinators.get_mut(&coordinator) {
            c.outputs.insert(queue, h);
        }
        Ok((conn, h))
    }

    /// The queue a transfer on `link` is for: the link's target, else the message's `to`.
    fn queue_of(&self, link: LinkId, to: Option<&ferry_amqp::Str>) -> String {
        match self.links.get(&link) {
            Some(Link::Inbound { address, .. }) if !address.is_empty() => address.clone(),
            _ => to.map_or_else(String::new, |t| t.as_str().to_string()),
        }
    }

    /// Opens `name` for output, for ANONYMOUS-RELAY: the MQ reason too when it fails.
    fn open_queue_for_put(
        &mut self,
        name: &str,
    ) -> Result<(Hobj, String), (Option<ReasonCode>, ErrorCondition)> {
        let conn = self.conn.ok_or_else(|| (None, not_open()))?;
        self.open_queue_for_put_on(conn, name)
    }

    /// Opens queue `name` for output on engine connection `conn`.
    fn open_queue_for_put_on(
        &mut self,
        conn: ConnId,
        name: &str,
    ) -> Result<(Hobj, String), (Option<ReasonCode>, ErrorCondition)> {
        let od = ObjectDescriptor::queue(name).map_err(|e| {
            let error = ErrorCondition::new(
                condition::NOT_FOUND,
                format!("'{name}' is not a valid queue name: {e}"),
            );
            (Some(ReasonCode::UnknownObjectName), error)
        })?;
        let options = OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING;
        self.server
            .with_engine(|e, now, fx| e.open(conn, &od, options, now, fx))
            .map(|o| (o.hobj, o.object_name.trim().to_string()))
            .map_err(|e| {
                let what = format!("queue '{name}' cannot be opened");
                (Some(e.reason), error_of(e.reason, &what))
            })
    }

    /// A pre-settled transfer that could not be put: to the dead-letter queue with an
    /// MQDLH giving the reason, as MQ's channel agents do, or discarded when there is no
    /// dead-letter queue (DEADQ blank), it cannot take the message, or the message does
    /// not map to an MQ message. Either way counted (DISPLAY CHSTATUS) and reported by
    /// FRY9544W, which the error log suppresses to a line and a count per interval.
    fn not_put(&mut self, failure: &PutFailure, message: &Bytes, now: u64) {
        let dead_letter_q = self
            .server
            .engine
            .borrow()
            .qmgr()
            .dead_letter_q
            .trim()
            .to_string();
        let put = match failure.reason {
            Some(reason) if !dead_letter_q.is_empty() => {
                self.dead_letter(&dead_letter_q, reason, &failure.queue, message, now)
            }
            _ => false,
        };
        for c in [&self.shared.counters, &*self.shared.channel_counters] {
            Counters::add(if put { &c.dead_lettered } else { &c.discarded }, 1);
        }
        // One line per message: the error log writes the first of each cause per
        // SuppressInterval and counts the rest, so a flood costs a line per interval.
        let what = failure
            .error
            .description
            .as_ref()
            .map_or(failure.error.condition.as_str(), |d| d.as_str());
        let fate = if put {
            format!("put to the dead-letter queue '{dead_letter_q}'")
        } else {
            "discarded".to_string()
        };
        self.server.error_log.borrow_mut().write(
            &messages::AMQP_NOT_PUT,
            &[
                &self.shared.peer_ip,
                &self.shared.settings.name,
                &failure.queue,
                &what,
                &fate,
            ],
        );
    }

    /// Puts `message` (an AMQP message that could not go to `dest_q` for `reason`) to
    /// the dead-letter queue, headed by an MQDLH; true when it is there.
    fn dead_letter(
        &mut self,
        dead_letter_q: &str,
        reason: ReasonCode,
        dest_q: &str,
        message: &Bytes,
        now: u64,
    ) -> bool {
        let Some(conn) = self.conn else { return false };
        let Ok(mq) = amqp_to_mq_compact(message, now, 0) else {
            return false;
        };
        let hobj = match &self.dead_letter_hobj {
            Some((name, h)) if name == dead_letter_q => *h,
            _ => match self.open_queue_for_put(dead_letter_q) {
                Ok((h, _)) => {
                    if let Some((_, old)) = self
                        .dead_letter_hobj
                        .replace((dead_letter_q.to_string(), h))
                    {
                        self.close_handle(old);
                    }
                    h
                }
                Err(_) => return false,
            },
        };
        let mut md = mq.md;
        let header = DeadLetterHeader::for_message(
            &md,
            reason,
            dest_q,
            self.server.name.as_str(),
            (APPL_TYPE_AMQP, &self.shared.settings.name),
            ferry_engine::clock::put_date_time(ferry_engine::Timestamp(now)),
        );
        let mut body = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + mq.body.len());
        header.encode(md.encoding, &mut body);
        body.extend_from_slice(&mq.body);
        md.format = FORMAT_DEAD_LETTER_HEADER;
        let usage = LogUse::Put(body.len() + mq.properties.len());
        if md.persistence != persistence::NOT_PERSISTENT
            && self.server.log_room(usage, 0) != LogRoom::Ready
        {
            return false;
        }
        let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::FAIL_IF_QUIESCING);
        let props = mq.properties;
        self.server
            .with_engine(|e, now, fx| {
                e.put_with_properties(conn, hobj, &mut md, &pmo, Bytes::from(body), props, now, fx)
            })
            .is_ok()
    }

    /// The client's outcome for deliveries `first..=last` we sent.
    fn on_disposition(
        &mut self,
        session: SessionId,
        first: u32,
        last: u32,
        settled: bool,
        state: Option<DeliveryState>,
    ) {
        let Some(conn) = self.conn else { return };
        // A transactional acceptance acquires the deliveries for the transaction: they
        // stay held until it is discharged. Other transactional outcomes apply at once.
        let mut acquire_for = None;
        let provisional = match &state {
            Some(DeliveryState::Transactional { txn_id, outcome }) => {
                match self.coordinator_of(txn_id) {
                    Some(c) => {
                        if matches!(outcome.as_deref(), Some(DeliveryState::Accepted)) {
                            acquire_for = Some(c);
                        }
                        outcome.as_deref()
                    }
                    // Unknown: nothing is settled (the deliveries stay held).
                    None => None,
                }
            }
            other => other.as_ref(),
        };
        let outcome = match provisional {
            Some(DeliveryState::Accepted) => Some(Settlement::Accepted),
            Some(DeliveryState::Released) => Some(Settlement::Released),
            Some(DeliveryState::Modified {
                delivery_failed,
                undeliverable_here,
                ..
            }) => Some(Settlement::Modified {
                delivery_failed: *delivery_failed,
                undeliverable_here: *undeliverable_here,
            }),
            Some(DeliveryState::Rejected { .. }) => Some(Settlement::Rejected),
            _ => None,
        };
        let Some(outcome) = outcome else { return };
        // The range is the client's to choose (0..=0xFFFFFFFF, or wrapping around): the
        // work is bounded by what the connection holds, not by the range.
        let span = last.wrapping_sub(first);
        let mut ids: Vec<u32> = if u64::from(span) < self.deliveries.len() as u64 {
            (0..=span)
                .map(|i| first.wrapping_add(i))
                .filter(|id| self.deliveries.contains_key(&(session.0, *id)))
                .collect()
        } else {
            self.deliveries
                .keys()
                .filter(|(channel, id)| *channel == session.0 && id.wrapping_sub(first) <= span)
                .map(|(_, id)| *id)
                .collect()
        };
        // In the order the client named them (serial order from `first`).
        ids.sort_unstable_by_key(|id| id.wrapping_sub(first));
        let mut others = Vec::new();
        for id in ids {
            if let Some((link, token, size)) = self.deliveries.remove(&(session.0, id)) {
                self.held_bytes -= u64::from(size);
                if let Some(Link::Outbound { held, .. }) = self.links.get_mut(&link) {
                    *held -= 1;
                }
                if let Some(t) = acquire_for
                    .and_then(|c| self.coordinators.get_mut(&c))
                    .and_then(|c| c.open.as_mut())
                {
                    t.acquired.push(token);
                } else if outcome == Settlement::Accepted {
                    self.accepted.push(token);
                } else {
                    others.push(token);
                }
            }
        }
        // Settled deliveries make room for more, if a bound of ours held credit back
        // (most clients' own credit binds first: their next flow brings more).
        self.credit_check |= self.credit_capped;
        if !others.is_empty() {
            let _ = self
                .server
                .with_engine(|e, now, fx| e.settle_many(conn, &others, outcome, now, fx));
        }
        if !settled {
            let _ = self
                .amqp
                .disposition(session, Role::Sender, first, last, true, state);
        }
        let settings = &self.shared.settings;
        if self.accepted.len() >= settings.batch_size || settings.batch_interval_ms == 0 {
            self.flush_accepts();
        } else if !self.accepted.is_empty() && self.batch_due.is_none() {
            self.batch_due = Some(
                tokio::time::Instant::now() + Duration::from_millis(settings.batch_interval_ms),
            );
        }
    }

    /// Removes the accepted deliveries (one engine call for the batch).
    fn flush_accepts(&mut self) {
        self.batch_due = None;
        let Some(conn) = self.conn else {
            self.accepted.clear();
            return;
        };
        if self.accepted.is_empty() {
            return;
        }
        let tokens = std::mem::take(&mut self.accepted);
        let _ = self
            .server
            .with_engine(|e, now, fx| e.settle_many(conn, &tokens, Settlement::Accepted, now, fx));
    }

    fn on_detach(&mut self, link: LinkId) {
        if self.coordinators.contains_key(&link) {
            return self.detach_coordinator(link);
        }
        let Some(l) = self.links.remove(&link) else {
            return;
        };
        match l {
            Link::Inbound { hobj, .. } => {
                if let Some(h) = hobj {
                    self.close_handle(h);
                }
            }
            Link::Outbound {
                hobj,
                consumer,
                unsettled,
                ..
            } => {
                // Accepted deliveries of this link are applied first, so they are not
                // returned with the unsettled ones.
                self.flush_accepts();
                self.consumers.remove(&consumer);
                self.shared.forget_consumer(consumer);
                self.forget_deliveries(link);
                if let Some(conn) = self.conn {
                    let _ = self.server.with_engine(|e, now, fx| {
                        e.cancel_consumer(conn, consumer, unsettled, now, fx)
                    });
                }
                self.close_handle(hobj);
            }
        }
    }

    /// Does what the inbox holds: deliveries to links, outcomes of the client's
    /// transfers (consecutive acceptances as one disposition), cancelled consumers, and
    /// completes drains.
    fn process_inbox(&mut self) {
        let now = self.now_ms;
        let mut accept_run: Option<(SessionId, u32, u32)> = None;
        let bound = usize::try_from(self.limits.amqp_output_buffer).unwrap_or(usize::MAX);
        self.inbox_paused = false;
        loop {
            let Some(action) = self.shared.inbox.borrow_mut().pop_front() else {
                break;
            };
            if matches!(action, Action::Deliver { .. }) && self.amqp.pending_output_bytes() >= bound
            {
                // The client has not read what it was sent: the rest waits for the output
                // to drain (the engine gives no more credit meanwhile).
                self.shared.inbox.borrow_mut().push_front(action);
                self.inbox_paused = true;
                break;
            }
            match action {
                Action::Settle {
                    session,
                    delivery_id,
                    state: DeliveryState::Accepted,
                } => {
                    accept_run = match accept_run {
                        Some((s, first, last))
                            if s == session && last.wrapping_add(1) == delivery_id =>
                        {
                            Some((s, first, delivery_id))
                        }
                        other => {
                            self.send_accepts(other);
                            Some((session, delivery_id, delivery_id))
                        }
                    };
                }
                Action::Settle {
                    session,
                    delivery_id,
                    state,
                } => {
                    self.send_accepts(accept_run.take());
                    let _ = self.amqp.disposition(
                        session,
                        Role::Receiver,
                        delivery_id,
                        delivery_id,
                        true,
                        Some(state),
                    );
                }
                Action::AcceptLater {
                    session,
                    delivery_id,
                } => {
                    let _ = self.amqp.accept_with_next_frame(session, delivery_id);
                }
                Action::Deliver {
                    consumer,
                    token,
                    message,
                } => {
                    self.shared.delivered(consumer);
                    self.send_delivery(consumer, token, message, now);
                }
                Action::Cancelled { consumer, reason } => {
                    self.shared.forget_consumer(consumer);
                    if let Some(link) = self.consumers.remove(&consumer) {
                        if let Some(Link::Outbound { hobj, .. }) = self.links.remove(&link) {
                            self.close_handle(hobj);
                        }
                        self.forget_deliveries(link);
                        let _ = self.amqp.detach(
                            link,
                            true,
                            Some(error_of(reason, "the queue is gone")),
                        );
                    }
                }
            }
        }
        self.send_accepts(accept_run);
        self.complete_drains();
    }

    fn send_accepts(&mut self, run: Option<(SessionId, u32, u32)>) {
        if let Some((session, first, last)) = run {
            let _ = self.amqp.disposition(
                session,
                Role::Receiver,
                first,
                last,
                true,
                Some(DeliveryState::Accepted),
            );
        }
    }

    /// Drops the unsettled deliveries of `link` (its consumer ended: the engine settles
    /// them) from the connection's accounts.
    fn forget_deliveries(&mut self, link: LinkId) {
        let mut freed = 0u64;
        self.deliveries.retain(|_, (l, _, size)| {
            let keep = *l != link;
            if !keep {
                freed += u64::from(*size);
            }
            keep
        });
        self.held_bytes -= freed;
    }

    fn send_delivery(
        &mut self,
        consumer: ConsumerId,
        token: Option<DeliveryToken>,
        message: Box<GotMessage>,
        now: u64,
    ) {
        let Some(&link) = self.consumers.get(&consumer) else {
            // The link is gone; its held messages went back when the consumer ended.
            return;
        };
        if self.amqp.credit(link) == 0 {
            // The engine never has more credit than the link: this is a bug guard. An
            // unsettled message goes back; a settled one is already consumed.
            if let (Some(t), Some(conn)) = (token, self.conn) {
                let _ = self
                    .server
                    .with_engine(|e, now, fx| e.settle(conn, t, Settlement::Released, now, fx));
            }
            tracing::warn!("AMQP delivery without link credit on {link:?}");
            return;
        }
        self.next_tag += 1;
        if self.tags.capacity() < 8 {
            self.tags.reserve(8 * 1024);
        }
        self.tags.extend_from_slice(&self.next_tag.to_be_bytes());
        let tag = self.tags.split_to(8).freeze();
        let m = &*message;
        let sent = self.amqp.send(link, tag, token.is_none(), 0, |out| {
            mq_to_amqp(&m.md, &m.properties, &m.data, out, now)
        });
        match sent {
            Ok(delivery_id) => {
                self.sent_since_window += (m.data.len() + m.properties.len()) as u64;
                // This delivery spent its consumer's byte window: the next pass opens it
                // again. Nothing else may: a connection that falls quiet (a requester
                // waiting for its one reply, with a large prefetch) sends no flow,
                // settles nothing a bound of ours held back, and sends too few bytes
                // for the check after half a window.
                if let Some(conn) = self.conn {
                    let spent = self.server.engine.borrow().window(conn, consumer);
                    self.credit_check |= matches!(spent, Ok(0));
                }
                if let Some(t) = token {
                    let size = u32::try_from(m.data.len() + m.properties.len()).unwrap_or(u32::MAX);
                    self.held_bytes += u64::from(size);
                    self.deliveries
                        .insert((link.channel, delivery_id), (link, t, size));
                    if let Some(Link::Outbound { held, .. }) = self.links.get_mut(&link) {
                        *held += 1;
                    }
                } else {
                    // A pre-settled delivery sent frees its place for the next, if a
                    // bound of ours held credit back.
                    self.credit_check |= self.credit_capped;
                }
                for c in [&self.shared.counters, &*self.shared.channel_counters] {
                    Counters::add(&c.messages_sent, 1);
                    c.last_message_ms.set(Some(now));
                }
            }
            Err(e) => tracing::warn!("AMQP send on {link:?} failed: {e}"),
        }
    }

    /// Ends the drains the client asked for once what was available has been sent.
    fn complete_drains(&mut self) {
        if !self.drains_pending {
            return;
        }
        let Some(conn) = self.conn else { return };
        let waiting: Vec<(LinkId, ConsumerId)> = self
            .links
            .iter()
            .filter_map(|(l, k)| match k {
                Link::Outbound {
                    consumer,
                    drain_requested: true,
                    ..
                } => Some((*l, *consumer)),
                _ => None,
            })
            .collect();
        let mut still_waiting = false;
        for (link, consumer) in waiting {
            if self.shared.in_flight(consumer) > 0 {
                still_waiting = true;
                continue;
            }
            let _ = self
                .server
                .with_engine(|e, _now, _fx| e.drain(conn, consumer));
            // Draining may have left deliveries in the inbox only if the engine had
            // delivered in between; the inbox is empty here (we run after it).
            let _ = self.amqp.drained(link);
            if let Some(Link::Outbound {
                drain_requested, ..
            }) = self.links.get_mut(&link)
            {
                *drain_requested = false;
            }
        }
        self.drains_pending = still_waiting;
    }

    /// The connection ended: apply batched acceptances, end the engine connection
    /// (each link's unsettled messages return with its default outcome).
    fn finish(&mut self) {
        self.flush_accepts();
        // Open transactions are backed out first, while their consumers still hold what
        // they acquired (so it returns with BackoutCount + 1).
        let coordinators: Vec<LinkId> = self.coordinators.keys().copied().collect();
        for link in coordinators {
            self.detach_coordinator(link);
        }
        let links: Vec<LinkId> = self.links.keys().copied().collect();
        for link in links {
            self.on_detach(link);
        }
        for (_, h) in std::mem::take(&mut self.relay) {
            self.close_handle(h);
        }
        if let Some((_, h)) = self.dead_letter_hobj.take() {
            self.close_handle(h);
        }
        if let Some(conn) = self.conn.take() {
            // Nothing answers a connection's end: no reply waits for its commit.
            let _ = self.server.end_conversation(conn, true);
        }
    }
}

/// Gives back a read buffer grown large for a big frame once every byte in it is used,
/// and moves the start of a frame still incomplete out of a buffer much larger than it: a
/// connection stalled in the middle of a frame holds what it was sent, not the room a
/// burst made.
/// Returns the capacity let go of.
fn trim_input(input: &mut BytesMut) -> usize {
    let capacity = input.capacity();
    if input.is_empty() {
        if capacity <= READ_BUFFER {
            return 0;
        }
        *input = BytesMut::new();
    } else if capacity > (4 * input.len()).max(8 * 1024) {
        *input = BytesMut::from(&input[..]);
    } else {
        return 0;
    }
    capacity
}

/// The settlement for a link's unsettled deliveries when it ends, from the source's
/// default-outcome; without one, released (the delivery never reached the application
/// as far as the broker knows, so it does not count as a failed attempt).
fn default_outcome(state: Option<&DeliveryState>) -> Settlement {
    match state {
        Some(DeliveryState::Modified {
            delivery_failed,
            undeliverable_here,
            ..
        }) => Settlement::Modified {
            delivery_failed: *delivery_failed,
            undeliverable_here: *undeliverable_here,
        },
        Some(DeliveryState::Rejected { .. }) => Settlement::Rejected,
        Some(DeliveryState::Accepted) => Settlement::Accepted,
        _ => Settlement::Released,
    }
}

fn not_open() -> ErrorCondition {
    ErrorCondition::new(condition::ILLEGAL_STATE, "the connection is not open")
}

/// The application name DISPLAY CONN shows: the client's product, else "AMQP client".
fn app_name(open: &Open) -> String {
    open.properties
        .iter()
        .find(|(k, _)| k.as_str() == "product")
        .and_then(|(_, v)| v.as_str())
        .map_or_else(
            || "AMQP client".to_string(),
            |s| s.chars().take(28).collect(),
        )
}

/// The JMS selector of a source's filter map (Qpid's `jms-selector` key, proton's
/// `selector`; matched by descriptor), compiled, with the entry to echo.
#[allow(clippy::type_complexity)]
fn selector_of(
    source: &Source,
) -> Result<(Option<JmsSelection>, Option<(Symbol, Value)>), ErrorCondition> {
    for (key, value) in &source.filter {
        let Value::Described(d) = value else {
            continue;
        };
        let is_selector = match &d.descriptor {
            Descriptor::Code(c) => *c == condition::SELECTOR_FILTER_CODE,
            Descriptor::Symbol(s) => s.as_str() == condition::SELECTOR_FILTER_SYMBOL,
        };
        if !is_selector {
            continue;
        }
        let Some(text) = d.value.as_str() else {
            return Err(ErrorCondition::new(
                condition::INVALID_FIELD,
                "the selector filter is not a string",
            ));
        };
        if text.len() > MAX_SELECTOR_LENGTH {
            // Refused before it is parsed: a long selector costs the event loop to
            // compile and every put to evaluate.
            return Err(ErrorCondition::new(
                condition::INVALID_FIELD,
                format!(
                    "the selector is {} bytes long, more than MQ_SELECTOR_LENGTH ({MAX_SELECTOR_LENGTH})",
                    text.len()
                ),
            ));
        }
        return match JmsSelection::parse(text) {
            Ok(sel) => Ok((sel, Some((key.clone(), value.clone())))),
            Err(e) => Err(ErrorCondition::new(
                condition::INVALID_FIELD,
                format!("invalid selector: {e}"),
            )),
        };
    }
    Ok((None, None))
}
