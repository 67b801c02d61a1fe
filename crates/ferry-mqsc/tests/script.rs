//! Script tests: continuation, comments, echo numbering, summaries, exit codes, sessions.

use ferry_mqsc::command::Command;
use ferry_mqsc::script::{logical_commands, EXIT_ERROR, EXIT_OK, EXIT_SOME_FAILED};
use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{
    exit_status, parse_script, run_script, ReadItem, RunOptions, ScriptReader, Session, Summary,
};
use ferry_objects::AttrValue;

#[test]
fn plus_continuation_strips_leading_blanks() {
    let cmds = logical_commands("DEFINE QLOCAL(A) +\n      MAXDEPTH(5)\n");
    assert_eq!(cmds.len(), 1);
    assert_eq!(cmds[0].text, "DEFINE QLOCAL(A) MAXDEPTH(5)");
    let cmds = logical_commands("DEFINE QLOCAL(A) DESCR('ab+\n     cd')\n");
    let parsed = ferry_mqsc::parse_command(&cmds[0].text).expect("parses");
    let Command::DefineQueue { settings, .. } = parsed else {
        panic!()
    };
    assert_eq!(settings[0].value, AttrValue::Text("abcd".into()));
}

#[test]
fn minus_continuation_keeps_leading_blanks() {
    let cmds = logical_commands("DEFINE QLOCAL(A) DESCR('ab-\n   cd')\n");
    let parsed = ferry_mqsc::parse_command(&cmds[0].text).expect("parses");
    let Command::DefineQueue { settings, .. } = parsed else {
        panic!()
    };
    assert_eq!(settings[0].value, AttrValue::Text("ab   cd".into()));
    assert_eq!(
        cmds[0].lines,
        vec!["DEFINE QLOCAL(A) DESCR('ab-", "   cd')"]
    );
}

#[test]
fn comments_and_blank_lines_are_skipped() {
    let script = "* a comment\n\n   * indented comment\nDEFINE QLOCAL(A)\n   \nDIS QL(A)\n";
    let cmds = logical_commands(script);
    assert_eq!(
        cmds.iter().map(|c| c.text.as_str()).collect::<Vec<_>>(),
        ["DEFINE QLOCAL(A)", "DIS QL(A)"]
    );
    assert_eq!(cmds[1].line_number, 6);
}

#[test]
fn reader_is_incremental() {
    let mut r = ScriptReader::new();
    assert_eq!(r.push_line("* hi"), Some(ReadItem::Comment("* hi".into())));
    assert_eq!(r.push_line("DEFINE QLOCAL(A) +"), None);
    assert!(r.is_continuing());
    let Some(ReadItem::Command(c)) = r.push_line("  MAXDEPTH(1)\r\n") else {
        panic!()
    };
    assert_eq!(c.text, "DEFINE QLOCAL(A) MAXDEPTH(1)");
    assert!(!r.is_continuing());
    assert_eq!(r.push_line("DIS QL(A) +"), None);
    assert_eq!(r.finish().map(|c| c.text), Some("DIS QL(A)".into()));
}

#[test]
fn parse_script_stops_at_end() {
    let results = parse_script("DEF QL(A)\nBOGUS\nEND\nDEF QL(B)\n");
    assert_eq!(results.len(), 3);
    assert!(results[0].is_ok());
    assert!(results[1].is_err());
    assert_eq!(results[2], Ok(Command::End));
}

#[test]
fn run_script_echoes_and_summarises() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let script = "\
* app queues
DEFINE QLOCAL(APP.Q) +
       MAXDEPTH(10)
DEFINE QLOCAL(APP.Q) MAXDPTH(10)
DELETE QLOCAL(NOPE)
";
    let out = run_script(script, &mut t, RunOptions::default());
    assert_eq!(
        out.lines,
        vec![
            "       : * app queues",
            "     1 : DEFINE QLOCAL(APP.Q) +",
            "       :        MAXDEPTH(10)",
            "FRY8006I: Ferry queue created.",
            "     2 : DEFINE QLOCAL(APP.Q) MAXDPTH(10)",
            "FRY8405I: Syntax error detected at or near end of command segment below:-",
            "DEFINE QLOCAL(APP.Q) MAXDPTH",
            "FRY9405E: MAXDPTH is not a valid keyword for QLOCAL.",
            "     3 : DELETE QLOCAL(NOPE)",
            "FRY8147E: Ferry object NOPE not found.",
            "3 MQSC commands read.",
            "One command has a syntax error.",
            "One valid MQSC command could not be processed.",
        ]
    );
    assert_eq!(
        out.summary,
        Summary {
            read: 3,
            syntax_errors: 1,
            failed: 1
        }
    );
    assert_eq!(out.exit_code(), EXIT_SOME_FAILED);
}

#[test]
fn all_good_script_exits_zero() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let out = run_script(
        "DEF QL(A)\nDIS QL(A) MAXDEPTH\nEND\nDEF QL(A)\n",
        &mut t,
        RunOptions::default(),
    );
    assert_eq!(
        out.lines[out.lines.len() - 3..],
        [
            "2 MQSC commands read.",
            "No commands have a syntax error.",
            "All valid MQSC commands were processed."
        ]
    );
    assert_eq!(out.exit_code(), EXIT_OK);
}

#[test]
fn summary_plurals_and_exit_codes() {
    let s = Summary {
        read: 7,
        syntax_errors: 2,
        failed: 3,
    };
    assert_eq!(
        s.lines(),
        vec![
            "7 MQSC commands read.",
            "2 commands have a syntax error.",
            "3 valid MQSC commands could not be processed.",
        ]
    );
    assert_eq!(s.exit_code(), 10);
    assert_eq!(
        Summary {
            read: 1,
            syntax_errors: 0,
            failed: 0
        }
        .exit_code(),
        0
    );
    assert_eq!(
        Summary {
            read: 1,
            syntax_errors: 1,
            failed: 0
        }
        .exit_code(),
        10
    );
    assert_eq!(exit_status(Some(&s)), 10);
    assert_eq!(exit_status(None), EXIT_ERROR);
}

#[test]
fn no_echo_and_verify_only() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let out = run_script(
        "DEF QL(A)\n",
        &mut t,
        RunOptions {
            echo: false,
            verify_only: false,
        },
    );
    assert_eq!(out.lines[0], "FRY8006I: Ferry queue created.");
    let mut t = MemoryTarget::with_defaults("QM1");
    let out = run_script(
        "DEF QL(B)\nDEF QL(C) BAD(1)\n",
        &mut t,
        RunOptions {
            echo: true,
            verify_only: true,
        },
    );
    assert!(!t.queues.contains_key("B"), "verify only runs nothing");
    assert_eq!(
        out.summary,
        Summary {
            read: 2,
            syntax_errors: 1,
            failed: 0
        }
    );
}

#[test]
fn interactive_session_line_by_line() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let mut s = Session::new(RunOptions::default());
    assert_eq!(
        Session::banner("QM1"),
        "Starting MQSC for queue manager QM1."
    );
    assert!(s.feed_line("define qlocal(x) +", &mut t).is_empty());
    assert!(s.is_continuing());
    let lines = s.feed_line("maxdepth(3)", &mut t);
    assert_eq!(
        lines,
        vec![
            "     1 : define qlocal(x) +",
            "       : maxdepth(3)",
            "FRY8006I: Ferry queue created."
        ]
    );
    assert!(s.feed_line("end", &mut t).is_empty());
    assert!(s.ended());
    assert!(s.feed_line("define qlocal(y)", &mut t).is_empty());
    let tail = s.finish(&mut t);
    assert_eq!(tail[0], "1 MQSC commands read.");
    assert!(!t.queues.contains_key("Y"));
}

#[test]
fn unterminated_continuation_runs_at_end_of_input() {
    let mut t = MemoryTarget::with_defaults("QM1");
    let out = run_script("DEF QL(A) +", &mut t, RunOptions::default());
    assert!(t.queues.contains_key("A"));
    assert_eq!(out.summary.read, 1);
}

/// Issue 18: a command of many megabytes must get a clear error, not make runmqsc (or
/// the command server) hold it. MQ's limit is 32,762 bytes (MQRCCF_COMMAND_LENGTH_ERROR).
#[test]
fn a_command_longer_than_the_limit_is_a_syntax_error_and_is_not_kept() {
    use ferry_mqsc::{ParseErrorKind, MAX_COMMAND_LENGTH};
    assert_eq!(MAX_COMMAND_LENGTH, 32_762);
    let huge = format!("DEFINE QLOCAL(A) DESCR('{}')", "x".repeat(10 << 20));
    let e = ferry_mqsc::parse_command(&huge).expect_err("too long");
    assert_eq!(
        e.kind,
        ParseErrorKind::TooLong {
            max: MAX_COMMAND_LENGTH
        }
    );
    assert!(e.command.len() < 100, "the error keeps only the beginning");
    assert!(e.segment().starts_with("DEFINE QLOCAL(A) DESCR('xxx"));
    // One byte under the limit is read as usual (here: DESCR is too long for QLOCAL).
    let at_limit = format!(
        "DEFINE QLOCAL(A) DESCR('{}')",
        "x".repeat(MAX_COMMAND_LENGTH - 26)
    );
    assert_eq!(at_limit.len(), MAX_COMMAND_LENGTH);
    assert!(!matches!(
        ferry_mqsc::parse_command(&at_limit).map_err(|e| e.kind),
        Err(ParseErrorKind::TooLong { .. })
    ));

    // Through a script: one huge line, then a command continued over many lines; the
    // reader keeps a bounded part of each, and the commands after them still run.
    let continued: String = (0..20_000)
        .map(|i| format!("DESCR{i}('abcdefgh') +\n"))
        .collect();
    let script = format!("{huge}\nDEFINE QLOCAL(B) +\n{continued} MAXDEPTH(1)\nDEFINE QLOCAL(C)\n");
    let mut r = ScriptReader::new();
    let mut commands = Vec::new();
    for line in script.lines() {
        if let Some(ReadItem::Command(c)) = r.push_line(line) {
            let kept: usize = c.text.len() + c.lines.iter().map(String::len).sum::<usize>();
            assert!(kept < 4 * MAX_COMMAND_LENGTH, "kept {kept} bytes");
            commands.push(c);
        }
    }
    assert_eq!(commands.len(), 3);
    for c in &commands[..2] {
        let e = ferry_mqsc::parse_command(&c.text).expect_err("too long");
        assert!(matches!(e.kind, ParseErrorKind::TooLong { .. }), "{e}");
    }
    assert_eq!(commands[2].text, "DEFINE QLOCAL(C)");
    let mut target = MemoryTarget::with_defaults("QM1");
    let out = run_script(&script, &mut target, RunOptions::default());
    assert_eq!(out.summary.read, 3);
    assert_eq!(out.summary.syntax_errors, 2);
    let text = out.lines.join("\n");
    assert!(
        text.contains("longer than 32762 bytes"),
        "{}",
        &text[..2000.min(text.len())]
    );
    assert!(
        text.len() < 8 * MAX_COMMAND_LENGTH,
        "{} bytes of output",
        text.len()
    );
}
