//! Ending as Unix tools end when stdout is a closed pipe: by SIGPIPE, silently.
//!
//! Shared by `ferry` and `ferry-perf` (which prints its own tables with `println!`).

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

/// Makes a `println!` anywhere in the process end it as Unix tools end on a closed pipe,
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
