//! The durability decisions the simulation takes the runtime's place for: when a held
//! reply is released, when a checkpoint is due, whether the log has room for a call.
//!
//! This is the seam where the runtime's pure durability state machine plugs in: it must
//! take "records appended", "a reply waits until log position P", "the log is durable
//! up to P", "a checkpoint was taken" and "the process crashed", and answer with the
//! replies to release, whether to checkpoint now and whether a call may go ahead. Until
//! it does, [`Durability`] decides as the runtime does today: a reply is released once
//! the log is durable past its records, a checkpoint is taken every N records, and a
//! call goes ahead only with a reserve of log room.

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

/// Held replies, checkpoint cadence and log room; see the module documentation.
#[derive(Debug)]
pub struct Durability {
    /// Take a checkpoint once this many records were appended since the last one.
    checkpoint_every: u64,
    records_since_checkpoint: u64,
    /// Log bytes a call must find free before it may run (more than any call writes).
    reserve: u64,
    held: Vec<HeldReply>,
}

impl Durability {
    /// Checkpoints every `checkpoint_every` records; calls need `reserve` bytes of room.
    pub fn new(checkpoint_every: u64, reserve: u64) -> Self {
        Durability {
            checkpoint_every,
            records_since_checkpoint: 0,
            reserve,
            held: Vec::new(),
        }
    }

    /// `records` were appended to the log.
    pub fn appended(&mut self, records: u64) {
        self.records_since_checkpoint += records;
    }

    /// A reply waits until the log is durable past `reply.until`.
    pub fn hold(&mut self, reply: HeldReply) {
        self.held.push(reply);
    }

    /// The log is durable up to `durable`: the replies it covers, oldest call first.
    pub fn flushed(&mut self, durable: u64) -> Vec<HeldReply> {
        let (go, stay): (Vec<_>, Vec<_>) = self.held.iter().partition(|h| h.until <= durable);
        self.held = stay;
        go
    }

    /// True when a checkpoint is due.
    pub fn checkpoint_due(&self) -> bool {
        self.records_since_checkpoint >= self.checkpoint_every
    }

    /// A checkpoint was taken.
    pub fn checkpoint_taken(&mut self) {
        self.records_since_checkpoint = 0;
    }

    /// True when a call may run with `room` bytes free in the log.
    pub fn has_room(&self, room: u64) -> bool {
        room >= self.reserve
    }

    /// The process died: every held reply is lost (its application never got it).
    pub fn crashed(&mut self) -> usize {
        self.records_since_checkpoint = 0;
        std::mem::take(&mut self.held).len()
    }
}
