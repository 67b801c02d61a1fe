//! The server-enforced backout threshold over the native protocol, against a real
//! server: a message backed out BOTHRESH times lands on BOQNAME (or on DEADQ with an
//! MQDLH when there is no BOQNAME), and a persistent one moved so is there exactly once
//! after a kill -9.

mod common;

use common::*;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{
    GetOptionFlags, MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};

const IO: OpenOptions = OpenOptions::INPUT_SHARED.union(OpenOptions::OUTPUT);

/// Puts one persistent message outside syncpoint.
async fn put_persistent(q: &ferry_client::Queue, body: &str) {
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    put_md(
        q,
        &mut md,
        PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
        body,
    )
    .await
    .expect("put");
}

/// Gets under syncpoint and backs out, `times` times, as a failing application does.
async fn fail_to_process(conn: &ferry_client::Connection, q: &ferry_client::Queue, times: i32) {
    for n in 0..times {
        let (md, _) = get_with(q, gmo(GetOptionFlags::SYNCPOINT, 0))
            .await
            .expect("the message is still offered below BOTHRESH");
        assert_eq!(md.backout_count, n);
        within("backout", conn.backout()).await.expect("backout");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_backed_out_bothresh_times_moves_to_boqname_and_survives_kill_9() {
    let mut qm = start("BO.NATIVE");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q) BOTHRESH(3) BOQNAME(APP.BOQ)\nDEFINE QLOCAL(APP.BOQ)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    put_persistent(&q, "poison").await;
    fail_to_process(&conn, &q, 3).await;
    assert_reason(
        get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0)).await,
        ReasonCode::NoMsgAvailable,
    );
    assert_eq!(curdepth(&qm, "APP.BOQ"), 1);
    drop(q);
    drop(conn);

    qm.kill9();
    qm.launch();
    assert_eq!(
        curdepth(&qm, "APP.Q"),
        0,
        "not back on its queue after kill -9"
    );
    assert_eq!(
        curdepth(&qm, "APP.BOQ"),
        1,
        "exactly one copy after kill -9"
    );
    let conn = connect(&qm.client()).await;
    let boq = open(&conn, "APP.BOQ", IO).await;
    let (md, got) = get(&boq).await.expect("the message on BOQNAME");
    assert_eq!(&got.data[..], b"poison");
    assert_eq!(md.backout_count, 3, "BackoutCount kept");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_boqname_it_lands_on_deadq_with_reason_2362() {
    let qm = start("BO.DLQ");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q) BOTHRESH(2)\nDEFINE QLOCAL(APP.DLQ)\nALTER QMGR DEADQ(APP.DLQ)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    put(&q, "poison").await;
    fail_to_process(&conn, &q, 2).await;
    let dlq = open(&conn, "APP.DLQ", IO).await;
    let (md, got) = get(&dlq).await.expect("the message on DEADQ");
    assert_eq!(md.format.as_bytes(), b"MQDEAD  ");
    let data = &got.data[..];
    assert_eq!(&data[..4], b"DLH ");
    let reason = i32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    assert_eq!(reason, 2362, "MQRC_BACKOUT_THRESHOLD_REACHED");
    assert!(data[12..60].starts_with(b"APP.Q "), "DestQName names APP.Q");
    assert_eq!(&data[172..], b"poison");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_nowhere_to_go_it_stays_and_the_error_log_says_why_once() {
    let qm = start("BO.NOWHERE");
    // No BOQNAME, and the dead-letter queue refuses puts.
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q) BOTHRESH(1)\nDEFINE QLOCAL(APP.DLQ) PUT(DISABLED)\nALTER QMGR DEADQ(APP.DLQ)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    put(&q, "poison").await;
    fail_to_process(&conn, &q, 1).await;
    // Still offered: nothing else may take it, and it is not lost.
    let (md, got) = get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("the message stays on its queue");
    assert_eq!(&got.data[..], b"poison");
    assert_eq!(md.backout_count, 1);
    within("backout", conn.backout()).await.expect("backout");
    let log = qm.error_log();
    assert_eq!(
        log.matches("FRY7475W").count(),
        1,
        "said once per queue, naming it: {log}"
    );
    assert!(log.contains("'APP.Q'"), "{log}");
    assert_eq!(curdepth(&qm, "APP.DLQ"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_get_in_flight_at_kill_9_counts_and_moves_at_bothresh_on_restart() {
    let mut qm = start("BO.RESTART");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q) BOTHRESH(1) BOQNAME(APP.BOQ)\nDEFINE QLOCAL(APP.BOQ)\nDEFINE QLOCAL(APP.OTHER)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    put_persistent(&q, "crashes its consumer").await;
    let (md, _) = get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("first delivery");
    assert_eq!(md.backout_count, 0);
    // A put acknowledged after the get has its record durable, and the get's with it.
    let other = open(&conn, "APP.OTHER", IO).await;
    put_persistent(&other, "marker").await;

    qm.kill9();
    qm.launch();
    assert_eq!(curdepth(&qm, "APP.Q"), 0, "not offered again on APP.Q");
    assert_eq!(curdepth(&qm, "APP.BOQ"), 1, "moved to BOQNAME at restart");
    let conn = connect(&qm.client()).await;
    let boq = open(&conn, "APP.BOQ", IO).await;
    let (md, got) = get(&boq).await.expect("the message on BOQNAME");
    assert_eq!(&got.data[..], b"crashes its consumer");
    assert_eq!(md.backout_count, 1, "the restart's backout counted");
    drop(boq);
    drop(conn);

    // The move was logged: a second crash keeps exactly that (the get above was
    // outside syncpoint, so the queue is now empty for good).
    qm.kill9();
    qm.launch();
    assert_eq!((curdepth(&qm, "APP.Q"), curdepth(&qm, "APP.BOQ")), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodelay_hides_a_backed_out_message_and_wakes_a_waiting_get_after_it() {
    let qm = start("BO.DELAY");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q) BODELAY(1500)");
    let out = mqsc_ok(&qm, "DISPLAY QLOCAL(APP.Q) BODELAY");
    assert!(out.contains("BODELAY(1500)"), "{out}");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    put_persistent(&q, "retry me").await;
    // Before the backout is sent, so before the server starts the delay.
    let backed_out_at = std::time::Instant::now();
    fail_to_process(&conn, &q, 1).await;
    assert_reason(
        get_with(&q, gmo(GetOptionFlags::NO_SYNCPOINT, 0)).await,
        ReasonCode::NoMsgAvailable,
    );
    assert_eq!(
        curdepth(&qm, "APP.Q"),
        1,
        "still on the queue during the delay"
    );
    // A get that waits longer than the delay is answered when it ends.
    let (md, got) = get_with(
        &q,
        gmo(GetOptionFlags::NO_SYNCPOINT | GetOptionFlags::WAIT, 30_000),
    )
    .await
    .expect("the message after its delay");
    // The server counts whole milliseconds of its own clock: allow it one or two.
    assert!(
        backed_out_at.elapsed() >= std::time::Duration::from_millis(1500 - 5),
        "offered after {:?}, before BODELAY",
        backed_out_at.elapsed()
    );
    assert_eq!(&got.data[..], b"retry me");
    assert_eq!(md.backout_count, 1);
}
