//! The redelivery delay (BODELAY): a backed-out message is hidden from gets, browses and
//! consumers until its delay is over, then handed to whoever waits; nothing changes
//! when BODELAY is 0; CLEAR removes delayed messages; a restart offers them at once.

use super::persistence::{put_p, restart, take_log, view_of};
use super::*;
use crate::{ConsumeMode, ConsumeSpec, Settlement};

const DELAY: u64 = 1_000;

/// A harness with queue Q (BODELAY(`delay`) ms, BOTHRESH(`threshold`), BOQNAME(BOQ)).
fn delayed_harness(delay: i32, threshold: i32) -> Harness {
    let mut h = Harness::new();
    h.local("BOQ");
    h.define("Q", QueueType::Local, |a| {
        a.backout_delay = delay;
        a.backout_threshold = threshold;
        a.backout_requeue_q = "BOQ".to_string();
    });
    h
}

/// Gets under syncpoint and backs out once.
fn fail_once(h: &mut Harness, c: ConnId, o: Hobj) {
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
}

/// Moves the clock to `at` and lets the queue manager's timer fire.
fn fire_timer_at(h: &mut Harness, at: u64) {
    h.now = at;
    let t = h.t();
    h.qm.expire_waits(t, &mut h.fx);
}

#[test]
fn a_backed_out_message_is_hidden_until_its_delay_is_over() {
    let mut h = delayed_harness(DELAY as i32, 0);
    let c = h.conn();
    let o = h.open(c, "Q", IO | OpenOptions::BROWSE);
    h.put(c, o, b"m");
    fail_once(&mut h, c, o);
    let scheduled: Vec<_> =
        h.fx.drain()
            .filter_map(|e| match e {
                Effect::RedeliveryScheduled { at } => Some(at),
                _ => None,
            })
            .collect();
    assert_eq!(
        scheduled,
        [Timestamp(T0 + DELAY)],
        "the server's timer is told"
    );
    assert_eq!(h.qm.next_deadline(), Some(Timestamp(T0 + DELAY)));
    assert_eq!(h.depth("Q"), 1, "still on the queue (CURDEPTH)");
    assert_eq!(h.get_body(c, o), Err(ReasonCode::NoMsgAvailable));
    assert_eq!(
        rc(h.get_now(c, o, GetOptionFlags::BROWSE_FIRST)
            .map_err(|e| MqError::from(e.reason()))),
        ReasonCode::NoMsgAvailable,
        "browse does not see it either"
    );
    fire_timer_at(&mut h, T0 + DELAY - 1);
    assert_eq!(
        h.get_body(c, o),
        Err(ReasonCode::NoMsgAvailable),
        "1 ms early"
    );
    fire_timer_at(&mut h, T0 + DELAY);
    assert_eq!(h.qm.next_deadline(), None);
    let g = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(&g.data[..], b"m");
    assert_eq!(g.md.backout_count, 1);
}

#[test]
fn a_waiting_get_is_completed_when_the_delay_ends() {
    let mut h = delayed_harness(DELAY as i32, 0);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let waiter = h.conn();
    let w = h.open(waiter, "Q", IO);
    h.put(c, o, b"m");
    fail_once(&mut h, c, o);
    let r = h.get_with(
        waiter,
        w,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT,
        -1,
        1024,
    );
    assert_eq!(r, GetOutcome::Waiting, "the delayed message is not offered");
    h.completions();
    fire_timer_at(&mut h, T0 + DELAY);
    assert_eq!(h.completions(), [(waiter, Ok(b"m".to_vec()))]);
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn a_consumer_failure_delays_and_the_consumer_gets_it_again_after() {
    let mut h = delayed_harness(DELAY as i32, 0);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"m");
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 10, t, &mut h.fx).unwrap();
    let token = |fx: &mut Effects| {
        fx.drain().find_map(|e| match e {
            Effect::Delivered {
                delivery, message, ..
            } => Some((delivery.unwrap(), message.md.backout_count)),
            _ => None,
        })
    };
    let (first, count) = token(&mut h.fx).expect("delivered");
    assert_eq!(count, 0);
    h.qm.settle(c, first, Settlement::DEFAULT_OUTCOME, t, &mut h.fx)
        .unwrap();
    assert!(
        token(&mut h.fx).is_none(),
        "not redelivered during the delay"
    );
    fire_timer_at(&mut h, T0 + DELAY);
    let (_, count) = token(&mut h.fx).expect("redelivered after the delay");
    assert_eq!(count, 1);
}

#[test]
fn released_is_not_a_failure_and_is_offered_at_once() {
    let mut h = delayed_harness(DELAY as i32, 0);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"m");
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 2, t, &mut h.fx).unwrap();
    let delivered = |fx: &mut Effects| {
        fx.drain().find_map(|e| match e {
            Effect::Delivered { delivery, .. } => delivery,
            _ => None,
        })
    };
    let token = delivered(&mut h.fx).expect("delivered");
    h.qm.settle(c, token, Settlement::Released, t, &mut h.fx)
        .unwrap();
    assert!(delivered(&mut h.fx).is_some(), "offered again at once");
    assert_eq!(h.qm.next_deadline(), None);
}

#[test]
fn with_bodelay_0_nothing_is_scheduled() {
    let mut h = delayed_harness(0, 0);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"m");
    fail_once(&mut h, c, o);
    assert!(!h
        .fx
        .drain()
        .any(|e| matches!(e, Effect::RedeliveryScheduled { .. })));
    assert_eq!(h.qm.next_deadline(), None);
    assert_eq!(h.get_body(c, o).unwrap(), b"m");
}

#[test]
fn at_bothresh_the_message_moves_without_waiting() {
    let mut h = delayed_harness(DELAY as i32, 1);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"m");
    fail_once(&mut h, c, o);
    assert_eq!((h.depth("Q"), h.depth("BOQ")), (0, 1));
    assert_eq!(h.qm.next_deadline(), None);
}

#[test]
fn clear_removes_delayed_messages() {
    let mut h = delayed_harness(DELAY as i32, 0);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"m");
    fail_once(&mut h, c, o);
    let t = h.t();
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert_eq!(h.qm.clear_queue("Q").unwrap(), 1);
    assert_eq!(h.depth("Q"), 0);
    fire_timer_at(&mut h, T0 + DELAY);
    assert_eq!(h.depth("Q"), 0, "the due time finds nothing to release");
}

#[test]
fn after_a_restart_a_delayed_persistent_message_is_available_at_once() {
    let mut h = delayed_harness(DELAY as i32, 0);
    h.qm.set_logging(true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"m");
    fail_once(&mut h, c, o);
    let log = take_log(&mut h);
    let (qm, _) = restart(&h, &log);
    let v = view_of(&qm);
    assert_eq!(v["Q"].len(), 1);
    assert_eq!(v["Q"][0].md.backout_count, 1, "its count is kept");
    assert_eq!(qm.next_deadline(), None, "no delay after a restart");
}
