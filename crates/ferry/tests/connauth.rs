//! Connection authentication against a real queue manager process: the user repository
//! (`ferry user`), MQCSP user ids and passwords on client and bindings connections,
//! CHCKCLNT and CHCKLOCL, ADOPTCTX, bad and missing passwords, a flood of wrong ones while
//! other applications carry on, REFRESH SECURITY TYPE(CONNAUTH), and no password in any
//! log.

mod common;

use common::*;
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{OpenOptions, ReasonCode};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);
const ALICE_PASSWORD: &str = "correct horse battery staple";

/// A queue manager with MQ's security defaults, an application channel and queue, and
/// user alice in its repository.
fn secured(name: &str) -> TestQueueManager {
    let mut qm = TestQueueManager::create_with_mq_defaults(bin(), name);
    qm.launch();
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.Q)\nDEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)",
    );
    let out = qm.ferry_with_stdin(
        &["user", "add", name, "alice", "--group", "apps"],
        &format!("{ALICE_PASSWORD}\n"),
    );
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(
        stdout(&out).contains("REFRESH SECURITY TYPE(CONNAUTH)"),
        "the running queue manager is told: {}",
        stdout(&out)
    );
    qm
}

fn client(qm: &TestQueueManager, user: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), "APP.SVRCONN")
        .queue_manager(qm.name())
        .user_id(user)
        .sharecnv(1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_from_the_user_repository_lets_a_client_in() {
    let qm = secured("CN.GOOD");
    let listed = ferry_ok(&qm, &["user", "list", "CN.GOOD"]);
    assert!(listed.contains("USER(alice) GROUPS(apps)"), "{listed}");
    assert!(!listed.contains("argon2"), "never a hash: {listed}");

    // ADOPTCTX(NO), MQ's default: the password is checked, the asserted user id stays.
    let conn = connect(&client(&qm, "bob").credentials("alice", ALICE_PASSWORD)).await;
    let q = open(&conn, "APP.Q", IO).await;
    assert_eq!(put(&q, "m").await.user_identifier.as_str(), "bob");
    drop(q);
    conn.disconnect().await.expect("disconnect");

    // ADOPTCTX(YES): the user id the password proved is the connection's.
    let refreshed = mqsc_ok(
        &qm,
        "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) ADOPTCTX(YES)\n\
         REFRESH SECURITY TYPE(CONNAUTH)",
    );
    assert!(refreshed.contains("FRY8560I"), "{refreshed}");
    assert!(refreshed.contains("1 users"), "{refreshed}");
    let conn = connect(&client(&qm, "bob").credentials("alice", ALICE_PASSWORD)).await;
    let q = open(&conn, "APP.Q", IO).await;
    assert_eq!(put(&q, "m").await.user_identifier.as_str(), "alice");
    let shown = mqsc_ok(
        &qm,
        "DISPLAY CONN(*) WHERE(CHANNEL EQ 'APP.SVRCONN') USERID",
    );
    assert_eq!(attr(&shown, "USERID").as_deref(), Some("alice"), "{shown}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_unknown_and_missing_passwords_are_refused_and_never_logged() {
    let qm = secured("CN.BAD");
    let wrong = "Tr0ub4dor&3-not-it";
    assert_reason(
        Connection::connect(&client(&qm, "bob").credentials("alice", wrong)).await,
        ReasonCode::NotAuthorized,
    );
    assert_reason(
        Connection::connect(&client(&qm, "bob").credentials("mallory", wrong)).await,
        ReasonCode::NotAuthorized,
    );
    assert_reason(
        Connection::connect(&client(&qm, "bob").credentials("alice", "")).await,
        ReasonCode::NotAuthorized,
    );
    // CHCKCLNT(REQDADM), the default: an administrator must give a password; others need
    // not, but what they give is checked.
    assert_reason(
        Connection::connect(&client(&qm, "root")).await,
        ReasonCode::NotAuthorized,
    );
    connect(&client(&qm, "bob")).await;
    // CHCKCLNT(REQUIRED): everyone.
    mqsc_ok(
        &qm,
        "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) CHCKCLNT(REQUIRED)\n\
         REFRESH SECURITY TYPE(CONNAUTH)",
    );
    assert_reason(
        Connection::connect(&client(&qm, "bob")).await,
        ReasonCode::NotAuthorized,
    );
    connect(&client(&qm, "bob").credentials("alice", ALICE_PASSWORD)).await;

    let log = qm.error_log();
    let failed = log.lines().filter(|l| l.starts_with("FRY5534E:")).count();
    assert_eq!(failed, 3, "{log}");
    assert!(
        log.contains("not in the queue manager's user repository"),
        "{log}"
    );
    assert!(log.contains("the password is not the user's"), "{log}");
    assert_eq!(
        log.lines().filter(|l| l.starts_with("FRY5540E:")).count(),
        2,
        "{log}"
    );
    for secret in [wrong, ALICE_PASSWORD] {
        assert!(!log.contains(secret), "a password reached the error log");
        assert!(
            !qm.console().contains(secret),
            "a password reached the console"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_wrong_passwords_does_not_stop_other_applications() {
    let qm = secured("CN.FLOOD");
    let app = connect(&client(&qm, "bob")).await;
    let q = open(&app, "APP.Q", IO).await;
    let opts = client(&qm, "bob").credentials("alice", "guess");
    let guesses: Vec<_> = (0..24)
        .map(|_| {
            let opts = opts.clone();
            tokio::spawn(async move { Connection::connect(&opts).await.map(|_| ()) })
        })
        .collect();
    // Meanwhile the connected application works on: the checks run off the thread that
    // serves connections, one at a time.
    for i in 0..50 {
        put(&q, &format!("m{i}")).await;
        assert_eq!(get_text(&q).await, format!("m{i}"));
    }
    for g in guesses {
        assert_reason(g.await.expect("task"), ReasonCode::NotAuthorized);
    }
    // And the right password still works.
    connect(&client(&qm, "bob").credentials("alice", ALICE_PASSWORD)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_password_is_refused_before_any_work() {
    let qm = secured("CN.HUGE");
    let huge = "x".repeat(4096);
    let r = Connection::connect(&client(&qm, "bob").credentials("alice", &huge)).await;
    assert!(r.is_err(), "a 4 KiB password is refused");
    // The queue manager carries on.
    connect(&client(&qm, "bob").credentials("alice", ALICE_PASSWORD)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bindings_connections_follow_chcklocl_and_a_blank_connauth_checks_nothing() {
    let qm = secured("CN.LOCAL");
    // CHCKLOCL(OPTIONAL): no password is fine, a wrong one is not.
    connect(&qm.bindings().sharecnv(1)).await;
    assert_reason(
        Connection::connect(&qm.bindings().sharecnv(1).credentials("alice", "nope")).await,
        ReasonCode::NotAuthorized,
    );
    // CONNAUTH blank: nothing is checked, even a wrong password.
    mqsc_ok(
        &qm,
        "ALTER QMGR CONNAUTH(' ')\nREFRESH SECURITY TYPE(CONNAUTH)",
    );
    connect(&client(&qm, "bob").credentials("alice", "nope")).await;
    // An AUTHINFO object QMGR CONNAUTH names cannot be deleted.
    mqsc_ok(&qm, "ALTER QMGR CONNAUTH(SYSTEM.DEFAULT.AUTHINFO.IDPWOS)");
    let out = qm.mqsc("DELETE AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS)");
    assert!(!out.status.success(), "{}", stdout(&out));
}

#[test]
fn authinfo_objects_are_defined_displayed_and_refused_clearly() {
    let qm = secured("CN.MQSC");
    let out = mqsc_ok(
        &qm,
        "DEFINE AUTHINFO(APP.IDPW) AUTHTYPE(IDPWOS) CHCKCLNT(REQUIRED) FAILDLAY(2) DESCR('apps')\n\
         DISPLAY AUTHINFO(APP.*) ALL",
    );
    assert!(out.contains("FRY8563I"), "{out}");
    assert_eq!(attr(&out, "CHCKCLNT").as_deref(), Some("REQUIRED"), "{out}");
    assert_eq!(attr(&out, "CHCKLOCL").as_deref(), Some("OPTIONAL"), "{out}");
    assert_eq!(attr(&out, "FAILDLAY").as_deref(), Some("2"), "{out}");
    let bad = qm.mqsc(
        "DEFINE AUTHINFO(X) AUTHTYPE(CRLLDAP) CONNAME('ldap(389)')\n\
         DEFINE AUTHINFO(W) AUTHTYPE(IDPWLDAP) CONNAME('ldap(636)') AUTHORMD(SEARCHGRP)\n\
         DEFINE AUTHINFO(Y)\n\
         DEFINE AUTHINFO(Z) AUTHTYPE(IDPWOS) FAILDLAY(61)\n\
         ALTER AUTHINFO(APP.IDPW) AUTHTYPE(IDPWOS) CHCKCLNT(SOMETIMES)",
    );
    let text = stdout(&bad);
    assert!(text.contains("FRY9002E"), "CRLLDAP comes later: {text}");
    assert!(
        text.contains("BASEDNG"),
        "groups are searched for under BASEDNG: {text}"
    );
    assert!(text.contains("needs AUTHTYPE"), "{text}");
    assert!(text.contains("FAILDLAY"), "{text}");
    assert!(text.contains("CHCKCLNT"), "{text}");
    let after = mqsc_ok(&qm, "DISPLAY AUTHINFO(*)");
    assert_eq!(after.matches("FRY8566I").count(), 2, "{after}");
}

/// A host user (made here with useradd and chpasswd, as root) is checked through PAM
/// service `ferry` when the repository does not hold it. Needs root and the shadow tools;
/// without them the test says why and checks nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_users_are_checked_through_pam() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: creating a host user and /etc/pam.d/ferry needs root");
        return;
    }
    let run = |cmd: &str, args: &[&str], input: Option<&str>| {
        let mut child = match std::process::Command::new(cmd)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return Err(format!("{cmd}: {e}")),
        };
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            use std::io::Write;
            let _ = stdin.write_all(text.as_bytes());
        }
        match child.wait() {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("{cmd} {args:?}: {s}")),
            Err(e) => Err(format!("{cmd}: {e}")),
        }
    };
    let user = "ferrypamtest";
    let password = "H0st-Pa55-word";
    let made = run("id", &[user], None)
        .or_else(|_| run("useradd", &["-M", "-s", "/usr/sbin/nologin", user], None))
        .and_then(|()| run("chpasswd", &[], Some(&format!("{user}:{password}\n"))));
    if let Err(why) = made {
        eprintln!("skipped: cannot make host user {user} ({why})");
        return;
    }
    let service = std::path::Path::new("/etc/pam.d/ferry");
    if !service.exists() {
        std::fs::write(service, "@include common-auth\n@include common-account\n")
            .expect("write /etc/pam.d/ferry");
    }
    let qm = secured("CN.HOST");
    mqsc_ok(
        &qm,
        "ALTER AUTHINFO(SYSTEM.DEFAULT.AUTHINFO.IDPWOS) AUTHTYPE(IDPWOS) ADOPTCTX(YES)\n\
         REFRESH SECURITY TYPE(CONNAUTH)",
    );
    let conn = connect(&client(&qm, "bob").credentials(user, password)).await;
    let q = open(&conn, "APP.Q", IO).await;
    assert_eq!(put(&q, "host").await.user_identifier.as_str(), user);
    assert_reason(
        Connection::connect(&client(&qm, "bob").credentials(user, "not-the-password")).await,
        ReasonCode::NotAuthorized,
    );
    let log = qm.error_log();
    assert!(log.contains("PAM service 'ferry'"), "{log}");
    assert!(!log.contains(password), "a password reached the error log");
}
