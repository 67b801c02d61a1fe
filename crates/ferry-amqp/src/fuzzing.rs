//! One entry point that pushes arbitrary bytes through every decoder of the crate.
//!
//! The cargo-fuzz target `amqp_frame` (crates/ferry-amqp/fuzz) calls
//! [`decode_everything`], and a proptest in this crate's tests calls it too, so stable CI
//! covers the same path. Besides "never panics", it checks that whatever decodes
//! re-encodes to bytes that decode and re-encode to the same bytes (a fixed point; byte
//! comparison so NaN floats compare equal).

use bytes::{Bytes, BytesMut};

use crate::codec::{from_bytes, to_bytes, Decode, Encode};
use crate::frame::{encode_frame, FrameDecoder, ProtocolHeader};
use crate::message::{Message, RawSections};
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
    if let Ok((m, raw)) = Message::decode_with_sections(bytes.clone()) {
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
