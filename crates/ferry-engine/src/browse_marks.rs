//! Browse marks (MQGMO_MARK_BROWSE_HANDLE, UNMARK_BROWSE_HANDLE, UNMARKED_BROWSE_MSG, and
//! the cooperative MARK_BROWSE_CO_OP, UNMARK_BROWSE_CO_OP): which messages of a queue each
//! handle, or the set of cooperating handles, has marked as browsed.
//!
//! A browse with MARK_BROWSE_HANDLE marks the message it returns for its handle; a
//! browse with UNMARKED_BROWSE_MSG passes over the messages its handle marked (so
//! MQGMO_BROWSE_HANDLE, BROWSE_FIRST with both, sees each message once without relying
//! on the cursor); UNMARK_BROWSE_HANDLE removes the handle's mark from the message it
//! browses. A mark goes when its message is got destructively (also under syncpoint: a
//! message backed out comes back unmarked) and when its handle closes. Marks are not
//! logged: after a restart nothing is marked, as no handle survives one.
//!
//! Cooperative marks belong to the queue's set of handles opened with MQOO_CO_OP (and
//! BROWSE): dispatchers that share out a queue's messages. MARK_BROWSE_CO_OP (the usual
//! form is MQGMO_BROWSE_CO_OP, with BROWSE_FIRST and UNMARKED_BROWSE_MSG) marks the
//! message for the whole set, so the UNMARKED_BROWSE_MSG browses of every cooperating
//! handle pass over it while its dispatcher hands it to a worker; UNMARK_BROWSE_CO_OP
//! gives it back to the set. A cooperative mark lasts until its message is got, until
//! the queue manager's MsgMarkBrowseInterval (MARKINT, milliseconds, default 5000;
//! NOLIMIT: for ever) has passed since it was made, so a message whose dispatcher died
//! or forgot it is offered again, or until the last cooperating handle of the queue
//! closes. Marking a message the set has already marked keeps the first mark (and its
//! time). Only cooperating handles see cooperative marks.
//!
//! The marks live on the queue, keyed by message, so a destructive get drops a
//! message's marks with one lookup. A queue where nothing is marked has no
//! [`BrowseMarks`] at all ([`crate::queue::LocalQueue::marks`] is `None`): getters then
//! pay one check of an `Option`. Marks of messages that went another way (expired,
//! cleared) are dropped when the map grows or their handle closes; a message's arrival
//! number is never reused, so a stale mark never marks another message.

use crate::clock::Timestamp;
use crate::connection::{ConnId, Handle, Hobj};
use crate::queue::MessageStore;
use ferry_mqi::{GetOptionFlags, MqError, OpenOptions, ReasonCode};
use foldhash::HashMap;

/// Stale marks (of messages no longer stored) are pruned when the map reaches this.
const PRUNE_AT: usize = 1024;

/// The marks of one queue: for each marked message, the handles that marked it, and the
/// messages marked for the cooperating handles with the time of each mark.
#[derive(Debug, Default)]
pub(crate) struct BrowseMarks {
    by_seq: HashMap<u64, Vec<(ConnId, Hobj)>>,
    /// Cooperative marks: message → when it was marked (ms).
    co_op: HashMap<u64, u64>,
    /// The maps' size after the last prune: the next prune waits until it doubles.
    pruned_at: usize,
}

/// True when `h` was opened with MQOO_CO_OP: one of its queue's cooperating handles.
pub(crate) fn cooperates(h: &Handle) -> bool {
    h.options.contains(OpenOptions::CO_OP)
}

/// The handle a browse runs on, as the marks see it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Browser {
    /// The handle's connection.
    pub conn: ConnId,
    /// The handle.
    pub hobj: Hobj,
    /// For a handle opened with MQOO_CO_OP: the time, and MARKINT (None: NOLIMIT).
    co_op: Option<(u64, Option<u64>)>,
}

impl Browser {
    /// Handle `hobj` of `conn`, cooperating when `co_op` (opened with MQOO_CO_OP), at
    /// `now` under the queue manager's MARKINT `mark_interval` (-1: NOLIMIT).
    pub fn new(conn: ConnId, hobj: Hobj, co_op: bool, mark_interval: i32, now: Timestamp) -> Self {
        let interval = u64::try_from(mark_interval).ok();
        Browser {
            conn,
            hobj,
            co_op: co_op.then_some((now.ms(), interval)),
        }
    }

    /// True when a cooperative mark made at `at` still holds for this handle.
    fn co_op_mark_holds(&self, at: u64) -> bool {
        self.co_op
            .is_some_and(|(now, interval)| interval.is_none_or(|i| now.saturating_sub(at) < i))
    }
}

impl BrowseMarks {
    /// True when `b`'s handle marked message `seq`, or, for a cooperating handle, the
    /// cooperating set did and the mark has not lapsed.
    pub fn is_marked(&self, seq: u64, b: &Browser) -> bool {
        self.by_seq
            .get(&seq)
            .is_some_and(|hs| hs.contains(&(b.conn, b.hobj)))
            || self
                .co_op
                .get(&seq)
                .is_some_and(|at| b.co_op_mark_holds(*at))
    }

    /// How many messages carry a mark.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.by_seq.len() + self.co_op.len()
    }

    fn is_empty(&self) -> bool {
        self.by_seq.is_empty() && self.co_op.is_empty()
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

    /// Lets the marks of messages no longer stored go, once the maps have doubled.
    fn prune(&mut self, store: &MessageStore) {
        if self.by_seq.len() + self.co_op.len() >= PRUNE_AT.max(self.pruned_at * 2) {
            self.by_seq.retain(|s, _| store.contains(*s));
            self.co_op.retain(|s, _| store.contains(*s));
            self.pruned_at = self.by_seq.len() + self.co_op.len();
        }
    }
}

/// Refuses, with 2046 MQRC_OPTIONS_ERROR: a mark or unmark option without a browse
/// option; MARK and UNMARK of the same kind together; UNMARKED_BROWSE_MSG without
/// BROWSE_FIRST or BROWSE_NEXT; and the cooperative options on a handle not opened with
/// MQOO_CO_OP (`co_op`), as MQ does.
pub(crate) fn check_options(o: GetOptionFlags, co_op: bool) -> Result<(), MqError> {
    let handle_marks = GetOptionFlags::MARK_BROWSE_HANDLE | GetOptionFlags::UNMARK_BROWSE_HANDLE;
    let co_op_marks = GetOptionFlags::MARK_BROWSE_CO_OP | GetOptionFlags::UNMARK_BROWSE_CO_OP;
    let any_mark = handle_marks | co_op_marks;
    let bad = (o.intersects(co_op_marks) && !co_op)
        || (o.intersects(any_mark) && !o.is_browse())
        || o.contains(handle_marks)
        || o.contains(co_op_marks)
        || (o.contains(GetOptionFlags::UNMARKED_BROWSE_MSG)
            && !o.intersects(GetOptionFlags::BROWSE_FIRST | GetOptionFlags::BROWSE_NEXT));
    if bad {
        return Err(ReasonCode::OptionsError.into());
    }
    Ok(())
}

/// True when message `seq` is marked for `b` (one check when nothing is marked).
#[inline]
pub(crate) fn is_marked(marks: &Option<Box<BrowseMarks>>, seq: u64, b: &Browser) -> bool {
    marks.as_ref().is_some_and(|m| m.is_marked(seq, b))
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
    m.prune(store);
    let hs = m.by_seq.entry(seq).or_default();
    if !hs.contains(&(conn, hobj)) {
        hs.push((conn, hobj));
    }
    debug_assert!(
        m.by_seq
            .get(&seq)
            .is_some_and(|hs| hs.contains(&(conn, hobj))),
        "a mark just made is missing"
    );
}

/// Marks message `seq` for the cooperating handles at `b`'s time, unless the set's mark
/// on it still holds; `store` lets stale marks go.
fn mark_co_op(marks: &mut Option<Box<BrowseMarks>>, store: &MessageStore, seq: u64, b: &Browser) {
    let Some((now, interval)) = b.co_op else {
        debug_assert!(
            false,
            "a cooperative mark from a handle not opened with CO_OP"
        );
        return;
    };
    let m = marks.get_or_insert_with(Box::default);
    m.prune(store);
    let at = m.co_op.entry(seq).or_insert(now);
    if !b.co_op_mark_holds(*at) {
        *at = now;
    }
    debug_assert!(
        m.is_marked(seq, b) || interval == Some(0),
        "a co-op mark just made is missing"
    );
}

/// Message `seq` was browsed by `b` with options `o`: marked with MARK_BROWSE_HANDLE or
/// MARK_BROWSE_CO_OP, unmarked with UNMARK_BROWSE_HANDLE or UNMARK_BROWSE_CO_OP.
pub(crate) fn browsed(
    marks: &mut Option<Box<BrowseMarks>>,
    store: &MessageStore,
    seq: u64,
    b: &Browser,
    o: GetOptionFlags,
) {
    if o.contains(GetOptionFlags::MARK_BROWSE_HANDLE) {
        mark(marks, store, seq, b.conn, b.hobj);
    } else if o.contains(GetOptionFlags::UNMARK_BROWSE_HANDLE) {
        unmark(marks, seq, b.conn, b.hobj);
    }
    if o.contains(GetOptionFlags::MARK_BROWSE_CO_OP) {
        mark_co_op(marks, store, seq, b);
    } else if o.contains(GetOptionFlags::UNMARK_BROWSE_CO_OP) {
        if let Some(m) = marks {
            m.co_op.remove(&seq);
            debug_assert!(
                !m.co_op.contains_key(&seq),
                "a co-op mark survived unmarking"
            );
        }
        drop_if_empty(marks);
    }
}

/// Removes the mark of `hobj` of `conn` from message `seq`, if it has one.
pub(crate) fn unmark(marks: &mut Option<Box<BrowseMarks>>, seq: u64, conn: ConnId, hobj: Hobj) {
    if let Some(m) = marks {
        m.unmark(seq, conn, hobj);
        debug_assert!(
            !m.by_seq
                .get(&seq)
                .is_some_and(|hs| hs.contains(&(conn, hobj))),
            "a mark survived unmarking"
        );
    }
    drop_if_empty(marks);
}

/// Message `seq` was got destructively: its marks go. The hot path's only cost when
/// nothing is marked is this `Option` check.
#[inline]
pub(crate) fn message_got(marks: &mut Option<Box<BrowseMarks>>, seq: u64) {
    if let Some(m) = marks {
        m.by_seq.remove(&seq);
        m.co_op.remove(&seq);
        drop_if_empty(marks);
    }
}

/// The handle `hobj` of `conn` closed: its marks go, and the cooperative marks too when
/// it was the queue's last cooperating handle (`last_co_op`).
pub(crate) fn handle_closed(
    marks: &mut Option<Box<BrowseMarks>>,
    conn: ConnId,
    hobj: Hobj,
    last_co_op: bool,
) {
    if let Some(m) = marks {
        m.forget_handle(conn, hobj);
        if last_co_op {
            m.co_op.clear();
        }
    }
    drop_if_empty(marks);
}

/// Nothing marked: no marks at all, so gets pay one `Option` check.
fn drop_if_empty(marks: &mut Option<Box<BrowseMarks>>) {
    if marks.as_ref().is_some_and(|m| m.is_empty()) {
        *marks = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn browser(hobj: i32, co_op: bool, interval: i32, now: u64) -> Browser {
        Browser::new(ConnId(1), Hobj(hobj), co_op, interval, Timestamp(now))
    }

    #[test]
    fn mark_options_need_a_browse_and_co_op_needs_a_co_op_handle() {
        let ok = |o| check_options(o, false).is_ok();
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
        assert!(!ok(GetOptionFlags::BROWSE_CO_OP), "co-op needs MQOO_CO_OP");
        let co_op = |o| check_options(o, true).is_ok();
        assert!(co_op(GetOptionFlags::BROWSE_CO_OP));
        assert!(co_op(
            GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_CO_OP
        ));
        assert!(
            !co_op(GetOptionFlags::MARK_BROWSE_CO_OP),
            "a mark needs a browse"
        );
        assert!(!co_op(
            GetOptionFlags::BROWSE_FIRST
                | GetOptionFlags::MARK_BROWSE_CO_OP
                | GetOptionFlags::UNMARK_BROWSE_CO_OP
        ));
    }

    #[test]
    fn marks_are_per_handle_and_go_with_the_message_or_the_handle() {
        let store = MessageStore::default();
        let mut marks = None;
        let (a, b) = (browser(1, false, 5000, 0), browser(2, false, 5000, 0));
        mark(&mut marks, &store, 7, a.conn, a.hobj);
        mark(&mut marks, &store, 7, b.conn, b.hobj);
        mark(&mut marks, &store, 8, a.conn, a.hobj);
        assert!(is_marked(&marks, 7, &a) && is_marked(&marks, 7, &b));
        assert!(!is_marked(&marks, 8, &b));
        unmark(&mut marks, 7, b.conn, b.hobj);
        assert!(!is_marked(&marks, 7, &b) && is_marked(&marks, 7, &a));
        message_got(&mut marks, 7);
        assert!(!is_marked(&marks, 7, &a));
        handle_closed(&mut marks, a.conn, a.hobj, false);
        assert!(marks.is_none(), "nothing marked: no marks at all");
    }

    #[test]
    fn a_co_op_mark_holds_for_the_cooperating_handles_until_markint() {
        let store = MessageStore::default();
        let mut marks = None;
        let a = browser(1, true, 5000, 1_000);
        browsed(&mut marks, &store, 7, &a, GetOptionFlags::BROWSE_CO_OP);
        let b_soon = browser(2, true, 5000, 5_999);
        let b_later = browser(2, true, 5000, 6_000);
        let plain = browser(3, false, 5000, 2_000);
        assert!(is_marked(&marks, 7, &b_soon), "marked for the whole set");
        assert!(!is_marked(&marks, 7, &b_later), "lapsed after MARKINT");
        assert!(
            !is_marked(&marks, 7, &plain),
            "only cooperating handles see it"
        );
        let unlimited = browser(2, true, -1, u64::MAX);
        assert!(is_marked(&marks, 7, &unlimited), "NOLIMIT never lapses");

        // Marking again keeps the first time; after it lapsed, a new mark starts.
        browsed(&mut marks, &store, 7, &b_soon, GetOptionFlags::BROWSE_CO_OP);
        assert!(!is_marked(&marks, 7, &b_later));
        browsed(
            &mut marks,
            &store,
            7,
            &b_later,
            GetOptionFlags::BROWSE_CO_OP,
        );
        assert!(is_marked(&marks, 7, &browser(1, true, 5000, 10_999)));

        let unmark = GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_CO_OP;
        browsed(&mut marks, &store, 7, &b_soon, unmark);
        assert!(marks.is_none(), "unmarked: nothing left");

        browsed(&mut marks, &store, 8, &a, GetOptionFlags::BROWSE_CO_OP);
        handle_closed(&mut marks, a.conn, a.hobj, false);
        assert!(
            is_marked(&marks, 8, &b_soon),
            "the set's mark outlives its maker"
        );
        handle_closed(&mut marks, b_soon.conn, b_soon.hobj, true);
        assert!(marks.is_none(), "the last cooperating handle closed");

        browsed(&mut marks, &store, 9, &a, GetOptionFlags::BROWSE_CO_OP);
        message_got(&mut marks, 9);
        assert!(marks.is_none(), "a got message's mark goes");
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
