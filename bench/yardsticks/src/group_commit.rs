//! The group-commit writer: the most persistent messaging can get out of this disk.
//!
//! P producer threads each append a record (2 KiB by default) and wait until it is durable;
//! one writer thread takes everything appended so far, writes it with one `pwrite` and makes
//! it durable with one `fdatasync`, then wakes the producers it covered. This is what a
//! recovery log does with the CPU work taken out (no pages, checksums or checkpoints), so
//! its records/s bound a queue manager's durable records/s with the same concurrency, and
//! its fsyncs/s show the disk's flush rate.
//!
//! The file is preallocated (written with zeros and synced) and used circularly, as a
//! circular log reuses its extents, so no flush has to extend it. Each record starts with
//! its producer's number and sequence number, so a test can check that what was
//! acknowledged is in the file.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::cpu_time::ProcessCpu;
use crate::YardstickError;

/// Name of the log file made in [`GroupCommitConfig::dir`].
pub const FILE_NAME: &str = "group-commit.log";
/// Bytes at the start of each record: producer number (u32 LE), sequence number (u64 LE).
pub const RECORD_HEADER_LEN: usize = 12;
const FILL: u8 = 0x33;
const LATENCY_MAX_NS: u64 = 60_000_000_000;

/// One measured step.
#[derive(Clone, Debug)]
pub struct GroupCommitConfig {
    /// Directory for the log file (on the disk to measure).
    pub dir: PathBuf,
    /// Producer threads.
    pub producers: usize,
    /// Bytes per record.
    pub record: usize,
    /// Time before the measured window.
    pub warmup: Duration,
    /// The measured window.
    pub secs: Duration,
    /// Size of the circular file, bytes.
    pub file_bytes: u64,
    /// Leave the file in place afterwards (tests read it); otherwise it is removed.
    pub keep_file: bool,
}

/// What one step measured.
#[derive(Clone, Debug)]
pub struct GroupCommitResult {
    /// The step's configuration.
    pub config: GroupCommitConfig,
    /// Length of the measured window, seconds.
    pub elapsed_secs: f64,
    /// Records made durable and acknowledged in the window.
    pub records: u64,
    /// `fdatasync` calls completed in the window.
    pub syncs: u64,
    /// Bytes written in the window.
    pub bytes: u64,
    /// The largest group one flush carried, records.
    pub max_batch: u64,
    /// Append-to-durable latency of a record, µs: p50, p99.
    pub commit_us: [f64; 2],
    /// Duration of `pwrite` + `fdatasync`, µs: p50, p99.
    pub flush_us: [f64; 2],
    /// This process's CPU over the window (producers and writer).
    pub cpu: ProcessCpu,
    /// Times the writer went back to the start of the file (whole run).
    pub wraps: u64,
    /// Records acknowledged to each producer over the whole run (warm-up included).
    pub acknowledged: Vec<u64>,
}

impl GroupCommitResult {
    /// Durable records per second.
    pub fn records_per_sec(&self) -> f64 {
        self.records as f64 / self.elapsed_secs
    }

    /// `fdatasync`s per second.
    pub fn syncs_per_sec(&self) -> f64 {
        self.syncs as f64 / self.elapsed_secs
    }

    /// Records per flush on average.
    pub fn avg_batch(&self) -> f64 {
        self.records as f64 / self.syncs.max(1) as f64
    }

    /// The header of [`GroupCommitResult::table_row`].
    pub fn table_header() -> String {
        format!(
            "{:>9} {:>10} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>8} {:>6}",
            "producers",
            "recs/s",
            "MB/s",
            "syncs/s",
            "avg_batch",
            "flush_p50",
            "commit50",
            "commit99",
            "cpu_us/r",
            "cpu%"
        )
    }

    /// One row of the human-readable table.
    pub fn table_row(&self) -> String {
        format!(
            "{:>9} {:>10.0} {:>8.1} {:>8.0} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>8.2} {:>6.1}",
            self.config.producers,
            self.records_per_sec(),
            self.bytes as f64 / self.elapsed_secs / 1e6,
            self.syncs_per_sec(),
            self.avg_batch(),
            self.flush_us[0],
            self.commit_us[0],
            self.commit_us[1],
            self.cpu.total_us() as f64 / self.records.max(1) as f64,
            self.cpu.total_us() as f64 / self.elapsed_secs / 1e4,
        )
    }

    /// The machine-readable `RESULT bench=group_commit ...` line.
    pub fn result_line(&self) -> String {
        format!(
            "RESULT bench=group_commit mode=fdatasync record={} producers={} secs={:.1} \
             records={} rate={:.0} syncs_per_s={:.0} avg_batch={:.1} max_batch={} \
             commit_p50_us={:.1} commit_p99_us={:.1} sync_p50_us={:.1} sync_p99_us={:.1} \
             cpu_us_per_rec={:.2} wraps={}",
            self.config.record,
            self.config.producers,
            self.elapsed_secs,
            self.records,
            self.records_per_sec(),
            self.syncs_per_sec(),
            self.avg_batch(),
            self.max_batch,
            self.commit_us[0],
            self.commit_us[1],
            self.flush_us[0],
            self.flush_us[1],
            self.cpu.total_us() as f64 / self.records.max(1) as f64,
            self.wraps,
        )
    }
}

/// Records appended and not yet taken by the writer, and the sequence numbers that say
/// who is durable.
struct Pending {
    buffer: Vec<u8>,
    /// Records appended so far (the last one's number).
    appended: u64,
    /// Records durable so far: every record numbered up to this one.
    durable: u64,
    writer_idle: bool,
    /// Set when the run ends or the writer failed: producers stop waiting.
    closed: bool,
    failure: Option<String>,
}

struct Shared {
    pending: Mutex<Pending>,
    work: Condvar,
    durable: Condvar,
    measuring: AtomicBool,
    stop: AtomicBool,
    records: AtomicU64,
    syncs: AtomicU64,
    bytes: AtomicU64,
    max_batch: AtomicU64,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        // A panicking thread cannot leave `Pending` half-updated in a way that matters
        // for a measurement that is then reported as failed.
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Runs one step: prepares the file, starts the producers and the writer, measures.
pub fn run(config: &GroupCommitConfig) -> Result<GroupCommitResult, YardstickError> {
    if config.producers == 0 || config.record < RECORD_HEADER_LEN {
        return Err(YardstickError::Usage(format!(
            "need at least one producer and records of at least {RECORD_HEADER_LEN} bytes"
        )));
    }
    let largest_batch = (config.producers * config.record) as u64;
    if config.file_bytes < 2 * largest_batch {
        return Err(YardstickError::Usage(format!(
            "--file {} is too small for {} producers of {}-byte records (need {})",
            config.file_bytes,
            config.producers,
            config.record,
            2 * largest_batch
        )));
    }
    let path = config.dir.join(FILE_NAME);
    let file = preallocate(&path, config.file_bytes)?;
    let shared = Arc::new(Shared {
        pending: Mutex::new(Pending {
            buffer: Vec::with_capacity(2 * largest_batch as usize),
            appended: 0,
            durable: 0,
            writer_idle: false,
            closed: false,
            failure: None,
        }),
        work: Condvar::new(),
        durable: Condvar::new(),
        measuring: AtomicBool::new(false),
        stop: AtomicBool::new(false),
        records: AtomicU64::new(0),
        syncs: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        max_batch: AtomicU64::new(0),
    });
    let writer = {
        let shared = Arc::clone(&shared);
        let (record, file_bytes) = (config.record, config.file_bytes);
        std::thread::spawn(move || write_groups(&file, &shared, record, file_bytes))
    };
    let producers: Vec<_> = (0..config.producers)
        .map(|p| {
            let shared = Arc::clone(&shared);
            let record = config.record;
            std::thread::spawn(move || produce(p, record, &shared))
        })
        .collect();

    std::thread::sleep(config.warmup);
    let cpu_start = ProcessCpu::now().map_err(|e| YardstickError::io("getrusage", e))?;
    let start = Instant::now();
    shared.measuring.store(true, Ordering::SeqCst);
    std::thread::sleep(config.secs);
    shared.measuring.store(false, Ordering::SeqCst);
    let elapsed_secs = start.elapsed().as_secs_f64();
    let cpu = ProcessCpu::now()
        .map_err(|e| YardstickError::io("getrusage", e))?
        .since(&cpu_start);

    shared.stop.store(true, Ordering::SeqCst);
    let mut commit = new_histogram()?;
    let mut acknowledged = Vec::new();
    for p in producers {
        let (hist, count) = p
            .join()
            .map_err(|_| YardstickError::ThreadPanicked("producer"))?;
        commit
            .add(hist)
            .map_err(|e| YardstickError::Protocol(format!("merge histograms: {e}")))?;
        acknowledged.push(count);
    }
    {
        let mut pending = shared.lock();
        pending.closed = true;
    }
    shared.work.notify_all();
    let (flush, wraps) = writer
        .join()
        .map_err(|_| YardstickError::ThreadPanicked("writer"))??;
    if let Some(failure) = shared.lock().failure.take() {
        return Err(YardstickError::Protocol(failure));
    }
    if !config.keep_file {
        std::fs::remove_file(&path)
            .map_err(|e| YardstickError::io(format!("remove {}", path.display()), e))?;
    }
    let us = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
    Ok(GroupCommitResult {
        config: config.clone(),
        elapsed_secs,
        records: shared.records.load(Ordering::SeqCst),
        syncs: shared.syncs.load(Ordering::SeqCst),
        bytes: shared.bytes.load(Ordering::SeqCst),
        max_batch: shared.max_batch.load(Ordering::SeqCst),
        commit_us: [us(&commit, 0.5), us(&commit, 0.99)],
        flush_us: [us(&flush, 0.5), us(&flush, 0.99)],
        cpu,
        wraps,
        acknowledged,
    })
}

fn new_histogram() -> Result<Histogram<u64>, YardstickError> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, 3)
        .map_err(|e| YardstickError::Protocol(format!("histogram: {e}")))
}

fn elapsed_ns(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .clamp(1, LATENCY_MAX_NS)
}

/// Creates the file with `bytes` of zeros and makes them durable, so flushes overwrite
/// allocated blocks and never change the file's size.
fn preallocate(path: &std::path::Path, bytes: u64) -> Result<File, YardstickError> {
    let what = |step: &str| format!("{step} {}", path.display());
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| YardstickError::io(what("create"), e))?;
    let zeros = vec![0u8; 1 << 20];
    let mut left = bytes;
    while left > 0 {
        let n = left.min(zeros.len() as u64) as usize;
        file.write_all(&zeros[..n])
            .map_err(|e| YardstickError::io(what("preallocate"), e))?;
        left -= n as u64;
    }
    file.sync_all()
        .map_err(|e| YardstickError::io(what("sync"), e))?;
    Ok(file)
}

/// A producer: appends a record, waits until it is durable, repeats until the run stops.
/// Returns its commit latencies over the window and how many records it had acknowledged.
fn produce(producer: usize, record_len: usize, shared: &Shared) -> (Histogram<u64>, u64) {
    let mut latency = Histogram::new_with_bounds(1, LATENCY_MAX_NS, 3)
        .unwrap_or_else(|_| unreachable!("constant bounds are valid"));
    let mut record = vec![FILL; record_len];
    record[0..4].copy_from_slice(&u32::try_from(producer).unwrap_or(u32::MAX).to_le_bytes());
    let mut acknowledged = 0u64;
    while !shared.stop.load(Ordering::Relaxed) {
        record[4..RECORD_HEADER_LEN].copy_from_slice(&acknowledged.to_le_bytes());
        let start = Instant::now();
        let mut pending = shared.lock();
        if pending.closed {
            break;
        }
        let before = pending.appended;
        pending.buffer.extend_from_slice(&record);
        pending.appended += 1;
        let mine = pending.appended;
        debug_assert_eq!(mine, before + 1);
        debug_assert!(pending.durable < mine);
        if pending.writer_idle {
            shared.work.notify_one();
        }
        while pending.durable < mine && !pending.closed {
            pending = shared
                .durable
                .wait(pending)
                .unwrap_or_else(|p| p.into_inner());
        }
        if pending.durable < mine {
            break; // the writer failed: this record was never made durable
        }
        drop(pending);
        acknowledged += 1;
        if shared.measuring.load(Ordering::Relaxed) {
            latency.saturating_record(elapsed_ns(start));
            shared.records.fetch_add(1, Ordering::Relaxed);
        }
    }
    (latency, acknowledged)
}

/// The writer: takes every record appended so far, writes and syncs them as one group,
/// publishes the new durable number and wakes the producers. Returns its flush latencies
/// over the window and how often it wrapped.
fn write_groups(
    file: &File,
    shared: &Shared,
    record_len: usize,
    file_bytes: u64,
) -> Result<(Histogram<u64>, u64), YardstickError> {
    let mut flush_latency = new_histogram()?;
    let mut group: Vec<u8> = Vec::new();
    let mut offset = 0u64;
    let mut wraps = 0u64;
    loop {
        let upto = {
            let mut pending = shared.lock();
            while pending.buffer.is_empty() && !pending.closed {
                pending.writer_idle = true;
                pending = shared.work.wait(pending).unwrap_or_else(|p| p.into_inner());
                pending.writer_idle = false;
            }
            if pending.buffer.is_empty() {
                break;
            }
            std::mem::swap(&mut pending.buffer, &mut group);
            pending.appended
        };
        let start = Instant::now();
        if offset + group.len() as u64 > file_bytes {
            offset = 0;
            wraps += 1;
        }
        let outcome = file
            .write_all_at(&group, offset)
            .and_then(|()| file.sync_data());
        if let Err(e) = outcome {
            let mut pending = shared.lock();
            pending.failure = Some(format!("write or fdatasync of the log file: {e}"));
            pending.closed = true;
            drop(pending);
            shared.durable.notify_all();
            return Err(YardstickError::io("write or fdatasync of the log file", e));
        }
        offset += group.len() as u64;
        if shared.measuring.load(Ordering::Relaxed) {
            flush_latency.saturating_record(elapsed_ns(start));
            shared.syncs.fetch_add(1, Ordering::Relaxed);
            shared
                .bytes
                .fetch_add(group.len() as u64, Ordering::Relaxed);
            shared
                .max_batch
                .fetch_max((group.len() / record_len) as u64, Ordering::Relaxed);
        }
        group.clear();
        {
            let mut pending = shared.lock();
            debug_assert!(pending.durable < upto && upto <= pending.appended);
            pending.durable = upto;
            debug_assert!(pending.durable <= pending.appended);
        }
        shared.durable.notify_all();
    }
    Ok((flush_latency, wraps))
}

/// Reads a log file left by a run with `keep_file` and returns, per producer, the longest
/// run of sequence numbers 0, 1, 2, ... found in it (in file order). Valid only for runs
/// that did not wrap.
pub fn durable_sequences(
    path: &std::path::Path,
    record_len: usize,
    producers: usize,
) -> Result<Vec<u64>, YardstickError> {
    let bytes = std::fs::read(path)
        .map_err(|e| YardstickError::io(format!("read {}", path.display()), e))?;
    let mut next = vec![0u64; producers];
    for record in bytes.chunks_exact(record_len) {
        let mut producer = [0u8; 4];
        producer.copy_from_slice(&record[0..4]);
        let mut seq = [0u8; 8];
        seq.copy_from_slice(&record[4..RECORD_HEADER_LEN]);
        if record.iter().all(|&b| b == 0) {
            break; // the preallocated, never written rest
        }
        let p = u32::from_le_bytes(producer) as usize;
        if let Some(n) = next.get_mut(p) {
            if u64::from_le_bytes(seq) == *n {
                *n += 1;
            }
        }
    }
    Ok(next)
}
