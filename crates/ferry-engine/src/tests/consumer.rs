//! Message properties, selectors, async consumers with credit and settlement of held
//! deliveries: what the AMQP channel relies on.

use super::*;
use crate::{ConsumeMode, ConsumeSpec, ConsumerId, DeliveryToken, MessageFilter, Settlement};
use ferry_mqi::{MessageProperties, PropertyRef, PropertyValue};
use std::rc::Rc;

/// Selects messages whose string property `colour` equals the given value.
struct Colour(&'static str);

impl MessageFilter for Colour {
    fn matches(&self, _md: &MessageDescriptor, properties: &[u8]) -> bool {
        MessageProperties::find(properties, "colour") == Some(PropertyRef::String(self.0))
    }
}

fn colour(c: &str) -> Bytes {
    let mut p = MessageProperties::new();
    p.set("colour", PropertyValue::String(c.into())).unwrap();
    p.encode()
}

/// A delivery as the tests look at it.
#[derive(Debug, PartialEq)]
struct Got {
    consumer: ConsumerId,
    token: Option<DeliveryToken>,
    body: Vec<u8>,
    backout: i32,
}

impl Harness {
    fn put_props(&mut self, c: ConnId, h: Hobj, body: &[u8], props: Bytes) -> MessageDescriptor {
        let mut md = MessageDescriptor::default();
        let t = self.t();
        self.qm
            .put_with_properties(
                c,
                h,
                &mut md,
                &PutOptions::default(),
                Bytes::copy_from_slice(body),
                props,
                t,
                &mut self.fx,
            )
            .unwrap();
        md
    }

    fn open_sel(&mut self, c: ConnId, q: &str, o: OpenOptions, f: &'static str) -> Hobj {
        let t = self.t();
        self.qm
            .open_with_selection(
                c,
                &ObjectDescriptor::queue(q).unwrap(),
                o,
                Rc::new(Colour(f)),
                t,
                &mut self.fx,
            )
            .unwrap()
            .hobj
    }

    fn consume(&mut self, c: ConnId, h: Hobj, mode: ConsumeMode) -> ConsumerId {
        self.qm.consume(c, h, ConsumeSpec::new(mode)).unwrap()
    }

    fn credit(&mut self, c: ConnId, k: ConsumerId, n: u32) {
        let t = self.t();
        self.qm.add_credit(c, k, n, t, &mut self.fx).unwrap();
    }

    fn settle(&mut self, c: ConnId, token: Option<DeliveryToken>, s: Settlement) {
        let t = self.t();
        self.qm
            .settle(c, token.expect("unsettled"), s, t, &mut self.fx)
            .unwrap();
    }

    /// The deliveries pushed so far (other effects dropped).
    fn deliveries(&mut self) -> Vec<Got> {
        self.fx
            .drain()
            .filter_map(|e| match e {
                Effect::Delivered {
                    consumer,
                    delivery,
                    message,
                    ..
                } => Some(Got {
                    consumer,
                    token: delivery,
                    body: message.data.to_vec(),
                    backout: message.md.backout_count,
                }),
                _ => None,
            })
            .collect()
    }
}

fn bodies(v: &[Got]) -> Vec<&[u8]> {
    v.iter().map(|g| g.body.as_slice()).collect()
}

const BROWSE_IO: OpenOptions = OpenOptions::BROWSE.union(IO);

#[test]
fn properties_travel_with_the_message() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put_props(c, o, b"a", colour("red"));
    h.put(c, o, b"b");
    let got = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(got.properties, colour("red"));
    let got = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert!(got.properties.is_empty());
}

#[test]
fn properties_count_towards_maxmsgl() {
    let mut h = Harness::new();
    h.define("Q", QueueType::Local, |a| a.max_msg_length = 10);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let t = h.t();
    let r = h.qm.put_with_properties(
        c,
        o,
        &mut MessageDescriptor::default(),
        &PutOptions::default(),
        Bytes::from_static(b"12345"),
        colour("red"),
        t,
        &mut h.fx,
    );
    assert_eq!(rc(r), ReasonCode::MsgTooBigForQ);
}

#[test]
fn filtered_get_takes_the_first_selected_message() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let blue = h.open_sel(c, "Q", OpenOptions::INPUT_SHARED, "blue");
    h.put_props(c, o, b"r1", colour("red"));
    let b1 = h.put_props(c, o, b"b1", colour("blue"));
    h.put_props(c, o, b"b2", colour("blue"));
    assert_eq!(h.get_body(c, blue).unwrap(), b"b1");
    // With a CorrelId criterion too: the index first, then the selector.
    let mut md = MessageDescriptor::default();
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"x")
        .unwrap();
    let want = MessageDescriptor {
        correl_id: b1.correl_id,
        ..MessageDescriptor::default()
    };
    let r = h
        .get_with(c, blue, &want, GetOptionFlags::NO_SYNCPOINT, 0, 100)
        .done()
        .unwrap();
    assert_eq!(r.unwrap().data.as_ref(), b"b2");
    assert_eq!(h.get_body(c, blue), Err(ReasonCode::NoMsgAvailable));
    assert_eq!(h.get_body(c, o).unwrap(), b"r1");
}

#[test]
fn filtered_browse_skips_unselected_messages() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let b = h.open_sel(c, "Q", OpenOptions::BROWSE, "blue");
    h.put_props(c, o, b"r1", colour("red"));
    h.put_props(c, o, b"b1", colour("blue"));
    h.put_props(c, o, b"r2", colour("red"));
    h.put_props(c, o, b"b2", colour("blue"));
    let first = h.get_now(c, b, GetOptionFlags::BROWSE_FIRST).unwrap();
    assert_eq!(first.data.as_ref(), b"b1");
    let next = h.get_now(c, b, GetOptionFlags::BROWSE_NEXT).unwrap();
    assert_eq!(next.data.as_ref(), b"b2");
    assert_eq!(
        h.get_now(c, b, GetOptionFlags::BROWSE_NEXT)
            .unwrap_err()
            .reason(),
        ReasonCode::NoMsgAvailable
    );
    assert_eq!(h.depth("Q"), 4);
}

#[test]
fn a_waiter_whose_selector_refuses_does_not_block_the_next() {
    let mut h = Harness::new();
    h.local("Q");
    let (a, b, p) = (h.conn(), h.conn(), h.conn());
    let ha = h.open_sel(a, "Q", OpenOptions::INPUT_SHARED, "blue");
    let hb = h.open(b, "Q", OpenOptions::INPUT_SHARED);
    let hp = h.open(p, "Q", OpenOptions::OUTPUT);
    let md = MessageDescriptor::default();
    let w = GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT;
    assert_eq!(h.get_with(a, ha, &md, w, -1, 100), GetOutcome::Waiting);
    assert_eq!(h.get_with(b, hb, &md, w, -1, 100), GetOutcome::Waiting);
    h.put_props(p, hp, b"red", colour("red"));
    assert_eq!(h.completions(), vec![(b, Ok(b"red".to_vec()))]);
    h.put_props(p, hp, b"blue", colour("blue"));
    assert_eq!(h.completions(), vec![(a, Ok(b"blue".to_vec()))]);
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn credit_delivers_now_and_later_and_drain_returns_the_rest() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for b in [b"1", b"2", b"3"] {
        h.put(c, o, b);
    }
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    assert!(h.deliveries().is_empty(), "no credit, no delivery");
    h.credit(c, k, 2);
    let got = h.deliveries();
    assert_eq!(bodies(&got), [&b"1"[..], &b"2"[..]]);
    assert!(got.iter().all(|g| g.consumer == k && g.token.is_some()));
    // Held messages stay in CURDEPTH but nobody else can get them.
    assert_eq!(h.depth("Q"), 3);
    assert_eq!(h.get_body(c, o).unwrap(), b"3");
    h.put(c, o, b"4");
    assert!(h.deliveries().is_empty(), "credit used up");
    h.credit(c, k, 5);
    assert_eq!(bodies(&h.deliveries()), [&b"4"[..]]);
    h.put(c, o, b"5");
    assert_eq!(bodies(&h.deliveries()), [&b"5"[..]]);
    assert_eq!(h.qm.credit(c, k), Ok(3));
    assert_eq!(h.qm.drain(c, k), Ok(3));
    h.put(c, o, b"6");
    assert!(h.deliveries().is_empty());
    assert_eq!(h.depth("Q"), 6 - 1);
    assert_eq!(h.qm.held_count(k), 4);
}

#[test]
fn a_byte_window_bounds_deliveries_whatever_the_credit() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for _ in 0..10 {
        h.put(c, o, &[b'x'; 100]);
    }
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    let t = h.t();
    h.qm.set_window(c, k, 250, t, &mut h.fx).unwrap();
    h.credit(c, k, 1_000);
    // 100 + 100 leave 50: room for one more, which takes the window below zero.
    assert_eq!(h.deliveries().len(), 3, "250 bytes: three of 100");
    assert_eq!(h.qm.window(c, k), Ok(0));
    h.put(c, o, b"late");
    assert!(h.deliveries().is_empty(), "no window, no delivery");
    // Widening the window delivers what is available at once, and later puts.
    let t = h.t();
    h.qm.set_window(c, k, 150, t, &mut h.fx).unwrap();
    assert_eq!(h.deliveries().len(), 2);
    // A message larger than any window still goes when there is room at all.
    let t = h.t();
    h.qm.set_window(c, k, 1, t, &mut h.fx).unwrap();
    assert_eq!(h.deliveries().len(), 1);
    assert_eq!(h.qm.credit(c, k), Ok(1_000 - 6));
    // Without a window, credit alone decides.
    let t = h.t();
    h.qm.set_window(c, k, u64::MAX, t, &mut h.fx).unwrap();
    assert_eq!(h.deliveries().len(), 5);
}

#[test]
fn settled_consumer_removes_at_delivery() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"1");
    let k = h.consume(c, o, ConsumeMode::Settled);
    h.credit(c, k, 10);
    h.put(c, o, b"2");
    let got = h.deliveries();
    assert_eq!(bodies(&got), [&b"1"[..], &b"2"[..]]);
    assert!(got.iter().all(|g| g.token.is_none()));
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn consumer_with_selector_and_correl_id() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut want = MessageDescriptor {
        correl_id: id(9),
        ..MessageDescriptor::default()
    };
    h.put_props(c, o, b"r", colour("red"));
    h.put_props(c, o, b"b", colour("blue"));
    let t = h.t();
    h.qm.put_with_properties(
        c,
        o,
        &mut want,
        &PutOptions::default(),
        Bytes::from_static(b"b9"),
        colour("blue"),
        t,
        &mut h.fx,
    )
    .unwrap();
    let spec = ConsumeSpec {
        correl_id: Some(id(9)),
        filter: Some(Rc::new(Colour("blue"))),
        ..ConsumeSpec::new(ConsumeMode::Settled)
    };
    let k = h.qm.consume(c, o, spec).unwrap();
    h.credit(c, k, 10);
    assert_eq!(bodies(&h.deliveries()), [&b"b9"[..]]);
    let blue =
        h.qm.consume(
            c,
            o,
            ConsumeSpec {
                filter: Some(Rc::new(Colour("blue"))),
                ..ConsumeSpec::new(ConsumeMode::Settled)
            },
        )
        .unwrap();
    h.credit(c, blue, 10);
    h.put_props(c, o, b"r2", colour("red"));
    h.put_props(c, o, b"b2", colour("blue"));
    assert_eq!(bodies(&h.deliveries()), [&b"b"[..], &b"b2"[..]]);
    assert_eq!(h.depth("Q"), 2);
}

#[test]
fn browse_consumer_sees_each_message_once_and_removes_nothing() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", BROWSE_IO);
    let put_prio = |h: &mut Harness, priority: i32, body: &[u8]| {
        let mut md = MessageDescriptor {
            priority,
            ..MessageDescriptor::default()
        };
        h.put_md(c, o, &mut md, PutOptionFlags::empty(), body)
            .unwrap();
    };
    put_prio(&mut h, 3, b"p3");
    put_prio(&mut h, 5, b"p5");
    let k = h.consume(c, o, ConsumeMode::Browse);
    h.credit(c, k, 2);
    let got = h.deliveries();
    assert_eq!(bodies(&got), [&b"p5"[..], &b"p3"[..]]);
    assert!(got.iter().all(|g| g.token.is_none()));
    // Out of credit: a high-priority arrival lands behind the cursor, a low one after it.
    put_prio(&mut h, 9, b"p9");
    put_prio(&mut h, 1, b"p1");
    assert!(h.deliveries().is_empty());
    h.credit(c, k, 10);
    assert_eq!(bodies(&h.deliveries()), [&b"p9"[..], &b"p1"[..]]);
    h.put(c, o, b"later");
    assert_eq!(bodies(&h.deliveries()), [&b"later"[..]]);
    h.credit(c, k, 10);
    assert!(h.deliveries().is_empty(), "nothing twice");
    assert_eq!(h.depth("Q"), 5);
    // A destructive consumer beside it still gets everything.
    let d = h.consume(c, o, ConsumeMode::Settled);
    h.credit(c, d, 10);
    assert_eq!(h.deliveries().len(), 5);
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn browse_needs_browse_and_destructive_modes_need_input() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let out = h.open(c, "Q", OpenOptions::OUTPUT);
    let inp = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let r = h.qm.consume(c, out, ConsumeSpec::new(ConsumeMode::Settled));
    assert_eq!(rc(r), ReasonCode::NotOpenForInput);
    let r = h.qm.consume(c, inp, ConsumeSpec::new(ConsumeMode::Browse));
    assert_eq!(rc(r), ReasonCode::NotOpenForBrowse);
    let r =
        h.qm.consume(c, Hobj(99), ConsumeSpec::new(ConsumeMode::Browse));
    assert_eq!(rc(r), ReasonCode::HobjError);
    let other = h.conn();
    let k = h.consume(c, inp, ConsumeMode::Settled);
    let t = h.t();
    assert_eq!(
        rc(h.qm.add_credit(other, k, 1, t, &mut h.fx)),
        ReasonCode::HobjError
    );
    assert_eq!(rc(h.qm.drain(other, k)), ReasonCode::HobjError);
}

#[test]
fn consumers_and_waiters_take_turns() {
    let mut h = Harness::new();
    h.local("Q");
    let (c, w, p) = (h.conn(), h.conn(), h.conn());
    let hc = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let hw = h.open(w, "Q", OpenOptions::INPUT_SHARED);
    let hp = h.open(p, "Q", OpenOptions::OUTPUT);
    let k = h.consume(c, hc, ConsumeMode::Settled);
    h.credit(c, k, 1000);
    let md = MessageDescriptor::default();
    let wait = GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT;
    assert_eq!(h.get_with(w, hw, &md, wait, -1, 100), GetOutcome::Waiting);
    // The consumer registered its credit before the getter waited: it goes first,
    // then queues behind the waiting getter.
    h.put(p, hp, b"1");
    assert_eq!(bodies(&h.deliveries()), [&b"1"[..]]);
    h.put(p, hp, b"2");
    assert_eq!(h.completions(), vec![(w, Ok(b"2".to_vec()))]);
    h.put(p, hp, b"3");
    assert_eq!(bodies(&h.deliveries()), [&b"3"[..]]);
}

#[test]
fn settlement_outcomes() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for b in [b"a", b"b", b"c", b"d"] {
        h.put(c, o, b);
    }
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 4);
    let got = h.deliveries();
    assert_eq!(bodies(&got), [&b"a"[..], &b"b"[..], &b"c"[..], &b"d"[..]]);
    h.settle(c, got[0].token, Settlement::Accepted);
    h.settle(c, got[3].token, Settlement::Rejected);
    assert_eq!(h.depth("Q"), 2);
    // Released: back in place, count unchanged; Modified: count + 1.
    h.settle(c, got[2].token, Settlement::Released);
    h.settle(
        c,
        got[1].token,
        Settlement::Modified {
            delivery_failed: true,
            undeliverable_here: false,
        },
    );
    assert!(h.deliveries().is_empty(), "credit used up");
    let g = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!((g.data.as_ref(), g.md.backout_count), (&b"b"[..], 1));
    let g = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!((g.data.as_ref(), g.md.backout_count), (&b"c"[..], 0));
    // Settled twice, or never delivered: an error, nothing else.
    let t = h.t();
    assert_eq!(
        h.qm.settle(c, got[0].token.unwrap(), Settlement::Accepted, t, &mut h.fx),
        Err(crate::SettleError::UnknownDelivery(got[0].token.unwrap()))
    );
    assert!(h
        .qm
        .settle(
            c,
            DeliveryToken(u64::MAX),
            Settlement::Accepted,
            t,
            &mut h.fx
        )
        .is_err());
}

#[test]
fn returned_message_goes_to_the_next_taker_at_once() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"m");
    let k1 = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k1, 1);
    let first = h.deliveries();
    let k2 = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k2, 1);
    assert!(h.deliveries().is_empty());
    h.settle(c, first[0].token, Settlement::Released);
    let again = h.deliveries();
    assert_eq!(again.len(), 1);
    assert_eq!((again[0].consumer, again[0].backout), (k2, 0));
}

#[test]
fn undeliverable_here_never_returns_to_that_consumer() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"poison");
    h.put(c, o, b"ok");
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 1);
    let got = h.deliveries();
    assert_eq!(bodies(&got), [&b"poison"[..]]);
    h.settle(
        c,
        got[0].token,
        Settlement::Modified {
            delivery_failed: true,
            undeliverable_here: true,
        },
    );
    h.credit(c, k, 10);
    assert_eq!(bodies(&h.deliveries()), [&b"ok"[..]]);
    // Another consumer may have it.
    let other = h.consume(c, o, ConsumeMode::Settled);
    h.credit(c, other, 10);
    let got = h.deliveries();
    assert_eq!(bodies(&got), [&b"poison"[..]]);
    assert_eq!(got[0].backout, 1);
}

#[test]
fn settle_many_settles_every_known_token() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for _ in 0..5 {
        h.put(c, o, b"m");
    }
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 5);
    let mut tokens: Vec<DeliveryToken> = h.deliveries().iter().filter_map(|g| g.token).collect();
    tokens.push(DeliveryToken(12345));
    let t = h.t();
    let r =
        h.qm.settle_many(c, &tokens, Settlement::Accepted, t, &mut h.fx);
    assert_eq!(
        r,
        Err(crate::SettleError::UnknownDelivery(DeliveryToken(12345)))
    );
    assert_eq!(h.depth("Q"), 0);
    assert_eq!(h.qm.held_count(k), 0);
}

#[test]
fn disconnect_and_close_return_held_messages_counted() {
    let mut h = Harness::new();
    h.local("Q");
    let (c, p) = (h.conn(), h.conn());
    let hp = h.open(p, "Q", IO);
    h.put(p, hp, b"1");
    h.put(p, hp, b"2");
    let o = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 1);
    let o2 = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let k2 = h.consume(c, o2, ConsumeMode::Unsettled);
    h.credit(c, k2, 1);
    assert_eq!(h.deliveries().len(), 2);
    // Closing the first handle returns its message; the second consumer is out of
    // credit, so it stays on the queue.
    let t = h.t();
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert_eq!(rc(h.qm.drain(c, k)), ReasonCode::HobjError);
    let t = h.t();
    h.qm.disconnect(c, true, t, &mut h.fx);
    assert!(
        h.deliveries().is_empty(),
        "nothing to the disconnecting consumers"
    );
    let g1 = h.get_now(p, hp, GetOptionFlags::NO_SYNCPOINT).unwrap();
    let g2 = h.get_now(p, hp, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(
        [
            (g1.data.as_ref(), g1.md.backout_count),
            (g2.data.as_ref(), g2.md.backout_count)
        ],
        [(&b"1"[..], 1), (&b"2"[..], 1)]
    );
}

#[test]
fn cancel_with_released_keeps_the_count() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"1");
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 1);
    assert_eq!(h.deliveries().len(), 1);
    let t = h.t();
    h.qm.cancel_consumer(c, k, Settlement::Released, t, &mut h.fx)
        .unwrap();
    let g = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(g.md.backout_count, 0);
    assert_eq!(
        rc(h.qm.cancel_consumer(c, k, Settlement::Released, t, &mut h.fx)),
        ReasonCode::HobjError
    );
}

#[test]
fn deleting_the_queue_cancels_its_consumers() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"1");
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 1);
    let got = h.deliveries();
    let t = h.t();
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    // Closing returned it; consume again on a fresh handle, then delete the queue.
    let o = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 1);
    h.fx.clear();
    h.qm.delete_queue_now(h.qm.queues.lookup("Q").unwrap(), t, &mut h.fx);
    let cancelled: Vec<_> =
        h.fx.drain()
            .filter_map(|e| match e {
                Effect::ConsumerCancelled {
                    consumer, reason, ..
                } => Some((consumer, reason)),
                _ => None,
            })
            .collect();
    assert_eq!(cancelled, vec![(k, ReasonCode::QDeleted)]);
    assert!(h
        .qm
        .settle(c, got[0].token.unwrap(), Settlement::Accepted, t, &mut h.fx)
        .is_err());
}

#[test]
fn expired_messages_are_discarded_not_delivered() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = MessageDescriptor {
        expiry: 10,
        ..MessageDescriptor::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"old")
        .unwrap();
    h.put(c, o, b"new");
    h.now += 5_000;
    let k = h.consume(c, o, ConsumeMode::Unsettled);
    h.credit(c, k, 5);
    assert_eq!(bodies(&h.deliveries()), [&b"new"[..]]);
    assert_eq!(h.depth("Q"), 1);
}

#[test]
fn get_inhibited_queue_delivers_nothing() {
    let mut h = Harness::new();
    h.define("Q", QueueType::Local, |a| {
        a.get = ferry_objects::queue::Enablement::Disabled
    });
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"1");
    let k = h.consume(c, o, ConsumeMode::Settled);
    h.credit(c, k, 5);
    h.put(c, o, b"2");
    assert!(h.deliveries().is_empty());
    assert_eq!(h.qm.credit(c, k), Ok(5));
}

#[test]
fn credit_given_after_a_getter_waits_queues_behind_it() {
    let mut h = Harness::new();
    h.local("Q");
    let (c, w, p) = (h.conn(), h.conn(), h.conn());
    let hc = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let hw = h.open(w, "Q", OpenOptions::INPUT_SHARED);
    let hp = h.open(p, "Q", OpenOptions::OUTPUT);
    let k = h.consume(c, hc, ConsumeMode::Settled);
    let md = MessageDescriptor::default();
    let wait = GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT;
    assert_eq!(h.get_with(w, hw, &md, wait, -1, 100), GetOutcome::Waiting);
    h.credit(c, k, 1000);
    h.put(p, hp, b"1");
    assert_eq!(h.completions(), vec![(w, Ok(b"1".to_vec()))]);
    h.put(p, hp, b"2");
    assert_eq!(bodies(&h.deliveries()), [&b"2"[..]]);
}
