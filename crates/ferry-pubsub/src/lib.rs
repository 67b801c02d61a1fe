//! Ferry's publish/subscribe rules, as pure data and functions that do no I/O.
//!
//! - [`topic_string`]: topic strings (`/`-separated levels, case sensitive, at most
//!   10,240 characters) and how MQ combines a topic object's TOPICSTR with an MQOD or
//!   MQSD ObjectString.
//! - [`wildcard`]: what a subscription's topic string matches: topic-based wildcards
//!   (`#` any number of whole levels, `+` one level; MQSO_WILDCARD_TOPIC, the default) or
//!   character-based ones (`*` any run of characters, `/` included, `?` one character,
//!   `%` escaping; MQSO_WILDCARD_CHAR).
//! - [`subscription_index`]: which subscriptions a publication reaches, by hash lookups
//!   of its topic string and its prefixes rather than a test of every subscription.
//!
//! The topic tree, topic objects and subscriptions that use them live in the engine.

pub mod fuzzing;
pub mod subscription_index;
pub mod topic_string;
pub mod wildcard;

pub use subscription_index::{Match, SubscriptionIndex};
pub use topic_string::{combine, TopicString, TopicStringError, MAX_TOPIC_STRING_LENGTH};
pub use wildcard::{TopicFilter, WildcardScheme};
