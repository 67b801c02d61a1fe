//! End-to-end checks of the mapping: AMQP → MQ → AMQP round trips for what Qpid JMS
//! sends, ids of every type against selector lookups, native replies, selectors over
//! headers and properties, and malformed input.

use bytes::{Bytes, BytesMut};
use ferry_amqp::condition::{self, jms_msg_type};
use ferry_amqp::{
    Body, Header, Message, MessageId, Properties, RawSections, SectionKind, Str, Symbol, Timestamp,
    Value,
};
use ferry_engine::MessageFilter;
use ferry_mqi::descriptor::{format, persistence, NONE_ID};
use ferry_mqi::MessageDescriptor;
use proptest::prelude::*;

use super::*;

const NOW: u64 = 1_700_000_000_000;
const QPID_ID: &str = "ID:9f1c2e3d-4b5a-6978-8695-a4b3c2d1e0f9:1:1:1-1";
const UUID: [u8; 16] = [
    0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
];

fn sym(s: &str) -> Value {
    Value::Symbol(Symbol::from(s))
}

/// A message as Qpid JMS sends it: header, annotations, properties, user properties.
fn qpid(msg_type: i8, body: Option<Body>) -> Message {
    Message {
        header: Some(Header {
            durable: true,
            priority: 7,
            ttl: Some(60_000),
            ..Header::default()
        }),
        delivery_annotations: Some(vec![(sym("x-opt-hop"), Value::Int(1))]),
        message_annotations: Some(vec![
            (
                sym(condition::ANNOTATION_JMS_MSG_TYPE),
                Value::Byte(msg_type),
            ),
            (sym(condition::ANNOTATION_JMS_DEST), Value::Byte(0)),
        ]),
        properties: Some(Properties {
            message_id: Some(MessageId::String(Str::from(QPID_ID))),
            to: Some(Str::from("ORDERS")),
            subject: Some(Str::from("order")),
            reply_to: Some(Str::from("REPLY.Q")),
            creation_time: Some(Timestamp(NOW as i64 - 5)),
            absolute_expiry_time: Some(Timestamp(NOW as i64 + 59_995)),
            ..Properties::default()
        }),
        application_properties: Some(vec![
            (Str::from("color"), Value::from("red")),
            (Str::from("n"), Value::Int(3)),
            (Str::from("ratio"), Value::Double(0.5)),
        ]),
        body,
        footer: None,
    }
}

fn encode(m: &Message) -> Bytes {
    let mut out = BytesMut::new();
    m.encode(&mut out);
    out.freeze()
}

/// Puts through the mapping, then "stores" it as the engine would (keeping MsgId when
/// set, generating one otherwise) and delivers it.
fn round_trip(input: &Bytes) -> (MqMessage, Bytes) {
    let mut mq = amqp_to_mq(input, NOW).expect("maps to MQ");
    if mq.md.msg_id == NONE_ID {
        mq.md.msg_id = [0x5a; 24];
    }
    let mut out = BytesMut::new();
    mq_to_amqp(&mq.md, &mq.properties, &mq.body, &mut out, NOW);
    (mq, out.freeze())
}

fn assert_bare_message_exact(input: &Bytes, output: &Bytes) {
    let a = RawSections::scan(input.clone()).unwrap();
    let b = RawSections::scan(output.clone()).unwrap();
    for kind in [
        SectionKind::MessageAnnotations,
        SectionKind::Properties,
        SectionKind::ApplicationProperties,
        SectionKind::Body,
        SectionKind::Footer,
    ] {
        assert_eq!(a.section(kind), b.section(kind), "{kind:?} differs");
    }
    assert_eq!(b.section(SectionKind::DeliveryAnnotations), None);
}

#[test]
fn qpid_message_types_round_trip_byte_exact() {
    let map = Value::Map(vec![
        (Value::from("a"), Value::Int(1)),
        (
            Value::from("b"),
            Value::Binary(Bytes::from_static(b"\x00\x01")),
        ),
    ]);
    let cases = [
        (
            jms_msg_type::TEXT,
            Some(Body::Value(Value::from("hello, wörld"))),
            format::STRING,
        ),
        (
            jms_msg_type::TEXT,
            Some(Body::Value(Value::Null)),
            FORMAT_AMQP,
        ),
        (
            jms_msg_type::BYTES,
            Some(Body::data(Bytes::from_static(b"\x00\xff"))),
            format::NONE,
        ),
        (
            jms_msg_type::BYTES,
            Some(Body::data(Bytes::new())),
            format::NONE,
        ),
        (jms_msg_type::MAP, Some(Body::Value(map)), FORMAT_AMQP),
        (
            jms_msg_type::STREAM,
            Some(Body::Sequence(vec![vec![
                Value::Long(1),
                Value::from("two"),
                Value::Bool(true),
            ]])),
            FORMAT_AMQP,
        ),
        (jms_msg_type::MESSAGE, None, FORMAT_AMQP),
    ];
    for (t, body, fmt) in cases {
        let mut msg = qpid(t, body);
        let input = encode(&msg);
        let (mq, output) = round_trip(&input);
        assert_eq!(mq.md.format, fmt, "type {t}");
        assert_bare_message_exact(&input, &output);
        // The header is rebuilt from the MQMD: same values, delivery-count from backouts.
        msg.delivery_annotations = None;
        let back = Message::decode(output).unwrap();
        assert_eq!(
            back.header.as_ref().map(|h| (h.durable, h.priority)),
            Some((true, 7))
        );
        assert_eq!(back.header.and_then(|h| h.ttl), Some(60_000));
        assert_eq!(back.properties, msg.properties);
        assert_eq!(back.body, msg.body);
    }
}

#[test]
fn footer_round_trips_and_native_readers_see_plain_bytes() {
    let mut msg = qpid(
        jms_msg_type::BYTES,
        Some(Body::data(Bytes::from_static(b"abc"))),
    );
    msg.footer = Some(vec![(
        sym("x-sig"),
        Value::Binary(Bytes::from_static(b"s")),
    )]);
    let input = encode(&msg);
    let (mq, output) = round_trip(&input);
    assert_eq!(&mq.body[..], b"abc");
    assert_bare_message_exact(&input, &output);
}

#[test]
fn redelivery_shows_in_delivery_count() {
    let input = encode(&qpid(
        jms_msg_type::TEXT,
        Some(Body::Value(Value::from("x"))),
    ));
    let mut mq = amqp_to_mq(&input, NOW).unwrap();
    mq.md.backout_count = 2;
    let mut out = BytesMut::new();
    mq_to_amqp(&mq.md, &mq.properties, &mq.body, &mut out, NOW);
    assert_eq!(
        Message::decode(out.freeze())
            .unwrap()
            .header
            .unwrap()
            .delivery_count,
        2
    );
}

fn all_ids() -> Vec<MessageId> {
    vec![
        MessageId::String(Str::from(QPID_ID)),
        MessageId::String(Str::from("app-corr-7")),
        MessageId::Uuid(UUID),
        MessageId::Ulong(42),
        MessageId::Binary(Bytes::from_static(b"short-binary")),
        MessageId::Binary(Bytes::from(vec![0xee; 24])),
        MessageId::Binary(Bytes::from((0..40u8).collect::<Vec<_>>())),
    ]
}

fn with_ids(mid: &MessageId, cid: &MessageId) -> Message {
    let mut m = qpid(jms_msg_type::TEXT, Some(Body::Value(Value::from("req"))));
    let p = m.properties.as_mut().unwrap();
    p.message_id = Some(mid.clone());
    p.correlation_id = Some(cid.clone());
    m
}

fn select(text: &str) -> JmsSelection {
    JmsSelection::parse(text)
        .expect("parses")
        .expect("not blank")
}

#[test]
fn ids_of_every_type_round_trip_and_match_their_selector_literals() {
    for id in all_ids() {
        let input = encode(&with_ids(&id, &id));
        let (mq, output) = round_trip(&input);
        let back = Message::decode(output).unwrap().properties.unwrap();
        assert_eq!(back.message_id.as_ref(), Some(&id));
        assert_eq!(back.correlation_id.as_ref(), Some(&id));

        let mid_text = jms_message_id(IdRef::of(&id)).into_owned();
        let by_mid = select(&format!("JMSMessageID = '{mid_text}'"));
        assert_eq!(by_mid.message_lookup(), Some(mq.md.msg_id), "{mid_text}");
        assert!(by_mid.matches(&mq.md, &mq.properties), "{mid_text}");

        let cid_text = jms_correlation_id(IdRef::of(&id)).into_owned();
        let by_cid = select(&format!(
            "JMSCorrelationID = '{cid_text}' AND color = 'red'"
        ));
        assert_eq!(
            by_cid.correlation_lookup(),
            Some(mq.md.correl_id),
            "{cid_text}"
        );
        assert!(by_cid.matches(&mq.md, &mq.properties), "{cid_text}");
    }
}

/// `JMSCorrelationID = 'x'` alone is decided without evaluating the selector when the
/// message's id is the one `'x'` denotes: the answer must be the full evaluation's for
/// every id type against every literal (the same selector ANDed with a true term is
/// always evaluated).
#[test]
fn a_correlation_id_selector_alone_agrees_with_its_full_evaluation() {
    let ids = all_ids();
    let mut messages: Vec<(String, MessageDescriptor, Vec<u8>)> = Vec::new();
    for stored in &ids {
        let mq = amqp_to_mq(&encode(&with_ids(stored, stored)), NOW).unwrap();
        messages.push((format!("{stored:?}"), mq.md, mq.properties.to_vec()));
        for other in &ids {
            // Re-put natively with another CorrelId: the stored id is stale.
            let mut md = mq.md;
            md.correl_id = mq_id(other);
            let label = format!("{stored:?} re-put as {other:?}");
            messages.push((label, md, mq.properties.to_vec()));
        }
        // A native message carrying this id's CorrelId, no AMQP id stored.
        let native = MessageDescriptor {
            correl_id: mq_id(stored),
            ..MessageDescriptor::default()
        };
        messages.push((format!("native {stored:?}"), native, Vec::new()));
        // A stored correlation-id that does not decode, under this id's CorrelId.
        let garbled = ferry_mqi::MessageProperties::encode_borrowed(&[(
            PROP_CORRELATION_ID,
            ferry_mqi::PropertyRef::ByteString(b"\xff\x01"),
        )])
        .unwrap();
        messages.push((format!("garbled {stored:?}"), native, garbled.to_vec()));
    }
    // A native message without a CorrelId (all zeros).
    messages.push((
        "no CorrelId".into(),
        MessageDescriptor::default(),
        Vec::new(),
    ));
    // Every id in Qpid's spelling and in MQ JMS's (`ID:` + 48 hex digits), and literals
    // that denote the all-zero CorrelId.
    let mut literals: Vec<String> = ids
        .iter()
        .flat_map(|id| {
            [
                jms_correlation_id(IdRef::of(id)).into_owned(),
                native_jms_id(&mq_id(id)),
            ]
        })
        .collect();
    literals.push("ID:AMQP_BINARY:".into());
    literals.push(native_jms_id(&NONE_ID));
    for (label, md, properties) in &messages {
        for text in &literals {
            let quoted = text.replace('\'', "''");
            let alone = select(&format!("JMSCorrelationID = '{quoted}'"));
            let full = select(&format!("JMSCorrelationID = '{quoted}' AND 1 = 1"));
            assert_eq!(
                alone.matches(md, properties),
                full.matches(md, properties),
                "{label}, selector literal {text}"
            );
        }
    }
    // And each id's own selector does select it.
    for stored in &ids {
        let mq = amqp_to_mq(&encode(&with_ids(stored, stored)), NOW).unwrap();
        let text = jms_correlation_id(IdRef::of(stored)).into_owned();
        let alone = select(&format!(
            "JMSCorrelationID = '{}'",
            text.replace('\'', "''")
        ));
        assert!(alone.matches(&mq.md, &mq.properties), "{text}");
    }
}

#[test]
fn the_filter_confirms_the_exact_id_on_index_candidates() {
    // Binary "ab" and "ab\0" share a padded CorrelId but are different AMQP ids.
    let stored = MessageId::Binary(Bytes::from_static(b"ab\0"));
    let mq = amqp_to_mq(&encode(&with_ids(&stored, &stored)), NOW).unwrap();
    let s = select("JMSCorrelationID = 'ID:AMQP_BINARY:6162'");
    assert_eq!(s.correlation_lookup(), Some(mq.md.correl_id));
    assert!(!s.matches(&mq.md, &mq.properties));
    // A string id is not the binary id with the same bytes.
    let s = select("JMSCorrelationID = 'ab'");
    assert!(!s.matches(&mq.md, &mq.properties));
}

#[test]
fn native_replies_match_the_requests_jms_id() {
    let request = amqp_to_mq(&encode(&qpid(jms_msg_type::TEXT, None)), NOW).unwrap();
    // A native responder copies the request's MsgId into the reply's CorrelId.
    let reply = MessageDescriptor {
        correl_id: request.md.msg_id,
        msg_id: [3; 24],
        format: format::STRING,
        ..MessageDescriptor::default()
    };
    let s = select(&format!("JMSCorrelationID = '{QPID_ID}'"));
    assert_eq!(s.correlation_lookup(), Some(reply.correl_id));
    assert!(s.matches(&reply, &[]));
    let other = MessageDescriptor {
        correl_id: [9; 24],
        ..reply
    };
    assert!(!s.matches(&other, &[]));

    // A native id is `ID:<48 hex>` to MQ JMS and `ID:AMQP_BINARY:<HEX>` to Qpid.
    let native = MessageDescriptor {
        correl_id: [0xc1; 24],
        ..reply
    };
    for text in [
        native_jms_id(&[0xc1; 24]),
        format!("ID:AMQP_BINARY:{}", "C1".repeat(24)),
    ] {
        let s = select(&format!("JMSCorrelationID = '{text}'"));
        assert_eq!(s.correlation_lookup(), Some([0xc1; 24]), "{text}");
        assert!(s.matches(&native, &[]), "{text}");
    }
    let s = select(&format!("JMSCorrelationID LIKE 'ID:{}%'", "c1".repeat(4)));
    assert!(s.matches(&native, &[]));
}

#[test]
fn a_native_re_put_with_a_new_msg_id_shows_the_new_id() {
    let input = encode(&qpid(
        jms_msg_type::TEXT,
        Some(Body::Value(Value::from("x"))),
    ));
    let mut mq = amqp_to_mq(&input, NOW).unwrap();
    mq.md.msg_id = [0x77; 24];
    let mut out = BytesMut::new();
    mq_to_amqp(&mq.md, &mq.properties, &mq.body, &mut out, NOW);
    let out = out.freeze();
    let back = Message::decode(out.clone()).unwrap();
    let mut want = qpid(jms_msg_type::TEXT, None).properties.unwrap();
    want.message_id = Some(MessageId::Binary(Bytes::from(vec![0x77; 24])));
    assert_eq!(back.properties, Some(want));
    let (a, b) = (
        RawSections::scan(input).unwrap(),
        RawSections::scan(out).unwrap(),
    );
    for kind in [
        SectionKind::MessageAnnotations,
        SectionKind::ApplicationProperties,
    ] {
        assert_eq!(a.section(kind), b.section(kind));
    }
    assert!(
        select(&format!("JMSMessageID = '{}'", native_jms_id(&[0x77; 24])))
            .matches(&mq.md, &mq.properties)
    );
    assert!(!select(&format!("JMSMessageID = '{QPID_ID}'")).matches(&mq.md, &mq.properties));
}

#[test]
fn selectors_read_headers_and_application_properties() {
    let input = encode(&qpid(
        jms_msg_type::TEXT,
        Some(Body::Value(Value::from("x"))),
    ));
    let mut mq = amqp_to_mq(&input, NOW).unwrap();
    mq.md.backout_count = 1;
    let yes = [
        "JMSPriority = 7",
        "JMSDeliveryMode = 'PERSISTENT'",
        "JMSType = 'order'",
        "color = 'red' AND n > 2 AND ratio < 1",
        "JMSRedelivered = TRUE AND JMSXDeliveryCount = 2",
        &format!("JMSTimestamp = {}", NOW - 5),
        &format!("JMSExpiration = {}", NOW + 59_995),
        &format!("JMSMessageID = '{QPID_ID}'"),
        "JMSCorrelationID IS NULL",
        "missing IS NULL",
    ];
    for text in yes {
        assert!(select(text).matches(&mq.md, &mq.properties), "{text}");
    }
    let no = [
        "JMSPriority < 5",
        "JMSDeliveryMode = 'NON_PERSISTENT'",
        "color = 'blue'",
        "n > 3",
        "missing = 1",
    ];
    for text in no {
        assert!(!select(text).matches(&mq.md, &mq.properties), "{text}");
    }
}

#[test]
fn native_headers_come_from_the_mqmd() {
    let md = MessageDescriptor {
        persistence: persistence::NOT_PERSISTENT,
        priority: 2,
        expiry: 100,
        put_date: ferry_mqi::FixedStr::truncating("19700101"),
        put_time: ferry_mqi::FixedStr::truncating("00000100"),
        msg_id: [1; 24],
        ..MessageDescriptor::default()
    };
    for text in [
        "JMSDeliveryMode = 'NON_PERSISTENT' AND JMSPriority = 2",
        "JMSTimestamp = 1000 AND JMSExpiration = 11000",
        "JMSType IS NULL AND JMSCorrelationID IS NULL AND JMSRedelivered = FALSE",
        &format!("JMSMessageID = '{}'", native_jms_id(&[1; 24])),
    ] {
        assert!(select(text).matches(&md, &[]), "{text}");
    }
}

#[test]
fn blank_selectors_are_none_and_bad_ones_errors() {
    assert!(JmsSelection::parse("").unwrap().is_none());
    assert!(JmsSelection::parse("  \t ").unwrap().is_none());
    assert!(JmsSelection::parse("color = ").is_err());
    let s = select("color = 'red'");
    assert_eq!((s.correlation_lookup(), s.message_lookup()), (None, None));
}

#[test]
fn malformed_messages_are_decode_errors() {
    let good = encode(&qpid(
        jms_msg_type::TEXT,
        Some(Body::Value(Value::from("hello"))),
    ));
    for cut in 1..good.len() {
        if let Err(e) = amqp_to_mq(&good.slice(..cut), NOW) {
            assert_eq!(e.condition(), condition::DECODE_ERROR);
        }
    }
    assert!(amqp_to_mq(&good.slice(..good.len() - 1), NOW).is_err());
    assert!(amqp_to_mq(&Bytes::from_static(b"\xff\xff"), NOW).is_err());
}

proptest! {
    #[test]
    fn arbitrary_input_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = amqp_to_mq(&Bytes::from(bytes), NOW);
    }

    #[test]
    fn corrupted_messages_never_panic(flip in 0usize..400, to in any::<u8>()) {
        let good = encode(&qpid(jms_msg_type::TEXT, Some(Body::Value(Value::from("hello")))));
        let mut bad = good.to_vec();
        let i = flip % bad.len();
        bad[i] = to;
        if let Ok(mq) = amqp_to_mq(&Bytes::from(bad), NOW) {
            let mut out = BytesMut::new();
            mq_to_amqp(&mq.md, &mq.properties, &mq.body, &mut out, NOW);
            prop_assert!(Message::decode(out.freeze()).is_ok());
        }
    }

    #[test]
    fn any_stored_message_delivers_and_filters_without_panic(
        props in proptest::collection::vec(any::<u8>(), 0..96),
        body in proptest::collection::vec(any::<u8>(), 0..32),
        amqp_format in any::<bool>(),
    ) {
        let md = MessageDescriptor {
            format: if amqp_format { FORMAT_AMQP } else { format::STRING },
            ..MessageDescriptor::default()
        };
        let mut out = BytesMut::new();
        mq_to_amqp(&md, &props, &Bytes::from(body), &mut out, NOW);
        let s = select("JMSCorrelationID = 'x' OR JMSType = 'y' OR JMSTimestamp > 0 OR a = 1");
        let _ = s.matches(&md, &props);
    }
}

#[test]
fn a_compact_message_owns_one_buffer_and_maps_as_the_shared_one() {
    let body = Bytes::from(vec![0xab; 2048]);
    let with_props = encode(&qpid(jms_msg_type::BYTES, Some(Body::data(body.clone()))));
    let no_props = encode(&Message {
        body: Some(Body::data(body.clone())),
        ..Message::default()
    });
    let within = |b: &Bytes, input: &Bytes| {
        let range = input.as_ptr_range();
        range.contains(&b.as_ptr())
    };
    for input in [&with_props, &no_props] {
        let shared = amqp_to_mq(input, NOW).unwrap();
        let compact = amqp_to_mq_compact(input, NOW, 16 * 1024).unwrap();
        assert_eq!(compact, shared, "same message either way");
        assert_eq!(compact.body, body);
        // The shared mapping's body is the payload's; the compact one is a copy, right
        // after the properties in one buffer.
        assert!(within(&shared.body, input));
        assert!(!within(&compact.body, input));
        assert!(!within(&compact.properties, input));
        if !compact.properties.is_empty() {
            let end = compact.properties.as_ptr_range().end;
            assert_eq!(
                end,
                compact.body.as_ptr(),
                "properties then body, one buffer"
            );
        }
        // At or over the limit, the body is the payload's.
        let large = amqp_to_mq_compact(input, NOW, 2048).unwrap();
        assert!(within(&large.body, input));
        assert_eq!(large, shared);
    }
}
