//! An MQ cluster of three real queue managers, set up with the MQSC an MQ administrator
//! writes: QM1 and QM2 full repositories joined by manual CLUSSDRs, QM3 a partial
//! repository with its CLUSRCVR and a manual CLUSSDR to QM1. QM3 learns the cluster queue
//! on QM1 and QM2 at its first MQOPEN, which waits for the full repositories' answer (and
//! a queue the cluster lacks gets 2085). The queue takes QM3's messages: shared with
//! BIND_NOT_FIXED, all to
//! one instance with BIND_ON_OPEN, none to a PUT(DISABLED) instance; DISPLAY CLUSQMGR
//! and QCLUSTER show what QM3 learnt; a restarted queue manager keeps its repository.

mod common;

use common::*;
use ferry_client::Connection;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{GetOptionFlags, MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions};
use std::time::Duration;

/// Defines `qm`'s part of cluster DEMO: its CLUSRCVR TO.<qm>, REPOS(DEMO) for a full
/// repository, and a manual CLUSSDR to `repository` (named like its CLUSRCVR).
fn join(qm: &TestQueueManager, full: bool, repository: &TestQueueManager) {
    let mut script = format!(
        "DEFINE CHANNEL(TO.{name}) CHLTYPE(CLUSRCVR) CONNAME('localhost({port})') CLUSTER(DEMO) SHORTTMR(1) HBINT(5)\n\
         DEFINE CHANNEL(TO.{fr}) CHLTYPE(CLUSSDR) CONNAME('localhost({frport})') CLUSTER(DEMO) SHORTTMR(1) HBINT(5)\n",
        name = qm.name(),
        port = qm.port(),
        fr = repository.name(),
        frport = repository.port(),
    );
    if full {
        script.push_str("ALTER QMGR REPOS(DEMO)\n");
    }
    mqsc_ok(qm, &script);
}

/// DISPLAY QCLUSTER(queue): the queue managers hosting an instance, PUT(ENABLED) ones
/// only when `enabled_only`.
fn instances(qm: &TestQueueManager, queue: &str, enabled_only: bool) -> Vec<String> {
    let out = qm.mqsc(&format!("DISPLAY QCLUSTER({queue}) CLUSQMGR PUT\n"));
    let text = stdout(&out);
    let hosts = attrs(&text, "CLUSQMGR");
    let puts = attrs(&text, "PUT");
    let mut v: Vec<String> = hosts
        .into_iter()
        .zip(puts)
        .filter(|(_, put)| !enabled_only || put == "ENABLED")
        .map(|(h, _)| h)
        .collect();
    v.sort();
    v
}

/// Puts `count` persistent messages to cluster queue APP.Q with `bind`.
async fn put_many(conn: &Connection, bind: OpenOptions, prefix: &str, count: usize) {
    let q = open(conn, "APP.Q", OpenOptions::OUTPUT | bind).await;
    for i in 0..count {
        let mut md = MessageDescriptor {
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        put_md(
            &q,
            &mut md,
            PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
            &format!("{prefix}-{i}"),
        )
        .await
        .unwrap_or_else(|e| panic!("put {prefix}-{i}: {e}"));
    }
}

/// Gets every message from APP.Q on `qm` until none arrives for `quiet_ms`.
async fn drain(qm: &TestQueueManager, quiet_ms: i32) -> Vec<String> {
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "APP.Q", OpenOptions::INPUT_SHARED).await;
    let mut bodies = Vec::new();
    let bodies = loop {
        match get_with(
            &q,
            gmo(
                GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
                quiet_ms,
            ),
        )
        .await
        {
            Ok((_, got)) => bodies.push(String::from_utf8(got.data.to_vec()).expect("utf-8")),
            Err(e) if e.reason == ferry_mqi::ReasonCode::NoMsgAvailable => break bodies,
            Err(e) => panic!("get from APP.Q on {}: {e}", qm.name()),
        }
    };
    drop(q);
    conn.disconnect().await.expect("disconnect");
    bodies
}

/// Waits until QM1 and QM2 together hold `total` messages on APP.Q and the cluster
/// transmission queue of `from` is empty.
fn wait_delivered(
    from: &TestQueueManager,
    qm1: &TestQueueManager,
    qm2: &TestQueueManager,
    total: i64,
) {
    wait_until(&format!("{total} messages delivered"), || {
        curdepth(from, "SYSTEM.CLUSTER.TRANSMIT.QUEUE") == 0
            && curdepth(qm1, "APP.Q") + curdepth(qm2, "APP.Q") == total
    });
}

#[tokio::test(flavor = "current_thread")]
async fn a_partial_repository_shares_puts_among_the_instances_it_learnt() {
    let qm1 = start("QM1");
    let qm2 = start("QM2");
    let mut qm3 = start("QM3");
    join(&qm1, true, &qm2);
    join(&qm2, true, &qm1);
    join(&qm3, false, &qm1);
    for qm in [&qm1, &qm2] {
        mqsc_ok(qm, "DEFINE QLOCAL(APP.Q) CLUSTER(DEMO) MAXDEPTH(10000)\n");
    }
    wait_until("the full repositories know both instances of APP.Q", || {
        instances(&qm1, "APP.Q", false) == ["QM1", "QM2"]
            && instances(&qm2, "APP.Q", false) == ["QM1", "QM2"]
    });
    wait_until("QM3 hears of both full repositories", || {
        let text = stdout(&qm3.mqsc("DISPLAY CLUSQMGR(*)\n"));
        let mut names = attrs(&text, "CLUSQMGR");
        names.sort();
        names == ["QM1", "QM2", "QM3"]
    });
    // A partial repository learns a queue on first use: nothing of APP.Q until an
    // application opens it; that MQOPEN waits for the full repositories' answer.
    assert!(instances(&qm3, "APP.Q", false).is_empty());
    let probe = connect(&qm3.client()).await;
    let q = open(&probe, "APP.Q", OpenOptions::OUTPUT).await;
    drop(q);
    assert_eq!(instances(&qm3, "APP.Q", false), ["QM1", "QM2"]);
    // A queue the cluster does not have: 2085 once a full repository said so.
    assert_reason(
        try_open(&probe, "NO.SUCH.Q", OpenOptions::OUTPUT).await,
        ferry_mqi::ReasonCode::UnknownObjectName,
    );
    probe.disconnect().await.expect("disconnect");

    // DISPLAY CLUSQMGR on QM3: itself, QM1 through its manual CLUSSDR, QM2 auto-defined.
    let text = stdout(&qm3.mqsc("DISPLAY CLUSQMGR(*) QMTYPE DEFTYPE\n"));
    let names = attrs(&text, "CLUSQMGR");
    let types = attrs(&text, "DEFTYPE");
    let qmtypes = attrs(&text, "QMTYPE");
    let row = |n: &str| {
        let i = names
            .iter()
            .position(|x| x == n)
            .unwrap_or_else(|| panic!("{n} in {text}"));
        (types[i].as_str(), qmtypes[i].as_str())
    };
    assert_eq!(row("QM1"), ("CLUSSDRB", "REPOS"), "{text}");
    assert_eq!(row("QM2"), ("CLUSSDRA", "REPOS"), "{text}");
    assert_eq!(row("QM3"), ("CLUSRCVR", "NORMAL"), "{text}");

    // BIND_NOT_FIXED: both instances take a fair share, nothing is lost.
    let app = connect(&qm3.client()).await;
    put_many(&app, OpenOptions::BIND_NOT_FIXED, "nf", 100).await;
    wait_delivered(&qm3, &qm1, &qm2, 100);
    let on1 = drain(&qm1, 500).await;
    let on2 = drain(&qm2, 500).await;
    assert!(
        (40..=60).contains(&on1.len()),
        "a fair share: QM1 {} QM2 {}",
        on1.len(),
        on2.len()
    );
    let mut all: Vec<String> = on1.into_iter().chain(on2).collect();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 100, "each message arrived once");

    // BIND_ON_OPEN: one instance takes them all.
    put_many(&app, OpenOptions::BIND_ON_OPEN, "oo", 20).await;
    wait_delivered(&qm3, &qm1, &qm2, 20);
    let (on1, on2) = (drain(&qm1, 300).await, drain(&qm2, 300).await);
    assert!(
        (on1.len(), on2.len()) == (20, 0) || (on1.len(), on2.len()) == (0, 20),
        "QM1 {} QM2 {}",
        on1.len(),
        on2.len()
    );

    // PUT(DISABLED) on QM1's instance: everything goes to QM2.
    mqsc_ok(&qm1, "ALTER QLOCAL(APP.Q) PUT(DISABLED)\n");
    wait_until("QM3 hears QM1's instance is disabled", || {
        instances(&qm3, "APP.Q", true) == ["QM2"]
    });
    put_many(&app, OpenOptions::BIND_NOT_FIXED, "pd", 20).await;
    wait_until("20 messages on QM2", || curdepth(&qm2, "APP.Q") == 20);
    assert_eq!(curdepth(&qm1, "APP.Q"), 0);
    app.disconnect().await.expect("disconnect");

    // A restarted queue manager keeps its repository.
    stop_qm(&mut qm3);
    qm3.launch();
    assert_eq!(instances(&qm3, "APP.Q", false), ["QM1", "QM2"]);
    let app = connect(&qm3.client()).await;
    mqsc_ok(&qm1, "ALTER QLOCAL(APP.Q) PUT(ENABLED)\n");
    wait_until("QM3 hears QM1's instance is enabled again", || {
        instances(&qm3, "APP.Q", true) == ["QM1", "QM2"]
    });
    put_many(&app, OpenOptions::BIND_NOT_FIXED, "after", 10).await;
    wait_until("10 more messages delivered", || {
        curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.QUEUE") == 0
            && curdepth(&qm1, "APP.Q") + curdepth(&qm2, "APP.Q") == 30
    });
    assert!(curdepth(&qm1, "APP.Q") >= 1, "QM1 takes its share again");

    // REFRESH CLUSTER on QM3: it forgets the instances, and the full repositories tell
    // it again.
    let out = mqsc_ok(&qm3, "REFRESH CLUSTER(DEMO) REPOS(NO)\n");
    assert!(out.contains("FRY8447I"), "{out}");
    assert!(instances(&qm3, "APP.Q", false).is_empty());
    wait_until("QM3 relearns both instances", || {
        instances(&qm3, "APP.Q", false) == ["QM1", "QM2"]
    });
    // RESET CLUSTER on a full repository takes QM3 out of both repositories.
    let out = mqsc_ok(
        &qm1,
        "RESET CLUSTER(DEMO) ACTION(FORCEREMOVE) QMNAME(QM3) QUEUES(YES)\n",
    );
    assert!(out.contains("FRY8448I"), "{out}");
    wait_until("QM2 forgets QM3", || {
        !attrs(&stdout(&qm2.mqsc("DISPLAY CLUSQMGR(*)\n")), "CLUSQMGR").contains(&"QM3".to_string())
    });
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn cluster_commands_answer_as_mq() {
    let qm1 = start("QMA");
    mqsc_ok(
        &qm1,
        &format!(
            "DEFINE CHANNEL(TO.QMA) CHLTYPE(CLUSRCVR) CONNAME('localhost({})') CLUSTER(DEMO)\n\
             ALTER QMGR REPOS(DEMO)\n",
            qm1.port()
        ),
    );
    wait_until("QMA lists itself", || {
        attrs(&stdout(&qm1.mqsc("DISPLAY CLUSQMGR(*)\n")), "CLUSQMGR") == ["QMA"]
    });
    let out = mqsc_ok(&qm1, "SUSPEND QMGR CLUSTER(DEMO)\n");
    assert!(out.contains("FRY8445I"), "{out}");
    wait_until("SUSPEND(YES) shows", || {
        attr(
            &stdout(&qm1.mqsc("DISPLAY CLUSQMGR(QMA) SUSPEND\n")),
            "SUSPEND",
        )
        .as_deref()
            == Some("YES")
    });
    let out = mqsc_ok(&qm1, "RESUME QMGR CLUSTER(DEMO)\n");
    assert!(out.contains("FRY8446I"), "{out}");
    let out = qm1.mqsc("SUSPEND QMGR CLUSTER(NOPE)\n");
    assert!(!out.status.success());
    let out = qm1.mqsc("REFRESH CLUSTER(DEMO) REPOS(NO)\n");
    assert!(stdout(&out).contains("full repository"), "{}", stdout(&out));
    let out = qm1.mqsc("RESET CLUSTER(DEMO) ACTION(FORCEREMOVE) QMNAME(QMA)\n");
    assert!(
        stdout(&out).contains("cannot remove itself"),
        "{}",
        stdout(&out)
    );
    // CLUSNL names a namelist that must be defined, as MQ checks.
    let out = qm1.mqsc("DEFINE QLOCAL(X) CLUSNL(NL)\n");
    assert!(stdout(&out).contains("NL not found"), "{}", stdout(&out));
}
