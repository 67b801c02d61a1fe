//! Results of a run: per-step figures (next to the relay yardstick when it ran), the
//! plain-text per-step table and the reports' summary table ("Test | Max Rate | CPU% |
//! Clients"). A [`RunReport`] is one series (one workload, size and persistence); files
//! are written by [`crate::output`].

use serde::{Deserialize, Serialize};

use crate::relay::RelayResult;
use crate::workload::step::StepOutcome;

/// One step (one clients value): Ferry's figures and, when asked for, the relay's.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepReport {
    /// What Ferry did.
    #[serde(flatten)]
    pub ferry: StepOutcome,
    /// What the relay did with the same requesters, size and durations.
    #[serde(default)]
    pub relay: Option<RelayResult>,
    /// Why the relay has no figures, when it was asked for and failed.
    #[serde(default)]
    pub relay_error: Option<String>,
    /// Ferry's round trips/s as a percentage of the relay's.
    #[serde(default)]
    pub ferry_vs_relay_pct: Option<f64>,
    /// Ferry's server CPU per round trip divided by the relay's.
    #[serde(default)]
    pub server_cpu_vs_relay: Option<f64>,
}

impl StepReport {
    /// Combines a Ferry step with the relay's result for the same step.
    pub fn new(ferry: StepOutcome, relay: Result<Option<RelayResult>, String>) -> StepReport {
        let (relay, relay_error) = match relay {
            Ok(r) => (r, None),
            Err(e) => (None, Some(e)),
        };
        let ferry_vs_relay_pct = relay
            .as_ref()
            .and_then(|r| percent(ferry.window.rate, r.rate));
        let server_cpu_vs_relay = relay
            .as_ref()
            .and_then(|r| ratio(ferry.window.server_us_per_rt?, r.relay_us_per_rt?));
        StepReport {
            ferry,
            relay,
            relay_error,
            ferry_vs_relay_pct,
            server_cpu_vs_relay,
        }
    }
}

/// `a` as a percentage of `b` (`None` when `b` is not positive).
pub fn percent(a: f64, b: f64) -> Option<f64> {
    ratio(a, b).map(|r| r * 100.0)
}

/// `a / b` (`None` when `b` is not positive).
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0 && a.is_finite() && b.is_finite()).then(|| a / b)
}

/// The reports' summary: the best valid step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// E.g. `RR-CC (2KB Non-persistent)`.
    pub test: String,
    /// Highest round trips/s of a valid step.
    pub max_rate: f64,
    /// Server CPU% of the machine at that step.
    pub cpu_pct: Option<f64>,
    /// Requesters at that step.
    pub clients: usize,
}

/// Picks the valid step with the highest rate.
pub fn summarize(test: &str, steps: &[StepReport]) -> Option<Summary> {
    steps
        .iter()
        .filter(|s| s.ferry.valid)
        .max_by(|a, b| a.ferry.window.rate.total_cmp(&b.ferry.window.rate))
        .map(|s| Summary {
            test: test.to_string(),
            max_rate: s.ferry.window.rate,
            cpu_pct: s.ferry.window.server_cpu_pct,
            clients: s.ferry.clients,
        })
}

fn round_trips_per_sec() -> String {
    "Round trips/s".into()
}

/// Everything one series (one workload, size and persistence) measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    /// Workload name, e.g. `RR-CC`.
    pub workload: String,
    /// The reports' test name, e.g. `RR-CC (2KB Non-persistent)`.
    pub test: String,
    /// What the rate counts: `Round trips/s`, `Messages/s` or `Connections/s`.
    #[serde(default = "round_trips_per_sec")]
    pub rate_unit: String,
    /// Message size in bytes.
    pub size: usize,
    /// Persistent messages.
    pub persistent: bool,
    /// Puts and gets in syncpoint.
    #[serde(default)]
    pub syncpoint: bool,
    /// Messages per second per requester in rated mode (`None`: unrated).
    #[serde(default)]
    pub rate_per_requester: Option<f64>,
    /// qm.ini values the embedded queue manager was given.
    #[serde(default)]
    pub tuning: Vec<String>,
    /// Measured seconds per step.
    pub secs: f64,
    /// Warm-up seconds per step.
    pub warmup: f64,
    /// Request queues.
    pub queues: usize,
    /// SHARECNV asked for (0: an AMQP run).
    pub sharecnv: u32,
    /// AMQP sessions (applications) per connection (0: not an AMQP run).
    #[serde(default)]
    pub amqp_sessions: u32,
    /// `auto` or the fixed responder count.
    pub responders: String,
    /// What was measured.
    pub target: String,
    /// CPUs of the machine (CPU% is of all of them).
    pub cpus: usize,
    /// Clock ticks per second of /proc CPU figures.
    pub ticks_per_sec: u64,
    /// Every step, in the order run.
    pub steps: Vec<StepReport>,
    /// The best valid step.
    pub summary: Option<Summary>,
}

/// Thousands separators: `300110.4` -> `300,110`.
pub fn group_thousands(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    // Digits are ASCII; a comma before every group of three counted from the right.
    let mut out = String::new();
    let first = match digits.len() % 3 {
        0 => 3,
        r => r,
    };
    out.push_str(&digits[..first]);
    for group in digits.as_bytes()[first..].chunks(3) {
        out.push(',');
        out.push_str(std::str::from_utf8(group).unwrap_or_default());
    }
    if n < 0 {
        format!("-{out}")
    } else {
        out
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "-".into(),
    }
}

/// The short name of one operation of a rate unit: `RT`, `msg`, `conn` or `delivery`.
pub fn op_name(rate_unit: &str) -> &'static str {
    if rate_unit.starts_with("Messages") {
        "msg"
    } else if rate_unit.starts_with("Connections") {
        "conn"
    } else if rate_unit.starts_with("Deliveries") {
        "delivery"
    } else {
        "RT"
    }
}

/// True for a PS-CC series (native or AMQP).
pub fn is_pubsub(run: &RunReport) -> bool {
    run.workload == "PS-CC"
}

/// What a series' steps count: `clients`, or `subscribers` for PS-CC.
pub fn clients_are(run: &RunReport) -> &'static str {
    if is_pubsub(run) {
        "subscribers"
    } else {
        "clients"
    }
}

/// PS-CC: the deliveries per second each subscriber received, on average.
pub fn per_subscriber(f: &StepOutcome) -> f64 {
    if f.clients == 0 {
        0.0
    } else {
        f.window.rate / f.clients as f64
    }
}

/// A column of the per-step table: its header and how to fill it.
type Column = (String, Box<dyn Fn(&StepReport) -> String>);

/// The columns of the per-step table for `run`: the workload's own (queue depth for
/// SR-CC, connect time for the connection test) and the relay's when it ran.
pub fn columns(run: &RunReport) -> Vec<Column> {
    let op = op_name(&run.rate_unit);
    let pubsub = is_pubsub(run);
    let mut cols: Vec<Column> = vec![
        (
            if pubsub { "Subscribers" } else { "Clients" }.into(),
            Box::new(|s| s.ferry.clients.to_string()),
        ),
        (
            run.rate_unit.clone(),
            Box::new(|s| group_thousands(s.ferry.window.rate)),
        ),
        (
            "Server CPU%".into(),
            Box::new(|s| opt(s.ferry.window.server_cpu_pct, 1)),
        ),
        (
            format!("Server µs/{op}"),
            Box::new(|s| opt(s.ferry.window.server_us_per_rt, 1)),
        ),
        (
            "Harness CPU%".into(),
            Box::new(|s| opt(s.ferry.window.harness_cpu_pct, 1)),
        ),
        (
            format!("Harness µs/{op}"),
            Box::new(|s| opt(s.ferry.window.harness_us_per_rt, 1)),
        ),
        (
            "p50 µs".into(),
            Box::new(|s| lat(s.ferry.latency.p50_us, s)),
        ),
        (
            "p95 µs".into(),
            Box::new(|s| lat(s.ferry.latency.p95_us, s)),
        ),
        (
            "p99 µs".into(),
            Box::new(|s| lat(s.ferry.latency.p99_us, s)),
        ),
        (
            "p99.9 µs".into(),
            Box::new(|s| lat(s.ferry.latency.p999_us, s)),
        ),
    ];
    if run.persistent {
        cols.extend(log_columns());
    }
    if pubsub {
        cols.extend(pubsub_columns());
    } else if run.steps.iter().any(|s| s.ferry.queue_depth_end.is_some()) {
        cols.push((
            "Put/s".into(),
            Box::new(|s| {
                s.ferry.sent.map_or("-".into(), |n| {
                    group_thousands(crate::measure::rate(n, s.ferry.window.elapsed_secs))
                })
            }),
        ));
        cols.push((
            "Depth at end".into(),
            Box::new(|s| {
                s.ferry
                    .queue_depth_end
                    .map_or("-".into(), |d| group_thousands(d as f64))
            }),
        ));
    }
    if run.rate_unit.starts_with("Connections") {
        cols.push((
            "Connect all s".into(),
            Box::new(|s| format!("{:.2}", s.ferry.window.elapsed_secs)),
        ));
        cols.push((
            "Round trips".into(),
            Box::new(|s| s.ferry.sent.map_or("-".into(), |n| n.to_string())),
        ));
    }
    if run.steps.iter().any(|s| s.relay.is_some()) {
        cols.push((
            "Relay RT/s".into(),
            Box::new(|s| {
                s.relay
                    .as_ref()
                    .map_or("-".into(), |r| group_thousands(r.rate))
            }),
        ));
        cols.push((
            "Ferry/Relay".into(),
            Box::new(|s| {
                s.ferry_vs_relay_pct
                    .map_or("-".into(), |p| format!("{p:.0}%"))
            }),
        ));
        cols.push((
            "Relay µs/RT".into(),
            Box::new(|s| opt(s.relay.as_ref().and_then(|r| r.relay_us_per_rt), 1)),
        ));
        cols.push((
            "CPU/RT vs relay".into(),
            Box::new(|s| {
                s.server_cpu_vs_relay
                    .map_or("-".into(), |r| format!("{r:.2}x"))
            }),
        ));
    }
    cols.push((
        "Steal%".into(),
        Box::new(|s| opt(s.ferry.window.steal_pct, 1)),
    ));
    cols.push((
        "Errors".into(),
        Box::new(|s| (s.ferry.errors + s.ferry.mismatches).to_string()),
    ));
    cols.push((
        "valid".into(),
        Box::new(|s| {
            if s.ferry.valid {
                "yes".into()
            } else {
                "NO".into()
            }
        }),
    ));
    cols
}

/// PS-CC's columns: publishers, publications/s, deliveries/s per subscriber, copies
/// due and not yet received at the end of the window, copies lost.
fn pubsub_columns() -> Vec<Column> {
    let count = |v: Option<u64>| v.map_or("-".into(), |n| group_thousands(n as f64));
    vec![
        (
            "Publishers".into(),
            Box::new(|s| s.ferry.responders.to_string()),
        ),
        (
            "Pub/s".into(),
            Box::new(|s| {
                s.ferry.sent.map_or("-".into(), |n| {
                    group_thousands(crate::measure::rate(n, s.ferry.window.elapsed_secs))
                })
            }),
        ),
        (
            "Per sub/s".into(),
            Box::new(|s| group_thousands(per_subscriber(&s.ferry))),
        ),
        (
            "Due at end".into(),
            Box::new(move |s| count(s.ferry.queue_depth_end)),
        ),
        ("Lost".into(), Box::new(move |s| count(s.ferry.lost))),
    ]
}

/// The recovery log's columns (persistent series): flushes per message moved, records
/// per flush, log MB/s; `-` when the counters were not read.
fn log_columns() -> Vec<Column> {
    vec![
        (
            "Flushes/msg".into(),
            Box::new(|s| opt(s.ferry.log.and_then(|l| l.flushes_per_msg), 3)),
        ),
        (
            "Recs/flush".into(),
            Box::new(|s| opt(s.ferry.log.and_then(|l| l.records_per_flush), 1)),
        ),
        (
            "Log MB/s".into(),
            Box::new(|s| opt(s.ferry.log.and_then(|l| l.mb_per_sec), 1)),
        ),
    ]
}

fn lat(v: f64, s: &StepReport) -> String {
    if s.ferry.latency.count == 0 {
        "-".into()
    } else {
        format!("{v:.0}")
    }
}

/// The notes under a per-step table: why a step is invalid, what else to know.
pub fn step_notes(run: &RunReport) -> Vec<String> {
    let mut out = Vec::new();
    let who = clients_are(run);
    for s in &run.steps {
        let f = &s.ferry;
        if !f.valid {
            out.push(format!(
                "step {} {who} INVALID: {} errors, {} mismatches, {} operations; {}",
                f.clients,
                f.errors,
                f.mismatches,
                f.window.round_trips,
                f.problems.join("; ")
            ));
        } else if !f.problems.is_empty() {
            out.push(format!(
                "step {} {who} note: {}",
                f.clients,
                f.problems.join("; ")
            ));
        }
        if let Some(e) = &s.relay_error {
            out.push(format!(
                "step {} clients: relay baseline failed: {e}",
                f.clients
            ));
        }
        if s.relay.as_ref().is_some_and(|r| r.bad_frames) {
            out.push(format!(
                "step {} clients: the relay reported BAD_FRAMES",
                f.clients
            ));
        }
        if let Some(steal) = f.window.steal_pct.filter(|p| *p >= STEAL_WARNING_PCT) {
            out.push(format!(
                "step {} {who}: the hypervisor stole {steal:.1}% of the machine's CPU time \
                 (other guests were busy): its rate is not comparable with quieter runs",
                f.clients
            ));
        }
    }
    out
}

/// Steal time (% of the machine) from which a step's note warns that its rate is not
/// comparable: a few % already moves rates on a 2-CPU guest.
pub const STEAL_WARNING_PCT: f64 = 3.0;

/// The per-step table, one line per step, plus the notes on invalid steps.
pub fn render_table(run: &RunReport) -> String {
    let cols = columns(run);
    let headers: Vec<String> = cols.iter().map(|(h, _)| h.clone()).collect();
    let mut rows: Vec<Vec<String>> = vec![headers.clone()];
    for s in &run.steps {
        rows.push(cols.iter().map(|(_, f)| f(s)).collect());
    }
    let widths: Vec<usize> = (0..headers.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:>w$}"))
            .collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("-|-"));
            out.push('\n');
        }
    }
    for n in step_notes(run) {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

/// The reports' summary table: `Test | Max Rate | CPU% | Clients`.
pub fn render_summary(run: &RunReport) -> String {
    render_summary_all(std::slice::from_ref(run))
}

/// One summary row per series: `[test, max rate, CPU%, clients]`.
pub fn summary_rows(runs: &[RunReport]) -> Vec<[String; 4]> {
    runs.iter()
        .map(|run| match &run.summary {
            Some(s) => [
                s.test.clone(),
                group_thousands(s.max_rate),
                opt(s.cpu_pct, 2),
                s.clients.to_string(),
            ],
            None => [
                run.test.clone(),
                "no valid step".into(),
                "-".into(),
                "-".into(),
            ],
        })
        .collect()
}

/// The footnote of the summary table: what Max Rate counts for the series present.
pub fn summary_footnote(runs: &[RunReport]) -> String {
    let mut units: Vec<&str> = Vec::new();
    for r in runs {
        if !units.contains(&r.rate_unit.as_str()) {
            units.push(&r.rate_unit);
        }
    }
    let units: Vec<String> = units.iter().map(|u| u.replace("/s", "/sec")).collect();
    format!(
        "*{}; CPU% = queue manager CPU, % of the whole machine",
        if units.is_empty() {
            "Round trips/sec".to_string()
        } else {
            units.join(" or ")
        }
    )
}

/// The summary table of several series, one row each.
pub fn render_summary_all(runs: &[RunReport]) -> String {
    let mut out = String::from("Test | Max Rate* | CPU% | Clients\n");
    for row in summary_rows(runs) {
        out.push_str(&row.join(" | "));
        out.push('\n');
    }
    out.push_str(&summary_footnote(runs));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{Latency, WindowFigures};

    fn step(clients: usize, rate: f64, valid: bool) -> StepOutcome {
        StepOutcome {
            clients,
            responders: clients.max(10),
            window: WindowFigures {
                elapsed_secs: 10.0,
                round_trips: (rate * 10.0) as u64,
                rate,
                server_cpu_pct: Some(60.0),
                server_cores: Some(1.2),
                server_us_per_rt: Some(20.0),
                harness_us_per_rt: Some(9.0),
                harness_cpu_pct: Some(40.0),
                steal_pct: Some(0.5),
                requesters_qmgr_us_per_rt: None,
                responders_qmgr_us_per_rt: None,
            },
            latency: Latency {
                count: 10,
                p50_us: 150.0,
                p95_us: 200.0,
                p99_us: 300.0,
                p999_us: 900.0,
                max_us: 1000.0,
            },
            errors: 0,
            mismatches: u64::from(!valid),
            queue_depth_end: None,
            sent: None,
            log: None,
            compression: None,
            lost: None,
            messages_per_batch: None,
            instances: None,
            problems: if valid {
                vec![]
            } else {
                vec!["WrongCorrelId".into()]
            },
            valid,
        }
    }

    fn relay(rate: f64) -> RelayResult {
        RelayResult {
            rate,
            relay_us_per_rt: Some(8.0),
            ..RelayResult::default()
        }
    }

    #[test]
    fn ratios_against_the_relay() {
        let s = StepReport::new(step(16, 80_000.0, true), Ok(Some(relay(100_000.0))));
        assert_eq!(s.ferry_vs_relay_pct, Some(80.0));
        assert_eq!(s.server_cpu_vs_relay, Some(2.5));
        let none = StepReport::new(step(16, 80_000.0, true), Ok(None));
        assert_eq!(none.ferry_vs_relay_pct, None);
        let failed = StepReport::new(step(16, 80_000.0, true), Err("no rr_load".into()));
        assert_eq!(failed.relay_error.as_deref(), Some("no rr_load"));
        assert_eq!(percent(1.0, 0.0), None);
    }

    #[test]
    fn summary_takes_the_best_valid_step() {
        let steps = vec![
            StepReport::new(step(1, 5_000.0, true), Ok(None)),
            StepReport::new(step(16, 90_000.0, true), Ok(None)),
            StepReport::new(step(64, 99_000.0, false), Ok(None)),
        ];
        let s = summarize("RR-CC (2KB Non-persistent)", &steps).expect("a valid step");
        assert_eq!(s.clients, 16);
        assert_eq!(s.max_rate, 90_000.0);
        assert_eq!(summarize("x", &steps[2..]), None);
    }

    #[test]
    fn persistent_series_show_the_log_columns() {
        let mut logged = step(1, 4_000.0, true);
        logged.log = Some(crate::recovery_log::LogFigures {
            records: 80_000,
            flushes: 40_000,
            bytes: 100_000_000,
            messages: 80_000,
            flushes_per_msg: Some(0.5),
            records_per_flush: Some(2.0),
            mb_per_sec: Some(10.0),
        });
        let steps = vec![
            StepReport::new(logged, Ok(None)),
            StepReport::new(step(64, 9_000.0, true), Ok(None)),
        ];
        let mut run = RunReport {
            workload: "RR-CC".into(),
            test: "RR-CC (2KB Persistent)".into(),
            rate_unit: "Round trips/s".into(),
            size: 2048,
            persistent: true,
            syncpoint: false,
            rate_per_requester: None,
            tuning: vec![],
            secs: 3.0,
            warmup: 1.0,
            queues: 10,
            sharecnv: 10,
            amqp_sessions: 0,
            responders: "auto".into(),
            target: "embedded".into(),
            cpus: 2,
            ticks_per_sec: 100,
            summary: None,
            steps,
        };
        let t = render_table(&run);
        assert!(t.contains("Flushes/msg | Recs/flush | Log MB/s"), "{t}");
        assert!(t.contains("0.500 |        2.0 |     10.0"), "{t}");
        // The step without counters shows dashes.
        let last = t.lines().nth(3).unwrap_or_default();
        assert!(last.contains("-"), "{t}");
        run.persistent = false;
        assert!(!render_table(&run).contains("Flushes/msg"));
        // Result files from before the counters still load.
        let mut json = serde_json::to_value(&run).expect("serializes");
        assert_eq!(json["steps"][0]["log"]["flushes_per_msg"], 0.5);
        if let Some(o) = json["steps"][0].as_object_mut() {
            o.remove("log");
        }
        let back: RunReport = serde_json::from_value(json).expect("reads back");
        assert_eq!(back.steps[0].ferry.log, None);
    }

    #[test]
    fn pubsub_series_show_publications_per_subscriber_and_lost_copies() {
        let mut ok = step(4, 8_000.0, true);
        ok.responders = 1;
        ok.sent = Some(20_000);
        ok.queue_depth_end = Some(12);
        ok.lost = Some(0);
        let mut lossy = step(16, 9_600.0, false);
        lossy.sent = Some(6_000);
        lossy.lost = Some(340);
        lossy.problems = vec!["340 of 96000 copies never reached their subscriber".into()];
        let mut run = crate::output::testdata::series(
            "PS-CC",
            2048,
            false,
            vec![
                StepReport::new(ok, Ok(None)),
                StepReport::new(lossy, Ok(None)),
            ],
        );
        run.rate_unit = "Deliveries/s".into();
        let t = render_table(&run);
        assert!(t.starts_with("Subscribers | Deliveries/s"), "{t}");
        assert!(t.contains("Server µs/delivery"), "{t}");
        assert!(
            t.contains("Publishers | Pub/s | Per sub/s | Due at end | Lost"),
            "{t}"
        );
        // 20,000 publications in 10 s; 8,000 deliveries/s over 4 subscribers.
        assert!(
            t.contains("|          1 | 2,000 |     2,000 |         12 |    0 |"),
            "{t}"
        );
        assert!(t.contains("|          - |  340 |"), "{t}");
        assert!(t.contains("step 16 subscribers INVALID"), "{t}");
        assert!(!t.contains("Put/s"), "{t}");
        assert_eq!(per_subscriber(&run.steps[1].ferry), 600.0);
        assert_eq!(op_name("Deliveries/s"), "delivery");
    }

    #[test]
    fn thousands() {
        assert_eq!(group_thousands(300_110.4), "300,110");
        assert_eq!(group_thousands(999.6), "1,000");
        assert_eq!(group_thousands(12.0), "12");
        assert_eq!(group_thousands(-1234.0), "-1,234");
        assert_eq!(group_thousands(f64::NAN), "-");
    }

    #[test]
    fn table_and_summary_render() {
        let steps = vec![
            StepReport::new(step(16, 90_000.0, true), Ok(Some(relay(100_000.0)))),
            StepReport::new(step(64, 99_000.0, false), Ok(None)),
        ];
        let run = RunReport {
            workload: "RR-CC".into(),
            test: "RR-CC (2KB Non-persistent)".into(),
            rate_unit: "Round trips/s".into(),
            size: 2048,
            persistent: false,
            syncpoint: false,
            rate_per_requester: None,
            tuning: vec![],
            secs: 10.0,
            warmup: 3.0,
            queues: 10,
            sharecnv: 10,
            amqp_sessions: 0,
            responders: "auto".into(),
            target: "embedded".into(),
            cpus: 2,
            ticks_per_sec: 100,
            summary: summarize("RR-CC (2KB Non-persistent)", &steps),
            steps,
        };
        let t = render_table(&run);
        assert!(t.contains("Steal%"), "{t}");
        assert!(!t.contains("hypervisor stole"), "{t}");
        assert!(t.contains("90,000"), "{t}");
        assert!(t.contains("90%"), "{t}");
        assert!(t.contains("2.50x"), "{t}");
        assert!(t.contains("step 64 clients INVALID"), "{t}");
        let s = render_summary(&run);
        assert!(
            s.contains("RR-CC (2KB Non-persistent) | 90,000 | 60.00 | 16"),
            "{s}"
        );
        assert!(s.contains("*Round trips/sec;"), "{s}");
        let json = serde_json::to_value(&run).expect("serializes");
        assert_eq!(json["steps"][0]["clients"], 16);
        assert_eq!(json["steps"][0]["window"]["rate"], 90_000.0);
        let back: RunReport = serde_json::from_value(json).expect("reads back");
        assert_eq!(back.steps.len(), 2);
        assert_eq!(back.summary, run.summary);
        assert!(!t.contains("Depth at end"), "{t}");
        // A step the hypervisor stole from gets a note; results written before steal was
        // measured still read (no steal_pct: unknown).
        let mut busy = run;
        busy.steps[0].ferry.window.steal_pct = Some(12.0);
        let t = render_table(&busy);
        assert!(
            t.contains("step 16 clients: the hypervisor stole 12.0%"),
            "{t}"
        );
        let mut old = serde_json::to_value(busy.steps[0].ferry.window).expect("serializes");
        old.as_object_mut().expect("object").remove("steal_pct");
        let read: WindowFigures = serde_json::from_value(old).expect("old results read");
        assert_eq!(read.steal_pct, None);
    }
}
