//! Standard output of the control commands, ending quietly on a closed pipe.
//!
//! `println!` panics when stdout is a pipe whose reader has gone (`ferry dspmq | head -1`):
//! exit 101 and a Rust message. Unix tools die of SIGPIPE there, silently, and shells and
//! scripts expect that (status 141 in bash). The commands print through [`line`], which
//! does the same: on EPIPE it restores SIGPIPE's default action and raises it; and
//! [`end_quietly_on_closed_pipe`] catches the `println!` of code that prints for itself
//! (the perf harness's tables).

use std::io::Write;

/// Prints `text` and a newline on stdout; ends the process as Unix tools do when stdout
/// is a closed pipe.
pub fn line(text: impl std::fmt::Display) {
    let mut out = Stdout::lock();
    // Any other failure (a full disk behind a redirection) is not worth a panic either;
    // the command's exit status still tells what it did.
    let _ = writeln!(out, "{text}").and_then(|()| out.flush());
}

/// Ends the process by SIGPIPE, as a Unix tool writing to a closed pipe ends.
pub fn die_of_sigpipe() -> ! {
    // SAFETY: restoring a signal's default action and raising it in this process; no
    // handler runs, the process ends.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // raise returns only if the signal is blocked; end with the status a shell would show.
    std::process::exit(128 + libc::SIGPIPE)
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

/// Makes a `println!` anywhere in the process end it as [`line`] does on a closed pipe,
/// instead of panicking: std's print macros panic with "failed printing to stdout: Broken
/// pipe", which this hook recognises. Every other panic goes to the default hook.
pub fn end_quietly_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.starts_with("failed printing to stdout") && text.contains("Broken pipe") {
            die_of_sigpipe();
        }
        default(info);
    }));
}
