//! The Rust client library Ferry applications use: MQI calls (connect, open, put, get,
//! inquire, commit...) over Ferry's native protocol, async on tokio.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferry_mqi::MqError> {
//! use ferry_client::{Connection, ConnectOptions};
//! use ferry_mqi::{GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions};
//!
//! let opts = ConnectOptions::client("localhost(1414)", "SYSTEM.DEF.SVRCONN")
//!     .queue_manager("QM1")
//!     .application_name("getter");
//! let conn = Connection::connect(&opts).await?;
//! let queue = conn
//!     .open(&ObjectDescriptor::queue("APP.QUEUE").unwrap(), OpenOptions::INPUT_SHARED)
//!     .await?;
//! let gmo = GetOptions { options: GetOptionFlags::WAIT, wait_interval: 5000, ..Default::default() };
//! let mut md = MessageDescriptor::default();
//! let msg = queue.get(&mut md, &gmo, 64 * 1024).await?;
//! println!("{} bytes, MsgId {:02x?}", msg.data_length, md.msg_id);
//! conn.disconnect().await?;
//! # Ok(()) }
//! ```
//!
//! **Conversation sharing.** Like MQ clients with SHARECNV, connections of one process
//! to the same place share a socket: each [`Connection`] is a conversation, and up to
//! the negotiated SHARECNV conversations ride one socket, each socket served by one
//! reader task (many replies per read, routed to the waiting call) and one writer task
//! (everything queued since the last write goes out in one write). A broken socket fails
//! every outstanding and later call of its conversations with 2009
//! MQRC_CONNECTION_BROKEN.
//!
//! **Publish/subscribe.** [`Connection::open_topic`] opens a topic for publishing
//! ([`Topic::publish`]); [`Connection::subscribe`] makes or resumes a subscription whose
//! copies arrive on a managed queue ([`Subscription::next`]), and
//! [`Connection::subscribe_to`] one whose copies go to a queue the application opened.
//!
//! Errors are [`ferry_mqi::MqError`]: an MQ completion code and reason code.

#![deny(missing_docs)]

pub use ferry_mqi::conname;
mod connection;
mod conversation;
mod driver;
mod options;
mod pubsub;
mod queue;
mod socket;
mod tls;
mod transport;

pub use connection::Connection;
pub use ferry_wire::MqscOutput;
pub use options::{ConnectOptions, Target};
pub use pubsub::{Publication, Subscription, Topic};
pub use queue::{GotMessage, Queue};
pub use tls::{OutboundSni, TlsOptions};
