//! The queue manager's error log: `errors/FRYERR01.LOG`, rotated like MQ's AMQERR01.LOG.
//!
//! Each entry has a timestamp, the process and queue manager, the numbered message, and
//! its explanation and action, so an administrator can act on it without other docs.
//! When FRYERR01.LOG passes QMErrorLog/ErrorLogSize it becomes FRYERR02.LOG (02 becomes
//! 03, the old 03 is dropped). Every entry written is also emitted through `tracing` (to
//! the console log).
//!
//! Repeats are suppressed as MQ's QMErrorLog stanza asks (`SuppressMessage`,
//! `SuppressInterval`, `ExcludeMessage`; see [`suppression`]): a repeat of a suppressed
//! message goes neither to the file nor to `tracing`, and the end of its interval writes
//! one FRY7185W entry with the count. Intervals end on the next write, on
//! [`ErrorLog::close_due`] (the running queue manager calls it every second) and on
//! [`ErrorLog::close_all`] at shutdown, so no count is lost when the flood stops.

pub mod suppression;

use crate::messages::{self, Message, Severity};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use suppression::{Rules, Summary, Suppression, Verdict};

/// How many files the log keeps (FRYERR01..03).
const FILES: usize = 3;

/// An error log of one queue manager.
pub struct ErrorLog {
    dir: PathBuf,
    qmgr: String,
    max_size: u64,
    file: Option<File>,
    size: u64,
    suppression: Suppression,
}

impl ErrorLog {
    /// Opens (creating) `dir/FRYERR01.LOG`; rotation happens past `max_size` bytes, and
    /// repeats are suppressed under `rules`.
    pub fn open(
        dir: impl Into<PathBuf>,
        qmgr: &str,
        max_size: u64,
        rules: Rules,
    ) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        let mut log = ErrorLog {
            dir,
            qmgr: qmgr.to_string(),
            max_size: max_size.max(4096),
            file: None,
            size: 0,
            suppression: Suppression::new(rules),
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

    /// Writes message `m` with its inserts, unless it is a suppressed repeat or excluded;
    /// returns the one-line form (`FRY8003I: ...`) either way, for replies that quote it.
    pub fn write(&mut self, m: &Message, inserts: &[&dyn std::fmt::Display]) -> String {
        self.write_at(Instant::now(), m, inserts)
    }

    /// [`ErrorLog::write`] at time `now` (tests pass a made-up clock).
    pub fn write_at(
        &mut self,
        now: Instant,
        m: &Message,
        inserts: &[&dyn std::fmt::Display],
    ) -> String {
        self.close_due_at(now);
        let line = m.format(inserts);
        if self.suppression.check(now, m, inserts) == Verdict::Write {
            self.emit(m, inserts, &line);
        }
        line
    }

    /// Writes the summaries of suppression intervals that have ended.
    pub fn close_due(&mut self) {
        self.close_due_at(Instant::now());
    }

    /// [`ErrorLog::close_due`] at time `now`.
    pub fn close_due_at(&mut self, now: Instant) {
        for s in self.suppression.due(now) {
            self.summarise(&s);
        }
    }

    /// Ends every suppression interval now, writing the counts (at shutdown).
    pub fn close_all(&mut self) {
        self.close_all_at(Instant::now());
    }

    /// [`ErrorLog::close_all`] at time `now`.
    pub fn close_all_at(&mut self, now: Instant) {
        for s in self.suppression.drain(now) {
            self.summarise(&s);
        }
    }

    fn summarise(&mut self, s: &Summary) {
        let m = &messages::MESSAGES_SUPPRESSED;
        let times = match s.repeats {
            1 => "1 time".to_string(),
            n => format!("{} times", thousands(n)),
        };
        let inserts: [&dyn std::fmt::Display; 4] = [&s.id, &times, &s.seconds, &s.cause];
        let line = m.format(&inserts);
        self.emit(m, &inserts, &line);
    }

    /// Writes one entry to the file and to `tracing`.
    fn emit(&mut self, m: &Message, inserts: &[&dyn std::fmt::Display], line: &str) {
        match m.severity {
            Severity::Info => tracing::info!(target: "ferry::errlog", "{line}"),
            Severity::Warning => tracing::warn!(target: "ferry::errlog", "{line}"),
            Severity::Error | Severity::Severe => {
                tracing::error!(target: "ferry::errlog", "{line}")
            }
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
    }
}

/// `n` with thousands separators: 225919 as "225,919".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages;

    #[test]
    fn entries_are_written_and_rotated() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ErrorLog::open(dir.path(), "QM1", 4096, Rules::default()).unwrap();
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

    fn read(dir: &std::path::Path) -> String {
        std::fs::read_to_string(dir.join("FRYERR01.LOG")).unwrap()
    }

    #[test]
    fn a_flood_is_one_entry_and_a_count() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ErrorLog::open(dir.path(), "QM1", 1 << 20, Rules::default()).unwrap();
        let t0 = Instant::now();
        log.write_at(t0, &messages::QMGR_STARTED, &[&"QM1", &"0.1.0"]);
        for i in 0..22_592u64 {
            let t = t0 + std::time::Duration::from_micros(i * 100);
            let peer = format!("10.0.{}.{}", (i / 256) % 256, i % 256);
            let line = log.write_at(
                t,
                &messages::PROTOCOL_ERROR,
                &[&peer, &format!("bad magic bytes [{i:x}]")],
            );
            // The caller still gets the line, to quote in a reply.
            assert!(line.starts_with("FRY9504E: A protocol error"));
        }
        let text = read(dir.path());
        assert_eq!(text.matches("FRY9504E: ").count(), 1, "{text}");
        assert!(
            !text.contains("repeated"),
            "the interval is not over: {text}"
        );
        // The next write after the interval closes it first.
        let t30 = t0 + std::time::Duration::from_secs(30);
        log.write_at(t30, &messages::QMGR_ENDED, &[&"QM1"]);
        let text = read(dir.path());
        assert!(
            text.contains(
                "FRY7185W: FRY9504E repeated 22,591 times in the last 30 s (bad magic bytes)."
            ),
            "{text}"
        );
        let summary = text.find("FRY7185W").unwrap();
        assert!(summary < text.find("FRY8004I").unwrap(), "in time order");
        assert!(text.contains("FRY8003I"), "history is kept");
    }

    #[test]
    fn counts_are_written_by_the_timer_and_at_shutdown() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules {
            interval: std::time::Duration::from_secs(2),
            ..Rules::default()
        };
        let mut log = ErrorLog::open(dir.path(), "QM1", 1 << 20, rules).unwrap();
        let t0 = Instant::now();
        for _ in 0..3 {
            log.write_at(t0, &messages::MAX_CHANNELS, &[&"10.0.0.1", &100]);
        }
        log.close_due_at(t0 + std::time::Duration::from_millis(1999));
        assert!(!read(dir.path()).contains("FRY7185W"));
        log.close_due_at(t0 + std::time::Duration::from_secs(2));
        assert!(
            read(dir.path()).contains("FRY9513E repeated 2 times in the last 2 s (the same cause)"),
            "{}",
            read(dir.path())
        );
        let t3 = t0 + std::time::Duration::from_secs(3);
        log.write_at(t3, &messages::HEARTBEAT_TIMEOUT, &[&"10.0.0.1", &65]);
        log.write_at(t3, &messages::HEARTBEAT_TIMEOUT, &[&"10.0.0.2", &65]);
        log.close_all_at(t3 + std::time::Duration::from_millis(100));
        let text = read(dir.path());
        assert!(
            text.contains("FRY9259W repeated 1 time in the last 1 s"),
            "{text}"
        );
        assert_eq!(text.matches("FRY9259W: ").count(), 1, "{text}");
    }

    #[test]
    fn excluded_messages_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let mut rules = Rules::default();
        rules.exclude.insert(messages::CHANNEL_UNKNOWN.number);
        let mut log = ErrorLog::open(dir.path(), "QM1", 1 << 20, rules).unwrap();
        log.write(&messages::CHANNEL_UNKNOWN, &[&"X", &"10.0.0.1"]);
        log.write(&messages::QMGR_ENDED, &[&"QM1"]);
        log.close_all();
        let text = read(dir.path());
        assert!(!text.contains("FRY9519E"), "{text}");
        assert!(!text.contains("FRY7185W"), "{text}");
        assert!(text.contains("FRY8004I"), "{text}");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(225_919), "225,919");
        assert_eq!(thousands(12_345_678), "12,345,678");
    }
}
