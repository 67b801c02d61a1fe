//! Message groups and segments against a real queue manager process, through the Rust
//! client: logical-order puts numbered by the queue manager and got one group at a time
//! in MsgSeqNumber order, MQGMO_ALL_MSGS_AVAILABLE (an incomplete group stays hidden, a
//! waiting get is woken when the last message is committed), the match options on
//! GroupId / MsgSeqNumber / Offset, MQGMO_COMPLETE_MSG reassembly, MQ's reason codes for
//! bad group fields and broken sequences, MQCLOSE's warning mid-group, and a group that
//! survives a restart.

mod common;

use common::*;
use ferry_client::Queue;
use ferry_mqi::descriptor::{msg_flags, persistence, GROUP_ID_NONE};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, MqError, OpenOptions,
    PutOptionFlags, PutOptions, ReasonCode,
};

const IO: OpenOptions = OpenOptions::OUTPUT.union(OpenOptions::INPUT_SHARED);
const LOGICAL: PutOptions = PutOptions {
    options: PutOptionFlags::LOGICAL_ORDER.union(PutOptionFlags::NO_SYNCPOINT),
    context: 0,
};

/// Puts `body` with these MsgFlags in logical order; returns the output descriptor.
async fn put_logical(q: &Queue, flags: i32, body: &str) -> MessageDescriptor {
    let mut md = MessageDescriptor {
        msg_flags: flags,
        ..Default::default()
    };
    put_md(q, &mut md, LOGICAL, body)
        .await
        .unwrap_or_else(|e| panic!("logical-order put of {body:?} failed: {e}"));
    md
}

/// Gets with `options` (no wait unless given) and match fields from `md`.
async fn get_group(
    q: &Queue,
    md: &mut MessageDescriptor,
    options: GetOptionFlags,
    match_options: MatchOptions,
    wait_ms: i32,
) -> Result<(String, u8, u8), MqError> {
    let gmo = GetOptions {
        options: options | GetOptionFlags::NO_SYNCPOINT,
        wait_interval: wait_ms,
        match_options,
    };
    let got = within("get", q.get(md, &gmo, 64 * 1024)).await?;
    let text = String::from_utf8(got.data.to_vec()).expect("utf-8 body");
    Ok((text, got.group_status, got.segment_status))
}

/// Gets the next message in logical order: (body, GroupId, MsgSeqNumber, GroupStatus).
async fn next_logical(q: &Queue, extra: GetOptionFlags) -> (String, [u8; 24], i32, u8) {
    let mut md = MessageDescriptor::default();
    let (text, gs, _) = get_group(
        q,
        &mut md,
        GetOptionFlags::LOGICAL_ORDER | extra,
        MatchOptions::empty(),
        0,
    )
    .await
    .unwrap_or_else(|e| panic!("logical-order get failed: {e}"));
    (text, md.group_id, md.msg_seq_number, gs)
}

/// A logical-order get outside syncpoint, its failure returned.
async fn next_logical_checked(q: &Queue) -> Result<(String, u8, u8), MqError> {
    let mut md = MessageDescriptor::default();
    get_group(
        q,
        &mut md,
        GetOptionFlags::LOGICAL_ORDER,
        MatchOptions::empty(),
        0,
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logical_order_numbers_groups_and_gets_them_one_at_a_time() {
    let qm = start("MQI.GROUPS.LOGICAL");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let a = open(&conn, "Q", IO).await;
    let b = open(&conn, "Q", IO).await;

    // Two handles put two groups, interleaved on the queue.
    let a1 = put_logical(&a, msg_flags::MSG_IN_GROUP, "a1").await;
    let b1 = put_logical(&b, msg_flags::MSG_IN_GROUP, "b1").await;
    let a2 = put_logical(&a, msg_flags::MSG_IN_GROUP, "a2").await;
    let b2 = put_logical(&b, msg_flags::LAST_MSG_IN_GROUP, "b2").await;
    let a3 = put_logical(&a, msg_flags::LAST_MSG_IN_GROUP, "a3").await;
    assert_ne!(
        a1.group_id, GROUP_ID_NONE,
        "the queue manager assigns a GroupId"
    );
    assert_ne!(a1.group_id, b1.group_id, "each group has its own GroupId");
    assert_eq!((a2.group_id, a3.group_id), (a1.group_id, a1.group_id));
    assert_eq!(
        [a1.msg_seq_number, a2.msg_seq_number, a3.msg_seq_number],
        [1, 2, 3]
    );
    assert_eq!((b2.group_id, b2.msg_seq_number), (b1.group_id, 2));
    // After a group's last message the handle starts a new group.
    let c1 = put_logical(&a, msg_flags::LAST_MSG_IN_GROUP, "c1").await;
    assert_ne!(c1.group_id, a1.group_id);
    assert_eq!(c1.msg_seq_number, 1);

    // A getter in logical order takes group a whole, then b, then c.
    let getter = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    let mut seen = Vec::new();
    for _ in 0..6 {
        seen.push(next_logical(&getter, GetOptionFlags::empty()).await);
    }
    let bodies: Vec<&str> = seen.iter().map(|s| s.0.as_str()).collect();
    assert_eq!(bodies, ["a1", "a2", "a3", "b1", "b2", "c1"]);
    let statuses: Vec<u8> = seen.iter().map(|s| s.3).collect();
    assert_eq!(statuses, b"GGLGLL");
    assert_eq!(seen[1].1, a1.group_id);
    assert_eq!(seen[4].1, b1.group_id);
    assert_eq!(seen[4].2, 2);
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_incomplete_group_stays_hidden_until_its_last_message_is_committed() {
    let qm = start("MQI.GROUPS.ALL");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let putter_conn = connect(&qm.client()).await;
    let putter = open(&putter_conn, "Q", IO).await;
    let first = put_logical(&putter, msg_flags::MSG_IN_GROUP, "first").await;
    put_logical(&putter, msg_flags::MSG_IN_GROUP, "second").await;

    let getter_conn = connect(&qm.client()).await;
    let getter = open(&getter_conn, "Q", OpenOptions::INPUT_SHARED).await;
    let all = GetOptionFlags::ALL_MSGS_AVAILABLE | GetOptionFlags::LOGICAL_ORDER;
    let mut md = MessageDescriptor::default();
    let r = get_group(&getter, &mut md, all, MatchOptions::empty(), 0).await;
    assert_reason(r, ReasonCode::NoMsgAvailable);
    assert_eq!(curdepth(&qm, "Q"), 2, "the messages are there, only hidden");

    // A get waiting for a complete group is woken by the commit of the last message.
    let waiting = tokio::spawn(async move {
        let mut md = MessageDescriptor::default();
        let r = get_group(
            &getter,
            &mut md,
            all | GetOptionFlags::WAIT,
            MatchOptions::empty(),
            30_000,
        )
        .await;
        (getter, md, r)
    });
    let mut last = MessageDescriptor {
        msg_flags: msg_flags::LAST_MSG_IN_GROUP,
        ..Default::default()
    };
    let in_uow = PutOptions::new(PutOptionFlags::LOGICAL_ORDER | PutOptionFlags::SYNCPOINT);
    // The group began outside syncpoint: the last message must be put the same way.
    assert_reason(
        put_md(&putter, &mut last, in_uow, "third").await,
        ReasonCode::InconsistentUow,
    );
    let mut md3 = MessageDescriptor {
        msg_flags: msg_flags::LAST_MSG_IN_GROUP,
        group_id: first.group_id,
        msg_seq_number: 3,
        ..Default::default()
    };
    let explicit = PutOptions::new(PutOptionFlags::SYNCPOINT);
    put_md(&putter, &mut md3, explicit, "third").await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !waiting.is_finished(),
        "the last message is not committed yet"
    );
    putter_conn.commit().await.unwrap();
    let (getter, md, r) = within("woken get", waiting).await.unwrap();
    let (text, gs, _) = r.expect("the group became complete");
    assert_eq!((text.as_str(), md.msg_seq_number, gs), ("first", 1, b'G'));
    assert_eq!(next_logical(&getter, all).await.0, "second");
    let (text, _, seq, gs) = next_logical(&getter, all).await;
    assert_eq!((text.as_str(), seq, gs), ("third", 3, b'L'));
    getter_conn.disconnect().await.unwrap();
    putter_conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn match_options_find_a_message_by_group_sequence_and_offset() {
    let qm = start("MQI.GROUPS.MATCH");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO).await;
    let g1 = put_logical(&q, msg_flags::MSG_IN_GROUP, "g1-1")
        .await
        .group_id;
    put_logical(&q, msg_flags::LAST_MSG_IN_GROUP, "g1-2").await;
    let g2 = put_logical(&q, msg_flags::MSG_IN_GROUP, "g2-1")
        .await
        .group_id;
    put_logical(&q, msg_flags::MSG_IN_GROUP, "g2-2").await;
    put_logical(&q, msg_flags::LAST_MSG_IN_GROUP, "g2-3").await;
    // A segmented message of its own (the application numbers the segments).
    let mut seg = MessageDescriptor {
        msg_flags: msg_flags::SEGMENT,
        ..Default::default()
    };
    put_md(&q, &mut seg, PutOptions::default(), "head")
        .await
        .unwrap();
    let mut tail = MessageDescriptor {
        msg_flags: msg_flags::LAST_SEGMENT,
        group_id: seg.group_id,
        offset: 4,
        ..Default::default()
    };
    put_md(&q, &mut tail, PutOptions::default(), "tail")
        .await
        .unwrap();
    assert_ne!(
        seg.group_id, GROUP_ID_NONE,
        "a segment without a GroupId gets one"
    );

    let by = |group_id, seq, offset| MessageDescriptor {
        group_id,
        msg_seq_number: seq,
        offset,
        ..Default::default()
    };
    let group_and_seq = MatchOptions::GROUP_ID | MatchOptions::MSG_SEQ_NUMBER;
    let (text, gs, _) = get_group(
        &q,
        &mut by(g2, 2, 0),
        GetOptionFlags::empty(),
        group_and_seq,
        0,
    )
    .await
    .unwrap();
    assert_eq!((text.as_str(), gs), ("g2-2", b'G'));
    let (text, _, _) = get_group(
        &q,
        &mut by(g1, 1, 0),
        GetOptionFlags::empty(),
        MatchOptions::GROUP_ID,
        0,
    )
    .await
    .unwrap();
    assert_eq!(
        text, "g1-1",
        "the first message of the group in queue order"
    );
    let (text, _, ss) = get_group(
        &q,
        &mut by(seg.group_id, 1, 4),
        GetOptionFlags::empty(),
        MatchOptions::GROUP_ID | MatchOptions::OFFSET,
        0,
    )
    .await
    .unwrap();
    assert_eq!((text.as_str(), ss), ("tail", b'L'));
    let r = get_group(
        &q,
        &mut by(g2, 2, 0),
        GetOptionFlags::empty(),
        group_and_seq,
        0,
    )
    .await;
    assert_reason(r, ReasonCode::NoMsgAvailable);
    // Logical order finds the next message itself: matching its number is refused.
    let r = get_group(
        &q,
        &mut by(g2, 3, 0),
        GetOptionFlags::LOGICAL_ORDER,
        group_and_seq,
        0,
    )
    .await;
    assert_reason(r, ReasonCode::MatchOptionsError);
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn complete_msg_reassembles_the_segments_of_a_logical_message() {
    let qm = start("MQI.GROUPS.COMPLETE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO).await;
    let s1 = put_logical(&q, msg_flags::SEGMENT, "hello ").await;
    let s2 = put_logical(&q, msg_flags::SEGMENT, "segmented ").await;
    assert_eq!(
        (s1.offset, s2.offset),
        (0, 6),
        "the queue manager sets Offset"
    );
    assert_eq!(s2.group_id, s1.group_id);

    let mut md = MessageDescriptor::default();
    let complete = GetOptionFlags::COMPLETE_MSG;
    let r = get_group(&q, &mut md, complete, MatchOptions::empty(), 0).await;
    assert_reason(r, ReasonCode::NoMsgAvailable);
    let r = get_group(
        &q,
        &mut md,
        GetOptionFlags::ALL_SEGMENTS_AVAILABLE,
        MatchOptions::empty(),
        0,
    )
    .await;
    assert_reason(r, ReasonCode::NoMsgAvailable);

    let s3 = put_logical(&q, msg_flags::LAST_SEGMENT, "world").await;
    assert_eq!(s3.offset, 16);
    let mut md = MessageDescriptor::default();
    let (text, _, ss) = get_group(&q, &mut md, complete, MatchOptions::empty(), 0)
        .await
        .unwrap();
    assert_eq!(text, "hello segmented world");
    assert_eq!((ss, md.offset, md.group_id), (b' ', 0, s1.group_id));
    assert_eq!(
        md.msg_flags & (msg_flags::SEGMENT | msg_flags::LAST_SEGMENT),
        0
    );
    assert_eq!(curdepth(&qm, "Q"), 0, "every segment was removed");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_group_fields_and_broken_sequences_get_mqs_reasons() {
    let qm = start("MQI.GROUPS.ERRORS");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO).await;
    let bad = |flags, seq, offset| MessageDescriptor {
        msg_flags: flags,
        msg_seq_number: seq,
        offset,
        ..Default::default()
    };
    let plain = PutOptions::default();
    assert_reason(
        put_md(&q, &mut bad(64, 1, 0), plain, "x").await,
        ReasonCode::MsgFlagsError,
    );
    assert_reason(
        put_md(&q, &mut bad(msg_flags::MSG_IN_GROUP, 0, 0), plain, "x").await,
        ReasonCode::MsgSeqNumberError,
    );
    assert_reason(
        put_md(&q, &mut bad(msg_flags::SEGMENT, 1, -1), plain, "x").await,
        ReasonCode::OffsetError,
    );
    assert_reason(
        put_md(&q, &mut bad(msg_flags::SEGMENT, 1, 0), plain, "").await,
        ReasonCode::SegmentLengthZero,
    );

    // A group under way: a message outside it, in logical order, is refused (2241).
    put_logical(&q, msg_flags::MSG_IN_GROUP, "in group").await;
    assert_reason(
        put_md(&q, &mut MessageDescriptor::default(), LOGICAL, "alone").await,
        ReasonCode::IncompleteGroup,
    );
    // A segmented message under way: the next must be a segment (2242).
    put_logical(&q, msg_flags::MSG_IN_GROUP | msg_flags::SEGMENT, "part").await;
    assert_reason(
        put_md(
            &q,
            &mut bad(msg_flags::MSG_IN_GROUP, 1, 0),
            LOGICAL,
            "whole",
        )
        .await,
        ReasonCode::IncompleteMsg,
    );
    let done = put_logical(
        &q,
        msg_flags::LAST_MSG_IN_GROUP | msg_flags::LAST_SEGMENT,
        "end",
    )
    .await;
    assert_eq!((done.msg_seq_number, done.offset), (2, 4));
    assert_eq!(curdepth(&qm, "Q"), 3, "nothing refused was stored");

    // A group got in logical order under syncpoint must go on under syncpoint (2245).
    let in_uow = GetOptions {
        options: GetOptionFlags::LOGICAL_ORDER | GetOptionFlags::SYNCPOINT,
        ..Default::default()
    };
    let mut md = MessageDescriptor::default();
    let got = within("get", q.get(&mut md, &in_uow, 1024)).await.unwrap();
    assert_eq!(&got.data[..], b"in group");
    let r = next_logical_checked(&q).await;
    assert_reason(r, ReasonCode::InconsistentUow);
    // Leaving logical order mid-group is allowed, with warning 2241.
    let in_uow_plain = GetOptions {
        options: GetOptionFlags::SYNCPOINT,
        ..Default::default()
    };
    let mut md = MessageDescriptor::default();
    let got = within("get", q.get(&mut md, &in_uow_plain, 1024))
        .await
        .unwrap();
    assert_eq!(got.warning, Some(ReasonCode::IncompleteGroup));
    conn.commit().await.unwrap();
    conn.disconnect().await.unwrap();
}

/// Closes `q`; returns the warning MQCLOSE completed with, if any.
async fn close_warning(q: Queue) -> Option<ReasonCode> {
    within("close", q.close(Default::default()))
        .await
        .unwrap_or_else(|e| panic!("close failed: {e}"))
}

/// MQCLOSE of a handle in the middle of a group it put or got in logical order closes it
/// with MQCC_WARNING: 2241 MQRC_INCOMPLETE_GROUP, or 2242 MQRC_INCOMPLETE_MSG when a
/// segmented message is under way; a finished group closes cleanly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_a_handle_mid_group_warns_as_mq_does() {
    let qm = start("MQI.GROUPS.CLOSE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;

    let whole = open(&conn, "Q", IO).await;
    put_logical(&whole, msg_flags::MSG_IN_GROUP, "w1").await;
    put_logical(&whole, msg_flags::LAST_MSG_IN_GROUP, "w2").await;
    assert_eq!(close_warning(whole).await, None);

    let half = open(&conn, "Q", IO).await;
    put_logical(&half, msg_flags::MSG_IN_GROUP, "h1").await;
    assert_eq!(
        close_warning(half).await,
        Some(ReasonCode::IncompleteGroup),
        "a group put in logical order and left open"
    );

    let segmenting = open(&conn, "Q", IO).await;
    put_logical(
        &segmenting,
        msg_flags::MSG_IN_GROUP | msg_flags::SEGMENT,
        "s1",
    )
    .await;
    assert_eq!(
        close_warning(segmenting).await,
        Some(ReasonCode::IncompleteMsg),
        "a segmented message under way is reported in preference to its group"
    );

    // A getter that stops after the first message of the complete group w1, w2.
    let getter = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    let (body, _, seq, status) = next_logical(&getter, GetOptionFlags::empty()).await;
    assert_eq!((body.as_str(), seq, status), ("w1", 1, b'G'));
    assert_eq!(
        close_warning(getter).await,
        Some(ReasonCode::IncompleteGroup),
        "a group got in logical order and left open"
    );
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_persistent_group_survives_a_restart_and_stays_in_order() {
    let mut qm = start("MQI.GROUPS.RESTART");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO).await;
    let put_persistent = |flags| MessageDescriptor {
        msg_flags: flags,
        persistence: persistence::PERSISTENT,
        ..Default::default()
    };
    let mut first = put_persistent(msg_flags::MSG_IN_GROUP);
    put_md(&q, &mut first, LOGICAL, "one").await.unwrap();
    put_md(
        &q,
        &mut put_persistent(msg_flags::MSG_IN_GROUP),
        LOGICAL,
        "two",
    )
    .await
    .unwrap();
    put_md(
        &q,
        &mut put_persistent(msg_flags::LAST_MSG_IN_GROUP),
        LOGICAL,
        "three",
    )
    .await
    .unwrap();
    // A second group whose last message never came.
    let other = open(&conn, "Q", IO).await;
    put_md(
        &other,
        &mut put_persistent(msg_flags::MSG_IN_GROUP),
        LOGICAL,
        "orphan",
    )
    .await
    .unwrap();
    conn.disconnect().await.unwrap();

    stop_qm(&mut qm);
    qm.launch();
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", OpenOptions::INPUT_SHARED).await;
    let all = GetOptionFlags::ALL_MSGS_AVAILABLE;
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(next_logical(&q, all).await);
    }
    let bodies: Vec<&str> = got.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(bodies, ["one", "two", "three"]);
    assert!(got.iter().all(|g| g.1 == first.group_id), "GroupId kept");
    assert_eq!(got.iter().map(|g| g.2).collect::<Vec<_>>(), [1, 2, 3]);
    let mut md = MessageDescriptor::default();
    let r = get_group(
        &q,
        &mut md,
        GetOptionFlags::LOGICAL_ORDER | all,
        MatchOptions::empty(),
        0,
    )
    .await;
    assert_reason(r, ReasonCode::NoMsgAvailable);
    assert_eq!(curdepth(&qm, "Q"), 1, "the incomplete group is still there");
    conn.disconnect().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_manager_segments_a_message_too_long_for_the_queue() {
    let qm = start("MQI.GROUPS.SEGMENTATION");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXMSGL(10)");
    let conn = connect(&qm.client()).await;
    let q = open(&conn, "Q", IO).await;
    let text = "twenty-five bytes of text";
    assert_reason(
        put_md(
            &q,
            &mut MessageDescriptor::default(),
            PutOptions::default(),
            text,
        )
        .await,
        ReasonCode::MsgTooBigForQ,
    );
    let mut md = MessageDescriptor {
        msg_flags: msg_flags::SEGMENTATION_ALLOWED,
        persistence: persistence::PERSISTENT,
        ..Default::default()
    };
    put_md(&q, &mut md, PutOptions::default(), text)
        .await
        .unwrap();
    assert_ne!(md.group_id, GROUP_ID_NONE);
    assert_eq!(curdepth(&qm, "Q"), 3, "segments of 10, 10 and 5 bytes");

    // Browsed one by one they are segments; got with COMPLETE_MSG, one message.
    let browser = open(&conn, "Q", OpenOptions::BROWSE).await;
    let mut parts = Vec::new();
    let mut first = true;
    loop {
        let options = if first {
            GetOptionFlags::BROWSE_FIRST
        } else {
            GetOptionFlags::BROWSE_NEXT
        };
        first = false;
        match get_group(
            &browser,
            &mut MessageDescriptor::default(),
            options,
            MatchOptions::empty(),
            0,
        )
        .await
        {
            Ok((part, _, ss)) => parts.push((part, ss)),
            Err(e) => {
                assert_eq!(e.reason, ReasonCode::NoMsgAvailable);
                break;
            }
        }
    }
    let statuses: Vec<u8> = parts.iter().map(|p| p.1).collect();
    assert_eq!(statuses, b"SSL");
    assert_eq!(parts.iter().map(|p| p.0.as_str()).collect::<String>(), text);

    let mut got = MessageDescriptor::default();
    let (whole, _, ss) = get_group(
        &q,
        &mut got,
        GetOptionFlags::COMPLETE_MSG,
        MatchOptions::empty(),
        0,
    )
    .await
    .unwrap();
    assert_eq!(
        (whole.as_str(), ss, got.group_id),
        (text, b' ', md.group_id)
    );
    assert_eq!(curdepth(&qm, "Q"), 0);

    // All segments or none: a queue with room for two keeps nothing of three.
    mqsc_ok(&qm, "DEFINE QLOCAL(SMALL) MAXMSGL(10) MAXDEPTH(2)");
    let small = open(&conn, "SMALL", IO).await;
    let mut md = MessageDescriptor {
        msg_flags: msg_flags::SEGMENTATION_ALLOWED,
        ..Default::default()
    };
    assert_reason(
        put_md(&small, &mut md, PutOptions::default(), text).await,
        ReasonCode::QFull,
    );
    assert_eq!(curdepth(&qm, "SMALL"), 0);
    conn.disconnect().await.unwrap();
}
