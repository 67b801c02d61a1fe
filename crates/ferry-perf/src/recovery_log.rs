//! The recovery log's counters around a step's measured window: `DISPLAY QMSTATUS
//! LOGRECS LOGFLUSH LOGBYTES` through the command server (an MQSC round trip made right
//! before and right after the window, outside it), and what the two readings say:
//! log flushes per message moved (group commit makes it well below 1 under
//! concurrency), log records per flush and log MB/s.
//!
//! Only a Ferry queue manager answers this (embedded, `--connect`, the embedded AMQP
//! mode); a failed read leaves the step's log figures empty with a one-line note.

use ferry_client::Connection;
use ferry_mqi::MqError;
use serde::{Deserialize, Serialize};

/// The MQSC command that reads the counters.
pub const LOG_STATUS_COMMAND: &str = "DISPLAY QMSTATUS LOGRECS LOGFLUSH LOGBYTES";

/// The recovery log's counters since the queue manager started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogCounters {
    /// Log records made durable (LOGRECS).
    pub records: u64,
    /// Flushes: write + fdatasync (LOGFLUSH).
    pub flushes: u64,
    /// Bytes written to the log files (LOGBYTES).
    pub bytes: u64,
}

/// Why the counters could not be read.
#[derive(Debug, thiserror::Error)]
pub enum LogReadError {
    /// The MQSC call itself failed.
    #[error("{LOG_STATUS_COMMAND}: {0}")]
    Mq(#[from] MqError),
    /// The command server refused the command (e.g. a queue manager without the
    /// counters).
    #[error("{LOG_STATUS_COMMAND} failed: {0}")]
    Failed(String),
    /// The answer lacks a keyword.
    #[error("{LOG_STATUS_COMMAND}: no {0} in the answer")]
    Missing(&'static str),
    /// A keyword's value is not a number.
    #[error("{LOG_STATUS_COMMAND}: {keyword}({value}) is not a number")]
    BadValue {
        /// The keyword.
        keyword: &'static str,
        /// What it held.
        value: String,
    },
}

/// One end of a window: `None` when the target is not a Ferry queue manager.
pub type Reading = Option<Result<LogCounters, LogReadError>>;

/// The value of `KEYWORD(value)` in MQSC output lines (the keyword must start a word).
pub fn keyword_value<'a>(lines: &'a [String], keyword: &str) -> Option<&'a str> {
    let pat = format!("{keyword}(");
    lines.iter().find_map(|line| {
        let mut from = 0;
        while let Some(i) = line[from..].find(&pat) {
            let at = from + i;
            let starts_word = line[..at]
                .chars()
                .next_back()
                .is_none_or(|c| !c.is_ascii_alphanumeric());
            let rest = &line[at + pat.len()..];
            if starts_word {
                return rest.find(')').map(|end| rest[..end].trim());
            }
            from = at + pat.len();
        }
        None
    })
}

/// Parses the counters out of the answer to [`LOG_STATUS_COMMAND`].
pub fn parse(lines: &[String]) -> Result<LogCounters, LogReadError> {
    let number = |keyword: &'static str| -> Result<u64, LogReadError> {
        let v = keyword_value(lines, keyword).ok_or(LogReadError::Missing(keyword))?;
        v.parse().map_err(|_| LogReadError::BadValue {
            keyword,
            value: v.to_string(),
        })
    };
    Ok(LogCounters {
        records: number("LOGRECS")?,
        flushes: number("LOGFLUSH")?,
        bytes: number("LOGBYTES")?,
    })
}

/// Reads the counters through `admin`'s command server.
pub async fn read(admin: &Connection) -> Result<LogCounters, LogReadError> {
    let out = admin.mqsc(LOG_STATUS_COMMAND).await?;
    if out.failed {
        return Err(LogReadError::Failed(out.lines.join(" / ")));
    }
    parse(&out.lines)
}

/// Reads the counters when there is a Ferry queue manager to ask.
pub async fn read_if(admin: Option<&Connection>) -> Reading {
    match admin {
        Some(a) => Some(read(a).await),
        None => None,
    }
}

/// What the recovery log did in a step's measured window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogFigures {
    /// Log records made durable in the window.
    pub records: u64,
    /// Log flushes in the window.
    pub flushes: u64,
    /// Bytes written to the log in the window.
    pub bytes: u64,
    /// Messages moved in the window (RR: 2 per round trip; SR: messages got).
    pub messages: u64,
    /// Flushes per message moved (`None` without messages).
    pub flushes_per_msg: Option<f64>,
    /// Records per flush (`None` without flushes).
    pub records_per_flush: Option<f64>,
    /// Log MB (10^6 bytes) written per second.
    pub mb_per_sec: Option<f64>,
}

/// The figures of a window from its two readings.
pub fn figures(a: &LogCounters, b: &LogCounters, messages: u64, elapsed_secs: f64) -> LogFigures {
    let records = b.records.saturating_sub(a.records);
    let flushes = b.flushes.saturating_sub(a.flushes);
    let bytes = b.bytes.saturating_sub(a.bytes);
    let per = |n: u64, d: u64| (d > 0).then(|| n as f64 / d as f64);
    LogFigures {
        records,
        flushes,
        bytes,
        messages,
        flushes_per_msg: per(flushes, messages),
        records_per_flush: per(records, flushes),
        mb_per_sec: (elapsed_secs > 0.0).then(|| bytes as f64 / 1e6 / elapsed_secs),
    }
}

/// A step's log figures from the readings at both ends of its window, and the note to
/// add when a reading failed (both `None` when the target is not a Ferry queue manager).
pub fn step_figures(
    start: Reading,
    end: Reading,
    messages: u64,
    elapsed_secs: f64,
) -> (Option<LogFigures>, Option<String>) {
    match (start, end) {
        (Some(Ok(a)), Some(Ok(b))) => (Some(figures(&a, &b, messages, elapsed_secs)), None),
        (Some(Err(e)), _) | (_, Some(Err(e))) => {
            (None, Some(format!("recovery log counters not read: {e}")))
        }
        _ => (None, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::ReasonCode;

    fn lines(text: &[&str]) -> Vec<String> {
        text.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn counters_are_parsed_from_the_answer() {
        let out = lines(&[
            "FRY8705I: Display queue manager status details.",
            "   QMNAME(QM1)                             LOGBYTES(9999999)",
            "   LOGRECS(5000)                           LOGFLUSH(250)",
        ]);
        assert_eq!(
            parse(&out).expect("parses"),
            LogCounters {
                records: 5000,
                flushes: 250,
                bytes: 9_999_999
            }
        );
        assert!(matches!(
            parse(&lines(&["LOGRECS(1) LOGBYTES(2)"])),
            Err(LogReadError::Missing("LOGFLUSH"))
        ));
        let bad = parse(&lines(&["LOGRECS(x) LOGFLUSH(1) LOGBYTES(2)"])).expect_err("bad");
        assert!(bad.to_string().contains("LOGRECS(x)"), "{bad}");
    }

    #[test]
    fn keywords_match_whole_words() {
        let out = lines(&["XLOGRECS(9) LOGRECS( 7 )"]);
        assert_eq!(keyword_value(&out, "LOGRECS"), Some("7"));
        assert_eq!(keyword_value(&out, "LOGFLUSH"), None);
    }

    #[test]
    fn figures_per_message_and_flush() {
        let a = LogCounters {
            records: 1_000,
            flushes: 100,
            bytes: 0,
        };
        let b = LogCounters {
            records: 21_000,
            flushes: 1_100,
            bytes: 40_000_000,
        };
        // 10,000 round trips = 20,000 messages; 1,000 flushes; 20,000 records.
        let f = figures(&a, &b, 20_000, 4.0);
        assert_eq!((f.records, f.flushes, f.bytes), (20_000, 1_000, 40_000_000));
        assert_eq!(f.flushes_per_msg, Some(0.05));
        assert_eq!(f.records_per_flush, Some(20.0));
        assert_eq!(f.mb_per_sec, Some(10.0));
        let idle = figures(&a, &a, 0, 0.0);
        assert_eq!(
            (
                idle.flushes_per_msg,
                idle.records_per_flush,
                idle.mb_per_sec
            ),
            (None, None, None)
        );
    }

    #[test]
    fn a_failed_reading_leaves_a_note() {
        let c = LogCounters::default();
        assert_eq!(step_figures(None, None, 10, 1.0), (None, None));
        let (f, note) = step_figures(Some(Ok(c)), Some(Ok(c)), 10, 1.0);
        assert!(f.is_some() && note.is_none());
        let err = LogReadError::Mq(MqError::from(ReasonCode::UnexpectedError));
        let (f, note) = step_figures(Some(Ok(c)), Some(Err(err)), 10, 1.0);
        assert!(f.is_none());
        assert!(
            note.is_some_and(|n| n.starts_with("recovery log counters not read: DISPLAY")),
            "note"
        );
        let failed = LogReadError::Failed("FRY8147E unknown".into());
        let (_, note) = step_figures(Some(Err(failed)), None, 10, 1.0);
        assert!(note.is_some());
    }
}
