//! `group-commit`: the group-commit writer (`ferry_yardsticks::group_commit`), one table
//! row and one `RESULT` line per producer count.
//!
//! ```text
//! group-commit --dir target/benchdir --producers 1,16,64,256 --record 2048 --secs 4
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use ferry_yardsticks::group_commit::{self, GroupCommitConfig, GroupCommitResult};
use ferry_yardsticks::{byte_size, YardstickError};

/// Producers append records that one writer makes durable in groups: this disk's ceiling
/// for persistent messaging.
#[derive(Parser, Debug)]
#[command(version)]
struct Cli {
    /// Directory for the log file, on the disk to measure.
    #[arg(long, default_value = "target/benchdir")]
    dir: PathBuf,
    /// Producer threads per step, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256")]
    producers: Vec<usize>,
    /// Bytes per record (2048, 2k, 2KB).
    #[arg(long, default_value = "2KB", value_parser = byte_size::parse_arg)]
    record: u64,
    /// Measured seconds per step.
    #[arg(long, default_value_t = 5.0)]
    secs: f64,
    /// Warm-up seconds before each step's measurement.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Size of the circular, preallocated log file.
    #[arg(long, default_value = "128MiB", value_parser = byte_size::parse_arg)]
    file: u64,
}

fn run(cli: &Cli) -> Result<(), YardstickError> {
    let duration = |value: f64, what: &str| {
        Duration::try_from_secs_f64(value)
            .map_err(|_| YardstickError::Usage(format!("--{what} {value}: not a duration")))
    };
    std::fs::create_dir_all(&cli.dir)
        .map_err(|e| YardstickError::io(format!("create {}", cli.dir.display()), e))?;
    println!(
        "# group-commit record={} file={} secs={} (fdatasync, one writer thread)",
        cli.record, cli.file, cli.secs
    );
    println!("{}", GroupCommitResult::table_header());
    for &producers in &cli.producers {
        let config = GroupCommitConfig {
            dir: cli.dir.clone(),
            producers,
            record: usize::try_from(cli.record)
                .map_err(|_| YardstickError::Usage("--record: too large".into()))?,
            warmup: duration(cli.warmup, "warmup")?,
            secs: duration(cli.secs, "secs")?,
            file_bytes: cli.file,
            keep_file: false,
        };
        let result = group_commit::run(&config)?;
        println!("{}", result.table_row());
        println!("{}", result.result_line());
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(&Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("group-commit: {e}");
            ExitCode::FAILURE
        }
    }
}
