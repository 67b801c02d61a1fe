//! Report messages against a real queue manager process over the native protocol: COA,
//! COD, expiration and exception reports with MQ's fields and id options, COA and COD in
//! the unit of work of their put or get, a persistent report and its cause surviving a
//! kill -9 exactly once, undeliverable reports on the dead-letter queue or in the error
//! log, and application PAN/NAN reports passed through untouched.

mod common;

use common::*;
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::report::{feedback, options};
use ferry_mqi::{
    FixedStr, GetOptionFlags, MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions,
    ReasonCode,
};

const IO: OpenOptions = OpenOptions::INPUT_SHARED.union(OpenOptions::OUTPUT);

/// A descriptor asking for `report`, with REPLY as its ReplyToQ.
fn asking(report: i32) -> MessageDescriptor {
    MessageDescriptor {
        report,
        reply_to_q: FixedStr::truncating("REPLY"),
        correl_id: [9; 24],
        ..MessageDescriptor::default()
    }
}

/// Puts `body` asking for `report`; returns the completed descriptor.
async fn put_asking(
    q: &ferry_client::Queue,
    mut md: MessageDescriptor,
    pmo: PutOptionFlags,
    body: &str,
) -> MessageDescriptor {
    put_md(q, &mut md, PutOptions::new(pmo), body)
        .await
        .expect("put");
    md
}

/// Every message on `q`, got destructively.
async fn drain(q: &ferry_client::Queue) -> Vec<(MessageDescriptor, Vec<u8>)> {
    let mut out = Vec::new();
    while let Ok((md, got)) = get(q).await {
        out.push((md, got.data.to_vec()));
    }
    out
}

fn body_of_len(n: usize) -> String {
    "0123456789".repeat(n / 10)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coa_and_cod_carry_mqs_fields_data_and_id_options() {
    let qm = start("RPT.KINDS");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(REPLY)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let reply = open(&conn, "REPLY", IO).await;
    let body = body_of_len(300);

    // COA, defaults: a new MsgId, the original's MsgId as CorrelId, no data.
    let mut md = asking(options::COA);
    md.priority = 6;
    let sent = put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, &body).await;
    let got = drain(&reply).await;
    assert_eq!(got.len(), 1, "one COA at put");
    let (r, data) = &got[0];
    assert_eq!(r.msg_type, msg_type::REPORT);
    assert_eq!(r.feedback, feedback::COA);
    assert_ne!(r.msg_id, sent.msg_id);
    assert_eq!(r.correl_id, sent.msg_id);
    assert_eq!(r.priority, 6, "the original's priority");
    assert_eq!(r.persistence, persistence::NOT_PERSISTENT);
    assert_eq!(r.report, options::NONE);
    assert_eq!(r.reply_to_qmgr.as_str(), "RPT.KINDS");
    assert!(data.is_empty());
    get(&q).await.expect("the COA's message, asking for no COD");
    assert_eq!(curdepth(&qm, "REPLY"), 0);

    // COD with data, passing both ids: made by the get, not before.
    let r = options::COD_WITH_DATA | options::PASS_MSG_ID | options::PASS_CORREL_ID;
    let sent = put_asking(&q, asking(r), PutOptionFlags::NO_SYNCPOINT, &body).await;
    assert_eq!(curdepth(&qm, "REPLY"), 0, "no COD before the get");
    get(&q).await.expect("the message");
    let got = drain(&reply).await;
    assert_eq!(got.len(), 1);
    let (r, data) = &got[0];
    assert_eq!(r.feedback, feedback::COD);
    assert_eq!(r.msg_id, sent.msg_id, "MQRO_PASS_MSG_ID");
    assert_eq!(r.correl_id, [9; 24], "MQRO_PASS_CORREL_ID");
    assert_eq!(&data[..], &body.as_bytes()[..100], "the first 100 bytes");

    // Full data, and a browse makes no COD.
    let q_browse = open(&conn, "APP.Q", IO.union(OpenOptions::BROWSE)).await;
    put_asking(
        &q,
        asking(options::COD_WITH_FULL_DATA),
        PutOptionFlags::NO_SYNCPOINT,
        &body,
    )
    .await;
    get_with(&q_browse, gmo(GetOptionFlags::BROWSE_FIRST, 0))
        .await
        .expect("browse");
    assert_eq!(curdepth(&qm, "REPLY"), 0, "browse makes no COD");
    get(&q).await.expect("the message");
    let got = drain(&reply).await;
    assert_eq!(got[0].1, body.as_bytes(), "the whole body");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_message_a_get_meets_makes_an_expiration_report() {
    let qm = start("RPT.EXPIRY");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(REPLY)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let mut md = asking(options::EXPIRATION_WITH_FULL_DATA);
    md.expiry = 1; // a tenth of a second
    let sent = put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, "short-lived").await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_reason(get(&q).await, ReasonCode::NoMsgAvailable);
    let reply = open(&conn, "REPLY", IO).await;
    let got = drain(&reply).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0.feedback, feedback::EXPIRATION);
    assert_eq!(got[0].0.correl_id, sent.msg_id);
    assert_eq!(&got[0].1[..], b"short-lived");
}

/// A persistent message that expires while the queue manager is down is reported when
/// the restart finds it expired, once: the report and the message's removal are logged
/// together, so a second restart neither reports it again nor brings it back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_that_expires_while_the_queue_manager_is_down_is_reported_once() {
    let mut qm = start("RPT.EXPIRY.DOWN");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(REPLY)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        expiry: 10, // a second
        ..asking(options::EXPIRATION_WITH_FULL_DATA)
    };
    let sent = put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, "expires while down").await;
    md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        expiry: 10,
        ..MessageDescriptor::default()
    };
    put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, "asks for no report").await;
    drop((q, conn));
    qm.kill9();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    qm.launch();
    assert_eq!(curdepth(&qm, "APP.Q"), 0, "both expired while down");
    assert_eq!(curdepth(&qm, "REPLY"), 1, "one expiration report");
    qm.kill9();
    qm.launch();
    assert_eq!(
        curdepth(&qm, "APP.Q"),
        0,
        "the expired message does not come back"
    );
    let conn = connect(&qm.client()).await;
    let reply = open(&conn, "REPLY", IO).await;
    let got = drain(&reply).await;
    assert_eq!(got.len(), 1, "reported exactly once across two restarts");
    let (r, data) = &got[0];
    assert_eq!(r.feedback, feedback::EXPIRATION);
    assert_eq!(r.correl_id, sent.msg_id);
    assert!(r.is_persistent(), "the report of a persistent message is");
    assert_eq!(&data[..], b"expires while down");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coa_and_cod_under_syncpoint_follow_commit_and_backout() {
    let qm = start("RPT.SYNC");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(REPLY)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let reply = open(&conn, "REPLY", IO).await;
    let both = options::COA | options::COD;

    put_asking(&q, asking(both), PutOptionFlags::SYNCPOINT, "m").await;
    assert_reason(get(&reply).await, ReasonCode::NoMsgAvailable);
    within("backout", conn.backout()).await.expect("backout");
    assert_eq!(curdepth(&qm, "REPLY"), 0, "a backed-out put leaves no COA");

    put_asking(&q, asking(both), PutOptionFlags::SYNCPOINT, "m").await;
    within("commit", conn.commit()).await.expect("commit");
    let got = drain(&reply).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0.feedback, feedback::COA);

    get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("get");
    within("backout", conn.backout()).await.expect("backout");
    assert_eq!(curdepth(&qm, "REPLY"), 0, "a backed-out get leaves no COD");
    get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("get again");
    assert_reason(get(&reply).await, ReasonCode::NoMsgAvailable);
    within("commit", conn.commit()).await.expect("commit");
    let got = drain(&reply).await;
    assert_eq!(got.len(), 1, "one COD, at commit");
    assert_eq!(got[0].0.feedback, feedback::COD);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_backout_threshold_an_exception_report_and_discard_msg() {
    let qm = start("RPT.EXCEPTION");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q) BOTHRESH(1)\nDEFINE QLOCAL(REPLY)\nDEFINE QLOCAL(APP.DLQ)\nALTER QMGR DEADQ(APP.DLQ)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let reply = open(&conn, "REPLY", IO).await;
    for discard in [false, true] {
        let mut r = options::EXCEPTION_WITH_DATA;
        if discard {
            r |= options::DISCARD_MSG;
        }
        put_asking(&q, asking(r), PutOptionFlags::NO_SYNCPOINT, "poison").await;
        get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
            .await
            .expect("get");
        within("backout", conn.backout()).await.expect("backout");
        let got = drain(&reply).await;
        assert_eq!(got.len(), 1, "discard {discard}: one exception report");
        assert_eq!(
            got[0].0.feedback,
            ReasonCode::BackoutThresholdReached.number()
        );
        assert_eq!(&got[0].1[..], b"poison");
    }
    assert_eq!(curdepth(&qm, "APP.Q"), 0);
    assert_eq!(
        curdepth(&qm, "APP.DLQ"),
        1,
        "dead-lettered once; MQRO_DISCARD_MSG discarded the other"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_applications_pan_and_nan_pass_through_untouched() {
    let qm = start("RPT.PAN");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    for fb in [feedback::PAN, feedback::NAN] {
        let md = MessageDescriptor {
            msg_type: msg_type::REPORT,
            feedback: fb,
            report: options::PAN | options::NAN,
            correl_id: [4; 24],
            ..MessageDescriptor::default()
        };
        put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, "outcome").await;
        let (got, _) = get(&q).await.expect("the report");
        assert_eq!(got.msg_type, msg_type::REPORT);
        assert_eq!(got.feedback, fb);
        assert_eq!(got.report, options::PAN | options::NAN);
        assert_eq!(got.correl_id, [4; 24]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_reports_survive_kill_9_with_their_cause_exactly_once() {
    let mut qm = start("RPT.KILL");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(REPLY)\nDEFINE QLOCAL(DONE.Q)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let done = open(&conn, "DONE.Q", IO).await;
    let persistent = |report| MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..asking(report)
    };
    // Outside syncpoint: a COA with its put, then a COD with its get.
    put_asking(
        &q,
        persistent(options::COA | options::COD),
        PutOptionFlags::NO_SYNCPOINT,
        "one",
    )
    .await;
    get(&q).await.expect("got");
    // Under syncpoint: a COA committed with its put.
    put_asking(
        &done,
        persistent(options::COA),
        PutOptionFlags::SYNCPOINT,
        "two",
    )
    .await;
    within("commit", conn.commit()).await.expect("commit");
    drop((q, done, conn));

    qm.kill9();
    qm.launch();
    assert_eq!(curdepth(&qm, "APP.Q"), 0, "the get outlived the kill");
    assert_eq!(curdepth(&qm, "DONE.Q"), 1, "the committed put outlived it");
    let conn = connect(&qm.client()).await;
    let reply = open(&conn, "REPLY", IO).await;
    let mut feedbacks: Vec<i32> = drain(&reply)
        .await
        .iter()
        .map(|(md, _)| {
            assert!(md.is_persistent(), "the report of a persistent message is");
            md.feedback
        })
        .collect();
    feedbacks.sort();
    assert_eq!(
        feedbacks,
        [feedback::COA, feedback::COA, feedback::COD],
        "each report exactly once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undeliverable_report_is_dead_lettered_or_logged() {
    let qm = start("RPT.UNDELIVERABLE");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(APP.DLQ)\nALTER QMGR DEADQ(APP.DLQ)",
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let mut md = asking(options::COA);
    md.reply_to_q = FixedStr::truncating("NO.SUCH.Q");
    put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, "m").await;
    let dlq = open(&conn, "APP.DLQ", IO).await;
    let (dl_md, got) = get(&dlq).await.expect("the report on DEADQ");
    assert_eq!(dl_md.format.as_bytes(), b"MQDEAD  ");
    assert_eq!(dl_md.msg_type, msg_type::REPORT);
    assert_eq!(dl_md.feedback, feedback::COA);
    let data = &got.data[..];
    assert_eq!(&data[..4], b"DLH ");
    let reason = i32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    assert_eq!(reason, ReasonCode::UnknownObjectName.number());
    assert_eq!(&data[12..21], b"NO.SUCH.Q");

    // With DEADQ refusing too, the report is discarded and the error log says so.
    mqsc_ok(&qm, "ALTER QLOCAL(APP.DLQ) PUT(DISABLED)");
    let mut md = asking(options::COA);
    md.reply_to_q = FixedStr::truncating("NO.SUCH.Q");
    put_asking(&q, md, PutOptionFlags::NO_SYNCPOINT, "m").await;
    assert_eq!(curdepth(&qm, "APP.Q"), 2, "the messages themselves are put");
    wait_until("FRY7476W in the error log", || {
        qm.error_log().contains("FRY7476W")
    });
    let log = qm.error_log();
    assert!(log.contains("'NO.SUCH.Q'"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_id_option_sets_the_reports_msg_id_and_correl_id() {
    let qm = start("RPT.IDS");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.Q)\nDEFINE QLOCAL(REPLY)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", IO).await;
    let reply = open(&conn, "REPLY", IO).await;
    for (pass_msg_id, pass_correl_id) in
        [(false, false), (true, false), (false, true), (true, true)]
    {
        let mut r = options::COD;
        if pass_msg_id {
            r |= options::PASS_MSG_ID;
        }
        if pass_correl_id {
            r |= options::PASS_CORREL_ID;
        }
        let sent = put_asking(&q, asking(r), PutOptionFlags::NO_SYNCPOINT, "m").await;
        get(&q).await.expect("the message");
        let got = drain(&reply).await;
        let what = format!("PASS_MSG_ID {pass_msg_id}, PASS_CORREL_ID {pass_correl_id}");
        assert_eq!(got.len(), 1, "{what}");
        let r = &got[0].0;
        assert_eq!(r.msg_id == sent.msg_id, pass_msg_id, "{what}");
        let correl = if pass_correl_id { [9; 24] } else { sent.msg_id };
        assert_eq!(r.correl_id, correl, "{what}");
    }
}
