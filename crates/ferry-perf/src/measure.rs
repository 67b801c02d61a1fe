//! Measurement: process CPU time from `/proc/PID/stat`, the arithmetic that turns two
//! samples into rates and CPU per round trip, and latency percentiles (hdrhistogram).
//!
//! CPU comes in clock ticks (`utime + stime`, all threads of the process, user and
//! kernel time: on this kind of box most of a queue manager's cost is syscalls). On a
//! virtual machine the hypervisor may run other guests on its CPUs: the share of the
//! machine's time stolen that way during a window (`/proc/stat`'s steal column) is
//! measured too, because rates of windows with much steal are not comparable.

use std::time::Instant;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Clock ticks per second (`sysconf(_SC_CLK_TCK)`), 100 when unknown.
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(t).ok().filter(|&t| t > 0).unwrap_or(100)
}

/// Online CPUs of the machine (for "CPU% of the machine"), at least 1.
pub fn online_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Parses `utime + stime` (fields 14 and 15, in clock ticks) out of a `/proc/PID/stat`
/// line. The command name (field 2) is in parentheses and may hold spaces, so the
/// fields are counted after its closing parenthesis.
pub fn parse_stat_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    // After ")": field 3 (state) is index 0, so utime (14) is index 11, stime (15) 12.
    let mut fields = after.split_ascii_whitespace();
    let utime: u64 = fields.nth(11)?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(utime + stime)
}

/// The machine's CPU ticks so far, all kinds together, and those stolen by the
/// hypervisor (the first line of `/proc/stat`: user nice system idle iowait irq softirq
/// steal ...; steal is the eighth value).
pub fn parse_machine_ticks(proc_stat: &str) -> Option<MachineTicks> {
    let line = proc_stat.lines().next()?;
    let mut fields = line.split_ascii_whitespace();
    if fields.next()? != "cpu" {
        return None;
    }
    let values: Vec<u64> = fields
        .take(8)
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let steal = *values.get(7)?;
    Some(MachineTicks {
        total: values.iter().sum(),
        steal,
    })
}

/// The machine's CPU ticks (all CPUs) at one moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineTicks {
    /// Every kind of time (user, nice, system, idle, iowait, irq, softirq, steal).
    pub total: u64,
    /// Time the hypervisor gave this machine's CPUs to someone else.
    pub steal: u64,
}

/// CPU ticks used so far by process `pid` (`None`: this process).
pub fn process_ticks(pid: Option<u32>) -> Option<u64> {
    let path = match pid {
        Some(p) => format!("/proc/{p}/stat"),
        None => "/proc/self/stat".to_string(),
    };
    parse_stat_ticks(&std::fs::read_to_string(path).ok()?)
}

/// One sample of everything a step measures, taken at the start and end of the window.
#[derive(Clone, Debug)]
pub struct Sample {
    /// When.
    pub at: Instant,
    /// Valid round trips completed so far.
    pub round_trips: u64,
    /// Server CPU ticks, when the server's pid is known and readable: every server
    /// process's together (RR-DQ-BB measures two queue managers).
    pub server_ticks: Option<u64>,
    /// Each server process's CPU ticks, in the order given.
    pub server_ticks_each: Vec<Option<u64>>,
    /// This process's CPU ticks.
    pub harness_ticks: Option<u64>,
    /// The machine's ticks, when `/proc/stat` is readable.
    pub machine_ticks: Option<MachineTicks>,
}

impl Sample {
    /// Takes a sample now, of the server processes `servers` (none, one, or a queue
    /// manager and its partner).
    pub fn take(round_trips: u64, servers: &[u32]) -> Sample {
        let each: Vec<Option<u64>> = servers.iter().map(|p| process_ticks(Some(*p))).collect();
        let server_ticks = if each.is_empty() {
            None
        } else {
            each.iter().copied().sum::<Option<u64>>()
        };
        Sample {
            at: Instant::now(),
            round_trips,
            server_ticks,
            server_ticks_each: each,
            harness_ticks: process_ticks(None),
            machine_ticks: std::fs::read_to_string("/proc/stat")
                .ok()
                .and_then(|s| parse_machine_ticks(&s)),
        }
    }
}

/// What two samples say about the window between them.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowFigures {
    /// Length of the window in seconds.
    pub elapsed_secs: f64,
    /// Valid round trips in the window.
    pub round_trips: u64,
    /// Round trips per second.
    pub rate: f64,
    /// Server CPU as a percentage of the whole machine (all CPUs = 100).
    pub server_cpu_pct: Option<f64>,
    /// Server CPU in cores (1.0 = one CPU busy all the time).
    pub server_cores: Option<f64>,
    /// Server CPU microseconds per round trip.
    pub server_us_per_rt: Option<f64>,
    /// Harness (all requesters and responders) CPU microseconds per round trip.
    pub harness_us_per_rt: Option<f64>,
    /// Harness CPU as a percentage of the whole machine.
    pub harness_cpu_pct: Option<f64>,
    /// Share of the machine's CPU time the hypervisor stole during the window, in % (a
    /// few % and more: other guests competed for the host, rates are not comparable).
    #[serde(default)]
    pub steal_pct: Option<f64>,
    /// With two queue managers or more (RR-DQ-BB, RR-CLUSTER-BB): the requesters' queue
    /// manager's CPU microseconds per round trip (`server_us_per_rt` is all together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requesters_qmgr_us_per_rt: Option<f64>,
    /// With two queue managers or more: the responders' queue managers' share (summed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responders_qmgr_us_per_rt: Option<f64>,
}

/// Turns two samples into rates and CPU figures.
pub fn window(a: &Sample, b: &Sample, ticks_per_sec: u64, cpus: usize) -> WindowFigures {
    let elapsed = b.at.saturating_duration_since(a.at).as_secs_f64();
    let rts = b.round_trips.saturating_sub(a.round_trips);
    let delta = |x: Option<u64>, y: Option<u64>| match (x, y) {
        (Some(x), Some(y)) => Some(y.saturating_sub(x)),
        _ => None,
    };
    let server = delta(a.server_ticks, b.server_ticks);
    let harness = delta(a.harness_ticks, b.harness_ticks);
    // With several queue managers: the first is the requesters', the others the
    // responders' (summed).
    let n = a.server_ticks_each.len();
    let several = n >= 2 && b.server_ticks_each.len() == n;
    let ticks_of = |range: std::ops::Range<usize>| {
        range
            .map(|i| delta(a.server_ticks_each[i], b.server_ticks_each[i]))
            .sum::<Option<u64>>()
    };
    let each = |range: std::ops::Range<usize>| {
        several
            .then(|| ticks_of(range))
            .flatten()
            .and_then(|t| us_per_rt(t, ticks_per_sec, rts))
    };
    WindowFigures {
        elapsed_secs: elapsed,
        round_trips: rts,
        rate: rate(rts, elapsed),
        server_cpu_pct: server.map(|t| cpu_pct_of_machine(t, ticks_per_sec, elapsed, cpus)),
        server_cores: server.map(|t| cpu_pct_of_machine(t, ticks_per_sec, elapsed, 1) / 100.0),
        server_us_per_rt: server.and_then(|t| us_per_rt(t, ticks_per_sec, rts)),
        harness_us_per_rt: harness.and_then(|t| us_per_rt(t, ticks_per_sec, rts)),
        harness_cpu_pct: harness.map(|t| cpu_pct_of_machine(t, ticks_per_sec, elapsed, cpus)),
        steal_pct: steal_pct(a.machine_ticks, b.machine_ticks),
        requesters_qmgr_us_per_rt: each(0..1),
        responders_qmgr_us_per_rt: each(1..n),
    }
}

/// The stolen share of the machine's ticks between two readings, in %.
pub fn steal_pct(a: Option<MachineTicks>, b: Option<MachineTicks>) -> Option<f64> {
    let (a, b) = (a?, b?);
    let total = b.total.checked_sub(a.total).filter(|&t| t > 0)?;
    let steal = b.steal.checked_sub(a.steal)?;
    Some(steal as f64 * 100.0 / total as f64)
}

/// Events per second (0 for an empty window).
pub fn rate(count: u64, elapsed_secs: f64) -> f64 {
    if elapsed_secs > 0.0 {
        count as f64 / elapsed_secs
    } else {
        0.0
    }
}

/// CPU microseconds per round trip from a tick delta (`None` without round trips).
pub fn us_per_rt(ticks: u64, ticks_per_sec: u64, round_trips: u64) -> Option<f64> {
    if round_trips == 0 || ticks_per_sec == 0 {
        return None;
    }
    Some(ticks as f64 * 1e6 / ticks_per_sec as f64 / round_trips as f64)
}

/// CPU used as a percentage of `cpus` CPUs over `elapsed_secs`.
pub fn cpu_pct_of_machine(ticks: u64, ticks_per_sec: u64, elapsed_secs: f64, cpus: usize) -> f64 {
    if elapsed_secs <= 0.0 || ticks_per_sec == 0 || cpus == 0 {
        return 0.0;
    }
    ticks as f64 / ticks_per_sec as f64 / elapsed_secs / cpus as f64 * 100.0
}

/// A latency histogram in nanoseconds (1 ns .. 1 hour, 3 significant digits).
pub fn new_latency_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("constant bounds are valid")
}

/// Latency percentiles of a step, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// Round trips recorded.
    pub count: u64,
    /// Median.
    pub p50_us: f64,
    /// 95th percentile.
    pub p95_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// Largest.
    pub max_us: f64,
}

/// Reads the percentiles out of a histogram of nanoseconds.
pub fn latency(h: &Histogram<u64>) -> Latency {
    if h.is_empty() {
        return Latency::default();
    }
    let us = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Latency {
        count: h.len(),
        p50_us: us(0.5),
        p95_us: us(0.95),
        p99_us: us(0.99),
        p999_us: us(0.999),
        max_us: h.max() as f64 / 1000.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stat_ticks_skip_the_command_name() {
        let line =
            "1234 (ferry (qm) x) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 0 0";
        assert_eq!(parse_stat_ticks(line), Some(325));
        assert_eq!(parse_stat_ticks("garbage"), None);
        assert_eq!(parse_stat_ticks("1 (x) S 1 2"), None);
    }

    #[test]
    fn this_process_has_a_stat_line() {
        assert!(process_ticks(None).is_some());
        assert!(clock_ticks_per_sec() > 0);
    }

    #[test]
    fn cpu_per_round_trip_from_ticks() {
        // 150 ticks at 100 Hz = 1.5 s of CPU over 100,000 round trips = 15 us each.
        assert_eq!(us_per_rt(150, 100, 100_000), Some(15.0));
        assert_eq!(us_per_rt(150, 100, 0), None);
        // 1.5 s of CPU in 1 s on 2 CPUs = 75% of the machine.
        assert!((cpu_pct_of_machine(150, 100, 1.0, 2) - 75.0).abs() < 1e-9);
        assert_eq!(cpu_pct_of_machine(150, 100, 0.0, 2), 0.0);
        assert!((rate(50_000, 2.0) - 25_000.0).abs() < 1e-9);
        assert_eq!(rate(5, 0.0), 0.0);
    }

    #[test]
    fn window_combines_two_samples() {
        let t0 = Instant::now();
        let a = Sample {
            at: t0,
            round_trips: 1_000,
            server_ticks: Some(500),
            server_ticks_each: vec![Some(200), Some(300)],
            harness_ticks: Some(40),
            machine_ticks: Some(MachineTicks {
                total: 10_000,
                steal: 100,
            }),
        };
        let b = Sample {
            at: t0 + Duration::from_secs(10),
            round_trips: 501_000,
            server_ticks: Some(1_500),
            server_ticks_each: vec![Some(600), Some(900)],
            harness_ticks: Some(540),
            machine_ticks: Some(MachineTicks {
                total: 12_000,
                steal: 200,
            }),
        };
        let w = window(&a, &b, 100, 2);
        assert_eq!(w.round_trips, 500_000);
        assert!((w.rate - 50_000.0).abs() < 1e-6);
        assert!((w.server_cpu_pct.unwrap_or(0.0) - 50.0).abs() < 1e-9);
        // Two queue managers: each one's share of the 20 µs per round trip.
        assert!((w.requesters_qmgr_us_per_rt.unwrap_or(0.0) - 8.0).abs() < 1e-9);
        assert!((w.responders_qmgr_us_per_rt.unwrap_or(0.0) - 12.0).abs() < 1e-9);
        assert!((w.server_cores.unwrap_or(0.0) - 1.0).abs() < 1e-9);
        assert!((w.server_us_per_rt.unwrap_or(0.0) - 20.0).abs() < 1e-9);
        assert!((w.harness_us_per_rt.unwrap_or(0.0) - 10.0).abs() < 1e-9);
        assert!((w.steal_pct.unwrap_or(0.0) - 5.0).abs() < 1e-9);
        let unknown = Sample {
            server_ticks: None,
            machine_ticks: None,
            ..b
        };
        assert_eq!(window(&a, &unknown, 100, 2).server_us_per_rt, None);
        assert_eq!(window(&a, &unknown, 100, 2).steal_pct, None);
    }

    #[test]
    fn steal_is_the_eighth_value_of_the_cpu_line() {
        let stat = "cpu  2574977 0 418397 2971292 35248 0 86995 113322 0 0\n\
                    cpu0 1287488 0 209198 1485646 17624 0 43497 56661 0 0\n";
        let t = parse_machine_ticks(stat).expect("parsed");
        assert_eq!(t.steal, 113_322);
        assert_eq!(
            t.total,
            2_574_977 + 418_397 + 2_971_292 + 35_248 + 86_995 + 113_322
        );
        // A kernel without the steal column, or not the summary line: unknown.
        assert_eq!(parse_machine_ticks("cpu  1 2 3 4 5 6 7\n"), None);
        assert_eq!(parse_machine_ticks("cpu0 1 2 3 4 5 6 7 8\n"), None);
        // The counters went backwards (another boot): unknown, not a huge share.
        let later = MachineTicks { total: 5, steal: 0 };
        assert_eq!(steal_pct(Some(t), Some(later)), None);
    }

    #[test]
    fn percentiles_in_microseconds() {
        let mut h = new_latency_histogram();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap_or_default();
        }
        let l = latency(&h);
        assert_eq!(l.count, 1000);
        assert!((l.p50_us - 500.0).abs() <= 1.0, "{l:?}");
        assert!((l.p95_us - 950.0).abs() <= 1.0, "{l:?}");
        assert!((l.p99_us - 990.0).abs() <= 1.0, "{l:?}");
        assert!((l.p999_us - 999.0).abs() <= 1.0, "{l:?}");
        assert_eq!(latency(&new_latency_histogram()), Latency::default());
    }
}
