//! MQSC through `ferry mqsc` (runmqsc) against a running queue manager: DEFINE / ALTER /
//! DISPLAY / DELETE of QLOCAL, QALIAS, QMODEL, CHANNEL(SVRCONN) and LISTENER, REPLACE
//! and LIKE, generic names and WHERE, scripts with continuations and comments (`-f`),
//! syntax errors and the exit statuses (0, 10, 20), live status (QSTATUS with CURDEPTH,
//! IPPROCS, OPPROCS, UNCOM and TYPE(HANDLE); CONN with APPLTAG), CLEAR QLOCAL,
//! START/STOP LISTENER seen by a client, LSSTATUS, and ALTER/DISPLAY QMGR.

mod common;

use common::*;
use ferry_client::ConnectOptions;
use ferry_mqi::{MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions, ReasonCode};

#[test]
fn local_alias_and_model_queues_define_alter_display_delete() {
    let qm = start("MQSC.QUEUES");
    let out = mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.LOCAL) MAXDEPTH(42) MAXMSGL(1000) DESCR('Local queue') DEFPRTY(4)\n\
         DEFINE QALIAS(APP.ALIAS) TARGET(APP.LOCAL) PUT(DISABLED)\n\
         DEFINE QMODEL(APP.MODEL) DEFTYPE(PERMDYN) MAXDEPTH(9)\n",
    );
    assert_eq!(out.matches("FRY8006I").count(), 3, "{out}");

    let l = mqsc_ok(
        &qm,
        "DISPLAY QLOCAL(APP.LOCAL) MAXDEPTH MAXMSGL DESCR DEFPRTY",
    );
    assert_eq!(attr(&l, "TYPE").as_deref(), Some("QLOCAL"), "{l}");
    assert_eq!(attr(&l, "MAXDEPTH").as_deref(), Some("42"), "{l}");
    assert_eq!(attr(&l, "MAXMSGL").as_deref(), Some("1000"), "{l}");
    assert_eq!(attr(&l, "DESCR").as_deref(), Some("Local queue"), "{l}");
    assert_eq!(attr(&l, "DEFPRTY").as_deref(), Some("4"), "{l}");
    let all = mqsc_ok(&qm, "DISPLAY QLOCAL(APP.LOCAL)");
    assert_eq!(
        attr(&all, "CURDEPTH").as_deref(),
        Some("0"),
        "live field: {all}"
    );
    let a = mqsc_ok(&qm, "DISPLAY QALIAS(APP.ALIAS) TARGET PUT");
    assert_eq!(attr(&a, "TARGET").as_deref(), Some("APP.LOCAL"), "{a}");
    assert_eq!(attr(&a, "PUT").as_deref(), Some("DISABLED"), "{a}");
    let m = mqsc_ok(&qm, "DISPLAY QMODEL(APP.MODEL) DEFTYPE MAXDEPTH");
    assert_eq!(attr(&m, "DEFTYPE").as_deref(), Some("PERMDYN"), "{m}");
    assert_eq!(attr(&m, "MAXDEPTH").as_deref(), Some("9"), "{m}");

    // ALTER changes only what it names.
    let out = mqsc_ok(
        &qm,
        "ALTER QLOCAL(APP.LOCAL) MAXDEPTH(43)\nALTER QALIAS(APP.ALIAS) PUT(ENABLED)\nALTER QMODEL(APP.MODEL) DESCR('m')",
    );
    assert_eq!(out.matches("FRY8008I").count(), 3, "{out}");
    let l = mqsc_ok(&qm, "DISPLAY QLOCAL(APP.LOCAL) MAXDEPTH DESCR");
    assert_eq!(attr(&l, "MAXDEPTH").as_deref(), Some("43"), "{l}");
    assert_eq!(attr(&l, "DESCR").as_deref(), Some("Local queue"), "{l}");
    let a = mqsc_ok(&qm, "DISPLAY QALIAS(APP.ALIAS) PUT TARGET");
    assert_eq!(attr(&a, "PUT").as_deref(), Some("ENABLED"), "{a}");
    assert_eq!(attr(&a, "TARGET").as_deref(), Some("APP.LOCAL"), "{a}");

    // Attributes that do not apply to the type are syntax errors.
    let bad = mqsc_exit(
        &qm,
        "DEFINE QALIAS(X.ALIAS) MAXDEPTH(5) TARGET(APP.LOCAL)",
        10,
    );
    assert!(
        bad.contains("FRY8405I") && bad.contains("FRY9405E"),
        "{bad}"
    );

    let out = mqsc_ok(
        &qm,
        "DELETE QALIAS(APP.ALIAS)\nDELETE QMODEL(APP.MODEL)\nDELETE QLOCAL(APP.LOCAL)",
    );
    assert_eq!(out.matches("FRY8007I").count(), 3, "{out}");
    for (ty, name) in [
        ("QLOCAL", "APP.LOCAL"),
        ("QALIAS", "APP.ALIAS"),
        ("QMODEL", "APP.MODEL"),
    ] {
        let gone = mqsc_exit(&qm, &format!("DISPLAY {ty}({name})"), 10);
        assert!(
            gone.contains(&format!("FRY8147E: Ferry object {name} not found")),
            "{gone}"
        );
    }
    let gone = mqsc_exit(&qm, "DELETE QLOCAL(APP.LOCAL)", 10);
    assert!(gone.contains("FRY8147E"), "{gone}");
}

#[test]
fn replace_noreplace_and_like() {
    let qm = start("MQSC.REPLACE");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(BASE.Q) MAXDEPTH(77) DESCR('base') MSGDLVSQ(FIFO)",
    );
    let dup = mqsc_exit(&qm, "DEFINE QLOCAL(BASE.Q) MAXDEPTH(1)", 10);
    assert!(
        dup.contains("FRY8150E: Ferry object BASE.Q already exists."),
        "{dup}"
    );
    let dup = mqsc_exit(&qm, "DEFINE QLOCAL(BASE.Q) NOREPLACE MAXDEPTH(1)", 10);
    assert!(dup.contains("FRY8150E"), "{dup}");
    let d = mqsc_ok(&qm, "DISPLAY QLOCAL(BASE.Q) MAXDEPTH");
    assert_eq!(
        attr(&d, "MAXDEPTH").as_deref(),
        Some("77"),
        "unchanged: {d}"
    );

    // LIKE copies the other queue's attributes; named ones override.
    mqsc_ok(&qm, "DEFINE QLOCAL(COPY.Q) LIKE(BASE.Q) DESCR('copy')");
    let c = mqsc_ok(&qm, "DISPLAY QLOCAL(COPY.Q) MAXDEPTH DESCR MSGDLVSQ");
    assert_eq!(attr(&c, "MAXDEPTH").as_deref(), Some("77"), "{c}");
    assert_eq!(attr(&c, "MSGDLVSQ").as_deref(), Some("FIFO"), "{c}");
    assert_eq!(attr(&c, "DESCR").as_deref(), Some("copy"), "{c}");
    let missing = mqsc_exit(&qm, "DEFINE QLOCAL(COPY2.Q) LIKE(NO.SUCH.Q)", 10);
    assert!(missing.contains("FRY8147E"), "{missing}");

    // REPLACE resets unnamed attributes from the default queue.
    mqsc_ok(&qm, "DEFINE QLOCAL(BASE.Q) REPLACE DESCR('replaced')");
    let r = mqsc_ok(&qm, "DISPLAY QLOCAL(BASE.Q) MAXDEPTH DESCR MSGDLVSQ");
    assert_eq!(attr(&r, "DESCR").as_deref(), Some("replaced"), "{r}");
    assert_eq!(attr(&r, "MAXDEPTH").as_deref(), Some("5000"), "{r}");
    assert_eq!(attr(&r, "MSGDLVSQ").as_deref(), Some("PRIORITY"), "{r}");
    // A new default queue definition is what DEFINE starts from.
    mqsc_ok(
        &qm,
        "ALTER QLOCAL(SYSTEM.DEFAULT.LOCAL.QUEUE) MAXDEPTH(321)\nDEFINE QLOCAL(FROM.DEFAULT)",
    );
    let f = mqsc_ok(&qm, "DISPLAY QLOCAL(FROM.DEFAULT) MAXDEPTH");
    assert_eq!(attr(&f, "MAXDEPTH").as_deref(), Some("321"), "{f}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn svrconn_channels_define_alter_display_delete() {
    let qm = start("MQSC.CHANNELS");
    let out = mqsc_ok(
        &qm,
        "DEFINE CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(1) DESCR('apps') MAXMSGL(2000)",
    );
    assert!(out.contains("FRY8014I"), "{out}");
    let c = mqsc_ok(
        &qm,
        "DISPLAY CHANNEL(APP.SVRCONN) SHARECNV DESCR MAXMSGL HBINT",
    );
    assert_eq!(attr(&c, "CHLTYPE").as_deref(), Some("SVRCONN"), "{c}");
    assert_eq!(attr(&c, "SHARECNV").as_deref(), Some("1"), "{c}");
    assert_eq!(attr(&c, "MAXMSGL").as_deref(), Some("2000"), "{c}");
    assert_eq!(
        attr(&c, "HBINT").as_deref(),
        Some("300"),
        "from SYSTEM.DEF.SVRCONN: {c}"
    );

    // A client can use the new channel, and its MAXMSGL is negotiated.
    let opts = ConnectOptions::client(&qm.conname(), "APP.SVRCONN").queue_manager(qm.name());
    let conn = connect(&opts).await;
    assert_eq!(conn.max_message_length(), 2000);
    conn.disconnect().await.unwrap();

    let out = mqsc_ok(&qm, "ALTER CHANNEL(APP.SVRCONN) CHLTYPE(SVRCONN) HBINT(30)");
    assert!(out.contains("FRY8016I"), "{out}");
    let c = mqsc_ok(&qm, "DISPLAY CHANNEL(APP.SVRCONN) HBINT SHARECNV");
    assert_eq!(attr(&c, "HBINT").as_deref(), Some("30"), "{c}");
    assert_eq!(attr(&c, "SHARECNV").as_deref(), Some("1"), "{c}");

    let other = mqsc_exit(&qm, "DEFINE CHANNEL(TO.QM2) CHLTYPE(SDRCVR)", 10);
    assert!(other.contains("FRY"), "{other}");
    let sdr = mqsc_ok(
        &qm,
        "DEFINE CHANNEL(TO.QM2) CHLTYPE(SDR) CONNAME('x(1)') XMITQ(X)",
    );
    assert!(
        sdr.contains("FRY8014I"),
        "sender channels are defined: {sdr}"
    );

    let out = mqsc_ok(&qm, "DELETE CHANNEL(APP.SVRCONN)");
    assert!(out.contains("FRY8015I"), "{out}");
    let gone = mqsc_exit(&qm, "DISPLAY CHANNEL(APP.SVRCONN)", 10);
    assert!(gone.contains("FRY8147E"), "{gone}");
    let refused = ferry_client::Connection::connect(&opts).await;
    assert_reason(refused, ReasonCode::UnknownChannelName);
}

#[test]
fn listeners_define_alter_display_delete() {
    let qm = start("MQSC.LISTENERS");
    let out = mqsc_ok(
        &qm,
        "DEFINE LISTENER(APP.LSTR) TRPTYPE(TCP) PORT(1) CONTROL(MANUAL) DESCR('spare')",
    );
    assert!(out.contains("FRY8626I"), "{out}");
    let out = mqsc_ok(&qm, "ALTER LISTENER(APP.LSTR) TRPTYPE(TCP) PORT(2)");
    assert!(out.contains("FRY8627I"), "{out}");
    let l = mqsc_ok(&qm, "DISPLAY LISTENER(APP.LSTR) PORT CONTROL DESCR");
    assert_eq!(attr(&l, "PORT").as_deref(), Some("2"), "{l}");
    assert_eq!(attr(&l, "CONTROL").as_deref(), Some("MANUAL"), "{l}");
    assert_eq!(attr(&l, "DESCR").as_deref(), Some("spare"), "{l}");
    let s = mqsc_exit(&qm, "DISPLAY LSSTATUS(APP.LSTR)", 10);
    assert!(s.contains("FRY8730I"), "not running: {s}");
    // The running system listener cannot be deleted.
    let busy = mqsc_exit(&qm, "DELETE LISTENER(SYSTEM.LISTENER.TCP.1)", 10);
    assert!(busy.contains("FRY8148E"), "{busy}");
    let out = mqsc_ok(&qm, "DELETE LISTENER(APP.LSTR)");
    assert!(out.contains("FRY8628I"), "{out}");
    let gone = mqsc_exit(&qm, "DISPLAY LISTENER(APP.LSTR)", 10);
    assert!(gone.contains("FRY8147E"), "{gone}");
}

#[test]
fn generic_names_and_where_select_objects() {
    let qm = start("MQSC.GENERIC");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.A) MAXDEPTH(10)\nDEFINE QLOCAL(APP.B) MAXDEPTH(20)\n\
         DEFINE QLOCAL(APP.C) MAXDEPTH(30) DESCR('payments')\nDEFINE QALIAS(APP.D) TARGET(APP.A)\n\
         DEFINE QLOCAL(OTHER.E) MAXDEPTH(40)",
    );
    let all = mqsc_ok(&qm, "DISPLAY QUEUE(APP.*)");
    assert_eq!(
        attrs(&all, "QUEUE"),
        ["APP.A", "APP.B", "APP.C", "APP.D"],
        "{all}"
    );
    let locals = mqsc_ok(&qm, "DISPLAY QLOCAL(APP.*)");
    assert_eq!(
        attrs(&locals, "QUEUE"),
        ["APP.A", "APP.B", "APP.C"],
        "{locals}"
    );
    let typed = mqsc_ok(&qm, "DISPLAY QUEUE(*) TYPE(QALIAS)");
    assert!(
        attrs(&typed, "QUEUE").contains(&"APP.D".to_string()),
        "{typed}"
    );
    assert!(
        !attrs(&typed, "QUEUE").contains(&"APP.A".to_string()),
        "{typed}"
    );

    let deep = mqsc_ok(&qm, "DISPLAY QLOCAL(*) WHERE(MAXDEPTH GE 20) MAXDEPTH");
    let names = attrs(&deep, "QUEUE");
    for want in ["APP.B", "APP.C", "OTHER.E"] {
        assert!(names.contains(&want.to_string()), "{want}: {deep}");
    }
    assert!(!names.contains(&"APP.A".to_string()), "{deep}");
    let like = mqsc_ok(&qm, "DISPLAY QLOCAL(*) WHERE(DESCR LK 'pay*')");
    assert_eq!(attrs(&like, "QUEUE"), ["APP.C"], "{like}");
    let eq = mqsc_ok(&qm, "DISPLAY QLOCAL(APP.*) WHERE(MAXDEPTH EQ 10)");
    assert_eq!(attrs(&eq, "QUEUE"), ["APP.A"], "{eq}");
    let none = stdout(&qm.mqsc("DISPLAY QLOCAL(APP.*) WHERE(MAXDEPTH GT 1000)"));
    assert!(attrs(&none, "QUEUE").is_empty(), "{none}");
    let bad = mqsc_exit(&qm, "DISPLAY QLOCAL(*) WHERE(NOSUCH EQ 1)", 10);
    assert!(bad.contains("FRY8405I"), "{bad}");
    // Generic names are for DISPLAY only.
    let bad = mqsc_exit(&qm, "DELETE QLOCAL(APP.*)", 10);
    assert!(
        bad.contains("FRY8405I") || bad.contains("FRY9405E"),
        "{bad}"
    );
    assert_eq!(
        attrs(&mqsc_ok(&qm, "DISPLAY QLOCAL(APP.*)"), "QUEUE").len(),
        3
    );
}

#[test]
fn script_files_with_continuations_and_comments() {
    let qm = start("MQSC.FILE");
    let script = "\
* A comment line, then a blank line

DEFINE QLOCAL(SCRIPT.Q) +
       MAXDEPTH(12) +
       DESCR('joined with plus')
   * an indented comment
DEFINE QLOCAL(SCRIPT.R) DESCR('keep-
   blanks')
DISPLAY QLOCAL(SCRIPT.*) MAXDEPTH DESCR
END
DEFINE QLOCAL(AFTER.END)
";
    let path = qm.home().join("script.mqsc");
    std::fs::write(&path, script).unwrap();
    let out = qm.ferry(&["mqsc", qm.name(), "-f", path.to_str().unwrap()]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains("Starting MQSC for queue manager MQSC.FILE."),
        "{text}"
    );
    assert_eq!(text.matches("FRY8006I").count(), 2, "{text}");
    assert!(text.contains("MQSC commands read."), "{text}");
    assert!(text.contains("No commands have a syntax error."), "{text}");
    assert!(
        text.contains("All valid MQSC commands were processed."),
        "{text}"
    );
    let q = mqsc_ok(&qm, "DISPLAY QLOCAL(SCRIPT.Q) MAXDEPTH DESCR");
    assert_eq!(attr(&q, "MAXDEPTH").as_deref(), Some("12"), "{q}");
    assert_eq!(
        attr(&q, "DESCR").as_deref(),
        Some("joined with plus"),
        "{q}"
    );
    let r = mqsc_ok(&qm, "DISPLAY QLOCAL(SCRIPT.R) DESCR");
    assert_eq!(attr(&r, "DESCR").as_deref(), Some("keep   blanks"), "{r}");
    let after = mqsc_exit(&qm, "DISPLAY QLOCAL(AFTER.END)", 10);
    assert!(after.contains("FRY8147E"), "END stops reading: {after}");

    // -e: no echo of the commands.
    let out = qm.ferry(&["mqsc", qm.name(), "-e", "-f", path.to_str().unwrap()]);
    assert!(!stdout(&out).contains(" : DEFINE"), "{}", stdout(&out));
    // A missing file is an error before anything runs.
    let out = qm.ferry(&["mqsc", qm.name(), "-f", "/nonexistent/x.mqsc"]);
    assert_eq!(out.status.code(), Some(20), "{}", stderr(&out));
}

#[test]
fn syntax_errors_are_reported_and_exit_10() {
    let qm = start("MQSC.SYNTAX");
    let text = mqsc_exit(
        &qm,
        "DEFINE QLOCAL(GOOD.Q)\nDEFINE QLOCAL(BAD.Q) MAXDEPTH(-1)\nDEFINE QLOCAL(BAD.R) FOO(1)\nDISPLAY QLOCAL(GOOD.Q)",
        10,
    );
    assert!(text.contains("FRY8405I"), "{text}");
    assert!(
        text.contains("FRY9405E: FOO is not a valid keyword for QLOCAL."),
        "{text}"
    );
    assert!(text.contains("2 commands have a syntax error."), "{text}");
    assert!(
        text.contains("All valid MQSC commands were processed."),
        "{text}"
    );
    // The valid commands ran, the invalid ones did nothing.
    assert!(attrs(&mqsc_ok(&qm, "DISPLAY QLOCAL(GOOD.Q)"), "QUEUE") == ["GOOD.Q"]);
    let none = mqsc_exit(&qm, "DISPLAY QLOCAL(BAD.*)", 10);
    assert!(attrs(&none, "QUEUE").is_empty(), "{none}");
    for bad in [
        "DEFINE QLOCAL(TOO.MANY) MAXDEPTH(1) MAXDEPTH(2)",
        "DEFINE QLOCAL('unterminated)",
        "DEFINE QLOCAL(X) CURDEPTH(3)",
        "DEFINE QLOCAL(X) CRDATE(2020-01-01)",
        &format!("DEFINE QLOCAL({})", "N".repeat(49)),
        "DEFINE",
        "FROBNICATE QLOCAL(X)",
    ] {
        let text = mqsc_exit(&qm, bad, 10);
        assert!(
            text.contains("One command has a syntax error."),
            "{bad}: {text}"
        );
    }
    // -v verifies without running.
    let out = qm.ferry_with_stdin(&["mqsc", "-v", qm.name()], "DEFINE QLOCAL(VERIFIED.ONLY)\n");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(mqsc_exit(&qm, "DISPLAY QLOCAL(VERIFIED.ONLY)", 10).contains("FRY8147E"));
    let out = qm.ferry_with_stdin(&["mqsc", "-v", qm.name()], "DEFINE QLOCAL(X) FOO(1)\n");
    assert_eq!(out.status.code(), Some(10), "{}", stdout(&out));
}

/// A repeated keyword is a syntax error in every command (issue 18: `DISPLAY QMGR DESCR
/// DESCR` was accepted), both in `ferry mqsc` and in the command server, which an
/// application reaches without runmqsc's own check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_keywords_are_syntax_errors_in_every_command() {
    let qm = start("MQSC.REPEATS");
    mqsc_ok(&qm, "DEFINE QLOCAL(REP.Q)");
    let repeated = [
        "DISPLAY QMGR DESCR DESCR",
        "DISPLAY QLOCAL(REP.Q) CURDEPTH CURDEPTH",
        "ALTER QLOCAL(REP.Q) FORCE FORCE",
        "DEFINE QLOCAL(REP.Q) REPLACE REPLACE",
        "DELETE QLOCAL(REP.Q) PURGE PURGE",
    ];
    for text in repeated {
        let out = mqsc_exit(&qm, text, 10);
        assert!(out.contains("FRY8405I"), "{text}: {out}");
        assert!(out.contains("is specified more than once"), "{text}: {out}");
    }
    let conn = connect(&qm.bindings()).await;
    for text in repeated {
        let out = within("mqsc", conn.mqsc(text)).await.expect("mqsc reply");
        assert!(out.failed, "{text}: {:?}", out.lines);
        assert_eq!(
            out.lines.first().map(String::as_str),
            Some("FRY8405I: Syntax error detected at or near end of command segment below:-"),
            "{text}"
        );
        assert!(
            out.lines
                .iter()
                .any(|l| l.starts_with("FRY9405E") && l.contains("more than once")),
            "{text}: {:?}",
            out.lines
        );
    }
    // Nothing ran: the queue is still there, unaltered.
    assert_eq!(
        attrs(&mqsc_ok(&qm, "DISPLAY QLOCAL(REP.Q)"), "QUEUE"),
        ["REP.Q"]
    );
    let _ = conn.disconnect().await;
}

/// Runs `ferry mqsc` on `qm` with `script` on stdin, watching its peak resident set
/// (VmHWM) while it runs. Returns its output and that peak in KiB.
fn mqsc_watching_memory(qm: &TestQueueManager, script: String) -> (std::process::Output, u64) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin())
        .args(["mqsc", qm.name()])
        .env("FERRY_HOME", qm.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferry mqsc");
    let status = format!("/proc/{}/status", child.id());
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(script.as_bytes());
    });
    let mut out = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out, &mut v);
        v
    });
    let mut peak = 0;
    while child.try_wait().expect("wait").is_none() {
        if let Ok(text) = std::fs::read_to_string(&status) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    writer.join().expect("writer");
    let stdout = reader.join().expect("reader");
    let out = child.wait_with_output().expect("output");
    (
        std::process::Output {
            status: out.status,
            stdout,
            stderr: out.stderr,
        },
        peak,
    )
}

/// Issue 18: a huge MQSC command (a 100 MB line through `ferry mqsc`, a 3 MB command sent
/// to the command server) gets a clear error: MQ's limit on a command, 32,762 bytes, is
/// enforced where commands are read, so neither side holds what the command claims. The
/// commands after it run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_longer_than_mqs_limit_is_refused_where_it_is_read() {
    let qm = start("MQSC.HUGE");
    let huge = format!(
        "DEFINE QLOCAL(HUGE.Q) DESCR('{}')\nDEFINE QLOCAL(AFTER.Q)\n",
        "x".repeat(100 << 20)
    );
    let t = std::time::Instant::now();
    let (out, peak_kib) = mqsc_watching_memory(&qm, huge);
    let took = t.elapsed();
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(10),
        "{}",
        &text[..text.len().min(4000)]
    );
    assert!(
        text.contains("FRY8405I"),
        "{}",
        &text[..text.len().min(4000)]
    );
    assert!(
        text.contains("longer than 32762 bytes"),
        "{}",
        &text[..text.len().min(4000)]
    );
    assert!(
        text.len() < 200_000,
        "the echo is cut short: {} bytes",
        text.len()
    );
    assert!(took < std::time::Duration::from_secs(60), "{took:?}");
    assert!(
        peak_kib < 64 * 1024,
        "ferry mqsc held {} MiB for a 100 MB line",
        peak_kib / 1024
    );
    assert_eq!(
        attrs(&mqsc_ok(&qm, "DISPLAY QLOCAL(AFTER.Q)"), "QUEUE"),
        ["AFTER.Q"]
    );
    assert!(mqsc_exit(&qm, "DISPLAY QLOCAL(HUGE.Q)", 10).contains("FRY8147E"));

    // The command server, reached without runmqsc's own check.
    let conn = connect(&qm.bindings()).await;
    let command = format!("DEFINE QLOCAL(HUGE.Q) DESCR('{}')", "y".repeat(3 << 20));
    let out = within("mqsc", conn.mqsc(&command))
        .await
        .expect("mqsc reply");
    assert!(out.failed, "{:?}", out.lines);
    assert!(
        out.lines
            .iter()
            .any(|l| l.contains("longer than 32762 bytes")),
        "{:?}",
        out.lines
    );
    assert!(
        out.lines.iter().map(String::len).sum::<usize>() < 1000,
        "{:?}",
        out.lines
    );
    // The connection and the queue manager carry on.
    let ok = within("mqsc", conn.mqsc("DEFINE QLOCAL(AFTER.Q2)"))
        .await
        .expect("mqsc");
    assert!(!ok.failed, "{:?}", ok.lines);
    let _ = conn.disconnect().await;
}

#[test]
fn mqsc_exits_20_when_the_queue_manager_is_not_running() {
    let mut qm = start("MQSC.DOWN");
    let out = qm.ferry(&["stop", qm.name()]);
    assert!(out.status.success());
    qm.wait_exit(DEADLINE).expect("ended");
    let out = qm.mqsc("DISPLAY QMGR\n");
    assert_eq!(out.status.code(), Some(20), "{}", stdout(&out));
    assert!(stderr(&out).contains("FRY8146E"), "{}", stderr(&out));
    let out = qm.ferry_with_stdin(&["runmqsc", "NO.SUCH.QM"], "DISPLAY QMGR\n");
    assert_eq!(out.status.code(), Some(20));
    assert!(stderr(&out).contains("FRY8118E"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_status_reflects_live_clients() {
    let qm = start("MQSC.QSTATUS");
    mqsc_ok(&qm, "DEFINE QLOCAL(LIVE.Q)");
    let opts = qm.client().application_name("qstatus-app");
    let conn = connect(&opts).await;
    let input = open(&conn, "LIVE.Q", OpenOptions::INPUT_SHARED).await;
    let out1 = open(&conn, "LIVE.Q", OpenOptions::OUTPUT).await;
    let other = connect(&qm.bindings()).await;
    let out2 = open(&other, "LIVE.Q", OpenOptions::OUTPUT | OpenOptions::INQUIRE).await;
    put(&out1, "committed 1").await;
    put(&out2, "committed 2").await;
    let mut md = MessageDescriptor::default();
    let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
    put_md(&out2, &mut md, sync, "in a unit of work")
        .await
        .unwrap();

    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) TYPE(QUEUE) ALL");
    assert_eq!(attr(&s, "CURDEPTH").as_deref(), Some("3"), "{s}");
    assert_eq!(attr(&s, "IPPROCS").as_deref(), Some("1"), "{s}");
    assert_eq!(attr(&s, "OPPROCS").as_deref(), Some("2"), "{s}");
    assert_eq!(attr(&s, "UNCOM").as_deref(), Some("1"), "{s}");
    // MQ's default QMGR MONQ(OFF): the monitoring values are blank until it is turned on.
    assert_eq!(attr(&s, "LPUTDATE").as_deref(), Some(""), "{s}");
    assert_eq!(attr(&s, "MSGAGE").as_deref(), Some(""), "{s}");
    mqsc_ok(&qm, "ALTER QMGR MONQ(MEDIUM)");
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) TYPE(QUEUE) LPUTDATE MSGAGE");
    assert_ne!(attr(&s, "LPUTDATE").as_deref(), Some(""), "{s}");
    assert_ne!(attr(&s, "MSGAGE").as_deref(), Some(""), "{s}");
    mqsc_ok(&qm, "ALTER QLOCAL(LIVE.Q) MONQ(OFF)");
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) TYPE(QUEUE) LPUTDATE MSGAGE");
    assert_eq!(
        attr(&s, "MSGAGE").as_deref(),
        Some(""),
        "the queue's MONQ(OFF): {s}"
    );
    // Once committed, the unit of work is gone and both displays agree.
    other.commit().await.unwrap();
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) CURDEPTH UNCOM");
    assert_eq!(attr(&s, "CURDEPTH").as_deref(), Some("3"), "{s}");
    assert_eq!(attr(&s, "UNCOM").as_deref(), Some("NO"), "{s}");
    assert_eq!(curdepth(&qm, "LIVE.Q"), 3);

    let h = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) TYPE(HANDLE) ALL");
    assert_eq!(
        h.matches("FRY8450I").count(),
        3,
        "one record per handle: {h}"
    );
    let tags = attrs(&h, "APPLTAG");
    assert_eq!(
        tags.iter().filter(|t| *t == "qstatus-app").count(),
        2,
        "{h}"
    );
    assert!(attrs(&h, "INPUT").contains(&"SHARED".to_string()), "{h}");
    assert_eq!(
        attrs(&h, "OUTPUT").iter().filter(|v| *v == "YES").count(),
        2,
        "{h}"
    );
    assert!(
        attrs(&h, "CHANNEL").contains(&"SYSTEM.DEF.SVRCONN".to_string()),
        "{h}"
    );
    assert!(attrs(&h, "INQUIRE").contains(&"YES".to_string()), "{h}");

    input.close(Default::default()).await.unwrap();
    other.disconnect().await.unwrap();
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) IPPROCS OPPROCS");
    assert_eq!(attr(&s, "IPPROCS").as_deref(), Some("0"), "{s}");
    assert_eq!(attr(&s, "OPPROCS").as_deref(), Some("1"), "{s}");
    drop(out1);
    conn.disconnect().await.unwrap();
    // No handles left: nothing to show, and runmqsc counts the command as processed.
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(LIVE.Q) TYPE(HANDLE)");
    assert!(attrs(&s, "QUEUE").is_empty(), "no handles left: {s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn display_conn_shows_applications() {
    let qm = start("MQSC.CONN");
    mqsc_ok(&qm, "DEFINE QLOCAL(CONN.Q)");
    let tcp = connect(&qm.client().application_name("billing-tcp")).await;
    let local = connect(&qm.bindings().application_name("billing-local")).await;
    let q = open(&local, "CONN.Q", OpenOptions::OUTPUT).await;
    let mut md = MessageDescriptor::default();
    put_md(&q, &mut md, PutOptions::new(PutOptionFlags::SYNCPOINT), "x")
        .await
        .unwrap();

    let all = mqsc_ok(&qm, "DISPLAY CONN(*) ALL");
    let tags = attrs(&all, "APPLTAG");
    assert!(tags.contains(&"billing-tcp".to_string()), "{all}");
    assert!(tags.contains(&"billing-local".to_string()), "{all}");

    let t = mqsc_ok(&qm, "DISPLAY CONN(*) WHERE(APPLTAG EQ 'billing-tcp') ALL");
    assert_eq!(attrs(&t, "APPLTAG"), ["billing-tcp"], "{t}");
    assert_eq!(
        attr(&t, "CHANNEL").as_deref(),
        Some("SYSTEM.DEF.SVRCONN"),
        "{t}"
    );
    assert!(attr(&t, "CONNAME").unwrap().starts_with("127.0.0.1"), "{t}");
    assert_eq!(attr(&t, "UOWSTATE").as_deref(), Some("NONE"), "{t}");

    let l = mqsc_ok(&qm, "DISPLAY CONN(*) WHERE(APPLTAG EQ 'billing-local') ALL");
    assert_eq!(attr(&l, "PID"), Some(std::process::id().to_string()), "{l}");
    assert_eq!(attr(&l, "UOWSTATE").as_deref(), Some("ACTIVE"), "{l}");
    let handles = mqsc_ok(&qm, "DISPLAY CONN(*) TYPE(HANDLE)");
    assert!(
        attrs(&handles, "OBJNAME").contains(&"CONN.Q".to_string()),
        "{handles}"
    );

    tcp.disconnect().await.unwrap();
    local.backout().await.unwrap();
    drop(q);
    local.disconnect().await.unwrap();
    let after = mqsc_ok(&qm, "DISPLAY CONN(*) ALL");
    let tags = attrs(&after, "APPLTAG");
    assert!(!tags.iter().any(|t| t.starts_with("billing")), "{after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clear_and_delete_qlocal_with_messages() {
    let qm = start("MQSC.CLEAR");
    mqsc_ok(&qm, "DEFINE QLOCAL(FULL.Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "FULL.Q", OpenOptions::OUTPUT).await;
    for i in 0..3 {
        put(&q, &format!("m{i}")).await;
    }
    let mut md = MessageDescriptor::default();
    put_md(
        &q,
        &mut md,
        PutOptions::new(PutOptionFlags::SYNCPOINT),
        "uncommitted",
    )
    .await
    .unwrap();
    assert_eq!(curdepth(&qm, "FULL.Q"), 4);
    let busy = mqsc_exit(&qm, "CLEAR QLOCAL(FULL.Q)", 10);
    assert!(
        busy.contains("FRY8148E"),
        "refused with uncommitted puts: {busy}"
    );
    conn.backout().await.unwrap();
    let reader = open(&conn, "FULL.Q", OpenOptions::INPUT_SHARED).await;
    let busy = mqsc_exit(&qm, "CLEAR QLOCAL(FULL.Q)", 10);
    assert!(
        busy.contains("FRY8148E"),
        "refused while open for input: {busy}"
    );
    reader.close(Default::default()).await.unwrap();
    let busy = mqsc_exit(&qm, "CLEAR QLOCAL(FULL.Q)", 10);
    assert!(
        busy.contains("FRY8148E"),
        "refused while open for output only, as MQ does: {busy}"
    );
    q.close(Default::default()).await.unwrap();
    assert_eq!(curdepth(&qm, "FULL.Q"), 3);

    let not_empty = mqsc_exit(&qm, "DELETE QLOCAL(FULL.Q)", 10);
    assert!(not_empty.contains("FRY8143E"), "{not_empty}");
    let out = mqsc_ok(&qm, "CLEAR QLOCAL(FULL.Q)");
    assert!(out.contains("FRY8022I"), "{out}");
    assert_eq!(curdepth(&qm, "FULL.Q"), 0);
    let q = open(
        &conn,
        "FULL.Q",
        OpenOptions::INPUT_SHARED | OpenOptions::OUTPUT,
    )
    .await;
    assert_reason(get(&q).await, ReasonCode::NoMsgAvailable);
    put(&q, "again").await;
    q.close(Default::default()).await.unwrap();
    let out = mqsc_ok(&qm, "DELETE QLOCAL(FULL.Q) PURGE");
    assert!(out.contains("FRY8007I"), "{out}");
    assert_reason(
        try_open(&conn, "FULL.Q", OpenOptions::OUTPUT).await,
        ReasonCode::UnknownObjectName,
    );
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_and_stop_listener_as_a_client_sees_it() {
    let qm = start("MQSC.LSTR");
    let port = free_port();
    mqsc_ok(
        &qm,
        &format!("DEFINE LISTENER(EXTRA.LSTR) TRPTYPE(TCP) PORT({port}) CONTROL(MANUAL)"),
    );
    let opts = ConnectOptions::client(&format!("127.0.0.1({port})"), "SYSTEM.DEF.SVRCONN")
        .queue_manager(qm.name())
        .connect_timeout(std::time::Duration::from_secs(5));
    assert_reason(
        ferry_client::Connection::connect(&opts).await,
        ReasonCode::HostNotAvailable,
    );

    let out = mqsc_ok(&qm, "START LISTENER(EXTRA.LSTR)");
    assert!(out.contains("FRY8021I"), "{out}");
    let s = mqsc_ok(&qm, "DISPLAY LSSTATUS(EXTRA.LSTR) ALL");
    assert_eq!(attr(&s, "STATUS").as_deref(), Some("RUNNING"), "{s}");
    assert_eq!(attr(&s, "PORT"), Some(port.to_string()), "{s}");
    let conn = connect(&opts).await;
    assert_eq!(conn.queue_manager_name(), qm.name());
    let all = mqsc_ok(&qm, "DISPLAY LSSTATUS(*)");
    assert_eq!(attrs(&all, "LISTENER").len(), 2, "{all}");
    // A running listener cannot be deleted or redefined.
    assert!(mqsc_exit(&qm, "DELETE LISTENER(EXTRA.LSTR)", 10).contains("FRY8148E"));

    let out = mqsc_ok(&qm, "STOP LISTENER(EXTRA.LSTR)");
    assert!(out.contains("FRY8731I"), "{out}");
    let s = mqsc_exit(&qm, "DISPLAY LSSTATUS(EXTRA.LSTR)", 10);
    assert!(s.contains("FRY8730I"), "{s}");
    // Connections made through it continue; new ones are refused.
    let q = open(&conn, "SYSTEM.DEFAULT.LOCAL.QUEUE", OpenOptions::INQUIRE).await;
    drop(q);
    let fresh = opts.clone().sharecnv(1);
    wait_until_async("the stopped listener to refuse connections", || {
        let fresh = fresh.clone();
        async move {
            match ferry_client::Connection::connect(&fresh).await {
                Err(e) => {
                    assert_eq!(e.reason, ReasonCode::HostNotAvailable);
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
    conn.disconnect().await.unwrap();
    let again = mqsc_exit(&qm, "STOP LISTENER(EXTRA.LSTR)", 10);
    assert!(again.contains("FRY8730I"), "{again}");
    // The system listener still runs.
    let sys = mqsc_ok(&qm, "DISPLAY LSSTATUS(SYSTEM.LISTENER.TCP.1) STATUS");
    assert_eq!(attr(&sys, "STATUS").as_deref(), Some("RUNNING"), "{sys}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alter_and_display_qmgr() {
    let qm = start("MQSC.QMGR");
    let d = mqsc_ok(&qm, "DISPLAY QMGR ALL");
    assert_eq!(attr(&d, "QMNAME").as_deref(), Some("MQSC.QMGR"), "{d}");
    assert_eq!(attr(&d, "MAXUMSGS").as_deref(), Some("10000"), "{d}");
    assert_eq!(attr(&d, "MAXPRTY").as_deref(), Some("9"), "{d}");
    assert_eq!(attr(&d, "PLATFORM").as_deref(), Some("UNIX"), "{d}");
    let out = mqsc_ok(
        &qm,
        "ALTER QMGR DESCR('Payments hub') MAXUMSGS(500) MAXMSGL(65536)",
    );
    assert!(out.contains("FRY8005I"), "{out}");
    let d = mqsc_ok(&qm, "DISPLAY QMGR DESCR MAXUMSGS MAXMSGL");
    assert_eq!(attr(&d, "DESCR").as_deref(), Some("Payments hub"), "{d}");
    assert_eq!(attr(&d, "MAXUMSGS").as_deref(), Some("500"), "{d}");
    assert_eq!(attr(&d, "MAXMSGL").as_deref(), Some("65536"), "{d}");
    // Read-only and out-of-range values are syntax errors and change nothing.
    assert!(mqsc_exit(&qm, "ALTER QMGR MAXPRTY(5)", 10).contains("FRY9405E"));
    assert!(mqsc_exit(&qm, "ALTER QMGR MAXUMSGS(0)", 10).contains("FRY9405E"));
    let d = mqsc_ok(&qm, "DISPLAY QMGR MAXUMSGS");
    assert_eq!(attr(&d, "MAXUMSGS").as_deref(), Some("500"), "{d}");
    // Applications still connect after the change.
    let conn = connect(&qm.bindings()).await;
    assert_eq!(conn.queue_manager_name(), "MQSC.QMGR");
    conn.disconnect().await.unwrap();
}

/// MAXFSIZE (MQ 9.2): MB of messages a queue may hold, DEFAULT or a number from 20; DISPLAY
/// shows it, QSTATUS shows CURMAXFS, a value out of range is refused naming the range, and
/// a put that would pass it gets 2056 MQRC_Q_SPACE_NOT_AVAILABLE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maxfsize_bounds_a_queue_and_shows_in_display_and_qstatus() {
    let qm = start("MQSC.MAXFS");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(BIG) MAXFSIZE(DEFAULT)\nDEFINE QLOCAL(SMALL) MAXFSIZE(20)",
    );
    let shown = mqsc_ok(&qm, "DISPLAY QLOCAL(BIG) MAXFSIZE");
    assert_eq!(
        attr(&shown, "MAXFSIZE").as_deref(),
        Some("DEFAULT"),
        "{shown}"
    );
    let shown = mqsc_ok(&qm, "DISPLAY QLOCAL(SMALL) MAXFSIZE");
    assert_eq!(attr(&shown, "MAXFSIZE").as_deref(), Some("20"), "{shown}");
    let status = mqsc_ok(&qm, "DISPLAY QSTATUS(BIG) CURMAXFS");
    assert_eq!(
        attr(&status, "CURMAXFS").as_deref(),
        Some("2088960"),
        "{status}"
    );
    let refused = mqsc_exit(&qm, "ALTER QLOCAL(SMALL) MAXFSIZE(10)", 10);
    assert!(
        refused.contains("MAXFSIZE") && refused.contains("20"),
        "the refusal names the attribute and its range: {refused}"
    );
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "SMALL", OpenOptions::OUTPUT).await;
    let body = "m".repeat(4 << 20);
    let mut failed = None;
    for n in 0..6 {
        let mut md = MessageDescriptor::default();
        if let Err(e) = within(
            "put",
            q.put(
                &mut md,
                &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
                body.clone(),
            ),
        )
        .await
        {
            failed = Some((n, e));
            break;
        }
    }
    let (n, e) = failed.expect("20 MB hold five 4 MiB messages, not six");
    assert_eq!((n, e.reason), (5, ReasonCode::QSpaceNotAvailable), "{e}");
}

/// STOP then START of a listener or an AMQP channel in one script (ferry mqsc sends
/// commands ahead of their answers): the port is free again at once, not only once the
/// stopped accept task has been dropped.
#[test]
fn a_stop_then_start_in_one_script_rebinds_the_port() {
    let qm = start("MQSC.RESTART");
    let port = free_port();
    mqsc_ok(
        &qm,
        &format!("DEFINE LISTENER(APP.LSTR) TRPTYPE(TCP) PORT({port}) CONTROL(MANUAL)"),
    );
    let mut script = String::from("START LISTENER(APP.LSTR)\n");
    for _ in 0..20 {
        script.push_str(
            "STOP LISTENER(APP.LSTR)\nSTART LISTENER(APP.LSTR)\n\
             STOP CHANNEL(SYSTEM.DEF.AMQP)\nSTART CHANNEL(SYSTEM.DEF.AMQP)\n",
        );
    }
    let out = qm.mqsc(&script);
    assert!(
        out.status.success(),
        "every start found its port free: {}",
        stdout(&out)
    );
    std::net::TcpStream::connect(("127.0.0.1", port)).expect("the listener listens");
    std::net::TcpStream::connect(("127.0.0.1", qm.amqp_port())).expect("the channel listens");
}
