//! The definitions writer: a thread that appends journal records, syncs, compacts, and
//! tells the runtime thread how far the changes are durable.
//!
//! The runtime thread never waits for the disk here: [`CatalogueWriter::submit`] hands
//! the records over and returns a ticket; the reply of the request that made the change
//! waits (aside, see `runtime::server`) until [`CatalogueWriter::outcome`] says its ticket
//! is durable. The thread takes every record that has arrived since its last write, writes
//! them with one `write` and one sync (DEFINEs that come together share a sync), stores
//! the highest ticket written in an atomic and wakes the runtime once per write, as the
//! recovery log's writer does (`runtime/log_driver.rs`).
//!
//! A failed write or sync fails the tickets it carried (their replies say the change could
//! not be saved; it stays in effect in memory) and keeps their records: the thread retries
//! them, once a second or with the next change, by writing a whole new snapshot, which
//! needs nothing of the journal file that failed. Compaction (a new snapshot when the
//! journal has outgrown the old one) runs on this thread too, between writes.

use super::journal::{self, JournalRecord};
use super::{compact, CatalogueError, StoreState};
use std::cell::{Cell, RefCell};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use tokio::sync::Notify;

/// How long after a failed write the thread tries again without a new change.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// The journal is grown with zeros this much at a time, ahead of the records: a sync of
/// records written into space already allocated need not update the file's size, which
/// costs more than the write (docs/architecture.md, "zero-filled extents").
const PREALLOCATE: u64 = 1 << 20;

/// Zeros to grow the journal with, a chunk at a time.
static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];

/// Where a ticket stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Not written yet.
    Pending,
    /// Written and synced.
    Durable,
    /// Its write failed (the error is in [`CatalogueWriter::take_error`]).
    Failed,
}

/// What the thread and the runtime share.
struct Shared {
    /// Every ticket up to this is durable.
    durable: AtomicU64,
    /// Every ticket up to this that is not durable failed.
    failed: AtomicU64,
    /// The last failure not yet reported.
    error: Mutex<Option<String>>,
    /// Compactions done, for status and tests.
    compactions: AtomicU64,
    /// Wakes the runtime thread's release task once per write.
    wake: Arc<Notify>,
}

/// Records with their tickets, as handed to the thread.
type Batch = Vec<(u64, JournalRecord)>;

/// The runtime thread's handle on the writer thread.
pub struct CatalogueWriter {
    tx: RefCell<Option<mpsc::Sender<Batch>>>,
    thread: RefCell<Option<JoinHandle<()>>>,
    shared: Arc<Shared>,
    /// The last ticket handed out.
    last_ticket: Cell<u64>,
}

impl CatalogueWriter {
    /// Starts the thread on a store [`super::open`] made ready.
    pub fn start(state: StoreState) -> Result<Self, CatalogueError> {
        let jpath = super::journal_path(&state.snapshot);
        let file = open_journal(&jpath)?;
        let allocated = file
            .metadata()
            .map_err(|e| CatalogueError::io(&jpath, e))?
            .len();
        let shared = Arc::new(Shared {
            durable: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            error: Mutex::new(None),
            compactions: AtomicU64::new(0),
            wake: Arc::new(Notify::new()),
        });
        let (tx, rx) = mpsc::channel();
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ferry-objects".into())
            .spawn(move || {
                Thread {
                    state,
                    file: Some(file),
                    allocated,
                    shared: thread_shared,
                    pending: Vec::new(),
                    healthy: true,
                }
                .run(rx)
            })
            .map_err(|e| CatalogueError::io(&jpath, e))?;
        Ok(CatalogueWriter {
            tx: RefCell::new(Some(tx)),
            thread: RefCell::new(Some(thread)),
            shared,
            last_ticket: Cell::new(0),
        })
    }

    /// Hands `records` to the thread; returns the ticket that is durable once they all
    /// are. Never blocks.
    pub fn submit(&self, records: Vec<JournalRecord>) -> u64 {
        let first = self.last_ticket.get() + 1;
        let last = self.last_ticket.get() + records.len() as u64;
        self.last_ticket.set(last);
        let batch: Batch = (first..).zip(records).collect();
        let sent = self
            .tx
            .borrow()
            .as_ref()
            .is_some_and(|tx| tx.send(batch).is_ok());
        if !sent {
            self.fail(last, "the definitions writer has stopped".into());
        }
        last
    }

    fn fail(&self, ticket: u64, why: String) {
        self.shared.failed.fetch_max(ticket, Ordering::AcqRel);
        if let Ok(mut e) = self.shared.error.lock() {
            *e = Some(why);
        }
        self.shared.wake.notify_one();
    }

    /// Where `ticket` stands.
    pub fn outcome(&self, ticket: u64) -> Outcome {
        if ticket <= self.shared.durable.load(Ordering::Acquire) {
            Outcome::Durable
        } else if ticket <= self.shared.failed.load(Ordering::Acquire) {
            Outcome::Failed
        } else {
            Outcome::Pending
        }
    }

    /// The last ticket handed out.
    pub fn last_ticket(&self) -> u64 {
        self.last_ticket.get()
    }

    /// Woken after every write (and failure): the runtime's release task waits on it.
    pub fn wake(&self) -> Arc<Notify> {
        self.shared.wake.clone()
    }

    /// The last failure, once (for the error log).
    pub fn take_error(&self) -> Option<String> {
        self.shared.error.lock().ok().and_then(|mut e| e.take())
    }

    /// Compactions done since the start.
    pub fn compactions(&self) -> u64 {
        self.shared.compactions.load(Ordering::Acquire)
    }

    /// Stops the thread once everything submitted is written (or has failed once more).
    pub fn finish(&self) {
        drop(self.tx.borrow_mut().take());
        if let Some(t) = self.thread.borrow_mut().take() {
            let _ = t.join();
        }
    }
}

impl Drop for CatalogueWriter {
    fn drop(&mut self) {
        self.finish();
    }
}

fn open_journal(path: &std::path::Path) -> Result<std::fs::File, CatalogueError> {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| CatalogueError::io(path, e))
}

/// The writer thread's state.
struct Thread {
    state: StoreState,
    /// The journal, open for writing (None after a failure until a new one is made).
    file: Option<std::fs::File>,
    /// Its size: records up to `state.journal_len`, zeros after.
    allocated: u64,
    shared: Arc<Shared>,
    /// Records not yet durable, oldest first, with their tickets.
    pending: Batch,
    /// False after a failed write: the next attempt writes a whole new generation.
    healthy: bool,
}

impl Thread {
    fn run(mut self, rx: mpsc::Receiver<Batch>) {
        let mut open = true;
        while open {
            let first = if self.pending.is_empty() {
                rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            } else {
                rx.recv_timeout(RETRY_AFTER)
            };
            match first {
                Ok(batch) => self.pending.extend(batch),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => open = false,
            }
            // Everything that has arrived meanwhile shares this write and its sync.
            while let Ok(batch) = rx.try_recv() {
                self.pending.extend(batch);
            }
            if !self.pending.is_empty() {
                self.write_pending();
            }
        }
    }

    fn write_pending(&mut self) {
        let top = self.pending.last().map_or(0, |(t, _)| *t);
        let written = if self.healthy {
            self.append()
        } else {
            self.recompact()
        };
        match written {
            Ok(()) => {
                self.pending.clear();
                self.shared.durable.fetch_max(top, Ordering::AcqRel);
                if self.state.compaction_due() {
                    // On failure the next change writes a whole generation itself.
                    if let Err(e) = self.recompact() {
                        self.report(e.to_string());
                    }
                }
            }
            Err(e) => {
                self.healthy = false;
                self.file = None;
                self.shared.failed.fetch_max(top, Ordering::AcqRel);
                self.report(e.to_string());
            }
        }
        self.shared.wake.notify_one();
    }

    fn report(&self, why: String) {
        if let Ok(mut e) = self.shared.error.lock() {
            *e = Some(why);
        }
    }

    /// Appends the pending records to the journal with one write and one sync.
    fn append(&mut self) -> Result<(), CatalogueError> {
        let jpath = super::journal_path(&self.state.snapshot);
        let io = |e| CatalogueError::io(&jpath, e);
        let mut buf = Vec::with_capacity(self.pending.len() * 1024);
        let mut seq = self.state.next_seq;
        for (_, r) in &self.pending {
            journal::encode_record(seq, r, &mut buf).map_err(|e| io(std::io::Error::other(e)))?;
            seq += 1;
        }
        let file = self
            .file
            .as_ref()
            .ok_or_else(|| io(std::io::Error::other("the journal is not open")))?;
        let end = self.state.journal_len + buf.len() as u64;
        if end > self.allocated {
            // Grow ahead; the sync below covers the new size with the records.
            let target = end.div_ceil(PREALLOCATE) * PREALLOCATE + PREALLOCATE;
            let mut at = self.allocated.max(self.state.journal_len);
            while at < target {
                let n = (target - at).min(ZEROS.len() as u64) as usize;
                file.write_all_at(&ZEROS[..n], at).map_err(io)?;
                at += n as u64;
            }
            self.allocated = target;
        }
        file.write_all_at(&buf, self.state.journal_len)
            .map_err(io)?;
        file.sync_data().map_err(io)?;
        self.state.journal_len += buf.len() as u64;
        self.state.next_seq = seq;
        Ok(())
    }

    /// Writes a new generation: what is on disk plus the pending records. Until it has
    /// succeeded the thread is unhealthy: a compaction that stopped half way may have
    /// written the new snapshot, after which an append to the old journal would be lost.
    fn recompact(&mut self) -> Result<(), CatalogueError> {
        self.file = None;
        self.healthy = false;
        let state = compact(&self.state, &self.pending_records())?;
        let jpath = super::journal_path(&state.snapshot);
        self.file = Some(open_journal(&jpath)?);
        self.allocated = state.journal_len;
        self.state = state;
        self.healthy = true;
        self.shared.compactions.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    fn pending_records(&self) -> Vec<JournalRecord> {
        self.pending.iter().map(|(_, r)| r.clone()).collect()
    }
}
