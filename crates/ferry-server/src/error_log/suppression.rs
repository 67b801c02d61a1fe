//! Suppression of repeated error-log messages: MQ's QMErrorLog `SuppressMessage`,
//! `SuppressInterval` and `ExcludeMessage`, with a count of what was left out.
//!
//! A client that connects 10,000 times a second with garbage would otherwise write 10,000
//! FRY9504E entries a second and push all history out of the rotated error log. Instead,
//! the first message of a given id *and cause* opens a window of SuppressInterval
//! seconds: it is written, repeats within the window are only counted, and when the window
//! ends one summary line says how many there were ("FRY9504E repeated 225,919 times in
//! the last 30 s (bad magic bytes)").
//!
//! The *cause* is what the inserts say once the client's own values are left out: an
//! insert that is a network address is dropped, and every other insert is cut where the
//! values begin (at its first digit, quote or bracket), so "bad magic bytes [17, 3f, ..]"
//! from any peer is one cause, and "frame of 9000 bytes exceeds ..." another. The number
//! of causes tracked at once is bounded (Limits/ErrorLogCauses): past it, further new
//! causes of a message share one window per message id, so a client varying its inserts
//! cannot grow this table, and still nothing goes uncounted.
//!
//! Pure: the caller passes the time, so tests drive it with a made-up clock.

use crate::messages::Message;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Display;
use std::time::{Duration, Instant};

/// Longest cause kept, in bytes: enough for the fixed words of any message.
const CAUSE_MAX: usize = 64;

/// Whether message `number` may be named in SuppressMessage or ExcludeMessage: as in MQ,
/// only messages about channels and connections (the 9xxx family), listener and service
/// events (5xxx) and FRY7234I (queue files loaded; MQ's AMQ7234). The queue manager's
/// own life (start, stop, recovery, the log, configuration) is always written.
pub fn may_suppress(number: u32) -> bool {
    (5000..=5999).contains(&number) || (9000..=9999).contains(&number) || number == 7234
}

/// Whether message `number` is suppressed without being named in SuppressMessage: the
/// channel and connection family (9xxx), which clients can trigger at will (protocol
/// errors, unknown channels, MaxChannels, heartbeat time-outs, AMQP protocol errors...).
pub fn suppressed_by_default(number: u32) -> bool {
    (9000..=9999).contains(&number)
}

/// What the error log is told to do with one message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Write it (first of its window, or not a suppressed message).
    Write,
    /// A repeat within its window: counted, not written.
    Suppressed,
    /// Named in ExcludeMessage: never written.
    Excluded,
}

/// The settings, from qm.ini's QMErrorLog stanza and Limits/ErrorLogCauses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rules {
    /// SuppressInterval: how long a window lasts.
    pub interval: Duration,
    /// SuppressMessage: ids suppressed on top of the default family.
    pub suppress: BTreeSet<u32>,
    /// ExcludeMessage: ids never written.
    pub exclude: BTreeSet<u32>,
    /// Most (id, cause) windows open at once.
    pub max_causes: usize,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            interval: Duration::from_secs(30),
            suppress: BTreeSet::new(),
            exclude: BTreeSet::new(),
            max_causes: 64,
        }
    }
}

/// The end of a window that had repeats: what the summary line says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// The suppressed message's id, e.g. `FRY9504E`.
    pub id: String,
    /// How many were counted and not written.
    pub repeats: u64,
    /// How long the window lasted, in whole seconds (at least 1).
    pub seconds: u64,
    /// The cause, as the window's key says it; for the shared window of a message whose
    /// causes overflowed the table, a sentence saying so.
    pub cause: String,
}

/// One open window.
#[derive(Debug)]
struct Window {
    id: String,
    opened: Instant,
    repeats: u64,
}

/// A window's key: the message number and its cause; `None` is the one shared window of
/// a message whose new causes found the table full.
type Key = (u32, Option<String>);

/// The suppression state of one error log.
#[derive(Debug)]
pub struct Suppression {
    rules: Rules,
    windows: HashMap<Key, Window>,
    /// Windows with a cause (the ones `max_causes` bounds).
    causes: usize,
    /// The earliest end of an open window: nothing to close before it.
    next_due: Option<Instant>,
}

impl Suppression {
    /// Empty state under `rules`.
    pub fn new(rules: Rules) -> Self {
        Suppression {
            rules,
            windows: HashMap::new(),
            causes: 0,
            next_due: None,
        }
    }

    /// The rules in force.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Windows open now (for tests and debug assertions).
    pub fn open_windows(&self) -> usize {
        self.windows.len()
    }

    /// Whether message `m` with `inserts`, at `now`, is written, counted or dropped.
    /// Windows that ended by `now` must have been closed first ([`Suppression::due`]), so
    /// a message after its window opens a new one.
    pub fn check(&mut self, now: Instant, m: &Message, inserts: &[&dyn Display]) -> Verdict {
        if self.rules.exclude.contains(&m.number) {
            return Verdict::Excluded;
        }
        if !(suppressed_by_default(m.number) || self.rules.suppress.contains(&m.number)) {
            return Verdict::Write;
        }
        let cause = cause_of(inserts);
        let mut key = (m.number, Some(cause));
        if !self.windows.contains_key(&key) && self.causes >= self.rules.max_causes {
            key = (m.number, None);
        }
        if let Some(w) = self.windows.get_mut(&key) {
            w.repeats += 1;
            return Verdict::Suppressed;
        }
        if key.1.is_some() {
            self.causes += 1;
        }
        self.windows.insert(
            key,
            Window {
                id: m.id(),
                opened: now,
                repeats: 0,
            },
        );
        let end = now + self.rules.interval;
        self.next_due = Some(self.next_due.map_or(end, |d| d.min(end)));
        debug_assert!(self.causes <= self.rules.max_causes);
        Verdict::Write
    }

    /// Closes the windows that ended by `now`; returns the summaries of those that had
    /// repeats, oldest first.
    pub fn due(&mut self, now: Instant) -> Vec<Summary> {
        match self.next_due {
            Some(d) if d <= now => {}
            _ => return Vec::new(),
        }
        let interval = self.rules.interval;
        self.close(|opened| opened + interval <= now, |_| interval)
    }

    /// Closes every window (at shutdown); a window still open reports the time it has
    /// been open.
    pub fn drain(&mut self, now: Instant) -> Vec<Summary> {
        self.close(|_| true, |opened| now.saturating_duration_since(opened))
    }

    fn close(
        &mut self,
        ends: impl Fn(Instant) -> bool,
        lasted: impl Fn(Instant) -> Duration,
    ) -> Vec<Summary> {
        let ended: Vec<Key> = self
            .windows
            .iter()
            .filter(|(_, w)| ends(w.opened))
            .map(|(k, _)| k.clone())
            .collect();
        let mut out = Vec::new();
        for key in ended {
            let Some(w) = self.windows.remove(&key) else {
                continue;
            };
            if key.1.is_some() {
                self.causes -= 1;
            }
            if w.repeats > 0 {
                let cause = match key.1 {
                    Some(c) if c.is_empty() => "the same cause".to_string(),
                    Some(c) => c,
                    None => format!(
                        "various causes, past the {} the error log tracks at once",
                        self.rules.max_causes
                    ),
                };
                out.push((
                    w.opened,
                    Summary {
                        id: w.id,
                        repeats: w.repeats,
                        seconds: whole_seconds(lasted(w.opened)),
                        cause,
                    },
                ));
            }
        }
        let interval = self.rules.interval;
        self.next_due = self.windows.values().map(|w| w.opened + interval).min();
        out.sort_by_key(|(opened, s)| (*opened, s.id.clone()));
        out.into_iter().map(|(_, s)| s).collect()
    }
}

/// `d` in seconds, rounded up, at least 1: "in the last 0 s" would read as nothing.
fn whole_seconds(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}

/// The cause of a message: its inserts without network addresses, each cut before the
/// values a client chooses, joined by ", ".
pub fn cause_of(inserts: &[&dyn Display]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for insert in inserts {
        let text = insert.to_string();
        if is_address(&text) {
            continue;
        }
        let fixed = fixed_words(&text);
        if !fixed.is_empty() {
            parts.push(fixed.to_string());
        }
    }
    let mut cause = parts.join(", ");
    if cause.len() > CAUSE_MAX {
        let mut end = CAUSE_MAX;
        while !cause.is_char_boundary(end) {
            end -= 1;
        }
        cause.truncate(end);
    }
    cause
}

/// A peer as the server names it: an IP address, a socket address, or a bindings pid.
fn is_address(text: &str) -> bool {
    text.parse::<std::net::IpAddr>().is_ok()
        || text.parse::<std::net::SocketAddr>().is_ok()
        || text.starts_with("bindings pid")
}

/// `text` up to its first digit, quote or bracket, without trailing blanks and
/// punctuation: the words of the message, not the values.
fn fixed_words(text: &str) -> &str {
    let end = text
        .find(|c: char| c.is_ascii_digit() || "'\"`[({<".contains(c))
        .unwrap_or(text.len());
    text[..end].trim_end_matches(|c: char| c.is_whitespace() || ",:;=-".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages;

    fn rules(interval_secs: u64, max_causes: usize) -> Rules {
        Rules {
            interval: Duration::from_secs(interval_secs),
            max_causes,
            ..Rules::default()
        }
    }

    fn protocol_error(s: &mut Suppression, now: Instant, peer: &str, why: &str) -> Verdict {
        s.check(now, &messages::PROTOCOL_ERROR, &[&peer, &why])
    }

    #[test]
    fn the_cause_leaves_out_peers_and_values() {
        assert_eq!(
            cause_of(&[
                &"10.1.2.3",
                &"bad magic bytes [17, 3f, aa, 00]: not a Ferry client"
            ]),
            "bad magic bytes"
        );
        assert_eq!(
            cause_of(&[
                &"[::1]:5000",
                &"frame of 9000 bytes exceeds the limit of 100 bytes"
            ]),
            "frame of"
        );
        assert_eq!(cause_of(&[&"fe80::1", &30]), "");
        assert_eq!(
            cause_of(&[&"bindings pid 77", &"unknown verb 0x55"]),
            "unknown verb"
        );
        assert_eq!(
            cause_of(&[&"CHANNEL.X", &"127.0.0.1"]),
            "CHANNEL.X",
            "a channel name is the cause"
        );
        let long = "x".repeat(500);
        assert_eq!(cause_of(&[&long]).len(), CAUSE_MAX);
    }

    #[test]
    fn repeats_are_counted_once_per_interval_and_summarised() {
        let t0 = Instant::now();
        let mut s = Suppression::new(rules(30, 64));
        assert_eq!(
            protocol_error(&mut s, t0, "10.0.0.1", "bad magic bytes [1]"),
            Verdict::Write
        );
        for i in 0..1000u64 {
            let t = t0 + Duration::from_millis(i * 20);
            let peer = format!("10.0.{}.{}", i / 256, i % 256);
            let why = format!("bad magic bytes [{i}]");
            assert_eq!(s.due(t), []);
            assert_eq!(protocol_error(&mut s, t, &peer, &why), Verdict::Suppressed);
        }
        // Another cause of the same message has a window of its own.
        assert_eq!(
            protocol_error(&mut s, t0, "10.0.0.1", "unknown verb 0x55"),
            Verdict::Write
        );
        assert_eq!(s.open_windows(), 2);
        // Nothing is due before the interval ends; then one summary, and the window is gone.
        assert_eq!(s.due(t0 + Duration::from_millis(29_999)), []);
        let out = s.due(t0 + Duration::from_secs(30));
        assert_eq!(
            out,
            [Summary {
                id: "FRY9504E".into(),
                repeats: 1000,
                seconds: 30,
                cause: "bad magic bytes".into(),
            }]
        );
        assert_eq!(
            s.open_windows(),
            0,
            "a window without repeats closes silently"
        );
        // The next one opens a new window and is written.
        let t1 = t0 + Duration::from_secs(31);
        assert_eq!(
            protocol_error(&mut s, t1, "10.0.0.9", "bad magic bytes [2]"),
            Verdict::Write
        );
        assert_eq!(
            protocol_error(&mut s, t1, "10.0.0.9", "bad magic bytes [2]"),
            Verdict::Suppressed
        );
        // At shutdown, open windows report how long they were open.
        let out = s.drain(t1 + Duration::from_millis(4_500));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].repeats, out[0].seconds), (1, 5));
        assert_eq!(s.open_windows(), 0);
    }

    #[test]
    fn only_the_family_and_named_ids_are_suppressed() {
        let t0 = Instant::now();
        let mut s = Suppression::new(rules(30, 64));
        for _ in 0..3 {
            assert_eq!(
                s.check(t0, &messages::QMGR_STARTED, &[&"QM1", &"1"]),
                Verdict::Write
            );
        }
        let mut named = rules(30, 64);
        named.suppress.insert(messages::LISTENER_STARTED.number);
        let mut s = Suppression::new(named);
        let started = &messages::LISTENER_STARTED;
        assert_eq!(s.check(t0, started, &[&"L", &1414]), Verdict::Write);
        assert_eq!(s.check(t0, started, &[&"L", &1415]), Verdict::Suppressed);
    }

    #[test]
    fn excluded_ids_are_never_written() {
        let t0 = Instant::now();
        let mut r = rules(30, 64);
        r.exclude.insert(messages::PROTOCOL_ERROR.number);
        r.exclude.insert(messages::QUEUE_FILES_LOADED.number);
        let mut s = Suppression::new(r);
        for _ in 0..3 {
            assert_eq!(
                protocol_error(&mut s, t0, "10.0.0.1", "bad magic bytes"),
                Verdict::Excluded
            );
            assert_eq!(
                s.check(t0, &messages::QUEUE_FILES_LOADED, &[&"QM1", &1, &1]),
                Verdict::Excluded
            );
        }
        assert_eq!(s.open_windows(), 0);
        assert_eq!(s.drain(t0 + Duration::from_secs(60)), []);
    }

    #[test]
    fn varying_causes_cannot_grow_the_table() {
        let t0 = Instant::now();
        let mut s = Suppression::new(rules(30, 8));
        let mut written = 0;
        let mut suppressed = 0;
        for i in 0..100_000u32 {
            // A hostile client naming a new channel each time.
            let name = format!("CHL.{}", char_name(i));
            match s.check(t0, &messages::CHANNEL_UNKNOWN, &[&name, &"10.0.0.1"]) {
                Verdict::Write => written += 1,
                Verdict::Suppressed => suppressed += 1,
                Verdict::Excluded => unreachable!(),
            }
            assert!(s.open_windows() <= 9, "{} windows", s.open_windows());
        }
        // Eight causes and one shared window were written; the rest was counted.
        assert_eq!(written, 9);
        let out = s.due(t0 + Duration::from_secs(30));
        let counted: u64 = out.iter().map(|s| s.repeats).sum();
        assert_eq!(counted, suppressed);
        assert_eq!(written + counted, 100_000);
        assert!(out.iter().any(|s| s.cause.starts_with("various causes")));
        assert_eq!(s.open_windows(), 0);
        // With room again, a new cause gets its own window.
        let t1 = t0 + Duration::from_secs(31);
        assert_eq!(
            s.check(t1, &messages::CHANNEL_UNKNOWN, &[&"CHL.NEW", &"10.0.0.1"]),
            Verdict::Write
        );
    }

    /// A name without digits (digits would be cut from the cause).
    fn char_name(mut i: u32) -> String {
        let mut out = String::new();
        loop {
            out.push(char::from(b'A' + (i % 26) as u8));
            i /= 26;
            if i == 0 {
                return out;
            }
        }
    }

    #[test]
    fn windows_close_independently() {
        let t0 = Instant::now();
        let mut s = Suppression::new(rules(10, 64));
        protocol_error(&mut s, t0, "1.1.1.1", "unknown verb");
        protocol_error(&mut s, t0, "1.1.1.1", "unknown verb");
        let t5 = t0 + Duration::from_secs(5);
        protocol_error(&mut s, t5, "1.1.1.1", "truncated");
        protocol_error(&mut s, t5, "1.1.1.1", "truncated");
        protocol_error(&mut s, t5, "1.1.1.1", "truncated");
        let first = s.due(t0 + Duration::from_secs(10));
        assert_eq!(first.len(), 1);
        assert_eq!(
            (first[0].cause.as_str(), first[0].repeats),
            ("unknown verb", 1)
        );
        assert_eq!(s.due(t0 + Duration::from_secs(14)), []);
        let second = s.due(t0 + Duration::from_secs(15));
        assert_eq!(
            (second[0].cause.as_str(), second[0].repeats),
            ("truncated", 2)
        );
    }

    #[test]
    fn what_may_be_named() {
        assert!(may_suppress(9504));
        assert!(may_suppress(5026));
        assert!(may_suppress(7234));
        assert!(
            !may_suppress(8003),
            "queue manager started is always written"
        );
        assert!(!may_suppress(7466), "log failures are always written");
        assert!(!may_suppress(messages::MESSAGES_SUPPRESSED.number));
    }
}
