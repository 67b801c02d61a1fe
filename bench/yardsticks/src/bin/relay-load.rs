//! `relay-load`: RR-CC through the relay (`ferry_yardsticks::relay_load`), one `RESULT`
//! line per step. `ferry perf rr-cc --relay-baseline target/release/relay-load` runs it
//! for every step with `--mode relay --spawn-relay mio --addr ... --n N --size S --secs T
//! --warmup W`.
//!
//! ```text
//! relay-load --spawn-relay mio --n 1,16,64 --size 2KB --secs 5
//! relay-load --spawn-relay uring --n 1,16,64 --size 2KB --secs 5   # the io_uring relay
//! relay-load --addr 127.0.0.1:7070 --n 64          # a relay started separately
//! ```

use std::net::SocketAddr;
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

use clap::Parser;
use ferry_yardsticks::relay_io::RelayIo;
use ferry_yardsticks::relay_load::{self, StepConfig};
use ferry_yardsticks::{byte_size, YardstickError};

/// RR-CC through the relay that does no queuing: this machine's request/reply ceiling.
#[derive(Parser, Debug)]
#[command(version)]
struct Cli {
    /// Workload; only `relay` (requesters and responders through the relay).
    #[arg(long, default_value = "relay")]
    mode: String,
    /// The relay's address (with --spawn-relay: where to start it).
    #[arg(long, default_value = "127.0.0.1:7070")]
    addr: SocketAddr,
    /// Requesters per step (as many responders), comma-separated.
    #[arg(long = "n", value_delimiter = ',', default_value = "1,4,16,64")]
    requesters: Vec<usize>,
    /// Message sizes per step, comma-separated (2048, 2k, 2KB).
    #[arg(long, value_delimiter = ',', default_value = "2KB", value_parser = byte_size::parse_arg)]
    size: Vec<u64>,
    /// Measured seconds per step.
    #[arg(long, default_value_t = 10.0)]
    secs: f64,
    /// Warm-up seconds before each step's measurement.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Load generator threads.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Start the relay (`mio`, `mio-short-reads` or `uring`: the `relay` binary next to
    /// this one, with that I/O) or use a running one (`none`).
    #[arg(long, default_value = "none")]
    spawn_relay: String,
    /// The relay's name in the RESULT line (default: the spawned relay's I/O, else
    /// external).
    #[arg(long)]
    label: Option<String>,
}

/// Kills the spawned relay when the run ends, however it ends.
struct SpawnedRelay(Child);

impl Drop for SpawnedRelay {
    fn drop(&mut self) {
        // The relay may already be gone; nothing to do about either outcome.
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn_relay(io: RelayIo, addr: SocketAddr) -> Result<SpawnedRelay, YardstickError> {
    let exe = std::env::current_exe()
        .map_err(|e| YardstickError::io("find this program's directory", e))?;
    let relay = exe.with_file_name("relay");
    let child = Command::new(&relay)
        .arg("--addr")
        .arg(addr.to_string())
        .arg("--io")
        .arg(io.name())
        .spawn()
        .map_err(|e| YardstickError::io(format!("start {}", relay.display()), e))?;
    let spawned = SpawnedRelay(child);
    let start = Instant::now();
    while relay_load::fetch_stats(addr).is_err() {
        if start.elapsed() > Duration::from_secs(5) {
            return Err(YardstickError::Protocol(format!(
                "the relay did not listen on {addr} within 5 s"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(spawned)
}

fn secs(value: f64, what: &str) -> Result<Duration, YardstickError> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| YardstickError::Usage(format!("--{what} {value}: not a duration")))
}

fn run(cli: &Cli) -> Result<(), YardstickError> {
    if cli.mode != "relay" {
        return Err(YardstickError::Usage(format!(
            "--mode {}: only 'relay' is measured (requesters and responders through the relay)",
            cli.mode
        )));
    }
    let (_relay, label) = match cli.spawn_relay.as_str() {
        "none" => (None, "external"),
        other => {
            let io: RelayIo = other.parse().map_err(|_| {
                YardstickError::Usage(format!(
                    "--spawn-relay {other}: use mio, mio-short-reads, uring or none"
                ))
            })?;
            (Some(spawn_relay(io, cli.addr)?), io.name())
        }
    };
    let label = cli.label.as_deref().unwrap_or(label);
    for &requesters in &cli.requesters {
        for &size in &cli.size {
            let size = usize::try_from(size)
                .map_err(|_| YardstickError::Usage(format!("--size {size}: too large")))?;
            let step = StepConfig {
                addr: cli.addr,
                requesters,
                size,
                threads: cli.threads,
                warmup: secs(cli.warmup, "warmup")?,
                secs: secs(cli.secs, "secs")?,
            };
            let result = relay_load::run_step(&step)?;
            println!("{}", result.result_line(label));
            // Let the relay drop the step's connections before the next one.
            std::thread::sleep(Duration::from_millis(200));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("relay-load: {e}");
            ExitCode::FAILURE
        }
    }
}
