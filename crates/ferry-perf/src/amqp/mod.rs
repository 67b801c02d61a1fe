//! `ferry perf --protocol amqp`: the same RR-CC, SR-CC and PS-CC workloads over AMQP 1.0, so
//! Ferry can be measured side by side with any AMQP 1.0 broker (ActiveMQ Artemis,
//! RabbitMQ) by one harness.
//!
//! The idea: a small async client ([`connection`]) drives the sans-I/O
//! [`ferry_amqp::connection::Connection`] over a tokio socket, one reader and one writer
//! task per connection. Up to `--sessions-per-connection` applications (default 10, the
//! native SHARECNV) share a connection, each with its own session ([`client`], packed by
//! [`pool`]), as Qpid JMS carries a JMS connection's sessions over one socket. An
//! application does what a JMS one does: a sender whose send waits for the broker's
//! outcome (as Qpid JMS does for persistent sends), checks it later (Qpid JMS's
//! asynchronous send of non-persistent messages) or goes presettled, and a receiver
//! with a credit window that accepts what it processed. The workloads themselves are
//! written once ([`crate::workload::rr`], [`crate::workload::sr`],
//! [`crate::workload::ps`]); [`rr`], [`sr`] and [`ps`]
//! implement their client abstraction ([`crate::workload::app`]) over AMQP, so steps
//! fill the same [`crate::workload::step::StepOutcome`], tables, JSON, CSV, Markdown
//! and charts are shared and reports overlay.
//!
//! Layout: [`url`] (the `--url`), [`error`] (what can go wrong), [`connection`] (a
//! socket and its tasks), `demux` (filing the broker's events by session and link),
//! `signal` (waking one task of the thread), [`client`] (a session), [`pool`] (packing sessions onto connections), [`link`]
//! (senders and receivers), [`settings`] (addresses and options), [`message`] (building
//! and checking the messages), [`drain`] (emptying queues between steps), [`rr`] and
//! [`sr`] (requesters and responders, senders and receivers), [`ps`] (publishers and
//! subscribers: topic links), [`target`] (external broker or embedded Ferry with an AMQP
//! channel), [`run`] (a whole run: sizes, steps, the report series).

pub mod client;
pub mod connection;
mod demux;
pub mod drain;
pub mod error;
pub mod link;
pub mod message;
pub mod pool;
pub mod ps;
pub mod rr;
pub mod run;
pub mod settings;
mod signal;
pub mod sr;
pub mod step;
pub mod target;
pub mod url;

pub use client::Client;
pub use connection::Connection;
pub use error::AmqpError;
pub use link::{Delivery, ReceiverLink, SenderLink};
pub use pool::{Pool, DEFAULT_SESSIONS_PER_CONNECTION};
pub use url::AmqpUrl;
