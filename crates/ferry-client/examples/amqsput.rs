//! IBM MQ's amqsput sample for Ferry: puts each line of standard input to a queue as a
//! text message (MQFMT_STRING), until end of input or an empty line.
//!
//! `amqsput QUEUE [QMGR]` (connection settings: see examples/common.rs; `cargo build
//! --release -p ferry-client --examples` puts it in target/release/examples).

mod common;

use ferry_client::Connection;
use ferry_mqi::descriptor::format;
use ferry_mqi::{MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptions};
use std::io::BufRead;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(queue) = std::env::args().nth(1) else {
        eprintln!("usage: amqsput QUEUE [QMGR] < lines");
        std::process::exit(2)
    };
    let mut opts = common::connect_options("amqsput");
    if let Some(qm) = std::env::args().nth(2) {
        opts = opts.queue_manager(&qm);
    }
    println!("Sample AMQSPUT start");
    println!("target queue is {queue}");
    let conn = Connection::connect(&opts)
        .await
        .unwrap_or_else(|e| common::fail("MQCONNX", e));
    let od = ObjectDescriptor::queue(&queue).unwrap_or_else(|e| {
        eprintln!("bad queue name {queue:?}: {e}");
        std::process::exit(2)
    });
    let q = conn
        .open(&od, OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING)
        .await
        .unwrap_or_else(|e| common::fail("MQOPEN", e));
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if line.is_empty() {
            break;
        }
        let mut md = MessageDescriptor {
            format: format::STRING,
            ..MessageDescriptor::default()
        };
        q.put(&mut md, &PutOptions::default(), line)
            .await
            .unwrap_or_else(|e| common::fail("MQPUT", e));
    }
    q.close(Default::default())
        .await
        .unwrap_or_else(|e| common::fail("MQCLOSE", e));
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("MQDISC", e));
    println!("Sample AMQSPUT end");
}
