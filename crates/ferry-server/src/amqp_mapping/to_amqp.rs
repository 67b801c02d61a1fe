//! MQ → AMQP: a message got from a queue as the encoded AMQP message a consumer receives.
//!
//! Every message gets a fresh header from its MQMD: durable = persistent, priority,
//! ttl = the time left (the MQMD a get returns carries the remaining Expiry), and
//! delivery-count = BackoutCount, so JMSRedelivered and JMSXDeliveryCount work.
//!
//! A message that came in over AMQP then gets its stored sections back verbatim
//! (message-annotations, properties, application-properties) and, after the body, its
//! footer. Only when a native application changed its MsgId or CorrelId (see `stored`)
//! is the properties section decoded and re-encoded with the current ids.
//!
//! A native message gets the sections Qpid JMS expects: message-annotations with
//! `x-opt-jms-msg-type` as an AMQP `byte` (5 Text for an MQSTR body, 3 Bytes otherwise;
//! Qpid fails on an int) and `x-opt-jms-reply-to` 0 (queue) when ReplyToQ is set; a
//! properties section with message-id = the MsgId as a 24-byte binary, correlation-id =
//! the CorrelId likewise when not all zeros, reply-to = ReplyToQ, subject = the JMSType
//! property, user-id = UserIdentifier, absolute-expiry-time = now + the time left,
//! creation-time = PutDate/PutTime, group-id/group-sequence from JMSXGroupID/JMSXGroupSeq
//! properties (for a message of an MQ group without them: the GroupId in hex and the
//! MsgSeqNumber); and application-properties from the other MQ properties (not the reserved
//! `mq…` and `JMS…` ones).
//!
//! Body by Format: MQSTR → amqp-value string (a data section when it is not UTF-8);
//! [`FORMAT_AMQP`] → the raw body sections as stored (a data section when they are not
//! body sections only); anything else → one data section. The sections are written
//! straight into `out` and the body is copied once.

use bytes::{Bytes, BytesMut};
use ferry_amqp::codec::{put_binary, put_described_code, put_string, Encode};
use ferry_amqp::descriptor;
use ferry_amqp::{
    condition, condition::jms_msg_type, Header, MessageId, Properties, RawSections, SectionKind,
    Str, Symbol, Timestamp, Value,
};
use ferry_mqi::descriptor::format;
use ferry_mqi::{MessageDescriptor, MessageProperties, PropertyRef};

use super::app_properties::to_amqp;
use super::put_time::put_ms;
use super::stored::{self, CurrentId, IdView, Origin};
use super::{FORMAT_AMQP, PROP_JMS_TYPE};

/// Appends the AMQP encoding of the MQ message (`md` as a get returns it, with Expiry =
/// time left) to `out`. `now_ms` (ms since the epoch) dates a native message's
/// absolute-expiry-time. Never fails: unreadable stored properties count as absent.
pub fn mq_to_amqp(
    md: &MessageDescriptor,
    properties: &[u8],
    body: &Bytes,
    out: &mut BytesMut,
    now_ms: u64,
) {
    out.reserve(body.len() + 64);
    header(md).encode(out);
    let kind = BodyKind::of(md, body);
    let origin = Origin::read(properties);
    match origin.sections {
        Some(sections) => {
            write_stored_sections(md, &origin, sections, out);
            kind.write(body, out);
            if let Some(footer) = origin.footer {
                out.extend_from_slice(footer);
            }
        }
        None => {
            let msg_type = kind.jms_msg_type(body);
            write_native_sections(md, properties, &origin, msg_type, out, now_ms);
            kind.write(body, out);
        }
    }
}

/// The header every delivery gets.
fn header(md: &MessageDescriptor) -> Header {
    let ttl_ms = (md.expiry > 0).then(|| i64::from(md.expiry) * 100);
    Header {
        durable: md.is_persistent(),
        priority: md.priority.clamp(0, 9) as u8,
        ttl: ttl_ms.map(|ms| u32::try_from(ms).unwrap_or(u32::MAX)),
        first_acquirer: false,
        delivery_count: u32::try_from(md.backout_count).unwrap_or(0),
    }
}

/// How the MQ body is written as AMQP body sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BodyKind<'a> {
    /// amqp-value string (MQSTR, valid UTF-8): the body, checked once.
    Text(&'a str),
    /// One data section.
    Bytes,
    /// The body is already AMQP body sections (Format AMQP); empty = no body.
    Raw,
}

impl<'a> BodyKind<'a> {
    fn of(md: &MessageDescriptor, body: &'a Bytes) -> Self {
        if md.format == FORMAT_AMQP && is_body_sections(body) {
            return BodyKind::Raw;
        }
        if md.format != format::STRING {
            return BodyKind::Bytes;
        }
        match std::str::from_utf8(body) {
            Ok(text) => BodyKind::Text(text),
            Err(_) => BodyKind::Bytes,
        }
    }

    fn write(self, body: &Bytes, out: &mut BytesMut) {
        match self {
            BodyKind::Raw => out.extend_from_slice(body),
            BodyKind::Text(text) => {
                put_described_code(out, descriptor::AMQP_VALUE);
                put_string(out, text);
            }
            BodyKind::Bytes => {
                put_described_code(out, descriptor::DATA);
                put_binary(out, body);
            }
        }
    }

    /// The `x-opt-jms-msg-type` of a native message with this body.
    fn jms_msg_type(self, body: &Bytes) -> Option<i8> {
        match self {
            BodyKind::Text(_) => Some(jms_msg_type::TEXT),
            BodyKind::Bytes => Some(jms_msg_type::BYTES),
            BodyKind::Raw if body.is_empty() => Some(jms_msg_type::MESSAGE),
            BodyKind::Raw => None,
        }
    }
}

/// True when `body` is nothing but well-framed AMQP body sections.
fn is_body_sections(body: &Bytes) -> bool {
    let Ok(raw) = RawSections::scan(body.clone()) else {
        return false;
    };
    raw.span(SectionKind::Body).map_or(0, |s| s.len()) == body.len()
}

/// The stored sections, verbatim unless the ids changed since they were stored.
fn write_stored_sections(
    md: &MessageDescriptor,
    origin: &Origin<'_>,
    sections: &[u8],
    out: &mut BytesMut,
) {
    let mid = origin.message_id(md);
    let cid = origin.correlation_id(md);
    if !mid.stale && !cid.stale {
        out.extend_from_slice(sections);
        return;
    }
    let Some((mut p, span)) = stored::decode_properties(sections) else {
        out.extend_from_slice(sections);
        return;
    };
    if mid.stale {
        p.message_id = owned_id(mid);
    }
    if cid.stale {
        p.correlation_id = owned_id(cid);
    }
    out.extend_from_slice(&sections[..span.start]);
    p.encode(out);
    out.extend_from_slice(&sections[span.end..]);
}

fn owned_id(id: CurrentId<'_>) -> Option<MessageId> {
    id.view.map(|v| match v {
        IdView::Amqp(id) => id.to_message_id(),
        IdView::Native(b) => MessageId::Binary(Bytes::copy_from_slice(b)),
    })
}

/// Message-annotations, properties and application-properties for a native message.
fn write_native_sections(
    md: &MessageDescriptor,
    properties: &[u8],
    origin: &Origin<'_>,
    msg_type: Option<i8>,
    out: &mut BytesMut,
    now_ms: u64,
) {
    let reply_to = md.reply_to_q.as_str();
    let mut annotations = Vec::with_capacity(2);
    if let Some(t) = msg_type {
        annotations.push((sym(condition::ANNOTATION_JMS_MSG_TYPE), Value::Byte(t)));
    }
    if !reply_to.is_empty() {
        annotations.push((sym(condition::ANNOTATION_JMS_REPLY_TO), Value::Byte(0)));
    }
    if !annotations.is_empty() {
        put_described_code(out, descriptor::MESSAGE_ANNOTATIONS);
        annotations.encode(out);
    }

    let expiry_ms = (md.expiry > 0).then(|| i64::from(md.expiry) * 100);
    let user = md.user_identifier.as_str();
    let mut p = Properties {
        message_id: owned_id(origin.message_id(md)),
        user_id: (!user.is_empty()).then(|| Bytes::copy_from_slice(user.as_bytes())),
        reply_to: (!reply_to.is_empty()).then(|| Str::from(reply_to)),
        correlation_id: owned_id(origin.correlation_id(md)),
        absolute_expiry_time: expiry_ms
            .map(|ms| Timestamp(i64::try_from(now_ms).unwrap_or(i64::MAX).saturating_add(ms))),
        creation_time: put_ms(md).map(Timestamp),
        ..Properties::default()
    };
    let mut app = Vec::new();
    for entry in MessageProperties::entries(properties) {
        let Ok((name, value)) = entry else { break };
        match (name, value) {
            (PROP_JMS_TYPE, PropertyRef::String(s)) => p.subject = Some(Str::from(s)),
            ("JMSXGroupID", PropertyRef::String(s)) => p.group_id = Some(Str::from(s)),
            ("JMSXGroupSeq", PropertyRef::Int32(n)) => p.group_sequence = u32::try_from(n).ok(),
            _ if is_reserved(name) => {}
            _ => app.push((Str::from(name), to_amqp(value))),
        }
    }
    if p.group_id.is_none() && md.is_grouped() {
        // An MQ group: its GroupId in hex and the message's MsgSeqNumber.
        p.group_id = Some(Str::from(hex(&md.group_id).as_str()));
        p.group_sequence = u32::try_from(md.msg_seq_number).ok();
    }
    p.encode(out);
    if !app.is_empty() {
        put_described_code(out, descriptor::APPLICATION_PROPERTIES);
        app.encode(out);
    }
}

/// `bytes` as lower-case hex digits.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Names an application may not set: the queue manager's `mq…` and the JMS headers
/// (`JMS…` other than `JMSX…` and vendor `JMS_…`).
fn is_reserved(name: &str) -> bool {
    let b = name.as_bytes();
    (b.len() >= 2 && b[..2].eq_ignore_ascii_case(b"mq"))
        || (name.starts_with("JMS") && !name.starts_with("JMSX") && !name.starts_with("JMS_"))
}

fn sym(s: &str) -> Value {
    Value::Symbol(Symbol::from(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_amqp::{Body, Message};
    use ferry_mqi::descriptor::persistence;
    use ferry_mqi::{FixedStr, PropertyValue};

    const NOW: u64 = 1_700_000_000_000;

    fn deliver(md: &MessageDescriptor, props: &[u8], body: &[u8]) -> Message {
        let mut out = BytesMut::new();
        mq_to_amqp(md, props, &Bytes::copy_from_slice(body), &mut out, NOW);
        Message::decode(out.freeze()).expect("decodes")
    }

    fn native(format: FixedStr<8>) -> MessageDescriptor {
        MessageDescriptor {
            format,
            persistence: persistence::PERSISTENT,
            priority: 6,
            expiry: 25,
            backout_count: 2,
            msg_id: [0xab; 24],
            correl_id: [0; 24],
            reply_to_q: FixedStr::truncating("REPLY.Q"),
            put_date: FixedStr::truncating("20240229"),
            put_time: FixedStr::truncating("13450789"),
            ..MessageDescriptor::default()
        }
    }

    #[test]
    fn header_carries_persistence_priority_ttl_and_backouts() {
        let m = deliver(&native(format::NONE), &[], b"x");
        let h = m.header.expect("header");
        assert!(h.durable);
        assert_eq!((h.priority, h.ttl, h.delivery_count), (6, Some(2_500), 2));
        let unlimited = MessageDescriptor {
            expiry: -1,
            backout_count: 0,
            ..native(format::NONE)
        };
        assert_eq!(deliver(&unlimited, &[], b"").header.unwrap().ttl, None);
    }

    #[test]
    fn native_mqstr_is_a_text_message_with_a_byte_type() {
        let m = deliver(&native(format::STRING), &[], "héllo".as_bytes());
        assert_eq!(
            m.message_annotation(condition::ANNOTATION_JMS_MSG_TYPE),
            Some(&Value::Byte(jms_msg_type::TEXT))
        );
        assert_eq!(m.body, Some(Body::Value(Value::from("héllo"))));
        let p = m.properties.expect("properties");
        assert_eq!(
            p.message_id,
            Some(MessageId::Binary(Bytes::from(vec![0xab; 24])))
        );
        assert_eq!(p.correlation_id, None, "an all-zero CorrelId is no id");
        assert_eq!(p.reply_to.as_ref().map(Str::as_str), Some("REPLY.Q"));
        assert_eq!(p.creation_time, Some(Timestamp(1_709_214_307_890)));
        assert_eq!(p.absolute_expiry_time, Some(Timestamp(NOW as i64 + 2_500)));
    }

    #[test]
    fn native_bytes_and_bad_utf8_text_are_bytes_messages() {
        for (fmt, body) in [(format::NONE, &b"\xff\x00"[..]), (format::STRING, b"\xff")] {
            let md = MessageDescriptor {
                correl_id: [1; 24],
                ..native(fmt)
            };
            let m = deliver(&md, &[], body);
            let raw = {
                let mut out = BytesMut::new();
                mq_to_amqp(&md, &[], &Bytes::copy_from_slice(body), &mut out, NOW);
                out
            };
            // x-opt-jms-msg-type is encoded as an AMQP byte: 0x51 0x03.
            assert!(raw.windows(2).any(|w| w == [0x51, 0x03]));
            assert_eq!(
                m.message_annotation(condition::ANNOTATION_JMS_MSG_TYPE),
                Some(&Value::Byte(jms_msg_type::BYTES))
            );
            assert_eq!(m.body, Some(Body::data(Bytes::copy_from_slice(body))));
            assert_eq!(
                m.properties.unwrap().correlation_id,
                Some(MessageId::Binary(Bytes::from(vec![1; 24])))
            );
        }
    }

    #[test]
    fn native_properties_become_application_properties() {
        let mut p = MessageProperties::new();
        p.set("color", PropertyValue::String("red".into())).unwrap();
        p.set("n", PropertyValue::Int64(-5)).unwrap();
        p.set("JMSXGroupID", PropertyValue::String("g".into()))
            .unwrap();
        p.set_reserved("JMSType", PropertyValue::String("order".into()))
            .unwrap();
        p.set_reserved("mq.internal", PropertyValue::Int8(1))
            .unwrap();
        let m = deliver(&native(format::NONE), &p.encode(), b"");
        assert_eq!(
            m.application_properties,
            Some(vec![
                (Str::from("color"), Value::from("red")),
                (Str::from("n"), Value::Long(-5)),
            ])
        );
        let props = m.properties.unwrap();
        assert_eq!(props.subject.as_ref().map(Str::as_str), Some("order"));
        assert_eq!(props.group_id.as_ref().map(Str::as_str), Some("g"));
    }

    #[test]
    fn an_mq_group_becomes_group_id_and_group_sequence() {
        let md = MessageDescriptor {
            group_id: [0xab; 24],
            msg_seq_number: 3,
            msg_flags: ferry_mqi::descriptor::msg_flags::MSG_IN_GROUP,
            ..native(format::NONE)
        };
        let props = deliver(&md, &[], b"").properties.unwrap();
        assert_eq!(
            props.group_id.as_ref().map(Str::as_str),
            Some("ab".repeat(24).as_str())
        );
        assert_eq!(props.group_sequence, Some(3));
        let alone = deliver(&native(format::NONE), &[], b"").properties.unwrap();
        assert_eq!((alone.group_id, alone.group_sequence), (None, None));
    }

    #[test]
    fn foreign_format_amqp_bytes_fall_back_to_data() {
        let md = native(FORMAT_AMQP);
        let m = deliver(&md, &[], b"not sections");
        assert_eq!(
            m.body,
            Some(Body::data(Bytes::from_static(b"not sections")))
        );
    }
}
