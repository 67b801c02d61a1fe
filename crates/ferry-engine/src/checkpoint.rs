//! Checkpoints: what the server writes so the circular recovery log can reuse its space.
//!
//! The persistent messages that stay on queues live in **queue files** (one per queue,
//! written by the server; `ferry-store::queue_file`); the log only has to reach back to
//! the latest checkpoint. A checkpoint taken at log position `L` (between two engine
//! calls) is a [`CheckpointPlan`]:
//!
//! - an **image**, appended to the log at `L`: the committed persistent messages that
//!   changed since the previous checkpoint (as self-committing put records), then the
//!   persistent operations of every unit of work in flight;
//! - per queue, a [`QueueFiling`]: the messages its queue file must now hold that changed
//!   in the interval *before* that (so were in the previous image) and are still there,
//!   and the sequence numbers that must not be in it any more.
//!
//! The server applies the filings only once the log is durable up to `L` (the filings
//! show the queues as every record before `L` left them: written earlier, a crash could
//! leave a queue file ahead of the log, e.g. without a message whose get record was
//! lost, and the message would be lost with it), syncs the queue files, and only then
//! appends a checkpoint record whose restart point is `L`. A message got within one checkpoint
//! interval (request/reply traffic) is never filed at all; one that stays is imaged once
//! and filed once. When an image of the young messages would not fit in the log (a queue
//! filling faster than checkpoints come), the plan files those that appeared in
//! the interval at once instead ([`Young::InQueueFiles`]); those a queue file may already
//! hold (a new BackoutCount) are still imaged, because replacing a message in its file
//! is a remove then a put, and a crash between the two must not lose it. At restart the server loads the queue files
//! ([`QueueManager::restore_filed`]), then replays the log from the restart point.
//!
//! **Why replay is exact.** After the checkpoint at `L` is durable, every committed
//! persistent message present at `L` is in its queue file (if it changed two intervals
//! back or earlier) or in the image at `L` (if it changed in the last interval; a stale
//! copy in the file is replaced by the image's put). A crash can leave the queue files
//! *ahead* of the restart point: the next checkpoint's filings were synced but its
//! checkpoint record was not, so replay from `L` starts from messages that may already
//! show later changes. Every record replay meets is idempotent against that: a put
//! replaces the message, a get of an absent message (or the commit of a unit of work
//! whose get found nothing) changes nothing, and the one relative change — a backed-out
//! get adds 1 to BackoutCount — is always followed by a record of the new count as a
//! value. The server also starts a checkpoint only once the previous one's record is
//! durable, so the files are never more than one checkpoint ahead.

use crate::body::{Body, FiledRecord};
use crate::journal::{LogRecord, LoggedMessage};
use crate::qmgr::QueueManager;
use crate::queue::{Filing, MsgRef, MsgState, StoredMsg};
use crate::uow::UowEntry;
use ferry_mqi::ReasonCode;
use std::rc::Rc;

/// Where a checkpoint puts the messages that changed since the previous one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Young {
    /// In the log's image (the usual way: most are got before the next checkpoint).
    #[default]
    InImage,
    /// Straight into the queue files, when an image of them would not fit in the log:
    /// those that appeared since the last checkpoint (the others are still imaged).
    InQueueFiles,
}

/// What one checkpoint writes; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckpointPlan {
    /// Where this plan put the messages that changed in the last interval.
    pub young: Young,
    /// Records to append at the restart point, in order.
    pub image: Vec<LogRecord>,
    /// One entry per recoverable local queue (every one, so the server can also remove
    /// the files of queues that no longer exist).
    pub queues: Vec<QueueFiling>,
}

/// What one queue's file must take in a checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueFiling {
    /// The queue's name.
    pub queue: String,
    /// The file does not belong to this queue's current messages (a new queue, one
    /// defined again, or one whose file was not loaded): empty it first.
    pub fresh: bool,
    /// Messages to write, each replacing any copy the file has, in get order.
    pub file: Vec<LoggedMessage>,
    /// Sequence numbers the file must no longer hold (absent ones are fine).
    pub unfile: Vec<u64>,
}

impl QueueFiling {
    /// True when the file needs no change.
    pub fn is_empty(&self) -> bool {
        !self.fresh && self.file.is_empty() && self.unfile.is_empty()
    }

    /// The messages to write as queue-file records: each one's sequence number and the
    /// payload of its put record, in the log's encoding (one versioned codec serves the
    /// log and the queue files).
    pub fn put_records(&self) -> Vec<(u64, Vec<u8>)> {
        self.file
            .iter()
            .map(|m| {
                let rec = crate::journal::Record::Put {
                    uow: None,
                    queue: self.queue.clone(),
                    msg: m.clone(),
                };
                (m.seq, rec.encode().payload())
            })
            .collect()
    }
}

/// A committed persistent message (what images and queue files carry).
fn recoverable(m: &StoredMsg) -> bool {
    m.md.is_persistent() && !matches!(m.state, MsgState::UncommittedPut(_))
}

impl QueueManager {
    /// The checkpoint to take now, with the young messages where `young` says. Changes
    /// nothing: call [`QueueManager::checkpoint_taken`] right after the server has
    /// appended the image (with no engine call in between), or drop the plan. An error
    /// is a message body that had to be read back from its queue file and could not be
    /// (`crate::body` explains why that does not happen).
    pub fn checkpoint_plan(&self, young: Young) -> Result<CheckpointPlan, ReasonCode> {
        let mut plan = CheckpointPlan {
            young,
            ..CheckpointPlan::default()
        };
        for (_, e) in self.queues.iter() {
            let Some(lq) = e.local.as_ref() else {
                continue;
            };
            if e.is_temporary() {
                continue;
            }
            let store = &lq.store;
            let Filing {
                imaged,
                file_matches,
                file_started,
                interval_start,
                ..
            } = &store.filing;
            let changed = store.filing.changed_set();
            let present = |s: &u64| store.get(*s).filter(|m| recoverable(m));
            let mut young: Vec<MsgRef<'_>> = changed.iter().filter_map(present).collect();
            let mut settled: Vec<MsgRef<'_>> = imaged
                .iter()
                .filter(|s| changed.binary_search(s).is_err())
                .filter_map(present)
                .collect();
            match plan.young {
                Young::InImage => {
                    young.sort_by_key(|m| m.key);
                    for m in young {
                        plan.image
                            .push(LogRecord::put(None, &e.def.name, &m.logged()?));
                    }
                }
                Young::InQueueFiles => {
                    // Only messages that appeared in this interval go straight to the
                    // file: no file holds them, so filing one is a put alone. One the
                    // file may already hold (a new BackoutCount) is imaged instead:
                    // replacing it in the file is a remove then a put, and a crash
                    // between them would leave it in neither the file nor the log
                    // replayed from the previous checkpoint.
                    let (appeared, older): (Vec<_>, Vec<_>) = young
                        .into_iter()
                        .partition(|m| m.key.seq >= *interval_start);
                    for m in older {
                        plan.image
                            .push(LogRecord::put(None, &e.def.name, &m.logged()?));
                    }
                    settled.extend(appeared);
                }
            }
            settled.sort_by_key(|m| m.key);
            let mut unfile: Vec<u64> = changed
                .iter()
                .chain(imaged.iter())
                .filter(|s| !store.is_committed_persistent(**s))
                .copied()
                .collect();
            unfile.sort_unstable();
            unfile.dedup();
            plan.queues.push(QueueFiling {
                queue: e.def.name.clone(),
                // A spill may have started the file already (`Filing::file_started`).
                fresh: !file_matches && !file_started,
                file: settled
                    .iter()
                    .map(|m| m.logged())
                    .collect::<Result<_, _>>()?,
                unfile,
            });
        }
        plan.image.extend(self.uow_image()?);
        Ok(plan)
    }

    /// The server has appended the image of `plan`, just made: what changed until now is
    /// in it, to be filed by the next checkpoint (or filed already, by this one).
    pub fn checkpoint_taken(&mut self, plan: &CheckpointPlan) {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        (|| {
            let ids: Vec<_> = self.queues.iter().map(|(id, _)| id).collect();
            for id in ids {
                let temporary = self.queues.get(id).is_some_and(|e| e.is_temporary());
                let Some(lq) = self.queues.local_mut(id) else {
                    continue;
                };
                let next_seq = lq.store.next_seq();
                let f = &mut lq.store.filing;
                f.imaged = if temporary {
                    Vec::new()
                } else {
                    let mut imaged = f.changed_set();
                    if plan.young == Young::InQueueFiles {
                        // Those that appeared in the interval were filed, not imaged.
                        let start = f.interval_start;
                        imaged.retain(|seq| *seq < start);
                    }
                    imaged
                };
                f.changed.clear();
                f.file_matches = true;
                f.interval_start = next_seq;
            }
        })();
        self.debug_check();
    }

    /// Puts messages read back from queue `queue`'s file onto it (at restart, before the
    /// log is replayed; they count as unchanged), each with where its record is: bodies
    /// beyond the queue's buffer (DefaultPQBufferSize, `crate::body`) stay there, to be
    /// read when got. False when there is no such recoverable queue: the file belongs
    /// to a queue that no longer exists.
    pub fn restore_filed(
        &mut self,
        queue: &str,
        msgs: impl IntoIterator<Item = (LoggedMessage, Option<Rc<dyn FiledRecord>>)>,
    ) -> bool {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> bool {
            let budget = self.buffers.persistent;
            let Some(id) = self.recoverable_queue(queue) else {
                return false;
            };
            let Some(lq) = self.queues.local_mut(id) else {
                return false;
            };
            for (m, record) in msgs {
                let mut msg = StoredMsg::from_logged(m, MsgState::Available);
                let over = lq.store.resident_persistent_bytes() + msg.body.len() as u64 > budget;
                if let (true, Some(record)) = (over, record) {
                    msg.body = Body::Filed {
                        len: msg.body.len(),
                        record,
                    };
                }
                lq.store.insert_filed(msg);
            }
            lq.store.filing.file_matches = true;
            lq.store.filing.interval_start = lq.store.next_seq();
            true
        })();
        self.debug_check();
        result
    }

    /// The persistent operations of every unit of work in flight, in their order.
    fn uow_image(&self) -> Result<Vec<LogRecord>, ReasonCode> {
        let mut out = Vec::new();
        for c in self.conns.values() {
            let Some(id) = c.uow.log_id else {
                continue;
            };
            for entry in &c.uow.entries {
                let (UowEntry::Put { queue, seq } | UowEntry::Get { queue, seq }) = *entry;
                let Some(e) = self.queues.get(queue) else {
                    continue;
                };
                let Some(m) = e.local.as_ref().and_then(|lq| lq.store.get(seq)) else {
                    continue;
                };
                if !m.md.is_persistent() {
                    continue;
                }
                out.push(match entry {
                    UowEntry::Put { .. } => LogRecord::put(Some(id), &e.def.name, &m.logged()?),
                    UowEntry::Get { .. } => LogRecord::get(Some(id), &e.def.name, seq),
                });
            }
        }
        Ok(out)
    }
}
