//! Browse marks (MQGMO_MARK_BROWSE_HANDLE, UNMARK_BROWSE_HANDLE, UNMARKED_BROWSE_MSG):
//! which messages of a queue each handle has marked as browsed.
//!
//! A browse with MARK_BROWSE_HANDLE marks the message it returns for its handle; a
//! browse with UNMARKED_BROWSE_MSG passes over the messages its handle marked (so
//! MQGMO_BROWSE_HANDLE, BROWSE_FIRST with both, sees each message once without relying
//! on the cursor); UNMARK_BROWSE_HANDLE removes the handle's mark from the message it
//! browses. A mark goes when its message is got destructively (also under syncpoint: a
//! message backed out comes back unmarked) and when its handle closes. Marks are not
//! logged: after a restart nothing is marked, as no handle survives one.
//!
//! The marks live on the queue, keyed by message, so a destructive get drops a
//! message's marks with one lookup. A queue where nothing is marked has no
//! [`BrowseMarks`] at all ([`crate::queue::LocalQueue::marks`] is `None`): getters then
//! pay one check of an `Option`. Marks of messages that went another way (expired,
//! cleared) are dropped when the map grows or their handle closes; a message's arrival
//! number is never reused, so a stale mark never marks another message.
//!
//! MQ's cooperative marks (MQOO_CO_OP, MARK_BROWSE_CO_OP, UNMARK_BROWSE_CO_OP and the
//! queue manager's MsgMarkBrowseInterval, which only ends cooperative marks) are not
//! implemented: docs/mqi.md says what is refused and with which reason.

use crate::connection::{ConnId, Hobj};
use crate::queue::MessageStore;
use ferry_mqi::{GetOptionFlags, MqError, ReasonCode};
use foldhash::HashMap;

/// Stale marks (of messages no longer stored) are pruned when the map reaches this.
const PRUNE_AT: usize = 1024;

/// The marks of one queue: for each marked message, the handles that marked it.
#[derive(Debug, Default)]
pub(crate) struct BrowseMarks {
    by_seq: HashMap<u64, Vec<(ConnId, Hobj)>>,
    /// The map's size after the last prune: the next prune waits until it doubles.
    pruned_at: usize,
}

impl BrowseMarks {
    /// True when `hobj` of `conn` marked message `seq`.
    pub fn is_marked(&self, seq: u64, conn: ConnId, hobj: Hobj) -> bool {
        self.by_seq
            .get(&seq)
            .is_some_and(|hs| hs.contains(&(conn, hobj)))
    }

    /// How many messages carry a mark.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_seq.len()
    }

    fn unmark(&mut self, seq: u64, conn: ConnId, hobj: Hobj) {
        if let Some(hs) = self.by_seq.get_mut(&seq) {
            hs.retain(|h| *h != (conn, hobj));
            if hs.is_empty() {
                self.by_seq.remove(&seq);
            }
        }
    }

    fn forget_handle(&mut self, conn: ConnId, hobj: Hobj) {
        self.by_seq.retain(|_, hs| {
            hs.retain(|h| *h != (conn, hobj));
            !hs.is_empty()
        });
    }
}

/// Refuses, with 2046 MQRC_OPTIONS_ERROR, MARK_BROWSE_HANDLE or UNMARK_BROWSE_HANDLE
/// without a browse option or together, UNMARKED_BROWSE_MSG without BROWSE_FIRST or
/// BROWSE_NEXT, and the cooperative options (valid in MQ only on a handle opened with
/// MQOO_CO_OP, which Ferry refuses).
pub(crate) fn check_options(o: GetOptionFlags) -> Result<(), MqError> {
    let handle_marks = GetOptionFlags::MARK_BROWSE_HANDLE | GetOptionFlags::UNMARK_BROWSE_HANDLE;
    let co_op = GetOptionFlags::MARK_BROWSE_CO_OP | GetOptionFlags::UNMARK_BROWSE_CO_OP;
    let bad = o.intersects(co_op)
        || (o.intersects(handle_marks) && !o.is_browse())
        || o.contains(handle_marks)
        || (o.contains(GetOptionFlags::UNMARKED_BROWSE_MSG)
            && !o.intersects(GetOptionFlags::BROWSE_FIRST | GetOptionFlags::BROWSE_NEXT));
    if bad {
        return Err(ReasonCode::OptionsError.into());
    }
    Ok(())
}

/// True when `hobj` of `conn` marked message `seq` (one check when nothing is marked).
#[inline]
pub(crate) fn is_marked(
    marks: &Option<Box<BrowseMarks>>,
    seq: u64,
    conn: ConnId,
    hobj: Hobj,
) -> bool {
    marks.as_ref().is_some_and(|m| m.is_marked(seq, conn, hobj))
}

/// Marks message `seq` as browsed by `hobj` of `conn`; `store` lets stale marks go.
pub(crate) fn mark(
    marks: &mut Option<Box<BrowseMarks>>,
    store: &MessageStore,
    seq: u64,
    conn: ConnId,
    hobj: Hobj,
) {
    let m = marks.get_or_insert_with(Box::default);
    if m.by_seq.len() >= PRUNE_AT.max(m.pruned_at * 2) {
        m.by_seq.retain(|s, _| store.contains(*s));
        m.pruned_at = m.by_seq.len();
    }
    let hs = m.by_seq.entry(seq).or_default();
    if !hs.contains(&(conn, hobj)) {
        hs.push((conn, hobj));
    }
    debug_assert!(m.is_marked(seq, conn, hobj), "a mark just made is missing");
}

/// Message `seq` was browsed by `hobj` of `conn` with options `o`: marked with
/// MARK_BROWSE_HANDLE, unmarked with UNMARK_BROWSE_HANDLE.
pub(crate) fn browsed(
    marks: &mut Option<Box<BrowseMarks>>,
    store: &MessageStore,
    seq: u64,
    conn: ConnId,
    hobj: Hobj,
    o: GetOptionFlags,
) {
    if o.contains(GetOptionFlags::MARK_BROWSE_HANDLE) {
        mark(marks, store, seq, conn, hobj);
    } else if o.contains(GetOptionFlags::UNMARK_BROWSE_HANDLE) {
        unmark(marks, seq, conn, hobj);
    }
}

/// Removes the mark of `hobj` of `conn` from message `seq`, if it has one.
pub(crate) fn unmark(marks: &mut Option<Box<BrowseMarks>>, seq: u64, conn: ConnId, hobj: Hobj) {
    if let Some(m) = marks {
        m.unmark(seq, conn, hobj);
        debug_assert!(!m.is_marked(seq, conn, hobj), "a mark survived unmarking");
        if m.by_seq.is_empty() {
            *marks = None;
        }
    }
}

/// Message `seq` was got destructively: its marks go. The hot path's only cost when
/// nothing is marked is this `Option` check.
#[inline]
pub(crate) fn message_got(marks: &mut Option<Box<BrowseMarks>>, seq: u64) {
    if let Some(m) = marks {
        m.by_seq.remove(&seq);
        if m.by_seq.is_empty() {
            *marks = None;
        }
    }
}

/// The handle `hobj` of `conn` closed: its marks go.
pub(crate) fn handle_closed(marks: &mut Option<Box<BrowseMarks>>, conn: ConnId, hobj: Hobj) {
    if let Some(m) = marks {
        m.forget_handle(conn, hobj);
        if m.by_seq.is_empty() {
            *marks = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_options_need_a_browse_and_co_op_is_refused() {
        let ok = |o| check_options(o).is_ok();
        assert!(ok(GetOptionFlags::BROWSE_HANDLE));
        assert!(ok(
            GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_HANDLE
        ));
        assert!(
            !ok(GetOptionFlags::MARK_BROWSE_HANDLE),
            "a mark needs a browse"
        );
        assert!(!ok(GetOptionFlags::BROWSE_FIRST
            | GetOptionFlags::MARK_BROWSE_HANDLE
            | GetOptionFlags::UNMARK_BROWSE_HANDLE));
        assert!(!ok(
            GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARKED_BROWSE_MSG
        ));
        assert!(!ok(
            GetOptionFlags::BROWSE_FIRST | GetOptionFlags::MARK_BROWSE_CO_OP
        ));
    }

    #[test]
    fn marks_are_per_handle_and_go_with_the_message_or_the_handle() {
        let store = MessageStore::default();
        let mut marks = None;
        let (a, b) = ((ConnId(1), Hobj(1)), (ConnId(1), Hobj(2)));
        mark(&mut marks, &store, 7, a.0, a.1);
        mark(&mut marks, &store, 7, b.0, b.1);
        mark(&mut marks, &store, 8, a.0, a.1);
        assert!(is_marked(&marks, 7, a.0, a.1) && is_marked(&marks, 7, b.0, b.1));
        assert!(!is_marked(&marks, 8, b.0, b.1));
        unmark(&mut marks, 7, b.0, b.1);
        assert!(!is_marked(&marks, 7, b.0, b.1) && is_marked(&marks, 7, a.0, a.1));
        message_got(&mut marks, 7);
        assert!(!is_marked(&marks, 7, a.0, a.1));
        handle_closed(&mut marks, a.0, a.1);
        assert!(marks.is_none(), "nothing marked: no marks at all");
    }

    #[test]
    fn stale_marks_are_pruned_as_the_map_grows() {
        let store = MessageStore::default();
        let mut marks = None;
        for seq in 0..(PRUNE_AT as u64 + 1) {
            mark(&mut marks, &store, seq, ConnId(1), Hobj(1));
        }
        // None of those messages is stored: the prune left only the last mark.
        assert_eq!(marks.as_ref().map(|m| m.len()), Some(1));
    }
}
