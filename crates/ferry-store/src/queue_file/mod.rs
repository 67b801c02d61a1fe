//! Queue files: the on-disk home of the persistent messages that stay on one queue, so the
//! circular recovery log does not have to carry them (MQ's queue files). Design, format and
//! safety argument: `docs/internals/queue-files.md`.
//!
//! The idea: an append-only journal per queue, split into preallocated segment files. A put
//! appends `Put { seq, payload }`, a get appends `Remove { seq }`; writes are buffered by the OS
//! and [`QueueFile::sync`] makes everything appended so far durable (the checkpoint calls it
//! before it lets the log reuse space). An in-memory index `seq -> (segment, offset, len)` of
//! the live messages lets [`QueueFile::read`] fetch a payload the engine no longer holds in
//! memory. When removed records outweigh live ones, [`QueueFile::compact`] rewrites the live
//! messages into a new set of segments and switches to it atomically through the manifest.
//!
//! What a restart finds is always the state after some *prefix* of the appends, and that prefix
//! includes everything appended before the last successful `sync` (or compaction).
//!
//! Messages are opaque payloads with a `u64` sequence number; this crate knows nothing of the
//! engine's message format.

mod compact;
pub mod error;
pub mod format;
pub mod manifest;
mod recover;
pub mod scan;
pub mod segment;

pub use error::{QfResult, QueueFileError};
pub use recover::Recovered;

use crate::device::LogDevice;
use format::{encode_record, record_len, RecordKind, MAX_PAYLOAD, SEGMENT_HEADER_LEN};
use manifest::Manifest;
use segment::Segment;
use std::collections::{BTreeMap, HashSet};

/// Settings of a queue file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueueFileConfig {
    /// Bytes of each segment file (preallocated); a new segment is started when a record does
    /// not fit. A record larger than this gets a segment of its own size. At least 4096.
    pub segment_size: u64,
    /// [`QueueFile::needs_compaction`] says yes only once dead bytes exceed both the live bytes
    /// and this many bytes (so small queue files are not rewritten over and over).
    pub compact_min_dead_bytes: u64,
}

impl Default for QueueFileConfig {
    fn default() -> Self {
        QueueFileConfig {
            segment_size: 64 << 20,
            compact_min_dead_bytes: 64 << 20,
        }
    }
}

impl QueueFileConfig {
    fn validate(&self) -> QfResult<()> {
        if self.segment_size < 4096 {
            return Err(QueueFileError::Config(format!(
                "segment size {} is below the minimum 4096 bytes",
                self.segment_size
            )));
        }
        Ok(())
    }
}

/// Counters for status displays.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueFileStatus {
    /// Messages in the queue file.
    pub live_messages: u64,
    /// Bytes of their put records (header + payload).
    pub live_bytes: u64,
    /// Bytes of records no longer needed (puts of removed messages and the removes).
    pub dead_bytes: u64,
    /// Segment files in the current set.
    pub segments: u64,
    /// Bytes allocated on disk for them.
    pub allocated_bytes: u64,
    /// The manifest generation (incremented by each compaction).
    pub generation: u64,
    /// Compactions done by this handle.
    pub compactions: u64,
}

/// Where a live message's put record is.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct Loc {
    segment: u64,
    offset: u64,
    len: u32,
}

/// Where a live message's put record is: read `len` bytes at `offset` of segment file
/// [`format::segment_name`]`(segment)` and check them with [`scan::check_put`]. A
/// segment's records never move while it is in the set, and a segment that leaves it
/// (trim, compaction) is only unlinked, so a reader that opened it first can still read
/// the record (the disk space is freed when the last such reader closes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordLocation {
    /// The segment number.
    pub segment: u64,
    /// Offset of the record in the segment file.
    pub offset: u64,
    /// Length of the record, header included.
    pub len: u32,
    /// Where the segment's records ended when it was located: everything before was
    /// written by then (a reader may read ahead that far, never further: later appends
    /// go beyond it).
    pub data_end: u64,
}

/// The persistent messages of one queue, in a directory of segment files (see the module
/// documentation).
pub struct QueueFile<D: LogDevice> {
    dev: D,
    cfg: QueueFileConfig,
    manifest: Manifest,
    segments: BTreeMap<u64, Segment<D::File>>,
    index: BTreeMap<u64, Loc>,
    /// Live messages per segment (absent: none), so a leading segment left with none can be
    /// dropped without rewriting anything ([`QueueFile::sync`] trims).
    live_in: BTreeMap<u64, u64>,
    live_bytes: u64,
    dead_bytes: u64,
    dirty: bool,
    failed: Option<String>,
    compactions: u64,
}

impl<D: LogDevice> QueueFile<D> {
    /// Creates an empty queue file on `dev` (its directory). Fails with
    /// [`QueueFileError::AlreadyExists`] if one is there. Leftover segments of an earlier
    /// creation that crashed before its manifest was written are removed first.
    pub fn create(mut dev: D, cfg: QueueFileConfig) -> QfResult<QueueFile<D>> {
        cfg.validate()?;
        if manifest::read(&mut dev)?.is_some() {
            return Err(QueueFileError::AlreadyExists(
                manifest::MANIFEST_NAME.into(),
            ));
        }
        recover::remove_above(&mut dev, 0)?;
        let seg = segment::create(&mut dev, 1, 1, cfg.segment_size)?;
        let m = Manifest {
            generation: 1,
            first: 1,
            last: 1,
            base: 1,
            segment_size: cfg.segment_size,
        };
        manifest::write(&mut dev, &m)?;
        Ok(QueueFile {
            dev,
            cfg,
            manifest: m,
            segments: BTreeMap::from([(1, seg)]),
            index: BTreeMap::new(),
            live_in: BTreeMap::new(),
            live_bytes: 0,
            dead_bytes: 0,
            dirty: false,
            failed: None,
            compactions: 0,
        })
    }

    /// Opens and recovers an existing queue file (see [`Recovered`] for what recovery
    /// reports); [`QueueFileError::NotFound`] if there is none. Read the messages back with
    /// [`QueueFile::iter`].
    pub fn open(dev: D, cfg: QueueFileConfig) -> QfResult<(QueueFile<D>, Recovered)> {
        cfg.validate()?;
        recover::open(dev, cfg)
    }

    /// Appends a put of message `seq`. Buffered: durable after the next [`QueueFile::sync`].
    pub fn append_put(&mut self, seq: u64, payload: &[u8]) -> QfResult<()> {
        self.append_puts(&[(seq, payload)])
    }

    /// Appends puts of several messages in one write. Refused as a whole (nothing appended) if
    /// a sequence number is already live or repeated, or a payload is too large.
    pub fn append_puts<P: AsRef<[u8]>>(&mut self, msgs: &[(u64, P)]) -> QfResult<()> {
        self.check()?;
        let mut seen = HashSet::with_capacity(msgs.len());
        for (seq, p) in msgs {
            let len = p.as_ref().len();
            if len > MAX_PAYLOAD {
                return Err(QueueFileError::RecordTooLarge {
                    len,
                    max: MAX_PAYLOAD,
                });
            }
            if self.index.contains_key(seq) || !seen.insert(*seq) {
                return Err(QueueFileError::DuplicateSeq(*seq));
            }
        }
        let recs: Vec<_> = msgs
            .iter()
            .map(|(s, p)| (RecordKind::Put, *s, p.as_ref()))
            .collect();
        let locs = self.guard(|qf| qf.write_records(&recs))?;
        for ((seq, _), loc) in msgs.iter().zip(locs) {
            self.live_bytes += loc.len as u64;
            *self.live_in.entry(loc.segment).or_default() += 1;
            self.index.insert(*seq, loc);
        }
        Ok(())
    }

    /// Appends a remove of message `seq` ([`QueueFileError::UnknownSeq`] if it is not live).
    pub fn append_remove(&mut self, seq: u64) -> QfResult<()> {
        self.append_removes(&[seq])
    }

    /// Appends removes of several messages in one write; refused as a whole if one is not
    /// live or is repeated.
    pub fn append_removes(&mut self, seqs: &[u64]) -> QfResult<()> {
        self.check()?;
        let mut seen = HashSet::with_capacity(seqs.len());
        for seq in seqs {
            if !self.index.contains_key(seq) || !seen.insert(*seq) {
                return Err(QueueFileError::UnknownSeq(*seq));
            }
        }
        let recs: Vec<_> = seqs
            .iter()
            .map(|s| (RecordKind::Remove, *s, &[][..]))
            .collect();
        let locs = self.guard(|qf| qf.write_records(&recs))?;
        for (seq, loc) in seqs.iter().zip(locs) {
            if let Some(put) = self.index.remove(seq) {
                self.live_bytes -= put.len as u64;
                unlive(&mut self.live_in, put.segment);
                self.dead_bytes += put.len as u64 + loc.len as u64;
            }
        }
        Ok(())
    }

    /// Makes everything appended so far durable (fdatasync of the active segment; earlier
    /// segments were synced when the next one was started). A failure fails the queue file:
    /// fsync is never retried.
    pub fn sync(&mut self) -> QfResult<()> {
        self.check()?;
        if !self.dirty {
            return Ok(());
        }
        self.guard(|qf| {
            let last = qf.manifest.last;
            qf.seg(last)?.sync()
        })?;
        self.dirty = false;
        self.guard(|qf| qf.trim())
    }

    /// Drops leading segments (never the last) that hold no live message: the manifest
    /// moves `first` past them, then their files are removed. Only after a sync, so the
    /// removes that emptied them are durable. A queue drained in order thus gives its space
    /// back segment by segment, with nothing rewritten.
    fn trim(&mut self) -> QfResult<()> {
        let mut first = self.manifest.first;
        while first < self.manifest.last && !self.live_in.contains_key(&first) {
            first += 1;
        }
        if first == self.manifest.first {
            return Ok(());
        }
        let m = Manifest {
            first,
            ..self.manifest
        };
        manifest::write(&mut self.dev, &m)?;
        let dropped: Vec<u64> = (self.manifest.first..first).collect();
        self.manifest = m;
        for n in dropped {
            // Every record in it is dead: its puts were removed, its removes are done.
            if let Some(seg) = self.segments.remove(&n) {
                self.dead_bytes = self
                    .dead_bytes
                    .saturating_sub(seg.end.saturating_sub(SEGMENT_HEADER_LEN));
            }
            recover::remove(&mut self.dev, n)?;
        }
        Ok(())
    }

    /// The payload of live message `seq`, read from disk and verified
    /// ([`QueueFileError::UnknownSeq`] if it is not live).
    pub fn read(&mut self, seq: u64) -> QfResult<Vec<u8>> {
        let loc = *self
            .index
            .get(&seq)
            .ok_or(QueueFileError::UnknownSeq(seq))?;
        let seg = self.seg(loc.segment)?;
        scan::read_put(&mut seg.file, &seg.name, loc.offset, loc.len, seq)
    }

    /// Where live message `seq`'s record is, for reading it back without this
    /// `QueueFile` (see [`RecordLocation`]).
    pub fn locate(&self, seq: u64) -> Option<RecordLocation> {
        let l = self.index.get(&seq)?;
        Some(RecordLocation {
            segment: l.segment,
            offset: l.offset,
            len: l.len,
            data_end: self.segments.get(&l.segment)?.end,
        })
    }

    /// The segment numbers of the current set, ascending.
    pub fn segment_numbers(&self) -> impl Iterator<Item = u64> + '_ {
        self.segments.keys().copied()
    }

    /// The device (directory) the queue file lives on.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Whether message `seq` is live.
    pub fn contains(&self, seq: u64) -> bool {
        self.index.contains_key(&seq)
    }

    /// Number of live messages.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether no message is live.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The live sequence numbers, ascending.
    pub fn seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.index.keys().copied()
    }

    /// The live messages `(seq, payload)` in sequence order, each read from disk as the
    /// iterator reaches it (memory stays bounded for queues larger than memory). Records
    /// laid out in sequence order, as filing writes them, are read a megabyte at a time
    /// ([`scan::ReadAhead`]), not one read each.
    pub fn iter(&mut self) -> LiveIter<'_, D> {
        LiveIter {
            qf: self,
            next: Some(0),
            ahead: scan::ReadAhead::default(),
        }
    }

    /// Counters for status displays.
    pub fn status(&self) -> QueueFileStatus {
        QueueFileStatus {
            live_messages: self.index.len() as u64,
            live_bytes: self.live_bytes,
            dead_bytes: self.dead_bytes,
            segments: self.segments.len() as u64,
            allocated_bytes: self.segments.values().map(|s| s.size).sum(),
            generation: self.manifest.generation,
            compactions: self.compactions,
        }
    }

    /// Whether dead records exceed half the record bytes (and the configured minimum).
    pub fn needs_compaction(&self) -> bool {
        self.dead_bytes > self.live_bytes && self.dead_bytes >= self.cfg.compact_min_dead_bytes
    }

    /// Compacts if [`QueueFile::needs_compaction`]; returns whether it did.
    pub fn maybe_compact(&mut self) -> QfResult<bool> {
        if !self.needs_compaction() {
            return Ok(false);
        }
        self.compact()?;
        Ok(true)
    }

    /// The error that failed this queue file, if one did.
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    fn check(&self) -> QfResult<()> {
        match &self.failed {
            Some(why) => Err(QueueFileError::Failed(why.clone())),
            None => Ok(()),
        }
    }

    /// Runs `f`; an error fails the queue file for good.
    fn guard<T>(&mut self, f: impl FnOnce(&mut Self) -> QfResult<T>) -> QfResult<T> {
        let r = f(self);
        if let Err(e) = &r {
            self.failed = Some(e.to_string());
        }
        r
    }

    fn seg(&mut self, n: u64) -> QfResult<&mut Segment<D::File>> {
        self.segments
            .get_mut(&n)
            .ok_or_else(|| QueueFileError::corrupt(&format::segment_name(n), 0, "segment not open"))
    }

    /// Encodes and writes records at the end of the active segment, starting new segments as
    /// needed; returns where each record went.
    fn write_records(&mut self, recs: &[(RecordKind, u64, &[u8])]) -> QfResult<Vec<Loc>> {
        let mut locs = Vec::with_capacity(recs.len());
        let mut buf = Vec::new();
        for &(kind, seq, payload) in recs {
            let len = record_len(payload.len());
            let last = self.manifest.last;
            let seg = self.seg(last)?;
            if seg.end + buf.len() as u64 + len > seg.size {
                seg.append(&buf)?;
                buf.clear();
                self.roll(len)?;
            }
            let last = self.manifest.last;
            let seg = self.seg(last)?;
            locs.push(Loc {
                segment: last,
                offset: seg.end + buf.len() as u64,
                len: len as u32,
            });
            encode_record(&mut buf, kind, seq, payload);
        }
        let last = self.manifest.last;
        self.seg(last)?.append(&buf)?;
        self.dirty = true;
        Ok(locs)
    }

    /// Starts the next segment with room for a record of `needed` bytes: syncs the active one
    /// (so only the last segment ever has unsynced data), creates and syncs the new one, then
    /// names it in the manifest.
    fn roll(&mut self, needed: u64) -> QfResult<()> {
        let last = self.manifest.last;
        self.seg(last)?.sync()?;
        self.dirty = false;
        let size = self.cfg.segment_size.max(SEGMENT_HEADER_LEN + needed);
        let seg = segment::create(&mut self.dev, last + 1, self.manifest.generation, size)?;
        let m = Manifest {
            last: last + 1,
            segment_size: self.cfg.segment_size,
            ..self.manifest
        };
        manifest::write(&mut self.dev, &m)?;
        self.manifest = m;
        self.segments.insert(last + 1, seg);
        Ok(())
    }
}

impl<D: LogDevice> std::fmt::Debug for QueueFile<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueueFile")
            .field("manifest", &self.manifest)
            .field("status", &self.status())
            .field("failed", &self.failed)
            .finish()
    }
}

/// The live messages of a queue file in sequence order, read from disk one at a time
/// (see [`QueueFile::iter`]).
pub struct LiveIter<'a, D: LogDevice> {
    qf: &'a mut QueueFile<D>,
    next: Option<u64>,
    ahead: scan::ReadAhead,
}

impl<D: LogDevice> LiveIter<'_, D> {
    /// Where live message `seq` is ([`QueueFile::locate`]).
    pub fn locate(&self, seq: u64) -> Option<RecordLocation> {
        self.qf.locate(seq)
    }
}

impl<D: LogDevice> Iterator for LiveIter<'_, D> {
    type Item = QfResult<(u64, Vec<u8>)>;

    fn next(&mut self) -> Option<Self::Item> {
        let from = self.next?;
        let (&seq, &loc) = self.qf.index.range(from..).next()?;
        self.next = seq.checked_add(1);
        let seg = match self.qf.seg(loc.segment) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let at = scan::RecordAt {
            segment: loc.segment,
            offset: loc.offset,
            len: loc.len,
            data_end: seg.end,
        };
        Some(
            self.ahead
                .get(&mut seg.file, &seg.name, at, seq)
                .map(|p| (seq, p)),
        )
    }
}

/// Live messages per segment of an index.
fn live_counts(index: &BTreeMap<u64, Loc>) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    for loc in index.values() {
        *m.entry(loc.segment).or_default() += 1;
    }
    m
}

/// One message fewer is live in `segment`.
fn unlive(live_in: &mut BTreeMap<u64, u64>, segment: u64) {
    if let Some(n) = live_in.get_mut(&segment) {
        *n -= 1;
        if *n == 0 {
            live_in.remove(&segment);
        }
    }
}
