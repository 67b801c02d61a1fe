//! Object authorities against a real queue manager process: SET/DELETE/DISPLAY AUTHREC
//! and DISPLAY ENTAUTH, CONNECT at MQCONN, the open options at MQOPEN and MQPUT1, groups
//! from the user repository, MQSC commands refused to a user without the authority,
//! records kept across a restart, `ferry setmqaut`, `dspmqaut` and `dmpmqaut`, and a
//! queue manager that checks nothing (qm.ini without the AuthorizationService).

mod common;

use common::*;
use ferry_client::ConnectOptions;
use ferry_mqi::{ObjectDescriptor, OpenOptions, ReasonCode};

/// A queue manager with MQ's security defaults and authority checks on, an application
/// channel and queue, and users 'alice' (group 'apps') and 'bob' (no group) in its
/// repository. Passwords are not checked: the user id a client asserts is the one
/// checked (connection authentication is tests/connauth.rs's).
fn secured(name: &str) -> TestQueueManager {
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), name);
    qm.check_authorities();
    qm.launch();
    for (user, group) in [("alice", Some("apps")), ("bob", None)] {
        let mut args = vec!["user", "add", name, user];
        if let Some(g) = group {
            args.extend(["--group", g]);
        }
        let out = qm.ferry_with_stdin(&args, "a-password\n");
        assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    }
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.IN)\nDEFINE QLOCAL(APP.OUT)\nDEFINE QLOCAL(OTHER.Q)\n\
         DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n\
         ALTER QMGR CONNAUTH(' ')\nREFRESH SECURITY TYPE(CONNAUTH)",
    );
    qm
}

fn client(qm: &TestQueueManager, user: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), "APP.SVRCONN")
        .queue_manager(qm.name())
        .user_id(user)
        .sharecnv(1)
}

fn od(name: &str) -> ObjectDescriptor {
    ObjectDescriptor::queue(name).expect("name")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_and_open_are_checked_against_user_and_group_records() {
    let qm = secured("OAM.CHECKS");
    // No record: not even CONNECT.
    assert_reason(
        ferry_client::Connection::connect(&client(&qm, "alice")).await,
        ReasonCode::NotAuthorized,
    );
    mqsc_ok(
        &qm,
        "SET AUTHREC OBJTYPE(QMGR) GROUP('apps') AUTHADD(CONNECT,INQ)\n\
         SET AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE) GROUP('apps') AUTHADD(PUT,INQ)\n\
         SET AUTHREC PROFILE('APP.IN') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(GET,BROWSE)",
    );
    // bob is not in 'apps'.
    assert_reason(
        ferry_client::Connection::connect(&client(&qm, "bob")).await,
        ReasonCode::NotAuthorized,
    );
    let alice = connect(&client(&qm, "alice")).await;
    // APP.OUT: the group's PUT; not GET.
    let out = open(&alice, "APP.OUT", OpenOptions::OUTPUT).await;
    put(&out, "to APP.OUT").await;
    assert_reason(
        alice.open(&od("APP.OUT"), OpenOptions::INPUT_SHARED).await,
        ReasonCode::NotAuthorized,
    );
    // APP.IN: alice's own record is the most specific for her, and her group's adds PUT.
    let q = open(
        &alice,
        "APP.IN",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED | OpenOptions::BROWSE,
    )
    .await;
    put(&q, "round trip").await;
    assert_eq!(get_text(&q).await, "round trip");
    // Nothing covers OTHER.Q, and MQPUT1 is an open for output.
    assert_reason(
        alice.open(&od("OTHER.Q"), OpenOptions::OUTPUT).await,
        ReasonCode::NotAuthorized,
    );
    assert_reason(
        alice
            .put1(
                &od("OTHER.Q"),
                &mut ferry_mqi::MessageDescriptor::default(),
                &ferry_mqi::PutOptions::default(),
                &b"x"[..],
            )
            .await,
        ReasonCode::NotAuthorized,
    );
    let log = qm.error_log();
    assert!(
        log.contains("FRY8077W") && log.contains("'alice'") && log.contains("'OTHER.Q'"),
        "the refusal is logged with the entity and object: {log}"
    );
    assert!(
        log.contains("'bob'") && log.contains("CONNECT"),
        "a refused MQCONN names the authority: {log}"
    );
    // DISPLAY ENTAUTH adds up what alice holds on APP.IN.
    let shown = mqsc_ok(
        &qm,
        "DISPLAY ENTAUTH PRINCIPAL('alice') OBJNAME(APP.IN) OBJTYPE(QUEUE)",
    );
    assert_eq!(
        attr(&shown, "AUTHLIST").as_deref(),
        Some("BROWSE,GET,INQ,PUT"),
        "{shown}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_are_displayed_deleted_and_kept_across_a_restart() {
    let mut qm = secured("OAM.RECORDS");
    mqsc_ok(
        &qm,
        "SET AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(ALLMQI)\n\
         SET AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHRMV(SET,SETALL)",
    );
    let shown = mqsc_ok(&qm, "DISPLAY AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE)");
    assert!(shown.contains("FRY8864I"), "{shown}");
    assert_eq!(attr(&shown, "ENTITY").as_deref(), Some("alice"), "{shown}");
    assert_eq!(
        attr(&shown, "AUTHLIST").as_deref(),
        Some("BROWSE,GET,INQ,PASSALL,PASSID,PUT,SETID"),
        "ALLMQI is what applies to queues: {shown}"
    );
    // MATCH(PROFILE) finds the generic record for an object name it covers.
    let by_name = mqsc_ok(&qm, "DISPLAY AUTHREC PROFILE(APP.IN) OBJTYPE(QUEUE)");
    assert!(by_name.contains("PROFILE(APP.**)"), "{by_name}");
    stop_qm(&mut qm);
    qm.launch();
    let again = mqsc_ok(&qm, "DISPLAY AUTHREC PRINCIPAL('alice')");
    assert_eq!(
        attr(&again, "PROFILE").as_deref(),
        Some("APP.**"),
        "{again}"
    );
    mqsc_ok(
        &qm,
        "DELETE AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE) PRINCIPAL('alice')",
    );
    let gone = qm.mqsc("DISPLAY AUTHREC PRINCIPAL('alice')");
    assert!(!gone.status.success());
    assert!(stdout(&gone).contains("FRY8865E"), "{}", stdout(&gone));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_records_are_refused_with_their_reason() {
    let qm = secured("OAM.BAD");
    for (command, expect) in [
        (
            "SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('nosuchuser') AUTHADD(PUT)",
            "FRY8868E",
        ),
        (
            "SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) GROUP('nosuchgroup') AUTHADD(PUT)",
            "FRY8868E",
        ),
        (
            "SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(CONNECT)",
            "FRY8867E",
        ),
        (
            "SET AUTHREC PROFILE('APP**') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(PUT)",
            "FRY8867E",
        ),
        (
            "DELETE AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) PRINCIPAL('alice')",
            "FRY8865E",
        ),
    ] {
        let out = qm.mqsc(command);
        let text = stdout(&out);
        assert!(!out.status.success(), "{command}: {text}");
        assert!(text.contains(expect), "{command}: {text}");
    }
    let syntax = qm.mqsc("SET AUTHREC PROFILE(APP.Q) OBJTYPE(QUEUE) AUTHADD(PUT)");
    assert!(
        stdout(&syntax).contains("PRINCIPAL or GROUP"),
        "{}",
        stdout(&syntax)
    );
    // The queue manager carries on.
    mqsc_ok(&qm, "DISPLAY QMGR");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mqsc_commands_need_the_authorities_mq_asks_for() {
    let qm = secured("OAM.MQSC");
    mqsc_ok(
        &qm,
        "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('alice') AUTHADD(CONNECT,DSP)\n\
         SET AUTHREC PROFILE('APP.**') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(DSP)",
    );
    let alice = connect(&client(&qm, "alice")).await;
    let shown = alice.mqsc("DISPLAY QLOCAL(APP.IN)").await.expect("answer");
    assert!(!shown.failed, "{:?}", shown.lines);
    for refused in [
        "DISPLAY QLOCAL(OTHER.Q)",
        "DEFINE QLOCAL(APP.NEW)",
        "ALTER QLOCAL(APP.IN) MAXDEPTH(10)",
        "SET AUTHREC PROFILE('**') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(ALL)",
    ] {
        let out = alice.mqsc(refused).await.expect("answer");
        assert!(out.failed, "{refused}: {:?}", out.lines);
        assert!(
            out.lines.iter().any(|l| l.starts_with("FRY8135E")),
            "{refused}: {:?}",
            out.lines
        );
    }
    // Granted CRT on the class, DEFINE works.
    mqsc_ok(
        &qm,
        "SET AUTHREC PROFILE('@class') OBJTYPE(QUEUE) PRINCIPAL('alice') AUTHADD(CRT)",
    );
    let defined = alice.mqsc("DEFINE QLOCAL(APP.NEW)").await.expect("answer");
    assert!(!defined.failed, "{:?}", defined.lines);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_commands_set_show_and_dump_authorities() {
    let qm = secured("OAM.CTL");
    let name = qm.name().to_string();
    let ok = ferry_ok(
        &qm,
        &[
            "setmqaut", "-m", &name, "-n", "APP.**", "-t", "queue", "-g", "apps", "+put", "+get",
            "+browse", "+inq",
        ],
    );
    assert!(ok.contains("completed successfully"), "{ok}");
    ferry_ok(
        &qm,
        &[
            "setmqaut", "-m", &name, "-n", "APP.**", "-t", "q", "-g", "apps", "-get",
        ],
    );
    ferry_ok(
        &qm,
        &[
            "setmqaut", "-m", &name, "-t", "qmgr", "-p", "alice", "+connect",
        ],
    );
    let shown = ferry_ok(
        &qm,
        &[
            "dspmqaut", "-m", &name, "-n", "APP.IN", "-t", "queue", "-p", "alice",
        ],
    );
    assert_eq!(
        shown,
        "Entity alice has the following authorizations for object APP.IN:\n\tbrowse\n\tinq\n\tput\n"
    );
    let dump = ferry_ok(&qm, &["dmpmqaut", "-m", &name, "-t", "queue"]);
    assert!(
        dump.contains("profile:     APP.**\nobject type: queue\nentity:      apps\nentity type: group\nauthority:   browse inq put\n"),
        "{dump}"
    );
    // A client as alice now puts to APP.IN through her group.
    let alice = connect(&client(&qm, "alice")).await;
    let q = open(&alice, "APP.IN", OpenOptions::OUTPUT).await;
    put(&q, "granted by setmqaut").await;
    // -remove deletes the record; bad arguments are a syntax error (36) naming them.
    ferry_ok(
        &qm,
        &[
            "setmqaut", "-m", &name, "-n", "APP.**", "-t", "queue", "-g", "apps", "-remove",
        ],
    );
    assert!(ferry_ok(&qm, &["dmpmqaut", "-m", &name, "-t", "queue"]).is_empty());
    let bad = qm.ferry(&[
        "setmqaut", "-m", &name, "-t", "queue", "-n", "A", "-p", "alice", "+nosuch",
    ]);
    assert_eq!(bad.status.code(), Some(36), "{}", stderr(&bad));
    assert!(stderr(&bad).contains("+nosuch"), "{}", stderr(&bad));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_authorization_service_nothing_is_checked() {
    // Test queue managers are made as MQ's MQSNOAUT=yes makes them.
    let qm = TestQueueManager::start(bin(), "OAM.OFF");
    let conn = connect(
        &ConnectOptions::client(&qm.conname(), "SYSTEM.DEF.SVRCONN")
            .queue_manager(qm.name())
            .user_id("anyone")
            .sharecnv(1),
    )
    .await;
    let q = open(&conn, "SYSTEM.DEFAULT.LOCAL.QUEUE", OpenOptions::OUTPUT).await;
    put(&q, "unchecked").await;
    assert!(qm.error_log().contains("FRY7482W"), "{}", qm.error_log());
}
