//! PUT and GET rules: order, matching, descriptor completion, checks, expiry,
//! truncation, browse.

use super::*;
use ferry_mqi::descriptor::{persistence, NONE_ID};
use ferry_mqi::{FixedStr, MatchOptions};
use ferry_objects::queue::{Enablement, MsgDeliverySequence, YesNo};

fn prio_put(h: &mut Harness, c: ConnId, o: Hobj, p: i32, body: &[u8]) {
    let mut md = MessageDescriptor {
        priority: p,
        ..Default::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), body)
        .unwrap();
}

#[test]
fn priority_order_with_fifo_within_priority() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    prio_put(&mut h, c, o, 0, b"a0");
    prio_put(&mut h, c, o, 5, b"b5");
    prio_put(&mut h, c, o, 0, b"c0");
    prio_put(&mut h, c, o, 9, b"d9");
    prio_put(&mut h, c, o, 5, b"e5");
    let got: Vec<_> = (0..5).map(|_| h.get_body(c, o).unwrap()).collect();
    assert_eq!(got, [&b"d9"[..], b"b5", b"e5", b"a0", b"c0"]);
    assert_eq!(h.get_body(c, o), Err(ReasonCode::NoMsgAvailable));
}

#[test]
fn msgdlvsq_fifo_ignores_priority() {
    let mut h = Harness::new();
    h.define("Q", QueueType::Local, |a| {
        a.msg_delivery_sequence = MsgDeliverySequence::Fifo
    });
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    prio_put(&mut h, c, o, 0, b"1");
    prio_put(&mut h, c, o, 9, b"2");
    prio_put(&mut h, c, o, 4, b"3");
    let got: Vec<_> = (0..3).map(|_| h.get_body(c, o).unwrap()).collect();
    assert_eq!(got, [b"1", b"2", b"3"]);
}

#[test]
fn get_by_correl_id_among_100k_messages() {
    let mut h = Harness::new();
    h.define("Q", QueueType::Local, |a| a.max_depth = 200_000);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for i in 0..100_000u32 {
        let mut md = MessageDescriptor::default();
        md.correl_id[..4].copy_from_slice(&i.to_be_bytes());
        md.correl_id[4] = 1;
        h.put_md(c, o, &mut md, PutOptionFlags::empty(), &i.to_be_bytes())
            .unwrap();
    }
    let mut want = MessageDescriptor::default();
    want.correl_id[..4].copy_from_slice(&77_777u32.to_be_bytes());
    want.correl_id[4] = 1;
    let g = h
        .get_with(c, o, &want, GetOptionFlags::empty(), 0, 100)
        .done()
        .unwrap()
        .unwrap();
    assert_eq!(&g.data[..], &77_777u32.to_be_bytes());
    assert_eq!(g.md.correl_id, want.correl_id);
    // Gone now; others stay.
    assert_eq!(
        h.get_with(c, o, &want, GetOptionFlags::empty(), 0, 100)
            .done()
            .unwrap()
            .unwrap_err()
            .reason(),
        ReasonCode::NoMsgAvailable
    );
    assert_eq!(h.depth("Q"), 99_999);
}

#[test]
fn get_by_msg_id_and_match_options() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let first = h.put(c, o, b"first");
    let second = h.put(c, o, b"second");
    assert_ne!(first.msg_id, NONE_ID);
    assert_ne!(first.msg_id, second.msg_id);
    let mut want = MessageDescriptor {
        msg_id: second.msg_id,
        ..Default::default()
    };
    let g = h
        .get_with(c, o, &want, GetOptionFlags::empty(), 0, 100)
        .done()
        .unwrap()
        .unwrap();
    assert_eq!(&g.data[..], b"second");
    // Match options without MSG_ID ignore the MsgId given.
    want.msg_id = id(99);
    let gmo = GetOptions {
        match_options: MatchOptions::CORREL_ID,
        ..Default::default()
    };
    let t = h.t();
    let g =
        h.qm.get(c, o, &want, &gmo, 100, t, &mut h.fx)
            .done()
            .unwrap()
            .unwrap();
    assert_eq!(&g.data[..], b"first");
}

#[test]
fn ids_and_context_are_filled() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = MessageDescriptor {
        msg_id: id(5),
        reply_to_q: FixedStr::new("REPLY").unwrap(),
        ..Default::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"x")
        .unwrap();
    assert_eq!(md.msg_id, id(5), "a given MsgId is kept");
    assert_eq!(md.reply_to_qmgr.as_str(), "QM1");
    assert_eq!(md.user_identifier.as_str(), "alice");
    assert_eq!(md.put_appl_name.as_str(), "test-app");
    assert_eq!(md.put_date.as_str(), "20240101");
    assert_eq!(md.put_time.as_str(), "00000000");
    assert_eq!(md.persistence, persistence::NOT_PERSISTENT);
    assert_eq!(md.priority, 0);
    let mut md2 = MessageDescriptor {
        msg_id: id(5),
        ..Default::default()
    };
    h.put_md(
        c,
        o,
        &mut md2,
        PutOptionFlags::NEW_MSG_ID | PutOptionFlags::NEW_CORREL_ID,
        b"y",
    )
    .unwrap();
    assert_ne!(md2.msg_id, id(5));
    assert_eq!(&md2.msg_id[..4], b"FRY ");
    assert_ne!(md2.correl_id, NONE_ID);
    let g = h.get_now(c, o, GetOptionFlags::empty()).unwrap();
    assert_eq!(g.md.msg_id, id(5));
    assert_eq!(g.md.user_identifier.as_str(), "alice");
}

#[test]
fn set_identity_context_needs_open_option() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = MessageDescriptor {
        user_identifier: FixedStr::new("bob").unwrap(),
        ..Default::default()
    };
    assert_eq!(
        rc(h.put_md(c, o, &mut md, PutOptionFlags::SET_IDENTITY_CONTEXT, b"x")),
        ReasonCode::NotOpenForSetIdent
    );
    let o2 = h.open(
        c,
        "Q",
        OpenOptions::OUTPUT | OpenOptions::SET_IDENTITY_CONTEXT,
    );
    h.put_md(c, o2, &mut md, PutOptionFlags::SET_IDENTITY_CONTEXT, b"x")
        .unwrap();
    assert_eq!(md.user_identifier.as_str(), "bob");
}

#[test]
fn as_q_def_comes_from_the_alias() {
    let mut h = Harness::new();
    h.define("BASE", QueueType::Local, |a| {
        a.def_priority = 2;
        a.def_persistence = YesNo::No;
    });
    h.define("ALIAS", QueueType::Alias, |a| {
        a.target = "BASE".into();
        a.def_priority = 7;
        a.def_persistence = YesNo::Yes;
    });
    let c = h.conn();
    let o = h.open(c, "ALIAS", OpenOptions::OUTPUT);
    let md = h.put(c, o, b"x");
    assert_eq!(md.priority, 7);
    assert_eq!(md.persistence, persistence::PERSISTENT);
    let o2 = h.open(c, "BASE", OpenOptions::OUTPUT);
    let md = h.put(c, o2, b"x");
    assert_eq!(md.priority, 2);
    assert_eq!(md.persistence, persistence::NOT_PERSISTENT);
}

#[test]
fn priority_limits() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = MessageDescriptor {
        priority: 12,
        ..Default::default()
    };
    assert_eq!(
        h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"x"),
        Ok(Some(ReasonCode::PriorityExceedsMaximum))
    );
    assert_eq!(md.priority, 9);
    let mut md = MessageDescriptor {
        priority: -2,
        ..Default::default()
    };
    assert_eq!(
        rc(h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"x")),
        ReasonCode::PriorityError
    );
    let mut md = MessageDescriptor {
        persistence: 3,
        ..Default::default()
    };
    assert_eq!(
        rc(h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"x")),
        ReasonCode::PersistenceError
    );
    let mut md = MessageDescriptor {
        expiry: 0,
        ..Default::default()
    };
    assert_eq!(
        rc(h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"x")),
        ReasonCode::ExpiryError
    );
}

#[test]
fn put_checks_in_order() {
    let mut h = Harness::new();
    h.define("Q", QueueType::Local, |a| {
        a.max_depth = 2;
        a.max_msg_length = 10;
    });
    let c = h.conn();
    let input = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    let out = h.open(c, "Q", OpenOptions::OUTPUT);
    let mut md = MessageDescriptor::default();
    assert_eq!(
        rc(h.put_md(c, input, &mut md, PutOptionFlags::empty(), b"x")),
        ReasonCode::NotOpenForOutput
    );
    assert_eq!(
        rc(h.put_md(
            c,
            out,
            &mut md,
            PutOptionFlags::SYNCPOINT | PutOptionFlags::NO_SYNCPOINT,
            b"x"
        )),
        ReasonCode::OptionsError
    );
    let big = vec![0u8; 5_000_000];
    assert_eq!(
        rc(h.put_md(c, out, &mut md, PutOptionFlags::empty(), &big)),
        ReasonCode::MsgTooBigForQMgr
    );
    assert_eq!(
        rc(h.put_md(c, out, &mut md, PutOptionFlags::empty(), &[0; 11])),
        ReasonCode::MsgTooBigForQ
    );
    h.put(c, out, b"1");
    h.put_sync(c, out, b"2");
    // The uncommitted put counts in CURDEPTH.
    assert_eq!(
        rc(h.put_md(
            c,
            out,
            &mut MessageDescriptor::default(),
            PutOptionFlags::empty(),
            b"3"
        )),
        ReasonCode::QFull
    );
    let mut d = h.qm.queue("Q").unwrap();
    d.attributes.put = Enablement::Disabled;
    let t = h.t();
    h.qm.alter_queue(d, false, t, &mut h.fx).unwrap();
    assert_eq!(
        rc(h.put_md(
            c,
            out,
            &mut MessageDescriptor::default(),
            PutOptionFlags::empty(),
            b"3"
        )),
        ReasonCode::PutInhibited
    );
}

#[test]
fn inhibits_on_alias_and_base() {
    let mut h = Harness::new();
    h.local("BASE");
    h.define("A", QueueType::Alias, |a| {
        a.target = "BASE".into();
        a.put = Enablement::Disabled;
        a.get = Enablement::Disabled;
    });
    let c = h.conn();
    let o = h.open(c, "A", IO);
    assert_eq!(
        rc(h.put_md(
            c,
            o,
            &mut MessageDescriptor::default(),
            PutOptionFlags::empty(),
            b"x"
        )),
        ReasonCode::PutInhibited
    );
    assert_eq!(h.get_body(c, o), Err(ReasonCode::GetInhibited));
    let b = h.open(c, "BASE", IO);
    h.put(c, b, b"x");
    assert_eq!(h.get_body(c, b).unwrap(), b"x");
    let mut d = h.qm.queue("BASE").unwrap();
    d.attributes.get = Enablement::Disabled;
    let t = h.t();
    h.qm.alter_queue(d, false, t, &mut h.fx).unwrap();
    assert_eq!(h.get_body(c, b), Err(ReasonCode::GetInhibited));
}

#[test]
fn get_needs_input_and_browse_needs_browse() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", OpenOptions::OUTPUT);
    assert_eq!(h.get_body(c, o), Err(ReasonCode::NotOpenForInput));
    assert_eq!(
        h.get_now(c, o, GetOptionFlags::BROWSE_FIRST)
            .unwrap_err()
            .reason(),
        ReasonCode::NotOpenForBrowse
    );
    assert_eq!(h.get_body(c, Hobj(99)), Err(ReasonCode::HobjError));
    assert_eq!(
        h.get_now(
            c,
            o,
            GetOptionFlags::SYNCPOINT | GetOptionFlags::NO_SYNCPOINT
        )
        .unwrap_err()
        .reason(),
        ReasonCode::OptionsError
    );
}

#[test]
fn expired_messages_are_removed_and_never_returned() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO | OpenOptions::BROWSE);
    let mut md = MessageDescriptor {
        expiry: 10, // one second
        ..Default::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), b"short")
        .unwrap();
    h.put(c, o, b"long");
    h.now += 400;
    let g = h.get_now(c, o, GetOptionFlags::BROWSE_FIRST).unwrap();
    assert_eq!(&g.data[..], b"short");
    assert_eq!(g.md.expiry, 6, "the remaining time in tenths");
    h.now += 1_000;
    assert_eq!(h.depth("Q"), 2, "counted until met");
    assert_eq!(h.get_body(c, o).unwrap(), b"long");
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn truncation_accepted_and_failed() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"0123456789");
    let e = h
        .get_with(
            c,
            o,
            &MessageDescriptor::default(),
            GetOptionFlags::empty(),
            0,
            4,
        )
        .done()
        .unwrap()
        .unwrap_err();
    assert_eq!(e.reason(), ReasonCode::TruncatedMsgFailed);
    let t = e.truncated.unwrap();
    assert_eq!(t.data_length, 10);
    assert_eq!(&t.data[..], b"0123");
    assert_eq!(h.depth("Q"), 1, "the message stays");
    let g = h
        .get_with(
            c,
            o,
            &MessageDescriptor::default(),
            GetOptionFlags::ACCEPT_TRUNCATED_MSG,
            0,
            4,
        )
        .done()
        .unwrap()
        .unwrap();
    assert_eq!(g.warning, Some(ReasonCode::TruncatedMsgAccepted));
    assert_eq!(g.data_length, 10);
    assert_eq!(&g.data[..], b"0123");
    assert_eq!(h.depth("Q"), 0, "the message is removed");
}

#[test]
fn browse_first_next_and_under_cursor() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO | OpenOptions::BROWSE);
    assert_eq!(
        h.get_now(c, o, GetOptionFlags::MSG_UNDER_CURSOR)
            .unwrap_err()
            .reason(),
        ReasonCode::NoMsgUnderCursor
    );
    for b in [b"1", b"2", b"3"] {
        h.put(c, o, b);
    }
    let b1 = h.get_now(c, o, GetOptionFlags::BROWSE_FIRST).unwrap();
    assert_eq!(&b1.data[..], b"1");
    let b2 = h.get_now(c, o, GetOptionFlags::BROWSE_NEXT).unwrap();
    assert_eq!(&b2.data[..], b"2");
    assert_eq!(h.depth("Q"), 3, "browse does not remove");
    let g = h.get_now(c, o, GetOptionFlags::MSG_UNDER_CURSOR).unwrap();
    assert_eq!(&g.data[..], b"2");
    assert_eq!(
        h.get_now(c, o, GetOptionFlags::MSG_UNDER_CURSOR)
            .unwrap_err()
            .reason(),
        ReasonCode::NoMsgUnderCursor
    );
    let b3 = h.get_now(c, o, GetOptionFlags::BROWSE_NEXT).unwrap();
    assert_eq!(&b3.data[..], b"3");
    assert_eq!(
        h.get_now(c, o, GetOptionFlags::BROWSE_NEXT)
            .unwrap_err()
            .reason(),
        ReasonCode::NoMsgAvailable
    );
    // BROWSE_NEXT without a cursor starts at the beginning.
    let o2 = h.open(c, "Q", OpenOptions::BROWSE);
    assert_eq!(
        &h.get_now(c, o2, GetOptionFlags::BROWSE_NEXT).unwrap().data[..],
        b"1"
    );
}

#[test]
fn browse_skips_uncommitted_puts_and_gets() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let b = h.conn();
    let oa = h.open(a, "Q", IO);
    let ob = h.open(b, "Q", OpenOptions::BROWSE);
    h.put(a, oa, b"1");
    h.put(a, oa, b"2");
    h.put_sync(a, oa, b"3");
    h.get_now(a, oa, GetOptionFlags::SYNCPOINT).unwrap();
    let seen: Vec<Vec<u8>> = std::iter::from_fn(|| {
        h.get_now(b, ob, GetOptionFlags::BROWSE_NEXT)
            .ok()
            .map(|g| g.data.to_vec())
    })
    .collect();
    assert_eq!(seen, vec![b"2".to_vec()]);
}
