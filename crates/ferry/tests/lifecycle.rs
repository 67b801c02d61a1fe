//! Queue manager lifecycle through the `ferry` control commands, against real processes:
//! create (system objects, listener), start/status/stop/delete and their MQ aliases
//! (crtmqm, strmqm, dspmq, endmqm, dltmqm, runmqsc), name validation, two queue managers
//! side by side, definitions surviving a restart and a kill -9, controlled and immediate
//! stops as connected applications see them, a bad qm.ini value, and the error log.

mod common;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use ferry_mqi::{GetOptionFlags, OpenOptions, ReasonCode};

/// Creates and starts (in the background) another queue manager in `qm`'s FERRY_HOME,
/// using the given command names (`create`/`crtmqm`, `start`/`strmqm`).
fn background_qm(
    qm: &TestQueueManager,
    name: &str,
    port: u16,
    create: &str,
    start: &str,
) -> BackgroundQm {
    ferry_ok(qm, &[create, name, "-p", &port.to_string()]);
    let guard = BackgroundQm {
        dir: qm_dir_in(qm, name),
    };
    let started = ferry_ok(qm, &[start, name]);
    assert!(started.contains("FRY8003I"), "{started}");
    assert!(guard.pid().is_some(), "no running pid after start");
    guard
}

#[test]
fn create_defines_system_objects_and_a_listener() {
    let qm = start("LC.CREATE");
    let text = mqsc_ok(
        &qm,
        "DISPLAY QUEUE(*)\nDISPLAY CHANNEL(*)\nDISPLAY LISTENER(*)",
    );
    for q in [
        "SYSTEM.DEFAULT.LOCAL.QUEUE",
        "SYSTEM.DEFAULT.MODEL.QUEUE",
        "SYSTEM.DEFAULT.ALIAS.QUEUE",
        "SYSTEM.DEAD.LETTER.QUEUE",
        "SYSTEM.ADMIN.COMMAND.QUEUE",
        "SYSTEM.ADMIN.STATISTICS.QUEUE",
        "SYSTEM.CHANNEL.SYNCQ",
        "SYSTEM.CHANNEL.INITQ",
    ] {
        assert!(attrs(&text, "QUEUE").iter().any(|n| n == q), "{q}: {text}");
    }
    assert_eq!(
        attrs(&text, "CHANNEL"),
        [
            "SYSTEM.DEF.AMQP",
            "SYSTEM.DEF.CLUSRCVR",
            "SYSTEM.DEF.CLUSSDR",
            "SYSTEM.DEF.RECEIVER",
            "SYSTEM.DEF.REQUESTER",
            "SYSTEM.DEF.SENDER",
            "SYSTEM.DEF.SERVER",
            "SYSTEM.DEF.SVRCONN",
        ],
        "{text}"
    );
    let model = mqsc_ok(&qm, "DISPLAY QUEUE(SYSTEM.DEFAULT.MODEL.QUEUE) TYPE");
    assert_eq!(attr(&model, "TYPE").as_deref(), Some("QMODEL"), "{model}");
    let chl = mqsc_ok(&qm, "DISPLAY CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE");
    assert_eq!(attr(&chl, "CHLTYPE").as_deref(), Some("SVRCONN"), "{chl}");
    let amqp = mqsc_ok(&qm, "DISPLAY CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE PORT");
    assert_eq!(attr(&amqp, "CHLTYPE").as_deref(), Some("AMQP"), "{amqp}");
    assert_eq!(
        attr(&amqp, "PORT"),
        Some(qm.amqp_port().to_string()),
        "{amqp}"
    );
    let lst = mqsc_ok(&qm, "DISPLAY LISTENER(SYSTEM.LISTENER.TCP.1) PORT CONTROL");
    assert_eq!(attr(&lst, "PORT"), Some(qm.port().to_string()), "{lst}");
    assert_eq!(attr(&lst, "CONTROL").as_deref(), Some("QMGR"), "{lst}");
    let qmgr = mqsc_ok(&qm, "DISPLAY QMGR DEADQ");
    assert_eq!(
        attr(&qmgr, "DEADQ").as_deref(),
        Some("SYSTEM.DEAD.LETTER.QUEUE"),
        "{qmgr}"
    );
    // Creating it again is refused and changes nothing.
    let again = qm.ferry(&["create", "LC.CREATE", "-p", "1"]);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("FRY8110E"), "{}", stderr(&again));
}

#[test]
fn status_shows_running_with_pid_and_port() {
    let qm = start("LC.STATUS");
    let pid = qm.pid().expect("running");
    for args in [
        &["status", "LC.STATUS"][..],
        &["dspmq", "-m", "LC.STATUS"][..],
        &["status"][..],
    ] {
        let line = ferry_ok(&qm, args);
        assert!(line.contains("QMNAME(LC.STATUS)"), "{args:?}: {line}");
        assert_eq!(attr(&line, "STATUS").as_deref(), Some("Running"), "{line}");
        assert_eq!(attr(&line, "PID"), Some(pid.to_string()), "{line}");
        assert_eq!(
            attr(&line, "LISTENERS"),
            Some(qm.port().to_string()),
            "{line}"
        );
    }
    let unknown = qm.ferry(&["status", "NO.SUCH.QM"]);
    assert!(!unknown.status.success());
    assert!(
        stderr(&unknown).contains("FRY8118E"),
        "{}",
        stderr(&unknown)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_start_is_refused_and_the_first_keeps_running() {
    let qm = start("LC.TWICE");
    let pid = qm.pid().expect("running");
    let out = qm.ferry(&["start", "LC.TWICE"]);
    assert!(!out.status.success(), "second start succeeded");
    let err = stderr(&out);
    assert!(err.contains("FRY8041E"), "{err}");
    assert!(
        err.contains(&pid.to_string()),
        "names the running pid: {err}"
    );
    // Also with --foreground, which would otherwise take the sockets over.
    let fg = qm.ferry(&["start", "LC.TWICE", "--foreground"]);
    assert!(!fg.status.success(), "foreground second start succeeded");
    assert!(stderr(&fg).contains("FRY8041E"), "{}", stderr(&fg));
    // The first one still serves clients.
    mqsc_ok(&qm, "DEFINE QLOCAL(Q1)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q1", OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED).await;
    put(&q, "still here").await;
    assert_eq!(get_text(&q).await, "still here");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mq_control_command_aliases_work() {
    let qm = start("LC.HOST");
    let port = free_port();
    let guard = background_qm(&qm, "LC.ALIASES", port, "crtmqm", "strmqm");
    let line = ferry_ok(&qm, &["dspmq", "-m", "LC.ALIASES"]);
    assert_eq!(attr(&line, "STATUS").as_deref(), Some("Running"), "{line}");
    assert_eq!(attr(&line, "LISTENERS"), Some(port.to_string()), "{line}");

    // A queue manager made by crtmqm has MQ's CHLAUTH defaults and checks authorities:
    // clients use a channel of their own, as a user that is not an administrator and has
    // been granted what it uses.
    let out = qm.ferry_with_stdin(
        &["runmqsc", "LC.ALIASES"],
        "DEFINE QLOCAL(ALIASED.Q)\nDEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)\n",
    );
    assert!(out.status.success(), "{}", stdout(&out));
    assert!(stdout(&out).contains("FRY8006I"), "{}", stdout(&out));
    grant_app(&qm, "LC.ALIASES", "ALIASED.Q");

    let opts = ferry_client::ConnectOptions::client(&format!("127.0.0.1({port})"), "APP.SVRCONN")
        .queue_manager("LC.ALIASES")
        .user_id("app");
    let conn = connect(&opts).await;
    let q = open(&conn, "ALIASED.Q", OpenOptions::OUTPUT).await;
    put(&q, "m").await;
    conn.disconnect().await.unwrap();

    let ended = ferry_ok(&qm, &["endmqm", "LC.ALIASES"]);
    assert!(ended.contains("FRY8004I"), "{ended}");
    assert!(guard.pid().is_none(), "process still alive after endmqm");
    let line = ferry_ok(&qm, &["dspmq", "-m", "LC.ALIASES"]);
    assert!(line.contains("STATUS(Ended"), "{line}");

    let deleted = ferry_ok(&qm, &["dltmqm", "LC.ALIASES"]);
    assert!(deleted.contains("FRY8002I"), "{deleted}");
    assert!(!guard.dir.exists(), "directory left behind");
}

#[test]
fn invalid_queue_manager_names_are_refused_clearly() {
    let qm = start("LC.NAMES");
    let long = "Q".repeat(49);
    for bad in ["bad name", "QM#1", "QM-1", "ä", "", long.as_str()] {
        let out = qm.ferry(&["create", bad, "-p", "1"]);
        assert!(!out.status.success(), "'{bad}' accepted");
        let err = stderr(&out);
        assert!(err.contains("FRY8117E"), "'{bad}': {err}");
        assert!(
            err.contains(&format!("'{bad}'")),
            "names the bad name: {err}"
        );
        assert!(err.contains("not a valid queue manager name"), "{err}");
    }
    let names: Vec<String> = std::fs::read_dir(qm.home().join("qmgrs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["LC.NAMES"], "nothing else was created");
    // The longest valid name and every allowed character work.
    let ok = format!("a.b/c_d%E9{}", "Z".repeat(38));
    assert_eq!(ok.len(), 48);
    ferry_ok(&qm, &["create", &ok, "-p", "1"]);
    ferry_ok(&qm, &["delete", &ok]);
}

#[test]
fn path_like_names_stay_inside_their_own_directory() {
    let qm = start("LC.PATHS");
    for name in ["..", ".", "A/B"] {
        ferry_ok(&qm, &["create", name, "-p", "1"]);
    }
    // The data root itself was not taken over by '..' or '.'.
    assert!(!qm.home().join("qm.ini").exists());
    assert!(!qm.home().join("qmgrs").join("qm.ini").exists());
    let status = ferry_ok(&qm, &["status"]);
    for name in ["QMNAME(..)", "QMNAME(.)", "QMNAME(A/B)", "QMNAME(LC.PATHS)"] {
        assert!(status.contains(name), "{name}: {status}");
    }
    for name in ["..", ".", "A/B"] {
        let deleted = ferry_ok(&qm, &["delete", name]);
        assert!(deleted.contains("FRY8002I"), "{deleted}");
    }
    // Deleting them removed only their own data.
    assert!(qm.qm_dir().join("qm.ini").exists(), "LC.PATHS survived");
    let names: Vec<String> = std::fs::read_dir(qm.home().join("qmgrs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["LC.PATHS"]);
    mqsc_ok(&qm, "DISPLAY QMGR");
}

/// Lets user 'app' (added to queue manager `qmgr`'s repository) connect and use `queue`:
/// a queue manager made by `ferry create` grants nothing to anyone but administrators.
fn grant_app(host: &TestQueueManager, qmgr: &str, queue: &str) {
    let out = host.ferry_with_stdin(&["user", "add", qmgr, "app"], "app-password\n");
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let out = host.ferry_with_stdin(
        &["mqsc", qmgr],
        &format!(
            "SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('app') AUTHADD(CONNECT)\n\
             SET AUTHREC PROFILE({queue}) OBJTYPE(QUEUE) PRINCIPAL('app') AUTHADD(ALLMQI)"
        ),
    );
    assert!(out.status.success(), "{}", stdout(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_queue_managers_run_side_by_side() {
    let qm1 = start("LC.SIDE1");
    let port2 = free_port();
    let qm2 = background_qm(&qm1, "LC.SIDE2", port2, "create", "start");
    mqsc_ok(&qm1, "DEFINE QLOCAL(SHARED.NAME)");
    let out = qm1.ferry_with_stdin(
        &["mqsc", "LC.SIDE2"],
        "DEFINE QLOCAL(SHARED.NAME)\nDEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN)",
    );
    assert!(out.status.success(), "{}", stdout(&out));
    grant_app(&qm1, "LC.SIDE2", "SHARED.NAME");

    let status = ferry_ok(&qm1, &["status"]);
    assert_eq!(status.matches("STATUS(Running)").count(), 2, "{status}");

    let c1 = connect(&qm1.client()).await;
    let opts2 = ferry_client::ConnectOptions::client(&format!("127.0.0.1({port2})"), "APP.SVRCONN")
        .queue_manager("LC.SIDE2")
        .user_id("app");
    let c2 = connect(&opts2).await;
    assert_eq!(c1.queue_manager_name(), "LC.SIDE1");
    assert_eq!(c2.queue_manager_name(), "LC.SIDE2");
    // Bindings sockets are separate too.
    let b2 = connect(&ferry_client::ConnectOptions::bindings(
        qm2.dir.join("qm.sock"),
    ))
    .await;
    assert_eq!(b2.queue_manager_name(), "LC.SIDE2");

    let rw = OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED;
    let q1 = open(&c1, "SHARED.NAME", rw).await;
    let q2 = open(&c2, "SHARED.NAME", rw).await;
    put(&q1, "for one").await;
    put(&q2, "for two").await;
    assert_eq!(get_text(&q1).await, "for one");
    assert_eq!(get_text(&q2).await, "for two");
    assert_reason(get(&q1).await, ReasonCode::NoMsgAvailable);
    assert_reason(get(&q2).await, ReasonCode::NoMsgAvailable);
    for c in [c1, c2, b2] {
        c.disconnect().await.unwrap();
    }
    ferry_ok(&qm1, &["stop", "LC.SIDE2"]);
    assert!(qm2.pid().is_none());
    // Stopping one leaves the other running.
    let line = ferry_ok(&qm1, &["status", "LC.SIDE1"]);
    assert_eq!(attr(&line, "STATUS").as_deref(), Some("Running"), "{line}");
}

const DEFINITIONS: &str = "\
DEFINE QLOCAL(KEEP.Q) MAXDEPTH(123) DESCR('kept across restarts') MSGDLVSQ(FIFO)
DEFINE QALIAS(KEEP.ALIAS) TARGET(KEEP.Q)
DEFINE QMODEL(KEEP.MODEL) DEFTYPE(PERMDYN)
DEFINE CHANNEL(KEEP.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(3)
DEFINE LISTENER(KEEP.LSTR) TRPTYPE(TCP) PORT(1) CONTROL(MANUAL)
ALTER QMGR DESCR('restart test') MAXUMSGS(77)
";

#[track_caller]
fn assert_definitions(qm: &TestQueueManager) {
    let q = mqsc_ok(qm, "DISPLAY QLOCAL(KEEP.Q) MAXDEPTH DESCR MSGDLVSQ");
    assert_eq!(attr(&q, "MAXDEPTH").as_deref(), Some("123"), "{q}");
    assert_eq!(
        attr(&q, "DESCR").as_deref(),
        Some("kept across restarts"),
        "{q}"
    );
    assert_eq!(attr(&q, "MSGDLVSQ").as_deref(), Some("FIFO"), "{q}");
    let a = mqsc_ok(qm, "DISPLAY QALIAS(KEEP.ALIAS) TARGET");
    assert_eq!(attr(&a, "TARGET").as_deref(), Some("KEEP.Q"), "{a}");
    let m = mqsc_ok(qm, "DISPLAY QMODEL(KEEP.MODEL) DEFTYPE");
    assert_eq!(attr(&m, "DEFTYPE").as_deref(), Some("PERMDYN"), "{m}");
    let c = mqsc_ok(qm, "DISPLAY CHANNEL(KEEP.SVRCONN) SHARECNV");
    assert_eq!(attr(&c, "SHARECNV").as_deref(), Some("3"), "{c}");
    let l = mqsc_ok(qm, "DISPLAY LISTENER(KEEP.LSTR) PORT");
    assert_eq!(attr(&l, "PORT").as_deref(), Some("1"), "{l}");
    let m = mqsc_ok(qm, "DISPLAY QMGR DESCR MAXUMSGS");
    assert_eq!(attr(&m, "MAXUMSGS").as_deref(), Some("77"), "{m}");
    assert_eq!(attr(&m, "DESCR").as_deref(), Some("restart test"), "{m}");
}

#[test]
fn definitions_survive_a_restart_and_a_kill_9() {
    let mut qm = start("LC.PERSIST");
    mqsc_ok(&qm, DEFINITIONS);
    assert_definitions(&qm);

    ferry_ok(&qm, &["stop", "LC.PERSIST"]);
    let exit = qm.wait_exit(DEADLINE).expect("process ended");
    assert!(exit.success(), "controlled stop exit: {exit}");
    qm.launch();
    assert_definitions(&qm);

    // A change after the restart, then a crash: the change was saved when made.
    mqsc_ok(
        &qm,
        "ALTER QLOCAL(KEEP.Q) MAXDEPTH(456)\nDELETE QALIAS(KEEP.ALIAS)",
    );
    qm.kill9();
    let status = qm.ferry(&["status", qm.name()]);
    assert!(
        stdout(&status).contains("STATUS(Ended unexpectedly)"),
        "dspmq's word for a crash: {}",
        stdout(&status)
    );
    qm.launch();
    let q = mqsc_ok(&qm, "DISPLAY QLOCAL(KEEP.Q) MAXDEPTH");
    assert_eq!(attr(&q, "MAXDEPTH").as_deref(), Some("456"), "{q}");
    let gone = qm.mqsc("DISPLAY QALIAS(KEEP.ALIAS)");
    assert!(stdout(&gone).contains("FRY8147E"), "{}", stdout(&gone));
}

fn spawn_ferry(qm: &TestQueueManager, args: &[&str]) -> std::process::Child {
    Command::new(bin())
        .args(args)
        .env("FERRY_HOME", qm.home())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferry")
}

fn wait_child(child: &mut std::process::Child, what: &str) -> std::process::ExitStatus {
    let mut status = None;
    wait_until(what, || {
        status = child.try_wait().expect("try_wait");
        status.is_some()
    });
    status.expect("exited")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controlled_stop_waits_for_connected_applications() {
    let mut qm = start("LC.QUIESCE");
    mqsc_ok(&qm, "DEFINE QLOCAL(WORK.Q)");
    let conn = connect(&qm.client()).await;
    let q = open(
        &conn,
        "WORK.Q",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
    )
    .await;

    let mut stop = spawn_ferry(&qm, &["stop", "LC.QUIESCE"]);
    // The request has arrived once new connections are refused with 2161.
    let bindings = qm.bindings();
    wait_until_async("new connections refused with 2161", || {
        let b = bindings.clone();
        async move {
            match ferry_client::Connection::connect(&b).await {
                Err(e) => {
                    assert_eq!(e.reason, ReasonCode::QMgrQuiescing, "refusal reason");
                    true
                }
                Ok(c) => {
                    c.disconnect().await.unwrap();
                    false
                }
            }
        }
    })
    .await;
    // The connected application carries on, and the stop waits for it.
    put(&q, "during quiesce").await;
    assert_eq!(get_text(&q).await, "during quiesce");
    assert!(stop.try_wait().unwrap().is_none(), "stop returned early");
    let line = qm.ferry(&["status", "LC.QUIESCE"]);
    assert!(
        stdout(&line).contains("STATUS(Quiescing)"),
        "{}",
        stdout(&line)
    );
    assert!(qm.pid().is_some());

    q.close(Default::default()).await.unwrap();
    conn.disconnect().await.unwrap();
    let status = wait_child(&mut stop, "ferry stop to return");
    assert!(status.success(), "ferry stop: {status}");
    let exit = qm.wait_exit(DEADLINE).expect("queue manager ended");
    assert!(exit.success(), "{exit}");
    assert!(qm.error_log().contains("FRY8004I"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn immediate_stop_breaks_connected_applications() {
    let mut qm = start("LC.IMMED");
    mqsc_ok(&qm, "DEFINE QLOCAL(WORK.Q)");
    for via in [Via::Tcp, Via::Bindings] {
        // Restarted for the second transport.
        if qm.pid().is_none() {
            qm.launch();
        }
        let conn = connect(&via.opts(&qm)).await;
        let q = open(&conn, "WORK.Q", OpenOptions::INPUT_SHARED).await;
        // A get waiting forever is outstanding when the stop comes.
        let waiting = tokio::spawn(async move {
            let r = get_with(&q, gmo(GetOptionFlags::WAIT, -1)).await;
            (r, q)
        });
        // The handle is open (the get itself may still be on its way: either way it must fail).
        wait_until("the get to be waiting", || {
            let t = mqsc_ok(&qm, "DISPLAY QSTATUS(WORK.Q) IPPROCS");
            attr(&t, "IPPROCS").as_deref() == Some("1")
        });
        let out = qm.ferry(&["stop", "-i", "LC.IMMED"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(stdout(&out).contains("FRY8004I"), "{}", stdout(&out));
        let (r, q) = within("waiting get to fail", waiting).await.unwrap();
        let e = r.expect_err("get survived an immediate stop");
        assert!(
            matches!(
                e.reason,
                ReasonCode::QMgrStopping | ReasonCode::ConnectionBroken
            ),
            "{via:?}: {e}"
        );
        // Later calls fail too.
        let e = get(&q).await.expect_err("call after stop");
        assert!(
            matches!(
                e.reason,
                ReasonCode::QMgrStopping | ReasonCode::ConnectionBroken
            ),
            "{via:?}: {e}"
        );
        let exit = qm.wait_exit(DEADLINE).expect("queue manager ended");
        assert!(exit.success(), "{exit}");
        drop(q);
        drop(conn);
    }
}

#[test]
fn delete_refuses_a_running_queue_manager_then_removes_it() {
    let mut qm = start("LC.DELETE");
    let out = qm.ferry(&["delete", "LC.DELETE"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("FRY8041E"), "{}", stderr(&out));
    assert!(qm.qm_dir().join("qm.ini").exists(), "data touched");
    mqsc_ok(&qm, "DISPLAY QMGR");

    ferry_ok(&qm, &["stop", "LC.DELETE"]);
    qm.wait_exit(DEADLINE).expect("ended");
    let deleted = ferry_ok(&qm, &["delete", "LC.DELETE"]);
    assert!(deleted.contains("FRY8002I"), "{deleted}");
    assert!(!qm.qm_dir().exists(), "directory left behind");
    assert!(!qm.home().join("log").join("LC.DELETE").exists());
    let status = qm.ferry(&["status", "LC.DELETE"]);
    assert!(stderr(&status).contains("FRY8118E"), "{}", stderr(&status));
    let start = qm.ferry(&["start", "LC.DELETE"]);
    assert!(!start.status.success());
    assert!(stderr(&start).contains("FRY8118E"), "{}", stderr(&start));
}

/// `ferry create` on a disk without room for the recovery log (a 1 MiB tmpfs as
/// `--log-path`, real ENOSPC) refuses with the system's reason and leaves nothing half
/// made: no queue manager directory, no log files.
#[test]
fn create_on_a_full_disk_says_so_and_leaves_nothing_behind() {
    let qm = start("LC.FULLDISK");
    let dir = qm.home().join("disks").join("small");
    let _disk = match SmallDisk::mount(&dir, "1m") {
        Ok(d) => d,
        Err(why) => {
            eprintln!("skipped: cannot mount a small tmpfs to fill ({why}); needs root");
            return;
        }
    };
    let out = qm.ferry(&[
        "create",
        "LC.NOROOM",
        "-p",
        "1",
        "--ld",
        dir.to_str().unwrap(),
    ]);
    assert!(!out.status.success(), "created on a full disk");
    let err = stderr(&out);
    assert!(
        err.contains("FRY7467E") && err.contains("No space left on device"),
        "{err}"
    );
    assert!(
        !qm_dir_in(&qm, "LC.NOROOM").exists(),
        "no queue manager left"
    );
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "no log files left: {left:?}");
}

/// crtmqm's log options: `ferry create --log-primary-files/--lp, --log-secondary-files/--ls,
/// --log-file-pages/--lf, --log-path/--ld` shape and place the recovery log, write the Log
/// stanza, refuse out-of-range values before anything exists, and `ferry delete` removes
/// the log's files from a directory of the user's choosing but not the directory's others.
#[test]
fn create_sizes_and_places_the_recovery_log() {
    let qm = start("LC.LOGOPT");
    let out = qm.ferry(&["create", "LC.BADLOG", "-p", "1", "--log-file-pages", "10"]);
    assert!(!out.status.success(), "LogFilePages=10 accepted");
    let err = stderr(&out);
    assert!(
        err.contains("FRY7028E") && err.contains("LogFilePages"),
        "{err}"
    );
    assert!(err.contains("64 to 65535"), "says the range: {err}");
    assert!(!qm_dir_in(&qm, "LC.BADLOG").exists(), "nothing created");

    let dir = qm.home().join("disks").join("fast");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "the admin's own file").unwrap();
    let made = ferry_ok(
        &qm,
        &[
            "create",
            "LC.PLACED",
            "-p",
            "1",
            "--lp",
            "4",
            "--ls",
            "3",
            "--lf",
            "64",
            "--ld",
            dir.to_str().unwrap(),
        ],
    );
    assert!(
        made.contains("4 primary and 3 secondary files of 64"),
        "{made}"
    );
    let ini = std::fs::read_to_string(qm_dir_in(&qm, "LC.PLACED").join("qm.ini")).unwrap();
    for line in [
        "LogPrimaryFiles=4",
        "LogSecondaryFiles=3",
        "LogFilePages=64",
        &format!("LogPath={}/", dir.display()),
    ] {
        assert!(ini.contains(line), "qm.ini has {line}: {ini}");
    }
    let mut extents: Vec<(String, u64)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".LOG"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    extents.sort();
    assert_eq!(extents.len(), 7, "4 + 3 extents: {extents:?}");
    // Each extent: two scratch slots and 64 data pages of 4 KiB, preallocated.
    assert!(
        extents.iter().all(|(_, len)| *len == 66 * 4096),
        "{extents:?}"
    );
    assert!(dir.join("ferrylog.ctl").exists());
    assert!(
        !qm.home().join("log").join("LC.PLACED").exists(),
        "not the default place"
    );

    let deleted = ferry_ok(&qm, &["delete", "LC.PLACED"]);
    assert!(deleted.contains("FRY8002I"), "{deleted}");
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["notes.txt"], "only the log's files went");
}

/// Stops the queue manager and replaces the qm.ini line `from` (which must be there) by
/// `to`; returns the file's path and its text before the change.
fn stop_and_edit_qm_ini(qm: &mut TestQueueManager, from: &str, to: &str) -> (PathBuf, String) {
    ferry_ok(qm, &["stop", qm.name()]);
    qm.wait_exit(DEADLINE).expect("ended");
    let ini_path = qm.qm_dir().join("qm.ini");
    let ini = std::fs::read_to_string(&ini_path).unwrap();
    assert!(ini.contains(from), "{ini}");
    std::fs::write(&ini_path, ini.replace(from, to)).unwrap();
    (ini_path, ini)
}

#[test]
fn bad_qm_ini_value_stops_the_start_naming_the_key() {
    let mut qm = start("LC.INI");
    let (ini_path, ini) = stop_and_edit_qm_ini(&mut qm, "LogFilePages=4096", "LogFilePages=10");

    let out = qm.ferry(&["start", "LC.INI"]);
    assert!(!out.status.success(), "started with a bad qm.ini");
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("FRY7028E"), "{text}");
    assert!(text.contains("LogFilePages"), "names the key: {text}");
    let status = qm.ferry(&["status", "LC.INI"]);
    assert!(!stdout(&status).contains("Running"), "{}", stdout(&status));

    // Fixed, it starts again.
    std::fs::write(&ini_path, ini).unwrap();
    qm.launch();
    mqsc_ok(&qm, "DISPLAY QMGR");
}

#[test]
fn the_runtime_thread_runs_as_a_batch_thread_unless_qm_ini_says_normal() {
    let mut qm = start("LC.SCHED");
    let policies = thread_policies(qm.pid().expect("running"));
    for (name, policy) in &policies {
        let expected = if name == "runtime" {
            SCHED_BATCH
        } else {
            SCHED_OTHER
        };
        assert_eq!(*policy, expected, "{name}: {policies:?}");
    }
    assert!(
        policies.iter().any(|(n, _)| n.starts_with("ferry-log")),
        "the log writer is among {policies:?}"
    );

    stop_and_edit_qm_ini(
        &mut qm,
        "RuntimeScheduling=AUTO",
        "RuntimeScheduling=NORMAL",
    );
    qm.launch();
    let policies = thread_policies(qm.pid().expect("running"));
    assert!(
        policies.iter().all(|(_, p)| *p == SCHED_OTHER),
        "{policies:?}"
    );
    assert!(!qm.error_log().contains("FRY7477W"), "no failure logged");
}

/// Times the runtime thread of a running process has gone to sleep and been woken.
fn runtime_wake_ups(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .expect("a voluntary_ctxt_switches line")
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn an_idle_queue_manager_sleeps() {
    // Its listeners and the AMQP channel run; nothing connects. What wakes it then is its
    // own timers (checkpoints, the error log's suppression), a few times a second at most:
    // the AMQP channel's acceptance watch used to tick 100 times a second.
    let qm = start("LC.IDLE");
    let pid = qm.pid().expect("running");
    std::thread::sleep(Duration::from_millis(500));
    let before = runtime_wake_ups(pid);
    std::thread::sleep(Duration::from_secs(3));
    let woken = runtime_wake_ups(pid) - before;
    assert!(woken < 60, "woken {woken} times in 3 s while idle");
}

#[test]
fn error_log_records_start_and_end() {
    let mut qm = start("LC.LOG");
    let log = qm.error_log();
    assert!(log.contains("FRY8003I"), "{log}");
    assert!(log.contains("QMgr(LC.LOG)"), "{log}");
    assert!(log.contains("EXPLANATION:"), "{log}");
    assert!(!log.contains("FRY8004I"), "{log}");
    ferry_ok(&qm, &["stop", "LC.LOG"]);
    qm.wait_exit(Duration::from_secs(30)).expect("ended");
    let log = qm.error_log();
    assert!(log.contains("FRY8004I"), "{log}");
    assert!(
        log.find("FRY8003I") < log.find("FRY8004I"),
        "start logged before end: {log}"
    );
}

#[test]
fn the_amqp_channel_runs_with_the_queue_manager_and_stops_and_starts() {
    let qm = start("LC.AMQP");
    let port = qm.amqp_port();
    let connects = || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
    let st = mqsc_ok(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.AMQP)");
    assert_eq!(attr(&st, "STATUS").as_deref(), Some("RUNNING"), "{st}");
    assert_eq!(attr(&st, "PORT"), Some(port.to_string()), "{st}");
    let status = qm.ferry(&["status", qm.name()]);
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status.contains(&format!("AMQP({port})")),
        "ferry status shows the AMQP port: {status}"
    );
    assert!(connects(), "the AMQP port accepts connections");
    assert!(qm.error_log().contains("FRY5041I"), "{}", qm.error_log());

    let out = mqsc_ok(&qm, "STOP CHANNEL(SYSTEM.DEF.AMQP)");
    assert!(out.contains("FRY8019I"), "{out}");
    let st = mqsc_ok(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.AMQP)");
    assert_eq!(attr(&st, "STATUS").as_deref(), Some("STOPPED"), "{st}");
    assert!(!connects(), "a stopped channel does not listen");
    let again = mqsc_exit(&qm, "STOP CHANNEL(SYSTEM.DEF.AMQP)", 10);
    assert!(again.contains("FRY9533E"), "{again}");

    let out = mqsc_ok(&qm, "START CHANNEL(SYSTEM.DEF.AMQP)");
    assert!(out.contains("FRY8018I"), "{out}");
    assert!(connects(), "the restarted channel listens again");
    let svrconn = mqsc_exit(&qm, "START CHANNEL(SYSTEM.DEF.SVRCONN)", 10);
    assert!(svrconn.contains("FRY9004E"), "{svrconn}");
}
