//! DISPLAY QMSTATUS: MQ's queue manager status fields and the recovery log's counters.

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{execute, parse_command, CommandResult};
use ferry_objects::status::{QmgrStatus, RecoveryLogStatus};

fn run(t: &mut MemoryTarget, text: &str) -> CommandResult {
    match parse_command(text) {
        Ok(cmd) => execute(&cmd, t),
        Err(e) => CommandResult::syntax_error(&e),
    }
}

fn target() -> MemoryTarget {
    let mut t = MemoryTarget::with_defaults("QM1");
    t.qmgr_status = QmgrStatus {
        connections: 3,
        started_ms: 1_700_000_000_000,
        log: Some(RecoveryLogStatus {
            log_type: "CIRCULAR".into(),
            path: "/var/ferry/log/QM1".into(),
            current_extent: "S0000002.LOG".into(),
            restart_extent: "S0000001.LOG".into(),
            in_use_percent: 41,
            checkpoint_lsn: 123_456,
            restart_lsn: 120_000,
            durable_lsn: 130_000,
            bytes_written: 9_999_999,
            records: 5000,
            flushes: 250,
            checkpoints: 2,
            slow_writes: 1,
            last_slow_write: "W 65536 bytes S0000002.LOG took 150000 us, threshold 100000 us"
                .into(),
        }),
    };
    t
}

#[test]
fn display_qmstatus_all_shows_mq_fields_and_the_log() {
    let mut t = target();
    let r = run(&mut t, "DISPLAY QMSTATUS ALL");
    assert!(r.ok, "{:?}", r.lines);
    let text = r.lines.join("\n");
    assert!(text.contains("FRY8705I"), "{text}");
    for want in [
        "QMNAME(QM1)",
        "STATUS(RUNNING)",
        "CONNS(3)",
        "CURRLOG(S0000002.LOG)",
        "RECLOG(S0000001.LOG)",
        "LOGINUSE(41)",
        "LOGTYPE(CIRCULAR)",
        "CHKPTLSN(123456)",
        "LOGBYTES(9999999)",
        "LOGRECS(5000)",
        "LOGFLUSH(250)",
        "SLOWWRT(1)",
        "LASTSLOW(W 65536 bytes S0000002.LOG took 150000 us, threshold 100000 us)",
    ] {
        assert!(text.contains(want), "{want} missing from {text}");
    }
}

#[test]
fn display_qmstatus_shows_only_the_fields_asked_for() {
    let mut t = target();
    let r = run(&mut t, "dis qmstatus currlog loginuse");
    assert!(r.ok, "{:?}", r.lines);
    let text = r.lines.join("\n");
    assert!(text.contains("QMNAME(QM1)") && text.contains("CURRLOG(S0000002.LOG)"));
    assert!(text.contains("LOGINUSE(41)"), "{text}");
    assert!(!text.contains("LOGBYTES"), "{text}");
}

#[test]
fn display_qmstatus_refuses_unknown_fields_and_where() {
    let mut t = target();
    let r = run(&mut t, "DISPLAY QMSTATUS NOSUCH");
    assert!(!r.ok, "{:?}", r.lines);
    let r = run(&mut t, "DISPLAY QMSTATUS WHERE(CONNS GT 1)");
    assert!(!r.ok, "{:?}", r.lines);
}
