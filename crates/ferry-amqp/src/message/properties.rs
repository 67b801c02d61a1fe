//! The `properties` section (0x73): the immutable properties of the bare message
//! (message-id, to, reply-to, correlation-id, ...), and the [`MessageId`] type that
//! message-id and correlation-id share.

use bytes::{Bytes, BytesMut};

use crate::codec::quick::{List, QuickId, Writer};
use crate::codec::unexpected;
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
        IdSpan::decode_with(dec, code)?.to_owned(dec)
    }
}

/// A message-id or correlation-id borrowed from the encoded message: what a broker reads
/// to map an incoming message without copying or counting references to its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MessageIdRef<'a> {
    /// `ulong`.
    Ulong(u64),
    /// `uuid`.
    Uuid([u8; 16]),
    /// `binary`.
    Binary(&'a [u8]),
    /// `string`.
    String(&'a str),
}

impl MessageIdRef<'_> {
    /// The owned id.
    pub fn to_owned(&self) -> MessageId {
        match *self {
            MessageIdRef::Ulong(v) => MessageId::Ulong(v),
            MessageIdRef::Uuid(u) => MessageId::Uuid(u),
            MessageIdRef::Binary(b) => MessageId::Binary(Bytes::copy_from_slice(b)),
            MessageIdRef::String(s) => MessageId::String(s.into()),
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
        if !self.encode_compact(out) {
            self.encode_general(out);
        }
    }
}

fn text(s: &Option<Str>) -> Option<&[u8]> {
    s.as_ref().map(|s| s.as_str().as_bytes())
}

fn symbol(s: &Option<Symbol>) -> Option<&[u8]> {
    s.as_ref().map(|s| s.as_str().as_bytes())
}

impl Properties {
    /// Writes the section through `codec::quick`'s writer when it fits a list8 of short
    /// fields (the same bytes as the general encoder); false, with nothing written,
    /// otherwise.
    fn encode_compact(&self, out: &mut BytesMut) -> bool {
        let mut w = Writer::<254>::new();
        let id = |w: &mut Writer<254>, id: Option<&MessageId>| {
            match id {
                None => w.null(),
                Some(MessageId::Ulong(v)) => w.ulong(*v),
                Some(MessageId::Uuid(u)) => w.fixed(fc::UUID, u),
                Some(MessageId::Binary(b)) => w.sized8(fc::VBIN8, b),
                Some(MessageId::String(s)) => w.sized8(fc::STR8, s.as_str().as_bytes()),
            };
        };
        id(&mut w, self.message_id.as_ref());
        w.optional_binary8(self.user_id.as_deref())
            .optional_sized8(fc::STR8, text(&self.to))
            .optional_sized8(fc::STR8, text(&self.subject))
            .optional_sized8(fc::STR8, text(&self.reply_to));
        id(&mut w, self.correlation_id.as_ref());
        w.optional_sized8(fc::SYM8, symbol(&self.content_type))
            .optional_sized8(fc::SYM8, symbol(&self.content_encoding))
            .optional_timestamp(self.absolute_expiry_time)
            .optional_timestamp(self.creation_time)
            .optional_sized8(fc::STR8, text(&self.group_id))
            .optional_uint(self.group_sequence)
            .optional_sized8(fc::STR8, text(&self.reply_to_group_id));
        w.finish(descriptor::PROPERTIES as u8, out)
    }

    /// The general encoder (any sizes).
    pub(crate) fn encode_general(&self, out: &mut BytesMut) {
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
        let spans = PropertiesSpans::decode_with(dec, code)?;
        let text = |span: Option<Span>| {
            span.map(|s| Str::from_utf8(dec.slice(s.range())))
                .transpose()
        };
        let id = |span: Option<IdSpan>| span.map(|s| s.to_owned(dec)).transpose();
        Ok(Properties {
            message_id: id(spans.message_id)?,
            user_id: spans.user_id.map(|s| dec.slice(s.range())),
            to: text(spans.to)?,
            subject: text(spans.subject)?,
            reply_to: text(spans.reply_to)?,
            correlation_id: id(spans.correlation_id)?,
            content_type: text(spans.content_type)?.map(Symbol),
            content_encoding: text(spans.content_encoding)?.map(Symbol),
            absolute_expiry_time: spans.absolute_expiry_time,
            creation_time: spans.creation_time,
            group_id: text(spans.group_id)?,
            group_sequence: spans.group_sequence,
            reply_to_group_id: text(spans.reply_to_group_id)?,
        })
    }
}

/// The properties section borrowed from the encoded message: the same fields as
/// [`Properties`], text and binaries as slices of the payload. Decoding it takes no
/// reference counts and builds nothing; [`Properties`] is decoded through the same
/// field reader, so both accept and refuse exactly the same encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PropertiesRef<'a> {
    /// JMSMessageID.
    pub message_id: Option<MessageIdRef<'a>>,
    /// The producing user (JMSXUserID).
    pub user_id: Option<&'a [u8]>,
    /// The destination address (JMSDestination).
    pub to: Option<&'a str>,
    /// JMSType.
    pub subject: Option<&'a str>,
    /// Where to reply (JMSReplyTo).
    pub reply_to: Option<&'a str>,
    /// JMSCorrelationID.
    pub correlation_id: Option<MessageIdRef<'a>>,
    /// MIME type of a data body.
    pub content_type: Option<&'a str>,
    /// Encoding of a data body.
    pub content_encoding: Option<&'a str>,
    /// When the message expires (JMSExpiration).
    pub absolute_expiry_time: Option<Timestamp>,
    /// When it was created (JMSTimestamp).
    pub creation_time: Option<Timestamp>,
    /// JMSXGroupID.
    pub group_id: Option<&'a str>,
    /// JMSXGroupSeq.
    pub group_sequence: Option<u32>,
    /// Reply-to group.
    pub reply_to_group_id: Option<&'a str>,
}

impl<'a> PropertiesRef<'a> {
    /// Reads a properties section (constructor `code` just read from `dec`, whose buffer
    /// must be `buf`: the spans read index it).
    pub(crate) fn decode_with(
        dec: &mut Decoder,
        code: u8,
        buf: &'a [u8],
    ) -> Result<Self, DecodeError> {
        debug_assert!(
            std::ptr::eq(dec.buffer(), buf),
            "spans index the decoder's buffer"
        );
        let spans = PropertiesSpans::decode_with(dec, code)?;
        let text = |span: Option<Span>| span.map(|s| s.text(buf)).transpose();
        let id = |span: Option<IdSpan>| span.map(|s| s.borrow(buf)).transpose();
        Ok(PropertiesRef {
            message_id: id(spans.message_id)?,
            user_id: spans.user_id.map(|s| &buf[s.range()]),
            to: text(spans.to)?,
            subject: text(spans.subject)?,
            reply_to: text(spans.reply_to)?,
            correlation_id: id(spans.correlation_id)?,
            content_type: text(spans.content_type)?,
            content_encoding: text(spans.content_encoding)?,
            absolute_expiry_time: spans.absolute_expiry_time,
            creation_time: spans.creation_time,
            group_id: text(spans.group_id)?,
            group_sequence: spans.group_sequence,
            reply_to_group_id: text(spans.reply_to_group_id)?,
        })
    }
}

impl PropertiesRef<'_> {
    /// The owned properties (text and binaries copied).
    pub fn to_owned(&self) -> Properties {
        Properties {
            message_id: self.message_id.map(|id| id.to_owned()),
            user_id: self.user_id.map(Bytes::copy_from_slice),
            to: self.to.map(Str::from),
            subject: self.subject.map(Str::from),
            reply_to: self.reply_to.map(Str::from),
            correlation_id: self.correlation_id.map(|id| id.to_owned()),
            content_type: self.content_type.map(Symbol::from),
            content_encoding: self.content_encoding.map(Symbol::from),
            absolute_expiry_time: self.absolute_expiry_time,
            creation_time: self.creation_time,
            group_id: self.group_id.map(Str::from),
            group_sequence: self.group_sequence,
            reply_to_group_id: self.reply_to_group_id.map(Str::from),
        }
    }
}

/// Where a field's data lies in the decoder's buffer (its UTF-8 not checked yet). Full
/// positions: a delivery of many frames may be larger than 4 GiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    /// The span `r` of the rest of a decoder whose cursor was at `base`.
    fn at(base: usize, r: std::ops::Range<usize>) -> Self {
        Span {
            start: base + r.start,
            end: base + r.end,
        }
    }

    fn of(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let r = dec.sized_span(code)?;
        Ok(Span {
            start: r.start,
            end: r.end,
        })
    }

    fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }

    fn text(self, buf: &[u8]) -> Result<&str, DecodeError> {
        let b = &buf[self.range()];
        // Addresses, ids and symbols are ASCII, and checking that is several times
        // cheaper than the full UTF-8 check on short strings.
        if b.is_ascii() {
            // SAFETY: every byte is ASCII, and ASCII is valid UTF-8.
            return Ok(unsafe { std::str::from_utf8_unchecked(b) });
        }
        std::str::from_utf8(b).map_err(|_| DecodeError::InvalidUtf8)
    }
}

/// Reads the data of a field whose constructor `code` must be `code8` or `code32` (a
/// sized type named `what`), as a span.
#[inline]
fn sized(
    dec: &mut Decoder,
    code: u8,
    (code8, code32): (u8, u8),
    what: &'static str,
) -> Result<Span, DecodeError> {
    if code == code8 || code == code32 {
        Span::of(dec, code)
    } else {
        Err(unexpected(what, code))
    }
}

/// A string field (`str8`/`str32`).
struct TextSpan(Span);

impl Decode for TextSpan {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        sized(dec, code, (fc::STR8, fc::STR32), "string").map(TextSpan)
    }
}

/// A symbol field (`sym8`/`sym32`).
struct SymbolSpan(Span);

impl Decode for SymbolSpan {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        sized(dec, code, (fc::SYM8, fc::SYM32), "symbol").map(SymbolSpan)
    }
}

/// A binary field (`vbin8`/`vbin32`).
struct BinarySpan(Span);

impl Decode for BinarySpan {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        sized(dec, code, (fc::VBIN8, fc::VBIN32), "binary").map(BinarySpan)
    }
}

/// A message-id or correlation-id as read: the one place that says which AMQP types an
/// id may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdSpan {
    Ulong(u64),
    Uuid([u8; 16]),
    Binary(Span),
    String(Span),
}

impl Decode for IdSpan {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::STR8 | fc::STR32 => Span::of(dec, code).map(IdSpan::String),
            fc::VBIN8 | fc::VBIN32 => Span::of(dec, code).map(IdSpan::Binary),
            fc::ULONG | fc::SMALL_ULONG | fc::ULONG0 => {
                u64::decode_with(dec, code).map(IdSpan::Ulong)
            }
            fc::UUID => dec.uuid().map(IdSpan::Uuid),
            other => Err(DecodeError::UnexpectedType {
                field: "message-id",
                expected: "ulong, uuid, binary or string",
                found: other,
            }),
        }
    }
}

impl IdSpan {
    fn to_owned(self, dec: &Decoder) -> Result<MessageId, DecodeError> {
        Ok(match self {
            IdSpan::Ulong(v) => MessageId::Ulong(v),
            IdSpan::Uuid(u) => MessageId::Uuid(u),
            IdSpan::Binary(s) => MessageId::Binary(dec.slice(s.range())),
            IdSpan::String(s) => MessageId::String(Str::from_utf8(dec.slice(s.range()))?),
        })
    }

    fn borrow(self, buf: &[u8]) -> Result<MessageIdRef<'_>, DecodeError> {
        Ok(match self {
            IdSpan::Ulong(v) => MessageIdRef::Ulong(v),
            IdSpan::Uuid(u) => MessageIdRef::Uuid(u),
            IdSpan::Binary(s) => MessageIdRef::Binary(&buf[s.range()]),
            IdSpan::String(s) => MessageIdRef::String(s.text(buf)?),
        })
    }
}

/// The properties section's fields as read, before text is checked and before they are
/// sliced (owned) or borrowed. Text is checked once the whole list is read, so of a
/// string that is not UTF-8 and a later field of the wrong type, the latter is the error
/// reported (before 27 Nov, the former); what is accepted is the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PropertiesSpans {
    message_id: Option<IdSpan>,
    user_id: Option<Span>,
    to: Option<Span>,
    subject: Option<Span>,
    reply_to: Option<Span>,
    correlation_id: Option<IdSpan>,
    content_type: Option<Span>,
    content_encoding: Option<Span>,
    absolute_expiry_time: Option<Timestamp>,
    creation_time: Option<Timestamp>,
    group_id: Option<Span>,
    group_sequence: Option<u32>,
    reply_to_group_id: Option<Span>,
}

impl PropertiesSpans {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match PropertiesSpans::quick(dec, code) {
            Some(p) => Ok(p),
            None => PropertiesSpans::general(dec, code),
        }
    }

    /// The fast path (see [`crate::codec::quick`]) for a properties section in the
    /// compact encoding; `None`, with `dec` untouched, for anything else.
    pub(crate) fn quick(dec: &mut Decoder, code: u8) -> Option<Self> {
        let (b, base) = dec.rest();
        let mut r = List::described(b, code, descriptor::PROPERTIES)?;
        let span = |s: Option<std::ops::Range<usize>>| s.map(|s| Span::at(base, s));
        let id = |q: Option<QuickId>| {
            q.map(|q| match q {
                QuickId::Ulong(v) => IdSpan::Ulong(v),
                QuickId::Binary(s) => IdSpan::Binary(Span::at(base, s)),
                QuickId::String(s) => IdSpan::String(Span::at(base, s)),
            })
        };
        let p = PropertiesSpans {
            message_id: id(r.optional_id()?),
            user_id: span(r.optional_binary()?),
            to: span(r.optional_sized(fc::STR8)?),
            subject: span(r.optional_sized(fc::STR8)?),
            reply_to: span(r.optional_sized(fc::STR8)?),
            correlation_id: id(r.optional_id()?),
            content_type: span(r.optional_sized(fc::SYM8)?),
            content_encoding: span(r.optional_sized(fc::SYM8)?),
            absolute_expiry_time: r.optional_timestamp()?,
            creation_time: r.optional_timestamp()?,
            group_id: span(r.optional_sized(fc::STR8)?),
            group_sequence: r.optional_uint()?,
            reply_to_group_id: span(r.optional_sized(fc::STR8)?),
        };
        let used = r.finish()?;
        dec.skip(used);
        Some(p)
    }

    /// The general decoder.
    pub(crate) fn general(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::PROPERTIES, "properties")?;
        let text = |t: Option<TextSpan>| t.map(|t| t.0);
        let p = PropertiesSpans {
            message_id: f.optional("message-id")?,
            user_id: f.optional("user-id")?.map(|b: BinarySpan| b.0),
            to: text(f.optional("to")?),
            subject: text(f.optional("subject")?),
            reply_to: text(f.optional("reply-to")?),
            correlation_id: f.optional("correlation-id")?,
            content_type: f.optional("content-type")?.map(|s: SymbolSpan| s.0),
            content_encoding: f.optional("content-encoding")?.map(|s: SymbolSpan| s.0),
            absolute_expiry_time: f.optional("absolute-expiry-time")?,
            creation_time: f.optional("creation-time")?,
            group_id: text(f.optional("group-id")?),
            group_sequence: f.optional("group-sequence")?,
            reply_to_group_id: text(f.optional("reply-to-group-id")?),
        };
        f.finish()?;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn text(max: usize) -> impl Strategy<Value = Option<Str>> {
        proptest::option::of(proptest::collection::vec(any::<char>(), 0..max))
            .prop_map(|c| c.map(|c| Str::from(c.into_iter().collect::<String>())))
    }

    fn symbol() -> impl Strategy<Value = Option<Symbol>> {
        proptest::option::of("[a-z/+-]{0,40}").prop_map(|s| s.map(|s| Symbol::from(s.as_str())))
    }

    fn id() -> impl Strategy<Value = Option<MessageId>> {
        proptest::option::of(prop_oneof![
            any::<u64>().prop_map(MessageId::Ulong),
            prop_oneof![Just(0u64), 1u64..=255, Just(256u64)].prop_map(MessageId::Ulong),
            any::<[u8; 16]>().prop_map(MessageId::Uuid),
            proptest::collection::vec(any::<u8>(), 0..300)
                .prop_map(|b| MessageId::Binary(Bytes::from(b))),
            "[ -~]{0,300}".prop_map(|s| MessageId::String(Str::from(s))),
        ])
    }

    prop_compose! {
        fn properties()(
            message_id in id(), user_id in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
            to in text(80), subject in text(20), reply_to in text(80), correlation_id in id(),
            content_type in symbol(), content_encoding in symbol(),
            absolute_expiry_time in proptest::option::of(any::<i64>()),
            creation_time in proptest::option::of(any::<i64>()), group_id in text(20),
            group_sequence in any::<Option<u32>>(), reply_to_group_id in text(20),
        ) -> Properties {
            Properties {
                message_id, user_id: user_id.map(Bytes::from), to, subject, reply_to,
                correlation_id, content_type, content_encoding,
                absolute_expiry_time: absolute_expiry_time.map(Timestamp),
                creation_time: creation_time.map(Timestamp), group_id, group_sequence,
                reply_to_group_id,
            }
        }
    }

    proptest! {
        #[test]
        fn the_compact_writer_writes_the_general_writers_bytes(p in properties()) {
            let mut general = BytesMut::new();
            p.encode_general(&mut general);
            let mut compact = BytesMut::new();
            if p.encode_compact(&mut compact) {
                prop_assert_eq!(compact, general);
            } else {
                prop_assert!(compact.is_empty());
                // Only a field over 255 bytes or a list over 254 is left to the general
                // writer.
                prop_assert!(general.len() > 200, "{} bytes", general.len());
            }
        }
    }
}
