//! One AMQP connection: a task that reads frames, drives the sans-I/O
//! [`Connection`], maps what the client does onto the engine, and writes what the
//! state machine and the engine produce. This module is the task (its loop, reads,
//! writes, timers and the events' dispatch); what it does with them is split by
//! direction: `links` (open, attach, detach, flow), `receiving` (the client's messages,
//! put), `delivering` (messages and outcomes to the client, credit) and `transactions`
//! (coordinator links).
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

mod delivering;
mod links;
mod receiving;
mod topics;
mod transactions;

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
use crate::runtime::socket_writer::SocketWriter;
use crate::runtime::telemetry::{MessageFacts, Protocol};
use crate::runtime::tls::{self, Accepted, TlsSession};
use crate::runtime::{channel_auth, connauth};
use bytes::{Bytes, BytesMut};
use ferry_amqp::condition;
use ferry_amqp::connection::{Config, Connection, Event, LinkId, SaslServer, SessionId};
use ferry_amqp::{
    Attach, DeliveryState, Descriptor, ErrorCondition, ExpiryPolicy, LinkTarget, Open, Role,
    SenderSettleMode, Source, Symbol, Target, TerminusDurability, Value,
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
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
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
    /// A password check's answer, waiting for the connection task (true: the password was
    /// the user's).
    sasl_decision: Cell<Option<bool>>,
    /// The user id a password proved, when the AUTHINFO has ADOPTCTX(YES).
    adopted_user: RefCell<Option<String>>,
    /// The user's groups were read from an LDAP directory (true) or could not be, for
    /// the open waiting for them.
    groups_decision: Cell<Option<bool>>,
    /// What TLS agreed, when the connection uses it (set once the handshake is done).
    pub(in crate::runtime::amqp) tls: RefCell<Option<Rc<TlsSession>>>,
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
    /// The channel's overdue task, told when this connection starts deferring acceptances
    /// (it sleeps while none of the channel's connections does).
    accepts_waiting: Rc<Notify>,
}

impl AmqpShared {
    /// A password check ended: the connection task answers the client's SASL-INIT.
    fn sasl_decided(&self, ok: bool) {
        self.sasl_decision.set(Some(ok));
        self.wake.notify_one();
    }

    /// The user's groups were read (or could not be): the connection task answers the
    /// client's open.
    fn groups_decided(&self, read: bool) {
        self.groups_decision.set(Some(read));
        self.wake.notify_one();
    }

    /// A connection accepted on a channel with `settings`, from `peer_ip`.
    pub fn new(
        settings: ChannelSettings,
        peer_ip: String,
        channel_counters: Rc<Counters>,
        accepts_waiting: Rc<Notify>,
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
            sasl_decision: Cell::new(None),
            adopted_user: RefCell::new(None),
            groups_decision: Cell::new(None),
            tls: RefCell::new(None),
            inbox: RefCell::new(VecDeque::new()),
            held: RefCell::new(VecDeque::new()),
            in_flight: RefCell::new(HashMap::new()),
            wake: Notify::new(),
            busy: Cell::new(false),
            forced: RefCell::new(None),
            finished: Cell::new(false),
            accepts_due_ms: Cell::new(0),
            accepts_waiting,
        }
    }

    /// True when acceptances wait for the next frame (due or not).
    pub(super) fn accepts_wait(&self) -> bool {
        self.accepts_due_ms.get() != 0
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
            tls: self
                .tls
                .borrow()
                .as_ref()
                .map(|t| t.status())
                .unwrap_or_default(),
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
    /// The client sends: messages are put to `hobj` (None: ANONYMOUS-RELAY, by `to`);
    /// `topic`: the address is a topic (the puts publish).
    Inbound {
        hobj: Option<Hobj>,
        address: String,
        topic: bool,
    },
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
        /// For a topic: the subscription's handle (`hobj` is its managed queue's).
        subscription: Option<Hobj>,
    },
    /// JMS unsubscribe's lookup of the durable subscription `name`: closing the link
    /// removes it.
    SubscriptionLookup { name: String },
}

/// The connection task's own state.
/// What became of a transfer's put.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Put {
    /// Put; its settlement waits for the log as the hold says. `sent_persistent`: the
    /// client sent it durable (kept so even when a temporary queue stored it as
    /// non-persistent): Qpid JMS waits for the outcome of such a send.
    Done {
        hold: ReplyHold,
        sent_persistent: bool,
    },
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
    /// A consumer was attached on this connection at some time: the client receives
    /// messages (a JMS requester attaches one per request), so frames to it will come.
    has_consumed: bool,
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
    /// ANONYMOUS-RELAY output handles by queue name (`topic://` and the topic string for
    /// a topic).
    relay: HashMap<String, Hobj>,
    /// Temporary topics made on this connection (for their names).
    temporary_topics: u64,
    next_tag: u64,
    events: Vec<Event>,
    /// Some link's drain may be waiting to complete (most connections never drain: the
    /// links are not scanned for one after every batch then).
    drains_pending: bool,
    /// Why the connection is refused (MAXINST/MAXINSTC, the channel's TLS checks), and
    /// the error condition: answered at the client's open.
    refused: Option<(&'static str, String)>,
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
    /// Its part in the count of active connections (`runtime::wake_coalescing`).
    activity: crate::runtime::wake_coalescing::Activity,
    /// The dead-letter queue's output handle, once opened.
    dead_letter_hobj: Option<(String, Hobj)>,
    /// Coordinator links (AMQP transactions), each with its own engine connection.
    coordinators: HashMap<LinkId, Coordinator>,
    /// Acceptances went alone at their due time (AmqpAcceptDelay) and nothing else was
    /// sent to the client since.
    overdue_sent: bool,
    /// Times in a row the client's next transfer came right after acceptances that went
    /// alone (nothing sent to it between): it was waiting for them.
    client_waited: u32,
    /// The client was seen waiting for its acceptances (`client_waited` reached 2): from
    /// then on each is sent at once.
    accepts_at_once: bool,
    /// The next transaction id (ids are unique within the connection).
    next_txn: u64,
    /// Who connected, for the engine connections coordinators make.
    conn_info: Option<ConnectionInfo>,
    /// The client's open waits for the user's groups from an LDAP directory: who
    /// connects, and the client's container id.
    opening: Option<(ConnectionInfo, String)>,
    /// What the client sent after that open, handled once it is answered.
    after_open: Vec<Event>,
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

/// How long a new connection has to open: HandshakeTimeout (qm.ini Limits), or the
/// channel's HBINT when it is shorter (the TLS handshake of AMQPS included).
pub fn handshake_limit(server: &Server, shared: &AmqpShared) -> Duration {
    let limit = server.ini.limits.handshake_timeout();
    match shared.settings.heartbeat_secs {
        0 => limit,
        n => limit.min(Duration::from_secs(u64::from(n))),
    }
}

/// Serves one accepted socket (after its TLS handshake, when it made one) until the
/// connection ends; `refuse` closes it at the client's open with that error condition
/// (MAXINST/MAXINSTC, the channel's TLS checks).
pub async fn serve(
    server: Rc<Server>,
    shared: Rc<AmqpShared>,
    stream: Accepted,
    refuse: Option<(&'static str, String)>,
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
        has_consumed: false,
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
        temporary_topics: 0,
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
        activity: Default::default(),
        dead_letter_hobj: None,
        coordinators: HashMap::new(),
        overdue_sent: false,
        client_waited: 0,
        accepts_at_once: false,
        next_txn: 1,
        conn_info: None,
        opening: None,
        after_open: Vec::new(),
    };
    s.refused = refuse;
    match stream {
        Accepted::Plain(stream) => {
            let (rd, wr) = stream.into_split();
            s.run(rd, wr).await;
        }
        Accepted::Tls(stream, mut session) => {
            let (rd, wr) = tls::split(&s.server, *stream, &mut session);
            *shared.tls.borrow_mut() = Some(Rc::new(session));
            s.run(rd, wr).await;
        }
    }
    s.finish();
    shared.finished.set(true);
}

impl Session {
    async fn run<R: AsyncRead + Unpin, W: SocketWriter>(&mut self, mut rd: R, mut wr: W) {
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
            if let Some(ok) = self.shared.sasl_decision.take() {
                // A password check ended: answer SASL, then what the client sent after it.
                let _ = self.amqp.sasl_outcome(ok);
                if !input.is_empty() {
                    self.receive(&mut input);
                }
            }
            if let Some(read) = self.shared.groups_decision.take() {
                // The user's groups were read: answer the open, then what followed it
                // (handled with the events below).
                self.groups_read(read);
                let mut held = std::mem::take(&mut self.after_open);
                held.append(&mut self.events);
                self.events = held;
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
            // Nor while the open waits for the user's groups (what the client pipelined
            // behind it waits in the socket).
            let reading = self.opening.is_none()
                && (self.deferred.is_empty()
                    || self.deferred_bytes() as u64 <= self.limits.amqp_max_incomplete_bytes);
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
                        self.activity.note(n);
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
    async fn write_output<W: SocketWriter>(&mut self, wr: &mut W) -> bool {
        let out = self.amqp.output();
        Counters::add(&self.shared.counters.bytes_sent, out.len() as u64);
        Counters::add(&self.shared.channel_counters.bytes_sent, out.len() as u64);
        let timeout = self.limits.amqp_send_timeout();
        let mut at = 0;
        let mut result = true;
        while at < out.len() {
            // Most writes go at once: the timer is armed only when the socket is full.
            match wr.try_write_now(&out[at..]) {
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
        if result && wr.buffers() {
            // TLS records wait in the writer until flushed.
            result = matches!(tokio::time::timeout(timeout, wr.flush()).await, Ok(Ok(())));
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
    async fn give_up<W: SocketWriter>(&mut self, wr: &mut W, why: String, log: bool) {
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
        handshake_limit(&self.server, &self.shared)
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
        if self.opening.is_some() {
            // The open waits for the user's groups: so does what came after it.
            self.after_open.append(&mut self.events);
            return sasl;
        }
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
                    // The outcome waits while a password is checked (the connection task
                    // gets it from `sasl_decision`).
                    sasl = self.on_sasl_init(mechanism.as_str(), initial_response.as_deref());
                }
                Event::Open(open) => {
                    if !self.on_open(&open) {
                        // Its answer waits for the user's groups: so does the rest.
                        self.after_open.extend(pending.by_ref());
                        break;
                    }
                }
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
                Event::Detach { link, closed, .. } => self.on_detach(link, closed),
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
            // The connection ends, its links are not closed: durable subscriptions stay.
            self.on_detach(link, false);
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
