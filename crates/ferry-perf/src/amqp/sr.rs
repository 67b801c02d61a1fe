//! The AMQP 1.0 implementation of SR-CC's senders and receivers
//! ([`crate::workload::app::Streams`]): SR-CC ([`crate::workload::sr`], written once
//! for both protocols) on an AMQP broker. Each sender has its own session (up to `--sessions-per-connection`
//! applications share a connection, see [`super::pool`]) and sends to its own queue (`SR.1`,
//! `SR.2`...) as fast as the broker accepts (each send waits for `accepted` unless
//! `--presettled`) or at `--rate`; receivers (two per queue unless `--responders`
//! says otherwise), each with its own session and credit `--prefetch`, accept every
//! message. Bodies are the native ones (tag at both ends, put time), so integrity and
//! put-to-get latency are checked the same way.
//!
//! The rate is messages got per second; the step also reports the messages sent and
//! the build-up at the end of the window. AMQP has no queue-depth inquiry, so the
//! build-up is counted: messages sent minus messages got since the step began (what
//! is on the queues plus what is in flight).

use std::pin::Pin;

use bytes::Bytes;
use ferry_amqp::Message;

use super::client::Client;
use super::error::AmqpError;
use super::link::{ReceiverLink, SendMode, SenderLink};
use super::message::{body_bytes, datagram};
use super::pool::Pool;
use super::settings::Settings;
use super::step::{setup_error, Stop, StopWait};
use crate::workload::app::{Received, Receiver, Sender, Streams};
use crate::workload::sr::{queue_name, SrConfig};
use crate::PerfError;

/// SR-CC over AMQP 1.0 against one broker: the step's connection pool, the receivers'
/// stop, and the queues a setup error lists.
pub struct AmqpStreams {
    settings: Settings,
    persistent: bool,
    pool: Option<Pool>,
    stop: Stop,
    queues: Vec<String>,
}

impl AmqpStreams {
    /// The applications of a step with `senders` senders, connecting as `s` says.
    pub fn new(s: &Settings, cfg: &SrConfig, senders: usize) -> AmqpStreams {
        AmqpStreams {
            settings: s.clone(),
            persistent: cfg.persistent,
            pool: Some(Pool::new(&s.url, s.sessions_per_connection)),
            stop: Stop::new(),
            queues: (0..senders).map(queue_name).collect(),
        }
    }

    fn pool(&mut self) -> Result<&mut Pool, PerfError> {
        self.pool
            .as_mut()
            .ok_or_else(|| PerfError::Setup("every application of the step is open".into()))
    }
}

/// One sender's (or publisher's) session and link, with its number.
pub struct AmqpSender {
    id: usize,
    /// `sender` or `publisher`, for its errors.
    role: &'static str,
    client: Client,
    link: SenderLink,
    to: String,
    persistent: bool,
    mode: SendMode,
}

/// One receiver's (or subscriber's) session and link.
pub struct AmqpReceiver {
    client: Client,
    link: ReceiverLink,
    /// The step's stop, waited for once for the receiver's whole life.
    stopped: Pin<Box<StopWait>>,
}

impl Streams for AmqpStreams {
    type Sender = AmqpSender;
    type Receiver = AmqpReceiver;
    // AMQP has no queue-depth inquiry: the build-up is counted.
    const DEPTH_IS: &'static str = "sent and not yet got";

    async fn drain(&mut self) -> Result<u64, PerfError> {
        super::drain::drain(&self.settings, &self.queues)
            .await
            .map_err(|e| setup_error("drain the queues", e, &self.queues))
    }

    async fn open_sender(&mut self, id: usize) -> Result<AmqpSender, PerfError> {
        let s = self.settings.clone();
        let persistent = self.persistent;
        let opened = open_sender(id, &s, self.pool()?).await;
        let (client, link) =
            opened.map_err(|e| setup_error("connect a sender", e, &self.queues))?;
        // Every unsettled send waits for its outcome, persistent or not: a sender that
        // does not wait (Qpid JMS's async send) would only fill its queue at full
        // speed, and the rate measured would be the queue's limit, not the broker's.
        let mode = if s.presettled {
            SendMode::Presettled
        } else {
            SendMode::Sync
        };
        Ok(AmqpSender::new(
            id, "sender", client, link, persistent, mode,
        ))
    }

    async fn open_receiver(&mut self, id: usize, n: usize) -> Result<AmqpReceiver, PerfError> {
        let s = self.settings.clone();
        let stopped = Box::pin(self.stop.wait());
        let opened = open_receiver(id, n, &s, self.pool()?).await;
        let (client, link) =
            opened.map_err(|e| setup_error("connect a receiver", e, &self.queues))?;
        Ok(AmqpReceiver::new(client, link, stopped))
    }

    fn all_open(&mut self) {
        // The last session of each connection closes it.
        self.pool = None;
    }

    async fn depth(&mut self, sent: u64, got: u64) -> Result<u64, PerfError> {
        Ok(sent.saturating_sub(got))
    }

    async fn stop_receivers(&mut self, _per_queue: usize) -> Result<(), PerfError> {
        self.stop.now();
        Ok(())
    }
}

impl AmqpSender {
    /// Sender `id` (0-based) on `link`, sending as `mode` says; `role` names it in
    /// errors (`sender`, `publisher`).
    pub(crate) fn new(
        id: usize,
        role: &'static str,
        client: Client,
        link: SenderLink,
        persistent: bool,
        mode: SendMode,
    ) -> AmqpSender {
        AmqpSender {
            id,
            role,
            to: link.address().to_string(),
            client,
            link,
            persistent,
            mode,
        }
    }
}

impl AmqpReceiver {
    /// A receiver on `link` that ends when `stopped` resolves.
    pub(crate) fn new(client: Client, link: ReceiverLink, stopped: Pin<Box<StopWait>>) -> Self {
        AmqpReceiver {
            client,
            link,
            stopped,
        }
    }
}

impl Sender for AmqpSender {
    async fn send(&mut self, body: Bytes) -> Result<Option<Bytes>, String> {
        let msg = datagram(body, &self.to, self.persistent);
        self.link
            .send(&msg, self.mode)
            .await
            .map_err(|e| format!("{} {}: send: {e}", self.role, self.id + 1))?;
        Ok(body_bytes(&msg))
    }

    async fn close(self) {
        self.client.close().await;
    }
}

impl Receiver for AmqpReceiver {
    async fn receive(&mut self) -> Result<Received, String> {
        let d = tokio::select! {
            biased;
            d = self.link.recv() => d,
            _ = self.stopped.as_mut() => return Ok(Received::Stopped),
        };
        let d = d.map_err(|e| format!("receiver: receive: {e}"))?;
        self.link
            .accept(&d)
            .map_err(|e| format!("receiver: accept: {e}"))?;
        Ok(match Message::decode(d.message) {
            Ok(m) => {
                let body = body_bytes(&m).unwrap_or_default();
                Received::Message {
                    length: body.len(),
                    body,
                }
            }
            Err(e) => Received::Undecodable(format!("receiver: undecodable message: {e}")),
        })
    }

    async fn close(self) {
        self.client.close().await;
    }
}

async fn open_sender(
    id: usize,
    s: &Settings,
    pool: &mut Pool,
) -> Result<(Client, SenderLink), AmqpError> {
    let client = pool
        .session(&format!("ferry-perf-sender-{}", id + 1))
        .await?;
    let link = SenderLink::attach(&client, &s.address(&queue_name(id))).await?;
    Ok((client, link))
}

async fn open_receiver(
    id: usize,
    n: usize,
    s: &Settings,
    pool: &mut Pool,
) -> Result<(Client, ReceiverLink), AmqpError> {
    let client = pool
        .session(&format!("ferry-perf-receiver-{}-{}", id + 1, n + 1))
        .await?;
    let link = ReceiverLink::attach(&client, &s.address(&queue_name(id)), None, s.prefetch).await?;
    Ok((client, link))
}
