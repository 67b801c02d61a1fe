//! Unique message and correlation identifiers.
//!
//! An id is 24 bytes: `FRY ` + the queue manager name (12 bytes, blank padded) + an
//! 8-byte big-endian sequence. The sequence starts at the queue manager's start time in
//! microseconds, so ids stay unique across restarts as long as fewer than a million ids
//! per second are made on average (the sequence runs ahead of the clock otherwise, which
//! keeps it unique but no longer a time).

use crate::clock::Timestamp;
use ferry_mqi::MsgId;

/// Makes unique 24-byte identifiers.
#[derive(Clone, Debug)]
pub struct IdGenerator {
    prefix: [u8; 16],
    next: u64,
}

impl IdGenerator {
    /// A generator for queue manager `qmgr`, seeded from `now`.
    pub fn new(qmgr: &str, now: Timestamp) -> Self {
        let mut prefix = [b' '; 16];
        prefix[..4].copy_from_slice(b"FRY ");
        for (dst, src) in prefix[4..].iter_mut().zip(qmgr.bytes()) {
            *dst = src;
        }
        IdGenerator {
            prefix,
            next: now.0.saturating_mul(1000),
        }
    }

    /// Makes sure no later id repeats `id` (one this generator's prefix made, e.g. a
    /// message id recovered from the log): the sequence moves past it.
    pub fn observe(&mut self, id: &MsgId) {
        if id[..16] != self.prefix {
            return;
        }
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&id[16..]);
        let seq = u64::from_be_bytes(seq);
        if seq >= self.next {
            self.next = seq.saturating_add(1);
        }
    }

    /// The next unique id.
    pub fn next_id(&mut self) -> MsgId {
        let mut id = [0u8; 24];
        id[..16].copy_from_slice(&self.prefix);
        id[16..].copy_from_slice(&self.next.to_be_bytes());
        self.next = self.next.wrapping_add(1);
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_shaped() {
        let mut g = IdGenerator::new("QM1", Timestamp(1_000));
        let a = g.next_id();
        let b = g.next_id();
        assert_ne!(a, b);
        assert_eq!(&a[..4], b"FRY ");
        assert_eq!(&a[4..16], b"QM1         ");
        assert_eq!(u64::from_be_bytes(a[16..].try_into().unwrap()), 1_000_000);
        assert_eq!(u64::from_be_bytes(b[16..].try_into().unwrap()), 1_000_001);
    }

    #[test]
    fn restart_later_does_not_repeat() {
        let mut g1 = IdGenerator::new("QM1", Timestamp(1_000));
        let first: Vec<_> = (0..100).map(|_| g1.next_id()).collect();
        let mut g2 = IdGenerator::new("QM1", Timestamp(1_001));
        let second = g2.next_id();
        assert!(!first.contains(&second));
    }
}
