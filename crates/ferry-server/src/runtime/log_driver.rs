//! The recovery log's driver in the running queue manager (issue 3): it performs what
//! the durability decisions ([`ferry_durability::Durability`]) ask for, with the log's
//! writer thread, the queue files' thread and the runtime's tasks.
//!
//! - **Create** (`ferry create`): [`create_log`] preallocates the log under the qm.ini
//!   Log stanza's LogPath.
//! - **Start**: [`open_and_recover`] opens the log, replays its records into the engine
//!   (`QueueManager::recovery`), appends the backout records recovery produced, turns
//!   engine logging on and starts the log's writer thread. The writer's callback only
//!   stores the durable LSN in an atomic and wakes the runtime thread through a
//!   `tokio::sync::Notify`: one wake-up per flush, never one per record.
//! - **Each engine call** (`Server::perform_effects`): the call's records are appended in
//!   order ([`RecoveryLog::append_records`]); a reply that must be durable is held on its
//!   connection until the LSN just past the last record ([`RecoveryLog::hold`]), and
//!   released by the flush task (`log_tasks`) when a flush passes that LSN (or failed with 2102
//!   MQRC_RESOURCE_PROBLEM if the log fails).
//! - **Decisions**: every input (records appended, a flush, a room check, a checkpoint's
//!   or a spill's progress, the once-a-second tick) goes to the state machine, and
//!   [`RecoveryLog::perform`] carries out the commands it returns: start or record a
//!   checkpoint (its image to the log, its filings to the queue files' thread,
//!   [`super::queue_files`]), spill, release or fail held replies, write FRY7463W (log
//!   full), FRY7466E (log failed) or FRY6729W (slow I/O: MQ's AMQ6729W, threshold
//!   AMQ_IODELAY, µs, or ms with AMQ_IODELAY_INMS=YES, default 100 ms). Commands that need
//!   the engine wait in a queue while it is in use and run at the next perform, never
//!   skipped.

use super::filed_record::ReadFailures;
use super::queue_files::{self, QueueFiles};
use crate::error_log::ErrorLog;
use crate::messages;
use crate::qm_ini::LogStanza;
pub use ferry_durability::LogUse;
use ferry_durability::{
    image_bytes, AppendFailure, Command, Durability, Hold, Policy, Room, Space,
};
use ferry_engine::{Effects, LogRecord, QueueManager, Timestamp, Young};
use ferry_store::{
    FileDevice, Geometry, Log, LogConfig, LogCore, LogError, Lsn, Notice, RecordKind, SlowIo,
};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How long an append waits for buffer space (a full buffer empties with the next
/// flush) before the operation fails with 2102.
const BUFFER_FULL_PATIENCE: Duration = Duration::from_secs(30);
/// Default commit gather (see [`commit_gather`]).
const DEFAULT_COMMIT_GATHER: Duration = Duration::ZERO;
/// Default slow-I/O threshold when AMQ_IODELAY is not set.
const DEFAULT_IODELAY: Duration = Duration::from_millis(100);

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

/// What the log driver needs of the queue manager it serves, between engine calls: the
/// engine, the error log, and backing out a unit of work that pins the log. The driver
/// knows nothing else of the runtime (no connection, no protocol).
pub trait LogHost {
    /// The queue manager's name, for the error log's inserts.
    fn name(&self) -> &str;
    /// The engine (borrowed only while a command that needs it is performed).
    fn engine(&self) -> &RefCell<QueueManager>;
    /// The error log.
    fn error_log(&self) -> &RefCell<ErrorLog>;
    /// The log is full: back out the oldest unit of work in flight if it pins a large
    /// part of the log ([`Policy::is_long_unit_of_work`]), then ask for a checkpoint.
    fn back_out_long_unit_of_work(&self, log: &RecoveryLog);
}

/// The running log: the writer thread's front end, the durability decisions and what the
/// runtime thread keeps to perform them.
pub struct RecoveryLog {
    log: Log<FileDevice>,
    /// Everything below this LSN is durable (stored by the writer's callback).
    durable: Arc<AtomicU64>,
    /// Set by the writer's callback when the log failed.
    failed: Arc<AtomicBool>,
    /// Wakes the flush task (`log_tasks::durable_task`) once per flush.
    wake: Arc<Notify>,
    /// Records were appended without waking the writer; [`RecoveryLog::kick_when_asked`] will.
    kick_pending: Cell<bool>,
    /// Wakes [`RecoveryLog::kick_when_asked`].
    kick_wake: Notify,
    /// The origin of the decisions' time.
    started: Instant,
    /// The durability decisions.
    decisions: RefCell<Durability>,
    /// Commands that need the engine, taken while it was in use: performed first at the
    /// next [`RecoveryLog::perform`].
    deferred: RefCell<VecDeque<Command>>,
    /// Connections holding output until the log is durable, in no particular order.
    holders: RefCell<Vec<Rc<dyn DurableHold>>>,
    /// Bytes of its primary extents (LogPrimaryFiles), for `ferry status`.
    primary_bytes: u64,
    /// The queue files and their thread.
    queue_files: QueueFiles,
    /// Messages finished filings and spills wrote, not yet reported to the engine (which
    /// may leave their bodies on disk: `ferry_engine::body`).
    written: RefCell<Vec<Written>>,
    /// Bytes of bodies left on disk since memory was last handed back to the system.
    freed_since_trim: Cell<u64>,
    /// Bodies that could not be read back from the queue files, for the error log.
    read_failures: Arc<ReadFailures>,
    /// Why an append failed, for FRY7466E.
    failure: RefCell<Option<String>>,
    /// Why the queue files failed, for the error log.
    queue_files_failure: RefCell<Option<String>>,
    /// The last slow log operation seen, for FRY6729W.
    last_slow: RefCell<Option<SlowIo>>,
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
    let mut catalogue_changed = false;
    for effect in fx.drain() {
        match effect {
            ferry_engine::Effect::CatalogueChanged(_) => catalogue_changed = true,
            // A message the restart's backout brought to BOTHRESH that could not move.
            ferry_engine::Effect::BackoutRequeueFailed { queue, reason } => {
                error_log.write(&messages::BACKOUT_REQUEUE_FAILED, &[&queue, &reason]);
            }
            _ => {}
        }
    }
    for r in fx.drain_log() {
        user_kind(r.kind)
            .and_then(|k| core.append_parts(k, &[&r.head, &r.body]))
            .map_err(|e| e.to_string())?;
    }
    engine.set_logging(true);

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
    let durable_now = durable.load(Ordering::Acquire);
    let policy = Policy::for_log(ring_bytes, primary_bytes);
    Ok(Recovered {
        log: RecoveryLog {
            log,
            durable,
            failed,
            wake,
            kick_pending: Cell::new(false),
            kick_wake: Notify::new(),
            started: Instant::now(),
            decisions: RefCell::new(Durability::new(
                policy,
                Duration::ZERO,
                durable_now,
                summary.records,
            )),
            deferred: RefCell::new(VecDeque::new()),
            holders: RefCell::new(Vec::new()),
            primary_bytes,
            read_failures: loaded.read_failures,
            queue_files: loaded.files,
            written: RefCell::new(Vec::new()),
            freed_since_trim: Cell::new(0),
            failure: RefCell::new(None),
            queue_files_failure: RefCell::new(None),
            last_slow: RefCell::new(None),
        },
        catalogue_changed,
    })
}

impl RecoveryLog {
    /// The decisions' time: since the log was opened.
    fn now(&self) -> Duration {
        self.started.elapsed()
    }

    /// Appends one record; waits briefly (on this thread) while the buffer is full. The
    /// writer is woken first: records appended without waking it (the deferred kick) may
    /// be what fills the buffer, and the kick task cannot run while this thread waits.
    fn append(&self, kind: u8, parts: &[&[u8]], deferred: bool) -> Result<Lsn, LogError> {
        let kind = user_kind(kind)?;
        let mut waited: Option<Instant> = None;
        loop {
            let r = if deferred {
                self.log.append_parts_deferred(kind, parts)
            } else {
                self.log.append_parts(kind, parts)
            };
            match r {
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
    /// reply that waits for them is released when the durable LSN reaches it). The
    /// decisions hear of them (a checkpoint may be due: see [`RecoveryLog::perform`]).
    ///
    /// The writer is not woken here but by [`RecoveryLog::kick_when_asked`], which runs once the runtime
    /// thread has handled the tasks that are ready now: when the writer is idle, the
    /// records of every frame read in this pass (a responder's reply put and its
    /// requester's get, say) share one flush instead of the first getting one of its own.
    /// That costs no timed wait: the kick comes as soon as the thread runs out of ready
    /// work, microseconds later.
    pub fn append_records(&self, records: impl Iterator<Item = LogRecord>) -> Result<Lsn, ()> {
        let mut n = 0u64;
        let mut result = Ok(());
        for r in records {
            if let Err(e) = self.append(r.kind, &[&r.head, &r.body], true) {
                self.append_failed(&e);
                result = Err(());
                break;
            }
            n += 1;
        }
        if n > 0 || result.is_err() {
            self.kick_soon();
        }
        self.decisions.borrow_mut().appended(n);
        result.map(|()| self.log.next_lsn())
    }

    /// Hands an append error to the decisions (reported once).
    fn append_failed(&self, e: &LogError) {
        let mut d = self.decisions.borrow_mut();
        match e {
            LogError::LogFull { needed, free, .. } => {
                d.append_failed(AppendFailure::Full, *needed, *free)
            }
            _ => {
                self.failure
                    .borrow_mut()
                    .get_or_insert_with(|| e.to_string());
                d.append_failed(AppendFailure::Failed, 0, 0);
            }
        }
    }

    /// Makes [`RecoveryLog::kick_when_asked`] wake the writer once the ready tasks have run.
    fn kick_soon(&self) {
        if !self.kick_pending.replace(true) {
            self.kick_wake.notify_one();
        }
    }

    /// What a reply (or delivery) that must wait for the log up to `until` does: go now,
    /// wait (the caller holds it and registers with [`RecoveryLog::note_held`]), or fail.
    pub fn hold(&self, until: u64) -> Hold {
        self.decisions.borrow_mut().hold(until)
    }

    /// Notes a connection that now holds output ([`RecoveryLog::hold`] said
    /// [`Hold::Until`]).
    pub fn note_held(&self, holder: Rc<dyn DurableHold>) {
        debug_assert!(self.decisions.borrow().holds_replies());
        self.holders.borrow_mut().push(holder);
    }

    /// True when the log has failed (held replies are failed, new ones fail at once).
    pub fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }

    /// Whether a call that will log `usage` may run now, after waiting for `waited`
    /// checkpoints; starts a checkpoint when that may free room (see
    /// [`Durability::room`]). Call between engine calls.
    pub fn room(&self, host: &dyn LogHost, usage: LogUse, waited: u64) -> Room {
        let first = self
            .decisions
            .borrow_mut()
            .room(usage, self.log.room(), waited);
        if first != Room::CheckpointFirst {
            self.perform(host);
            return first;
        }
        self.perform(host);
        self.decisions
            .borrow_mut()
            .checkpoint_durable(self.log.checkpoint_lsn().0);
        let then = self
            .decisions
            .borrow_mut()
            .room_after_checkpoint(usage, self.log.room());
        self.perform(host);
        then
    }

    /// Whether a call that first found the log full at `since` has waited long enough.
    pub fn waited_too_long(&self, since: Instant) -> bool {
        let since = since.saturating_duration_since(self.started);
        self.decisions.borrow().waited_too_long(since, self.now())
    }

    /// Refuses a call that waited too long for log room: the log full is reported
    /// (FRY7463W) and a long unit of work pinning the log backed out.
    pub fn give_up_waiting(&self, host: &dyn LogHost, usage: LogUse) {
        self.decisions
            .borrow_mut()
            .give_up_waiting(usage, self.log.room());
        self.perform(host);
    }

    /// Asks for a checkpoint (started unless one is under way). Call between engine calls.
    pub fn request_checkpoint(&self, host: &dyn LogHost) {
        self.decisions.borrow_mut().request_checkpoint();
        self.perform(host);
    }

    /// The engine has non-persistent messages over its buffers: a spill is started unless
    /// one is under way. Call between engine calls.
    pub fn spill_wanted(&self, host: &dyn LogHost) {
        self.decisions.borrow_mut().spill_wanted();
        self.perform(host);
    }

    /// Performs the commands the decisions have queued, in order, until there are none.
    /// Those that need the engine wait in [`RecoveryLog::deferred`] while it is in use (a
    /// call from inside an engine call's effects) and run at the next perform.
    pub fn perform(&self, host: &dyn LogHost) {
        // The common case, on the message path (a room check per get): nothing to do.
        if self.deferred.borrow().is_empty() && !self.decisions.borrow().has_commands() {
            return;
        }
        loop {
            let engine_free = host.engine().try_borrow_mut().is_ok();
            let next = if engine_free {
                self.deferred.borrow_mut().pop_front()
            } else {
                None
            };
            let Some(c) = next.or_else(|| self.decisions.borrow_mut().next_command()) else {
                return;
            };
            let needs_engine = matches!(
                c,
                Command::StartCheckpoint
                    | Command::ReportWritten
                    | Command::Spill
                    | Command::BackOutLongUnitOfWork
            );
            if needs_engine && !engine_free {
                self.deferred.borrow_mut().push_back(c);
                continue;
            }
            self.perform_one(host, c);
        }
    }

    fn perform_one(&self, host: &dyn LogHost, c: Command) {
        match c {
            Command::StartCheckpoint => {
                let mut engine = host.engine().borrow_mut();
                self.start_checkpoint(&mut engine);
            }
            Command::RecordCheckpoint { restart } => {
                let r = self.log.checkpoint(&[], Lsn(restart));
                if let Err(e) = &r {
                    self.append_failed(e);
                }
                self.decisions
                    .borrow_mut()
                    .checkpoint_recorded(r.ok().map(|l| l.0));
            }
            Command::ReportWritten => {
                let mut engine = host.engine().borrow_mut();
                self.report_written(&mut engine);
                if engine.spill_wanted() {
                    self.decisions.borrow_mut().spill_wanted();
                }
            }
            Command::Spill => {
                let plan = host.engine().borrow_mut().spill_plan();
                if plan.is_empty() {
                    self.decisions.borrow_mut().spill_done(false);
                } else if let Err(e) = self.queue_files.submit_spill(plan) {
                    self.queue_files_failed(e);
                    self.decisions.borrow_mut().spill_done(false);
                }
            }
            Command::ReleaseHeld { durable } => {
                let mut holders = std::mem::take(&mut *self.holders.borrow_mut());
                holders.retain(|h| h.release_held(durable));
                // Releasing sends nothing to the log, so nothing was noted meanwhile;
                // append rather than replace anyway.
                self.holders.borrow_mut().append(&mut holders);
            }
            Command::FailHeld => {
                let holders = std::mem::take(&mut *self.holders.borrow_mut());
                for h in holders {
                    h.fail_held();
                }
            }
            Command::ReportLogFull { needed, free } => {
                let e = LogError::LogFull {
                    needed,
                    free,
                    pinned: self.log.status().restart_lsn,
                };
                host.error_log()
                    .borrow_mut()
                    .write(&messages::LOG_FULL, &[&host.name(), &e]);
            }
            Command::ReportLogFailed => {
                let why = self
                    .failure
                    .borrow_mut()
                    .take()
                    .or_else(|| self.log.failure())
                    .unwrap_or_else(|| "the log writer stopped".into());
                host.error_log()
                    .borrow_mut()
                    .write(&messages::LOG_FAILED, &[&host.name(), &why]);
            }
            Command::ReportQueueFilesFailed => {
                let why = self
                    .queue_files_failure
                    .borrow()
                    .clone()
                    .unwrap_or_default();
                tracing::error!("queue files failed, checkpoints stop: {why}");
                host.error_log()
                    .borrow_mut()
                    .write(&messages::QUEUE_FILE_FAILED, &[&host.name(), &why]);
            }
            Command::BackOutLongUnitOfWork => host.back_out_long_unit_of_work(self),
            Command::WarnSlowIo { ops } => {
                if let Some(last) = self.last_slow.borrow_mut().take() {
                    host.error_log().borrow_mut().write(
                        &messages::LOG_SLOW_IO,
                        &[
                            &last.op.letter(),
                            &last.bytes,
                            &last.file,
                            &last.took.as_micros(),
                            &last.threshold.as_micros(),
                            &ops,
                        ],
                    );
                }
            }
        }
    }

    /// Notes why the queue files failed and tells the decisions (checkpoints stop).
    fn queue_files_failed(&self, why: String) {
        self.queue_files_failure.borrow_mut().get_or_insert(why);
        self.decisions.borrow_mut().queue_files_failed();
    }

    /// Bytes on disk of queue `queue`'s queue file, as of the last checkpoint (CURFSIZE).
    pub fn queue_file_bytes(&self, queue: &str) -> u64 {
        self.queue_files.file_bytes(queue)
    }

    /// Checkpoints completed (control file written) since the log was opened.
    pub fn checkpoints_completed(&self) -> u64 {
        self.log.status().checkpoints
    }

    /// Starts a checkpoint ([`Command::StartCheckpoint`]): appends the engine's image and
    /// hands its filings to the queue files' thread; [`Command::RecordCheckpoint`] records
    /// it once they are synced.
    fn start_checkpoint(&self, engine: &mut QueueManager) {
        self.report_written(engine);
        let now = self.now();
        let status = self.log.status();
        let space = Space {
            total: status.space_total,
            in_use: status.space_in_use,
        };
        let policy = self.decisions.borrow().policy().clone();
        let size = |image: &[LogRecord]| image_bytes(image.iter().map(LogRecord::len));
        // Young messages go in the image when it leaves a put's margin free, else straight
        // to the queue files (ferry_durability::Policy::young_in_image).
        let plan = engine.checkpoint_plan(Young::InImage).and_then(|plan| {
            if policy.young_in_image(size(&plan.image), space) {
                Ok(plan)
            } else {
                engine.checkpoint_plan(Young::InQueueFiles)
            }
        });
        // A body left in a queue file that had to be read and could not be (the read
        // is logged where it failed): no checkpoint now; the next trigger retries.
        let Ok(plan) = plan else {
            self.decisions.borrow_mut().checkpoint_not_started(now);
            return;
        };
        let needed = size(&plan.image);
        if let Err(free) = policy.image_fits(needed, space) {
            // An image that cannot fit is not started: a partial image would only use up
            // space that nothing frees.
            let mut d = self.decisions.borrow_mut();
            d.checkpoint_not_started(now);
            d.report_full(needed, free);
            return;
        }
        let first = self.log.next_lsn();
        for r in &plan.image {
            if let Err(e) = self.append(r.kind, &[&r.head, &r.body], false) {
                self.append_failed(&e);
                self.decisions.borrow_mut().checkpoint_not_started(now);
                return;
            }
        }
        engine.checkpoint_taken(&plan);
        // The filer waits for the log to be durable below the image; make sure a flush
        // is on its way rather than waiting for the next reply's.
        self.log.kick();
        let horizon = queue_files::DurableHorizon {
            durable: self.durable.clone(),
            failed: self.failed.clone(),
        };
        match self.queue_files.submit(plan.queues, first, horizon) {
            Ok(()) => self.decisions.borrow_mut().checkpoint_started(first.0, now),
            Err(e) => {
                self.decisions.borrow_mut().checkpoint_not_started(now);
                self.queue_files_failed(e);
            }
        }
    }

    /// Takes the results of the queue files' thread: a checkpoint's filings (the
    /// checkpoint record follows) and a spill.
    pub fn on_queue_files(&self, host: &dyn LogHost) {
        let filing = self.decisions.borrow().is_filing();
        if filing {
            if let Some(r) = self.queue_files.try_done() {
                self.filed(r);
            }
        }
        let spilling = self.decisions.borrow().is_spilling();
        if spilling {
            if let Some(r) = self.queue_files.try_spilled() {
                match r {
                    Ok(spilled) => {
                        self.written.borrow_mut().extend(
                            spilled
                                .into_iter()
                                .map(|queue| Written { spill: true, queue }),
                        );
                        self.decisions.borrow_mut().spill_done(true);
                    }
                    Err(e) => {
                        self.queue_files_failed(e);
                        self.decisions.borrow_mut().spill_done(false);
                    }
                }
            }
        }
        self.perform(host);
    }

    /// A checkpoint's filings are done: their messages are noted for the engine and the
    /// decisions hear of it.
    fn filed(&self, r: Result<queue_files::Filed, String>) {
        match r {
            Ok(done) => {
                tracing::debug!(
                    "checkpoint from LSN {} filings done: {} messages written, {} removed, {} queue files synced",
                    done.restart,
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
                self.decisions.borrow_mut().filings_done(true);
            }
            Err(e) => {
                self.queue_files_failed(e);
                self.decisions.borrow_mut().filings_done(false);
            }
        }
    }

    /// The durability policy (room margins, the long unit of work share).
    pub fn policy(&self) -> Policy {
        self.decisions.borrow().policy().clone()
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
    fn report_written(&self, engine: &mut QueueManager) {
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

    /// Tells the decisions what the writer has done: the durable LSN and the last
    /// checkpoint record, or its failure.
    fn observe_writer(&self) {
        let mut d = self.decisions.borrow_mut();
        if self.has_failed() {
            d.log_failed();
        } else {
            let durable = self.durable.load(Ordering::Acquire);
            d.flushed(durable, self.log.checkpoint_lsn().0);
        }
    }

    /// At shutdown: finishes the checkpoint in flight, takes a last one and waits (at
    /// most a minute for the queue files, 10 s for the log) until it is durable, so the
    /// next start replays little.
    pub fn final_checkpoint(&self, host: &dyn LogHost) {
        const PATIENCE: Duration = Duration::from_secs(60);
        for _ in 0..2 {
            if !self.finish_filing(host, PATIENCE) {
                return;
            }
            self.wait_all_durable(Duration::from_secs(10));
            self.observe_writer();
            self.perform(host);
            self.request_checkpoint(host);
            if !self.decisions.borrow().checkpoint_in_flight() {
                return;
            }
        }
        if self.finish_filing(host, PATIENCE) {
            self.wait_all_durable(Duration::from_secs(10));
            self.observe_writer();
            self.perform(host);
        }
    }

    /// Waits (at most `patience`) for the filings of the checkpoint under way and records
    /// it; false when they did not come.
    fn finish_filing(&self, host: &dyn LogHost, patience: Duration) -> bool {
        if !self.decisions.borrow().is_filing() {
            return true;
        }
        match self.queue_files.wait_done(patience) {
            Some(r) => {
                self.filed(r);
                self.perform(host);
                true
            }
            None => false,
        }
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

    /// Once a second: the slow operations seen and the log's space go to the decisions
    /// (slow-I/O warning, time and space checkpoint triggers, spill).
    pub fn tick(&self, host: &dyn LogHost) {
        let ops = self.log.take_slow_ops();
        let n = ops.len() as u64;
        if let Some(last) = ops.into_iter().last() {
            *self.last_slow.borrow_mut() = Some(last);
        }
        let s = self.log.status();
        let space = Space {
            total: s.space_total,
            in_use: s.space_in_use,
        };
        {
            let mut d = self.decisions.borrow_mut();
            d.checkpoint_durable(s.checkpoint_lsn.0);
            d.tick(self.now(), space, n);
        }
        self.perform(host);
    }

    /// The wake-up of each flush notice (see [`RecoveryLog::on_flush`]).
    pub fn flush_notify(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// The wake-up of each result of the queue files' thread (see
    /// [`RecoveryLog::on_queue_files`]).
    pub fn queue_files_notify(&self) -> Arc<Notify> {
        self.queue_files.done.clone()
    }

    /// A flush notice: the decisions hear what the writer did, and held replies go.
    pub fn on_flush(&self, host: &dyn LogHost) {
        self.observe_writer();
        self.perform(host);
    }

    /// Waits until records were appended without waking the writer
    /// ([`RecoveryLog::append_records`]), then wakes it. A task woken through a local
    /// `Notify` runs after the tasks that are ready already, so the kick comes once the
    /// runtime thread has handled the frames it has read.
    pub async fn kick_when_asked(&self) {
        self.kick_wake.notified().await;
        self.kick_pending.set(false);
        self.log.kick();
    }

    /// Bytes of bodies left on disk since the last call (memory to hand back).
    pub fn take_freed(&self) -> u64 {
        self.freed_since_trim.replace(0)
    }

    /// At shutdown: waits (at most 5 s) until everything appended is durable and the held
    /// replies are on their way.
    pub async fn settle(&self, host: &dyn LogHost) {
        self.log.kick();
        let end = self.log.next_lsn().0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.durable.load(Ordering::Acquire) < end && !self.has_failed() {
            if Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let had_held = !self.holders.borrow().is_empty();
        self.on_flush(host);
        if had_held {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
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

/// Messages the queue files' thread wrote for one queue, to report to the engine.
struct Written {
    /// By a spill (non-persistent), not a checkpoint's filing (persistent).
    spill: bool,
    /// What was written where.
    queue: queue_files::QueueWritten,
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

    /// A queue manager reduced to what the driver needs.
    struct Host {
        engine: RefCell<QueueManager>,
        error_log: RefCell<ErrorLog>,
    }

    impl LogHost for Host {
        fn name(&self) -> &str {
            "QMT"
        }
        fn engine(&self) -> &RefCell<QueueManager> {
            &self.engine
        }
        fn error_log(&self) -> &RefCell<ErrorLog> {
            &self.error_log
        }
        fn back_out_long_unit_of_work(&self, _log: &RecoveryLog) {}
    }

    /// A log of five 256 KiB extents in `dir`, opened and recovered into a new engine.
    fn open_log(dir: &std::path::Path) -> (RecoveryLog, Host) {
        let mut stanza = crate::qm_ini::QmIni::defaults("QMT", &dir.join("log")).log;
        stanza.file_pages = 64;
        create_log(&stanza, "QMT").expect("create the log");
        let now = Timestamp(1);
        let mut engine = QueueManager::new("QMT", ferry_objects::QmgrAttributes::default(), now);
        let mut error_log = ErrorLog::open(
            dir.join("errors"),
            "QMT",
            1 << 20,
            crate::error_log::suppression::Rules::default(),
        )
        .expect("open the error log");
        let recovered = open_and_recover(
            &stanza,
            "QMT",
            &dir.join("queues"),
            &mut engine,
            now,
            &mut error_log,
        )
        .expect("open the log");
        let host = Host {
            engine: RefCell::new(engine),
            error_log: RefCell::new(error_log),
        };
        (recovered.log, host)
    }

    #[test]
    fn a_checkpoint_asked_for_while_the_engine_is_in_use_is_taken_once_it_is_free() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (log, host) = open_log(dir.path());
        {
            let _in_use = host.engine.borrow_mut();
            log.request_checkpoint(&host);
            assert!(log.decisions.borrow().checkpoint_in_flight());
            assert_eq!(log.deferred.borrow().len(), 1, "set aside, not skipped");
        }
        log.perform(&host);
        assert!(log.deferred.borrow().is_empty());
        assert!(log.decisions.borrow().is_filing(), "the checkpoint started");
        assert!(log.finish_filing(&host, Duration::from_secs(30)));
        log.wait_all_durable(Duration::from_secs(30));
        log.on_flush(&host);
        assert_eq!(log.checkpoints_completed(), 1);
        assert!(!log.decisions.borrow().checkpoint_in_flight());
    }

    /// Output held by a test connection: the positions it waits for.
    #[derive(Default)]
    struct Holder {
        held: RefCell<Vec<u64>>,
        failed: Cell<bool>,
    }

    impl DurableHold for Holder {
        fn release_held(&self, durable: u64) -> bool {
            self.held.borrow_mut().retain(|&h| h > durable);
            !self.held.borrow().is_empty()
        }
        fn fail_held(&self) {
            self.held.borrow_mut().clear();
            self.failed.set(true);
        }
    }

    #[test]
    fn held_output_is_released_by_the_flush_that_covers_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (log, host) = open_log(dir.path());
        // A checkpoint record is a record like any other: append one, hold behind it.
        log.request_checkpoint(&host);
        assert!(log.finish_filing(&host, Duration::from_secs(30)));
        let until = log.log.next_lsn().0;
        assert_eq!(log.hold(until), Hold::Until(until));
        let holder = Rc::new(Holder::default());
        holder.held.borrow_mut().push(until);
        log.note_held(holder.clone());
        log.wait_all_durable(Duration::from_secs(30));
        log.on_flush(&host);
        assert!(holder.held.borrow().is_empty(), "released");
        assert!(!holder.failed.get());
        assert!(log.holders.borrow().is_empty());
        assert_eq!(log.hold(until), Hold::Now, "durable already");
    }
}
