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

use super::{Disposition, Flow, Performative, Role, Transfer};
use crate::codec::format_code as fc;
use crate::codec::quick::List;
use crate::descriptor;

/// Reads a transfer, disposition or flow at the start of `body` in the compact encoding,
/// returning it and the bytes it took; `None` when the general decoder must read it.
pub(crate) fn performative(body: &Bytes) -> Option<(Performative, usize)> {
    let b = body.as_ref();
    // 0x00 0x53 <code> 0xc0 <size> <count>
    if b.len() < 3 || b[0] != fc::DESCRIBED || b[1] != fc::SMALL_ULONG {
        return None;
    }
    let mut r = List::open(b, 1)?;
    let p = match u64::from(b[2]) {
        descriptor::TRANSFER => Performative::Transfer(transfer(&mut r, body)?),
        descriptor::DISPOSITION => Performative::Disposition(disposition(&mut r)?),
        descriptor::FLOW => Performative::Flow(flow(&mut r)?),
        _ => return None,
    };
    Some((p, r.finish()?))
}

fn transfer(r: &mut List<'_>, body: &Bytes) -> Option<Transfer> {
    Some(Transfer {
        handle: r.uint()?,
        delivery_id: r.optional_uint()?,
        delivery_tag: r.optional_binary()?.map(|s| body.slice(s)),
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

fn disposition(r: &mut List<'_>) -> Option<Disposition> {
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

fn flow(r: &mut List<'_>) -> Option<Flow> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Decode, Decoder, Encode};
    use crate::performative::DeliveryState;
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
