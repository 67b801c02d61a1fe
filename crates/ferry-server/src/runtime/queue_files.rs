//! Queue files in the running queue manager: where persistent messages that stay on a
//! queue live, so the circular recovery log only reaches back to the last checkpoint
//! (issue 3; MQ's `qmgrs/QM1/queues/`).
//!
//! - **Layout**: `$FERRY_HOME/qmgrs/QM1/queues/<queue>/`, one `ferry-store` queue file
//!   (manifest and segment files, `docs/internals/queue-files.md`) per queue. Each record
//!   is a message in the engine's put-record encoding (`ferry_engine::journal`), so one
//!   versioned codec serves both the log and the queue files.
//! - **Start**: [`load`] opens every queue file and puts its messages back on their
//!   queues ([`QueueManager::restore_filed`]) *before* the log is replayed; a damaged file
//!   stops the start (nothing is served that might be wrong).
//! - **Checkpoints**: the runtime thread takes the engine's plan, appends its image to the
//!   log and hands the filings to the **filer thread** ([`QueueFiles::submit`]), which
//!   writes and syncs the files (OS-buffered writes, one fdatasync per file changed, as MQ
//!   writes queue files) while the queue manager goes on. The filer first waits until the
//!   log is durable up to the image ([`DurableHorizon`]): the filings show the effect of
//!   every record before it, and a queue file must never get ahead of the log (a get
//!   whose record is lost in a crash would otherwise have removed its message for good,
//!   and a put never acknowledged would appear). When it reports back
//!   ([`QueueFiles::try_done`]) the runtime appends the checkpoint record; only once
//!   that is durable may the log reuse the space before the image
//!   (`ferry_engine::checkpoint` explains why replay is exact).
//! - **Failure**: a write or sync error fails the filer for good (fsync is never retried):
//!   checkpoints stop, the log fills, persistent puts get 2102. Restart recovers.

use super::filed_record::{QueueFileRecord, ReadFailures, SegmentReaders};
use crate::error_log::ErrorLog;
use crate::messages;
use ferry_engine::journal::kind;
use ferry_engine::{FiledRecord, LoggedMessage, QueueFiling, QueueManager, Record};
use ferry_store::{FileDevice, Lsn, QueueFile, QueueFileConfig, QueueFileError};
use std::collections::BTreeMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Bytes of each queue file segment (preallocated when started): small enough that a queue
/// with a handful of lasting messages does not cost much disk, large enough that a deep
/// queue has few files.
const SEGMENT_SIZE: u64 = 8 << 20;
/// Messages restored into the engine per batch at start, and their bytes at most: the
/// decoded batch is all of a restart's memory that is not the engine's own.
const RESTORE_BATCH: usize = 4096;
const RESTORE_BATCH_BYTES: usize = 4 << 20;

/// The queue file settings used for every queue.
fn config() -> QueueFileConfig {
    QueueFileConfig {
        segment_size: SEGMENT_SIZE,
        ..QueueFileConfig::default()
    }
}

/// The directory name of queue `queue`: '/' becomes '&' and a leading '.' becomes '!'
/// (neither is a character of MQ object names, so the mapping is one to one).
pub fn dir_name(queue: &str) -> String {
    let mut s = queue.replace('/', "&");
    if s.starts_with('.') {
        s.replace_range(0..1, "!");
    }
    s
}

/// The queue a directory name stands for (the inverse of [`dir_name`]).
pub fn queue_name(dir: &str) -> String {
    let mut s = dir.replace('&', "/");
    if s.starts_with('!') {
        s.replace_range(0..1, ".");
    }
    s
}

/// What [`load`] found.
pub struct Loaded {
    /// The running queue files (filer thread started).
    pub files: QueueFiles,
    /// Messages put back on queues.
    pub messages: u64,
    /// Queue files that held messages.
    pub queues: u64,
    /// Read failures of messages whose bodies were left in the files, for the error log.
    pub read_failures: Arc<ReadFailures>,
}

/// Opens every queue file under `root` (created if missing), restores its messages into
/// `engine` and starts the filer thread. A queue file that cannot be read stops the start.
pub fn load(
    root: &Path,
    engine: &mut QueueManager,
    error_log: &mut ErrorLog,
) -> Result<Loaded, String> {
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let mut dirs: Vec<String> = std::fs::read_dir(root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .flatten()
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .collect();
    dirs.sort();
    let mut files = BTreeMap::new();
    let mut all_readers = HashMap::new();
    let failures = Arc::new(ReadFailures::default());
    let (mut messages, mut queues) = (0u64, 0u64);
    for dir in dirs {
        let queue = queue_name(&dir);
        let path = root.join(&dir);
        let device = FileDevice::new(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let (mut qf, recovered) = match QueueFile::open(device, config()) {
            Ok(r) => r,
            // No manifest: a creation that never finished; nothing in it was promised.
            Err(QueueFileError::NotFound(_)) => {
                remove_dir(&path)?;
                continue;
            }
            Err(e) => {
                return Err(format!(
                    "the queue file of queue '{queue}' cannot be used: {e}"
                ))
            }
        };
        if let Some(why) = &recovered.torn_reason {
            error_log.write(
                &messages::QUEUE_FILE_TORN,
                &[&queue, &recovered.dropped_bytes, why],
            );
        }
        let mut readers = SegmentReaders::new(&queue, path, &failures);
        let n = restore(&mut qf, &queue, &mut readers, engine)?;
        if n > 0 {
            messages += n;
            queues += 1;
        }
        readers.keep_only(qf.segment_numbers());
        files.insert(queue.clone(), qf);
        all_readers.insert(queue, readers);
    }
    Ok(Loaded {
        files: QueueFiles::start(root.to_path_buf(), files, all_readers, failures.clone()),
        read_failures: failures,
        messages,
        queues,
    })
}

/// Reads queue `queue`'s messages back onto it, each with where its record is (the
/// engine keeps the bodies of the first up to the queue's buffer, DefaultPQBufferSize,
/// and reads the others back when they are got); returns how many.
fn restore(
    qf: &mut QueueFile<FileDevice>,
    queue: &str,
    readers: &mut SegmentReaders,
    engine: &mut QueueManager,
) -> Result<u64, String> {
    type Restored = (LoggedMessage, Option<Rc<dyn FiledRecord>>);
    let mut batch: Vec<Restored> = Vec::new();
    let mut n = 0u64;
    let mut batch_bytes = 0usize;
    let mut spilled = Vec::new();
    let mut known = true;
    let mut iter = qf.iter();
    loop {
        let next = iter.next();
        let done = next.is_none();
        if let Some(r) = next {
            let (seq, payload) = r.map_err(|e| format!("queue file of queue '{queue}': {e}"))?;
            let msg = decode(queue, seq, &payload)?;
            if msg.md.is_persistent() {
                let record = iter
                    .locate(seq)
                    .and_then(|at| readers.record(seq, at).ok())
                    .map(|r| Rc::new(r) as Rc<dyn FiledRecord>);
                batch_bytes += payload.len();
                batch.push((msg, record));
            } else {
                // Spilled before the stop: non-persistent messages do not survive one.
                spilled.push(seq);
            }
        }
        if batch.len() >= RESTORE_BATCH || batch_bytes >= RESTORE_BATCH_BYTES || done {
            batch_bytes = 0;
            n += batch.len() as u64;
            // False: the queue is no longer defined; the first checkpoint removes the file.
            known &= engine.restore_filed(queue, batch.drain(..));
        }
        if done {
            break;
        }
    }
    if !spilled.is_empty() {
        qf.append_removes(&spilled)
            .and_then(|()| qf.sync())
            .map_err(|e| format!("queue file of queue '{queue}': {e}"))?;
    }
    Ok(if known { n } else { 0 })
}

/// A queue file record back into a message, checked against where it was found.
fn decode(queue: &str, seq: u64, payload: &[u8]) -> Result<LoggedMessage, String> {
    let bad = |why: String| format!("queue file of queue '{queue}', message {seq}: {why}");
    match Record::decode(kind::PUT, payload).map_err(|e| bad(e.to_string()))? {
        Record::Put {
            uow: None,
            queue: q,
            msg,
        } if q == queue && msg.seq == seq => Ok(msg),
        _ => Err(bad("the record does not belong here".into())),
    }
}

/// Removes a queue file's directory. The manifest goes first (and that is made durable):
/// a crash part-way then leaves a directory without a manifest, which the next start
/// removes (`load`), never a manifest naming segments already deleted, which it would
/// refuse as damaged.
fn remove_dir(path: &Path) -> Result<(), String> {
    let err = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let manifest = path.join(ferry_store::queue_file::manifest::MANIFEST_NAME);
    match std::fs::remove_file(&manifest) {
        Ok(()) => sync_dir(path)?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(err(&manifest, e)),
    }
    std::fs::remove_dir_all(path).map_err(|e| err(path, e))?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> Result<(), String> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("{}: {e}", dir.display()))
}

/// A finished filing: the checkpoint whose image starts at `restart` may be recorded.
#[derive(Debug)]
pub struct Filed {
    /// The restart point (first record of the checkpoint's image).
    pub restart: Lsn,
    /// Messages written.
    pub written: u64,
    /// Messages removed.
    pub removed: u64,
    /// Queue files synced.
    pub synced: u64,
    /// Per queue, the messages written and where to read each back (for
    /// [`QueueManager::bodies_filed`]).
    pub bodies: Vec<QueueWritten>,
}

/// What one job wrote to one queue's file.
#[derive(Debug)]
pub struct QueueWritten {
    /// The queue.
    pub queue: String,
    /// The messages written and where, in get order.
    pub written: Vec<FiledAt>,
    /// After a compaction: where every live message is now.
    pub moved: Vec<(u64, QueueFileRecord)>,
}

/// A message just written to its queue file, and where (sent back from the filer thread).
#[derive(Debug)]
pub struct FiledAt {
    /// Arrival number on its queue.
    pub seq: u64,
    /// Its MsgId and put time (which message it is).
    pub msg_id: ferry_mqi::MsgId,
    /// Put time, ms.
    pub put_ms: u64,
    /// Its record.
    pub record: QueueFileRecord,
}

impl FiledAt {
    /// As the engine takes it.
    pub fn into_engine(self) -> ferry_engine::FiledBody {
        ferry_engine::FiledBody {
            seq: self.seq,
            msg_id: self.msg_id,
            put_ms: self.put_ms,
            record: Rc::new(self.record),
        }
    }
}

/// Work for the filer thread.
enum Job {
    /// A checkpoint's filings (files of queues it does not name are removed).
    Checkpoint {
        filings: Vec<QueueFiling>,
        restart: Lsn,
        horizon: DurableHorizon,
    },
    /// Non-persistent messages spilled beyond DefaultQBufferSize, and spilled records to
    /// remove ([`QueueManager::spill_plan`]).
    Spill(Vec<QueueFiling>),
}

/// Where a spill's messages went, per queue.
pub type Spilled = Vec<QueueWritten>;

/// Fault injection for tests (a slow disk): `FERRY_FAULT_CHECKPOINT_DELAY_MS` makes the
/// filer take at least that long over each checkpoint's queue files. Unset in production.
fn checkpoint_delay() -> Option<Duration> {
    std::env::var("FERRY_FAULT_CHECKPOINT_DELAY_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis)
}

/// How far the recovery log is durable, as the log writer publishes it: what the filer
/// waits on before it writes a checkpoint's filings.
#[derive(Clone)]
pub struct DurableHorizon {
    /// Everything below this LSN is durable.
    pub durable: Arc<AtomicU64>,
    /// The log has failed: nothing more will become durable.
    pub failed: Arc<AtomicBool>,
}

impl DurableHorizon {
    /// How often the filer looks again while the log catches up: a checkpoint is rare
    /// and a flush takes a fraction of a millisecond to a few.
    const POLL: Duration = Duration::from_micros(200);

    /// Blocks until everything below `lsn` is durable; an error if the log failed first.
    fn wait_below(&self, lsn: Lsn) -> Result<(), String> {
        while self.durable.load(Ordering::Acquire) < lsn.0 {
            if self.failed.load(Ordering::Acquire) {
                return Err(
                    "the recovery log failed before the checkpoint's image was durable".into(),
                );
            }
            std::thread::sleep(Self::POLL);
        }
        Ok(())
    }
}

/// The runtime thread's handle on the filer thread.
pub struct QueueFiles {
    jobs: Option<mpsc::Sender<Job>>,
    results: mpsc::Receiver<Result<Filed, String>>,
    spills: mpsc::Receiver<Result<Spilled, String>>,
    /// Woken when the filer has finished a job.
    pub done: Arc<Notify>,
    /// Bytes on disk of each queue file, published by the filer after each job.
    sizes: Arc<Mutex<HashMap<String, u64>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl QueueFiles {
    fn start(
        root: PathBuf,
        files: BTreeMap<String, QueueFile<FileDevice>>,
        readers: HashMap<String, SegmentReaders>,
        failures: Arc<ReadFailures>,
    ) -> QueueFiles {
        let (jobs, job_rx) = mpsc::channel::<Job>();
        let (result_tx, results) = mpsc::channel();
        let (spill_tx, spills) = mpsc::channel();
        let done = Arc::new(Notify::new());
        let wake = done.clone();
        let sizes = Arc::new(Mutex::new(HashMap::new()));
        let published = sizes.clone();
        let thread = std::thread::Builder::new()
            .name("ferry-queue-files".into())
            .spawn(move || {
                let mut filer = Filer {
                    root,
                    files,
                    readers,
                    failures,
                    sizes: published,
                };
                filer.publish();
                let slow_disk = checkpoint_delay();
                while let Ok(job) = job_rx.recv() {
                    let (failed, sent) = match job {
                        Job::Checkpoint {
                            filings,
                            restart,
                            horizon,
                        } => {
                            if let Some(delay) = slow_disk {
                                std::thread::sleep(delay);
                            }
                            let r = horizon
                                .wait_below(restart)
                                .and_then(|()| filer.apply(filings, true));
                            let r = r.map(|(written, removed, synced, bodies)| Filed {
                                restart,
                                written,
                                removed,
                                synced,
                                bodies,
                            });
                            (r.is_err(), result_tx.send(r).is_ok())
                        }
                        Job::Spill(filings) => {
                            let r = filer.apply(filings, false).map(|(.., bodies)| bodies);
                            (r.is_err(), spill_tx.send(r).is_ok())
                        }
                    };
                    filer.publish();
                    if !sent {
                        return;
                    }
                    wake.notify_one();
                    if failed {
                        return;
                    }
                }
            })
            .ok();
        QueueFiles {
            jobs: Some(jobs),
            results,
            spills,
            done,
            sizes,
            thread,
        }
    }

    /// Bytes on disk of queue `queue`'s queue file (0 when it has none).
    pub fn file_bytes(&self, queue: &str) -> u64 {
        self.sizes
            .lock()
            .map(|m| m.get(queue).copied().unwrap_or(0))
            .unwrap_or(0)
    }

    /// Hands a checkpoint's filings to the filer thread, which writes them once the log
    /// is durable below `restart` (the checkpoint's image starts there).
    pub fn submit(
        &self,
        filings: Vec<QueueFiling>,
        restart: Lsn,
        horizon: DurableHorizon,
    ) -> Result<(), String> {
        self.send(Job::Checkpoint {
            filings,
            restart,
            horizon,
        })
    }

    /// Hands a spill of non-persistent messages to the filer thread (after any checkpoint
    /// job sent before it: records are removed only after they were written).
    pub fn submit_spill(&self, filings: Vec<QueueFiling>) -> Result<(), String> {
        self.send(Job::Spill(filings))
    }

    /// A finished spill, if one is ready.
    pub fn try_spilled(&self) -> Option<Result<Spilled, String>> {
        ready(&self.spills)
    }

    fn send(&self, job: Job) -> Result<(), String> {
        match (&self.jobs, &self.thread) {
            (Some(tx), Some(_)) => tx
                .send(job)
                .map_err(|_| "the queue file thread has stopped".to_string()),
            _ => Err("the queue file thread could not be started".into()),
        }
    }

    /// A finished checkpoint job, if one is ready.
    pub fn try_done(&self) -> Option<Result<Filed, String>> {
        ready(&self.results)
    }

    /// Waits (at most `timeout`) for the job in flight to finish.
    pub fn wait_done(&self, timeout: Duration) -> Option<Result<Filed, String>> {
        match self.results.recv_timeout(timeout) {
            Ok(r) => Some(r),
            Err(mpsc::RecvTimeoutError::Timeout) => None,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                Some(Err("the queue file thread has stopped".into()))
            }
        }
    }
}

/// A result the filer thread has sent, if one is there (its end is an error).
fn ready<T>(rx: &mpsc::Receiver<Result<T, String>>) -> Option<Result<T, String>> {
    match rx.try_recv() {
        Ok(r) => Some(r),
        Err(mpsc::TryRecvError::Empty) => None,
        Err(mpsc::TryRecvError::Disconnected) => {
            Some(Err("the queue file thread has stopped".into()))
        }
    }
}

impl Drop for QueueFiles {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The filer thread's state: every open queue file, by queue name.
struct Filer {
    root: PathBuf,
    files: BTreeMap<String, QueueFile<FileDevice>>,
    /// Read-only handles on each queue file's segments, for the records handed back.
    readers: HashMap<String, SegmentReaders>,
    /// Where the records' read failures go.
    failures: Arc<ReadFailures>,
    /// Where [`Filer::publish`] puts the files' sizes for status displays.
    sizes: Arc<Mutex<HashMap<String, u64>>>,
}

impl Filer {
    /// Publishes every queue file's size on disk.
    fn publish(&self) {
        let now: HashMap<String, u64> = self
            .files
            .iter()
            .map(|(q, f)| (q.clone(), f.status().allocated_bytes))
            .collect();
        if let Ok(mut m) = self.sizes.lock() {
            *m = now;
        }
    }

    /// Applies one checkpoint's filings (`checkpoint`: they name every recoverable queue,
    /// and the files of others go) or one spill; returns (written, removed, synced, where
    /// each message written is).
    #[allow(clippy::type_complexity)]
    fn apply(
        &mut self,
        filings: Vec<QueueFiling>,
        checkpoint: bool,
    ) -> Result<(u64, u64, u64, Vec<QueueWritten>), String> {
        let (mut written, mut removed, mut synced) = (0u64, 0u64, 0u64);
        let mut bodies = Vec::new();
        // Files of queues that no longer exist go.
        let named: std::collections::HashSet<&str> =
            filings.iter().map(|f| f.queue.as_str()).collect();
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|q| checkpoint && !named.contains(q.as_str()))
            .cloned()
            .collect();
        for q in gone {
            self.files.remove(&q);
            self.readers.remove(&q);
            remove_dir(&self.root.join(dir_name(&q)))?;
        }
        for f in filings {
            if f.is_empty() {
                continue;
            }
            let path = self.root.join(dir_name(&f.queue));
            if f.fresh {
                // The file holds an earlier incarnation's messages (or none): start over.
                self.files.remove(&f.queue);
                self.readers.remove(&f.queue);
                if path.exists() {
                    remove_dir(&path)?;
                }
            }
            let fail = |e: QueueFileError| format!("queue '{}': {e}", f.queue);
            let Some(qf) = self.file(&f.queue, &path, !f.file.is_empty())? else {
                continue;
            };
            let mut removes: Vec<u64> = f
                .unfile
                .iter()
                .copied()
                .filter(|s| qf.contains(*s))
                .collect();
            removes.extend(f.file.iter().map(|m| m.seq).filter(|s| qf.contains(*s)));
            if removes.is_empty() && f.file.is_empty() {
                continue;
            }
            qf.append_removes(&removes).map_err(fail)?;
            let puts = f.put_records();
            qf.append_puts(&puts).map_err(fail)?;
            // A spill holds only non-persistent records, which a restart discards: it needs
            // no sync (the next checkpoint's sync of this file covers its writes anyway),
            // unless it started the file afresh over an earlier incarnation's messages.
            if checkpoint || f.fresh {
                qf.sync().map_err(fail)?;
                synced += 1;
            }
            let compacted = qf.maybe_compact().map_err(fail)?;
            written += puts.len() as u64;
            removed += removes.len() as u64;
            // Where each message now is (after any compaction), for the engine to leave
            // bodies beyond the queue's buffer on disk.
            let located: Vec<_> = f
                .file
                .iter()
                .filter_map(|m| Some((m, qf.locate(m.seq)?)))
                .collect();
            // A compaction moved every live message: where to read each now, so the bodies
            // left on disk stop pinning the old segments.
            let moved: Vec<(u64, ferry_store::RecordLocation)> = if compacted {
                qf.seqs()
                    .filter_map(|seq| Some((seq, qf.locate(seq)?)))
                    .collect()
            } else {
                Vec::new()
            };
            let segments: Vec<u64> = qf.segment_numbers().collect();
            let readers = self
                .readers
                .entry(f.queue.clone())
                .or_insert_with(|| SegmentReaders::new(&f.queue, path.clone(), &self.failures));
            readers.keep_only(segments.into_iter());
            let at: Vec<FiledAt> = located
                .into_iter()
                .filter_map(|(m, loc)| {
                    Some(FiledAt {
                        seq: m.seq,
                        msg_id: m.md.msg_id,
                        put_ms: m.put_ms,
                        record: readers.record(m.seq, loc).ok()?,
                    })
                })
                .collect();
            let moved: Vec<(u64, QueueFileRecord)> = moved
                .into_iter()
                .filter_map(|(seq, loc)| Some((seq, readers.record(seq, loc).ok()?)))
                .collect();
            if !at.is_empty() || !moved.is_empty() {
                bodies.push(QueueWritten {
                    queue: f.queue.clone(),
                    written: at,
                    moved,
                });
            }
        }
        Ok((written, removed, synced, bodies))
    }

    /// Queue `queue`'s file, created when `create` (None: there is none and nothing to
    /// write, so nothing to remove either).
    fn file(
        &mut self,
        queue: &str,
        path: &Path,
        create: bool,
    ) -> Result<Option<&mut QueueFile<FileDevice>>, String> {
        if !self.files.contains_key(queue) {
            if !create {
                return Ok(None);
            }
            let device = FileDevice::new(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let qf =
                QueueFile::create(device, config()).map_err(|e| format!("queue '{queue}': {e}"))?;
            self.files.insert(queue.to_string(), qf);
            self.publish();
        }
        Ok(self.files.get_mut(queue))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directory_names_round_trip() {
        for q in [
            "Q1",
            "A/B/C",
            ".HIDDEN",
            "..",
            "SYSTEM.DEFAULT.LOCAL.QUEUE",
            "a%b_c",
        ] {
            let d = dir_name(q);
            assert!(!d.contains('/') && !d.starts_with('.'), "{d}");
            assert_eq!(queue_name(&d), q);
        }
    }

    #[test]
    fn the_filer_waits_until_the_log_is_durable_below_the_image() {
        let horizon = DurableHorizon {
            durable: Arc::new(AtomicU64::new(10)),
            failed: Arc::new(AtomicBool::new(false)),
        };
        assert!(
            horizon.wait_below(Lsn(10)).is_ok(),
            "durable below 10 already"
        );
        let publisher = horizon.clone();
        let flushed = Arc::new(AtomicBool::new(false));
        let flushed_seen = flushed.clone();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            flushed.store(true, Ordering::Release);
            publisher.durable.store(20, Ordering::Release);
        });
        assert!(horizon.wait_below(Lsn(20)).is_ok());
        assert!(
            flushed_seen.load(Ordering::Acquire),
            "the wait ended before the log was durable below the image"
        );
        writer.join().expect("the writer thread");
    }

    #[test]
    fn a_failed_log_ends_the_filers_wait_with_an_error() {
        let horizon = DurableHorizon {
            durable: Arc::new(AtomicU64::new(5)),
            failed: Arc::new(AtomicBool::new(true)),
        };
        let e = horizon.wait_below(Lsn(6)).expect_err("the log failed");
        assert!(e.contains("recovery log failed"), "{e}");
    }
}
