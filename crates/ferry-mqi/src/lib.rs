//! The MQI vocabulary shared by every Ferry layer.
//!
//! Ferry speaks IBM MQ's language end to end: a failure is a [`ReasonCode`] (number and
//! name, e.g. `2053 MQRC_Q_FULL`), a message carries a [`MessageDescriptor`], calls take
//! [`OpenOptions`], [`PutOptions`] and [`GetOptions`]. This crate holds only those types
//! and their rules (no I/O, no engine), so the engine, the wire codec, the client and the
//! CLI all agree on one definition.

pub mod compression;
pub mod conname;
pub mod dead_letter;
pub mod descriptor;
pub mod fixed;
pub mod fuzzing;
pub mod inquire;
pub mod names;
pub mod object;
pub mod options;
pub mod pcf;
pub mod properties;
pub mod property_text;
pub mod reason;
pub mod report;
pub mod subscription;
pub mod trace_context;
pub mod transmission;
pub mod trigger;

pub use compression::{HeaderCompression, MessageCompression, Technique};
pub use descriptor::{CorrelId, MessageDescriptor, MsgId};
pub use fixed::FixedStr;
pub use inquire::{InquireValue, Selector};
pub use names::{validate_channel_name, validate_object_name, NameError};
pub use object::{ObjectDescriptor, ObjectType};
pub use options::{
    CloseOptions, GetOptionFlags, GetOptions, MatchOptions, OpenOptions, PutOptionFlags, PutOptions,
};
pub use properties::{MessageProperties, PropertyError, PropertyRef, PropertyValue};
pub use reason::{CompCode, MqError, ReasonCode};
pub use subscription::{SubscribeOptions, SubscriptionDescriptor};
pub use trace_context::{TraceParent, TraceParentError};
pub use transmission::{TransmissionHeader, TransmissionHeaderError, FORMAT_XMIT_Q_HEADER};
