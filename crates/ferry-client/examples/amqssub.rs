//! IBM MQ's amqssub sample for Ferry: subscribes to a topic string (a managed,
//! non-durable subscription) and prints each publication as `message <text>`, then ends
//! when none arrives for 30 seconds (as amqssub does; `FERRY_WAIT_MS` changes the wait).
//! Once subscribed it prints `subscribed`, so a script knows when to publish.
//!
//! `amqssub TOPIC [QMGR]` (connection settings: see examples/common.rs).

mod common;

use ferry_client::Connection;
use ferry_mqi::SubscriptionDescriptor;
use futures_util::StreamExt;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let Some(topic) = std::env::args().nth(1) else {
        eprintln!("usage: amqssub TOPIC [QMGR]");
        std::process::exit(2)
    };
    let wait_ms: i32 = std::env::var("FERRY_WAIT_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30_000);
    let mut opts = common::connect_options("amqssub");
    if let Some(qm) = std::env::args().nth(2) {
        opts = opts.queue_manager(&qm);
    }
    println!("Sample AMQSSUB start");
    let conn = Connection::connect(&opts)
        .await
        .unwrap_or_else(|e| common::fail("MQCONNX", e));
    let sub = conn
        .subscribe(&SubscriptionDescriptor::managed(&topic))
        .await
        .unwrap_or_else(|e| common::fail("MQSUB", e));
    println!("subscribed");
    {
        let mut copies = std::pin::pin!(sub.publications(wait_ms));
        while let Some(copy) = copies.next().await {
            match copy {
                Ok(p) => println!("message <{}>", String::from_utf8_lossy(&p.message.data)),
                Err(e) => common::fail("MQGET", e),
            }
        }
    }
    println!("no more messages");
    sub.close(false)
        .await
        .unwrap_or_else(|e| common::fail("MQCLOSE", e));
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("MQDISC", e));
    println!("Sample AMQSSUB end");
}
