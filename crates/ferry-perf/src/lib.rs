//! The performance harness behind `ferry perf`: the reports' workloads against a Ferry
//! queue manager, measured the way the reports measure them (round trips/s, queue
//! manager CPU%, latency percentiles), next to this machine's yardstick measured in the
//! same run (`tools/limits`' relay), so results are quoted as ratios.
//!
//! ```text
//! ferry perf rr-cc --clients 1,4,16,64 --size 2KB --secs 10 --relay-baseline target/limits/release/rr_load
//! ```
//!
//! Layout: [`cli`] (the subcommands), [`args`] (option values), [`target`] (embedded or
//! existing queue manager), [`workload`] (RR-CC today), [`measure`] (/proc CPU,
//! histograms), [`relay`] (the yardstick), [`report`] (table, summary, JSON).
//! All applications of a workload run as tasks on one current-thread tokio runtime, so
//! the harness costs little and its own CPU is reported too.

pub mod args;
pub mod cli;
pub mod measure;
pub mod relay;
pub mod report;
pub mod target;
pub mod workload;

use ferry_mqi::MqError;

/// Why a run could not go on.
#[derive(Debug, thiserror::Error)]
pub enum PerfError {
    /// Setting up the target, the queues or the yardstick failed.
    #[error("{0}")]
    Setup(String),
    /// An MQI call outside the measured work failed (context, error).
    #[error("{0}: {1}")]
    Mq(String, MqError),
    /// A signal asked the harness to stop.
    #[error("interrupted by {0}; the queue manager was stopped")]
    Interrupted(&'static str),
}
