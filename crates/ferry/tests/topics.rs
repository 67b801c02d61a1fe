//! Topic objects against a real queue manager process: the shipped objects and model
//! queues of a new queue manager; DEFINE, DISPLAY, ALTER and DELETE TOPIC through
//! `ferry mqsc`, kept across a controlled restart and a kill -9; the refusals (unknown
//! object, TOPICSTR missing, shared or altered, bad values, clusters); a queue manager
//! created before topic objects getting them at its next start; and MQSC over a client
//! connection needing MQ's command authorities on @topic profiles.

mod common;

use common::*;
use ferry_client::ConnectOptions;

/// One `KEY(value)` of the only block of a DISPLAY, asserting it is there.
#[track_caller]
fn shown(text: &str, key: &str) -> String {
    attr(text, key).unwrap_or_else(|| panic!("no {key} in {text}"))
}

#[test]
fn topics_are_defined_displayed_altered_and_deleted_across_restarts() {
    let mut qm = start("TOPIC.ADMIN");

    // What a new queue manager has.
    let base = mqsc_ok(&qm, "DISPLAY TOPIC(SYSTEM.BASE.TOPIC) ALL");
    assert!(base.contains("FRY8633I"), "{base}");
    assert_eq!(shown(&base, "TOPICSTR"), "");
    assert_eq!(shown(&base, "PMSGDLV"), "ALLDUR");
    assert_eq!(shown(&base, "NPMSGDLV"), "ALLAVAIL");
    assert_eq!(shown(&base, "MDURMDL"), "SYSTEM.DURABLE.MODEL.QUEUE");
    let template = mqsc_ok(&qm, "DISPLAY TOPIC(SYSTEM.DEFAULT.TOPIC) PUB DEFPRTY");
    assert_eq!(shown(&template, "PUB"), "ASPARENT");
    assert_eq!(shown(&template, "DEFPRTY"), "ASPARENT");
    let durable = mqsc_ok(&qm, "DISPLAY QMODEL(SYSTEM.DURABLE.MODEL.QUEUE) DEFTYPE");
    assert_eq!(shown(&durable, "DEFTYPE"), "PERMDYN");
    let non_durable = mqsc_ok(&qm, "DISPLAY QMODEL(SYSTEM.NDURABLE.MODEL.QUEUE) DEFTYPE");
    assert_eq!(shown(&non_durable, "DEFTYPE"), "TEMPDYN");

    // DEFINE and DISPLAY: ASPARENT shown as defined.
    let out = mqsc_ok(
        &qm,
        "DEFINE TOPIC(PRICES.TOPIC) TYPE(LOCAL) TOPICSTR('Prices') PMSGDLV(ALL) NPMSGDLV(ALLAVAIL) USEDLQ(NO) DEFPSIST(YES)\n\
         DEFINE TOPIC(PRICES.INT) TOPICSTR('Prices/Internal') WILDCARD(BLOCK) SUB(DISABLED) DESCR('internal prices')",
    );
    assert_eq!(out.matches("FRY8690I").count(), 2, "{out}");
    let text = mqsc_ok(&qm, "DISPLAY TOPIC(PRICES.TOPIC) ALL");
    assert_eq!(shown(&text, "TOPICSTR"), "Prices");
    assert_eq!(shown(&text, "PMSGDLV"), "ALL");
    assert_eq!(shown(&text, "PUB"), "ASPARENT");
    assert_eq!(shown(&text, "DEFPRTY"), "ASPARENT");
    assert_eq!(shown(&text, "DEFPSIST"), "YES");
    assert!(!shown(&text, "ALTDATE").is_empty());
    let generic = mqsc_ok(&qm, "DISPLAY TOPIC(PRICES.*) TYPE(LOCAL)");
    assert_eq!(attrs(&generic, "TOPIC"), ["PRICES.INT", "PRICES.TOPIC"]);
    let filtered = mqsc_ok(&qm, "DISPLAY TOPIC(*) WHERE(WILDCARD EQ BLOCK)");
    assert_eq!(attrs(&filtered, "TOPIC"), ["PRICES.INT"]);

    // The refusals, each with its message; nothing changes.
    for (command, answer) in [
        ("DISPLAY TOPIC(NO.SUCH.TOPIC)", "FRY8147E"),
        ("ALTER TOPIC(NO.SUCH.TOPIC) PUB(DISABLED)", "FRY8147E"),
        ("DELETE TOPIC(NO.SUCH.TOPIC)", "FRY8147E"),
        ("DEFINE TOPIC(PRICES.TOPIC) TOPICSTR('Prices')", "FRY8150E"),
        ("DEFINE TOPIC(NO.STRING)", "DEFINE TOPIC needs TOPICSTR"),
        ("DEFINE TOPIC(BLANK.STRING) TOPICSTR(' ')", "is blank"),
        (
            "DEFINE TOPIC(PRICES.AGAIN) TOPICSTR('Prices')",
            "already belongs to topic object PRICES.TOPIC",
        ),
        (
            "ALTER TOPIC(PRICES.TOPIC) TOPICSTR('Other')",
            "TOPICSTR is fixed",
        ),
        (
            "DEFINE TOPIC(PRICES.TOPIC) TOPICSTR('Other') REPLACE",
            "cannot be changed",
        ),
        (
            "ALTER TOPIC(PRICES.TOPIC) PMSGDLV(SOMETIMES)",
            "PMSGDLV(SOMETIMES) is not valid",
        ),
        (
            "ALTER TOPIC(PRICES.TOPIC) DEFPRTY(12)",
            "outside the range 0 to 9",
        ),
        (
            "DEFINE TOPIC(CLUSTERED) TOPICSTR('c') CLUSTER(DEMO)",
            "FRY9002E",
        ),
    ] {
        let text = mqsc_exit(&qm, command, 10);
        assert!(text.contains(answer), "{command}: {text}");
    }
    let again = mqsc_ok(&qm, "DISPLAY TOPIC(*) TOPICSTR");
    assert_eq!(
        attrs(&again, "TOPIC"),
        [
            "PRICES.INT",
            "PRICES.TOPIC",
            "SYSTEM.BASE.TOPIC",
            "SYSTEM.DEFAULT.TOPIC"
        ]
    );

    // ALTER, then a controlled restart: the change is there.
    let altered = mqsc_ok(&qm, "ALTER TOPIC(PRICES.TOPIC) PUB(DISABLED) DEFPRTY(7)");
    assert!(altered.contains("FRY8691I"), "{altered}");
    stop_qm(&mut qm);
    qm.launch();
    let text = mqsc_ok(&qm, "DISPLAY TOPIC(PRICES.TOPIC) ALL");
    assert_eq!(shown(&text, "TOPICSTR"), "Prices");
    assert_eq!(shown(&text, "PUB"), "DISABLED");
    assert_eq!(shown(&text, "DEFPRTY"), "7");
    assert_eq!(shown(&text, "PMSGDLV"), "ALL");
    let text = mqsc_ok(&qm, "DISPLAY TOPIC(PRICES.INT) DESCR");
    assert_eq!(shown(&text, "DESCR"), "internal prices");

    // ALTER and DELETE, then kill -9: what was acknowledged is what comes back,
    // SYSTEM.BASE.TOPIC deleted included (it is not made again at start).
    mqsc_ok(
        &qm,
        "ALTER TOPIC(PRICES.TOPIC) DEFPRTY(ASPARENT)\n\
         DELETE TOPIC(PRICES.INT)\n\
         DELETE TOPIC(SYSTEM.BASE.TOPIC)\n\
         DEFINE TOPIC(SPORTS) TOPICSTR('Sports')",
    );
    qm.kill9();
    qm.launch();
    let text = mqsc_ok(&qm, "DISPLAY TOPIC(*) TOPICSTR DEFPRTY");
    assert_eq!(
        attrs(&text, "TOPIC"),
        ["PRICES.TOPIC", "SPORTS", "SYSTEM.DEFAULT.TOPIC"]
    );
    assert_eq!(
        attrs(&text, "DEFPRTY"),
        ["ASPARENT", "ASPARENT", "ASPARENT"]
    );
    let gone = mqsc_exit(&qm, "DISPLAY TOPIC(PRICES.INT)", 10);
    assert!(gone.contains("FRY8147E"), "{gone}");
    // The root can be given its object back, with TOPICSTR('').
    mqsc_ok(
        &qm,
        "DEFINE TOPIC(SYSTEM.BASE.TOPIC) TOPICSTR('') PUB(ENABLED) SUB(ENABLED)",
    );
    let deleted = mqsc_ok(&qm, "DELETE TOPIC(SPORTS)");
    assert!(deleted.contains("FRY8692I"), "{deleted}");
    stop_qm(&mut qm);
}

#[test]
fn a_queue_manager_from_before_topics_gets_the_shipped_ones_once() {
    let mut qm = start("TOPIC.MIGRATE");
    stop_qm(&mut qm);
    // objects.json as an earlier Ferry wrote it: no topics, no pub/sub model queues.
    let path = qm.qm_dir().join("objects.json");
    let mut snapshot: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("objects.json")).expect("json");
    let o = snapshot.as_object_mut().expect("object");
    assert!(o.remove("topics").is_some(), "this Ferry writes topics");
    o["queues"]
        .as_array_mut()
        .expect("queues")
        .retain(|q| !q["name"].as_str().unwrap_or("").contains("DURABLE.MODEL"));
    std::fs::write(&path, serde_json::to_vec_pretty(&snapshot).unwrap()).unwrap();
    qm.launch();
    let log = qm.error_log();
    assert!(log.contains("FRY7483I"), "{log}");
    let text = mqsc_ok(&qm, "DISPLAY TOPIC(SYSTEM.*)");
    assert_eq!(
        attrs(&text, "TOPIC"),
        ["SYSTEM.BASE.TOPIC", "SYSTEM.DEFAULT.TOPIC"]
    );
    mqsc_ok(
        &qm,
        "DISPLAY QMODEL(SYSTEM.DURABLE.MODEL.QUEUE)\nDISPLAY QMODEL(SYSTEM.NDURABLE.MODEL.QUEUE)",
    );
    // Once: deleted, they stay deleted.
    mqsc_ok(&qm, "DELETE TOPIC(SYSTEM.BASE.TOPIC)");
    stop_qm(&mut qm);
    qm.launch();
    assert_eq!(qm.error_log().matches("FRY7483I").count(), 1);
    let gone = mqsc_exit(&qm, "DISPLAY TOPIC(SYSTEM.BASE.TOPIC)", 10);
    assert!(gone.contains("FRY8147E"), "{gone}");
    stop_qm(&mut qm);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn topic_commands_over_a_client_need_mqs_command_authorities() {
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), "TOPIC.OAM");
    qm.check_authorities();
    qm.launch();
    let out = qm.ferry_with_stdin(&["user", "add", "TOPIC.OAM", "alice"], "a-password\n");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    mqsc_ok(
        &qm,
        "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n\
         ALTER QMGR CONNAUTH(' ')\nREFRESH SECURITY TYPE(CONNAUTH)\n\
         DEFINE TOPIC(APP.PRICES) TOPICSTR('app/prices')\n\
         SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT,DSP)\n\
         SET AUTHREC PROFILE('APP.**') OBJTYPE(TOPIC) PRINCIPAL('alice') AUTHADD(DSP)",
    );
    let alice = connect(
        &ConnectOptions::client(&qm.conname(), "APP.SVRCONN")
            .queue_manager(qm.name())
            .user_id("alice")
            .sharecnv(1),
    )
    .await;
    let shown = alice
        .mqsc("DISPLAY TOPIC(APP.PRICES) TOPICSTR")
        .await
        .expect("answer");
    assert!(!shown.failed, "{:?}", shown.lines);
    assert!(
        shown
            .lines
            .iter()
            .any(|l| l.contains("TOPICSTR(app/prices)")),
        "{:?}",
        shown.lines
    );
    for refused in [
        "DISPLAY TOPIC(SYSTEM.BASE.TOPIC)",
        "DEFINE TOPIC(APP.NEW) TOPICSTR('app/new')",
        "ALTER TOPIC(APP.PRICES) PUB(DISABLED)",
        "DELETE TOPIC(APP.PRICES)",
    ] {
        let out = alice.mqsc(refused).await.expect("answer");
        assert!(out.failed, "{refused}: {:?}", out.lines);
        assert!(
            out.lines.iter().any(|l| l.starts_with("FRY8135E")),
            "{refused}: {:?}",
            out.lines
        );
    }
    mqsc_ok(
        &qm,
        "SET AUTHREC PROFILE('@class') OBJTYPE(TOPIC) PRINCIPAL('alice') AUTHADD(CRT)\n\
         SET AUTHREC PROFILE('APP.**') OBJTYPE(TOPIC) PRINCIPAL('alice') AUTHADD(CHG,DLT)",
    );
    for allowed in [
        "DEFINE TOPIC(APP.NEW) TOPICSTR('app/new')",
        "ALTER TOPIC(APP.PRICES) PUB(DISABLED)",
        "DELETE TOPIC(APP.NEW)",
    ] {
        let out = alice.mqsc(allowed).await.expect("answer");
        assert!(!out.failed, "{allowed}: {:?}", out.lines);
    }
}
