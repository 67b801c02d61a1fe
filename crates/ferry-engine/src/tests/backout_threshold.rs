//! The server-enforced backout threshold: a message backed out BOTHRESH times moves to
//! BOQNAME, else to DEADQ with an MQDLH, else stays (reported once); a persistent move
//! survives a restart as exactly one copy.

use super::persistence::{put_p, restart, take_log, view_of};
use super::*;
use crate::LogRecord;

const IO: OpenOptions = OpenOptions::INPUT_SHARED.union(OpenOptions::OUTPUT);

/// A harness with queue Q (BOTHRESH(2), BOQNAME `boq`), queues BOQ and DLQ, and the
/// queue manager's DEADQ set to `deadq`.
fn poison_harness(boq: &str, deadq: &str, logging: bool) -> Harness {
    let mut h = Harness::new();
    for q in ["BOQ", "DLQ"] {
        h.local(q);
    }
    h.define("Q", QueueType::Local, |a| {
        a.backout_threshold = 2;
        a.backout_requeue_q = boq.to_string();
    });
    h.qm.qmgr.dead_letter_q = deadq.to_string();
    h.qm.set_logging(logging);
    h
}

/// Gets the first message of `o` under syncpoint and backs it out, `times` times.
fn back_out(h: &mut Harness, c: ConnId, o: Hobj, times: usize) {
    for _ in 0..times {
        h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
        let t = h.t();
        h.qm.backout(c, t, &mut h.fx).unwrap();
    }
}

#[test]
fn the_message_moves_to_boqname_when_its_count_reaches_bothresh() {
    let mut h = poison_harness("BOQ", "DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"poison");
    back_out(&mut h, c, o, 1);
    assert_eq!(h.depth("Q"), 1, "one backout is below BOTHRESH(2)");
    back_out(&mut h, c, o, 1);
    assert_eq!(h.depth("Q"), 0);
    assert_eq!(h.depth("BOQ"), 1);
    assert_eq!(h.depth("DLQ"), 0);
    let b = h.open(c, "BOQ", IO);
    let g = h.get_now(c, b, GetOptionFlags::empty()).unwrap();
    assert_eq!(&g.data[..], b"poison", "requeued unchanged");
    assert_eq!(g.md.backout_count, 2, "BackoutCount kept");
}

#[test]
fn without_boqname_it_goes_to_deadq_headed_by_an_mqdlh() {
    let mut h = poison_harness("", "DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"poison");
    back_out(&mut h, c, o, 2);
    assert_eq!((h.depth("Q"), h.depth("BOQ"), h.depth("DLQ")), (0, 0, 1));
    let d = h.open(c, "DLQ", IO);
    let g = h.get_now(c, d, GetOptionFlags::empty()).unwrap();
    assert_eq!(g.md.format.as_bytes(), b"MQDEAD  ");
    let dlh = &g.data[..];
    assert_eq!(&dlh[..4], b"DLH ");
    let reason = i32::from_le_bytes([dlh[8], dlh[9], dlh[10], dlh[11]]);
    assert_eq!(reason, ReasonCode::BackoutThresholdReached.number());
    assert_eq!(&dlh[12..14], b"Q ", "the queue it was on");
    assert_eq!(&dlh[172..], b"poison", "the message follows the header");
}

#[test]
fn a_boqname_that_refuses_falls_back_to_deadq() {
    let mut h = poison_harness("NO.SUCH.Q", "DLQ", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"poison");
    back_out(&mut h, c, o, 2);
    assert_eq!((h.depth("Q"), h.depth("DLQ")), (0, 1));
}

#[test]
fn with_nowhere_to_go_it_stays_and_is_reported_once() {
    let mut h = poison_harness("NO.SUCH.Q", "", false);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"poison");
    back_out(&mut h, c, o, 4);
    assert_eq!(h.depth("Q"), 1, "the message is not lost");
    let reports: Vec<_> =
        h.fx.drain()
            .filter_map(|e| match e {
                Effect::BackoutRequeueFailed { queue, .. } => Some(queue),
                _ => None,
            })
            .collect();
    assert_eq!(reports, ["Q"], "said once, naming the queue");
    let g = h.get_now(c, o, GetOptionFlags::empty()).unwrap();
    assert_eq!(g.md.backout_count, 4);
}

#[test]
fn a_persistent_move_is_one_copy_after_a_restart_wherever_the_log_ends() {
    let mut h = poison_harness("BOQ", "DLQ", true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"poison");
    back_out(&mut h, c, o, 1);
    let before: Vec<LogRecord> = take_log(&mut h);
    back_out(&mut h, c, o, 1);
    assert!(
        h.fx.reply_needs_durable(),
        "MQBACK waits for the move's records"
    );
    let moving: Vec<LogRecord> = take_log(&mut h);
    assert_eq!((h.depth("Q"), h.depth("BOQ")), (0, 1));
    // Every cut of the backout's records leaves exactly one copy, on Q or on BOQ.
    for cut in 0..=moving.len() {
        let log: Vec<&LogRecord> = before.iter().chain(&moving[..cut]).collect();
        let (qm, _) = restart(&h, log);
        let v = view_of(&qm);
        let on = |q: &str| v.get(q).map_or(0, |m| m.len());
        assert_eq!(on("Q") + on("BOQ"), 1, "cut after {cut} records: {v:?}");
        if cut == moving.len() {
            assert_eq!(on("BOQ"), 1, "the whole log has it moved");
            assert_eq!(v["BOQ"][0].md.backout_count, 2);
        }
    }
}

#[test]
fn a_restart_that_backs_out_the_bothresh_th_get_moves_the_message_once() {
    let mut h = poison_harness("BOQ", "DLQ", true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"poison");
    back_out(&mut h, c, o, 1);
    // The second delivery is in flight when the queue manager dies.
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    let log: Vec<LogRecord> = take_log(&mut h);
    let (qm, mut fx) = restart(&h, &log);
    qm.check_invariants();
    let v = view_of(&qm);
    assert!(!v.contains_key("Q"), "not back on Q: {v:?}");
    assert_eq!(v["BOQ"].len(), 1, "moved to BOQNAME: {v:?}");
    assert_eq!(
        v["BOQ"][0].md.backout_count, 2,
        "the restart's backout counted"
    );
    // A second restart reads the first one's records to the same outcome, once.
    let second: Vec<LogRecord> = log.iter().cloned().chain(fx.drain_log()).collect();
    let (qm2, mut fx2) = restart(&h, &second);
    assert_eq!(view_of(&qm2), v);
    assert_eq!(fx2.drain_log().count(), 0, "nothing left in flight");
}

#[test]
fn a_restart_below_bothresh_returns_the_message_to_its_queue() {
    let mut h = poison_harness("BOQ", "DLQ", true);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"poison");
    h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    let log: Vec<LogRecord> = take_log(&mut h);
    let (qm, _) = restart(&h, &log);
    let v = view_of(&qm);
    assert_eq!(v["Q"].len(), 1, "{v:?}");
    assert_eq!(v["Q"][0].md.backout_count, 1);
    assert!(!v.contains_key("BOQ"));
}
