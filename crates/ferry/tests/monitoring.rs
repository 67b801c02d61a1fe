//! Resource monitoring against a real queue manager: the METADATA and data publications
//! on `$SYS/MQ/INFO/QMGR/<qmgr>/Monitor/...` read by a subscribing application (PCF in
//! MQ's layout), STATMQI counting exactly the puts made, the queue manager's own
//! publishing left out of its counts, and `ferry monitor` (amqsrua) listing classes and
//! printing a queue's STATQ publications. Publications come every second here
//! (`Monitoring:PublicationInterval=1`).

mod common;

use common::*;
use ferry_client::Subscription;
use ferry_monitoring::publication::{
    classes_topic, read_classes, read_elements, read_types, MQCA_Q_MGR_NAME, MQIAMO_MONITOR_CLASS,
    MQIAMO_MONITOR_TYPE,
};
use ferry_mqi::pcf::{Encoding, PcfMessage, PcfParameter};
use ferry_mqi::{OpenOptions, SubscriptionDescriptor};
use std::io::{BufRead, BufReader};

fn start_monitored(name: &str) -> TestQueueManager {
    start_with_ini(name, &[("Monitoring", "PublicationInterval", "1")])
}

async fn subscribe(conn: &ferry_client::Connection, topic: &str) -> Subscription {
    within(
        "subscribe",
        conn.subscribe(&SubscriptionDescriptor::managed(topic)),
    )
    .await
    .unwrap_or_else(|e| panic!("subscribe {topic}: {e}"))
}

/// The next publication on `sub` as PCF (MQADMIN format checked).
async fn next_pcf(sub: &Subscription) -> PcfMessage {
    let p = within("publication", sub.next(10_000))
        .await
        .expect("get")
        .unwrap_or_else(|| panic!("no publication on {}", sub.topic_string()));
    assert_eq!(p.md.format.as_str(), "MQADMIN");
    PcfMessage::decode(&p.message.data, Encoding::from_mqmd(p.md.encoding)).expect("PCF")
}

fn element(m: &PcfMessage, id: i32) -> i64 {
    m.find(id)
        .and_then(PcfParameter::as_i64)
        .unwrap_or_else(|| panic!("no element {id} in {m:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_describes_the_classes_and_statmqi_counts_exactly_the_puts_made() {
    let qm = start_monitored("MON.PUTS");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.MON)");
    let conn = connect(&qm.bindings()).await;

    // METADATA is retained: a new subscription gets it at once.
    let classes =
        read_classes(&next_pcf(&subscribe(&conn, &classes_topic("MON.PUTS")).await).await);
    let names: Vec<&str> = classes.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["CPU", "DISK", "STATMQI", "STATQ"]);
    let statmqi = &classes[2];
    assert_eq!(
        statmqi.topic,
        "$SYS/MQ/INFO/QMGR/MON.PUTS/Monitor/METADATA/STATMQI/TYPES"
    );
    let types = read_types(&next_pcf(&subscribe(&conn, &statmqi.topic).await).await);
    let put_type = types.iter().find(|t| t.name == "PUT").expect("STATMQI PUT");
    let meta =
        read_elements(&next_pcf(&subscribe(&conn, &put_type.topic).await).await).expect("elements");
    assert_eq!(meta.topic, "$SYS/MQ/INFO/QMGR/MON.PUTS/Monitor/STATMQI/PUT");
    assert_eq!(
        meta.elements[0].description,
        "Interval total MQPUT/MQPUT1 count"
    );

    let puts = subscribe(&conn, &meta.topic).await;
    let publish = subscribe(&conn, "$SYS/MQ/INFO/QMGR/MON.PUTS/Monitor/STATMQI/PUBLISH").await;
    // The interval under way when the puts start is the one after this publication.
    let first = next_pcf(&puts).await;
    assert_eq!(element(&first, MQIAMO_MONITOR_CLASS), 2);
    assert_eq!(element(&first, MQIAMO_MONITOR_TYPE), 3);
    assert_eq!(
        first.find(MQCA_Q_MGR_NAME).and_then(PcfParameter::as_str),
        Some("MON.PUTS")
    );

    let q = open(&conn, "APP.MON", OpenOptions::OUTPUT).await;
    for i in 0..7 {
        put(&q, &format!("message {i}")).await;
    }
    // The puts fall in at most two intervals; later ones are quiet.
    let mut counted = 0;
    let mut quiet = 0;
    while quiet < 2 {
        let m = next_pcf(&puts).await;
        let n = element(&m, 0);
        counted += n;
        quiet = if n == 0 { quiet + 1 } else { 0 };
    }
    assert_eq!(counted, 7, "STATMQI PUT counts each put once");

    // The queue manager's own publications are not counted as applications' publishing.
    for _ in 0..2 {
        let m = next_pcf(&publish).await;
        assert_eq!(element(&m, 0), 0, "topic puts by applications: none");
    }
    let _ = conn.disconnect().await;
}

#[test]
fn ferry_monitor_lists_the_classes_and_prints_a_queues_statq_publications() {
    let qm = start_monitored("MON.CLI");
    mqsc_ok(&qm, "DEFINE QLOCAL(APP.WATCHED)");
    let listing = ferry_ok(&qm, &["monitor", "MON.CLI", "--timeout", "10"]);
    assert!(
        listing.contains("STATMQI : API usage statistics\n"),
        "{listing}"
    );
    assert!(
        listing.contains("STATQ : API per-queue usage statistics (per queue)\n"),
        "{listing}"
    );
    assert!(listing.contains("  PUT : MQPUT and MQPUT1\n"), "{listing}");
    assert!(
        listing.contains("CPU : Platform central processing units\n"),
        "{listing}"
    );

    // amqsrua's flags work too; three publications of APP.WATCHED's PUT type.
    let mut child = qm.ferry_spawn(&[
        "amqsrua",
        "-m",
        "MON.CLI",
        "-c",
        "STATQ",
        "-t",
        "PUT",
        "-o",
        "APP.WATCHED",
        "-n",
        "3",
        "--timeout",
        "10",
    ]);
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    let first = lines.next().expect("a line").expect("text");
    assert!(
        first.starts_with("Publication received PutDate:"),
        "{first}"
    );
    assert!(first.contains(" Interval:"), "{first}");
    // Puts after the first publication are counted in the later ones.
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let conn = connect(&qm.bindings()).await;
        let q = open(&conn, "APP.WATCHED", OpenOptions::OUTPUT).await;
        for _ in 0..3 {
            put(&q, "hello").await;
        }
        let _ = conn.disconnect().await;
    });
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().expect("ferry monitor ends");
    assert!(status.success(), "{status}: {rest:?}");
    let sum = |what: &str| -> i64 {
        rest.iter()
            .filter(|l| l.starts_with("APP.WATCHED "))
            .filter_map(|l| l.split(what).nth(1))
            .filter_map(|v| v.split_whitespace().next()?.parse::<i64>().ok())
            .sum()
    };
    assert_eq!(sum(" MQPUT/MQPUT1 count "), 3, "{rest:#?}");
    assert_eq!(sum(" MQPUT byte count "), 15, "{rest:#?}");
}
