//! The object definitions on disk: a snapshot (`objects.json`) and a journal of the changes
//! since (`objects.journal`).
//!
//! A change to a definition costs the size of that definition, not of the catalogue: it is
//! one record appended to the journal ([`journal`]) by the writer thread ([`writer`]),
//! which groups the records that arrive together into one write and one sync. When the
//! journal outgrows the snapshot, the writer folds it into a new snapshot in the
//! background (compaction). The snapshot is written whole to a temporary file, synced and
//! renamed, so a crash leaves the old or the new one, never half of one; a crash in the
//! middle of an append leaves a torn tail that the next start drops.
//!
//! Snapshot and journal carry a generation: a journal applies to the snapshot of its own
//! generation. Compaction writes snapshot `g + 1` before journal `g + 1` (so a crash
//! between leaves a stale journal, `g`, whose records the new snapshot already holds);
//! creating or converting writes the journal first. A snapshot without a generation is
//! the format Ferry wrote before the journal (the whole file on every change): it loads,
//! and [`open`] converts it. Anything else that does not add up (a snapshot that does not
//! parse, a journal missing or newer than its snapshot) is refused: the queue manager does
//! not start rather than start with definitions silently lost. See
//! docs/internals/catalogue.md.

pub mod journal;
pub mod writer;

pub use journal::{JournalError, JournalRecord};
pub use writer::{CatalogueWriter, Outcome};

use ferry_engine::Catalogue;
use ferry_objects::{
    AuthInfoDefinition, ChannelDefinition, ListenerDefinition, QmgrAttributes, QueueDefinition,
    TopicDefinition,
};
use ferry_security::chlauth::ChlauthRules;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The journal is folded into a new snapshot once it is larger than the snapshot and
/// than this: small catalogues then compact rarely, and restart never replays more than
/// about one snapshot's worth of records.
pub const COMPACT_MIN_JOURNAL_BYTES: u64 = 1 << 20;

/// Why the definitions could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum CatalogueError {
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
    /// The snapshot is not a Ferry catalogue.
    #[error("{path} is damaged or not a Ferry object file: {source}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        source: serde_json::Error,
    },
    /// The journal is damaged.
    #[error("{path}: {source}")]
    Journal {
        /// The file.
        path: String,
        /// What is wrong.
        source: JournalError,
    },
    /// The snapshot has a journal but it is not there.
    #[error("{path} is missing: the snapshot (generation {generation}) needs it, and starting without it would lose the changes it holds")]
    JournalMissing {
        /// The journal's path.
        path: String,
        /// The snapshot's generation.
        generation: u64,
    },
    /// The journal follows a snapshot that is not there.
    #[error("{path} follows snapshot generation {journal} but objects.json is generation {snapshot}: one of them was replaced")]
    JournalAhead {
        /// The journal's path.
        path: String,
        /// The journal's generation.
        journal: u64,
        /// The snapshot's generation.
        snapshot: u64,
    },
}

impl CatalogueError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        CatalogueError::Io {
            path: path.display().to_string(),
            source,
        }
    }
}

/// The journal beside snapshot `snapshot` (`objects.journal` beside `objects.json`).
pub fn journal_path(snapshot: &Path) -> PathBuf {
    snapshot.with_extension("journal")
}

/// The snapshot as written: the catalogue plus its generation (first, so a reader sees
/// at a glance which format a file is).
#[derive(serde::Serialize)]
struct SnapshotOut<'a> {
    generation: u64,
    #[serde(flatten)]
    catalogue: &'a Catalogue,
}

/// The snapshot as read. `qmgr` and `queues` are required (every file Ferry ever wrote
/// has them), so an empty object or another JSON file is refused, never taken for an
/// empty catalogue; `generation` is absent in the old, journal-less format.
#[derive(serde::Deserialize)]
struct SnapshotIn {
    #[serde(default)]
    generation: Option<u64>,
    qmgr: QmgrAttributes,
    queues: Vec<QueueDefinition>,
    #[serde(default)]
    channels: Vec<ChannelDefinition>,
    #[serde(default)]
    listeners: Vec<ListenerDefinition>,
    /// Absent in catalogues written before Ferry had channel authentication records.
    #[serde(default)]
    chlauth: Option<ChlauthRules>,
    /// Absent in catalogues written before Ferry had connection authentication.
    #[serde(default)]
    authinfos: Option<Vec<AuthInfoDefinition>>,
    /// Absent in catalogues written before Ferry had namelists: none (recovery then adds
    /// the shipped ones once).
    #[serde(default)]
    namelists: Vec<ferry_objects::NamelistDefinition>,
    /// Absent in catalogues written before Ferry had authority records: none.
    #[serde(default)]
    authority_records: ferry_security::oam::AuthorityRecords,
    /// Absent in catalogues written before Ferry had topic objects.
    #[serde(default)]
    topics: Option<Vec<TopicDefinition>>,
    /// Absent in catalogues written before Ferry had process definitions: none (the
    /// engine adds SYSTEM.DEFAULT.PROCESS at start).
    #[serde(default)]
    processes: Vec<ferry_objects::ProcessDefinition>,
    /// Absent in catalogues written before Ferry had durable subscriptions: none.
    #[serde(default)]
    subscriptions: Vec<ferry_objects::DurableSubscription>,
}

/// The definitions by name, so journal records apply in O(log n).
#[derive(Default)]
struct Image {
    qmgr: QmgrAttributes,
    queues: BTreeMap<String, QueueDefinition>,
    channels: BTreeMap<String, ChannelDefinition>,
    listeners: BTreeMap<String, ListenerDefinition>,
    chlauth: ChlauthRules,
    /// The snapshot predates channel authentication records: MQ's default records were
    /// added, with CHLAUTH(DISABLED) so the queue manager admits what it admitted before.
    chlauth_added: bool,
    authinfos: BTreeMap<String, AuthInfoDefinition>,
    /// The snapshot predates connection authentication: the default AUTHINFO object was
    /// added, with CONNAUTH blank so no password is asked for that was not before.
    connauth_added: bool,
    authority_records: ferry_security::oam::AuthorityRecords,
    processes: BTreeMap<String, ferry_objects::ProcessDefinition>,
    namelists: BTreeMap<String, ferry_objects::NamelistDefinition>,
    topics: BTreeMap<String, TopicDefinition>,
    /// The snapshot predates topic objects: SYSTEM.BASE.TOPIC, SYSTEM.DEFAULT.TOPIC and
    /// the model queues of managed subscriptions (where missing) were added.
    topics_added: bool,
    subscriptions: BTreeMap<String, ferry_objects::DurableSubscription>,
}

impl Image {
    fn of(s: SnapshotIn) -> Self {
        let qmgr = s.qmgr;
        let chlauth_added = s.chlauth.is_none();
        let chlauth = s.chlauth.unwrap_or_else(|| {
            // As MQ does for a queue manager migrated from before CHLAUTH: the default
            // records are there for when an administrator enables them (and CHLAUTH is
            // disabled, by `migrated`, once the journal is applied).
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            ChlauthRules::from_records(ChlauthRules::mq_defaults(now)).unwrap_or_default()
        });
        let connauth_added = s.authinfos.is_none();
        let authinfos = s.authinfos.unwrap_or_else(|| {
            // As MQ does for a queue manager migrated from before CONNAUTH (CONNAUTH is
            // blanked by `migrated`).
            vec![AuthInfoDefinition::new(
                ferry_objects::authinfo::DEFAULT_IDPWOS,
                ferry_objects::AuthInfoType::IdPwOs,
            )]
        });
        let topics_added = s.topics.is_none();
        let topics = s.topics.unwrap_or_else(|| {
            // What `crtmqm` makes now: the root and the template.
            TopicDefinition::shipped().into()
        });
        let mut queues: BTreeMap<String, QueueDefinition> =
            s.queues.into_iter().map(|q| (q.name.clone(), q)).collect();
        if topics_added {
            for q in ferry_objects::topic::shipped_model_queues() {
                queues.entry(q.name.clone()).or_insert(q);
            }
        }
        Image {
            subscriptions: s
                .subscriptions
                .into_iter()
                .map(|d| (d.name.clone(), d))
                .collect(),
            topics: topics.into_iter().map(|t| (t.name.clone(), t)).collect(),
            topics_added,
            processes: s
                .processes
                .into_iter()
                .map(|p| (p.name.clone(), p))
                .collect(),
            namelists: s
                .namelists
                .into_iter()
                .map(|n| (n.name.clone(), n))
                .collect(),
            authority_records: s.authority_records,
            chlauth,
            chlauth_added,
            authinfos: authinfos.into_iter().map(|a| (a.name.clone(), a)).collect(),
            connauth_added,
            qmgr,
            queues,
            channels: s
                .channels
                .into_iter()
                .map(|c| (c.name.clone(), c))
                .collect(),
            listeners: s
                .listeners
                .into_iter()
                .map(|l| (l.name.clone(), l))
                .collect(),
        }
    }

    fn apply(&mut self, record: JournalRecord) {
        match record {
            JournalRecord::Queue(q) => {
                self.queues.insert(q.name.clone(), q);
            }
            JournalRecord::DeleteQueue(name) => {
                self.queues.remove(&name);
            }
            JournalRecord::Channel(c) => {
                self.channels.insert(c.name.clone(), c);
            }
            JournalRecord::DeleteChannel(name) => {
                self.channels.remove(&name);
            }
            JournalRecord::Listener(l) => {
                self.listeners.insert(l.name.clone(), l);
            }
            JournalRecord::DeleteListener(name) => {
                self.listeners.remove(&name);
            }
            JournalRecord::Qmgr(q) => self.qmgr = q,
            JournalRecord::Chlauth { profile, records } => {
                self.chlauth.replace_profile(&profile, records);
            }
            JournalRecord::AuthInfo(a) => {
                self.authinfos.insert(a.name.clone(), a);
            }
            JournalRecord::DeleteAuthInfo(name) => {
                self.authinfos.remove(&name);
            }
            JournalRecord::Process(p) => {
                self.processes.insert(p.name.clone(), p);
            }
            JournalRecord::DeleteProcess(name) => {
                self.processes.remove(&name);
            }
            JournalRecord::Namelist(n) => {
                self.namelists.insert(n.name.clone(), n);
            }
            JournalRecord::DeleteNamelist(name) => {
                self.namelists.remove(&name);
            }
            JournalRecord::Topic(t) => {
                self.topics.insert(t.name.clone(), t);
            }
            JournalRecord::DeleteTopic(name) => {
                self.topics.remove(&name);
            }
            JournalRecord::Subscription(d) => {
                self.subscriptions.insert(d.name.clone(), d);
            }
            JournalRecord::DeleteSubscription(name) => {
                self.subscriptions.remove(&name);
            }
            JournalRecord::AuthorityRecord(record) => {
                // A record that passed its checksums was written by this code from a
                // valid key: one that no longer parses is dropped, not fatal.
                let _ = record.apply(&mut self.authority_records);
            }
        }
    }

    /// After the journal: what a catalogue from before CHLAUTH or CONNAUTH must not do
    /// (its journal's ALTER QMGR records carry the attributes as they were then).
    fn migrated(&mut self) {
        if self.chlauth_added {
            self.qmgr.channel_auth = ferry_objects::queue::Enablement::Disabled;
        }
        if self.connauth_added {
            self.qmgr.connection_auth = String::new();
        }
    }

    /// The catalogue, sorted by name as [`Catalogue`] wants.
    fn into_catalogue(self) -> Catalogue {
        Catalogue {
            qmgr: self.qmgr,
            queues: self.queues.into_values().collect(),
            channels: self.channels.into_values().collect(),
            listeners: self.listeners.into_values().collect(),
            chlauth: self.chlauth,
            authinfos: self.authinfos.into_values().collect(),
            processes: self.processes.into_values().collect(),
            namelists: self.namelists.into_values().collect(),
            topics: self.topics.into_values().collect(),
            authority_records: self.authority_records,
            subscriptions: self.subscriptions.into_values().collect(),
        }
    }
}

/// What the files on disk hold.
struct OnDisk {
    image: Image,
    /// The snapshot's generation (None: the old format).
    generation: Option<u64>,
    snapshot_bytes: u64,
    /// The journal that applies, if any.
    journal: Option<JournalOnDisk>,
    /// A journal that does not apply (stale, or beside an old-format snapshot): its
    /// generation.
    stale_journal: Option<u64>,
}

struct JournalOnDisk {
    valid_len: u64,
    records: u64,
    torn_bytes: u64,
    torn_reason: Option<&'static str>,
}

/// Reads snapshot and journal (a torn tail is left out, not repaired).
fn read(snapshot: &Path) -> Result<OnDisk, CatalogueError> {
    let text = std::fs::read(snapshot).map_err(|e| CatalogueError::io(snapshot, e))?;
    let parsed: SnapshotIn =
        serde_json::from_slice(&text).map_err(|source| CatalogueError::Format {
            path: snapshot.display().to_string(),
            source,
        })?;
    let generation = parsed.generation;
    let mut image = Image::of(parsed);
    let jpath = journal_path(snapshot);
    let journal_bytes = match std::fs::read(&jpath) {
        Ok(b) => Some(b),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(CatalogueError::io(&jpath, e)),
    };
    let mut on_disk = OnDisk {
        image: Image::default(),
        generation,
        snapshot_bytes: text.len() as u64,
        journal: None,
        stale_journal: None,
    };
    let journal_error = |source| CatalogueError::Journal {
        path: jpath.display().to_string(),
        source,
    };
    match (generation, journal_bytes) {
        (None, None) => {}
        // The old format knew no journal: one beside it is left from a newer Ferry that
        // an older one followed, and the snapshot has everything since.
        (None, Some(bytes)) => {
            on_disk.stale_journal = journal::scan(&bytes).ok().map(|s| s.generation);
        }
        (Some(g), None) => {
            return Err(CatalogueError::JournalMissing {
                path: jpath.display().to_string(),
                generation: g,
            })
        }
        (Some(g), Some(bytes)) => {
            let scan = journal::scan(&bytes).map_err(journal_error)?;
            if scan.generation > g {
                return Err(CatalogueError::JournalAhead {
                    path: jpath.display().to_string(),
                    journal: scan.generation,
                    snapshot: g,
                });
            }
            if scan.generation < g {
                // Compaction stopped between the new snapshot and the new journal.
                on_disk.stale_journal = Some(scan.generation);
            } else {
                let records = scan.records.len() as u64;
                for r in scan.records {
                    image.apply(r);
                }
                on_disk.journal = Some(JournalOnDisk {
                    valid_len: scan.valid_len,
                    records,
                    torn_bytes: scan.torn_bytes,
                    torn_reason: scan.torn_reason,
                });
            }
        }
    }
    image.migrated();
    on_disk.image = image;
    Ok(on_disk)
}

/// Reads the definitions without changing any file (snapshot plus the journal's complete
/// records).
pub fn load(snapshot: &Path) -> Result<Catalogue, CatalogueError> {
    read(snapshot).map(|d| d.image.into_catalogue())
}

/// Where the store stands: what the writer thread needs to carry on appending.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreState {
    /// The snapshot (`objects.json`).
    pub snapshot: PathBuf,
    /// The generation of snapshot and journal.
    pub generation: u64,
    /// Bytes of the snapshot.
    pub snapshot_bytes: u64,
    /// Bytes of the journal (where the next record goes).
    pub journal_len: u64,
    /// The sequence number of the next record.
    pub next_seq: u64,
}

impl StoreState {
    /// Whether the journal has outgrown the snapshot ([`COMPACT_MIN_JOURNAL_BYTES`]).
    pub fn compaction_due(&self) -> bool {
        self.journal_len > self.snapshot_bytes.max(COMPACT_MIN_JOURNAL_BYTES)
    }
}

/// Something [`open`] did that the error log should say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenEvent {
    /// An old-format objects.json was converted to snapshot and journal.
    Converted,
    /// The catalogue predates channel authentication records: MQ's default records were
    /// added and CHLAUTH set to DISABLED.
    ChlauthAdded,
    /// The catalogue predates connection authentication: the default AUTHINFO object was
    /// added and CONNAUTH left blank.
    ConnauthAdded,
    /// The catalogue predates topic objects: SYSTEM.BASE.TOPIC, SYSTEM.DEFAULT.TOPIC and
    /// (where missing) SYSTEM.DURABLE.MODEL.QUEUE and SYSTEM.NDURABLE.MODEL.QUEUE were
    /// added.
    TopicsAdded,
    /// The journal ended in a write a crash cut short: these bytes were dropped.
    TornTail {
        /// Bytes dropped.
        bytes: u64,
        /// Why the first of them did not make a record.
        reason: &'static str,
    },
}

/// The definitions read at start, with the store ready for the writer.
pub struct Opened {
    /// The definitions.
    pub catalogue: Catalogue,
    /// Where the store stands.
    pub state: StoreState,
    /// What was repaired or converted.
    pub events: Vec<OpenEvent>,
}

/// Reads the definitions at start and makes the files ready to append to: an old-format
/// objects.json is converted, a stale journal replaced, a torn tail cut off, and a
/// journal that has outgrown its snapshot compacted.
pub fn open(snapshot: &Path) -> Result<Opened, CatalogueError> {
    let d = read(snapshot)?;
    let mut events = Vec::new();
    if d.image.chlauth_added {
        events.push(OpenEvent::ChlauthAdded);
    }
    if d.image.connauth_added {
        events.push(OpenEvent::ConnauthAdded);
    }
    if d.image.topics_added {
        events.push(OpenEvent::TopicsAdded);
    }
    // What the migration added is written at once (a new generation below), so that it
    // happens once: a later ALTER QMGR CHLAUTH(ENABLED) is not undone at the next start.
    let migrated = d.image.chlauth_added || d.image.connauth_added || d.image.topics_added;
    let catalogue_of = |image: Image| image.into_catalogue();
    let state = match (d.generation, d.journal) {
        (None, _) => {
            let catalogue = catalogue_of(d.image);
            let generation = d.stale_journal.unwrap_or(0) + 1;
            let state = write_generation(snapshot, &catalogue, generation, true)?;
            events.push(OpenEvent::Converted);
            return Ok(Opened {
                catalogue,
                state,
                events,
            });
        }
        (Some(g), None) => {
            // The journal is stale (compaction stopped after the snapshot): start a
            // fresh one for this snapshot.
            write_journal(&journal_path(snapshot), g)?;
            StoreState {
                snapshot: snapshot.to_path_buf(),
                generation: g,
                snapshot_bytes: d.snapshot_bytes,
                journal_len: journal::FILE_HEADER_LEN as u64,
                next_seq: 1,
            }
        }
        (Some(g), Some(j)) => {
            if j.torn_bytes > 0 {
                truncate(&journal_path(snapshot), j.valid_len)?;
                events.push(OpenEvent::TornTail {
                    bytes: j.torn_bytes,
                    reason: j.torn_reason.unwrap_or("damaged"),
                });
            }
            StoreState {
                snapshot: snapshot.to_path_buf(),
                generation: g,
                snapshot_bytes: d.snapshot_bytes,
                journal_len: j.valid_len,
                next_seq: j.records + 1,
            }
        }
    };
    let catalogue = catalogue_of(d.image);
    let state = if state.compaction_due() || migrated {
        write_generation(snapshot, &catalogue, state.generation + 1, false)?
    } else {
        state
    };
    Ok(Opened {
        catalogue,
        state,
        events,
    })
}

/// Writes the definitions of a new queue manager (`ferry create`): generation 1.
pub fn create(snapshot: &Path, catalogue: &Catalogue) -> Result<StoreState, CatalogueError> {
    write_generation(snapshot, catalogue, 1, true)
}

/// Replaces snapshot and journal by a new generation holding `catalogue` (start-up
/// recovery changed the definitions).
pub fn rewrite(state: &StoreState, catalogue: &Catalogue) -> Result<StoreState, CatalogueError> {
    write_generation(&state.snapshot, catalogue, state.generation + 1, false)
}

/// Folds the journal into a new snapshot, with `extra` records applied after it (those a
/// failed append could not write): reads what is on disk, so the caller needs no copy of
/// the definitions. Runs on the writer thread.
pub(crate) fn compact(
    state: &StoreState,
    extra: &[JournalRecord],
) -> Result<StoreState, CatalogueError> {
    let d = read(&state.snapshot)?;
    let mut image = d.image;
    for r in extra {
        image.apply(r.clone());
    }
    let generation = d.generation.unwrap_or(0).max(state.generation) + 1;
    write_generation(&state.snapshot, &image.into_catalogue(), generation, false)
}

/// Writes snapshot and an empty journal of `generation`. `journal_first` when no journal
/// of the snapshot's own generation may be lost (create, convert); otherwise the
/// snapshot goes first, so the journal it replaces stays until the snapshot holds its
/// records.
fn write_generation(
    snapshot: &Path,
    catalogue: &Catalogue,
    generation: u64,
    journal_first: bool,
) -> Result<StoreState, CatalogueError> {
    let jpath = journal_path(snapshot);
    if journal_first {
        write_journal(&jpath, generation)?;
    }
    let snapshot_bytes = write_snapshot(snapshot, catalogue, generation)?;
    if !journal_first {
        write_journal(&jpath, generation)?;
    }
    Ok(StoreState {
        snapshot: snapshot.to_path_buf(),
        generation,
        snapshot_bytes,
        journal_len: journal::FILE_HEADER_LEN as u64,
        next_seq: 1,
    })
}

/// Writes the snapshot atomically (temporary file, sync, rename, sync of the directory).
/// Returns its size.
fn write_snapshot(
    path: &Path,
    catalogue: &Catalogue,
    generation: u64,
) -> Result<u64, CatalogueError> {
    let out = SnapshotOut {
        generation,
        catalogue,
    };
    replace_file(path, "json.tmp", |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        serde_json::to_writer_pretty(&mut w, &out).map_err(std::io::Error::other)?;
        w.flush()
    })
}

/// Writes an empty journal of `generation` atomically.
fn write_journal(path: &Path, generation: u64) -> Result<u64, CatalogueError> {
    replace_file(path, "journal.tmp", |f| {
        f.write_all(&journal::encode_file_header(generation))
    })
}

/// Writes `path` through a temporary file with extension `tmp_ext`, synced before it is
/// renamed over `path`; then syncs the directory so the rename lasts. Returns the size.
fn replace_file(
    path: &Path,
    tmp_ext: &str,
    fill: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<u64, CatalogueError> {
    let tmp = path.with_extension(tmp_ext);
    let size = {
        let mut f = std::fs::File::create(&tmp).map_err(|e| CatalogueError::io(&tmp, e))?;
        fill(&mut f).map_err(|e| CatalogueError::io(&tmp, e))?;
        f.sync_all().map_err(|e| CatalogueError::io(&tmp, e))?;
        f.metadata().map_err(|e| CatalogueError::io(&tmp, e))?.len()
    };
    std::fs::rename(&tmp, path).map_err(|e| CatalogueError::io(path, e))?;
    sync_dir(path)?;
    Ok(size)
}

/// Syncs the directory holding `path` (a rename or a new file lasts only then).
fn sync_dir(path: &Path) -> Result<(), CatalogueError> {
    if let Some(dir) = path.parent() {
        let d = std::fs::File::open(dir).map_err(|e| CatalogueError::io(dir, e))?;
        d.sync_all().map_err(|e| CatalogueError::io(dir, e))?;
    }
    Ok(())
}

/// Cuts a torn tail off the journal.
fn truncate(path: &Path, len: u64) -> Result<(), CatalogueError> {
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| CatalogueError::io(path, e))?;
    f.set_len(len).map_err(|e| CatalogueError::io(path, e))?;
    f.sync_all().map_err(|e| CatalogueError::io(path, e))
}

#[cfg(test)]
mod tests;
