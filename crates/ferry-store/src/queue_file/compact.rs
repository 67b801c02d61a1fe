//! Compaction: rewrite the live messages into a new set of segments and switch to it.
//!
//! 1. Write every live put, in sequence order, into new segments numbered after the current
//!    last one, whose headers carry the next generation (each is synced as it fills, the last
//!    one at the end).
//! 2. Write the manifest naming the new generation and range (temporary file, sync, rename):
//!    this is the switch. Before it a restart sees the old set and removes the new segments as
//!    leftovers; after it, the new set, and removes the old segments.
//! 3. Remove the old segments, lowest first (so an interrupted removal leaves a contiguous run
//!    just below the new set, which the next open finds).
//!
//! Memory stays bounded: one payload and one write buffer at a time. Compaction also makes
//! everything appended so far durable, like [`QueueFile::sync`].

use super::error::QfResult;
use super::format::{encode_record, segment_name, RecordKind, SEGMENT_HEADER_LEN};
use super::manifest::{self, Manifest};
use super::recover::remove;
use super::scan::read_put;
use super::segment::{self, Segment};
use super::{Loc, QueueFile};
use crate::device::LogDevice;
use std::collections::BTreeMap;

const WRITE_BUF: usize = 1 << 20;

impl<D: LogDevice> QueueFile<D> {
    /// Rewrites the live messages into new segments and switches to them atomically (see the
    /// module documentation); a crash at any point leaves either the old or the new set. An
    /// error fails the queue file (reopen to recover; the old set is intact until the switch).
    pub fn compact(&mut self) -> QfResult<()> {
        self.check()?;
        let mut new_segments = BTreeMap::new();
        let r = self.guard(|qf| qf.compact_into(&mut new_segments));
        if r.is_err() {
            // Best effort: the next open removes whatever is left above the manifest's range.
            for n in new_segments.keys().rev() {
                let _ = qf_remove(&mut self.dev, *n);
            }
        }
        r
    }

    fn compact_into(&mut self, new: &mut BTreeMap<u64, Segment<D::File>>) -> QfResult<()> {
        let generation = self.manifest.generation + 1;
        let first = self.manifest.last + 1;
        let mut n = first;
        new.insert(
            n,
            segment::create(&mut self.dev, n, generation, self.cfg.segment_size)?,
        );
        let mut index = BTreeMap::new();
        let mut buf = Vec::with_capacity(WRITE_BUF);
        let seqs: Vec<u64> = self.index.keys().copied().collect();
        for seq in seqs {
            let loc = self.index[&seq];
            let old = self.seg(loc.segment)?;
            let payload = read_put(&mut old.file, &old.name, loc.offset, loc.len, seq)?;
            let len = loc.len as u64;
            let cur = new.get_mut(&n).expect("current new segment");
            if cur.end + buf.len() as u64 + len > cur.size {
                cur.append(&buf)?;
                buf.clear();
                cur.sync()?;
                n += 1;
                let size = self.cfg.segment_size.max(SEGMENT_HEADER_LEN + len);
                new.insert(n, segment::create(&mut self.dev, n, generation, size)?);
            }
            let cur = new.get_mut(&n).expect("current new segment");
            index.insert(
                seq,
                Loc {
                    segment: n,
                    offset: cur.end + buf.len() as u64,
                    len: loc.len,
                },
            );
            encode_record(&mut buf, RecordKind::Put, seq, &payload);
            if buf.len() >= WRITE_BUF {
                cur.append(&buf)?;
                buf.clear();
            }
        }
        let cur = new.get_mut(&n).expect("current new segment");
        cur.append(&buf)?;
        cur.sync()?;

        let m = Manifest {
            generation,
            first,
            last: n,
            segment_size: self.cfg.segment_size,
            base: first,
        };
        manifest::write(&mut self.dev, &m)?;
        // Switched: from here on the new set is the queue file.
        let old = std::mem::replace(&mut self.segments, std::mem::take(new));
        self.manifest = m;
        self.live_in = super::live_counts(&index);
        self.index = index;
        self.dead_bytes = 0;
        self.dirty = false;
        self.compactions += 1;
        for (n, seg) in old {
            drop(seg);
            remove(&mut self.dev, n)?;
        }
        Ok(())
    }
}

fn qf_remove<D: LogDevice>(dev: &mut D, n: u64) -> std::io::Result<()> {
    dev.remove(&segment_name(n))
}
