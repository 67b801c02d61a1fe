//! One incarnation of the simulated queue manager: the engine, its recovery log and its
//! queue files, all on simulated devices, wired as the server wires them.
//!
//! [`Disk`] is what survives a crash: the log's device, one device per queue file and
//! the saved catalogue. [`Node::start`] is a restart as the server does it: queue files
//! first ([`QueueManager::restore_filed`]), then the log from its restart point
//! ([`QueueManager::recovery`]), then the backout records recovery produced appended,
//! then logging on. [`Node::log_effects`] appends one engine call's records, and
//! [`Node::checkpoint`] takes a checkpoint (image appended, the log flushed, queue files
//! written and synced, checkpoint record appended) with the filings done in line.

use ferry_engine::journal::kind;
use ferry_engine::{
    Catalogue, Effects, FiledRecord, LoggedMessage, QueueManager, Record, Timestamp, Young,
};
use ferry_store::{
    CrashModel, LogConfig, LogCore, LogDevice, LogError, Lsn, QueueFile, QueueFileConfig,
    QueueFileError, RecordKind, SimDevice,
};
use std::collections::BTreeMap;
use std::rc::Rc;

/// The queue manager's name in the simulation.
pub const QM_NAME: &str = "SIMQM";

/// Queue file settings: small segments, so rolling and compaction happen.
fn queue_file_config() -> QueueFileConfig {
    QueueFileConfig {
        segment_size: 8192,
        compact_min_dead_bytes: 16384,
    }
}

/// What survives a crash.
#[derive(Debug)]
pub struct Disk {
    /// The recovery log's device.
    pub log: SimDevice,
    /// One device per queue file (a directory each, as the server keeps them).
    pub queue_files: BTreeMap<String, SimDevice>,
    /// The queue definitions as saved.
    pub catalogue: Catalogue,
    /// The log's shape.
    pub config: LogConfig,
    model: CrashModel,
    seed: u64,
}

impl Disk {
    /// A disk for a queue manager with `catalogue`, its randomness from `seed`.
    pub fn new(seed: u64, config: LogConfig, model: CrashModel, catalogue: Catalogue) -> Self {
        Disk {
            log: SimDevice::new(seed, model),
            queue_files: BTreeMap::new(),
            catalogue,
            config,
            model,
            seed,
        }
    }

    /// The device of queue `queue`'s file, made on first use.
    fn queue_device(&mut self, queue: &str) -> SimDevice {
        let n = self.queue_files.len() as u64 + 1;
        let (seed, model) = (self.seed, self.model);
        self.queue_files
            .entry(queue.to_string())
            .or_insert_with(|| SimDevice::new(seed.wrapping_mul(31).wrapping_add(n), model))
            .clone()
    }

    /// Power loss: every device keeps only part of what was not synced.
    pub fn crash(&self) {
        self.log.crash();
        for d in self.queue_files.values() {
            d.crash();
        }
    }
}

/// Empties a device (a queue file's directory removed).
fn wipe(dev: &mut SimDevice) -> std::io::Result<()> {
    for name in dev.file_names() {
        dev.remove(&name)?;
    }
    Ok(())
}

/// A running queue manager: engine, log and open queue files.
pub struct Node {
    /// The engine.
    pub qm: QueueManager,
    /// The recovery log.
    pub log: LogCore<SimDevice>,
    /// The open queue files.
    files: BTreeMap<String, QueueFile<SimDevice>>,
    /// The effects buffer reused by every call.
    pub fx: Effects,
}

/// What went wrong in the log or the queue files: the queue manager must stop (the
/// simulation then crashes and restarts it).
#[derive(Debug)]
pub struct Stop(pub String);

impl From<LogError> for Stop {
    fn from(e: LogError) -> Self {
        Stop(format!("log: {e}"))
    }
}

impl From<QueueFileError> for Stop {
    fn from(e: QueueFileError) -> Self {
        Stop(format!("queue file: {e}"))
    }
}

impl Node {
    /// Creates the log on `disk` and starts a queue manager on it.
    pub fn create(disk: &mut Disk, now: Timestamp) -> Result<Node, String> {
        LogCore::create(disk.log.clone(), &disk.config, QM_NAME).map_err(|e| e.to_string())?;
        Node::start(disk, now)
    }

    /// Restarts from what is on `disk`. An error means the queue manager cannot start:
    /// in the simulation that is always a bug (nothing damages the disk but crashes).
    pub fn start(disk: &mut Disk, now: Timestamp) -> Result<Node, String> {
        let mut catalogue = disk.catalogue.clone();
        let subscriptions = std::mem::take(&mut catalogue.subscriptions);
        let mut qm = QueueManager::from_catalogue(QM_NAME, catalogue, now);
        // The simulation's subscriptions have no selectors.
        let lost = qm.restore_subscriptions(subscriptions, &|_| None, now);
        if !lost.is_empty() {
            return Err(format!("durable subscriptions not restored: {lost:?}"));
        }
        let mut files = BTreeMap::new();
        let names: Vec<String> = disk.queue_files.keys().cloned().collect();
        for queue in names {
            let mut dev = disk.queue_device(&queue);
            let (mut qf, _) = match QueueFile::open(dev.clone(), queue_file_config()) {
                Ok(r) => r,
                // No manifest: a creation that never finished; nothing in it was promised.
                Err(QueueFileError::NotFound(_)) => {
                    wipe(&mut dev).map_err(|e| e.to_string())?;
                    continue;
                }
                Err(e) => return Err(format!("queue file of {queue}: {e}")),
            };
            let mut msgs: Vec<(LoggedMessage, Option<Rc<dyn FiledRecord>>)> = Vec::new();
            for r in qf.iter() {
                let (seq, payload) = r.map_err(|e| format!("queue file of {queue}: {e}"))?;
                match Record::decode(kind::PUT, &payload) {
                    Ok(Record::Put { msg, .. }) if msg.seq == seq => msgs.push((msg, None)),
                    other => return Err(format!("queue file of {queue}, {seq}: {other:?}")),
                }
            }
            qm.restore_filed(&queue, msgs);
            files.insert(queue, qf);
        }
        let mut fx = Effects::new();
        let mut recovery = LogCore::open(disk.log.clone(), &disk.config)
            .map_err(|e| format!("log does not open: {e}"))?;
        let mut replay = qm.recovery();
        while let Some(record) = recovery.next_record().map_err(|e| e.to_string())? {
            if record.kind == RecordKind::CHECKPOINT {
                continue;
            }
            if tracing() {
                let r = Record::decode(record.kind.as_u8(), &record.payload);
                eprintln!(
                    "replay {}: {}",
                    record.lsn,
                    r.map_or_else(|e| e.to_string(), |r| r.to_string())
                );
            }
            replay
                .apply(record.kind.as_u8(), &record.payload)
                .map_err(|e| format!("recovery stopped at LSN {}: {e}", record.lsn))?;
        }
        replay.finish(now, &mut fx);
        let mut log = recovery.finish().map_err(|e| e.to_string())?;
        // The backout records of units of work in flight at the crash, before any call.
        fx.drain().for_each(drop);
        replay_records(&mut log, &mut fx).map_err(|e| e.0)?;
        qm.set_logging(true);
        Ok(Node { qm, log, files, fx })
    }

    /// Appends the records of the call just made (in `self.fx`) to the log; returns the
    /// log position just past the last one, or `None` when the call logged nothing.
    pub fn log_effects(&mut self) -> Result<Option<Lsn>, Stop> {
        let mut fx = std::mem::take(&mut self.fx);
        let r = replay_records(&mut self.log, &mut fx);
        fx.clear();
        self.fx = fx;
        r
    }

    /// Writes and syncs the log; returns how far it is durable.
    pub fn flush(&mut self) -> Result<Lsn, Stop> {
        self.log.flush()?;
        Ok(self.log.durable_lsn())
    }

    /// Takes a checkpoint as the server does, with the queue files written in line:
    /// the image appended at `L`, the filings written and synced, the checkpoint record
    /// (restart point `L`) appended, everything flushed.
    /// `young` says where the messages changed since the last checkpoint go (the server
    /// files them at once when an image of them would not fit in the log).
    ///
    /// Returns the image's first position and the checkpoint record's, or `None` when the
    /// engine had no plan (a body it could not read): no checkpoint was taken.
    pub fn checkpoint(
        &mut self,
        disk: &mut Disk,
        young: Young,
    ) -> Result<Option<(Lsn, Lsn)>, Stop> {
        let Ok(plan) = self.qm.checkpoint_plan(young) else {
            return Ok(None);
        };
        let first = self.log.next_lsn();
        for r in &plan.image {
            append(&mut self.log, r.kind, &[&r.head, &r.body])?;
        }
        self.qm.checkpoint_taken(&plan);
        // The filings show the queues as they are at `first`: every record before it
        // must be durable first, or a crash could leave a queue file ahead of the log
        // (a message removed by a get or commit whose record was lost: lost with it).
        self.log.flush()?;
        // Files of queues the plan does not name (deleted) go.
        let named: Vec<&str> = plan.queues.iter().map(|f| f.queue.as_str()).collect();
        let gone: Vec<String> = self
            .files
            .keys()
            .filter(|q| !named.contains(&q.as_str()))
            .cloned()
            .collect();
        for q in gone {
            self.files.remove(&q);
            wipe(&mut disk.queue_device(&q)).map_err(|e| Stop(e.to_string()))?;
        }
        for f in &plan.queues {
            if f.is_empty() {
                continue;
            }
            if f.fresh {
                self.files.remove(&f.queue);
                wipe(&mut disk.queue_device(&f.queue)).map_err(|e| Stop(e.to_string()))?;
            }
            if !self.files.contains_key(&f.queue) {
                if f.file.is_empty() {
                    continue;
                }
                let qf = QueueFile::create(disk.queue_device(&f.queue), queue_file_config())?;
                self.files.insert(f.queue.clone(), qf);
            }
            let Some(qf) = self.files.get_mut(&f.queue) else {
                continue;
            };
            let mut removes: Vec<u64> = f
                .unfile
                .iter()
                .copied()
                .filter(|s| qf.contains(*s))
                .collect();
            removes.extend(f.file.iter().map(|m| m.seq).filter(|s| qf.contains(*s)));
            qf.append_removes(&removes)?;
            let puts = f.put_records();
            qf.append_puts(&puts)?;
            qf.sync()?;
            qf.maybe_compact()?;
        }
        let record = self.log.checkpoint(&[], first)?;
        self.log.flush()?;
        Ok(Some((first, record)))
    }

    /// The ring's size in bytes, for the durability policy.
    pub fn ring_bytes(&self) -> u64 {
        self.log.geometry().total_pages() * 4096
    }
}

/// True when `FERRY_SIM_TRACE` asks for every record appended and replayed on stderr.
fn tracing() -> bool {
    std::env::var_os("FERRY_SIM_TRACE").is_some()
}

/// Appends a record, flushing once if the log's buffer is full.
fn append(log: &mut LogCore<SimDevice>, kind: u8, parts: &[&[u8]]) -> Result<Lsn, Stop> {
    let k = RecordKind::user(kind);
    if tracing() {
        let payload: Vec<u8> = parts.concat();
        let r = Record::decode(kind, &payload);
        eprintln!(
            "append {}: {}",
            log.next_lsn(),
            r.map_or_else(|e| e.to_string(), |r| r.to_string())
        );
    }
    match log.append_parts(k, parts) {
        Err(LogError::BufferFull { .. }) => {
            log.flush()?;
            Ok(log.append_parts(k, parts)?)
        }
        r => Ok(r?),
    }
}

/// Appends `fx`'s log records in order; the position past the last one.
fn replay_records(log: &mut LogCore<SimDevice>, fx: &mut Effects) -> Result<Option<Lsn>, Stop> {
    let mut end = None;
    for r in fx.drain_log() {
        append(log, r.kind, &[&r.head, &r.body])?;
        end = Some(log.next_lsn());
    }
    Ok(end)
}
