//! Opening a queue file after a clean stop or a crash.
//!
//! 1. Read the manifest: it names the generation and the segment range of the current set.
//! 2. Remove leftovers outside that range: segments above it (an interrupted roll or
//!    compaction; removed from the top down so an interrupted removal leaves a contiguous run
//!    for the next open) and below it (the old set of a compaction that switched but had not
//!    finished deleting; removed from the bottom up), and a temporary manifest.
//! 3. Scan every segment of the set in order, applying puts and removes to the index. A damaged
//!    record, a non-zero tail or an inconsistent record (a put of a live message, a remove of an
//!    unknown one — unless the set was trimmed, see the manifest's `base`) in any segment but
//!    the last is corruption: that data was synced. In the last
//!    segment the first bad record ends the data: the bytes from there to the last non-zero
//!    byte are a torn tail of unsynced appends; they are zeroed and synced before the queue file
//!    accepts appends (otherwise a stale record left beyond a shorter new one could later be
//!    read as part of the file).

use super::error::{QfResult, QueueFileError};
use super::format::{segment_name, RecordKind};
use super::manifest::{self, MANIFEST_NAME, MANIFEST_TMP_NAME};
use super::scan::scan_segment;
use super::segment::{self, Segment};
use super::{Loc, QueueFile, QueueFileConfig};
use crate::device::{write_all_at, LogDevice, LogFile};
use std::collections::BTreeMap;

/// What recovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recovered {
    /// Records read (puts and removes).
    pub records: u64,
    /// Bytes of the torn tail of the last segment that were dropped (zeroed).
    pub dropped_bytes: u64,
    /// Why the tail was dropped (what was wrong with the first bad record), if one was.
    pub torn_reason: Option<String>,
    /// Leftover segment files (of an interrupted roll, compaction or creation) removed.
    pub leftovers_removed: u64,
}

/// Removes the contiguous run of segment files above `last`, from the top down.
pub(super) fn remove_above<D: LogDevice>(dev: &mut D, last: u64) -> QfResult<u64> {
    let mut top = last;
    while exists(dev, top + 1)? {
        top += 1;
    }
    for n in (last + 1..=top).rev() {
        remove(dev, n)?;
    }
    Ok(top - last)
}

/// Removes the contiguous run of segment files below `first`, from the bottom up.
fn remove_below<D: LogDevice>(dev: &mut D, first: u64) -> QfResult<u64> {
    let mut bottom = first;
    while bottom > 1 && exists(dev, bottom - 1)? {
        bottom -= 1;
    }
    for n in bottom..first {
        remove(dev, n)?;
    }
    Ok(first - bottom)
}

fn exists<D: LogDevice>(dev: &mut D, n: u64) -> QfResult<bool> {
    let name = segment_name(n);
    dev.exists(&name)
        .map_err(|e| QueueFileError::io("stat", &name, e))
}

pub(super) fn remove<D: LogDevice>(dev: &mut D, n: u64) -> QfResult<()> {
    let name = segment_name(n);
    dev.remove(&name)
        .map_err(|e| QueueFileError::io("remove", &name, e))
}

pub(super) fn open<D: LogDevice>(
    mut dev: D,
    cfg: QueueFileConfig,
) -> QfResult<(QueueFile<D>, Recovered)> {
    let m = manifest::read(&mut dev)?
        .ok_or_else(|| QueueFileError::NotFound(MANIFEST_NAME.to_string()))?;
    let mut rec = Recovered::default();
    dev.remove(MANIFEST_TMP_NAME)
        .map_err(|e| QueueFileError::io("remove", MANIFEST_TMP_NAME, e))?;
    rec.leftovers_removed += remove_above(&mut dev, m.last)?;
    rec.leftovers_removed += remove_below(&mut dev, m.first)?;

    let mut segments = BTreeMap::new();
    let mut index: BTreeMap<u64, Loc> = BTreeMap::new();
    let (mut live_bytes, mut dead_bytes) = (0u64, 0u64);
    let trimmed = m.base < m.first;
    for n in m.first..=m.last {
        let mut seg = segment::open(&mut dev, n, m.generation)?;
        let last = n == m.last;
        let name = seg.name.clone();
        let end = scan_segment(&mut seg.file, &name, seg.size, last, |h, offset| {
            let len = (super::format::RECORD_HEADER_LEN + h.payload_len) as u32;
            rec.records += 1;
            match h.kind {
                RecordKind::Put => {
                    let loc = Loc {
                        segment: n,
                        offset,
                        len,
                    };
                    if index.insert(h.seq, loc).is_some() {
                        return Err(QueueFileError::corrupt(
                            &name,
                            offset,
                            format!("a second put of live message {}", h.seq),
                        ));
                    }
                    live_bytes += len as u64;
                }
                RecordKind::Remove => {
                    let Some(put) = index.remove(&h.seq) else {
                        // Its put was in a trimmed segment: expected once the set was
                        // trimmed, damage otherwise.
                        if trimmed {
                            dead_bytes += len as u64;
                            return Ok(());
                        }
                        return Err(QueueFileError::corrupt(
                            &name,
                            offset,
                            format!("a remove of message {}, which is not live", h.seq),
                        ));
                    };
                    live_bytes -= put.len as u64;
                    dead_bytes += put.len as u64 + len as u64;
                }
            }
            Ok(())
        })?;
        if end.garbage_end > end.end {
            truncate(&mut seg, end.end, end.garbage_end)?;
            rec.dropped_bytes = end.garbage_end - end.end;
            rec.torn_reason = Some(
                end.reason
                    .unwrap_or("non-zero bytes after the last record")
                    .to_string(),
            );
            tracing::warn!(
                file = %name,
                offset = end.end,
                dropped = rec.dropped_bytes,
                reason = ?rec.torn_reason,
                "queue file: torn tail after a crash dropped"
            );
        }
        seg.end = end.end;
        segments.insert(n, seg);
    }
    let qf = QueueFile {
        dev,
        cfg,
        manifest: m,
        segments,
        live_in: super::live_counts(&index),
        index,
        live_bytes,
        dead_bytes,
        dirty: false,
        failed: None,
        compactions: 0,
    };
    Ok((qf, rec))
}

/// Zeroes `from..to` of the last segment and syncs it.
fn truncate<F: LogFile>(seg: &mut Segment<F>, from: u64, to: u64) -> QfResult<()> {
    let zeros = vec![0u8; (to - from).min(1 << 20) as usize];
    let mut at = from;
    while at < to {
        let n = (to - at).min(zeros.len() as u64) as usize;
        write_all_at(&mut seg.file, at, &zeros[..n])
            .map_err(|e| QueueFileError::io("write", &seg.name, e))?;
        at += n as u64;
    }
    seg.sync()
}
