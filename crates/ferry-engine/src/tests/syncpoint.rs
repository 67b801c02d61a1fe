//! Units of work: visibility, commit, backout to the original position, MAXUMSGS,
//! disconnect rules.

use super::*;

#[test]
fn uncommitted_put_is_invisible_until_commit() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let b = h.conn();
    let oa = h.open(a, "Q", IO);
    let ob = h.open(b, "Q", IO);
    h.put_sync(a, oa, b"m");
    assert_eq!(h.get_body(b, ob), Err(ReasonCode::NoMsgAvailable));
    assert_eq!(h.get_body(a, oa), Err(ReasonCode::NoMsgAvailable));
    let st = h.qm.queue_status("Q", h.t()).unwrap();
    assert_eq!((st.current_depth, st.uncommitted), (1, 1));
    assert!(h.qm.in_unit_of_work(a));
    let t = h.t();
    h.qm.commit(a, t, &mut h.fx).unwrap();
    assert_eq!(h.qm.queue_status("Q", h.t()).unwrap().uncommitted, 0);
    assert_eq!(h.get_body(b, ob).unwrap(), b"m");
}

#[test]
fn backout_discards_puts_and_restores_gets_in_place() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    for b in [b"1", b"2", b"3"] {
        h.put(a, oa, b);
    }
    let g = h.get_now(a, oa, GetOptionFlags::SYNCPOINT).unwrap();
    assert_eq!(&g.data[..], b"1");
    assert_eq!(g.md.backout_count, 0);
    h.put_sync(a, oa, b"4");
    assert_eq!(h.depth("Q"), 4);
    let t = h.t();
    h.qm.backout(a, t, &mut h.fx).unwrap();
    assert_eq!(h.depth("Q"), 3);
    let g = h.get_now(a, oa, GetOptionFlags::empty()).unwrap();
    assert_eq!(&g.data[..], b"1", "back at its original position");
    assert_eq!(g.md.backout_count, 1);
    assert_eq!(h.get_body(a, oa).unwrap(), b"2");
    assert_eq!(h.get_body(a, oa).unwrap(), b"3");
    assert_eq!(h.get_body(a, oa), Err(ReasonCode::NoMsgAvailable));
}

#[test]
fn backout_count_grows_with_each_backout() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    h.put(a, oa, b"m");
    for n in 0..3 {
        let g = h.get_now(a, oa, GetOptionFlags::SYNCPOINT).unwrap();
        assert_eq!(g.md.backout_count, n);
        let t = h.t();
        h.qm.backout(a, t, &mut h.fx).unwrap();
    }
}

#[test]
fn commit_finalizes_gets() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    h.put(a, oa, b"m");
    h.get_now(a, oa, GetOptionFlags::SYNCPOINT).unwrap();
    assert_eq!(h.depth("Q"), 1, "an uncommitted get still counts");
    let t = h.t();
    h.qm.commit(a, t, &mut h.fx).unwrap();
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn syncpoint_if_persistent() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    let mut md = MessageDescriptor {
        persistence: 1,
        ..Default::default()
    };
    h.put_md(a, oa, &mut md, PutOptionFlags::empty(), b"p")
        .unwrap();
    h.put(a, oa, b"np");
    h.get_now(a, oa, GetOptionFlags::SYNCPOINT_IF_PERSISTENT)
        .unwrap();
    h.get_now(a, oa, GetOptionFlags::SYNCPOINT_IF_PERSISTENT)
        .unwrap();
    let t = h.t();
    h.qm.backout(a, t, &mut h.fx).unwrap();
    assert_eq!(h.get_body(a, oa).unwrap(), b"p");
    assert_eq!(h.get_body(a, oa), Err(ReasonCode::NoMsgAvailable));
}

#[test]
fn maxumsgs_limits_a_unit_of_work() {
    let mut h = Harness::new();
    let mut q = h.qm.qmgr();
    q.max_uncommitted_msgs = 2;
    h.qm.alter_qmgr(q, &mut h.fx).unwrap();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    h.put(a, oa, b"x");
    h.put_sync(a, oa, b"1");
    h.get_now(a, oa, GetOptionFlags::SYNCPOINT).unwrap();
    assert_eq!(
        rc(h.put_md(
            a,
            oa,
            &mut MessageDescriptor::default(),
            PutOptionFlags::SYNCPOINT,
            b"3"
        )),
        ReasonCode::SyncpointLimitReached
    );
    h.put(a, oa, b"y");
    assert_eq!(
        h.get_now(a, oa, GetOptionFlags::SYNCPOINT)
            .unwrap_err()
            .reason(),
        ReasonCode::SyncpointLimitReached
    );
}

#[test]
fn normal_disconnect_commits_broken_backs_out() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    h.put_sync(a, oa, b"committed");
    let t = h.t();
    h.qm.disconnect(a, true, t, &mut h.fx);
    let b = h.conn();
    let ob = h.open(b, "Q", IO);
    h.put_sync(b, ob, b"lost");
    h.get_now(b, ob, GetOptionFlags::SYNCPOINT).unwrap();
    h.qm.disconnect(b, false, t, &mut h.fx);
    let c = h.conn();
    let oc = h.open(c, "Q", IO);
    let g = h.get_now(c, oc, GetOptionFlags::empty()).unwrap();
    assert_eq!(&g.data[..], b"committed");
    assert_eq!(g.md.backout_count, 1);
    assert_eq!(h.get_body(c, oc), Err(ReasonCode::NoMsgAvailable));
    assert_eq!(h.qm.connections().len(), 1);
    assert_eq!(h.qm.queue_status("Q", h.t()).unwrap().open_input_count, 1);
}

#[test]
fn commit_needs_a_connection() {
    let mut h = Harness::new();
    let t = h.t();
    assert_eq!(
        rc(h.qm.commit(ConnId(999), t, &mut h.fx)),
        ReasonCode::HconnError
    );
    assert_eq!(
        rc(h.qm.backout(ConnId(999), t, &mut h.fx)),
        ReasonCode::HconnError
    );
}

#[test]
fn a_unit_of_work_backed_out_for_log_space_fails_the_next_commit_with_2003() {
    let mut h = Harness::new();
    h.local("Q");
    h.qm.set_logging(true);
    let a = h.conn();
    let b = h.conn();
    let oa = h.open(a, "Q", IO);
    let ob = h.open(b, "Q", IO);
    let mut md = MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    h.put_md(a, oa, &mut md, PutOptionFlags::SYNCPOINT, &[1; 100])
        .unwrap();
    let mut md = MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    h.put_md(b, ob, &mut md, PutOptionFlags::SYNCPOINT, &[2; 10])
        .unwrap();
    // a logged first: it is the oldest.
    assert_eq!(h.qm.oldest_logged_unit_of_work(), Some((a, 100)));
    let t = h.t();
    assert!(h.qm.back_out_for_log_space(a, t, &mut h.fx));
    assert_eq!(h.qm.oldest_logged_unit_of_work(), Some((b, 10)));
    // Work after it is backed out with it at MQCMIT, which reports 2003.
    h.put_sync(a, oa, b"after");
    assert_eq!(rc(h.qm.commit(a, t, &mut h.fx)), ReasonCode::BackedOut);
    assert_eq!(h.depth("Q"), 1, "only b's uncommitted put is left");
    // The next unit of work commits normally.
    h.put_sync(a, oa, b"next");
    h.qm.commit(a, t, &mut h.fx).unwrap();
    h.qm.commit(b, t, &mut h.fx).unwrap();
    assert_eq!(h.depth("Q"), 2);
}

#[test]
fn mqdisc_does_not_commit_a_unit_of_work_the_queue_manager_backed_out() {
    let mut h = Harness::new();
    h.local("Q");
    h.qm.set_logging(true);
    let a = h.conn();
    let oa = h.open(a, "Q", IO);
    let mut md = MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    h.put_md(a, oa, &mut md, PutOptionFlags::SYNCPOINT, b"x")
        .unwrap();
    let t = h.t();
    assert!(h.qm.back_out_for_log_space(a, t, &mut h.fx));
    h.put_sync(a, oa, b"after");
    h.qm.disconnect(a, true, t, &mut h.fx);
    assert_eq!(h.depth("Q"), 0);
}
