//! The append buffer: assigns LSNs and encodes records into memory, bounded by LogBufferPages
//! and by the free space of the ring. Appending never blocks and never touches the disk.

use crate::checkpoint::{CheckpointRequest, SpaceLimits};
use crate::error::{LogError, Result};
use crate::format::record::{self, RecordKind, RECORD_HEADER_LEN};
use crate::lsn::Lsn;

/// Records taken from the buffer by the writer in one go (one flush).
#[derive(Debug)]
pub(crate) struct Batch {
    pub start: Lsn,
    pub end: Lsn,
    pub data: Vec<u8>,
    pub records: u64,
    pub checkpoint: Option<CheckpointRequest>,
}

#[derive(Debug)]
pub(crate) struct AppendBuffer {
    buf: Vec<u8>,
    spare: Vec<u8>,
    start: Lsn,
    next: Lsn,
    records: u64,
    capacity: usize,
    space: SpaceLimits,
    restart: Lsn,
    requested_restart: Lsn,
    pending_checkpoint: Option<CheckpointRequest>,
    failed: Option<String>,
}

impl AppendBuffer {
    pub fn new(next: Lsn, restart: Lsn, capacity: usize, space: SpaceLimits) -> AppendBuffer {
        AppendBuffer {
            buf: Vec::with_capacity(capacity),
            spare: Vec::with_capacity(capacity),
            start: next,
            next,
            records: 0,
            capacity,
            space,
            restart,
            requested_restart: restart,
            pending_checkpoint: None,
            failed: None,
        }
    }

    /// Whether nothing is waiting for the writer.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    pub fn next_lsn(&self) -> Lsn {
        self.next
    }

    pub fn restart(&self) -> Lsn {
        self.restart
    }

    pub fn append(&mut self, kind: RecordKind, parts: &[&[u8]], checkpoint: bool) -> Result<Lsn> {
        if let Some(m) = &self.failed {
            return Err(LogError::Failed(m.clone()));
        }
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let max = self.space.max_payload();
        if len > max {
            return Err(LogError::RecordTooLarge { len, max });
        }
        let total = RECORD_HEADER_LEN + len;
        // A record bigger than the whole buffer is admitted alone, when the buffer is empty.
        if !self.buf.is_empty() && self.buf.len() + total > self.capacity {
            return Err(LogError::BufferFull {
                buffered: self.buf.len(),
                capacity: self.capacity,
            });
        }
        let lsn = self.next;
        let end = lsn.advance(total as u64);
        if let Err(free) = self.space.check(lsn, end, self.restart, checkpoint) {
            return Err(LogError::LogFull {
                needed: total as u64,
                free,
                pinned: self.restart,
            });
        }
        record::encode(&mut self.buf, lsn, kind, parts);
        self.next = end;
        self.records += 1;
        Ok(lsn)
    }

    /// Bytes ordinary records may still take before the log is full (the checkpoint
    /// reserve excluded), measured from the head.
    pub fn room(&self) -> u64 {
        let limit = self.space.limit_page(self.restart, false);
        let limit_lsn = Lsn::from_stream(limit * crate::format::page::PAGE_DATA_LEN as u64);
        if limit_lsn > self.next {
            self.next.bytes_until(limit_lsn)
        } else {
            0
        }
    }

    pub fn checkpoint(&mut self, payload: &[u8], oldest_needed: Lsn) -> Result<Lsn> {
        if !oldest_needed.is_canonical()
            || oldest_needed > self.next
            || oldest_needed < self.requested_restart
        {
            return Err(LogError::Config(format!(
                "checkpoint: oldest needed LSN {oldest_needed} must be a record LSN between the current restart point {} and the head {}",
                self.requested_restart, self.next
            )));
        }
        let lsn = self.append(RecordKind::CHECKPOINT, &[payload], true)?;
        let req = CheckpointRequest {
            checkpoint: lsn,
            restart: oldest_needed.min(lsn),
        };
        self.requested_restart = req.restart;
        self.pending_checkpoint = Some(req);
        Ok(lsn)
    }

    pub fn take(&mut self) -> Option<Batch> {
        if self.buf.is_empty() {
            return None;
        }
        let data = std::mem::replace(&mut self.buf, std::mem::take(&mut self.spare));
        let b = Batch {
            start: self.start,
            end: self.next,
            data,
            records: self.records,
            checkpoint: self.pending_checkpoint.take(),
        };
        assert_eq!(b.start.bytes_until(b.end), b.data.len() as u64);
        self.start = self.next;
        self.records = 0;
        Some(b)
    }

    /// The writer finished with a batch: recycle its memory, apply its checkpoint.
    pub fn completed(&mut self, mut data: Vec<u8>, restart: Option<Lsn>) {
        data.clear();
        if data.capacity() >= self.spare.capacity() {
            self.spare = data;
        }
        if let Some(r) = restart {
            assert!(r >= self.restart);
            self.restart = r;
        }
    }

    pub fn fail(&mut self, message: String) {
        self.failed.get_or_insert(message);
    }

    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }
}
