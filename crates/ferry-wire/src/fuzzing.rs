//! Entry points that push arbitrary bytes through the decoders.
//!
//! The cargo-fuzz targets (crates/ferry-wire/fuzz) call them, and proptests in this
//! crate's tests call them too, so stable CI covers the same paths:
//!
//! - `frame_decoder` → [`decode_everything`]: one buffer through every decoder; whatever
//!   decodes re-encodes to something that decodes to the same value. Requests and
//!   replies are decoded as the newest minor, as the minor before properties on PUT (5),
//!   and as the minor before publish/subscribe (4), whose connections must refuse SUB and
//!   OPENTOPIC and whose GET replies carry no properties.
//! - `inbound_sequence` → [`drive_inbound`]: a whole byte sequence (hello, then frames)
//!   fed to [`Inbound`] in the reads a socket would make, as the server's socket task
//!   does; it must take the same hellos and frames as one decode of the whole sequence,
//!   whatever the split, and its buffer must grow with what was fed, never with what a
//!   header claims.
//! - `compressed_frame` → [`expand_compressed`]: arbitrary bytes as the payload of a
//!   compressed PUT, expanded under techniques drawn from the first byte; it must never
//!   expand past the limit, and whatever expands must compress and expand back to itself.
//! - `channel_frame` → [`decode_channel`]: one buffer as a message channel's bytes: a
//!   channel hello or hello reply, then channel frames; whatever decodes re-encodes to
//!   something that decodes to the same value (a frame to the very bytes it came from),
//!   and no frame passes the length limit.

use bytes::{BufMut, BytesMut};

use crate::channel::{
    decode_channel_frame, encode_channel_frame, max_channel_frame_len, ChannelHello,
    ChannelHelloReply,
};
use crate::compression::{FrameCompressor, FrameExpander, Techniques, PREFIX_LEN};
use crate::frame::{FrameFlags, Verb, HEADER_LEN};
use crate::inbound::{Inbound, Received, READ_MAX};
use crate::{
    decode_frame, encode_reply_at, encode_request_at, peek_hello_kind, ClientHello, CloseNotice,
    Frame, HelloKind, Reply, Request, ServerHello, WireError, MINOR_WITH_PUBSUB,
    MINOR_WITH_PUT_PROPERTIES, PROTOCOL_MINOR,
};

/// The minors every frame is decoded as: the newest, the last one without properties on
/// PUT, and the last one without publish/subscribe.
const FUZZ_MINORS: [u16; 3] = [
    PROTOCOL_MINOR,
    MINOR_WITH_PUT_PROPERTIES - 1,
    MINOR_WITH_PUBSUB - 1,
];

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
    for minor in FUZZ_MINORS {
        check_frame_at(frame, minor);
    }
    if let Ok(notice) = CloseNotice::decode(frame) {
        let mut out = BytesMut::new();
        if notice.encode(&mut out).is_ok() {
            let again = redecode(&mut out);
            assert_eq!(CloseNotice::decode(&again), Ok(notice));
        }
    }
}

/// Request and reply round trips of `frame` on a connection of protocol minor `minor`.
fn check_frame_at(frame: &Frame, minor: u16) {
    match Request::decode_at(frame, minor) {
        Ok(req) => {
            assert!(
                frame.verb.first_minor() <= minor,
                "a verb of minor {} decoded at minor {minor}",
                frame.verb.first_minor()
            );
            let mut out = BytesMut::new();
            if encode_request_at(frame.conversation, frame.request_id, &req, minor, &mut out)
                .is_ok()
            {
                let again = redecode(&mut out);
                assert_eq!(
                    (again.conversation, again.request_id),
                    (frame.conversation, frame.request_id)
                );
                assert_eq!(Request::decode_at(&again, minor), Ok(req));
            }
        }
        Err(WireError::VerbNotNegotiated { needs, .. }) => {
            assert!(needs > minor && frame.verb.first_minor() == needs);
        }
        Err(_) => {}
    }
    if let Ok(reply) = Reply::decode_at(frame, minor) {
        if let Reply::Get { properties, .. } = &reply {
            assert!(
                minor >= MINOR_WITH_PUBSUB || properties.is_empty(),
                "properties decoded before minor 5"
            );
        }
        let mut out = BytesMut::new();
        if encode_reply_at(
            frame.conversation,
            frame.request_id,
            &reply,
            minor,
            &mut out,
        )
        .is_ok()
        {
            let again = redecode(&mut out);
            assert_eq!(Reply::decode_at(&again, minor), Ok(reply));
        }
    }
}

/// What a whole sequence decodes to in one go: the hello and frames, and whether it
/// ends in a protocol violation (the decoding stops there).
fn decode_whole(stream: &[u8]) -> (Vec<Received>, bool) {
    let mut buf = BytesMut::from(stream);
    let mut got = Vec::new();
    // A channel hello hands the rest of the connection to the channel protocol.
    match crate::handshake::peek_hello_kind(&buf) {
        Err(_) => return (got, true),
        Ok(Some(crate::handshake::HelloKind::Channel)) => {
            return match crate::channel::ChannelHello::decode(&mut buf) {
                Ok(Some(h)) => {
                    got.push(Received::ChannelHello(Box::new(h)));
                    (got, false)
                }
                Ok(None) => (got, false),
                Err(_) => (got, true),
            };
        }
        Ok(_) => {}
    }
    match ClientHello::decode(&mut buf) {
        Ok(Some(h)) => got.push(Received::Hello(h)),
        Ok(None) => return (got, false),
        Err(_) => return (got, true),
    }
    loop {
        match decode_frame(&mut buf, FUZZ_MAX_FRAME) {
            Ok(Some(f)) => got.push(Received::Frame(f)),
            Ok(None) => return (got, false),
            Err(_) => return (got, true),
        }
    }
}

/// Feeds `data[1..]` to an [`Inbound`] in reads of sizes drawn from `data[0]` (each at
/// most the room the buffer offers, as a socket read), taking every hello and frame
/// after each read (up to a channel hello, after which the channel code takes over), with [`FUZZ_MAX_FRAME`] once the hello is in. Panics if the result
/// differs from decoding the whole sequence at once, or if the buffer's allocation ever
/// exceeds twice what was fed plus [`READ_MAX`] (a buffer sized by a header's claim).
pub fn drive_inbound(data: &[u8]) {
    let Some((&seed, stream)) = data.split_first() else {
        return;
    };
    let (whole, whole_erred) = decode_whole(stream);
    let mut inbound = Inbound::new();
    let mut got = Vec::new();
    let mut erred = false;
    let mut fed = 0usize;
    let mut rest = stream;
    let mut state = u32::from(seed) * 2 + 1;
    'feed: while !rest.is_empty() {
        let buf = inbound.read_buffer();
        let spare = buf.capacity() - buf.len();
        assert!(spare > 0, "a read must be offered room");
        // xorshift32: read sizes from 1 byte to the whole room.
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let n = (1 + state as usize % spare).min(rest.len());
        buf.put_slice(&rest[..n]);
        inbound.filled(n);
        fed += n;
        rest = &rest[n..];
        assert!(
            inbound.allocated() <= 2 * (fed + READ_MAX),
            "{} bytes allocated after {fed} bytes fed",
            inbound.allocated()
        );
        loop {
            match inbound.take() {
                Ok(Some(r)) => {
                    if matches!(r, Received::Hello(_)) {
                        inbound.set_max_frame(FUZZ_MAX_FRAME);
                    }
                    let channel = matches!(r, Received::ChannelHello(_));
                    got.push(r);
                    if channel {
                        // The channel code takes the connection from here.
                        break 'feed;
                    }
                }
                Ok(None) => break,
                Err(_) => {
                    erred = true;
                    break 'feed;
                }
            }
        }
    }
    assert_eq!(
        erred, whole_erred,
        "a violation is found whatever the split"
    );
    assert_eq!(got, whole, "the same hello and frames whatever the split");
}

/// Expands `data[1..]` as the payload of a compressed PUT under the techniques `data[0]`
/// picks (bit 3: COMPHDR SYSTEM; the low bits: a COMPMSG technique), with the limit of
/// [`FUZZ_MAX_FRAME`]. Panics if an expansion passes the limit, keeps the COMPRESSED flag,
/// or does not survive compressing and expanding again.
pub fn expand_compressed(data: &[u8]) {
    use ferry_mqi::{HeaderCompression, MessageCompression};
    let Some((&seed, payload)) = data.split_first() else {
        return;
    };
    const MESSAGE: [MessageCompression; 6] = [
        MessageCompression::None,
        MessageCompression::Rle,
        MessageCompression::ZlibFast,
        MessageCompression::ZlibHigh,
        MessageCompression::Lz4Fast,
        MessageCompression::Lz4High,
    ];
    let techniques = Techniques {
        header: if seed & 0x08 != 0 {
            HeaderCompression::System
        } else {
            HeaderCompression::None
        },
        message: MESSAGE[usize::from(seed & 0x07) % MESSAGE.len()],
    };
    let max_payload = FUZZ_MAX_FRAME as usize - HEADER_LEN;
    let frame = Frame {
        conversation: 1,
        request_id: 1,
        verb: Verb::Put,
        flags: FrameFlags::COMPRESSED,
        payload: bytes::Bytes::copy_from_slice(payload),
    };
    let Ok((expanded, flow)) = FrameExpander::new(techniques).expand(frame, max_payload) else {
        return;
    };
    assert!(
        expanded.payload.len() <= max_payload,
        "expanded past the limit"
    );
    assert!(!expanded.flags.contains(FrameFlags::COMPRESSED));
    assert!(flow.is_some());
    // The data length it announced (the prefix was checked by the expansion).
    let data_len = u32::from_le_bytes([payload[8], payload[9], payload[10], payload[11]]) as usize;
    assert!(PREFIX_LEN <= payload.len() && data_len <= expanded.payload.len());
    let mut out = BytesMut::new();
    out.put_u32_le(0);
    out.put_u32_le(1);
    out.put_u32_le(1);
    out.put_u8(Verb::Put.code());
    out.put_u8(0);
    out.put_u16_le(0);
    out.put_slice(&expanded.payload);
    let len = out.len() as u32;
    out[..4].copy_from_slice(&len.to_le_bytes());
    FrameCompressor::new(techniques).compress_frame(&mut out, 0, data_len);
    let again = match decode_frame(&mut out, u32::MAX) {
        Ok(Some(f)) => f,
        other => panic!("a compressed frame does not decode: {other:?}"),
    };
    let (again, _) = FrameExpander::new(techniques)
        .expand(again, max_payload)
        .expect("what was compressed expands");
    assert_eq!(
        again.payload, expanded.payload,
        "compress and expand round trip"
    );
}

/// The channel frame limit used while fuzzing: [`max_channel_frame_len`] of 64 KiB.
pub fn fuzz_max_channel_frame() -> usize {
    max_channel_frame_len(64 * 1024)
}

/// Decodes `data` as a channel hello reply, and as a channel hello followed by channel
/// frames (the whole of `data` as frames when it is no hello). Panics only on a codec
/// bug: a decoded hello, reply or frame that does not re-encode to the same value, a
/// frame whose encoding differs from the bytes it was decoded from, a frame longer than
/// the limit, or a hello whose kind [`peek_hello_kind`] does not report.
pub fn decode_channel(data: &[u8]) {
    let kind = peek_hello_kind(data);
    if let Ok(Some(reply)) = ChannelHelloReply::decode(&mut BytesMut::from(data)) {
        assert_eq!(kind, Ok(Some(HelloKind::ChannelReply)));
        let mut out = BytesMut::new();
        if reply.encode(&mut out).is_ok() {
            assert_eq!(ChannelHelloReply::decode(&mut out), Ok(Some(reply)));
            assert!(out.is_empty());
        }
    }
    let mut buf = BytesMut::from(data);
    match ChannelHello::decode(&mut buf) {
        Ok(Some(hello)) => {
            assert_eq!(kind, Ok(Some(HelloKind::Channel)));
            let mut out = BytesMut::new();
            if hello.encode(&mut out).is_ok() {
                assert_eq!(ChannelHello::decode(&mut out), Ok(Some(hello)));
                assert!(out.is_empty());
            }
        }
        _ => buf = BytesMut::from(data),
    }
    let max = fuzz_max_channel_frame();
    loop {
        let offset = data.len() - buf.len();
        let Ok(Some(frame)) = decode_channel_frame(&mut buf, max) else {
            break;
        };
        let consumed = data.len() - buf.len() - offset;
        assert!(
            consumed <= max,
            "a frame of {consumed} bytes passed the limit"
        );
        let mut out = BytesMut::new();
        encode_channel_frame(&frame, &mut out).expect("a decoded frame encodes");
        assert_eq!(
            &out[..],
            &data[offset..offset + consumed],
            "a frame re-encodes to its own bytes"
        );
        if let crate::channel::ChannelFrame::Message { flags, payload, .. } = &frame {
            if flags.contains(crate::channel::MessageFlags::COMPRESSED) {
                expand_channel_payload(payload, max);
            }
        }
        assert_eq!(decode_channel_frame(&mut out, max), Ok(Some(frame)));
    }
}

/// Expands a compressed MESSAGE payload as a receiving end that agreed SYSTEM and the
/// technique the payload names: never a panic, never more than `max` bytes.
fn expand_channel_payload(payload: &[u8], max: usize) {
    let message = payload
        .get(1)
        .and_then(|b| {
            <ferry_mqi::MessageCompression as ferry_mqi::Technique>::from_value(u32::from(*b))
        })
        .unwrap_or_default();
    let techniques = Techniques {
        header: ferry_mqi::HeaderCompression::System,
        message,
    };
    if let Ok((expanded, flow)) = FrameExpander::new(techniques).expand_payload(payload, max) {
        assert!(expanded.len() <= max, "expanded past the limit");
        assert!(flow.message == message || flow.message == ferry_mqi::MessageCompression::None);
    }
}
