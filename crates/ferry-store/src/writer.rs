//! The log writer: a pure, synchronous core that turns a batch of encoded records into page
//! writes and one fdatasync per touched extent, and keeps the partial tail page.
//!
//! It does no threading: [`crate::LogCore`] drives it step by step (the simulator does too),
//! and [`crate::Log`] runs it on its own thread. One call to [`LogWriter::write`] is one flush.
//!
//! Page placement (see `docs/internals/log.md`):
//! - a full page is written once, at its home location (which held only an earlier lap's data);
//! - a partial tail page goes home too under SingleWrite (rewritten in place next flush), or
//!   under DoubleWrite/TripleWrite to the scratch slot of its extent that does *not* hold the
//!   newest copy, so a torn write never destroys the only copy of acknowledged records.
//!
//! Every page is checked (decoded and verified) before it is written; a failed write or sync
//! fails the writer for good: fsync is never retried, nothing more is acknowledged.

use crate::config::WriteIntegrity;
use crate::control::{self, ControlBlock, CONTROL_NAME};
use crate::device::{write_all_at, LogDevice, LogFile};
use crate::error::{LogError, Result};
use crate::format::page::{self, PageHeader, PAGE_DATA_LEN, PAGE_HEADER_LEN, PAGE_SIZE};
use crate::lsn::{Geometry, Lsn};
use crate::stats::{IoOp, SlowIo, Stats};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where the recovered tail page's newest copy lives.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TailSource {
    /// No partial page: the log ends at a page boundary.
    None,
    /// The page's home location.
    Home,
    /// Scratch slot 0 or 1 of the page's extent.
    Slot(u8),
}

/// The synchronous log writer.
pub struct LogWriter<D: LogDevice> {
    device: D,
    files: Vec<D::File>,
    control_file: D::File,
    control: ControlBlock,
    geo: Geometry,
    integrity: WriteIntegrity,
    seq: u64,
    tail: Vec<u8>,
    tail_page: u64,
    tail_used: usize,
    last_slot: u8,
    end: Lsn,
    out: Vec<u8>,
    touched: Vec<u32>,
    failed: Option<String>,
    threshold: Duration,
    stats: Arc<Stats>,
}

/// What the recovery hands the writer to resume from.
pub(crate) struct Resume<D: LogDevice> {
    pub device: D,
    pub files: Vec<D::File>,
    pub control_file: D::File,
    pub control: ControlBlock,
    pub integrity: WriteIntegrity,
    pub end: Lsn,
    pub tail: Vec<u8>,
    pub tail_source: TailSource,
    pub threshold: Duration,
    pub stats: Arc<Stats>,
}

impl<D: LogDevice> LogWriter<D> {
    /// Resumes writing at `r.end`: bumps the epoch in the control file (synced) before writing
    /// anything, then writes the recovered tail page under the new epoch and syncs it
    /// ([`Self::seal_recovered_end`]) before any record is accepted. Under
    /// DoubleWrite/TripleWrite that copy goes to a slot, so a tail whose newest copy lived
    /// at its home location is never overwritten in place by the next flush.
    pub(crate) fn resume(r: Resume<D>) -> Result<LogWriter<D>> {
        assert!(r.end.is_canonical());
        assert_eq!(r.tail.len(), PAGE_SIZE);
        let used = r.end.data_offset();
        assert!(r.tail[PAGE_HEADER_LEN + used..].iter().all(|&b| b == 0));
        let geo = r.control.geometry;
        let mut w = LogWriter {
            device: r.device,
            files: r.files,
            control_file: r.control_file,
            control: r.control,
            geo,
            integrity: r.integrity,
            seq: 0,
            tail: r.tail,
            tail_page: r.end.page_no(),
            tail_used: used,
            last_slot: match r.tail_source {
                TailSource::Slot(s) => s,
                _ => 1,
            },
            end: r.end,
            out: Vec::new(),
            touched: Vec::new(),
            failed: None,
            threshold: r.threshold,
            stats: r.stats,
        };
        let mut next = w.control.clone();
        next.seq += 1;
        next.epoch += 1;
        next.write_integrity = w.integrity.code();
        next.head_hint = w.end;
        w.write_control_block(next)?;
        w.seal_recovered_end()?;
        w.stats.head.store(w.end.0, Relaxed);
        w.stats.durable.store(w.end.0, Relaxed);
        w.stats.restart.store(w.control.restart.0, Relaxed);
        w.stats.checkpoint.store(w.control.checkpoint.0, Relaxed);
        Ok(w)
    }

    /// Makes the end recovery chose durable before anything new is written: writes the tail
    /// page — the recovered prefix of the end page, or an empty page when the log ends on a
    /// page boundary — under the new epoch and syncs it.
    ///
    /// A crashed run may have left copies of the end page (and pages after it) holding
    /// records the restart discarded. Without this, a later crash that loses this run's first
    /// rewrite of the end page brings those copies back: the discarded records are replayed
    /// again after the queue manager ran on without them, or an old copy's incomplete last
    /// record is read on into this run's next page and fails its checksum. The copy written
    /// here is newer (epoch, sequence) than every copy of an earlier run, and being partial it
    /// ends the log there, so pages of earlier runs after it are never read.
    ///
    /// Under DoubleWrite/TripleWrite it goes to the scratch slot not holding the newest copy
    /// (the recovered copy stays intact until this one is synced); under SingleWrite it goes
    /// home, in place, as every SingleWrite tail rewrite does. A log whose end page is the
    /// restart page one lap on (completely full) has nothing to invalidate: that page was
    /// never written, and its home holds needed data.
    fn seal_recovered_end(&mut self) -> Result<()> {
        let limit = self.control.restart.page_no() + self.geo.total_pages();
        if self.tail_page >= limit {
            debug_assert_eq!(self.tail_used, 0);
            return Ok(());
        }
        self.out.clear();
        self.out.extend_from_slice(&self.tail);
        self.seal_last_out_page(self.tail_page, self.tail_used, self.tail_page);
        self.touched.clear();
        if self.integrity.uses_slots() {
            let slot = 1 - self.last_slot;
            self.write_slot(slot)?;
            self.sync_touched()?;
            self.last_slot = slot;
        } else {
            self.write_home(self.tail_page, 1)?;
            self.sync_touched()?;
        }
        debug_assert_eq!(self.tail_page, self.end.page_no());
        Ok(())
    }

    /// The end of what has been written and synced: everything before it is durable.
    pub fn durable_end(&self) -> Lsn {
        self.end
    }

    /// The newest durable control block.
    pub fn control(&self) -> &ControlBlock {
        &self.control
    }

    /// The ring's shape.
    pub fn geometry(&self) -> Geometry {
        self.geo
    }

    /// Whether the writer has failed (and why).
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// The shared counters.
    pub fn stats(&self) -> &Arc<Stats> {
        &self.stats
    }

    /// Gives back the device (for tests that reopen the log after a crash).
    pub fn into_device(self) -> D {
        self.device
    }

    fn check_ok(&self) -> Result<()> {
        match &self.failed {
            Some(m) => Err(LogError::Failed(m.clone())),
            None => Ok(()),
        }
    }

    fn fail(&mut self, e: LogError) -> LogError {
        tracing::error!(error = %e, "recovery log writer failed; no further records are accepted");
        self.failed = Some(e.to_string());
        e
    }

    fn timed<T>(
        &mut self,
        op: IoOp,
        file: &str,
        bytes: u64,
        f: impl FnOnce(&mut Self) -> std::io::Result<T>,
    ) -> std::io::Result<T> {
        let t = Instant::now();
        let r = f(self);
        let took = t.elapsed();
        if took > self.threshold {
            self.stats.record_slow(SlowIo {
                op,
                file: file.to_string(),
                bytes,
                threshold: self.threshold,
                took,
            });
        }
        r
    }

    /// Seals the last page of `out` as page `page_no` written by a flush that starts at
    /// page `flush_start`.
    fn seal_last_out_page(&mut self, page_no: u64, used: usize, flush_start: u64) {
        self.seq += 1;
        let h = PageHeader {
            page_no,
            epoch: self.control.epoch,
            seq: self.seq,
            used: used as u16,
            flush_start: Some(flush_start),
        };
        let at = self.out.len() - PAGE_SIZE;
        let p = &mut self.out[at..];
        page::seal(p, &h);
        // Check what we are about to write.
        assert_eq!(page::open(p, page_no), Ok(h), "sealed page does not verify");
    }

    /// Writes `data` (whole encoded records starting at [`Self::durable_end`]) and syncs.
    /// Returns the new durable end. On any error the writer fails for good.
    pub fn write(&mut self, data: &[u8]) -> Result<Lsn> {
        self.check_ok()?;
        assert!(!data.is_empty());
        let limit = self.control.restart.page_no() + self.geo.total_pages();
        self.out.clear();
        self.out.extend_from_slice(&self.tail);
        let first_page = self.tail_page;
        let mut page_no = self.tail_page;
        let mut used = self.tail_used;
        let mut pos = 0;
        let partial = loop {
            assert!(
                page_no < limit,
                "log writer would overwrite needed page {page_no} (limit {limit})"
            );
            let base = self.out.len() - PAGE_SIZE + PAGE_HEADER_LEN;
            let n = (PAGE_DATA_LEN - used).min(data.len() - pos);
            self.out[base + used..base + used + n].copy_from_slice(&data[pos..pos + n]);
            used += n;
            pos += n;
            if used < PAGE_DATA_LEN {
                debug_assert_eq!(pos, data.len());
                self.seal_last_out_page(page_no, used, first_page);
                break true;
            }
            self.seal_last_out_page(page_no, used, first_page);
            page_no += 1;
            used = 0;
            if pos == data.len() {
                break false;
            }
            self.out.resize(self.out.len() + PAGE_SIZE, 0);
        };
        let full_pages = (page_no - first_page) as usize;
        let home_pages = full_pages + usize::from(partial && !self.integrity.uses_slots());
        self.touched.clear();
        let mut slot = None;
        let r = self.write_home(first_page, home_pages).and_then(|()| {
            if partial && self.integrity.uses_slots() {
                let s = 1 - self.last_slot;
                slot = Some(s);
                self.write_slot(s)
            } else {
                Ok(())
            }
        });
        let r = r.and_then(|()| self.sync_touched());
        if let Err(e) = r {
            return Err(self.fail(e));
        }
        // Durable: keep the partial page image for the next flush.
        if let Some(s) = slot {
            self.last_slot = s;
        }
        if partial {
            let at = self.out.len() - PAGE_SIZE;
            self.tail.copy_from_slice(&self.out[at..]);
        } else {
            self.tail.fill(0);
        }
        self.tail_page = page_no;
        self.tail_used = used;
        self.end = self.end.advance(data.len() as u64);
        debug_assert_eq!(self.end.page_no(), self.tail_page);
        debug_assert_eq!(self.end.data_offset(), self.tail_used);
        let pages = (full_pages + usize::from(partial)) as u64;
        self.stats.pages_written.fetch_add(pages, Relaxed);
        self.stats
            .bytes_written
            .fetch_add(pages * PAGE_SIZE as u64, Relaxed);
        self.stats.flushes.fetch_add(1, Relaxed);
        self.stats.durable.store(self.end.0, Relaxed);
        Ok(self.end)
    }

    fn write_home(&mut self, first_page: u64, count: usize) -> Result<()> {
        let mut i = 0;
        while i < count {
            let ext = self.geo.extent_of(first_page + i as u64);
            let mut j = i + 1;
            while j < count && self.geo.extent_of(first_page + j as u64) == ext {
                j += 1;
            }
            let offset = self.geo.home_offset(first_page + i as u64);
            let name = Geometry::extent_name(ext);
            let out = std::mem::take(&mut self.out);
            let r = self.timed(IoOp::Write, &name, ((j - i) * PAGE_SIZE) as u64, |w| {
                write_all_at(
                    &mut w.files[ext as usize],
                    offset,
                    &out[i * PAGE_SIZE..j * PAGE_SIZE],
                )
            });
            self.out = out;
            r.map_err(|e| LogError::io("write", &name, e))?;
            if !self.touched.contains(&ext) {
                self.touched.push(ext);
            }
            i = j;
        }
        Ok(())
    }

    /// Writes the last page of `out` (a partial page) to scratch slot `slot` of its extent.
    fn write_slot(&mut self, slot: u8) -> Result<()> {
        let page_no = self.tail_page_of_out();
        let ext = self.geo.extent_of(page_no);
        let name = Geometry::extent_name(ext);
        let out = std::mem::take(&mut self.out);
        let at = out.len() - PAGE_SIZE;
        let r = self.timed(IoOp::Write, &name, PAGE_SIZE as u64, |w| {
            write_all_at(
                &mut w.files[ext as usize],
                Geometry::slot_offset(slot),
                &out[at..],
            )
        });
        self.out = out;
        r.map_err(|e| LogError::io("write", &name, e))?;
        if !self.touched.contains(&ext) {
            self.touched.push(ext);
        }
        Ok(())
    }

    fn tail_page_of_out(&self) -> u64 {
        let at = self.out.len() - PAGE_SIZE;
        crate::format::get_u64(&self.out[at..], 16)
    }

    fn sync_touched(&mut self) -> Result<()> {
        let touched = std::mem::take(&mut self.touched);
        for &ext in &touched {
            let name = Geometry::extent_name(ext);
            self.timed(IoOp::Sync, &name, 0, |w| w.files[ext as usize].sync_data())
                .map_err(|e| LogError::io("sync", &name, e))?;
            self.stats.syncs.fetch_add(1, Relaxed);
        }
        self.touched = touched;
        self.touched.clear();
        Ok(())
    }

    fn write_control_block(&mut self, next: ControlBlock) -> Result<()> {
        self.check_ok()?;
        let r = self.timed(IoOp::Write, CONTROL_NAME, PAGE_SIZE as u64, |w| {
            control::write(&mut w.control_file, &next)
                .map_err(|e| std::io::Error::other(e.to_string()))
        });
        if let Err(e) = r {
            return Err(self.fail(LogError::io("write", CONTROL_NAME, e)));
        }
        self.control = next;
        Ok(())
    }

    /// Records a completed checkpoint in the control file (synced): `checkpoint` must be
    /// durable already. Space before `restart` becomes reusable once this returns.
    pub fn write_checkpoint(&mut self, checkpoint: Lsn, restart: Lsn) -> Result<()> {
        assert!(
            checkpoint < self.end,
            "checkpoint record must be durable before the control update"
        );
        assert!(
            restart <= checkpoint && restart >= self.control.restart,
            "restart point must not move backwards"
        );
        let mut next = self.control.clone();
        next.seq += 1;
        next.checkpoint = checkpoint;
        next.restart = restart;
        next.head_hint = self.end;
        self.write_control_block(next)?;
        self.stats.checkpoints.fetch_add(1, Relaxed);
        self.stats.restart.store(restart.0, Relaxed);
        self.stats.checkpoint.store(checkpoint.0, Relaxed);
        Ok(())
    }
}
