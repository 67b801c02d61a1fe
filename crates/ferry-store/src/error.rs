//! The log's errors, as the store sees them: what ran out, what failed, what is damaged.
//! The store knows nothing of MQ's reason codes; the server decides what an application
//! is told (ferry-server's `store_errors`).

use crate::lsn::Lsn;

/// Everything that can go wrong with the recovery log.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Appending would overwrite log space still needed for restart (an old checkpoint or a
    /// long-running unit of work pins the ring). Take a checkpoint or back out the oldest unit
    /// of work. Nothing was appended.
    #[error("the recovery log is full: {needed} bytes more are needed but only {free} are free until LSN {pinned} is no longer needed")]
    LogFull {
        /// Bytes the append needed.
        needed: u64,
        /// Bytes free in the ring.
        free: u64,
        /// The oldest LSN still needed (the restart point).
        pinned: Lsn,
    },
    /// The in-memory log buffer (LogBufferPages) is full; the writer is behind. Transient:
    /// retry after the next durable notification. Nothing was appended.
    #[error("the log buffer is full ({buffered} of {capacity} bytes waiting for the writer)")]
    BufferFull {
        /// Bytes waiting.
        buffered: usize,
        /// The buffer's capacity.
        capacity: usize,
    },
    /// A record larger than the log can hold.
    #[error("a log record of {len} bytes is larger than the maximum {max}")]
    RecordTooLarge {
        /// The payload length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The log writer failed (an I/O or fsync error). Nothing written after the last durable
    /// notification is known to be durable, and the log accepts nothing more: fsync is never
    /// retried after a failure. Restart the queue manager to recover from what is on disk.
    #[error("the recovery log has failed and accepts no more records: {0}")]
    Failed(String),
    /// An I/O error.
    #[error("log I/O error during {op} of {file}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// Which file.
        file: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The log's files have a format version this build does not understand.
    #[error(
        "log file {file} has format version {found}; this Ferry reads version {supported} only"
    )]
    UnsupportedVersion {
        /// Which file.
        file: String,
        /// The version found.
        found: u32,
        /// The version supported.
        supported: u32,
    },
    /// The log is damaged where it must not be (a checkpointed record is unreadable, the
    /// control file is unreadable, a valid page holds an invalid record).
    #[error("the recovery log is damaged: {0}")]
    Corrupt(String),
    /// The configuration is invalid (LogType, LogFilePages...).
    #[error("invalid log configuration: {0}")]
    Config(String),
    /// No log exists where one was expected.
    #[error("no recovery log found: {0}")]
    NotFound(String),
    /// A log already exists where a new one was to be created.
    #[error("a recovery log already exists: {0}")]
    AlreadyExists(String),
}

impl LogError {
    /// Whether this is a "no space on device" error (ENOSPC).
    pub fn is_no_space(&self) -> bool {
        matches!(self, LogError::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC))
    }

    /// Whether retrying later can succeed without a checkpoint or restart (buffer full).
    pub fn is_transient(&self) -> bool {
        matches!(self, LogError::BufferFull { .. })
    }

    pub(crate) fn io(op: &'static str, file: &str, source: std::io::Error) -> LogError {
        LogError::Io {
            op,
            file: file.to_string(),
            source,
        }
    }
}

/// Shorthand for results in this crate.
pub type Result<T, E = LogError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_went_wrong() {
        let e = LogError::LogFull {
            needed: 10,
            free: 0,
            pinned: Lsn::FIRST,
        };
        assert!(e.to_string().contains("full"));
        let e = LogError::Io {
            op: "write",
            file: "S0000000.LOG".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert!(e.is_no_space());
        assert!(!LogError::Corrupt("x".into()).is_no_space());
    }
}
