//! `ferry perf recovery`: recovery time and deep queues (issue 3). Runs to completion,
//! no `--secs`:
//!
//! 1. **Fill**: `--messages` persistent messages of `--size` onto `--queues` queues
//!    (RECOVERY.1..N, MAXDEPTH 999,999,999), put out of syncpoint by `--putters`
//!    concurrent putters as fast as they go. The rate is reported per slice (a tenth of
//!    the messages each), so how throughput changes as the queues deepen is visible,
//!    with the queue manager's CPU and its log counters (DISPLAY QMSTATUS) per slice.
//! 2. **Restarts**, both ways, each timed from the spawn of the new process to the first
//!    MQGET that returns a message (connect and get, retried while the queue manager is
//!    not listening yet): after `kill -9` right after the fill (queue files plus log
//!    replay from the last checkpoint) and after a controlled `ferry stop` (final
//!    checkpoint: everything in the queue files), timing the stop too. `--order
//!    stop-first` swaps them. Also: resident memory after the restart, bytes on disk of
//!    the queue files and the log, the start's recovery lines from the error log.
//! 3. **Drain**: `--getters` get everything, out of syncpoint; the rate per slice as the
//!    queues empty. Every message is accounted for: each body carries its sequence
//!    number at both ends, so a loss, a duplicate, a damaged body or a message on the
//!    wrong queue makes the run invalid (exit code 3).
//!
//! Needs an embedded queue manager (the harness restarts it). All applications are
//! tasks on the harness's one current-thread runtime, as in the other workloads.

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_client::{Connection, Queue};
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, OpenOptions, ReasonCode,
};

use super::recovery_report::{DiskUsage, LogStatus, Memory, Phase, Restart, Slice, Verification};
use super::rr::put_options;
use super::sr::total_depth;
use super::step::{connect, join_until, mq, open, queue_od};
use crate::measure::{self, Sample};
use crate::progress::Progress;
use crate::recovery_log::keyword_value;
use crate::report::group_thousands;
use crate::target::{run_mqsc, QueueManager, EMBEDDED_QMGR};
use crate::PerfError;

/// Bytes a body needs at least: its sequence number at both ends.
pub const MIN_SIZE: usize = 16;
/// Slices a fill and a drain are reported in.
pub const SLICES: usize = 10;
/// How long a restart may take before the run gives up.
const RESTART_TIMEOUT: Duration = Duration::from_secs(1800);
/// Problems kept per phase.
const KEEP_PROBLEMS: usize = 5;

/// Which restart comes first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// `kill -9` right after the fill, then a controlled stop of the recovered queue
    /// manager (the default: the crash then replays the fill's last log records).
    KillFirst,
    /// A controlled stop right after the fill (its final checkpoint files the fill's
    /// tail), then `kill -9` of the restarted queue manager.
    StopFirst,
}

impl Order {
    /// `kill-first` or `stop-first`.
    pub fn name(self) -> &'static str {
        match self {
            Order::KillFirst => "kill-first",
            Order::StopFirst => "stop-first",
        }
    }
}

/// Parses `--order`.
pub fn parse_order(text: &str) -> Result<Order, String> {
    match text.trim() {
        "kill-first" => Ok(Order::KillFirst),
        "stop-first" => Ok(Order::StopFirst),
        _ => Err(format!(
            "invalid order '{text}': use kill-first (kill -9 right after the fill, then a \
             controlled stop) or stop-first"
        )),
    }
}

/// What a recovery run does.
#[derive(Clone, Debug)]
pub struct RecoveryConfig {
    /// Messages to put.
    pub messages: u64,
    /// Body size in bytes (at least [`MIN_SIZE`]).
    pub size: usize,
    /// Queues, RECOVERY.1..N.
    pub queues: usize,
    /// Concurrent putters (at least one per queue).
    pub putters: usize,
    /// Concurrent getters of the drain (at least one per queue).
    pub getters: usize,
    /// Conversations per socket.
    pub sharecnv: u32,
    /// Which restart comes first.
    pub order: Order,
    /// Evict the queue manager's files from the page cache before each restart.
    pub cold: bool,
}

/// Name of queue `i` (0-based): `RECOVERY.1`...
pub fn queue_name(i: usize) -> String {
    format!("RECOVERY.{}", i + 1)
}

/// The body of message `seq`: `size` bytes, the sequence number (little-endian) at both
/// ends (a body under [`MIN_SIZE`] bytes is filler only and never verifies).
pub fn make_body(seq: u64, size: usize) -> Bytes {
    let mut b = vec![0x5Au8; size];
    if size >= MIN_SIZE {
        b[..8].copy_from_slice(&seq.to_le_bytes());
        b[size - 8..].copy_from_slice(&seq.to_le_bytes());
    }
    Bytes::from(b)
}

/// The sequence number of a received body, if it is intact (`size` bytes, the same
/// number at both ends).
pub fn body_seq(body: &[u8], data_length: usize, size: usize) -> Option<u64> {
    if body.len() != size || data_length != size || size < MIN_SIZE {
        return None;
    }
    let head: [u8; 8] = body[..8].try_into().ok()?;
    let tail: [u8; 8] = body[size - 8..].try_into().ok()?;
    (head == tail).then(|| u64::from_le_bytes(head))
}

/// A set of sequence numbers below a bound.
#[derive(Clone, Debug)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    /// An empty set of numbers below `n`.
    pub fn new(n: u64) -> Bits {
        Bits {
            words: vec![0; usize::try_from(n.div_ceil(64)).unwrap_or(0)],
        }
    }

    /// Adds `i`; false if it was there already or is out of range.
    pub fn insert(&mut self, i: u64) -> bool {
        let Some(w) = usize::try_from(i / 64)
            .ok()
            .and_then(|w| self.words.get_mut(w))
        else {
            return false;
        };
        let bit = 1u64 << (i % 64);
        let fresh = *w & bit == 0;
        *w |= bit;
        fresh
    }

    /// Whether `i` is in the set.
    pub fn contains(&self, i: u64) -> bool {
        usize::try_from(i / 64)
            .ok()
            .and_then(|w| self.words.get(w))
            .is_some_and(|w| w & (1u64 << (i % 64)) != 0)
    }

    /// How many numbers are in `self` but not in `other`.
    pub fn count_not_in(&self, other: &Bits) -> u64 {
        self.words
            .iter()
            .enumerate()
            .map(|(i, w)| (w & !other.words.get(i).copied().unwrap_or(0)).count_ones() as u64)
            .sum()
    }
}

/// The message accounting of a run: which puts were acknowledged, which messages came
/// back, and everything wrong with them.
pub struct Ledger {
    queues: u64,
    size: usize,
    put: Bits,
    got: Bits,
    v: Verification,
}

impl Ledger {
    /// A ledger for `messages` messages of `size` bytes over `queues` queues.
    pub fn new(messages: u64, size: usize, queues: usize) -> Ledger {
        Ledger {
            queues: queues as u64,
            size,
            put: Bits::new(messages),
            got: Bits::new(messages),
            v: Verification::default(),
        }
    }

    /// Message `seq`'s put was acknowledged.
    pub fn put(&mut self, seq: u64) {
        if self.put.insert(seq) {
            self.v.put += 1;
        }
    }

    /// A message was got from queue `queue` (0-based); returns what was wrong with it.
    pub fn got(&mut self, queue: usize, body: &[u8], data_length: usize) -> Option<String> {
        self.v.got += 1;
        let Some(seq) = body_seq(body, data_length, self.size) else {
            self.v.corrupt += 1;
            return Some(format!(
                "a damaged body ({data_length} bytes) on {}",
                queue_name(queue)
            ));
        };
        if seq % self.queues != queue as u64 {
            self.v.wrong_queue += 1;
            return Some(format!("message {seq} got from {}", queue_name(queue)));
        }
        if !self.put.contains(seq) {
            self.v.unexpected += 1;
            return Some(format!("message {seq} was never acknowledged"));
        }
        if !self.got.insert(seq) {
            self.v.duplicates += 1;
            return Some(format!("message {seq} got twice"));
        }
        None
    }

    /// Messages got by a restart probe (counted in `got` too).
    pub fn count_probe(&mut self) {
        self.v.got_by_probes += 1;
    }

    /// The accounting, with the acknowledged puts never got counted as missing.
    pub fn finish(&self, left_on_queues: Option<u64>) -> Verification {
        Verification {
            missing: self.put.count_not_in(&self.got),
            left_on_queues,
            ..self.v.clone()
        }
    }

    /// Acknowledged puts so far.
    pub fn acknowledged(&self) -> u64 {
        self.v.put
    }

    /// Messages got so far.
    pub fn got_count(&self) -> u64 {
        self.v.got
    }
}

/// Counts a phase's messages and takes a sample at each slice boundary (one thread, so
/// plain cells).
struct Slicer {
    bounds: Vec<u64>,
    done: Cell<u64>,
    errors: Cell<u64>,
    marks: RefCell<Vec<Sample>>,
    problems: RefCell<Vec<String>>,
    pid: Option<u32>,
}

impl Slicer {
    fn new(total: u64, pid: Option<u32>) -> Slicer {
        let mut bounds: Vec<u64> = (1..=SLICES as u64)
            .map(|k| total * k / SLICES as u64)
            .collect();
        bounds.dedup();
        bounds.retain(|b| *b > 0);
        Slicer {
            bounds,
            done: Cell::new(0),
            errors: Cell::new(0),
            marks: RefCell::new(vec![Sample::take(0, pid.as_slice())]),
            problems: RefCell::new(Vec::new()),
            pid,
        }
    }

    fn count(&self) {
        let d = self.done.get() + 1;
        self.done.set(d);
        let k = self.marks.borrow().len() - 1;
        if self.bounds.get(k).is_some_and(|b| d >= *b) {
            self.marks
                .borrow_mut()
                .push(Sample::take(d, self.pid.as_slice()));
        }
    }

    fn problem(&self, p: String) {
        let mut ps = self.problems.borrow_mut();
        if ps.len() < KEEP_PROBLEMS {
            ps.push(p);
        }
    }

    fn error(&self, p: String) {
        self.errors.set(self.errors.get() + 1);
        self.problem(p);
    }

    /// The phase: whole and in slices, as the depth went from `start_depth` up (fill) or
    /// down (drain). `logs[i]` is the log status read at mark `i`.
    fn phase(&self, start_depth: u64, fill: bool, logs: &[Option<LogStatus>]) -> Phase {
        let mut marks = self.marks.borrow().clone();
        if marks
            .last()
            .is_some_and(|m| m.round_trips < self.done.get())
        {
            marks.push(Sample::take(self.done.get(), self.pid.as_slice()));
        }
        let (tps, cpus) = (measure::clock_ticks_per_sec(), measure::online_cpus());
        let depth = |n: u64| {
            if fill {
                start_depth + n
            } else {
                start_depth.saturating_sub(n)
            }
        };
        let slices = marks
            .windows(2)
            .enumerate()
            .map(|(i, w)| {
                let f = measure::window(&w[0], &w[1], tps, cpus);
                let (la, lb) = (
                    logs.get(i).cloned().flatten(),
                    logs.get(i + 1).cloned().flatten(),
                );
                let log = la.zip(lb);
                Slice {
                    depth_from: depth(w[0].round_trips),
                    depth_to: depth(w[1].round_trips),
                    elapsed_secs: f.elapsed_secs,
                    rate: f.rate,
                    server_cpu_pct: f.server_cpu_pct,
                    log_mb_per_sec: log.as_ref().and_then(|(a, b)| {
                        (f.elapsed_secs > 0.0)
                            .then(|| b.bytes.saturating_sub(a.bytes) as f64 / 1e6 / f.elapsed_secs)
                    }),
                    flushes_per_msg: log.as_ref().and_then(|(a, b)| {
                        (f.round_trips > 0).then(|| {
                            b.flushes.saturating_sub(a.flushes) as f64 / f.round_trips as f64
                        })
                    }),
                    checkpoints: log
                        .as_ref()
                        .and_then(|(a, b)| Some(b.checkpoints?.saturating_sub(a.checkpoints?))),
                    log_in_use_pct: log.as_ref().and_then(|(_, b)| b.in_use_pct),
                }
            })
            .collect();
        let (first, last) = (marks.first(), marks.last());
        let elapsed = match (first, last) {
            (Some(a), Some(b)) => b.at.saturating_duration_since(a.at).as_secs_f64(),
            _ => 0.0,
        };
        Phase {
            messages: self.done.get(),
            errors: self.errors.get(),
            elapsed_secs: elapsed,
            rate: measure::rate(self.done.get(), elapsed),
            slices,
            problems: self.problems.borrow().clone(),
        }
    }
}

/// The log's counters and ring use from `DISPLAY QMSTATUS ALL`.
pub async fn read_log_status(admin: &Connection) -> Result<LogStatus, PerfError> {
    let lines = run_mqsc(admin, "DISPLAY QMSTATUS ALL").await?;
    Ok(parse_log_status(&lines))
}

/// The counters out of `DISPLAY QMSTATUS ALL` lines (missing or bad values are 0 or
/// `None`).
pub fn parse_log_status(lines: &[String]) -> LogStatus {
    let num = |k: &str| keyword_value(lines, k).and_then(|v| v.parse::<u64>().ok());
    LogStatus {
        bytes: num("LOGBYTES").unwrap_or(0),
        records: num("LOGRECS").unwrap_or(0),
        flushes: num("LOGFLUSH").unwrap_or(0),
        checkpoints: num("LOGCHKPT"),
        in_use_pct: keyword_value(lines, "LOGINUSE").and_then(|v| v.parse::<f64>().ok()),
    }
}

/// Reads the log status at every new slice mark until `done` is set; one entry per mark.
async fn log_monitor(
    admin: Rc<Connection>,
    slicer: Rc<Slicer>,
    done: Rc<Cell<bool>>,
) -> Vec<Option<LogStatus>> {
    let mut logs = Vec::new();
    loop {
        let marks = slicer.marks.borrow().len();
        while logs.len() < marks {
            logs.push(read_log_status(&admin).await.ok());
        }
        if done.get() {
            return logs;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Hands out the sequence numbers of queue `q`: q, q + Q, q + 2Q... below `messages`.
struct Claims {
    next: Vec<Cell<u64>>,
    queues: u64,
    messages: u64,
}

impl Claims {
    fn take(&self, q: usize) -> Option<u64> {
        let c = self.next.get(q)?;
        let seq = c.get();
        if seq >= self.messages {
            return None;
        }
        c.set(seq + self.queues);
        Some(seq)
    }
}

/// What the applications of a phase share.
struct Shared {
    size: usize,
    claims: Claims,
    slicer: Rc<Slicer>,
    ledger: Rc<RefCell<Ledger>>,
}

async fn putter(id: usize, conn: Connection, q: Queue, queue: usize, sh: Rc<Shared>) {
    let (size, slicer, ledger) = (sh.size, &sh.slicer, &sh.ledger);
    let pmo = put_options(false);
    while let Some(seq) = sh.claims.take(queue) {
        let mut md = MessageDescriptor {
            msg_type: msg_type::DATAGRAM,
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        match q.put(&mut md, &pmo, make_body(seq, size)).await {
            Ok(()) => {
                ledger.borrow_mut().put(seq);
                slicer.count();
            }
            Err(e) => {
                slicer.error(format!(
                    "putter {id}: put of message {seq} to {}: {}",
                    queue_name(queue),
                    e.reason
                ));
                break;
            }
        }
    }
    let _ = q.close(Default::default()).await;
    let _ = conn.disconnect().await;
}

fn no_wait_get() -> GetOptions {
    GetOptions {
        options: GetOptionFlags::NO_SYNCPOINT | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: 0,
        match_options: MatchOptions::empty(),
    }
}

async fn getter(id: usize, conn: Connection, q: Queue, queue: usize, sh: Rc<Shared>) {
    let (size, slicer, ledger) = (sh.size, &sh.slicer, &sh.ledger);
    let gmo = no_wait_get();
    loop {
        let mut md = MessageDescriptor::default();
        match q.get(&mut md, &gmo, size).await {
            Ok(got) => {
                if let Some(p) = ledger.borrow_mut().got(queue, &got.data, got.data_length) {
                    slicer.problem(p);
                }
                slicer.count();
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
            Err(e) => {
                slicer.error(format!(
                    "getter {id}: get from {}: {}",
                    queue_name(queue),
                    e.reason
                ));
                break;
            }
        }
    }
    let _ = q.close(Default::default()).await;
    let _ = conn.disconnect().await;
}

/// Defines RECOVERY.1..N, deep enough for the run.
pub async fn define_queues(admin: &Connection, queues: usize) -> Result<(), PerfError> {
    for i in 0..queues {
        let cmd = format!(
            "DEFINE QLOCAL({}) MAXDEPTH(999999999) REPLACE",
            queue_name(i)
        );
        run_mqsc(admin, &cmd).await?;
    }
    Ok(())
}

/// Runs a fill or a drain: `apps` applications, application `i` on queue `i % queues`.
async fn run_phase(
    qm: &QueueManager,
    cfg: &RecoveryConfig,
    fill: bool,
    total: u64,
    ledger: &Rc<RefCell<Ledger>>,
    progress: &Progress,
) -> Result<(Phase, Option<LogStatus>), PerfError> {
    let opts = qm.connect_options().sharecnv(cfg.sharecnv);
    let admin = Rc::new(connect(&qm.connect_options().sharecnv(1)).await?);
    let apps = if fill { cfg.putters } else { cfg.getters };
    let mut handles = Vec::with_capacity(apps);
    let mut opened = Vec::with_capacity(apps);
    for i in 0..apps {
        let queue = i % cfg.queues;
        let oo = if fill {
            OpenOptions::OUTPUT
        } else {
            OpenOptions::INPUT_SHARED
        };
        opened.push((i, queue, open(&opts, &queue_name(queue), oo).await?));
    }
    let slicer = Rc::new(Slicer::new(total, qm.server_pid()));
    let shared = Rc::new(Shared {
        size: cfg.size,
        claims: Claims {
            next: (0..cfg.queues as u64).map(Cell::new).collect(),
            queues: cfg.queues as u64,
            messages: cfg.messages,
        },
        slicer: slicer.clone(),
        ledger: ledger.clone(),
    });
    let done = Rc::new(Cell::new(false));
    let monitor =
        tokio::task::spawn_local(log_monitor(admin.clone(), slicer.clone(), done.clone()));
    for (i, queue, (conn, q)) in opened {
        let sh = shared.clone();
        handles.push(if fill {
            tokio::task::spawn_local(putter(i, conn, q, queue, sh))
        } else {
            tokio::task::spawn_local(getter(i, conn, q, queue, sh))
        });
    }
    let verb = if fill { "put" } else { "got" };
    while handles.iter().any(|h| !h.is_finished()) {
        progress.status(&format!(
            "{} {verb} of {}",
            group_thousands(slicer.done.get() as f64),
            group_thousands(total as f64)
        ));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    join_until(
        handles,
        tokio::time::Instant::now() + Duration::from_secs(10),
    )
    .await;
    // The final mark, if the phase ended short of its last bound.
    if slicer
        .marks
        .borrow()
        .last()
        .is_some_and(|m| m.round_trips < slicer.done.get())
    {
        let d = slicer.done.get();
        slicer
            .marks
            .borrow_mut()
            .push(Sample::take(d, slicer.pid.as_slice()));
    }
    done.set(true);
    let logs = monitor
        .await
        .map_err(|e| PerfError::Setup(format!("log monitor: {e}")))?;
    let last_log = logs.last().cloned().flatten();
    let start_depth = if fill { 0 } else { total };
    let phase = slicer.phase(start_depth, fill, &logs);
    if let Ok(a) = Rc::try_unwrap(admin) {
        let _ = a.disconnect().await;
    }
    Ok((phase, last_log))
}

/// `/proc/<pid>/status` VmRSS and VmHWM.
pub fn memory(pid: Option<u32>) -> Option<Memory> {
    let text = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    let kb = |key: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(key))?;
        line[key.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse::<u64>()
            .ok()
            .map(|k| k * 1024)
    };
    Some(Memory {
        rss_bytes: kb("VmRSS:")?,
        peak_rss_bytes: kb("VmHWM:")?,
    })
}

/// (blocks allocated in bytes, apparent bytes, files) of everything under `dir`.
pub fn dir_usage(dir: &Path) -> (u64, u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut total = (0, 0, 0);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return total;
    };
    for e in entries.flatten() {
        let Ok(md) = e.metadata() else { continue };
        if md.is_dir() {
            let (a, b, c) = dir_usage(&e.path());
            total = (total.0 + a, total.1 + b, total.2 + c);
        } else {
            total = (total.0 + md.blocks() * 512, total.1 + md.len(), total.2 + 1);
        }
    }
    total
}

/// The embedded queue manager's directory, and its log directory (qm.ini LogPath).
fn qmgr_dirs(home: &Path) -> (PathBuf, PathBuf) {
    let dir = home.join("qmgrs").join(EMBEDDED_QMGR);
    let ini = std::fs::read_to_string(dir.join("qm.ini")).unwrap_or_default();
    let log = ini
        .lines()
        .find_map(|l| l.trim().strip_prefix("LogPath="))
        .map_or_else(
            || home.join("log").join(EMBEDDED_QMGR),
            |p| PathBuf::from(p.trim()),
        );
    (dir, log)
}

/// Disk usage of the queue files and the log.
pub fn disk_usage(home: &Path) -> DiskUsage {
    let (dir, log) = qmgr_dirs(home);
    let (q_alloc, q_len, q_files) = dir_usage(&dir.join("queues"));
    DiskUsage {
        queue_files_bytes: q_alloc,
        queue_files_apparent_bytes: q_len,
        queue_files: q_files,
        log_bytes: dir_usage(&log).0,
    }
}

/// Drops every file under `dir` from the page cache (after writing back what is
/// dirty), so the next start reads from the device: only this queue manager's files,
/// nobody else's cache.
pub fn evict_page_cache(dir: &Path) {
    use std::os::fd::AsRawFd;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            evict_page_cache(&path);
        } else if let Ok(f) = std::fs::File::open(&path) {
            let _ = f.sync_data();
            // SAFETY: advice on an open descriptor we own; no memory is touched.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

fn error_log_path(home: &Path) -> PathBuf {
    qmgr_dirs(home).0.join("errors").join("FRYERR01.LOG")
}

/// The recovery lines (FRY72xx) written to the error log after byte `from`.
fn error_log_lines(home: &Path, from: u64) -> Vec<String> {
    let Ok(bytes) = std::fs::read(error_log_path(home)) else {
        return Vec::new();
    };
    let from = usize::try_from(from).unwrap_or(0).min(bytes.len());
    String::from_utf8_lossy(&bytes[from..])
        .lines()
        .filter(|l| l.contains("FRY72"))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The restart probe: connects (retrying while the queue manager is not listening)
/// and gets one message from RECOVERY.1. Returns (seconds to listening, seconds to the
/// first message) since `spawned`.
async fn probe(
    qm: &mut QueueManager,
    spawned: Instant,
    cfg: &RecoveryConfig,
    ledger: &Rc<RefCell<Ledger>>,
    problems: &mut Vec<String>,
) -> Result<(f64, f64), PerfError> {
    let opts = qm
        .connect_options()
        .sharecnv(1)
        .connect_timeout(Duration::from_secs(5));
    let conn = loop {
        qm.check_alive()?;
        match Connection::connect(&opts).await {
            Ok(c) => break c,
            Err(e) if spawned.elapsed() > RESTART_TIMEOUT => {
                return Err(PerfError::Setup(format!(
                    "the queue manager did not accept a connection within {} s of its \
                     restart: {}",
                    RESTART_TIMEOUT.as_secs(),
                    e.reason
                )))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
        }
    };
    let listening = spawned.elapsed().as_secs_f64();
    let name = queue_name(0);
    let q = conn
        .open(&queue_od(&name)?, OpenOptions::INPUT_SHARED)
        .await
        .map_err(|e| mq(&format!("open {name} after the restart"), e))?;
    let mut md = MessageDescriptor::default();
    let got = q.get(&mut md, &no_wait_get(), cfg.size).await;
    let first_get = spawned.elapsed().as_secs_f64();
    match got {
        Ok(g) => {
            let mut l = ledger.borrow_mut();
            l.count_probe();
            if let Some(p) = l.got(0, &g.data, g.data_length) {
                problems.push(format!("restart probe: {p}"));
            }
        }
        Err(e) => problems.push(format!(
            "restart probe: the first MQGET from {name} after the restart failed: {}",
            e.reason
        )),
    }
    let _ = q.close(Default::default()).await;
    let _ = conn.disconnect().await;
    Ok((listening, first_get))
}

/// How a restart is brought about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum How {
    Kill,
    Stop,
}

async fn restart(
    qm: &mut QueueManager,
    how: How,
    cfg: &RecoveryConfig,
    ledger: &Rc<RefCell<Ledger>>,
    progress: &Progress,
    problems: &mut Vec<String>,
) -> Result<Restart, PerfError> {
    let home = qm
        .home()
        .map(Path::to_path_buf)
        .ok_or_else(|| PerfError::Usage("recovery needs an embedded queue manager".into()))?;
    let stop_secs = match how {
        How::Kill => {
            progress.status("kill -9");
            qm.kill()?;
            None
        }
        How::Stop => {
            progress.status("ferry stop (controlled)");
            Some(qm.stop_controlled()?.as_secs_f64())
        }
    };
    let disk = disk_usage(&home);
    if cfg.cold {
        evict_page_cache(&home);
    }
    let log_from = std::fs::metadata(error_log_path(&home)).map_or(0, |m| m.len());
    progress.status("restarting");
    let spawned = qm.restart()?;
    let (listening_secs, first_get_secs) = probe(qm, spawned, cfg, ledger, problems).await?;
    let memory = memory(qm.server_pid());
    let admin = connect(&qm.connect_options().sharecnv(1)).await?;
    let names: Vec<String> = (0..cfg.queues).map(queue_name).collect();
    let depth = total_depth(&admin, &names).await.ok();
    let _ = admin.disconnect().await;
    let expected = {
        let l = ledger.borrow();
        l.acknowledged().saturating_sub(l.got_count())
    };
    if depth.is_some_and(|d| d != expected) {
        problems.push(format!(
            "after the restart ({}) the queues hold {} messages, not {expected}",
            how_name(how),
            depth.unwrap_or(0)
        ));
    }
    Ok(Restart {
        how: how_name(how).into(),
        stop_secs,
        disk,
        cold: cfg.cold,
        listening_secs,
        first_get_secs,
        memory,
        depth,
        error_log: error_log_lines(&home, log_from),
    })
}

fn how_name(how: How) -> &'static str {
    match how {
        How::Kill => "kill -9",
        How::Stop => "controlled stop",
    }
}

/// What a run measured, before it is dressed as a report.
pub struct Outcome {
    /// The fill.
    pub fill: Phase,
    /// The log at the end of the fill.
    pub fill_log: Option<LogStatus>,
    /// The server's memory at the end of the fill.
    pub fill_memory: Option<Memory>,
    /// The restarts, in order.
    pub restarts: Vec<Restart>,
    /// The drain.
    pub drain: Phase,
    /// The accounting.
    pub verification: Verification,
    /// Problems outside the phases (restart probes, depths).
    pub problems: Vec<String>,
}

impl Outcome {
    /// No failed call and every message accounted for.
    pub fn valid(&self) -> bool {
        self.fill.errors == 0
            && self.drain.errors == 0
            && self.problems.is_empty()
            && self.verification.ok()
            && self.fill.messages > 0
    }
}

/// Runs fill, restarts and drain against the embedded queue manager `qm` (started, not
/// yet connected to). Must run inside a `LocalSet`.
pub async fn run(
    qm: &mut QueueManager,
    cfg: &RecoveryConfig,
    progress: &Progress,
) -> Result<Outcome, PerfError> {
    let admin = qm.wait_ready().await?;
    let max = admin.max_message_length() as usize;
    if max != 0 && cfg.size > max {
        return Err(PerfError::Usage(format!(
            "--size {}: larger than the channel's MAXMSGL {max}",
            crate::args::format_size(cfg.size)
        )));
    }
    define_queues(&admin, cfg.queues).await?;
    let _ = admin.disconnect().await;
    let ledger = Rc::new(RefCell::new(Ledger::new(
        cfg.messages,
        cfg.size,
        cfg.queues,
    )));
    let mut problems = Vec::new();

    progress.step_start(&format!(
        "fill: {} x {}",
        group_thousands(cfg.messages as f64),
        crate::args::format_size(cfg.size)
    ));
    let (fill, fill_log) = run_phase(qm, cfg, true, cfg.messages, &ledger, progress).await?;
    let fill_memory = memory(qm.server_pid());
    progress.step_done(&format!(
        "fill: {} messages in {:.1} s, {} msg/s, {} errors",
        group_thousands(fill.messages as f64),
        fill.elapsed_secs,
        group_thousands(fill.rate),
        fill.errors
    ));

    let order = match cfg.order {
        Order::KillFirst => [How::Kill, How::Stop],
        Order::StopFirst => [How::Stop, How::Kill],
    };
    let mut restarts = Vec::new();
    for how in order {
        progress.step_start(&format!("restart after {}", how_name(how)));
        let r = restart(qm, how, cfg, &ledger, progress, &mut problems).await?;
        progress.step_done(&format!(
            "restart after {}: stop {}, listening after {:.2} s, first GET after {:.2} s, \
             RSS {} MB",
            r.how,
            r.stop_secs.map_or("-".into(), |s| format!("{s:.2} s")),
            r.listening_secs,
            r.first_get_secs,
            r.memory
                .map_or("-".into(), |m| super::recovery_report::mb(m.rss_bytes))
        ));
        restarts.push(r);
    }

    let remaining = {
        let l = ledger.borrow();
        l.acknowledged().saturating_sub(l.got_count())
    };
    progress.step_start(&format!("drain: {}", group_thousands(remaining as f64)));
    let (drain, _) = run_phase(qm, cfg, false, remaining, &ledger, progress).await?;
    progress.step_done(&format!(
        "drain: {} messages in {:.1} s, {} msg/s, {} errors",
        group_thousands(drain.messages as f64),
        drain.elapsed_secs,
        group_thousands(drain.rate),
        drain.errors
    ));
    let admin = connect(&qm.connect_options().sharecnv(1)).await?;
    let names: Vec<String> = (0..cfg.queues).map(queue_name).collect();
    let left = total_depth(&admin, &names).await.ok();
    let _ = admin.disconnect().await;
    let verification = ledger.borrow().finish(left);
    Ok(Outcome {
        fill,
        fill_log,
        fill_memory,
        restarts,
        drain,
        verification,
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_carry_their_sequence_number() {
        let b = make_body(123_456_789, 2048);
        assert_eq!(b.len(), 2048);
        assert_eq!(body_seq(&b, 2048, 2048), Some(123_456_789));
        assert_eq!(body_seq(&b, 4096, 2048), None, "truncated");
        let mut bad = b.to_vec();
        bad[2047] ^= 1;
        assert_eq!(body_seq(&bad, 2048, 2048), None);
        assert_eq!(body_seq(&make_body(7, 16), 16, 16), Some(7));
    }

    #[test]
    fn the_ledger_accounts_for_every_message() {
        let mut l = Ledger::new(10, 16, 2);
        for s in 0..10 {
            l.put(s);
        }
        l.put(3);
        assert_eq!(l.acknowledged(), 10);
        assert_eq!(l.got(0, &make_body(0, 16), 16), None);
        l.count_probe();
        assert!(l.got(1, &make_body(0, 16), 16).is_some(), "wrong queue");
        assert!(l.got(0, &make_body(0, 16), 16).is_some(), "duplicate");
        assert!(l.got(0, &make_body(2, 8), 8).is_some(), "corrupt");
        for s in 1..9 {
            assert_eq!(l.got((s % 2) as usize, &make_body(s, 16), 16), None);
        }
        let v = l.finish(Some(1));
        assert_eq!(
            (
                v.got,
                v.got_by_probes,
                v.duplicates,
                v.wrong_queue,
                v.corrupt,
                v.missing
            ),
            (12, 1, 1, 1, 1, 1)
        );
        assert!(!v.ok());
        let mut ok = Ledger::new(3, 16, 1);
        for s in 0..3 {
            ok.put(s);
            assert_eq!(ok.got(0, &make_body(s, 16), 16), None);
        }
        assert!(ok.finish(Some(0)).ok());
        let mut never = Ledger::new(3, 16, 1);
        assert!(never.got(0, &make_body(1, 16), 16).is_some());
        assert_eq!(never.finish(None).unexpected, 1);
    }

    #[test]
    fn slices_cover_the_phase() {
        let s = Slicer::new(95, None);
        assert_eq!(s.bounds.len(), SLICES);
        assert_eq!(s.bounds.last(), Some(&95));
        for _ in 0..95 {
            s.count();
        }
        let p = s.phase(0, true, &[]);
        assert_eq!(p.messages, 95);
        assert_eq!(p.slices.len(), SLICES);
        assert_eq!(p.slices[0].depth_from, 0);
        assert_eq!(p.slices[SLICES - 1].depth_to, 95);
        let d = Slicer::new(3, None);
        assert_eq!(d.bounds, vec![1, 2, 3], "fewer messages than slices");
        for _ in 0..3 {
            d.count();
        }
        let p = d.phase(3, false, &[]);
        assert_eq!(p.slices.last().map(|s| s.depth_to), Some(0));
    }

    #[test]
    fn status_and_options_parse() {
        let lines: Vec<String> = [
            "QMNAME(PERFQM) LOGBYTES(1000) LOGRECS(10)",
            "LOGFLUSH(5) LOGCHKPT(2) LOGINUSE(12.5)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let s = parse_log_status(&lines);
        assert_eq!((s.bytes, s.records, s.flushes), (1000, 10, 5));
        assert_eq!((s.checkpoints, s.in_use_pct), (Some(2), Some(12.5)));
        assert_eq!(parse_order("stop-first"), Ok(Order::StopFirst));
        assert!(parse_order("x").is_err());
        assert_eq!(queue_name(0), "RECOVERY.1");
        let mut b = Bits::new(130);
        assert!(b.insert(129) && !b.insert(129) && !b.insert(192));
        assert!(b.contains(129) && !b.contains(5));
    }

    #[test]
    fn memory_and_disk_of_this_process() {
        let m = memory(Some(std::process::id())).expect("own status");
        assert!(m.rss_bytes > 0 && m.peak_rss_bytes >= m.rss_bytes);
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("a/b")).expect("dirs");
        std::fs::write(dir.path().join("a/b/f"), vec![1u8; 10_000]).expect("write");
        let (alloc, len, files) = dir_usage(dir.path());
        assert_eq!((len, files), (10_000, 1));
        assert!(alloc >= 8192, "{alloc}");
        evict_page_cache(dir.path());
    }
}
