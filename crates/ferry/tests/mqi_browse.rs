//! Browsing against a real queue manager process, through the Rust client: a waiting
//! BROWSE_NEXT is not given a message that sorts before its cursor, MQGMO_LOCK hides a
//! browsed message from every other application until UNLOCK (2209 when nothing is
//! locked; 2034 for a handle whose cursor was on it), a get of it, MQCLOSE or the end
//! of the connection, MQGMO_BROWSE_HANDLE browses each message once per handle,
//! cooperating dispatchers (MQOO_CO_OP, MQGMO_BROWSE_CO_OP) on different connections each
//! claim a different message until the queue manager's MARKINT passes, and the options
//! MQ refuses fail as in MQ (2046).

mod common;

use common::*;
use ferry_mqi::{
    CloseOptions, GetOptionFlags, MessageDescriptor, OpenOptions, PutOptions, ReasonCode,
};
use std::time::Duration;

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);
const LOCK_FIRST: GetOptionFlags = GetOptionFlags::BROWSE_FIRST.union(GetOptionFlags::LOCK);
const LOCK_NEXT: GetOptionFlags = GetOptionFlags::BROWSE_NEXT.union(GetOptionFlags::LOCK);

fn text(got: &ferry_client::GotMessage) -> String {
    String::from_utf8(got.data.to_vec()).expect("utf-8")
}

/// Browses (or gets) with `options` and returns the body as text, or panics.
async fn browse(q: &ferry_client::Queue, options: GetOptionFlags) -> String {
    let (_, got) = get_with(q, gmo(options, 0))
        .await
        .unwrap_or_else(|e| panic!("{options:?} failed: {e}"));
    text(&got)
}

async fn put_priority(q: &ferry_client::Queue, priority: i32, body: &str) {
    let mut md = MessageDescriptor {
        priority,
        ..Default::default()
    };
    put_md(q, &mut md, PutOptions::default(), body)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_browse_next_skips_a_message_before_its_cursor() {
    let qm = start("MQI.BROWSE.CURSOR");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let browser = connect(&qm.client()).await;
    let putter = connect(&qm.bindings()).await;
    let b = open(&browser, "Q", OpenOptions::BROWSE).await;
    let p = open(&putter, "Q", IO).await;
    put_priority(&p, 0, "low").await;
    assert_eq!(browse(&b, GetOptionFlags::BROWSE_FIRST).await, "low");

    let waiting = tokio::spawn(async move {
        let r = get_with(
            &b,
            gmo(GetOptionFlags::BROWSE_NEXT | GetOptionFlags::WAIT, 30_000),
        )
        .await;
        (b, r)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Priority 9 sorts before the cursor: BROWSE_NEXT does not return it.
    put_priority(&p, 9, "high").await;
    put_priority(&p, 0, "after").await;
    let (b, r) = within("waiting browse", waiting).await.unwrap();
    assert_eq!(text(&r.unwrap().1), "after");
    assert_eq!(browse(&b, GetOptionFlags::BROWSE_FIRST).await, "high");
    browser.disconnect().await.unwrap();
    putter.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_locked_message_is_hidden_from_others_until_unlocked() {
    let qm = start("MQI.BROWSE.LOCK");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let locker = connect(&qm.client()).await;
    let other = connect(&qm.bindings()).await;
    let l = open(
        &locker,
        "Q",
        OpenOptions::BROWSE | OpenOptions::INPUT_SHARED,
    )
    .await;
    let o = open(&other, "Q", IO | OpenOptions::BROWSE).await;
    put(&o, "one").await;
    put(&o, "two").await;

    assert_eq!(browse(&o, GetOptionFlags::BROWSE_FIRST).await, "one");
    assert_eq!(browse(&l, LOCK_FIRST).await, "one");
    // Locked since the other browsed it: no longer under its cursor.
    assert_reason(
        get_with(&o, gmo(GetOptionFlags::MSG_UNDER_CURSOR, 0)).await,
        ReasonCode::NoMsgUnderCursor,
    );
    assert_eq!(browse(&o, GetOptionFlags::BROWSE_FIRST).await, "two");
    assert_eq!(get_text(&o).await, "two");
    assert_reason(get(&o).await, ReasonCode::NoMsgAvailable);
    assert_eq!(curdepth(&qm, "Q"), 1, "a locked message counts in CURDEPTH");

    // A getter waiting on the other connection receives it when it is unlocked; UNLOCK
    // returns no message and leaves the descriptor alone.
    let waiting = tokio::spawn(async move {
        let r = get_with(&o, gmo(GetOptionFlags::WAIT, 30_000)).await;
        (o, r)
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut md = MessageDescriptor {
        priority: 7,
        ..Default::default()
    };
    let unlock = gmo(GetOptionFlags::UNLOCK, 0);
    let got = l.get(&mut md, &unlock, 1024).await.unwrap();
    assert_eq!((got.warning, got.data_length, md.priority), (None, 0, 7));
    let (o, r) = within("waiting get", waiting).await.unwrap();
    assert_eq!(text(&r.unwrap().1), "one");

    // Nothing locked now: UNLOCK warns 2209.
    let got = l.get(&mut md, &unlock, 1024).await.unwrap();
    assert_eq!(got.warning, Some(ReasonCode::NoMsgLocked));
    drop(o);
    locker.disconnect().await.unwrap();
    other.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_locker_gets_its_message_and_a_lock_ends_with_its_handle_or_connection() {
    let qm = start("MQI.BROWSE.LOCKEND");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let locker = connect(&qm.client()).await;
    let other = connect(&qm.client()).await;
    let o = open(&other, "Q", IO).await;
    for body in ["one", "two", "three"] {
        put(&o, body).await;
    }
    let l = open(
        &locker,
        "Q",
        OpenOptions::BROWSE | OpenOptions::INPUT_SHARED,
    )
    .await;
    assert_eq!(browse(&l, LOCK_FIRST).await, "one");
    // The next browse with LOCK moves the lock; the locker gets its message by cursor.
    assert_eq!(browse(&l, LOCK_NEXT).await, "two");
    assert_eq!(browse(&l, GetOptionFlags::MSG_UNDER_CURSOR).await, "two");
    assert_eq!(get_text(&o).await, "one");

    assert_eq!(browse(&l, LOCK_FIRST).await, "three");
    assert_reason(get(&o).await, ReasonCode::NoMsgAvailable);
    l.close(CloseOptions::empty()).await.unwrap();
    assert_eq!(get_text(&o).await, "three", "MQCLOSE unlocked it");

    put(&o, "four").await;
    let l = open(&locker, "Q", OpenOptions::BROWSE).await;
    assert_eq!(browse(&l, LOCK_FIRST).await, "four");
    assert_reason(get(&o).await, ReasonCode::NoMsgAvailable);
    drop(l);
    locker.disconnect().await.unwrap();
    assert_eq!(get_text(&o).await, "four", "MQDISC unlocked it");
    other.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browse_handle_sees_each_message_once_per_handle() {
    let qm = start("MQI.BROWSE.MARK");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.bindings()).await;
    let q = open(&conn, "Q", IO | OpenOptions::BROWSE).await;
    let other = open(&conn, "Q", OpenOptions::BROWSE).await;
    put(&q, "one").await;
    put(&q, "two").await;
    let bh = GetOptionFlags::BROWSE_HANDLE;
    assert_eq!(browse(&q, bh).await, "one");
    assert_eq!(browse(&q, bh).await, "two");
    assert_reason(get_with(&q, gmo(bh, 0)).await, ReasonCode::NoMsgAvailable);
    // Another handle has marks of its own.
    assert_eq!(browse(&other, bh).await, "one");
    // A message arriving with a higher priority is found, though it sorts first.
    put_priority(&q, 9, "urgent").await;
    assert_eq!(browse(&q, bh).await, "urgent");
    // Unmarked, a message is browsed again.
    let unmark = GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_HANDLE;
    assert_eq!(browse(&q, unmark).await, "urgent");
    assert_eq!(browse(&q, bh).await, "urgent");
    // Got and backed out, a message comes back unmarked.
    assert_eq!(browse(&q, GetOptionFlags::SYNCPOINT).await, "urgent");
    conn.backout().await.unwrap();
    assert_eq!(browse(&q, bh).await, "urgent");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn options_mq_refuses_fail_with_its_reasons() {
    let qm = start("MQI.BROWSE.REFUSED");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO | OpenOptions::BROWSE).await;
    put(&q, "one").await;
    for refused in [
        GetOptionFlags::LOCK,
        LOCK_FIRST | GetOptionFlags::UNLOCK,
        GetOptionFlags::UNLOCK | GetOptionFlags::WAIT,
        GetOptionFlags::MARK_BROWSE_HANDLE,
        GetOptionFlags::BROWSE_CO_OP,
        GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARKED_BROWSE_MSG,
    ] {
        assert_reason(
            get_with(&q, gmo(refused, 0)).await,
            ReasonCode::OptionsError,
        );
    }
    assert_reason(
        try_open(&conn, "Q", OpenOptions::INPUT_SHARED | OpenOptions::CO_OP).await,
        ReasonCode::OptionsError,
    );
    assert_eq!(
        get_text(&q).await,
        "one",
        "nothing refused touched the message"
    );
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cooperating_dispatchers_claim_each_message_once_until_markint() {
    let qm = start("MQI.BROWSE.COOP");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let shown = mqsc_ok(&qm, "DISPLAY QMGR MARKINT");
    assert!(shown.contains("MARKINT(5000)"), "MQ's default:\n{shown}");
    let (one, two) = (connect(&qm.client()).await, connect(&qm.client()).await);
    let worker = connect(&qm.bindings()).await;
    let co_op = OpenOptions::BROWSE | OpenOptions::CO_OP;
    let (a, b) = (open(&one, "Q", co_op).await, open(&two, "Q", co_op).await);
    let w = open(&worker, "Q", IO).await;
    for body in ["one", "two", "three"] {
        put(&w, body).await;
    }
    let claim = GetOptionFlags::BROWSE_CO_OP;
    assert_eq!(browse(&a, claim).await, "one");
    assert_eq!(browse(&b, claim).await, "two");
    assert_eq!(browse(&a, claim).await, "three");
    assert_reason(
        get_with(&b, gmo(claim, 0)).await,
        ReasonCode::NoMsgAvailable,
    );
    // The worker gets "one"; its claim goes with it.
    assert_eq!(get_text(&w).await, "one");
    // A dispatcher gives "three" back to the set: the other claims it.
    let give_back = GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_CO_OP;
    assert_eq!(browse(&a, GetOptionFlags::BROWSE_FIRST).await, "two");
    assert_eq!(browse(&a, GetOptionFlags::BROWSE_NEXT).await, "three");
    assert_eq!(browse(&a, give_back).await, "three");
    assert_eq!(browse(&b, claim).await, "three");
    // A claim not acted on lapses after MARKINT.
    mqsc_ok(&qm, "ALTER QMGR MARKINT(300)");
    assert_reason(
        get_with(&a, gmo(claim, 0)).await,
        ReasonCode::NoMsgAvailable,
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(browse(&a, claim).await, "two", "the set's claims lapsed");
    mqsc_ok(&qm, "ALTER QMGR MARKINT(NOLIMIT)");
    let shown = mqsc_ok(&qm, "DISPLAY QMGR MARKINT");
    assert!(shown.contains("MARKINT(NOLIMIT)"), "{shown}");
    for c in [one, two, worker] {
        c.disconnect().await.unwrap();
    }
}
