//! One entry point that pushes arbitrary bytes through every decoder.
//!
//! The cargo-fuzz target `frame_decoder` (crates/ferry-wire/fuzz) calls
//! [`decode_everything`], and a proptest in this crate's tests calls it too, so stable CI
//! covers the same path. Besides "never panics", it checks that whatever decodes,
//! re-encodes to something that decodes to the same value.

use bytes::BytesMut;

use crate::{
    decode_frame, encode_reply, encode_request, ClientHello, CloseNotice, Frame, Reply, Request,
    ServerHello,
};

/// The frame limit used while fuzzing (1 MiB).
pub const FUZZ_MAX_FRAME: u32 = 1 << 20;

/// Decodes `data` as a hello followed by frames, and each frame as request, reply and
/// close notice. Panics only if a decoded value fails to round-trip (a codec bug).
pub fn decode_everything(data: &[u8]) {
    let mut buf = BytesMut::from(data);
    if let Ok(Some(h)) = ServerHello::decode(&mut BytesMut::from(data)) {
        let mut out = BytesMut::new();
        if h.encode(&mut out).is_ok() {
            assert_eq!(ServerHello::decode(&mut out), Ok(Some(h)));
        }
    }
    match ClientHello::decode(&mut buf) {
        Ok(Some(h)) => {
            let mut out = BytesMut::new();
            if h.encode(&mut out).is_ok() {
                assert_eq!(ClientHello::decode(&mut out), Ok(Some(h)));
            }
        }
        // Not a hello: read the same bytes as a stream of frames.
        _ => buf = BytesMut::from(data),
    }
    while let Ok(Some(frame)) = decode_frame(&mut buf, FUZZ_MAX_FRAME) {
        check_frame(&frame);
    }
}

fn redecode(out: &mut BytesMut) -> Frame {
    match decode_frame(out, u32::MAX) {
        Ok(Some(f)) => f,
        other => panic!("re-encoded frame does not decode: {other:?}"),
    }
}

fn check_frame(frame: &Frame) {
    if let Ok(req) = Request::decode(frame) {
        let mut out = BytesMut::new();
        if encode_request(frame.conversation, frame.request_id, &req, &mut out).is_ok() {
            let again = redecode(&mut out);
            assert_eq!(
                (again.conversation, again.request_id),
                (frame.conversation, frame.request_id)
            );
            assert_eq!(Request::decode(&again), Ok(req));
        }
    }
    if let Ok(reply) = Reply::decode(frame) {
        let mut out = BytesMut::new();
        if encode_reply(frame.conversation, frame.request_id, &reply, &mut out).is_ok() {
            let again = redecode(&mut out);
            assert_eq!(Reply::decode(&again), Ok(reply));
        }
    }
    if let Ok(notice) = CloseNotice::decode(frame) {
        let mut out = BytesMut::new();
        if notice.encode(&mut out).is_ok() {
            let again = redecode(&mut out);
            assert_eq!(CloseNotice::decode(&again), Ok(notice));
        }
    }
}
