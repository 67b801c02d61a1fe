//! Workload balancing and reallocation on three real queue managers: QM1 and QM2 (full
//! repositories) host APP.Q, QM3 (partial) puts to it with MQOO_BIND_NOT_FIXED. Both
//! instances take a share; when QM2 stops, the messages QM3 had chosen it for (put in a
//! unit of work, committed once QM2 is down) are reallocated to QM1 while QM2's channel
//! retries, as MQ reallocates NOT_FIXED messages, and nothing is lost.

mod common;

use common::*;
use ferry_client::Connection;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions};

/// Defines `qm`'s part of cluster DEMO (CLUSRCVR TO.<qm>, a manual CLUSSDR to `to`).
fn join(qm: &TestQueueManager, full: bool, to: &TestQueueManager) {
    let mut script = format!(
        "DEFINE CHANNEL(TO.{name}) CHLTYPE(CLUSRCVR) CONNAME('localhost({port})') CLUSTER(DEMO) SHORTTMR(1) HBINT(5)\n\
         DEFINE CHANNEL(TO.{fr}) CHLTYPE(CLUSSDR) CONNAME('localhost({frport})') CLUSTER(DEMO) SHORTTMR(1) HBINT(5)\n",
        name = qm.name(),
        port = qm.port(),
        fr = to.name(),
        frport = to.port(),
    );
    if full {
        script.push_str("ALTER QMGR REPOS(DEMO)\n");
    }
    mqsc_ok(qm, &script);
}

/// Puts `count` persistent messages through `q` with `options`.
async fn put_many(q: &ferry_client::Queue, options: PutOptionFlags, count: usize) {
    for i in 0..count {
        let mut md = MessageDescriptor {
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        put_md(q, &mut md, PutOptions::new(options), &format!("m-{i}"))
            .await
            .unwrap_or_else(|e| panic!("put {i}: {e}"));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn not_fixed_messages_share_the_instances_and_move_when_one_stops() {
    let qm1 = start("QM1");
    let mut qm2 = start("QM2");
    let qm3 = start("QM3");
    join(&qm1, true, &qm2);
    join(&qm2, true, &qm1);
    join(&qm3, false, &qm1);
    for qm in [&qm1, &qm2] {
        mqsc_ok(qm, "DEFINE QLOCAL(APP.Q) CLUSTER(DEMO) MAXDEPTH(10000)\n");
    }
    wait_until("the full repositories know both instances", || {
        [&qm1, &qm2].iter().all(|qm| {
            let text = stdout(&qm.mqsc("DISPLAY QCLUSTER(APP.Q) CLUSQMGR\n"));
            attrs(&text, "CLUSQMGR").len() == 2
        })
    });
    wait_until("QM3 hears of both full repositories", || {
        attrs(&stdout(&qm3.mqsc("DISPLAY CLUSQMGR(*)\n")), "CLUSQMGR").len() == 3
    });

    // Balancing: both instances take a share.
    let app: Connection = connect(&qm3.client()).await;
    let q = open(
        &app,
        "APP.Q",
        OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED,
    )
    .await;
    put_many(&q, PutOptionFlags::NO_SYNCPOINT, 40).await;
    wait_until("40 messages delivered", || {
        curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.QUEUE") == 0
            && curdepth(&qm1, "APP.Q") + curdepth(&qm2, "APP.Q") == 40
    });
    let (on1, on2) = (curdepth(&qm1, "APP.Q"), curdepth(&qm2, "APP.Q"));
    assert!(
        (10..=30).contains(&on1),
        "a fair share: QM1 {on1} QM2 {on2}"
    );

    // Messages chosen for QM2 while it ran, released once it stopped: reallocated.
    put_many(&q, PutOptionFlags::SYNCPOINT, 40).await;
    stop_qm(&mut qm2);
    app.commit().await.expect("commit");
    wait_until("every message reallocated to QM1 and delivered", || {
        curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.QUEUE") == 0 && curdepth(&qm1, "APP.Q") == on1 + 40
    });
    drop(q);
    app.disconnect().await.expect("disconnect");
}
