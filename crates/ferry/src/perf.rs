//! `ferry perf ...`: runs the performance harness, the `ferry-perf` executable installed
//! beside `ferry`, with the same arguments. The harness is a separate executable so the
//! queue manager's binary (which every `ferry start` loads) carries none of its code:
//! its AMQP client, tables, charts and fonts.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The harness's file name, looked for in the directory of the running `ferry`.
pub const HARNESS: &str = "ferry-perf";

/// Replaces this process with `ferry-perf ARGS`; returns only if that cannot be done,
/// after saying why on stderr.
pub fn run(args: &[OsString]) -> ExitCode {
    let harness = match harness_path() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("ferry perf: cannot find the performance harness: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !harness.is_file() {
        eprintln!("{}", missing(&harness));
        return ExitCode::FAILURE;
    }
    // exec only returns on failure.
    let e = Command::new(&harness).args(args).exec();
    eprintln!("ferry perf: cannot run {}: {e}", harness.display());
    ExitCode::FAILURE
}

/// `ferry-perf` in the directory of this executable.
fn harness_path() -> std::io::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(beside(&exe))
}

/// The harness's path next to the `ferry` executable `exe`.
fn beside(exe: &Path) -> PathBuf {
    exe.with_file_name(HARNESS)
}

/// What to tell a user whose installation has no harness.
fn missing(harness: &Path) -> String {
    format!(
        "ferry perf: the performance harness is not installed: {} does not exist. \
         Build it with `cargo build --release -p ferry` (or `make build`), which builds \
         `ferry` and `ferry-perf` side by side, and install both in the same directory.",
        harness.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_harness_is_looked_for_beside_ferry() {
        assert_eq!(
            beside(Path::new("/opt/ferry/bin/ferry")),
            Path::new("/opt/ferry/bin/ferry-perf")
        );
        let m = missing(Path::new("/opt/ferry/bin/ferry-perf"));
        assert!(
            m.contains("/opt/ferry/bin/ferry-perf does not exist"),
            "{m}"
        );
        assert!(m.contains("cargo build --release -p ferry"), "{m}");
    }
}
