//! The AMQP 1.0 implementation of PS-CC's publishers and subscribers
//! ([`crate::workload::app::Topics`]): PS-CC ([`crate::workload::ps`], written once for
//! both protocols) as Qpid JMS applications do it. A publisher is a sender link whose
//! target is the topic (`PS.1`...) with the `topic` capability (a JMS
//! `createProducer(topic)`), each send waiting for the broker's `accepted` unless
//! `--presettled`, as SR-CC's senders do; a subscriber is a receiver link whose source is
//! the topic with the `topic` capability (a JMS `createConsumer(topic)`: a non-durable
//! subscription that ends with the link), credit `--prefetch`, accepting every copy, or,
//! with `--no-ack`, asking the broker to send every copy settled (Qpid JMS's NoAck, the
//! report's "AMQP JMS NoAck"). Each application has its own session, up to
//! `--sessions-per-connection` of them sharing a connection.

use super::client::Client;
use super::error::AmqpError;
use super::link::{Node, ReceiverLink, SendMode, SenderLink};
use super::pool::Pool;
use super::settings::Settings;
use super::sr::{AmqpReceiver, AmqpSender};
use super::step::Stop;
use crate::workload::app::Topics;
use crate::workload::ps::{topic_name, PsConfig};
use crate::PerfError;

/// PS-CC over AMQP 1.0 against one broker: the step's connection pool and the
/// subscribers' stop.
pub struct AmqpTopics {
    settings: Settings,
    persistent: bool,
    no_ack: bool,
    pool: Option<Pool>,
    stop: Stop,
}

impl AmqpTopics {
    /// The applications of a step, connecting as `s` says; `no_ack`: presettled
    /// subscribers.
    pub fn new(s: &Settings, cfg: &PsConfig, no_ack: bool) -> AmqpTopics {
        AmqpTopics {
            settings: s.clone(),
            persistent: cfg.persistent,
            no_ack,
            pool: Some(Pool::new(&s.url, s.sessions_per_connection)),
            stop: Stop::new(),
        }
    }

    fn pool(&mut self) -> Result<&mut Pool, PerfError> {
        self.pool
            .as_mut()
            .ok_or_else(|| PerfError::Setup("every application of the step is open".into()))
    }
}

fn setup(what: &str, topic: &str, e: AmqpError) -> PerfError {
    PerfError::Setup(format!("{what} (topic {topic}): {e}"))
}

impl Topics for AmqpTopics {
    type Publisher = AmqpSender;
    type Subscriber = AmqpReceiver;

    async fn open_subscriber(&mut self, topic: usize, n: usize) -> Result<AmqpReceiver, PerfError> {
        let name = topic_name(topic);
        let (prefetch, no_ack) = (self.settings.prefetch, self.no_ack);
        let stopped = Box::pin(self.stop.wait());
        let session = format!("ferry-perf-subscriber-{}", n + 1);
        let opened = async {
            let client = self.pool()?.session(&session).await;
            let client = client.map_err(|e| setup("connect a subscriber", &name, e))?;
            let link = ReceiverLink::subscribe(&client, &name, prefetch, no_ack).await;
            let link = link.map_err(|e| setup("subscribe", &name, e))?;
            Ok::<(Client, ReceiverLink), PerfError>((client, link))
        };
        let (client, link) = opened.await?;
        Ok(AmqpReceiver::new(client, link, stopped))
    }

    async fn open_publisher(&mut self, id: usize, topic: usize) -> Result<AmqpSender, PerfError> {
        let name = topic_name(topic);
        let session = format!("ferry-perf-publisher-{}", id + 1);
        let client = self.pool()?.session(&session).await;
        let client = client.map_err(|e| setup("connect a publisher", &name, e))?;
        let link = SenderLink::attach_to(&client, &name, Node::Topic).await;
        let link = link.map_err(|e| setup("attach a publisher", &name, e))?;
        // Every unsettled publication waits for its outcome, as SR-CC's sends do: a
        // publisher that did not wait would only fill its subscribers' queues.
        let mode = if self.settings.presettled {
            SendMode::Presettled
        } else {
            SendMode::Sync
        };
        Ok(AmqpSender::new(
            id,
            "publisher",
            client,
            link,
            self.persistent,
            mode,
        ))
    }

    fn all_open(&mut self) {
        // The last session of each connection closes it.
        self.pool = None;
    }

    async fn stop_subscribers(&mut self) -> Result<(), PerfError> {
        self.stop.now();
        Ok(())
    }
}
