//! The receiving side of a native connection as the queue manager reads it: one client
//! hello, then frames, out of one read buffer that grows with what arrives. A connection
//! that opens with a channel hello instead (another queue manager's message channel) is
//! reported as such, and its buffer handed to the channel code with
//! [`Inbound::into_buffer`].
//!
//! A socket task asks [`Inbound::read_buffer`] for the buffer to read into, reads into
//! its spare capacity, reports the count with [`Inbound::filled`], then takes whatever
//! is complete with [`Inbound::take`] until it returns `Ok(None)`. What is left then
//! ([`Inbound::pending`]) is part of a hello or frame still arriving.
//!
//! The buffer never grows with what a header *claims*: each read is offered room in
//! proportion to what the previous read brought, from [`READ_MIN`] (a hello's
//! [`MAX_HELLO_LEN`] before the hello) up to [`READ_MAX`], so a peer that announces a
//! 4 MiB frame and sends its 16-byte header costs a few KiB, and an idle connected socket
//! keeps a small buffer. An emptied buffer larger than [`READ_MAX`] (after a large
//! message) is given back rather than kept for the socket's lifetime.

use bytes::BytesMut;

use crate::channel::ChannelHello;
use crate::handshake::MAX_HELLO_LEN;
use crate::handshake::{peek_hello_kind, HelloKind};
use crate::{decode_frame, ClientHello, Frame, WireError};

/// The least room offered to a read once the hello is done: a request or a few.
pub const READ_MIN: usize = 4 * 1024;

/// The most room offered to one read: many frames per read when they keep coming.
pub const READ_MAX: usize = 64 * 1024;

/// What came off the socket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Received {
    /// The client's hello (always first, exactly once).
    Hello(ClientHello),
    /// Instead of a client hello: another queue manager's message channel starts. The
    /// rest of the conversation is the channel protocol's ([`Inbound::into_buffer`]).
    ChannelHello(Box<ChannelHello>),
    /// A frame after the hello.
    Frame(Frame),
}

/// The read buffer and decoding state of one connection, server side.
#[derive(Debug, Default)]
pub struct Inbound {
    buf: BytesMut,
    /// The largest capacity the buffer had since it was allocated: the size of the
    /// allocation it holds (taken frames keep only their slices of it).
    allocated: usize,
    hello_done: bool,
    max_frame: u32,
    last_read: usize,
    /// Bytes of large buffers dropped and not yet reported ([`Inbound::take_released`]).
    released: usize,
}

impl Inbound {
    /// A connection expecting its client hello, with an empty buffer.
    pub fn new() -> Self {
        Inbound::default()
    }

    /// Sets the largest frame accepted ([`crate::max_frame_len`] of the negotiated
    /// maximum message length). Until it is set, after the hello, any frame is too large.
    pub fn set_max_frame(&mut self, max_frame: u32) {
        self.max_frame = max_frame;
    }

    /// The room the next read is offered: what the last read brought, doubled, between
    /// [`READ_MIN`] and [`READ_MAX`]; [`MAX_HELLO_LEN`] before the hello.
    pub fn read_room(&self) -> usize {
        if self.hello_done {
            self.last_read.saturating_mul(2).clamp(READ_MIN, READ_MAX)
        } else {
            MAX_HELLO_LEN as usize
        }
    }

    /// The buffer to read into, with spare capacity for about [`Inbound::read_room`]
    /// bytes (a read fills only the spare capacity).
    pub fn read_buffer(&mut self) -> &mut BytesMut {
        if self.buf.is_empty() && self.allocated > READ_MAX {
            self.buf = BytesMut::new();
            self.released += self.allocated;
            self.allocated = 0;
        }
        let room = self.read_room();
        if self.buf.capacity() - self.buf.len() < room / 2 {
            self.buf.reserve(room);
        }
        self.allocated = self.allocated.max(self.buf.capacity());
        &mut self.buf
    }

    /// Records that a read put `n` bytes into the buffer.
    pub fn filled(&mut self, n: usize) {
        self.last_read = n;
    }

    /// Takes the next complete hello or frame off the buffer: `Ok(None)` until one is
    /// complete. An error is a protocol violation: the connection must be closed.
    pub fn take(&mut self) -> Result<Option<Received>, WireError> {
        if !self.hello_done {
            if peek_hello_kind(&self.buf)? == Some(HelloKind::Channel) {
                return Ok(ChannelHello::decode(&mut self.buf)?.map(|h| {
                    self.hello_done = true;
                    Received::ChannelHello(Box::new(h))
                }));
            }
            return Ok(ClientHello::decode(&mut self.buf)?.map(|h| {
                self.hello_done = true;
                Received::Hello(h)
            }));
        }
        Ok(decode_frame(&mut self.buf, self.max_frame)?.map(Received::Frame))
    }

    /// Bytes buffered and not taken: after [`Inbound::take`] returned `Ok(None)`, the
    /// part of a hello or frame still arriving.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The size of the read buffer's allocation (what the connection holds for
    /// reading, beside frames already taken from it).
    pub fn allocated(&self) -> usize {
        self.allocated
    }

    /// Bytes of large read buffers given back since the last call (the caller may ask the
    /// allocator to return them to the system).
    pub fn take_released(&mut self) -> usize {
        std::mem::take(&mut self.released)
    }

    /// The bytes read and not taken, for the code a channel hello hands the connection to.
    pub fn into_buffer(self) -> BytesMut {
        self.buf
    }

    /// Whether the hello was taken.
    pub fn hello_done(&self) -> bool {
        self.hello_done
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode_request, max_frame_len, Request};
    use bytes::BufMut;

    fn hello() -> BytesMut {
        let mut b = BytesMut::new();
        ClientHello::default().encode(&mut b).unwrap();
        b
    }

    /// Feeds `bytes` in reads of at most the room offered (and at most `chunk`).
    fn feed(inbound: &mut Inbound, mut bytes: &[u8], chunk: usize) -> Vec<Received> {
        let mut got = Vec::new();
        while !bytes.is_empty() {
            let buf = inbound.read_buffer();
            let n = (buf.capacity() - buf.len())
                .min(chunk)
                .min(bytes.len())
                .max(1);
            buf.put_slice(&bytes[..n]);
            bytes = &bytes[n..];
            inbound.filled(n);
            while let Some(r) = inbound.take().unwrap() {
                got.push(r);
            }
        }
        got
    }

    #[test]
    fn a_header_alone_reserves_nothing_of_what_it_claims() {
        let mut inbound = Inbound::new();
        let got = feed(&mut inbound, &hello(), usize::MAX);
        assert!(matches!(got[..], [Received::Hello(_)]));
        inbound.set_max_frame(max_frame_len(4 * 1024 * 1024));
        let mut header = BytesMut::new();
        header.put_u32_le(4 * 1024 * 1024);
        header.put_slice(&[1, 0, 0, 0, 9, 0, 0, 0, 0x05, 0, 0, 0]);
        assert!(feed(&mut inbound, &header, usize::MAX).is_empty());
        assert_eq!(inbound.pending(), 16);
        assert!(inbound.allocated() <= READ_MIN, "{}", inbound.allocated());
    }

    #[test]
    fn hello_then_frames_in_any_split() {
        let mut bytes = hello();
        for i in 0..50u32 {
            encode_request(1, i, &Request::Cmit, &mut bytes).unwrap();
        }
        for chunk in [1, 7, 16, 100, 4096] {
            let mut inbound = Inbound::new();
            let mut got = feed(&mut inbound, &bytes[..hello().len()], chunk);
            inbound.set_max_frame(1024);
            got.extend(feed(&mut inbound, &bytes[hello().len()..], chunk));
            assert_eq!(got.len(), 51, "chunk {chunk}");
            assert_eq!(inbound.pending(), 0);
        }
    }

    #[test]
    fn a_large_frame_grows_the_buffer_and_is_given_back_once_taken() {
        let mut inbound = Inbound::new();
        feed(&mut inbound, &hello(), usize::MAX);
        inbound.set_max_frame(max_frame_len(1 << 20));
        let mut frame = BytesMut::new();
        let put = Request::Mqsc {
            command: "x".repeat(512 * 1024),
        };
        encode_request(1, 1, &put, &mut frame).unwrap();
        let got = feed(&mut inbound, &frame, usize::MAX);
        assert_eq!(got.len(), 1);
        drop(got);
        assert!(inbound.allocated() <= 2 * (frame.len() + READ_MAX));
        let _ = inbound.read_buffer();
        assert!(inbound.allocated() <= READ_MAX, "{}", inbound.allocated());
    }
}
