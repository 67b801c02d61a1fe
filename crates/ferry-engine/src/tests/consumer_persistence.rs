//! Persistence of what the AMQP channel adds: message properties in log records (format
//! version 2, version 1 still read), consumer deliveries and settlements as records,
//! and held messages across a restart.

use super::persistence::{
    checkpoint, logging_harness, pmd, put_p, restart, restart_from, take_log, view_of, Files,
};
use super::*;
use crate::journal::{kind, Record};
use crate::{ConsumeMode, ConsumeSpec, DeliveryToken, LogRecord, Settlement};
use ferry_mqi::{MessageProperties, PropertyValue};

fn props() -> Bytes {
    let mut p = MessageProperties::new();
    p.set("colour", PropertyValue::String("red".into()))
        .unwrap();
    p.set("n", PropertyValue::Int64(-5)).unwrap();
    p.encode()
}

fn put_pp(h: &mut Harness, c: ConnId, o: Hobj, body: &[u8]) {
    let mut md = pmd();
    let t = h.t();
    h.qm.put_with_properties(
        c,
        o,
        &mut md,
        &PutOptions::default(),
        Bytes::copy_from_slice(body),
        props(),
        t,
        &mut h.fx,
    )
    .unwrap();
}

/// Tokens (and needs_durable flags) of the deliveries pushed so far.
fn delivered(h: &mut Harness) -> Vec<(Option<DeliveryToken>, bool)> {
    h.fx.drain()
        .filter_map(|e| match e {
            Effect::Delivered {
                delivery,
                needs_durable,
                ..
            } => Some((delivery, needs_durable)),
            _ => None,
        })
        .collect()
}

fn kinds(log: &[LogRecord]) -> Vec<u8> {
    log.iter().map(|r| r.kind).collect()
}

#[test]
fn properties_survive_restart_and_checkpoint() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_pp(&mut h, c, o, b"a");
    let log = take_log(&mut h);
    let (qm, _) = restart(&h, &log);
    let v = view_of(&qm);
    assert_eq!(v["Q"][0].properties, props());
    // Imaged by one checkpoint, filed by the next: both restarts find it whole.
    let mut files = Files::new();
    let image = checkpoint(&mut h.qm, &mut files);
    assert!(files.values().all(|f| f.is_empty()));
    let (qm, _) = restart_from(&h, &files, &image);
    assert_eq!(view_of(&qm), view_of(&h.qm));
    let image = checkpoint(&mut h.qm, &mut files);
    assert!(image.is_empty());
    assert_eq!(files["Q"].len(), 1);
    let (qm, _) = restart_from(&h, &files, &image);
    assert_eq!(view_of(&qm), view_of(&h.qm));
}

#[test]
fn version_1_put_records_are_still_read() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"old");
    let log = take_log(&mut h);
    // The same record as version 1 wrote it: no properties length before the body.
    let v2 = log[0].payload();
    let body_len_at = v2.len() - 3 - 4;
    let props_len_at = body_len_at - 4;
    assert_eq!(&v2[props_len_at..body_len_at], &[0, 0, 0, 0]);
    let mut v1 = v2[..props_len_at].to_vec();
    v1.extend_from_slice(&v2[body_len_at..]);
    v1[0] = 1;
    let Ok(Record::Put { msg, .. }) = Record::decode(kind::PUT, &v1) else {
        panic!("version 1 put not read");
    };
    assert_eq!(msg.body.as_ref(), b"old");
    assert!(msg.properties.is_empty());
    let mut qm = QueueManager::from_catalogue("QM1", h.qm.catalogue(), h.t());
    let mut fx = Effects::new();
    let s = qm.recover([(kind::PUT, v1)], h.t(), &mut fx).unwrap();
    assert_eq!(s.messages, 1);
    assert_eq!(view_of(&qm), view_of(&h.qm));
}

#[test]
fn held_then_accepted_persistent_message_writes_one_get_record() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"m");
    take_log(&mut h);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 1, t, &mut h.fx).unwrap();
    assert!(h.fx.log_records().is_empty(), "holding writes nothing");
    let d = delivered(&mut h);
    assert_eq!(d.len(), 1);
    assert!(!d[0].1, "nothing to wait for");
    h.qm.settle(c, d[0].0.unwrap(), Settlement::Accepted, t, &mut h.fx)
        .unwrap();
    assert!(!h.fx.reply_needs_durable());
    let log = take_log(&mut h);
    assert_eq!(kinds(&log), [kind::GET]);
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn deliveries_removed_for_a_commit_wait_for_their_get_records() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"m");
    take_log(&mut h);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 1, t, &mut h.fx).unwrap();
    let d = delivered(&mut h);
    h.qm.settle_for_commit(c, &[d[0].0.unwrap()], t, &mut h.fx)
        .unwrap();
    assert!(
        h.fx.reply_needs_durable(),
        "the commit's answer waits for the Get record"
    );
    assert_eq!(kinds(&take_log(&mut h)), [kind::GET]);
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn settled_delivery_of_a_persistent_message_waits_for_its_get_record() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Settled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 5, t, &mut h.fx).unwrap();
    put_p(&mut h, c, o, false, b"m");
    assert_eq!(kinds(h.fx.log_records()), [kind::PUT, kind::GET]);
    assert_eq!(delivered(&mut h), vec![(None, true)]);
}

#[test]
fn failed_delivery_count_is_logged_and_replayed() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_pp(&mut h, c, o, b"m");
    let mut log = take_log(&mut h);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    for _ in 0..2 {
        h.qm.add_credit(c, k, 1, t, &mut h.fx).unwrap();
        let d = delivered(&mut h);
        let modified = Settlement::Modified {
            delivery_failed: true,
            undeliverable_here: false,
        };
        h.qm.settle(c, d[0].0.unwrap(), modified, t, &mut h.fx)
            .unwrap();
        assert!(!h.fx.reply_needs_durable());
    }
    let more = take_log(&mut h);
    assert_eq!(kinds(&more), [kind::BACKOUT_COUNT, kind::BACKOUT_COUNT]);
    log.extend(more);
    let (qm, _) = restart(&h, &log);
    let v = view_of(&qm);
    assert_eq!(v["Q"][0].md.backout_count, 2);
    assert_eq!(v, view_of(&h.qm));
    // A released delivery logs nothing.
    h.qm.add_credit(c, k, 1, t, &mut h.fx).unwrap();
    let d = delivered(&mut h);
    h.qm.settle(c, d[0].0.unwrap(), Settlement::Released, t, &mut h.fx)
        .unwrap();
    assert!(h.fx.log_records().is_empty());
}

#[test]
fn held_messages_come_back_after_a_crash_and_in_checkpoints() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"1");
    put_p(&mut h, c, o, false, b"2");
    let log = take_log(&mut h);
    let k =
        h.qm.consume(c, o, ConsumeSpec::new(ConsumeMode::Unsettled))
            .unwrap();
    let t = h.t();
    h.qm.add_credit(c, k, 2, t, &mut h.fx).unwrap();
    assert_eq!(delivered(&mut h).len(), 2);
    assert!(h.fx.log_records().is_empty());
    // Crash now: both are ordinary committed messages again, in order.
    let (qm, _) = restart(&h, &log);
    let v = view_of(&qm);
    let bodies: Vec<&[u8]> = v["Q"].iter().map(|m| m.body.as_ref()).collect();
    assert_eq!(bodies, [b"1", b"2"]);
    // A checkpoint taken while they are held carries them too.
    let mut files = Files::new();
    let image = checkpoint(&mut h.qm, &mut files);
    let (qm, _) = restart_from(&h, &files, &image);
    assert_eq!(view_of(&qm), v);
    let image = checkpoint(&mut h.qm, &mut files);
    let (qm, _) = restart_from(&h, &files, &image);
    assert_eq!(view_of(&qm), v);
}
