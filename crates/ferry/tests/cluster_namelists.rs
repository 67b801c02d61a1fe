//! Overlapping clusters through namelists, on three real queue managers: QM1 is the full
//! repository of clusters CLUS1 and CLUS2 (REPOSNL) with one CLUSRCVR in both (CLUSNL)
//! and a queue advertised in both; QM2 belongs to CLUS1 only, QM3 to CLUS2 only. Each
//! partial learns QM1's shared queue at its first MQOPEN, and nothing of the other
//! cluster (an MQOPEN of the other cluster's queue gets 2085); QM1 reaches the
//! queues of both; a message from QM2 to the shared queue arrives on QM1; a queue
//! moved to a namelist naming one cluster leaves the other.

mod common;

use common::*;
use ferry_mqi::OpenOptions;

/// DISPLAY QCLUSTER(queue) on `qm`: the (cluster, host) pairs known, sorted.
fn instances(qm: &TestQueueManager, queue: &str) -> Vec<(String, String)> {
    let text = stdout(&qm.mqsc(&format!("DISPLAY QCLUSTER({queue}) CLUSTER CLUSQMGR\n")));
    let mut v: Vec<(String, String)> = attrs(&text, "CLUSTER")
        .into_iter()
        .zip(attrs(&text, "CLUSQMGR"))
        .collect();
    v.sort();
    v
}

fn pair(c: &str, q: &str) -> (String, String) {
    (c.to_string(), q.to_string())
}

/// `qm`'s part of cluster `cluster`: its CLUSRCVR and a manual CLUSSDR to QM1.
fn join_partial(qm: &TestQueueManager, cluster: &str, qm1: &TestQueueManager) {
    mqsc_ok(
        qm,
        &format!(
            "DEFINE CHANNEL(TO.{name}) CHLTYPE(CLUSRCVR) CONNAME('localhost({port})') CLUSTER({cluster}) SHORTTMR(1) HBINT(5)\n\
             DEFINE CHANNEL(TO.QM1) CHLTYPE(CLUSSDR) CONNAME('localhost({frport})') CLUSTER({cluster}) SHORTTMR(1) HBINT(5)\n",
            name = qm.name(),
            port = qm.port(),
            frport = qm1.port(),
        ),
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_full_repository_serves_two_clusters_through_namelists() {
    let qm1 = start("QM1");
    let qm2 = start("QM2");
    let qm3 = start("QM3");
    let out = mqsc_ok(
        &qm1,
        &format!(
            "DEFINE NAMELIST(BOTH.CLUSTERS) NAMES(CLUS1, CLUS2) DESCR('overlapping clusters')\n\
             ALTER QMGR REPOSNL(BOTH.CLUSTERS)\n\
             DEFINE CHANNEL(TO.QM1) CHLTYPE(CLUSRCVR) CONNAME('localhost({port})') CLUSNL(BOTH.CLUSTERS) SHORTTMR(1) HBINT(5)\n\
             DEFINE QLOCAL(SHARED.Q) CLUSNL(BOTH.CLUSTERS)\n",
            port = qm1.port()
        ),
    );
    assert!(out.contains("FRY8552I"), "{out}");
    join_partial(&qm2, "CLUS1", &qm1);
    join_partial(&qm3, "CLUS2", &qm1);
    mqsc_ok(&qm2, "DEFINE QLOCAL(ONE.Q) CLUSTER(CLUS1)\n");
    mqsc_ok(&qm3, "DEFINE QLOCAL(TWO.Q) CLUSTER(CLUS2)\n");

    wait_until("QM1 knows the queues of both clusters", || {
        instances(&qm1, "ONE.Q") == [pair("CLUS1", "QM2")]
            && instances(&qm1, "TWO.Q") == [pair("CLUS2", "QM3")]
    });
    // Each partial learns the shared queue, in its own cluster, at its first MQOPEN.
    for qm in [&qm2, &qm3] {
        wait_until("the partial hears of its full repository", || {
            attrs(&stdout(&qm.mqsc("DISPLAY CLUSQMGR(QM1)\n")), "CLUSQMGR") == ["QM1"]
        });
        assert!(
            instances(qm, "SHARED.Q").is_empty(),
            "not before it is used"
        );
        let app = connect(&qm.client()).await;
        drop(open(&app, "SHARED.Q", OpenOptions::OUTPUT).await);
        app.disconnect().await.expect("disconnect");
    }
    assert_eq!(instances(&qm2, "SHARED.Q"), [pair("CLUS1", "QM1")]);
    assert_eq!(instances(&qm3, "SHARED.Q"), [pair("CLUS2", "QM1")]);
    // Nothing of the other cluster reaches a partial repository, even when asked.
    let app = connect(&qm2.client()).await;
    assert_reason(
        try_open(&app, "TWO.Q", OpenOptions::OUTPUT).await,
        ferry_mqi::ReasonCode::UnknownObjectName,
    );
    app.disconnect().await.expect("disconnect");
    assert!(instances(&qm2, "TWO.Q").is_empty());
    assert!(instances(&qm3, "ONE.Q").is_empty());
    let qmgrs = mqsc_ok(&qm2, "DISPLAY CLUSQMGR(*)\n");
    let mut names = attrs(&qmgrs, "CLUSQMGR");
    names.sort();
    assert_eq!(names, ["QM1", "QM2"], "{qmgrs}");

    // QM1 is a full repository of both: DISPLAY CLUSQMGR shows it once per cluster.
    let text = mqsc_ok(&qm1, "DISPLAY CLUSQMGR(QM1) QMTYPE\n");
    let mut clusters = attrs(&text, "CLUSTER");
    clusters.sort();
    assert_eq!(clusters, ["CLUS1", "CLUS2"], "{text}");
    assert_eq!(attrs(&text, "QMTYPE"), ["REPOS", "REPOS"], "{text}");

    // A message from QM2 to the shared queue arrives on QM1; QM1 reaches QM3's queue.
    let app = connect(&qm2.client()).await;
    let q = open(&app, "SHARED.Q", OpenOptions::OUTPUT).await;
    put(&q, "from CLUS1").await;
    drop(q);
    app.disconnect().await.expect("disconnect");
    wait_until("the message reaches QM1", || {
        curdepth(&qm1, "SHARED.Q") == 1
    });
    let app = connect(&qm1.client()).await;
    let q = open(&app, "TWO.Q", OpenOptions::OUTPUT).await;
    put(&q, "to CLUS2").await;
    drop(q);
    app.disconnect().await.expect("disconnect");
    wait_until("the message reaches QM3", || curdepth(&qm3, "TWO.Q") == 1);

    // Advertised in CLUS1 only, through another namelist: CLUS2 hears it left.
    mqsc_ok(
        &qm1,
        "DEFINE NAMELIST(FIRST.ONLY) NAMES(CLUS1)\nALTER QLOCAL(SHARED.Q) CLUSNL(FIRST.ONLY)\n",
    );
    wait_until("QM3 hears the shared queue left CLUS2", || {
        instances(&qm3, "SHARED.Q").is_empty()
    });
    assert_eq!(instances(&qm2, "SHARED.Q"), [pair("CLUS1", "QM1")]);
}
