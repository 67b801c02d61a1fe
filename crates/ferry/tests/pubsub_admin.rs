//! Administered subscriptions against a real queue manager process, through `ferry
//! mqsc`: DEFINE SUB with a provided DEST and with a managed one, DISPLAY SUB, SBSTATUS,
//! TPSTATUS and PUBSUB, ALTER SUB, DELETE SUB by name and by SUBID, kept across a
//! controlled restart and a kill -9, CLEAR TOPICSTR, and the refusals (unknown DEST or
//! TOPICOBJ, a selector that does not parse, DELETE of an unknown subscription, DESTQMGR
//! elsewhere).
//!
//! Publishing is not exercised here: the Rust client cannot open topics yet (no MQOD
//! object type), so deliveries to DEFINE SUB's subscriptions are covered by the engine's
//! tests (crates/ferry-engine/src/tests/pubsub_admin.rs).

mod common;

use common::*;

/// One `KEY(value)` of the only block of a DISPLAY, asserting it is there.
#[track_caller]
fn shown(text: &str, key: &str) -> String {
    attr(text, key).unwrap_or_else(|| panic!("no {key} in {text}"))
}

#[test]
fn subscriptions_are_defined_displayed_altered_and_deleted_across_restarts() {
    let mut qm = start("SUB.ADMIN");

    let out = mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.PRICE.FEED)\n\
         DEFINE TOPIC(PRICES.TOPIC) TOPICSTR('Prices')\n\
         DEFINE SUB(APP.PRICE.SUB) TOPICOBJ(PRICES.TOPIC) TOPICSTR('EUR/+') DEST(APP.PRICE.FEED) +\n\
                USERDATA('desk=fx') SELECTOR('Venue = ''LSE''')\n\
         DEFINE SUB('app.managed') TOPICSTR('News/#') DESTCLAS(MANAGED) PUBPRTY(4)",
    );
    assert_eq!(out.matches("FRY8094I").count(), 2, "{out}");

    // DISPLAY SUB: the summary, then ALL.
    let text = mqsc_ok(&qm, "DISPLAY SUB(APP.PRICE.SUB)");
    assert!(text.contains("FRY8096I"), "{text}");
    assert_eq!(shown(&text, "TOPICSTR"), "Prices/EUR/+");
    assert_eq!(shown(&text, "DEST"), "APP.PRICE.FEED");
    assert_eq!(shown(&text, "SUBTYPE"), "ADMIN");
    assert_eq!(shown(&text, "DURABLE"), "YES");
    assert!(!shown(&text, "SUBUSER").is_empty(), "the issuing user");
    assert!(
        attr(&text, "USERDATA").is_none(),
        "not in the summary: {text}"
    );
    let sub_id = shown(&text, "SUBID");
    assert_eq!(sub_id.len(), 48);
    let all = mqsc_ok(&qm, "DISPLAY SUB(APP.PRICE.SUB) ALL");
    assert_eq!(shown(&all, "USERDATA"), "desk=fx");
    assert_eq!(shown(&all, "SELECTOR"), "Venue = 'LSE'");
    assert_eq!(shown(&all, "SELTYPE"), "STANDARD");
    assert_eq!(shown(&all, "TOPICOBJ"), "PRICES.TOPIC");
    assert_eq!(shown(&all, "PSPROP"), "MSGPROP");
    let managed = mqsc_ok(&qm, "DISPLAY SUB('app.managed') ALL");
    let managed_q = shown(&managed, "DEST");
    assert!(
        managed_q.starts_with("SYSTEM.MANAGED.DURABLE."),
        "{managed}"
    );
    assert_eq!(shown(&managed, "DESTCLAS"), "MANAGED");
    assert_eq!(shown(&managed, "PUBPRTY"), "4");
    mqsc_ok(&qm, &format!("DISPLAY QLOCAL({managed_q})"));
    let generic = mqsc_ok(&qm, "DISPLAY SUB(*) SUBTYPE(ADMIN)");
    assert_eq!(attrs(&generic, "SUB"), ["APP.PRICE.SUB", "app.managed"]);

    // SBSTATUS, TPSTATUS, PUBSUB.
    let status = mqsc_ok(&qm, "DISPLAY SBSTATUS(APP.*)");
    assert!(status.contains("FRY8099I"), "{status}");
    assert_eq!(shown(&status, "NUMMSGS"), "0");
    assert_eq!(shown(&status, "ACTCONN"), "");
    assert_eq!(shown(&status, "TOPICSTR"), "Prices/EUR/+");
    let tree = mqsc_ok(&qm, "DISPLAY TPSTATUS('#') TYPE(TOPIC)");
    assert!(tree.contains("FRY8754I"), "{tree}");
    let nodes = attrs(&tree, "TOPICSTR");
    for node in ["", "Prices", "Prices/EUR/+", "News/#"] {
        assert!(nodes.iter().any(|n| n == node), "{node} in {nodes:?}");
    }
    let prices = mqsc_ok(&qm, "DISPLAY TPSTATUS('Prices') ALL");
    assert_eq!(shown(&prices, "ADMIN"), "PRICES.TOPIC");
    assert_eq!(
        shown(&prices, "PMSGDLV"),
        "ALLDUR",
        "resolved from the root"
    );
    assert_eq!(shown(&prices, "RETAINED"), "NO");
    let subs = mqsc_ok(&qm, "DISPLAY TPSTATUS('Prices/#') TYPE(SUB)");
    assert_eq!(attrs(&subs, "SUBID"), std::slice::from_ref(&sub_id));
    let pubsub = mqsc_ok(&qm, "DISPLAY PUBSUB ALL");
    assert_eq!(shown(&pubsub, "STATUS"), "ACTIVE");
    assert_eq!(shown(&pubsub, "SUBCOUNT"), "2");

    // ALTER, then a controlled restart: the subscriptions and the change are there.
    let altered = mqsc_ok(
        &qm,
        "ALTER SUB(APP.PRICE.SUB) USERDATA('desk=rates') PUBPRTY(5)",
    );
    assert!(altered.contains("FRY8095I"), "{altered}");
    stop_qm(&mut qm);
    qm.launch();
    let all = mqsc_ok(&qm, "DISPLAY SUB(APP.PRICE.SUB) ALL");
    assert_eq!(shown(&all, "USERDATA"), "desk=rates");
    assert_eq!(shown(&all, "PUBPRTY"), "5");
    assert_eq!(shown(&all, "SUBID"), sub_id);
    assert_eq!(shown(&all, "SELECTOR"), "Venue = 'LSE'");
    assert_eq!(shown(&all, "TOPICOBJ"), "PRICES.TOPIC");

    // The refusals, each with its message; nothing changes.
    for (command, answer) in [
        (
            "DEFINE SUB(BAD.DEST) TOPICSTR('a') DEST(NO.SUCH.QUEUE)",
            "2085",
        ),
        (
            "DEFINE SUB(BAD.TOPIC) TOPICOBJ(NO.SUCH.TOPIC) DEST(APP.PRICE.FEED)",
            "NO.SUCH.TOPIC",
        ),
        (
            "DEFINE SUB(BAD.SEL) TOPICSTR('a') DEST(APP.PRICE.FEED) SELECTOR('Venue = ')",
            "2459",
        ),
        (
            "DEFINE SUB(ELSEWHERE) TOPICSTR('a') DEST(APP.PRICE.FEED) DESTQMGR(OTHER.QM)",
            "FRY9002E",
        ),
        (
            "DEFINE SUB(APP.PRICE.SUB) TOPICSTR('a') DEST(APP.PRICE.FEED)",
            "FRY8150E",
        ),
        ("DELETE SUB(NO.SUCH.SUB)", "FRY8147E"),
        (
            "ALTER SUB(APP.PRICE.SUB) TOPICSTR('x')",
            "cannot be altered",
        ),
        ("DISPLAY TPSTATUS('Nowhere/#')", "FRY8147E"),
    ] {
        let text = mqsc_exit(&qm, command, 10);
        assert!(text.contains(answer), "{command}: {text}");
    }
    let names = mqsc_ok(&qm, "DISPLAY SUB(*)");
    assert_eq!(attrs(&names, "SUB"), ["APP.PRICE.SUB", "app.managed"]);

    // DELETE by SUBID and by name, CLEAR TOPICSTR, then kill -9: gone stays gone.
    let deleted = mqsc_ok(
        &qm,
        &format!(
            "DELETE SUB SUBID({sub_id})\n\
             DELETE SUB('app.managed')\n\
             DEFINE SUB(AFTER.KILL) TOPICSTR('Sports/#') DEST(APP.PRICE.FEED)"
        ),
    );
    assert_eq!(deleted.matches("FRY8097I").count(), 2, "{deleted}");
    let cleared = mqsc_ok(&qm, "CLEAR TOPICSTR('Prices/EUR/GBP') CLRTYPE(RETAINED)");
    assert!(cleared.contains("FRY8770I"), "{cleared}");
    qm.kill9();
    qm.launch();
    let names = mqsc_ok(&qm, "DISPLAY SUB(*)");
    assert_eq!(attrs(&names, "SUB"), ["AFTER.KILL"]);
    let gone = mqsc_exit(&qm, &format!("DISPLAY QLOCAL({managed_q})"), 10);
    assert!(
        gone.contains("FRY8147E"),
        "the managed queue went too: {gone}"
    );
    stop_qm(&mut qm);
}
