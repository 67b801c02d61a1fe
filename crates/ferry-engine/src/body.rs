//! Message bodies held in memory or left in their queue file: MQ's DefaultPQBufferSize and
//! DefaultQBufferSize.
//!
//! A queue keeps the bodies of its persistent messages in memory up to its buffer size
//! (qm.ini `TuningParameters: DefaultPQBufferSize`, [`BufferSizes`]). Beyond that, a
//! message that its queue file already holds keeps only its descriptor, properties and
//! place in the queue here, in compact form (`crate::filed_message`); its body stays on
//! disk and is read back when it is delivered ([`FiledRecord`], implemented by the
//! server, which owns the files: the engine itself does no I/O). So a queue can hold far
//! more messages than memory while request/reply traffic, whose messages are got long
//! before they are filed, never reads a file.
//!
//! Which persistent bodies leave memory: when the server reports a checkpoint's filings
//! ([`crate::QueueManager::bodies_filed`]), the newest filed messages of a queue over its
//! buffer give up their bodies, so the head of the queue, next to be got, stays in
//! memory. At restart ([`crate::QueueManager::restore_filed`]) the first messages of each
//! queue up to the buffer keep their bodies; the rest are read back when got.
//!
//! Non-persistent messages are never filed by checkpoints, so a queue over its
//! DefaultQBufferSize **spills** them (`crate::spill`) to its queue file, after which they
//! give up their bodies the same way.
//!
//! One rule keeps checkpoints simple: **a message whose change is noted for the next
//! checkpoint has its body in memory.** A body leaves memory only for a message just
//! filed and unchanged since, and a message that is delivered and may come back (got
//! under syncpoint, held for a consumer) takes its body back into memory first; so the
//! log's images and the next filings need no read (`StoredMsg::logged` reads if ever
//! they do: a restart that replays a BackoutCount change onto a message restored without
//! its body).

use bytes::Bytes;
use ferry_mqi::ReasonCode;
use std::fmt;
use std::rc::Rc;

/// Where a filed message's body can be read back: a record of its queue file. The
/// server implements it; a read error is the MQ reason code the getter receives (the
/// message stays on its queue).
pub trait FiledRecord: fmt::Debug {
    /// Reads the message's body back from disk.
    fn read_body(&self) -> Result<Bytes, ReasonCode>;
}

/// The per-queue memory buffers (qm.ini TuningParameters), in bytes of message bodies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferSizes {
    /// DefaultQBufferSize: non-persistent messages' bodies kept in memory per queue;
    /// beyond it the newest are spilled to the queue file.
    pub non_persistent: u64,
    /// DefaultPQBufferSize: persistent messages' bodies kept in memory per queue once
    /// they are in its queue file.
    pub persistent: u64,
}

impl Default for BufferSizes {
    /// MQ's defaults on 64-bit platforms: 64 KiB and 128 KiB.
    fn default() -> Self {
        BufferSizes {
            non_persistent: 64 * 1024,
            persistent: 128 * 1024,
        }
    }
}

/// A body just written to a queue file, as the server reports it after a checkpoint:
/// which message it is and where to read it back.
#[derive(Clone, Debug)]
pub struct FiledBody {
    /// The message's arrival number on its queue.
    pub seq: u64,
    /// Its MsgId and put time, to make sure the report still names the message the
    /// store has under `seq` (a queue deleted and defined again numbers afresh).
    pub msg_id: ferry_mqi::MsgId,
    /// When it was put, ms.
    pub put_ms: u64,
    /// Where to read the body back.
    pub record: Rc<dyn FiledRecord>,
}

impl FiledBody {
    /// Message `m`, as filed or spilled, at `record`.
    pub fn new(m: &crate::LoggedMessage, record: Rc<dyn FiledRecord>) -> Self {
        FiledBody {
            seq: m.seq,
            msg_id: m.md.msg_id,
            put_ms: m.put_ms,
            record,
        }
    }
}

/// A stored message's body.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    /// In memory.
    Resident(Bytes),
    /// Only in the queue file.
    Filed {
        /// The body's length (MQGET's DataLength without a read).
        len: usize,
        /// Where to read it.
        record: Rc<dyn FiledRecord>,
    },
}

impl Body {
    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        match self {
            Body::Resident(b) => b.len(),
            Body::Filed { len, .. } => *len,
        }
    }

    /// True when the body is in memory.
    pub fn is_resident(&self) -> bool {
        matches!(self, Body::Resident(_))
    }

    /// The bytes: shared when in memory, read from the queue file otherwise (checked
    /// against the length the message had).
    pub fn load(&self) -> Result<Bytes, ReasonCode> {
        match self {
            Body::Resident(b) => Ok(b.clone()),
            Body::Filed { len, record } => {
                let b = record.read_body()?;
                if b.len() == *len {
                    Ok(b)
                } else {
                    Err(ReasonCode::UnexpectedError)
                }
            }
        }
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::Resident(Bytes::new())
    }
}

impl From<Bytes> for Body {
    fn from(b: Bytes) -> Self {
        Body::Resident(b)
    }
}

impl crate::QueueManager {
    /// The server has written and synced `filed`, messages of queue `queue` in get
    /// order, to its queue file (a checkpoint's filing): while the queue's persistent
    /// bodies in memory exceed its buffer, the newest of these that are still there,
    /// available and unchanged since give up their bodies. Returns the bytes freed.
    pub fn bodies_filed(&mut self, queue: &str, filed: &[FiledBody]) -> u64 {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> u64 {
            let budget = self.buffers.persistent;
            let Some(id) = self.recoverable_queue(queue) else {
                return 0;
            };
            let Some(lq) = self.queues.local_mut(id) else {
                return 0;
            };
            let store = &mut lq.store;
            if store.resident_persistent_bytes() <= budget {
                return 0;
            }
            let changed = store.filing.changed_set();
            let mut freed = 0;
            for f in filed.iter().rev() {
                if store.resident_persistent_bytes() <= budget {
                    break;
                }
                freed += store.leave_filed(f, &changed);
            }
            freed
        })();
        self.debug_check();
        result
    }
}

impl crate::QueueManager {
    /// The server has compacted queue `queue`'s file: `moved` says where each live
    /// message's record is now. Bodies left on disk read from there from now on, so the
    /// old segments' space can be freed.
    pub fn bodies_moved(&mut self, queue: &str, moved: &[(u64, Rc<dyn FiledRecord>)]) {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        (|| {
            if moved.is_empty() {
                return;
            }
            let Some(id) = self.queues.lookup(queue) else {
                return;
            };
            let Some(lq) = self.queues.local_mut(id) else {
                return;
            };
            for (seq, record) in moved {
                lq.store.relocate(*seq, record);
            }
        })();
        self.debug_check();
    }
}
