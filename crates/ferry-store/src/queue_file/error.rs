//! The queue files' errors, as the store sees them. Like the log's
//! ([`crate::error::LogError`]) they say what went wrong, not what an application is told:
//! the server maps them to MQ reason codes (ferry-server's `store_errors`).

/// Everything that can go wrong with a queue's files.
#[derive(Debug, thiserror::Error)]
pub enum QueueFileError {
    /// An I/O error. After a failed write or sync the queue file accepts nothing more
    /// ([`QueueFileError::Failed`]): fsync is never retried. Reopen to recover from the disk.
    #[error("queue file I/O error during {op} of {file}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// Which file.
        file: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An earlier write or sync failed; nothing more is accepted until the queue file is
    /// reopened (which recovers what is durable).
    #[error("the queue file has failed and accepts no more changes: {0}")]
    Failed(String),
    /// Data that must be intact is not: a damaged record in a segment that is not the last
    /// (it was synced before the next segment was started), a damaged segment header or
    /// manifest, or records that contradict each other.
    #[error("queue file {file} is damaged at offset {offset}: {reason}")]
    Corrupt {
        /// Which file.
        file: String,
        /// Byte offset of the damage in that file.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// A file written by a format version this build does not read.
    #[error(
        "queue file {file} has format version {found}; this Ferry reads version {supported} only"
    )]
    UnsupportedVersion {
        /// Which file.
        file: String,
        /// The version found.
        found: u32,
        /// The version supported.
        supported: u32,
    },
    /// `open` found no queue file (no manifest).
    #[error("no queue file found: {0}")]
    NotFound(String),
    /// `create` found a queue file already there.
    #[error("a queue file already exists: {0}")]
    AlreadyExists(String),
    /// A put for a sequence number that is already live. Nothing was appended.
    #[error("message sequence number {0} is already in the queue file")]
    DuplicateSeq(u64),
    /// A remove (or read) of a sequence number that is not live. Nothing was appended.
    #[error("message sequence number {0} is not in the queue file")]
    UnknownSeq(u64),
    /// A payload larger than a record can carry. Nothing was appended.
    #[error("a queue file record of {len} bytes is larger than the maximum {max}")]
    RecordTooLarge {
        /// The payload length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// The configuration is invalid.
    #[error("invalid queue file configuration: {0}")]
    Config(String),
}

impl QueueFileError {
    /// Whether this is a "no space on device" error (ENOSPC).
    pub fn is_no_space(&self) -> bool {
        matches!(self, QueueFileError::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC))
    }

    pub(crate) fn io(op: &'static str, file: &str, source: std::io::Error) -> QueueFileError {
        QueueFileError::Io {
            op,
            file: file.to_string(),
            source,
        }
    }

    pub(crate) fn corrupt(file: &str, offset: u64, reason: impl Into<String>) -> QueueFileError {
        QueueFileError::Corrupt {
            file: file.to_string(),
            offset,
            reason: reason.into(),
        }
    }
}

/// Shorthand for results of queue file operations.
pub type QfResult<T> = std::result::Result<T, QueueFileError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_say_what_went_wrong() {
        let e = QueueFileError::io(
            "write",
            "Q0000001.SEG",
            std::io::Error::from_raw_os_error(libc::ENOSPC),
        );
        assert!(e.is_no_space());
        assert!(!QueueFileError::corrupt("x", 0, "bad").is_no_space());
        assert!(QueueFileError::DuplicateSeq(7).to_string().contains('7'));
    }
}
