//! Effects: what the engine asks the server to do, returned as data.
//!
//! The engine never performs I/O. A call that completes someone else's wait, or changes
//! the definitions that must be saved, pushes an [`Effect`] into the caller's [`Effects`]
//! buffer; the server performs them after the call. The buffer is reused across calls
//! (drain it, keep it) so the hot path does not allocate.
//!
//! With logging on ([`crate::QueueManager::set_logging`]) the buffer also collects the
//! recovery-log records of persistent work ([`Effects::log_records`]), in the exact order
//! the engine's state changed, and says which replies must wait until those records are
//! durable: the calling request's own reply ([`Effects::reply_needs_durable`]) and each
//! [`Effect::GetCompleted`] and [`Effect::Delivered`] (their `needs_durable` field). See
//! the crate documentation for the server's protocol.

use crate::connection::{ConnId, Hobj};
use crate::consumer::{ConsumerId, DeliveryToken};
use crate::get::{GetResult, GotMessage};
use crate::journal::LogRecord;
use ferry_mqi::ReasonCode;

/// One thing the server must do after an engine call.
///
/// `GetCompleted` carries the message descriptor inline: boxing it would allocate once
/// per delivered message on the hot path, while an effect is moved only once.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Effect {
    /// A GET that was waiting finished: a message arrived (or was committed or backed out
    /// onto the queue), the wait interval ended (2033), the queue manager is quiescing
    /// (2161) or stopping (2162), the queue was deleted (2052) or get-inhibited (2016).
    /// The server sends the answer to connection `conn`.
    GetCompleted {
        /// The connection whose GET completes.
        conn: ConnId,
        /// The handle the GET was issued on.
        hobj: Hobj,
        /// The message or the failure.
        result: GetResult,
        /// True when log records were produced before this completion in the same
        /// buffer: its reply must be held until the log is durable past every record
        /// appended up to and including this buffer's records.
        needs_durable: bool,
    },
    /// An async consumer received a message (it had credit): the server sends it on
    /// the consumer's link of connection `conn`.
    Delivered {
        /// The connection running the consumer.
        conn: ConnId,
        /// The consumer.
        consumer: ConsumerId,
        /// For an unsettled delivery, the token to settle it with
        /// ([`crate::QueueManager::settle`]); `None` for browse and settled deliveries.
        delivery: Option<DeliveryToken>,
        /// The message, whole (never truncated), with its properties. Boxed: it passes
        /// through several queues on its way to the socket, and the descriptor alone is
        /// 356 bytes.
        message: Box<GotMessage>,
        /// True when log records were produced before this delivery in the same buffer
        /// (for a settled delivery of a persistent message, its own get record): the
        /// server holds it until the log is durable past them, as for `GetCompleted`.
        needs_durable: bool,
    },
    /// A consumer ended without being asked: its queue was deleted (2052). Its held
    /// messages are gone with the queue; its tokens are no longer valid.
    ConsumerCancelled {
        /// The connection running the consumer.
        conn: ConnId,
        /// The consumer.
        consumer: ConsumerId,
        /// Why it ended.
        reason: ReasonCode,
    },
    /// A definition changed (define/alter/delete, a permanent dynamic queue made or
    /// deleted, ALTER QMGR): the server saves that one definition as it now is (or its
    /// absence), so a change costs the size of the change, not of the catalogue.
    CatalogueChanged(CatalogueChange),
    /// A message backed out BOTHRESH times on `queue` could be moved neither to its
    /// BOQNAME nor to DEADQ and stays on `queue`: the server writes it to the error log.
    /// Pushed once per queue.
    BackoutRequeueFailed {
        /// The queue the message stays on.
        queue: String,
        /// Why the last move was refused.
        reason: ReasonCode,
    },
    /// A report message (COA, COD, expiration, exception) could be put neither to the
    /// ReplyToQ of the message it is about nor to DEADQ, and was discarded: the server
    /// writes it to the error log.
    ReportDiscarded {
        /// The ReplyToQ it was going to.
        reply_to_q: String,
        /// The ReplyToQMgr it was going to (blank: this queue manager).
        reply_to_qmgr: String,
        /// The report's Feedback (an MQFB code, or the reason of an exception).
        feedback: i32,
        /// Why the last put was refused.
        reason: ReasonCode,
    },
    /// A trigger message could be put neither on its initiation queue nor on DEADQ, and
    /// was dropped (`crate::trigger`): the server writes it to the error log.
    TriggerMessageDiscarded {
        /// The application queue that triggered.
        queue: String,
        /// Its initiation queue.
        initiation_q: String,
        /// Why the last put was refused.
        reason: ReasonCode,
    },
    /// An MQCONN or MQOPEN was refused 2035 for want of authority: the server writes it
    /// to the error log, as MQ's AMQ8077W.
    NotAuthorized {
        /// The user checked.
        user: String,
        /// The type of object.
        object_type: ferry_security::oam::ProfileObjectType,
        /// The object, as named.
        object: String,
        /// The authorities asked for and not held.
        missing: ferry_security::oam::Authorities,
    },
    /// A backed-out message waits out its queue's redelivery delay (BODELAY) until `at`,
    /// earlier than anything else the engine waited for: the server re-arms its one
    /// timer ([`crate::QueueManager::next_deadline`]). Never pushed when BODELAY is 0.
    RedeliveryScheduled {
        /// When the message becomes available again.
        at: crate::clock::Timestamp,
    },
}

/// Which definition a [`Effect::CatalogueChanged`] is about. The server reads its new
/// value from the engine ([`crate::QueueManager::queue`] and the like); a name the engine
/// no longer knows (or a temporary dynamic queue) was deleted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CatalogueChange {
    /// The queue of this name.
    Queue(String),
    /// The channel of this name.
    Channel(String),
    /// The listener of this name.
    Listener(String),
    /// The channel authentication records of this profile.
    Chlauth(String),
    /// The authentication information object of this name.
    AuthInfo(String),
    /// The process definition of this name.
    Process(String),
    /// The namelist of this name.
    Namelist(String),
    /// The topic object of this name.
    Topic(String),
    /// The authority record with this key.
    AuthorityRecord(ferry_security::oam::RecordKey),
    /// The durable subscription of this name.
    Subscription(String),
    /// The queue manager's attributes.
    Qmgr,
}

/// A reusable buffer of effects.
#[derive(Debug, Default)]
pub struct Effects {
    items: Vec<Effect>,
    log: Vec<LogRecord>,
    reply_durable: bool,
}

impl Effects {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an effect. A `CatalogueChanged` is kept once per definition and batch.
    pub fn push(&mut self, e: Effect) {
        if let Effect::CatalogueChanged(change) = &e {
            if self
                .items
                .iter()
                .any(|x| matches!(x, Effect::CatalogueChanged(c) if c == change))
            {
                return;
            }
        }
        self.items.push(e);
    }

    /// Takes every effect out, keeping the allocation. Log records and the reply flag
    /// are separate: see [`Effects::drain_log`].
    pub fn drain(&mut self) -> std::vec::Drain<'_, Effect> {
        self.items.drain(..)
    }

    /// Forgets every effect and log record and resets the reply flag, keeping the
    /// allocations.
    pub fn clear(&mut self) {
        self.items.clear();
        self.log.clear();
        self.reply_durable = false;
    }

    /// Appends a recovery-log record (engine side).
    pub(crate) fn log(&mut self, r: LogRecord) {
        self.log.push(r);
    }

    /// Marks the calling request's reply as one that must wait for durability.
    pub(crate) fn reply_waits(&mut self) {
        self.reply_durable = true;
    }

    /// True when the buffer holds log records (a completion pushed now must wait).
    pub(crate) fn has_log(&self) -> bool {
        !self.log.is_empty()
    }

    /// The log records produced so far, oldest first.
    pub fn log_records(&self) -> &[LogRecord] {
        &self.log
    }

    /// Takes the log records out, oldest first, keeping the allocation; also resets
    /// [`Effects::reply_needs_durable`]. The server appends them to the log, in this
    /// order, before releasing any reply of the same call.
    pub fn drain_log(&mut self) -> std::vec::Drain<'_, LogRecord> {
        self.reply_durable = false;
        self.log.drain(..)
    }

    /// True when the reply of the call that filled this buffer must be held until the
    /// log is durable past every record in it (an acknowledged persistent put or get
    /// outside syncpoint, a commit or backout of persistent work, a queue clear or
    /// delete that removed logged state). Read it before [`Effects::drain_log`].
    pub fn reply_needs_durable(&self) -> bool {
        self.reply_durable
    }

    /// The effects so far.
    pub fn as_slice(&self) -> &[Effect] {
        &self.items
    }

    /// How many effects are waiting.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there is nothing to do.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}
