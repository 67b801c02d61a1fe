//! AMQP → MQ: an incoming AMQP message (a transfer's payload) as the MQ message to put.
//!
//! The header and the JMS fields MQ has slots for fill the MQMD: durable → Persistence
//! (no header: not persistent, as AMQP says), priority → Priority (absent 4, at most 9),
//! ttl → Expiry in tenths of a second rounded up (else absolute-expiry-time − now; an
//! absolute-expiry-time of 0 means "never", as JMSExpiration does), message-id and
//! correlation-id → MsgId and CorrelId by [`IdRef::mq_id`], reply-to → ReplyToQ when it
//! is a valid MQ queue name (MsgType then REQUEST, as MQ JMS sets it). The header's
//! delivery-count is not carried in (BackoutCount starts at 0); delivery-annotations are
//! for one hop and are dropped.
//!
//! What MQ has no slot for is kept verbatim: the raw message-annotations, properties and
//! application-properties sections in [`PROP_SECTIONS`] (one contiguous slice of the
//! payload: nothing may come between them) and the footer in [`PROP_FOOTER`], so
//! delivery re-emits them without re-encoding. The exact ids and reply-to are kept too
//! ([`PROP_MESSAGE_ID`], [`PROP_CORRELATION_ID`], [`PROP_REPLY_TO`]), and the
//! application properties and subject become MQ properties (see `app_properties`;
//! subject as [`PROP_JMS_TYPE`]) for MQINQMP and selectors. An application property
//! whose name MQ refuses (e.g. `a-b`, or one starting `JMS`/`mq`) is only in the raw
//! sections.
//!
//! Body: one data section → its bytes, Format MQFMT_NONE; an amqp-value string → its
//! UTF-8 bytes, Format MQSTR, CCSID 1208; anything else (no body, amqp-value null, map,
//! list or binary, amqp-sequence, several data sections) → the raw body sections, Format
//! [`FORMAT_AMQP`]. No body is an empty MQ body, as for native readers; amqp-value null
//! is kept as its 4 raw bytes rather than an empty MQSTR body, so a TextMessage with no
//! text comes back as null, not "", and needs no extra property. The body shares the
//! payload's bytes (no copy), or with [`amqp_to_mq_compact`] a small one is copied into
//! one buffer with the encoded properties (what the channel puts on a queue).
//!
//! The whole message is decoded, so a malformed one is refused here with
//! `amqp:decode-error` rather than stored and failing its consumers later.

use std::ops::Range;

use bytes::{Bytes, BytesMut};
use ferry_amqp::{Body, Header, Message, PropertiesRef, RawSections, SectionKind, Str, Value};
use ferry_mqi::descriptor::{format, msg_type, persistence, EXPIRY_UNLIMITED};
use ferry_mqi::{
    properties::validate_property_name, validate_object_name, FixedStr, MessageDescriptor,
    MessageProperties, PropertyRef,
};

use super::app_properties::to_property;
use super::ids::IdRef;
use super::{
    MappingError, MqMessage, CCSID_UTF8, FORMAT_AMQP, PROP_CORRELATION_ID, PROP_FOOTER,
    PROP_JMS_TYPE, PROP_MESSAGE_ID, PROP_REPLY_TO, PROP_SECTIONS,
};

/// Maps an encoded AMQP message (a whole delivery's payload) to the MQ message to put.
/// `now_ms` (ms since the epoch) turns an absolute-expiry-time into an Expiry. The body
/// shares the payload's bytes.
pub fn amqp_to_mq(message_bytes: &Bytes, now_ms: u64) -> Result<MqMessage, MappingError> {
    map_message(message_bytes, now_ms, 0)
}

/// As [`amqp_to_mq`], but a body shorter than `copy_below` bytes is copied, after the
/// encoded properties, into one buffer of the message's own: a message that stays queued
/// does not pin the read buffer its payload arrived in, and its body and properties cost
/// one allocation (and one reference count) between them instead of two each.
pub fn amqp_to_mq_compact(
    message_bytes: &Bytes,
    now_ms: u64,
    copy_below: usize,
) -> Result<MqMessage, MappingError> {
    map_message(message_bytes, now_ms, copy_below)
}

fn map_message(
    message_bytes: &Bytes,
    now_ms: u64,
    copy_below: usize,
) -> Result<MqMessage, MappingError> {
    // The properties section is read in place: its fields are only looked at here.
    let (msg, props, raw) = Message::decode_borrowing_properties(message_bytes)?;
    let mut md = MessageDescriptor {
        expiry: expiry(msg.header.as_ref(), props, now_ms),
        ..MessageDescriptor::default()
    };
    set_header_fields(&mut md, msg.header.as_ref());

    // The MQ properties are encoded straight from the decoded message's names and values
    // (borrowed: no copy of each name and value only to encode it once).
    // Sized for the reserved properties (ids, reply-to, JMSType, sections, footer) and
    // the application properties: no growing while it fills.
    let app_count = msg.application_properties.as_ref().map_or(0, Vec::len);
    let mut mq_props: Vec<(&str, PropertyRef<'_>)> = Vec::with_capacity(app_count + 6);
    for (name, value) in msg.application_properties.iter().flatten() {
        let name = name.as_str();
        // Names MQ refuses stay in the raw sections only.
        let Some(v) = to_property(value).filter(|_| validate_property_name(name).is_ok()) else {
            continue;
        };
        // A repeated name replaces the earlier value in its place, as MQSETMP does.
        match mq_props.iter_mut().find(|(n, _)| *n == name) {
            Some((_, old)) => *old = v,
            None => mq_props.push((name, v)),
        }
    }
    let ids = props.map(|p| set_properties_fields(&mut md, &p));
    if let (Some(p), Some(ids)) = (&props, &ids) {
        kept_properties(&mut mq_props, p, ids);
    }
    let sections = bare_sections(&raw);
    if let Some(sections) = &sections {
        mq_props.push((PROP_SECTIONS, PropertyRef::ByteString(sections)));
    }
    let footer = raw.section(SectionKind::Footer);
    if let Some(footer) = &footer {
        mq_props.push((PROP_FOOTER, PropertyRef::ByteString(footer)));
    }
    let properties_len = MessageProperties::borrowed_encoding_len(&mq_props)?;
    let body = match &msg.body {
        Some(Body::Data(data)) if data.len() == 1 => {
            md.format = format::NONE;
            data[0].clone()
        }
        Some(Body::Value(Value::String(s))) => {
            md.format = format::STRING;
            md.ccsid = CCSID_UTF8;
            s.as_bytes().clone()
        }
        _ => {
            md.format = FORMAT_AMQP;
            raw.section(SectionKind::Body).unwrap_or_default()
        }
    };
    let (properties, body) = if body.len() < copy_below {
        let mut buf = Vec::with_capacity(properties_len + body.len());
        MessageProperties::append_borrowed(&mq_props, &mut buf);
        buf.extend_from_slice(&body);
        split_owned(Bytes::from(buf), properties_len)
    } else {
        let mut buf = Vec::with_capacity(properties_len);
        MessageProperties::append_borrowed(&mq_props, &mut buf);
        (Bytes::from(buf), body)
    };
    Ok(MqMessage {
        md,
        properties,
        body,
        // Shares the payload's bytes (already checked as text).
        to: props
            .and_then(|p| p.to)
            .and_then(|to| Str::from_utf8(message_bytes.slice_ref(to.as_bytes())).ok()),
        to_kind: msg
            .message_annotations
            .as_deref()
            .and_then(super::destination::annotated_kind),
    })
}

/// Properties (the first `properties_len` bytes) and body (the rest) of one buffer. When
/// both are there, they share the buffer's one reference count; when one is empty, the
/// other takes the buffer as it is.
fn split_owned(whole: Bytes, properties_len: usize) -> (Bytes, Bytes) {
    if properties_len == 0 {
        return (Bytes::new(), whole);
    }
    if properties_len == whole.len() {
        return (whole, Bytes::new());
    }
    let body = whole.slice(properties_len..);
    let mut properties = whole;
    properties.truncate(properties_len);
    (properties, body)
}

/// Persistence and Priority from the header (absent: not persistent, priority 4).
fn set_header_fields(md: &mut MessageDescriptor, header: Option<&Header>) {
    let h = header.cloned().unwrap_or_default();
    md.persistence = if h.durable {
        persistence::PERSISTENT
    } else {
        persistence::NOT_PERSISTENT
    };
    md.priority = i32::from(h.priority.min(9));
}

/// Expiry in tenths of a second (at least 1) from ttl, else absolute-expiry-time.
fn expiry(header: Option<&Header>, props: Option<PropertiesRef<'_>>, now_ms: u64) -> i32 {
    let tenths = |ms: u64| i32::try_from(ms.div_ceil(100)).unwrap_or(i32::MAX).max(1);
    if let Some(ttl) = header.and_then(|h| h.ttl) {
        return tenths(ttl.into());
    }
    match props.and_then(|p| p.absolute_expiry_time) {
        Some(at) if at.0 > 0 => tenths(u64::try_from(at.0).unwrap_or(0).saturating_sub(now_ms)),
        _ => EXPIRY_UNLIMITED,
    }
}

/// The AMQP encodings of the message-id and correlation-id, kept as reserved properties
/// (one buffer for both: one allocation per message, not two).
struct EncodedIds {
    encodings: BytesMut,
    message_id: Option<Range<usize>>,
    correlation_id: Option<Range<usize>>,
}

impl EncodedIds {
    fn message_id(&self) -> Option<&[u8]> {
        self.message_id.clone().map(|r| &self.encodings[r])
    }

    fn correlation_id(&self) -> Option<&[u8]> {
        self.correlation_id.clone().map(|r| &self.encodings[r])
    }
}

/// MsgId, CorrelId, ReplyToQ and MsgType from `properties`; returns the ids' encodings.
fn set_properties_fields(md: &mut MessageDescriptor, p: &PropertiesRef<'_>) -> EncodedIds {
    let message_id = p.message_id.map(IdRef::from);
    let correlation_id = p.correlation_id.map(IdRef::from);
    let size = [message_id, correlation_id]
        .iter()
        .flatten()
        .map(IdRef::encoded_len)
        .sum();
    let mut encodings = BytesMut::with_capacity(size);
    let mut encode = |id: IdRef<'_>, mq: &mut [u8; 24]| {
        *mq = id.mq_id();
        let start = encodings.len();
        id.encode_into(&mut encodings);
        start..encodings.len()
    };
    let message_id = message_id.map(|id| encode(id, &mut md.msg_id));
    let correlation_id = correlation_id.map(|id| encode(id, &mut md.correl_id));
    if let Some(reply_to) = p.reply_to {
        md.msg_type = msg_type::REQUEST;
        if validate_object_name(reply_to).is_ok() {
            md.reply_to_q = FixedStr::truncating(reply_to);
        }
    }
    EncodedIds {
        encodings,
        message_id,
        correlation_id,
    }
}

/// The reserved properties kept from `properties`: the exact ids, reply-to and JMSType
/// (after the application properties, in this order).
fn kept_properties<'a>(
    mq_props: &mut Vec<(&'a str, PropertyRef<'a>)>,
    p: &PropertiesRef<'a>,
    ids: &'a EncodedIds,
) {
    if let Some(id) = ids.message_id() {
        mq_props.push((PROP_MESSAGE_ID, PropertyRef::ByteString(id)));
    }
    if let Some(id) = ids.correlation_id() {
        mq_props.push((PROP_CORRELATION_ID, PropertyRef::ByteString(id)));
    }
    if let Some(reply_to) = p.reply_to {
        mq_props.push((PROP_REPLY_TO, PropertyRef::String(reply_to)));
    }
    if let Some(subject) = p.subject {
        mq_props.push((PROP_JMS_TYPE, PropertyRef::String(subject)));
    }
}

/// The message-annotations, properties and application-properties sections as one
/// slice of the payload (they are adjacent: only the header and delivery-annotations
/// may precede them, only the body and footer follow).
fn bare_sections(raw: &RawSections) -> Option<Bytes> {
    let kinds = [
        SectionKind::MessageAnnotations,
        SectionKind::Properties,
        SectionKind::ApplicationProperties,
    ];
    let mut spans = kinds.iter().filter_map(|k| raw.span(*k));
    let first = spans.next()?;
    let end = spans.last().map_or(first.end, |s| s.end);
    Some(raw.payload().slice(first.start..end))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::BytesMut;
    use ferry_amqp::{MessageId, Properties, Str, Timestamp};
    use ferry_mqi::PropertyValue;

    const NOW: u64 = 1_700_000_000_000;

    fn encode(m: &Message) -> Bytes {
        let mut out = BytesMut::new();
        m.encode(&mut out);
        out.freeze()
    }

    fn header(durable: bool, priority: u8, ttl: Option<u32>) -> Option<Header> {
        Some(Header {
            durable,
            priority,
            ttl,
            delivery_count: 3,
            ..Header::default()
        })
    }

    fn map(m: &Message) -> MqMessage {
        amqp_to_mq(&encode(m), NOW).expect("maps")
    }

    #[test]
    fn no_header_is_non_persistent_priority_4_unlimited() {
        let md = map(&Message::default()).md;
        assert_eq!(md.persistence, persistence::NOT_PERSISTENT);
        assert_eq!(md.priority, 4);
        assert_eq!(md.expiry, EXPIRY_UNLIMITED);
        assert_eq!(md.backout_count, 0);
        assert_eq!(md.msg_type, msg_type::DATAGRAM);
    }

    #[test]
    fn header_sets_persistence_priority_and_expiry() {
        let md = map(&Message {
            header: header(true, 7, Some(1_001)),
            ..Message::default()
        })
        .md;
        assert_eq!(md.persistence, persistence::PERSISTENT);
        assert_eq!(md.priority, 7);
        assert_eq!(md.expiry, 11, "1001 ms rounds up to 11 tenths");
        assert_eq!(md.backout_count, 0, "delivery-count is not carried in");

        let md = map(&Message {
            header: header(false, 200, Some(1)),
            ..Message::default()
        })
        .md;
        assert_eq!(md.priority, 9);
        assert_eq!(md.expiry, 1);
    }

    #[test]
    fn absolute_expiry_is_counted_from_now() {
        let at = |t: i64| Message {
            properties: Some(Properties {
                absolute_expiry_time: Some(Timestamp(t)),
                ..Properties::default()
            }),
            ..Message::default()
        };
        assert_eq!(map(&at(NOW as i64 + 5_000)).md.expiry, 50);
        assert_eq!(map(&at(NOW as i64 - 5_000)).md.expiry, 1);
        assert_eq!(map(&at(0)).md.expiry, EXPIRY_UNLIMITED);
        // ttl wins over absolute-expiry-time.
        let both = Message {
            header: header(false, 4, Some(2_000)),
            ..at(NOW as i64 + 5_000)
        };
        assert_eq!(map(&both).md.expiry, 20);
    }

    #[test]
    fn reply_to_fills_reply_to_q_only_when_it_is_a_queue_name() {
        let with = |r: &str| Message {
            properties: Some(Properties {
                reply_to: Some(Str::from(r)),
                ..Properties::default()
            }),
            ..Message::default()
        };
        let m = map(&with("REPLY.Q"));
        assert_eq!(m.md.reply_to_q.as_str(), "REPLY.Q");
        assert_eq!(m.md.msg_type, msg_type::REQUEST);
        let odd = "queue://ID:tmp-1:1:1";
        let m = map(&with(odd));
        assert!(m.md.reply_to_q.is_blank());
        assert_eq!(
            MessageProperties::find(&m.properties, PROP_REPLY_TO),
            Some(ferry_mqi::PropertyRef::String(odd))
        );
    }

    #[test]
    fn ids_fill_msg_id_and_correl_id() {
        let m = map(&Message {
            properties: Some(Properties {
                message_id: Some(MessageId::Binary(Bytes::from_static(b"mid"))),
                correlation_id: Some(MessageId::Ulong(5)),
                ..Properties::default()
            }),
            ..Message::default()
        });
        assert_eq!(&m.md.msg_id[..4], b"mid\0");
        assert_eq!(m.md.correl_id, IdRef::Ulong(5).mq_id());
    }

    #[test]
    fn bodies_map_by_kind() {
        let body = |b: Option<Body>| {
            map(&Message {
                body: b,
                ..Message::default()
            })
        };
        let data = body(Some(Body::data(Bytes::from_static(b"\x00\x01"))));
        assert_eq!(
            (data.md.format, &data.body[..]),
            (format::NONE, &b"\x00\x01"[..])
        );
        let text = body(Some(Body::Value(Value::from("héllo"))));
        assert_eq!(text.md.format, format::STRING);
        assert_eq!(text.md.ccsid, CCSID_UTF8);
        assert_eq!(&text.body[..], "héllo".as_bytes());
        let none = body(None);
        assert_eq!((none.md.format, none.body.len()), (FORMAT_AMQP, 0));
        let null = body(Some(Body::Value(Value::Null)));
        assert_eq!(
            (null.md.format, &null.body[..]),
            (FORMAT_AMQP, &[0x00, 0x53, 0x77, 0x40][..])
        );
        let two = body(Some(Body::Data(
            vec![Bytes::from_static(b"a"), Bytes::from_static(b"b")].into(),
        )));
        assert_eq!(two.md.format, FORMAT_AMQP);
        assert_eq!(
            &two.body[..],
            &[0x00, 0x53, 0x75, 0xa0, 1, b'a', 0x00, 0x53, 0x75, 0xa0, 1, b'b']
        );
    }

    #[test]
    fn application_properties_become_mq_properties() {
        let m = map(&Message {
            application_properties: Some(vec![
                (Str::from("color"), Value::from("red")),
                (Str::from("size"), Value::Int(3)),
                (Str::from("bad-name"), Value::Int(1)),
                (Str::from("mq.forged"), Value::Int(1)),
                (Str::from("when"), Value::Timestamp(Timestamp(1))),
            ]),
            properties: Some(Properties {
                subject: Some(Str::from("order")),
                ..Properties::default()
            }),
            ..Message::default()
        });
        let p = MessageProperties::decode(&m.properties).unwrap();
        assert_eq!(p.get("color"), Some(&PropertyValue::String("red".into())));
        assert_eq!(p.get("size"), Some(&PropertyValue::Int32(3)));
        assert_eq!(
            p.get(PROP_JMS_TYPE),
            Some(&PropertyValue::String("order".into()))
        );
        assert_eq!(p.get("bad-name"), None);
        assert_eq!(p.get("mq.forged"), None);
        assert_eq!(p.get("when"), None);
    }

    #[test]
    fn malformed_input_is_a_decode_error() {
        for bad in [
            &b"\x01"[..],
            b"\x00\x53\x70\xc0\x05",
            b"\x00\x53\x99\x40",
            b"\x00\x53\x73\x45\x00\x53\x70\x45",
        ] {
            let e = amqp_to_mq(&Bytes::copy_from_slice(bad), NOW).unwrap_err();
            assert_eq!(e.condition(), "amqp:decode-error", "{bad:?}");
        }
    }
}
