//! Fuzzes the MQSC parser and executor: arbitrary UTF-8 as a script, run against the
//! in-memory target. Any panic is a bug.
#![no_main]

use ferry_mqsc::testing::MemoryTarget;
use ferry_mqsc::{parse_command, parse_script, run_script, RunOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = parse_command(text);
    let _ = parse_script(text);
    let mut target = MemoryTarget::with_defaults("QM1");
    let out = run_script(text, &mut target, RunOptions::default());
    assert!(out.summary.syntax_errors + out.summary.failed <= out.summary.read);
});
