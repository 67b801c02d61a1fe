//! The same-run yardstick: `relay-load --mode relay --spawn-relay mio` from
//! `bench/yardsticks`, a requester/responder relay that does no queuing at all, run as a
//! subprocess with the step's requesters, size and durations. Its `RESULT` line gives
//! the ceiling rate and both processes' CPU per round trip (getrusage, user + system).

use std::path::Path;
use std::process::Stdio;

use serde::{Deserialize, Serialize};

use crate::PerfError;

/// What one `rr_load` run reported.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RelayResult {
    /// Round trips per second through the relay.
    pub rate: f64,
    /// Median latency, microseconds.
    pub p50_us: Option<f64>,
    /// 99th percentile latency, microseconds.
    pub p99_us: Option<f64>,
    /// Relay CPU microseconds per round trip.
    pub relay_us_per_rt: Option<f64>,
    /// Load generator CPU microseconds per round trip.
    pub load_us_per_rt: Option<f64>,
    /// Relay CPU as a percentage of one CPU.
    pub relay_cpu_pct_of_one_cpu: Option<f64>,
    /// True when rr_load reported BAD_FRAMES.
    pub bad_frames: bool,
}

/// Parses the `RESULT bench=rr ... rate=... relay_cpu_us_per_rt=...` line out of
/// rr_load's output (the last such line wins). `None` without a `rate=`.
pub fn parse_result(output: &str) -> Option<RelayResult> {
    let line = output.lines().rev().find(|l| l.starts_with("RESULT "))?;
    let field = |key: &str| -> Option<f64> {
        line.split_ascii_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    };
    Some(RelayResult {
        rate: field("rate")?,
        p50_us: field("p50_us"),
        p99_us: field("p99_us"),
        relay_us_per_rt: field("relay_cpu_us_per_rt"),
        load_us_per_rt: field("load_cpu_us_per_rt"),
        relay_cpu_pct_of_one_cpu: field("relay_cpu_pct"),
        bad_frames: line.contains("BAD_FRAMES="),
    })
}

/// Kills a process group when dropped (the rr_load process and the relay it spawned),
/// unless disarmed after a normal exit.
struct GroupGuard {
    pgid: Option<libc::pid_t>,
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.pgid {
            // SAFETY: the group was created for our child; signalling it is harmless if
            // it is already gone.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

/// Runs `rr_load --mode relay --spawn-relay mio` for one step on a free port and parses
/// its result. Cancelling the future kills rr_load and its relay.
pub async fn run(
    rr_load: &Path,
    clients: usize,
    size: usize,
    secs: f64,
    warmup: f64,
) -> Result<RelayResult, PerfError> {
    let port = crate::target::free_port()?;
    let mut cmd = tokio::process::Command::new(rr_load);
    cmd.args(["--mode", "relay", "--spawn-relay", "mio"])
        .arg("--addr")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--n")
        .arg(clients.to_string())
        .arg("--size")
        .arg(size.to_string())
        .arg("--secs")
        .arg(secs.to_string())
        .arg("--warmup")
        .arg(warmup.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .map_err(|e| PerfError::Setup(format!("cannot run {}: {e}", rr_load.display())))?;
    let mut guard = GroupGuard {
        pgid: child.id().and_then(|p| libc::pid_t::try_from(p).ok()),
    };
    let out = child
        .wait_with_output()
        .await
        .map_err(|e| PerfError::Setup(format!("{}: {e}", rr_load.display())))?;
    guard.pgid = None;
    let stdout = String::from_utf8_lossy(&out.stdout);
    match parse_result(&stdout) {
        Some(r) if out.status.success() => Ok(r),
        _ => Err(PerfError::Setup(format!(
            "{} ended with {} and no RESULT line: {}{}",
            rr_load.display(),
            out.status,
            stdout.trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "RESULT bench=rr relay=mio n=16 size=2048 threads=1 secs=10.0 rts=1110000 \
        rate=111000 p50_us=140.2 p99_us=310.5 p999_us=900.1 relay_cpu_us_per_rt=8.52 \
        load_cpu_us_per_rt=8.61 relay_cpu_pct=95 relay_usr_pct=8 relay_sys_pct=87 load_cpu_pct=96";

    #[test]
    fn result_line_fields() {
        let r = parse_result(&format!("warming up\n{LINE}\n")).expect("parsed");
        assert_eq!(r.rate, 111000.0);
        assert_eq!(r.p50_us, Some(140.2));
        assert_eq!(r.p99_us, Some(310.5));
        assert_eq!(r.relay_us_per_rt, Some(8.52));
        assert_eq!(r.load_us_per_rt, Some(8.61));
        assert_eq!(r.relay_cpu_pct_of_one_cpu, Some(95.0));
        assert!(!r.bad_frames);
    }

    #[test]
    fn nan_cpu_and_bad_frames() {
        let line =
            LINE.replace("relay_cpu_us_per_rt=8.52", "relay_cpu_us_per_rt=NaN") + " BAD_FRAMES=3";
        let r = parse_result(&line).expect("parsed");
        assert_eq!(r.relay_us_per_rt, None);
        assert!(r.bad_frames);
    }

    #[test]
    fn no_result_line() {
        assert_eq!(parse_result("relay did not come up"), None);
        assert_eq!(parse_result("RESULT bench=rr n=1"), None);
    }
}
