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
    let bad = |why: &str| QueueFileError::corrupt(name, offset, why);
    let h = match parse_record_header(&buf) {
        HeaderParse::Record(h) => h,
        _ => return Err(bad("no record where the index points")),
    };
    if h.kind != RecordKind::Put || h.seq != seq || RECORD_HEADER_LEN + h.payload_len != buf.len() {
        return Err(bad("the record differs from the index"));
    }
    if !record_crc_ok(&buf, &h, &buf[RECORD_HEADER_LEN..]) {
        return Err(bad("record checksum mismatch"));
    }
    buf.drain(..RECORD_HEADER_LEN);
    Ok(buf)
}
