//! Channel compression on native client channels, against a real queue manager process:
//! COMPMSG and COMPHDR agreed at connect as MQ does (the client's first choice the
//! SVRCONN also lists), messages that come back byte for byte whatever the technique,
//! DISPLAY CHSTATUS showing the technique and what it saved, a minor-2 client that never
//! compresses, and hostile compressed frames that end only their own connection with a
//! clear reason and an error-log message.

mod common;

use bytes::{Bytes, BytesMut};
use common::*;
use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::{
    FixedStr, GetOptionFlags, HeaderCompression, MessageCompression, MessageDescriptor,
    ObjectDescriptor, OpenOptions, PutOptions, ReasonCode,
};
use ferry_wire::{
    encode_request, ClientHello, CloseNotice, FrameCompressor, HelloFlags, Request, Techniques,
    Verb,
};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);

/// A JSON-like body of `len` bytes: orders with repeating keys and varying values.
fn json(len: usize) -> Bytes {
    let mut s = String::from("[");
    let mut i = 0u64;
    while s.len() < len {
        s.push_str(&format!(
            r#"{{"orderId":{},"customer":"C{:06}","sku":"SKU-{:04}","quantity":{},"price":{}.{:02},"status":"{}"}},"#,
            100_000 + i,
            (i * 7919) % 1_000_000,
            (i * 31) % 10_000,
            i % 9 + 1,
            (i * 17) % 500,
            i % 100,
            ["NEW", "PAID", "SHIPPED"][(i % 3) as usize]
        ));
        i += 1;
    }
    s.truncate(len);
    Bytes::from(s)
}

/// Bytes that no technique shrinks.
fn noise(len: usize) -> Bytes {
    let mut rng = Rng::new(7);
    Bytes::from(rng.bytes(len))
}

fn channel_opts(qm: &TestQueueManager, channel: &str) -> ConnectOptions {
    ConnectOptions::client(&qm.conname(), channel)
}

/// Puts each body and gets it back on `conn`, asserting every byte came back.
async fn round_trip_all(conn: &Connection, bodies: &[Bytes]) {
    let q = open(conn, "Q", IO).await;
    for body in bodies {
        let mut md = MessageDescriptor::default();
        within("put", q.put(&mut md, &PutOptions::default(), body.clone()))
            .await
            .expect("put");
    }
    for body in bodies {
        let mut md = MessageDescriptor::default();
        let got = within(
            "get",
            q.get(&mut md, &gmo(GetOptionFlags::NO_SYNCPOINT, 0), 1024 * 1024),
        )
        .await
        .expect("get");
        assert_eq!(got.data.len(), body.len());
        assert!(got.data == *body, "the body came back changed");
    }
}

/// Puts `body` on `put_q`, gets the next message from `get_q` (the same queue, through
/// another connection or the same) and returns its data.
async fn put_then_get(put_q: &Queue, get_q: &Queue, body: &Bytes) -> Bytes {
    let mut md = MessageDescriptor::default();
    put_q
        .put(&mut md, &PutOptions::default(), body.clone())
        .await
        .expect("put");
    get_q
        .get(
            &mut MessageDescriptor::default(),
            &gmo(GetOptionFlags::NO_SYNCPOINT, 0),
            1 << 20,
        )
        .await
        .expect("get")
        .data
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_clients_first_choice_the_channel_lists_is_used_and_chstatus_shows_it() {
    let qm = start("COMP.AGREE");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q) MAXMSGL(4194304)\n\
         DEFINE CHANNEL(COMP.SVRCONN) CHLTYPE(SVRCONN) COMPMSG(ZLIBFAST,LZ4FAST) COMPHDR(SYSTEM)",
    );
    let opts = channel_opts(&qm, "COMP.SVRCONN")
        .message_compression(&[MessageCompression::Lz4Fast])
        .header_compression(&[HeaderCompression::System]);
    let conn = connect(&opts).await;
    assert_eq!(
        conn.compression(),
        (HeaderCompression::System, MessageCompression::Lz4Fast)
    );
    let bodies = [
        json(2 * 1024),
        json(20 * 1024),
        noise(3000),
        Bytes::new(),
        json(31),
    ];
    round_trip_all(&conn, &bodies).await;

    let shown = mqsc_ok(&qm, "DISPLAY CHSTATUS(COMP.SVRCONN) ALL");
    assert_eq!(
        attr(&shown, "COMPMSG").as_deref(),
        Some("LZ4FAST,NONE"),
        "the last message sent (a 31-byte body) went as it was: {shown}"
    );
    assert_eq!(
        attr(&shown, "COMPHDR")
            .as_deref()
            .map(|v| v.starts_with("SYSTEM,")),
        Some(true),
        "{shown}"
    );
    let rate = attr(&shown, "COMPRATE").expect("COMPRATE");
    let (short, long) = rate.split_once(',').expect("two values");
    let long: u32 = long.parse().expect("a number");
    assert!(long > 0, "JSON shrinks: COMPRATE({short},{long})");
    assert!(attr(&shown, "COMPTIME").is_some_and(|t| t.contains(',')));

    // What a compressing client put, a plain client gets as it was put, and the other
    // way round: the queue holds messages, not compressed frames.
    let plain = connect(&qm.client()).await;
    assert_eq!(plain.compression().1, MessageCompression::None);
    let pq = open(&plain, "Q", IO).await;
    let cq = open(&conn, "Q", IO).await;
    let body = json(20 * 1024);
    assert!(put_then_get(&cq, &pq, &body).await == body);
    assert!(put_then_get(&pq, &cq, &body).await == body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_technique_the_channel_lacks_gets_none_and_every_technique_round_trips() {
    let qm = start("COMP.EVERY");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(ZLIB.ONLY) CHLTYPE(SVRCONN) COMPMSG(ZLIBFAST)\n\
         DEFINE CHANNEL(ANY.COMP) CHLTYPE(SVRCONN) COMPMSG(ANY) COMPHDR(NONE,SYSTEM)",
    );
    let lacking =
        channel_opts(&qm, "ZLIB.ONLY").message_compression(&[MessageCompression::Lz4High]);
    let conn = connect(&lacking).await;
    assert_eq!(
        conn.compression(),
        (HeaderCompression::None, MessageCompression::None)
    );
    round_trip_all(&conn, &[json(2048)]).await;
    let shown = mqsc_ok(&qm, "DISPLAY CHSTATUS(ZLIB.ONLY) COMPMSG");
    assert_eq!(
        attr(&shown, "COMPMSG").as_deref(),
        Some("NONE,NONE"),
        "{shown}"
    );
    drop(conn);

    // A client asking for ANY is refused before it connects: ANY is the receiving end's.
    let any = channel_opts(&qm, "ANY.COMP").message_compression(&[MessageCompression::Any]);
    assert_reason(
        Connection::connect(&any).await,
        ReasonCode::ChannelConfigError,
    );

    for technique in [
        MessageCompression::Rle,
        MessageCompression::ZlibFast,
        MessageCompression::ZlibHigh,
        MessageCompression::Lz4Fast,
        MessageCompression::Lz4High,
    ] {
        let opts = channel_opts(&qm, "ANY.COMP")
            .message_compression(&[technique, MessageCompression::None])
            .header_compression(&[HeaderCompression::System])
            .sharecnv(1);
        let conn = connect(&opts).await;
        assert_eq!(conn.compression(), (HeaderCompression::System, technique));
        let mut padded = vec![b' '; 4000];
        padded[..5].copy_from_slice(b"hello");
        round_trip_all(
            &conn,
            &[
                json(2048),
                json(20 * 1024),
                json(300 * 1024),
                noise(5000),
                Bytes::from(padded),
                Bytes::new(),
            ],
        )
        .await;
        conn.disconnect().await.expect("disconnect");
    }
}

/// A raw client on `channel` that agreed ZLIBFAST, with a conversation open and queue Q
/// open for output as handle 1. Returns the socket and the handle.
fn zlib_raw(qm: &TestQueueManager, channel: &str) -> (Raw, i32) {
    let mut raw = Raw::tcp(qm);
    let answer = raw.send_hello(ClientHello {
        channel: FixedStr::new(channel).expect("name"),
        flags: HelloFlags::COMPRESSION,
        compress_message: vec![MessageCompression::ZlibFast],
        ..ClientHello::default()
    });
    assert_eq!(answer.compression.message, MessageCompression::ZlibFast);
    raw.open_conversation(1);
    let reply = raw.call(
        1,
        2,
        &Request::Open {
            od: ObjectDescriptor::queue("Q").expect("name"),
            options: OpenOptions::OUTPUT,
        },
    );
    let ferry_wire::Reply::Open { hobj, status, .. } = reply else {
        panic!("{reply:?}")
    };
    assert_eq!(status.reason, ReasonCode::None);
    (raw, hobj)
}

/// A PUT of `body` on handle `hobj`, compressed with ZLIBFAST.
fn compressed_put(hobj: i32, body: Bytes) -> BytesMut {
    let req = Request::Put {
        properties: bytes::Bytes::new(),
        hobj,
        md: MessageDescriptor::default(),
        pmo: PutOptions::default(),
        body: body.clone(),
    };
    let mut out = BytesMut::new();
    encode_request(1, 3, &req, &mut out).expect("encode");
    let flow = FrameCompressor::new(Techniques {
        header: HeaderCompression::None,
        message: MessageCompression::ZlibFast,
    })
    .compress_frame(&mut out, 0, body.len());
    assert_eq!(flow.message, MessageCompression::ZlibFast);
    out
}

/// Reads to the end of the socket and returns the close notice it got.
fn close_notice(raw: &mut Raw) -> CloseNotice {
    let frames = raw.read_to_eof();
    let f = frames
        .iter()
        .find(|f| f.verb == Verb::Error)
        .unwrap_or_else(|| panic!("no close notice in {frames:?}"));
    CloseNotice::decode(f).expect("notice")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_compressed_frames_close_only_their_connection_with_the_reason() {
    let qm = start("COMP.HOSTILE");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(COMP.SVRCONN) CHLTYPE(SVRCONN) COMPMSG(ZLIBFAST) MAXMSGL(65536)",
    );
    // A well-behaved compressing client, connected throughout.
    let opts = channel_opts(&qm, "COMP.SVRCONN")
        .message_compression(&[MessageCompression::ZlibFast])
        .sharecnv(1);
    let bystander = connect(&opts).await;
    round_trip_all(&bystander, &[json(2048)]).await;

    // 1 MiB of zeros compresses to a few KiB: announced past MAXMSGL, refused before the
    // queue manager allocates for it.
    let (mut raw, hobj) = zlib_raw(&qm, "COMP.SVRCONN");
    let bomb = compressed_put(hobj, Bytes::from(vec![0u8; 1 << 20]));
    assert!(bomb.len() < 65536, "the bomb itself fits in a frame");
    raw.send_bytes(&bomb);
    let notice = close_notice(&mut raw);
    assert_eq!(notice.reason, ReasonCode::MsgTooBigForChannel, "{notice:?}");
    assert!(notice.text.contains("expand"), "{}", notice.text);

    // Damaged data: the zlib stream garbled.
    let (mut raw, hobj) = zlib_raw(&qm, "COMP.SVRCONN");
    let mut garbled = compressed_put(hobj, json(4096));
    let len = garbled.len();
    for b in &mut garbled[len - 64..] {
        *b ^= 0x5A;
    }
    raw.send_bytes(&garbled);
    let notice = close_notice(&mut raw);
    assert_eq!(notice.reason, ReasonCode::ConnectionBroken, "{notice:?}");
    assert!(notice.text.contains("ZLIBFAST"), "{}", notice.text);

    // A compressed frame on a connection that agreed on no compression.
    let mut raw = Raw::tcp(&qm);
    raw.hello("SYSTEM.DEF.SVRCONN", 0);
    raw.open_conversation(1);
    let mut unagreed = compressed_put(1, json(4096));
    // The conversation and request ids of a fresh socket.
    unagreed[4..8].copy_from_slice(&1u32.to_le_bytes());
    raw.send_bytes(&unagreed);
    let notice = close_notice(&mut raw);
    assert_eq!(notice.reason, ReasonCode::ConnectionBroken, "{notice:?}");

    let log = qm.error_log();
    assert!(
        log.contains("FRY9504E") && log.contains("would expand to 1048"),
        "{log}"
    );
    assert!(log.contains("compressed ZLIBFAST data is damaged"), "{log}");
    // The bystander carries on.
    round_trip_all(&bystander, &[json(20 * 1024)]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_minor_2_client_never_compresses() {
    let qm = start("COMP.OLD");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\n\
         DEFINE CHANNEL(ANY.COMP) CHLTYPE(SVRCONN) COMPMSG(ANY) COMPHDR(SYSTEM)",
    );
    let mut raw = Raw::tcp(&qm);
    let answer = raw.hello_at_minor("ANY.COMP", 2);
    assert_eq!(answer.minor, 2);
    assert!(!answer.flags.contains(HelloFlags::COMPRESSION));
    assert_eq!(answer.compression, Techniques::default());
    raw.open_conversation(1);
    let reply = raw.call_at(
        1,
        2,
        &Request::Put1 {
            properties: bytes::Bytes::new(),
            od: ObjectDescriptor::queue("Q").expect("name"),
            md: MessageDescriptor::default(),
            pmo: PutOptions::default(),
            body: json(20 * 1024),
        },
        2,
    );
    assert_eq!(reply.status().reason, ReasonCode::None, "{reply:?}");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO).await;
    let got = q
        .get(
            &mut MessageDescriptor::default(),
            &gmo(GetOptionFlags::NO_SYNCPOINT, 0),
            1 << 20,
        )
        .await
        .expect("get");
    assert!(got.data == json(20 * 1024));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conversations_sharing_a_compressing_socket_get_their_own_messages_intact() {
    let qm = start("COMP.SHARED");
    let mut script = String::from(
        "DEFINE CHANNEL(COMP.SVRCONN) CHLTYPE(SVRCONN) COMPMSG(ZLIBHIGH,LZ4FAST) SHARECNV(10)\n",
    );
    for i in 0..8 {
        script.push_str(&format!("DEFINE QLOCAL(Q.{i})\n"));
    }
    mqsc_ok(&qm, &script);
    let opts = channel_opts(&qm, "COMP.SVRCONN")
        .message_compression(&[MessageCompression::ZlibHigh])
        .sharecnv(10);
    let mut tasks = Vec::new();
    for i in 0..8usize {
        let opts = opts.clone();
        tasks.push(tokio::spawn(async move {
            let conn = connect(&opts).await;
            assert_eq!(conn.compression().1, MessageCompression::ZlibHigh);
            let q = open(&conn, &format!("Q.{i}"), IO).await;
            for n in 0..20usize {
                let body = json(1000 + 997 * ((i * 20 + n) % 23));
                let got = put_then_get(&q, &q, &body).await;
                assert!(got == body, "conversation {i}, message {n}");
            }
            conn.disconnect().await.expect("disconnect");
        }));
    }
    for t in tasks {
        within("a conversation's messages", t).await.expect("task");
    }
}
