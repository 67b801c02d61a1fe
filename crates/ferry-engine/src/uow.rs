//! A connection's local unit of work: the syncpoint puts and gets not yet committed.
//!
//! Entries name the queue and the message's arrival number; the messages themselves stay
//! on their queues (uncommitted puts invisible, uncommitted gets hidden) so the queue's
//! CURDEPTH keeps counting them. Commit and backout walk the entries in order.

use crate::objects::QueueId;

/// One syncpoint operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum UowEntry {
    /// A message put under syncpoint.
    Put { queue: QueueId, seq: u64 },
    /// A message got under syncpoint.
    Get { queue: QueueId, seq: u64 },
}

/// The unit of work of one connection.
#[derive(Debug, Default)]
pub(crate) struct UnitOfWork {
    pub entries: Vec<UowEntry>,
    /// The id naming this unit of work in log records, once it logged something.
    pub log_id: Option<u64>,
    /// The queue manager backed this unit of work out to free recovery-log space: the
    /// application's next MQCMIT reports 2003 MQRC_BACKED_OUT.
    pub backed_out: bool,
    /// Trigger messages its puts made, put on their initiation queues when it ends
    /// (`crate::trigger`).
    pub triggers: Vec<crate::trigger::PendingTrigger>,
}

impl UnitOfWork {
    /// The unit of work's log id, taking the next one from `next` the first time.
    pub fn log_id(&mut self, next: &mut u64) -> u64 {
        *self.log_id.get_or_insert_with(|| {
            let id = *next;
            *next = next.wrapping_add(1);
            id
        })
    }

    /// Messages in the unit of work (what MAXUMSGS limits).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Drops every entry on `queue` (the queue is gone); returns how many.
    pub fn forget_queue(&mut self, queue: QueueId) -> usize {
        let before = self.entries.len();
        self.entries.retain(|e| match e {
            UowEntry::Put { queue: q, .. } | UowEntry::Get { queue: q, .. } => *q != queue,
        });
        before - self.entries.len()
    }
}
