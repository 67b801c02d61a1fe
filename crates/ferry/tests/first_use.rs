//! What a new user meets first, against real processes: a start whose ports are taken
//! (said on the terminal, exit 10, the queue manager running on), output into a closed
//! pipe (ended quietly, as Unix tools end), dspmq's `-o` views and how a queue manager
//! ended, dspmqver, and the MQSC answers runmqsc users rely on: PING QMGR, DISPLAY
//! QSTATUS TYPE(HANDLE) with no handles, WHERE showing the attribute it filters on, and
//! SVRCONN channel instances in DISPLAY CHSTATUS and DISPLAY CONN (USERID and PID
//! filled in even for a client whose environment names no user).

mod common;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use common::*;
use ferry_mqi::OpenOptions;

/// A port held by this test on every interface, as a queue manager's listener binds it.
fn taken_port() -> std::net::TcpListener {
    std::net::TcpListener::bind("0.0.0.0:0").expect("bind a port")
}

#[test]
fn a_start_whose_ports_are_taken_says_so_exits_10_and_runs_on() {
    let qm = start("FU.HOST");
    let mq_port = taken_port();
    let amqp_port = taken_port();
    let port = mq_port.local_addr().unwrap().port().to_string();
    let amqp = amqp_port.local_addr().unwrap().port().to_string();
    let guard = BackgroundQm {
        dir: qm_dir_in(&qm, "FU.BUSY"),
    };

    // The developer configuration's web server (9443 by default) on a port of its own.
    let web = free_port().to_string();
    let out = qm.ferry(&[
        "start",
        "FU.BUSY",
        "--create",
        "-p",
        &port,
        "--amqp-port",
        &amqp,
        "--web-port",
        &web,
    ]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(10), "{}{err}", stdout(&out));
    // The terminal says which listener, which port, and why, with the message ids.
    let listener = err
        .lines()
        .find(|l| l.starts_with("FRY9212E"))
        .unwrap_or_else(|| panic!("no FRY9212E on stderr: {err}"));
    assert!(listener.contains("SYSTEM.LISTENER.TCP.1"), "{listener}");
    assert!(listener.contains(&port), "{listener}");
    assert!(listener.contains("in use"), "{listener}");
    let channel = err
        .lines()
        .find(|l| l.starts_with("FRY9213E"))
        .unwrap_or_else(|| panic!("no FRY9213E on stderr: {err}"));
    assert!(channel.contains("SYSTEM.DEF.AMQP"), "{channel}");
    assert!(channel.contains(&amqp), "{channel}");
    assert!(err.contains("FRY9214W"), "{err}");
    assert!(guard.pid().is_some(), "the queue manager runs on");

    // As MQ's: the queue manager runs without the listener; once the port is free,
    // START LISTENER puts it right.
    let line = ferry_ok(&qm, &["dspmq", "-m", "FU.BUSY"]);
    assert_eq!(attr(&line, "STATUS").as_deref(), Some("Running"), "{line}");
    assert_eq!(attr(&line, "LISTENERS").as_deref(), Some(""), "{line}");
    drop(mq_port);
    let out = qm.ferry_with_stdin(
        &["mqsc", "FU.BUSY"],
        "START LISTENER(SYSTEM.LISTENER.TCP.1)\n",
    );
    assert!(out.status.success(), "{}", stdout(&out));
    let line = ferry_ok(&qm, &["dspmq", "-m", "FU.BUSY"]);
    assert_eq!(attr(&line, "LISTENERS"), Some(port.clone()), "{line}");

    // A start with every port free prints nothing on stderr and exits 0.
    ferry_ok(&qm, &["stop", "FU.BUSY"]);
    drop(amqp_port);
    let out = qm.ferry(&["start", "FU.BUSY"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    ferry_ok(&qm, &["stop", "FU.BUSY"]);
}

/// Runs `ferry ARGS` (with `input` on stdin) writing into a pipe nobody reads any more.
fn into_closed_pipe(qm: &TestQueueManager, args: &[&str], input: &str) -> std::process::Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(bin())
        .args(args)
        .env("FERRY_HOME", qm.home())
        .stdin(Stdio::piped())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry");
    // The command may end before reading its input: a failed write here is expected.
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    child.wait_with_output().expect("ferry ends")
}

#[test]
fn every_command_ends_quietly_on_a_closed_pipe() {
    let qm = start("FU.PIPE");
    let commands: [&[&str]; 6] = [
        &["dspmq"],
        &["status", "FU.PIPE", "-o", "all"],
        &["dspmqver"],
        &["runmqsc", "FU.PIPE"],
        &["perf", "suite", "standard", "--list"],
        &["stop", "NOT.THERE"],
    ];
    for args in commands {
        let out = into_closed_pipe(&qm, args, "DISPLAY QUEUE(*)\n");
        let err = stderr(&out);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        if args[0] == "stop" {
            // A failure says so on stderr and exits with its status, pipe or not.
            assert!(err.contains("FRY8118E"), "{err}");
            assert!(!out.status.success());
        } else {
            // As `ls | true` ends: by SIGPIPE, not exit 101.
            assert_eq!(out.status.signal(), Some(libc::SIGPIPE), "{args:?}: {err}");
        }
    }
}

#[test]
fn dspmq_shows_mq_views_and_how_the_queue_manager_ended() {
    let mut qm = start("FU.ENDS");
    let plain = ferry_ok(&qm, &["dspmq", "-m", "FU.ENDS", "-o", "status"]);
    assert_eq!(
        plain.split_whitespace().collect::<Vec<_>>(),
        ["QMNAME(FU.ENDS)", "STATUS(Running)"],
        "{plain}"
    );
    let all = ferry_ok(&qm, &["dspmq", "-m", "FU.ENDS", "-o", "all"]);
    assert_eq!(attr(&all, "STATUS").as_deref(), Some("Running"), "{all}");
    assert_eq!(attr(&all, "DEFAULT").as_deref(), Some("no"), "{all}");
    assert_eq!(
        attr(&all, "STANDBY").as_deref(),
        Some("Not permitted"),
        "{all}"
    );
    assert_eq!(attr(&all, "INSTNAME").as_deref(), Some("Ferry"), "{all}");
    assert_eq!(
        attr(&all, "INSTVER").as_deref(),
        Some(env!("CARGO_PKG_VERSION")),
        "{all}"
    );
    assert_eq!(attr(&all, "PID"), qm.pid().map(|p| p.to_string()), "{all}");
    let inst = ferry_ok(&qm, &["dspmq", "-o", "installation"]);
    let bin_dir = bin().parent().unwrap().display().to_string();
    assert_eq!(attr(&inst, "INSTPATH"), Some(bin_dir), "{inst}");

    // An immediate stop is "Ended immediately", a controlled one "Ended normally".
    ferry_ok(&qm, &["stop", "-i", "FU.ENDS"]);
    qm.wait_exit(DEADLINE).expect("ended");
    let line = ferry_ok(&qm, &["dspmq", "-m", "FU.ENDS"]);
    assert_eq!(
        attr(&line, "STATUS").as_deref(),
        Some("Ended immediately"),
        "{line}"
    );
    qm.launch();
    let line = ferry_ok(&qm, &["dspmq", "-m", "FU.ENDS"]);
    assert_eq!(attr(&line, "STATUS").as_deref(), Some("Running"), "{line}");
    stop_qm(&mut qm);
    let line = ferry_ok(&qm, &["dspmq", "-m", "FU.ENDS"]);
    assert_eq!(
        attr(&line, "STATUS").as_deref(),
        Some("Ended normally"),
        "{line}"
    );
}

#[test]
fn dspmqver_names_the_version_and_installation() {
    let qm = start("FU.VER");
    for command in ["dspmqver", "version"] {
        let text = ferry_ok(&qm, &[command]);
        let value = |label: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{label}:")))
                .map(|v| v.trim().to_string())
        };
        assert_eq!(value("Name").as_deref(), Some("Ferry"), "{text}");
        assert_eq!(
            value("Version").as_deref(),
            Some(env!("CARGO_PKG_VERSION")),
            "{text}"
        );
        assert_eq!(
            value("DataPath"),
            Some(qm.home().display().to_string()),
            "{text}"
        );
        assert_eq!(
            value("InstPath"),
            Some(bin().parent().unwrap().display().to_string()),
            "{text}"
        );
    }
}

#[test]
fn ping_qmgr_answers_and_an_empty_handle_list_is_not_a_failure() {
    let qm = start("FU.PING");
    let text = mqsc_ok(&qm, "PING QMGR");
    assert!(
        text.contains("FRY8415I: Ping Ferry queue manager command complete."),
        "{text}"
    );
    // IBM's container scripts list a queue's handles before acting on it: with none open
    // runmqsc prints nothing for it and exits 0.
    mqsc_ok(&qm, "DEFINE QLOCAL(FU.Q)");
    let text = mqsc_ok(&qm, "DISPLAY QSTATUS(FU.Q) TYPE(HANDLE)");
    assert!(!text.contains("FRY8420I"), "{text}");
    assert!(attrs(&text, "QUEUE").is_empty(), "{text}");
    // A queue that does not exist still fails.
    let text = mqsc_exit(&qm, "DISPLAY QSTATUS(FU.NOT.THERE) TYPE(HANDLE)", 10);
    assert!(text.contains("FRY8147E"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn where_shows_its_attribute_and_svrconn_instances_are_shown() {
    let qm = start("FU.CHS");
    mqsc_ok(&qm, "DEFINE QLOCAL(FU.FULL)\nDEFINE QLOCAL(FU.EMPTY)");
    let conn = connect(&qm.client().user_id("fuser")).await;
    let q = open(&conn, "FU.FULL", OpenOptions::OUTPUT).await;
    put(&q, "one").await;

    let text = mqsc_ok(&qm, "DISPLAY QLOCAL(FU.*) WHERE(CURDEPTH GT 0)");
    assert_eq!(attrs(&text, "QUEUE"), ["FU.FULL"], "{text}");
    assert_eq!(attr(&text, "CURDEPTH").as_deref(), Some("1"), "{text}");

    // The client's channel instance, by the channel's name and by type.
    for command in [
        "DISPLAY CHSTATUS(SYSTEM.DEF.SVRCONN)",
        "DISPLAY CHSTATUS(*) CHLTYPE(SVRCONN)",
    ] {
        let text = mqsc_ok(&qm, command);
        assert_eq!(attrs(&text, "CHANNEL"), ["SYSTEM.DEF.SVRCONN"], "{text}");
        assert_eq!(attr(&text, "CHLTYPE").as_deref(), Some("SVRCONN"), "{text}");
        assert_eq!(attr(&text, "STATUS").as_deref(), Some("RUNNING"), "{text}");
        assert!(
            attr(&text, "CONNAME").is_some_and(|c| c.starts_with("127.0.0.1")),
            "{text}"
        );
    }
    // Its connection shows who and which process serves it: the user the client sent and,
    // as MQ shows its channel process for a client, the queue manager's pid.
    let text = mqsc_ok(
        &qm,
        "DISPLAY CONN(*) WHERE(CHANNEL EQ SYSTEM.DEF.SVRCONN) USERID PID",
    );
    assert_eq!(
        attr(&text, "PID"),
        qm.pid().map(|p| p.to_string()),
        "{text}"
    );
    assert_eq!(attr(&text, "USERID").as_deref(), Some("fuser"), "{text}");
    drop(q);
    conn.disconnect().await.unwrap();
}

#[test]
fn a_client_without_user_in_its_environment_presents_its_os_user() {
    let qm = start("FU.USER");
    let os_user = Command::new("id").arg("-un").output().expect("id -un");
    let os_user = String::from_utf8_lossy(&os_user.stdout).trim().to_string();
    // Containers and services often set no USER or LOGNAME.
    let mut child = Command::new(bin())
        .args(["runmqsc", "FU.USER"])
        .env("FERRY_HOME", qm.home())
        .env_remove("USER")
        .env_remove("LOGNAME")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"DISPLAY CONN(*) WHERE(APPLTAG EQ 'ferry mqsc') USERID\n")
        .unwrap();
    let out = child.wait_with_output().expect("ferry ends");
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let users = attrs(&text, "USERID");
    assert!(!users.is_empty(), "{text}");
    assert!(users.iter().all(|u| *u == os_user), "{os_user}: {text}");
}

/// The README's first command: a queue manager applications reach at once, on the
/// developer channels, as user 'app', and nowhere else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_create_gives_developers_a_channel_and_queues_and_nothing_more() {
    let qm = start("FU.HOST2");
    let (port, amqp) = (free_port().to_string(), free_port().to_string());
    let guard = BackgroundQm {
        dir: qm_dir_in(&qm, "FU.DEV"),
    };
    let web = free_port().to_string();
    let out = qm.ferry(&[
        "start",
        "FU.DEV",
        "--create",
        "-p",
        &port,
        "--amqp-port",
        &amqp,
        "--web-port",
        &web,
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("DEV.APP.SVRCONN"), "{text}");
    assert!(guard.pid().is_some());
    // The generated password of the application user is printed once.
    let password = text
        .lines()
        .find_map(|l| l.strip_prefix("Password of 'app': "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no password printed: {text}"))
        .to_string();
    let conname = format!("127.0.0.1({port})");
    let channel = |user: &str| {
        ferry_client::ConnectOptions::client(&conname, "DEV.APP.SVRCONN")
            .queue_manager("FU.DEV")
            .user_id(user)
            .sharecnv(1)
    };
    // Without the password the application channel refuses, whoever asks.
    assert_reason(
        ferry_client::Connection::connect(&channel("app")).await,
        ferry_mqi::ReasonCode::NotAuthorized,
    );
    let app = channel("root").credentials("app", &password);
    let conn = connect(&app).await;
    let q = open(
        &conn,
        "DEV.QUEUE.1",
        OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED),
    )
    .await;
    let md = put(&q, "hello developer").await;
    assert_eq!(md.user_identifier.as_str(), "app", "the channel's MCAUSER");
    assert_eq!(get_text(&q).await, "hello developer");
    drop(q);
    // 'app' may use the DEV queues and nothing else: MQ's developer grants.
    let od = ferry_mqi::ObjectDescriptor::queue("SYSTEM.DEFAULT.LOCAL.QUEUE").expect("name");
    assert_reason(
        conn.open(&od, OpenOptions::OUTPUT).await,
        ferry_mqi::ReasonCode::NotAuthorized,
    );
    let refused = conn
        .mqsc("DEFINE QLOCAL(APP.OWN)")
        .await
        .expect("mqsc answers");
    assert!(refused.failed, "{:?}", refused.lines);
    assert!(
        refused.lines.iter().any(|l| l.starts_with("FRY8135E")),
        "{:?}",
        refused.lines
    );
    drop(conn);
    // The system channel stays closed, as on any new queue manager.
    let system = ferry_client::ConnectOptions::client(&conname, "SYSTEM.DEF.SVRCONN")
        .queue_manager("FU.DEV")
        .user_id("app")
        .sharecnv(1);
    assert_reason(
        ferry_client::Connection::connect(&system).await,
        ferry_mqi::ReasonCode::NotAuthorized,
    );
    // The configuration is a script, run again at every start without a failure.
    let script = guard.dir.join("autocfg").join("10-developer.mqsc");
    assert!(std::fs::read_to_string(&script)
        .expect("script")
        .contains("DEV.APP.SVRCONN"));
    ferry_ok(&qm, &["stop", "FU.DEV"]);
    ferry_ok(&qm, &["start", "FU.DEV"]);
    let log = std::fs::read_to_string(guard.dir.join("errors").join("FRYERR01.LOG")).expect("log");
    let entries = |id: &str| log.lines().filter(|l| l.starts_with(id)).count();
    assert_eq!(entries("FRY8950I:"), 2, "{log}");
    assert!(log.contains("commands, 0 failed"), "{log}");
    assert_eq!(entries("FRY8951E:"), 0, "{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("FRY8077W:") && l.contains("SYSTEM.DEFAULT.LOCAL.QUEUE")),
        "the refusal is in the error log: {log}"
    );
    ferry_ok(&qm, &["stop", "FU.DEV"]);
}
