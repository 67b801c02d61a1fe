//! One entry point that pushes arbitrary bytes through every decoder of the crate, and
//! through a server-role [`Connection`].
//!
//! The cargo-fuzz target `amqp_frame` (crates/ferry-amqp/fuzz) calls
//! [`decode_everything`], and a proptest in this crate's tests calls it too, so stable CI
//! covers the same path. Besides "never panics", it checks that whatever decodes
//! re-encodes to bytes that decode and re-encode to the same bytes (a fixed point; byte
//! comparison so NaN floats compare equal). [`feed_server`] plays a broker answering
//! every event (SASL, open, attach, credit, dispositions, sends) so the state machine
//! sees as much of its surface as the bytes reach.

use bytes::{Bytes, BytesMut};

use crate::codec::Decoder;
use crate::codec::{from_bytes, to_bytes, Decode, Encode};
use crate::connection::{Config, Connection, Event, SaslServer};
use crate::frame::{encode_frame, FrameDecoder, ProtocolHeader};
use crate::message::{Header, Message, PropertiesSpans, RawSections};
use crate::performative::*;
use crate::value::Value;

/// The frame limit used while fuzzing (1 MiB).
pub const FUZZ_MAX_FRAME: u32 = 1 << 20;

/// Decodes `data` as protocol header + frames, as each performative, as a value and as a
/// message. Panics only if a decoded value fails to round-trip (a codec bug).
pub fn decode_everything(data: &[u8]) {
    let bytes = Bytes::copy_from_slice(data);
    frames(data);
    round_trip::<Value>(&bytes);
    round_trip::<Performative>(&bytes);
    round_trip::<Open>(&bytes);
    round_trip::<Begin>(&bytes);
    round_trip::<Attach>(&bytes);
    round_trip::<Flow>(&bytes);
    round_trip::<Transfer>(&bytes);
    round_trip::<Disposition>(&bytes);
    round_trip::<Detach>(&bytes);
    round_trip::<End>(&bytes);
    round_trip::<Close>(&bytes);
    round_trip::<Source>(&bytes);
    round_trip::<LinkTarget>(&bytes);
    round_trip::<DeliveryState>(&bytes);
    round_trip::<Declare>(&bytes);
    round_trip::<Discharge>(&bytes);
    round_trip::<SaslInit>(&bytes);
    round_trip::<SaslOutcome>(&bytes);
    message(&bytes);
    let _ = fast_path_agrees(&bytes);
    feed_server(data);
}

/// Whatever a fast path (the performatives', the header's, the properties section's)
/// reads from `bytes`, starting at any described value in it, the general decoder reads
/// too, to the same value and the same length. Panics otherwise; returns how many reads
/// a fast path made (so a test can tell it was not bypassed).
pub fn fast_path_agrees(bytes: &Bytes) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == 0)
        .map(|(at, _)| fast_paths_agree_at(&bytes.slice(at..)))
        .sum()
}

fn fast_paths_agree_at(bytes: &Bytes) -> usize {
    let mut taken = 0;
    if let Some((quick, used)) = crate::performative::quick_decode(bytes) {
        taken += 1;
        let mut dec = Decoder::new(bytes.clone());
        let general: Result<Performative, _> = dec.read();
        assert_eq!(
            general.as_ref(),
            Ok(&quick),
            "performative fast path disagrees"
        );
        assert_eq!(
            dec.position(),
            used,
            "performative fast path ends elsewhere"
        );
    }
    let mut start = Decoder::new(bytes.clone());
    let Ok(code) = start.read_code() else {
        return taken;
    };
    let (mut quick, mut general) = (start.clone(), start.clone());
    if let Some(h) = Header::quick(&mut quick, code) {
        taken += 1;
        assert_eq!(
            Header::general(&mut general, code),
            Ok(h),
            "header fast path disagrees"
        );
        assert_eq!(
            quick.position(),
            general.position(),
            "header fast path ends elsewhere"
        );
    }
    let (mut quick, mut general) = (start.clone(), start);
    if let Some(p) = PropertiesSpans::quick(&mut quick, code) {
        taken += 1;
        assert_eq!(
            PropertiesSpans::general(&mut general, code),
            Ok(p),
            "properties fast path disagrees"
        );
        assert_eq!(
            quick.position(),
            general.position(),
            "properties fast path ends elsewhere"
        );
    }
    taken
}

/// Feeds `data` to server-role connections: as the first bytes, after the AMQP header
/// (no SASL), and after the SASL header, answering every event like a broker.
pub fn feed_server(data: &[u8]) {
    for header in [None, Some(ProtocolHeader::Amqp), Some(ProtocolHeader::Sasl)] {
        let config = Config {
            max_frame_size: 4096,
            incoming_window: 8,
            max_message_size: Some(1 << 16),
            ..Config::default()
        };
        let mut sasl = SaslServer::plain_and_anonymous();
        sasl.allow_no_sasl = true;
        let mut server = Connection::server(config, sasl);
        let mut input = BytesMut::new();
        if let Some(h) = header {
            h.encode(&mut input);
        }
        input.extend_from_slice(data);
        serve(&mut server, &mut input);
    }
}

fn serve(server: &mut Connection, input: &mut BytesMut) {
    let mut events = Vec::new();
    let mut now = 0;
    for _ in 0..64 {
        let before = input.len();
        server.receive(input, now, &mut events);
        if events.is_empty() && input.len() == before {
            break;
        }
        for event in events.drain(..) {
            answer(server, event);
        }
        server.take_output();
        now += 1_000;
        server.tick(now, &mut events);
    }
}

/// What a broker would do: accept everything, grant credit, settle, send when it can.
fn answer(server: &mut Connection, event: Event) {
    // Results are ignored: the state may have moved on (closed, detached) meanwhile.
    match event {
        Event::SaslInit { .. } => {
            let _ = server.sasl_outcome(true);
        }
        Event::Open(_) => {
            let _ = server.open(Open::new("fuzz"));
        }
        Event::Attach { link, attach } => {
            let peer_sends = attach.role == Role::Sender;
            let _ = server.attach_reply(link, attach.source, attach.target);
            if peer_sends {
                let _ = server.grant_credit(link, 2);
            }
        }
        Event::Flow { link, drain, .. } => {
            if server.credit(link) > 0 {
                let _ = server.send(link, Bytes::from_static(b"t"), false, 0, |out| {
                    out.extend_from_slice(&[0x00, 0x53, 0x77, 0xa1, 0x01, b'x'])
                });
            }
            if drain {
                let _ = server.drained(link);
            }
        }
        Event::Message {
            link, delivery_id, ..
        } => {
            let _ = server.disposition(
                link.session(),
                Role::Receiver,
                delivery_id,
                delivery_id,
                true,
                Some(DeliveryState::Accepted),
            );
        }
        _ => {}
    }
}

fn frames(data: &[u8]) {
    let mut buf = BytesMut::from(data);
    if ProtocolHeader::decode(&mut buf).is_err() {
        buf = BytesMut::from(data);
    }
    let mut dec = FrameDecoder::new(FUZZ_MAX_FRAME);
    while let Ok(Some(frame)) = dec.decode(&mut buf) {
        let Some(p) = &frame.performative else {
            continue;
        };
        let mut out = BytesMut::new();
        encode_frame(frame.channel, p, &frame.payload, &mut out);
        let again = FrameDecoder::new(u32::MAX)
            .decode(&mut out)
            .expect("re-encoded frame decodes")
            .expect("re-encoded frame is whole");
        assert_eq!(again.channel, frame.channel);
        assert_eq!(again.payload, frame.payload);
        assert_eq!(to_bytes(&again.performative), to_bytes(&frame.performative));
        if !frame.payload.is_empty() {
            message(&frame.payload);
        }
    }
}

fn round_trip<T: Decode + Encode>(bytes: &Bytes) {
    if let Ok(v) = from_bytes::<T>(bytes.clone()) {
        let first = to_bytes(&v);
        let again = from_bytes::<T>(first.clone()).expect("re-encoded value decodes");
        assert_eq!(to_bytes(&again), first, "encoding is not a fixed point");
    }
}

fn message(bytes: &Bytes) {
    let scanned = RawSections::scan(bytes.clone());
    let decoded = Message::decode_with_sections(bytes.clone());
    // The broker's decode (properties borrowed) accepts exactly what the owned decode
    // accepts, and reads the same message.
    let borrowed = Message::decode_borrowing_properties(bytes);
    match (&decoded, &borrowed) {
        (Ok((m, raw)), Ok((rest, properties, raw_b))) => {
            assert_eq!(raw, raw_b, "both decodes find the same sections");
            assert_eq!(m.properties, properties.map(|p| p.to_owned()));
            let mut whole = rest.clone();
            whole.properties = m.properties.clone();
            assert_eq!(&whole, m, "the other sections decode the same");
        }
        (Err(_), Err(_)) => {}
        _ => panic!(
            "owned and borrowing decodes disagree: {:?} vs {:?}",
            decoded.as_ref().err(),
            borrowed.as_ref().err()
        ),
    }
    if let Ok((m, raw)) = decoded {
        // Whatever decodes also scans, to the same spans.
        assert_eq!(scanned.as_ref(), Ok(&raw));
        let mut first = BytesMut::new();
        m.encode(&mut first);
        let again = Message::decode(first.clone().freeze()).expect("re-encoded message decodes");
        let mut second = BytesMut::new();
        again.encode(&mut second);
        assert_eq!(first, second, "message encoding is not a fixed point");
    }
}
