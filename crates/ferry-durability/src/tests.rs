//! Tests of the durability decisions: each input alone, then random sequences of inputs
//! performed by a model runtime (proptest), checking what the runtime relies on: a held
//! reply is released once the log is durable past it and never before, a failed log fails
//! everything held, one checkpoint at a time, the log full reported once per episode,
//! slow-I/O warnings rate-limited without losing the count.

use super::*;
use proptest::prelude::*;

const SEC: Duration = Duration::from_secs(1);

fn policy() -> Policy {
    Policy::for_log(64 << 20, 32 << 20)
}

fn drain(d: &mut Durability) -> Vec<Command> {
    std::iter::from_fn(|| d.next_command()).collect()
}

#[test]
fn a_reply_is_held_until_a_flush_passes_its_records() {
    let mut d = Durability::new(policy(), Duration::ZERO, 100, 0);
    assert_eq!(d.hold(100), Hold::Now, "already durable");
    assert_eq!(d.hold(250), Hold::Until(250));
    assert!(d.holds_replies());
    d.flushed(200, 0);
    assert_eq!(drain(&mut d), vec![Command::ReleaseHeld { durable: 200 }]);
    assert!(d.holds_replies(), "250 is not durable yet");
    d.flushed(250, 0);
    assert_eq!(drain(&mut d), vec![Command::ReleaseHeld { durable: 250 }]);
    assert!(!d.holds_replies());
    d.flushed(300, 0);
    assert_eq!(drain(&mut d), vec![], "nothing held, nothing to release");
}

#[test]
fn a_failed_log_fails_what_is_held_and_every_later_reply() {
    let mut d = Durability::new(policy(), Duration::ZERO, 0, 0);
    assert_eq!(d.hold(10), Hold::Until(10));
    d.log_failed();
    assert_eq!(
        drain(&mut d),
        vec![Command::ReportLogFailed, Command::FailHeld]
    );
    assert_eq!(d.hold(20), Hold::Fail);
    d.log_failed();
    d.append_failed(AppendFailure::Failed, 0, 0);
    assert_eq!(drain(&mut d), vec![], "reported once");
    let mut e = Durability::new(policy(), Duration::ZERO, 0, 0);
    e.append_failed(AppendFailure::Failed, 0, 0);
    assert_eq!(drain(&mut e), vec![Command::ReportLogFailed]);
    assert_eq!(
        e.hold(5),
        Hold::Until(5),
        "only the writer's notice fails the log"
    );
    d.flushed(30, 0);
    assert_eq!(drain(&mut d), vec![], "nothing is released after a failure");
    assert_eq!(
        d.room(LogUse::Small, 0, 0),
        Room::Refused,
        "no checkpoint can free room in a failed log"
    );
}

#[test]
fn a_checkpoint_runs_its_course_one_at_a_time() {
    let p = Policy {
        checkpoint_records: 3,
        ..policy()
    };
    let mut d = Durability::new(p, Duration::ZERO, 0, 0);
    d.appended(2);
    assert_eq!(drain(&mut d), vec![]);
    d.appended(1);
    assert_eq!(drain(&mut d), vec![Command::StartCheckpoint]);
    assert!(d.checkpoint_in_flight());
    d.checkpoint_started(500, SEC);
    assert_eq!(d.records_since_checkpoint(), 0);
    d.appended(5);
    d.request_checkpoint();
    assert_eq!(drain(&mut d), vec![], "one checkpoint at a time");
    d.filings_done(true);
    assert_eq!(
        drain(&mut d),
        vec![
            Command::RecordCheckpoint { restart: 500 },
            Command::ReportWritten
        ]
    );
    d.checkpoint_recorded(Some(900));
    assert!(d.checkpoint_in_flight(), "its record is not durable yet");
    d.flushed(1000, 0);
    assert!(d.checkpoint_in_flight());
    d.flushed(1000, 900);
    assert!(!d.checkpoint_in_flight());
    d.request_checkpoint();
    assert_eq!(drain(&mut d), vec![Command::StartCheckpoint]);
}

#[test]
fn failed_queue_files_stop_checkpoints_and_spills() {
    let mut d = Durability::new(policy(), Duration::ZERO, 0, 0);
    d.request_checkpoint();
    drain(&mut d);
    d.checkpoint_started(0, Duration::ZERO);
    d.filings_done(false);
    assert_eq!(drain(&mut d), vec![Command::ReportQueueFilesFailed]);
    assert!(!d.checkpoint_in_flight());
    d.request_checkpoint();
    d.spill_wanted();
    d.queue_files_failed();
    assert_eq!(drain(&mut d), vec![]);
}

#[test]
fn the_interval_and_the_space_in_use_trigger_checkpoints_only_after_records() {
    let mut d = Durability::new(policy(), Duration::ZERO, 0, 0);
    let quiet = Space {
        total: 64 << 20,
        in_use: 0,
    };
    d.tick(60 * SEC, quiet, 0);
    assert_eq!(
        drain(&mut d),
        vec![Command::Spill],
        "no records: no checkpoint"
    );
    d.spill_done(false);
    d.appended(1);
    d.tick(60 * SEC, quiet, 0);
    assert_eq!(
        drain(&mut d),
        vec![Command::StartCheckpoint, Command::Spill]
    );
    d.checkpoint_started(0, 60 * SEC);
    d.filings_done(true);
    d.checkpoint_recorded(Some(10));
    d.flushed(20, 10);
    d.spill_done(false);
    drain(&mut d);
    d.appended(1);
    d.tick(61 * SEC, quiet, 0);
    assert_eq!(drain(&mut d), vec![Command::Spill], "interval not passed");
    d.spill_done(false);
    let half = Space {
        total: 64 << 20,
        in_use: (16 << 20) + 1,
    };
    d.tick(62 * SEC, half, 0);
    assert_eq!(
        drain(&mut d),
        vec![Command::StartCheckpoint, Command::Spill]
    );
}

#[test]
fn a_call_without_room_waits_for_a_checkpoint_then_is_refused_once_reported() {
    let p = policy();
    let needed = p.room_needed(LogUse::Put(2048));
    let mut d = Durability::new(p, Duration::ZERO, 0, 0);
    assert_eq!(d.room(LogUse::Put(2048), needed, 0), Room::Ready);
    assert_eq!(
        d.room(LogUse::Put(2048), needed - 1, 0),
        Room::CheckpointFirst
    );
    assert_eq!(drain(&mut d), vec![Command::StartCheckpoint]);
    d.checkpoint_started(0, Duration::ZERO);
    assert_eq!(
        d.room_after_checkpoint(LogUse::Put(2048), needed - 1),
        Room::Wait
    );
    assert_eq!(d.room(LogUse::Put(2048), 0, 2), Room::Refused);
    assert_eq!(
        drain(&mut d),
        vec![
            Command::ReportLogFull { needed, free: 0 },
            Command::BackOutLongUnitOfWork
        ]
    );
    assert_eq!(d.room(LogUse::Put(2048), 0, 2), Room::Refused);
    assert_eq!(
        drain(&mut d),
        vec![Command::BackOutLongUnitOfWork],
        "the log full is reported once"
    );
    assert_eq!(d.room(LogUse::Small, 1 << 20, 2), Room::Ready);
    assert_eq!(d.room(LogUse::Put(2048), 0, 2), Room::Refused);
    assert!(
        matches!(d.next_command(), Some(Command::ReportLogFull { .. })),
        "room again: the next full log is reported anew"
    );
}

#[test]
fn a_checkpoint_that_cannot_start_refuses_the_call_at_once() {
    let mut d = Durability::new(policy(), Duration::ZERO, 0, 0);
    assert_eq!(d.room(LogUse::Small, 0, 0), Room::CheckpointFirst);
    assert_eq!(d.next_command(), Some(Command::StartCheckpoint));
    d.checkpoint_not_started(Duration::ZERO);
    assert_eq!(d.room_after_checkpoint(LogUse::Small, 0), Room::Refused);
    assert!(d.waited_too_long(Duration::ZERO, policy().log_full_patience));
    assert!(!d.waited_too_long(SEC, policy().log_full_patience));
}

#[test]
fn slow_io_warnings_are_rate_limited_and_count_every_operation() {
    let mut d = Durability::new(policy(), Duration::ZERO, 0, 0);
    let space = Space::default();
    d.tick(SEC, space, 2);
    assert_eq!(d.next_command(), Some(Command::WarnSlowIo { ops: 2 }));
    d.tick(2 * SEC, space, 3);
    d.tick(3 * SEC, space, 0);
    d.tick(30 * SEC, space, 1);
    assert!(!drain(&mut d)
        .iter()
        .any(|c| matches!(c, Command::WarnSlowIo { .. })));
    d.tick(61 * SEC, space, 1);
    assert!(drain(&mut d).contains(&Command::WarnSlowIo { ops: 5 }));
}

/// One input of the random sequences.
#[derive(Clone, Debug)]
enum Input {
    Append(u64),
    Hold,
    Flush(u64),
    Fail,
    Room(u64),
    Tick(u64, u64),
    FilingsDone(bool),
    SpillDone,
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => (1u64..2_000).prop_map(Input::Append),
        4 => Just(Input::Hold),
        4 => (0u64..3_000).prop_map(Input::Flush),
        1 => Just(Input::Fail),
        2 => (0u64..(4 << 20)).prop_map(Input::Room),
        2 => (0u64..40, 0u64..3).prop_map(|(s, n)| Input::Tick(s, n)),
        1 => any::<bool>().prop_map(Input::FilingsDone),
        1 => Just(Input::SpillDone),
    ]
}

/// A model runtime: performs commands as the real one does and remembers what it must
/// answer for.
#[derive(Default)]
struct Model {
    /// The log's end (next position).
    end: u64,
    durable: u64,
    checkpoint_lsn: u64,
    /// Positions of replies held and not yet released or failed.
    held: Vec<u64>,
    filing: bool,
    spilling: bool,
    now: Duration,
    warned_at: Vec<Duration>,
    failed: bool,
    queue_files_failed: bool,
}

impl Model {
    fn perform(&mut self, d: &mut Durability) {
        while let Some(c) = d.next_command() {
            match c {
                Command::StartCheckpoint => {
                    assert!(!self.filing, "a second checkpoint started");
                    assert!(!self.queue_files_failed);
                    self.filing = true;
                    d.checkpoint_started(self.end, self.now);
                    self.end += 100;
                }
                Command::RecordCheckpoint { restart } => {
                    assert!(restart <= self.end);
                    self.end += 30;
                    d.checkpoint_recorded(Some(self.end));
                    self.filing = false;
                }
                Command::ReleaseHeld { durable } => {
                    assert!(
                        durable <= self.durable,
                        "released past the durable position"
                    );
                    assert!(!self.held.is_empty(), "a release with nothing held");
                    self.held.retain(|&h| h > durable);
                }
                Command::FailHeld => {
                    assert!(self.failed);
                    self.held.clear();
                }
                Command::Spill => {
                    assert!(!self.spilling, "two spills at once");
                    self.spilling = true;
                }
                Command::WarnSlowIo { .. } => self.warned_at.push(self.now),
                Command::ReportQueueFilesFailed => self.queue_files_failed = true,
                Command::ReportWritten
                | Command::ReportLogFull { .. }
                | Command::ReportLogFailed
                | Command::BackOutLongUnitOfWork => {}
            }
        }
    }
}

proptest! {
    #[test]
    fn random_inputs_keep_the_runtimes_promises(inputs in prop::collection::vec(input(), 1..200)) {
        let p = Policy { checkpoint_records: 50, ..Policy::for_log(4 << 20, 2 << 20) };
        let every = p.slow_warning_every;
        let mut d = Durability::new(p.clone(), Duration::ZERO, 0, 0);
        let mut m = Model::default();
        for i in inputs {
            match i {
                Input::Append(n) => {
                    m.end += n * 10;
                    d.appended(n);
                }
                Input::Hold => match d.hold(m.end) {
                    Hold::Now => prop_assert!(m.end <= m.durable),
                    Hold::Until(u) => {
                        prop_assert!(u > m.durable && !m.failed);
                        m.held.push(u);
                    }
                    Hold::Fail => prop_assert!(m.failed),
                },
                Input::Flush(step) => {
                    if !m.failed {
                        m.durable = (m.durable + step).min(m.end);
                        if !m.filing {
                            m.checkpoint_lsn = m.durable.max(m.checkpoint_lsn);
                        }
                        d.flushed(m.durable, m.checkpoint_lsn);
                    }
                }
                Input::Fail => {
                    m.failed = true;
                    d.log_failed();
                }
                Input::Room(free) => {
                    let r = d.room(LogUse::Put(2048), free, 0);
                    prop_assert_eq!(r == Room::Ready, free >= p.room_needed(LogUse::Put(2048)));
                    if r == Room::CheckpointFirst {
                        m.perform(&mut d);
                        let again = d.room_after_checkpoint(LogUse::Put(2048), free);
                        prop_assert!(again != Room::Ready && again != Room::CheckpointFirst);
                    }
                }
                Input::Tick(secs, slow) => {
                    m.now += Duration::from_secs(secs);
                    d.tick(m.now, Space { total: p.ring_bytes, in_use: 0 }, slow);
                }
                Input::FilingsDone(ok) => {
                    if m.filing {
                        if !ok {
                            m.filing = false;
                        }
                        d.filings_done(ok);
                    }
                }
                Input::SpillDone => {
                    if m.spilling {
                        m.spilling = false;
                        d.spill_done(true);
                    }
                }
            }
            m.perform(&mut d);
            // Nothing durable stays held, and the machine knows whether anything is held.
            prop_assert!(m.held.iter().all(|&h| h > m.durable));
            prop_assert_eq!(d.holds_replies(), !m.held.is_empty());
            if m.failed {
                prop_assert!(m.held.is_empty());
            }
        }
        for w in m.warned_at.windows(2) {
            prop_assert!(w[1] - w[0] >= every);
        }
    }
}
