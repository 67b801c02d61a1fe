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
