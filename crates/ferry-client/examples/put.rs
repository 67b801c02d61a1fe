//! Puts N messages to a queue.
//!
//! `cargo run -p ferry-client --example put -- [QUEUE] [COUNT] [TEXT]`
//! (connection settings: see examples/common.rs).

mod common;

use ferry_client::Connection;
use ferry_mqi::descriptor::format;
use ferry_mqi::{MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptions};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let queue = common::arg(1, "APP.QUEUE");
    let count: u32 = common::arg(2, "10").parse().unwrap_or(10);
    let text = common::arg(3, "hello from ferry");

    let conn = Connection::connect(&common::connect_options("put"))
        .await
        .unwrap_or_else(|e| common::fail("connect", e));
    let od = ObjectDescriptor::queue(&queue).unwrap_or_else(|e| {
        eprintln!("bad queue name {queue:?}: {e}");
        std::process::exit(2)
    });
    let q = conn
        .open(&od, OpenOptions::OUTPUT)
        .await
        .unwrap_or_else(|e| common::fail("open", e));
    for i in 1..=count {
        let mut md = MessageDescriptor {
            format: format::STRING,
            ..MessageDescriptor::default()
        };
        q.put(&mut md, &PutOptions::default(), format!("{text} #{i}"))
            .await
            .unwrap_or_else(|e| common::fail("put", e));
        println!(
            "put message {i} to {} MsgId {}",
            q.resolved_name(),
            hex(&md.msg_id)
        );
    }
    q.close(Default::default())
        .await
        .unwrap_or_else(|e| common::fail("close", e));
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("disconnect", e));
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
