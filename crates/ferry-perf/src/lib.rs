//! The performance harness behind `ferry perf`: the reports' workloads against a Ferry
//! queue manager, measured the way the reports measure them (round trips/s, queue
//! manager CPU%, latency percentiles), optionally next to this machine's yardstick
//! measured in the same run (the relay of `bench/yardsticks`), so results can be quoted as
//! ratios.
//!
//! ```text
//! ferry perf rr-cc --clients 1,4,16,64 --sizes 2KB,20KB --secs 10 --out results/
//! ferry perf report results/rr-cc.json other/rr-cc.json
//! ferry perf suite standard
//! ferry perf recovery --messages 1000000 --size 2KB
//! ```
//!
//! Layout: [`cli`] (the subcommands), [`args`] (option values), [`target`] (embedded or
//! existing queue manager), [`workload`] (RR-CC/BB/CB, SR-CC, the connection test, recovery time and deep queues;
//! request/reply and SR-CC written once over a client abstraction with native and AMQP
//! implementations),
//! [`compression`] (`--compress`: JSON-like bodies, COMPRATE from DISPLAY CHSTATUS),
//! [`measure`] (/proc CPU, histograms), [`recovery_log`] (the log's flushes per
//! message, from DISPLAY QMSTATUS), [`relay`] (the yardstick), [`report`] (tables,
//! summary), [`output`] (JSON, CSV, Markdown, charts), [`progress`] (live display),
//! [`suite`] (defined sets of runs), [`machine`] (the machine's facts), [`amqp`] (the
//! harness's AMQP 1.0 client, to run the same workloads against Ferry's AMQP channel or
//! any AMQP broker).
//! All applications of a workload run as tasks on one current-thread tokio runtime, so
//! the harness costs little and its own CPU is reported too.

pub mod amqp;
pub mod args;
pub mod cli;
pub mod compression;
pub mod machine;
pub mod measure;
pub mod output;
pub mod progress;
pub mod recovery_log;
pub mod relay;
pub mod report;
pub mod suite;
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
    /// The command line asks for something the harness cannot do (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// A signal asked the harness to stop.
    #[error("interrupted by {0}; the queue manager was stopped")]
    Interrupted(&'static str),
}
