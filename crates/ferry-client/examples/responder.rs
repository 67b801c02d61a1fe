//! Request/reply responder: get requests with WAIT, answer each with a reply whose
//! CorrelId is the request's MsgId, put to the request's ReplyToQ with MQPUT1.
//!
//! `cargo run -p ferry-client --example responder -- [REQUEST.Q] [COUNT]`
//! (COUNT 0 = until no request for 60 s; connection settings: see examples/common.rs).

mod common;

use ferry_client::Connection;
use ferry_mqi::descriptor::msg_type;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags,
    PutOptions, ReasonCode,
};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let request_q = common::arg(1, "APP.REQUEST");
    let count: u64 = common::arg(2, "0").parse().unwrap_or(0);

    let conn = Connection::connect(&common::connect_options("responder"))
        .await
        .unwrap_or_else(|e| common::fail("connect", e));
    println!("connected to queue manager {}", conn.queue_manager_name());
    let od = ObjectDescriptor::queue(&request_q).unwrap_or_else(|e| {
        eprintln!("bad queue name {request_q:?}: {e}");
        std::process::exit(2)
    });
    let requests = conn
        .open(&od, OpenOptions::INPUT_SHARED)
        .await
        .unwrap_or_else(|e| common::fail("open request queue", e));

    let gmo = GetOptions {
        options: GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
        wait_interval: 60_000,
        ..GetOptions::default()
    };
    let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
    let mut answered = 0u64;
    while count == 0 || answered < count {
        // Match nothing: reset the ids the previous get left in the descriptor.
        let mut md = MessageDescriptor::default();
        let request = match requests.get(&mut md, &gmo, 64 * 1024).await {
            Ok(m) => m,
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => {
                println!("no request for 60 s; stopping");
                break;
            }
            Err(e) => common::fail("get request", e),
        };
        if md.msg_type != msg_type::REQUEST || md.reply_to_q.is_blank() {
            println!("skipping a message that is not a request");
            continue;
        }
        let reply_od = ferry_mqi::ObjectDescriptor {
            object_name: md.reply_to_q,
            object_qmgr_name: md.reply_to_qmgr,
            ..ObjectDescriptor::default()
        };
        let mut reply_md = MessageDescriptor {
            msg_type: msg_type::REPLY,
            correl_id: md.msg_id,
            persistence: md.persistence,
            ..MessageDescriptor::default()
        };
        let mut body = b"reply to ".to_vec();
        body.extend_from_slice(&request.data);
        conn.put1(&reply_od, &mut reply_md, &pmo, body)
            .await
            .unwrap_or_else(|e| common::fail("put reply", e));
        answered += 1;
    }
    println!("answered {answered} requests");
    conn.disconnect()
        .await
        .unwrap_or_else(|e| common::fail("disconnect", e));
}
