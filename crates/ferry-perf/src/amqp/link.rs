//! Links of a [`Client`]: a [`SenderLink`] whose `send` waits for credit and, in
//! [`SendMode::Sync`], for the broker's outcome (the broker's `accepted` is its
//! acknowledgement, as Qpid JMS waits for it on persistent sends; non-persistent ones it
//! sends [`SendMode::Async`] and checks the outcome later), and a [`ReceiverLink`] that keeps a
//! credit window of `prefetch` messages open and accepts what its caller processed.
//!
//! A link is used by one caller at a time (`&mut self`), so each waits on its own
//! `Signal` without missed wake-ups.

use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use ferry_amqp::connection::LinkId;
use ferry_amqp::{
    Attach, DeliveryState, LinkTarget, Message, ReceiverSettleMode, Role, SenderSettleMode, Source,
    Symbol, Target,
};

use super::client::{Client, ATTACH_TIMEOUT};
use super::demux::Shared;
use super::error::{AmqpError, Condition};
use super::signal::Signal;

/// Attaches a link and waits for the broker's answer. Returns the link and the signal
/// its waiter sleeps on.
async fn attach(
    client: &Client,
    attach: Attach,
    address: &str,
) -> Result<(LinkId, Rc<Signal>), AmqpError> {
    let shared = &client.shared;
    if let Some(e) = client.error() {
        return Err(e);
    }
    let link = shared.conn.borrow_mut().attach(client.session, attach)?;
    let notify = {
        let mut st = shared.state.borrow_mut();
        let l = st.links.entry(link).or_default();
        l.address = address.to_string();
        l.notify.clone()
    };
    shared.wake_writer.notify_one();
    let wait = async {
        loop {
            {
                let st = shared.state.borrow();
                let l = &st.links[&link];
                if let Some(c) = &l.detached {
                    return Err(AmqpError::Refused {
                        address: address.to_string(),
                        condition: c.clone(),
                    });
                }
                if l.attached {
                    return Ok((link, notify.clone()));
                }
            }
            if let Some(e) = client.error() {
                return Err(e);
            }
            notify.notified().await;
        }
    };
    tokio::time::timeout(ATTACH_TIMEOUT, wait)
        .await
        .map_err(|_| AmqpError::Timeout(format!("waiting for the attach to '{address}'")))?
}

/// What kind of node a link's terminus names, as Qpid JMS marks it with a capability:
/// a queue (point to point) or a topic (publish/subscribe: a sender publishes, a
/// receiver is a non-durable subscription that ends with its link).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Node {
    /// A queue: the `queue` capability.
    Queue,
    /// A topic: the `topic` capability.
    Topic,
}

impl Node {
    /// The terminus capabilities that say so.
    pub fn capabilities(self) -> Vec<Symbol> {
        vec![Symbol::from(match self {
            Node::Queue => ferry_amqp::condition::CAPABILITY_QUEUE,
            Node::Topic => ferry_amqp::condition::CAPABILITY_TOPIC,
        })]
    }
}

/// Sends messages to one node.
pub struct SenderLink {
    shared: Rc<Shared>,
    link: LinkId,
    /// Wakes this link's caller (kept here: no lookup per send).
    notify: Rc<Signal>,
    address: String,
    next_tag: u64,
}

impl SenderLink {
    /// Attaches a sender to queue `address` (settle mode mixed: unsettled or presettled
    /// per message) and waits until the broker takes it.
    pub async fn attach(client: &Client, address: &str) -> Result<SenderLink, AmqpError> {
        SenderLink::attach_to(client, address, Node::Queue).await
    }

    /// [`SenderLink::attach`] to a node of kind `node`: to a topic, every send
    /// publishes.
    pub async fn attach_to(
        client: &Client,
        address: &str,
        node: Node,
    ) -> Result<SenderLink, AmqpError> {
        let a = Attach {
            name: client.link_name("sender").into(),
            role: Role::Sender,
            snd_settle_mode: SenderSettleMode::Mixed,
            rcv_settle_mode: ReceiverSettleMode::First,
            source: Some(Source::default()),
            target: Some(LinkTarget::Node(Target {
                address: Some(address.into()),
                capabilities: node.capabilities(),
                ..Target::default()
            })),
            ..Attach::default()
        };
        let (link, notify) = attach(client, a, address).await?;
        Ok(SenderLink {
            shared: client.shared.clone(),
            link,
            notify,
            address: address.to_string(),
            next_tag: 0,
        })
    }

    /// The node this link sends to.
    pub fn address(&self) -> &str {
        &self.address
    }

    fn gone(&self) -> Option<AmqpError> {
        self.shared.link_gone(self.link, &self.address)
    }

    /// Sends `message` as `mode` says: waits for credit, writes it (encoded straight
    /// into the connection's output), then, for [`SendMode::Sync`], waits for the
    /// broker's outcome: `accepted` is success, anything else an error. An
    /// [`SendMode::Async`] send returns once written; the outcomes of earlier async
    /// sends filed since are checked first, and one not accepted is the error.
    pub async fn send(&mut self, message: &Message, mode: SendMode) -> Result<(), AmqpError> {
        if mode == SendMode::Async {
            self.check_outcomes()?;
        }
        let notify = &self.notify;
        while self.shared.conn.borrow().credit(self.link) == 0 {
            if let Some(e) = self.gone() {
                return Err(e);
            }
            notify.notified().await;
        }
        self.next_tag += 1;
        let tag = Bytes::copy_from_slice(&self.next_tag.to_be_bytes());
        let presettled = mode == SendMode::Presettled;
        let id = self
            .shared
            .conn
            .borrow_mut()
            .send(self.link, tag, presettled, 0, |out| message.encode(out))?;
        if !presettled {
            if let Some(s) = self
                .shared
                .state
                .borrow_mut()
                .sessions
                .get_mut(&self.link.session())
            {
                s.unsettled.insert(id, self.link);
            }
        }
        self.shared.wake_writer.notify_one();
        if mode != SendMode::Sync {
            return Ok(());
        }
        loop {
            let outcome = self
                .shared
                .state
                .borrow_mut()
                .links
                .get_mut(&self.link)
                .and_then(|l| l.outcomes.remove(&id));
            match outcome {
                Some(Some(DeliveryState::Accepted)) => return Ok(()),
                Some(other) => return Err(self.not_accepted(other.as_ref())),
                None => {}
            }
            if let Some(e) = self.gone() {
                return Err(e);
            }
            notify.notified().await;
        }
    }

    fn not_accepted(&self, state: Option<&DeliveryState>) -> AmqpError {
        AmqpError::NotAccepted {
            address: self.address.clone(),
            outcome: describe_outcome(state),
        }
    }

    /// Takes the outcomes the broker gave async sends so far: an error for one that is
    /// not `accepted` (Qpid JMS hands such a failure to the CompletionListener or the
    /// connection's ExceptionListener; the harness makes it the caller's error).
    pub fn check_outcomes(&mut self) -> Result<(), AmqpError> {
        let mut st = self.shared.state.borrow_mut();
        let Some(l) = st.links.get_mut(&self.link) else {
            return Ok(());
        };
        let mut refused = None;
        for (_, state) in l.outcomes.drain() {
            if refused.is_none() && !matches!(state, Some(DeliveryState::Accepted)) {
                refused = Some(state);
            }
        }
        drop(st);
        match refused {
            Some(state) => Err(self.not_accepted(state.as_ref())),
            None => Ok(()),
        }
    }

    /// Resolves when the broker refuses an async send (or the link ends); accepted
    /// outcomes are taken as they come. For waiting on something else meanwhile, e.g.
    /// the reply to a request sent async.
    pub async fn refused(&mut self) -> AmqpError {
        loop {
            if let Err(e) = self.check_outcomes() {
                return e;
            }
            if let Some(e) = self.gone() {
                return e;
            }
            self.notify.notified().await;
        }
    }
}

/// How a [`SenderLink::send`] deals with the broker's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    /// Unsettled; the send waits for `accepted` (Qpid JMS: persistent messages, or
    /// every message with `jms.forceSyncSend=true`).
    Sync,
    /// Unsettled; the send returns once written and the outcome is checked later
    /// (Qpid JMS's default for non-persistent messages, and for every message of a
    /// transacted session).
    Async,
    /// Settled by the sender: no outcome (at-most-once).
    Presettled,
}

/// An outcome in words, e.g. `rejected: amqp:resource-limit-exceeded (queue full)`.
pub fn describe_outcome(state: Option<&DeliveryState>) -> String {
    match state {
        None => "settled without an outcome".into(),
        Some(DeliveryState::Accepted) => "accepted".into(),
        Some(DeliveryState::Rejected { error }) => {
            format!("rejected: {}", Condition::from_error(error.as_ref()))
        }
        Some(DeliveryState::Released) => "released".into(),
        Some(DeliveryState::Modified { .. }) => "modified".into(),
        Some(other) => format!("{other:?}"),
    }
}

/// A message received on a [`ReceiverLink`].
#[derive(Debug, Clone)]
pub struct Delivery {
    /// The delivery id (for the disposition).
    pub delivery_id: u32,
    /// The broker sent it settled (nothing to accept).
    pub settled: bool,
    /// The encoded message.
    pub message: Bytes,
}

/// Receives messages from one node with a credit window.
pub struct ReceiverLink {
    shared: Rc<Shared>,
    link: LinkId,
    /// Wakes this link's caller (kept here: no lookup per receive).
    notify: Rc<Signal>,
    address: String,
    prefetch: u32,
    /// Messages taken since credit was last topped up.
    consumed: u32,
}

/// The filter-map entry of a JMS selector, as Qpid JMS sends it.
pub fn selector_filter(selector: &str) -> (Symbol, ferry_amqp::Value) {
    (
        Symbol::from(ferry_amqp::condition::FILTER_KEY_JMS_SELECTOR),
        ferry_amqp::Value::described(
            ferry_amqp::Descriptor::Code(ferry_amqp::condition::SELECTOR_FILTER_CODE),
            ferry_amqp::Value::String(selector.into()),
        ),
    )
}

impl ReceiverLink {
    /// Attaches a receiver to queue `address` (with a JMS `selector`, if any), then
    /// grants `prefetch` credit (at least 1).
    pub async fn attach(
        client: &Client,
        address: &str,
        selector: Option<&str>,
        prefetch: u32,
    ) -> Result<ReceiverLink, AmqpError> {
        ReceiverLink::attach_with(client, address, selector, prefetch, Node::Queue, false).await
    }

    /// Subscribes to topic `address`: a receiver whose link is a non-durable
    /// subscription (a JMS non-durable consumer), ended with the link. `presettled`:
    /// the broker sends every copy settled, nothing is accepted (Qpid JMS's NoAck).
    pub async fn subscribe(
        client: &Client,
        address: &str,
        prefetch: u32,
        presettled: bool,
    ) -> Result<ReceiverLink, AmqpError> {
        ReceiverLink::attach_with(client, address, None, prefetch, Node::Topic, presettled).await
    }

    /// [`ReceiverLink::attach`] from a node of kind `node`, asking the broker to send
    /// settled when `presettled`.
    pub async fn attach_with(
        client: &Client,
        address: &str,
        selector: Option<&str>,
        prefetch: u32,
        node: Node,
        presettled: bool,
    ) -> Result<ReceiverLink, AmqpError> {
        let a = Attach {
            name: client.link_name("receiver").into(),
            role: Role::Receiver,
            snd_settle_mode: if presettled {
                SenderSettleMode::Settled
            } else {
                SenderSettleMode::Unsettled
            },
            rcv_settle_mode: ReceiverSettleMode::First,
            source: Some(Source {
                address: Some(address.into()),
                filter: selector.map(selector_filter).into_iter().collect(),
                capabilities: node.capabilities(),
                ..Source::default()
            }),
            target: Some(LinkTarget::Node(Target::default())),
            ..Attach::default()
        };
        let (link, notify) = attach(client, a, address).await?;
        let prefetch = prefetch.max(1);
        client
            .shared
            .conn
            .borrow_mut()
            .grant_credit(link, prefetch)?;
        client.shared.wake_writer.notify_one();
        Ok(ReceiverLink {
            shared: client.shared.clone(),
            link,
            notify,
            address: address.to_string(),
            prefetch,
            consumed: 0,
        })
    }

    /// The node this link receives from.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Waits for the next message.
    pub async fn recv(&mut self) -> Result<Delivery, AmqpError> {
        let notify = self.notify.clone();
        loop {
            {
                let mut st = self.shared.state.borrow_mut();
                let l = st
                    .links
                    .get_mut(&self.link)
                    .ok_or_else(|| AmqpError::Timeout("link vanished".into()))?;
                if let Some(m) = l.inbox.pop_front() {
                    return Ok(Delivery {
                        delivery_id: m.delivery_id,
                        settled: m.settled,
                        message: m.message,
                    });
                }
            }
            if let Some(e) = self.shared.link_gone(self.link, &self.address) {
                return Err(e);
            }
            notify.notified().await;
        }
    }

    /// [`recv`](Self::recv) for at most `wait`; `Ok(None)` when nothing came.
    pub async fn recv_within(&mut self, wait: Duration) -> Result<Option<Delivery>, AmqpError> {
        match tokio::time::timeout(wait, self.recv()).await {
            Ok(r) => r.map(Some),
            Err(_) => Ok(None),
        }
    }

    /// Accepts (and settles) a delivery unless the broker sent it settled, and tops the
    /// credit window up again once half of it is used (every message with prefetch 1).
    pub fn accept(&mut self, d: &Delivery) -> Result<(), AmqpError> {
        let mut c = self.shared.conn.borrow_mut();
        if !d.settled {
            c.disposition(
                self.link.session(),
                Role::Receiver,
                d.delivery_id,
                d.delivery_id,
                true,
                Some(DeliveryState::Accepted),
            )?;
        }
        self.consumed += 1;
        if self.consumed >= self.prefetch.div_ceil(2) {
            c.grant_credit(self.link, self.consumed)?;
            self.consumed = 0;
        }
        drop(c);
        self.shared.wake_writer.notify_one();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::amqp::demux::{SessionState, Shared};
    use ferry_amqp::connection::{ClientSasl, Config, Connection, SessionId};
    use ferry_amqp::ErrorCondition;

    /// A sender on link (0, 0) of a connection that never went on the wire, with the
    /// outcomes the broker is said to have given.
    fn sender(outcomes: &[(u32, Option<DeliveryState>)]) -> SenderLink {
        let shared = Shared::new(Connection::client(Config::default(), ClientSasl::Anonymous));
        let link = LinkId {
            channel: 0,
            handle: 0,
        };
        let notify = {
            let mut st = shared.state.borrow_mut();
            st.sessions.insert(SessionId(0), SessionState::default());
            let l = st.links.entry(link).or_default();
            l.outcomes.extend(outcomes.iter().cloned());
            l.notify.clone()
        };
        SenderLink {
            shared: Rc::new(shared),
            link,
            notify,
            address: "REQUEST.1".into(),
            next_tag: 0,
        }
    }

    #[test]
    fn accepted_async_sends_are_taken_quietly() {
        let mut s = sender(&[
            (0, Some(DeliveryState::Accepted)),
            (1, Some(DeliveryState::Accepted)),
        ]);
        assert!(s.check_outcomes().is_ok());
        assert!(s.shared.state.borrow().links[&s.link].outcomes.is_empty());
    }

    #[test]
    fn a_refused_async_send_is_reported_once() {
        let full = DeliveryState::Rejected {
            error: Some(ErrorCondition::new(
                ferry_amqp::condition::RESOURCE_LIMIT_EXCEEDED,
                "queue full",
            )),
        };
        let mut s = sender(&[(0, Some(DeliveryState::Accepted)), (1, Some(full))]);
        match s.check_outcomes() {
            Err(AmqpError::NotAccepted { address, outcome }) => {
                assert_eq!(address, "REQUEST.1");
                assert!(outcome.contains("resource-limit-exceeded"), "{outcome}");
            }
            other => panic!("expected NotAccepted, got {other:?}"),
        }
        assert!(s.check_outcomes().is_ok(), "each outcome is reported once");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn refused_waits_for_a_refusal_and_not_for_acceptances() {
        let mut s = sender(&[(0, Some(DeliveryState::Accepted))]);
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), s.refused()).await;
        assert!(early.is_err(), "accepted sends end no wait");
        s.shared
            .state
            .borrow_mut()
            .links
            .get_mut(&s.link)
            .expect("link")
            .outcomes
            .insert(1, Some(DeliveryState::Released));
        s.notify.notify_one();
        let e = s.refused().await;
        assert!(matches!(e, AmqpError::NotAccepted { .. }), "{e:?}");
    }
}
