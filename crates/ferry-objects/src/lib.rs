//! Ferry's object model: definitions of queues, channels, listeners, authentication
//! information, process definitions, namelists, topic objects and subscriptions, and the
//! queue manager.
//!
//! Every attribute is defined once, as a row of an attribute table (see [`attribute`]):
//! its MQSC keyword, value kind and range, default, which object types it applies to,
//! and its MQINQ selector. From those rows come the typed definition structs the engine
//! reads (`QueueAttributes::max_depth`), the tables MQSC parses and DISPLAYs with, MQINQ,
//! and the generated attribute reference in the docs. Nothing else repeats a default.
//!
//! Status records ([`status`]) are the shapes of DISPLAY QSTATUS/CONN/CHSTATUS answers,
//! shared by the engine and server (which fill them from live counters) and MQSC (which
//! prints them).

pub mod admin;
pub mod attribute;
pub mod authinfo;
pub mod channel;
pub mod listener;
pub mod namelist;
pub mod process;
pub mod qmgr;
pub mod queue;
pub mod status;
pub mod subscription;
pub mod topic;

pub use admin::AdminError;
pub use attribute::{AttrDef, AttrError, AttrKind, AttrType, AttrValue, AttributeSet, TextRule};
pub use authinfo::{AuthInfoAttributes, AuthInfoDefinition, AuthInfoType, AUTHINFO_ATTRIBUTES};
pub use channel::{
    ChannelAttributes, ChannelDefinition, ChannelOperation, ChannelType, ResolveAction, StopMode,
    CHANNEL_ATTRIBUTES,
};
pub use listener::{ListenerAttributes, ListenerDefinition, LISTENER_ATTRIBUTES};
pub use namelist::{NamelistAttributes, NamelistDefinition, NAMELIST_ATTRIBUTES};
pub use process::{ApplType, ProcessAttributes, ProcessDefinition, PROCESS_ATTRIBUTES};
pub use qmgr::{QmgrAttributes, QMGR_ATTRIBUTES};
pub use queue::{QueueAttributes, QueueDefinition, QueueType, QUEUE_ATTRIBUTES};
pub use subscription::{
    DurableSubscription, SubscriptionAttributes, SubscriptionDefinition, SubscriptionDetails,
    SUBSCRIPTION_ATTRIBUTES,
};
pub use topic::{
    DeliveryPolicy, ResolvedTopicAttributes, TopicAttributes, TopicDefinition, TopicType,
    TOPIC_ATTRIBUTES,
};
