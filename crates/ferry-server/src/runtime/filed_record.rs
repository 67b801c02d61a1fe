//! Reading a message body back from its queue file, for the persistent messages whose
//! bodies the engine left on disk beyond a queue's DefaultPQBufferSize
//! (`ferry_engine::body`).
//!
//! A [`QueueFileRecord`] names one put record of a queue file: the segment file, opened
//! read-only and shared ([`SegmentReaders`]), and the record's place in it. Reading it
//! needs nothing from the filer thread, which owns the `QueueFile`s: a segment's records
//! never move, and a segment that leaves the set (trim, compaction) is only unlinked, so
//! the shared handle still reads it. The cache drops its handle then, so the disk space
//! comes back once no message refers to the old segment any more (at most the live
//! messages' bytes once over, after a compaction).
//!
//! A read happens on the runtime thread (from the page cache while the queue is recent,
//! else from the disk): a getter draining a queue in order reads records that follow
//! each other in the segment, so each segment shares a [`ReadAhead`] that then reads a
//! megabyte at a time (never beyond what was written when the record was filed),
//! while a scattered read (a get by CorrelId) costs one `pread`. Each record is checked
//! like a restart checks it (header, sequence number, CRC-32C) and decoded with the
//! engine's put-record codec. A failure gives the getter 2102 MQRC_RESOURCE_PROBLEM
//! (2195 for a damaged record); the message stays on its queue.

use bytes::Bytes;
use ferry_engine::journal::kind;
use ferry_engine::{FiledRecord, Record};
use ferry_mqi::ReasonCode;
use ferry_store::queue_file::format::segment_name;
use ferry_store::queue_file::scan::{ReadAhead, RecordAt};
use ferry_store::{LogFile, QueueFileError, RecordLocation};
use std::collections::HashMap;
use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Read failures for the error log: records fail on the runtime thread inside engine
/// calls, where the error log is out of reach, so they are collected here and written
/// after the call ([`ReadFailures::take`]), once per message.
#[derive(Debug, Default)]
pub struct ReadFailures {
    any: AtomicBool,
    inner: Mutex<ReadFailuresInner>,
}

#[derive(Debug, Default)]
struct ReadFailuresInner {
    reported: HashSet<(Arc<str>, u64)>,
    new: Vec<(Arc<str>, String)>,
}

impl ReadFailures {
    fn push(&self, queue: &Arc<str>, seq: u64, why: String) {
        if let Ok(mut i) = self.inner.lock() {
            if i.reported.insert((queue.clone(), seq)) {
                i.new.push((queue.clone(), why));
                self.any.store(true, Ordering::Release);
            }
        }
    }

    /// The failures not yet taken, as (queue, what happened).
    pub fn take(&self) -> Vec<(Arc<str>, String)> {
        // A plain load first: this runs after every engine call, and a failure is rare.
        if !self.any.load(Ordering::Acquire) || !self.any.swap(false, Ordering::AcqRel) {
            return Vec::new();
        }
        self.inner
            .lock()
            .map(|mut i| std::mem::take(&mut i.new))
            .unwrap_or_default()
    }
}

/// A segment file open for reading, as the store's read-ahead reads it.
#[derive(Debug)]
struct ReadOnlySegment(File);

impl LogFile for ReadOnlySegment {
    fn write_at(&mut self, _: u64, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::PermissionDenied.into())
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        FileExt::read_at(&self.0, buf, offset)
    }
    fn sync_data(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn size(&mut self) -> std::io::Result<u64> {
        Ok(self.0.metadata()?.len())
    }
}

/// One segment's reader, shared by its records (only the runtime thread reads, so the
/// lock is never contended).
#[derive(Debug)]
struct SegmentReader {
    queue: Arc<str>,
    name: String,
    state: Mutex<(ReadOnlySegment, ReadAhead)>,
    failures: Arc<ReadFailures>,
}

/// One put record of a queue file, readable from any thread.
#[derive(Debug)]
pub struct QueueFileRecord {
    segment: Arc<SegmentReader>,
    seq: u64,
    at: RecordLocation,
}

impl QueueFileRecord {
    /// The message in the record, checked to be message `seq` of this queue.
    fn read(&self) -> Result<ferry_engine::LoggedMessage, ReasonCode> {
        let name = &self.segment.name;
        let failed = |e: &QueueFileError| {
            self.report(format!(
                "message {} at offset {} of {name}: {e}",
                self.seq, self.at.offset
            ));
            crate::store_errors::queue_file_error_reason(e)
        };
        let at = RecordAt {
            segment: self.at.segment,
            offset: self.at.offset,
            len: self.at.len,
            data_end: self.at.data_end,
        };
        let payload = {
            let mut state = self
                .segment
                .state
                .lock()
                .map_err(|_| ReasonCode::UnexpectedError)?;
            let (file, ahead) = &mut *state;
            ahead
                .get(file, name, at, self.seq)
                .map_err(|e| failed(&e))?
        };
        let damaged = |why: &dyn std::fmt::Display| {
            self.report(format!(
                "message {} at offset {} of {name} is damaged: {why}",
                self.seq, self.at.offset
            ));
            ReasonCode::UnexpectedError
        };
        match Record::decode(kind::PUT, &payload).map_err(|e| damaged(&e))? {
            Record::Put { queue, msg, .. }
                if *queue == *self.segment.queue && msg.seq == self.seq =>
            {
                Ok(msg)
            }
            _ => Err(damaged(&"the record belongs to another message")),
        }
    }
}

impl QueueFileRecord {
    fn report(&self, why: String) {
        let queue = &self.segment.queue;
        tracing::error!("queue '{queue}': {why}");
        self.segment.failures.push(queue, self.seq, why);
    }
}

impl FiledRecord for QueueFileRecord {
    fn read_body(&self) -> Result<Bytes, ReasonCode> {
        self.read().map(|m| m.body)
    }
}

/// Read-only handles on one queue file's segments, opened as records are handed out.
#[derive(Debug)]
pub struct SegmentReaders {
    queue: Arc<str>,
    dir: PathBuf,
    open: HashMap<u64, Arc<SegmentReader>>,
    failures: Arc<ReadFailures>,
}

impl SegmentReaders {
    /// Readers for queue `queue`'s file in `dir`, reporting read failures to `failures`.
    pub fn new(queue: &str, dir: PathBuf, failures: &Arc<ReadFailures>) -> Self {
        SegmentReaders {
            queue: queue.into(),
            dir,
            open: HashMap::new(),
            failures: failures.clone(),
        }
    }

    /// Message `seq`'s record at `at` (the segment is opened on first use).
    pub fn record(&mut self, seq: u64, at: RecordLocation) -> std::io::Result<QueueFileRecord> {
        let segment = match self.open.get(&at.segment) {
            Some(r) => r.clone(),
            None => {
                let name = segment_name(at.segment);
                let file = File::open(self.dir.join(&name))?;
                let r = Arc::new(SegmentReader {
                    queue: self.queue.clone(),
                    name,
                    state: Mutex::new((ReadOnlySegment(file), ReadAhead::default())),
                    failures: self.failures.clone(),
                });
                self.open.insert(at.segment, r.clone());
                r
            }
        };
        Ok(QueueFileRecord { segment, seq, at })
    }

    /// Forgets the handles of segments no longer in the set (`current`, ascending).
    pub fn keep_only(&mut self, current: impl Iterator<Item = u64>) {
        let current: std::collections::HashSet<u64> = current.collect();
        self.open.retain(|n, _| current.contains(n));
    }
}
