//! What one native client (a socket on a SVRCONN channel) can make the queue manager hold
//! or wait for, tried over raw sockets as a hostile client would: heartbeats are the
//! channel's HBINT whatever the client proposes.

mod common;

use common::*;
use ferry_mqi::{OpenOptions, ReasonCode};
use std::time::Duration;

#[test]
fn heartbeats_are_the_channels_hbint_whatever_the_client_proposes() {
    let qm = start("NL.HBINT");
    for (proposed, granted) in [(0, 300), (1_000_000, 300), (301, 300), (60, 60), (300, 300)] {
        let mut r = Raw::tcp(&qm);
        let h = r.hello_with_heartbeat("SYSTEM.DEF.SVRCONN", 0, proposed);
        assert_eq!(h.status.reason, ReasonCode::None, "{h:?}");
        assert_eq!(
            h.heartbeat_interval, granted,
            "a client proposing {proposed} s gets the channel's HBINT(300) as the longest"
        );
    }
    // HBINT(0) on the channel: no heartbeats, whatever the client asks.
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) HBINT(0)",
    );
    let mut r = Raw::tcp(&qm);
    assert_eq!(
        r.hello_with_heartbeat("SYSTEM.DEF.SVRCONN", 0, 60)
            .heartbeat_interval,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_client_works_with_the_interval_the_server_insists_on() {
    let qm = start("NL.HBCLIENT");
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) HBINT(1)",
    );
    // The client asks for no heartbeats; the server insists on 1 s, and the client keeps
    // them: silent for 4 s, it is still connected and works.
    let conn = connect(&qm.client().heartbeat_interval(0).sharecnv(1)).await;
    let q = open(
        &conn,
        "SYSTEM.DEFAULT.LOCAL.QUEUE",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    put(&q, "still here").await;
    assert_eq!(get_text(&q).await, "still here");
    conn.disconnect().await.unwrap();
    assert!(!qm.error_log().contains("FRY9259W"), "{}", qm.error_log());
}
