//! Publish/subscribe: subscriptions, and publications fanned out to them.
//!
//! A **subscription** ([`subscription`]) says which topic strings it wants (a
//! [`ferry_pubsub::TopicFilter`], wildcards included), where its copies go (a queue: one
//! the application gave, or one the queue manager made from a model queue and manages),
//! and how they are marked. Non-durable subscriptions end with the handle or connection
//! that made them; durable ones are kept in the catalogue and outlive both.
//!
//! A **publication** ([`publish`]) is an MQPUT to a topic: the queue manager finds the
//! subscriptions it reaches ([`ferry_pubsub::SubscriptionIndex`]), checks every copy's
//! destination first, decides with the topic's PMSGDLV/NPMSGDLV and USEDLQ what a refused
//! copy means, and only then puts the copies, all in one engine call. Every copy shares
//! the publication's body (a [`bytes::Bytes`], never copied); each carries its own
//! descriptor (CorrelId from the subscription, priority per PubPriority) and the
//! publication properties MQ adds (MQTopicString, MQSubUserData).
//!
//! Topic attributes come from the topic objects on the publication's path
//! ([`topic_attributes`]): the nearest administrative node that does not say ASPARENT
//! decides, SYSTEM.BASE.TOPIC's shipped values when none does.

pub(crate) mod admin;
pub(crate) mod publish;
pub(crate) mod retained;
pub(crate) mod subscribe;
pub(crate) mod subscription;
pub(crate) mod topic_attributes;

pub use subscribe::{SubscribeExtras, Subscribed};
pub use subscription::{SubscriptionId, SubscriptionStatus, SubscriptionType};
