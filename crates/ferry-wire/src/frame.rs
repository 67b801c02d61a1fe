//! Frames: the fixed 16-byte header, verbs, flags and the incremental frame decoder.
//!
//! After the handshake both sides exchange frames:
//! `[total length u32][conversation u32][request id u32][verb u8][flags u8][reserved u16]`
//! followed by the payload, all little-endian, the length counting the header. The
//! decoder works on the connection's read buffer: it returns `Ok(None)` until a whole
//! frame is there, then splits it off as `Bytes` without copying, so a message body
//! decoded later is a slice of the very buffer the socket filled.

use bitflags::bitflags;
use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::WireError;

/// Length of the frame header in bytes.
pub const HEADER_LEN: usize = 16;

/// Room for descriptors, options and names around a message body. A frame may be
/// `max_message_length + FRAME_OVERHEAD` bytes long (see [`max_frame_len`]).
pub const FRAME_OVERHEAD: u32 = 4096;

/// The largest frame a peer may send once `max_message_length` was negotiated.
pub fn max_frame_len(max_message_length: u32) -> u32 {
    max_message_length.saturating_add(FRAME_OVERHEAD)
}

/// The bit of the verb byte that marks a reply (reply verb = request verb | 0x80).
pub const REPLY_VERB_BIT: u8 = 0x80;

/// Conversation id 0 addresses the socket itself (heartbeats, close notices).
pub const SOCKET_CONVERSATION: u32 = 0;

/// What a frame does. On the wire a reply carries `verb | 0x80` and the REPLY flag.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Verb {
    /// MQCONN: opens a conversation on the socket.
    Conn = 0x01,
    /// MQDISC: ends the conversation.
    Disc = 0x02,
    /// MQOPEN.
    Open = 0x03,
    /// MQCLOSE.
    Close = 0x04,
    /// MQPUT.
    Put = 0x05,
    /// MQPUT1.
    Put1 = 0x06,
    /// MQGET.
    Get = 0x07,
    /// MQINQ.
    Inq = 0x08,
    /// MQCMIT.
    Cmit = 0x09,
    /// MQBACK.
    Back = 0x0A,
    /// An MQSC command for the command server.
    Mqsc = 0x0B,
    /// A heartbeat (either direction; the answer has the REPLY flag).
    Heartbeat = 0x0C,
    /// MQSET (added in minor 1.1's verb set: older clients never send it).
    Set = 0x0D,
    /// MQSUB (protocol minor 5): make or resume a subscription.
    Sub = 0x0E,
    /// MQOPEN of a topic named by a topic object and/or a topic string (protocol minor 5).
    OpenTopic = 0x0F,
    /// MQSUBRQ (protocol minor 5): send a subscription its retained publications again.
    SubRq = 0x10,
    /// The server's notice before it drops the socket for a protocol violation or
    /// shutdown. Never a reply.
    Error = 0x7F,
}

impl Verb {
    /// The verb for a code (reply bit cleared), if this protocol version knows it.
    pub fn from_code(code: u8) -> Option<Verb> {
        Some(match code {
            0x01 => Verb::Conn,
            0x02 => Verb::Disc,
            0x03 => Verb::Open,
            0x04 => Verb::Close,
            0x05 => Verb::Put,
            0x06 => Verb::Put1,
            0x07 => Verb::Get,
            0x08 => Verb::Inq,
            0x09 => Verb::Cmit,
            0x0A => Verb::Back,
            0x0B => Verb::Mqsc,
            0x0C => Verb::Heartbeat,
            0x0D => Verb::Set,
            0x0E => Verb::Sub,
            0x0F => Verb::OpenTopic,
            0x10 => Verb::SubRq,
            0x7F => Verb::Error,
            _ => return None,
        })
    }

    /// The verb code (without the reply bit).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The first protocol minor whose connections may send this verb: a request of a
    /// later verb on a connection of a lower minor is refused
    /// ([`WireError::VerbNotNegotiated`]). SET predates this rule and is accepted at
    /// every minor, as it always was.
    pub fn first_minor(self) -> u16 {
        match self {
            Verb::Sub | Verb::OpenTopic | Verb::SubRq => crate::MINOR_WITH_PUBSUB,
            _ => 0,
        }
    }
}

bitflags! {
    /// The frame header's flag byte.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct FrameFlags: u8 {
        /// The frame answers a request (set on every reply and heartbeat response).
        const REPLY = 0x01;
        /// The payload is compressed (protocol 1.4, only where the hello agreed on a
        /// technique, only on PUT and PUT1 requests and GET replies): see
        /// [`crate::compression`].
        const COMPRESSED = 0x02;
        /// Reserved for more-frames-follow segmentation; must be 0.
        const RESERVED_SEGMENTED = 0x04;
        /// Reserved for asynchronous (unanswered) put; must be 0.
        const RESERVED_ASYNC = 0x08;
    }
}

impl FrameFlags {
    /// The flags defined and usable (COMPRESSED from protocol 1.4).
    pub const USABLE: FrameFlags = FrameFlags::REPLY.union(FrameFlags::COMPRESSED);
}

/// Whether a frame of `verb` (a reply when `reply`) may carry a compressed payload: the
/// frames that carry a message.
pub fn carries_message(verb: Verb, reply: bool) -> bool {
    matches!(
        (verb, reply),
        (Verb::Put, false) | (Verb::Put1, false) | (Verb::Get, true)
    )
}

/// One decoded frame: header fields plus the payload as a zero-copy slice of the read
/// buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Conversation (one hconn) the frame belongs to; 0 for the socket itself.
    pub conversation: u32,
    /// Request id; a reply carries its request's id.
    pub request_id: u32,
    /// The verb (reply bit cleared).
    pub verb: Verb,
    /// Header flags.
    pub flags: FrameFlags,
    /// The payload after the header.
    pub payload: Bytes,
}

impl Frame {
    /// True for replies (and heartbeat responses).
    pub fn is_reply(&self) -> bool {
        self.flags.contains(FrameFlags::REPLY)
    }
}

/// The total length of the frame at the front of `buf`, once its first 4 bytes are
/// there. Drivers use it to reserve read-buffer room for a large frame in one step
/// (after [`decode_frame`] validated the length against the limit).
pub fn pending_frame_len(buf: &[u8]) -> Option<u32> {
    let b: [u8; 4] = buf.get(..4)?.try_into().ok()?;
    Some(u32::from_le_bytes(b))
}

/// Splits one frame off the front of `buf`.
///
/// Returns `Ok(None)` when more bytes are needed (nothing is consumed), the frame when
/// one is complete, or an error as soon as the bytes present prove a violation: a length
/// above `max_frame_len` is refused before any payload arrives, so an untrusted length
/// never makes anyone allocate. On error the connection must be closed; `buf` is left
/// as it was.
pub fn decode_frame(buf: &mut BytesMut, max_frame_len: u32) -> Result<Option<Frame>, WireError> {
    let Some(len) = pending_frame_len(buf) else {
        return Ok(None);
    };
    if len > max_frame_len {
        return Err(WireError::FrameTooLarge {
            len: u64::from(len),
            max: u64::from(max_frame_len),
        });
    }
    if (len as usize) < HEADER_LEN {
        return Err(WireError::FrameTooSmall { len });
    }
    if buf.len() < HEADER_LEN {
        return Ok(None);
    }
    let verb_byte = buf[12];
    let flags_byte = buf[13];
    let reserved = u16::from_le_bytes([buf[14], buf[15]]);
    let verb =
        Verb::from_code(verb_byte & !REPLY_VERB_BIT).ok_or(WireError::UnknownVerb(verb_byte))?;
    let flags = FrameFlags::from_bits(flags_byte)
        .filter(|f| FrameFlags::USABLE.contains(*f))
        .ok_or(WireError::ReservedBits {
            field: "frame flags",
            bits: u32::from(flags_byte & !FrameFlags::USABLE.bits()),
        })?;
    if reserved != 0 {
        return Err(WireError::ReservedBits {
            field: "frame header reserved field",
            bits: u32::from(reserved),
        });
    }
    let reply_bit = verb_byte & REPLY_VERB_BIT != 0;
    if reply_bit != flags.contains(FrameFlags::REPLY) || (reply_bit && verb == Verb::Error) {
        return Err(WireError::FlagMismatch);
    }
    if flags.contains(FrameFlags::COMPRESSED) && !carries_message(verb, reply_bit) {
        return Err(WireError::ReservedBits {
            field: "frame flags (COMPRESSED on a frame that carries no message)",
            bits: u32::from(FrameFlags::COMPRESSED.bits()),
        });
    }
    if buf.len() < len as usize {
        return Ok(None);
    }
    let mut frame = buf.split_to(len as usize);
    let conversation = u32::from_le_bytes([frame[4], frame[5], frame[6], frame[7]]);
    let request_id = u32::from_le_bytes([frame[8], frame[9], frame[10], frame[11]]);
    frame.advance(HEADER_LEN);
    Ok(Some(Frame {
        conversation,
        request_id,
        verb,
        flags,
        payload: frame.freeze(),
    }))
}

/// Appends a frame header with a zero length and returns the offset to patch with
/// [`finish_frame`] once the payload is written.
pub(crate) fn begin_frame(
    out: &mut BytesMut,
    conversation: u32,
    request_id: u32,
    verb: Verb,
    reply: bool,
) -> usize {
    let start = out.len();
    out.put_u32_le(0);
    out.put_u32_le(conversation);
    out.put_u32_le(request_id);
    let (vb, flags) = if reply {
        (verb.code() | REPLY_VERB_BIT, FrameFlags::REPLY)
    } else {
        (verb.code(), FrameFlags::empty())
    };
    out.put_u8(vb);
    out.put_u8(flags.bits());
    out.put_u16_le(0);
    start
}

/// Patches the length of the frame started at `start`; on overflow removes the frame
/// from `out` again and fails.
pub(crate) fn finish_frame(out: &mut BytesMut, start: usize) -> Result<(), WireError> {
    let len = out.len() - start;
    match u32::try_from(len) {
        Ok(l) => {
            out[start..start + 4].copy_from_slice(&l.to_le_bytes());
            Ok(())
        }
        Err(_) => {
            out.truncate(start);
            Err(WireError::FrameTooLarge {
                len: len as u64,
                max: u64::from(u32::MAX),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(len: u32, verb: u8, flags: u8) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_u32_le(len);
        b.put_u32_le(7);
        b.put_u32_le(9);
        b.put_u8(verb);
        b.put_u8(flags);
        b.put_u16_le(0);
        b
    }

    #[test]
    fn oversized_length_refused_before_payload() {
        let mut b = BytesMut::new();
        b.put_u32_le(1 << 30);
        assert!(matches!(
            decode_frame(&mut b, 1 << 20),
            Err(WireError::FrameTooLarge { .. })
        ));
        assert_eq!(b.len(), 4, "nothing consumed");
    }

    #[test]
    fn tiny_length_refused() {
        let mut b = header(3, 1, 0);
        assert_eq!(
            decode_frame(&mut b, 1024),
            Err(WireError::FrameTooSmall { len: 3 })
        );
    }

    #[test]
    fn partial_frame_waits() {
        let mut b = header(20, 0x05, 0);
        b.put_u16_le(1);
        assert_eq!(decode_frame(&mut b, 1024), Ok(None));
        b.put_u16_le(2);
        let f = decode_frame(&mut b, 1024).unwrap().unwrap();
        assert_eq!(f.conversation, 7);
        assert_eq!(f.request_id, 9);
        assert_eq!(f.verb, Verb::Put);
        assert_eq!(&f.payload[..], &[1, 0, 2, 0]);
        assert!(b.is_empty());
    }

    #[test]
    fn unknown_verb_and_flags_refused() {
        assert_eq!(
            decode_frame(&mut header(16, 0x33, 0), 1024),
            Err(WireError::UnknownVerb(0x33))
        );
        assert!(matches!(
            decode_frame(&mut header(16, 0x05, 0x04), 1024),
            Err(WireError::ReservedBits { .. })
        ));
        assert!(
            matches!(
                decode_frame(&mut header(16, 0x09, 0x02), 1024),
                Err(WireError::ReservedBits { .. })
            ),
            "a commit carries no message to compress"
        );
        assert!(decode_frame(&mut header(16, 0x05, 0x02), 1024).is_ok());
        assert_eq!(
            decode_frame(&mut header(16, 0x85, 0), 1024),
            Err(WireError::FlagMismatch)
        );
        assert_eq!(
            decode_frame(&mut header(16, 0xFF, 1), 1024),
            Err(WireError::FlagMismatch)
        );
    }

    #[test]
    fn many_frames_in_one_buffer() {
        let mut b = BytesMut::new();
        for i in 0..5u32 {
            let s = begin_frame(&mut b, i, i * 10, Verb::Cmit, false);
            finish_frame(&mut b, s).unwrap();
        }
        for i in 0..5u32 {
            let f = decode_frame(&mut b, 64).unwrap().unwrap();
            assert_eq!((f.conversation, f.request_id), (i, i * 10));
        }
        assert_eq!(decode_frame(&mut b, 64), Ok(None));
    }
}
