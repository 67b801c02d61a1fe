//! Standard output of the control commands, ending quietly on a closed pipe.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`ferry dspmq | head -1`):
//! exit 101 and a Rust message. Unix tools die of SIGPIPE there, silently, and shells and
//! scripts expect that (status 141 in bash). The commands print through [`line`], which
//! does the same: on EPIPE it restores SIGPIPE's default action and raises it; and
//! `closed_pipe::end_quietly_on_closed_pipe` catches the `println!` of code that prints for itself
//! (the perf harness's tables).

use crate::closed_pipe::die_of_sigpipe;
use std::io::Write;

/// Prints `text` and a newline on stdout; ends the process as Unix tools do when stdout
/// is a closed pipe.
pub fn line(text: impl std::fmt::Display) {
    let mut out = Stdout::lock();
    // Any other failure (a full disk behind a redirection) is not worth a panic either;
    // the command's exit status still tells what it did.
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Stdout as a [`Write`] that ends the process on a closed pipe, for output written in
/// pieces (an MQSC session's answers).
pub struct Stdout(std::io::StdoutLock<'static>);

impl Stdout {
    /// Locks stdout for this writer.
    pub fn lock() -> Self {
        Stdout(std::io::stdout().lock())
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).inspect_err(on_error)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().inspect_err(on_error)
    }
}

fn on_error(e: &std::io::Error) {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        die_of_sigpipe();
    }
}
