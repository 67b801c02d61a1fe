//! The queue manager's error log: `errors/FRYERR01.LOG`, rotated like MQ's AMQERR01.LOG.
//!
//! Each entry has a timestamp, the process and queue manager, the numbered message, and
//! its explanation and action, so an administrator can act on it without other docs.
//! When FRYERR01.LOG passes QMErrorLog/ErrorLogSize it becomes FRYERR02.LOG (02 becomes
//! 03, the old 03 is dropped). Every entry is also emitted through `tracing`.

use crate::messages::{Message, Severity};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;

/// How many files the log keeps (FRYERR01..03).
const FILES: usize = 3;

/// An error log of one queue manager.
pub struct ErrorLog {
    dir: PathBuf,
    qmgr: String,
    max_size: u64,
    file: Option<File>,
    size: u64,
}

impl ErrorLog {
    /// Opens (creating) `dir/FRYERR01.LOG`; rotation happens past `max_size` bytes.
    pub fn open(dir: impl Into<PathBuf>, qmgr: &str, max_size: u64) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let mut log = ErrorLog {
            dir,
            qmgr: qmgr.to_string(),
            max_size: max_size.max(4096),
            file: None,
            size: 0,
        };
        log.reopen()?;
        Ok(log)
    }

    fn path(&self, n: usize) -> PathBuf {
        self.dir.join(format!("FRYERR{n:02}.LOG"))
    }

    fn reopen(&mut self) -> std::io::Result<()> {
        let f = OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.path(1))?;
        self.size = f.metadata()?.len();
        self.file = Some(f);
        Ok(())
    }

    fn rotate(&mut self) -> std::io::Result<()> {
        self.file = None;
        for n in (1..FILES).rev() {
            let from = self.path(n);
            if from.exists() {
                std::fs::rename(&from, self.path(n + 1))?;
            }
        }
        self.reopen()
    }

    /// Writes message `m` with its inserts; returns the one-line form (`FRY8003I: ...`).
    pub fn write(&mut self, m: &Message, inserts: &[&dyn std::fmt::Display]) -> String {
        let line = m.format(inserts);
        match m.severity {
            Severity::Info => tracing::info!(target: "ferry::errlog", "{line}"),
            Severity::Warning => tracing::warn!(target: "ferry::errlog", "{line}"),
            Severity::Error => tracing::error!(target: "ferry::errlog", "{line}"),
        }
        let (explanation, action) = m.detail(inserts);
        let now = time::OffsetDateTime::now_utc();
        let stamp = now
            .format(&time::macros::format_description!(
                "[year]-[month]-[day] [hour]:[minute]:[second].[subsecond digits:3] UTC"
            ))
            .unwrap_or_default();
        let entry = format!(
            "----- {stamp} - Process({pid}) Program(ferry) QMgr({qm}) -----\n{line}\n\nEXPLANATION:\n{explanation}\nACTION:\n{action}\n\n",
            pid = std::process::id(),
            qm = self.qmgr,
        );
        if self.size + entry.len() as u64 > self.max_size && self.size > 0 {
            if let Err(e) = self.rotate() {
                tracing::error!("error log rotation failed: {e}");
            }
        }
        if let Some(f) = self.file.as_mut() {
            // A failing error log must not stop the queue manager; tracing still has it.
            if f.write_all(entry.as_bytes()).is_ok() {
                self.size += entry.len() as u64;
            }
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages;

    #[test]
    fn entries_are_written_and_rotated() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ErrorLog::open(dir.path(), "QM1", 4096).unwrap();
        let line = log.write(&messages::QMGR_STARTED, &[&"QM1", &"0.1.0"]);
        assert!(line.starts_with("FRY8003I"));
        let text = std::fs::read_to_string(dir.path().join("FRYERR01.LOG")).unwrap();
        assert!(text.contains("FRY8003I: Ferry queue manager 'QM1' started"));
        assert!(text.contains("EXPLANATION:"));
        for _ in 0..40 {
            log.write(&messages::QMGR_ENDED, &[&"QM1"]);
        }
        assert!(dir.path().join("FRYERR02.LOG").exists());
        let size = std::fs::metadata(dir.path().join("FRYERR01.LOG"))
            .unwrap()
            .len();
        assert!(size <= 4096);
    }
}
