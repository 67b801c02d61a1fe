//! Decode and encode of a transfer frame carrying a 2 KB Qpid JMS TextMessage (string
//! message-id, durable header, x-opt-jms-msg-type annotation, one application property):
//! the per-message cost of the AMQP channel's codec.

use std::hint::black_box;

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ferry_amqp::{
    condition, encode_frame, encode_transfer_with, Body, DeliveryState, Disposition, Flow,
    FrameDecoder, Header, Message, MessageId, Performative, Properties, Role, Symbol, Timestamp,
    Transfer, Value,
};

fn jms_text_message() -> Message {
    Message {
        header: Some(Header {
            durable: true,
            ..Header::default()
        }),
        message_annotations: Some(vec![
            (
                Value::Symbol(Symbol::from_static(condition::ANNOTATION_JMS_MSG_TYPE)),
                Value::Byte(condition::jms_msg_type::TEXT),
            ),
            (
                Value::Symbol(Symbol::from_static(condition::ANNOTATION_JMS_DEST)),
                Value::Byte(0),
            ),
        ]),
        properties: Some(Properties {
            message_id: Some(MessageId::String(
                "ID:2f1c7b9e-7c2d-4a51-9d0e-6f0c5a3b8e11:1:1:1-1".into(),
            )),
            to: Some("APP.REQUEST.QUEUE".into()),
            creation_time: Some(Timestamp(1_767_000_000_000)),
            ..Properties::default()
        }),
        application_properties: Some(vec![("color".into(), Value::from("red"))]),
        body: Some(Body::Value(Value::from("x".repeat(2048).as_str()))),
        ..Message::default()
    }
}

fn transfer() -> Transfer {
    Transfer {
        handle: 0,
        delivery_id: Some(17),
        delivery_tag: Some(Bytes::from_static(&[0, 0, 0, 17])),
        message_format: Some(0),
        settled: Some(false),
        ..Transfer::default()
    }
}

/// The attach frame Qpid JMS 2.10.0 sends for a reply consumer (`createConsumer(REPLY,
/// "JMSCorrelationID = '...'")`), as read off the wire: a receiver with a selector filter,
/// the four outcomes, a modified default outcome and the `queue` capability. A JMS
/// requester on a shared reply queue sends one per round trip.
const QPID_JMS_REPLY_CONSUMER_ATTACH: [u8; 329] = [
    0x00, 0x00, 0x01, 0x49, 0x02, 0x00, 0x00, 0x01, 0x00, 0x53, 0x12, 0xd0, 0x00, 0x00, 0x01, 0x39,
    0x00, 0x00, 0x00, 0x07, 0xa1, 0x46, 0x71, 0x70, 0x69, 0x64, 0x2d, 0x6a, 0x6d, 0x73, 0x3a, 0x72,
    0x65, 0x63, 0x65, 0x69, 0x76, 0x65, 0x72, 0x3a, 0x49, 0x44, 0x3a, 0x39, 0x35, 0x32, 0x64, 0x30,
    0x61, 0x31, 0x64, 0x2d, 0x38, 0x66, 0x65, 0x32, 0x2d, 0x34, 0x64, 0x62, 0x34, 0x2d, 0x39, 0x33,
    0x61, 0x64, 0x2d, 0x33, 0x39, 0x30, 0x38, 0x36, 0x37, 0x66, 0x31, 0x39, 0x31, 0x33, 0x32, 0x3a,
    0x31, 0x31, 0x3a, 0x31, 0x3a, 0x31, 0x3a, 0x52, 0x45, 0x50, 0x4c, 0x59, 0x52, 0x01, 0x41, 0x50,
    0x00, 0x50, 0x00, 0x00, 0x53, 0x28, 0xc0, 0xdd, 0x0b, 0xa1, 0x05, 0x52, 0x45, 0x50, 0x4c, 0x59,
    0x43, 0xa3, 0x0b, 0x6c, 0x69, 0x6e, 0x6b, 0x2d, 0x64, 0x65, 0x74, 0x61, 0x63, 0x68, 0x43, 0x42,
    0x40, 0x40, 0xc1, 0x60, 0x02, 0xa3, 0x0c, 0x6a, 0x6d, 0x73, 0x2d, 0x73, 0x65, 0x6c, 0x65, 0x63,
    0x74, 0x6f, 0x72, 0x00, 0x80, 0x00, 0x00, 0x46, 0x8c, 0x00, 0x00, 0x00, 0x04, 0xa1, 0x45, 0x4a,
    0x4d, 0x53, 0x43, 0x6f, 0x72, 0x72, 0x65, 0x6c, 0x61, 0x74, 0x69, 0x6f, 0x6e, 0x49, 0x44, 0x20,
    0x3d, 0x20, 0x27, 0x49, 0x44, 0x3a, 0x39, 0x35, 0x32, 0x64, 0x30, 0x61, 0x31, 0x64, 0x2d, 0x38,
    0x66, 0x65, 0x32, 0x2d, 0x34, 0x64, 0x62, 0x34, 0x2d, 0x39, 0x33, 0x61, 0x64, 0x2d, 0x33, 0x39,
    0x30, 0x38, 0x36, 0x37, 0x66, 0x31, 0x39, 0x31, 0x33, 0x32, 0x3a, 0x31, 0x31, 0x3a, 0x31, 0x3a,
    0x31, 0x2d, 0x31, 0x27, 0x00, 0x53, 0x27, 0xc0, 0x02, 0x01, 0x41, 0xe0, 0x4e, 0x04, 0xa3, 0x12,
    0x61, 0x6d, 0x71, 0x70, 0x3a, 0x61, 0x63, 0x63, 0x65, 0x70, 0x74, 0x65, 0x64, 0x3a, 0x6c, 0x69,
    0x73, 0x74, 0x12, 0x61, 0x6d, 0x71, 0x70, 0x3a, 0x72, 0x65, 0x6a, 0x65, 0x63, 0x74, 0x65, 0x64,
    0x3a, 0x6c, 0x69, 0x73, 0x74, 0x12, 0x61, 0x6d, 0x71, 0x70, 0x3a, 0x72, 0x65, 0x6c, 0x65, 0x61,
    0x73, 0x65, 0x64, 0x3a, 0x6c, 0x69, 0x73, 0x74, 0x12, 0x61, 0x6d, 0x71, 0x70, 0x3a, 0x6d, 0x6f,
    0x64, 0x69, 0x66, 0x69, 0x65, 0x64, 0x3a, 0x6c, 0x69, 0x73, 0x74, 0xe0, 0x08, 0x01, 0xa3, 0x05,
    0x71, 0x75, 0x65, 0x75, 0x65, 0x00, 0x53, 0x29, 0x45,
];

fn bench(c: &mut Criterion) {
    let m = jms_text_message();
    let t = transfer();
    let mut wire = BytesMut::new();
    encode_transfer_with(1, &t, &mut wire, |out| m.encode(out));
    println!("transfer frame: {} bytes", wire.len());

    c.bench_function("amqp encode transfer+message (2 KB text)", |b| {
        let mut out = BytesMut::with_capacity(4096);
        b.iter(|| {
            out.clear();
            encode_transfer_with(1, black_box(&t), &mut out, |out| black_box(&m).encode(out));
            black_box(out.len())
        })
    });

    c.bench_function("amqp decode transfer+message (2 KB text)", |b| {
        b.iter_batched_ref(
            || wire.clone(),
            |buf| {
                let frame = FrameDecoder::new(1 << 20).decode(buf).unwrap().unwrap();
                let Some(Performative::Transfer(t)) = frame.performative else {
                    unreachable!()
                };
                let m = Message::decode(frame.payload).unwrap();
                black_box((t, m))
            },
            BatchSize::SmallInput,
        )
    });

    // The small frames every message also costs: a consumer's accept, a credit top-up.
    let small = [
        (
            "amqp decode disposition frame (accepted)",
            Performative::Disposition(Disposition {
                role: Role::Receiver,
                first: 12_345,
                last: None,
                settled: true,
                state: Some(DeliveryState::Accepted),
                batchable: false,
            }),
        ),
        (
            "amqp decode flow frame",
            Performative::Flow(Flow {
                next_incoming_id: Some(100_000),
                incoming_window: 2048,
                next_outgoing_id: 100_000,
                outgoing_window: 2048,
                handle: Some(2),
                delivery_count: Some(99_999),
                link_credit: Some(10),
                ..Flow::default()
            }),
        ),
    ];
    for (name, p) in small {
        let mut frame = BytesMut::new();
        encode_frame(1, &p, &[], &mut frame);
        c.bench_function(name, |b| {
            b.iter_batched_ref(
                || frame.clone(),
                |buf| black_box(FrameDecoder::new(1 << 20).decode(buf).unwrap().unwrap()),
                BatchSize::SmallInput,
            )
        });
    }

    let attach = BytesMut::from(&QPID_JMS_REPLY_CONSUMER_ATTACH[..]);
    c.bench_function("amqp decode attach frame (Qpid JMS reply consumer)", |b| {
        b.iter_batched_ref(
            || attach.clone(),
            |buf| black_box(FrameDecoder::new(1 << 20).decode(buf).unwrap().unwrap()),
            BatchSize::SmallInput,
        )
    });

    let payload = {
        let mut out = BytesMut::new();
        m.encode(&mut out);
        out.freeze()
    };
    c.bench_function("amqp decode message only (2 KB text)", |b| {
        b.iter(|| black_box(Message::decode(black_box(payload.clone())).unwrap()))
    });
    c.bench_function("amqp scan sections only (2 KB text)", |b| {
        b.iter(|| black_box(ferry_amqp::RawSections::scan(black_box(payload.clone())).unwrap()))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
