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
//! and one module per verb group: `open`, `put`, `get`, `syncpoint`, `inquire`, `admin`.

pub mod admin;
pub mod clock;
pub mod connection;
pub mod effects;
pub mod get;
pub mod inquire;
pub mod msgid;
pub mod objects;
pub mod open;
pub mod put;
pub mod qmgr;
pub(crate) mod queue;
pub mod syncpoint;
pub(crate) mod uow;
pub(crate) mod waiters;

#[cfg(test)]
mod tests;

pub use clock::Timestamp;
pub use connection::{ConnId, ConnectionInfo, Hobj};
pub use effects::{Effect, Effects};
pub use get::{GetError, GetOutcome, GetResult, GotMessage};
pub use objects::Catalogue;
pub use open::Opened;
pub use qmgr::{QueueManager, RunState};
