//! `ferry perf` workloads end to end against real server processes the harness starts
//! itself: RR-BB, SR-CC, PS-CC (native and AMQP) and AMQP RR-CC (each send mode) tiny runs, reply counting, steps
//! made invalid on purpose (damaged replies, a wrong CorrelId, a reply queue that does
//! not exist, request queues that refuse puts; native and AMQP), the
//! connection test, the recovery workload (fill, kill -9 and controlled restarts, drain),
//! `ferry perf report` on a run's JSON, RR-CC with channel compression (`--compress`), and
//! the messages bad flags get.
//! Steps are about a second each.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use ferry_perf::output::{json, Document};

fn ferry() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ferry"))
}

fn perf(args: &[&str], out: &Path) -> Output {
    ferry()
        .arg("perf")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run ferry perf")
}

fn text(o: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn read(path: &Path) -> Document {
    json::read(path).unwrap_or_else(|e| panic!("{e}"))
}

/// A scratch directory under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "ferry-perf-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&p).expect("scratch dir");
        Scratch(p)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const TINY: [&str; 4] = ["--secs", "1", "--warmup", "0.3"];

#[test]
fn rr_bb_counts_matched_replies() {
    let dir = Scratch::new();
    let mut args = vec!["rr-bb", "--clients", "1,3"];
    args.extend(TINY);
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("RR-BB (2KB Non-persistent) |"), "{}", text(&o));
    let doc = read(&dir.path().join("rr-bb.json"));
    let steps = &doc.series[0].steps;
    assert_eq!(steps.len(), 2);
    for s in steps {
        let f = &s.ferry;
        assert!(f.valid, "{f:?}");
        assert_eq!((f.errors, f.mismatches), (0, 0));
        let rts = f.window.round_trips;
        assert!(rts > 10, "{f:?}");
        // Every counted round trip's latency is recorded in the window, give or take
        // the round trips in flight at its edges.
        let recorded = f.latency.count;
        assert!(
            recorded.abs_diff(rts) <= f.clients as u64 + 1,
            "{rts} vs {recorded}"
        );
    }
    assert_eq!(doc.series[0].workload, "RR-BB");
    assert!(doc.machine.nproc >= 1);
}

#[test]
fn rr_dq_bb_crosses_two_queue_managers_and_reports_both() {
    let dir = Scratch::new();
    // Two channel pairs each way: requesters 1 and 3 (queues 2 and 4) go over the second
    // pair and get their replies back over it through the queue-manager alias.
    let mut args = vec![
        "rr-dq-bb",
        "--clients",
        "1,4",
        "--persistent",
        "--channel-pairs",
        "2",
    ];
    args.extend(TINY);
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("requesters on embedded PERFQMA"),
        "{}",
        text(&o)
    );
    let doc = read(&dir.path().join("rr-dq-bb.json"));
    assert_eq!(doc.series[0].workload, "RR-DQ-BB");
    for s in &doc.series[0].steps {
        let f = &s.ferry;
        assert!(f.valid, "{f:?}");
        assert!(f.window.round_trips > 5, "{f:?}");
        // Both queue managers' CPU, and their sum as the server's.
        let (a, b) = (
            f.window
                .requesters_qmgr_us_per_rt
                .expect("requesters' QM CPU"),
            f.window
                .responders_qmgr_us_per_rt
                .expect("responders' QM CPU"),
        );
        let both = f.window.server_us_per_rt.expect("server CPU");
        assert!(
            (a + b - both).abs() < 0.01 * both + 0.5,
            "{a} + {b} vs {both}"
        );
        let batch = f.messages_per_batch.expect("messages per batch");
        assert!(batch >= 1.0, "{batch}");
    }
}

/// RR-CLUSTER-BB forms a cluster of three queue managers with MQSC, and requests bound
/// not fixed are shared between the two instances of each cluster queue, the replies
/// coming back over the cluster.
#[test]
fn rr_cluster_bb_shares_requests_between_the_instances() {
    let dir = Scratch::new();
    let mut args = vec!["rr-cluster-bb", "--clients", "4", "--bind", "not-fixed"];
    args.extend(TINY);
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let doc = read(&dir.path().join("rr-cluster-bb.json"));
    assert_eq!(doc.series[0].workload, "RR-CLUSTER-BB");
    for s in &doc.series[0].steps {
        let f = &s.ferry;
        assert!(f.valid, "{f:?}");
        assert!(f.window.round_trips > 5, "{f:?}");
        let shares = f.instances.as_ref().expect("the instances' shares");
        let names: Vec<&str> = shares.iter().map(|s| s.qmgr.as_str()).collect();
        assert_eq!(names, ["PERFQMB", "PERFQMC"]);
        let total: u64 = shares.iter().map(|s| s.requests).sum();
        assert!(total >= f.window.round_trips, "{shares:?}");
        for share in shares {
            assert!(
                share.requests * 3 > total,
                "not fixed: each instance gets about half, not {shares:?}"
            );
        }
        assert!(f.window.responders_qmgr_us_per_rt.is_some(), "{f:?}");
    }
}

#[test]
fn sr_cc_reports_messages_and_queue_depth() {
    let dir = Scratch::new();
    let mut args = vec!["sr-cc", "--clients", "2"];
    args.extend(TINY);
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Depth at end"), "{}", text(&o));
    assert!(out.contains("*Messages/sec"), "{}", text(&o));
    let doc = read(&dir.path().join("sr-cc.json"));
    let s = &doc.series[0].steps[0].ferry;
    assert!(s.valid, "{s:?}");
    assert_eq!(s.responders, 4, "two receivers per queue");
    assert!(s.queue_depth_end.is_some(), "{s:?}");
    assert!(s.sent.unwrap_or(0) > 0, "{s:?}");
    let csv = std::fs::read_to_string(dir.path().join("sr-cc.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 2, "{csv}");
}

/// PS-CC: every publication reaches every subscriber of its topic. `protocol` is empty
/// (native) or `--protocol amqp`; `stem` names the files, `name` the series.
fn ps_cc_run(protocol: &[&str], stem: &str, name: &str) {
    let dir = Scratch::new();
    let mut args = vec!["ps-cc"];
    args.extend(protocol);
    args.extend(["--clients", "1,3"]);
    args.extend(TINY);
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Subscribers | Deliveries/s"), "{}", text(&o));
    assert!(out.contains("*Deliveries/sec"), "{}", text(&o));
    let doc = read(&dir.path().join(format!("{stem}.json")));
    let series = &doc.series[0];
    assert_eq!(series.test, name, "{}", text(&o));
    assert_eq!(series.rate_unit, "Deliveries/s");
    assert_eq!(series.steps.len(), 2);
    for step in &series.steps {
        let f = &step.ferry;
        assert!(f.valid, "{f:?}\n{}", text(&o));
        assert_eq!((f.errors, f.mismatches, f.lost), (0, 0, Some(0)), "{f:?}");
        assert_eq!(f.responders, 1, "one publisher");
        let deliveries = f.window.round_trips;
        assert!(deliveries > 10 && f.window.rate > 0.0, "{f:?}");
        // One topic: each publication is a copy for every subscriber; in the window,
        // give or take the copies in flight at its edges.
        let publications = f.sent.expect("publications counted");
        let due = publications * f.clients as u64;
        let slack = due / 10 + f.queue_depth_end.unwrap_or(0) + 4 * f.clients as u64;
        assert!(
            deliveries.abs_diff(due) <= slack,
            "{deliveries} deliveries for {publications} publications to {} subscribers: {f:?}",
            f.clients
        );
        assert!(f.latency.count > 0, "put-to-get latency recorded: {f:?}");
    }
    let csv = std::fs::read_to_string(dir.path().join(format!("{stem}.csv"))).expect("csv");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv
        .lines()
        .next()
        .unwrap_or_default()
        .contains(",per_subscriber_rate,lost,"));
    // `ferry perf report` re-renders the run.
    let file = dir.path().join(format!("{stem}.json"));
    let again = dir.path().join("again");
    let o = perf(&["report", file.to_str().expect("utf-8 path")], &again);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(again.join(format!("{stem}.md"))).expect("md");
    assert!(md.contains("| Subscribers | Deliveries/s |"), "{md}");
    assert!(md.contains("1 publisher on 1 topic"), "{md}");
}

#[test]
fn ps_cc_delivers_every_publication_to_every_subscriber() {
    ps_cc_run(&[], "ps-cc", "PS-CC (2KB Non-persistent)");
}

/// Over AMQP, subscribers that accept every copy and NoAck (presettled) ones.
#[test]
fn amqp_ps_cc_delivers_every_publication_with_and_without_acks() {
    ps_cc_run(
        &["--protocol", "amqp"],
        "ps-cc-amqp",
        "PS-CC AMQP (2KB Non-persistent)",
    );
    ps_cc_run(
        &["--protocol", "amqp", "--no-ack"],
        "ps-cc-amqp",
        "PS-CC AMQP (2KB Non-persistent, NoAck)",
    );
}

#[test]
fn rr_cc_compresses_json_bodies_and_reports_comprate() {
    let dir = Scratch::new();
    let mut args = vec![
        "rr-cc",
        "--clients",
        "2",
        "--sizes",
        "20KB",
        "--compress",
        "ZLIBFAST",
    ];
    args.extend(TINY);
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("PERF.COMP.SVRCONN, which agrees to ZLIBFAST"),
        "{}",
        text(&o)
    );
    let doc = read(&dir.path().join("rr-cc.json"));
    let series = &doc.series[0];
    assert_eq!(
        series.test,
        "RR-CC (20KB Non-persistent, COMPMSG(ZLIBFAST), JSON)"
    );
    let f = &series.steps[0].ferry;
    assert!(f.valid, "replies came back intact: {f:?}");
    let c = f.compression.as_ref().expect("COMPRATE read");
    assert_eq!(
        (c.channel.as_str(), c.technique.as_str()),
        ("PERF.COMP.SVRCONN", "ZLIBFAST")
    );
    assert!(c.instances >= 2, "{c:?}");
    assert!(
        (20.0..95.0).contains(&c.rate_long_pct),
        "JSON-like bodies compress, but not to nothing: {c:?}"
    );
}

fn invalid_run(fault: &str, expect: &str) {
    invalid_run_over(&[], fault, expect);
}

fn invalid_run_over(protocol: &[&str], fault: &str, expect: &str) {
    let dir = Scratch::new();
    let mut args = vec!["rr-cc"];
    args.extend(protocol);
    args.extend([
        "--clients",
        "1",
        "--secs",
        "1",
        "--warmup",
        "0",
        "--reply-timeout",
        "1",
        "--fault",
        fault,
    ]);
    let o = perf(&args, dir.path());
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("step 1 clients INVALID"), "{}", text(&o));
    assert!(out.contains(expect), "{}", text(&o));
    assert!(out.contains("| no valid step |"), "{}", text(&o));
    let stem = if protocol.is_empty() {
        "rr-cc"
    } else {
        "rr-cc-amqp"
    };
    let doc = read(&dir.path().join(format!("{stem}.json")));
    assert!(!doc.series[0].steps[0].ferry.valid);
}

#[test]
fn a_damaged_reply_makes_the_step_invalid() {
    invalid_run("corrupt-body", "CorruptBody");
}

#[test]
fn a_reply_with_the_wrong_correl_id_is_never_counted() {
    invalid_run("wrong-correl-id", "no reply within 1 s");
}

#[test]
fn a_reply_queue_that_does_not_exist_makes_the_step_invalid() {
    invalid_run("missing-reply-queue", "2085");
}

/// RR-CC over AMQP in each way a JMS application sends: as Qpid JMS does by default
/// (non-persistent sends async), every send waiting (`--sync-send`, Qpid JMS's
/// `jms.forceSyncSend`), and presettled; every step valid, each named for its mode.
#[test]
fn amqp_rr_cc_is_valid_in_every_send_mode() {
    for (mode, name) in [
        (None, "RR-CC AMQP (2KB Non-persistent)"),
        (
            Some("--sync-send"),
            "RR-CC AMQP (2KB Non-persistent, sync send)",
        ),
        (
            Some("--presettled"),
            "RR-CC AMQP (2KB Non-persistent, presettled)",
        ),
    ] {
        let dir = Scratch::new();
        let mut args = vec!["rr-cc", "--protocol", "amqp", "--clients", "1,4"];
        args.extend(mode);
        args.extend(TINY);
        let o = perf(&args, dir.path());
        assert!(o.status.success(), "{}", text(&o));
        let doc = read(&dir.path().join("rr-cc-amqp.json"));
        let series = &doc.series[0];
        assert_eq!(series.test, name, "{}", text(&o));
        assert_eq!(series.steps.len(), 2);
        for step in &series.steps {
            let f = &step.ferry;
            assert!(f.valid, "{mode:?}: {}", text(&o));
            assert_eq!((f.errors, f.mismatches), (0, 0), "{mode:?}");
            assert!(f.window.round_trips > 10, "{mode:?}: {f:?}");
        }
    }
}

#[test]
fn amqp_replies_with_the_wrong_correlation_id_are_never_counted() {
    invalid_run_over(
        &["--protocol", "amqp"],
        "wrong-correl-id",
        "no reply within 1 s",
    );
}

#[test]
fn amqp_a_damaged_reply_makes_the_step_invalid() {
    invalid_run_over(&["--protocol", "amqp"], "corrupt-body", "CorruptBody");
}

#[test]
fn refused_requests_make_the_step_invalid() {
    invalid_run("put-inhibited", "2051 MQRC_PUT_INHIBITED");
}

/// A non-persistent request is sent async (Qpid JMS's default): its refusal still
/// reaches the requester at once, not as a reply timeout.
#[test]
fn amqp_refused_async_requests_make_the_step_invalid() {
    invalid_run_over(
        &["--protocol", "amqp"],
        "put-inhibited",
        "send request: message to 'REQUEST.1' not accepted: rejected: amqp:not-allowed",
    );
}

#[test]
fn connection_test_connects_everyone() {
    let dir = Scratch::new();
    let o = perf(&["connect", "--clients", "50", "--secs", "0.5"], dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("Connect all s"), "{}", text(&o));
    let doc = read(&dir.path().join("connect.json"));
    let s = &doc.series[0].steps[0].ferry;
    assert_eq!(s.window.round_trips, 50, "{s:?}");
    assert_eq!(
        s.sent,
        Some(50),
        "one round trip each right after connecting"
    );
    assert_eq!(doc.series[0].rate_unit, "Connections/s");
}

#[test]
fn recovery_restarts_twice_and_accounts_for_every_message() {
    let dir = Scratch::new();
    let args = [
        "recovery",
        "--messages",
        "2000",
        "--queues",
        "2",
        "--putters",
        "4",
    ];
    let o = perf(&args, dir.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("all accounted for"), "{}", text(&o));
    let r = ferry_perf::workload::recovery_report::read(&dir.path().join("recovery.json"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(r.valid, "{r:?}");
    assert_eq!((r.fill.messages, r.fill.errors), (2000, 0));
    assert_eq!(r.fill.slices.len(), 10);
    let v = &r.verification;
    assert_eq!((v.put, v.got, v.got_by_probes), (2000, 2000, 2));
    assert_eq!(v.left_on_queues, Some(0));
    let hows: Vec<&str> = r.restarts.iter().map(|x| x.how.as_str()).collect();
    assert_eq!(hows, ["kill -9", "controlled stop"]);
    let (killed, stopped) = (&r.restarts[0], &r.restarts[1]);
    assert!(killed.stop_secs.is_none() && stopped.stop_secs.is_some());
    assert_eq!((killed.depth, stopped.depth), (Some(1999), Some(1998)));
    assert!(killed.first_get_secs >= killed.listening_secs);
    assert!(stopped.memory.is_some_and(|m| m.rss_bytes > 0));
    // After the controlled stop every message is in the queue files.
    assert!(
        stopped.error_log.iter().any(|l| l.contains("FRY7234I")),
        "{stopped:?}"
    );
    assert!(stopped.disk.queue_files_bytes > 2000 * 2048, "{stopped:?}");
    assert_eq!(r.drain.messages, 1998);
}

#[test]
fn recovery_refuses_a_queue_without_a_putter() {
    let dir = Scratch::new();
    let o = perf(
        &[
            "recovery",
            "--messages",
            "10",
            "--queues",
            "4",
            "--putters",
            "2",
        ],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("every queue needs a putter"),
        "{}",
        text(&o)
    );
}

#[test]
fn report_rerenders_and_overlays_runs() {
    let dir = Scratch::new();
    let run = dir.path().join("run");
    let mut args = vec!["rr-cc", "--clients", "1,2", "--sizes", "256B"];
    args.extend(TINY);
    let o = perf(&args, &run);
    assert!(o.status.success(), "{}", text(&o));
    let file = run.join("rr-cc.json");
    let file = file.to_str().expect("utf-8 path");
    let again = dir.path().join("again");
    let o = perf(&["report", file, file, "--title", "twice"], &again);
    assert!(o.status.success(), "{}", text(&o));
    for name in [
        "report.json",
        "report.csv",
        "report.md",
        "report.svg",
        "report.png",
    ] {
        let len = std::fs::metadata(again.join(name))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 100, "{name}: {len} bytes\n{}", text(&o));
    }
    let md = std::fs::read_to_string(again.join("report.md")).expect("md");
    assert!(md.starts_with("# Ferry performance: twice"), "{md}");
    assert!(
        md.contains("RR-CC (256B Non-persistent) [run/rr-cc]"),
        "{md}"
    );
    assert!(
        md.contains("![RR-CC: Round trips/s and queue manager CPU](report.png)"),
        "{md}"
    );
    let o = perf(&["report", "/nonexistent/x.json"], &again);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read /nonexistent/x.json"));
}

fn refused(args: &[&str], code: i32, expect: &str) {
    let o = ferry().arg("perf").args(args).output().expect("run");
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(expect), "{args:?}: {}", text(&o));
}

#[test]
fn bad_flags_and_missing_workloads_get_clear_messages() {
    refused(
        &["rr-cc", "--clients", "1,x"],
        2,
        "invalid client count 'x'",
    );
    refused(&["rr-cc", "--sizes", "2KB,9GB"], 2, "invalid size '9GB'");
    refused(&["rr-cc", "--rate=-3"], 2, "per requester");
    refused(&["rr-cc", "--secs", "0"], 2, "greater than 0");
    refused(
        &["rr-cc", "--cipherspec", "ECDHE_RSA_AES_256_CBC_SHA384"],
        2,
        "CBC",
    );
    refused(
        &["rr-cc", "--connect", "localhost(1)", "--cipherspec", "ANY"],
        2,
        "--key-repository",
    );
    refused(&["sr-cc", "--compress", "LZ4"], 2, "LZ4FAST");
    refused(&["rr-cc", "--compress", "ANY"], 2, "receiving end");
    refused(&["rr-bb", "--compress", "RLE"], 2, "bindings mode");
    refused(
        &["rr-bb", "--responders", "2"],
        2,
        "every request queue needs a responder",
    );
    refused(&["sr-cc", "--relay-baseline", "/bin/sh"], 2, "rr-cc only");
    refused(&["rr-cc", "--qmgr", "QM1"], 2, "--connect");
    refused(
        &["ps-cc", "--publishers", "2", "--clients", "1,4"],
        2,
        "every topic needs a subscriber",
    );
    refused(&["ps-cc", "--no-ack"], 2, "add --protocol amqp");
    refused(
        &["rr-dq-bb", "--connect", "localhost(1414)"],
        2,
        "two embedded queue managers",
    );
    refused(
        &["rr-dq-bb", "--channel-pairs", "10"],
        2,
        "give a whole number from 1 to 9",
    );
    refused(&["suite", "nightly"], 2, "unknown suite 'nightly'");
    refused(&["report"], 2, "FILES");
}

#[test]
fn the_standard_suite_lists_its_runs() {
    let o = ferry()
        .args(["perf", "suite", "standard", "--list"])
        .output()
        .expect("run");
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("rr-cc-np         ferry perf rr-cc --sizes 256B,2KB,20KB,200KB"),
        "{out}"
    );
    assert!(out.contains("connect --clients 1000,4000"), "{out}");
}
