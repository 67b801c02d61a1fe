//! The `properties` section (0x73): the immutable properties of the bare message
//! (message-id, to, reply-to, correlation-id, ...), and the [`MessageId`] type that
//! message-id and correlation-id share.

use bytes::{Bytes, BytesMut};

use crate::codec::{
    format_code as fc, put_binary, put_string, CompositeWriter, Decode, Decoder, Encode, Fields,
};
use crate::descriptor;
use crate::error::DecodeError;
use crate::value::{Str, Symbol, Timestamp, Value};

/// A message-id or correlation-id: one of four AMQP types (Qpid JMS sends strings
/// `ID:...`; MQ-style ids are binary).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum MessageId {
    /// `ulong`.
    Ulong(u64),
    /// `uuid`.
    Uuid([u8; 16]),
    /// `binary`.
    Binary(Bytes),
    /// `string`.
    String(Str),
}

impl Encode for MessageId {
    fn encode(&self, out: &mut BytesMut) {
        match self {
            MessageId::Ulong(v) => v.encode(out),
            MessageId::Uuid(u) => crate::codec::put_value(out, &Value::Uuid(*u)),
            MessageId::Binary(b) => put_binary(out, b),
            MessageId::String(s) => put_string(out, s.as_str()),
        }
    }
}

impl Decode for MessageId {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::STR8 | fc::STR32 => Str::decode_with(dec, code).map(MessageId::String),
            fc::VBIN8 | fc::VBIN32 => Bytes::decode_with(dec, code).map(MessageId::Binary),
            fc::ULONG | fc::SMALL_ULONG | fc::ULONG0 => {
                u64::decode_with(dec, code).map(MessageId::Ulong)
            }
            fc::UUID => match dec.value_with(code)? {
                Value::Uuid(u) => Ok(MessageId::Uuid(u)),
                _ => Err(DecodeError::UnknownFormatCode(code)),
            },
            other => Err(DecodeError::UnexpectedType {
                field: "message-id",
                expected: "ulong, uuid, binary or string",
                found: other,
            }),
        }
    }
}

/// The bare message's properties (all 13 fields of the spec, in order).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Properties {
    /// JMSMessageID.
    pub message_id: Option<MessageId>,
    /// The producing user (JMSXUserID).
    pub user_id: Option<Bytes>,
    /// The destination address (JMSDestination).
    pub to: Option<Str>,
    /// JMSType.
    pub subject: Option<Str>,
    /// Where to reply (JMSReplyTo).
    pub reply_to: Option<Str>,
    /// JMSCorrelationID.
    pub correlation_id: Option<MessageId>,
    /// MIME type of a data body.
    pub content_type: Option<Symbol>,
    /// Encoding of a data body.
    pub content_encoding: Option<Symbol>,
    /// When the message expires (JMSExpiration).
    pub absolute_expiry_time: Option<Timestamp>,
    /// When it was created (JMSTimestamp).
    pub creation_time: Option<Timestamp>,
    /// JMSXGroupID.
    pub group_id: Option<Str>,
    /// JMSXGroupSeq.
    pub group_sequence: Option<u32>,
    /// Reply-to group.
    pub reply_to_group_id: Option<Str>,
}

impl Encode for Properties {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::PROPERTIES);
        w.field(self.message_id.as_ref())
            .field(self.user_id.as_ref())
            .field(self.to.as_ref())
            .field(self.subject.as_ref())
            .field(self.reply_to.as_ref())
            .field(self.correlation_id.as_ref())
            .field(self.content_type.as_ref())
            .field(self.content_encoding.as_ref())
            .field(self.absolute_expiry_time.as_ref())
            .field(self.creation_time.as_ref())
            .field(self.group_id.as_ref())
            .field(self.group_sequence.as_ref())
            .field(self.reply_to_group_id.as_ref());
        w.finish();
    }
}

impl Decode for Properties {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::PROPERTIES, "properties")?;
        let p = Properties {
            message_id: f.optional("message-id")?,
            user_id: f.optional("user-id")?,
            to: f.optional("to")?,
            subject: f.optional("subject")?,
            reply_to: f.optional("reply-to")?,
            correlation_id: f.optional("correlation-id")?,
            content_type: f.optional("content-type")?,
            content_encoding: f.optional("content-encoding")?,
            absolute_expiry_time: f.optional("absolute-expiry-time")?,
            creation_time: f.optional("creation-time")?,
            group_id: f.optional("group-id")?,
            group_sequence: f.optional("group-sequence")?,
            reply_to_group_id: f.optional("reply-to-group-id")?,
        };
        f.finish()?;
        Ok(p)
    }
}
