//! Restart recovery: open an existing log, read it forward from the restart point, validating
//! every page and record, stop exactly at the end of the durable log, and resume writing there.
//!
//! For each page number `n` the reader gathers the *candidates*: the home copy and the two
//! scratch slots of `n`'s extent, each valid only if its magic, version, checksum and page number
//! check out and its epoch is no newer than the control file's and no older than the previous
//! page's (a page left by an abandoned earlier run after the point where a later run resumed is
//! older than its predecessor and so rejected). A copy written by a flush that also wrote the
//! page before must follow that flush's copy of it (same epoch, the sequence just after):
//! otherwise the flush never completed and the copy is a torn tail. The newest candidate
//! (epoch, sequence) wins. A full page continues to `n + 1`; a partial page, or no candidate
//! at all, is the end.
//!
//! Records are parsed from the page data stream; a record is yielded only when complete and its
//! LSN and checksum verify. An incomplete last record (its later pages never became durable) is
//! the end of the log. A malformed record *inside* valid pages is corruption (error), as is a
//! missing record between the restart point and the checkpoint the control file promises.

use crate::append::AppendBuffer;
use crate::checkpoint::SpaceLimits;
use crate::config::LogConfig;
use crate::control::{self, ControlBlock, CONTROL_NAME};
use crate::core::LogCore;
use crate::device::{read_exact_at, LogDevice, LogFile};
use crate::error::{LogError, Result};
use crate::format::page::{self, PageHeader, PAGE_HEADER_LEN, PAGE_SIZE};
use crate::format::record::{self, RecordKind, RECORD_HEADER_LEN};
use crate::lsn::{Geometry, Lsn, SLOT_PAGES};
use crate::stats::{IoOp, SlowIo, Stats};
use crate::writer::{LogWriter, Resume, TailSource};
use std::sync::Arc;
use std::time::Instant;

/// A record read back from the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Its LSN.
    pub lsn: Lsn,
    /// Its kind.
    pub kind: RecordKind,
    /// Its payload.
    pub payload: Vec<u8>,
}

/// What a copy of a page must satisfy given the page before it: an epoch no older than that
/// page's, and — when it was written by a flush that also wrote that page — that flush's copy
/// of it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
struct Bound {
    min_epoch: u64,
    /// The (epoch, sequence) of the copy of the page before, when that page is full.
    after: Option<(u64, u64)>,
}

impl Bound {
    /// The bound for the page after one whose chosen copy is `prev`.
    fn after(prev: &PageHeader) -> Bound {
        Bound {
            min_epoch: prev.epoch,
            after: prev.is_full().then_some((prev.epoch, prev.seq)),
        }
    }

    /// Whether copy `h` of page `page_no` may follow what the bound was made from.
    ///
    /// Every flush covers whole records and writes its pages in order with consecutive
    /// sequence numbers. A copy whose flush started before `page_no` also wrote page
    /// `page_no - 1`; if the copy of that page being read is not the one that flush wrote
    /// (another epoch, or not the sequence just before), the flush never completed — its
    /// rewrite of the page before was lost — so nothing it wrote was acknowledged, and its
    /// page here is a torn tail, not a continuation. (The writer makes this state impossible
    /// since it writes the recovered end under the new epoch; logs written before may hold it.)
    fn admits(&self, page_no: u64, h: &PageHeader) -> bool {
        if h.epoch < self.min_epoch {
            return false;
        }
        match (self.after, h.flush_start) {
            (Some((epoch, seq)), Some(start)) if start < page_no => {
                h.epoch == epoch && h.seq == seq.wrapping_add(1)
            }
            _ => true,
        }
    }
}

struct Loaded {
    page_no: u64,
    bound: Bound,
    header: PageHeader,
    bytes: Vec<u8>,
    source: TailSource,
}

const READ_AHEAD_PAGES: u64 = 64;

/// An open log being recovered. Call [`Recovery::next_record`] until `None`, then
/// [`Recovery::finish`] to get a writable [`LogCore`].
pub struct Recovery<D: LogDevice> {
    device: D,
    files: Vec<D::File>,
    control_file: D::File,
    control: ControlBlock,
    geo: Geometry,
    config: LogConfig,
    stats: Arc<Stats>,
    cur: Option<Loaded>,
    pos: Lsn,
    at_end: bool,
    record_start: (u64, Bound),
    slots: Option<(u32, [Option<Vec<u8>>; 2])>,
    ahead: Option<(u64, u64, Vec<u8>)>,
    hdr: Vec<u8>,
    records: u64,
}

impl<D: LogDevice> Recovery<D> {
    /// Opens the log on `device`. The ring's shape comes from the control file (a different
    /// shape in `config` is ignored with a warning: it is fixed at creation, as in MQ).
    pub fn open(mut device: D, config: &LogConfig) -> Result<Recovery<D>> {
        if !device
            .exists(CONTROL_NAME)
            .map_err(|e| LogError::io("stat", CONTROL_NAME, e))?
        {
            let first = Geometry::extent_name(0);
            return Err(if device.exists(&first).unwrap_or(false) {
                LogError::Corrupt(format!(
                    "{first} exists but {CONTROL_NAME} does not: log creation never completed"
                ))
            } else {
                LogError::NotFound(format!("{CONTROL_NAME} does not exist"))
            });
        }
        let mut control_file = device
            .open(CONTROL_NAME)
            .map_err(|e| LogError::io("open", CONTROL_NAME, e))?;
        let control = control::read(&mut control_file)?;
        let geo = control.geometry;
        if geo != config.geometry() {
            tracing::warn!(?geo, configured = ?config.geometry(), "log shape differs from qm.ini; the log's own shape is used");
        }
        // Grown as the files are found, never sized up front: the count comes from disk, and
        // a damaged control file may claim billions of extents (the first missing one ends it).
        let mut files = Vec::new();
        for i in 0..geo.extents {
            let name = Geometry::extent_name(i);
            let mut f = device
                .open(&name)
                .map_err(|e| LogError::io("open", &name, e))?;
            let len = f.size().map_err(|e| LogError::io("stat", &name, e))?;
            if len != geo.extent_file_len() {
                return Err(LogError::Corrupt(format!(
                    "{name} is {len} bytes, expected {}",
                    geo.extent_file_len()
                )));
            }
            files.push(f);
        }
        let pos = control.restart;
        Ok(Recovery {
            device,
            files,
            control_file,
            geo,
            config: config.clone(),
            stats: Arc::new(Stats::default()),
            cur: None,
            pos,
            at_end: false,
            record_start: (pos.page_no(), Bound::default()),
            slots: None,
            ahead: None,
            hdr: vec![0u8; RECORD_HEADER_LEN],
            records: 0,
            control,
        })
    }

    /// The control block read at open.
    pub fn control(&self) -> &ControlBlock {
        &self.control
    }

    /// The LSN of the last completed checkpoint (`None` if there was none).
    pub fn checkpoint_lsn(&self) -> Option<Lsn> {
        (self.control.checkpoint != Lsn(0)).then_some(self.control.checkpoint)
    }

    /// Where reading started: the oldest LSN still needed.
    pub fn restart_lsn(&self) -> Lsn {
        self.control.restart
    }

    fn read(&mut self, ext: u32, offset: u64, buf: &mut [u8]) -> Result<()> {
        let name = Geometry::extent_name(ext);
        let t = Instant::now();
        read_exact_at(&mut self.files[ext as usize], offset, buf)
            .map_err(|e| LogError::io("read", &name, e))?;
        let took = t.elapsed();
        if took > self.config.slow_io_threshold {
            let threshold = self.config.slow_io_threshold;
            self.stats.record_slow(SlowIo {
                op: IoOp::Read,
                file: name,
                bytes: buf.len() as u64,
                threshold,
                took,
            });
        }
        Ok(())
    }

    fn home_copy(&mut self, page_no: u64) -> Result<Vec<u8>> {
        if let Some((first, count, buf)) = &self.ahead {
            if page_no >= *first && page_no < first + count {
                let at = ((page_no - first) as usize) * PAGE_SIZE;
                return Ok(buf[at..at + PAGE_SIZE].to_vec());
            }
        }
        let ext = self.geo.extent_of(page_no);
        let in_extent = (page_no % self.geo.total_pages()) % self.geo.file_pages as u64;
        let count = READ_AHEAD_PAGES.min(self.geo.file_pages as u64 - in_extent);
        let mut buf = vec![0u8; count as usize * PAGE_SIZE];
        self.read(ext, self.geo.home_offset(page_no), &mut buf)?;
        let page = buf[..PAGE_SIZE].to_vec();
        self.ahead = Some((page_no, count, buf));
        Ok(page)
    }

    fn slot_copies(&mut self, ext: u32) -> Result<[Option<Vec<u8>>; 2]> {
        if let Some((e, s)) = &self.slots {
            if *e == ext {
                return Ok(s.clone());
            }
        }
        let mut buf = vec![0u8; SLOT_PAGES as usize * PAGE_SIZE];
        self.read(ext, 0, &mut buf)?;
        let s = [
            Some(buf[..PAGE_SIZE].to_vec()),
            Some(buf[PAGE_SIZE..].to_vec()),
        ];
        self.slots = Some((ext, s.clone()));
        Ok(s)
    }

    /// The newest valid copy of page `page_no` that `bound` admits.
    fn load(&mut self, page_no: u64, bound: Bound) -> Result<Option<Loaded>> {
        let max_epoch = self.control.epoch;
        let ok = |h: &PageHeader| bound.admits(page_no, h) && h.epoch <= max_epoch;
        let mut best: Option<Loaded> = None;
        let home = self.home_copy(page_no)?;
        if let Ok(h) = page::open(&home, page_no) {
            if ok(&h) {
                best = Some(Loaded {
                    page_no,
                    bound,
                    header: h,
                    bytes: home,
                    source: TailSource::Home,
                });
            }
        }
        let slots = self.slot_copies(self.geo.extent_of(page_no))?;
        for (i, s) in slots.into_iter().enumerate() {
            let Some(bytes) = s else { continue };
            if let Ok(h) = page::open(&bytes, page_no) {
                if ok(&h)
                    && best
                        .as_ref()
                        .is_none_or(|b| h.version() > b.header.version())
                {
                    best = Some(Loaded {
                        page_no,
                        bound,
                        header: h,
                        bytes,
                        source: TailSource::Slot(i as u8),
                    });
                }
            }
        }
        Ok(best)
    }

    /// Copies `n` stream bytes at `self.pos` into `out`; `false` if the durable log ends first.
    fn read_stream(&mut self, out: &mut Vec<u8>, mut n: usize) -> Result<bool> {
        while n > 0 {
            let page_no = self.pos.page_no();
            let need_load = self.cur.as_ref().is_none_or(|c| c.page_no != page_no);
            if need_load {
                let bound = match &self.cur {
                    None => Bound::default(),
                    Some(c) => {
                        // Only a full page continues onto the next one.
                        if !c.header.is_full() {
                            return Ok(false);
                        }
                        assert_eq!(c.page_no + 1, page_no);
                        Bound::after(&c.header)
                    }
                };
                match self.load(page_no, bound)? {
                    Some(l) => self.cur = Some(l),
                    None => return Ok(false),
                }
            }
            let Some(c) = self.cur.as_ref() else {
                return Ok(false);
            };
            let off = self.pos.data_offset();
            let used = c.header.used as usize;
            if off >= used {
                return Ok(false);
            }
            let take = (used - off).min(n);
            out.extend_from_slice(&c.bytes[PAGE_HEADER_LEN + off..PAGE_HEADER_LEN + off + take]);
            self.pos = self.pos.advance(take as u64);
            n -= take;
        }
        Ok(true)
    }

    fn end_here(&mut self, start: Lsn) -> Result<Option<Record>> {
        self.refuse_damage_before_durable_pages(start)?;
        self.pos = start;
        self.at_end = true;
        let ck = self.control.checkpoint;
        if ck != Lsn(0) && start <= ck {
            return Err(LogError::Corrupt(format!(
                "the log ends at {start}, before the checkpoint record at {ck} the control file says is durable"
            )));
        }
        Ok(None)
    }

    /// The log seems to end at the page holding `start` (or the page after it): a torn
    /// last flush, or damage? Pages written later say: each carries the first page of the
    /// flush that wrote it, and a flush starts only after the previous one is synced, so a
    /// valid later page whose flush started after the end page proves the end page was
    /// durable — it is damaged, and acknowledged records lie behind it. Reading stops at the
    /// first page that is not valid for its number, so a clean end costs one page read.
    fn refuse_damage_before_durable_pages(&mut self, start: Lsn) -> Result<()> {
        let end_page = match &self.cur {
            Some(c) if c.header.is_full() => c.page_no + 1,
            Some(c) => c.page_no,
            None => start.page_no(),
        };
        let limit = self.control.restart.page_no() + self.geo.total_pages();
        let mut q = end_page + 1;
        while q < limit {
            let Some(later) = self.load(q, Bound::default())? else {
                break;
            };
            if let Some(flush_start) = later.header.flush_start {
                if flush_start > end_page {
                    return Err(LogError::Corrupt(format!(
                        "log page {end_page} is damaged, but page {q} was written by a later flush (from page {flush_start}): records acknowledged as durable lie behind the damage"
                    )));
                }
            }
            q += 1;
        }
        Ok(())
    }

    /// The next record in LSN order, or `None` at the end of the durable log.
    pub fn next_record(&mut self) -> Result<Option<Record>> {
        if self.at_end {
            return Ok(None);
        }
        let start = self.pos;
        self.record_start = (start.page_no(), self.bound_for(start.page_no()));
        let mut hdr = std::mem::take(&mut self.hdr);
        hdr.clear();
        let complete = self.read_stream(&mut hdr, RECORD_HEADER_LEN)?;
        self.hdr = hdr;
        if !complete {
            return self.end_here(start);
        }
        let h = record::decode_header(&self.hdr, start).map_err(|e| {
            LogError::Corrupt(format!(
                "invalid record header at {start} inside valid pages: {e:?}"
            ))
        })?;
        let mut payload = Vec::with_capacity(h.len as usize);
        if !self.read_stream(&mut payload, h.len as usize)? {
            return self.end_here(start);
        }
        record::verify(&self.hdr, &h, &payload).map_err(|e| {
            LogError::Corrupt(format!(
                "record at {start} fails its checksum inside valid pages: {e:?}"
            ))
        })?;
        let ck = self.control.checkpoint;
        if start == ck && h.kind != RecordKind::CHECKPOINT {
            return Err(LogError::Corrupt(format!(
                "the record at checkpoint LSN {ck} is not a checkpoint"
            )));
        }
        if start < ck && self.pos > ck {
            return Err(LogError::Corrupt(format!(
                "a record at {start} spans the checkpoint LSN {ck}"
            )));
        }
        self.records += 1;
        Ok(Some(Record {
            lsn: start,
            kind: h.kind,
            payload,
        }))
    }

    /// What a copy of `page_no` must satisfy, given what has been read so far (the same bound
    /// the page was, or will be, loaded with, so reloading it finds the same copy).
    fn bound_for(&self, page_no: u64) -> Bound {
        match &self.cur {
            Some(c) if c.page_no == page_no => c.bound,
            Some(c) if c.page_no + 1 == page_no => Bound::after(&c.header),
            _ => Bound::default(),
        }
    }

    /// Records returned so far.
    pub fn records_read(&self) -> u64 {
        self.records
    }

    /// Reads to the end (discarding records not yet read), then resumes writing there: bumps
    /// the epoch (synced) and returns the writable log.
    pub fn finish(mut self) -> Result<LogCore<D>> {
        while self.next_record()?.is_some() {}
        let end = self.pos;
        let used = end.data_offset();
        let mut tail = vec![0u8; PAGE_SIZE];
        let mut source = TailSource::None;
        if used > 0 {
            let (page_no, bound) = self.record_start;
            assert_eq!(page_no, end.page_no());
            let l = self.load(page_no, bound)?.ok_or_else(|| {
                LogError::Corrupt(format!("the tail page {page_no} vanished during recovery"))
            })?;
            if (l.header.used as usize) < used {
                return Err(LogError::Corrupt(format!(
                    "the tail page {page_no} changed during recovery"
                )));
            }
            tail[PAGE_HEADER_LEN..PAGE_HEADER_LEN + used]
                .copy_from_slice(&l.bytes[PAGE_HEADER_LEN..PAGE_HEADER_LEN + used]);
            source = l.source;
        }
        let restart = self.control.restart;
        let space = SpaceLimits::new(self.geo);
        let stats = self.stats.clone();
        let writer = LogWriter::resume(Resume {
            device: self.device,
            files: self.files,
            control_file: self.control_file,
            control: self.control,
            integrity: self.config.write_integrity,
            end,
            tail,
            tail_source: source,
            threshold: self.config.slow_io_threshold,
            stats,
        })?;
        let buffer = AppendBuffer::new(end, restart, self.config.buffer_bytes(), space);
        Ok(LogCore::from_parts(buffer, writer))
    }
}
