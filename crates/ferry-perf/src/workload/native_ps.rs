//! The native implementation of PS-CC's publishers and subscribers
//! ([`super::app::Topics`]) over ferry-client, as MQI applications make them: a
//! publisher opens its topic string for output (MQOPEN of an MQOT_TOPIC) and each put
//! publishes a datagram; a subscriber makes a managed non-durable subscription (MQSUB
//! with MQSO_CREATE | MQSO_MANAGED, as a JMS non-durable consumer) and get-waits on the
//! queue the queue manager made for it, ending the subscription (MQCO_REMOVE_SUB) when
//! it closes. Subscribers stop at a stop publication the harness's own connection makes
//! on each topic, behind the copies still due: every subscriber of the topic gets one.

use bytes::Bytes;
use ferry_client::{ConnectOptions, Connection, Subscription, Topic};
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::{
    GetOptions, MatchOptions, MessageDescriptor, PutOptions, SubscribeOptions,
    SubscriptionDescriptor,
};

use super::app::{Received, Receiver, Sender, Topics};
use super::native::receive_one;
use super::ps::{topic_name, PsConfig};
use super::rr::{get_wait, put_options, STOP_BODY};
use super::step::{connect, mq};
use crate::target::QueueManager;
use crate::PerfError;

/// PS-CC over the native protocol against one queue manager: the publishers and
/// subscribers of one step.
pub struct NativeTopics<'a> {
    admin: &'a Connection,
    opts: ConnectOptions,
    cfg: PsConfig,
}

impl<'a> NativeTopics<'a> {
    /// The applications of a step on `qm`, as `cfg` says (client connections,
    /// SHARECNV); `admin` publishes the subscribers' stop.
    pub fn new(qm: &QueueManager, admin: &'a Connection, cfg: &PsConfig) -> NativeTopics<'a> {
        NativeTopics {
            admin,
            opts: qm.connect_options().sharecnv(cfg.sharecnv),
            cfg: cfg.clone(),
        }
    }
}

/// A native publisher: its connection and its topic, opened for output.
pub struct NativePublisher {
    id: usize,
    conn: Connection,
    topic: Topic,
    persistent: bool,
    syncpoint: bool,
    pmo: PutOptions,
}

/// A native subscriber: its connection and its managed non-durable subscription.
pub struct NativeSubscriber {
    /// `subscriber N`, for errors.
    who: String,
    conn: Connection,
    sub: Subscription,
    size: usize,
    syncpoint: bool,
    gmo: GetOptions,
}

impl Topics for NativeTopics<'_> {
    type Publisher = NativePublisher;
    type Subscriber = NativeSubscriber;

    async fn open_subscriber(
        &mut self,
        topic: usize,
        n: usize,
    ) -> Result<NativeSubscriber, PerfError> {
        let name = topic_name(topic);
        let conn = connect(&self.opts).await?;
        let sd = if self.cfg.durable {
            // CREATE or RESUME: a run interrupted before its REMOVE_SUB left it behind.
            SubscriptionDescriptor {
                options: SubscribeOptions::CREATE
                    | SubscribeOptions::RESUME
                    | SubscribeOptions::DURABLE
                    | SubscribeOptions::MANAGED,
                sub_name: format!("PERF.PS.{n}"),
                ..SubscriptionDescriptor::managed(&name)
            }
        } else {
            SubscriptionDescriptor::managed(&name)
        };
        let sub = conn
            .subscribe(&sd)
            .await
            .map_err(|e| mq(&format!("subscribe to topic {name}"), e))?;
        Ok(NativeSubscriber {
            who: format!("subscriber {}", n + 1),
            conn,
            sub,
            size: self.cfg.size,
            syncpoint: self.cfg.syncpoint,
            gmo: get_wait(MatchOptions::empty(), self.cfg.syncpoint, None),
        })
    }

    async fn open_publisher(
        &mut self,
        id: usize,
        topic: usize,
    ) -> Result<NativePublisher, PerfError> {
        let name = topic_name(topic);
        let conn = connect(&self.opts).await?;
        let topic = conn
            .open_topic(&name)
            .await
            .map_err(|e| mq(&format!("open topic {name} to publish"), e))?;
        Ok(NativePublisher {
            id,
            conn,
            topic,
            persistent: self.cfg.persistent,
            syncpoint: self.cfg.syncpoint,
            pmo: put_options(self.cfg.syncpoint),
        })
    }

    /// One stop publication per topic: each of its subscribers gets a copy, behind the
    /// copies already on its queue.
    async fn stop_subscribers(&mut self) -> Result<(), PerfError> {
        for t in 0..self.cfg.topics.max(1) {
            let name = topic_name(t);
            let topic = self
                .admin
                .open_topic(&name)
                .await
                .map_err(|e| mq(&format!("open topic {name} to stop its subscribers"), e))?;
            let mut md = MessageDescriptor {
                msg_type: msg_type::DATAGRAM,
                persistence: persistence::NOT_PERSISTENT,
                ..MessageDescriptor::default()
            };
            topic
                .put(&mut md, &put_options(false), Bytes::from_static(STOP_BODY))
                .await
                .map_err(|e| mq(&format!("publish the stop on topic {name}"), e))?;
            topic
                .close()
                .await
                .map_err(|e| mq(&format!("close topic {name}"), e))?;
        }
        Ok(())
    }
}

impl Sender for NativePublisher {
    async fn send(&mut self, body: Bytes) -> Result<Option<Bytes>, String> {
        let kept = body.clone();
        let mut md = MessageDescriptor {
            msg_type: msg_type::DATAGRAM,
            persistence: if self.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            ..MessageDescriptor::default()
        };
        let id = self.id + 1;
        self.topic
            .put(&mut md, &self.pmo, body)
            .await
            .map_err(|e| format!("publisher {id}: publish: {}", e.reason))?;
        if self.syncpoint {
            self.conn
                .commit()
                .await
                .map_err(|e| format!("publisher {id}: commit: {}", e.reason))?;
        }
        Ok(Some(kept))
    }

    async fn close(self) {
        let _ = self.topic.close().await;
        let _ = self.conn.disconnect().await;
    }
}

impl Receiver for NativeSubscriber {
    async fn receive(&mut self) -> Result<Received, String> {
        let Some(q) = self.sub.queue() else {
            return Err(format!(
                "{}: the subscription has no managed queue",
                self.who
            ));
        };
        receive_one(
            &self.who,
            &self.conn,
            q,
            &self.gmo,
            self.size,
            self.syncpoint,
        )
        .await
    }

    /// Ends the subscription (its managed queue goes with it) and disconnects.
    async fn close(self) {
        let _ = self.sub.close(false).await;
        let _ = self.conn.disconnect().await;
    }
}
