//! The counters the tasks of one step share: valid round trips (or messages got),
//! messages sent, errors, mismatches,
//! the latency histogram of the measured window and the first few problems. One thread
//! runs every task, so these are plain cells.

use std::cell::{Cell, RefCell};

use hdrhistogram::Histogram;

use super::verify::ReplyCheck;
use crate::measure::{self, Latency};

/// How many problem descriptions a step keeps (the rest are only counted).
const KEEP_PROBLEMS: usize = 5;

/// The counters every task of a step shares (one thread, so plain cells).
pub struct Tally {
    measuring: Cell<bool>,
    stop: Cell<bool>,
    round_trips: Cell<u64>,
    sent: Cell<u64>,
    errors: Cell<u64>,
    mismatches: Cell<u64>,
    hist: RefCell<Histogram<u64>>,
    problems: RefCell<Vec<String>>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            measuring: Cell::new(false),
            stop: Cell::new(false),
            round_trips: Cell::new(0),
            sent: Cell::new(0),
            errors: Cell::new(0),
            mismatches: Cell::new(0),
            hist: RefCell::new(measure::new_latency_histogram()),
            problems: RefCell::new(Vec::new()),
        }
    }
}

impl Tally {
    /// Counts one reply: a good one is a round trip (its latency recorded while
    /// measuring), anything else a mismatch. Returns true for a round trip.
    pub fn reply(&self, check: ReplyCheck, latency_ns: u64) -> bool {
        if check == ReplyCheck::Good {
            self.round_trips.set(self.round_trips.get() + 1);
            if self.measuring.get() {
                let _ = self.hist.borrow_mut().record(latency_ns.max(1));
            }
            true
        } else {
            self.mismatches.set(self.mismatches.get() + 1);
            self.note(format!("{check:?}"));
            false
        }
    }

    /// Counts a failed MQI call or other error.
    pub fn error(&self, what: String) {
        self.errors.set(self.errors.get() + 1);
        self.note(what);
    }

    /// Counts a message that is not what it should be (e.g. a responder got a reply).
    pub fn mismatch(&self, what: String) {
        self.mismatches.set(self.mismatches.get() + 1);
        self.note(what);
    }

    /// Keeps a description of something worth reporting (the first few only).
    pub fn note(&self, what: String) {
        let mut p = self.problems.borrow_mut();
        if p.len() < KEEP_PROBLEMS {
            p.push(what);
        }
    }

    /// Valid round trips so far.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.get()
    }

    /// Counts a message put by a sender (SR-CC).
    pub fn count_sent(&self) {
        self.sent.set(self.sent.get() + 1);
    }

    /// Messages put by senders so far.
    pub fn sent(&self) -> u64 {
        self.sent.get()
    }

    /// Errors so far.
    pub fn errors(&self) -> u64 {
        self.errors.get()
    }

    /// Mismatched replies or requests so far.
    pub fn mismatches(&self) -> u64 {
        self.mismatches.get()
    }

    /// Starts or ends the measured window (latencies are recorded only inside it).
    pub fn set_measuring(&self, on: bool) {
        self.measuring.set(on);
    }

    /// Asks requesters to end after their current round trip.
    pub fn request_stop(&self) {
        self.stop.set(true);
    }

    /// True once [`Tally::request_stop`] was called.
    pub fn stopping(&self) -> bool {
        self.stop.get()
    }

    /// Latency percentiles of the measured window.
    pub fn latency(&self) -> Latency {
        measure::latency(&self.hist.borrow())
    }

    /// The first few problems, described.
    pub fn problems(&self) -> Vec<String> {
        self.problems.borrow().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tally_counts_only_good_replies_and_records_only_while_measuring() {
        let t = Tally::default();
        assert!(t.reply(ReplyCheck::Good, 1_000));
        assert_eq!(t.latency().count, 0, "not measuring yet");
        t.set_measuring(true);
        assert!(t.reply(ReplyCheck::Good, 2_000_000));
        assert!(!t.reply(ReplyCheck::WrongCorrelId, 5));
        t.error("put: 2053 MQRC_Q_FULL".into());
        assert_eq!(t.round_trips(), 2);
        assert_eq!(t.mismatches(), 1);
        assert_eq!(t.errors(), 1);
        let l = t.latency();
        assert_eq!(l.count, 1);
        assert!((l.p50_us - 2000.0).abs() < 2.0, "{l:?}");
        assert_eq!(
            t.problems(),
            vec![
                "WrongCorrelId".to_string(),
                "put: 2053 MQRC_Q_FULL".to_string()
            ]
        );
        for i in 0..10 {
            t.error(format!("e{i}"));
        }
        assert_eq!(t.problems().len(), KEEP_PROBLEMS);
        assert!(!t.stopping());
        t.request_stop();
        assert!(t.stopping());
    }
}
