//! Counters for DISPLAY QMSTATUS and slow-I/O reports for the error log (AMQ6729W's data).
//!
//! Counters are atomics updated by the writer, read by anyone without locks. Slow operations
//! are queued (bounded) until the server drains them with [`crate::Log::take_slow_ops`].

use crate::lsn::{Geometry, Lsn};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

/// The kind of a timed I/O operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IoOp {
    /// A read (recovery).
    Read,
    /// A write.
    Write,
    /// An fdatasync.
    Sync,
}

impl IoOp {
    /// MQ's operation letter in AMQ6729W: `R` or `W` (a sync is part of writing).
    pub fn letter(self) -> char {
        match self {
            IoOp::Read => 'R',
            IoOp::Write | IoOp::Sync => 'W',
        }
    }
}

/// One I/O operation slower than the threshold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlowIo {
    /// What was done.
    pub op: IoOp,
    /// The file.
    pub file: String,
    /// Bytes transferred (0 for a sync).
    pub bytes: u64,
    /// The threshold in force.
    pub threshold: Duration,
    /// How long it took.
    pub took: Duration,
}

/// How many slow operations are kept before the oldest are dropped (counted, not lost silently).
pub const SLOW_QUEUE_MAX: usize = 64;

/// Live counters shared by the writer and readers.
#[derive(Debug, Default)]
pub struct Stats {
    pub(crate) bytes_written: AtomicU64,
    pub(crate) pages_written: AtomicU64,
    pub(crate) flushes: AtomicU64,
    pub(crate) syncs: AtomicU64,
    pub(crate) records: AtomicU64,
    pub(crate) checkpoints: AtomicU64,
    pub(crate) slow_ops: AtomicU64,
    pub(crate) durable: AtomicU64,
    pub(crate) head: AtomicU64,
    pub(crate) restart: AtomicU64,
    pub(crate) checkpoint: AtomicU64,
    pub(crate) slow: Mutex<SlowQueue>,
}

#[derive(Debug, Default)]
pub(crate) struct SlowQueue {
    pending: VecDeque<SlowIo>,
    last: Option<SlowIo>,
}

impl Stats {
    pub(crate) fn record_slow(&self, s: SlowIo) {
        self.slow_ops.fetch_add(1, Relaxed);
        let mut q = self.slow.lock().unwrap_or_else(|p| p.into_inner());
        if q.pending.len() == SLOW_QUEUE_MAX {
            q.pending.pop_front();
        }
        q.last = Some(s.clone());
        q.pending.push_back(s);
    }

    pub(crate) fn take_slow(&self) -> Vec<SlowIo> {
        self.slow
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pending
            .drain(..)
            .collect()
    }

    pub(crate) fn snapshot(&self, geometry: Geometry) -> LogStatus {
        let records = self.records.load(Relaxed);
        let flushes = self.flushes.load(Relaxed);
        let head = Lsn(self.head.load(Relaxed));
        let restart = Lsn(self.restart.load(Relaxed));
        let page_bytes = crate::format::page::PAGE_SIZE as u64;
        let in_use_pages = (head.page_no() + 1).saturating_sub(restart.page_no());
        LogStatus {
            bytes_written: self.bytes_written.load(Relaxed),
            pages_written: self.pages_written.load(Relaxed),
            flushes,
            syncs: self.syncs.load(Relaxed),
            records,
            flushes_per_record: if records == 0 {
                0.0
            } else {
                flushes as f64 / records as f64
            },
            checkpoints: self.checkpoints.load(Relaxed),
            durable_lsn: Lsn(self.durable.load(Relaxed)),
            head_lsn: head,
            restart_lsn: restart,
            checkpoint_lsn: Lsn(self.checkpoint.load(Relaxed)),
            current_extent: geometry.extent_of(head.page_no()),
            restart_extent: geometry.extent_of(restart.page_no()),
            space_in_use: in_use_pages * page_bytes,
            space_total: geometry.total_pages() * page_bytes,
            slow_ops: self.slow_ops.load(Relaxed),
            last_slow: self
                .slow
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .last
                .clone(),
        }
    }
}

/// A snapshot of the log's state for status displays.
#[derive(Clone, Debug, PartialEq)]
pub struct LogStatus {
    /// Bytes written to extents (pages, including rewrites of partial pages).
    pub bytes_written: u64,
    /// Page writes.
    pub pages_written: u64,
    /// Flushes (write + sync rounds).
    pub flushes: u64,
    /// fdatasync calls (a flush crossing an extent boundary makes two).
    pub syncs: u64,
    /// Records made durable.
    pub records: u64,
    /// Flushes per record: 1.0 means one flush per record, lower is group commit working.
    pub flushes_per_record: f64,
    /// Checkpoints completed (control file updated).
    pub checkpoints: u64,
    /// Everything before this LSN is durable.
    pub durable_lsn: Lsn,
    /// The next record's LSN.
    pub head_lsn: Lsn,
    /// The oldest LSN still needed (RECLOG's position).
    pub restart_lsn: Lsn,
    /// The last completed checkpoint's LSN.
    pub checkpoint_lsn: Lsn,
    /// The extent holding the head.
    pub current_extent: u32,
    /// The extent holding the restart point (oldest extent needed).
    pub restart_extent: u32,
    /// Bytes of the ring between the restart point and the head.
    pub space_in_use: u64,
    /// Bytes of the ring.
    pub space_total: u64,
    /// Operations slower than the threshold, ever.
    pub slow_ops: u64,
    /// The last slow operation.
    pub last_slow: Option<SlowIo>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_queue_is_bounded_and_keeps_last() {
        let s = Stats::default();
        for i in 0..(SLOW_QUEUE_MAX as u64 + 5) {
            s.record_slow(SlowIo {
                op: IoOp::Write,
                file: "x".into(),
                bytes: i,
                threshold: Duration::ZERO,
                took: Duration::ZERO,
            });
        }
        let g = Geometry {
            file_pages: 4,
            extents: 2,
        };
        let snap = s.snapshot(g);
        assert_eq!(snap.slow_ops, SLOW_QUEUE_MAX as u64 + 5);
        assert_eq!(snap.last_slow.unwrap().bytes, SLOW_QUEUE_MAX as u64 + 4);
        let drained = s.take_slow();
        assert_eq!(drained.len(), SLOW_QUEUE_MAX);
        assert_eq!(drained[0].bytes, 5);
        assert!(s.take_slow().is_empty());
        assert_eq!(IoOp::Sync.letter(), 'W');
        assert_eq!(IoOp::Read.letter(), 'R');
    }
}
