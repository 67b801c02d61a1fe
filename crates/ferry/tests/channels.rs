//! Message channels between two real queue managers, set up with MQSC only: a sender
//! drains a transmission queue to its receiver; persistent and fast non-persistent
//! messages arrive with their descriptor and context; replies find their way back over
//! the channel pair the other way; a message for an unknown queue goes to the
//! dead-letter queue; DISPLAY CHSTATUS shows what an administrator expects; and the
//! channel carries on after its receiver's queue manager is killed and restarted, with
//! every persistent message delivered exactly once.

mod common;

use common::message_channels::*;
use common::*;
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::{
    FixedStr, GetOptionFlags, MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions,
};
use std::time::Duration;

#[tokio::test(flavor = "current_thread")]
async fn messages_cross_a_sender_receiver_pair_with_their_context() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = link(&qma, &qmb);
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n",
    );
    start_channel(&qma, &channel);

    let a = connect(&qma.client()).await;
    put_many(&a, "APP.REMOTE", "persistent", 40, true).await;
    put_many(&a, "APP.REMOTE", "fast", 40, false).await;
    // A message with its own MsgId, CorrelId, ReplyToQ and type keeps them.
    let q = open(&a, "APP.REMOTE", OpenOptions::OUTPUT).await;
    let mut md = MessageDescriptor {
        msg_type: msg_type::REQUEST,
        msg_id: *b"ferry-channel-msgid-0001",
        correl_id: *b"ferry-channel-correl-001",
        reply_to_q: FixedStr::truncating("APP.REPLY"),
        persistence: persistence::PERSISTENT,
        priority: 7,
        ..MessageDescriptor::default()
    };
    put_md(
        &q,
        &mut md,
        PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
        "request",
    )
    .await
    .expect("put the request");
    assert_eq!(
        md.reply_to_qmgr.as_str(),
        "QMA",
        "ReplyToQMgr filled with the local QM"
    );

    let b = connect(&qmb.client()).await;
    let inq = open(&b, "APP.IN", OpenOptions::INPUT_SHARED).await;
    let mut bodies = Vec::new();
    let mut request = None;
    for _ in 0..81 {
        let (md, got) = get_with(
            &inq,
            gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 20_000),
        )
        .await
        .unwrap_or_else(|e| panic!("message {} did not arrive: {e}", bodies.len()));
        let body = String::from_utf8(got.data.to_vec()).expect("utf-8");
        if body == "request" {
            request = Some(md);
        }
        bodies.push(body);
    }
    let persistent: Vec<&String> = bodies
        .iter()
        .filter(|b| b.starts_with("persistent-"))
        .collect();
    let fast: Vec<&String> = bodies.iter().filter(|b| b.starts_with("fast-")).collect();
    assert_eq!(persistent.len(), 40);
    assert_eq!(fast.len(), 40);
    // One channel keeps the order of one transmission queue.
    let expected: Vec<String> = (0..40).map(|i| format!("persistent-{i}")).collect();
    assert_eq!(persistent, expected.iter().collect::<Vec<_>>());
    let request = request.expect("the request arrived");
    assert_eq!(&request.msg_id, b"ferry-channel-msgid-0001");
    assert_eq!(&request.correl_id, b"ferry-channel-correl-001");
    assert_eq!(request.msg_type, msg_type::REQUEST);
    assert_eq!(request.reply_to_q.as_str(), "APP.REPLY");
    assert_eq!(request.reply_to_qmgr.as_str(), "QMA");
    assert_eq!(request.priority, 7);
    assert_eq!(request.persistence, persistence::PERSISTENT);
    assert!(
        !request.user_identifier.as_str().is_empty(),
        "context crossed"
    );
    assert_eq!(curdepth(&qma, "QMB"), 0, "the transmission queue drained");

    let sender = chstatus(&qma, &channel);
    assert_eq!(sender["STATUS"], "RUNNING");
    assert_eq!(sender["RQMNAME"], "QMB");
    assert_eq!(sender["XMITQ"], "QMB");
    assert_eq!(sender["MSGS"], "81");
    assert_eq!(sender["INDOUBT"], "NO");
    // MQ's default QMGR MONCHL(OFF): NETTIME and XQTIME blank until it is turned on.
    let shown = |s: &std::collections::BTreeMap<String, String>, k: &str| {
        s.get(k).is_some_and(|v| !v.trim().is_empty())
    };
    assert!(!shown(&sender, "NETTIME"), "{sender:?}");
    assert!(!shown(&sender, "XQTIME"), "{sender:?}");
    mqsc_ok(&qma, "ALTER QMGR MONCHL(MEDIUM)");
    let monitored = chstatus(&qma, &channel);
    assert!(shown(&monitored, "NETTIME"), "{monitored:?}");
    assert!(shown(&monitored, "XQTIME"), "{monitored:?}");
    let receiver = chstatus(&qmb, &channel);
    assert_eq!(receiver["STATUS"], "RUNNING");
    assert_eq!(receiver["RQMNAME"], "QMA");
    assert_eq!(receiver["MSGS"], "81");
    assert_eq!(
        sender.get("LSTLUWID"),
        receiver.get("LSTLUWID"),
        "both ends name the same last committed batch"
    );

    mqsc_ok(&qma, &format!("STOP CHANNEL({channel})\n"));
    wait_until("the sender STOPPED", || {
        chstatus(&qma, &channel).get("STATUS").map(String::as_str) == Some("STOPPED")
    });
    wait_until("the receiver INACTIVE", || {
        chstatus(&qmb, &channel).get("STATUS").map(String::as_str) != Some("RUNNING")
    });
    // Messages put while the channel is stopped wait on the transmission queue.
    put_many(&a, "APP.REMOTE", "later", 3, true).await;
    assert_eq!(curdepth(&qma, "QMB"), 3);
    start_channel(&qma, &channel);
    let later = drain(&b, "APP.IN", 3000).await;
    assert_eq!(later, ["later-0", "later-1", "later-2"]);
}

#[tokio::test(flavor = "current_thread")]
async fn replies_come_back_over_the_channel_pair_the_other_way() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let ab = link(&qma, &qmb);
    let ba = link(&qmb, &qma);
    mqsc_ok(&qmb, "DEFINE QLOCAL(SERVICE.IN)\n");
    mqsc_ok(&qma, "DEFINE QREMOTE(SERVICE) RNAME(SERVICE.IN) RQMNAME(QMB) XMITQ(QMB)\nDEFINE QLOCAL(APP.REPLY)\n");
    start_channel(&qma, &ab);
    start_channel(&qmb, &ba);

    let a = connect(&qma.client()).await;
    let b = connect(&qmb.client()).await;
    let requests = open(&a, "SERVICE", OpenOptions::OUTPUT).await;
    let service = open(&b, "SERVICE.IN", OpenOptions::INPUT_SHARED).await;
    let replies = open(&a, "APP.REPLY", OpenOptions::INPUT_SHARED).await;
    for i in 0..5 {
        let mut md = MessageDescriptor {
            msg_type: msg_type::REQUEST,
            reply_to_q: FixedStr::truncating("APP.REPLY"),
            ..MessageDescriptor::default()
        };
        put_md(
            &requests,
            &mut md,
            PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
            &format!("ask-{i}"),
        )
        .await
        .expect("put the request");
        let (req, got) = get_with(
            &service,
            gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 20_000),
        )
        .await
        .expect("the request crossed");
        assert_eq!(String::from_utf8_lossy(&got.data), format!("ask-{i}"));
        assert_eq!(req.reply_to_qmgr.as_str(), "QMA");
        // The responder replies to ReplyToQ at ReplyToQMgr, as MQ applications do.
        let od = ferry_mqi::ObjectDescriptor {
            object_name: req.reply_to_q,
            object_qmgr_name: req.reply_to_qmgr,
            ..ferry_mqi::ObjectDescriptor::default()
        };
        let mut reply = MessageDescriptor {
            msg_type: msg_type::REPLY,
            correl_id: req.msg_id,
            ..MessageDescriptor::default()
        };
        within(
            "put1 the reply",
            b.put1(
                &od,
                &mut reply,
                &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
                format!("answer-{i}"),
            ),
        )
        .await
        .expect("put1 the reply");
        let mut want = MessageDescriptor {
            correl_id: req.msg_id,
            ..MessageDescriptor::default()
        };
        let got = within(
            "the reply",
            replies.get(
                &mut want,
                &ferry_mqi::GetOptions {
                    options: GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
                    wait_interval: 20_000,
                    match_options: ferry_mqi::options::MatchOptions::CORREL_ID,
                },
                1024,
            ),
        )
        .await
        .expect("the reply came back");
        assert_eq!(String::from_utf8_lossy(&got.data), format!("answer-{i}"));
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_message_for_an_unknown_queue_goes_to_the_dead_letter_queue() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = link(&qma, &qmb);
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(NOWHERE) RNAME(NO.SUCH.QUEUE) RQMNAME(QMB) XMITQ(QMB)\n",
    );
    start_channel(&qma, &channel);
    let a = connect(&qma.client()).await;
    put_many(&a, "NOWHERE", "lost", 2, true).await;
    wait_until("two dead letters on QMB", || {
        curdepth(&qmb, "SYSTEM.DEAD.LETTER.QUEUE") == 2
    });
    let b = connect(&qmb.client()).await;
    let dlq = open(&b, "SYSTEM.DEAD.LETTER.QUEUE", OpenOptions::INPUT_SHARED).await;
    let (md, got) = get(&dlq).await.expect("a dead letter");
    assert_eq!(md.format.as_str(), "MQDEAD");
    assert_eq!(&got.data[..4], b"DLH ");
    let reason = i32::from_le_bytes(got.data[8..12].try_into().expect("4 bytes"));
    assert_eq!(reason, 2085, "MQRC_UNKNOWN_OBJECT_NAME");
    assert_eq!(
        String::from_utf8_lossy(&got.data[12..60]).trim_end(),
        "NO.SUCH.QUEUE"
    );
    assert!(got.data.ends_with(b"lost-0"));
    assert!(qmb.error_log().contains("FRY9561W"), "{}", qmb.error_log());
    assert_eq!(
        chstatus(&qma, &channel)["STATUS"],
        "RUNNING",
        "the channel carries on"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_channel_to_a_queue_manager_without_that_channel_retries_then_runs() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = format!("{}.TO.{}", qma.name(), qmb.name());
    mqsc_ok(
        &qma,
        &format!(
            "DEFINE QLOCAL(QMB) USAGE(XMITQ)\n\
             DEFINE CHANNEL({channel}) CHLTYPE(SDR) CONNAME('localhost({})') XMITQ(QMB) SHORTTMR(1)\n\
             DEFINE QREMOTE(R) RNAME(IN) RQMNAME(QMB) XMITQ(QMB)\n",
            qmb.port()
        ),
    );
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_until("the sender RETRYING", || {
        chstatus(&qma, &channel).get("STATUS").map(String::as_str) == Some("RETRYING")
    });
    assert!(qma.error_log().contains("FRY9503E"), "{}", qma.error_log());
    assert!(qmb.error_log().contains("FRY9503E"), "{}", qmb.error_log());
    // Defining the receiver lets the next retry through.
    mqsc_ok(
        &qmb,
        &format!("DEFINE CHANNEL({channel}) CHLTYPE(RCVR)\nDEFINE QLOCAL(IN)\n"),
    );
    let a = connect(&qma.client()).await;
    put_many(&a, "R", "m", 1, true).await;
    wait_until("the message crossed", || curdepth(&qmb, "IN") == 1);
    assert_eq!(chstatus(&qma, &channel)["STATUS"], "RUNNING");
}

#[tokio::test(flavor = "current_thread")]
async fn persistent_messages_cross_exactly_once_when_the_receiver_is_killed() {
    let qma = start("QMA");
    let mut qmb = start("QMB");
    let channel = link(&qma, &qmb);
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN) MAXDEPTH(100000)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n",
    );
    mqsc_ok(&qma, "ALTER QLOCAL(QMB) MAXDEPTH(100000)\n");
    start_channel(&qma, &channel);
    let a = connect(&qma.client()).await;
    let total = 600;
    let putter = async {
        put_many(&a, "APP.REMOTE", "p", total, true).await;
    };
    let killer = async {
        // Kill QMB while batches cross, then start it again.
        tokio::time::sleep(Duration::from_millis(150)).await;
        qmb.kill9();
        qmb.wait_exit(Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(300)).await;
        qmb.launch();
    };
    tokio::join!(putter, killer);
    let b = connect(&qmb.client()).await;
    // Everything crosses once the channel is back (short retries every second).
    wait_until("the transmission queue drained", || {
        curdepth(&qma, "QMB") == 0
    });
    let bodies = drain(&b, "APP.IN", 3000).await;
    let mut seen = std::collections::BTreeSet::new();
    for body in &bodies {
        assert!(seen.insert(body.clone()), "{body} arrived twice");
    }
    for i in 0..total {
        assert!(seen.contains(&format!("p-{i}")), "p-{i} was lost");
    }
    assert_eq!(bodies.len(), total);
    let log = qma.error_log();
    assert!(
        log.contains("FRY9547W"),
        "the channel broke and retried: {log}"
    );
    eprintln!("{log}");
}

/// A requester on QMB calls the server on QMA (which has no CONNAME) and receives what
/// QMA's transmission queue holds, before and while it runs; after a forced stop and a
/// new start it carries on from the same sequence number, every message arriving once.
/// A requester calling a *sender* (MQ's callback) is refused with a clear reason.
#[tokio::test(flavor = "current_thread")]
async fn a_requester_calls_its_server_and_receives_what_it_holds() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = "QMA.TO.QMB";
    mqsc_ok(
        &qma,
        &format!(
            "DEFINE QLOCAL(QMB) USAGE(XMITQ)\n\
             DEFINE CHANNEL({channel}) CHLTYPE(SVR) XMITQ(QMB) HBINT(5)\n\
             DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n"
        ),
    );
    mqsc_ok(
        &qmb,
        &format!(
            "DEFINE QLOCAL(APP.IN)\n\
             DEFINE CHANNEL({channel}) CHLTYPE(RQSTR) CONNAME('localhost({})') SHORTTMR(1)\n",
            qma.port()
        ),
    );
    // A server without CONNAME is started by its requester: START only enables it.
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    let a = connect(&qma.client()).await;
    put_many(&a, "APP.REMOTE", "held", 20, true).await;
    put_many(&a, "APP.REMOTE", "fast", 20, false).await;

    start_channel(&qmb, channel);
    let b = connect(&qmb.client()).await;
    let mut got = drain(&b, "APP.IN", 3_000).await;
    let server = chstatus(&qma, channel);
    assert_eq!(
        server.get("STATUS").map(String::as_str),
        Some("RUNNING"),
        "{server:?}"
    );
    assert_eq!(
        server.get("RQMNAME").map(String::as_str),
        Some("QMB"),
        "{server:?}"
    );
    assert_eq!(
        server.get("XMITQ").map(String::as_str),
        Some("QMB"),
        "{server:?}"
    );
    let requester = chstatus(&qmb, channel);
    assert_eq!(
        requester.get("RQMNAME").map(String::as_str),
        Some("QMA"),
        "{requester:?}"
    );

    // While it runs, new messages follow.
    put_many(&a, "APP.REMOTE", "live", 5, true).await;
    got.extend(drain(&b, "APP.IN", 3_000).await);

    // Stopped at the requester, started again: the numbers carry on.
    let seq_before = chstatus(&qma, channel).get("CURSEQNO").cloned();
    stop_channel(&qmb, channel);
    put_many(&a, "APP.REMOTE", "after", 3, true).await;
    wait_until("the server sees its requester go", || {
        status(&qma, channel).as_deref() != Some("RUNNING")
    });
    start_channel(&qmb, channel);
    got.extend(drain(&b, "APP.IN", 3_000).await);
    let after = chstatus(&qma, channel);
    assert_eq!(
        after.get("STATUS").map(String::as_str),
        Some("RUNNING"),
        "{after:?}"
    );
    assert_eq!(
        after.get("CURSEQNO").map(|s| s.parse::<u64>().unwrap_or(0)),
        seq_before.map(|s| s.parse::<u64>().unwrap_or(0) + 3),
        "the sequence carries on across the restart: {after:?}"
    );

    got.sort();
    let mut expected: Vec<String> = (0..20)
        .map(|i| format!("held-{i}"))
        .chain((0..20).map(|i| format!("fast-{i}")))
        .chain((0..5).map(|i| format!("live-{i}")))
        .chain((0..3).map(|i| format!("after-{i}")))
        .collect();
    expected.sort();
    assert_eq!(got, expected, "every message arrives once");
    assert!(qmb.error_log().contains("FRY9530I"), "{}", qmb.error_log());

    // A requester calling a sender: refused at both ends with the reason.
    mqsc_ok(
        &qma,
        "DEFINE CHANNEL(CALLBACK) CHLTYPE(SDR) CONNAME('localhost(1)') XMITQ(QMB)\n",
    );
    mqsc_ok(
        &qmb,
        &format!(
            "DEFINE CHANNEL(CALLBACK) CHLTYPE(RQSTR) CONNAME('localhost({})') SHORTRTY(0) LONGRTY(0)\n",
            qma.port()
        ),
    );
    mqsc_ok(&qmb, "START CHANNEL(CALLBACK)\n");
    wait_status(&qmb, "CALLBACK", "STOPPED");
    assert!(
        qmb.error_log().contains("callback) is not supported"),
        "{}",
        qmb.error_log()
    );
}

/// COMPMSG and COMPHDR on a sender/receiver pair: the first technique of the sender's
/// list that the receiver's has is agreed, compressible messages travel compressed and
/// arrive byte for byte, and DISPLAY CHSTATUS shows the techniques, COMPRATE and the
/// buffers at both ends. A partner without a common technique agrees NONE.
#[tokio::test(flavor = "current_thread")]
async fn messages_travel_compressed_when_both_ends_agree_a_technique() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = link_with(
        &qma,
        &qmb,
        "COMPMSG(LZ4FAST,ZLIBFAST) COMPHDR(SYSTEM)",
        "COMPMSG(ZLIBFAST) COMPHDR(SYSTEM,NONE)",
    );
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n",
    );
    let a = connect(&qma.client()).await;
    let q = open(&a, "APP.REMOTE", OpenOptions::OUTPUT).await;
    let mut sent = Vec::new();
    for i in 0..30u32 {
        // Text that compresses well, and every tenth message bytes that do not.
        let body = if i % 10 == 9 {
            let mut x = 0x9E37_79B9u32.wrapping_mul(i + 1);
            (0..3000)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    char::from(b'!' + (x % 90) as u8)
                })
                .collect::<String>()
        } else {
            format!("order {i}: ").repeat(300)
        };
        let mut md = MessageDescriptor {
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        put_md(
            &q,
            &mut md,
            PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
            &body,
        )
        .await
        .expect("put");
        sent.push(body);
    }
    start_channel(&qma, &channel);
    let b = connect(&qmb.client()).await;
    let mut got = drain(&b, "APP.IN", 3_000).await;
    got.sort();
    sent.sort();
    assert!(got == sent, "every message arrives byte for byte");

    let sender = chstatus(&qma, &channel);
    assert_eq!(
        sender.get("COMPMSG").map(String::as_str).map(|v| &v[..8]),
        Some("ZLIBFAST"),
        "{sender:?}"
    );
    assert!(sender["COMPHDR"].starts_with("SYSTEM,"), "{sender:?}");
    let rate: Vec<u32> = sender["COMPRATE"]
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        rate[1] > 50,
        "text compresses by more than half: {sender:?}"
    );
    assert!(
        sender["BUFSSENT"].parse::<u64>().unwrap() >= 30,
        "{sender:?}"
    );
    let receiver = chstatus(&qmb, &channel);
    assert!(receiver["COMPMSG"].starts_with("ZLIBFAST,"), "{receiver:?}");
    assert!(receiver["COMPRATE"] != "0,0", "{receiver:?}");
    assert!(
        receiver["BUFSRCVD"].parse::<u64>().unwrap() >= 30,
        "{receiver:?}"
    );
    let bytes_received: u64 = receiver["BYTSRCVD"].parse().unwrap();
    assert!(
        bytes_received < 30 * 3000 / 2,
        "compressed on the wire: {bytes_received} bytes for 30 messages of 3000"
    );

    // No technique in common: NONE.
    stop_channel(&qma, &channel);
    mqsc_ok(
        &qmb,
        &format!("ALTER CHANNEL({channel}) CHLTYPE(RCVR) COMPMSG(RLE) COMPHDR(NONE)\n"),
    );
    start_channel(&qma, &channel);
    let sender = chstatus(&qma, &channel);
    assert_eq!(
        sender.get("COMPMSG").map(String::as_str),
        Some("NONE,NONE"),
        "{sender:?}"
    );
    assert_eq!(
        sender.get("COMPHDR").map(String::as_str),
        Some("NONE,NONE"),
        "{sender:?}"
    );
}

/// The scheduling policy of the runtime thread (the one serving every connection) of
/// `qm`.
fn runtime_policy(qm: &TestQueueManager) -> u32 {
    thread_policies(qm.pid().expect("running"))
        .into_iter()
        .find(|(name, _)| name == "runtime")
        .expect("a runtime thread")
        .1
}

#[test]
fn queue_managers_run_their_thread_as_normal_while_a_message_channel_runs() {
    // qm.ini RuntimeScheduling AUTO (the default): SCHED_BATCH serves applications, but
    // a message crossing to another queue manager must not wait for a time slice.
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = link(&qma, &qmb);
    assert_eq!(runtime_policy(&qma), SCHED_BATCH);
    assert_eq!(runtime_policy(&qmb), SCHED_BATCH);

    start_channel(&qma, &channel);
    wait_status(&qmb, &channel, "RUNNING");
    assert_eq!(runtime_policy(&qma), SCHED_OTHER, "the sending end");
    assert_eq!(runtime_policy(&qmb), SCHED_OTHER, "the receiving end");

    stop_channel(&qma, &channel);
    wait_until("both queue managers back to SCHED_BATCH", || {
        runtime_policy(&qma) == SCHED_BATCH && runtime_policy(&qmb) == SCHED_BATCH
    });
}
