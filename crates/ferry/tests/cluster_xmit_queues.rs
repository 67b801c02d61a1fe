//! QMGR DEFCLXQ(CHANNEL) on three real queue managers: QM1 and QM2 (full repositories)
//! host APP.Q; QM3 (partial) gives each cluster-sender its own transmission queue,
//! SYSTEM.CLUSTER.TRANSMIT.<channel>, made from SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE when
//! the channel starts, and its messages travel through them. Back to DEFCLXQ(SCTQ), the
//! messages waiting for a stopped QM2 move to SYSTEM.CLUSTER.TRANSMIT.QUEUE when QM3's
//! channel next starts, and reach QM2 once it is back.

mod common;

use common::*;
use ferry_mqi::{OpenOptions, PutOptionFlags, PutOptions};

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

/// The local queues named SYSTEM.CLUSTER.TRANSMIT.* on `qm`, sorted.
fn cluster_xmit_queues(qm: &TestQueueManager) -> Vec<String> {
    let text = mqsc_ok(qm, "DISPLAY QLOCAL(SYSTEM.CLUSTER.TRANSMIT.*)\n");
    let mut names = attrs(&text, "QUEUE");
    names.sort();
    names
}

#[tokio::test(flavor = "current_thread")]
async fn each_cluster_sender_gets_its_own_transmission_queue() {
    let qm1 = start("QM1");
    let mut qm2 = start("QM2");
    let mut qm3 = start("QM3");
    // The model is shipped.
    let text = mqsc_ok(
        &qm3,
        "DISPLAY QMODEL(SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE) DEFTYPE USAGE\n",
    );
    assert_eq!(attr(&text, "DEFTYPE").as_deref(), Some("PERMDYN"), "{text}");
    assert_eq!(attr(&text, "USAGE").as_deref(), Some("XMITQ"), "{text}");
    mqsc_ok(&qm3, "ALTER QMGR DEFCLXQ(CHANNEL)\n");
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

    // Messages to both instances: each channel started on its own queue.
    let app = connect(&qm3.client()).await;
    let q = open(
        &app,
        "APP.Q",
        OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED,
    )
    .await;
    for i in 0..10 {
        put(&q, &format!("m-{i}")).await;
    }
    drop(q);
    wait_until("10 messages delivered", || {
        curdepth(&qm1, "APP.Q") + curdepth(&qm2, "APP.Q") == 10
    });
    assert_eq!(
        cluster_xmit_queues(&qm3),
        [
            "SYSTEM.CLUSTER.TRANSMIT.QUEUE",
            "SYSTEM.CLUSTER.TRANSMIT.TO.QM1",
            "SYSTEM.CLUSTER.TRANSMIT.TO.QM2"
        ]
    );
    let text = mqsc_ok(
        &qm3,
        "DISPLAY QLOCAL(SYSTEM.CLUSTER.TRANSMIT.TO.QM2) DEFTYPE USAGE\n",
    );
    assert_eq!(attr(&text, "DEFTYPE").as_deref(), Some("PERMDYN"), "{text}");
    assert_eq!(attr(&text, "USAGE").as_deref(), Some("XMITQ"), "{text}");
    // DISPLAY CLUSQMGR says which queue each cluster-sender sends from.
    let text = mqsc_ok(&qm3, "DISPLAY CLUSQMGR(QM2) XMITQ\n");
    assert_eq!(
        attr(&text, "XMITQ").as_deref(),
        Some("SYSTEM.CLUSTER.TRANSMIT.TO.QM2"),
        "{text}"
    );
    let log = std::fs::read_to_string(qm_dir_in(&qm3, "QM3").join("errors").join("FRYERR01.LOG"))
        .expect("error log");
    assert!(log.contains("FRY7341I"), "the switch is logged");

    // Messages bound to QM2 wait on its queue while QM2 is down.
    let on2_before = curdepth(&qm2, "APP.Q");
    let mut bound = None;
    for _ in 0..4 {
        let q = open(
            &app,
            "APP.Q",
            OpenOptions::OUTPUT | OpenOptions::BIND_ON_OPEN,
        )
        .await;
        if q.resolved_qmgr_name() == "QM2" {
            bound = Some(q);
            break;
        }
        // A message through QM1 makes the workload algorithm prefer QM2 next.
        put(&q, "via QM1").await;
    }
    let q = bound.expect("a handle bound to QM2");
    let mut md = ferry_mqi::MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..ferry_mqi::MessageDescriptor::default()
    };
    for i in 0..5 {
        put_md(
            &q,
            &mut md,
            PutOptions::new(PutOptionFlags::SYNCPOINT),
            &format!("b-{i}"),
        )
        .await
        .expect("put");
    }
    stop_qm(&mut qm2);
    app.commit().await.expect("commit");
    drop(q);
    app.disconnect().await.expect("disconnect");
    wait_until("the bound messages wait on TO.QM2's queue", || {
        curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.TO.QM2") == 5
    });

    // DEFCLXQ(SCTQ): when QM3's channels next start, they are back on the shared queue.
    mqsc_ok(&qm3, "ALTER QMGR DEFCLXQ(SCTQ)\n");
    stop_qm(&mut qm3);
    qm3.launch();
    wait_until(
        "the waiting messages moved to SYSTEM.CLUSTER.TRANSMIT.QUEUE",
        || {
            curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.TO.QM2") == 0
                && curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.QUEUE") == 5
        },
    );
    qm2.launch();
    wait_until("QM2 gets them once it is back", || {
        curdepth(&qm2, "APP.Q") == on2_before + 5
            && curdepth(&qm3, "SYSTEM.CLUSTER.TRANSMIT.QUEUE") == 0
    });
}
