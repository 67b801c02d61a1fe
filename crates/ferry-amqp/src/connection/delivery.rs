//! Deliveries on the wire: reassembling a multi-frame delivery we receive, and cutting
//! one we send into frames no larger than the peer's max-frame-size.
//!
//! A delivery is one or more transfer frames; all but the last carry `more = true`. The
//! first carries delivery-id, tag, format and settled; continuations carry only the
//! handle. Outgoing frames wait in [`Pending`] while the peer's session window is closed.

use bytes::{Buf, Bytes, BytesMut};

use super::output::{begin_frame, end_frame};
use crate::codec::Encode;
use crate::performative::{DeliveryState, Transfer};

/// A delivery being received across several frames.
#[derive(Debug)]
pub(crate) struct Partial {
    /// Its delivery id.
    pub delivery_id: u32,
    /// Its tag.
    pub tag: Bytes,
    /// Settled by the sender on any frame so far.
    pub settled: bool,
    /// Message format.
    pub message_format: u32,
    /// The latest delivery state sent.
    pub state: Option<DeliveryState>,
    /// The bytes so far.
    pub bytes: BytesMut,
}

impl Partial {
    /// Starts reassembly from a delivery's first frame.
    pub fn start(delivery_id: u32, t: &Transfer) -> Self {
        Partial {
            delivery_id,
            // Copied: a slice would keep the frame's whole read buffer alive meanwhile.
            tag: t
                .delivery_tag
                .as_deref()
                .map(Bytes::copy_from_slice)
                .unwrap_or_default(),
            settled: t.settled.unwrap_or(false),
            message_format: t.message_format.unwrap_or(0),
            state: t.state.clone(),
            bytes: BytesMut::new(),
        }
    }

    /// Adds a continuation frame's fields and bytes.
    pub fn push(&mut self, t: &Transfer, payload: &[u8]) {
        self.settled |= t.settled.unwrap_or(false);
        if t.state.is_some() {
            self.state = t.state.clone();
        }
        self.bytes.extend_from_slice(payload);
    }
}

/// Outgoing transfer frames of one delivery that wait for the peer's session window.
#[derive(Debug)]
pub(crate) struct Pending {
    /// The next frame's transfer (the first frame's fields until that one is sent).
    pub transfer: Transfer,
    /// Message bytes not sent yet.
    pub payload: Bytes,
}

/// Writes the next frame of `pending` into `out` (at most `max_frame` bytes) and
/// returns true when it was the delivery's last. Continuations carry only the handle.
pub(crate) fn write_next_frame(
    out: &mut BytesMut,
    channel: u16,
    pending: &mut Pending,
    max_frame: u32,
) -> bool {
    let start = begin_frame(out, channel);
    pending.transfer.more = true;
    pending.transfer.encode(out);
    let used = out.len() - start;
    // A transfer performative is far below the 512-byte minimum frame; keep one byte of
    // room regardless so a pathological state still makes progress.
    let room = (max_frame as usize).saturating_sub(used).max(1);
    let last = pending.payload.len() <= room;
    if last {
        out.truncate(start + crate::frame::FRAME_HEADER_LEN);
        pending.transfer.more = false;
        pending.transfer.encode(out);
    }
    let n = room.min(pending.payload.len());
    out.extend_from_slice(&pending.payload[..n]);
    pending.payload.advance(n);
    end_frame(out, start);
    if !last {
        pending.transfer = Transfer {
            handle: pending.transfer.handle,
            ..Transfer::default()
        };
    }
    last
}

/// The fast path: writes the whole delivery as one frame, the message written in place
/// by `write`. If it does not fit in `max_frame`, takes the frame back out of `out` and
/// returns the message bytes for [`write_next_frame`].
pub(crate) fn write_single_frame(
    out: &mut BytesMut,
    channel: u16,
    transfer: &Transfer,
    max_frame: u32,
    write: impl FnOnce(&mut BytesMut),
) -> Result<(), Bytes> {
    let start = begin_frame(out, channel);
    transfer.encode(out);
    let body = out.len();
    write(out);
    if out.len() - start <= max_frame as usize {
        end_frame(out, start);
        return Ok(());
    }
    let payload = out.split_off(body).freeze();
    out.truncate(start);
    Err(payload)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::FrameDecoder;
    use crate::performative::Performative;

    fn first(handle: u32) -> Transfer {
        Transfer {
            handle,
            delivery_id: Some(7),
            delivery_tag: Some(Bytes::from_static(b"t")),
            message_format: Some(0),
            settled: Some(false),
            ..Transfer::default()
        }
    }

    #[test]
    fn a_large_delivery_is_cut_into_frames_within_the_limit_and_reads_back_whole() {
        let payload: Bytes = (0..10_000u32).map(|i| i as u8).collect::<Vec<_>>().into();
        let mut p = Pending {
            transfer: first(3),
            payload: payload.clone(),
        };
        let mut out = BytesMut::new();
        let mut frames = 0;
        while !write_next_frame(&mut out, 1, &mut p, 512) {
            frames += 1;
        }
        assert!(frames >= 19);
        let mut dec = FrameDecoder::new(512);
        let mut got = BytesMut::new();
        let mut mores = Vec::new();
        while let Some(f) = dec.decode(&mut out).unwrap() {
            let Some(Performative::Transfer(t)) = f.performative else {
                panic!()
            };
            assert_eq!(t.handle, 3);
            mores.push(t.more);
            got.extend_from_slice(&f.payload);
        }
        assert_eq!(got.freeze(), payload);
        assert_eq!(mores.iter().filter(|m| !**m).count(), 1);
        assert!(!mores.last().unwrap());
    }

    #[test]
    fn the_single_frame_path_hands_back_a_message_that_does_not_fit() {
        let mut out = BytesMut::from(&b"prefix"[..]);
        let r = write_single_frame(&mut out, 0, &first(0), 512, |o| {
            o.extend_from_slice(&[9; 600])
        });
        assert_eq!(r.unwrap_err().len(), 600);
        assert_eq!(&out[..], b"prefix");
        let r = write_single_frame(&mut out, 0, &first(0), 512, |o| {
            o.extend_from_slice(&[9; 100])
        });
        assert!(r.is_ok());
        out.advance(6);
        let f = FrameDecoder::new(512).decode(&mut out).unwrap().unwrap();
        assert_eq!(f.payload.len(), 100);
    }
}
