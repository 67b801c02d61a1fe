//! IBM MQ's amqsget sample for Ferry: gets every message from a queue and prints each
//! body as `message <text>`, then ends when none arrives for 15 seconds (as amqsget
//! does; `FERRY_WAIT_MS` changes the wait).
//!
//! `amqsget QUEUE [QMGR]` (connection settings: see examples/common.rs).

mod common;

use ferry_client::Connection;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, ReasonCode,
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(queue) = std::env::args().nth(1) else {
        eprintln!("usage: amqsget QUEUE [QMGR]");
        std::process::exit(2)
    };
    let wait_ms: i32 = std::env::var("FERRY_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15_000);
    let mut opts = common::connect_options("amqsget");
    if let Some(qm) = std::env::args().nth(2) {
        opts = opts.queue_manager(&qm);
    }
    println!("Sample AMQSGET start");
    let conn = Connection::connect(&opts)
        .await
        .unwrap_or_else(|e| common::fail("MQCONNX", e));
    let od = ObjectDescriptor::queue(&queue).unwrap_or_else(|e| {
        eprintln!("bad queue name {queue:?}: {e}");
        std::process::exit(2)
    });
    let q = conn
        .open(
            &od,
            OpenOptions::INPUT_AS_Q_DEF | OpenOptions::FAIL_IF_QUIESCING,
        )
        .await
        .unwrap_or_else(|e| common::fail("MQOPEN", e));
    let gmo = GetOptions {
        options: GetOptionFlags::WAIT
            | GetOptionFlags::NO_SYNCPOINT
            | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: wait_ms,
        ..GetOptions::default()
    };
    loop {
        let mut md = MessageDescriptor::default();
        match q.get(&mut md, &gmo, 4 * 1024 * 1024).await {
            Ok(msg) => println!("message <{}>", String::from_utf8_lossy(&msg.data)),
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => {
                println!("no more messages");
                break;
            }
            Err(e) => common::fail("MQGET", e),
        }
    }
    q.close(Default::default())
        .await
        .unwrap_or_else(|e| common::fail("MQCLOSE", e));
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("MQDISC", e));
    println!("Sample AMQSGET end");
}
