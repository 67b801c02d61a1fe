//! Checkpoints and space reuse in the circular log.
//!
//! A checkpoint is a record (kind [`crate::RecordKind::CHECKPOINT`], payload from the caller:
//! e.g. the active units of work) plus the caller's *oldest LSN still needed* (the first record
//! of the oldest active unit of work, the oldest queue-file flush position). The restart point
//! becomes `min(oldest needed, checkpoint LSN)`. Once the checkpoint record is durable the writer
//! records both in the control file (synced); only then may pages before the new restart point be
//! overwritten. Recovery reads from the restart point, so everything it needs is always there.
//!
//! Space: the ring holds `total_pages` pages; the page holding the restart point and every page
//! after it up to the head are in use. An ordinary append may not use the last
//! [`SpaceLimits::reserve_pages`] pages, so a checkpoint can always be written to free space.

use crate::format::page::PAGE_DATA_LEN;
use crate::format::record::MAX_RECORD_LEN;
use crate::lsn::{Geometry, Lsn};

/// A checkpoint waiting for its record to become durable.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct CheckpointRequest {
    /// The checkpoint record's LSN.
    pub checkpoint: Lsn,
    /// The new restart point (oldest LSN still needed).
    pub restart: Lsn,
}

/// How much of the ring appends may use.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SpaceLimits {
    /// The ring's shape.
    pub geometry: Geometry,
    /// Pages kept back for checkpoint records.
    pub reserve_pages: u64,
}

impl SpaceLimits {
    /// Limits for a ring: 1/32 of it (at least 2 pages) is reserved for checkpoints.
    pub fn new(geometry: Geometry) -> SpaceLimits {
        SpaceLimits {
            geometry,
            reserve_pages: (geometry.total_pages() / 32).max(2),
        }
    }

    /// The first page number an append may not touch, given the durable restart point.
    pub fn limit_page(&self, restart: Lsn, checkpoint: bool) -> u64 {
        let hard = restart.page_no() + self.geometry.total_pages();
        if checkpoint {
            hard
        } else {
            hard - self.reserve_pages
        }
    }

    /// Whether a record occupying `[start, end)` fits; if not, the free bytes.
    pub fn check(&self, start: Lsn, end: Lsn, restart: Lsn, checkpoint: bool) -> Result<(), u64> {
        let limit = self.limit_page(restart, checkpoint);
        let last_page = Lsn::from_stream(end.stream() - 1).page_no();
        if last_page < limit {
            Ok(())
        } else {
            let limit_lsn = Lsn::from_stream(limit * PAGE_DATA_LEN as u64);
            Err(if limit_lsn > start {
                start.bytes_until(limit_lsn)
            } else {
                0
            })
        }
    }

    /// The largest payload a record may have in this ring.
    pub fn max_payload(&self) -> usize {
        let half = (self.geometry.total_pages() / 2) as usize * PAGE_DATA_LEN;
        half.min(MAX_RECORD_LEN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_wrap_with_restart() {
        let g = Geometry {
            file_pages: 8,
            extents: 4,
        }; // 32 pages
        let s = SpaceLimits::new(g);
        assert_eq!(s.reserve_pages, 2);
        let restart = Lsn::FIRST;
        assert_eq!(s.limit_page(restart, true), 32);
        assert_eq!(s.limit_page(restart, false), 30);
        let start = Lsn::from_stream(29 * PAGE_DATA_LEN as u64);
        assert!(s
            .check(start, start.advance(PAGE_DATA_LEN as u64), restart, false)
            .is_ok());
        assert!(s
            .check(
                start,
                start.advance(PAGE_DATA_LEN as u64 + 1),
                restart,
                false
            )
            .is_err());
        assert!(s
            .check(
                start,
                start.advance(PAGE_DATA_LEN as u64 + 1),
                restart,
                true
            )
            .is_ok());
        // After a checkpoint moves restart into page 40 (second lap), page 71 is the hard limit.
        let restart = Lsn::from_stream(40 * PAGE_DATA_LEN as u64 + 7);
        assert_eq!(s.limit_page(restart, true), 72);
        assert_eq!(s.max_payload(), 16 * PAGE_DATA_LEN);
    }
}
