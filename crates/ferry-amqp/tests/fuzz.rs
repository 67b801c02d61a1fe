//! Property tests over the fuzzing entry point: arbitrary bytes, and mutated real frames,
//! never panic and whatever decodes re-encodes to a fixed point.

use bytes::BytesMut;
use ferry_amqp::fuzzing::decode_everything;
use ferry_amqp::*;
use proptest::prelude::*;

fn seed_frames() -> Vec<u8> {
    let mut wire = BytesMut::new();
    ProtocolHeader::Amqp.encode(&mut wire);
    encode_frame(0, &Performative::Open(Open::new("c")), &[], &mut wire);
    let m = Message {
        header: Some(Header {
            durable: true,
            ..Header::default()
        }),
        message_annotations: Some(vec![(
            Value::Symbol("x-opt-jms-msg-type".into()),
            Value::Byte(5),
        )]),
        properties: Some(Properties {
            message_id: Some(MessageId::String("ID:1".into())),
            ..Properties::default()
        }),
        application_properties: Some(vec![("k".into(), Value::Int(1))]),
        body: Some(Body::Value(Value::from("hi"))),
        ..Message::default()
    };
    let t = Transfer {
        handle: 0,
        delivery_id: Some(0),
        delivery_tag: Some(bytes::Bytes::from_static(b"1")),
        ..Transfer::default()
    };
    encode_transfer_with(1, &t, &mut wire, |out| m.encode(out));
    wire.to_vec()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        decode_everything(&data);
    }

    #[test]
    fn mutated_frames_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let mut data = seed_frames();
        for (at, byte) in flips {
            let n = data.len();
            data[at % n] = byte;
        }
        decode_everything(&data);
        decode_everything(&data[8..]);
    }
}
