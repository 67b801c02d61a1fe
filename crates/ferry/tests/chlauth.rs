//! Channel authentication records against a real queue manager process: what a new
//! queue manager refuses (MQ's default records), mapping to another user id, blocked
//! addresses and users, WARN(YES), CHLAUTH(DISABLED), records kept across a restart, and
//! a queue manager whose definitions predate CHLAUTH.

mod common;

use common::*;
use ferry_client::ConnectOptions;
use ferry_mqi::{OpenOptions, ReasonCode};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);

/// A queue manager with MQ's channel authentication defaults and an application channel
/// and queue. Passwords are not checked (CONNAUTH blank): connection authentication comes
/// between a record's mapping and BLOCKUSER, and tests/connauth.rs covers it.
fn secured(name: &str) -> TestQueueManager {
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), name);
    qm.launch();
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q)\nDEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n\
         ALTER QMGR CONNAUTH(' ')\nREFRESH SECURITY TYPE(CONNAUTH)",
    );
    qm
}

fn client(qm: &TestQueueManager, channel: &str, user: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), channel)
        .queue_manager(qm.name())
        .user_id(user)
        .sharecnv(1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_queue_manager_closes_system_channels_and_refuses_administrators() {
    let qm = secured("CA.DEFAULTS");
    let shown = mqsc_ok(&qm, "DISPLAY QMGR CHLAUTH\nDISPLAY CHLAUTH(*)");
    assert_eq!(
        attr(&shown, "CHLAUTH").as_deref(),
        Some("ENABLED"),
        "{shown}"
    );
    assert_eq!(
        shown.matches("FRY8878I").count(),
        3,
        "MQ's three records: {shown}"
    );

    // SYSTEM.DEF.SVRCONN: the SYSTEM.* record says NOACCESS, whoever connects.
    assert_reason(
        ferry_client::Connection::connect(&client(&qm, "SYSTEM.DEF.SVRCONN", "app")).await,
        ReasonCode::NotAuthorized,
    );
    // An administrator (root, or the owner of the queue manager) on any channel.
    assert_reason(
        ferry_client::Connection::connect(&client(&qm, "APP.SVRCONN", "root")).await,
        ReasonCode::NotAuthorized,
    );
    // Anyone else on the application channel is in, as themselves.
    let conn = connect(&client(&qm, "APP.SVRCONN", "app")).await;
    let q = open(&conn, "APP.Q", IO).await;
    let md = put(&q, "hello").await;
    assert_eq!(md.user_identifier.as_str(), "app");

    let log = qm.error_log();
    assert!(
        log.contains("FRY9777E") && log.contains("CHLAUTH('SYSTEM.*') TYPE(ADDRESSMAP)"),
        "the log names the record that refused: {log}"
    );
    assert!(
        log.contains("FRY9776E") && log.contains("user id 'root'"),
        "{log}"
    );
    // The partner learnt only 2035; the error log has the detail, and no other entry
    // describes a failure of the queue manager.
    let runcheck = mqsc_ok(
        &qm,
        "DISPLAY CHLAUTH(APP.SVRCONN) MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('root')",
    );
    assert_eq!(
        attr(&runcheck, "USERLIST").as_deref(),
        Some("*MQADMIN"),
        "{runcheck}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_usermap_record_sets_the_user_id_and_is_kept_across_a_restart() {
    let mut qm = secured("CA.USERMAP");
    mqsc_ok(
        &qm,
        "SET CHLAUTH('APP.*') TYPE(USERMAP) CLNTUSER('root') USERSRC(MAP) MCAUSER('appuser') \
         DESCR('the build user runs as appuser')",
    );
    let check = |qm: &TestQueueManager| {
        mqsc_ok(
            qm,
            "DISPLAY CHLAUTH(APP.SVRCONN) MATCH(RUNCHECK) ADDRESS('127.0.0.1') CLNTUSER('root')",
        )
    };
    assert_eq!(attr(&check(&qm), "MCAUSER").as_deref(), Some("appuser"));
    {
        let conn = connect(&client(&qm, "APP.SVRCONN", "root")).await;
        let q = open(&conn, "APP.Q", IO).await;
        let md = put(&q, "mapped").await;
        assert_eq!(
            md.user_identifier.as_str(),
            "appuser",
            "context is the mapped user"
        );
        let shown = mqsc_ok(
            &qm,
            "DISPLAY CONN(*) WHERE(CHANNEL EQ 'APP.SVRCONN') USERID",
        );
        assert_eq!(
            attr(&shown, "USERID").as_deref(),
            Some("appuser"),
            "{shown}"
        );
    }
    // A mapping to a privileged user id is still refused by BLOCKUSER.
    mqsc_ok(
        &qm,
        "SET CHLAUTH('APP.SVRCONN') TYPE(USERMAP) CLNTUSER('eve') USERSRC(MAP) MCAUSER('root')",
    );
    assert_reason(
        ferry_client::Connection::connect(&client(&qm, "APP.SVRCONN", "eve")).await,
        ReasonCode::NotAuthorized,
    );

    stop_qm(&mut qm);
    qm.launch();
    let after = check(&qm);
    assert_eq!(
        attr(&after, "MCAUSER").as_deref(),
        Some("appuser"),
        "{after}"
    );
    let all = mqsc_ok(&qm, "DISPLAY CHLAUTH(APP.*) ALL");
    assert!(
        all.contains("DESCR(the build user runs as appuser)"),
        "{all}"
    );
    connect(&client(&qm, "APP.SVRCONN", "root")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn blocked_addresses_are_closed_at_once_and_warn_only_logs() {
    let qm = secured("CA.BLOCKADDR");
    let before = connect(&client(&qm, "APP.SVRCONN", "app")).await;
    let q = open(&before, "APP.Q", IO).await;

    mqsc_ok(
        &qm,
        "SET CHLAUTH('*') TYPE(BLOCKADDR) ADDRLIST('127.0.0.*')",
    );
    let refused = ferry_client::Connection::connect(&client(&qm, "APP.SVRCONN", "app")).await;
    assert!(refused.is_err(), "a blocked address is not served");
    wait_until("FRY9778E in the error log", || {
        qm.error_log().contains("FRY9778E")
    });
    // The connection made before carries on.
    put(&q, "still here").await;
    assert_eq!(get_text(&q).await, "still here");

    // WARN(YES): the same record only warns.
    mqsc_ok(
        &qm,
        "SET CHLAUTH('*') TYPE(BLOCKADDR) ADDRLIST('127.0.0.*') WARN(YES) ACTION(REPLACE)",
    );
    connect(&client(&qm, "APP.SVRCONN", "app")).await;
    assert!(qm.error_log().contains("FRY9779W"), "{}", qm.error_log());

    // A NOACCESS record for the channel, then one more specific that lets app in.
    mqsc_ok(
        &qm,
        "SET CHLAUTH('*') TYPE(BLOCKADDR) ACTION(REMOVEALL)\n\
         SET CHLAUTH('APP.*') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS)\n\
         SET CHLAUTH('APP.SVRCONN') TYPE(ADDRESSMAP) ADDRESS('127.0.0.1') USERSRC(CHANNEL)",
    );
    connect(&client(&qm, "APP.SVRCONN", "app")).await;
    mqsc_ok(&qm, "DEFINE CHANNEL(APP.OTHER) CHLTYPE(SVRCONN)");
    assert_reason(
        ferry_client::Connection::connect(&client(&qm, "APP.OTHER", "app")).await,
        ReasonCode::NotAuthorized,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chlauth_disabled_leaves_only_mcauser() {
    let qm = secured("CA.DISABLED");
    mqsc_ok(
        &qm,
        "ALTER QMGR CHLAUTH(DISABLED)\nALTER CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) MCAUSER('svc')",
    );
    connect(&client(&qm, "SYSTEM.DEF.SVRCONN", "root")).await;
    let conn = connect(&client(&qm, "APP.SVRCONN", "root")).await;
    let q = open(&conn, "APP.Q", IO).await;
    assert_eq!(put(&q, "x").await.user_identifier.as_str(), "svc");
}

#[test]
fn bad_records_are_refused_with_the_reason() {
    let qm = secured("CA.BADINPUT");
    let out = qm.mqsc(
        "SET CHLAUTH('APP.*') TYPE(ADDRESSMAP) ADDRESS('10.0.0.300') USERSRC(CHANNEL)\n\
         SET CHLAUTH('APP.*') TYPE(ADDRESSMAP) ADDRESS('*')\n\
         SET CHLAUTH('APP.*') TYPE(SSLPEERMAP) SSLPEER('CN=a*b') MCAUSER('x')\n\
         SET CHLAUTH('APP') TYPE(BLOCKADDR) ADDRLIST('10.*')\n\
         SET CHLAUTH('APP.*') TYPE(USERMAP) USERLIST('x')\n\
         SET CHLAUTH('APP.*') TYPE(BLOCKUSER) USERLIST('x') ACTION(REMOVE)\n\
         SET CHLAUTH('APP.*') TYPE(BLOCKUSER) ACTION(REMOVE)\n\
         DISPLAY CHLAUTH(APP.SVRCONN) MATCH(RUNCHECK) CLNTUSER('x')",
    );
    let text = stdout(&out);
    assert!(!out.status.success());
    assert!(text.contains("out of range"), "{text}");
    assert!(text.contains("USERSRC(MAP) requires MCAUSER"), "{text}");
    assert!(text.contains("wildcard"), "{text}");
    assert!(text.contains("its profile must be '*'"), "{text}");
    assert!(
        text.contains("USERLIST is not a valid keyword for SET CHLAUTH TYPE(USERMAP)"),
        "{text}"
    );
    assert!(
        text.contains(
            "USERLIST is not a valid keyword for SET CHLAUTH TYPE(BLOCKUSER) ACTION(REMOVE)"
        ),
        "{text}"
    );
    assert!(text.contains("FRY8884E"), "{text}");
    assert!(text.contains("needs ADDRESS"), "{text}");
    // Nothing was set.
    let shown = mqsc_ok(&qm, "DISPLAY CHLAUTH(*)");
    assert_eq!(shown.matches("FRY8878I").count(), 3, "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_manager_from_before_chlauth_keeps_admitting_its_clients() {
    let mut qm = secured("CA.MIGRATED");
    stop_qm(&mut qm);
    // Remove what this Ferry wrote: the records, as an earlier Ferry had none.
    let objects = qm.qm_dir().join("objects.json");
    let mut snapshot: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&objects).expect("objects.json"))
            .expect("json");
    snapshot
        .as_object_mut()
        .expect("object")
        .remove("chlauth")
        .expect("the snapshot has records");
    std::fs::write(&objects, serde_json::to_vec(&snapshot).expect("json")).expect("write");
    qm.launch();
    assert!(qm.error_log().contains("FRY7478W"), "{}", qm.error_log());
    let shown = mqsc_ok(&qm, "DISPLAY QMGR CHLAUTH\nDISPLAY CHLAUTH(*)");
    assert_eq!(
        attr(&shown, "CHLAUTH").as_deref(),
        Some("DISABLED"),
        "{shown}"
    );
    assert_eq!(shown.matches("FRY8878I").count(), 3, "{shown}");
    connect(&client(&qm, "SYSTEM.DEF.SVRCONN", "root")).await;
    // The migration happens once: enabling CHLAUTH lasts across a restart.
    mqsc_ok(&qm, "ALTER QMGR CHLAUTH(ENABLED)");
    stop_qm(&mut qm);
    qm.launch();
    let shown = mqsc_ok(&qm, "DISPLAY QMGR CHLAUTH");
    assert_eq!(
        attr(&shown, "CHLAUTH").as_deref(),
        Some("ENABLED"),
        "{shown}"
    );
    assert_eq!(
        qm.error_log().matches("FRY7478W:").count(),
        1,
        "{}",
        qm.error_log()
    );
}
