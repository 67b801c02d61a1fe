//! Property tests: every request and reply round-trips through a frame, truncated input
//! never panics, arbitrary bytes never panic the decoders, and a whole connection's bytes
//! (hello, frames, maybe a lying header) come out of the server's inbound buffer the same
//! whatever the reads they arrive in.

use bytes::{Bytes, BytesMut};
use ferry_mqi::subscription::{SubscribeOptions, SubscriptionDescriptor};
use ferry_mqi::{
    CloseOptions, CompCode, FixedStr, GetOptionFlags, GetOptions, InquireValue, MatchOptions,
    MessageDescriptor, ObjectDescriptor, ObjectType, OpenOptions, PutOptionFlags, PutOptions,
    ReasonCode,
};
use ferry_wire::{
    decode_frame, encode_reply, encode_reply_at, encode_request, encode_request_at, fuzzing,
    CloseNotice, ConnRequest, Credentials, MqscOutput, Reply, Request, Status, WireError,
    MAX_OBJECT_STRING_LEN, MINOR_WITH_CONTEXT, MINOR_WITH_PUBSUB, MINOR_WITH_PUT_PROPERTIES,
};
use proptest::prelude::*;

const MAX: u32 = 1 << 20;
/// A frame header's length.
const HEADER: u32 = ferry_wire::HEADER_LEN as u32;

fn fixed<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
    proptest::string::string_regex(&format!("[A-Za-z0-9./_%* ]{{0,{N}}}"))
        .unwrap()
        .prop_map(|s| FixedStr::<N>::truncating(&s))
}

fn id24() -> impl Strategy<Value = [u8; 24]> {
    prop_oneof![Just([0u8; 24]), any::<[u8; 24]>()]
}

fn md() -> impl Strategy<Value = MessageDescriptor> {
    (
        any::<[i32; 14]>(),
        (id24(), id24(), id24()),
        prop_oneof![Just([0u8; 32]), any::<[u8; 32]>()],
        (fixed::<8>(), fixed::<48>(), fixed::<48>(), fixed::<12>()),
        (
            fixed::<32>(),
            fixed::<28>(),
            fixed::<8>(),
            fixed::<8>(),
            fixed::<4>(),
        ),
    )
        .prop_map(
            |(i, (m, c, g), acct, (f, rq, rqm, u), (aid, pan, pd, pt, aod))| MessageDescriptor {
                report: i[0],
                msg_type: i[1],
                expiry: i[2],
                feedback: i[3],
                encoding: i[4],
                ccsid: i[5],
                format: f,
                priority: i[6],
                persistence: i[7],
                msg_id: m,
                correl_id: c,
                backout_count: i[8],
                reply_to_q: rq,
                reply_to_qmgr: rqm,
                user_identifier: u,
                accounting_token: acct,
                appl_identity_data: aid,
                put_appl_type: i[9],
                put_appl_name: pan,
                put_date: pd,
                put_time: pt,
                appl_origin_data: aod,
                group_id: g,
                msg_seq_number: i[10],
                offset: i[11],
                msg_flags: i[12],
                original_length: i[13],
            },
        )
}

fn od() -> impl Strategy<Value = ObjectDescriptor> {
    (
        prop_oneof![
            Just(ObjectType::Queue),
            Just(ObjectType::Topic),
            Just(ObjectType::QMgr)
        ],
        fixed::<48>(),
        fixed::<48>(),
        fixed::<48>(),
        fixed::<12>(),
    )
        .prop_map(|(t, n, q, d, a)| ObjectDescriptor {
            object_type: t,
            object_name: n,
            object_qmgr_name: q,
            dynamic_q_name: d,
            alternate_user_id: a,
        })
}

fn body() -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..300).prop_map(Bytes::from)
}

fn gmo() -> impl Strategy<Value = GetOptions> {
    (any::<u32>(), any::<i32>(), any::<u32>()).prop_map(|(o, w, m)| GetOptions {
        options: GetOptionFlags::from_bits_retain(o),
        wait_interval: w,
        match_options: MatchOptions::from_bits_retain(m),
    })
}

fn pmo() -> impl Strategy<Value = PutOptions> {
    (any::<u32>(), any::<i32>())
        .prop_map(|(o, c)| PutOptions::new(PutOptionFlags::from_bits_retain(o)).with_context(c))
}

fn sd() -> impl Strategy<Value = SubscriptionDescriptor> {
    (
        any::<u32>(),
        "[A-Za-z0-9./_ ]{0,48}",
        "[A-Za-z0-9/#+*?% ]{0,80}",
        "[a-z ]{0,12}",
        (".{0,40}", ".{0,40}", ".{0,60}"),
        id24(),
        any::<[i32; 3]>(),
    )
        .prop_map(
            |(o, name, string, alt, (sub_name, user_data, selection), correl, i)| {
                SubscriptionDescriptor {
                    options: SubscribeOptions::from_bits_retain(o),
                    object_name: name,
                    object_string: string,
                    alternate_user_id: alt,
                    sub_name,
                    sub_user_data: user_data,
                    sub_correl_id: correl,
                    pub_priority: i[0],
                    selection_string: selection,
                    sub_level: i[1],
                    sub_expiry: i[2],
                }
            },
        )
}

fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        (
            fixed::<48>(),
            fixed::<28>(),
            fixed::<12>(),
            any::<u32>(),
            proptest::option::of(("[a-z]{0,16}", ".{0,24}"))
        )
            .prop_map(|(q, a, u, o, c)| {
                Request::Conn(ConnRequest {
                    qmgr_name: q,
                    appl_name: a,
                    user_id: u,
                    options: o,
                    credentials: c.map(|(user, password)| Credentials { user, password }),
                })
            }),
        any::<bool>().prop_map(|backout| Request::Disc { backout }),
        (od(), any::<u32>()).prop_map(|(od, o)| Request::Open {
            od,
            options: OpenOptions::from_bits_retain(o)
        }),
        (any::<i32>(), any::<u32>()).prop_map(|(h, o)| Request::Close {
            hobj: h,
            options: CloseOptions::from_bits_retain(o)
        }),
        (any::<i32>(), md(), pmo(), body()).prop_map(|(hobj, md, pmo, body)| Request::Put {
            properties: bytes::Bytes::new(),
            hobj,
            md,
            pmo,
            body
        }),
        (od(), md(), pmo(), body()).prop_map(|(od, md, pmo, body)| Request::Put1 {
            properties: bytes::Bytes::new(),
            od,
            md,
            pmo,
            body
        }),
        (any::<i32>(), md(), gmo(), any::<u32>()).prop_map(|(hobj, md, gmo, max_len)| {
            Request::Get {
                hobj,
                md,
                gmo,
                max_len,
            }
        }),
        (any::<i32>(), proptest::collection::vec(any::<i32>(), 0..20))
            .prop_map(|(hobj, selectors)| Request::Inq { hobj, selectors }),
        (
            any::<i32>(),
            proptest::collection::vec((any::<i32>(), inquire_value()), 0..10)
        )
            .prop_map(|(hobj, attrs)| Request::Set { hobj, attrs }),
        Just(Request::Cmit),
        Just(Request::Back),
        ".{0,80}".prop_map(|command| Request::Mqsc { command }),
        Just(Request::Heartbeat),
        (sd(), any::<i32>()).prop_map(|(sd, hobj)| Request::Sub { sd, hobj }),
        (fixed::<48>(), ".{0,80}", any::<u32>()).prop_map(|(n, s, o)| Request::OpenTopic {
            object_name: n,
            object_string: s,
            options: OpenOptions::from_bits_retain(o),
        }),
        (any::<i32>(), any::<i32>()).prop_map(|(hsub, action)| Request::SubRq { hsub, action }),
    ]
}

fn status() -> impl Strategy<Value = Status> {
    (
        prop_oneof![
            Just(CompCode::Ok),
            Just(CompCode::Warning),
            Just(CompCode::Failed)
        ],
        proptest::sample::select(ReasonCode::ALL),
    )
        .prop_map(|(comp, reason)| Status { comp, reason })
}

fn inquire_value() -> impl Strategy<Value = InquireValue> {
    prop_oneof![
        any::<i32>().prop_map(InquireValue::Int),
        ".{0,40}".prop_map(InquireValue::Str),
    ]
}

fn reply() -> impl Strategy<Value = Reply> {
    prop_oneof![
        (status(), fixed::<48>()).prop_map(|(status, qmgr_name)| Reply::Conn { status, qmgr_name }),
        status().prop_map(|status| Reply::Disc { status }),
        (status(), any::<i32>(), fixed::<48>(), fixed::<48>()).prop_map(|(status, hobj, q, m)| {
            Reply::Open {
                status,
                hobj,
                resolved_q_name: q,
                resolved_qmgr_name: m,
            }
        }),
        status().prop_map(|status| Reply::Close { status }),
        (status(), md()).prop_map(|(status, md)| Reply::Put { status, md }),
        (status(), md()).prop_map(|(status, md)| Reply::Put1 { status, md }),
        (status(), md(), any::<u32>(), body(), body()).prop_map(
            |(status, md, data_length, properties, body)| Reply::Get {
                status,
                md,
                data_length,
                properties,
                body,
            }
        ),
        (status(), proptest::collection::vec(inquire_value(), 0..10))
            .prop_map(|(status, values)| Reply::Inq { status, values }),
        status().prop_map(|status| Reply::Set { status }),
        status().prop_map(|status| Reply::Cmit { status }),
        status().prop_map(|status| Reply::Back { status }),
        (
            status(),
            proptest::collection::vec(".{0,60}", 0..8),
            any::<bool>()
        )
            .prop_map(|(status, lines, failed)| Reply::Mqsc {
                status,
                output: MqscOutput { lines, failed }
            }),
        Just(Reply::Heartbeat),
        (
            status(),
            any::<(i32, i32)>(),
            id24(),
            ".{0,80}",
            fixed::<48>()
        )
            .prop_map(
                |(status, (hsub, hobj), sub_id, topic_string, destination)| Reply::Sub {
                    status,
                    hsub,
                    hobj,
                    sub_id,
                    topic_string,
                    destination,
                }
            ),
        (status(), any::<i32>(), ".{0,80}").prop_map(|(status, hobj, topic_string)| {
            Reply::OpenTopic {
                status,
                hobj,
                topic_string,
            }
        }),
        (status(), any::<i32>()).prop_map(|(status, num_pubs)| Reply::SubRq { status, num_pubs }),
    ]
}

/// Every strict prefix of a frame decodes to `Ok(None)`; never a panic.
fn check_prefixes(full: &BytesMut) {
    for cut in 0..full.len() {
        let mut part = BytesMut::from(&full[..cut]);
        assert_eq!(decode_frame(&mut part, MAX), Ok(None), "cut at {cut}");
    }
}

proptest! {
    #[test]
    fn requests_round_trip(req in request(), conv in any::<u32>(), id in any::<u32>()) {
        let mut out = BytesMut::new();
        encode_request(conv, id, &req, &mut out).unwrap();
        check_prefixes(&out);
        let frame = decode_frame(&mut out, MAX).unwrap().unwrap();
        prop_assert!(out.is_empty());
        prop_assert_eq!((frame.conversation, frame.request_id), (conv, id));
        prop_assert_eq!(frame.verb, req.verb());
        prop_assert!(Reply::decode(&frame).is_err());
        prop_assert_eq!(Request::decode(&frame).unwrap(), req);
    }

    #[test]
    fn replies_round_trip(rep in reply(), conv in any::<u32>(), id in any::<u32>()) {
        let mut out = BytesMut::new();
        encode_reply(conv, id, &rep, &mut out).unwrap();
        check_prefixes(&out);
        let frame = decode_frame(&mut out, MAX).unwrap().unwrap();
        prop_assert!(frame.is_reply());
        prop_assert!(Request::decode(&frame).is_err());
        prop_assert_eq!(Reply::decode(&frame).unwrap(), rep);
    }

    #[test]
    fn truncated_payloads_are_errors_not_panics(req in request(), rep in reply()) {
        // Re-frame each payload prefix under a correct header: decoders must refuse
        // (or, for bodies, accept a shorter body) but never panic.
        let mut out = BytesMut::new();
        encode_request(1, 1, &req, &mut out).unwrap();
        encode_reply(1, 1, &rep, &mut out).unwrap();
        let a = decode_frame(&mut out, MAX).unwrap().unwrap();
        let b = decode_frame(&mut out, MAX).unwrap().unwrap();
        for f in [a, b] {
            for cut in 0..f.payload.len() {
                let mut g = f.clone();
                g.payload = f.payload.slice(..cut);
                let _ = Request::decode(&g);
                let _ = Reply::decode(&g);
            }
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        fuzzing::decode_everything(&data);
    }

    #[test]
    fn a_connection_decodes_the_same_whatever_the_reads(
        requests in proptest::collection::vec(request(), 0..12),
        claim in proptest::option::of((HEADER..MAX, any::<prop::sample::Index>())),
        seed in any::<u8>(),
    ) {
        // A hello, requests, and perhaps a header claiming up to 1 MiB followed by part
        // of what it claims: the buffer must not reserve the claim.
        let mut stream = BytesMut::new();
        ferry_wire::ClientHello::default().encode(&mut stream).unwrap();
        for (i, req) in requests.iter().enumerate() {
            encode_request(1, i as u32, req, &mut stream).unwrap();
        }
        if let Some((len, sent)) = claim {
            let mut header = BytesMut::new();
            encode_request(1, 99, &Request::Cmit, &mut header).unwrap();
            header[..4].copy_from_slice(&len.to_le_bytes());
            stream.extend_from_slice(&header);
            let more = sent.index((len as usize - header.len()).min(8 * 1024) + 1);
            stream.extend(std::iter::repeat_n(0u8, more));
        }
        let mut data = vec![seed];
        data.extend_from_slice(&stream);
        fuzzing::drive_inbound(&data);
    }

    #[test]
    fn arbitrary_sequences_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1024)) {
        fuzzing::drive_inbound(&data);
    }

    #[test]
    fn arbitrary_compressed_payloads_never_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        fuzzing::expand_compressed(&data);
    }

    #[test]
    fn mutated_compressed_frames_never_panic(
        body in proptest::collection::vec(0u8..3, 0..3000),
        seed in any::<u8>(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        // A well-formed compressed payload, then a few bytes changed.
        let t = ferry_wire::Techniques {
            header: if seed & 0x08 != 0 { ferry_mqi::HeaderCompression::System } else { ferry_mqi::HeaderCompression::None },
            message: [ferry_mqi::MessageCompression::None, ferry_mqi::MessageCompression::Rle,
                ferry_mqi::MessageCompression::ZlibFast, ferry_mqi::MessageCompression::ZlibHigh,
                ferry_mqi::MessageCompression::Lz4Fast, ferry_mqi::MessageCompression::Lz4High][usize::from(seed & 7) % 6],
        };
        let req = Request::Put {
            properties: bytes::Bytes::new(),
            hobj: 1,
            md: ferry_mqi::MessageDescriptor::default(),
            pmo: ferry_mqi::PutOptions::default(),
            body: bytes::Bytes::from(body.clone()),
        };
        let mut out = BytesMut::new();
        encode_request(1, 1, &req, &mut out).unwrap();
        ferry_wire::FrameCompressor::new(t).compress_frame(&mut out, 0, body.len());
        let mut v = vec![seed];
        v.extend_from_slice(&out[ferry_wire::HEADER_LEN..]);
        for (at, b) in flips {
            let i = 1 + at.index(v.len() - 1);
            v[i] ^= b;
        }
        fuzzing::expand_compressed(&v);
    }

    #[test]
    fn mutated_frames_never_panic(
        req in request(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
    ) {
        let mut out = BytesMut::new();
        encode_request(3, 4, &req, &mut out).unwrap();
        let mut v = out.to_vec();
        for (i, b) in flips {
            let at = i.index(v.len());
            v[at] ^= b;
        }
        fuzzing::decode_everything(&v);
    }
}

#[test]
fn put_body_is_a_slice_of_the_read_buffer() {
    let body = Bytes::from(vec![7u8; 1000]);
    let req = Request::Put {
        properties: bytes::Bytes::new(),
        hobj: 1,
        md: MessageDescriptor::default(),
        pmo: PutOptions::default(),
        body: body.clone(),
    };
    let mut buf = BytesMut::new();
    encode_request(1, 1, &req, &mut buf).unwrap();
    let start = buf.as_ptr() as usize;
    let end = start + buf.len();
    let frame = decode_frame(&mut buf, MAX).unwrap().unwrap();
    match Request::decode(&frame).unwrap() {
        Request::Put { body: got, .. } => {
            assert_eq!(got, body);
            let p = got.as_ptr() as usize;
            assert!(p >= start && p + got.len() <= end, "body was copied");
        }
        other => panic!("decoded {other:?}"),
    }
}

/// MQPMO.Context travels from minor 2 only: a PUT laid out for minor 1 is four bytes
/// shorter and decodes at minor 1 with Context 0 and the same body.
#[test]
fn pmo_context_is_carried_from_minor_2_and_left_out_before() {
    let pmo = PutOptions::new(PutOptionFlags::PASS_ALL_CONTEXT).with_context(7);
    let req = |body: &'static [u8]| Request::Put {
        properties: bytes::Bytes::new(),
        hobj: 3,
        md: MessageDescriptor::default(),
        pmo,
        body: Bytes::from_static(body),
    };
    let encoded = |minor: u16, r: &Request| {
        let mut buf = BytesMut::new();
        encode_request_at(1, 1, r, minor, &mut buf).unwrap();
        buf
    };
    let new = encoded(MINOR_WITH_CONTEXT, &req(b"body"));
    let old = encoded(MINOR_WITH_CONTEXT - 1, &req(b"body"));
    assert_eq!(new.len(), old.len() + 4, "Context is one i32");
    let frame = decode_frame(&mut new.clone(), MAX).unwrap().unwrap();
    assert_eq!(
        Request::decode_at(&frame, MINOR_WITH_CONTEXT).unwrap(),
        req(b"body")
    );
    let frame = decode_frame(&mut old.clone(), MAX).unwrap().unwrap();
    match Request::decode_at(&frame, MINOR_WITH_CONTEXT - 1).unwrap() {
        Request::Put { pmo: got, body, .. } => {
            assert_eq!(got, PutOptions::new(PutOptionFlags::PASS_ALL_CONTEXT));
            assert_eq!(&body[..], b"body");
        }
        other => panic!("decoded {other:?}"),
    }
    // PUT1 likewise.
    let put1 = Request::Put1 {
        properties: bytes::Bytes::new(),
        od: ObjectDescriptor::default(),
        md: MessageDescriptor::default(),
        pmo,
        body: Bytes::from_static(b"x"),
    };
    let frame = decode_frame(&mut encoded(MINOR_WITH_CONTEXT, &put1), MAX)
        .unwrap()
        .unwrap();
    assert_eq!(
        Request::decode_at(&frame, MINOR_WITH_CONTEXT).unwrap(),
        put1
    );
}

#[test]
fn oversized_frame_refused() {
    let mut out = BytesMut::new();
    let req = Request::Put {
        properties: bytes::Bytes::new(),
        hobj: 1,
        md: MessageDescriptor::default(),
        pmo: PutOptions::default(),
        body: Bytes::from(vec![0u8; 5000]),
    };
    encode_request(1, 1, &req, &mut out).unwrap();
    assert!(matches!(
        decode_frame(&mut out, 4096),
        Err(WireError::FrameTooLarge { .. })
    ));
}

#[test]
fn unknown_reason_maps_to_unexpected_error() {
    let rep = Reply::Cmit {
        status: Status::from_reason(ReasonCode::BackedOut),
    };
    let mut out = BytesMut::new();
    encode_reply(1, 1, &rep, &mut out).unwrap();
    // Patch the reason number (after the 16-byte header and 4-byte CompCode).
    out[20..24].copy_from_slice(&424_242i32.to_le_bytes());
    let f = decode_frame(&mut out, MAX).unwrap().unwrap();
    assert_eq!(
        Reply::decode(&f).unwrap().status().reason,
        ReasonCode::UnexpectedError
    );
}

#[test]
fn close_notice_round_trips() {
    let n = CloseNotice::for_error(&WireError::UnknownVerb(0x33));
    assert_eq!(n.reason, ReasonCode::ConnectionBroken);
    let mut out = BytesMut::new();
    n.encode(&mut out).unwrap();
    let f = decode_frame(&mut out, MAX).unwrap().unwrap();
    assert!(Request::decode(&f).is_err());
    assert!(Reply::decode(&f).is_err());
    assert_eq!(CloseNotice::decode(&f).unwrap(), n);
}

#[test]
fn non_utf8_names_refused() {
    let mut out = BytesMut::new();
    encode_request(
        1,
        1,
        &Request::Open {
            od: ObjectDescriptor::queue("Q1").unwrap(),
            options: OpenOptions::OUTPUT,
        },
        &mut out,
    )
    .unwrap();
    // ObjectType (4 bytes) then name length 2, then "Q1": corrupt the name.
    out[16 + 5] = 0xFF;
    let f = decode_frame(&mut out, MAX).unwrap().unwrap();
    assert!(matches!(
        Request::decode(&f),
        Err(WireError::InvalidUtf8 { .. })
    ));
}

fn encoded_request(minor: u16, req: &Request) -> ferry_wire::Frame {
    let mut buf = BytesMut::new();
    encode_request_at(1, 1, req, minor, &mut buf).unwrap();
    decode_frame(&mut buf, MAX).unwrap().unwrap()
}

/// SUB and OPENTOPIC exist from minor 5: a connection of minor 4 refuses them with
/// `VerbNotNegotiated` (the server answers 2298), whatever their payload.
#[test]
fn pubsub_verbs_are_refused_below_minor_5() {
    let old = MINOR_WITH_PUBSUB - 1;
    for req in [
        Request::Sub {
            sd: SubscriptionDescriptor::managed("Price/Fruit/#"),
            hobj: 0,
        },
        Request::OpenTopic {
            object_name: FixedStr::BLANK,
            object_string: "Price/Fruit/Apple".into(),
            options: OpenOptions::OUTPUT,
        },
    ] {
        let frame = encoded_request(MINOR_WITH_PUBSUB, &req);
        assert_eq!(Request::decode_at(&frame, MINOR_WITH_PUBSUB).unwrap(), req);
        let err = Request::decode_at(&frame, old).unwrap_err();
        assert_eq!(
            err,
            WireError::VerbNotNegotiated {
                verb: req.verb().code(),
                needs: MINOR_WITH_PUBSUB,
                minor: old,
            }
        );
        assert_eq!(err.reason(), ReasonCode::FunctionNotSupported);
        assert!(err.to_string().contains("needs protocol minor 5"), "{err}");
    }
}

/// Every MQSD text and every topic string is bounded as MQ bounds it (10,240 bytes; 48
/// and 12 for the names): the bound itself travels, one byte more is refused by the
/// encoder and, if a peer sends it all the same, by the decoder, before its bytes are read.
#[test]
fn pubsub_strings_are_bounded() {
    let at_bound = "a".repeat(MAX_OBJECT_STRING_LEN);
    let over = "a".repeat(MAX_OBJECT_STRING_LEN + 1);
    let with = |f: &dyn Fn(&mut SubscriptionDescriptor, String), text: &str| {
        let mut sd = SubscriptionDescriptor::managed("T");
        f(&mut sd, text.to_string());
        Request::Sub { sd, hobj: 0 }
    };
    type Setter = Box<dyn Fn(&mut SubscriptionDescriptor, String)>;
    let fields: Vec<(&str, Setter, usize)> = vec![
        (
            "MQSD.ObjectString",
            Box::new(|sd, t| sd.object_string = t),
            MAX_OBJECT_STRING_LEN,
        ),
        (
            "MQSD.SubName",
            Box::new(|sd, t| sd.sub_name = t),
            MAX_OBJECT_STRING_LEN,
        ),
        (
            "MQSD.SubUserData",
            Box::new(|sd, t| sd.sub_user_data = t),
            MAX_OBJECT_STRING_LEN,
        ),
        (
            "MQSD.SelectionString",
            Box::new(|sd, t| sd.selection_string = t),
            MAX_OBJECT_STRING_LEN,
        ),
        ("MQSD.ObjectName", Box::new(|sd, t| sd.object_name = t), 48),
        (
            "MQSD.AlternateUserId",
            Box::new(|sd, t| sd.alternate_user_id = t),
            12,
        ),
    ];
    for (field, set, max) in &fields {
        let ok = with(set.as_ref(), &at_bound[..*max]);
        assert_eq!(
            Request::decode(&encoded_request(MINOR_WITH_PUBSUB, &ok)).unwrap(),
            ok
        );
        let long = with(set.as_ref(), &over[..*max + 1]);
        let mut out = BytesMut::from(&b"kept"[..]);
        assert_eq!(
            encode_request(1, 1, &long, &mut out),
            Err(WireError::NameTooLong {
                field,
                len: max + 1,
                max: *max
            })
        );
        assert_eq!(&out[..], b"kept", "nothing of the frame is left");
    }
    // A peer that sends an over-long ObjectString anyway: the length is refused.
    let ok = Request::OpenTopic {
        object_name: FixedStr::BLANK,
        object_string: at_bound.clone(),
        options: OpenOptions::OUTPUT,
    };
    let mut buf = BytesMut::new();
    encode_request(1, 1, &ok, &mut buf).unwrap();
    // Header, then ObjectName (u8 length 0), then the string's u32 length.
    let at = ferry_wire::HEADER_LEN + 1;
    buf[at..at + 4].copy_from_slice(&((MAX_OBJECT_STRING_LEN + 1) as u32).to_le_bytes());
    let frame = decode_frame(&mut buf, MAX).unwrap().unwrap();
    assert_eq!(
        Request::decode(&frame),
        Err(WireError::NameTooLong {
            field: "OPENTOPIC.ObjectString",
            len: MAX_OBJECT_STRING_LEN + 1,
            max: MAX_OBJECT_STRING_LEN
        })
    );
    let long_reply = Reply::OpenTopic {
        status: Status::OK,
        hobj: 1,
        topic_string: over,
    };
    assert!(matches!(
        encode_reply(1, 1, &long_reply, &mut BytesMut::new()),
        Err(WireError::NameTooLong { .. })
    ));
}

/// From minor 5 the GET reply carries the message's properties before the body; a
/// connection of minor 4 gets the layout it always had (no properties, 4 bytes fewer).
#[test]
fn get_reply_properties_travel_from_minor_5_only() {
    let props = Bytes::from_static(b"\x01\x00\x00\x00\x00");
    let reply = Reply::Get {
        status: Status::OK,
        md: MessageDescriptor::default(),
        data_length: 4,
        properties: props.clone(),
        body: Bytes::from_static(b"body"),
    };
    let at = |minor: u16| {
        let mut out = BytesMut::new();
        encode_reply_at(1, 1, &reply, minor, &mut out).unwrap();
        out
    };
    let new = at(MINOR_WITH_PUBSUB);
    let old = at(MINOR_WITH_PUBSUB - 1);
    assert_eq!(new.len(), old.len() + 4 + props.len());
    let frame = decode_frame(&mut new.clone(), MAX).unwrap().unwrap();
    assert_eq!(Reply::decode_at(&frame, MINOR_WITH_PUBSUB).unwrap(), reply);
    let frame = decode_frame(&mut old.clone(), MAX).unwrap().unwrap();
    match Reply::decode_at(&frame, MINOR_WITH_PUBSUB - 1).unwrap() {
        Reply::Get {
            properties, body, ..
        } => {
            assert!(properties.is_empty());
            assert_eq!(&body[..], b"body");
        }
        other => panic!("decoded {other:?}"),
    }
}

/// From minor 6 PUT and PUT1 carry the message's properties between the MQPMO and the
/// body; a connection of minor 5 keeps the old layout, and properties cannot be encoded
/// for it (the peer could not see them), while a PUT without properties still can.
#[test]
fn put_properties_travel_from_minor_6_only() {
    let props = Bytes::from_static(b"\x01\x00\x00\x00\x00");
    let put = |properties: Bytes| Request::Put {
        hobj: 3,
        md: MessageDescriptor::default(),
        pmo: PutOptions::default(),
        properties,
        body: Bytes::from_static(b"body"),
    };
    let put1 = Request::Put1 {
        od: ObjectDescriptor::queue("Q").unwrap(),
        md: MessageDescriptor::default(),
        pmo: PutOptions::default(),
        properties: props.clone(),
        body: Bytes::from_static(b"body"),
    };
    for req in [put(props.clone()), put1] {
        let mut out = BytesMut::new();
        encode_request_at(1, 1, &req, MINOR_WITH_PUT_PROPERTIES, &mut out).unwrap();
        let frame = decode_frame(&mut out, MAX).unwrap().unwrap();
        assert_eq!(
            Request::decode_at(&frame, MINOR_WITH_PUT_PROPERTIES).unwrap(),
            req
        );
        let mut old = BytesMut::new();
        let err = encode_request_at(1, 1, &req, MINOR_WITH_PUT_PROPERTIES - 1, &mut old)
            .expect_err("properties need minor 6");
        assert!(err.to_string().contains("needs protocol minor 6"), "{err}");
        assert!(old.is_empty(), "nothing is written on error");
    }
    let mut old = BytesMut::new();
    encode_request_at(
        1,
        1,
        &put(Bytes::new()),
        MINOR_WITH_PUT_PROPERTIES - 1,
        &mut old,
    )
    .unwrap();
    let frame = decode_frame(&mut old, MAX).unwrap().unwrap();
    match Request::decode_at(&frame, MINOR_WITH_PUT_PROPERTIES - 1).unwrap() {
        Request::Put {
            properties, body, ..
        } => {
            assert!(properties.is_empty());
            assert_eq!(&body[..], b"body");
        }
        other => panic!("decoded {other:?}"),
    }
}
