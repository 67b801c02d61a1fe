//! The log's configuration, with the meanings of qm.ini's Log stanza.

use crate::error::{LogError, Result};
use crate::format::page::PAGE_SIZE;
use crate::lsn::Geometry;
use std::time::Duration;

/// LogWriteIntegrity: how a partial (tail) page is rewritten as records are added to it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WriteIntegrity {
    /// Rewrite the partial page in place. A torn rewrite can destroy records acknowledged
    /// earlier in that page: safe only on storage with atomic 4 KiB writes. One write per flush.
    SingleWrite,
    /// Accepted for compatibility; the same algorithm as [`WriteIntegrity::TripleWrite`].
    DoubleWrite,
    /// (MQ's default.) Never overwrite the only copy of committed data: a partial page is
    /// written alternately to one of two scratch slots of its extent (each copy carries epoch,
    /// sequence and checksum); only a full page goes to its home location, which held no
    /// current data. A torn write always leaves the previous copy intact. Same cost per flush
    /// as SingleWrite (one data write, one fdatasync per file), plus one page when a partial
    /// page fills.
    TripleWrite,
}

impl WriteIntegrity {
    /// Parses the qm.ini value (case-insensitive).
    pub fn parse(s: &str) -> Result<WriteIntegrity> {
        match s.to_ascii_lowercase().as_str() {
            "singlewrite" => Ok(WriteIntegrity::SingleWrite),
            "doublewrite" => Ok(WriteIntegrity::DoubleWrite),
            "triplewrite" => Ok(WriteIntegrity::TripleWrite),
            _ => Err(LogError::Config(format!(
                "LogWriteIntegrity={s}: expected SingleWrite, DoubleWrite or TripleWrite"
            ))),
        }
    }

    /// Whether partial pages go to the scratch slots (ping-pong) rather than home.
    pub fn uses_slots(self) -> bool {
        !matches!(self, WriteIntegrity::SingleWrite)
    }

    pub(crate) fn code(self) -> u8 {
        match self {
            WriteIntegrity::SingleWrite => 1,
            WriteIntegrity::DoubleWrite => 2,
            WriteIntegrity::TripleWrite => 3,
        }
    }
}

/// How the log is shaped and run. The ring's shape (`file_pages`, `extents`) is fixed when the
/// log is created; on open the control file's values win.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogConfig {
    /// Data pages per extent (LogFilePages; 4 KiB pages).
    pub file_pages: u32,
    /// Extents in the ring: LogPrimaryFiles + LogSecondaryFiles, all preallocated at creation
    /// (zero-filled, so a flush never has to update file metadata).
    pub extents: u32,
    /// Of those, the primary ones (LogPrimaryFiles): the space the queue manager's checkpoint
    /// policy keeps the log within. The secondary ones hold what outlasts it — a long unit of
    /// work, a burst faster than checkpoints — before the log is full (MQ allocates its
    /// secondary files only then; Ferry has them ready).
    pub primary_extents: u32,
    /// In-memory buffer in 4 KiB pages (LogBufferPages; 0 means 512).
    pub buffer_pages: u32,
    /// LogWriteIntegrity.
    pub write_integrity: WriteIntegrity,
    /// A write or sync slower than this is reported as a [`crate::SlowIo`] (AMQ_IODELAY).
    pub slow_io_threshold: Duration,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            file_pages: 4096,
            extents: 3,
            primary_extents: 3,
            buffer_pages: 0,
            write_integrity: WriteIntegrity::TripleWrite,
            slow_io_threshold: Duration::from_millis(100),
        }
    }
}

impl LogConfig {
    /// Builds a configuration from the Log stanza's values, with MQ's ranges.
    /// LogType=LINEAR is refused until linear logging exists.
    pub fn from_stanza(
        primary_files: u32,
        secondary_files: u32,
        file_pages: u32,
        buffer_pages: u32,
        log_type: &str,
        write_integrity: &str,
    ) -> Result<LogConfig> {
        if !log_type.eq_ignore_ascii_case("CIRCULAR") {
            return Err(LogError::Config(format!(
                "LogType={log_type}: only CIRCULAR logging is supported"
            )));
        }
        if !(2..=510).contains(&primary_files) {
            return Err(LogError::Config(format!(
                "LogPrimaryFiles={primary_files}: expected 2 to 510"
            )));
        }
        if primary_files + secondary_files > 511 {
            return Err(LogError::Config(format!(
                "LogSecondaryFiles={secondary_files}: LogPrimaryFiles + LogSecondaryFiles may be at most 511"
            )));
        }
        if !(64..=65_535).contains(&file_pages) {
            return Err(LogError::Config(format!(
                "LogFilePages={file_pages}: expected 64 to 65535"
            )));
        }
        if buffer_pages != 0 && !(18..=4096).contains(&buffer_pages) {
            return Err(LogError::Config(format!(
                "LogBufferPages={buffer_pages}: expected 0 or 18 to 4096"
            )));
        }
        let c = LogConfig {
            file_pages,
            extents: primary_files + secondary_files,
            primary_extents: primary_files,
            buffer_pages,
            write_integrity: WriteIntegrity::parse(write_integrity)?,
            ..LogConfig::default()
        };
        c.validate()?;
        Ok(c)
    }

    /// Checks the values the log itself needs (looser than qm.ini so tests can use tiny rings).
    pub fn validate(&self) -> Result<()> {
        if self.file_pages < 4 || self.extents < 2 {
            return Err(LogError::Config(
                "a log needs at least 2 extents of 4 pages".into(),
            ));
        }
        Ok(())
    }

    /// The ring's shape.
    pub fn geometry(&self) -> Geometry {
        Geometry {
            file_pages: self.file_pages,
            extents: self.extents,
        }
    }

    /// The buffer's capacity in bytes.
    pub fn buffer_bytes(&self) -> usize {
        let pages = if self.buffer_pages == 0 {
            512
        } else {
            self.buffer_pages
        };
        pages as usize * PAGE_SIZE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stanza_defaults_are_accepted() {
        let c = LogConfig::from_stanza(3, 2, 4096, 0, "CIRCULAR", "TripleWrite").unwrap();
        assert_eq!((c.extents, c.primary_extents), (5, 3));
        assert_eq!(c.buffer_bytes(), 512 * 4096);
        assert_eq!(c.write_integrity, WriteIntegrity::TripleWrite);
    }

    #[test]
    fn linear_and_bad_values_are_refused() {
        assert!(
            LogConfig::from_stanza(3, 2, 4096, 0, "LINEAR", "TripleWrite")
                .unwrap_err()
                .to_string()
                .contains("CIRCULAR")
        );
        assert!(LogConfig::from_stanza(3, 2, 10, 0, "CIRCULAR", "TripleWrite").is_err());
        assert!(
            LogConfig::from_stanza(3, 509, 4096, 0, "CIRCULAR", "TripleWrite")
                .unwrap_err()
                .to_string()
                .contains("LogSecondaryFiles")
        );
        assert!(LogConfig::from_stanza(3, 2, 4096, 5, "CIRCULAR", "TripleWrite").is_err());
        assert!(LogConfig::from_stanza(3, 2, 4096, 0, "CIRCULAR", "QuadWrite").is_err());
        assert_eq!(
            WriteIntegrity::parse("singlewrite").unwrap(),
            WriteIntegrity::SingleWrite
        );
    }
}
