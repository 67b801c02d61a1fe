//! What an application is told when the store fails: the one mapping from ferry-store's
//! error kinds to MQ reason codes.
//!
//! The store says what went wrong (the log is full, a write failed, a record is damaged);
//! the server decides what the application sees. Running out of something or failing
//! I/O is 2102 MQRC_RESOURCE_PROBLEM: the request is refused and others may succeed.
//! Damage and misuse are 2195 MQRC_UNEXPECTED_ERROR: nothing damaged is delivered. The
//! matches name every variant, so a new kind of store error must be placed here.

use ferry_mqi::ReasonCode;
use ferry_store::{LogError, QueueFileError};

/// The reason code an MQI call fails with when the recovery log refuses its records.
pub fn log_error_reason(e: &LogError) -> ReasonCode {
    match e {
        LogError::LogFull { .. }
        | LogError::BufferFull { .. }
        | LogError::RecordTooLarge { .. }
        | LogError::Failed(_)
        | LogError::Io { .. } => ReasonCode::ResourceProblem,
        LogError::UnsupportedVersion { .. }
        | LogError::Corrupt(_)
        | LogError::Config(_)
        | LogError::NotFound(_)
        | LogError::AlreadyExists(_) => ReasonCode::UnexpectedError,
    }
}

/// The reason code an MQI call fails with when a queue file cannot serve it (an MQGET
/// whose body is read back from the queue file).
pub fn queue_file_error_reason(e: &QueueFileError) -> ReasonCode {
    match e {
        QueueFileError::Io { .. }
        | QueueFileError::Failed(_)
        | QueueFileError::RecordTooLarge { .. } => ReasonCode::ResourceProblem,
        QueueFileError::Corrupt { .. }
        | QueueFileError::UnsupportedVersion { .. }
        | QueueFileError::NotFound(_)
        | QueueFileError::AlreadyExists(_)
        | QueueFileError::DuplicateSeq(_)
        | QueueFileError::UnknownSeq(_)
        | QueueFileError::Config(_) => ReasonCode::UnexpectedError,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_store::Lsn;

    #[test]
    fn running_out_is_a_resource_problem_and_damage_is_unexpected() {
        let full = LogError::LogFull {
            needed: 10,
            free: 0,
            pinned: Lsn::FIRST,
        };
        assert_eq!(log_error_reason(&full), ReasonCode::ResourceProblem);
        let enospc = LogError::Io {
            op: "write",
            file: "S0000000.LOG".into(),
            source: std::io::Error::from_raw_os_error(libc::ENOSPC),
        };
        assert_eq!(log_error_reason(&enospc), ReasonCode::ResourceProblem);
        assert_eq!(
            log_error_reason(&LogError::Failed("fsync".into())),
            ReasonCode::ResourceProblem
        );
        assert_eq!(
            log_error_reason(&LogError::Corrupt("bad page".into())),
            ReasonCode::UnexpectedError
        );
        assert_eq!(ReasonCode::ResourceProblem as i32, 2102);
        assert_eq!(ReasonCode::UnexpectedError as i32, 2195);
    }

    #[test]
    fn a_queue_file_read_error_is_2102_and_damage_2195() {
        let io = QueueFileError::Io {
            op: "read",
            file: "Q0000001.SEG".into(),
            source: std::io::Error::from_raw_os_error(libc::EIO),
        };
        assert_eq!(queue_file_error_reason(&io), ReasonCode::ResourceProblem);
        let damaged = QueueFileError::Corrupt {
            file: "Q0000001.SEG".into(),
            offset: 64,
            reason: "record checksum mismatch".into(),
        };
        assert_eq!(
            queue_file_error_reason(&damaged),
            ReasonCode::UnexpectedError
        );
        assert_eq!(
            queue_file_error_reason(&QueueFileError::UnknownSeq(7)),
            ReasonCode::UnexpectedError
        );
    }
}
