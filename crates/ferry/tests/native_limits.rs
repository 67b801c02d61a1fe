//! What one native client (a socket on a SVRCONN channel) can make the queue manager hold
//! or wait for, tried over raw sockets as a hostile client would: sockets that send only
//! the hello or stop in the middle of a frame are closed after HandshakeTimeout and
//! PartialFrameTimeout (FRY9271E) and no longer lock good clients out; heartbeats are the
//! channel's HBINT whatever the client proposes; MAXINST and MAXINSTC refuse the hello
//! with 2537, SHARECNV an MQCONN; every socket shows in DISPLAY CHSTATUS, handshaking or
//! running; an idle socket holds little memory (its buffers grow with what arrives); a
//! client that never reads its replies stops being read (MaxUnsentBytes); MQINQ takes at
//! most 256 selectors (2066).

mod common;

use bytes::BytesMut;
use common::*;
use ferry_mqi::{
    CompCode, GetOptionFlags, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptions,
    ReasonCode,
};
use ferry_wire::{ClientHello, CloseNotice, Reply, Request, ServerHello, Verb};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

/// The queue manager's resident memory (VmRSS) in KiB.
fn rss_kib(qm: &TestQueueManager) -> u64 {
    let pid = qm.pid().expect("running");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// Reads everything until the server closes the socket; returns the bytes and how long
/// the close took from `since`.
fn read_until_closed(stream: &mut dyn Read, since: Instant) -> (BytesMut, Duration) {
    let mut buf = BytesMut::new();
    let mut chunk = [0u8; 4096];
    loop {
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                panic!("the socket was still open after {:?}", since.elapsed())
            }
            Err(_) => break,
        }
    }
    (buf, since.elapsed())
}

/// A TCP socket to `qm` with a read timeout of `timeout`.
fn tcp(qm: &TestQueueManager, timeout: Duration) -> std::net::TcpStream {
    let s = std::net::TcpStream::connect(("127.0.0.1", qm.port())).expect("connect");
    s.set_read_timeout(Some(timeout)).expect("read timeout");
    s.set_nodelay(true).expect("nodelay");
    s
}

/// The bytes of a client hello on SYSTEM.DEF.SVRCONN.
fn hello_bytes(heartbeat: u32, sharecnv: u32) -> BytesMut {
    let mut out = BytesMut::new();
    ClientHello {
        channel: ferry_mqi::FixedStr::new("SYSTEM.DEF.SVRCONN").unwrap(),
        appl_name: ferry_mqi::FixedStr::new("hostile").unwrap(),
        heartbeat_interval: heartbeat,
        sharecnv,
        ..ClientHello::default()
    }
    .encode(&mut out)
    .expect("encode hello");
    out
}

/// The close notice among frames read to EOF.
#[track_caller]
fn close_notice(frames: &[ferry_wire::Frame]) -> CloseNotice {
    let last = frames.last().expect("a close notice before EOF");
    assert_eq!(last.verb, Verb::Error, "{frames:?}");
    CloseNotice::decode(last).expect("close notice decodes")
}

#[test]
fn heartbeats_are_the_channels_hbint_whatever_the_client_proposes() {
    let qm = start("NL.HBINT");
    for (proposed, granted) in [(0, 300), (1_000_000, 300), (301, 300), (60, 60), (300, 300)] {
        let mut r = Raw::tcp(&qm);
        let h = r.hello_with_heartbeat("SYSTEM.DEF.SVRCONN", 0, proposed);
        assert_eq!(h.status.reason, ReasonCode::None, "{h:?}");
        assert_eq!(
            h.heartbeat_interval, granted,
            "a client proposing {proposed} s gets the channel's HBINT(300) as the longest"
        );
    }
    // HBINT(0) on the channel: no heartbeats, whatever the client asks.
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) HBINT(0)",
    );
    let mut r = Raw::tcp(&qm);
    assert_eq!(
        r.hello_with_heartbeat("SYSTEM.DEF.SVRCONN", 0, 60)
            .heartbeat_interval,
        0
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_client_works_with_the_interval_the_server_insists_on() {
    let qm = start("NL.HBCLIENT");
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) HBINT(1)",
    );
    // The client asks for no heartbeats; the server insists on 1 s, and the client keeps
    // them: silent for 4 s, it is still connected and works.
    let conn = connect(&qm.client().heartbeat_interval(0).sharecnv(1)).await;
    let q = open(
        &conn,
        "SYSTEM.DEFAULT.LOCAL.QUEUE",
        OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
    )
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    put(&q, "still here").await;
    assert_eq!(get_text(&q).await, "still here");
    conn.disconnect().await.unwrap();
    assert!(!qm.error_log().contains("FRY9259W"), "{}", qm.error_log());
}

#[test]
fn sockets_that_only_say_hello_are_closed_and_no_longer_lock_out_good_clients() {
    let qm = start_with_limits("NL.HELLO", &[("HandshakeTimeout", "2")]);
    let began = Instant::now();
    // MaxChannels(100) sockets that send the hello and nothing more.
    let mut idle: Vec<Raw> = (0..100)
        .map(|_| {
            let mut r = Raw::tcp(&qm);
            let h = r.hello("SYSTEM.DEF.SVRCONN", 0);
            assert_eq!(h.status.reason, ReasonCode::None, "{h:?}");
            r
        })
        .collect();
    // They hold every channel instance MaxChannels allows.
    let refused = Raw::tcp(&qm).hello("SYSTEM.DEF.SVRCONN", 0);
    assert_eq!(
        refused.status.reason,
        ReasonCode::ChannelNotAvailable,
        "{refused:?}"
    );
    assert!(refused.message.contains("MaxChannels"), "{refused:?}");
    // Each is closed HandshakeTimeout after it was accepted, with a close notice.
    for r in &mut idle {
        let notice = close_notice(&r.read_to_eof());
        assert_eq!(notice.reason, ReasonCode::ConnectionBroken, "{notice:?}");
        assert!(notice.text.contains("HandshakeTimeout"), "{notice:?}");
    }
    assert!(
        began.elapsed() < Duration::from_secs(2 + 10),
        "closed after {:?}",
        began.elapsed()
    );
    // A good client gets in.
    let mut good = Raw::tcp(&qm);
    let h = good.hello("SYSTEM.DEF.SVRCONN", 0);
    assert_eq!(h.status.reason, ReasonCode::None, "{h:?}");
    good.open_conversation(1);
    // A connected conversation is not cut by the handshake timeout.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        good.call(1, 2, &Request::Cmit).status().reason,
        ReasonCode::None
    );
    wait_until("FRY9271E in the error log", || {
        qm.error_log().contains("FRY9271E")
    });
}

#[test]
fn a_socket_that_sends_nothing_or_half_a_hello_is_closed_after_the_handshake_timeout() {
    let qm = start_with_limits("NL.SILENT", &[("HandshakeTimeout", "2")]);
    let half = hello_bytes(0, 10);
    for sent in [&[][..], &half[..half.len() / 2]] {
        let mut s = tcp(&qm, Duration::from_secs(20));
        let since = Instant::now();
        s.write_all(sent).expect("write");
        let (mut got, took) = read_until_closed(&mut s, since);
        assert!(
            took < Duration::from_secs(2 + 5),
            "{} bytes sent: closed after {took:?}",
            sent.len()
        );
        // The server says why in a refused hello.
        let refusal = ServerHello::decode(&mut got)
            .expect("a server hello")
            .expect("complete");
        assert_eq!(refusal.status.comp, CompCode::Failed, "{refusal:?}");
        assert!(refusal.message.contains("HandshakeTimeout"), "{refusal:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_stalled_midway_is_closed_after_the_partial_frame_timeout() {
    let qm = start_with_limits("NL.PARTIAL", &[("PartialFrameTimeout", "2")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut r = Raw::tcp(&qm);
    r.hello("SYSTEM.DEF.SVRCONN", 0);
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
        Reply::Open { hobj, status, .. } => {
            assert_eq!(status.reason, ReasonCode::None);
            hobj
        }
        other => panic!("{other:?}"),
    };
    let put = Request::Put {
        properties: bytes::Bytes::new(),
        hobj,
        md: MessageDescriptor::default(),
        pmo: PutOptions::new(ferry_mqi::PutOptionFlags::SYNCPOINT),
        body: bytes::Bytes::from_static(b"never committed"),
    };
    assert_eq!(r.call(1, 3, &put).status().reason, ReasonCode::None);
    // Idle between frames is not a stall: still served after longer than the timeout.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        r.call(
            1,
            4,
            &Request::Inq {
                hobj: 99,
                selectors: vec![]
            }
        )
        .status()
        .reason,
        ReasonCode::HobjError
    );
    // The header of a 1000-byte PUT and 20 bytes of it, then nothing.
    let mut partial = Vec::new();
    partial.extend_from_slice(&1000u32.to_le_bytes());
    partial.extend_from_slice(&1u32.to_le_bytes());
    partial.extend_from_slice(&5u32.to_le_bytes());
    partial.extend_from_slice(&[Verb::Put.code(), 0, 0, 0]);
    partial.extend_from_slice(&[0u8; 20]);
    r.send_bytes(&partial);
    let since = Instant::now();
    let notice = close_notice(&r.read_to_eof());
    assert!(
        since.elapsed() < Duration::from_secs(2 + 5),
        "closed after {:?}",
        since.elapsed()
    );
    assert_eq!(notice.reason, ReasonCode::ConnectionBroken, "{notice:?}");
    assert!(notice.text.contains("PartialFrameTimeout"), "{notice:?}");
    // Its unit of work was backed out.
    wait_until("the connection to end", || {
        let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) UNCOM");
        attr(&s, "UNCOM").as_deref() == Some("NO")
    });
    assert_eq!(curdepth(&qm, "Q"), 0);
    assert!(qm.error_log().contains("FRY9271E"), "{}", qm.error_log());
}

#[test]
fn maxinst_and_maxinstc_refuse_the_hello_with_2537() {
    let qm = start("NL.MAXINST");
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) MAXINST(2)",
    );
    let mut first = Raw::tcp(&qm);
    assert_eq!(
        first.hello("SYSTEM.DEF.SVRCONN", 0).status.reason,
        ReasonCode::None
    );
    let mut second = Raw::tcp(&qm);
    assert_eq!(
        second.hello("SYSTEM.DEF.SVRCONN", 0).status.reason,
        ReasonCode::None
    );
    let mut third = Raw::tcp(&qm);
    let refused = third.hello("SYSTEM.DEF.SVRCONN", 0);
    assert_eq!(
        refused.status.reason,
        ReasonCode::ChannelNotAvailable,
        "{refused:?}"
    );
    assert!(refused.message.contains("MAXINST(2)"), "{refused:?}");
    third.drain_to_eof();
    // One goes: there is room again.
    drop(first);
    wait_until("a freed instance", || {
        let mut r = Raw::tcp(&qm);
        r.hello("SYSTEM.DEF.SVRCONN", 0).status.reason == ReasonCode::None
    });
    drop(second);

    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) MAXINST(100) MAXINSTC(1)",
    );
    let mut only = None;
    wait_until("the other sockets to be gone", || {
        let mut r = Raw::tcp(&qm);
        let admitted = r.hello("SYSTEM.DEF.SVRCONN", 0).status.reason == ReasonCode::None;
        if admitted {
            only = Some(r);
        }
        admitted
    });
    let refused = Raw::tcp(&qm).hello("SYSTEM.DEF.SVRCONN", 0);
    assert_eq!(
        refused.status.reason,
        ReasonCode::ChannelNotAvailable,
        "{refused:?}"
    );
    assert!(refused.message.contains("MAXINSTC(1)"), "{refused:?}");
    drop(only);
    // Bindings connections are not channel instances.
    let mut local = Raw::unix(&qm);
    assert_eq!(local.hello("", 0).status.reason, ReasonCode::None);
    let log = qm.error_log();
    assert!(
        log.contains("FRY9489E") && log.contains("FRY9490E"),
        "{log}"
    );
}

#[test]
fn sharecnv_bounds_the_conversations_of_a_socket() {
    let qm = start("NL.SHARECNV");
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(2)",
    );
    let mut r = Raw::tcp(&qm);
    assert_eq!(r.hello("SYSTEM.DEF.SVRCONN", 0).sharecnv, 2);
    r.open_conversation(1);
    r.open_conversation(2);
    let reply = r.call(3, 1, &Request::Conn(Default::default()));
    assert_eq!(
        reply.status().reason,
        ReasonCode::ChannelNotAvailable,
        "{reply:?}"
    );
    // The socket stays usable.
    assert_eq!(
        r.call(1, 2, &Request::Cmit).status().reason,
        ReasonCode::None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_svrconn_socket_shows_in_display_chstatus() {
    let qm = start("NL.CHSTATUS");
    assert!(mqsc_exit(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.SVRCONN)", 10).contains("FRY8420I"));
    // One socket that said hello and nothing more, one client connected.
    let mut binding = Raw::tcp(&qm);
    binding.hello("SYSTEM.DEF.SVRCONN", 0);
    let conn = connect(&qm.client().application_name("chs-app")).await;
    let shown = mqsc_ok(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.SVRCONN) ALL");
    assert_eq!(
        attrs(&shown, "CHLTYPE"),
        ["SVRCONN", "SVRCONN"],
        "one record per socket: {shown}"
    );
    let mut statuses = attrs(&shown, "STATUS");
    statuses.sort();
    assert_eq!(statuses, ["BINDING", "RUNNING"], "{shown}");
    assert_eq!(attrs(&shown, "CONNAME"), ["127.0.0.1", "127.0.0.1"]);
    let mut curshcnv = attrs(&shown, "CURSHCNV");
    curshcnv.sort();
    assert_eq!(curshcnv, ["0", "1"], "{shown}");
    assert_eq!(attrs(&shown, "MAXSHCNV"), ["10", "10"], "{shown}");
    assert!(attrs(&shown, "RAPPLTAG").contains(&"chs-app".to_string()));
    // WHERE and CHLTYPE select among them; the AMQP channel is not a SVRCONN.
    let running = mqsc_ok(
        &qm,
        "DISPLAY CHSTATUS(*) CHLTYPE(SVRCONN) WHERE(CURSHCNV GT 0)",
    );
    assert_eq!(attrs(&running, "STATUS"), ["RUNNING"], "{running}");
    assert_eq!(
        attr(&running, "MSGS").as_deref(),
        Some("1"),
        "its MQCONN: {running}"
    );
    let all = mqsc_ok(&qm, "DISPLAY CHSTATUS(*)");
    assert_eq!(
        attrs(&all, "CHLTYPE")
            .iter()
            .filter(|t| *t == "SVRCONN")
            .count(),
        2,
        "{all}"
    );
    conn.disconnect().await.unwrap();
    drop(binding);
    wait_until("both sockets to be gone", || {
        qm.mqsc("DISPLAY CHSTATUS(SYSTEM.DEF.SVRCONN)")
            .status
            .code()
            == Some(10)
    });
}

#[test]
fn idle_sockets_hold_little_memory() {
    let qm = start_with_ini("NL.RSS", &[("Channels", "MaxChannels", "1000")]);
    const SOCKETS: u64 = 400;
    // One socket first: the one-off costs (task machinery, first engine connection) are
    // not per socket.
    let mut warm = Raw::tcp(&qm);
    warm.hello("SYSTEM.DEF.SVRCONN", 0);
    warm.open_conversation(1);
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_kib(&qm);
    let mut held = Vec::new();
    for i in 0..SOCKETS {
        let mut r = Raw::tcp(&qm);
        r.hello("SYSTEM.DEF.SVRCONN", 0);
        r.open_conversation(1);
        if i % 2 == 1 {
            // Half also announce a frame of MAXMSGL and send only its header: the
            // server must not reserve what the header claims.
            let mut header = Vec::new();
            header.extend_from_slice(&(4 * 1024 * 1024u32).to_le_bytes());
            header.extend_from_slice(&1u32.to_le_bytes());
            header.extend_from_slice(&9u32.to_le_bytes());
            header.extend_from_slice(&[Verb::Put.code(), 0, 0, 0]);
            r.send_bytes(&header);
        }
        held.push(r);
    }
    std::thread::sleep(Duration::from_secs(1));
    let per_socket = (rss_kib(&qm).saturating_sub(before)) / SOCKETS;
    assert!(
        per_socket <= 32,
        "an idle connected socket costs {per_socket} KiB of resident memory"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_never_reads_its_replies_is_no_longer_read() {
    let qm = start("NL.NOREAD");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    // A 60 KiB message, then thousands of browse requests for it whose replies are never
    // read: 2,000 x 60 KiB = 120 MB of replies if the server kept reading.
    let mut s = tcp(&qm, DEADLINE);
    s.write_all(&hello_bytes(0, 10)).expect("hello");
    let mut buf = BytesMut::new();
    while ServerHello::decode(&mut buf).expect("hello").is_none() {
        let mut chunk = [0u8; 1024];
        let n = s.read(&mut chunk).expect("read hello");
        assert!(n > 0);
        buf.extend_from_slice(&chunk[..n]);
    }
    let mut out = BytesMut::new();
    ferry_wire::encode_request(1, 1, &Request::Conn(Default::default()), &mut out).unwrap();
    ferry_wire::encode_request(
        1,
        2,
        &Request::Open {
            od: ObjectDescriptor::queue("Q").unwrap(),
            options: OpenOptions::OUTPUT | OpenOptions::BROWSE,
        },
        &mut out,
    )
    .unwrap();
    // The handle of the first open of a conversation (handles count from 1).
    let hobj = 1;
    ferry_wire::encode_request(
        1,
        3,
        &Request::Put {
            properties: bytes::Bytes::new(),
            hobj,
            md: MessageDescriptor::default(),
            pmo: PutOptions::default(),
            body: bytes::Bytes::from(vec![b'x'; 60 * 1024]),
        },
        &mut out,
    )
    .unwrap();
    for rid in 4..2004 {
        ferry_wire::encode_request(
            1,
            rid,
            &Request::Get {
                hobj,
                md: MessageDescriptor::default(),
                gmo: gmo(GetOptionFlags::BROWSE_FIRST, 0),
                max_len: 64 * 1024,
            },
            &mut out,
        )
        .unwrap();
    }
    let before = rss_kib(&qm);
    // Written from another thread: once the server stops reading, this blocks.
    let mut w = s.try_clone().expect("clone");
    let writer = std::thread::spawn(move || {
        let _ = w.write_all(&out);
    });
    std::thread::sleep(Duration::from_secs(3));
    // Other clients are served meanwhile.
    let conn = connect(&qm.client().sharecnv(1)).await;
    let q = open(&conn, "Q", OpenOptions::INQUIRE).await;
    let _ = q;
    conn.disconnect().await.unwrap();
    let grown = rss_kib(&qm).saturating_sub(before);
    assert!(
        grown < 24 * 1024,
        "the server buffered {grown} KiB for a client that reads nothing"
    );
    // The browse really happened (the replies are waiting for the client).
    let mut first = [0u8; 16];
    s.read_exact(&mut first).expect("replies are there to read");
    let _ = s.shutdown(std::net::Shutdown::Both);
    let _ = writer.join();
    // Once the client is gone (its socket closed, the replies unread), so is the
    // server's socket and what it held.
    drop(s);
    wait_until("the socket to be gone", || {
        !mqsc_ok(&qm, "DISPLAY CHSTATUS(*) WHERE(RAPPLTAG EQ 'hostile')").contains("SVRCONN")
    });
}

#[test]
fn mqinq_takes_at_most_256_selectors() {
    let qm = start("NL.INQ");
    let mut r = Raw::tcp(&qm);
    r.hello("SYSTEM.DEF.SVRCONN", 0);
    r.open_conversation(1);
    let hobj = match r.call(
        1,
        2,
        &Request::Open {
            od: ObjectDescriptor::queue("SYSTEM.DEFAULT.LOCAL.QUEUE").unwrap(),
            options: OpenOptions::INQUIRE,
        },
    ) {
        Reply::Open { hobj, status, .. } => {
            assert_eq!(status.reason, ReasonCode::None);
            hobj
        }
        other => panic!("{other:?}"),
    };
    let depth = ferry_mqi::inquire::selector::CURRENT_Q_DEPTH;
    let ok = r.call(
        1,
        3,
        &Request::Inq {
            hobj,
            selectors: vec![depth; 256],
        },
    );
    assert_eq!(ok.status().reason, ReasonCode::None, "256 is MQ's limit");
    let over = r.call(
        1,
        4,
        &Request::Inq {
            hobj,
            selectors: vec![depth; 257],
        },
    );
    assert_eq!(
        over.status().reason,
        ReasonCode::SelectorLimitExceeded,
        "{over:?}"
    );
    // Thousands more are refused the same way, and the socket carries on.
    let many = r.call(
        1,
        5,
        &Request::Inq {
            hobj,
            selectors: vec![depth; 200_000],
        },
    );
    assert_eq!(many.status().reason, ReasonCode::SelectorLimitExceeded);
    assert_eq!(
        r.call(1, 6, &Request::Cmit).status().reason,
        ReasonCode::None
    );
}
