//! Entry points that run the real on-disk readers over arbitrary bytes.
//!
//! The idea: start from a *valid* recovery log or queue file, built on a [`SimDevice`] by
//! the real writers, then let the input rewrite its files — splice bytes over any part of
//! any file, resize a file, remove one — and open it again the way a restart would. Whatever
//! the bytes, recovery must return records (or messages) or a typed error: never panic,
//! never loop forever, never allocate what a length field on disk asks for before checking
//! it. Checksums would stop almost every change at the first check, so the input may ask
//! for the changed structures to be resealed (their CRCs recomputed), which lets the bytes
//! reach the checks behind them.
//!
//! The cargo-fuzz targets `log_recovery` and `queue_file_open` (crates/ferry-store/fuzz)
//! call [`recover_log`] and [`open_queue_file`]; proptests in this crate's tests call them
//! too, so stable CI covers the same paths.
//!
//! Input layout (both entry points): byte 0 chooses the starting state (see each entry
//! point), byte 1 is a seed for the simulated crash, then edits follow to the end:
//!
//! ```text
//! op byte: bits 0-1 what (0, 3: write bytes; 1: resize; 2: remove), bits 2-7 which file
//! write:   offset u16 LE, length u16 LE, then that many bytes (cut to what is left)
//! resize:  new length u16 LE (a missing file is created zero-filled)
//! remove:  nothing
//! ```

use crate::control::{CONTROL_MAGIC, CONTROL_NAME};
use crate::device::{read_exact_at, write_all_at, CrashModel, FaultPlan, LogDevice, LogFile};
use crate::format::page::{PAGE_MAGIC, PAGE_SIZE};
use crate::format::record::RECORD_HEADER_LEN;
use crate::format::{get_u32, put_u32};
use crate::queue_file::format::{
    self as qf_format, HeaderParse, RECORD_HEADER_LEN as QF_RECORD_HEADER_LEN, SEGMENT_HEADER_LEN,
    SEGMENT_MAGIC,
};
use crate::queue_file::manifest::{MANIFEST_NAME, MANIFEST_TMP_NAME};
use crate::{
    Geometry, LogConfig, LogCore, Lsn, QueueFile, QueueFileConfig, RecordKind, SimDevice,
    WriteIntegrity,
};
use std::time::Duration;

/// Extents of the starting log (the control file may claim another shape).
const LOG_EXTENTS: u32 = 3;
/// Data pages per extent of the starting log.
const LOG_FILE_PAGES: u32 = 8;
/// Segment size of the starting queue file (the smallest allowed).
const SEGMENT_SIZE: u64 = 4096;
/// Files a queue-file edit can name: the manifest, its temporary, and segments 0..=6 (the
/// starting set is 1..=3 or so; the others are leftovers recovery must clean up).
const QF_SEGMENTS: u64 = 7;

/// The bytes of a fuzz input, read front to back; reads past the end give zeros.
struct Input<'a>(&'a [u8]);

impl Input<'_> {
    fn u8(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    fn bytes(&mut self, n: usize) -> &[u8] {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The current contents of `name` (`None` if it does not exist).
fn contents(dev: &mut SimDevice, name: &str) -> Option<Vec<u8>> {
    let mut f = dev.open(name).ok()?;
    let size = f.size().ok()?;
    let mut b = vec![0u8; size as usize];
    read_exact_at(&mut f, 0, &mut b).ok()?;
    Some(b)
}

/// Replaces `name` with `bytes` (created at their length, written, synced).
fn replace(dev: &mut SimDevice, name: &str, bytes: &[u8]) {
    dev.remove(name).expect("sim remove");
    let mut f = dev.create(name, bytes.len() as u64).expect("sim create");
    write_all_at(&mut f, 0, bytes).expect("sim write");
    f.sync_data().expect("sim sync");
}

/// Applies the input's edits to the files named in `names`.
fn apply_edits(dev: &mut SimDevice, names: &[String], input: &mut Input<'_>) {
    while !input.is_empty() {
        let op = input.u8();
        let name = &names[(op >> 2) as usize % names.len()];
        match op & 3 {
            1 => {
                let len = input.u16() as usize;
                let mut b = contents(dev, name).unwrap_or_default();
                b.resize(len, 0);
                replace(dev, name, &b);
            }
            2 => dev.remove(name).expect("sim remove"),
            _ => {
                let offset = input.u16() as usize;
                let len = input.u16() as usize;
                let bytes = input.bytes(len);
                let Some(size) = contents(dev, name).map(|b| b.len()) else {
                    continue;
                };
                if size == 0 {
                    continue;
                }
                let at = offset % size;
                let n = bytes.len().min(size - at);
                dev.corrupt(name, at as u64, &bytes[..n]);
            }
        }
    }
}

/// Recomputes the CRC-32C stored at `crc_at` of `block` (computed with that field zeroed).
fn reseal(block: &mut [u8], crc_at: usize) {
    put_u32(block, crc_at, 0);
    let crc = crc32c::crc32c(block);
    put_u32(block, crc_at, crc);
}

// ---------------------------------------------------------------------------------------
// The recovery log

/// The log configuration of the starting log; `shape` bits 0-1 choose LogWriteIntegrity.
fn log_config(shape: u8) -> LogConfig {
    LogConfig {
        file_pages: LOG_FILE_PAGES,
        extents: LOG_EXTENTS,
        primary_extents: LOG_EXTENTS,
        buffer_pages: 18,
        write_integrity: match shape & 3 {
            0 => WriteIntegrity::SingleWrite,
            1 => WriteIntegrity::DoubleWrite,
            _ => WriteIntegrity::TripleWrite,
        },
        slow_io_threshold: Duration::from_secs(3600),
    }
}

fn user_kind(i: usize) -> RecordKind {
    RecordKind::user(16 + (i % 8) as u8)
}

/// Builds the starting log: records of assorted sizes (some spanning pages), flushed in
/// several batches. `shape` bit 2: a checkpoint; bit 3: enough records, checkpoints and
/// flushes to wrap the ring; bit 4: a last batch cut short by a power cut, then a crash
/// (seeded by `seed`), so the log ends in a torn flush.
fn build_log(shape: u8, seed: u8) -> (SimDevice, LogConfig) {
    let cfg = log_config(shape);
    let dev = SimDevice::new(u64::from(seed), CrashModel::default());
    let mut log = LogCore::create(dev.clone(), &cfg, "FUZZ.QM").expect("create the log");
    let sizes = [0usize, 7, 100, 3000, 5000, 24, 900];
    let rounds = if shape & 8 != 0 { 12 } else { 1 };
    for round in 0..rounds {
        let mut last = Lsn::FIRST;
        for (i, &n) in sizes.iter().enumerate() {
            let payload = vec![(round * 7 + i) as u8; n];
            last = log.append(user_kind(i), &payload).expect("append");
            if i % 3 == 2 {
                log.flush().expect("flush");
            }
        }
        if shape & 4 != 0 || rounds > 1 {
            log.checkpoint(b"checkpoint", last).expect("checkpoint");
        }
        log.flush().expect("flush");
    }
    if shape & 16 != 0 {
        for (i, &n) in sizes.iter().enumerate().take(4) {
            log.append(user_kind(i), &vec![0xC5; n]).expect("append");
        }
        dev.set_faults(FaultPlan {
            power_cut_after: Some(u64::from(seed % 8)),
            ..FaultPlan::default()
        });
        let _ = log.flush();
        drop(log);
        dev.crash();
    }
    (dev, cfg)
}

/// Recomputes the checksums of every control slot and every log page that carry their
/// magic, so edits behind the checksum are read rather than refused at once.
fn reseal_log(dev: &mut SimDevice, names: &[String]) {
    for name in names {
        let Some(mut b) = contents(dev, name) else {
            continue;
        };
        let magic = if name == CONTROL_NAME {
            CONTROL_MAGIC
        } else {
            PAGE_MAGIC
        };
        for block in b.chunks_exact_mut(PAGE_SIZE) {
            if get_u32(block, 0) == magic {
                reseal(block, 8);
            }
        }
        replace(dev, name, &b);
    }
}

/// Opens the log on `dev` and reads every record; returns how many (`None`: a typed error).
/// Panics if recovery returns more records than the files could hold (a loop).
fn read_log(dev: &SimDevice, cfg: &LogConfig, limit: usize) -> Option<usize> {
    let mut r = LogCore::open(dev.clone(), cfg).ok()?;
    let _ = (r.checkpoint_lsn(), r.restart_lsn(), r.control());
    let mut n = 0usize;
    while r.next_record().ok()?.is_some() {
        n += 1;
        assert!(
            n <= limit,
            "recovery returned more than {limit} records from files that cannot hold them"
        );
    }
    assert_eq!(r.records_read(), n as u64);
    // Resume writing where the log ended, add a record, and read the result back.
    let mut core = r.finish().ok()?;
    core.append(RecordKind::user(16), b"after recovery").ok()?;
    core.flush().ok()?;
    Some(n)
}

/// Builds a small valid log, applies the input's edits to its files (the control file and
/// extents `S0000000.LOG`..`S0000003.LOG`, one more than the log has), then recovers it,
/// reads every record, resumes it, appends, and recovers it again. Byte 0 of `data` picks
/// the starting log: bits 0-1 LogWriteIntegrity, bit 2 a checkpoint, bit 3 a wrapped ring,
/// bit 4 a torn last flush, bit 5 reseal checksums after the edits. Panics only on a bug:
/// a panic inside recovery, or more records than the files can hold.
pub fn recover_log(data: &[u8]) {
    let mut input = Input(data);
    let shape = input.u8();
    let seed = input.u8();
    let (mut dev, cfg) = build_log(shape, seed);
    let mut names = vec![CONTROL_NAME.to_string()];
    names.extend((0..=LOG_EXTENTS).map(Geometry::extent_name));
    apply_edits(&mut dev, &names, &mut input);
    if shape & 32 != 0 {
        reseal_log(&mut dev, &names);
    }
    // Every record takes at least a record header of the data the files hold.
    let bytes: usize = dev
        .file_names()
        .iter()
        .filter(|n| n.as_str() != CONTROL_NAME)
        .filter_map(|n| contents(&mut dev, n).map(|b| b.len()))
        .sum();
    let limit = bytes / RECORD_HEADER_LEN + 1;
    if read_log(&dev, &cfg, limit).is_some() {
        read_log(&dev, &cfg, limit + 1);
    }
}

// ---------------------------------------------------------------------------------------
// Queue files

fn qf_config() -> QueueFileConfig {
    QueueFileConfig {
        segment_size: SEGMENT_SIZE,
        compact_min_dead_bytes: 0,
    }
}

/// Builds the starting queue file: messages of assorted sizes over several segments (one
/// larger than a segment), some removed. `shape` bit 0: compacted; bit 1: drained at the
/// front so leading segments are trimmed; bit 2: a last batch cut short by a power cut,
/// then a crash (seeded by `seed`), so the last segment ends in a torn append.
fn build_queue_file(shape: u8, seed: u8) -> SimDevice {
    let dev = SimDevice::new(u64::from(seed), CrashModel::default());
    let mut qf = QueueFile::create(dev.clone(), qf_config()).expect("create the queue file");
    let sizes = [10usize, 0, 700, 1500, 5000, 40, 2000, 300];
    for (seq, &n) in sizes.iter().enumerate() {
        qf.append_put(seq as u64, &vec![seq as u8; n]).expect("put");
    }
    qf.append_removes(&[1, 5]).expect("remove");
    if shape & 2 != 0 {
        qf.append_removes(&[0, 2, 3]).expect("remove");
    }
    qf.sync().expect("sync");
    if shape & 1 != 0 {
        qf.compact().expect("compact");
    }
    if shape & 4 != 0 {
        qf.append_puts(&[(100u64, vec![0xC5; 900]), (101, vec![0x5C; 30])])
            .expect("put");
        qf.append_remove(4).expect("remove");
        dev.set_faults(FaultPlan {
            power_cut_after: Some(u64::from(seed % 4)),
            ..FaultPlan::default()
        });
        let _ = qf.sync();
        drop(qf);
        dev.crash();
    }
    dev
}

/// Recomputes the checksums of the manifest, of every segment header and of every record
/// whose header parses and fits in its segment, so edits behind them are read.
fn reseal_queue_file(dev: &mut SimDevice, names: &[String]) {
    for name in names {
        let Some(mut b) = contents(dev, name) else {
            continue;
        };
        if name == MANIFEST_NAME || name == MANIFEST_TMP_NAME {
            if b.len() >= 512 {
                reseal(&mut b[..512], 8);
            }
        } else if b.len() >= SEGMENT_HEADER_LEN as usize {
            if get_u32(&b, 0) == SEGMENT_MAGIC {
                reseal(&mut b[..SEGMENT_HEADER_LEN as usize], 8);
            }
            let mut off = SEGMENT_HEADER_LEN as usize;
            while off + QF_RECORD_HEADER_LEN <= b.len() {
                let HeaderParse::Record(h) = qf_format::parse_record_header(&b[off..]) else {
                    break;
                };
                let end = off + QF_RECORD_HEADER_LEN + h.payload_len;
                if end > b.len() {
                    break;
                }
                let rec = &mut b[off..end];
                put_u32(rec, 16, 0);
                let crc = crc32c::crc32c(rec);
                put_u32(rec, 16, crc);
                off = end;
            }
        }
        replace(dev, name, &b);
    }
}

/// Opens the queue file on `dev`, reads every live message, compacts it and reads them
/// again, then appends one; returns the live count (`None`: a typed error). A queue file
/// that opened must read back every message its index holds.
fn read_queue_file(dev: &SimDevice) -> Option<usize> {
    let (mut qf, _recovered) = QueueFile::open(dev.clone(), qf_config()).ok()?;
    let live = qf.len();
    let read_all = |qf: &mut QueueFile<SimDevice>| {
        let seqs: Vec<u64> = qf.seqs().collect();
        let got: Vec<u64> = qf
            .iter()
            .map(|m| match m {
                Ok((seq, _payload)) => seq,
                Err(e) => panic!("a live message of an open queue file does not read: {e}"),
            })
            .collect();
        assert_eq!(got, seqs, "iteration differs from the index");
    };
    read_all(&mut qf);
    let _ = qf.status();
    if qf.compact().is_ok() {
        assert_eq!(qf.len(), live, "compaction changed the live messages");
        read_all(&mut qf);
    }
    let next = qf.seqs().last().map_or(0, |s| s.wrapping_add(1));
    qf.append_put(next, b"after recovery").ok()?;
    qf.sync().ok()?;
    Some(live)
}

/// Builds a small valid queue file, applies the input's edits to its files (`QUEUE.MAN`,
/// `QUEUE.MAN.TMP` and segments `Q0000000.SEG`..`Q0000006.SEG`, present or not), then
/// opens it, reads every live message, compacts, appends, and opens it again. Byte 0 of
/// `data` picks the starting queue file: bit 0 compacted, bit 1 trimmed, bit 2 a torn last
/// append, bit 3 reseal checksums after the edits. Panics only on a bug: a panic inside
/// recovery, or a live message of an opened queue file that does not read back.
pub fn open_queue_file(data: &[u8]) {
    let mut input = Input(data);
    let shape = input.u8();
    let seed = input.u8();
    let mut dev = build_queue_file(shape, seed);
    let mut names = vec![MANIFEST_NAME.to_string(), MANIFEST_TMP_NAME.to_string()];
    names.extend((0..QF_SEGMENTS).map(qf_format::segment_name));
    apply_edits(&mut dev, &names, &mut input);
    if shape & 8 != 0 {
        reseal_queue_file(&mut dev, &names);
    }
    if read_queue_file(&dev).is_some() {
        read_queue_file(&dev);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzzer starts from valid states: without edits, every starting log and queue
    /// file opens, returns its records or messages, resumes, and opens again.
    #[test]
    fn every_starting_state_is_valid_and_resumes() {
        for shape in 0..32u8 {
            let (dev, cfg) = build_log(shape, 5);
            let n = read_log(&dev, &cfg, usize::MAX).expect("the starting log recovers");
            assert!(n > 0, "shape {shape}: no records");
            assert_eq!(
                read_log(&dev, &cfg, usize::MAX),
                Some(n + 1),
                "shape {shape}"
            );
        }
        for shape in 0..8u8 {
            let dev = build_queue_file(shape, 5);
            let live = read_queue_file(&dev).expect("the starting queue file opens");
            assert!(live > 0, "shape {shape}: no messages");
            assert_eq!(read_queue_file(&dev), Some(live + 1), "shape {shape}");
        }
    }

    /// Resealing an unchanged log or queue file changes nothing.
    #[test]
    fn resealing_valid_files_keeps_them_valid() {
        let (mut dev, cfg) = build_log(4, 1);
        let mut names = vec![CONTROL_NAME.to_string()];
        names.extend((0..LOG_EXTENTS).map(Geometry::extent_name));
        let n = read_log(&dev, &cfg, usize::MAX);
        reseal_log(&mut dev, &names);
        assert_eq!(read_log(&dev, &cfg, usize::MAX), n.map(|n| n + 1));
        let mut dev = build_queue_file(0, 1);
        let mut names = vec![MANIFEST_NAME.to_string()];
        names.extend((1..QF_SEGMENTS).map(qf_format::segment_name));
        let live = read_queue_file(&dev);
        reseal_queue_file(&mut dev, &names);
        assert_eq!(read_queue_file(&dev), live.map(|l| l + 1));
    }
}
