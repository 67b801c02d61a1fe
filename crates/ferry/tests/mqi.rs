//! MQI semantics as applications see them, through the Rust client against a real queue
//! manager process. The important cases run twice, over TCP (client connection) and over
//! the bindings Unix socket: descriptor fields carried on put/get, generated MsgIds and
//! put timestamps, priority and FIFO order, get by CorrelId/MsgId, waiting gets (woken
//! by another connection, expiring with 2033, served in arrival order), units of work
//! (commit, backout with BackoutCount, disconnect commits, a broken connection backs
//! out, MAXUMSGS), the limits and their reason codes (2053, 2030, 2031, 2051, 2016, 2085,
//! 2042, 2080/2079), browse, expiry, dynamic and alias queues, MQINQ, MQPUT1, and
//! connection refusals (2540, 2058) and SHARECNV.

mod common;

use common::*;
use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::descriptor::{format, msg_type, persistence};
use ferry_mqi::inquire::selector;
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, InquireValue, MatchOptions, MessageDescriptor,
    ObjectDescriptor, OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};
use ferry_wire::Request;

/// Generates `mod NAME { tcp, bindings }` tests running `async fn NAME(via)` per transport.
macro_rules! both {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn tcp() {
                super::$name(Via::Tcp).await
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn bindings() {
                super::$name(Via::Bindings).await
            }
        }
    )*};
}

both!(
    round_trip_carries_the_descriptor,
    msg_ids_are_unique_and_put_time_is_set,
    priority_order_then_fifo,
    msgdlvsq_fifo_ignores_priority,
    get_by_correl_id_and_by_msg_id,
    waiting_get_is_woken_by_another_connection,
    wait_interval_and_no_wait_end_with_2033,
    waiters_are_served_in_arrival_order,
    uncommitted_put_is_invisible_until_commit,
    backout_restores_a_got_message_with_backout_count,
    disconnect_commits_and_drop_backs_out,
    broken_socket_backs_out,
    maxumsgs_limits_a_unit_of_work,
    queue_and_qmgr_limits,
    put_and_get_inhibited,
    unknown_queue_is_2085,
    exclusive_input_conflicts_are_2042,
    truncated_messages,
    browse_first_and_next,
    temporary_dynamic_queue_lives_with_its_creator,
    alias_queue_resolves_to_its_target,
    inquire_queue_attributes,
    put1_puts_one_message,
);

/// A queue manager with queue `Q` and a connection to it.
async fn setup(name: &str, via: Via, script: &str) -> (TestQueueManager, Connection) {
    let qm = start(name);
    mqsc_ok(&qm, &format!("DEFINE QLOCAL(Q)\n{script}"));
    let conn = connect(&via.opts(&qm)).await;
    (qm, conn)
}

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);

fn text(got: &ferry_client::GotMessage) -> String {
    String::from_utf8(got.data.to_vec()).expect("utf-8")
}

fn id(n: u8) -> [u8; 24] {
    let mut b = [0u8; 24];
    b[0] = n;
    b[23] = 0xEE;
    b
}

async fn round_trip_carries_the_descriptor(via: Via) {
    let (_qm, conn) = setup("MQI.RT", via, "").await;
    let q = open(&conn, "Q", IO).await;
    let mut md = MessageDescriptor {
        format: format::STRING,
        correl_id: id(7),
        reply_to_q: FixedStr::new("REPLY.Q").unwrap(),
        reply_to_qmgr: FixedStr::new("OTHER.QM").unwrap(),
        priority: 6,
        persistence: persistence::NOT_PERSISTENT,
        msg_type: msg_type::REQUEST,
        report: 0,
        feedback: 0,
        ccsid: 1208,
        encoding: 273,
        appl_identity_data: FixedStr::new("ident").unwrap(),
        ..Default::default()
    };
    put_md(&q, &mut md, PutOptions::default(), "héllo wörld")
        .await
        .unwrap();
    let put_msg_id = md.msg_id;
    let (got_md, got) = get(&q).await.unwrap();
    assert_eq!(text(&got), "héllo wörld", "{via:?}");
    assert_eq!(got.data_length, "héllo wörld".len());
    assert_eq!(got.warning, None);
    assert_eq!(got_md.msg_id, put_msg_id, "{via:?}");
    assert_eq!(got_md.format, format::STRING);
    assert_eq!(got_md.correl_id, id(7));
    assert_eq!(got_md.reply_to_q.as_str(), "REPLY.Q");
    assert_eq!(got_md.reply_to_qmgr.as_str(), "OTHER.QM");
    assert_eq!(got_md.priority, 6);
    assert_eq!(got_md.persistence, persistence::NOT_PERSISTENT);
    assert_eq!(got_md.msg_type, msg_type::REQUEST);
    assert_eq!(got_md.ccsid, 1208);
    assert_eq!(got_md.encoding, 273);
    assert_eq!(got_md.backout_count, 0);
    assert_eq!(got_md.expiry, -1, "unlimited expiry stays unlimited");
    assert_eq!(got_md.put_date, md.put_date);
    assert_eq!(got_md.put_time, md.put_time);

    // AS_Q_DEF values come from the queue; a blank ReplyToQMgr is filled in.
    mqsc_ok(&_qm, "ALTER QLOCAL(Q) DEFPRTY(3) DEFPSIST(YES)");
    let mut md = MessageDescriptor {
        reply_to_q: FixedStr::new("REPLY.Q").unwrap(),
        ..Default::default()
    };
    put_md(&q, &mut md, PutOptions::default(), "defaults")
        .await
        .unwrap();
    let (got_md, _) = get(&q).await.unwrap();
    assert_eq!(got_md.priority, 3, "{via:?}");
    assert_eq!(got_md.persistence, persistence::PERSISTENT, "{via:?}");
    assert_eq!(got_md.reply_to_qmgr.as_str(), "MQI.RT", "{via:?}");
    // An empty message is a message too.
    put(&q, "").await;
    let (_, got) = get(&q).await.unwrap();
    assert_eq!(got.data_length, 0);
    conn.disconnect().await.unwrap();
}

async fn msg_ids_are_unique_and_put_time_is_set(via: Via) {
    let (_qm, conn) = setup("MQI.IDS", via, "").await;
    let q = open(&conn, "Q", IO).await;
    let mut ids = std::collections::HashSet::new();
    for i in 0..50 {
        let md = put(&q, &i.to_string()).await;
        assert_ne!(md.msg_id, [0u8; 24], "MsgId generated");
        assert!(ids.insert(md.msg_id), "duplicate MsgId {:02x?}", md.msg_id);
        let date = md.put_date.as_str();
        let time = md.put_time.as_str();
        assert!(
            date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()) && date.starts_with("20"),
            "PutDate YYYYMMDD: {date:?}"
        );
        assert!(
            time.len() == 8 && time.bytes().all(|b| b.is_ascii_digit()) && time[..2] < *"24",
            "PutTime HHMMSSTH: {time:?}"
        );
    }
    // An explicit MsgId is kept; NEW_MSG_ID replaces it.
    let mut md = MessageDescriptor {
        msg_id: id(1),
        ..Default::default()
    };
    put_md(&q, &mut md, PutOptions::default(), "mine")
        .await
        .unwrap();
    assert_eq!(md.msg_id, id(1));
    let mut md = MessageDescriptor {
        msg_id: id(1),
        ..Default::default()
    };
    let pmo = PutOptions::new(PutOptionFlags::NEW_MSG_ID);
    put_md(&q, &mut md, pmo, "new").await.unwrap();
    assert_ne!(md.msg_id, id(1));
    assert!(ids.insert(md.msg_id));
    conn.disconnect().await.unwrap();
}

async fn put_priorities(q: &ferry_client::Queue, items: &[(i32, &str)]) {
    for (prio, body) in items {
        let mut md = MessageDescriptor {
            priority: *prio,
            ..Default::default()
        };
        put_md(q, &mut md, PutOptions::default(), body)
            .await
            .unwrap();
    }
}

async fn drain(q: &ferry_client::Queue) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        match get(q).await {
            Ok((_, got)) => out.push(text(&got)),
            Err(e) => {
                assert_eq!(e.reason, ReasonCode::NoMsgAvailable);
                return out;
            }
        }
    }
}

const MIXED: &[(i32, &str)] = &[
    (0, "p0-a"),
    (5, "p5-a"),
    (9, "p9-a"),
    (5, "p5-b"),
    (0, "p0-b"),
    (9, "p9-b"),
    (5, "p5-c"),
];

async fn priority_order_then_fifo(via: Via) {
    let (_qm, conn) = setup("MQI.PRIO", via, "").await;
    let q = open(&conn, "Q", IO).await;
    put_priorities(&q, MIXED).await;
    assert_eq!(
        drain(&q).await,
        ["p9-a", "p9-b", "p5-a", "p5-b", "p5-c", "p0-a", "p0-b"],
        "{via:?}"
    );
    conn.disconnect().await.unwrap();
}

async fn msgdlvsq_fifo_ignores_priority(via: Via) {
    let (_qm, conn) = setup("MQI.FIFO", via, "ALTER QLOCAL(Q) MSGDLVSQ(FIFO)").await;
    let q = open(&conn, "Q", IO).await;
    put_priorities(&q, MIXED).await;
    let want: Vec<&str> = MIXED.iter().map(|(_, b)| *b).collect();
    assert_eq!(drain(&q).await, want, "{via:?}");
    conn.disconnect().await.unwrap();
}

async fn get_by_correl_id_and_by_msg_id(via: Via) {
    let (_qm, conn) = setup("MQI.MATCH", via, "").await;
    let q = open(&conn, "Q", IO).await;
    let mut msg_ids = Vec::new();
    for i in 0..100u8 {
        let mut md = MessageDescriptor {
            correl_id: id(i),
            ..Default::default()
        };
        put_md(&q, &mut md, PutOptions::default(), &format!("m{i}"))
            .await
            .unwrap();
        msg_ids.push(md.msg_id);
    }
    // By CorrelId: the one message with it, whatever its position.
    for i in [73u8, 5, 99] {
        let mut md = MessageDescriptor {
            correl_id: id(i),
            ..Default::default()
        };
        let got = q
            .get(&mut md, &gmo(GetOptionFlags::NO_SYNCPOINT, 0), 1024)
            .await
            .unwrap();
        assert_eq!(text(&got), format!("m{i}"), "{via:?}");
        assert_eq!(md.correl_id, id(i));
        // Gone now.
        let mut md = MessageDescriptor {
            correl_id: id(i),
            ..Default::default()
        };
        assert_reason(
            q.get(&mut md, &GetOptions::default(), 1024).await,
            ReasonCode::NoMsgAvailable,
        );
    }
    // By MsgId.
    let mut md = MessageDescriptor {
        msg_id: msg_ids[42],
        ..Default::default()
    };
    let got = q.get(&mut md, &GetOptions::default(), 1024).await.unwrap();
    assert_eq!(text(&got), "m42");
    // Both must match when both are given.
    let mut md = MessageDescriptor {
        msg_id: msg_ids[10],
        correl_id: id(11),
        ..Default::default()
    };
    assert_reason(
        q.get(&mut md, &GetOptions::default(), 1024).await,
        ReasonCode::NoMsgAvailable,
    );
    // MatchOptions decide which fields count: CorrelId alone ignores the MsgId.
    let mut md = MessageDescriptor {
        msg_id: msg_ids[10],
        correl_id: id(11),
        ..Default::default()
    };
    let only_correl = GetOptions {
        match_options: MatchOptions::CORREL_ID,
        ..Default::default()
    };
    let got = q.get(&mut md, &only_correl, 1024).await.unwrap();
    assert_eq!(text(&got), "m11");
    // Without match fields: the oldest remaining.
    assert_eq!(get_text(&q).await, "m0");
    conn.disconnect().await.unwrap();
}

async fn waiting_get_is_woken_by_another_connection(via: Via) {
    let (qm, getter) = setup("MQI.WAKE", via, "").await;
    let putter = connect(&via.opts(&qm)).await;
    let inq = open(&getter, "Q", OpenOptions::INPUT_SHARED).await;
    let outq = open(&putter, "Q", OpenOptions::OUTPUT).await;
    let waiting = tokio::spawn(async move {
        let mut md = MessageDescriptor {
            correl_id: id(3),
            ..Default::default()
        };
        let g = gmo(GetOptionFlags::WAIT, 60_000);
        let r = inq.get(&mut md, &g, 1024).await;
        (r, md)
    });
    // A message that does not match does not wake it.
    put(&outq, "not for you").await;
    let mut md = MessageDescriptor {
        correl_id: id(3),
        ..Default::default()
    };
    put_md(&outq, &mut md, PutOptions::default(), "for you")
        .await
        .unwrap();
    let (r, md) = within("waiting get", waiting).await.unwrap();
    let got = r.expect("woken get");
    assert_eq!(text(&got), "for you", "{via:?}");
    assert_eq!(md.correl_id, id(3));
    assert_eq!(curdepth(&qm, "Q"), 1);
    putter.disconnect().await.unwrap();
    getter.disconnect().await.unwrap();
}

async fn wait_interval_and_no_wait_end_with_2033(via: Via) {
    let (qm, conn) = setup("MQI.NOMSG", via, "").await;
    let q = open(&conn, "Q", IO).await;
    assert_reason(get(&q).await, ReasonCode::NoMsgAvailable);
    let started = std::time::Instant::now();
    assert_reason(
        get_with(&q, gmo(GetOptionFlags::WAIT, 200)).await,
        ReasonCode::NoMsgAvailable,
    );
    // Not before the interval (a little slack for millisecond timer granularity).
    assert!(
        started.elapsed() >= std::time::Duration::from_millis(180),
        "returned before the interval: {:?}",
        started.elapsed()
    );
    // The connection is usable after the expired wait.
    put(&q, "after").await;
    assert_eq!(get_text(&q).await, "after");
    assert_eq!(curdepth(&qm, "Q"), 0);
    conn.disconnect().await.unwrap();
}

fn raw(qm: &TestQueueManager, via: Via) -> Raw {
    let mut r = match via {
        Via::Tcp => Raw::tcp(qm),
        Via::Bindings => Raw::unix(qm),
    };
    let channel = if via == Via::Tcp {
        "SYSTEM.DEF.SVRCONN"
    } else {
        ""
    };
    let h = r.hello(channel, 0);
    assert_eq!(h.status.reason, ReasonCode::None, "{h:?}");
    r
}

fn raw_conn_open(r: &mut Raw, conv: u32, queue: &str, options: OpenOptions) -> i32 {
    let reply = r.call(conv, 1, &Request::Conn(Default::default()));
    assert_eq!(reply.status().reason, ReasonCode::None, "{reply:?}");
    let od = ObjectDescriptor::queue(queue).unwrap();
    match r.call(conv, 2, &Request::Open { od, options }) {
        ferry_wire::Reply::Open { status, hobj, .. } => {
            assert_eq!(status.reason, ReasonCode::None);
            hobj
        }
        other => panic!("{other:?}"),
    }
}

async fn waiters_are_served_in_arrival_order(via: Via) {
    let qm = start("MQI.ORDER");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    // Three conversations on one socket: their GETs reach the queue manager in the
    // order they are written, which makes the arrival order certain.
    let mut r = raw(&qm, via);
    let hobjs: Vec<i32> = (1..=3)
        .map(|conv| raw_conn_open(&mut r, conv, "Q", OpenOptions::INPUT_SHARED))
        .collect();
    let hobj4 = raw_conn_open(&mut r, 4, "Q", OpenOptions::INQUIRE);
    let mut batch = bytes::BytesMut::new();
    for (i, hobj) in hobjs.iter().enumerate() {
        let get = Request::Get {
            hobj: *hobj,
            md: MessageDescriptor::default(),
            gmo: gmo(GetOptionFlags::WAIT, -1),
            max_len: 1024,
        };
        ferry_wire::encode_request(i as u32 + 1, 3, &get, &mut batch).unwrap();
    }
    r.send_bytes(&batch);
    // A reply on a fourth conversation, sent after the GETs, proves they all wait.
    let inq = Request::Inq {
        hobj: hobj4,
        selectors: vec![selector::CURRENT_Q_DEPTH],
    };
    match r.call(4, 3, &inq) {
        ferry_wire::Reply::Inq { values, .. } => assert_eq!(values, [InquireValue::Int(0)]),
        other => panic!("{other:?}"),
    }

    let putter = connect(&via.opts(&qm)).await;
    let q = open(&putter, "Q", OpenOptions::OUTPUT).await;
    for body in ["first", "second", "third"] {
        put(&q, body).await;
    }
    let mut got = std::collections::BTreeMap::new();
    while got.len() < 3 {
        let f = r.read_frame().expect("GET replies");
        match ferry_wire::Reply::decode(&f).unwrap() {
            ferry_wire::Reply::Get { status, body, .. } => {
                assert_eq!(status.reason, ReasonCode::None);
                got.insert(f.conversation, String::from_utf8(body.to_vec()).unwrap());
            }
            other => panic!("{other:?}"),
        }
    }
    let order: Vec<&str> = got.values().map(String::as_str).collect();
    assert_eq!(order, ["first", "second", "third"], "{via:?}");
    assert_eq!(curdepth(&qm, "Q"), 0);
    putter.disconnect().await.unwrap();
}

async fn uncommitted_put_is_invisible_until_commit(via: Via) {
    let (qm, writer) = setup("MQI.UOW", via, "").await;
    let reader = connect(&via.opts(&qm)).await;
    let wq = open(&writer, "Q", OpenOptions::OUTPUT).await;
    let rq = open(
        &reader,
        "Q",
        OpenOptions::INPUT_SHARED | OpenOptions::BROWSE,
    )
    .await;
    let mut md = MessageDescriptor::default();
    let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
    put_md(&wq, &mut md, sync, "one").await.unwrap();
    put_md(&wq, &mut md, sync, "two").await.unwrap();
    assert_reason(get(&rq).await, ReasonCode::NoMsgAvailable);
    assert_reason(
        get_with(&rq, gmo(GetOptionFlags::BROWSE_FIRST, 0)).await,
        ReasonCode::NoMsgAvailable,
    );
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) UNCOM");
    assert_eq!(attr(&s, "UNCOM").as_deref(), Some("2"), "{s}");
    // A waiting reader is served at commit.
    let waiting = tokio::spawn(async move {
        let r = get_with(&rq, gmo(GetOptionFlags::WAIT, 60_000)).await;
        (r, rq)
    });
    writer.commit().await.unwrap();
    let (r, rq) = within("get after commit", waiting).await.unwrap();
    assert_eq!(text(&r.unwrap().1), "one", "{via:?}");
    assert_eq!(get_text(&rq).await, "two");
    // Backout of puts: they disappear.
    put_md(&wq, &mut md, sync, "never").await.unwrap();
    writer.backout().await.unwrap();
    assert_reason(get(&rq).await, ReasonCode::NoMsgAvailable);
    assert_eq!(curdepth(&qm, "Q"), 0);
    reader.disconnect().await.unwrap();
    writer.disconnect().await.unwrap();
}

async fn backout_restores_a_got_message_with_backout_count(via: Via) {
    let (qm, conn) = setup("MQI.BACKOUT", via, "").await;
    let q = open(&conn, "Q", IO).await;
    let put_md_out = put(&q, "retry me").await;
    put(&q, "behind").await;
    let sync_get = gmo(GetOptionFlags::SYNCPOINT, 0);
    for attempt in 0..3 {
        let (md, got) = get_with(&q, sync_get).await.unwrap();
        assert_eq!(text(&got), "retry me", "{via:?}");
        assert_eq!(md.backout_count, attempt, "{via:?}");
        assert_eq!(md.msg_id, put_md_out.msg_id);
        // Hidden from others while the unit of work is open.
        let other = connect(&via.opts(&qm)).await;
        let oq = open(&other, "Q", OpenOptions::INPUT_SHARED).await;
        assert_eq!(get_text(&oq).await, "behind");
        other.backout().await.unwrap();
        other.disconnect().await.unwrap();
        // "behind" was got outside syncpoint by the other connection: put it back.
        put(&q, "behind").await;
        conn.backout().await.unwrap();
    }
    let (md, got) = get_with(&q, sync_get).await.unwrap();
    assert_eq!(text(&got), "retry me");
    assert_eq!(md.backout_count, 3);
    conn.commit().await.unwrap();
    assert_eq!(curdepth(&qm, "Q"), 1);
    conn.disconnect().await.unwrap();
}

async fn disconnect_commits_and_drop_backs_out(via: Via) {
    let (qm, conn) = setup("MQI.DISC", via, "").await;
    let q = open(&conn, "Q", IO).await;
    put(&q, "to be got").await;
    let mut md = MessageDescriptor::default();
    let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
    put_md(&q, &mut md, sync, "committed by disconnect")
        .await
        .unwrap();
    get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .unwrap();
    drop(q);
    conn.disconnect().await.unwrap();
    let check = connect(&via.opts(&qm)).await;
    let cq = open(&check, "Q", IO).await;
    assert_eq!(get_text(&cq).await, "committed by disconnect", "{via:?}");
    assert_reason(get(&cq).await, ReasonCode::NoMsgAvailable);

    // Dropping a connection without disconnect is an abnormal end: backed out.
    put(&cq, "survives").await;
    let dropped = connect(&via.opts(&qm)).await;
    let dq = open(&dropped, "Q", IO).await;
    put_md(&dq, &mut md, sync, "rolled back").await.unwrap();
    let (_, got) = get_with(&dq, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .unwrap();
    assert_eq!(text(&got), "survives");
    drop(dq);
    drop(dropped);
    wait_until("the dropped connection's work to be backed out", || {
        let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) UNCOM CURDEPTH");
        attr(&s, "UNCOM").as_deref() == Some("NO")
    });
    let (md, got) = get(&cq).await.unwrap();
    assert_eq!(text(&got), "survives", "{via:?}");
    assert_eq!(md.backout_count, 1);
    assert_reason(get(&cq).await, ReasonCode::NoMsgAvailable);
    check.disconnect().await.unwrap();
}

async fn broken_socket_backs_out(via: Via) {
    let qm = start("MQI.BROKEN");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&via.opts(&qm)).await;
    let q = open(&conn, "Q", IO).await;
    put(&q, "precious").await;

    // A client whose socket just closes (as when its process is killed).
    let mut r = raw(&qm, via);
    let hobj = raw_conn_open(&mut r, 1, "Q", IO);
    let sync_put = Request::Put {
        properties: bytes::Bytes::new(),
        hobj,
        md: MessageDescriptor::default(),
        pmo: PutOptions::new(PutOptionFlags::SYNCPOINT),
        body: bytes::Bytes::from_static(b"half done"),
    };
    assert_eq!(r.call(1, 3, &sync_put).status().reason, ReasonCode::None);
    let sync_get = Request::Get {
        hobj,
        md: MessageDescriptor::default(),
        gmo: gmo(GetOptionFlags::SYNCPOINT, 0),
        max_len: 1024,
    };
    match r.call(1, 4, &sync_get) {
        ferry_wire::Reply::Get { status, body, .. } => {
            assert_eq!(status.reason, ReasonCode::None);
            assert_eq!(&body[..], b"precious");
        }
        other => panic!("{other:?}"),
    }
    let s = mqsc_ok(&qm, "DISPLAY CONN(*) WHERE(UOWSTATE EQ ACTIVE)");
    assert_eq!(attrs(&s, "CONN").len(), 1, "{s}");
    drop(r);

    wait_until("the broken connection's work to be backed out", || {
        let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) UNCOM");
        attr(&s, "UNCOM").as_deref() == Some("NO")
    });
    let (md, got) = get(&q).await.unwrap();
    assert_eq!(text(&got), "precious", "{via:?}");
    assert_eq!(md.backout_count, 1);
    assert_reason(get(&q).await, ReasonCode::NoMsgAvailable);
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) IPPROCS OPPROCS");
    assert_eq!(
        attr(&s, "IPPROCS").as_deref(),
        Some("1"),
        "handles closed: {s}"
    );
    assert_eq!(attr(&s, "OPPROCS").as_deref(), Some("1"), "{s}");
    conn.disconnect().await.unwrap();
}

async fn maxumsgs_limits_a_unit_of_work(via: Via) {
    let (qm, conn) = setup("MQI.MAXUMSGS", via, "ALTER QMGR MAXUMSGS(2)").await;
    let q = open(&conn, "Q", IO).await;
    let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
    let mut md = MessageDescriptor::default();
    put_md(&q, &mut md, sync, "1").await.unwrap();
    put_md(&q, &mut md, sync, "2").await.unwrap();
    assert_reason(
        put_md(&q, &mut md, sync, "3").await,
        ReasonCode::SyncpointLimitReached,
    );
    // Outside syncpoint is not limited.
    put(&q, "outside").await;
    conn.commit().await.unwrap();
    assert_eq!(curdepth(&qm, "Q"), 3);
    // Gets under syncpoint count too; a new unit of work starts fresh.
    let sg = gmo(GetOptionFlags::SYNCPOINT, 0);
    get_with(&q, sg).await.unwrap();
    get_with(&q, sg).await.unwrap();
    assert_reason(get_with(&q, sg).await, ReasonCode::SyncpointLimitReached);
    conn.commit().await.unwrap();
    get_with(&q, sg).await.unwrap();
    conn.commit().await.unwrap();
    assert_eq!(curdepth(&qm, "Q"), 0);
    conn.disconnect().await.unwrap();
}

async fn queue_and_qmgr_limits(via: Via) {
    let (qm, conn) = setup(
        "MQI.LIMITS",
        via,
        "ALTER QLOCAL(Q) MAXDEPTH(3) MAXMSGL(100)",
    )
    .await;
    let q = open(&conn, "Q", IO).await;
    for i in 0..3 {
        put(&q, &i.to_string()).await;
    }
    let mut md = MessageDescriptor::default();
    assert_reason(
        put_md(&q, &mut md, PutOptions::default(), "4").await,
        ReasonCode::QFull,
    );
    // Uncommitted puts count towards MAXDEPTH too.
    get(&q).await.unwrap();
    let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
    put_md(&q, &mut md, sync, "pending").await.unwrap();
    assert_reason(
        put_md(&q, &mut md, PutOptions::default(), "4").await,
        ReasonCode::QFull,
    );
    conn.backout().await.unwrap();
    assert_eq!(drain(&q).await, ["1", "2"]);

    put_md(&q, &mut md, PutOptions::default(), &"x".repeat(100))
        .await
        .unwrap();
    assert_reason(
        put_md(&q, &mut md, PutOptions::default(), &"x".repeat(101)).await,
        ReasonCode::MsgTooBigForQ,
    );
    // The queue manager's MAXMSGL, lowered after this connection negotiated its limit.
    mqsc_ok(
        &qm,
        "ALTER QLOCAL(Q) MAXMSGL(1000000)\nALTER QMGR MAXMSGL(32768)",
    );
    put_md(&q, &mut md, PutOptions::default(), &"y".repeat(32768))
        .await
        .unwrap();
    assert_reason(
        put_md(&q, &mut md, PutOptions::default(), &"y".repeat(40000)).await,
        ReasonCode::MsgTooBigForQMgr,
    );
    // PUT1 applies the same checks.
    let od = ObjectDescriptor::queue("Q").unwrap();
    assert_reason(
        conn.put1(&od, &mut md, &PutOptions::default(), "z".repeat(40000))
            .await,
        ReasonCode::MsgTooBigForQMgr,
    );
    assert_eq!(curdepth(&qm, "Q"), 2);
    conn.disconnect().await.unwrap();
}

async fn put_and_get_inhibited(via: Via) {
    let (qm, conn) = setup("MQI.INHIBIT", via, "DEFINE QALIAS(A) TARGET(Q)").await;
    let q = open(&conn, "Q", IO).await;
    put(&q, "waiting").await;
    mqsc_ok(&qm, "ALTER QLOCAL(Q) PUT(DISABLED) GET(DISABLED)");
    let mut md = MessageDescriptor::default();
    assert_reason(
        put_md(&q, &mut md, PutOptions::default(), "no").await,
        ReasonCode::PutInhibited,
    );
    assert_reason(get(&q).await, ReasonCode::GetInhibited);
    let od = ObjectDescriptor::queue("Q").unwrap();
    assert_reason(
        conn.put1(&od, &mut md, &PutOptions::default(), "no").await,
        ReasonCode::PutInhibited,
    );
    // Re-enabled, both work again; an alias has its own PUT switch.
    mqsc_ok(
        &qm,
        "ALTER QLOCAL(Q) PUT(ENABLED) GET(ENABLED)\nALTER QALIAS(A) PUT(DISABLED)",
    );
    let a = open(&conn, "A", OpenOptions::OUTPUT).await;
    assert_reason(
        put_md(&a, &mut md, PutOptions::default(), "via alias").await,
        ReasonCode::PutInhibited,
    );
    put(&q, "direct").await;
    assert_eq!(drain(&q).await, ["waiting", "direct"]);
    conn.disconnect().await.unwrap();
}

async fn unknown_queue_is_2085(via: Via) {
    let (_qm, conn) = setup("MQI.UNKNOWN", via, "").await;
    assert_reason(
        try_open(&conn, "NO.SUCH.QUEUE", OpenOptions::OUTPUT).await,
        ReasonCode::UnknownObjectName,
    );
    let od = ObjectDescriptor::queue("NO.SUCH.QUEUE").unwrap();
    let mut md = MessageDescriptor::default();
    assert_reason(
        conn.put1(&od, &mut md, &PutOptions::default(), "x").await,
        ReasonCode::UnknownObjectName,
    );
    // The connection is fine afterwards.
    let q = open(&conn, "Q", IO).await;
    put(&q, "ok").await;
    conn.disconnect().await.unwrap();
}

async fn exclusive_input_conflicts_are_2042(via: Via) {
    let (qm, a) = setup("MQI.EXCL", via, "DEFINE QLOCAL(NS) NOSHARE").await;
    let b = connect(&via.opts(&qm)).await;
    let ex = open(&a, "Q", OpenOptions::INPUT_EXCLUSIVE).await;
    assert_reason(
        try_open(&b, "Q", OpenOptions::INPUT_SHARED).await,
        ReasonCode::ObjectInUse,
    );
    assert_reason(
        try_open(&b, "Q", OpenOptions::INPUT_EXCLUSIVE).await,
        ReasonCode::ObjectInUse,
    );
    // Output and browse are not input.
    open(&b, "Q", OpenOptions::OUTPUT | OpenOptions::BROWSE).await;
    ex.close(Default::default()).await.unwrap();
    let shared = open(&b, "Q", OpenOptions::INPUT_SHARED).await;
    assert_reason(
        try_open(&a, "Q", OpenOptions::INPUT_EXCLUSIVE).await,
        ReasonCode::ObjectInUse,
    );
    drop(shared);

    // NOSHARE: one input handle at most, however it asks.
    let first = open(&a, "NS", OpenOptions::INPUT_AS_Q_DEF).await;
    assert_reason(
        try_open(&b, "NS", OpenOptions::INPUT_SHARED).await,
        ReasonCode::ObjectInUse,
    );
    assert_reason(
        try_open(&b, "NS", OpenOptions::INPUT_AS_Q_DEF).await,
        ReasonCode::ObjectInUse,
    );
    first.close(Default::default()).await.unwrap();
    open(&b, "NS", OpenOptions::INPUT_AS_Q_DEF).await;
    a.disconnect().await.unwrap();
    b.disconnect().await.unwrap();
}

async fn truncated_messages(via: Via) {
    let (qm, conn) = setup("MQI.TRUNC", via, "").await;
    let q = open(&conn, "Q", IO).await;
    let body = "0123456789".repeat(10);
    let put_md_out = put(&q, &body).await;
    let mut md = MessageDescriptor::default();
    assert_reason(
        q.get(&mut md, &gmo(GetOptionFlags::NO_SYNCPOINT, 0), 10)
            .await,
        ReasonCode::TruncatedMsgFailed,
    );
    assert_eq!(
        md.msg_id, put_md_out.msg_id,
        "descriptor of the message that stayed"
    );
    assert_eq!(curdepth(&qm, "Q"), 1, "the message stays");

    // On the wire the 2080 reply carries the real DataLength.
    let mut r = raw(&qm, via);
    let hobj = raw_conn_open(&mut r, 1, "Q", OpenOptions::BROWSE);
    let browse = Request::Get {
        hobj,
        md: MessageDescriptor::default(),
        gmo: gmo(GetOptionFlags::BROWSE_FIRST, 0),
        max_len: 10,
    };
    match r.call(1, 3, &browse) {
        ferry_wire::Reply::Get {
            status,
            data_length,
            ..
        } => {
            assert_eq!(status.reason, ReasonCode::TruncatedMsgFailed);
            assert_eq!(data_length, 100, "{via:?}");
        }
        other => panic!("{other:?}"),
    }
    drop(r);

    let mut md = MessageDescriptor::default();
    let accept = gmo(
        GetOptionFlags::NO_SYNCPOINT | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        0,
    );
    let got = q.get(&mut md, &accept, 10).await.unwrap();
    assert_eq!(
        got.warning,
        Some(ReasonCode::TruncatedMsgAccepted),
        "{via:?}"
    );
    assert_eq!(&got.data[..], b"0123456789");
    assert_eq!(got.data_length, 100);
    assert!(got.is_truncated());
    assert_eq!(md.msg_id, put_md_out.msg_id);
    assert_eq!(curdepth(&qm, "Q"), 0, "removed");
    conn.disconnect().await.unwrap();
}

async fn browse_first_and_next(via: Via) {
    let (qm, conn) = setup("MQI.BROWSE", via, "").await;
    let q = open(&conn, "Q", IO | OpenOptions::BROWSE).await;
    for b in ["a", "b", "c"] {
        put(&q, b).await;
    }
    let first = get_with(&q, gmo(GetOptionFlags::BROWSE_FIRST, 0))
        .await
        .unwrap();
    assert_eq!(text(&first.1), "a", "{via:?}");
    let mut seen = vec![text(&first.1)];
    loop {
        match get_with(&q, gmo(GetOptionFlags::BROWSE_NEXT, 0)).await {
            Ok((_, got)) => seen.push(text(&got)),
            Err(e) => {
                assert_eq!(e.reason, ReasonCode::NoMsgAvailable);
                break;
            }
        }
    }
    assert_eq!(seen, ["a", "b", "c"]);
    assert_eq!(curdepth(&qm, "Q"), 3, "browsing removes nothing");
    // A message put after the cursor is browsed next.
    put(&q, "d").await;
    let next = get_with(&q, gmo(GetOptionFlags::BROWSE_NEXT, 0))
        .await
        .unwrap();
    assert_eq!(text(&next.1), "d");
    // BROWSE_FIRST starts over; destructive gets still start from the oldest.
    let again = get_with(&q, gmo(GetOptionFlags::BROWSE_FIRST, 0))
        .await
        .unwrap();
    assert_eq!(text(&again.1), "a");
    assert_eq!(get_text(&q).await, "a");
    // Browse needs MQOO_BROWSE.
    let nb = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    assert_reason(
        get_with(&nb, gmo(GetOptionFlags::BROWSE_FIRST, 0)).await,
        ReasonCode::NotOpenForBrowse,
    );
    conn.disconnect().await.unwrap();
}

async fn temporary_dynamic_queue_lives_with_its_creator(via: Via) {
    let qm = start("MQI.DYN");
    let creator = connect(&via.opts(&qm)).await;
    let dynq = open(
        &creator,
        "SYSTEM.DEFAULT.MODEL.QUEUE",
        OpenOptions::INPUT_EXCLUSIVE,
    )
    .await;
    let name = dynq.resolved_name().to_string();
    assert!(name.starts_with("AMQ."), "generated name: {name}");
    assert_ne!(name, "SYSTEM.DEFAULT.MODEL.QUEUE");
    let d = mqsc_ok(&qm, &format!("DISPLAY QLOCAL({name}) DEFTYPE"));
    assert_eq!(attr(&d, "DEFTYPE").as_deref(), Some("TEMPDYN"), "{d}");

    // Another one gets another name; a custom prefix is honoured.
    let od = ObjectDescriptor {
        dynamic_q_name: FixedStr::new("REPLIES.*").unwrap(),
        ..ObjectDescriptor::queue("SYSTEM.DEFAULT.MODEL.QUEUE").unwrap()
    };
    let custom = creator
        .open(&od, OpenOptions::INPUT_EXCLUSIVE)
        .await
        .unwrap();
    assert!(custom.resolved_name().starts_with("REPLIES."), "{custom:?}");
    assert_ne!(custom.resolved_name(), name);
    let custom_name = custom.resolved_name().to_string();

    // Others can put to it (a reply queue).
    let other = connect(&via.opts(&qm)).await;
    let out = open(&other, &name, OpenOptions::OUTPUT).await;
    put(&out, "reply").await;
    drop(out);
    let (_, got) = get(&dynq).await.unwrap();
    assert_eq!(text(&got), "reply", "{via:?}");

    // Closing the creating handle deletes it; so does the creator's disconnect.
    custom.close(Default::default()).await.unwrap();
    let gone = qm.mqsc(&format!("DISPLAY QLOCAL({custom_name})"));
    assert!(stdout(&gone).contains("FRY8147E"), "{}", stdout(&gone));
    drop(dynq);
    creator.disconnect().await.unwrap();
    let gone = qm.mqsc(&format!("DISPLAY QLOCAL({name})"));
    assert!(stdout(&gone).contains("FRY8147E"), "{}", stdout(&gone));
    assert_reason(
        try_open(&other, &name, OpenOptions::OUTPUT).await,
        ReasonCode::UnknownObjectName,
    );
    other.disconnect().await.unwrap();
}

async fn alias_queue_resolves_to_its_target(via: Via) {
    let (qm, conn) = setup("MQI.ALIAS", via, "DEFINE QALIAS(APP.ALIAS) TARGET(Q)").await;
    let a = open(&conn, "APP.ALIAS", IO).await;
    assert_eq!(a.name(), "APP.ALIAS");
    assert_eq!(a.resolved_name(), "Q", "{via:?}");
    put(&a, "through the alias").await;
    assert_eq!(curdepth(&qm, "Q"), 1);
    let q = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    assert_eq!(get_text(&q).await, "through the alias");
    // Retargeting the alias takes effect at the next open.
    mqsc_ok(&qm, "DEFINE QLOCAL(Q2)\nALTER QALIAS(APP.ALIAS) TARGET(Q2)");
    let a2 = open(&conn, "APP.ALIAS", OpenOptions::OUTPUT).await;
    assert_eq!(a2.resolved_name(), "Q2");
    put(&a2, "to q2").await;
    assert_eq!(curdepth(&qm, "Q2"), 1);
    // An alias to nothing: 2082.
    mqsc_ok(&qm, "DEFINE QALIAS(DANGLING) TARGET(NOWHERE)");
    assert_reason(
        try_open(&conn, "DANGLING", OpenOptions::OUTPUT).await,
        ReasonCode::UnknownAliasBaseQ,
    );
    conn.disconnect().await.unwrap();
}

async fn inquire_queue_attributes(via: Via) {
    let (_qm, conn) = setup(
        "MQI.INQ",
        via,
        "ALTER QLOCAL(Q) MAXDEPTH(77) DESCR('inquired')",
    )
    .await;
    let q = open(&conn, "Q", IO | OpenOptions::INQUIRE).await;
    put(&q, "1").await;
    put(&q, "2").await;
    let values = q
        .inquire(&[
            selector::CURRENT_Q_DEPTH,
            selector::MAX_Q_DEPTH,
            selector::Q_NAME,
            selector::Q_TYPE,
            selector::Q_DESC,
            selector::OPEN_INPUT_COUNT,
            selector::OPEN_OUTPUT_COUNT,
        ])
        .await
        .unwrap();
    assert_eq!(
        values,
        [
            InquireValue::Int(2),
            InquireValue::Int(77),
            InquireValue::Str("Q".into()),
            InquireValue::Int(1),
            InquireValue::Str("inquired".into()),
            InquireValue::Int(1),
            InquireValue::Int(1),
        ],
        "{via:?}"
    );
    let no_inq = open(&conn, "Q", OpenOptions::OUTPUT).await;
    assert_reason(
        no_inq.inquire(&[selector::CURRENT_Q_DEPTH]).await,
        ReasonCode::NotOpenForInquire,
    );
    conn.disconnect().await.unwrap();
}

async fn put1_puts_one_message(via: Via) {
    let (qm, conn) = setup("MQI.PUT1", via, "").await;
    let od = ObjectDescriptor::queue("Q").unwrap();
    let mut md = MessageDescriptor {
        correl_id: id(9),
        format: format::STRING,
        ..Default::default()
    };
    conn.put1(&od, &mut md, &PutOptions::default(), "once")
        .await
        .unwrap();
    assert_ne!(md.msg_id, [0u8; 24], "MsgId returned");
    assert!(!md.put_date.is_blank());
    let s = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) CURDEPTH OPPROCS");
    assert_eq!(attr(&s, "CURDEPTH").as_deref(), Some("1"), "{s}");
    assert_eq!(
        attr(&s, "OPPROCS").as_deref(),
        Some("0"),
        "no handle left open: {s}"
    );
    let q = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    let (got_md, got) = get(&q).await.unwrap();
    assert_eq!(text(&got), "once");
    assert_eq!(got_md.msg_id, md.msg_id);
    assert_eq!(got_md.correl_id, id(9));
    // Under syncpoint, PUT1 joins the unit of work.
    let sync = PutOptions::new(PutOptionFlags::SYNCPOINT);
    conn.put1(&od, &mut MessageDescriptor::default(), &sync, "later")
        .await
        .unwrap();
    assert_reason(get(&q).await, ReasonCode::NoMsgAvailable);
    conn.commit().await.unwrap();
    assert_eq!(get_text(&q).await, "later");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_messages_are_never_returned() {
    let qm = start("MQI.EXPIRY");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO | OpenOptions::BROWSE).await;
    let mut md = MessageDescriptor {
        expiry: 1, // tenths of a second
        ..Default::default()
    };
    put_md(&q, &mut md, PutOptions::default(), "short-lived")
        .await
        .unwrap();
    let mut md = MessageDescriptor {
        expiry: 36_000,
        ..Default::default()
    };
    put_md(&q, &mut md, PutOptions::default(), "long-lived")
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let (_, got) = get_with(&q, gmo(GetOptionFlags::BROWSE_FIRST, 0))
        .await
        .unwrap();
    assert_eq!(text(&got), "long-lived", "browse skips expired messages");
    let (md, got) = get(&q).await.unwrap();
    assert_eq!(text(&got), "long-lived");
    assert!(
        md.expiry > 0 && md.expiry <= 36_000,
        "remaining lifetime returned: {}",
        md.expiry
    );
    assert_reason(get(&q).await, ReasonCode::NoMsgAvailable);
    assert_eq!(curdepth(&qm, "Q"), 0, "the expired message is removed");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_channel_is_2540() {
    let qm = start("MQI.CHANNEL");
    let opts = ConnectOptions::client(&qm.conname(), "NO.SUCH.CHL").queue_manager(qm.name());
    assert_reason(
        Connection::connect(&opts).await,
        ReasonCode::UnknownChannelName,
    );
    let log = qm.error_log();
    assert!(log.contains("FRY9519E"), "{log}");
    assert!(log.contains("NO.SUCH.CHL"), "{log}");
    // The right channel still works.
    let conn = connect(&qm.client()).await;
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn queue_manager_name_mismatch_is_2058() {
    let qm = start("MQI.NAME");
    for via in [Via::Tcp, Via::Bindings] {
        let opts = via.opts(&qm).queue_manager("SOME.OTHER.QM");
        assert_reason(Connection::connect(&opts).await, ReasonCode::QMgrNameError);
        // Blank means whichever queue manager owns the listener.
        let conn = connect(&via.opts(&qm).queue_manager("")).await;
        assert_eq!(conn.queue_manager_name(), "MQI.NAME");
        conn.disconnect().await.unwrap();
    }
}

/// Established TCP connections to `port` on this host, counted from the client side
/// (`/proc/net/tcp` rows whose remote port is `port`): only this test connects there.
fn client_sockets_to(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").expect("/proc/net/tcp");
    table
        .lines()
        .skip(1)
        .filter(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            let remote_port = cols
                .get(2)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            remote_port == Some(port) && cols.get(3) == Some(&"01")
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharecnv_shares_sockets_between_connections() {
    let qm = start("MQI.SHARECNV");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\nALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) SHARECNV(2)",
    );
    let opts = qm.client().application_name("sharecnv-app");
    let mut conns = Vec::new();
    for _ in 0..20 {
        conns.push(std::sync::Arc::new(connect(&opts).await));
    }
    assert_eq!(
        client_sockets_to(qm.port()),
        10,
        "20 connections with SHARECNV(2) use 10 sockets"
    );
    let shown = mqsc_ok(&qm, "DISPLAY CONN(*) WHERE(APPLTAG EQ 'sharecnv-app')");
    assert_eq!(attrs(&shown, "CONN").len(), 20, "{shown}");

    // All of them work at once.
    let mut tasks = Vec::new();
    for (i, c) in conns.iter().enumerate() {
        let c = c.clone();
        tasks.push(tokio::spawn(async move {
            let q = open(&c, "Q", IO).await;
            let mut md = MessageDescriptor {
                correl_id: id(i as u8),
                ..Default::default()
            };
            put_md(&q, &mut md, PutOptions::default(), &format!("c{i}"))
                .await
                .unwrap();
            let mut md = MessageDescriptor {
                correl_id: id(i as u8),
                ..Default::default()
            };
            let got = q
                .get(&mut md, &gmo(GetOptionFlags::WAIT, 30_000), 1024)
                .await
                .unwrap();
            assert_eq!(text(&got), format!("c{i}"));
            q.close(Default::default()).await.unwrap();
        }));
    }
    for t in tasks {
        within("shared-socket connection", t).await.unwrap();
    }
    for c in conns {
        std::sync::Arc::into_inner(c)
            .expect("sole owner")
            .disconnect()
            .await
            .unwrap();
    }
    wait_until("the shared sockets to close", || {
        client_sockets_to(qm.port()) == 0
    });
    assert_eq!(curdepth(&qm, "Q"), 0);
}
