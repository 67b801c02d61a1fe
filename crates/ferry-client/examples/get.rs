//! Gets every message from a queue, waiting a few seconds for more before stopping.
//!
//! `cargo run -p ferry-client --example get -- [QUEUE] [WAIT_MS]`
//! (connection settings: see examples/common.rs).

mod common;

use ferry_client::Connection;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, ReasonCode,
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let queue = common::arg(1, "APP.QUEUE");
    let wait_ms: i32 = common::arg(2, "5000").parse().unwrap_or(5000);

    let conn = Connection::connect(&common::connect_options("get"))
        .await
        .unwrap_or_else(|e| common::fail("connect", e));
    let od = ObjectDescriptor::queue(&queue).unwrap_or_else(|e| {
        eprintln!("bad queue name {queue:?}: {e}");
        std::process::exit(2)
    });
    let q = conn
        .open(&od, OpenOptions::INPUT_AS_Q_DEF)
        .await
        .unwrap_or_else(|e| common::fail("open", e));
    let gmo = GetOptions {
        options: GetOptionFlags::WAIT | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: wait_ms,
        ..GetOptions::default()
    };
    let mut n = 0u64;
    loop {
        let mut md = MessageDescriptor::default();
        match q.get(&mut md, &gmo, 1024 * 1024).await {
            Ok(msg) => {
                n += 1;
                let cut = if msg.is_truncated() {
                    " (truncated)"
                } else {
                    ""
                };
                println!(
                    "message {n}: {} bytes{cut}, put {} {}: {}",
                    msg.data_length,
                    md.put_date,
                    md.put_time,
                    String::from_utf8_lossy(&msg.data)
                );
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
            Err(e) => common::fail("get", e),
        }
    }
    println!("got {n} messages; none left after waiting {wait_ms} ms");
    q.close(Default::default())
        .await
        .unwrap_or_else(|e| common::fail("close", e));
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("disconnect", e));
}
