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

use bytes::BytesMut;

use super::{DeliveryState, Disposition, Flow, Performative, Role, Transfer};
use crate::codec::format_code as fc;
use crate::codec::quick::{List, Writer};
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

/// Writes `t` if it has only what the compact writer takes (no state, no
/// rcv-settle-mode, a delivery tag of at most 32 bytes); false, with nothing written,
/// otherwise.
pub(crate) fn encode_transfer(t: &Transfer, out: &mut BytesMut) -> bool {
    if t.state.is_some()
        || t.rcv_settle_mode.is_some()
        || t.delivery_tag.as_ref().is_some_and(|d| d.len() > 32)
    {
        return false;
    }
    let mut w = Writer::<96>::new();
    w.uint(t.handle)
        .optional_uint(t.delivery_id)
        .optional_binary8(t.delivery_tag.as_deref())
        .optional_uint(t.message_format)
        .optional_bool(t.settled)
        .bool_or_false(t.more)
        .null()
        .null()
        .bool_or_false(t.resume)
        .bool_or_false(t.aborted)
        .bool_or_false(t.batchable);
    w.finish(descriptor::TRANSFER as u8, out)
}

/// Writes `d` if its state is none or `accepted`; false, with nothing written,
/// otherwise.
pub(crate) fn encode_disposition(d: &Disposition, out: &mut BytesMut) -> bool {
    let mut w = Writer::<64>::new();
    w.bool(d.role == Role::Receiver)
        .uint(d.first)
        .optional_uint(d.last)
        .bool_or_false(d.settled);
    match d.state {
        None => w.null(),
        Some(DeliveryState::Accepted) => w.accepted(),
        Some(_) => return false,
    };
    w.bool_or_false(d.batchable);
    w.finish(descriptor::DISPOSITION as u8, out)
}

/// Writes `f` if it has no properties; false, with nothing written, otherwise.
pub(crate) fn encode_flow(f: &Flow, out: &mut BytesMut) -> bool {
    if !f.properties.is_empty() {
        return false;
    }
    let mut w = Writer::<64>::new();
    w.optional_uint(f.next_incoming_id)
        .uint(f.incoming_window)
        .uint(f.next_outgoing_id)
        .uint(f.outgoing_window)
        .optional_uint(f.handle)
        .optional_uint(f.delivery_count)
        .optional_uint(f.link_credit)
        .optional_uint(f.available)
        .bool_or_false(f.drain)
        .bool_or_false(f.echo);
    w.finish(descriptor::FLOW as u8, out)
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

#[cfg(test)]
mod encode_tests {
    //! The compact writers must write exactly the general encoders' bytes.

    use super::*;
    use proptest::prelude::*;

    fn general<F: Fn(&mut BytesMut)>(f: F) -> BytesMut {
        let mut out = BytesMut::new();
        f(&mut out);
        out
    }

    fn state() -> impl Strategy<Value = Option<DeliveryState>> {
        prop_oneof![
            Just(None),
            Just(Some(DeliveryState::Accepted)),
            Just(Some(DeliveryState::Released)),
        ]
    }

    proptest! {
        #[test]
        fn transfers_encode_as_the_general_encoder_does(
            handle in any::<u32>(), delivery_id in any::<Option<u32>>(),
            tag in proptest::option::of(proptest::collection::vec(any::<u8>(), 0..40)),
            message_format in any::<Option<u32>>(), settled in any::<Option<bool>>(),
            more in any::<bool>(), resume in any::<bool>(), aborted in any::<bool>(),
            batchable in any::<bool>(), state in state(),
        ) {
            let t = Transfer {
                handle, delivery_id, delivery_tag: tag.map(Bytes::from), message_format,
                settled, more, rcv_settle_mode: None, state, resume, aborted, batchable,
            };
            let mut quick = BytesMut::new();
            if encode_transfer(&t, &mut quick) {
                prop_assert_eq!(quick, general(|o| t.encode_general(o)));
            } else {
                prop_assert!(quick.is_empty());
            }
        }

        #[test]
        fn dispositions_encode_as_the_general_encoder_does(
            receiver in any::<bool>(), first in any::<u32>(), last in any::<Option<u32>>(),
            settled in any::<bool>(), state in state(), batchable in any::<bool>(),
        ) {
            let d = Disposition {
                role: if receiver { Role::Receiver } else { Role::Sender },
                first, last, settled, state, batchable,
            };
            let mut quick = BytesMut::new();
            if encode_disposition(&d, &mut quick) {
                prop_assert_eq!(quick, general(|o| d.encode_general(o)));
            } else {
                prop_assert!(quick.is_empty());
            }
        }

        #[test]
        fn flows_encode_as_the_general_encoder_does(
            next_incoming_id in any::<Option<u32>>(), incoming_window in any::<u32>(),
            next_outgoing_id in any::<u32>(), outgoing_window in any::<u32>(),
            handle in any::<Option<u32>>(), delivery_count in any::<Option<u32>>(),
            link_credit in any::<Option<u32>>(), available in any::<Option<u32>>(),
            drain in any::<bool>(), echo in any::<bool>(),
        ) {
            let f = Flow {
                next_incoming_id, incoming_window, next_outgoing_id, outgoing_window, handle,
                delivery_count, link_credit, available, drain, echo, properties: Vec::new(),
            };
            let mut quick = BytesMut::new();
            prop_assert!(encode_flow(&f, &mut quick));
            prop_assert_eq!(quick, general(|o| f.encode_general(o)));
        }
    }
}
