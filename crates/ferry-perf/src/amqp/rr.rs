//! The AMQP 1.0 implementation of the request/reply applications
//! ([`crate::workload::app`]): RR-CC ([`crate::workload::rr`], written once for both
//! protocols) as JMS applications on an AMQP broker do it.
//!
//! Each requester has its own session (up to `--sessions-per-connection` applications
//! share a connection, see [`super::pool`]) with a sender to its request queue
//! (`REQUEST.<i mod N + 1>`, round-robin as native) and ONE long-lived receiver on its
//! reply queue: the shared `REPLY` with the selector `JMSCorrelationID = 'RQ-<i>'`
//! (the broker's correlation-id lookup, as MQ's get by CorrelId), or `REPLY.<i>` with no
//! selector under `--reply-queues per-requester`; its credit is Qpid JMS's default
//! prefetch, see [`REPLY_PREFETCH`]. It sends a request (correlation-id
//! `RQ-<i>`, reply-to, durable when persistent) as Qpid JMS would (see
//! [`Settings::send_mode`]: a persistent request waits for the broker's `accepted`, a
//! non-persistent one is sent async and, the harness's choice, a refusal ends the wait
//! for its reply), then
//! waits for the reply and checks its correlation-id, length and the tag of this
//! request in its body (see [`super::message`]). Responders, each with its own session
//! and one receiver (credit `--prefetch`) on a request queue, send the reply likewise
//! and only then accept the request.
//!
//! Responders and requesters are packed onto shared connections in the order they are
//! opened (responders first, as native conversations fill sockets); responders stop
//! waiting when the step gives the stop.

use std::pin::Pin;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_amqp::{Message, MessageId};
use tokio::time::Sleep;

use super::client::Client;
use super::error::AmqpError;
use super::link::{Delivery, ReceiverLink, SendMode, SenderLink};
use super::message::{
    body_bytes, check_reply, reply_selector, reply_to, request, requester_correlation, set_body,
    take_body, BadRequest,
};
use super::pool::Pool;
use super::settings::Settings;
use super::step::{setup_error, Stop, StopWait};
use crate::args::ReplyQueues;
use crate::workload::app::{Answer, Protocol, Reply, Requester, Responder};
use crate::workload::rr::{queue_for, request_queue_name, Fault, RrConfig, MISSING_QUEUE};
use crate::workload::verify::TAG_LEN;
use crate::PerfError;

/// Credit of a requester's reply receiver: Qpid JMS's default prefetch
/// (`jms.prefetchPolicy.queuePrefetch`, 1000). A requester has one request, so at most
/// one reply, outstanding at a time: the credit changes no order or distribution, it
/// only spares the flow frame that credit 1 needs after every reply. (`--prefetch` is
/// the responders' credit, where it does decide who gets which request.)
const REPLY_PREFETCH: u32 = 1000;

/// Request/reply over AMQP 1.0 against one broker: the step's connection pool, the
/// responders' stop, and the queues a setup error lists.
pub struct Amqp {
    settings: Settings,
    cfg: RrConfig,
    pool: Option<Pool>,
    stop: Stop,
    queues: Vec<String>,
}

impl Amqp {
    /// Applications of one step with `clients` requesters, connecting as `s` says.
    pub fn new(s: &Settings, cfg: &RrConfig, clients: usize) -> Amqp {
        Amqp {
            settings: s.clone(),
            cfg: cfg.clone(),
            pool: Some(Pool::new(&s.url, s.sessions_per_connection)),
            stop: Stop::new(),
            queues: s.rr_queues(cfg.queues, clients),
        }
    }

    fn pool(&mut self) -> Result<&mut Pool, PerfError> {
        self.pool
            .as_mut()
            .ok_or_else(|| PerfError::Setup("every application of the step is open".into()))
    }
}

/// An AMQP requester: its session, request sender and reply receiver.
pub struct AmqpRequester {
    id: usize,
    client: Client,
    sender: SenderLink,
    replies: ReceiverLink,
    correlation: String,
    mode: SendMode,
    size: usize,
    reply_timeout: Duration,
    /// One request message whose body is swapped per request (its addresses and
    /// correlation-id are the same every time).
    msg: Message,
    /// One reply timer moved forward per request rather than a timer made and
    /// cancelled per round trip.
    reply_timer: Pin<Box<Sleep>>,
}

/// An AMQP responder: its session, request receiver and the reply senders it attached.
pub struct AmqpResponder {
    client: Client,
    requests: ReceiverLink,
    senders: Vec<SenderLink>,
    fault: Fault,
    mode: SendMode,
    /// The step's stop, waited for once for the whole life of the responder rather
    /// than once per request.
    stopped: Pin<Box<StopWait>>,
}

impl Protocol for Amqp {
    type Requester = AmqpRequester;
    type Responder = AmqpResponder;

    async fn drain(&mut self) -> Result<u64, PerfError> {
        // The broker's queues as this run names them (prefix, reply queue per requester).
        super::drain::drain(&self.settings, &self.queues)
            .await
            .map_err(|e| setup_error("drain the queues", e, &self.queues))
    }

    async fn open_requester(&mut self, id: usize) -> Result<AmqpRequester, PerfError> {
        let r = open_requester(id, &self.settings.clone(), &self.cfg.clone(), self.pool()?).await;
        r.map_err(|e| setup_error("connect a requester", e, &self.queues))
    }

    async fn open_responder(&mut self, id: usize) -> Result<AmqpResponder, PerfError> {
        let stopped = Box::pin(self.stop.wait());
        let r = open_responder(
            id,
            &self.settings.clone(),
            &self.cfg.clone(),
            self.pool()?,
            stopped,
        )
        .await;
        r.map_err(|e| setup_error("connect a responder", e, &self.queues))
    }

    fn all_open(&mut self) {
        // The last session of each connection closes it.
        self.pool = None;
    }

    async fn stop_responders(&mut self, _responders: usize) -> Result<(), PerfError> {
        self.stop.now();
        Ok(())
    }
}

async fn open_requester(
    id: usize,
    s: &Settings,
    cfg: &RrConfig,
    pool: &mut Pool,
) -> Result<AmqpRequester, AmqpError> {
    let client = pool.session(&format!("ferry-perf-rq-{}", id + 1)).await?;
    let request_address = s.address(&request_queue_name(queue_for(id, cfg.queues)));
    let sender = SenderLink::attach(&client, &request_address).await?;
    let reply_address = s.address(&s.reply_queue(id));
    let selector = match s.reply_queues {
        ReplyQueues::Shared => Some(reply_selector(id)),
        ReplyQueues::PerRequester => None,
    };
    let replies =
        ReceiverLink::attach(&client, &reply_address, selector.as_deref(), REPLY_PREFETCH).await?;
    let correlation = requester_correlation(id);
    let reply_to = if cfg.fault == Fault::MissingReplyQueue {
        s.address(MISSING_QUEUE)
    } else {
        reply_address
    };
    let msg = request(
        Bytes::new(),
        sender.address(),
        &reply_to,
        &correlation,
        cfg.persistent,
    );
    Ok(AmqpRequester {
        id,
        client,
        sender,
        replies,
        correlation,
        mode: s.send_mode(cfg.persistent),
        size: cfg.size,
        reply_timeout: cfg.reply_timeout,
        msg,
        reply_timer: Box::pin(tokio::time::sleep(cfg.reply_timeout)),
    })
}

async fn open_responder(
    id: usize,
    s: &Settings,
    cfg: &RrConfig,
    pool: &mut Pool,
    stopped: Pin<Box<StopWait>>,
) -> Result<AmqpResponder, AmqpError> {
    let client = pool.session(&format!("ferry-perf-rs-{}", id + 1)).await?;
    let address = s.address(&request_queue_name(queue_for(id, cfg.queues)));
    let requests = ReceiverLink::attach(&client, &address, None, s.prefetch).await?;
    Ok(AmqpResponder {
        client,
        requests,
        senders: Vec::new(),
        fault: cfg.fault,
        mode: s.send_mode(cfg.persistent),
        stopped,
    })
}

impl Requester for AmqpRequester {
    async fn round_trip(&mut self, body: Bytes, tag: &[u8; TAG_LEN]) -> Result<Reply, String> {
        let n = self.id + 1;
        set_body(&mut self.msg, body);
        if let Err(e) = self.sender.send(&self.msg, self.mode).await {
            return Err(format!("requester {n}: send request: {e}"));
        }
        self.reply_timer
            .as_mut()
            .reset(tokio::time::Instant::now() + self.reply_timeout);
        // A request sent async may still be refused (a full queue). Qpid JMS would tell
        // an ExceptionListener and leave the receive to time out; the harness ends the
        // wait for its reply at once, with the refusal as the error.
        let is_async = self.mode == SendMode::Async;
        let received = tokio::select! {
            biased;
            d = self.replies.recv() => Some(d),
            e = self.sender.refused(), if is_async => {
                return Err(format!("requester {n}: send request: {e}"));
            }
            _ = self.reply_timer.as_mut() => None,
        };
        let d = match received {
            Some(Ok(d)) => d,
            None => {
                return Err(format!(
                    "requester {n}: no reply within {:.0} s",
                    self.reply_timeout.as_secs_f64()
                ))
            }
            Some(Err(e)) => return Err(format!("requester {n}: receive reply: {e}")),
        };
        let at = Instant::now();
        self.replies
            .accept(&d)
            .map_err(|e| format!("requester {n}: accept reply: {e}"))?;
        let check = match Message::decode(d.message) {
            Ok(reply) => check_reply(&reply, &self.correlation, self.size, tag),
            // A reply that cannot be decoded is not the request's: a mismatch.
            Err(_) => crate::workload::verify::ReplyCheck::CorruptBody,
        };
        Ok(Reply {
            check,
            at,
            // The body went into the message; take it back so its buffer is reused.
            buffer: take_body(&mut self.msg),
        })
    }

    async fn close(self) {
        self.client.close().await;
    }
}

impl Responder for AmqpResponder {
    async fn answer(&mut self) -> Result<Answer, String> {
        let d = tokio::select! {
            biased;
            d = self.requests.recv() => d,
            _ = self.stopped.as_mut() => return Ok(Answer::Stopped),
        };
        let d = d.map_err(|e| format!("responder: receive request: {e}"))?;
        answer(self, &d).await?;
        Ok(Answer::Replied)
    }

    async fn close(self) {
        drop(self.senders);
        self.client.close().await;
    }
}

/// What a responder does with one request.
async fn answer(r: &mut AmqpResponder, d: &Delivery) -> Result<(), String> {
    let request = Message::decode(d.message.clone())
        .map_err(|e| format!("responder: undecodable request: {e}"))?;
    let (mut reply, address) = match reply_to(&request) {
        Ok(r) => r,
        Err(BadRequest::NoReplyTo) => return Err("responder: request without reply-to".into()),
        Err(BadRequest::Undecodable(e)) => return Err(format!("responder: {e}")),
    };
    match r.fault {
        Fault::WrongCorrelId => {
            if let Some(p) = reply.properties.as_mut() {
                p.correlation_id = Some(MessageId::String("RQ-WRONG".into()));
            }
        }
        Fault::CorruptBody => {
            if let Some(mut b) = body_bytes(&reply).map(|b| b.to_vec()) {
                if let Some(first) = b.first_mut() {
                    *first ^= 0xFF;
                }
                reply.body = Some(ferry_amqp::Body::data(Bytes::from(b)));
            }
        }
        _ => {}
    }
    // One reply queue (or one per requester): a short list, searched by address.
    let link = match r
        .senders
        .iter()
        .position(|l| l.address() == address.as_str())
    {
        Some(i) => &mut r.senders[i],
        None => {
            let link = SenderLink::attach(&r.client, address.as_str())
                .await
                .map_err(|e| format!("responder: reply queue: {e}"))?;
            r.senders.push(link);
            let last = r.senders.len() - 1;
            &mut r.senders[last]
        }
    };
    link.send(&reply, r.mode)
        .await
        .map_err(|e| format!("responder: send reply: {e}"))?;
    r.requests
        .accept(d)
        .map_err(|e| format!("responder: accept request: {e}"))
}
