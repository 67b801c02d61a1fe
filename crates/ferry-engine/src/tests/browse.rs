//! Browsing: the browse cursor with waiting browses (a message that sorts before the
//! cursor is not BROWSE_NEXT's), MQGMO_LOCK/UNLOCK, and browse marks
//! (MQGMO_MARK_BROWSE_HANDLE, UNMARK_BROWSE_HANDLE, UNMARKED_BROWSE_MSG).

use super::*;

/// Puts `body` with `priority`.
fn put_pri(h: &mut Harness, c: ConnId, o: Hobj, priority: i32, body: &[u8]) {
    let mut md = MessageDescriptor {
        priority,
        ..Default::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::empty(), body)
        .unwrap();
}

fn body(r: GetResult) -> Vec<u8> {
    r.expect("a message").data.to_vec()
}

fn wait(h: &mut Harness, c: ConnId, o: Hobj, opts: GetOptionFlags) {
    let r = h.get_with(
        c,
        o,
        &MessageDescriptor::default(),
        opts | GetOptionFlags::WAIT,
        -1,
        1024,
    );
    assert_eq!(r, GetOutcome::Waiting);
}

#[test]
fn a_waiting_browse_next_is_not_given_a_message_before_its_cursor() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let p = h.conn();
    let b = h.open(c, "Q", OpenOptions::BROWSE);
    let w = h.open(p, "Q", IO);
    put_pri(&mut h, p, w, 0, b"low");
    assert_eq!(body(h.get_now(c, b, GetOptionFlags::BROWSE_FIRST)), b"low");
    wait(&mut h, c, b, GetOptionFlags::BROWSE_NEXT);
    // A higher priority sorts before the cursor: not BROWSE_NEXT's.
    put_pri(&mut h, p, w, 9, b"high");
    assert!(h.completions().is_empty(), "the browse went on waiting");
    // A message after the cursor ends the wait.
    put_pri(&mut h, p, w, 0, b"later");
    assert_eq!(h.completions(), vec![(c, Ok(b"later".to_vec()))]);
    // BROWSE_FIRST sees the high one.
    assert_eq!(body(h.get_now(c, b, GetOptionFlags::BROWSE_FIRST)), b"high");
}

#[test]
fn a_waiting_browse_first_takes_any_message() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let p = h.conn();
    let b = h.open(c, "Q", OpenOptions::BROWSE);
    let w = h.open(p, "Q", IO);
    put_pri(&mut h, p, w, 0, b"low");
    assert_eq!(body(h.get_now(c, b, GetOptionFlags::BROWSE_FIRST)), b"low");
    h.get_body(p, w).ok();
    wait(&mut h, c, b, GetOptionFlags::BROWSE_FIRST);
    put_pri(&mut h, p, w, 9, b"high");
    assert_eq!(h.completions(), vec![(c, Ok(b"high".to_vec()))]);
}

const LOCK_FIRST: GetOptionFlags = GetOptionFlags::BROWSE_FIRST.union(GetOptionFlags::LOCK);
const LOCK_NEXT: GetOptionFlags = GetOptionFlags::BROWSE_NEXT.union(GetOptionFlags::LOCK);

fn reason(r: GetResult) -> ReasonCode {
    r.expect_err("a failure").reason()
}

/// A queue with messages "1" and "2", a browsing handle `b` on connection `c` and an
/// input handle `o` on another connection `p`.
fn two_messages() -> (Harness, ConnId, Hobj, ConnId, Hobj) {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let p = h.conn();
    let b = h.open(c, "Q", OpenOptions::BROWSE.union(OpenOptions::INPUT_SHARED));
    let o = h.open(p, "Q", IO.union(OpenOptions::BROWSE));
    h.put(p, o, b"1");
    h.put(p, o, b"2");
    (h, c, b, p, o)
}

#[test]
fn a_locked_message_is_invisible_to_other_handles_until_got_by_its_own() {
    let (mut h, c, b, p, o) = two_messages();
    assert_eq!(body(h.get_now(c, b, LOCK_FIRST)), b"1");
    // Other handles, also another of the same connection, pass over it.
    assert_eq!(body(h.get_now(p, o, GetOptionFlags::BROWSE_FIRST)), b"2");
    let same_conn = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    assert_eq!(h.get_body(c, same_conn), Ok(b"2".to_vec()));
    assert_eq!(h.get_body(p, o), Err(ReasonCode::NoMsgAvailable));
    assert_eq!(h.depth("Q"), 1, "a locked message counts in CURDEPTH");
    // Its own handle browses it again and gets it.
    assert_eq!(
        body(h.get_now(
            c,
            b,
            GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::LOCK
        )),
        b"1"
    );
    assert_eq!(
        body(h.get_now(c, b, GetOptionFlags::MSG_UNDER_CURSOR)),
        b"1"
    );
    assert_eq!(h.depth("Q"), 0);
    let unlock = h.get_now(c, b, GetOptionFlags::UNLOCK).unwrap();
    assert_eq!(
        unlock.warning,
        Some(ReasonCode::NoMsgLocked),
        "the get ended the lock"
    );
}

#[test]
fn unlock_makes_the_message_available_and_a_waiting_getter_takes_it() {
    let (mut h, c, b, p, o) = two_messages();
    h.get_body(p, o).unwrap();
    h.put(p, o, b"3");
    assert_eq!(body(h.get_now(c, b, LOCK_FIRST)), b"2");
    assert_eq!(h.get_body(p, o), Ok(b"3".to_vec()));
    wait(&mut h, p, o, GetOptionFlags::empty());
    let unlock = h.get_now(c, b, GetOptionFlags::UNLOCK).unwrap();
    assert_eq!((unlock.warning, unlock.data.len()), (None, 0));
    assert_eq!(h.completions(), vec![(p, Ok(b"2".to_vec()))]);
    let again = h.get_now(c, b, GetOptionFlags::UNLOCK | GetOptionFlags::NO_SYNCPOINT);
    assert_eq!(again.unwrap().warning, Some(ReasonCode::NoMsgLocked));
}

#[test]
fn the_next_browse_moves_or_ends_the_lock() {
    let (mut h, c, b, p, o) = two_messages();
    assert_eq!(body(h.get_now(c, b, LOCK_FIRST)), b"1");
    // The next browse with LOCK locks its message and lets the first go.
    assert_eq!(body(h.get_now(c, b, LOCK_NEXT)), b"2");
    assert_eq!(body(h.get_now(p, o, GetOptionFlags::BROWSE_FIRST)), b"1");
    assert_eq!(
        reason(h.get_now(p, o, GetOptionFlags::BROWSE_NEXT)),
        ReasonCode::NoMsgAvailable
    );
    // A browse without LOCK lets it go too.
    assert_eq!(body(h.get_now(c, b, GetOptionFlags::BROWSE_FIRST)), b"1");
    assert_eq!(body(h.get_now(p, o, GetOptionFlags::BROWSE_NEXT)), b"2");
    // A browse that finds nothing (2033) ends a lock.
    assert_eq!(body(h.get_now(c, b, LOCK_NEXT)), b"2");
    assert_eq!(
        reason(h.get_now(c, b, LOCK_NEXT)),
        ReasonCode::NoMsgAvailable
    );
    assert_eq!(h.get_body(p, o), Ok(b"1".to_vec()));
    assert_eq!(h.get_body(p, o), Ok(b"2".to_vec()));
}

#[test]
fn a_truncated_browse_that_fails_keeps_the_lock() {
    let (mut h, c, b, p, o) = two_messages();
    assert_eq!(body(h.get_now(c, b, LOCK_FIRST)), b"1");
    let small = h
        .get_with(c, b, &MessageDescriptor::default(), LOCK_NEXT, 0, 0)
        .done()
        .unwrap();
    assert_eq!(reason(small), ReasonCode::TruncatedMsgFailed);
    assert_eq!(h.get_body(p, o), Ok(b"2".to_vec()), "1 is still locked");
    assert_eq!(h.get_body(p, o), Err(ReasonCode::NoMsgAvailable));
}

#[test]
fn close_and_disconnect_release_the_lock() {
    let (mut h, c, b, p, o) = two_messages();
    assert_eq!(body(h.get_now(c, b, LOCK_FIRST)), b"1");
    assert_eq!(h.get_body(p, o), Ok(b"2".to_vec()));
    wait(&mut h, p, o, GetOptionFlags::empty());
    let t = h.t();
    h.qm.close(c, b, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert_eq!(h.completions(), vec![(p, Ok(b"1".to_vec()))]);

    h.put(p, o, b"3");
    let c2 = h.conn();
    let b2 = h.open(c2, "Q", OpenOptions::BROWSE);
    assert_eq!(body(h.get_now(c2, b2, LOCK_FIRST)), b"3");
    assert_eq!(h.get_body(p, o), Err(ReasonCode::NoMsgAvailable));
    h.qm.disconnect(c2, false, t, &mut h.fx);
    assert_eq!(h.get_body(p, o), Ok(b"3".to_vec()));
}

#[test]
fn a_locked_message_got_under_syncpoint_and_backed_out_comes_back_unlocked() {
    let (mut h, c, b, p, o) = two_messages();
    assert_eq!(body(h.get_now(c, b, LOCK_FIRST)), b"1");
    let sync = GetOptionFlags::MSG_UNDER_CURSOR | GetOptionFlags::SYNCPOINT;
    assert_eq!(body(h.get_now(c, b, sync)), b"1");
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert_eq!(h.get_body(p, o), Ok(b"1".to_vec()));
    let unlock = h.get_now(c, b, GetOptionFlags::UNLOCK).unwrap();
    assert_eq!(unlock.warning, Some(ReasonCode::NoMsgLocked));
}

#[test]
fn a_waiting_browse_with_lock_takes_the_message_like_a_getter() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let p = h.conn();
    let b = h.open(c, "Q", OpenOptions::BROWSE);
    let o = h.open(p, "Q", IO);
    wait(&mut h, c, b, LOCK_FIRST);
    h.put(p, o, b"1");
    assert_eq!(h.completions(), vec![(c, Ok(b"1".to_vec()))]);
    assert_eq!(h.get_body(p, o), Err(ReasonCode::NoMsgAvailable), "locked");
    assert_eq!(h.depth("Q"), 1);
    // A plain waiting browse sees the message and leaves it for the getter.
    let (c3, _) = (h.conn(), ());
    let b3 = h.open(c3, "Q", OpenOptions::BROWSE);
    wait(&mut h, c3, b3, GetOptionFlags::BROWSE_NEXT);
    wait(&mut h, p, o, GetOptionFlags::empty());
    h.put(p, o, b"2");
    assert_eq!(
        h.completions(),
        vec![(c3, Ok(b"2".to_vec())), (p, Ok(b"2".to_vec()))]
    );
}

#[test]
fn lock_and_unlock_refuse_options_mq_refuses() {
    let (mut h, c, b, ..) = two_messages();
    for o in [
        GetOptionFlags::LOCK,
        LOCK_FIRST | GetOptionFlags::SYNCPOINT,
        LOCK_FIRST | GetOptionFlags::UNLOCK,
        GetOptionFlags::UNLOCK | GetOptionFlags::WAIT,
        GetOptionFlags::UNLOCK | GetOptionFlags::SYNCPOINT,
    ] {
        assert_eq!(
            reason(h.get_now(c, b, o)),
            ReasonCode::OptionsError,
            "{o:?}"
        );
    }
}

#[test]
fn browse_handle_sees_each_message_once_per_handle() {
    let (mut h, c, b, p, o) = two_messages();
    let bh = GetOptionFlags::BROWSE_HANDLE;
    assert_eq!(body(h.get_now(c, b, bh)), b"1");
    assert_eq!(body(h.get_now(c, b, bh)), b"2");
    assert_eq!(reason(h.get_now(c, b, bh)), ReasonCode::NoMsgAvailable);
    // Marks are per handle.
    assert_eq!(body(h.get_now(p, o, bh)), b"1");
    // A higher priority arrival is found although it sorts first.
    put_pri(&mut h, p, o, 9, b"high");
    assert_eq!(body(h.get_now(c, b, bh)), b"high");
    // UNMARK_BROWSE_HANDLE makes a message unmarked again.
    let unmark = GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_HANDLE;
    assert_eq!(body(h.get_now(c, b, unmark)), b"high");
    assert_eq!(body(h.get_now(c, b, bh)), b"high");
    assert_eq!(reason(h.get_now(c, b, bh)), ReasonCode::NoMsgAvailable);
}

#[test]
fn a_mark_goes_when_the_message_is_got_or_the_handle_closes() {
    let (mut h, c, b, p, o) = two_messages();
    let bh = GetOptionFlags::BROWSE_HANDLE;
    assert_eq!(body(h.get_now(c, b, bh)), b"1");
    // Got under syncpoint and backed out: back unmarked.
    assert_eq!(body(h.get_now(p, o, GetOptionFlags::SYNCPOINT)), b"1");
    let t = h.t();
    h.qm.backout(p, t, &mut h.fx).unwrap();
    assert_eq!(body(h.get_now(c, b, bh)), b"1");
    assert_eq!(body(h.get_now(c, b, bh)), b"2");
    close(&mut h, c, b);
    assert_no_marks(&mut h);
}

#[test]
fn a_waiting_browse_handle_marks_what_it_is_given() {
    let (mut h, c, b, p, o) = two_messages();
    let bh = GetOptionFlags::BROWSE_HANDLE;
    assert_eq!(body(h.get_now(c, b, bh)), b"1");
    assert_eq!(body(h.get_now(c, b, bh)), b"2");
    // "1", locked by another handle and unlocked, is marked: the waiting browse passes.
    assert_eq!(body(h.get_now(p, o, LOCK_FIRST)), b"1");
    wait(&mut h, c, b, bh);
    h.get_now(p, o, GetOptionFlags::UNLOCK).unwrap();
    assert!(h.completions().is_empty());
    h.put(p, o, b"3");
    assert_eq!(h.completions(), vec![(c, Ok(b"3".to_vec()))]);
    assert_eq!(reason(h.get_now(c, b, bh)), ReasonCode::NoMsgAvailable);
}

#[test]
fn mark_options_mq_refuses_are_2046() {
    let (mut h, c, b, ..) = two_messages();
    for o in [
        GetOptionFlags::MARK_BROWSE_HANDLE,
        GetOptionFlags::BROWSE_FIRST | GetOptionFlags::MARK_BROWSE_CO_OP,
        GetOptionFlags::BROWSE_FIRST | GetOptionFlags::UNMARK_BROWSE_CO_OP,
        GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARKED_BROWSE_MSG,
        GetOptionFlags::UNMARKED_BROWSE_MSG,
    ] {
        assert_eq!(
            reason(h.get_now(c, b, o)),
            ReasonCode::OptionsError,
            "{o:?}"
        );
    }
}

/// A handle and its connection.
type Handle = (ConnId, Hobj);

fn close(h: &mut Harness, c: ConnId, o: Hobj) {
    let t = h.t();
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
}

/// Queue Q keeps no marks at all once none is left.
fn assert_no_marks(h: &mut Harness) {
    let q = h.qm.queues.lookup("Q").unwrap();
    assert!(
        h.qm.queues.local_mut(q).unwrap().marks.is_none(),
        "no marks left"
    );
}

/// Two dispatchers of one queue (MQOO_BROWSE | CO_OP, each on its own connection) and a
/// worker that gets what they claim, with messages "1" and "2" on the queue.
fn dispatchers() -> (Harness, Handle, Handle, Handle) {
    let mut h = Harness::new();
    h.local("Q");
    let co_op = OpenOptions::BROWSE | OpenOptions::CO_OP;
    let (a, b, w) = (h.conn(), h.conn(), h.conn());
    let (ha, hb) = (h.open(a, "Q", co_op), h.open(b, "Q", co_op));
    let hw = h.open(w, "Q", IO);
    h.put(w, hw, b"1");
    h.put(w, hw, b"2");
    (h, (a, ha), (b, hb), (w, hw))
}

#[test]
fn cooperating_dispatchers_each_claim_a_different_message() {
    let (mut h, (a, ha), (b, hb), (w, hw)) = dispatchers();
    let claim = GetOptionFlags::BROWSE_CO_OP;
    assert_eq!(body(h.get_now(a, ha, claim)), b"1");
    assert_eq!(
        body(h.get_now(b, hb, claim)),
        b"2",
        "1 is the set's already"
    );
    assert_eq!(reason(h.get_now(a, ha, claim)), ReasonCode::NoMsgAvailable);
    // A handle outside the set does not see the set's marks.
    let plain = h.open(w, "Q", OpenOptions::BROWSE);
    assert_eq!(
        body(h.get_now(w, plain, GetOptionFlags::BROWSE_HANDLE)),
        b"1"
    );
    // Dispatcher b gives "2" back; a claims it.
    let give_back = GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_CO_OP;
    assert_eq!(body(h.get_now(b, hb, give_back)), b"2");
    assert_eq!(body(h.get_now(a, ha, claim)), b"2");
    // Got by the worker, a message's mark goes with it; a new arrival is unclaimed.
    assert_eq!(h.get_body(w, hw), Ok(b"1".to_vec()));
    h.put(w, hw, b"3");
    assert_eq!(body(h.get_now(b, hb, claim)), b"3");
    assert_eq!(reason(h.get_now(b, hb, claim)), ReasonCode::NoMsgAvailable);
}

#[test]
fn a_claim_lapses_after_markint_and_with_the_last_dispatcher() {
    let (mut h, (a, ha), (b, hb), _) = dispatchers();
    let claim = GetOptionFlags::BROWSE_CO_OP;
    assert_eq!(
        h.qm.qmgr.msg_mark_browse_interval, 5_000,
        "MQ's default MARKINT"
    );
    assert_eq!(body(h.get_now(a, ha, claim)), b"1");
    h.now += 4_999;
    assert_eq!(body(h.get_now(b, hb, claim)), b"2");
    h.now += 1;
    assert_eq!(
        body(h.get_now(b, hb, claim)),
        b"1",
        "a's claim lapsed after MARKINT"
    );
    assert_eq!(reason(h.get_now(a, ha, claim)), ReasonCode::NoMsgAvailable);
    // With NOLIMIT claims never lapse, but go when the set's last handle closes.
    h.qm.qmgr.msg_mark_browse_interval = -1;
    h.now += 86_400_000;
    assert_eq!(reason(h.get_now(a, ha, claim)), ReasonCode::NoMsgAvailable);
    close(&mut h, a, ha);
    assert_eq!(reason(h.get_now(b, hb, claim)), ReasonCode::NoMsgAvailable);
    close(&mut h, b, hb);
    assert_no_marks(&mut h);
}

#[test]
fn a_waiting_dispatcher_passes_over_a_claimed_message_that_comes_back() {
    let (mut h, (a, ha), (b, hb), (w, hw)) = dispatchers();
    let claim = GetOptionFlags::BROWSE_CO_OP;
    assert_eq!(body(h.get_now(a, ha, claim)), b"1");
    assert_eq!(body(h.get_now(b, hb, claim)), b"2");
    // "2", locked by another handle's browse and unlocked, comes back still claimed.
    wait(&mut h, b, hb, claim);
    let lock = h.open(w, "Q", OpenOptions::BROWSE);
    h.get_now(w, lock, GetOptionFlags::BROWSE_FIRST).unwrap();
    let lock_2 = GetOptionFlags::BROWSE_NEXT | GetOptionFlags::LOCK;
    assert_eq!(body(h.get_now(w, lock, lock_2)), b"2");
    h.get_now(w, lock, GetOptionFlags::UNLOCK).unwrap();
    assert!(
        h.completions().is_empty(),
        "2 is claimed: the waiting browse passes"
    );
    assert_eq!(h.get_body(w, hw), Ok(b"1".to_vec()));
    h.put(w, hw, b"3");
    assert_eq!(h.completions(), vec![(b, Ok(b"3".to_vec()))]);
}

#[test]
fn co_op_needs_browse_at_open_and_a_co_op_handle_at_get() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let r = h.try_open(c, "Q", OpenOptions::INPUT_SHARED | OpenOptions::CO_OP);
    assert_eq!(rc(r), ReasonCode::OptionsError);
    let browse = h.open(c, "Q", IO | OpenOptions::BROWSE);
    h.put(c, browse, b"1");
    for o in [
        GetOptionFlags::BROWSE_CO_OP,
        GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::UNMARK_BROWSE_CO_OP,
    ] {
        assert_eq!(
            reason(h.get_now(c, browse, o)),
            ReasonCode::OptionsError,
            "{o:?}"
        );
    }
}
