//! The Ferry queue manager core: a pure, deterministic, single-owner MQI engine.
//!
//! The server owns one [`QueueManager`] on one thread and calls it synchronously. The
//! engine does no I/O, reads no clock (every call that needs time takes a
//! [`Timestamp`]), starts no threads and takes no locks. What must happen elsewhere (a
//! waiting GET completes, the catalogue must be saved) comes back as [`Effect`]s pushed
//! into the caller's reusable [`Effects`] buffer. Timed waits are armed by the server from
//! [`QueueManager::next_deadline`] and ended with [`QueueManager::expire_waits`].
//!
//! Hot path: a put hands its message straight to the first fitting waiter; gets by
//! MsgId/CorrelId are index lookups; handles hold a direct queue id; bodies are shared
//! [`bytes::Bytes`], never copied.
//!
//! Modules: [`clock`] (time and MQ date formats), [`msgid`] (unique ids), `queue`
//! (storage and indexes), `waiters`, `uow`, `connection`, `objects` (the catalogue),
//! [`selection`] (message selectors), `handoff` (where a message that becomes available
//! goes), `name_resolution` (where MQOPEN's names lead: a queue here or a transmission
//! queue towards another queue manager), `remote_put` (messages for other queue
//! managers, headed by an MQXQH), one module per verb group: `open`, `put`, `get` (with `group`: message groups and
//! segments), `syncpoint`, `inquire`,
//! `admin`, `browse_lock` (MQGMO_LOCK/UNLOCK) and `browse_marks`
//! (MQGMO_MARK_BROWSE_HANDLE), [`consumer`] (async consumers with credit, MQCB-like, for
//! the AMQP channel) and [`settle`] (outcomes of held deliveries), `report` (the report messages COA, COD,
//! expiration and exception, made in their cause's unit of work), and for persistence
//! [`journal`] (log records and their codec), [`recovery`] (restart) and [`checkpoint`]
//! (what a checkpoint writes to the log and to queue files), and for deep queues
//! [`body`] (bodies left in queue files beyond DefaultPQBufferSize), `filed_message` (the
//! compact form such a message keeps in memory) and [`spill`] (non-persistent ones beyond
//! DefaultQBufferSize).
//!
//! Invariants: `invariants` checks that every counter (depths, UNCOM, handle counts,
//! byte counts) agrees with what it counts and every index with its messages; debug
//! builds run [`QueueManager::check_invariants`] before and after every call that
//! changes state, and counters change only through methods of the type that owns them.
//!
//! Messages may carry properties (MQSETMP's, AMQP application-properties): the engine
//! stores them as an opaque [`ferry_mqi::MessageProperties`] encoding beside the body
//! (empty for none, so native messages pay nothing), logs them, returns them, and lets
//! a [`MessageFilter`] read them.
//!
//! # Persistent messages and the recovery log
//!
//! The engine does not write the log; it says what to write and which replies wait.
//! With [`QueueManager::set_logging`] on, every change to persistent state pushes a
//! [`LogRecord`] (kind + payload bytes, see [`journal`]) into the call's [`Effects`], in
//! the order the state changed: a persistent put (outside syncpoint one self-committing
//! record — MQ's implicit syncpoint; under syncpoint tagged with the unit of work), a
//! destructive get of a persistent message (likewise; also when a put or commit hands a
//! message to a waiting getter or a settled consumer), the commit or backout of a unit
//! of work that logged anything, a queue defined, cleared or deleted, and for
//! consumers' held deliveries: an accept or reject (one self-committing get record), a
//! failed delivery returned (a BackoutCount record). A persistent report made outside
//! syncpoint is logged with its cause as one small unit of work (the cause's record, the
//! report's put, the commit). Non-persistent messages are never logged and never wait.
//! Browsing logs nothing; neither does delivering a message unsettled (it stays on its
//! queue, held).
//!
//! The server, after **each** engine call:
//!
//! 1. appends [`Effects::drain_log`]'s records to the log in that order, all of them
//!    before releasing any reply of this call (read [`Effects::reply_needs_durable`]
//!    first), noting the LSN `end` just past the last one;
//! 2. holds the call's own reply until the log is durable past `end` when
//!    [`Effects::reply_needs_durable`] is true (a put or get of a persistent message
//!    outside syncpoint, MQCMIT/MQBACK/MQDISC of a unit of work that logged anything,
//!    CLEAR/DELETE of logged state); otherwise sends it at once;
//! 3. holds each [`Effect::GetCompleted`] and [`Effect::Delivered`] with
//!    `needs_durable == true` the same way (a waiter or consumer was handed a message
//!    by work whose records came first in this call; a settled consumer delivery of a
//!    persistent message by its own get record: otherwise a crash could deliver it
//!    twice).
//!
//! Settling a held delivery ([`QueueManager::settle`]) never makes its reply wait: the
//! AMQP outcome needs no answer, and if the accept's get record is lost in a crash the
//! message is simply delivered again (at-least-once). Held messages write nothing when
//! delivered, so after a crash they are ordinary committed messages again.
//!
//! Because the log is one ordered stream, "durable past `end`" covers every earlier
//! record too, so a reply never overtakes the records it depends on. Many calls'
//! records share one flush (group commit): the engine itself never waits. A get under
//! syncpoint, or a browse, is answered at once: it promises nothing until MQCMIT, whose
//! reply waits (a consumer may thus see, before committing, a message whose put is not
//! yet durable; after a crash neither survives). At restart: [`Catalogue`] →
//! [`QueueManager::from_catalogue`] → [`QueueManager::recovery`] →
//! [`QueueManager::set_logging`]; checkpoints: [`checkpoint`].

pub mod admin;
pub mod authorization;
pub mod backout_threshold;
pub mod body;
pub(crate) mod browse_lock;
pub(crate) mod browse_marks;
pub mod checkpoint;
pub mod clock;
pub mod cluster;
pub mod connection;
pub mod consumer;
pub(crate) mod consumer_index;
pub(crate) mod context;
pub mod effects;
pub(crate) mod filed_message;
pub mod fuzzing;
pub mod get;
pub(crate) mod group;
pub(crate) mod handoff;
pub mod inquire;
pub(crate) mod invariants;
pub mod journal;
pub mod msgid;
pub(crate) mod name_resolution;
pub mod namelist;
pub mod objects;
pub mod open;
pub mod process;
pub mod pubsub;
pub mod put;
pub(crate) mod put_checks;
pub mod qmgr;
pub(crate) mod queue;
pub mod recovery;
pub(crate) mod redelivery_delay;
pub(crate) mod remote_put;
pub(crate) mod report;
pub mod selection;
pub mod set;
pub mod settle;
pub mod spill;
pub mod statistics;
pub mod syncpoint;
pub(crate) mod trigger;
pub(crate) mod uow;
pub(crate) mod waiters;

#[cfg(test)]
mod tests;

pub use authorization::PrincipalDirectory;
pub use body::{BufferSizes, FiledBody, FiledRecord};
pub use checkpoint::{CheckpointPlan, QueueFiling, Young};
pub use clock::Timestamp;
pub use connection::{ConnId, ConnectionInfo, Hobj};
pub use consumer::{ConsumeMode, ConsumeSpec, ConsumerId, DeliveryToken};
pub use effects::{CatalogueChange, Effect, Effects};
pub use get::{GetError, GetOutcome, GetResult, GotMessage};
pub use journal::{DecodeError, LogRecord, LoggedMessage, Record};
pub use objects::Catalogue;
pub use open::Opened;
pub use pubsub::{SubscribeExtras, Subscribed, SubscriptionId, SubscriptionStatus};
pub use qmgr::{QueueManager, RunState};
pub use recovery::{Recovery, RecoveryError, RecoverySummary};
pub use selection::MessageFilter;
pub use settle::{SettleError, Settlement};
