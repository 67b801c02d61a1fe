//! The frame layer: protocol headers, the 8-byte frame header, an incremental decoder that
//! cuts whole frames out of a read buffer, and frame encoders.
//!
//! A frame is `size:u32 doff:u8 type:u8 channel:u16`, an extended header (rarely used,
//! skipped), the performative and, for transfers, the payload (message bytes). An empty
//! frame is a heartbeat. [`FrameDecoder::decode`] takes bytes as they arrive and returns
//! `Ok(None)` until a whole frame is buffered; a frame over the max-frame-size is refused
//! from its header alone, before its bytes are waited for. The decoder never reserves
//! room for the size a header claims: a peer that sends a header and stops costs what it
//! sent, not the frame it announced (the caller's buffer grows with what arrives).

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::codec::{Decoder, Encode};
use crate::error::{DecodeError, FrameError};
use crate::performative::{Performative, Transfer};

/// Length of the frame header.
pub const FRAME_HEADER_LEN: usize = 8;
/// The smallest max-frame-size a peer may announce.
pub const MIN_MAX_FRAME_SIZE: u32 = 512;

/// The 8-byte header that opens a connection (and starts each layer): `AMQP` and a
/// protocol id, then version 1.0.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProtocolHeader {
    /// `AMQP 0 1 0 0`: the AMQP layer.
    Amqp,
    /// `AMQP 2 1 0 0`: in-band TLS.
    Tls,
    /// `AMQP 3 1 0 0`: the SASL layer.
    Sasl,
}

impl ProtocolHeader {
    /// The header's eight bytes.
    pub fn bytes(self) -> [u8; 8] {
        let id = match self {
            ProtocolHeader::Amqp => 0,
            ProtocolHeader::Tls => 2,
            ProtocolHeader::Sasl => 3,
        };
        [b'A', b'M', b'Q', b'P', id, 1, 0, 0]
    }

    /// Appends the header to `out`.
    pub fn encode(self, out: &mut BytesMut) {
        out.put_slice(&self.bytes());
    }

    /// Takes a protocol header from the front of `buf`: `Ok(None)` until 8 bytes are
    /// there; an error (framing-error) for anything but AMQP 1.0.0 with a known id.
    pub fn decode(buf: &mut BytesMut) -> Result<Option<Self>, FrameError> {
        if buf.len() < 8 {
            // A prefix that already differs is refused at once.
            let n = buf.len().min(4);
            if buf[..n] != b"AMQP"[..n] {
                let mut got = [0u8; 8];
                got[..buf.len()].copy_from_slice(buf);
                return Err(FrameError::ProtocolHeader(got));
            }
            return Ok(None);
        }
        let mut got = [0u8; 8];
        got.copy_from_slice(&buf[..8]);
        let header = [
            ProtocolHeader::Amqp,
            ProtocolHeader::Tls,
            ProtocolHeader::Sasl,
        ]
        .into_iter()
        .find(|h| h.bytes() == got)
        .ok_or(FrameError::ProtocolHeader(got))?;
        buf.advance(8);
        Ok(Some(header))
    }
}

/// The frame type byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrameType {
    /// 0: an AMQP frame.
    Amqp,
    /// 1: a SASL frame.
    Sasl,
}

/// One decoded frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// The channel (session) the frame is for; 0 for SASL frames.
    pub channel: u16,
    /// AMQP or SASL.
    pub frame_type: FrameType,
    /// The frame body; `None` for an empty frame (heartbeat).
    pub performative: Option<Performative>,
    /// Bytes after the performative (a transfer's message bytes), a slice of the input.
    pub payload: Bytes,
}

impl Frame {
    /// True for an empty frame, which only keeps the connection alive.
    pub fn is_heartbeat(&self) -> bool {
        self.performative.is_none()
    }
}

/// Cuts whole frames out of a read buffer and decodes their performatives.
#[derive(Debug, Clone)]
pub struct FrameDecoder {
    max_frame_size: u32,
}

impl FrameDecoder {
    /// A decoder refusing frames over `max_frame_size` bytes (our announced limit).
    pub fn new(max_frame_size: u32) -> Self {
        FrameDecoder { max_frame_size }
    }

    /// The limit in force.
    pub fn max_frame_size(&self) -> u32 {
        self.max_frame_size
    }

    /// Changes the limit (e.g. to the negotiated one after open).
    pub fn set_max_frame_size(&mut self, max: u32) {
        self.max_frame_size = max;
    }

    /// Takes the next whole frame from the front of `buf`, or `Ok(None)` if it is not all
    /// there yet (then `buf` is left as it was, its capacity untouched: room is the
    /// caller's to grow with what arrives, never with what a header claims). Call again
    /// until it returns `None`.
    pub fn decode(&mut self, buf: &mut BytesMut) -> Result<Option<Frame>, FrameError> {
        if buf.len() < FRAME_HEADER_LEN {
            return Ok(None);
        }
        let size = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
        let doff = buf[4] as usize * 4;
        let frame_type = match buf[5] {
            0 => FrameType::Amqp,
            1 => FrameType::Sasl,
            _ => return Err(FrameError::Malformed("unknown frame type")),
        };
        let channel = u16::from_be_bytes([buf[6], buf[7]]);
        if (size as usize) < FRAME_HEADER_LEN {
            return Err(FrameError::Malformed("frame size below 8"));
        }
        if size > self.max_frame_size {
            return Err(FrameError::TooLarge {
                size,
                max: self.max_frame_size,
            });
        }
        if doff < FRAME_HEADER_LEN {
            return Err(FrameError::Malformed("data offset below 2"));
        }
        if doff > size as usize {
            return Err(FrameError::Malformed("data offset past the frame's end"));
        }
        if buf.len() < size as usize {
            return Ok(None);
        }
        let frame = buf.split_to(size as usize).freeze();
        let body = frame.slice(doff..);
        decode_body(channel, frame_type, body).map(Some)
    }
}

/// Decodes a frame body (performative and payload) of the given type.
fn decode_body(channel: u16, frame_type: FrameType, body: Bytes) -> Result<Frame, FrameError> {
    if body.is_empty() {
        if frame_type == FrameType::Sasl {
            return Err(FrameError::Malformed("empty SASL frame"));
        }
        return Ok(Frame {
            channel,
            frame_type,
            performative: None,
            payload: Bytes::new(),
        });
    }
    // The frames of every message take a fast path; whatever it does not know, the
    // general decoder reads (see `performative::quick`).
    let (performative, payload) = match crate::performative::quick_decode(&body) {
        Some((p, used)) => (p, body.slice(used..)),
        None => {
            let mut dec = Decoder::new(body);
            let p: Performative = dec.read()?;
            (p, dec.take_rest())
        }
    };
    if performative.is_sasl() != (frame_type == FrameType::Sasl) {
        return Err(FrameError::Malformed(
            "performative does not match the frame type",
        ));
    }
    if !payload.is_empty() && !matches!(performative, Performative::Transfer(_)) {
        return Err(DecodeError::TrailingBytes(payload.len()).into());
    }
    Ok(Frame {
        channel,
        frame_type,
        performative: Some(performative),
        payload,
    })
}

fn begin_frame(out: &mut BytesMut, frame_type: u8, channel: u16) -> usize {
    let start = out.len();
    out.put_u32(0); // size, patched by end_frame
    out.put_u8(2);
    out.put_u8(frame_type);
    out.put_u16(channel);
    start
}

fn end_frame(out: &mut BytesMut, start: usize) {
    let size = (out.len() - start) as u32;
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
}

/// Appends a frame carrying `performative` (and `payload`, for a transfer) to `out`; the
/// frame type follows the performative (SASL or AMQP).
pub fn encode_frame(channel: u16, performative: &Performative, payload: &[u8], out: &mut BytesMut) {
    let start = begin_frame(out, u8::from(performative.is_sasl()), channel);
    performative.encode(out);
    out.put_slice(payload);
    end_frame(out, start);
}

/// Appends an empty frame (heartbeat).
pub fn encode_heartbeat(out: &mut BytesMut) {
    out.put_slice(&[0, 0, 0, 8, 2, 0, 0, 0]);
}

/// Appends a transfer frame: header, transfer and payload, written straight into `out`.
pub fn encode_transfer(channel: u16, transfer: &Transfer, payload: &[u8], out: &mut BytesMut) {
    encode_transfer_with(channel, transfer, out, |out| out.put_slice(payload));
}

/// Appends a transfer frame whose payload `write_payload` writes in place (e.g. a
/// message's sections), so the message is never encoded into a buffer of its own.
pub fn encode_transfer_with(
    channel: u16,
    transfer: &Transfer,
    out: &mut BytesMut,
    write_payload: impl FnOnce(&mut BytesMut),
) {
    let start = begin_frame(out, 0, channel);
    transfer.encode(out);
    write_payload(out);
    end_frame(out, start);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::performative::{Close, Open};

    #[test]
    fn protocol_headers_read_back_and_wrong_ones_fail() {
        let mut buf = BytesMut::from(&b"AMQP\x03\x01\x00\x00AMQP"[..]);
        assert_eq!(
            ProtocolHeader::decode(&mut buf),
            Ok(Some(ProtocolHeader::Sasl))
        );
        assert_eq!(ProtocolHeader::decode(&mut buf), Ok(None));
        let mut http = BytesMut::from(&b"GET / HTTP/1.1"[..]);
        assert!(ProtocolHeader::decode(&mut http).is_err());
        let mut v09 = BytesMut::from(&b"AMQP\x00\x00\x09\x01"[..]);
        assert_eq!(
            ProtocolHeader::decode(&mut v09).map_err(|e| e.condition()),
            Err(crate::condition::FRAMING_ERROR)
        );
    }

    #[test]
    fn frames_arrive_in_pieces_and_come_out_whole() {
        let mut wire = BytesMut::new();
        encode_frame(3, &Performative::Open(Open::new("c")), &[], &mut wire);
        encode_heartbeat(&mut wire);
        let mut dec = FrameDecoder::new(1 << 20);
        let mut buf = BytesMut::new();
        let mut frames = Vec::new();
        for b in wire.iter() {
            buf.put_u8(*b);
            while let Some(f) = dec.decode(&mut buf).unwrap() {
                frames.push(f);
            }
        }
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].channel, 3);
        assert_eq!(
            frames[0].performative,
            Some(Performative::Open(Open::new("c")))
        );
        assert!(frames[1].is_heartbeat());
        assert!(buf.is_empty());
    }

    #[test]
    fn an_oversized_frame_is_refused_from_its_header_naming_the_limit() {
        let mut buf = BytesMut::from(&[0, 0, 0x10, 0, 2, 0, 0, 0][..]);
        let err = FrameDecoder::new(512).decode(&mut buf).unwrap_err();
        assert_eq!(
            err,
            FrameError::TooLarge {
                size: 4096,
                max: 512
            }
        );
        assert!(err.to_string().contains("512"));
        assert_eq!(err.condition(), "amqp:connection:framing-error");
    }

    proptest::proptest! {
        /// Issue 18: a header claiming up to 4 GiB, followed by any part of its frame,
        /// leaves the buffer's capacity as it was: nothing is reserved for what has not
        /// arrived.
        #[test]
        fn a_frame_header_reserves_nothing(size in 9u32.., body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256)) {
            let mut buf = BytesMut::with_capacity(8 + body.len());
            buf.put_u32(size);
            buf.put_slice(&[2, 0, 0, 0]);
            let body = &body[..body.len().min(size as usize - 9)];
            buf.put_slice(body);
            let capacity = buf.capacity();
            let got = FrameDecoder::new(u32::MAX).decode(&mut buf);
            proptest::prop_assert_eq!(got, Ok(None));
            proptest::prop_assert_eq!(buf.capacity(), capacity);
            proptest::prop_assert_eq!(buf.len(), 8 + body.len());
        }
    }

    #[test]
    fn bad_headers_are_framing_errors() {
        for bad in [
            [0, 0, 0, 7, 2, 0, 0, 0],
            [0, 0, 0, 8, 1, 0, 0, 0],
            [0, 0, 0, 8, 3, 0, 0, 0],
            [0, 0, 0, 8, 2, 7, 0, 0],
        ] {
            let err = FrameDecoder::new(1024)
                .decode(&mut BytesMut::from(&bad[..]))
                .unwrap_err();
            assert_eq!(err.condition(), "amqp:connection:framing-error", "{bad:?}");
        }
    }

    #[test]
    fn a_sasl_performative_in_an_amqp_frame_is_refused() {
        let mut wire = BytesMut::new();
        encode_frame(0, &Performative::Close(Close::default()), &[], &mut wire);
        wire[5] = 1;
        assert!(FrameDecoder::new(1024).decode(&mut wire).is_err());
    }

    #[test]
    fn a_body_that_does_not_decode_is_a_decode_error() {
        let mut buf = BytesMut::from(&[0, 0, 0, 10, 2, 0, 0, 0, 0x00, 0x53][..]);
        let err = FrameDecoder::new(1024).decode(&mut buf).unwrap_err();
        assert_eq!(err.condition(), "amqp:decode-error");
    }
}
