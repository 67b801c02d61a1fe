//! The runtime's durability decisions, driving the simulated queue manager.
//!
//! The server's runtime does not decide for itself when a held reply goes, when a
//! checkpoint is due or whether a call has room in the log: `ferry-durability`'s pure
//! state machine does, and the runtime performs its commands. The simulation drives the
//! same state machine, with the same policy as the server's (`Policy::for_log`) except
//! for the checkpoint cadence, which the seed picks so that checkpoints come often.
//! [`Durability`] is the thin adapter between the two: it feeds the simulation's events
//! in (records appended, a reply waiting for a log position, a flush, a checkpoint taken)
//! and turns the commands that come out into what the simulation acts on (replies to
//! release, a checkpoint to take). The checkpoint's stages happen in line in the
//! simulation ([`crate::node::Node::checkpoint`]), so they are reported one after the
//! other; the runtime's commands that have no simulated counterpart (warnings, spills,
//! backing out a long unit of work) are counted and otherwise left alone.

use ferry_durability::{Command, Hold, LogUse, Policy, Room};
use std::time::Duration;

/// A reply the simulated application is waiting for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeldReply {
    /// The application (index) that made the call.
    pub app: usize,
    /// The call's number in the run.
    pub call: u64,
    /// The log position the log must be durable past before the reply goes.
    pub until: u64,
}

/// Whether a call may run, as the state machine decides ([`Durability::room`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MayRun {
    /// It may.
    Yes,
    /// Take the checkpoint asked for, then ask [`Durability::room_after_checkpoint`].
    AfterCheckpoint,
    /// Refused for want of log room (2102 MQRC_RESOURCE_PROBLEM).
    No,
}

/// The state machine and what the simulation keeps beside it; see the module docs.
#[derive(Debug)]
pub struct Durability {
    decisions: ferry_durability::Durability,
    /// Replies held until the log is durable past their records, oldest call first.
    held: Vec<HeldReply>,
    /// Released by the last commands, oldest call first, for the simulation to take.
    released: Vec<HeldReply>,
    /// The state machine asked for a checkpoint that has not been taken yet.
    checkpoint_wanted: bool,
    /// The body size a call is assumed to log when its room is checked (the simulation
    /// checks before it picks the call): no message it puts is larger.
    largest_put: usize,
}

impl Durability {
    /// Decisions for a log of `ring_bytes` just opened (or recovered), durable up to
    /// `durable`: checkpoints after `checkpoint_every` records; a call runs only with room
    /// for a put of `largest_put` bytes.
    pub fn new(ring_bytes: u64, durable: u64, checkpoint_every: u64, largest_put: usize) -> Self {
        let mut policy = Policy::for_log(ring_bytes, ring_bytes);
        policy.checkpoint_records = checkpoint_every;
        Durability {
            decisions: ferry_durability::Durability::new(policy, Duration::ZERO, durable, 0),
            held: Vec::new(),
            released: Vec::new(),
            checkpoint_wanted: false,
            largest_put,
        }
    }

    /// `records` were appended to the log.
    pub fn appended(&mut self, records: u64) {
        self.decisions.appended(records);
        self.take_commands();
    }

    /// A reply waits until the log is durable past `reply.until`; false when it need not
    /// (the log is durable there already): the application has its answer now.
    pub fn hold(&mut self, reply: HeldReply) -> bool {
        match self.decisions.hold(reply.until) {
            Hold::Now => false,
            Hold::Until(until) => {
                debug_assert_eq!(until, reply.until);
                self.held.push(reply);
                true
            }
            Hold::Fail => {
                // Only after the log failed, and a failed log stops the simulated queue
                // manager before another call is made.
                debug_assert!(false, "a reply held after the log failed");
                false
            }
        }
    }

    /// The log is durable below `durable`, its last checkpoint record at `checkpoint`:
    /// the replies this releases, oldest call first.
    pub fn flushed(&mut self, durable: u64, checkpoint: u64) -> Vec<HeldReply> {
        self.decisions.flushed(durable, checkpoint);
        self.take_commands();
        std::mem::take(&mut self.released)
    }

    /// True when the state machine asked for a checkpoint.
    pub fn checkpoint_due(&self) -> bool {
        self.checkpoint_wanted
    }

    /// Whether a call may run with `free` bytes of log room.
    pub fn room(&mut self, free: u64) -> MayRun {
        let r = self.decisions.room(LogUse::Put(self.largest_put), free, 0);
        self.take_commands();
        match r {
            Room::Ready => MayRun::Yes,
            Room::CheckpointFirst => MayRun::AfterCheckpoint,
            Room::Wait | Room::Refused => MayRun::No,
        }
    }

    /// After the checkpoint [`MayRun::AfterCheckpoint`] asked for: may the call run now?
    pub fn room_after_checkpoint(&mut self, free: u64) -> bool {
        let r = self
            .decisions
            .room_after_checkpoint(LogUse::Put(self.largest_put), free);
        self.take_commands();
        r == Room::Ready
    }

    /// The simulation is about to take the checkpoint the state machine asked for.
    /// Returns false when none was asked for (nothing to take).
    pub fn checkpoint_starting(&mut self) -> bool {
        std::mem::replace(&mut self.checkpoint_wanted, false)
    }

    /// The checkpoint was taken in line: its image from `restart`, its filings written,
    /// its record appended at `record` (`None`: no checkpoint could be taken).
    pub fn checkpoint_taken(&mut self, now: Duration, taken: Option<(u64, u64)>) {
        match taken {
            None => self.decisions.checkpoint_not_started(now),
            Some((restart, record)) => {
                self.decisions.checkpoint_started(restart, now);
                self.decisions.filings_done(true);
                while let Some(c) = self.decisions.next_command() {
                    match c {
                        Command::RecordCheckpoint { restart: r } => {
                            debug_assert_eq!(r, restart);
                            self.decisions.checkpoint_recorded(Some(record));
                        }
                        other => self.act(other),
                    }
                }
            }
        }
        self.take_commands();
    }

    fn take_commands(&mut self) {
        while let Some(c) = self.decisions.next_command() {
            self.act(c);
        }
    }

    fn act(&mut self, c: Command) {
        match c {
            Command::StartCheckpoint => self.checkpoint_wanted = true,
            Command::ReleaseHeld { durable } => {
                let (go, stay): (Vec<_>, Vec<_>) =
                    self.held.iter().partition(|h| h.until <= durable);
                self.held = stay;
                self.released.extend(go);
            }
            // Everything held fails with the log; the simulated queue manager stops.
            Command::FailHeld => self.held.clear(),
            // Performed in line by the simulated checkpoint, or with nothing simulated to
            // do: reports, spills of non-persistent messages, backing out a long unit of
            // work (the simulation's units of work are short).
            Command::RecordCheckpoint { .. }
            | Command::ReportWritten
            | Command::Spill
            | Command::ReportLogFull { .. }
            | Command::ReportLogFailed
            | Command::ReportQueueFilesFailed
            | Command::BackOutLongUnitOfWork
            | Command::WarnSlowIo { .. } => {}
        }
    }
}
