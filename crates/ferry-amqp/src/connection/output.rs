//! The outgoing byte stream: frames go into one buffer the caller drains with a single
//! write, except those that may not be sent yet.
//!
//! AMQP frames of a session or link must follow our protocol header and our `open`. A
//! pipelining client calls `open`, `begin`, `attach` before SASL is done, and a server
//! answers a pipelined `begin` before its caller answered `open`; such frames wait in
//! `held`, in order, and join the output once header and open are out.
//!
//! Acceptances the caller marks as able to wait (see
//! [`super::Connection::accept_with_next_frame`]) are kept as runs of delivery ids, not
//! bytes: they are encoded ahead of the next frame that goes out, or when the caller sends
//! them, so a client that is about to be sent a message gets the acceptance of its own
//! last transfer in the same write instead of a write of its own.

use bytes::{BufMut, BytesMut};

use crate::frame::{encode_frame, ProtocolHeader, FRAME_HEADER_LEN};
use crate::performative::{DeliveryState, Disposition, Performative, Role};

/// Bytes one deferred acceptance run takes once encoded (frame header and disposition),
/// for the output accounts.
const DEFERRED_RUN_BYTES: usize = 32;

/// The output buffer and the frames held back until header and open are sent.
#[derive(Debug, Default)]
pub(crate) struct Output {
    /// Bytes ready to write.
    pub out: BytesMut,
    /// AMQP frames waiting for our header and open.
    held: BytesMut,
    /// Our AMQP protocol header is in `out`.
    header_sent: bool,
    /// Our open is in `out` or `held`.
    pub open_sent: bool,
    /// Frames written so far (heartbeat bookkeeping compares it between ticks).
    pub frames: u64,
    /// Acceptances waiting for the next frame: (channel, first, last) runs of delivery
    /// ids the peer sent, to be accepted and settled.
    deferred: Vec<(u16, u32, u32)>,
}

impl Output {
    /// Bytes ready to write plus frames held back.
    pub fn bytes_pending(&self) -> usize {
        self.out.len() + self.held.len() + self.deferred.len() * DEFERRED_RUN_BYTES
    }

    /// Where the next AMQP frame goes (after the acceptances waiting for it).
    pub fn sink(&mut self) -> &mut BytesMut {
        if self.header_sent && self.open_sent {
            self.release_deferred();
            &mut self.out
        } else {
            &mut self.held
        }
    }

    /// Accepts and settles delivery `id` of `channel` with the next frame: joins the
    /// last run when it continues it.
    pub fn defer_accept(&mut self, channel: u16, id: u32) {
        debug_assert!(
            self.header_sent && self.open_sent,
            "a transfer came before open"
        );
        if let Some((c, _, last)) = self.deferred.last_mut() {
            if *c == channel && last.wrapping_add(1) == id {
                *last = id;
                return;
            }
        }
        self.deferred.push((channel, id, id));
    }

    /// True while acceptances wait for the next frame.
    pub fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Encodes the waiting acceptances into the output, in the order they were made.
    pub fn release_deferred(&mut self) {
        if self.deferred.is_empty() {
            return;
        }
        // Drained, not taken: the list keeps its room for the next round trip's.
        for (channel, first, last) in self.deferred.drain(..) {
            let d = Disposition {
                role: Role::Receiver,
                first,
                last: (last != first).then_some(last),
                settled: true,
                state: Some(DeliveryState::Accepted),
                batchable: false,
            };
            encode_frame(channel, &Performative::Disposition(d), &[], &mut self.out);
            self.frames += 1;
        }
        debug_assert!(self.deferred.is_empty());
    }

    /// Writes a protocol header (SASL ones go out at once).
    pub fn header(&mut self, header: ProtocolHeader) {
        header.encode(&mut self.out);
        if header == ProtocolHeader::Amqp {
            self.header_sent = true;
            self.release();
        }
    }

    /// Writes a SASL frame, which never waits.
    pub fn sasl(&mut self, performative: &Performative) {
        encode_frame(0, performative, &[], &mut self.out);
        self.frames += 1;
    }

    /// Writes our open: first of the AMQP frames, ahead of any held ones.
    pub fn open(&mut self, performative: &Performative) {
        let mut frame = BytesMut::new();
        encode_frame(0, performative, &[], &mut frame);
        frame.extend_from_slice(&self.held);
        self.held = frame;
        self.open_sent = true;
        self.frames += 1;
        self.release();
    }

    /// Writes an AMQP frame (held if header or open are not out yet).
    pub fn frame(&mut self, channel: u16, performative: &Performative) {
        encode_frame(channel, performative, &[], self.sink());
        self.frames += 1;
    }

    /// Writes an empty frame.
    pub fn heartbeat(&mut self) {
        // Something goes out anyway: what waited for a frame goes with it.
        self.release_deferred();
        crate::frame::encode_heartbeat(&mut self.out);
        self.frames += 1;
    }

    fn release(&mut self) {
        if self.header_sent && self.open_sent && !self.held.is_empty() {
            let held = self.held.split();
            self.out.unsplit(held);
        }
    }
}

/// Starts a frame in `out`: size placeholder, doff 2, type AMQP, channel. Returns where
/// it starts, for [`end_frame`].
pub(crate) fn begin_frame(out: &mut BytesMut, channel: u16) -> usize {
    let start = out.len();
    out.put_u32(0);
    out.put_u8(2);
    out.put_u8(0);
    out.put_u16(channel);
    debug_assert_eq!(out.len() - start, FRAME_HEADER_LEN);
    start
}

/// Patches the size of the frame started at `start`.
pub(crate) fn end_frame(out: &mut BytesMut, start: usize) {
    let size = (out.len() - start) as u32;
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
}
