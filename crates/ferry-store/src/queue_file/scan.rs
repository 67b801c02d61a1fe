//! Reading segments back: the recovery scan of a whole segment and the read of one record.
//!
//! The scan walks records from the end of the segment header until the zeros that end the data
//! and verifies each record's CRC. What follows the last good record decides what it means:
//! zeros to the end of the file is a clean end; anything else is a torn or damaged tail. Only
//! the last segment may have one (it is the only segment with unsynced writes: a segment is
//! synced before the next one is started), so the caller truncates it there; in an earlier
//! segment it is refused as corruption. Nothing read from disk can make the scan panic: every
//! length is checked against the file before it is used.

use super::error::{QfResult, QueueFileError};
use super::format::{
    parse_record_header, record_crc_ok, HeaderParse, RecordHeader, RecordKind, RECORD_HEADER_LEN,
    SEGMENT_HEADER_LEN,
};
use crate::device::{read_exact_at, LogFile};

const CHUNK: usize = 1 << 20;

/// How a segment's data ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScanEnd {
    /// Offset just past the last good record: where the next record goes.
    pub end: u64,
    /// Offset just past the last non-zero byte at or after `end` (`end` if none): the bytes
    /// `end..garbage_end` are a torn tail to drop.
    pub garbage_end: u64,
    /// Why the record at `end` was rejected, if something non-zero was there.
    pub reason: Option<&'static str>,
}

/// A read window over a file, so the scan reads large chunks, not one record at a time.
struct Window<'a, F: LogFile> {
    f: &'a mut F,
    name: &'a str,
    buf: Vec<u8>,
    start: u64,
    size: u64,
}

impl<F: LogFile> Window<'_, F> {
    /// The bytes `off..off + len` (the caller checked they lie inside the file).
    fn get(&mut self, off: u64, len: usize) -> QfResult<&[u8]> {
        let have = off >= self.start && off + len as u64 <= self.start + self.buf.len() as u64;
        if !have {
            let n = (len.max(CHUNK) as u64).min(self.size - off) as usize;
            self.buf.resize(n, 0);
            read_exact_at(self.f, off, &mut self.buf)
                .map_err(|e| QueueFileError::io("read", self.name, e))?;
            self.start = off;
        }
        let at = (off - self.start) as usize;
        Ok(&self.buf[at..at + len])
    }
}

/// Scans the records of a segment of `size` bytes, calling `on_record(header, offset)` for each
/// good record in order. Refuses (as [`QueueFileError::Corrupt`]) a damaged or non-zero tail
/// unless `last`.
pub fn scan_segment<F: LogFile>(
    f: &mut F,
    name: &str,
    size: u64,
    last: bool,
    mut on_record: impl FnMut(RecordHeader, u64) -> QfResult<()>,
) -> QfResult<ScanEnd> {
    let mut w = Window {
        f,
        name,
        buf: Vec::new(),
        start: 0,
        size,
    };
    let mut off = SEGMENT_HEADER_LEN;
    let mut reason = None;
    while off + RECORD_HEADER_LEN as u64 <= size {
        let h = match parse_record_header(w.get(off, RECORD_HEADER_LEN)?) {
            HeaderParse::End => break,
            HeaderParse::Bad(why) => {
                reason = Some(why);
                break;
            }
            HeaderParse::Record(h) => h,
        };
        let total = RECORD_HEADER_LEN + h.payload_len;
        if off + total as u64 > size {
            reason = Some("record runs past the end of the segment");
            break;
        }
        let bytes = w.get(off, total)?;
        if !record_crc_ok(bytes, &h, &bytes[RECORD_HEADER_LEN..]) {
            reason = Some("record checksum mismatch");
            break;
        }
        on_record(h, off)?;
        off += total as u64;
    }
    let garbage_end = last_nonzero_end(&mut w, off)?;
    let end = ScanEnd {
        end: off,
        garbage_end,
        reason,
    };
    if !last && garbage_end > off {
        return Err(QueueFileError::corrupt(
            name,
            off,
            reason.unwrap_or("non-zero bytes after the last record"),
        ));
    }
    Ok(end)
}

/// Offset just past the last non-zero byte in `from..size` (`from` if all zero).
fn last_nonzero_end<F: LogFile>(w: &mut Window<'_, F>, from: u64) -> QfResult<u64> {
    let mut found = from;
    let mut at = from;
    while at < w.size {
        let n = (w.size - at).min(CHUNK as u64) as usize;
        let chunk = w.get(at, n)?;
        if let Some(i) = chunk.iter().rposition(|&b| b != 0) {
            found = at + i as u64 + 1;
        }
        at += n as u64;
    }
    Ok(found)
}

/// Reads and verifies the put record of `seq` at `offset` (`len` bytes including the header)
/// and returns its payload.
pub fn read_put<F: LogFile>(
    f: &mut F,
    name: &str,
    offset: u64,
    len: u32,
    seq: u64,
) -> QfResult<Vec<u8>> {
    let mut buf = vec![0u8; len as usize];
    read_exact_at(f, offset, &mut buf).map_err(|e| QueueFileError::io("read", name, e))?;
    check_put(&buf, name, offset, seq)
}

/// Verifies that `rec` (the bytes the index points at, header included) is the put record
/// of `seq` and returns its payload; `offset` is where it was read, for the error.
pub fn check_put(rec: &[u8], name: &str, offset: u64, seq: u64) -> QfResult<Vec<u8>> {
    let bad = |why: &str| QueueFileError::corrupt(name, offset, why);
    if rec.len() < RECORD_HEADER_LEN {
        return Err(bad("no record where the index points"));
    }
    let h = match parse_record_header(rec) {
        HeaderParse::Record(h) => h,
        _ => return Err(bad("no record where the index points")),
    };
    if h.kind != RecordKind::Put || h.seq != seq || RECORD_HEADER_LEN + h.payload_len != rec.len() {
        return Err(bad("the record differs from the index"));
    }
    if !record_crc_ok(rec, &h, &rec[RECORD_HEADER_LEN..]) {
        return Err(bad("record checksum mismatch"));
    }
    Ok(rec[RECORD_HEADER_LEN..].to_vec())
}

/// Bytes read at once when [`ReadAhead`] sees records read in file order.
pub const READ_AHEAD: usize = 1 << 20;

/// What [`ReadAhead::get`] should read: the record at `offset` (`len` bytes) of
/// segment `segment`, whose data ends at `data_end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordAt {
    /// Segment number.
    pub segment: u64,
    /// Offset of the record.
    pub offset: u64,
    /// Length of the record, header included.
    pub len: u32,
    /// End of the segment's data (nothing worth reading beyond).
    pub data_end: u64,
}

/// Sequential read-ahead for reading many records back (a restart loads every live
/// message): when a record starts where the previous one ended, the next
/// [`READ_AHEAD`] bytes are read in one call and later records are served from them;
/// a record elsewhere is read on its own, so a scattered pattern costs no more than
/// one read per record.
#[derive(Debug, Default)]
pub struct ReadAhead {
    segment: u64,
    start: u64,
    data: Vec<u8>,
    prev_end: Option<(u64, u64)>,
}

impl ReadAhead {
    /// The verified payload of put record `seq` at `at`, read from `f` (segment `name`).
    pub fn get<F: LogFile>(
        &mut self,
        f: &mut F,
        name: &str,
        at: RecordAt,
        seq: u64,
    ) -> QfResult<Vec<u8>> {
        let len = at.len as usize;
        let end = at.offset + at.len as u64;
        let sequential = self.prev_end == Some((at.segment, at.offset));
        self.prev_end = Some((at.segment, end));
        let covered = self.segment == at.segment
            && at.offset >= self.start
            && end <= self.start + self.data.len() as u64;
        if !covered {
            if !sequential {
                return read_put(f, name, at.offset, at.len, seq);
            }
            let n =
                (at.data_end.saturating_sub(at.offset) as usize).clamp(len, READ_AHEAD.max(len));
            self.data.resize(n, 0);
            if let Err(e) = read_exact_at(f, at.offset, &mut self.data) {
                self.data.clear();
                return Err(QueueFileError::io("read", name, e));
            }
            self.segment = at.segment;
            self.start = at.offset;
        }
        let from = (at.offset - self.start) as usize;
        check_put(&self.data[from..from + len], name, at.offset, seq)
    }
}
