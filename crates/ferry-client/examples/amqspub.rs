//! IBM MQ's amqspub sample for Ferry: publishes each line of standard input on a topic
//! string as a text message (MQFMT_STRING), until end of input or an empty line.
//!
//! `amqspub TOPIC [QMGR]` (connection settings: see examples/common.rs).

mod common;

use ferry_client::Connection;
use ferry_mqi::descriptor::format;
use ferry_mqi::{MessageDescriptor, PutOptionFlags, PutOptions};
use std::io::BufRead;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(topic) = std::env::args().nth(1) else {
        eprintln!("usage: amqspub TOPIC [QMGR] < lines");
        std::process::exit(2)
    };
    let mut opts = common::connect_options("amqspub");
    if let Some(qm) = std::env::args().nth(2) {
        opts = opts.queue_manager(&qm);
    }
    println!("Sample AMQSPUB start");
    println!("target topic is {topic}");
    let conn = Connection::connect(&opts)
        .await
        .unwrap_or_else(|e| common::fail("MQCONNX", e));
    let t = conn
        .open_topic(&topic)
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
        let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::FAIL_IF_QUIESCING);
        t.put(&mut md, &pmo, line)
            .await
            .unwrap_or_else(|e| common::fail("MQPUT", e));
    }
    t.close()
        .await
        .unwrap_or_else(|e| common::fail("MQCLOSE", e));
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("MQDISC", e));
    println!("Sample AMQSPUB end");
}
