//! The error log and the console log under a flood, against real queue manager processes:
//! repeats of client-triggered messages are suppressed with a count (QMErrorLog
//! SuppressInterval), ExcludeMessage drops a message entirely, earlier history stays in
//! FRYERR01-03, and run/console.log of a background queue manager rotates by size
//! (QMErrorLog ConsoleLogSize) so neither log outgrows its bound.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::*;

/// The smallest ConsoleLogSize and ErrorLogSize qm.ini accepts.
const SMALL_LOG: u64 = 32_768;

/// Appends a QMErrorLog stanza to `qm`'s qm.ini (a repeated stanza's later keys win).
fn set_error_log_keys(qm: &TestQueueManager, keys: &str) {
    let path = qm.qm_dir().join("qm.ini");
    let mut ini = std::fs::read_to_string(&path).unwrap();
    ini.push_str("QMErrorLog:\n");
    for kv in keys.split_whitespace() {
        ini.push_str(&format!("   {kv}\n"));
    }
    std::fs::write(&path, ini).unwrap();
}

/// Starts `qm` in the background with `ferry start`, as an administrator does, so its
/// output goes to run/console.log; the guard kills it if the test fails.
fn start_in_background(qm: &TestQueueManager) -> BackgroundQm {
    let out = Command::new(bin())
        .args(["start", qm.name()])
        .env("FERRY_HOME", qm.home())
        .env("FERRY_LOG", "info")
        .output()
        .expect("run ferry start");
    assert!(out.status.success(), "ferry start: {}", stderr(&out));
    let guard = BackgroundQm { dir: qm.qm_dir() };
    assert!(guard.pid().is_some(), "no running pid after start");
    guard
}

/// Stops a background queue manager (controlled) and waits until its process is gone.
fn stop_background(qm: &TestQueueManager, guard: &BackgroundQm) {
    let out = qm.ferry(&["stop", qm.name()]);
    assert!(out.status.success(), "ferry stop: {}", stderr(&out));
    wait_until("the queue manager process to end", || guard.pid().is_none());
}

/// FRYERR01-03 together, oldest first.
fn all_error_logs(qm: &TestQueueManager) -> String {
    (1..=3)
        .rev()
        .map(|n| qm.qm_dir().join("errors").join(format!("FRYERR{n:02}.LOG")))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .collect()
}

fn console_file(qm: &TestQueueManager, n: usize) -> PathBuf {
    let name = match n {
        0 => "console.log".to_string(),
        n => format!("console.log.{n}"),
    };
    qm.qm_dir().join("run").join(name)
}

fn size(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

/// Opens `n` connections to the native listener that each send 16 bytes of garbage
/// (never the Ferry magic), as a port scanner or a confused client does; each ends in
/// one FRY9504E protocol error.
fn bad_connections(port: u16, n: usize) {
    let mut rng = Rng::new(0xbad);
    for _ in 0..n {
        let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        s.set_read_timeout(Some(DEADLINE)).unwrap();
        let mut bytes = rng.bytes(16);
        bytes[0] = b'G';
        // The server may close before everything is written: that is fine.
        let _ = s.write_all(&bytes);
        let _ = s.shutdown(Shutdown::Write);
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
}

/// Issue 18 point 7: thousands of bad connections leave a handful of FRY9504E entries
/// and counts that account for every one of them, the start of the queue manager is still
/// in the error log, and the console log stays within its size.
#[test]
fn a_flood_of_bad_connections_is_counted_not_written() {
    const FLOOD: usize = 3000;
    const INTERVAL: u64 = 2;
    let mut qm = start("ELOG.FLOOD");
    stop_qm(&mut qm);
    set_error_log_keys(
        &qm,
        &format!("ErrorLogSize={SMALL_LOG} ConsoleLogSize={SMALL_LOG} SuppressInterval={INTERVAL}"),
    );
    let guard = start_in_background(&qm);

    let began = Instant::now();
    bad_connections(qm.port(), FLOOD);
    let flood_secs = began.elapsed().as_secs();
    // The count arrives when the interval ends, without waiting for another message.
    wait_until("the count of suppressed FRY9504E", || {
        all_error_logs(&qm).contains("FRY9504E repeated")
    });
    // The queue manager served throughout: the administrator's commands work.
    mqsc_ok(&qm, "DISPLAY QMGR");
    // Counts still open are written at shutdown.
    stop_background(&qm, &guard);

    let log = all_error_logs(&qm);
    let written = log.matches("FRY9504E: ").count() as u64;
    assert_eq!(
        error_log_accounted(&log, "FRY9504E"),
        FLOOD as u64,
        "every bad connection is written or counted: {log}"
    );
    // One entry per interval (and maybe one more as the flood straddles them).
    let windows = flood_secs / INTERVAL + 2;
    assert!(
        written <= windows,
        "{written} FRY9504E entries for {flood_secs} s of flood"
    );
    assert!(log.contains("FRY7185W"), "{log}");
    assert!(
        log.matches("FRY8003I").count() >= 2,
        "both starts are still in the error log: {log}"
    );
    assert!(log.contains("FRY8004I"), "{log}");
    let console = size(&console_file(&qm, 0));
    assert!(
        console <= SMALL_LOG,
        "console.log is {console} bytes, ConsoleLogSize {SMALL_LOG}"
    );
    let console_text = std::fs::read_to_string(console_file(&qm, 0)).unwrap();
    assert!(
        console_text.matches("FRY9504E: ").count() as u64 <= written,
        "suppressed repeats stay out of the console log too: {console_text}"
    );
    assert!(console_text.contains("FRY9504E repeated"), "{console_text}");
}

/// The console log of a background queue manager rotates by size: lines past
/// ConsoleLogSize move to console.log.1 and .2, no file outgrows the size, no line is lost
/// while three files hold them, and ferry start still explains a failed start from it.
#[test]
fn the_console_log_rotates_by_size() {
    const CYCLES: usize = 400;
    let mut qm = start("ELOG.CONSOLE");
    stop_qm(&mut qm);
    set_error_log_keys(&qm, &format!("ConsoleLogSize={SMALL_LOG}"));
    let guard = start_in_background(&qm);

    // Each stop and start of the AMQP channel writes a line (FRY5042I, FRY5041I):
    // not suppressed, so ~80 KB of console output.
    let script = "STOP CHANNEL(SYSTEM.DEF.AMQP)\nSTART CHANNEL(SYSTEM.DEF.AMQP)\n".repeat(CYCLES);
    let out = qm.mqsc(&script);
    assert!(out.status.success(), "{}", stdout(&out));

    let mut ended = 0;
    for n in 0..3 {
        let path = console_file(&qm, n);
        assert!(path.exists(), "{} after ~80 KB of output", path.display());
        assert!(
            size(&path) <= SMALL_LOG,
            "{} is {} bytes",
            path.display(),
            size(&path)
        );
        ended += std::fs::read_to_string(&path)
            .unwrap()
            .matches("FRY5042I")
            .count();
    }
    assert!(!console_file(&qm, 3).exists(), "three files are kept");
    assert_eq!(ended, CYCLES, "every line is in one of the three files");
    stop_background(&qm, &guard);

    // A start that fails is still explained from console.log.
    let ini_path = qm.qm_dir().join("qm.ini");
    let ini = std::fs::read_to_string(&ini_path).unwrap();
    std::fs::write(
        &ini_path,
        format!("{ini}QMErrorLog:\n   SuppressInterval=0\n"),
    )
    .unwrap();
    let out = qm.ferry(&["start", qm.name()]);
    assert!(!out.status.success(), "started with a bad qm.ini");
    let said = stderr(&out);
    assert!(said.contains("FRY7028E"), "{said}");
    assert!(said.contains("SuppressInterval"), "names the key: {said}");
}

/// ExcludeMessage drops a message entirely: no entry, no count, nothing on the console;
/// other messages are written as before.
#[test]
fn excluded_messages_are_not_written_at_all() {
    let mut qm = start("ELOG.EXCLUDE");
    stop_qm(&mut qm);
    set_error_log_keys(&qm, "ExcludeMessage=9504 SuppressInterval=1");
    qm.launch();
    bad_connections(qm.port(), 50);
    // The stop ends every suppression interval: a count would be written now.
    stop_qm(&mut qm);
    let log = all_error_logs(&qm);
    assert!(!log.contains("FRY9504E"), "{log}");
    assert!(!log.contains("FRY7185W"), "{log}");
    assert!(log.contains("FRY8004I"), "{log}");
    assert!(!qm.console().contains("FRY9504E"), "{}", qm.console());
}
