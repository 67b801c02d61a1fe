//! The numbers the durability decisions are made with: checkpoint triggers, the log room
//! a call must leave free, how often slow I/O is reported, how long a call waits for log
//! room. [`Policy::for_log`] gives Ferry's defaults for a log of a given size; a test or a
//! simulation may set any field.

use std::time::Duration;

/// A record's header in the log (`docs/internals/log.md`).
pub const RECORD_OVERHEAD: u64 = 24;

/// Bytes of a log page, and the data bytes each page carries.
const PAGE_BYTES: u64 = 4096;
const PAGE_DATA_BYTES: u64 = 4056;

/// What a call is about to log, for the room check made before the engine runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogUse {
    /// A put that may be persistent, with its body (and properties) length.
    Put(usize),
    /// A get, commit, backout or disconnect: small records only.
    Small,
}

/// The durability policy of one recovery log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Bytes of the log's ring (primary and secondary extents).
    pub ring_bytes: u64,
    /// Bytes of its primary extents: checkpoints keep the log within half of them; the
    /// secondary extents are headroom.
    pub primary_bytes: u64,
    /// A checkpoint is taken after this many records.
    pub checkpoint_records: u64,
    /// A checkpoint is taken at least this often while records are being written.
    pub checkpoint_interval: Duration,
    /// Slow-I/O warnings are written at most this often.
    pub slow_warning_every: Duration,
    /// Log room a persistent put must leave free beyond its own record, at most an eighth
    /// of the ring: puts are refused first, so gets, commits and backouts (small records)
    /// keep working while the log is full and consumers can drain the queues that fill it.
    pub put_room_margin: u64,
    /// Log room a get or commit must leave free, at most a 64th of the ring (a commit may
    /// hand messages to waiting getters, each a small get record).
    pub get_room_margin: u64,
    /// How many checkpoints a call that finds the log full waits for: the first frees the
    /// space before the previous checkpoint's image, the second the space before its own.
    pub log_full_checkpoints: u64,
    /// How long a call that finds the log full waits for checkpoints before it is refused
    /// (2102 MQRC_RESOURCE_PROBLEM).
    pub log_full_patience: Duration,
    /// A unit of work in flight whose records take this fraction of the ring (or more) is
    /// backed out when the log is full (only ending it frees what it pins).
    pub long_unit_of_work_share: u64,
}

impl Policy {
    /// Ferry's policy for a log of `ring_bytes`, `primary_bytes` of them primary.
    pub fn for_log(ring_bytes: u64, primary_bytes: u64) -> Self {
        Policy {
            ring_bytes,
            primary_bytes,
            checkpoint_records: 10_000,
            checkpoint_interval: Duration::from_secs(30),
            slow_warning_every: Duration::from_secs(60),
            put_room_margin: 1024 * 1024,
            get_room_margin: 64 * 1024,
            log_full_checkpoints: 2,
            log_full_patience: Duration::from_secs(5),
            long_unit_of_work_share: 8,
        }
    }

    /// Log room a call that will log `usage` needs before it may run.
    pub fn room_needed(&self, usage: LogUse) -> u64 {
        let ring = self.ring_bytes;
        match usage {
            LogUse::Put(body) => {
                (body as u64).saturating_add(1024) + self.put_room_margin.min(ring / 8)
            }
            LogUse::Small => self.get_room_margin.min(ring / 64),
        }
    }

    /// Whether a unit of work pinning `bytes` of log is long enough to back out when the
    /// log is full.
    pub fn is_long_unit_of_work(&self, bytes: u64) -> bool {
        bytes >= self.ring_bytes / self.long_unit_of_work_share.max(1)
    }

    /// Where the young messages of the next checkpoint go, given the log's space: in the
    /// image when it leaves a put's margin free (so gets and commits never wait behind an
    /// image), else straight to the queue files (a queue filling faster than checkpoints
    /// come).
    pub fn young_in_image(&self, image_bytes: u64, space: Space) -> bool {
        let unused = space.total.saturating_sub(space.in_use);
        let roomy = unused.saturating_sub(self.put_room_margin.min(space.total / 8));
        image_bytes <= roomy
    }

    /// Whether an image of `image_bytes` may be appended at all: it must leave 1/32 of the
    /// ring free (a partial image would use up space that nothing frees). `Err` carries
    /// the bytes free for it.
    pub fn image_fits(&self, image_bytes: u64, space: Space) -> Result<(), u64> {
        let unused = space.total.saturating_sub(space.in_use);
        let free = unused.saturating_sub(space.total / 32);
        if image_bytes > free {
            Err(free)
        } else {
            Ok(())
        }
    }
}

/// Log space an image of records with these payload lengths takes: records with their
/// headers, in pages of 4,056 data bytes, plus two pages of slack.
pub fn image_bytes(record_lengths: impl Iterator<Item = usize>) -> u64 {
    record_lengths
        .map(|len| len as u64 + RECORD_OVERHEAD)
        .sum::<u64>()
        .saturating_mul(PAGE_BYTES)
        / PAGE_DATA_BYTES
        + 2 * PAGE_BYTES
}

/// The log's space as the log reports it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Space {
    /// Bytes of the ring.
    pub total: u64,
    /// Bytes between the restart point and the end of the log.
    pub in_use: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_put_needs_its_body_and_a_margin_capped_at_an_eighth_of_the_ring() {
        let big = Policy::for_log(64 << 20, 32 << 20);
        assert_eq!(big.room_needed(LogUse::Put(2048)), 2048 + 1024 + (1 << 20));
        let small = Policy::for_log(1 << 20, 1 << 19);
        assert_eq!(small.room_needed(LogUse::Put(0)), 1024 + (1 << 17));
        assert!(small.room_needed(LogUse::Small) < small.room_needed(LogUse::Put(0)));
        assert_eq!(small.room_needed(LogUse::Small), (1 << 20) / 64);
    }

    #[test]
    fn an_image_counts_headers_and_page_overhead() {
        assert_eq!(image_bytes(std::iter::empty()), 8192);
        let one_page = image_bytes([4056 - 24].into_iter());
        assert_eq!(one_page, 4096 + 8192);
    }

    #[test]
    fn young_messages_leave_the_image_when_it_would_eat_a_puts_margin() {
        let p = Policy::for_log(64 << 20, 32 << 20);
        let space = Space {
            total: 64 << 20,
            in_use: 60 << 20,
        };
        assert!(p.young_in_image(1 << 20, space));
        assert!(!p.young_in_image(4 << 20, space));
        assert_eq!(p.image_fits(5 << 20, space), Err((4 << 20) - (2 << 20)));
        assert_eq!(p.image_fits(1 << 20, space), Ok(()));
    }
}
