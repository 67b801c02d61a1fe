//! Real byte sequences, written down by hand from the spec's encoding rules, decode to
//! the fields a client sent: a Qpid JMS open, a proton-style transfer with a JMS text
//! message, and a SASL PLAIN init.

use bytes::{Bytes, BytesMut};
use ferry_amqp::{
    condition, Body, Frame, FrameDecoder, FrameType, Message, MessageId, Performative, Symbol,
    Timestamp, Value,
};

fn hex(s: &str) -> Vec<u8> {
    // Each line: hex bytes, then an optional `# comment`.
    let s: String = s
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace())
        .collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("test hex"))
        .collect()
}

fn one_frame(bytes: Vec<u8>) -> Frame {
    let mut buf = BytesMut::from(&bytes[..]);
    let frame = FrameDecoder::new(1 << 20)
        .decode(&mut buf)
        .unwrap()
        .unwrap();
    assert!(buf.is_empty(), "frame not consumed whole");
    frame
}

/// Qpid JMS 2.x open: list32 form, max-frame-size 1 MiB, channel-max 32767, idle 30 s,
/// desired capabilities as a sym8 array, properties map.
const QPID_JMS_OPEN: &str = "
    0000011a 02 00 0000  # frame: size 282, doff 2, AMQP, ch 0
    00 53 10  # descriptor: open
    d0 0000010a 0000000a  # list32, 10 fields
    a1 29 49443a39663365306331612d366231642d346437652d38
          6130632d3262396634653764316333613a31  # container-id
    a1 09 6c6f63616c686f7374  # hostname localhost
    70 00100000  # max-frame-size 1048576
    60 7fff  # channel-max 32767
    70 00007530  # idle-time-out 30000
    40 40 40  # locales, offered-capabilities
    e0 4d 04 a3  # desired-capabilities: array8 of sym8
       1d 736f6c652d636f6e6e656374696f6e2d666f722d636f6e7461696e6572
       10 44454c415945445f44454c4956455259
       0f 414e4f4e594d4f55532d52454c4159
       0b 5348415245442d53554253
    c1 6f 06  # properties: map8, 3 pairs
       a3 07 70726f64756374 a1 07 517069644a4d53
       a3 07 76657273696f6e a1 05 322e352e30
       a3 08 706c6174666f726d
       a1 40 4a564d3a2031372e302e392c2031372e302e392b392c2045636c697073652041646f707469756d2c204f533a204c696e75782c20362e312e302c20616d643634
";

#[test]
fn qpid_jms_open_decodes_to_its_fields() {
    let frame = one_frame(hex(QPID_JMS_OPEN));
    assert_eq!((frame.channel, frame.frame_type), (0, FrameType::Amqp));
    let Some(Performative::Open(open)) = frame.performative else {
        panic!("not an open: {:?}", frame.performative)
    };
    assert_eq!(
        open.container_id,
        "ID:9f3e0c1a-6b1d-4d7e-8a0c-2b9f4e7d1c3a:1"
    );
    assert_eq!(
        open.hostname.as_ref().map(|h| h.as_str()),
        Some("localhost")
    );
    assert_eq!(open.max_frame_size, 1_048_576);
    assert_eq!(open.channel_max, 32767);
    assert_eq!(open.idle_time_out, Some(30_000));
    assert!(open.offered_capabilities.is_empty());
    assert_eq!(
        open.desired_capabilities,
        [
            condition::CAPABILITY_SOLE_CONNECTION,
            condition::CAPABILITY_DELAYED_DELIVERY,
            condition::CAPABILITY_ANONYMOUS_RELAY,
            condition::CAPABILITY_SHARED_SUBS
        ]
        .map(Symbol::from_static)
    );
    assert_eq!(
        open.properties[0],
        (Symbol::from("product"), Value::from("QpidJMS"))
    );
    assert_eq!(open.properties.len(), 3);
}

/// A transfer as proton sends it (list8, delivery-tag "1") carrying a JMS text message:
/// durable header with ttl, x-opt-jms-msg-type = byte 5, properties (message-id, to,
/// creation-time), application property color=red, amqp-value "hello".
const PROTON_TRANSFER: &str = "
    0000007f 02 00 0001  # frame: size 127, AMQP, channel 1
    00 53 14 c0 09 06  # transfer, list8, 6 fields
       43 43 a0 01 31 43 42 42  # handle 0, delivery-id 0, tag '1', format 0, settled false, more false
    00 53 70 c0 09 03  # header, 3 fields
       41 50 04 70 0000ea60  # durable, priority 4, ttl 60000
    00 53 72 c1 17 02  # message-annotations, 1 pair
       a3 12 782d6f70742d6a6d732d6d73672d74797065 51 05  # x-opt-jms-msg-type: byte 5
    00 53 73 c0 1e 0a  # properties, 10 fields
       a1 04 49443a31 40 a1 05 4150502e51  # message-id 'ID:1', user-id null, to 'APP.Q'
       40 40 40 40 40 40  # subject .. absolute-expiry-time null
       83 0000019b69684600  # creation-time 1767000000000
    00 53 74 c1 0d 02 a1 05 636f6c6f72 a1 03 726564  # application-properties color=red
    00 53 77 a1 05 68656c6c6f  # amqp-value 'hello'
";

#[test]
fn proton_transfer_and_its_message_decode() {
    let frame = one_frame(hex(PROTON_TRANSFER));
    assert_eq!(frame.channel, 1);
    let Some(Performative::Transfer(t)) = &frame.performative else {
        panic!("not a transfer")
    };
    assert_eq!(t.handle, 0);
    assert_eq!(t.delivery_id, Some(0));
    assert_eq!(t.delivery_tag.as_deref(), Some(&b"1"[..]));
    assert_eq!(t.message_format, Some(0));
    assert_eq!(t.settled, Some(false));
    assert!(!t.more);

    let m = Message::decode(frame.payload.clone()).unwrap();
    let h = m.header.as_ref().unwrap();
    assert!(h.durable);
    assert_eq!((h.priority, h.ttl, h.delivery_count), (4, Some(60_000), 0));
    assert_eq!(
        m.message_annotation(condition::ANNOTATION_JMS_MSG_TYPE),
        Some(&Value::Byte(condition::jms_msg_type::TEXT))
    );
    let p = m.properties.as_ref().unwrap();
    assert_eq!(p.message_id, Some(MessageId::String("ID:1".into())));
    assert_eq!(p.to.as_ref().unwrap(), "APP.Q");
    assert_eq!(p.creation_time, Some(Timestamp(1_767_000_000_000)));
    assert_eq!(p.group_id, None);
    let ap = m.application_properties.as_ref().unwrap();
    assert_eq!(ap[0].0, "color");
    assert_eq!(ap[0].1, Value::from("red"));
    assert_eq!(m.body, Some(Body::Value(Value::from("hello"))));
}

#[test]
fn proton_transfer_sections_are_available_verbatim() {
    let frame = one_frame(hex(PROTON_TRANSFER));
    let (_, raw) = Message::decode_with_sections(frame.payload.clone()).unwrap();
    let body = raw.section(ferry_amqp::SectionKind::Body).unwrap();
    assert_eq!(&body[..], &hex("00 53 77 a1 05 68656c6c6f")[..]);
    // The bare message runs from properties to the end of the body.
    let bare = raw.bare_message();
    assert_eq!(&bare[..3], &[0x00, 0x53, 0x73]);
    assert!(frame.payload.ends_with(&bare));
    assert_eq!(
        ferry_amqp::RawSections::scan(frame.payload.clone()),
        Ok(raw)
    );
}

const SASL_PLAIN_INIT: &str = "
    00000029 02 01 0000  # frame: SASL
    00 53 41 c0 1c 03  # sasl-init, 3 fields
       a3 05 504c41494e  # mechanism PLAIN
       a0 07 00 617070 00 7077  # initial-response \\0app\\0pw
       a1 09 6c6f63616c686f7374  # hostname localhost
";

#[test]
fn sasl_plain_init_decodes() {
    let frame = one_frame(hex(SASL_PLAIN_INIT));
    assert_eq!(frame.frame_type, FrameType::Sasl);
    let Some(Performative::SaslInit(init)) = frame.performative else {
        panic!("not a sasl-init")
    };
    assert_eq!(init.mechanism, "PLAIN");
    assert_eq!(
        init.initial_response,
        Some(Bytes::from_static(b"\0app\0pw"))
    );
    assert_eq!(init.hostname.unwrap(), "localhost");
}

#[test]
fn symbolic_descriptors_decode_like_numeric_ones() {
    // close with descriptor amqp:close:list and an error amqp:error:list.
    let mut close = vec![0x00, 0xa3, 15];
    close.extend_from_slice(b"amqp:close:list");
    let cond = b"amqp:not-found";
    let mut err = vec![0x00, 0xa3, 15];
    err.extend_from_slice(b"amqp:error:list");
    err.extend_from_slice(&[0xc0, 2 + cond.len() as u8 + 1, 1, 0xa3, cond.len() as u8]);
    err.extend_from_slice(cond);
    close.extend_from_slice(&[0xc0, err.len() as u8 + 1, 1]);
    close.extend_from_slice(&err);
    let mut wire = vec![];
    wire.extend_from_slice(&(close.len() as u32 + 8).to_be_bytes());
    wire.extend_from_slice(&[2, 0, 0, 0]);
    wire.extend_from_slice(&close);
    let Some(Performative::Close(c)) = one_frame(wire).performative else {
        panic!("not a close")
    };
    assert_eq!(c.error.unwrap().condition, condition::NOT_FOUND);
}
