//! The recovery log's durability decisions as a pure state machine.
//!
//! The queue manager's runtime drives a write-ahead log (a writer thread, queue files on
//! another thread, timers). What it must *decide* — when to take a checkpoint, whether a
//! call has room in the log, which replies held for the log to release or fail, when to
//! spill non-persistent messages, when to warn of slow log I/O, when to report the log
//! full — is made here, by [`Durability`], with no I/O, no threads, no clock and no
//! interior mutability: time is an input (a [`Duration`] since any fixed start), and every
//! decision is either a return value or a [`Command`] queued for the runtime to perform.
//! The engine (`ferry-engine`, with its effects) works the same way; the two together,
//! with a simulated log device and clock, make a whole queue manager that a deterministic
//! simulation can drive.
//!
//! Why a crate of its own: the engine owns MQI state and knows nothing of the log's
//! geometry or of time passing between calls; the store (`ferry-store`) does the log's I/O.
//! The decisions between them belong to neither, and a newcomer looking for "when does a
//! checkpoint happen" finds them here by name. It depends on nothing.
//!
//! # Protocol
//!
//! Inputs (methods): [`Durability::appended`] after a call's records are appended,
//! [`Durability::append_failed`], [`Durability::flushed`] when the writer reports a
//! durable position, [`Durability::log_failed`], [`Durability::room`] before a call that
//! will log runs, [`Durability::hold`] for a reply that must wait for its records, the
//! checkpoint's progress ([`Durability::checkpoint_started`],
//! [`Durability::filings_done`], [`Durability::checkpoint_recorded`]), spills
//! ([`Durability::spill_wanted`], [`Durability::spill_done`]) and [`Durability::tick`]
//! (about once a second, with the log's space and the slow operations seen).
//!
//! Outputs: [`Command`]s, taken one at a time with [`Durability::next_command`] after each
//! input and performed in order. Performing one may feed new inputs (starting a checkpoint
//! reports [`Durability::checkpoint_started`]); the runtime keeps taking commands until
//! there are none.

mod policy;

pub use policy::{image_bytes, LogUse, Policy, Space, RECORD_OVERHEAD};

use std::collections::VecDeque;
use std::time::Duration;

/// What the runtime must do, as decided by [`Durability`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// Start a checkpoint (between engine calls): ask the engine for its plan, append the
    /// image, hand the filings to the queue files, then report
    /// [`Durability::checkpoint_started`] (or [`Durability::checkpoint_not_started`]).
    StartCheckpoint,
    /// The checkpoint's filings are synced: append the checkpoint record that moves the
    /// log's restart point to `restart`, then report [`Durability::checkpoint_recorded`].
    RecordCheckpoint {
        /// The first record of the checkpoint's image.
        restart: u64,
    },
    /// Tell the engine where finished filings and spills put messages (between engine
    /// calls), so it can leave their bodies on disk.
    ReportWritten,
    /// Hand the engine's spill of non-persistent messages to the queue files (between
    /// engine calls), then report [`Durability::spill_done`] (or
    /// [`Durability::spill_done`] with `false` at once when there is nothing to spill).
    Spill,
    /// Release, in order, every held reply waiting for a position up to `durable`.
    ReleaseHeld {
        /// Everything below this log position is durable.
        durable: u64,
    },
    /// The log failed: every held reply fails (2102 MQRC_RESOURCE_PROBLEM).
    FailHeld,
    /// Report the log full (FRY7463W): a call needed `needed` bytes and `free` were left.
    ReportLogFull {
        /// Bytes the call needed.
        needed: u64,
        /// Bytes the log had.
        free: u64,
    },
    /// Report that the log failed (FRY7466E).
    ReportLogFailed,
    /// Report that the queue files failed (checkpoints stop).
    ReportQueueFilesFailed,
    /// The log is full: back out the oldest unit of work in flight if it pins a large
    /// part of the log ([`Policy::is_long_unit_of_work`]), then start a checkpoint.
    BackOutLongUnitOfWork,
    /// Write a slow-I/O warning (FRY6729W) for `ops` slow operations since the last one.
    WarnSlowIo {
        /// Slow operations since the last warning.
        ops: u64,
    },
}

/// What happens to a reply whose call logged records it must wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// The records are durable already: send it now.
    Now,
    /// Hold it until the log is durable up to this position.
    Until(u64),
    /// The log failed: answer 2102 MQRC_RESOURCE_PROBLEM.
    Fail,
}

/// Whether a call that will log may run now ([`Durability::room`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Room {
    /// There is room: run it.
    Ready,
    /// No room yet: perform the queued commands (a checkpoint start), then ask
    /// [`Durability::room_after_checkpoint`].
    CheckpointFirst,
    /// A checkpoint under way will free space: wait for it and ask again.
    Wait,
    /// No checkpoint can free enough: answer 2102 MQRC_RESOURCE_PROBLEM.
    Refused,
}

/// Why an append failed ([`Durability::append_failed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppendFailure {
    /// The log had no room.
    Full,
    /// The log failed (I/O error, stopped writer).
    Failed,
}

/// Where the checkpoint cycle stands. One checkpoint at a time: the next starts only once
/// the previous checkpoint record is durable (that keeps replay exact over queue files
/// that are ahead of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Checkpoint {
    /// None under way.
    Idle,
    /// [`Command::StartCheckpoint`] is queued or being performed.
    Starting,
    /// Its image is appended and its filings are with the queue files.
    Filing {
        /// The image's first record.
        restart: u64,
    },
    /// [`Command::RecordCheckpoint`] is queued or being performed.
    Recording,
    /// Its record is appended at this position and not yet durable.
    Recorded {
        /// The checkpoint record's position.
        record: u64,
    },
}

/// The durability decisions of one recovery log. See the crate documentation.
#[derive(Debug)]
pub struct Durability {
    policy: Policy,
    commands: VecDeque<Command>,
    /// Everything below this position is durable (as last reported).
    durable: u64,
    /// The highest position a held reply waits for, while any is held.
    held_up_to: Option<u64>,
    failed: bool,
    failure_reported: bool,
    full_reported: bool,
    queue_files_failed: bool,
    records_since_checkpoint: u64,
    last_checkpoint_at: Duration,
    checkpoint: Checkpoint,
    /// Bytes free at the last room check (for the space trigger of [`Self::appended`]).
    last_free: u64,
    spilling: bool,
    last_slow_warning: Option<Duration>,
    slow_since_warning: u64,
}

impl Durability {
    /// The decisions for a log just opened at `now`, durable up to `durable`, with
    /// `records` replayed since its last checkpoint.
    pub fn new(policy: Policy, now: Duration, durable: u64, records: u64) -> Self {
        let last_free = policy.ring_bytes;
        Durability {
            policy,
            commands: VecDeque::new(),
            durable,
            held_up_to: None,
            failed: false,
            failure_reported: false,
            full_reported: false,
            queue_files_failed: false,
            records_since_checkpoint: records,
            last_checkpoint_at: now,
            checkpoint: Checkpoint::Idle,
            last_free,
            spilling: false,
            last_slow_warning: None,
            slow_since_warning: 0,
        }
    }

    /// The policy the decisions are made with.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The next command to perform, oldest first.
    pub fn next_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// True when commands are waiting to be performed.
    pub fn has_commands(&self) -> bool {
        !self.commands.is_empty()
    }

    /// Everything below this position is durable, as last reported.
    pub fn durable(&self) -> u64 {
        self.durable
    }

    /// True once the log has failed: nothing more is acknowledged.
    pub fn has_failed(&self) -> bool {
        self.failed
    }

    /// True while a checkpoint is under way (its filings being written, or its record not
    /// yet durable).
    pub fn checkpoint_in_flight(&self) -> bool {
        self.checkpoint != Checkpoint::Idle
    }

    /// True while a checkpoint's filings are with the queue files.
    pub fn is_filing(&self) -> bool {
        matches!(self.checkpoint, Checkpoint::Filing { .. })
    }

    /// True while a spill is with the queue files.
    pub fn is_spilling(&self) -> bool {
        self.spilling
    }

    /// True while replies are held for the log.
    pub fn holds_replies(&self) -> bool {
        self.held_up_to.is_some()
    }

    /// Records appended since the last checkpoint started.
    pub fn records_since_checkpoint(&self) -> u64 {
        self.records_since_checkpoint
    }

    /// A call's `records` were appended. Starts a checkpoint when the record count or the
    /// space in use (as of the last room check: more than half the primary space) asks
    /// for one, so a checkpoint is under way well before the log is full.
    pub fn appended(&mut self, records: u64) {
        if records == 0 {
            return;
        }
        self.records_since_checkpoint += records;
        let in_use = self.policy.ring_bytes.saturating_sub(self.last_free);
        if self.records_since_checkpoint >= self.policy.checkpoint_records
            || in_use > self.policy.primary_bytes / 2
        {
            self.request_checkpoint();
        }
    }

    /// An append failed: the log full is reported once until there is room again, any
    /// other failure once (the writer's own failure notice, [`Self::log_failed`], is what
    /// fails the held replies).
    pub fn append_failed(&mut self, why: AppendFailure, needed: u64, free: u64) {
        match why {
            AppendFailure::Full => self.report_full(needed, free),
            AppendFailure::Failed => {
                if !self.failure_reported {
                    self.failure_reported = true;
                    self.commands.push_back(Command::ReportLogFailed);
                }
            }
        }
    }

    /// A reply must wait until the log is durable up to `until` (the end of its records).
    pub fn hold(&mut self, until: u64) -> Hold {
        if self.failed {
            return Hold::Fail;
        }
        if until <= self.durable {
            return Hold::Now;
        }
        self.held_up_to = Some(self.held_up_to.map_or(until, |h| h.max(until)));
        debug_assert!(self.held_up_to.is_some_and(|h| h > self.durable));
        Hold::Until(until)
    }

    /// The writer made the log durable up to `durable`, and its last completed checkpoint
    /// record is at `checkpoint`. Releases what was held up to there; a checkpoint whose
    /// record is now durable is complete.
    pub fn flushed(&mut self, durable: u64, checkpoint: u64) {
        debug_assert!(durable >= self.durable, "the durable position went back");
        self.durable = self.durable.max(durable);
        if let Some(h) = self.held_up_to {
            if !self.failed {
                self.commands.push_back(Command::ReleaseHeld {
                    durable: self.durable,
                });
                if h <= self.durable {
                    self.held_up_to = None;
                }
            }
        }
        self.checkpoint_durable(checkpoint);
    }

    /// The log's last completed checkpoint record is at `checkpoint` (the writer moves it
    /// when a checkpoint record becomes durable): a checkpoint whose record it reaches is
    /// complete, and the next may start.
    pub fn checkpoint_durable(&mut self, checkpoint: u64) {
        if let Checkpoint::Recorded { record } = self.checkpoint {
            if checkpoint >= record {
                self.checkpoint = Checkpoint::Idle;
            }
        }
    }

    /// The log failed (its writer stopped): reported once; every held reply fails and new
    /// ones fail at once.
    pub fn log_failed(&mut self) {
        self.failed = true;
        if !self.failure_reported {
            self.failure_reported = true;
            self.commands.push_back(Command::ReportLogFailed);
        }
        if self.held_up_to.take().is_some() {
            self.commands.push_back(Command::FailHeld);
        }
    }

    /// Whether a call that will log `usage` may run now, the log having `free` bytes of
    /// room, after waiting for `waited` checkpoints. Asked before the engine runs the
    /// call, so a full log never leaves memory ahead of the log.
    pub fn room(&mut self, usage: LogUse, free: u64, waited: u64) -> Room {
        self.last_free = free;
        if free >= self.policy.room_needed(usage) {
            self.full_reported = false;
            return Room::Ready;
        }
        if self.failed {
            // No checkpoint will come: the call fails at once (FRY7466E says why).
            return Room::Refused;
        }
        if waited < self.policy.log_full_checkpoints {
            self.request_checkpoint();
            return Room::CheckpointFirst;
        }
        self.refuse(usage, free)
    }

    /// After [`Room::CheckpointFirst`] and the commands it queued: runs the call if there
    /// is room now, waits while a checkpoint is under way, refuses otherwise (reporting the
    /// log full and backing out a long unit of work).
    pub fn room_after_checkpoint(&mut self, usage: LogUse, free: u64) -> Room {
        self.last_free = free;
        if free >= self.policy.room_needed(usage) {
            self.full_reported = false;
            return Room::Ready;
        }
        if self.checkpoint_in_flight() && !self.failed {
            return Room::Wait;
        }
        self.refuse(usage, free)
    }

    /// Whether a call that first found the log full at `since` has waited long enough at
    /// `now` to be refused.
    pub fn waited_too_long(&self, since: Duration, now: Duration) -> bool {
        now.saturating_sub(since) >= self.policy.log_full_patience
    }

    /// Refuses a call that waited too long for log room ([`Self::waited_too_long`]).
    pub fn give_up_waiting(&mut self, usage: LogUse, free: u64) {
        let _ = self.refuse(usage, free);
    }

    fn refuse(&mut self, usage: LogUse, free: u64) -> Room {
        self.report_full(self.policy.room_needed(usage), free);
        self.commands.push_back(Command::BackOutLongUnitOfWork);
        Room::Refused
    }

    /// Reports the log full, once until it has room again.
    pub fn report_full(&mut self, needed: u64, free: u64) {
        if !self.full_reported {
            self.full_reported = true;
            self.commands
                .push_back(Command::ReportLogFull { needed, free });
        }
    }

    /// Asks for a checkpoint (a policy trigger, a full log, a long unit of work backed
    /// out, shutdown): queued unless one is under way or the queue files have failed (the
    /// policy asks again later).
    pub fn request_checkpoint(&mut self) {
        if self.checkpoint == Checkpoint::Idle && !self.queue_files_failed && !self.failed {
            self.checkpoint = Checkpoint::Starting;
            self.commands.push_back(Command::StartCheckpoint);
        }
    }

    /// The checkpoint asked for by [`Command::StartCheckpoint`] was started at `now`: its
    /// image begins at `restart` and its filings are with the queue files.
    pub fn checkpoint_started(&mut self, restart: u64, now: Duration) {
        debug_assert_eq!(self.checkpoint, Checkpoint::Starting);
        self.attempted(now);
        self.checkpoint = Checkpoint::Filing { restart };
    }

    /// [`Command::StartCheckpoint`] was attempted at `now` and did not start one (no room
    /// for the image, a body that could not be read): the next trigger retries, not every
    /// call.
    pub fn checkpoint_not_started(&mut self, now: Duration) {
        debug_assert_eq!(self.checkpoint, Checkpoint::Starting);
        self.attempted(now);
        self.checkpoint = Checkpoint::Idle;
    }

    fn attempted(&mut self, now: Duration) {
        self.records_since_checkpoint = 0;
        self.last_checkpoint_at = now;
    }

    /// The queue files finished the checkpoint's filings (`ok`), or failed (checkpoints
    /// stop; reported once).
    pub fn filings_done(&mut self, ok: bool) {
        let Checkpoint::Filing { restart } = self.checkpoint else {
            debug_assert!(false, "filings done with no checkpoint filing");
            return;
        };
        if ok {
            self.checkpoint = Checkpoint::Recording;
            self.commands
                .push_back(Command::RecordCheckpoint { restart });
            self.commands.push_back(Command::ReportWritten);
        } else {
            self.checkpoint = Checkpoint::Idle;
            self.queue_files_failed();
        }
    }

    /// The checkpoint record was appended at `record` (`Some`), or could not be (`None`:
    /// the append failure was reported; the next trigger retries).
    pub fn checkpoint_recorded(&mut self, record: Option<u64>) {
        debug_assert_eq!(self.checkpoint, Checkpoint::Recording);
        self.checkpoint = match record {
            Some(record) => {
                self.full_reported = false;
                Checkpoint::Recorded { record }
            }
            None => Checkpoint::Idle,
        };
    }

    /// The queue files failed: checkpoints and spills stop; reported once.
    pub fn queue_files_failed(&mut self) {
        if !self.queue_files_failed {
            self.queue_files_failed = true;
            self.commands.push_back(Command::ReportQueueFilesFailed);
        }
    }

    /// True once the queue files have failed.
    pub fn has_queue_files_failed(&self) -> bool {
        self.queue_files_failed
    }

    /// The engine has non-persistent messages over its buffers: spill them, one spill at
    /// a time.
    pub fn spill_wanted(&mut self) {
        if !self.spilling && !self.queue_files_failed {
            self.spilling = true;
            self.commands.push_back(Command::Spill);
        }
    }

    /// A spill finished (`written`: it wrote messages the engine must hear of), or there
    /// was nothing to spill.
    pub fn spill_done(&mut self, written: bool) {
        self.spilling = false;
        if written {
            self.commands.push_back(Command::ReportWritten);
        }
    }

    /// About once a second, at `now`: warns of the `slow_ops` slow log operations seen
    /// since the last tick (at most once per [`Policy::slow_warning_every`]), starts a
    /// checkpoint when records were written and the interval has passed or more than half
    /// the primary space is in use, and spills (which also removes the records of spilled
    /// messages got since the last spill).
    pub fn tick(&mut self, now: Duration, space: Space, slow_ops: u64) {
        if slow_ops > 0 {
            self.slow_since_warning += slow_ops;
            let quiet = self
                .last_slow_warning
                .is_none_or(|t| now.saturating_sub(t) >= self.policy.slow_warning_every);
            if quiet {
                self.last_slow_warning = Some(now);
                let ops = std::mem::take(&mut self.slow_since_warning);
                self.commands.push_back(Command::WarnSlowIo { ops });
            }
        }
        if self.records_since_checkpoint > 0
            && (now.saturating_sub(self.last_checkpoint_at) >= self.policy.checkpoint_interval
                || space.in_use.saturating_mul(2) > self.policy.primary_bytes)
        {
            self.request_checkpoint();
        }
        self.spill_wanted();
    }
}

#[cfg(test)]
mod tests;
