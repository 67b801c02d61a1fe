//! Waiting gets: hand-off by put/commit/backout, arrival order, expiry, quiesce/stop.

use super::*;

fn wait_any(h: &mut Harness, c: ConnId, o: Hobj, opts: GetOptionFlags, ms: i32) {
    let r = h.get_with(
        c,
        o,
        &MessageDescriptor::default(),
        opts | GetOptionFlags::WAIT,
        ms,
        1024,
    );
    assert_eq!(r, GetOutcome::Waiting);
}

fn wait_correl(h: &mut Harness, c: ConnId, o: Hobj, correl: u8) {
    let md = MessageDescriptor {
        correl_id: id(correl),
        ..Default::default()
    };
    let r = h.get_with(c, o, &md, GetOptionFlags::WAIT, -1, 1024);
    assert_eq!(r, GetOutcome::Waiting);
}

fn put_correl(h: &mut Harness, c: ConnId, o: Hobj, correl: u8, body: &[u8]) {
    let mut md = MessageDescriptor {
        correl_id: id(correl),
        ..Default::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), body)
        .unwrap();
}

#[test]
fn put_hands_message_to_waiter() {
    let mut h = Harness::new();
    h.local("Q");
    let g = h.conn();
    let p = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    wait_any(&mut h, g, og, GetOptionFlags::empty(), 5_000);
    assert_eq!(h.qm.next_deadline(), Some(Timestamp(T0 + 5_000)));
    h.put(p, op, b"hello");
    assert_eq!(h.completions(), vec![(g, Ok(b"hello".to_vec()))]);
    assert_eq!(h.depth("Q"), 0, "never stored");
    assert_eq!(h.qm.next_deadline(), None);
    let mut q = h.qm.qmgr();
    q.monitoring_q = ferry_objects::qmgr::QmgrMonitoring::Medium;
    h.qm.alter_qmgr(q, &mut h.fx).unwrap();
    assert!(h.qm.queue_status("Q", h.t()).unwrap().last_get_ms.is_some());
}

#[test]
fn waiters_served_in_arrival_order() {
    let mut h = Harness::new();
    h.local("Q");
    let p = h.conn();
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    let mut gs = Vec::new();
    for _ in 0..3 {
        let c = h.conn();
        let o = h.open(c, "Q", OpenOptions::INPUT_SHARED);
        wait_any(&mut h, c, o, GetOptionFlags::empty(), -1);
        gs.push(c);
    }
    for b in [b"1", b"2", b"3"] {
        h.put(p, op, b);
    }
    let got = h.completions();
    assert_eq!(
        got,
        vec![
            (gs[0], Ok(b"1".to_vec())),
            (gs[1], Ok(b"2".to_vec())),
            (gs[2], Ok(b"3".to_vec()))
        ]
    );
}

#[test]
fn correl_waiters_get_their_own_reply() {
    let mut h = Harness::new();
    h.local("REPLY");
    let p = h.conn();
    let op = h.open(p, "REPLY", OpenOptions::OUTPUT);
    let a = h.conn();
    let oa = h.open(a, "REPLY", OpenOptions::INPUT_SHARED);
    let b = h.conn();
    let ob = h.open(b, "REPLY", OpenOptions::INPUT_SHARED);
    wait_correl(&mut h, a, oa, 1);
    wait_correl(&mut h, b, ob, 2);
    put_correl(&mut h, p, op, 3, b"nobody");
    put_correl(&mut h, p, op, 2, b"for b");
    put_correl(&mut h, p, op, 1, b"for a");
    assert_eq!(
        h.completions(),
        vec![(b, Ok(b"for b".to_vec())), (a, Ok(b"for a".to_vec()))]
    );
    assert_eq!(h.depth("REPLY"), 1);
}

#[test]
fn earlier_any_waiter_beats_later_correl_waiter() {
    let mut h = Harness::new();
    h.local("Q");
    let p = h.conn();
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    let a = h.conn();
    let oa = h.open(a, "Q", OpenOptions::INPUT_SHARED);
    let b = h.conn();
    let ob = h.open(b, "Q", OpenOptions::INPUT_SHARED);
    wait_any(&mut h, a, oa, GetOptionFlags::empty(), -1);
    wait_correl(&mut h, b, ob, 4);
    put_correl(&mut h, p, op, 4, b"x");
    assert_eq!(h.completions(), vec![(a, Ok(b"x".to_vec()))]);
}

#[test]
fn uncommitted_put_does_not_wake_commit_does() {
    let mut h = Harness::new();
    h.local("Q");
    let g = h.conn();
    let p = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    wait_any(&mut h, g, og, GetOptionFlags::empty(), -1);
    h.put_sync(p, op, b"later");
    assert!(h.completions().is_empty());
    let t = h.t();
    h.qm.commit(p, t, &mut h.fx).unwrap();
    assert_eq!(h.completions(), vec![(g, Ok(b"later".to_vec()))]);
}

#[test]
fn backout_wakes_waiter_with_backout_count() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    let b = h.conn();
    let ob = h.open(b, "Q", OpenOptions::INPUT_SHARED);
    h.put(a, oa, b"m");
    h.get_now(a, oa, GetOptionFlags::SYNCPOINT).unwrap();
    wait_any(&mut h, b, ob, GetOptionFlags::empty(), -1);
    let t = h.t();
    h.qm.backout(a, t, &mut h.fx).unwrap();
    let fx: Vec<_> = h.fx.drain().collect();
    match &fx[..] {
        [Effect::GetCompleted {
            conn,
            result: Ok(g),
            ..
        }] => {
            assert_eq!(*conn, b);
            assert_eq!(g.md.backout_count, 1);
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn syncpoint_waiter_takes_message_into_its_unit_of_work() {
    let mut h = Harness::new();
    h.local("Q");
    let g = h.conn();
    let p = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    wait_any(&mut h, g, og, GetOptionFlags::SYNCPOINT, -1);
    h.put(p, op, b"m");
    assert_eq!(h.completions().len(), 1);
    assert_eq!(h.depth("Q"), 1, "held by the getter's unit of work");
    let t = h.t();
    h.qm.backout(g, t, &mut h.fx).unwrap();
    assert_eq!(h.get_body(g, og).unwrap(), b"m");
}

#[test]
fn wait_expiry_gives_2033() {
    let mut h = Harness::new();
    h.local("Q");
    let g = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    wait_any(&mut h, g, og, GetOptionFlags::empty(), 100);
    h.now += 99;
    let t = h.t();
    h.qm.expire_waits(t, &mut h.fx);
    assert!(h.completions().is_empty());
    h.now += 1;
    let t = h.t();
    h.qm.expire_waits(t, &mut h.fx);
    assert_eq!(h.completions(), vec![(g, Err(ReasonCode::NoMsgAvailable))]);
    assert_eq!(h.qm.waiting_gets(), 0);
}

#[test]
fn wait_interval_checks() {
    let mut h = Harness::new();
    h.local("Q");
    let g = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    let r = h.get_with(
        g,
        og,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT,
        -5,
        10,
    );
    assert_eq!(
        r.done().unwrap().unwrap_err().reason(),
        ReasonCode::WaitIntervalError
    );
    let r = h.get_with(
        g,
        og,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT,
        0,
        10,
    );
    assert_eq!(
        r.done().unwrap().unwrap_err().reason(),
        ReasonCode::NoMsgAvailable
    );
    wait_any(&mut h, g, og, GetOptionFlags::empty(), -1);
    assert_eq!(h.qm.next_deadline(), None, "unlimited waits arm no timer");
    let r = h.get_with(
        g,
        og,
        &MessageDescriptor::default(),
        GetOptionFlags::empty(),
        0,
        10,
    );
    assert_eq!(
        r.done().unwrap().unwrap_err().reason(),
        ReasonCode::CallInProgress
    );
}

#[test]
fn disconnect_cancels_wait_silently() {
    let mut h = Harness::new();
    h.local("Q");
    let g = h.conn();
    let p = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    wait_any(&mut h, g, og, GetOptionFlags::empty(), 1000);
    let t = h.t();
    h.qm.disconnect(g, false, t, &mut h.fx);
    assert!(h.completions().is_empty());
    assert_eq!(h.qm.next_deadline(), None);
    h.put(p, op, b"m");
    assert!(h.completions().is_empty());
    assert_eq!(h.depth("Q"), 1);
}

#[test]
fn browse_waiter_sees_message_and_passes_it_on() {
    let mut h = Harness::new();
    h.local("Q");
    let b = h.conn();
    let ob = h.open(b, "Q", OpenOptions::BROWSE);
    let g = h.conn();
    let og = h.open(g, "Q", OpenOptions::INPUT_SHARED);
    let p = h.conn();
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    wait_any(&mut h, b, ob, GetOptionFlags::BROWSE_FIRST, -1);
    wait_any(&mut h, g, og, GetOptionFlags::empty(), -1);
    h.put(p, op, b"m");
    assert_eq!(
        h.completions(),
        vec![(b, Ok(b"m".to_vec())), (g, Ok(b"m".to_vec()))]
    );
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn truncation_on_handoff_leaves_message_for_next_waiter() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", OpenOptions::INPUT_SHARED);
    let p = h.conn();
    let op = h.open(p, "Q", OpenOptions::OUTPUT);
    let r = h.get_with(
        a,
        oa,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT,
        -1,
        2,
    );
    assert_eq!(r, GetOutcome::Waiting);
    h.put(p, op, b"too long");
    assert_eq!(
        h.completions(),
        vec![(a, Err(ReasonCode::TruncatedMsgFailed))]
    );
    assert_eq!(h.depth("Q"), 1);
}

#[test]
fn quiesce_ends_fail_if_quiescing_waits_only() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", OpenOptions::INPUT_SHARED);
    let b = h.conn();
    let ob = h.open(b, "Q", OpenOptions::INPUT_SHARED);
    wait_any(&mut h, a, oa, GetOptionFlags::FAIL_IF_QUIESCING, -1);
    wait_any(&mut h, b, ob, GetOptionFlags::empty(), -1);
    let t = h.t();
    h.qm.quiesce(t, &mut h.fx);
    assert_eq!(h.completions(), vec![(a, Err(ReasonCode::QMgrQuiescing))]);
    assert_eq!(
        h.qm.connect(ConnectionInfo::default(), t, &mut Effects::new())
            .unwrap_err()
            .reason,
        ReasonCode::QMgrQuiescing
    );
    assert_eq!(
        rc(h.try_open(a, "Q", OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING)),
        ReasonCode::QMgrQuiescing
    );
    h.try_open(a, "Q", OpenOptions::OUTPUT).unwrap();
    h.qm.stop(t, &mut h.fx);
    assert_eq!(h.completions(), vec![(b, Err(ReasonCode::QMgrStopping))]);
    assert_eq!(
        rc(h.try_open(a, "Q", OpenOptions::OUTPUT)),
        ReasonCode::QMgrStopping
    );
    h.qm.disconnect(a, false, t, &mut h.fx);
}

#[test]
fn closing_the_creator_of_a_temp_queue_ends_other_waits_with_2052() {
    let mut h = Harness::new();
    let a = h.conn();
    let opened = h.try_open(a, "SYSTEM.DEFAULT.MODEL.QUEUE", IO).unwrap();
    let b = h.conn();
    let ob = h.open(b, &opened.object_name, OpenOptions::INPUT_SHARED);
    wait_any(&mut h, b, ob, GetOptionFlags::empty(), -1);
    let t = h.t();
    h.qm.close(
        a,
        opened.hobj,
        ferry_mqi::CloseOptions::empty(),
        t,
        &mut h.fx,
    )
    .unwrap();
    assert_eq!(h.completions(), vec![(b, Err(ReasonCode::QDeleted))]);
    assert!(h.qm.queue(&opened.object_name).is_none());
    assert_eq!(h.get_body(b, ob), Err(ReasonCode::QDeleted));
}
