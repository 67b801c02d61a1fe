//! Every performative, composite and message section survives encode → decode, both as
//! a value and inside a frame, and absent fields read back as the spec defaults.

use bytes::{Bytes, BytesMut};
use ferry_amqp::codec::{from_bytes, from_value, to_bytes, to_value};
use ferry_amqp::*;

fn sym(s: &str) -> Symbol {
    Symbol::from(s)
}

fn error() -> ErrorCondition {
    ErrorCondition {
        condition: Symbol::from_static(condition::INVALID_FIELD),
        description: Some("duplicate client id".into()),
        info: vec![(sym("invalid-field"), Value::Symbol(sym("container-id")))],
    }
}

fn source() -> Source {
    Source {
        address: Some("APP.Q".into()),
        durable: TerminusDurability::UnsettledState,
        expiry_policy: ExpiryPolicy::Never,
        timeout: 30,
        dynamic: true,
        dynamic_node_properties: vec![(
            sym("lifetime-policy"),
            Value::described(
                Descriptor::Code(descriptor::DELETE_ON_CLOSE),
                Value::List(vec![]),
            ),
        )],
        distribution_mode: Some(sym("copy")),
        filter: vec![(
            sym(condition::FILTER_KEY_JMS_SELECTOR),
            Value::described(
                Descriptor::Code(condition::SELECTOR_FILTER_CODE),
                Value::from("color = 'red'"),
            ),
        )],
        default_outcome: Some(DeliveryState::Modified {
            delivery_failed: true,
            undeliverable_here: false,
            message_annotations: vec![],
        }),
        outcomes: ["amqp:accepted:list", "amqp:rejected:list"]
            .map(sym)
            .to_vec(),
        capabilities: vec![sym("queue")],
    }
}

fn performatives() -> Vec<Performative> {
    let mut open = Open::new("ID:abc:1");
    open.hostname = Some("localhost".into());
    open.max_frame_size = 1 << 20;
    open.channel_max = 32767;
    open.idle_time_out = Some(60_000);
    open.offered_capabilities = vec![sym("ANONYMOUS-RELAY")];
    open.desired_capabilities = vec![sym("SHARED-SUBS"), sym("DELAYED_DELIVERY")];
    open.properties = vec![(sym("product"), Value::from("QpidJMS"))];
    vec![
        Performative::Open(open),
        Performative::Open(Open::new("x")),
        Performative::Begin(Begin {
            remote_channel: Some(3),
            next_outgoing_id: 1,
            incoming_window: 2048,
            outgoing_window: u32::MAX,
            handle_max: 1023,
            offered_capabilities: vec![],
            desired_capabilities: vec![],
            properties: vec![],
        }),
        Performative::Attach(Box::new(Attach {
            name: "qpid-jms:receiver:ID:1:APP.Q".into(),
            handle: 7,
            role: Role::Receiver,
            snd_settle_mode: SenderSettleMode::Unsettled,
            rcv_settle_mode: ReceiverSettleMode::First,
            source: Some(source()),
            target: Some(LinkTarget::Node(Target {
                address: None,
                capabilities: vec![sym("temporary-queue")],
                ..Target::default()
            })),
            unsettled: vec![(Value::Binary(Bytes::from_static(b"t1")), Value::Null)],
            incomplete_unsettled: true,
            initial_delivery_count: Some(0),
            max_message_size: Some(100 << 20),
            offered_capabilities: vec![sym("SHARED-SUBS")],
            desired_capabilities: vec![],
            properties: vec![],
        })),
        Performative::Attach(Box::new(Attach {
            name: "txn".into(),
            role: Role::Sender,
            target: Some(LinkTarget::Coordinator(Coordinator {
                capabilities: vec![sym(condition::CAPABILITY_LOCAL_TRANSACTIONS)],
            })),
            ..Attach::default()
        })),
        Performative::Flow(Flow {
            next_incoming_id: Some(5),
            incoming_window: 100,
            next_outgoing_id: 9,
            outgoing_window: 100,
            handle: Some(1),
            delivery_count: Some(10),
            link_credit: Some(1000),
            available: Some(0),
            drain: true,
            echo: true,
            properties: vec![],
        }),
        Performative::Transfer(Transfer {
            handle: 1,
            delivery_id: Some(70_000),
            delivery_tag: Some(Bytes::from_static(&[0, 0, 0, 1])),
            message_format: Some(0),
            settled: Some(true),
            more: true,
            rcv_settle_mode: Some(ReceiverSettleMode::Second),
            state: Some(DeliveryState::Transactional {
                txn_id: Bytes::from_static(b"tx-1"),
                outcome: Some(Box::new(DeliveryState::Accepted)),
            }),
            resume: true,
            aborted: true,
            batchable: true,
        }),
        Performative::Disposition(Disposition {
            role: Role::Receiver,
            first: 4,
            last: Some(9),
            settled: true,
            state: Some(DeliveryState::Rejected {
                error: Some(error()),
            }),
            batchable: false,
        }),
        Performative::Disposition(Disposition {
            state: Some(DeliveryState::Received {
                section_number: 2,
                section_offset: 77,
            }),
            ..Disposition::default()
        }),
        Performative::Disposition(Disposition {
            state: Some(DeliveryState::Declared {
                txn_id: Bytes::from_static(b"tx-9"),
            }),
            ..Disposition::default()
        }),
        Performative::Disposition(Disposition {
            state: Some(DeliveryState::Released),
            ..Disposition::default()
        }),
        Performative::Detach(Detach {
            handle: 7,
            closed: true,
            error: Some(ErrorCondition::new(condition::NOT_FOUND, "no such queue")),
        }),
        Performative::End(End { error: None }),
        Performative::Close(Close {
            error: Some(error()),
        }),
        Performative::SaslMechanisms(SaslMechanisms {
            mechanisms: vec![sym("PLAIN"), sym("ANONYMOUS")],
        }),
        Performative::SaslInit(SaslInit {
            mechanism: sym("PLAIN"),
            initial_response: Some(Bytes::from_static(b"\0app\0pw")),
            hostname: Some("localhost".into()),
        }),
        Performative::SaslChallenge(SaslChallenge {
            challenge: Bytes::from_static(b"nonce"),
        }),
        Performative::SaslResponse(SaslResponse {
            response: Bytes::from_static(b"proof"),
        }),
        Performative::SaslOutcome(SaslOutcome {
            code: SaslCode::Auth,
            additional_data: None,
        }),
    ]
}

#[test]
fn every_performative_round_trips_through_a_frame() {
    let mut wire = BytesMut::new();
    for (i, p) in performatives().iter().enumerate() {
        encode_frame(i as u16, p, &[], &mut wire);
    }
    let mut dec = FrameDecoder::new(1 << 20);
    for (i, p) in performatives().into_iter().enumerate() {
        let frame = dec.decode(&mut wire).unwrap().unwrap();
        assert_eq!(frame.channel, i as u16);
        let expected_type = if p.is_sasl() {
            FrameType::Sasl
        } else {
            FrameType::Amqp
        };
        assert_eq!(frame.frame_type, expected_type);
        assert_eq!(frame.performative.as_ref(), Some(&p), "{}", p.name());
    }
    assert!(wire.is_empty());
}

#[test]
fn absent_fields_decode_to_spec_defaults() {
    // open with only a container-id.
    let open: Open = from_bytes(Bytes::from_static(&[
        0x00, 0x53, 0x10, 0xc0, 4, 1, 0xa1, 1, b'c',
    ]))
    .unwrap();
    assert_eq!(open.max_frame_size, 4_294_967_295);
    assert_eq!(open.channel_max, 65535);
    assert_eq!(open.idle_time_out, None);
    // attach with name, handle, role only.
    let attach: Attach = from_bytes(Bytes::from_static(&[
        0x00, 0x53, 0x12, 0xc0, 6, 3, 0xa1, 1, b'n', 0x43, 0x42,
    ]))
    .unwrap();
    assert_eq!(attach.snd_settle_mode, SenderSettleMode::Mixed);
    assert_eq!(attach.rcv_settle_mode, ReceiverSettleMode::First);
    assert_eq!(attach.role, Role::Sender);
    // an empty source: session-end expiry, no durability.
    let s: Source = from_bytes(Bytes::from_static(&[0x00, 0x53, 0x28, 0x45])).unwrap();
    assert_eq!(
        (s.expiry_policy, s.durable),
        (ExpiryPolicy::SessionEnd, TerminusDurability::None)
    );
    // an empty header: priority 4.
    let m = Message::decode(Bytes::from_static(&[0x00, 0x53, 0x70, 0x45])).unwrap();
    assert_eq!(m.header.unwrap().priority, 4);
}

#[test]
fn encoding_omits_trailing_nulls_and_defaults() {
    // close without error: an empty list.
    assert_eq!(&to_bytes(&Close::default())[..], &[0x00, 0x53, 0x18, 0x45]);
    // accepted: empty list.
    assert_eq!(
        &to_bytes(&DeliveryState::Accepted)[..],
        &[0x00, 0x53, 0x24, 0x45]
    );
    // detach(handle 1, closed): no error field.
    let d = Detach {
        handle: 1,
        closed: true,
        error: None,
    };
    assert_eq!(
        &to_bytes(&d)[..],
        &[0x00, 0x53, 0x16, 0xc0, 4, 2, 0x52, 1, 0x41]
    );
    // a flow with only the windows.
    let f = Flow {
        incoming_window: 10,
        next_outgoing_id: 0,
        outgoing_window: 10,
        ..Flow::default()
    };
    assert_eq!(
        &to_bytes(&f)[..],
        &[0x00, 0x53, 0x13, 0xc0, 7, 4, 0x40, 0x52, 10, 0x43, 0x52, 10]
    );
}

#[test]
fn transaction_bodies_convert_from_amqp_values() {
    let declare = Value::described(Descriptor::Code(descriptor::DECLARE), Value::List(vec![]));
    assert_eq!(from_value::<Declare>(&declare), Ok(Declare::default()));
    let discharge = Discharge {
        txn_id: Bytes::from_static(b"tx-3"),
        fail: true,
    };
    let as_value = to_value(&discharge).unwrap();
    assert_eq!(from_value::<Discharge>(&as_value), Ok(discharge));
    let declared = DeliveryState::Declared {
        txn_id: Bytes::from_static(b"tx-3"),
    };
    assert_eq!(
        from_bytes::<DeliveryState>(to_bytes(&declared)),
        Ok(declared)
    );
}

fn full_message() -> Message {
    Message {
        header: Some(Header {
            durable: true,
            priority: 7,
            ttl: Some(5000),
            first_acquirer: true,
            delivery_count: 2,
        }),
        delivery_annotations: Some(vec![(Value::Symbol(sym("x-opt-trace")), Value::Ulong(1))]),
        message_annotations: Some(vec![
            (Value::Symbol(sym("x-opt-jms-msg-type")), Value::Byte(5)),
            (Value::Symbol(sym("x-opt-jms-dest")), Value::Byte(0)),
        ]),
        properties: Some(Properties {
            message_id: Some(MessageId::String("ID:1:1:1-1".into())),
            user_id: Some(Bytes::from_static(b"app")),
            to: Some("APP.Q".into()),
            subject: Some("type".into()),
            reply_to: Some("REPLY.Q".into()),
            correlation_id: Some(MessageId::Uuid([7; 16])),
            content_type: Some(sym("text/plain")),
            content_encoding: Some(sym("utf-8")),
            absolute_expiry_time: Some(Timestamp(2_000)),
            creation_time: Some(Timestamp(1_000)),
            group_id: Some("g".into()),
            group_sequence: Some(3),
            reply_to_group_id: Some("rg".into()),
        }),
        application_properties: Some(vec![
            ("color".into(), Value::from("red")),
            ("n".into(), Value::Int(-5)),
        ]),
        body: Some(Body::Value(Value::from("hello"))),
        footer: Some(vec![(
            Value::Symbol(sym("hash")),
            Value::Binary(Bytes::from_static(b"h")),
        )]),
    }
}

#[test]
fn every_section_round_trips() {
    let bodies = [
        Some(Body::Value(Value::from("hello"))),
        Some(Body::Data(
            vec![Bytes::from_static(b"a"), Bytes::from(vec![9u8; 300])].into(),
        )),
        Some(Body::Sequence(vec![
            vec![Value::Int(1), Value::from("x")],
            vec![],
        ])),
        None,
    ];
    for body in bodies {
        let mut m = full_message();
        m.body = body;
        let mut out = BytesMut::new();
        m.encode(&mut out);
        assert_eq!(Message::decode(out.freeze()), Ok(m));
    }
    for id in [
        MessageId::Ulong(99),
        MessageId::Binary(Bytes::from_static(&[1; 24])),
        MessageId::Uuid([1; 16]),
    ] {
        let m = Message {
            properties: Some(Properties {
                message_id: Some(id),
                ..Properties::default()
            }),
            ..Message::default()
        };
        let mut out = BytesMut::new();
        m.encode(&mut out);
        assert_eq!(Message::decode(out.freeze()), Ok(m));
    }
}

#[test]
fn a_message_written_into_a_transfer_frame_reads_back() {
    let m = full_message();
    let t = Transfer {
        handle: 0,
        delivery_id: Some(1),
        delivery_tag: Some(Bytes::from_static(b"1")),
        message_format: Some(0),
        ..Transfer::default()
    };
    let mut wire = BytesMut::new();
    encode_transfer_with(5, &t, &mut wire, |out| m.encode(out));
    let frame = FrameDecoder::new(1 << 20)
        .decode(&mut wire)
        .unwrap()
        .unwrap();
    assert_eq!(frame.performative, Some(Performative::Transfer(t.clone())));
    assert_eq!(Message::decode(frame.payload.clone()), Ok(m.clone()));

    let mut payload = BytesMut::new();
    m.encode(&mut payload);
    let mut wire2 = BytesMut::new();
    encode_transfer(5, &t, &payload, &mut wire2);
    let mut wire3 = BytesMut::new();
    encode_frame(5, &Performative::Transfer(t), &payload, &mut wire3);
    assert_eq!(wire2, wire3);
    assert_eq!(
        FrameDecoder::new(1 << 20)
            .decode(&mut wire2)
            .unwrap()
            .unwrap(),
        frame
    );
}

#[test]
fn every_value_type_round_trips() {
    let values = vec![
        Value::Null,
        Value::Bool(true),
        Value::Ubyte(200),
        Value::Ushort(60000),
        Value::Uint(0),
        Value::Uint(70000),
        Value::Ulong(1 << 40),
        Value::Byte(-3),
        Value::Short(-300),
        Value::Int(i32::MIN),
        Value::Long(i64::MAX),
        Value::Float(1.5),
        Value::Double(-2.25),
        Value::Decimal32([1, 2, 3, 4]),
        Value::Decimal64([1; 8]),
        Value::Decimal128([2; 16]),
        Value::Char('é'),
        Value::Timestamp(Timestamp(-1)),
        Value::Uuid([3; 16]),
        Value::Binary(Bytes::from_static(b"\0\x01")),
        Value::from("text"),
        Value::Symbol(sym("s")),
        Value::List(vec![Value::Null, Value::from("x".repeat(400).as_str())]),
        Value::Map(vec![(Value::Ulong(1), Value::Bool(false))]),
        Value::Array(
            Array::new(None, ElementType::Int, vec![Value::Int(1), Value::Int(-1)]).unwrap(),
        ),
        Value::Array(
            Array::new(
                None,
                ElementType::List,
                vec![Value::List(vec![]), Value::List(vec![Value::Uint(1)])],
            )
            .unwrap(),
        ),
        Value::Array(
            Array::new(
                Some(Descriptor::Code(0x24)),
                ElementType::List,
                vec![Value::List(vec![])],
            )
            .unwrap(),
        ),
        Value::Array(Array::new(None, ElementType::Symbol, vec![]).unwrap()),
        Value::described(Descriptor::Symbol(sym("x:y")), Value::Long(1)),
    ];
    for v in values {
        assert_eq!(from_bytes::<Value>(to_bytes(&v)).as_ref(), Ok(&v), "{v:?}");
    }
    assert!(Array::new(None, ElementType::Int, vec![Value::Long(1)]).is_none());
}
