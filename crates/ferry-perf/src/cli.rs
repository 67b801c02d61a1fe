//! `ferry perf ...`: the command-line face of the harness. One subcommand per workload
//! of the reports (today `rr-cc`); options shared by every workload (steps, target,
//! output) are separate structs, so later workloads flatten the same ones.
//!
//! Exit codes: 0 all steps valid, 1 setup failed or interrupted, 3 some step invalid.

use std::cell::RefCell;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tokio::signal::unix::{signal, SignalKind};

use crate::args::{self, Responders};
use crate::report::{self, RunReport, StepReport};
use crate::target::{self, QueueManager};
use crate::workload::rr::{self, RrConfig};
use crate::{measure, relay, PerfError};

/// `ferry perf`: run one of the reports' workloads against Ferry.
#[derive(Args, Debug)]
pub struct PerfArgs {
    /// The workload.
    #[command(subcommand)]
    pub workload: Workload,
}

/// The workloads.
#[derive(Subcommand, Debug)]
pub enum Workload {
    /// RR-CC: client-mode requesters and responders over 10 request queues and a reply
    /// queue, reply matched by CorrelId; one step per --clients value.
    #[command(name = "rr-cc")]
    RrCc(RrCcArgs),
}

/// The steps of a run: how many clients, how big, how long, where results go.
#[derive(Args, Debug, Clone)]
pub struct StepArgs {
    /// Requesters per step, comma-separated (one step each, in order).
    #[arg(long, default_value = "1,4,16,64", value_parser = args::parse_client_list)]
    pub clients: args::ClientList,
    /// Message size: 256B, 2KB, 20KB, 200KB, 2MB (KB = 1024 bytes).
    #[arg(long, default_value = "2KB", value_parser = args::parse_size)]
    pub size: usize,
    /// Measured seconds per step.
    #[arg(long, default_value = "10", value_parser = args::parse_secs)]
    pub secs: f64,
    /// Warm-up seconds per step before measuring.
    #[arg(long, default_value = "3", value_parser = args::parse_warmup)]
    pub warmup: f64,
    /// Write every step's figures to this JSON file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The queue manager to measure: embedded (default) or an existing one.
#[derive(Args, Debug, Clone)]
pub struct TargetArgs {
    /// Use an existing queue manager at this CONNAME, e.g. 'localhost(1414)', instead of
    /// an embedded one (missing queues are defined through its command server).
    #[arg(long, value_name = "CONNAME")]
    pub connect: Option<String>,
    /// SVRCONN channel of --connect.
    #[arg(long, default_value = target::DEFAULT_CHANNEL, requires = "connect")]
    pub channel: String,
    /// Queue manager name of --connect (default: whichever owns the listener).
    #[arg(long, requires = "connect")]
    pub qmgr: Option<String>,
    /// Process id of the --connect queue manager, to measure its CPU.
    #[arg(long, value_name = "PID", requires = "connect")]
    pub server_pid: Option<u32>,
}

/// `ferry perf rr-cc`.
#[derive(Args, Debug, Clone)]
pub struct RrCcArgs {
    /// Steps and output.
    #[command(flatten)]
    pub steps: StepArgs,
    /// Target queue manager.
    #[command(flatten)]
    pub target: TargetArgs,
    /// Request queues (REQUEST.1..N), used round-robin.
    #[arg(long, default_value = "10", value_parser = args::parse_queues)]
    pub queues: usize,
    /// Responders: 'auto' (one per requester, at least one per request queue) or a number
    /// (at least --queues).
    #[arg(long, default_value = "auto", value_parser = args::parse_responders)]
    pub responders: Responders,
    /// Conversations per socket the connections ask for (SHARECNV).
    #[arg(long, default_value = "10", value_parser = args::parse_sharecnv)]
    pub sharecnv: u32,
    /// Persistent messages (default non-persistent).
    #[arg(long)]
    pub persistent: bool,
    /// Path of tools/limits' rr_load: run the relay yardstick for every step in the same run.
    #[arg(long, value_name = "RR_LOAD")]
    pub relay_baseline: Option<PathBuf>,
}

/// Runs `ferry perf` and returns the process exit code.
pub fn run(args: PerfArgs) -> ExitCode {
    let result = match args.workload {
        Workload::RrCc(a) => run_rr_cc(a),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("ferry perf: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Resolves after SIGINT (Ctrl-C), SIGTERM or SIGHUP; names the signal.
async fn shutdown_signal() -> &'static str {
    let wait = |kind: SignalKind, name: &'static str| async move {
        match signal(kind) {
            Ok(mut s) => {
                s.recv().await;
                name
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        n = wait(SignalKind::interrupt(), "Ctrl-C") => n,
        n = wait(SignalKind::terminate(), "SIGTERM") => n,
        n = wait(SignalKind::hangup(), "SIGHUP") => n,
    }
}

/// Runs RR-CC; `Ok(true)` when every step was valid.
fn run_rr_cc(a: RrCcArgs) -> Result<bool, PerfError> {
    if let Responders::Fixed(n) = a.responders {
        if n < a.queues {
            return Err(PerfError::Setup(format!(
                "--responders {n} is fewer than --queues {}: every request queue needs a responder \
                 (use 'auto' or at least {})",
                a.queues, a.queues
            )));
        }
    }
    if let Some(p) = &a.relay_baseline {
        if !p.is_file() {
            return Err(PerfError::Setup(format!(
                "--relay-baseline {}: no such file (build it with: cargo build --release \
                 --manifest-path tools/limits/Cargo.toml --target-dir target/limits)",
                p.display()
            )));
        }
    }
    let cfg = RrConfig {
        size: a.steps.size,
        persistent: a.persistent,
        queues: a.queues,
        responders: a.responders,
        sharecnv: a.sharecnv,
        warmup: a.steps.warmup,
        secs: a.steps.secs,
    };
    let test = format!(
        "RR-CC ({} {})",
        args::format_size(cfg.size),
        if cfg.persistent {
            "Persistent"
        } else {
            "Non-persistent"
        }
    );

    let mut qm = match &a.target.connect {
        Some(conn_name) => QueueManager::existing(
            conn_name,
            &a.target.channel,
            a.target.qmgr.as_deref().unwrap_or(""),
            a.target.server_pid,
        ),
        None => {
            // Every requester and responder may have its own socket (SHARECNV 1), plus the
            // harness's administrative connections.
            let most = a.steps.clients.0.iter().copied().max().unwrap_or(1);
            let responders = a.responders.count(most, a.queues);
            let channels = u32::try_from(most + responders + 16)
                .unwrap_or(u32::MAX)
                .max(100);
            QueueManager::embedded(&target::ferry_binary()?, channels)?
        }
    };
    eprintln!(
        "{test}: {} request queues, responders {}, SHARECNV {}, {} s warm-up + {} s per step; {}; relay baseline: {}",
        cfg.queues,
        cfg.responders,
        cfg.sharecnv,
        cfg.warmup,
        cfg.secs,
        qm.description(),
        a.relay_baseline
            .as_ref()
            .map_or("none".to_string(), |p| p.display().to_string())
    );
    if qm.server_pid().is_none() {
        eprintln!("note: server CPU is not measured (give --server-pid with --connect)");
    }

    let steps: RefCell<Vec<StepReport>> = RefCell::new(Vec::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PerfError::Setup(format!("cannot build the runtime: {e}")))?;
    let local = tokio::task::LocalSet::new();
    let outcome = local.block_on(&rt, async {
        let work = async {
            let admin = qm.wait_ready().await?;
            let max = admin.max_message_length() as usize;
            if max != 0 && cfg.size > max {
                return Err(PerfError::Setup(format!(
                    "--size {} is larger than the channel's MAXMSGL {max}",
                    cfg.size
                )));
            }
            rr::prepare_queues(&admin, &cfg).await?;
            for &clients in &a.steps.clients.0 {
                eprintln!("step {clients} clients: Ferry...");
                let ferry = rr::run_step(&qm, &admin, &cfg, clients).await?;
                let relay = match &a.relay_baseline {
                    Some(path) => {
                        eprintln!("step {clients} clients: relay...");
                        relay::run(path, clients, cfg.size, cfg.secs, cfg.warmup)
                            .await
                            .map(Some)
                            .map_err(|e| e.to_string())
                    }
                    None => Ok(None),
                };
                let step = StepReport::new(ferry, relay);
                eprintln!("{}", step_line(&step));
                steps.borrow_mut().push(step);
            }
            let _ = admin.disconnect().await;
            Ok(())
        };
        tokio::select! {
            r = work => r,
            s = shutdown_signal() => Err(PerfError::Interrupted(s)),
        }
    });
    drop(local);
    drop(rt);
    qm.shutdown();

    let steps = steps.into_inner();
    let all_valid = !steps.is_empty() && steps.iter().all(|s| s.ferry.valid);
    let run = RunReport {
        workload: "RR-CC".into(),
        summary: report::summarize(&test, &steps),
        test,
        size: cfg.size,
        persistent: cfg.persistent,
        secs: cfg.secs,
        warmup: cfg.warmup,
        queues: cfg.queues,
        sharecnv: cfg.sharecnv,
        responders: cfg.responders.to_string(),
        target: qm.description().to_string(),
        cpus: measure::online_cpus(),
        ticks_per_sec: measure::clock_ticks_per_sec(),
        steps,
    };
    if !run.steps.is_empty() {
        println!("{}", report::render_table(&run));
        print!("{}", report::render_summary(&run));
    }
    if let Some(path) = &a.steps.json {
        let text = serde_json::to_string_pretty(&run)
            .map_err(|e| PerfError::Setup(format!("cannot encode the results: {e}")))?;
        std::fs::write(path, text + "\n")
            .map_err(|e| PerfError::Setup(format!("cannot write {}: {e}", path.display())))?;
    }
    outcome.map(|()| all_valid)
}

/// One progress line for stderr after a step.
fn step_line(s: &StepReport) -> String {
    let f = &s.ferry;
    let relay = s.relay.as_ref().map_or(String::new(), |r| {
        format!(
            ", relay {} RT/s ({})",
            report::group_thousands(r.rate),
            s.ferry_vs_relay_pct
                .map_or("-".into(), |p| format!("Ferry {p:.0}%"))
        )
    });
    format!(
        "step {} clients: {} RT/s, server {} µs/RT{}{}",
        f.clients,
        report::group_thousands(f.window.rate),
        f.window
            .server_us_per_rt
            .map_or("-".into(), |v| format!("{v:.1}")),
        relay,
        if f.valid { "" } else { " INVALID" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Top {
        #[command(subcommand)]
        cmd: Cmd,
    }

    #[derive(clap::Subcommand)]
    enum Cmd {
        Perf(PerfArgs),
    }

    fn parse(args: &[&str]) -> Result<RrCcArgs, String> {
        let mut v = vec!["ferry", "perf", "rr-cc"];
        v.extend_from_slice(args);
        match Top::try_parse_from(v).map_err(|e| e.to_string())?.cmd {
            Cmd::Perf(PerfArgs {
                workload: Workload::RrCc(a),
            }) => Ok(a),
        }
    }

    #[test]
    fn defaults_are_the_reports() {
        let a = parse(&[]).expect("defaults parse");
        assert_eq!(a.steps.clients.0, vec![1, 4, 16, 64]);
        assert_eq!(a.steps.size, 2048);
        assert_eq!(a.steps.secs, 10.0);
        assert_eq!(a.steps.warmup, 3.0);
        assert_eq!(a.queues, 10);
        assert_eq!(a.responders, Responders::Auto);
        assert_eq!(a.sharecnv, 10);
        assert!(!a.persistent);
        assert!(a.target.connect.is_none());
    }

    #[test]
    fn flags_parse() {
        let a = parse(&[
            "--clients",
            "2,8",
            "--size",
            "20KB",
            "--secs",
            "1",
            "--warmup",
            "0",
            "--responders",
            "12",
            "--persistent",
            "--connect",
            "host(1414)",
            "--channel",
            "APP.SVRCONN",
            "--qmgr",
            "QM1",
        ])
        .expect("parses");
        assert_eq!(a.steps.clients.0, vec![2, 8]);
        assert_eq!(a.steps.size, 20 * 1024);
        assert_eq!(a.responders, Responders::Fixed(12));
        assert!(a.persistent);
        assert_eq!(a.target.channel, "APP.SVRCONN");
        assert_eq!(a.target.qmgr.as_deref(), Some("QM1"));
    }

    #[test]
    fn bad_flags_say_what_is_accepted() {
        let e = parse(&["--clients", "0"]).expect_err("0 clients");
        assert!(e.contains("1,4,16,64"), "{e}");
        let e = parse(&["--size", "3XB"]).expect_err("3XB");
        assert!(e.contains("256B, 2KB"), "{e}");
        assert!(
            parse(&["--channel", "X"]).is_err(),
            "--channel needs --connect"
        );
    }
}
