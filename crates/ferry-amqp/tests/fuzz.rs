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

/// A message whose properties section has every field, ids of two types.
fn full_properties_message() -> Vec<u8> {
    let m = Message {
        header: Some(Header::default()),
        properties: Some(Properties {
            message_id: Some(MessageId::String("ID:abc-1".into())),
            user_id: Some(bytes::Bytes::from_static(b"app")),
            to: Some("Q.REQUEST".into()),
            subject: Some("order".into()),
            reply_to: Some("Q.REPLY".into()),
            correlation_id: Some(MessageId::Binary(bytes::Bytes::from_static(&[1, 2, 3]))),
            content_type: Some("text/plain".into()),
            content_encoding: Some("gzip".into()),
            absolute_expiry_time: Some(Timestamp(1_767_000_000_000)),
            creation_time: Some(Timestamp(1_766_000_000_000)),
            group_id: Some("grp-é".into()),
            group_sequence: Some(7),
            reply_to_group_id: Some("rg".into()),
        }),
        application_properties: Some(vec![("k".into(), Value::Int(1))]),
        body: Some(Body::data(bytes::Bytes::from_static(b"body"))),
        ..Message::default()
    };
    let mut out = BytesMut::new();
    m.encode(&mut out);
    out.to_vec()
}

/// The owned decode and the broker's borrowing decode must accept the same messages and
/// read the same properties.
fn decodes_agree(data: &[u8]) -> Result<(), TestCaseError> {
    let bytes = bytes::Bytes::copy_from_slice(data);
    let owned = Message::decode_with_sections(bytes.clone());
    let borrowed = Message::decode_borrowing_properties(&bytes);
    match (&owned, &borrowed) {
        (Ok((m, _)), Ok((_, p, _))) => {
            prop_assert_eq!(&m.properties, &p.map(|p| p.to_owned()))
        }
        (Err(_), Err(_)) => {}
        _ => prop_assert!(false, "disagree: {:?} vs {:?}", owned.err(), borrowed.err()),
    }
    Ok(())
}

/// The bodies of the frames every message costs, as Ferry encodes them.
fn hot_performatives() -> Vec<Vec<u8>> {
    let frames = [
        Performative::Transfer(Transfer {
            handle: 3,
            delivery_id: Some(70_000),
            delivery_tag: Some(bytes::Bytes::from_static(&[0, 0, 1, 17])),
            message_format: Some(0),
            settled: Some(false),
            more: true,
            ..Transfer::default()
        }),
        Performative::Disposition(Disposition {
            role: Role::Receiver,
            first: 300,
            last: Some(301),
            settled: true,
            state: Some(DeliveryState::Accepted),
            batchable: true,
        }),
        Performative::Flow(Flow {
            next_incoming_id: Some(100_000),
            incoming_window: 2048,
            next_outgoing_id: 1,
            outgoing_window: 2048,
            handle: Some(2),
            delivery_count: Some(99_999),
            link_credit: Some(10),
            available: Some(0),
            drain: true,
            echo: false,
            ..Flow::default()
        }),
    ];
    frames
        .iter()
        .map(|p| {
            let mut out = BytesMut::new();
            p.encode(&mut out);
            // A transfer's payload follows its performative.
            if matches!(p, Performative::Transfer(_)) {
                out.extend_from_slice(b"\x00\x53\x75\xa0\x01x");
            }
            out.to_vec()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_performatives_fast_path_reads_as_the_general_decoder(
        which in 0usize..3,
        flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..3),
    ) {
        let mut data = hot_performatives().swap_remove(which);
        let unchanged = flips.is_empty();
        for (at, byte) in flips {
            let n = data.len();
            data[at % n] = byte;
        }
        let taken = ferry_amqp::fuzzing::fast_path_agrees(&bytes::Bytes::from(data));
        // Frames as Ferry writes them do take the fast path.
        prop_assert!(!unchanged || taken > 0);
    }

    #[test]
    fn borrowed_properties_decode_as_owned_ones(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 0..4)) {
        let mut data = full_properties_message();
        for (at, byte) in flips {
            let n = data.len();
            data[at % n] = byte;
        }
        let unchanged = data == full_properties_message();
        decodes_agree(&data)?;
        let taken = ferry_amqp::fuzzing::fast_path_agrees(&bytes::Bytes::from(data));
        // The header and the properties section as Ferry writes them take the fast path.
        prop_assert!(!unchanged || taken >= 2);
    }

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    /// Issue 18: whole frame sequences in any order with fields near every limit (the
    /// `amqp_sequence` fuzz target's entry point): the server never panics, holds no more
    /// than its Config allows and writes back no more than it is sent.
    #[test]
    fn frame_sequences_keep_the_server_within_its_limits(
        script in proptest::collection::vec(any::<u8>(), 0..4096)
    ) {
        ferry_amqp::fuzzing::drive_sequence(&script);
    }
}

/// Inputs the fuzzers once failed on, kept as regression cases.
#[test]
fn inputs_the_fuzzers_found_stay_fixed() {
    // An amqp-value body holding a NaN float: the owned and borrowing decodes read the same
    // message, but NaN is not equal to itself (the check now compares encodings).
    decode_everything(&[0x00, 0x53, 0x77, 0x72, 0xff, 0xff, 0x01, 0x00]);
}

/// The sequence driver reaches the state it is meant to test: opened connections with
/// sessions, links and traffic, not only early errors.
#[test]
fn frame_sequences_reach_sessions_links_and_transfers() {
    use proptest::strategy::{Strategy, ValueTree};
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = proptest::collection::vec(any::<u8>(), 256..2048);
    let (mut links, mut messages) = (0, 0);
    for _ in 0..300 {
        let script = strategy.new_tree(&mut runner).expect("a script").current();
        let depth = ferry_amqp::fuzzing::drive_sequence_depth(&script);
        links += usize::from(depth >= 3);
        messages += usize::from(depth >= 4);
    }
    eprintln!("of 300 scripts, {links} reached links and {messages} messages");
    assert!(links >= 60, "only {links} of 300 scripts reached links");
    assert!(
        messages >= 10,
        "only {messages} of 300 scripts reached messages"
    );
}
