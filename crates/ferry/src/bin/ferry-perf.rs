//! `ferry-perf`: the performance harness (crates/ferry-perf), as its own executable.
//! Users run it as `ferry perf ...`, which execs this file's program beside `ferry`
//! with the same arguments; it speaks as `ferry perf` in its help and messages.

#[path = "../closed_pipe.rs"]
mod closed_pipe;
#[path = "../open_files.rs"]
mod open_files;

use clap::Parser;
use std::process::ExitCode;

/// `ferry perf`: the reports' workloads against Ferry.
#[derive(Parser)]
#[command(name = "ferry perf", bin_name = "ferry perf", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    perf: ferry_perf::cli::PerfArgs,
}

/// The same allocator as the queue manager's (see `ferry`'s main): the harness's CPU is
/// reported next to the server's, and a run measured before the harness had its own
/// executable used it too.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    closed_pipe::end_quietly_on_closed_pipe();
    open_files::raise_limit();
    ferry_perf::cli::run(Cli::parse().perf)
}
