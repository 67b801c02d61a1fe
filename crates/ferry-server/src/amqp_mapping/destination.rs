//! What an AMQP terminus names: a queue or a topic, and for a topic receiver, which MQ
//! subscription it is.
//!
//! **Queue or topic.** Qpid JMS marks every terminus with a capability: `queue`, `topic`,
//! `temporary-queue` or `temporary-topic` (and an anonymous producer's messages with the
//! `x-opt-jms-dest` annotation: 0 queue, 1 topic, 2 temporary queue, 3 temporary topic).
//! An address may also carry a `queue://` or `topic://` prefix, which is removed. With no
//! capability and no prefix a terminus is a queue: that is what proton clients and
//! Ferry's earlier releases mean. (IBM MQ's AMQP channel, built for MQ Light, takes it for
//! a topic; a client that wants a topic there says so.)
//!
//! **JMS subscriptions.** A topic receiver is an MQ subscription. Qpid JMS names the link
//! after the JMS subscription (`AmqpSubscriptionTracker`):
//! - a non-durable, unshared consumer: a generated name, and the subscription has none;
//! - a durable one: the subscription name;
//! - a shared durable one: the name, then `|2`, `|3`... for further consumers of the same
//!   connection; without a client id `|global`, `|global2`...;
//! - a shared non-durable one: `name|volatile1`... or `name|global-volatile1`...
//!
//! The MQ subscription name says whose it is, as IBM MQ's AMQP channel does: a JMS
//! subscription belongs to its client id (the AMQP container id) unless it is global:
//! `:private:<client>:<name>` (durable, unshared), `:privateshare:<client>:<name>` and
//! `:share:<name>` (shared durable), with `:volatile` after shared non-durable ones.

use ferry_amqp::{Str, Symbol, Value};

/// What kind of node a terminus names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// A queue.
    Queue,
    /// A topic.
    Topic,
    /// A temporary queue (JMS TemporaryQueue).
    TemporaryQueue,
    /// A temporary topic (JMS TemporaryTopic).
    TemporaryTopic,
}

impl NodeKind {
    /// True for topics, temporary ones included.
    pub fn is_topic(self) -> bool {
        matches!(self, NodeKind::Topic | NodeKind::TemporaryTopic)
    }
}

/// The kind a terminus's capabilities and address say, and the address without its
/// `queue://` or `topic://` prefix.
pub fn node_of<'a>(capabilities: &[Symbol], address: &'a str) -> (NodeKind, &'a str) {
    let has = |c: &str| capabilities.iter().any(|s| s.as_str() == c);
    let (prefixed, bare) = if let Some(rest) = address.strip_prefix("topic://") {
        (Some(NodeKind::Topic), rest)
    } else if let Some(rest) = address.strip_prefix("queue://") {
        (Some(NodeKind::Queue), rest)
    } else {
        (None, address)
    };
    let kind = if has("temporary-topic") {
        NodeKind::TemporaryTopic
    } else if has("topic") {
        NodeKind::Topic
    } else if has("temporary-queue") {
        NodeKind::TemporaryQueue
    } else if has("queue") {
        NodeKind::Queue
    } else {
        prefixed.unwrap_or(NodeKind::Queue)
    };
    (kind, bare)
}

/// The kind Qpid JMS's `x-opt-jms-dest` message annotation gives a message's `to`
/// address (None when the annotation is absent or unknown).
pub fn annotated_kind(annotations: &[(Value, Value)]) -> Option<NodeKind> {
    let value = annotations.iter().find_map(|(k, v)| match k {
        Value::Symbol(s) if s.as_str() == "x-opt-jms-dest" => Some(v),
        _ => None,
    })?;
    let n = match value {
        Value::Byte(b) => i64::from(*b),
        Value::Ubyte(b) => i64::from(*b),
        Value::Int(i) => i64::from(*i),
        _ => return None,
    };
    match n {
        0 => Some(NodeKind::Queue),
        1 => Some(NodeKind::Topic),
        2 => Some(NodeKind::TemporaryQueue),
        3 => Some(NodeKind::TemporaryTopic),
        _ => None,
    }
}

/// The MQ subscription a topic receiver link is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JmsSubscription {
    /// The MQ subscription name (None: an unnamed non-durable subscription).
    pub name: Option<String>,
    /// It outlives the link (the source is durable and never expires).
    pub durable: bool,
    /// Several consumers share it (JMS 2.0).
    pub shared: bool,
}

impl JmsSubscription {
    /// The subscription for a receiver link named `link_name` on a connection whose
    /// container id is `client_id`, with the source's `durable` (terminus durability
    /// above none and expiry policy never) and `capabilities`.
    pub fn of(
        link_name: &str,
        client_id: &str,
        durable: bool,
        capabilities: &[Symbol],
    ) -> JmsSubscription {
        let has = |c: &str| capabilities.iter().any(|s| s.as_str() == c);
        let shared = has("shared");
        if !durable && !shared {
            return JmsSubscription {
                name: None,
                durable: false,
                shared: false,
            };
        }
        let base = link_name.split('|').next().unwrap_or(link_name);
        let global = has("global");
        let name = match (shared, global) {
            (false, _) => format!(":private:{client_id}:{base}"),
            (true, false) => format!(":privateshare:{client_id}:{base}"),
            (true, true) => format!(":share:{base}"),
        };
        let name = if durable {
            name
        } else {
            format!("{name}:volatile")
        };
        JmsSubscription {
            name: Some(name),
            durable,
            shared,
        }
    }

    /// The durable subscriptions a JMS unsubscribe of link `link_name` may mean, most
    /// likely first: Qpid JMS's lookup link has the subscription's first link name and no
    /// source, and asks for `shared` and `global` when there is no client id.
    pub fn unsubscribe_candidates(
        link_name: &str,
        client_id: &str,
        desired: &[Symbol],
    ) -> Vec<String> {
        let base = link_name.split('|').next().unwrap_or(link_name);
        let global =
            link_name.ends_with("|global") || desired.iter().any(|s| s.as_str() == "global");
        if global {
            vec![format!(":share:{base}")]
        } else {
            vec![
                format!(":private:{client_id}:{base}"),
                format!(":privateshare:{client_id}:{base}"),
            ]
        }
    }
}

/// A fresh temporary topic's name for connection `client_id`: unique while the queue
/// manager runs (`n` counts them).
pub fn temporary_topic(client_id: &str, n: u64) -> Str {
    Str::from(format!("TEMP/{client_id}/{n}").as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps(c: &[&'static str]) -> Vec<Symbol> {
        c.iter().map(|s| Symbol::from_static(s)).collect()
    }

    #[test]
    fn capabilities_then_prefixes_say_queue_or_topic() {
        assert_eq!(
            node_of(&caps(&["topic"]), "prices"),
            (NodeKind::Topic, "prices")
        );
        assert_eq!(node_of(&caps(&["queue"]), "Q1"), (NodeKind::Queue, "Q1"));
        assert_eq!(node_of(&[], "topic://a/b"), (NodeKind::Topic, "a/b"));
        assert_eq!(node_of(&[], "queue://Q1"), (NodeKind::Queue, "Q1"));
        assert_eq!(node_of(&[], "Q1"), (NodeKind::Queue, "Q1"));
        assert_eq!(
            node_of(&caps(&["temporary-topic"]), "TEMP/c/1"),
            (NodeKind::TemporaryTopic, "TEMP/c/1")
        );
    }

    #[test]
    fn the_jms_dest_annotation_names_the_kind() {
        let ann = |v: Value| vec![(Value::Symbol(Symbol::from_static("x-opt-jms-dest")), v)];
        assert_eq!(annotated_kind(&ann(Value::Byte(1))), Some(NodeKind::Topic));
        assert_eq!(annotated_kind(&ann(Value::Byte(0))), Some(NodeKind::Queue));
        assert_eq!(annotated_kind(&ann(Value::Byte(9))), None);
        assert_eq!(annotated_kind(&[]), None);
    }

    #[test]
    fn qpid_link_names_become_mq_subscription_names() {
        let sub = |link: &str, durable, c: &[&'static str]| {
            JmsSubscription::of(link, "client1", durable, &caps(c))
        };
        assert_eq!(
            sub("qpid-jms:receiver:ID:1:t", false, &["topic"]).name,
            None
        );
        assert_eq!(
            sub("orders", true, &["topic"]).name.as_deref(),
            Some(":private:client1:orders")
        );
        assert_eq!(
            sub("orders|2", true, &["topic", "shared"]).name.as_deref(),
            Some(":privateshare:client1:orders")
        );
        assert_eq!(
            sub("orders|global3", true, &["topic", "shared", "global"])
                .name
                .as_deref(),
            Some(":share:orders")
        );
        let volatile = sub(
            "orders|global-volatile1",
            false,
            &["topic", "shared", "global"],
        );
        assert_eq!(volatile.name.as_deref(), Some(":share:orders:volatile"));
        assert!(volatile.shared && !volatile.durable);
    }

    #[test]
    fn unsubscribe_looks_for_the_private_or_the_global_subscription() {
        assert_eq!(
            JmsSubscription::unsubscribe_candidates("orders", "c", &[]),
            [":private:c:orders", ":privateshare:c:orders"]
        );
        assert_eq!(
            JmsSubscription::unsubscribe_candidates(
                "orders|global",
                "c",
                &caps(&["shared", "global"])
            ),
            [":share:orders"]
        );
    }
}
