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
//! A read is one `pread` of the record on the runtime thread (from the page cache
//! while the queue is recent, else from the disk), checked like a restart checks it
//! (header, sequence number, CRC-32C) and decoded with the engine's put-record codec.
//! A failure gives the getter 2102 MQRC_RESOURCE_PROBLEM (2195 for a damaged record);
//! the message stays on its queue.

use bytes::Bytes;
use ferry_engine::journal::kind;
use ferry_engine::{FiledRecord, Record};
use ferry_mqi::ReasonCode;
use ferry_store::queue_file::format::segment_name;
use ferry_store::queue_file::scan::check_put;
use ferry_store::RecordLocation;
use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;

/// One put record of a queue file, readable from any thread.
#[derive(Debug)]
pub struct QueueFileRecord {
    queue: Arc<str>,
    file: Arc<File>,
    seq: u64,
    at: RecordLocation,
}

impl QueueFileRecord {
    /// The message in the record, checked to be message `seq` of this queue.
    fn read(&self) -> Result<ferry_engine::LoggedMessage, ReasonCode> {
        let name = segment_name(self.at.segment);
        let mut rec = vec![0u8; self.at.len as usize];
        if let Err(e) = self.file.read_exact_at(&mut rec, self.at.offset) {
            tracing::error!(
                "queue '{}': reading message {} back from {name} at offset {} failed: {e}",
                self.queue,
                self.seq,
                self.at.offset
            );
            return Err(ReasonCode::ResourceProblem);
        }
        let damaged = |why: &dyn std::fmt::Display| {
            tracing::error!(
                "queue '{}': message {} in {name} at offset {} is damaged: {why}",
                self.queue,
                self.seq,
                self.at.offset
            );
            ReasonCode::UnexpectedError
        };
        let payload = check_put(&rec, &name, self.at.offset, self.seq).map_err(|e| damaged(&e))?;
        match Record::decode(kind::PUT, &payload).map_err(|e| damaged(&e))? {
            Record::Put { queue, msg, .. } if *queue == *self.queue && msg.seq == self.seq => {
                Ok(msg)
            }
            _ => Err(damaged(&"the record belongs to another message")),
        }
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
    open: HashMap<u64, Arc<File>>,
}

impl SegmentReaders {
    /// Readers for queue `queue`'s file in `dir`.
    pub fn new(queue: &str, dir: PathBuf) -> Self {
        SegmentReaders {
            queue: queue.into(),
            dir,
            open: HashMap::new(),
        }
    }

    /// Message `seq`'s record at `at` (the segment is opened on first use).
    pub fn record(&mut self, seq: u64, at: RecordLocation) -> std::io::Result<QueueFileRecord> {
        let file = match self.open.get(&at.segment) {
            Some(f) => f.clone(),
            None => {
                let f = Arc::new(File::open(self.dir.join(segment_name(at.segment)))?);
                self.open.insert(at.segment, f.clone());
                f
            }
        };
        Ok(QueueFileRecord {
            queue: self.queue.clone(),
            file,
            seq,
            at,
        })
    }

    /// Forgets the handles of segments no longer in the set (`current`, ascending).
    pub fn keep_only(&mut self, current: impl Iterator<Item = u64>) {
        let current: std::collections::HashSet<u64> = current.collect();
        self.open.retain(|n, _| current.contains(n));
    }
}
