//! A client that asks for channel compression, against a fake queue manager of protocol
//! minor 2 (before compression): such a server reads the compression lists as bytes past
//! the end of the hello and refuses it, so the client connects again without them and
//! the connection works, uncompressed (a minor-2 peer never compresses).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{CompCode, FixedStr, HeaderCompression, MessageCompression, ReasonCode};
use ferry_wire::{
    decode_frame, encode_reply, ClientHello, HelloFlags, Reply, Request, ServerHello, Status,
    Techniques, MINOR_WITH_COMPRESSION,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Serves hellos as a minor-2 queue manager would; counts them.
async fn old_server(listener: TcpListener, hellos: Arc<AtomicUsize>) {
    while let Ok((mut stream, _)) = listener.accept().await {
        let hellos = hellos.clone();
        tokio::spawn(async move {
            let mut buf = BytesMut::new();
            let hello = loop {
                if let Some(h) = ClientHello::decode(&mut buf).expect("hello") {
                    break h;
                }
                if stream.read_buf(&mut buf).await.unwrap_or(0) == 0 {
                    return;
                }
            };
            hellos.fetch_add(1, Ordering::SeqCst);
            let lists = hello.minor >= MINOR_WITH_COMPRESSION
                && hello.flags.contains(HelloFlags::COMPRESSION);
            let mut answer = ServerHello {
                status: Status::OK,
                major: 1,
                minor: 2,
                flags: HelloFlags::empty(),
                max_msg_length: 1 << 20,
                heartbeat_interval: 0,
                sharecnv: 1,
                qmgr_name: FixedStr::new("OLD").unwrap(),
                server_version: "Ferry 0.0 (minor 2)".into(),
                message: String::new(),
                compression: Techniques::default(),
            };
            if lists {
                // What a minor-2 decoder says about the lists: trailing bytes.
                answer.status = Status {
                    comp: CompCode::Failed,
                    reason: ReasonCode::ConnectionBroken,
                };
                answer.message = "12 unexpected bytes after the end of the payload".into();
            }
            let mut out = BytesMut::new();
            answer.encode(&mut out).unwrap();
            stream.write_all(&out).await.unwrap();
            if lists {
                return;
            }
            loop {
                while let Some(f) = decode_frame(&mut buf, 1 << 21).unwrap() {
                    let reply = match Request::decode_at(&f, 2) {
                        Ok(Request::Conn(_)) => Reply::Conn {
                            status: Status::OK,
                            qmgr_name: FixedStr::new("OLD").unwrap(),
                        },
                        Ok(Request::Disc { .. }) => Reply::Disc { status: Status::OK },
                        other => panic!("unexpected {other:?}"),
                    };
                    let mut out = BytesMut::new();
                    encode_reply(f.conversation, f.request_id, &reply, &mut out).unwrap();
                    stream.write_all(&out).await.unwrap();
                }
                if stream.read_buf(&mut buf).await.unwrap_or(0) == 0 {
                    return;
                }
            }
        });
    }
}

#[tokio::test]
async fn a_compressing_client_connects_uncompressed_to_a_minor_2_queue_manager() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let conname = format!("127.0.0.1({})", listener.local_addr().unwrap().port());
    let hellos = Arc::new(AtomicUsize::new(0));
    tokio::spawn(old_server(listener, hellos.clone()));
    let opts = ConnectOptions::client(&conname, "SYSTEM.DEF.SVRCONN")
        .message_compression(&[MessageCompression::Lz4Fast])
        .header_compression(&[HeaderCompression::System]);
    let conn = Connection::connect(&opts).await.expect("connects");
    assert_eq!(
        conn.compression(),
        (HeaderCompression::None, MessageCompression::None)
    );
    assert_eq!(hellos.load(Ordering::SeqCst), 2, "one refused, one plain");
    conn.disconnect().await.expect("disconnect");
}
