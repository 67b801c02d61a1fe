//! The recovery log in the running queue manager (issue 3).
//!
//! - **Create** (`ferry create`): [`create_log`] preallocates the log under the qm.ini
//!   Log stanza's LogPath.
//! - **Start**: [`open_and_recover`] opens the log, replays its records into the engine
//!   (`QueueManager::recovery`), appends the backout records recovery produced, turns
//!   engine logging on and starts the log's writer thread. The writer's callback only
//!   stores the durable LSN in an atomic and wakes the runtime thread through a
//!   `tokio::sync::Notify`: one wake-up per flush, never one per record.
//! - **Each engine call** (`Server::perform_effects`): the call's records are appended in
//!   order ([`RecoveryLog::append_records`]); replies that must be durable are held on
//!   their sockets keyed by the LSN just past the last record, and released by
//!   [`durable_task`] when a flush passes that LSN (or failed with 2102
//!   MQRC_RESOURCE_PROBLEM if the log fails).
//! - **Checkpoints**: after [`CHECKPOINT_RECORDS`] records, every [`CHECKPOINT_INTERVAL`]
//!   with records written, when half the log is in use, and at shutdown: the engine's
//!   checkpoint plan (`ferry_engine::checkpoint`) has its image appended to the log, its
//!   filings go to the queue files' thread ([`super::queue_files`]), and once they are
//!   synced a checkpoint record moves the log's restart point to the image's first
//!   record. One checkpoint at a time: the next starts only when the previous record is
//!   durable (that keeps replay exact over queue files that are ahead of it).
//! - **Slow I/O**: `take_slow_ops` feeds a rate-limited FRY6729W warning (MQ's AMQ6729W),
//!   threshold AMQ_IODELAY (µs, or ms with AMQ_IODELAY_INMS=YES), default 100 ms.

use super::filed_record::ReadFailures;
use super::queue_files::{self, QueueFiles};
use super::server::Server;
use super::socket::SocketShared;
use crate::error_log::ErrorLog;
use crate::messages;
use crate::qm_ini::LogStanza;
use ferry_engine::{Effects, LogRecord, QueueManager, Timestamp, Young};
use ferry_store::{
    FileDevice, Geometry, Log, LogConfig, LogCore, LogError, Lsn, Notice, RecordKind,
};
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// A checkpoint is taken after this many records.
pub const CHECKPOINT_RECORDS: u64 = 10_000;
/// A checkpoint is taken at least this often while records are being written.
pub const CHECKPOINT_INTERVAL: Duration = Duration::from_secs(30);
/// Slow-I/O warnings are written at most this often.
const SLOW_WARNING_EVERY: Duration = Duration::from_secs(60);
/// How long an append waits for buffer space (a full buffer empties with the next
/// flush) before the operation fails with 2102.
const BUFFER_FULL_PATIENCE: Duration = Duration::from_secs(30);
/// Default commit gather (see [`commit_gather`]).
const DEFAULT_COMMIT_GATHER: Duration = Duration::ZERO;
/// Default slow-I/O threshold when AMQ_IODELAY is not set.
const DEFAULT_IODELAY: Duration = Duration::from_millis(100);

/// Log space a persistent put must leave free beyond its own record (1 MiB, at most an
/// eighth of the ring): puts are refused first, so gets, commits and backouts (small
/// records) keep working while the log is full and consumers can drain the queues that
/// fill it.
const PUT_ROOM_MARGIN: u64 = 1024 * 1024;
/// Log space a get or commit must leave free (64 KiB, at most a 64th of the ring; a
/// commit may hand messages to waiting getters, each a small get record).
const GET_ROOM_MARGIN: u64 = 64 * 1024;

/// What a call is about to log, for the room check made before the engine runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogUse {
    /// A put that may be persistent, with its body length.
    Put(usize),
    /// A get, commit or disconnect: small records only.
    Small,
}

/// A record's header in the log (`docs/internals/log.md`).
const RECORD_OVERHEAD: u64 = 24;

/// The name of the log's control file (its presence means a complete log exists).
const CONTROL_FILE: &str = "ferrylog.ctl";

/// The slow-I/O threshold from AMQ_IODELAY (microseconds; milliseconds when
/// AMQ_IODELAY_INMS=YES); the default when unset or not a number.
pub fn iodelay_threshold() -> Duration {
    iodelay_threshold_of(
        std::env::var("AMQ_IODELAY").ok().as_deref(),
        std::env::var("AMQ_IODELAY_INMS").ok().as_deref(),
    )
}

/// The slow-I/O threshold given the values of AMQ_IODELAY and AMQ_IODELAY_INMS.
fn iodelay_threshold_of(delay: Option<&str>, in_ms: Option<&str>) -> Duration {
    let Some(n) = delay.and_then(|v| v.trim().parse::<u64>().ok()) else {
        return DEFAULT_IODELAY;
    };
    if in_ms.is_some_and(|v| v.trim().eq_ignore_ascii_case("YES")) {
        Duration::from_millis(n)
    } else {
        Duration::from_micros(n)
    }
}

/// How long the log writer, woken from idle, lets records gather before flushing
/// (`ferry_store::Log::start_with_gather`): FERRY_LOG_GATHER_US microseconds, default
/// [`DEFAULT_COMMIT_GATHER`]; 0 turns it off.
pub fn commit_gather() -> Duration {
    std::env::var("FERRY_LOG_GATHER_US")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(DEFAULT_COMMIT_GATHER, Duration::from_micros)
}

/// The log configuration of a Log stanza (LINEAR is refused with a clear message).
pub fn config_of(stanza: &LogStanza) -> Result<LogConfig, LogError> {
    let mut c = LogConfig::from_stanza(
        stanza.primary_files,
        stanza.secondary_files,
        stanza.file_pages,
        stanza.buffer_pages,
        &stanza.log_type,
        &stanza.write_integrity,
    )?;
    c.slow_io_threshold = iodelay_threshold();
    Ok(c)
}

fn device(stanza: &LogStanza) -> Result<FileDevice, LogError> {
    FileDevice::new(&stanza.path)
        .map_err(|e| LogError::Config(format!("LogPath {} cannot be used: {e}", stanza.path)))
}

/// Creates queue manager `name`'s recovery log (`ferry create`).
pub fn create_log(stanza: &LogStanza, name: &str) -> Result<(), LogError> {
    let config = config_of(stanza)?;
    LogCore::create(device(stanza)?, &config, name).map(drop)
}

/// Why a queue manager whose log control file is missing does not start. The log is made
/// with the queue manager (`ferry create`); making a new one at start would silently drop
/// every persistent message logged since the last checkpoint (MQ refuses too: AMQ7017).
fn missing_control_file(control: &std::path::Path) -> String {
    let dir = control.parent().unwrap_or(control);
    let extents = std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter(|e| Geometry::is_extent_name(&e.file_name().to_string_lossy()))
            .count()
    });
    let found = match extents {
        0 => "and LogPath holds no log files".to_string(),
        n => format!("but LogPath holds {n} log files"),
    };
    format!(
        "the log control file {} does not exist, {found}. The log is created with the queue \
         manager and is never made anew at start, because that would lose the persistent \
         messages the old log holds: correct LogPath in qm.ini, or restore the log directory \
         from a backup",
        control.display()
    )
}

/// The log kind of an engine record (the engine's kinds start at 16, `journal::kind`).
fn user_kind(kind: u8) -> Result<RecordKind, LogError> {
    if kind < RecordKind::FIRST_USER {
        return Err(LogError::Failed(format!(
            "the engine produced log record kind {kind}, which the log reserves"
        )));
    }
    Ok(RecordKind::user(kind))
}

/// A connection that holds output (replies, dispositions, deliveries) until the log is
/// durable past an LSN: a native socket, an AMQP connection.
pub trait DurableHold {
    /// Releases, in order, what the durable LSN `durable` has passed; true while
    /// something is still held.
    fn release_held(&self, durable: u64) -> bool;
    /// The log failed: everything held fails (2102 MQRC_RESOURCE_PROBLEM or its AMQP
    /// equivalent) and nothing more is held.
    fn fail_held(&self);
}

impl DurableHold for SocketShared {
    fn release_held(&self, durable: u64) -> bool {
        SocketShared::release_held(self, durable)
    }
    fn fail_held(&self) {
        SocketShared::fail_held(self)
    }
}

/// The running log: the writer thread's front end plus what the runtime thread keeps.
pub struct RecoveryLog {
    log: Log<FileDevice>,
    /// Everything below this LSN is durable (stored by the writer's callback).
    durable: Arc<AtomicU64>,
    /// Set by the writer's callback when the log failed.
    failed: Arc<AtomicBool>,
    /// Wakes [`durable_task`] once per flush.
    pub wake: Arc<Notify>,
    /// Records were appended without waking the writer; [`kick_task`] will.
    kick_pending: Cell<bool>,
    /// Wakes [`kick_task`].
    kick_wake: Notify,
    records_since_checkpoint: Cell<u64>,
    last_checkpoint: Cell<Instant>,
    /// Connections holding output until the log is durable, in no particular order.
    held: RefCell<Vec<Rc<dyn DurableHold>>>,
    failure_reported: Cell<bool>,
    full_reported: Cell<bool>,
    last_slow_warning: Cell<Option<Instant>>,
    slow_since_warning: Cell<u64>,
    /// Bytes of the ring (for the room margins).
    ring_bytes: u64,
    /// Bytes of its primary extents (LogPrimaryFiles): checkpoints keep the log within half
    /// of them; the secondary extents are headroom.
    primary_bytes: u64,
    /// Room found by the last [`RecoveryLog::has_room`] (for the space policy).
    last_room: Cell<u64>,
    /// The queue files and their thread.
    queue_files: QueueFiles,
    /// The restart point of the checkpoint whose filings are being written.
    filing: Cell<Option<Lsn>>,
    /// Messages finished filings and spills wrote, not yet reported to the engine (which
    /// may leave their bodies on disk: `ferry_engine::body`).
    written: RefCell<Vec<Written>>,
    /// A spill of non-persistent messages is with the queue files' thread.
    spilling: Cell<bool>,
    /// Bytes of bodies left on disk since memory was last handed back to the system.
    freed_since_trim: Cell<u64>,
    /// Bodies that could not be read back from the queue files, for the error log.
    read_failures: Arc<ReadFailures>,
    /// The last checkpoint record appended (the next checkpoint waits until it is durable).
    last_checkpoint_record: Cell<Lsn>,
    /// The queue files failed: checkpoints have stopped.
    queue_files_failed: Cell<bool>,
}

/// What start-up recovery found, for the error log.
pub struct Recovered {
    /// The log, writing.
    pub log: RecoveryLog,
    /// Recovery changed the definitions (a queue the log deleted): save them.
    pub catalogue_changed: bool,
}

/// Opens the log made by `ferry create` (a missing one is refused: see
/// [`missing_control_file`]), replays it into `engine`, appends the backout records
/// recovery produced, turns logging on and starts the writer thread.
pub fn open_and_recover(
    stanza: &LogStanza,
    name: &str,
    queues_dir: &std::path::Path,
    engine: &mut QueueManager,
    now: Timestamp,
    error_log: &mut ErrorLog,
) -> Result<Recovered, String> {
    let config = config_of(stanza).map_err(|e| e.to_string())?;
    let control = std::path::Path::new(&stanza.path).join(CONTROL_FILE);
    match control.try_exists() {
        Ok(true) => {}
        Ok(false) => return Err(missing_control_file(&control)),
        Err(e) => return Err(format!("{}: {e}", control.display())),
    }
    // The queue files first: the log replays over what they hold.
    let loaded = queue_files::load(queues_dir, engine, error_log)?;
    if loaded.messages > 0 {
        error_log.write(
            &messages::QUEUE_FILES_LOADED,
            &[&name, &loaded.messages, &loaded.queues],
        );
    }
    let mut fx = Effects::new();
    let (mut core, summary) = {
        let mut recovery = LogCore::open(device(stanza).map_err(|e| e.to_string())?, &config)
            .map_err(|e| e.to_string())?;
        let mut replay = engine.recovery();
        while let Some(record) = recovery.next_record().map_err(|e| e.to_string())? {
            if record.kind == RecordKind::CHECKPOINT {
                continue;
            }
            replay
                .apply(record.kind.as_u8(), &record.payload)
                .map_err(|e| format!("recovery stopped at LSN {}: {e}", record.lsn))?;
        }
        let summary = replay.finish(now, &mut fx);
        let core = recovery.finish().map_err(|e| e.to_string())?;
        (core, summary)
    };
    let catalogue_changed = fx
        .drain()
        .any(|e| matches!(e, ferry_engine::Effect::CatalogueChanged(_)));
    for r in fx.drain_log() {
        user_kind(r.kind)
            .and_then(|k| core.append_parts(k, &[&r.head, &r.body]))
            .map_err(|e| e.to_string())?;
    }
    engine.set_logging(true);
    // Restart decoded every message of the queue files and the log: give what it freed
    // back to the system instead of leaving it in the allocator's pages.
    super::memory::return_free_memory();

    let durable = Arc::new(AtomicU64::new(core.durable_lsn().0));
    let failed = Arc::new(AtomicBool::new(false));
    let wake = Arc::new(Notify::new());
    let notify = {
        let (durable, failed, wake) = (durable.clone(), failed.clone(), wake.clone());
        Box::new(move |n: Notice| {
            match n {
                Notice::Durable(l) => {
                    durable.fetch_max(l.0, Ordering::Release);
                }
                Notice::Failed(_) => failed.store(true, Ordering::Release),
            }
            wake.notify_one();
        })
    };
    let extents = core.geometry().extents.max(1);
    let log = Log::start_with_gather(core, notify, commit_gather()).map_err(|e| e.to_string())?;
    let ring_bytes = log.status().space_total;
    // A log made before it had secondary extents is all primary.
    let primary_bytes =
        ring_bytes * u64::from(config.primary_extents.min(extents)) / u64::from(extents);
    if summary.records > 0 || summary.backed_out > 0 {
        error_log.write(
            &messages::LOG_RECOVERED,
            &[
                &name,
                &summary.records,
                &summary.messages,
                &summary.backed_out,
            ],
        );
    }
    Ok(Recovered {
        log: RecoveryLog {
            log,
            durable,
            failed,
            wake,
            kick_pending: Cell::new(false),
            kick_wake: Notify::new(),
            records_since_checkpoint: Cell::new(summary.records),
            last_checkpoint: Cell::new(Instant::now()),
            held: RefCell::new(Vec::new()),
            failure_reported: Cell::new(false),
            full_reported: Cell::new(false),
            last_slow_warning: Cell::new(None),
            slow_since_warning: Cell::new(0),
            ring_bytes,
            primary_bytes,
            last_room: Cell::new(u64::MAX),
            read_failures: loaded.read_failures,
            queue_files: loaded.files,
            filing: Cell::new(None),
            written: RefCell::new(Vec::new()),
            spilling: Cell::new(false),
            freed_since_trim: Cell::new(0),
            last_checkpoint_record: Cell::new(Lsn(0)),
            queue_files_failed: Cell::new(false),
        },
        catalogue_changed,
    })
}

impl RecoveryLog {
    /// Appends one record; waits briefly (on this thread) while the buffer is full. The
    /// writer is woken first: records appended without waking it (the deferred kick) may
    /// be what fills the buffer, and the kick task cannot run while this thread waits.
    fn append(&self, kind: u8, parts: &[&[u8]]) -> Result<Lsn, LogError> {
        let kind = user_kind(kind)?;
        let mut waited: Option<Instant> = None;
        loop {
            match self.log.append_parts(kind, parts) {
                Err(LogError::BufferFull { .. }) => {
                    self.log.kick();
                    let since = *waited.get_or_insert_with(Instant::now);
                    if since.elapsed() > BUFFER_FULL_PATIENCE {
                        return Err(LogError::Failed(
                            "the log buffer stayed full for 30 seconds".into(),
                        ));
                    }
                    std::thread::sleep(Duration::from_micros(50));
                }
                r => return r,
            }
        }
    }

    /// Appends one record without waking an idle writer (see [`kick_task`]); a full
    /// buffer wakes it at once and waits briefly, as [`Self::append`] does.
    fn append_deferred(&self, kind: u8, parts: &[&[u8]]) -> Result<Lsn, LogError> {
        let kind = user_kind(kind)?;
        let mut waited: Option<Instant> = None;
        loop {
            match self.log.append_parts_deferred(kind, parts) {
                Err(LogError::BufferFull { .. }) => {
                    self.log.kick();
                    let since = *waited.get_or_insert_with(Instant::now);
                    if since.elapsed() > BUFFER_FULL_PATIENCE {
                        return Err(LogError::Failed(
                            "the log buffer stayed full for 30 seconds".into(),
                        ));
                    }
                    std::thread::sleep(Duration::from_micros(50));
                }
                r => return r,
            }
        }
    }

    /// Appends a call's records in order; returns the LSN just past the last one (a
    /// reply that waits for them is released when the durable LSN reaches it).
    ///
    /// The writer is not woken here but by [`kick_task`], which runs once the runtime
    /// thread has handled the tasks that are ready now: when the writer is idle, the
    /// records of every frame read in this pass (a responder's reply put and its
    /// requester's get, say) share one flush instead of the first getting one of its own.
    /// That costs no timed wait: the kick comes as soon as the thread runs out of ready
    /// work, microseconds later.
    pub fn append_records(
        &self,
        records: impl Iterator<Item = LogRecord>,
        error_log: &RefCell<ErrorLog>,
        name: &str,
    ) -> Result<Lsn, LogError> {
        let mut n = 0u64;
        for r in records {
            if let Err(e) = self.append_deferred(r.kind, &[&r.head, &r.body]) {
                self.report_append_error(&e, error_log, name);
                self.kick_soon();
                return Err(e);
            }
            n += 1;
        }
        if n > 0 {
            self.kick_soon();
        }
        self.records_since_checkpoint
            .set(self.records_since_checkpoint.get() + n);
        Ok(self.log.next_lsn())
    }

    /// Makes [`kick_task`] wake the writer once the ready tasks have run.
    fn kick_soon(&self) {
        if !self.kick_pending.replace(true) {
            self.kick_wake.notify_one();
        }
    }

    fn report_append_error(&self, e: &LogError, error_log: &RefCell<ErrorLog>, name: &str) {
        match e {
            LogError::LogFull { .. } => {
                if !self.full_reported.replace(true) {
                    error_log
                        .borrow_mut()
                        .write(&messages::LOG_FULL, &[&name, e]);
                }
            }
            _ => {
                if !self.failure_reported.replace(true) {
                    error_log
                        .borrow_mut()
                        .write(&messages::LOG_FAILED, &[&name, e]);
                }
            }
        }
    }

    /// Whether the log has room for a call that will log `usage` (see [`LogUse`]). A call
    /// without room is refused before the engine changes anything, so a full log never
    /// leaves memory ahead of the log.
    pub fn has_room(&self, usage: LogUse) -> bool {
        let room = self.log.room();
        self.last_room.set(room);
        room >= self.room_needed(usage)
    }

    fn room_needed(&self, usage: LogUse) -> u64 {
        let ring = self.ring_bytes;
        match usage {
            LogUse::Put(body) => body as u64 + 1024 + PUT_ROOM_MARGIN.min(ring / 8),
            LogUse::Small => GET_ROOM_MARGIN.min(ring / 64),
        }
    }

    /// Reports a full log once (FRY7463W) until it has room again.
    pub fn report_full(&self, error_log: &RefCell<ErrorLog>, name: &str, usage: LogUse) {
        if !self.full_reported.replace(true) {
            let e = LogError::LogFull {
                needed: self.room_needed(usage),
                free: self.log.room(),
                pinned: self.log.status().restart_lsn,
            };
            error_log
                .borrow_mut()
                .write(&messages::LOG_FULL, &[&name, &e]);
        }
    }

    /// Reports a checkpoint that found no room for its image: FRY7463W, once until the
    /// log has room again (calls waiting for space retry checkpoints after every flush).
    pub fn report_checkpoint_full(&self, error_log: &RefCell<ErrorLog>, name: &str, e: &LogError) {
        if !self.full_reported.replace(true) {
            error_log
                .borrow_mut()
                .write(&messages::LOG_FULL, &[&name, e]);
        }
    }

    /// Notes that the log has room again (the next full log is reported anew).
    pub fn clear_full(&self) {
        self.full_reported.set(false);
    }

    /// Whether the record-count or space policy asks for a checkpoint now (space: more than
    /// half the primary space in use at the last room check, so a checkpoint is under way
    /// well before the log is full).
    pub fn checkpoint_due(&self) -> bool {
        let n = self.records_since_checkpoint.get();
        let in_use = self.ring_bytes.saturating_sub(self.last_room.get());
        n >= CHECKPOINT_RECORDS || (n > 0 && in_use > self.primary_bytes / 2)
    }

    /// Bytes on disk of queue `queue`'s queue file, as of the last checkpoint (CURFSIZE).
    pub fn queue_file_bytes(&self, queue: &str) -> u64 {
        self.queue_files.file_bytes(queue)
    }

    /// True while the last checkpoint record appended is not yet durable.
    fn previous_checkpoint_pending(&self) -> bool {
        self.log.checkpoint_lsn() < self.last_checkpoint_record.get()
    }

    /// Checkpoints completed (control file written) since the log was opened.
    pub fn checkpoints_completed(&self) -> u64 {
        self.log.status().checkpoints
    }

    /// True while a checkpoint is under way (its filings being written, or its record
    /// not yet durable).
    pub fn checkpoint_in_flight(&self) -> bool {
        self.filing.get().is_some() || self.previous_checkpoint_pending()
    }

    /// Whether the time or space policy asks for a checkpoint (checked once a second).
    fn checkpoint_due_slow(&self) -> bool {
        let n = self.records_since_checkpoint.get();
        if n == 0 {
            return false;
        }
        if self.last_checkpoint.get().elapsed() >= CHECKPOINT_INTERVAL {
            return true;
        }
        let s = self.log.status();
        s.space_in_use.saturating_mul(2) > self.primary_bytes
    }

    /// Starts a checkpoint: appends the engine's image and hands its filings to the
    /// queue files' thread; [`RecoveryLog::finish_checkpoint`] records it once they are
    /// synced. Does nothing while the previous checkpoint is unfinished (the policy asks
    /// again). Call between engine calls.
    pub fn checkpoint(&self, engine: &mut QueueManager) -> Result<(), LogError> {
        if self.queue_files_failed.get()
            || self.filing.get().is_some()
            || self.previous_checkpoint_pending()
        {
            return Ok(());
        }
        // A failed attempt is retried by the next policy trigger, not at every call.
        self.records_since_checkpoint.set(0);
        self.last_checkpoint.set(Instant::now());
        // Young messages go in the image when it leaves a put's margin free (so gets
        // and commits, which need less, never wait behind a checkpoint's image), else
        // straight to the queue files (a queue filling faster than checkpoints come). An
        // image that cannot fit at all is not started: a partial image would only use up
        // space that nothing frees.
        let status = self.log.status();
        let unused = status.space_total.saturating_sub(status.space_in_use);
        let free = unused.saturating_sub(status.space_total / 32);
        let roomy = unused.saturating_sub(PUT_ROOM_MARGIN.min(status.space_total / 8));
        let plan = engine.checkpoint_plan(Young::InImage).and_then(|plan| {
            if image_bytes(&plan.image) > roomy {
                engine.checkpoint_plan(Young::InQueueFiles)
            } else {
                Ok(plan)
            }
        });
        // A body left in a queue file that had to be read and could not be (the read
        // is logged where it failed): no checkpoint now; the next trigger retries.
        let Ok(plan) = plan else {
            return Ok(());
        };
        let needed = image_bytes(&plan.image);
        if needed > free {
            return Err(LogError::LogFull {
                needed,
                free,
                pinned: status.restart_lsn,
            });
        }
        let first = self.log.next_lsn();
        for r in &plan.image {
            self.append(r.kind, &[&r.head, &r.body])?;
        }
        engine.checkpoint_taken(&plan);
        match self.queue_files.submit(plan.queues, first) {
            Ok(()) => self.filing.set(Some(first)),
            Err(e) => self.queue_files_failed_now(&e),
        }
        Ok(())
    }

    /// Records the checkpoints whose filings the queue files' thread has finished.
    fn finish_checkpoint(&self, server: &Server) {
        // One result per job submitted (after a failure the thread has stopped and
        // nothing more is submitted).
        if self.filing.get().is_none() {
            return;
        }
        if let Some(r) = self.queue_files.try_done() {
            self.filed(r, &server.error_log, &server.name);
            if let Ok(mut engine) = server.engine.try_borrow_mut() {
                self.report_written(&mut engine);
            }
        }
    }

    /// Hands the engine's spill of non-persistent messages over DefaultQBufferSize to
    /// the queue files' thread, one at a time. Call between engine calls.
    pub fn spill(&self, engine: &mut QueueManager) {
        if self.spilling.get() || self.queue_files_failed.get() {
            return;
        }
        let plan = engine.spill_plan();
        if plan.is_empty() {
            return;
        }
        match self.queue_files.submit_spill(plan) {
            Ok(()) => self.spilling.set(true),
            Err(e) => self.queue_files_failed_now(&e),
        }
    }

    /// Reports a finished spill to the engine (its bodies leave memory) and starts the
    /// next one if a queue is still over its buffer.
    fn finish_spill(&self, server: &Server) {
        if !self.spilling.get() {
            return;
        }
        let Some(r) = self.queue_files.try_spilled() else {
            return;
        };
        self.spilling.set(false);
        match r {
            Ok(spilled) => {
                self.written.borrow_mut().extend(
                    spilled
                        .into_iter()
                        .map(|queue| Written { spill: true, queue }),
                );
                if let Ok(mut engine) = server.engine.try_borrow_mut() {
                    self.report_written(&mut engine);
                    if engine.spill_wanted() {
                        self.spill(&mut engine);
                    }
                }
            }
            Err(e) => {
                if !self.queue_files_failed.get() {
                    server
                        .error_log
                        .borrow_mut()
                        .write(&messages::QUEUE_FILE_FAILED, &[&server.name, &e]);
                }
                self.queue_files_failed_now(&e);
            }
        }
    }

    /// Bytes of the log's ring (primary and secondary extents).
    pub fn space_total(&self) -> u64 {
        self.log.status().space_total
    }

    /// Writes the bodies that could not be read back since the last call (FRY7470E, once
    /// per message) to the error log. Cheap when there are none: call after engine calls.
    pub fn report_read_failures(&self, error_log: &RefCell<ErrorLog>) {
        for (queue, why) in self.read_failures.take() {
            error_log
                .borrow_mut()
                .write(&messages::QUEUE_FILE_READ_FAILED, &[&queue, &why]);
        }
    }

    /// Tells the engine where the messages of finished filings and spills are, so it can
    /// leave the bodies beyond each queue's buffers on disk. Call between engine calls.
    pub fn report_written(&self, engine: &mut QueueManager) {
        let mut freed = self.freed_since_trim.get();
        for Written { spill, queue: q } in self.written.take() {
            let moved: Vec<(u64, Rc<dyn ferry_engine::FiledRecord>)> = q
                .moved
                .into_iter()
                .map(|(seq, r)| (seq, Rc::new(r) as Rc<dyn ferry_engine::FiledRecord>))
                .collect();
            engine.bodies_moved(&q.queue, &moved);
            let at: Vec<_> = q
                .written
                .into_iter()
                .map(queue_files::FiledAt::into_engine)
                .collect();
            freed += if spill {
                engine.bodies_spilled(&q.queue, &at)
            } else {
                engine.bodies_filed(&q.queue, &at)
            };
        }
        self.freed_since_trim.set(freed);
    }

    fn filed(
        &self,
        r: Result<queue_files::Filed, String>,
        error_log: &RefCell<ErrorLog>,
        name: &str,
    ) {
        self.filing.set(None);
        match r {
            Ok(done) => match self.log.checkpoint(&[], done.restart) {
                Ok(lsn) => {
                    tracing::debug!(
                        "checkpoint filings done: {} messages written, {} removed, {} queue files synced",
                        done.written,
                        done.removed,
                        done.synced
                    );
                    self.written
                        .borrow_mut()
                        .extend(done.bodies.into_iter().map(|queue| Written {
                            spill: false,
                            queue,
                        }));
                    self.last_checkpoint_record.set(lsn);
                    self.full_reported.set(false);
                }
                Err(e) => self.report_append_error(&e, error_log, name),
            },
            Err(e) => {
                if !self.queue_files_failed.get() {
                    error_log
                        .borrow_mut()
                        .write(&messages::QUEUE_FILE_FAILED, &[&name, &e]);
                }
                self.queue_files_failed_now(&e);
            }
        }
    }

    fn queue_files_failed_now(&self, why: &str) {
        self.queue_files_failed.set(true);
        tracing::error!("queue files failed, checkpoints stop: {why}");
    }

    /// At shutdown: finishes the checkpoint in flight, takes a last one and waits (at
    /// most `timeout` each) until it is durable, so the next start replays little.
    pub fn final_checkpoint(
        &self,
        engine: &mut QueueManager,
        error_log: &RefCell<ErrorLog>,
        name: &str,
    ) {
        const PATIENCE: Duration = Duration::from_secs(60);
        for _ in 0..2 {
            if self.filing.get().is_some() {
                match self.queue_files.wait_done(PATIENCE) {
                    Some(r) => self.filed(r, error_log, name),
                    None => return,
                }
            }
            self.wait_all_durable(Duration::from_secs(10));
            if let Err(e) = self.checkpoint(engine) {
                error_log
                    .borrow_mut()
                    .write(&messages::LOG_FULL, &[&name, &e]);
                return;
            }
        }
        if self.filing.get().is_some() {
            if let Some(r) = self.queue_files.wait_done(PATIENCE) {
                self.filed(r, error_log, name);
            }
        }
        self.wait_all_durable(Duration::from_secs(10));
    }

    /// Notes a socket that now holds replies.
    pub fn note_held(&self, holder: Rc<dyn DurableHold>) {
        self.held.borrow_mut().push(holder);
    }

    /// True when everything below `lsn` is durable.
    pub fn is_durable(&self, lsn: u64) -> bool {
        self.durable.load(Ordering::Acquire) >= lsn
    }

    /// True when the log has failed (held replies are failed, new ones fail at once).
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Releases every held reply the durable LSN has passed (or fails them all when the
    /// log failed).
    fn release(&self, server: &Server) {
        let failed = self.has_failed();
        if failed && !self.failure_reported.replace(true) {
            let why = self
                .log
                .failure()
                .unwrap_or_else(|| "the log writer stopped".into());
            server
                .error_log
                .borrow_mut()
                .write(&messages::LOG_FAILED, &[&server.name, &why]);
        }
        let durable = self.durable.load(Ordering::Acquire);
        let mut held = std::mem::take(&mut *self.held.borrow_mut());
        held.retain(|s| {
            if failed {
                s.fail_held();
                false
            } else {
                s.release_held(durable)
            }
        });
        // Failing replies sends nothing to the log, so nothing was noted meanwhile;
        // append rather than replace anyway.
        self.held.borrow_mut().append(&mut held);
    }

    /// The log's state for `ferry status` and DISPLAY QMSTATUS.
    pub fn summary(&self) -> crate::lifecycle::LogSummary {
        let s = self.log.status();
        crate::lifecycle::LogSummary {
            current_extent: ferry_store::Geometry::extent_name(s.current_extent),
            restart_extent: ferry_store::Geometry::extent_name(s.restart_extent),
            checkpoint_lsn: s.checkpoint_lsn.0,
            restart_lsn: s.restart_lsn.0,
            durable_lsn: s.durable_lsn.0,
            bytes_written: s.bytes_written,
            records: s.records,
            flushes: s.flushes,
            checkpoints: s.checkpoints,
            space_in_use: s.space_in_use,
            space_total: s.space_total,
            space_primary: self.primary_bytes,
            slow_writes: s.slow_ops,
            last_slow_write: s.last_slow.map(|w| {
                format!(
                    "{} {} bytes {} took {} us, threshold {} us",
                    w.op.letter(),
                    w.bytes,
                    w.file,
                    w.took.as_micros(),
                    w.threshold.as_micros()
                )
            }),
        }
    }

    /// Writes a FRY6729W warning for slow log I/O, at most once a minute.
    fn warn_slow(&self, server: &Server) {
        let ops = self.log.take_slow_ops();
        let Some(last) = ops.last() else {
            return;
        };
        self.slow_since_warning
            .set(self.slow_since_warning.get() + ops.len() as u64);
        if self
            .last_slow_warning
            .get()
            .is_some_and(|t| t.elapsed() < SLOW_WARNING_EVERY)
        {
            return;
        }
        self.last_slow_warning.set(Some(Instant::now()));
        server.error_log.borrow_mut().write(
            &messages::LOG_SLOW_IO,
            &[
                &last.op.letter(),
                &last.bytes,
                &last.file,
                &last.took.as_micros(),
                &last.threshold.as_micros(),
                &self.slow_since_warning.replace(0),
            ],
        );
    }

    /// Waits (at most `timeout`) until everything appended so far is durable.
    pub fn wait_all_durable(&self, timeout: Duration) {
        self.log.kick();
        let end = self.log.next_lsn().0;
        let deadline = Instant::now() + timeout;
        while self.durable.load(Ordering::Acquire) < end
            && !self.has_failed()
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// Log space an image takes: its records with their headers, in 4 KiB pages of 4,056 data
/// bytes, plus two pages of slack.
fn image_bytes(image: &[LogRecord]) -> u64 {
    image
        .iter()
        .map(|r| r.len() as u64 + RECORD_OVERHEAD)
        .sum::<u64>()
        .saturating_mul(4096)
        / 4056
        + 2 * 4096
}

/// Messages the queue files' thread wrote for one queue, to report to the engine.
struct Written {
    /// By a spill (non-persistent), not a checkpoint's filing (persistent).
    spill: bool,
    /// What was written where.
    queue: queue_files::QueueWritten,
}

/// Releases held replies once per flush notice.
pub async fn durable_task(server: Rc<Server>) {
    on_each_wake(server, |log| log.wake.clone(), RecoveryLog::release).await;
}

/// Records each checkpoint once the queue files' thread has written its filings, and
/// reports each spill it has written.
pub async fn queue_files_task(server: Rc<Server>) {
    on_each_wake(
        server,
        |log| log.queue_files.done.clone(),
        |log, server| {
            log.finish_checkpoint(server);
            log.finish_spill(server);
        },
    )
    .await;
}

/// Runs `act` each time the log's `notify` (a thread's wake-up of the runtime thread) is
/// woken, for as long as the queue manager runs; returns at once without a log.
async fn on_each_wake(
    server: Rc<Server>,
    notify: impl Fn(&RecoveryLog) -> Arc<Notify>,
    act: impl Fn(&RecoveryLog, &Server),
) {
    let Some(wake) = server.log.as_ref().map(notify) else {
        return;
    };
    loop {
        wake.notified().await;
        if let Some(log) = server.log.as_ref() {
            act(log, &server);
        }
        // A checkpoint may have finished: calls waiting for log space try again.
        server.retry_log_room_waiters();
    }
}

/// Wakes the log writer for records appended without waking it ([`RecoveryLog::append_records`]).
/// A task woken through a local `Notify` runs after the tasks that are ready already, so
/// the kick comes once the runtime thread has handled the frames it has read.
pub async fn kick_task(server: Rc<Server>) {
    let Some(log) = server.log.as_ref() else {
        return;
    };
    loop {
        log.kick_wake.notified().await;
        log.kick_pending.set(false);
        log.log.kick();
    }
}

/// Once a second: slow-I/O warnings and the time/space checkpoint policy.
pub async fn housekeeping_task(server: Rc<Server>) {
    if server.log.is_none() {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some(log) = server.log.as_ref() else {
            return;
        };
        log.warn_slow(&server);
        if log.checkpoint_due_slow() {
            server.checkpoint();
        }
        // Calls that have waited too long for log space get 2102.
        server.retry_log_room_waiters();
        // Also removes the records of spilled messages got since the last spill.
        if let Ok(mut engine) = server.engine.try_borrow_mut() {
            log.spill(&mut engine);
        }
        // Bodies now only on disk: memory::trim_task hands their pages back.
        server.memory.note_freed(log.freed_since_trim.replace(0));
    }
}

/// At shutdown: waits (at most 5 s) until everything appended is durable and the held
/// replies are on their way.
pub async fn settle(server: &Rc<Server>) {
    let Some(log) = server.log.as_ref() else {
        return;
    };
    log.log.kick();
    let end = log.log.next_lsn().0;
    let deadline = Instant::now() + Duration::from_secs(5);
    while log.durable.load(Ordering::Acquire) < end && !log.has_failed() {
        if Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let had_held = !log.held.borrow().is_empty();
    log.release(server);
    if had_held {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amq_iodelay_is_microseconds_unless_inms_says_milliseconds() {
        let t = iodelay_threshold_of;
        assert_eq!(t(None, None), DEFAULT_IODELAY);
        assert_eq!(DEFAULT_IODELAY, Duration::from_millis(100));
        assert_eq!(t(Some("not a number"), None), DEFAULT_IODELAY);
        assert_eq!(t(Some("250"), None), Duration::from_micros(250));
        assert_eq!(t(Some(" 250 "), Some("NO")), Duration::from_micros(250));
        assert_eq!(t(Some("250"), Some("YES")), Duration::from_millis(250));
        assert_eq!(t(Some("250"), Some("yes")), Duration::from_millis(250));
        assert_eq!(t(None, Some("YES")), DEFAULT_IODELAY);
    }
}
