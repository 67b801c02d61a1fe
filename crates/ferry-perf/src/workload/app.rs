//! The client abstraction the request/reply workloads are written over: what a
//! protocol must do to run them (connect a requester or a responder, send a request
//! and wait for its reply by correlation, answer a request, drain and stop), so RR-CC,
//! RR-BB, RR-CB and the connection test are written once ([`super::rr`]) and run over
//! the native protocol ([`super::native`], ferry-client) or AMQP 1.0
//! ([`crate::amqp::rr`], the harness's own AMQP client).
//!
//! Every application is a task on the harness's one thread, so the futures need not be
//! `Send` (hence `async fn` in these traits).
#![allow(async_fn_in_trait)]

use std::time::Instant;

use bytes::Bytes;

use super::verify::{ReplyCheck, TAG_LEN};
use crate::PerfError;

/// A reply as the requester found it.
pub struct Reply {
    /// Whether it was the reply to the request, intact.
    pub check: ReplyCheck,
    /// When it arrived (the round trip's latency ends here).
    pub at: Instant,
    /// The request's body buffer back, for the next request to reuse when nobody else
    /// holds it.
    pub buffer: Option<Bytes>,
}

/// One requester: one application sending requests and waiting for their replies.
pub trait Requester {
    /// Sends a request with `body` (tagged `tag`) and waits for its reply, matched by
    /// correlation (MQ's get by CorrelId, AMQP's correlation-id selector). An error is
    /// the step's error message, naming the requester.
    async fn round_trip(&mut self, body: Bytes, tag: &[u8; TAG_LEN]) -> Result<Reply, String>;

    /// Closes what it opened and disconnects.
    async fn close(self);
}

/// What a responder did with the next message.
pub enum Answer {
    /// It answered a request.
    Replied,
    /// The message was not a request (counted as a mismatch); it goes on.
    NotARequest(String),
    /// It was told to stop.
    Stopped,
}

/// One responder: gets requests from its request queue and replies to their reply
/// queues with the request's correlation.
pub trait Responder {
    /// Waits for the next request (or the stop) and answers it. An error is the step's
    /// error message.
    async fn answer(&mut self) -> Result<Answer, String>;

    /// Closes what it opened and disconnects.
    async fn close(self);
}

/// A protocol's way to run request/reply applications against a broker.
pub trait Protocol {
    /// Its requesters.
    type Requester: Requester + 'static;
    /// Its responders.
    type Responder: Responder + 'static;

    /// Removes whatever messages are left on the workload's queues; returns how many.
    async fn drain(&mut self) -> Result<u64, PerfError>;

    /// Connects requester `id` (0-based) and opens its request and reply queues.
    async fn open_requester(&mut self, id: usize) -> Result<Self::Requester, PerfError>;

    /// Connects responder `id` (0-based) and opens its request queue.
    async fn open_responder(&mut self, id: usize) -> Result<Self::Responder, PerfError>;

    /// Every application of the step is open: connections shared by several may now
    /// end with their last user.
    fn all_open(&mut self) {}

    /// Tells the step's `responders` responders to stop once the requesters have
    /// ended.
    async fn stop_responders(&mut self, responders: usize) -> Result<(), PerfError>;
}

/// One sender of SR-CC: sends messages to its own queue.
pub trait Sender {
    /// Sends one message with `body`; returns the body's buffer back for the next
    /// message to reuse. An error is the step's error message, naming the sender.
    async fn send(&mut self, body: Bytes) -> Result<Option<Bytes>, String>;

    /// Closes what it opened and disconnects.
    async fn close(self);
}

/// What a receiver got.
pub enum Received {
    /// A message: its body and its length as the broker gave it (more than the body
    /// when the body was truncated).
    Message {
        /// The body.
        body: Bytes,
        /// The message's length.
        length: usize,
    },
    /// A message that could not be decoded (counted as a damaged one).
    Undecodable(String),
    /// It was told to stop.
    Stopped,
}

/// One receiver of SR-CC: waits for messages on a sender's queue.
pub trait Receiver {
    /// Waits for the next message (or the stop). An error is the step's error message.
    async fn receive(&mut self) -> Result<Received, String>;

    /// Closes what it opened and disconnects.
    async fn close(self);
}

/// A protocol's way to run SR-CC's senders and receivers against a broker.
pub trait Streams {
    /// Its senders.
    type Sender: Sender + 'static;
    /// Its receivers.
    type Receiver: Receiver + 'static;
    /// What [`Streams::depth`] counts, for the build-up note (`on the queues`...).
    const DEPTH_IS: &'static str;

    /// Removes whatever messages are left on the step's queues; returns how many.
    async fn drain(&mut self) -> Result<u64, PerfError>;

    /// Connects sender `id` (0-based) to its queue.
    async fn open_sender(&mut self, id: usize) -> Result<Self::Sender, PerfError>;

    /// Connects receiver `n` (0-based) of sender `id`'s queue.
    async fn open_receiver(&mut self, id: usize, n: usize) -> Result<Self::Receiver, PerfError>;

    /// Every application of the step is open: connections shared by several may now
    /// end with their last user.
    fn all_open(&mut self) {}

    /// The build-up at the end of the window: messages sent and not yet got, counted
    /// by the broker when it can say (MQINQ CURDEPTH), else from `sent` and `got`.
    async fn depth(&mut self, sent: u64, got: u64) -> Result<u64, PerfError>;

    /// Tells every receiver (`per_queue` on each queue) to stop.
    async fn stop_receivers(&mut self, per_queue: usize) -> Result<(), PerfError>;
}

/// A protocol's way to run PS-CC's publishers and subscribers against a broker. A
/// publisher is a [`Sender`] whose sends publish on its topic; a subscriber is a
/// [`Receiver`] of one non-durable subscription's copies.
pub trait Topics {
    /// Its publishers.
    type Publisher: Sender + 'static;
    /// Its subscribers.
    type Subscriber: Receiver + 'static;

    /// Makes subscriber `n` (0-based) a non-durable subscription to topic `topic`
    /// (0-based) and readies it to receive.
    async fn open_subscriber(
        &mut self,
        topic: usize,
        n: usize,
    ) -> Result<Self::Subscriber, PerfError>;

    /// Connects publisher `id` (0-based) and opens topic `topic` (0-based) to publish.
    async fn open_publisher(
        &mut self,
        id: usize,
        topic: usize,
    ) -> Result<Self::Publisher, PerfError>;

    /// Every application of the step is open: connections shared by several may now
    /// end with their last user.
    fn all_open(&mut self) {}

    /// Tells every subscriber to stop (each ends its subscription as it closes).
    async fn stop_subscribers(&mut self) -> Result<(), PerfError>;
}
