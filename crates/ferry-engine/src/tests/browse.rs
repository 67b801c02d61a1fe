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
