//! MQSD and MQSO: what an MQSUB asks for.
//!
//! A subscription names its topic as MQOPEN names one (a topic object, a topic string,
//! or both), says whether it outlives its connection (durable, then it needs a SubName),
//! where its copies go (a queue the application opened, or one the queue manager makes
//! and manages), and how they are marked (SubCorrelId, SubUserData, PubPriority). MQ's
//! numbers throughout, so the wire and the bindings carry them unchanged.

use bitflags::bitflags;

bitflags! {
    /// MQSO: subscription options.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct SubscribeOptions: u32 {
        /// Change an existing subscription.
        const ALTER = 1;
        /// Make a new subscription.
        const CREATE = 2;
        /// Use an existing subscription.
        const RESUME = 4;
        /// The subscription outlives the connection (needs a SubName).
        const DURABLE = 8;
        /// Subscriptions sharing a queue and SubCorrelId get one copy between them.
        const GROUP_SUB = 16;
        /// The queue manager makes and manages the destination queue.
        const MANAGED = 32;
        /// PubAccountingToken and PubApplIdentityData set the copies' identity.
        const SET_IDENTITY_CONTEXT = 64;
        /// No multicast.
        const NO_MULTICAST = 128;
        /// Only the user who made the subscription may resume or alter it (the default).
        const FIXED_USERID = 256;
        /// Another user may take the subscription over.
        const ANY_USERID = 512;
        /// Copies are sent only when MQSUBRQ asks for the retained publication.
        const PUBLICATIONS_ON_REQUEST = 2048;
        /// No retained publication is sent when the subscription is made.
        const NEW_PUBLICATIONS_ONLY = 4096;
        /// Fail with 2161 when the queue manager quiesces.
        const FAIL_IF_QUIESCING = 8192;
        /// Use the alternate user's authority.
        const ALTERNATE_USER_AUTHORITY = 262144;
        /// Character-based wildcards (`*`, `?`, `%`).
        const WILDCARD_CHAR = 1048576;
        /// Topic-based wildcards (`#`, `+`; the default).
        const WILDCARD_TOPIC = 2097152;
        /// SubCorrelId is the copies' CorrelId.
        const SET_CORREL_ID = 4194304;
        /// Subscribe on this queue manager only.
        const SCOPE_QMGR = 67108864;
        /// No read ahead of the copies.
        const NO_READ_AHEAD = 134217728;
        /// Read ahead of the copies.
        const READ_AHEAD = 268435456;
        const _ = !0;
    }
}

/// MQSD PubPriority: the copies keep the publication's priority (the default).
pub const PRIORITY_AS_PUBLISHED: i32 = -3;
/// MQSD PubPriority: the copies take the destination queue's DEFPRTY.
pub const PRIORITY_AS_QUEUE_DEFAULT: i32 = -1;
/// MQSUBRQ action MQSR_ACTION_PUBLICATION: send the retained publications again (the
/// only action).
pub const ACTION_PUBLICATION: i32 = 1;
/// MQSD SubExpiry: the subscription never expires.
pub const SUB_EXPIRY_UNLIMITED: i32 = -1;
/// The longest ObjectString, SubName, SubUserData and SelectionString (MQ's 10,240).
pub const MAX_SUB_STRING_LENGTH: usize = 10_240;

/// MQSD: the subscription descriptor given to MQSUB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionDescriptor {
    /// MQSO_* bits.
    pub options: SubscribeOptions,
    /// A topic object (blank: none).
    pub object_name: String,
    /// A topic string, appended to the object's (empty: none).
    pub object_string: String,
    /// MQSO_ALTERNATE_USER_AUTHORITY: the user whose authority counts.
    pub alternate_user_id: String,
    /// The subscription's name: needed by durable ones, unique in the queue manager.
    pub sub_name: String,
    /// Given back to each copy as the MQSubUserData property.
    pub sub_user_data: String,
    /// MQSO_SET_CORREL_ID: the copies' CorrelId (otherwise the 24-byte SubId).
    pub sub_correl_id: [u8; 24],
    /// The copies' priority: [`PRIORITY_AS_PUBLISHED`], [`PRIORITY_AS_QUEUE_DEFAULT`] or
    /// 0-9.
    pub pub_priority: i32,
    /// A message selector (SQL-92 syntax, as JMS's) the copies must satisfy.
    pub selection_string: String,
    /// 0-9: among matching subscriptions, a publication goes to those with the highest
    /// SubLevel not above its PubLevel (default 1).
    pub sub_level: i32,
    /// Tenths of a second the subscription lives ([`SUB_EXPIRY_UNLIMITED`]: for ever).
    pub sub_expiry: i32,
}

impl Default for SubscriptionDescriptor {
    /// MQSD_DEFAULT: no options, no topic, AS_PUBLISHED priority, SubLevel 1, unlimited.
    fn default() -> Self {
        SubscriptionDescriptor {
            options: SubscribeOptions::empty(),
            object_name: String::new(),
            object_string: String::new(),
            alternate_user_id: String::new(),
            sub_name: String::new(),
            sub_user_data: String::new(),
            sub_correl_id: [0; 24],
            pub_priority: PRIORITY_AS_PUBLISHED,
            selection_string: String::new(),
            sub_level: 1,
            sub_expiry: SUB_EXPIRY_UNLIMITED,
        }
    }
}

impl SubscriptionDescriptor {
    /// A new non-durable managed subscription to `topic_string`, as JMS's non-durable
    /// topic consumer makes.
    pub fn managed(topic_string: &str) -> Self {
        SubscriptionDescriptor {
            options: SubscribeOptions::CREATE | SubscribeOptions::MANAGED,
            object_string: topic_string.to_string(),
            ..Self::default()
        }
    }
}
