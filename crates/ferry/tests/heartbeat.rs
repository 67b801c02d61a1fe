//! Heartbeats (docs/protocol.md §7) as the queue manager keeps them: a client that goes
//! silent gets a heartbeat request after one interval and is dropped as broken after
//! twice the interval plus slack, with FRY9259W in the error log; a client that answers
//! stays connected.

mod common;

use common::*;
use ferry_wire::{Reply, Request, Verb, SOCKET_CONVERSATION};
use std::time::{Duration, Instant};

fn with_one_second_heartbeats(name: &str) -> ferry_test_support::TestQueueManager {
    let qm = start(name);
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) HBINT(1)",
    );
    qm
}

#[test]
fn a_silent_client_gets_a_heartbeat_then_is_dropped() {
    let qm = with_one_second_heartbeats("HB.SILENT");
    let mut raw = Raw::tcp(&qm);
    let hello = raw.hello_with_heartbeat("SYSTEM.DEF.SVRCONN", 4096, 1);
    assert_eq!(hello.heartbeat_interval, 1, "{hello:?}");
    raw.open_conversation(1);
    let began = Instant::now();

    let first = raw.read_frame().expect("a heartbeat before the close");
    assert_eq!(first.verb, Verb::Heartbeat, "{first:?}");
    assert_eq!(first.conversation, SOCKET_CONVERSATION);
    assert!(
        !first.is_reply(),
        "the server asks, the client should answer"
    );

    // Never answer: the server gives up after 2 intervals plus its slack.
    let rest = raw.read_to_eof();
    let waited = began.elapsed();
    assert!(
        waited >= Duration::from_secs(2),
        "dropped too early, after {waited:?}"
    );
    assert!(
        rest.iter().any(|f| f.verb == Verb::Error),
        "a close notice before the close: {rest:?}"
    );
    wait_until("FRY9259W in the error log", || {
        qm.error_log().contains("FRY9259W")
    });
    // The server lets go of the socket too, though the client, silent, never closes it.
    drop(rest);
    wait_until("the server closed its side (SOCKETS(0))", || {
        let out = qm.ferry(&["status", qm.name()]);
        String::from_utf8_lossy(&out.stdout).contains("SOCKETS(0)")
    });
    drop(raw);
}

#[test]
fn a_client_that_answers_heartbeats_stays_connected() {
    let qm = with_one_second_heartbeats("HB.ALIVE");
    let mut raw = Raw::tcp(&qm);
    raw.hello_with_heartbeat("SYSTEM.DEF.SVRCONN", 4096, 1);
    raw.open_conversation(1);
    let until = Instant::now() + Duration::from_secs(4);
    let mut answered = 0;
    while Instant::now() < until {
        let f = raw.read_frame().expect("the server keeps the socket open");
        assert_eq!(f.verb, Verb::Heartbeat, "{f:?}");
        let mut out = bytes::BytesMut::new();
        ferry_wire::encode_reply(f.conversation, f.request_id, &Reply::Heartbeat, &mut out)
            .expect("encode");
        raw.send_bytes(&out);
        answered += 1;
    }
    assert!(answered >= 2, "heartbeats every interval: {answered}");
    // The conversation still works.
    let reply = raw.call(1, 2, &Request::Cmit);
    assert_eq!(
        reply.status().reason,
        ferry_mqi::ReasonCode::None,
        "{reply:?}"
    );
}
