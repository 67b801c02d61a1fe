//! Hostile and broken peers, over raw sockets (TCP and the bindings Unix socket) with
//! hand-built bytes: garbage instead of a hello, a frame over the negotiated maximum
//! (close notice 2218, only that socket closed, other clients and their messages
//! untouched), unknown verbs and reserved bits, a truncated frame then EOF, calls on an
//! unopened conversation (2018) or a bogus object handle (2019), and a thousand
//! random-byte connections after which the server still runs and serves. Protocol
//! violations are logged as FRY9504E.

mod common;

use bytes::BytesMut;
use common::*;
use ferry_mqi::{
    CompCode, GetOptionFlags, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags,
    PutOptions, ReasonCode,
};
use ferry_wire::{CloseNotice, Reply, Request, Verb, MAGIC};

/// A frame header: length, conversation, request id, verb, flags, reserved.
fn header(len: u32, conv: u32, rid: u32, verb: u8, flags: u8) -> Vec<u8> {
    let mut h = Vec::with_capacity(16);
    h.extend_from_slice(&len.to_le_bytes());
    h.extend_from_slice(&conv.to_le_bytes());
    h.extend_from_slice(&rid.to_le_bytes());
    h.push(verb);
    h.push(flags);
    h.extend_from_slice(&[0, 0]);
    h
}

/// A raw connection over `via` that has completed the hello.
fn raw(qm: &TestQueueManager, via: Via, max_msg_length: u32) -> Raw {
    let mut r = match via {
        Via::Tcp => Raw::tcp(qm),
        Via::Bindings => Raw::unix(qm),
    };
    let channel = if via == Via::Tcp {
        "SYSTEM.DEF.SVRCONN"
    } else {
        ""
    };
    let h = r.hello(channel, max_msg_length);
    assert_eq!(h.status.reason, ReasonCode::None, "{h:?}");
    r
}

/// Reads to EOF and returns the close notice the server sent first.
#[track_caller]
fn expect_close_notice(r: &mut Raw) -> CloseNotice {
    let frames = r.read_to_eof();
    let last = frames.last().expect("a close notice before EOF");
    assert_eq!(last.verb, Verb::Error, "{frames:?}");
    assert_eq!(last.conversation, 0);
    CloseNotice::decode(last).expect("close notice decodes")
}

/// Asserts a normal client can still connect, put and get on `qm`.
async fn still_serves(qm: &TestQueueManager) {
    let conn = connect(&qm.client().sharecnv(1)).await;
    let q = open(
        &conn,
        "SYSTEM.DEFAULT.LOCAL.QUEUE",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
    )
    .await;
    put(&q, "alive").await;
    assert_eq!(get_text(&q).await, "alive");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_instead_of_a_hello_closes_only_that_socket() {
    let qm = start("BAD.HELLO");
    for via in [Via::Tcp, Via::Bindings] {
        let mut r = match via {
            Via::Tcp => Raw::tcp(&qm),
            Via::Bindings => Raw::unix(&qm),
        };
        r.send_bytes(b"GET / HTTP/1.1\r\nHost: example\r\n\r\n");
        // The server answers with a refused hello (not a Ferry peer) and closes.
        let mut buf = BytesMut::new();
        let mut chunk = [0u8; 4096];
        loop {
            match std::io::Read::read(&mut r.stream, &mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let refusal = ferry_wire::ServerHello::decode(&mut buf)
            .expect("a server hello")
            .expect("complete");
        assert_eq!(refusal.status.comp, CompCode::Failed, "{via:?}");
        assert_eq!(
            refusal.status.reason,
            ReasonCode::ChannelConfigError,
            "{refusal:?}"
        );
    }
    // A hello that announces an absurd length is refused the same way.
    let mut r = Raw::tcp(&qm);
    let mut bogus = MAGIC.to_vec();
    bogus.extend_from_slice(&u32::MAX.to_le_bytes());
    bogus.push(1);
    r.send_bytes(&bogus);
    r.drain_to_eof();
    still_serves(&qm).await;
    assert!(qm.error_log().contains("FRY9504E"), "{}", qm.error_log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_protocol_version_is_refused_with_an_explanation() {
    let qm = start("BAD.VERSION");
    let mut r = Raw::tcp(&qm);
    let hello = ferry_wire::ClientHello {
        major: 9,
        channel: ferry_mqi::FixedStr::new("SYSTEM.DEF.SVRCONN").unwrap(),
        ..Default::default()
    };
    let mut out = BytesMut::new();
    hello.encode(&mut out).unwrap();
    r.send_bytes(&out);
    let mut buf = BytesMut::new();
    let mut chunk = [0u8; 4096];
    loop {
        match std::io::Read::read(&mut r.stream, &mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let answer = ferry_wire::ServerHello::decode(&mut buf).unwrap().unwrap();
    assert_eq!(answer.status.comp, CompCode::Failed, "{answer:?}");
    assert_eq!(
        answer.status.reason,
        ferry_mqi::ReasonCode::ChannelConfigError,
        "docs/protocol.md: an unknown major version is refused with 2539"
    );
    assert!(
        answer.message.contains('9'),
        "names the version: {answer:?}"
    );
    still_serves(&qm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_frame_closes_only_its_socket() {
    let qm = start("BAD.OVERSIZE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    for via in [Via::Tcp, Via::Bindings] {
        // A well-behaved client, connected before, with messages queued.
        let good = connect(&via.opts(&qm)).await;
        let gq = open(&good, "Q", OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED).await;
        for i in 0..3 {
            put(&gq, &format!("kept {i}")).await;
        }
        let mut md = MessageDescriptor::default();
        let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
        put_md(&gq, &mut md, sync, "uncommitted, kept")
            .await
            .unwrap();

        // The bad peer negotiates 1024-byte messages, then announces a bigger frame.
        let mut bad = raw(&qm, via, 1024);
        let limit = ferry_wire::max_frame_len(1024);
        assert_eq!(bad.max_frame, limit);
        bad.send_bytes(&header(limit + 1, 1, 1, Verb::Put.code(), 0));
        let notice = expect_close_notice(&mut bad);
        assert_eq!(
            notice.reason,
            ReasonCode::MsgTooBigForChannel,
            "{via:?}: {notice:?}"
        );

        // The good client carries on, its messages and unit of work intact.
        good.commit().await.unwrap();
        let mut bodies = Vec::new();
        for _ in 0..4 {
            bodies.push(get_text(&gq).await);
        }
        assert_eq!(
            bodies,
            ["kept 0", "kept 1", "kept 2", "uncommitted, kept"],
            "{via:?}"
        );
        good.disconnect().await.unwrap();
    }
    let log = qm.error_log();
    assert!(log.contains("FRY9504E"), "{log}");
}

#[test]
fn unknown_verbs_and_reserved_bits_get_a_close_notice() {
    let mut qm = start("BAD.VERB");
    let cases: [(&str, Vec<u8>); 4] = [
        ("unknown verb", header(16, 1, 1, 0x55, 0)),
        (
            "reserved flag bit",
            header(16, 1, 1, Verb::Cmit.code(), 0x02),
        ),
        ("reply bit without reply flag", header(16, 1, 1, 0x89, 0)),
        (
            "length under the header",
            header(8, 1, 1, Verb::Cmit.code(), 0),
        ),
    ];
    for via in [Via::Tcp, Via::Bindings] {
        for (what, bytes) in &cases {
            let mut r = raw(&qm, via, 0);
            r.open_conversation(1);
            r.send_bytes(bytes);
            let notice = expect_close_notice(&mut r);
            assert_eq!(
                notice.reason,
                ReasonCode::ConnectionBroken,
                "{via:?} {what}: {notice:?}"
            );
            assert!(!notice.text.is_empty(), "{what}: explained");
        }
    }
    // A request whose payload is shorter than its layout (an OPEN with 3 bytes).
    let mut r = raw(&qm, Via::Tcp, 0);
    r.open_conversation(1);
    let mut frame = header(19, 1, 2, Verb::Open.code(), 0);
    frame.extend_from_slice(&[1, 0, 0]);
    r.send_bytes(&frame);
    let notice = expect_close_notice(&mut r);
    assert_eq!(notice.reason, ReasonCode::ConnectionBroken, "{notice:?}");
    // Repeats of a cause are counted, not written (SuppressInterval); the stop writes
    // the counts.
    stop_qm(&mut qm);
    let log = qm.error_log();
    assert!(error_log_accounted(&log, "FRY9504E") >= 9, "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn truncated_frame_then_eof_ends_the_connection_and_backs_out() {
    let qm = start("BAD.TRUNC");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    for via in [Via::Tcp, Via::Bindings] {
        let mut r = raw(&qm, via, 0);
        r.open_conversation(1);
        let od = ObjectDescriptor::queue("Q").unwrap();
        let hobj = match r.call(
            1,
            2,
            &Request::Open {
                od,
                options: OpenOptions::OUTPUT,
            },
        ) {
            Reply::Open { status, hobj, .. } => {
                assert_eq!(status.reason, ReasonCode::None);
                hobj
            }
            other => panic!("{other:?}"),
        };
        let put = Request::Put {
            properties: bytes::Bytes::new(),
            hobj,
            md: MessageDescriptor::default(),
            pmo: PutOptions::new(PutOptionFlags::SYNCPOINT),
            body: bytes::Bytes::from_static(b"never committed"),
        };
        assert_eq!(r.call(1, 3, &put).status().reason, ReasonCode::None);
        // Half a frame, then the peer goes away.
        let mut partial = header(200, 1, 4, Verb::Put.code(), 0);
        partial.extend_from_slice(&[0u8; 20]);
        r.send_bytes(&partial);
        r.stream.shutdown_write();
        let frames = r.read_to_eof();
        assert!(
            frames.is_empty(),
            "{via:?}: nothing answers half a frame: {frames:?}"
        );
        wait_until("the connection to end", || {
            let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) UNCOM OPPROCS");
            attr(&s, "UNCOM").as_deref() == Some("NO")
                && attr(&s, "OPPROCS").as_deref() == Some("0")
        });
        assert_eq!(
            curdepth(&qm, "Q"),
            0,
            "{via:?}: the unit of work was backed out"
        );
    }
    still_serves(&qm).await;
}

#[test]
fn call_on_an_unopened_conversation_is_2018() {
    let qm = start("BAD.HCONN");
    for via in [Via::Tcp, Via::Bindings] {
        let mut r = raw(&qm, via, 0);
        let od = ObjectDescriptor::queue("SYSTEM.DEFAULT.LOCAL.QUEUE").unwrap();
        let open = Request::Open {
            od,
            options: OpenOptions::OUTPUT,
        };
        match r.call(7, 1, &open) {
            Reply::Open { status, hobj, .. } => {
                assert_eq!(status.comp, CompCode::Failed);
                assert_eq!(status.reason, ReasonCode::HconnError, "{via:?}");
                assert_eq!(hobj, -1);
            }
            other => panic!("{other:?}"),
        }
        for req in [
            Request::Cmit,
            Request::Back,
            Request::Disc { backout: false },
        ] {
            let reply = r.call(7, 2, &req);
            assert_eq!(reply.status().reason, ReasonCode::HconnError, "{req:?}");
        }
        // The socket is still good: the conversation can be opened now.
        r.open_conversation(7);
        match r.call(7, 3, &open) {
            Reply::Open { status, .. } => assert_eq!(status.reason, ReasonCode::None),
            other => panic!("{other:?}"),
        }
        // After DISC the conversation is unknown again.
        let reply = r.call(7, 4, &Request::Disc { backout: false });
        assert_eq!(reply.status().reason, ReasonCode::None);
        assert_eq!(
            r.call(7, 5, &Request::Cmit).status().reason,
            ReasonCode::HconnError
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bogus_object_handles_are_2019() {
    let qm = start("BAD.HOBJ");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    for via in [Via::Tcp, Via::Bindings] {
        let mut r = raw(&qm, via, 0);
        r.open_conversation(1);
        // Put before any open.
        let put = |hobj| Request::Put {
            properties: bytes::Bytes::new(),
            hobj,
            md: MessageDescriptor::default(),
            pmo: PutOptions::default(),
            body: bytes::Bytes::from_static(b"nowhere"),
        };
        for hobj in [0, 1, 12345, -1, i32::MAX] {
            let reply = r.call(1, 2, &put(hobj));
            assert_eq!(
                reply.status().reason,
                ReasonCode::HobjError,
                "{via:?} put {hobj}"
            );
            let get = Request::Get {
                hobj,
                md: MessageDescriptor::default(),
                gmo: gmo(GetOptionFlags::WAIT, 10_000),
                max_len: 100,
            };
            let reply = r.call(1, 3, &get);
            assert_eq!(
                reply.status().reason,
                ReasonCode::HobjError,
                "{via:?} get {hobj}"
            );
            let inq = Request::Inq {
                hobj,
                selectors: vec![ferry_mqi::inquire::selector::CURRENT_Q_DEPTH],
            };
            assert_eq!(r.call(1, 4, &inq).status().reason, ReasonCode::HobjError);
            let close = Request::Close {
                hobj,
                options: Default::default(),
            };
            assert_eq!(r.call(1, 5, &close).status().reason, ReasonCode::HobjError);
        }
        // Another conversation's handle is not yours.
        let od = ObjectDescriptor::queue("Q").unwrap();
        r.open_conversation(2);
        let hobj = match r.call(
            2,
            2,
            &Request::Open {
                od,
                options: OpenOptions::OUTPUT,
            },
        ) {
            Reply::Open { hobj, status, .. } => {
                assert_eq!(status.reason, ReasonCode::None);
                hobj
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(r.call(2, 3, &put(hobj)).status().reason, ReasonCode::None);
        let foreign = r.call(1, 6, &put(hobj));
        // Conversation 1 has no handles: conversation 2's handle number means nothing
        // there, and the put fails with 2019 and puts nothing.
        assert_eq!(foreign.status().reason, ReasonCode::HobjError, "{via:?}");
        // A closed handle is bogus too.
        let close = Request::Close {
            hobj,
            options: Default::default(),
        };
        assert_eq!(r.call(2, 4, &close).status().reason, ReasonCode::None);
        assert_eq!(
            r.call(2, 5, &put(hobj)).status().reason,
            ReasonCode::HobjError
        );
    }
    assert_eq!(curdepth(&qm, "Q"), 2, "only the two valid puts landed");
    still_serves(&qm).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_random_connections_leave_the_server_serving() {
    let mut qm = start("BAD.FUZZ");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let pid = qm.pid().expect("running") as i32;
    // A client connected throughout, with a message queued.
    let good = connect(&qm.client()).await;
    let gq = open(&good, "Q", OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED).await;
    put(&gq, "before the storm").await;

    let mut rng = Rng::new(0x5eed_f00d);
    let mut hello = BytesMut::new();
    ferry_wire::ClientHello {
        channel: ferry_mqi::FixedStr::new("SYSTEM.DEF.SVRCONN").unwrap(),
        ..Default::default()
    }
    .encode(&mut hello)
    .unwrap();
    for i in 0..1000 {
        let mut bytes = match i % 3 {
            // Pure noise.
            0 => Vec::new(),
            // The right magic, then noise.
            1 => MAGIC.to_vec(),
            // A valid hello, then noise where frames should be.
            _ => hello.to_vec(),
        };
        let n = rng.below(300);
        bytes.extend(rng.bytes(n));
        let mut r = if i % 4 == 0 {
            Raw::unix(&qm)
        } else {
            Raw::tcp(&qm)
        };
        // The server may close before everything is written: that is fine.
        let _ = std::io::Write::write_all(&mut r.stream, &bytes);
        r.stream.shutdown_write();
        r.drain_to_eof();
    }
    assert!(alive(pid), "the server process died");
    // The connected client and its message are untouched; new clients are served.
    assert_eq!(get_text(&gq).await, "before the storm");
    good.disconnect().await.unwrap();
    still_serves(&qm).await;
    let status = qm.ferry(&["status", qm.name()]);
    assert!(
        stdout(&status).contains("STATUS(Running)"),
        "{}",
        stdout(&status)
    );
    // Written once per cause and SuppressInterval, the rest counted; the stop writes
    // the counts.
    stop_qm(&mut qm);
    let log = qm.error_log();
    let logged = error_log_accounted(&log, "FRY9504E");
    assert!(logged >= 600, "protocol errors logged: {logged}: {log}");
}
