//! Fast paths for the three performatives every message costs — transfer, disposition
//! and flow — in the compact encoding Ferry and the usual clients (Qpid JMS, Proton) write:
//! a `smallulong` descriptor, a `list8`, and each field as `null`, `true`/`false`,
//! `uint0`/`smalluint`/`uint`, `vbin8`, or (a disposition's state) `accepted` as a `list0`.
//!
//! Anything else — another encoding of the same values, a field out of that set, more
//! fields than the type has, a size that does not add up — is not an error here: the
//! reader gives up (`None`) and the general decoder reads the frame, with its errors. So
//! a fast path can only ever accept what the general decoder accepts, and must read it
//! the same; the fuzz entry point ([`crate::fuzzing`]) and a property test check both on
//! every input they make. Why: the general decoder costs ~800-1,000 instructions for
//! each of these small lists (callgrind, 27 Nov), most of it in its generality.

use bytes::Bytes;

use super::{DeliveryState, Disposition, Flow, Performative, Role, Transfer};
use crate::codec::format_code as fc;
use crate::descriptor;

/// Reads a transfer, disposition or flow at the start of `body` in the compact encoding,
/// returning it and the bytes it took; `None` when the general decoder must read it.
pub(crate) fn performative(body: &Bytes) -> Option<(Performative, usize)> {
    let b = body.as_ref();
    // 0x00 0x53 <code> 0xc0 <size> <count>
    if b.len() < 6 || b[0] != fc::DESCRIBED || b[1] != fc::SMALL_ULONG || b[3] != fc::LIST8 {
        return None;
    }
    // The size counts the bytes after itself (the count and the fields).
    let end = 5 + usize::from(b[4]);
    if end > b.len() || b[4] == 0 {
        return None;
    }
    let mut r = Fields {
        b,
        pos: 6,
        end,
        left: b[5],
    };
    let p = match u64::from(b[2]) {
        descriptor::TRANSFER => Performative::Transfer(transfer(&mut r, body)?),
        descriptor::DISPOSITION => Performative::Disposition(disposition(&mut r)?),
        descriptor::FLOW => Performative::Flow(flow(&mut r)?),
        _ => return None,
    };
    // Fields beyond those the type has, or a size that does not match: the general
    // decoder's business.
    (r.left == 0 && r.pos == r.end).then_some((p, end))
}

fn transfer(r: &mut Fields<'_>, body: &Bytes) -> Option<Transfer> {
    Some(Transfer {
        handle: r.uint()?,
        delivery_id: r.optional_uint()?,
        delivery_tag: r.optional_binary(body)?,
        message_format: r.optional_uint()?,
        settled: r.optional_bool()?,
        more: r.bool_or_false()?,
        rcv_settle_mode: r.null()?,
        state: r.null()?,
        resume: r.bool_or_false()?,
        aborted: r.bool_or_false()?,
        batchable: r.bool_or_false()?,
    })
}

fn disposition(r: &mut Fields<'_>) -> Option<Disposition> {
    Some(Disposition {
        role: if r.bool()? {
            Role::Receiver
        } else {
            Role::Sender
        },
        first: r.uint()?,
        last: r.optional_uint()?,
        settled: r.bool_or_false()?,
        state: r.optional_accepted()?,
        batchable: r.bool_or_false()?,
    })
}

fn flow(r: &mut Fields<'_>) -> Option<Flow> {
    Some(Flow {
        next_incoming_id: r.optional_uint()?,
        incoming_window: r.uint()?,
        next_outgoing_id: r.uint()?,
        outgoing_window: r.uint()?,
        handle: r.optional_uint()?,
        delivery_count: r.optional_uint()?,
        link_credit: r.optional_uint()?,
        available: r.optional_uint()?,
        drain: r.bool_or_false()?,
        echo: r.bool_or_false()?,
        properties: r.null().map(|()| Vec::new())?,
    })
}

/// The fields of one `list8`: `left` of them still to read before `end`; fields past
/// the count read as null, as in the general decoder.
struct Fields<'a> {
    b: &'a [u8],
    pos: usize,
    end: usize,
    left: u8,
}

impl Fields<'_> {
    /// The next field's constructor (null once the list has no more fields).
    #[inline]
    fn code(&mut self) -> Option<u8> {
        if self.left == 0 {
            return Some(fc::NULL);
        }
        self.left -= 1;
        let c = *self.b.get(self.pos).filter(|_| self.pos < self.end)?;
        self.pos += 1;
        Some(c)
    }

    /// `n` bytes of data, within the list.
    #[inline]
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let data = self
            .b
            .get(self.pos..self.pos + n)
            .filter(|_| self.pos + n <= self.end)?;
        self.pos += n;
        Some(data)
    }

    #[inline]
    fn uint_with(&mut self, code: u8) -> Option<u32> {
        match code {
            fc::UINT0 => Some(0),
            fc::SMALL_UINT => self.take(1).map(|d| u32::from(d[0])),
            fc::UINT => self
                .take(4)
                .map(|d| u32::from_be_bytes([d[0], d[1], d[2], d[3]])),
            _ => None,
        }
    }

    /// A required uint.
    #[inline]
    fn uint(&mut self) -> Option<u32> {
        let code = self.code()?;
        self.uint_with(code)
    }

    /// An optional uint: `Some(None)` for null.
    #[inline]
    fn optional_uint(&mut self) -> Option<Option<u32>> {
        match self.code()? {
            fc::NULL => Some(None),
            code => self.uint_with(code).map(Some),
        }
    }

    /// A required boolean.
    #[inline]
    fn bool(&mut self) -> Option<bool> {
        match self.code()? {
            fc::TRUE => Some(true),
            fc::FALSE => Some(false),
            _ => None,
        }
    }

    /// An optional boolean: `Some(None)` for null.
    #[inline]
    fn optional_bool(&mut self) -> Option<Option<bool>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::TRUE => Some(Some(true)),
            fc::FALSE => Some(Some(false)),
            _ => None,
        }
    }

    /// A boolean whose default is false.
    #[inline]
    fn bool_or_false(&mut self) -> Option<bool> {
        self.optional_bool().map(|b| b.unwrap_or(false))
    }

    /// An optional `vbin8`, sliced from `body` (the buffer `self.b` is).
    #[inline]
    fn optional_binary(&mut self, body: &Bytes) -> Option<Option<Bytes>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::VBIN8 => {
                let len = usize::from(*self.take(1)?.first()?);
                let start = self.pos;
                self.take(len)?;
                Some(Some(body.slice(start..start + len)))
            }
            _ => None,
        }
    }

    /// A field this reader only knows as null (read as the type's absent value).
    #[inline]
    fn null<T>(&mut self) -> Option<T>
    where
        T: Absent,
    {
        (self.code()? == fc::NULL).then(T::absent)
    }

    /// An optional delivery state that, when present, is `accepted` as a `list0`.
    #[inline]
    fn optional_accepted(&mut self) -> Option<Option<DeliveryState>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::DESCRIBED => {
                let d = self.take(3)?;
                (d[0] == fc::SMALL_ULONG
                    && u64::from(d[1]) == descriptor::ACCEPTED
                    && d[2] == fc::LIST0)
                    .then_some(Some(DeliveryState::Accepted))
            }
            _ => None,
        }
    }
}

/// What a field read as null stands for.
trait Absent {
    fn absent() -> Self;
}

impl<T> Absent for Option<T> {
    fn absent() -> Self {
        None
    }
}

impl Absent for () {
    fn absent() -> Self {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Decode, Decoder, Encode};
    use bytes::BytesMut;

    fn encoded(p: &Performative) -> Bytes {
        let mut out = BytesMut::new();
        p.encode(&mut out);
        out.freeze()
    }

    fn general(body: &Bytes) -> Performative {
        Performative::decode_with(&mut Decoder::new(body.slice(1..)), body[0]).expect("decodes")
    }

    #[test]
    fn the_usual_frames_take_the_fast_path_and_read_as_the_general_decoder_reads_them() {
        let frames = [
            Performative::Transfer(Transfer {
                handle: 3,
                delivery_id: Some(70_000),
                delivery_tag: Some(Bytes::from_static(&[0, 0, 1, 17])),
                message_format: Some(0),
                settled: Some(false),
                ..Transfer::default()
            }),
            Performative::Disposition(Disposition {
                role: Role::Receiver,
                first: 12_345,
                last: None,
                settled: true,
                state: Some(DeliveryState::Accepted),
                batchable: false,
            }),
            Performative::Disposition(Disposition {
                role: Role::Sender,
                first: 0,
                last: Some(255),
                ..Disposition::default()
            }),
            Performative::Flow(Flow {
                next_incoming_id: Some(100_000),
                incoming_window: 2048,
                next_outgoing_id: 1,
                outgoing_window: 2048,
                handle: Some(2),
                delivery_count: Some(99_999),
                link_credit: Some(10),
                drain: true,
                ..Flow::default()
            }),
        ];
        for p in frames {
            let body = encoded(&p);
            let (quick, used) = performative(&body).expect("fast path");
            assert_eq!(quick, p);
            assert_eq!(quick, general(&body));
            assert_eq!(used, body.len());
        }
    }

    #[test]
    fn what_it_does_not_know_goes_to_the_general_decoder() {
        let rejected = Performative::Disposition(Disposition {
            role: Role::Receiver,
            first: 1,
            state: Some(DeliveryState::Rejected { error: None }),
            ..Disposition::default()
        });
        let open = Performative::Open(super::super::Open::new("c"));
        for p in [rejected, open] {
            assert_eq!(performative(&encoded(&p)), None, "{p:?}");
        }
        // A required field null, a list whose size is one byte short, a ulong handle.
        let mut body = encoded(&Performative::Transfer(Transfer::default())).to_vec();
        assert_eq!(body[6], fc::UINT0);
        body[6] = fc::NULL;
        assert_eq!(performative(&Bytes::from(body.clone())), None);
        body[6] = fc::UINT0;
        body[4] += 1;
        assert_eq!(performative(&Bytes::from(body.clone())), None);
        body[4] -= 1;
        body[6] = fc::ULONG0;
        assert_eq!(performative(&Bytes::from(body)), None);
    }
}
