//! The native protocol (docs/protocol.md): client sockets over TCP, on SVRCONN channels
//! through LISTENER objects, and local applications over the bindings socket.
//!
//! - [`listeners`]: the LISTENER objects and the bindings socket, which accept sockets.
//! - [`socket`]: one socket from its hello to its close, its conversations, and its
//!   output (replies held for the log included); it is the runtime's
//!   [`Connection`](crate::runtime::reply_wait::Connection) for its conversations.
//! - [`dispatch`]: one request frame into an engine call and its reply.
//! - [`reply`]: how a reply waits for the log and the definitions writer.
//! - [`channels`]: SVRCONN channel instances (MAXINST, MAXINSTC, MaxChannels, DISPLAY
//!   CHSTATUS) and the immediate stop of every socket.
//!
//! The server knows none of this: the protocol reaches it through the `Connection` trait
//! and the endpoints it registers in `runtime/mod.rs`.

mod channels;
mod cluster_wait;
mod dispatch;
mod listeners;
mod reply;
mod socket;
mod traced;

pub use channels::{SvrconnChannels, Svrconns};
pub use listeners::{accept_bindings, NativeListeners};
