//! Property tests of the message channel protocol: every channel hello, hello reply and
//! channel frame round-trips, a truncated one is waited for and a shortened one refused
//! without a panic, an oversized length is refused before the body is buffered, and
//! arbitrary or mutated bytes never panic the decoders (`fuzzing::decode_channel`, the
//! `channel_frame` fuzz target's entry point).

use bytes::{Bytes, BytesMut};
use ferry_mqi::{FixedStr, HeaderCompression, MessageCompression};
use ferry_wire::channel::{
    decode_channel_frame, encode_channel_frame, max_channel_frame_len, ChannelAccepted,
    ChannelAgreement, ChannelFrame, ChannelHello, ChannelHelloReply, ChannelPurpose,
    ChannelRefused, ChannelStatusCode, CloseMode, InDoubtBatch, InitiatorType, MessageFlags,
    NpmSpeed, CHANNEL_FRAME_HEADER_LEN, MAX_CHANNEL_TEXT_LEN, MAX_PING_DATA_LEN,
    MAX_REFUSAL_TEXT_LEN, MIN_PING_DATA_LEN,
};
use ferry_wire::{fuzzing, Techniques, WireError};
use proptest::prelude::*;

fn fixed<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
    proptest::string::string_regex(&format!("[A-Za-z0-9./_%]{{0,{N}}}"))
        .unwrap()
        .prop_map(|s| FixedStr::<N>::truncating(&s))
}

fn text(max: usize) -> impl Strategy<Value = String> {
    proptest::string::string_regex(&format!(".{{0,{}}}", max / 4))
        .unwrap()
        .prop_map(move |s| {
            let mut s = s;
            while s.len() > max {
                s.pop();
            }
            s
        })
}

fn status_code() -> impl Strategy<Value = ChannelStatusCode> {
    // Any number: a named code's number decodes as its name, so round-trip the value
    // `from_code` gives.
    any::<u32>().prop_map(ChannelStatusCode::from_code)
}

fn npm_speed() -> impl Strategy<Value = NpmSpeed> {
    prop_oneof![Just(NpmSpeed::Fast), Just(NpmSpeed::Normal)]
}

fn hello() -> impl Strategy<Value = ChannelHello> {
    let header = prop_oneof![
        Just(HeaderCompression::None),
        Just(HeaderCompression::System)
    ];
    let message = prop_oneof![
        Just(MessageCompression::None),
        Just(MessageCompression::Rle),
        Just(MessageCompression::ZlibFast),
        Just(MessageCompression::Lz4High),
        Just(MessageCompression::Any),
    ];
    (
        (
            any::<u16>(),
            0u16..=0,
            fixed::<20>(),
            fixed::<48>(),
            fixed::<48>(),
        ),
        (
            prop_oneof![
                Just(InitiatorType::Sender),
                Just(InitiatorType::Server),
                Just(InitiatorType::Requester),
                Just(InitiatorType::ClusterSender),
            ],
            prop_oneof![Just(ChannelPurpose::Run), Just(ChannelPurpose::Ping)],
            npm_speed(),
        ),
        (any::<[u32; 6]>(), any::<u64>()),
        proptest::option::of((1u64.., any::<u32>(), any::<u32>())),
        proptest::option::of(any::<u32>()),
        proptest::collection::vec(header, 0..=2),
        proptest::collection::vec(message, 0..=16),
    )
        .prop_map(
            |(
                (major, minor, channel, qmgr_name, qmid),
                (channel_type, purpose, npm_speed),
                (n, last_luwid),
                in_doubt,
                reset_seq,
                compress_header,
                compress_message,
            )| ChannelHello {
                major,
                minor,
                channel,
                channel_type,
                purpose,
                qmgr_name,
                qmid,
                batch_size: n[0],
                max_msg_length: n[1],
                seq_wrap: n[2],
                heartbeat_interval: n[3],
                npm_speed,
                batch_heartbeat: n[4],
                last_committed_seq: n[5],
                last_luwid,
                in_doubt: in_doubt.map(|(luwid, first_seq, last_seq)| InDoubtBatch {
                    luwid,
                    first_seq,
                    last_seq,
                }),
                reset_seq,
                compress_header,
                compress_message,
            },
        )
}

fn reply() -> impl Strategy<Value = ChannelHelloReply> {
    let accepted = (
        fixed::<48>(),
        fixed::<48>(),
        any::<u16>(),
        any::<[u32; 6]>(),
        npm_speed(),
        any::<u64>(),
        prop_oneof![
            Just(HeaderCompression::None),
            Just(HeaderCompression::System)
        ],
        prop_oneof![
            Just(MessageCompression::None),
            Just(MessageCompression::Lz4Fast)
        ],
    )
        .prop_map(|(qmgr_name, qmid, minor, n, npm_speed, last_luwid, h, m)| {
            ChannelHelloReply::Accepted(ChannelAccepted {
                qmgr_name,
                qmid,
                agreement: ChannelAgreement {
                    minor,
                    batch_size: n[0],
                    max_msg_length: n[1],
                    seq_wrap: n[2],
                    heartbeat_interval: n[3],
                    npm_speed,
                    batch_heartbeat: n[4],
                    compression: Techniques {
                        header: h,
                        message: m,
                    },
                },
                last_committed_seq: n[5],
                last_luwid,
            })
        });
    let refused = (
        any::<u16>(),
        any::<u16>(),
        status_code(),
        text(MAX_REFUSAL_TEXT_LEN),
    )
        .prop_map(|(major, minor, code, text)| {
            ChannelHelloReply::Refused(ChannelRefused {
                major,
                minor,
                code,
                text,
            })
        });
    prop_oneof![accepted, refused]
}

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..max).prop_map(Bytes::from)
}

fn ping_data() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), MIN_PING_DATA_LEN..200),
        Just(vec![7u8; MAX_PING_DATA_LEN]),
    ]
    .prop_map(Bytes::from)
}

fn frame() -> impl Strategy<Value = ChannelFrame> {
    prop_oneof![
        (any::<u32>(), any::<bool>(), bytes(64), bytes(512)).prop_map(
            |(seq, in_unit, properties, payload)| ChannelFrame::Message {
                seq,
                flags: if in_unit {
                    MessageFlags::IN_BATCH_UNIT
                } else {
                    MessageFlags::empty()
                },
                properties,
                payload,
            }
        ),
        (any::<u64>(), any::<u32>(), any::<u32>(), any::<u32>()).prop_map(
            |(luwid, first_seq, last_seq, messages)| ChannelFrame::ConfirmRequest {
                luwid,
                first_seq,
                last_seq,
                messages
            }
        ),
        (any::<u64>(), any::<u32>())
            .prop_map(|(luwid, last_seq)| ChannelFrame::Confirm { luwid, last_seq }),
        (
            any::<u64>(),
            status_code(),
            any::<i32>(),
            text(MAX_CHANNEL_TEXT_LEN)
        )
            .prop_map(|(luwid, status, reason, text)| ChannelFrame::BatchFailed {
                luwid,
                status,
                reason,
                text
            }),
        any::<u64>().prop_map(|token| ChannelFrame::Heartbeat { token }),
        any::<u64>().prop_map(|token| ChannelFrame::HeartbeatReply { token }),
        ping_data().prop_map(|data| ChannelFrame::Ping { data }),
        ping_data().prop_map(|data| ChannelFrame::PingReply { data }),
        (status_code(), any::<i32>(), text(MAX_CHANNEL_TEXT_LEN))
            .prop_map(|(code, reason, text)| ChannelFrame::Status { code, reason, text }),
        prop_oneof![Just(CloseMode::Quiesce), Just(CloseMode::Force)]
            .prop_map(|mode| ChannelFrame::Close { mode }),
    ]
}

fn max() -> usize {
    max_channel_frame_len(1 << 20)
}

proptest! {
    #[test]
    fn channel_hellos_round_trip(h in hello()) {
        let mut out = BytesMut::new();
        h.encode(&mut out).unwrap();
        let encoded = out.clone();
        prop_assert_eq!(ChannelHello::decode(&mut out), Ok(Some(h)));
        prop_assert!(out.is_empty());
        for cut in 0..encoded.len() {
            let mut part = BytesMut::from(&encoded[..cut]);
            prop_assert_eq!(ChannelHello::decode(&mut part), Ok(None));
        }
        fuzzing::decode_channel(&encoded);
    }

    #[test]
    fn channel_hello_replies_round_trip(r in reply()) {
        let mut out = BytesMut::new();
        r.encode(&mut out).unwrap();
        let encoded = out.clone();
        prop_assert_eq!(ChannelHelloReply::decode(&mut out), Ok(Some(r)));
        prop_assert!(out.is_empty());
        for cut in 0..encoded.len() {
            let mut part = BytesMut::from(&encoded[..cut]);
            prop_assert_eq!(ChannelHelloReply::decode(&mut part), Ok(None));
        }
        fuzzing::decode_channel(&encoded);
    }

    #[test]
    fn channel_frames_round_trip_many_to_a_buffer(frames in proptest::collection::vec(frame(), 1..8)) {
        let mut out = BytesMut::new();
        for f in &frames {
            encode_channel_frame(f, &mut out).unwrap();
        }
        let encoded = out.clone();
        for f in frames {
            prop_assert_eq!(decode_channel_frame(&mut out, max()), Ok(Some(f)));
        }
        prop_assert_eq!(decode_channel_frame(&mut out, max()), Ok(None));
        fuzzing::decode_channel(&encoded);
    }

    #[test]
    fn truncated_frames_wait_and_shortened_frames_are_refused(f in frame(), at in any::<prop::sample::Index>()) {
        let mut full = BytesMut::new();
        encode_channel_frame(&f, &mut full).unwrap();
        // Cut anywhere: not complete yet, nothing consumed.
        let cut = at.index(full.len());
        let mut part = BytesMut::from(&full[..cut]);
        prop_assert_eq!(decode_channel_frame(&mut part, max()), Ok(None));
        prop_assert_eq!(part.len(), cut);
        // The same cut, announced as the whole frame: an error or another frame of the
        // same type, never a panic.
        if cut >= CHANNEL_FRAME_HEADER_LEN {
            let mut short = BytesMut::from(&full[..cut]);
            short[..4].copy_from_slice(&(cut as u32).to_le_bytes());
            if let Ok(Some(g)) = decode_channel_frame(&mut short, max()) {
                prop_assert_eq!(g.type_code(), f.type_code());
            }
        }
    }

    #[test]
    fn an_oversized_length_is_refused_on_its_four_bytes(len in any::<u32>(), limit in 0usize..100_000) {
        let mut b = BytesMut::from(&len.to_le_bytes()[..]);
        let got = decode_channel_frame(&mut b, limit);
        if len as usize > limit {
            prop_assert_eq!(got, Err(WireError::FrameTooLarge { len: u64::from(len), max: limit as u64 }));
        } else if (len as usize) < CHANNEL_FRAME_HEADER_LEN {
            prop_assert_eq!(got, Err(WireError::FrameTooSmall { len }));
        } else {
            prop_assert_eq!(got, Ok(None));
        }
        prop_assert_eq!(b.len(), 4);
    }

    #[test]
    fn arbitrary_channel_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzzing::decode_channel(&data);
        let mut with_magic = b"FRY\x01".to_vec();
        with_magic.extend_from_slice(&data);
        fuzzing::decode_channel(&with_magic);
    }

    #[test]
    fn mutated_channel_bytes_never_panic(
        h in hello(),
        frames in proptest::collection::vec(frame(), 0..4),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut out = BytesMut::new();
        h.encode(&mut out).unwrap();
        for f in &frames {
            encode_channel_frame(f, &mut out).unwrap();
        }
        let mut v = out.to_vec();
        for (i, b) in flips {
            let at = i.index(v.len());
            v[at] ^= b;
        }
        fuzzing::decode_channel(&v);
    }
}
