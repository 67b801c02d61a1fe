//! Request/reply requester, as IBM's RR workloads run it: put a request with
//! MsgType REQUEST and ReplyToQ, then wait for the reply whose CorrelId is the
//! request's MsgId.
//!
//! `cargo run -p ferry-client --example requester -- [REQUEST.Q] [REPLY.Q] [COUNT]`
//! (connection settings: see examples/common.rs).

mod common;

use std::time::Instant;

use ferry_client::Connection;
use ferry_mqi::descriptor::{msg_type, NONE_ID};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
    PutOptionFlags, PutOptions,
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let request_q = common::arg(1, "APP.REQUEST");
    let reply_q = common::arg(2, "APP.REPLY");
    let count: u32 = common::arg(3, "10").parse().unwrap_or(10);

    let conn = Connection::connect(&common::connect_options("requester"))
        .await
        .unwrap_or_else(|e| common::fail("connect", e));
    println!("connected to queue manager {}", conn.queue_manager_name());
    let od = |n: &str| {
        ObjectDescriptor::queue(n).unwrap_or_else(|e| {
            eprintln!("bad queue name {n:?}: {e}");
            std::process::exit(2)
        })
    };
    let requests = conn
        .open(&od(&request_q), OpenOptions::OUTPUT)
        .await
        .unwrap_or_else(|e| common::fail("open request queue", e));
    let replies = conn
        .open(&od(&reply_q), OpenOptions::INPUT_SHARED)
        .await
        .unwrap_or_else(|e| common::fail("open reply queue", e));

    let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
    let gmo = GetOptions {
        options: GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
        wait_interval: 30_000,
        match_options: MatchOptions::CORREL_ID,
    };
    let started = Instant::now();
    for i in 0..count {
        let mut md = MessageDescriptor {
            msg_type: msg_type::REQUEST,
            reply_to_q: od(&reply_q).object_name,
            ..MessageDescriptor::default()
        };
        requests
            .put(&mut md, &pmo, format!("request {i}"))
            .await
            .unwrap_or_else(|e| common::fail("put request", e));
        let mut reply_md = MessageDescriptor {
            msg_id: NONE_ID,
            correl_id: md.msg_id,
            ..MessageDescriptor::default()
        };
        let reply = replies
            .get(&mut reply_md, &gmo, 64 * 1024)
            .await
            .unwrap_or_else(|e| common::fail("get reply", e));
        println!(
            "request {i}: reply {:?}",
            String::from_utf8_lossy(&reply.data)
        );
    }
    let secs = started.elapsed().as_secs_f64();
    println!(
        "{count} round trips in {secs:.3} s ({:.0}/s)",
        f64::from(count) / secs.max(1e-9)
    );
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("disconnect", e));
}
