//! AMQP 1.0 messages ⇄ MQ messages, and JMS selectors over MQ messages: the pure (no
//! I/O) layer that lets Qpid JMS and proton clients share queues with native MQI
//! applications.
//!
//! The idea: a queue holds MQ messages only (MQMD + message properties + body), so native
//! applications, MQGET, browsing, expiry, backout and selection all work unchanged. The
//! AMQP channel converts at the edge:
//! - [`amqp_to_mq`] (module `to_mq`) maps an incoming AMQP message onto an MQMD
//!   (persistence, priority, expiry, MsgId/CorrelId, ReplyToQ, Format), MQ properties
//!   (application properties, JMSType) and an MQ body, and keeps everything of the bare
//!   message MQ has no slot for as raw bytes in reserved properties, so
//! - [`mq_to_amqp`] (module `to_amqp`) can give an AMQP consumer back the very sections
//!   the producer sent, byte for byte, behind a fresh header; a native message gets the
//!   sections Qpid JMS expects (a `byte` `x-opt-jms-msg-type`, binary 24-byte ids).
//! - [`JmsSelection`] (module `selection`) is the engine's
//!   [`MessageFilter`](ferry_engine::MessageFilter) for a JMS selector from an AMQP
//!   source filter, reading JMS headers the way Qpid JMS shows them, and telling the
//!   engine which MsgId/CorrelId to look up for `JMSCorrelationID = '...'`.
//! - Module `ids` holds the one rule that ties them together: how an AMQP message-id or
//!   correlation-id (ulong, uuid, binary, string) becomes a 24-byte MQ id, and how ids are
//!   spelled as JMS strings.
//!
//! Reserved MQ property names (set with `set_reserved`, so applications cannot forge
//! them) are the constants below; the body Format of an AMQP body with no MQ equivalent
//! is [`FORMAT_AMQP`].

mod app_properties;
pub mod destination;
mod ids;
mod put_time;
mod selection;
mod stored;
mod to_amqp;
mod to_mq;

#[cfg(test)]
mod tests;

use bytes::Bytes;
use ferry_amqp::{condition, DecodeError, Str};
use ferry_mqi::{FixedStr, MessageDescriptor, PropertyError};

pub use ids::{jms_correlation_id, jms_message_id, mq_id, native_jms_id, parse_jms_id, IdRef};
pub use selection::JmsSelection;
pub use to_amqp::mq_to_amqp;
pub use to_mq::{amqp_to_mq, amqp_to_mq_compact};

/// Reserved property: the AMQP encoding of the message's `properties.message-id`, so the
/// exact id (and its AMQP type) survives the 24-byte MsgId.
pub const PROP_MESSAGE_ID: &str = "mq.amqp.mid";
/// Reserved property: the AMQP encoding of `properties.correlation-id`.
pub const PROP_CORRELATION_ID: &str = "mq.amqp.cid";
/// Reserved property: `properties.reply-to` exactly (ReplyToQ only holds MQ queue names).
pub const PROP_REPLY_TO: &str = "mq.amqp.replyTo";
/// Reserved property: the raw message-annotations, properties and application-properties
/// sections as the producer encoded them. Its presence marks a message that came in over
/// AMQP.
pub const PROP_SECTIONS: &str = "mq.amqp.sections";
/// Reserved property: the raw footer section, when the message had one.
pub const PROP_FOOTER: &str = "mq.amqp.footer";
/// Property holding JMSType (AMQP `properties.subject`), where MQINQMP and selectors
/// find it.
pub const PROP_JMS_TYPE: &str = "JMSType";

/// MQ Format of a body that holds raw AMQP body sections (an amqp-value other than a
/// string, amqp-sequence sections, several data sections, or no body at all). A Ferry
/// format name: native applications still read the bytes; AMQP consumers get the
/// sections back exactly.
pub const FORMAT_AMQP: FixedStr<8> = FixedStr::from_bytes(*b"AMQP    ");

/// CCSID of UTF-8 text, set on MQSTR bodies that came from AMQP strings.
pub const CCSID_UTF8: i32 = 1208;

/// An MQ message as the engine stores it: descriptor, encoded message properties
/// ([`ferry_mqi::MessageProperties::encode`]) and body.
#[derive(Debug, Clone, PartialEq)]
pub struct MqMessage {
    /// The message descriptor to put with.
    pub md: MessageDescriptor,
    /// The encoded message properties (empty when there are none).
    pub properties: Bytes,
    /// The body (shares the AMQP payload's bytes where it can).
    pub body: Bytes,
    /// The AMQP `to` address, for a link without a target address (ANONYMOUS-RELAY);
    /// shares the payload's bytes (most links have a target and never read it).
    pub to: Option<Str>,
    /// What Qpid JMS's `x-opt-jms-dest` annotation says `to` is (a topic, for an
    /// anonymous producer publishing), when present.
    pub to_kind: Option<destination::NodeKind>,
}

/// Why an AMQP message could not be mapped to an MQ message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MappingError {
    /// The transfer payload is not a well-formed AMQP message.
    #[error("the AMQP message does not decode: {0}")]
    Decode(#[from] DecodeError),
    /// A section could not be kept as an MQ property: only one over 4 GiB can be refused
    /// ([`PropertyError::ValueTooBig`]); the reserved names are valid by construction.
    #[error("the AMQP message cannot be stored: {0}")]
    Property(#[from] PropertyError),
}

impl MappingError {
    /// The AMQP error condition to reject the delivery with.
    pub fn condition(&self) -> &'static str {
        match self {
            MappingError::Decode(e) => e.condition(),
            MappingError::Property(PropertyError::ValueTooBig(_)) => {
                condition::MESSAGE_SIZE_EXCEEDED
            }
            MappingError::Property(_) => condition::INTERNAL_ERROR,
        }
    }
}
