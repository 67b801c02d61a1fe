//! Executor tests against the in-memory target: DEFINE/REPLACE/LIKE, ALTER, DELETE,
//! CLEAR, listeners, QMGR, DISPLAY layout and WHERE.

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::AdminTarget;
use ferry_mqsc::{execute, parse_command, CommandResult};
use ferry_objects::queue::{DefinitionType, QueueType, Usage};
use ferry_objects::status::{ConnectionStatus, HandleStatus};

fn run(t: &mut MemoryTarget, text: &str) -> CommandResult {
    let cmd = parse_command(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    execute(&cmd, t)
}

fn ok(t: &mut MemoryTarget, text: &str) -> Vec<String> {
    let r = run(t, text);
    assert!(r.ok, "{text}: {:?}", r.lines);
    r.lines
}

fn fails(t: &mut MemoryTarget, text: &str) -> Vec<String> {
    let r = run(t, text);
    assert!(!r.ok, "{text} should fail: {:?}", r.lines);
    r.lines
}

fn target() -> MemoryTarget {
    MemoryTarget::with_defaults("QM1")
}

#[test]
fn define_creates_with_dates_and_message() {
    let mut t = target();
    t.now_ms = 1_709_212_455_000; // 2024-02-29 13:14:15 UTC
    assert_eq!(
        ok(&mut t, "DEFINE QLOCAL(APP.Q)"),
        vec!["FRY8006I: Ferry queue created."]
    );
    let q = t.queues.get("APP.Q").expect("defined");
    assert_eq!(q.queue_type, QueueType::Local);
    assert_eq!(q.attributes.definition_type, DefinitionType::Predefined);
    assert_eq!(q.attributes.creation_date, "2024-02-29");
    assert_eq!(q.attributes.creation_time, "13.14.15");
    assert_eq!(q.attributes.alteration_date, "2024-02-29");
    assert_eq!(q.attributes.alteration_time, "13.14.15");
}

#[test]
fn define_existing_fails_without_replace() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(A)");
    assert_eq!(
        fails(&mut t, "DEFINE QLOCAL(A)"),
        vec!["FRY8150E: Ferry object A already exists."]
    );
    assert_eq!(
        fails(&mut t, "DEFINE QALIAS(A) TARGET(B) REPLACE"),
        vec!["FRY8150E: Ferry object A already exists."]
    );
}

#[test]
fn define_starts_from_the_default_object() {
    let mut t = target();
    ok(
        &mut t,
        "ALTER QLOCAL(SYSTEM.DEFAULT.LOCAL.QUEUE) MAXDEPTH(777) DEFPSIST(YES)",
    );
    ok(&mut t, "DEFINE QLOCAL(A) DEFPSIST(NO)");
    let a = &t.queues["A"].attributes;
    assert_eq!(a.max_depth, 777);
    assert_eq!(a.def_persistence.keyword(), "NO");
    // Without default objects, the table defaults apply.
    let mut bare = MemoryTarget::new("QM2");
    ok(&mut bare, "DEFINE QLOCAL(A)");
    assert_eq!(bare.queues["A"].attributes.max_depth, 5000);
}

#[test]
fn define_model_keeps_its_deftype() {
    let mut t = target();
    ok(&mut t, "DEFINE QMODEL(M) DEFTYPE(PERMDYN)");
    assert_eq!(
        t.queues["M"].attributes.definition_type,
        DefinitionType::PermanentDynamic
    );
    ok(&mut t, "DEFINE QMODEL(M2)");
    assert_eq!(
        t.queues["M2"].attributes.definition_type,
        DefinitionType::TemporaryDynamic
    );
}

#[test]
fn like_copies_from_the_named_queue() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(A) MAXDEPTH(42) DESCR('model me')");
    ok(&mut t, "DEFINE QLOCAL(B) LIKE(A) DESCR('copy')");
    let b = &t.queues["B"].attributes;
    assert_eq!(b.max_depth, 42);
    assert_eq!(b.descr, "copy");
    assert_eq!(
        fails(&mut t, "DEFINE QLOCAL(C) LIKE(NOPE)"),
        vec!["FRY8147E: Ferry object NOPE not found."]
    );
    ok(&mut t, "DEFINE QALIAS(AL) TARGET(A)");
    fails(&mut t, "DEFINE QLOCAL(D) LIKE(AL)");
}

#[test]
fn replace_resets_unnamed_attributes_from_the_base() {
    let mut t = target();
    t.now_ms = 1_000_000_000_000;
    ok(&mut t, "DEFINE QLOCAL(A) MAXDEPTH(42) DESCR('first')");
    t.now_ms = 1_100_000_000_000;
    ok(&mut t, "DEFINE QLOCAL(A) DESCR('second') REPLACE");
    let a = &t.queues["A"].attributes;
    assert_eq!(
        a.max_depth, 5000,
        "MAXDEPTH reset from SYSTEM.DEFAULT.LOCAL.QUEUE"
    );
    assert_eq!(a.descr, "second");
    assert_eq!(a.creation_date, "2001-09-09", "creation date kept");
    assert_eq!(a.alteration_date, "2004-11-09");
}

#[test]
fn alter_changes_only_named_attributes() {
    let mut t = target();
    t.now_ms = 1_000_000_000_000;
    ok(
        &mut t,
        "DEFINE QLOCAL(A) MAXDEPTH(42) DESCR('keep me') NOSHARE",
    );
    let before = t.queues["A"].clone();
    t.now_ms = 1_100_000_000_000;
    assert_eq!(
        ok(&mut t, "ALTER QLOCAL(A) MAXDEPTH(43)"),
        vec!["FRY8008I: Ferry queue changed."]
    );
    let mut after = t.queues["A"].clone();
    assert_eq!(after.attributes.max_depth, 43);
    assert_eq!(after.attributes.alteration_date, "2004-11-09");
    after.attributes.max_depth = 42;
    after.attributes.alteration_date = before.attributes.alteration_date.clone();
    after.attributes.alteration_time = before.attributes.alteration_time.clone();
    assert_eq!(after, before);
    assert_eq!(
        fails(&mut t, "ALTER QLOCAL(NOPE) MAXDEPTH(1)"),
        vec!["FRY8147E: Ferry object NOPE not found."]
    );
    assert_eq!(
        fails(&mut t, "ALTER QMODEL(A) MAXDEPTH(1)"),
        vec!["FRY8147E: Ferry object A not found."]
    );
}

#[test]
fn alter_of_an_open_queue_needs_force_for_usage() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(X)");
    t.set_open("X", 1, 0);
    assert_eq!(
        fails(&mut t, "ALTER QLOCAL(X) USAGE(XMITQ)"),
        vec!["FRY8148E: Ferry object X in use."]
    );
    ok(&mut t, "ALTER QLOCAL(X) USAGE(XMITQ) FORCE");
    assert_eq!(t.queues["X"].attributes.usage, Usage::TransmissionQueue);
}

#[test]
fn delete_rules() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(A)");
    t.set_depth("A", 3);
    assert_eq!(
        fails(&mut t, "DELETE QLOCAL(A)"),
        vec!["FRY8143E: Ferry queue A not empty."]
    );
    t.set_open("A", 0, 1);
    assert_eq!(
        fails(&mut t, "DELETE QLOCAL(A) PURGE"),
        vec!["FRY8148E: Ferry object A in use."]
    );
    t.set_open("A", 0, 0);
    assert_eq!(
        ok(&mut t, "DELETE QLOCAL(A) PURGE"),
        vec!["FRY8007I: Ferry queue deleted."]
    );
    assert!(!t.queues.contains_key("A"));
    assert_eq!(
        fails(&mut t, "DELETE QLOCAL(A)"),
        vec!["FRY8147E: Ferry object A not found."]
    );
    ok(&mut t, "DEFINE QALIAS(AL) TARGET(X)");
    fails(&mut t, "DELETE QLOCAL(AL)");
    ok(&mut t, "DELETE QALIAS(AL)");
}

#[test]
fn clear_queue() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(A)");
    t.set_depth("A", 5);
    assert_eq!(
        ok(&mut t, "CLEAR QLOCAL(A)"),
        vec!["FRY8022I: Ferry queue cleared."]
    );
    assert_eq!(t.status["A"].current_depth, 0);
    t.set_open("A", 1, 0);
    assert_eq!(
        fails(&mut t, "CLEAR QLOCAL(A)"),
        vec!["FRY8148E: Ferry object A in use."]
    );
    fails(&mut t, "CLEAR QLOCAL(NOPE)");
}

#[test]
fn display_layout_exact() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(APP.Q) NOSHARE");
    t.set_depth("APP.Q", 7);
    assert_eq!(
        ok(&mut t, "DISPLAY QUEUE(APP.Q) CURDEPTH MAXDEPTH SHARE DESCR"),
        vec![
            "FRY8409I: Display Queue details.",
            "   QUEUE(APP.Q)                            TYPE(QLOCAL)",
            "   CURDEPTH(7)                             DESCR( )",
            "   MAXDEPTH(5000)                          NOSHARE",
        ]
    );
}

#[test]
fn display_generic_names_and_type() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(APP.A)");
    ok(&mut t, "DEFINE QALIAS(APP.B) TARGET(APP.A)");
    ok(&mut t, "DEFINE QLOCAL(OTHER)");
    let lines = ok(&mut t, "DIS QUEUE(APP.*)");
    assert_eq!(
        lines,
        vec![
            "FRY8409I: Display Queue details.",
            "   QUEUE(APP.A)                            TYPE(QLOCAL)",
            "FRY8409I: Display Queue details.",
            "   QUEUE(APP.B)                            TYPE(QALIAS)",
        ]
    );
    let lines = ok(&mut t, "DIS QLOCAL(APP.*)");
    assert_eq!(lines.len(), 2);
    let lines = ok(&mut t, "DIS QUEUE(APP.*) TYPE(QALIAS) TARGET");
    assert_eq!(
        lines[1],
        "   QUEUE(APP.B)                            TYPE(QALIAS)"
    );
    assert_eq!(lines[2], "   TARGET(APP.A)");
    assert_eq!(
        fails(&mut t, "DIS QLOCAL(ZZ*)"),
        vec!["FRY8147E: Ferry object ZZ* not found."]
    );
    assert_eq!(
        fails(&mut t, "DIS QLOCAL(APP.B)"),
        vec!["FRY8147E: Ferry object APP.B not found."]
    );
}

#[test]
fn display_all_for_a_single_name() {
    let mut t = target();
    ok(&mut t, "DEFINE QALIAS(AL) TARGET(X)");
    let lines = ok(&mut t, "DIS QALIAS(AL)");
    let text = lines.join("\n");
    assert!(text.contains("TARGET(X)"));
    assert!(text.contains("TARGTYPE(QUEUE)"));
    assert!(!text.contains("MAXDEPTH"), "not applicable to aliases");
    assert!(!text.contains("CURDEPTH"));
}

#[test]
fn where_filters() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(A) MAXDEPTH(10) DESCR('payments in')");
    ok(&mut t, "DEFINE QLOCAL(B) MAXDEPTH(20) PUT(DISABLED)");
    ok(&mut t, "DEFINE QALIAS(C) TARGET(A)");
    t.set_depth("B", 4);
    let names = |lines: Vec<String>| -> Vec<String> {
        lines
            .iter()
            .filter(|l| l.starts_with("   QUEUE("))
            .map(|l| l.split_whitespace().next().unwrap_or("").to_string())
            .collect()
    };
    let q = |s: &[&str]| s.iter().map(|x| format!("QUEUE({x})")).collect::<Vec<_>>();
    assert_eq!(
        names(ok(&mut t, "DIS Q(*) WHERE(CURDEPTH GT 0)")),
        q(&["B"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(MAXDEPTH LT 15)")),
        q(&["A"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(MAXDEPTH LE 20)")),
        q(&["A", "B"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(MAXDEPTH GE 20)")),
        q(&["B", "SYSTEM.DEFAULT.LOCAL.QUEUE"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(MAXDEPTH EQ 10)")),
        q(&["A"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(MAXDEPTH NE 10)")),
        q(&["B", "SYSTEM.DEFAULT.LOCAL.QUEUE"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS Q(*) WHERE(PUT EQ DISABLED)")),
        q(&["B"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS Q(*) WHERE(DESCR LK 'pay*')")),
        q(&["A"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(DESCR NL 'pay*')")),
        q(&["B", "SYSTEM.DEFAULT.LOCAL.QUEUE"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS Q(*) WHERE(DESCR CT 'ments')")),
        q(&["A"])
    );
    assert_eq!(
        names(ok(&mut t, "DIS QL(*) WHERE(DESCR EX 'ments')")),
        q(&["B", "SYSTEM.DEFAULT.LOCAL.QUEUE"])
    );
    assert_eq!(names(ok(&mut t, "DIS Q(*) WHERE(TARGET EQ A)")), q(&["C"]));
    assert_eq!(names(ok(&mut t, "DIS QL(*) WHERE(SHARE EQ YES)")).len(), 3);
    assert!(ok(&mut t, "DIS QL(*) WHERE(SHARE EQ NOSHARE)").is_empty());
}

#[test]
fn channel_commands() {
    let mut t = target();
    ok(
        &mut t,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(5)",
    );
    assert_eq!(
        ok(
            &mut t,
            "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) HBINT(60)"
        ),
        vec!["FRY8014I: Ferry channel created."]
    );
    let c = &t.channels["APP.SVRCONN"].attributes;
    assert_eq!((c.heartbeat_interval, c.share_conversations), (60, 5));
    assert_eq!(
        ok(&mut t, "ALTER CHL(APP.SVRCONN) MAXINST(3)"),
        vec!["FRY8016I: Ferry channel changed."]
    );
    assert_eq!(t.channels["APP.SVRCONN"].attributes.heartbeat_interval, 60);
    assert_eq!(
        ok(&mut t, "DIS CHANNEL(APP.*) HBINT"),
        vec![
            "FRY8414I: Display Channel details.",
            "   CHANNEL(APP.SVRCONN)                    CHLTYPE(SVRCONN)",
            "   HBINT(60)",
        ]
    );
    fails(&mut t, "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)");
    assert_eq!(
        ok(&mut t, "DELETE CHANNEL(APP.SVRCONN)"),
        vec!["FRY8015I: Ferry channel deleted."]
    );
    fails(&mut t, "DELETE CHANNEL(APP.SVRCONN)");
    let lines = fails(&mut t, "DEFINE CHANNEL(TO.QM2) CHLTYPE(CLNTCONN)");
    assert!(
        lines[0].starts_with("FRY9002E: CHANNEL CHLTYPE(CLNTCONN) is valid MQSC"),
        "{lines:?}"
    );
}

#[test]
fn cluster_objects_take_mqs_attributes() {
    let mut t = target();
    ok(
        &mut t,
        "DEFINE CHANNEL(TO.QM1) CHLTYPE(CLUSRCVR) CONNAME('localhost(1414)') CLUSTER(DEMO) CLWLWGHT(20) NETPRTY(3)",
    );
    let lines = ok(
        &mut t,
        "DISPLAY CHANNEL(TO.QM1) CLUSTER CLWLWGHT NETPRTY CLWLRANK",
    );
    assert!(
        lines.iter().any(|l| l.contains("CLUSTER(DEMO)")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.contains("CLWLWGHT(20)")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("NETPRTY(3)")), "{lines:?}");
    ok(
        &mut t,
        "DEFINE CHANNEL(TO.QM2) CHLTYPE(CLUSSDR) CONNAME('localhost(1415)') CLUSTER(DEMO)",
    );
    let refused = |text: &str| parse_command(text).expect_err(text).to_string();
    assert!(refused("DEFINE CHANNEL(TO.QM3) CHLTYPE(CLUSSDR) XMITQ(X)").contains("XMITQ"));
    ok(&mut t, "DEFINE CHANNEL(TO.QM3) CHLTYPE(CLUSSDR) CLUSNL(NL)");
    ok(&mut t, "ALTER QMGR REPOSNL(NL)");
    refused("DEFINE CHANNEL(TO.QM3) CHLTYPE(CLUSRCVR) CLWLWGHT(0)");
    ok(&mut t, "ALTER QMGR REPOS(DEMO) CLWLUSEQ(ANY) CLWLMRUC(5)");
    ok(
        &mut t,
        "DEFINE QLOCAL(APP.Q) CLUSTER(DEMO) DEFBIND(NOTFIXED) CLWLRANK(4) CLWLPRTY(2) CLWLUSEQ(ANY)",
    );
    let lines = ok(&mut t, "DISPLAY QLOCAL(APP.Q) CLUSTER DEFBIND CLWLUSEQ");
    assert!(
        lines.iter().any(|l| l.contains("DEFBIND(NOTFIXED)")),
        "{lines:?}"
    );
    ok(&mut t, "DEFINE QALIAS(APP.A) TARGET(APP.Q) CLUSTER(DEMO)");
    refused("DEFINE QALIAS(APP.B) TARGET(APP.Q) CLWLUSEQ(ANY)");
    refused("DEFINE QMODEL(APP.M) CLUSTER(DEMO)");
}

#[test]
fn message_channel_definitions_take_mqs_attributes_and_defaults() {
    let mut t = target();
    assert_eq!(
        ok(
            &mut t,
            "DEFINE CHANNEL(QM1.TO.QM2) CHLTYPE(SDR) CONNAME('localhost(1415)') XMITQ(QM2) NPMSPEED(NORMAL)"
        ),
        vec!["FRY8014I: Ferry channel created."]
    );
    let sdr = t.channel("QM1.TO.QM2").expect("defined");
    assert_eq!(sdr.attributes.batch_size, 50);
    assert_eq!(sdr.attributes.batch_interval, 0, "MQ's BATCHINT for SDR");
    assert_eq!(
        sdr.attributes.disconnect_interval, 6000,
        "MQ's DISCINT for SDR"
    );
    assert_eq!(sdr.attributes.sequence_wrap, 999_999_999);
    assert_eq!(sdr.attributes.short_retry_count, 10);
    assert_eq!(sdr.attributes.long_retry_interval, 1200);
    assert_eq!(
        ok(&mut t, "DEFINE CHANNEL(QM2.TO.QM1) CHLTYPE(RCVR)"),
        vec!["FRY8014I: Ferry channel created."]
    );
    // A receiver names no partner and no transmission queue.
    for bad in [
        "DEFINE CHANNEL(R2) CHLTYPE(RCVR) XMITQ(Q)",
        "DEFINE CHANNEL(R2) CHLTYPE(RCVR) CONNAME('h(1)')",
        "DEFINE CHANNEL(S2) CHLTYPE(SDR) CONNAME('h(99999)')",
        "DEFINE CHANNEL(S2) CHLTYPE(SDR) CONNAME('h(1') XMITQ(Q)",
        "DEFINE CHANNEL(S2) CHLTYPE(SDR) SEQWRAP(99)",
        "DEFINE CHANNEL(S2) CHLTYPE(SDR) NPMSPEED(SLOW)",
        "DEFINE CHANNEL(S2) CHLTYPE(SVRCONN) XMITQ(Q)",
        // PUTAUT belongs to receiving channels.
        "DEFINE CHANNEL(S2) CHLTYPE(SVR) CONNAME('a(1414),b') XMITQ(Q) PUTAUT(CTX)",
    ] {
        assert!(parse_command(bad).is_err(), "{bad} is refused");
    }
    assert_eq!(
        ok(
            &mut t,
            "DEFINE CHANNEL(S2) CHLTYPE(SVR) CONNAME('a(1414),b') XMITQ(Q)"
        ),
        vec!["FRY8014I: Ferry channel created."]
    );
    assert_eq!(
        ok(
            &mut t,
            "DEFINE CHANNEL(R3) CHLTYPE(RCVR) PUTAUT(CTX) MRRTY(3)"
        ),
        vec!["FRY8014I: Ferry channel created."]
    );
}

#[test]
fn listener_lifecycle() {
    let mut t = target();
    assert_eq!(
        ok(&mut t, "DEFINE LISTENER(L1) PORT(1415) CONTROL(QMGR)"),
        vec!["FRY8626I: Ferry listener object created."]
    );
    assert_eq!(
        fails(&mut t, "DIS LSSTATUS(L1)"),
        vec!["FRY8730I: Listener L1 not active."]
    );
    assert_eq!(
        fails(&mut t, "STOP LISTENER(L1)"),
        vec!["FRY8730I: Listener L1 not active."]
    );
    assert_eq!(
        ok(&mut t, "START LISTENER(L1)"),
        vec!["FRY8021I: Request to start Ferry listener accepted."]
    );
    assert_eq!(
        ok(&mut t, "DIS LSSTATUS(L1) PORT"),
        vec![
            "FRY8631I: Display listener status details.",
            "   LISTENER(L1)                            PORT(1415)",
        ]
    );
    assert_eq!(
        fails(&mut t, "DELETE LISTENER(L1)"),
        vec!["FRY8148E: Ferry object L1 in use."]
    );
    let lines = fails(&mut t, "START LISTENER(L1)");
    assert!(
        lines[0].starts_with("FRY9003E: The request was refused: listener L1 is already running")
    );
    assert_eq!(
        ok(&mut t, "STOP LISTENER(L1)"),
        vec!["FRY8731I: Request to stop Ferry listener accepted."]
    );
    assert_eq!(
        ok(&mut t, "ALTER LISTENER(L1) PORT(1416)"),
        vec!["FRY8627I: Ferry listener object changed."]
    );
    assert_eq!(t.listeners["L1"].attributes.control.keyword(), "QMGR");
    assert_eq!(
        ok(&mut t, "DELETE LISTENER(L1)"),
        vec!["FRY8628I: Ferry listener object deleted."]
    );
    fails(&mut t, "START LISTENER(NOPE)");
    let lines = ok(&mut t, "DIS LISTENER(*)");
    assert_eq!(lines[1], "   LISTENER(SYSTEM.DEFAULT.LISTENER.TCP)");
}

#[test]
fn qmgr_commands() {
    let mut t = target();
    assert_eq!(
        ok(&mut t, "ALTER QMGR DEADQ('DLQ') MAXHANDS(512)"),
        vec!["FRY8005I: Ferry queue manager changed."]
    );
    assert_eq!(
        (t.qmgr.dead_letter_q.as_str(), t.qmgr.max_handles),
        ("DLQ", 512)
    );
    assert_eq!(
        ok(&mut t, "DIS QMGR DEADQ MAXHANDS"),
        vec![
            "FRY8408I: Display Queue Manager details.",
            "   QMNAME(QM1)                             DEADQ(DLQ)",
            "   MAXHANDS(512)",
        ]
    );
    assert!(ok(&mut t, "DIS QMGR").len() > 5);
}

#[test]
fn queue_status_and_handles() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(A)");
    ok(&mut t, "DEFINE QALIAS(AL) TARGET(A)");
    t.set_depth("A", 2);
    t.set_open("A", 1, 1);
    t.status.get_mut("A").expect("status").last_put_ms = Some(1_709_212_455_000);
    t.status.get_mut("A").expect("status").uncommitted = 1;
    assert_eq!(
        ok(&mut t, "DIS QSTATUS(A) CURDEPTH UNCOM LPUTDATE LPUTTIME"),
        vec![
            "FRY8450I: Display queue status details.",
            "   QUEUE(A)                                TYPE(QUEUE)",
            "   CURDEPTH(2)                             UNCOM(1)",
            "   LPUTDATE(2024-02-29)                    LPUTTIME(13.14.15)",
        ]
    );
    assert_eq!(
        fails(&mut t, "DIS QS(AL)"),
        vec!["FRY8420I: Queue Status not found."]
    );
    assert_eq!(
        fails(&mut t, "DIS QS(NOPE)"),
        vec!["FRY8147E: Ferry object NOPE not found."]
    );
    // No handle open on a queue that exists: nothing to show, and not a failure (runmqsc
    // counts it as processed).
    assert!(ok(&mut t, "DIS QS(A) TYPE(HANDLE)").is_empty());
    t.handles.insert(
        "A".into(),
        vec![HandleStatus {
            queue: "A".into(),
            connection_id: "0A0B".into(),
            application_tag: "app".into(),
            input: "SHARED".into(),
            ..HandleStatus::default()
        }],
    );
    assert_eq!(
        ok(&mut t, "DIS QS(A) TYPE(HANDLE) APPLTAG INPUT"),
        vec![
            "FRY8450I: Display queue status details.",
            "   QUEUE(A)                                TYPE(HANDLE)",
            "   APPLTAG(app)                            INPUT(SHARED)",
        ]
    );
    let lines = ok(&mut t, "DIS QS(*) WHERE(CURDEPTH GT 1)");
    assert!(lines.iter().any(|l| l.contains("QUEUE(A)")));
    // The attribute WHERE filters on is shown without being asked for.
    assert!(lines.iter().any(|l| l.contains("CURDEPTH(2)")), "{lines:?}");
}

#[test]
fn ping_qmgr_answers() {
    let mut t = target();
    assert_eq!(
        ok(&mut t, "PING QMGR"),
        vec!["FRY8415I: Ping Ferry queue manager command complete."]
    );
}

#[test]
fn connections() {
    let mut t = target();
    t.connections = vec![
        ConnectionStatus {
            connection_id: "414D5143".into(),
            application_tag: "orders".into(),
            channel: "APP.SVRCONN".into(),
            open_objects: vec!["A".into(), "B".into()],
            ..ConnectionStatus::default()
        },
        ConnectionStatus {
            connection_id: "414D5144".into(),
            application_tag: "billing".into(),
            ..ConnectionStatus::default()
        },
    ];
    // The attribute WHERE filters on is shown, as MQ shows it.
    assert_eq!(
        ok(&mut t, "DIS CONN(*) WHERE(APPLTAG EQ 'orders') CHANNEL"),
        vec![
            "FRY8276I: Display Connection details.",
            "   CONN(414D5143)                          TYPE(CONN)",
            "   APPLTAG(orders)                         CHANNEL(APP.SVRCONN)",
        ]
    );
    let lines = ok(&mut t, "DIS CONN(414D5143) TYPE(HANDLE)");
    assert_eq!(
        lines.iter().filter(|l| l.contains("TYPE(HANDLE)")).count(),
        2
    );
    assert!(
        lines.contains(&"   OBJNAME(A)                              OBJTYPE(QUEUE)".to_string())
    );
    let lines = ok(&mut t, "DIS CONN(*) TYPE(ALL) WHERE(APPLTAG EQ 'orders')");
    assert_eq!(
        lines.iter().filter(|l| l.starts_with("FRY8276I")).count(),
        3
    );
    fails(&mut t, "DIS CONN(FFFF)");
}

#[test]
fn unsupported_commands_answer_clearly() {
    let mut t = target();
    let lines = fails(&mut t, "DEFINE SERVICE(S)");
    assert_eq!(
        lines,
        vec!["FRY9002E: DEFINE SERVICE is valid MQSC but Ferry does not support it yet."]
    );
}

/// DISPLAY of one queue by name looks that queue up: with 100,000 queues, copying every
/// definition to show one held the queue manager's thread for tens of milliseconds.
#[test]
fn display_of_one_queue_does_not_list_them_all() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(ONE.Q) MAXDEPTH(9)");
    ok(&mut t, "DEFINE QALIAS(ONE.A) TARGET(ONE.Q)");
    t.queues_listed.set(0);
    let shown = ok(&mut t, "DISPLAY QLOCAL(ONE.Q) MAXDEPTH");
    assert!(shown.iter().any(|l| l.contains("MAXDEPTH(9)")), "{shown:?}");
    ok(&mut t, "DISPLAY QUEUE(ONE.A)");
    ok(&mut t, "DISPLAY QSTATUS(ONE.Q)");
    fails(&mut t, "DISPLAY QLOCAL(ONE.A)");
    fails(&mut t, "DISPLAY QLOCAL(NO.SUCH.Q)");
    assert_eq!(t.queues_listed.get(), 0);
    // A generic name lists them (and finds both).
    let all = ok(&mut t, "DISPLAY QUEUE(ONE.*)");
    assert_eq!(
        all.iter().filter(|l| l.contains("QUEUE(ONE.")).count(),
        2,
        "{all:?}"
    );
    assert_eq!(t.queues_listed.get(), 1);
}

#[test]
fn a_display_of_thousands_of_objects_is_cut_at_the_output_bound() {
    let mut t = target();
    let descr = "d".repeat(64);
    for i in 0..3_000 {
        ok(
            &mut t,
            &format!("DEFINE QLOCAL(BULK.Q{i:05}) DESCR('{descr}')"),
        );
    }
    let lines = fails(&mut t, "DISPLAY QLOCAL(BULK.*) ALL");
    let bytes: usize = lines.iter().map(|l| l.len() + 1).sum();
    assert!(
        bytes < ferry_mqsc::MAX_COMMAND_OUTPUT + 16 * 1024,
        "{bytes} bytes of output"
    );
    let last = lines.last().expect("a last line");
    assert!(
        last.starts_with("FRY9006E: The output was cut after ")
            && last.contains(" of 3000 objects"),
        "{last}"
    );
    // A narrower DISPLAY answers whole.
    let few = ok(&mut t, "DISPLAY QLOCAL(BULK.Q0001*) MAXDEPTH");
    assert_eq!(few.iter().filter(|l| l.contains("QUEUE(BULK.")).count(), 10);
}

#[test]
fn remote_queue_definitions_are_defined_altered_shown_and_deleted() {
    let mut t = target();
    ok(&mut t, "DEFINE QLOCAL(QM2) USAGE(XMITQ)");
    assert_eq!(t.queues["QM2"].attributes.usage, Usage::TransmissionQueue);
    assert_eq!(
        ok(
            &mut t,
            "DEFINE QREMOTE(R) RNAME(APP.IN) RQMNAME(QM2) XMITQ(QM2) DEFPSIST(YES)"
        ),
        vec!["FRY8006I: Ferry queue created."]
    );
    let r = &t.queues["R"];
    assert_eq!(r.queue_type, QueueType::Remote);
    assert_eq!(r.attributes.remote_name, "APP.IN");
    assert_eq!(r.attributes.remote_qmgr_name, "QM2");
    assert_eq!(r.attributes.xmit_q, "QM2");
    // A queue-manager alias and a reply-to alias are QREMOTEs too.
    ok(
        &mut t,
        "DEFINE QREMOTE(QM3) RNAME(' ') RQMNAME(QM3) XMITQ(QM2)",
    );
    ok(
        &mut t,
        "DEFINE QREMOTE(MY.REPLY) RNAME(REAL.REPLY) RQMNAME(QM2)",
    );
    ok(&mut t, "ALTER QREMOTE(R) XMITQ(' ')");
    assert_eq!(t.queues["R"].attributes.xmit_q, "");
    let lines = ok(&mut t, "DISPLAY QREMOTE(R)");
    let text = lines.join("\n");
    assert!(text.contains("QUEUE(R)"), "{text}");
    assert!(text.contains("TYPE(QREMOTE)"), "{text}");
    assert!(text.contains("RNAME(APP.IN)"), "{text}");
    assert!(text.contains("RQMNAME(QM2)"), "{text}");
    assert!(text.contains("XMITQ( )"), "{text}");
    assert!(!text.contains("MAXDEPTH"), "{text}");
    let lines = ok(&mut t, "DISPLAY QUEUE(*) TYPE(QREMOTE) RQMNAME");
    let queues: Vec<&String> = lines.iter().filter(|l| l.contains("QUEUE(")).collect();
    assert_eq!(
        queues.len(),
        4,
        "R, QM3, MY.REPLY and the default: {lines:?}"
    );
    assert!(lines.iter().all(|l| !l.contains("QUEUE(QM2)")), "{lines:?}");
    assert!(fails(&mut t, "ALTER QLOCAL(R) PUT(DISABLED)")[0].starts_with("FRY8147E"));
    ok(&mut t, "DELETE QREMOTE(R)");
    assert!(!t.queues.contains_key("R"));
}
