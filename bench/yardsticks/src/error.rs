//! The yardsticks' one error type.

use std::io;

/// What can stop a yardstick run.
#[derive(Debug, thiserror::Error)]
pub enum YardstickError {
    /// A system call failed; `what` says which step.
    #[error("{what}: {source}")]
    Io {
        /// The step that failed (e.g. "connect to the relay at 127.0.0.1:7070").
        what: String,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// A command-line value that cannot be used.
    #[error("{0}")]
    Usage(String),
    /// The relay or a peer broke the frame protocol.
    #[error("protocol: {0}")]
    Protocol(String),
    /// A worker thread panicked (a bug in the yardstick).
    #[error("a {0} thread panicked")]
    ThreadPanicked(&'static str),
}

impl YardstickError {
    /// Wraps an I/O error with the step it happened in.
    pub fn io(what: impl Into<String>, source: io::Error) -> Self {
        YardstickError::Io {
            what: what.into(),
            source,
        }
    }
}
