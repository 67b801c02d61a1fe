//! Malformed input is an error, never a panic: truncation at every length, bad
//! constructors, lengths past the input, nesting bombs, huge counts, wrong types.

use bytes::{Bytes, BytesMut};
use ferry_amqp::codec::{from_bytes, to_bytes, MAX_DEPTH};
use ferry_amqp::*;

fn sample_frame() -> Vec<u8> {
    let t = Transfer {
        handle: 1,
        delivery_id: Some(1),
        delivery_tag: Some(Bytes::from_static(b"tag")),
        message_format: Some(0),
        ..Transfer::default()
    };
    let m = Message {
        header: Some(Header {
            durable: true,
            ..Header::default()
        }),
        properties: Some(Properties {
            message_id: Some(MessageId::String("ID:x".into())),
            ..Properties::default()
        }),
        body: Some(Body::Value(Value::from("hello"))),
        ..Message::default()
    };
    let mut wire = BytesMut::new();
    encode_transfer_with(0, &t, &mut wire, |out| m.encode(out));
    wire.to_vec()
}

#[test]
fn every_truncation_of_a_frame_waits_and_of_a_body_fails() {
    let full = sample_frame();
    for n in 0..full.len() {
        let mut buf = BytesMut::from(&full[..n]);
        assert_eq!(
            FrameDecoder::new(4096).decode(&mut buf),
            Ok(None),
            "prefix {n}"
        );
    }
    // The frame body (performative + message) truncated anywhere: decode errors or a
    // shorter message, never a panic; the transfer alone truncated is always an error.
    let body = Bytes::copy_from_slice(&full[8..]);
    let transfer_len = to_bytes(&Performative::Transfer(Transfer {
        handle: 1,
        delivery_id: Some(1),
        delivery_tag: Some(Bytes::from_static(b"tag")),
        message_format: Some(0),
        ..Transfer::default()
    }))
    .len();
    for n in 0..transfer_len {
        assert!(
            from_bytes::<Performative>(body.slice(..n)).is_err(),
            "transfer prefix {n}"
        );
    }
    let payload = body.slice(transfer_len..);
    for n in 1..payload.len() {
        let _ = Message::decode(payload.slice(..n));
    }
    assert!(Message::decode(payload.slice(..payload.len() - 1)).is_err());
}

#[test]
fn bad_constructors_are_errors() {
    for code in [0x01u8, 0x3f, 0x57, 0xa2, 0xff] {
        assert!(
            from_bytes::<Value>(Bytes::from(vec![code, 0, 0, 0, 0])).is_err(),
            "{code:#x}"
        );
    }
    // A performative whose descriptor is a string, not a ulong or symbol.
    assert_eq!(
        from_bytes::<Performative>(Bytes::from_static(&[0x00, 0xa1, 1, b'x', 0x45])),
        Err(DecodeError::BadDescriptor(0xa1))
    );
    // An unknown performative code.
    assert!(matches!(
        from_bytes::<Performative>(Bytes::from_static(&[0x00, 0x53, 0x99, 0x45])),
        Err(DecodeError::UnexpectedDescriptor { .. })
    ));
    // A transfer whose handle is a string.
    assert!(matches!(
        from_bytes::<Transfer>(Bytes::from_static(&[0x00, 0x53, 0x14, 0xc0, 3, 1, 0xa1, 0])),
        Err(DecodeError::UnexpectedType {
            field: "handle",
            ..
        })
    ));
}

#[test]
fn missing_mandatory_fields_are_errors() {
    assert_eq!(
        from_bytes::<Transfer>(Bytes::from_static(&[0x00, 0x53, 0x14, 0x45])),
        Err(DecodeError::MissingField {
            type_name: "transfer",
            field: "handle"
        })
    );
    assert!(from_bytes::<Open>(Bytes::from_static(&[0x00, 0x53, 0x10, 0xc0, 2, 1, 0x40])).is_err());
}

#[test]
fn lengths_over_the_remaining_input_are_errors() {
    // str32 claiming 4 GiB.
    assert!(matches!(
        from_bytes::<Value>(Bytes::from_static(&[0xb1, 0xff, 0xff, 0xff, 0xff, b'a'])),
        Err(DecodeError::LengthOverRemaining { .. })
    ));
    // A list8 whose size runs past the end.
    assert!(from_bytes::<Value>(Bytes::from_static(&[0xc0, 10, 1, 0x40])).is_err());
    // A frame whose doff points past its end.
    let mut buf = BytesMut::from(&[0, 0, 0, 12, 4, 0, 0, 0, 0, 0, 0, 0][..]);
    assert!(FrameDecoder::new(1024).decode(&mut buf).is_err());
}

#[test]
fn a_depth_bomb_is_refused() {
    // Each level a list8 holding one more level; sizes exact, so only depth is wrong.
    let mut v = vec![0x40u8];
    for _ in 0..(MAX_DEPTH + 5) {
        let mut outer = vec![0xc0, v.len() as u8 + 1, 1];
        outer.extend_from_slice(&v);
        v = outer;
        if v.len() > 250 {
            break;
        }
    }
    assert_eq!(
        from_bytes::<Value>(Bytes::from(v.clone())),
        Err(DecodeError::TooDeep { limit: MAX_DEPTH })
    );
    // The same bomb inside a performative's properties.
    let mut open = vec![0x00, 0x53, 0x10, 0xd0];
    let mut fields = vec![
        0xa1, 1, b'c', 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0x40, 0xc1,
    ];
    fields.extend_from_slice(&[(v.len() + 4) as u8, 2, 0xa3, 1, b'k']);
    fields.extend_from_slice(&v);
    open.extend_from_slice(&(fields.len() as u32 + 4).to_be_bytes());
    open.extend_from_slice(&10u32.to_be_bytes());
    open.extend_from_slice(&fields);
    assert_eq!(
        from_bytes::<Open>(Bytes::from(open)),
        Err(DecodeError::TooDeep { limit: MAX_DEPTH })
    );
}

#[test]
fn huge_counts_are_refused_before_allocating() {
    for bytes in [
        &[0xd0, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xff][..],
        &[0xd1, 0, 0, 0, 4, 0x7f, 0xff, 0xff, 0xfe][..],
        &[0xf0, 0, 0, 0, 5, 0x7f, 0xff, 0xff, 0xff, 0x43][..],
        &[0x00, 0x53, 0x10, 0xd0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff][..],
    ] {
        assert!(
            matches!(
                from_bytes::<Value>(Bytes::copy_from_slice(bytes)),
                Err(DecodeError::LengthOverRemaining { .. })
            ),
            "{bytes:02x?}"
        );
    }
}

#[test]
fn sections_out_of_order_are_refused() {
    // properties before header.
    let bytes = Bytes::from_static(&[0x00, 0x53, 0x73, 0x45, 0x00, 0x53, 0x70, 0x45]);
    assert!(matches!(
        Message::decode(bytes.clone()),
        Err(DecodeError::SectionOrder(_))
    ));
    assert!(RawSections::scan(bytes).is_err());
    // two amqp-value bodies.
    let two = Bytes::from_static(&[0x00, 0x53, 0x77, 0x40, 0x00, 0x53, 0x77, 0x40]);
    assert!(Message::decode(two).is_err());
    // a bare value, not a section.
    assert!(Message::decode(Bytes::from_static(&[0xa1, 0])).is_err());
}

#[test]
fn invalid_utf8_is_refused() {
    assert_eq!(
        from_bytes::<Value>(Bytes::from_static(&[0xa1, 1, 0xff])),
        Err(DecodeError::InvalidUtf8)
    );
}
