//! MQ's statistics messages against a real `ferry` process: with STATINT(1), STATMQI(ON)
//! and STATQ(ON), the MQI and queue statistics messages arrive on
//! SYSTEM.ADMIN.STATISTICS.QUEUE as PCF, and their counts (summed over however many
//! intervals the work spread across) are exactly the work a client did, the queue's
//! depth range what it went through.

mod common;

use common::*;
use ferry_monitoring::parameters::{
    MQCAMO_END_DATE, MQCAMO_START_TIME, MQCA_Q_MGR_NAME, MQCA_Q_NAME, MQCMD_STATISTICS_MQI,
    MQCMD_STATISTICS_Q, MQGACF_Q_STATISTICS_DATA, MQIAMO64_PUT_BYTES, MQIAMO_GETS, MQIAMO_PUTS,
    MQIAMO_Q_MAX_DEPTH, MQIAMO_Q_MIN_DEPTH,
};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::pcf::{Encoding, PcfMessage, PcfParameter, MQCFT_STATISTICS};
use ferry_mqi::{GetOptionFlags, OpenOptions, ReasonCode};
use std::time::{Duration, Instant};

/// The sum of an MQCFIL or MQCFIL64 (non-persistent plus persistent).
fn total(p: Option<&PcfParameter>) -> i64 {
    match p {
        Some(PcfParameter::IntegerList { values, .. }) => {
            values.iter().map(|v| i64::from(*v)).sum()
        }
        Some(PcfParameter::Integer64List { values, .. }) => values.iter().sum(),
        other => panic!("not a list: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statistics_messages_count_an_intervals_work() {
    let qm = start("STATS.QM");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(STAT.Q)\n\
         DEFINE QLOCAL(QUIET.Q) STATQ(OFF)\n\
         ALTER QMGR STATINT(1) STATMQI(ON) STATQ(ON)",
    );
    let conn = connect(&qm.client()).await;
    let stats = open(
        &conn,
        "SYSTEM.ADMIN.STATISTICS.QUEUE",
        OpenOptions::INPUT_SHARED,
    )
    .await;
    // The first MQI statistics message covers the administration above: the counting
    // starts after it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        assert!(
            Instant::now() < deadline,
            "no statistics message within a minute"
        );
        match get_with(
            &stats,
            gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 5_000),
        )
        .await
        {
            Ok((md, got)) => {
                let pcf =
                    PcfMessage::decode(&got.data, Encoding::from_mqmd(md.encoding)).expect("PCF");
                if pcf.header.command == MQCMD_STATISTICS_MQI {
                    break;
                }
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => {}
            Err(e) => panic!("get from SYSTEM.ADMIN.STATISTICS.QUEUE: {e}"),
        }
    }
    let q = open(
        &conn,
        "STAT.Q",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
    )
    .await;
    for body in ["one", "two", "three"] {
        put(&q, body).await;
    }
    assert_eq!(get_text(&q).await, "one");
    assert_eq!(get_text(&q).await, "two");
    let quiet = open(&conn, "QUIET.Q", OpenOptions::OUTPUT).await;
    put(&quiet, "not counted by queue").await;

    let (mut q_puts, mut q_gets, mut q_put_bytes, mut mqi_puts) = (0, 0, 0, 0);
    let (mut mqi_messages, mut q_messages) = (0, 0);
    let (mut min_depth, mut max_depth) = (i64::MAX, 0);
    let deadline = Instant::now() + Duration::from_secs(60);
    while (q_puts, q_gets, mqi_puts) != (3, 2, 4) {
        assert!(
            Instant::now() < deadline,
            "the statistics messages did not add up within a minute: queue puts {q_puts}, gets {q_gets}, MQI puts {mqi_puts}"
        );
        let got = get_with(
            &stats,
            gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 5_000),
        )
        .await;
        let (md, got) = match got {
            Ok(g) => g,
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => continue,
            Err(e) => panic!("get from SYSTEM.ADMIN.STATISTICS.QUEUE: {e}"),
        };
        assert_eq!(md.format.as_str().trim(), "MQADMIN");
        assert_eq!(md.persistence, persistence::NOT_PERSISTENT);
        let pcf = PcfMessage::decode(&got.data, Encoding::from_mqmd(md.encoding)).expect("PCF");
        assert_eq!(pcf.header.kind, MQCFT_STATISTICS);
        assert_eq!(
            pcf.find(MQCA_Q_MGR_NAME).and_then(PcfParameter::as_str),
            Some("STATS.QM")
        );
        let date = pcf
            .find(MQCAMO_END_DATE)
            .and_then(PcfParameter::as_str)
            .unwrap_or("");
        assert!(date.len() == 10 && date.as_bytes()[4] == b'-', "{date}");
        let time = pcf
            .find(MQCAMO_START_TIME)
            .and_then(PcfParameter::as_str)
            .unwrap_or("");
        assert!(time.len() == 8 && time.as_bytes()[2] == b'.', "{time}");
        match pcf.header.command {
            MQCMD_STATISTICS_MQI => {
                mqi_messages += 1;
                mqi_puts += total(pcf.find(MQIAMO_PUTS));
            }
            MQCMD_STATISTICS_Q => {
                q_messages += 1;
                let groups: Vec<&[PcfParameter]> = pcf
                    .parameters
                    .iter()
                    .filter(|p| p.parameter() == MQGACF_Q_STATISTICS_DATA)
                    .filter_map(PcfParameter::group)
                    .collect();
                let name = |g: &[PcfParameter]| {
                    g.iter()
                        .find(|p| p.parameter() == MQCA_Q_NAME)
                        .and_then(PcfParameter::as_str)
                        .map(str::to_string)
                };
                assert!(
                    groups.iter().all(|g| name(g).as_deref() != Some("QUIET.Q")),
                    "QUIET.Q has STATQ(OFF)"
                );
                if let Some(g) = groups.iter().find(|g| name(g).as_deref() == Some("STAT.Q")) {
                    let find = |id| g.iter().find(|p| p.parameter() == id);
                    q_puts += total(find(MQIAMO_PUTS));
                    q_gets += total(find(MQIAMO_GETS));
                    q_put_bytes += total(find(MQIAMO64_PUT_BYTES));
                    let depth = |id| find(id).and_then(PcfParameter::as_i64).expect("a depth");
                    min_depth = min_depth.min(depth(MQIAMO_Q_MIN_DEPTH));
                    max_depth = max_depth.max(depth(MQIAMO_Q_MAX_DEPTH));
                }
            }
            other => panic!("unexpected statistics command {other}"),
        }
        assert!(q_puts <= 3 && q_gets <= 2 && mqi_puts <= 4, "counted twice");
    }
    assert_eq!(q_put_bytes, 3 + 3 + 5);
    // Three messages at the most, none before the first put.
    assert_eq!((min_depth, max_depth), (0, 3));
    assert!(mqi_messages >= 1 && q_messages >= 1);
    drop((q, quiet, stats));
    conn.disconnect().await.expect("disconnect");
}

#[test]
fn ferry_amqsmon_prints_the_statistics_messages_as_amqsmon_does() {
    let qm = start("STATS.MON");
    mqsc_ok(&qm, "ALTER QMGR STATINT(1) STATMQI(ON)");
    wait_until("a statistics message on the queue", || {
        curdepth(&qm, "SYSTEM.ADMIN.STATISTICS.QUEUE") > 0
    });
    // Browsed: printed and left on the queue.
    let browsed = ferry_ok(
        &qm,
        &["amqsmon", "-m", "STATS.MON", "-t", "statistics", "-b"],
    );
    assert!(
        browsed.contains("MonitoringType: MQIStatistics"),
        "{browsed}"
    );
    assert!(browsed.contains("QueueManager: 'STATS.MON'"), "{browsed}");
    assert!(browsed.contains("PutCount: ["), "{browsed}");
    assert!(curdepth(&qm, "SYSTEM.ADMIN.STATISTICS.QUEUE") > 0);
    // Got: the queue manager's statistics stop, and what was there is removed.
    mqsc_ok(&qm, "ALTER QMGR STATMQI(OFF)");
    let got = ferry_ok(&qm, &["amqsmon", "-m", "STATS.MON"]);
    assert!(got.contains("MonitoringType: MQIStatistics"), "{got}");
    assert_eq!(curdepth(&qm, "SYSTEM.ADMIN.STATISTICS.QUEUE"), 0);
    let out = qm.ferry(&["amqsmon", "-m", "STATS.MON", "-t", "accounting"]);
    assert_eq!(out.status.code(), Some(20), "{}", stderr(&out));
}

#[test]
fn reset_qmgr_type_statistics_ends_the_interval_now() {
    let qm = start("STATS.RESET");
    // STATINT stays 1800 seconds: only the reset can write a message within the test.
    mqsc_ok(&qm, "ALTER QMGR STATMQI(ON)");
    assert_eq!(curdepth(&qm, "SYSTEM.ADMIN.STATISTICS.QUEUE"), 0);
    let out = mqsc_ok(&qm, "RESET QMGR TYPE(STATISTICS)");
    assert!(out.contains("FRY5570I"), "{out}");
    wait_until("the statistics message of the reset interval", || {
        curdepth(&qm, "SYSTEM.ADMIN.STATISTICS.QUEUE") == 1
    });
    let printed = ferry_ok(&qm, &["amqsmon", "-m", "STATS.RESET"]);
    assert!(
        printed.contains("MonitoringType: MQIStatistics"),
        "{printed}"
    );
    // Only STATISTICS is reset; the other types are not Ferry's.
    let out = qm.mqsc("RESET QMGR TYPE(ADVANCELOG)");
    assert!(!stdout(&out).contains("FRY5570I"), "{}", stdout(&out));
}
