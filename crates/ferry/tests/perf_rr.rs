//! `ferry perf rr-cc` end to end: a tiny RR-CC run (1 and 4 requesters, 1 s each)
//! against an embedded queue manager the harness starts and stops itself, the files it
//! writes, and the messages bad flags get; `ferry perf` runs the `ferry-perf`
//! executable beside `ferry`, and says so when it is missing.

use std::process::Command;

fn ferry() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
}

#[test]
fn tiny_rr_cc_run_is_valid_and_writes_json() {
    let json = std::env::temp_dir().join(format!("ferry-perf-rr-{}.json", std::process::id()));
    let out_dir = std::env::temp_dir().join(format!("ferry-perf-rr-{}", std::process::id()));
    let out = ferry()
        .args([
            "perf",
            "rr-cc",
            "--clients",
            "1,4",
            "--secs",
            "1",
            "--warmup",
            "0.5",
            "--json",
        ])
        .arg(&json)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .expect("run ferry perf");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "ferry perf failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("Round trips/s"), "{stdout}");
    assert!(stdout.contains("RR-CC (2KB Non-persistent) |"), "{stdout}");
    let text = std::fs::read_to_string(&json).expect("json written");
    let _ = std::fs::remove_file(&json);
    let md = std::fs::read_to_string(out_dir.join("rr-cc.md")).expect("markdown written");
    for f in ["rr-cc.json", "rr-cc.csv", "rr-cc.svg", "rr-cc.png"] {
        assert!(out_dir.join(f).is_file(), "{f} written");
    }
    let _ = std::fs::remove_dir_all(&out_dir);
    assert!(md.contains("| RR-CC (2KB Non-persistent) |"), "{md}");
    // The command is recorded as the user typed it, with no machine's path for the
    // harness (the --json and --out paths are the user's own arguments).
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let command = doc["command"].as_str().expect("command recorded");
    assert!(
        command.starts_with("ferry perf rr-cc --clients 1,4 --secs 1 --warmup 0.5 --json "),
        "{command}"
    );
    assert!(!command.contains("target/"), "{command}");
    assert_eq!(text.matches("\"valid\": true").count(), 2, "{text}");
    assert!(!text.contains("\"valid\": false"), "{text}");
    assert!(text.contains("\"clients\": 4"), "{text}");
}

#[test]
fn bad_flags_say_what_is_accepted() {
    let out = ferry()
        .args(["perf", "rr-cc", "--clients", "0"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1,4,16,64"), "{err}");

    let out = ferry()
        .args(["perf", "rr-cc", "--size", "3XB"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("256B, 2KB, 20KB, 200KB, 2MB"), "{err}");

    let out = ferry()
        .args(["perf", "rr-cc", "--responders", "3"])
        .output()
        .expect("run");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("every request queue needs a responder"),
        "{err}"
    );
}

#[test]
fn perf_help_is_the_harness_s() {
    let out = ferry().args(["perf", "--help"]).output().expect("run");
    assert!(out.status.success(), "{out:?}");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("Usage: ferry perf"), "{help}");
    assert!(help.contains("rr-cc"), "{help}");
}

#[test]
fn a_missing_harness_is_named_with_how_to_build_it() {
    // A ferry installed without ferry-perf beside it.
    let dir = tempfile::tempdir().expect("temp dir");
    let lone = dir.path().join("ferry");
    std::fs::copy(env!("CARGO_BIN_EXE_ferry"), &lone).expect("copy ferry");
    let out = Command::new(&lone)
        .args(["perf", "rr-cc", "--clients", "1"])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let expected = dir.path().join("ferry-perf");
    assert!(
        err.contains(&format!("{} does not exist", expected.display())),
        "{err}"
    );
    assert!(err.contains("cargo build --release -p ferry"), "{err}");
    // The queue manager's own commands do not need the harness.
    let version = Command::new(&lone).arg("--version").output().expect("run");
    assert!(version.status.success(), "{version:?}");
}
