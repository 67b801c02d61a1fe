//! The AMQP 1.0 channel of a real `ferry` process, driven by Ferry's own sans-I/O
//! client state machine (`ferry_amqp::connection::Connection`) over a blocking socket.
//!
//! What these tests prove, as an operator and an AMQP client see it:
//! - messages sent to a queue are `accepted`, come back to a receiver in order with
//!   their bodies and durability, are held (still in CURDEPTH) until accepted, and are
//!   removed once accepted;
//! - a link to a queue that does not exist is refused with `amqp:not-found` naming MQRC
//!   2085, and the connection stays usable;
//! - AMQP and native MQI applications share queues: an amqp-value string is an MQSTR
//!   message, and an MQSTR message is a JMS TextMessage (`x-opt-jms-msg-type` 5);
//! - DISPLAY CHSTATUS shows each client's container id and message count, and the
//!   channel's connection count;
//! - MAXINST turns away extra connections with `amqp:resource-limit-exceeded` at their
//!   open, without disturbing the connection already in;
//! - a client that sends an undecodable frame is closed with a decode or framing error
//!   and FRY9505E is logged, while other clients and the process carry on;
//! - durable messages that were `accepted` survive a kill -9;
//! - a receiver gets, intact and in order, bodies a restart left in the queue file
//!   beyond DefaultPQBufferSize;
//! - local transactions (a coordinator link, as a Qpid JMS transacted session uses one):
//!   sends in a transaction are invisible until its commit and dropped by its rollback;
//!   messages accepted in one are removed by the commit (for good: a kill -9 after it
//!   does not bring them back) and redelivered with delivery-count + 1 by the rollback;
//!   an unknown transaction id is refused with `amqp:transaction:unknown-id`; a
//!   connection that ends, or a queue manager killed, with a transaction open loses its
//!   sends and keeps the messages it received;
//! - report messages: a message sent over AMQP asks for none (Report 0), and a native
//!   message asking for confirm on delivery gets its COD when an AMQP receiver accepts it.
//!
//! Every wait has a deadline ([`DEADLINE`]): a server that does not answer fails the
//! test with what was awaited and what arrived instead.

#[path = "common/amqp_client.rs"]
mod amqp_client;
mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use amqp_client::*;
use bytes::{Bytes, BytesMut};
use common::*;
use ferry_amqp::connection::{Event, LinkId};
use ferry_amqp::{
    condition, Body, DeliveryState, ErrorCondition, FrameDecoder, Header, LinkTarget, Message,
    Open, Performative, Role, SaslCode, Source, Target, Value,
};
use ferry_mqi::descriptor::format;
use ferry_mqi::{MessageDescriptor, OpenOptions, PutOptions};

/// CURDEPTH as DISPLAY QSTATUS shows it.
#[track_caller]
fn qstatus_depth(qm: &TestQueueManager, q: &str) -> i64 {
    let text = mqsc_ok(qm, &format!("DISPLAY QSTATUS({q}) CURDEPTH"));
    attr(&text, "CURDEPTH")
        .unwrap_or_else(|| panic!("no CURDEPTH in {text}"))
        .parse()
        .expect("CURDEPTH is a number")
}

/// Polls CURDEPTH of `q` until it is `want`, panicking at the deadline.
#[track_caller]
fn wait_depth(qm: &TestQueueManager, q: &str, want: i64) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let depth = qstatus_depth(qm, q);
        if depth == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "CURDEPTH of {q} is {depth}, not {want}, after {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn send_and_receive_through_a_queue() {
    let qm = start("AMQP.SR");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-sr");
    let sender = c.attach_sender("Q");
    let sent = [("one", false), ("two", true), ("three", false)];
    for (body, durable) in sent {
        c.send_accepted(sender, &data_message(body, durable));
    }
    assert_eq!(
        qstatus_depth(&qm, "Q"),
        3,
        "accepted sends are on the queue"
    );

    let receiver = c.attach_receiver("Q", 10);
    let mut ids = Vec::new();
    for (body, want_durable) in sent {
        let (id, settled, m) = c.receive(receiver);
        assert!(!settled, "an unsettled link's delivery comes unsettled");
        assert_eq!(data_text(&m), body, "messages arrive in order: {m:?}");
        assert_eq!(durable(&m), want_durable, "header.durable of {body}: {m:?}");
        ids.push(id);
    }
    assert_eq!(
        qstatus_depth(&qm, "Q"),
        3,
        "delivered and not yet accepted messages still count in CURDEPTH"
    );
    for id in ids {
        c.accept(id);
    }
    // Acceptances are applied in batches (BATCHINT, 50 ms by default).
    wait_depth(&qm, "Q", 0);
    c.close();
}

#[test]
fn a_sender_to_an_unknown_queue_is_refused_with_not_found() {
    let qm = start("AMQP.NF");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-nf");
    let (link, attach) = c.attach_sender_raw("NO.SUCH.QUEUE");
    assert!(
        attach.target.is_none(),
        "a refused attach answers with a null target: {attach:?}"
    );
    let Event::Detach { closed, error, .. } = c.expect(
        "the detach of the refused link",
        |e| matches!(e, Event::Detach { link: l, .. } if *l == link),
    ) else {
        unreachable!()
    };
    assert!(closed, "the refused link is closed, not only detached");
    let error = error.expect("the detach carries an error");
    assert_eq!(
        error.condition.as_str(),
        condition::NOT_FOUND,
        "condition: {error:?}"
    );
    let description = error.description.as_ref().map(|d| d.as_str().to_string());
    assert!(
        description.as_deref().is_some_and(|d| d.contains("2085")),
        "the description names MQRC 2085: {error:?}"
    );
    // A refused link costs only the link: the connection carries on.
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("after the refusal", false));
    assert_eq!(qstatus_depth(&qm, "Q"), 1, "the later send is on Q");
    c.close();
}

#[test]
fn amqp_and_native_applications_share_queues() {
    let qm = start("AMQP.NATIVE");
    mqsc_ok(&qm, "DEFINE QLOCAL(TO.NATIVE)\nDEFINE QLOCAL(FROM.NATIVE)");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let mut c = AmqpTestClient::connect(&qm, "itest-native");

    // AMQP → native: an amqp-value string is MQFMT_STRING text.
    let sender = c.attach_sender("TO.NATIVE");
    let text_out = "héllo from AMQP";
    c.send_accepted(
        sender,
        &Message {
            body: Some(Body::Value(Value::from(text_out))),
            ..Message::default()
        },
    );
    let (md, data) = rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "TO.NATIVE", OpenOptions::INPUT_SHARED).await;
        let (md, got) = get(&q).await.expect("native get of the AMQP message");
        (md, got.data.to_vec())
    });
    assert_eq!(
        md.format,
        format::STRING,
        "an amqp-value string is Format MQSTR: {md:?}"
    );
    assert_eq!(md.ccsid, 1208, "the text is UTF-8 (CCSID 1208)");
    assert_eq!(
        String::from_utf8(data).expect("utf-8 body"),
        text_out,
        "native get sees the AMQP text"
    );

    // Native → AMQP: an MQSTR put is a JMS TextMessage.
    let text_in = "hello from MQI";
    rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "FROM.NATIVE", OpenOptions::OUTPUT).await;
        let mut md = MessageDescriptor {
            format: format::STRING,
            ccsid: 1208,
            ..Default::default()
        };
        put_md(&q, &mut md, PutOptions::default(), text_in)
            .await
            .expect("native put");
    });
    let receiver = c.attach_receiver("FROM.NATIVE", 1);
    let (id, _, m) = c.receive(receiver);
    assert_eq!(
        m.body,
        Some(Body::Value(Value::from(text_in))),
        "an MQSTR message arrives as an amqp-value string: {m:?}"
    );
    assert_eq!(
        m.message_annotation(condition::ANNOTATION_JMS_MSG_TYPE),
        Some(&Value::Byte(condition::jms_msg_type::TEXT)),
        "x-opt-jms-msg-type says TextMessage (byte 5): {m:?}"
    );
    c.accept(id);
    wait_depth(&qm, "FROM.NATIVE", 0);
    c.close();
}

#[test]
fn chstatus_shows_the_client_and_its_messages() {
    let qm = start("AMQP.CHS");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-client");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("a", false));
    c.send_accepted(sender, &data_message("b", true));

    let detail = mqsc_ok(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.AMQP) CLIENTID(*)");
    assert_eq!(
        attrs(&detail, "CLIENTID"),
        ["itest-client"],
        "one record, for the connected client's container id: {detail}"
    );
    assert_eq!(
        attr(&detail, "MSGRCVD").as_deref(),
        Some("2"),
        "the client sent 2 messages: {detail}"
    );
    assert_eq!(
        attr(&detail, "STATUS").as_deref(),
        Some("RUNNING"),
        "{detail}"
    );
    let summary = mqsc_ok(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.AMQP)");
    assert_eq!(
        attr(&summary, "CONNS").as_deref(),
        Some("1"),
        "one connection: {summary}"
    );
    assert_eq!(
        attr(&summary, "MSGRCVD").as_deref(),
        Some("2"),
        "the channel's total: {summary}"
    );
    c.close();
}

#[test]
fn maxinst_turns_away_extra_connections() {
    let qm = start("AMQP.MAXI");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\nALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) MAXINST(1)",
    );
    let mut first = AmqpTestClient::connect(&qm, "itest-first");
    let sender = first.attach_sender("Q");

    let mut second = AmqpTestClient::start(&qm, "itest-second");
    let Event::Closed { remote, error } = second.expect("the second client's close", |e| {
        matches!(e, Event::Closed { .. })
    }) else {
        unreachable!()
    };
    assert!(remote, "the server closed the second connection");
    let error = error.expect("the close carries an error");
    assert_eq!(
        error.condition.as_str(),
        condition::RESOURCE_LIMIT_EXCEEDED,
        "condition: {error:?}"
    );
    drop(second);

    first.send_accepted(sender, &data_message("still working", true));
    assert_eq!(
        qstatus_depth(&qm, "Q"),
        1,
        "the first client's send is on Q"
    );

    // The slot frees when the first client leaves.
    first.close();
    let third = AmqpTestClient::connect(&qm, "itest-third");
    third.close();
}

#[test]
fn a_malformed_frame_closes_only_that_connection() {
    let qm = start("AMQP.BAD");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut good = AmqpTestClient::connect(&qm, "itest-good");
    let sender = good.attach_sender("Q");

    // SASL ANONYMOUS, then the AMQP header and a frame whose body is not AMQP.
    // Pumped by hand so that nothing after the SASL outcome goes out on its own.
    let mut bad = AmqpTestClient::socket(&qm);
    let deadline = Instant::now() + DEADLINE;
    while !bad
        .events
        .iter()
        .any(|e| matches!(e, Event::SaslOutcome(_)))
    {
        assert!(!bad.eof, "the server closed during SASL: {:?}", bad.events);
        assert!(
            Instant::now() < deadline,
            "no SASL outcome within {DEADLINE:?}: {:?}",
            bad.events
        );
        bad.flush();
        bad.read_some();
    }
    assert_eq!(
        bad.events,
        [Event::SaslOutcome(SaslCode::Ok)],
        "ANONYMOUS is taken"
    );
    let header = bad.conn.take_output();
    assert_eq!(
        &header[..],
        AMQP_HEADER,
        "after SASL the client sends only the AMQP header"
    );
    // Size 16, doff 2, type 0 (AMQP), channel 0; then a described value whose
    // descriptor is `open` (0x10) and whose value has format code 0xDE, which AMQP
    // does not define.
    let garbage: [u8; 16] = [
        0, 0, 0, 16, 2, 0, 0, 0, 0x00, 0x53, 0x10, 0xDE, 0xAD, 0xBE, 0xEF, 0x00,
    ];
    let mut wire = header.to_vec();
    wire.extend_from_slice(&garbage);
    bad.stream.write_all(&wire).expect("write garbage");

    let mut received = Vec::new();
    let deadline = Instant::now() + DEADLINE;
    loop {
        assert!(
            Instant::now() < deadline,
            "the server did not close the connection within {DEADLINE:?}; got {received:?}"
        );
        let mut chunk = [0u8; 4096];
        match bad.stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    assert!(
        received.starts_with(AMQP_HEADER),
        "the server answers with its AMQP header: {received:?}"
    );
    let mut rest = BytesMut::from(&received[AMQP_HEADER.len()..]);
    let mut decoder = FrameDecoder::new(1 << 20);
    let mut close: Option<Option<ErrorCondition>> = None;
    while let Some(frame) = decoder
        .decode(&mut rest)
        .unwrap_or_else(|e| panic!("the server's frames decode ({e}): {received:?}"))
    {
        if let Some(Performative::Close(c)) = frame.performative {
            close = Some(c.error);
        }
    }
    let error = close
        .unwrap_or_else(|| panic!("the server sent a close frame: {received:?}"))
        .expect("the close carries an error");
    assert!(
        [condition::DECODE_ERROR, condition::FRAMING_ERROR].contains(&error.condition.as_str()),
        "closed with a decode or framing error: {error:?}"
    );
    wait_until("FRY9505E in the error log", || {
        qm.error_log().contains("FRY9505E")
    });

    // The well-behaved client and the process carry on.
    good.send_accepted(sender, &data_message("unaffected", false));
    let pid = qm.pid().expect("the test started the server");
    assert!(
        alive(i32::try_from(pid).expect("pid fits")),
        "the server process is still running"
    );
    assert_eq!(qstatus_depth(&qm, "Q"), 1, "the good client's send is on Q");
    good.close();
}

#[test]
fn accepted_durable_messages_survive_kill_9() {
    let mut qm = start("AMQP.CRASH");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-crash");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("durable-1", true));
    c.send_accepted(sender, &data_message("transient", false));
    c.send_accepted(sender, &data_message("durable-2", true));

    qm.kill9();
    drop(c);
    qm.launch();

    let mut c = AmqpTestClient::connect(&qm, "itest-crash-2");
    let receiver = c.attach_receiver("Q", 10);
    let mut ids = Vec::new();
    for want in ["durable-1", "durable-2"] {
        let (id, _, m) = c.receive(receiver);
        assert_eq!(
            data_text(&m),
            want,
            "durable messages come back in order: {m:?}"
        );
        assert!(durable(&m), "still durable after the restart: {m:?}");
        ids.push(id);
    }
    for id in ids {
        c.accept(id);
    }
    wait_depth(&qm, "Q", 0);
    assert!(
        !c.events.iter().any(|e| matches!(e, Event::Message { .. })),
        "the non-durable message did not survive the crash: {:?}",
        c.events
    );
    c.close();
}

/// A consumer that keeps failing a message (`modified` with `delivery-failed`, as Qpid
/// JMS does on recover or rollback) sees it no more after BOTHRESH attempts: the server
/// has moved it to BOQNAME, with its delivery count as BackoutCount.
#[test]
fn a_message_failed_bothresh_times_lands_on_the_backout_queue() {
    let qm = start("AMQP.BOTHRESH");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q) BOTHRESH(3) BOQNAME(Q.BACKOUT)\nDEFINE QLOCAL(Q.BACKOUT)",
    );
    let mut c = AmqpTestClient::connect(&qm, "itest-bothresh");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("poison", true));
    let receiver = c.attach_receiver("Q", 10);
    for attempt in 0..3 {
        let (id, settled, m) = c.receive(receiver);
        assert!(!settled);
        assert_eq!(data_text(&m), "poison");
        let count = m.header.as_ref().map_or(0, |h| h.delivery_count);
        assert_eq!(count, attempt, "delivery-count counts the failed attempts");
        c.fail(id);
    }
    wait_depth(&qm, "Q.BACKOUT", 1);
    wait_depth(&qm, "Q", 0);
    let backout = c.attach_receiver("Q.BACKOUT", 10);
    let (id, _, m) = c.receive(backout);
    assert_eq!(data_text(&m), "poison");
    assert_eq!(m.header.as_ref().map_or(0, |h| h.delivery_count), 3);
    c.accept(id);
    assert!(
        !c.events
            .iter()
            .any(|e| matches!(e, Event::Message { link, .. } if *link == receiver)),
        "the failing consumer is not given it a fourth time: {:?}",
        c.events
    );
    c.close();
}

/// BODELAY on the queue: a message the consumer fails (`modified` with
/// `delivery-failed`, as Qpid JMS does on recover or rollback) is not offered again until
/// the delay is over, then comes back to the same link by itself with delivery-count 1.
#[test]
fn a_failed_message_comes_back_after_the_queues_redelivery_delay() {
    const BODELAY: Duration = Duration::from_millis(1500);
    let qm = start("AMQP.BODELAY");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) BODELAY(1500)");
    let mut c = AmqpTestClient::connect(&qm, "itest-bodelay");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("retry me", true));
    let receiver = c.attach_receiver("Q", 10);
    let (id, _, m) = c.receive(receiver);
    assert_eq!(m.header.as_ref().map_or(0, |h| h.delivery_count), 0);
    let failed_at = Instant::now();
    c.fail(id);
    let early = c.collect_for(receiver, Duration::from_millis(300));
    assert!(early.is_empty(), "redelivered during the delay: {early:?}");
    assert_eq!(qstatus_depth(&qm, "Q"), 1, "still on the queue meanwhile");
    let (id, _, m) = c.receive(receiver);
    // The server counts whole milliseconds of its own clock: allow it one or two.
    assert!(
        failed_at.elapsed() >= BODELAY - Duration::from_millis(5),
        "redelivered after {:?}, before BODELAY",
        failed_at.elapsed()
    );
    assert_eq!(data_text(&m), "retry me");
    assert_eq!(m.header.as_ref().map_or(0, |h| h.delivery_count), 1);
    c.accept(id);
    wait_depth(&qm, "Q", 0);
    c.close();
}

/// A durable transfer that finds the recovery log full waits for the checkpoint that frees
/// it without holding up the queue manager: its connection reads nothing more meanwhile,
/// other applications' non-persistent work goes on, and the transfer is accepted once the
/// checkpoint ends. Checkpoints are made slow (FERRY_FAULT_CHECKPOINT_DELAY_MS: 1.5 s of
/// "disk" for each one's queue files).
#[test]
fn a_transfer_waiting_for_log_space_does_not_hold_up_other_work() {
    let mut qm = start_with_slow_checkpoints("AMQP.LOGWAIT");
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let native = {
        let (opts, done) = (qm.client(), done.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("tokio runtime");
            rt.block_on(async move {
                let conn = connect(&opts).await;
                let q = open(
                    &conn,
                    "NPQ",
                    OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED,
                )
                .await;
                let (mut worst, mut round_trips) = (Duration::ZERO, 0u32);
                while !done.load(std::sync::atomic::Ordering::Acquire) {
                    let started = Instant::now();
                    let mut md = MessageDescriptor {
                        persistence: ferry_mqi::descriptor::persistence::NOT_PERSISTENT,
                        ..MessageDescriptor::default()
                    };
                    put_md(&q, &mut md, PutOptions::default(), "np")
                        .await
                        .expect("non-persistent put");
                    assert_eq!(get_text(&q).await, "np");
                    worst = worst.max(started.elapsed());
                    round_trips += 1;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                (worst, round_trips)
            })
        })
    };
    // 120 durable transfers of 16 KiB that stay queued fill the 1 MiB log several times
    // over: every checkpoint must file them first.
    let n = 120;
    let mut c = AmqpTestClient::connect(&qm, "itest-logwait");
    let sender = c.attach_sender("Q");
    let mut slowest = Duration::ZERO;
    for i in 0..n {
        let started = Instant::now();
        c.send_accepted(
            sender,
            &data_message(&format!("{i:04} {}", "x".repeat(16 * 1024)), true),
        );
        slowest = slowest.max(started.elapsed());
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    let (worst, round_trips) = native.join().expect("native thread");
    assert_waited_aside("transfer", slowest, worst, round_trips);
    qm.kill9();
    drop(c);
    qm.launch();
    assert_eq!(
        qstatus_depth(&qm, "Q"),
        n,
        "every accepted transfer survives a kill -9"
    );
}

/// A socket that connects to the AMQP port and never completes the handshake is closed
/// after HBINT seconds (at most 30), so it cannot hold a MAXINST place for ever; a client
/// that does speak still gets in.
#[test]
fn a_client_that_never_opens_is_disconnected() {
    let qm = start("AMQP.SILENT");
    mqsc_ok(
        &qm,
        "ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) HBINT(1) MAXINST(1)",
    );
    let mut silent = std::net::TcpStream::connect(("127.0.0.1", qm.amqp_port())).expect("connect");
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    let began = Instant::now();
    let mut buf = [0u8; 64];
    let n = std::io::Read::read(&mut silent, &mut buf).expect("the server closes, no timeout");
    assert_eq!(n, 0, "the server sent nothing and closed the socket");
    let took = began.elapsed();
    assert!(
        took >= Duration::from_millis(800) && took < Duration::from_secs(5),
        "closed after about HBINT(1) seconds, not {took:?}"
    );
    // Its MAXINST(1) place is free again.
    let mut client = AmqpTestClient::connect(&qm, "itest-after-silent");
    client.attach_sender("SYSTEM.DEFAULT.LOCAL.QUEUE");
}

/// A deep queue's bodies beyond DefaultPQBufferSize stay in its queue file: after a
/// restart an AMQP receiver still gets every durable message, in order and intact, each
/// body read back from disk as it is delivered (held until accepted).
#[test]
fn a_receiver_gets_bodies_left_in_the_queue_file() {
    let mut qm = start("AMQP.DEEP");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let body = |i: usize| format!("{i:04}-{}", "z".repeat(20 * 1024));
    let mut c = AmqpTestClient::connect(&qm, "itest-deep");
    let sender = c.attach_sender("Q");
    for i in 0..40 {
        c.send_accepted(sender, &data_message(&body(i), true));
    }
    c.close();
    // The controlled stop files them; the restart keeps 128 KiB of bodies in memory.
    stop_qm(&mut qm);
    qm.launch();
    let mut c = AmqpTestClient::connect(&qm, "itest-deep-2");
    let receiver = c.attach_receiver("Q", 10);
    for i in 0..40 {
        let (id, _, m) = c.receive(receiver);
        assert!(data_text(&m) == body(i), "message {i} intact and in order");
        c.accept(id);
        if i % 10 == 9 {
            c.conn.grant_credit(receiver, 10).expect("grant credit");
            c.flush();
        }
    }
    wait_depth(&qm, "Q", 0);
    c.close();
}

// ---- Hostile clients (issue 18): each test below is one way a client could take the
// service away from everyone else, and what the queue manager does about it. ----

/// The server process's resident set size in bytes.
fn rss_bytes(qm: &TestQueueManager) -> u64 {
    let pid = qm.pid().expect("the test started the server");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS in /proc/<pid>/status");
    kb * 1024
}

/// Polls `q`'s CURDEPTH until it has not changed for a second; returns it.
fn settled_depth(qm: &TestQueueManager, q: &str) -> i64 {
    let deadline = Instant::now() + DEADLINE;
    let mut last = qstatus_depth(qm, q);
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = qstatus_depth(qm, q);
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= Duration::from_secs(1) {
            return now;
        }
        assert!(Instant::now() < deadline, "CURDEPTH of {q} keeps moving");
    }
}

/// Makes the client's socket receive buffer small, so a client that stops reading
/// stops the server's writes early.
fn small_receive_buffer(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let size: libc::c_int = 16 * 1024;
    // SAFETY: setsockopt on a socket this test owns, with a c_int option value.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "setsockopt SO_RCVBUF");
}

impl AmqpTestClient {
    /// Writes a frame behind the state machine's back (what a hostile client sends).
    fn send_raw_frame(&mut self, channel: u16, p: &Performative) {
        self.flush();
        let mut out = BytesMut::new();
        ferry_amqp::encode_frame(channel, p, &[], &mut out);
        self.stream.write_all(&out).expect("write a raw frame");
    }

    /// Waits for the server to close the connection; returns its error.
    #[track_caller]
    fn expect_closed(&mut self, what: &str) -> Option<ErrorCondition> {
        let Event::Closed { error, .. } = self.expect(what, |e| matches!(e, Event::Closed { .. }))
        else {
            unreachable!()
        };
        error
    }

    /// Sends `message` pre-settled on `link` (at most once: no outcome comes back).
    fn send_settled(&mut self, link: LinkId, message: &Message) {
        self.wait("credit to send", |c| c.conn.credit(link) > 0);
        let mut body = BytesMut::new();
        message.encode(&mut body);
        self.next_tag += 1;
        let tag = Bytes::copy_from_slice(&self.next_tag.to_be_bytes());
        self.conn
            .send_bytes(link, tag, true, 0, body.freeze())
            .expect("send");
        self.flush();
    }

    /// Waits for the detach of `link` (a refusal); returns its error.
    #[track_caller]
    fn expect_detach_error(&mut self, link: LinkId) -> ErrorCondition {
        let Event::Detach { error, .. } = self.expect(
            &format!("the detach of {link:?}"),
            |e| matches!(e, Event::Detach { link: l, .. } if *l == link),
        ) else {
            unreachable!()
        };
        error.expect("the detach carries an error")
    }

    /// Attaches a receiver from `address` with `attach` adjusted by `adjust`, grants
    /// `credit`, and returns the link with the server's answering attach.
    fn attach_receiver_with(
        &mut self,
        address: &str,
        credit: u32,
        adjust: impl FnOnce(&mut ferry_amqp::Attach),
    ) -> (LinkId, Box<ferry_amqp::Attach>) {
        let name = self.link_name("receiver");
        let mut attach = ferry_amqp::Attach {
            name: name.into(),
            role: Role::Receiver,
            source: Some(Source {
                address: Some(address.into()),
                ..Source::default()
            }),
            target: Some(LinkTarget::Node(Target::default())),
            ..ferry_amqp::Attach::default()
        };
        adjust(&mut attach);
        let session = self.session();
        let link = self.conn.attach(session, attach).expect("attach receiver");
        let Event::Attached { attach, .. } = self.expect(
            &format!("the answer to the receiver attach to {address}"),
            |e| matches!(e, Event::Attached { link: l, .. } if *l == link),
        ) else {
            unreachable!()
        };
        if credit > 0 {
            self.conn.grant_credit(link, credit).expect("grant credit");
            self.flush();
        }
        (link, attach)
    }

    /// Reads for `how_long`, collecting the messages that arrive on `link`.
    fn collect_for(&mut self, link: LinkId, how_long: Duration) -> Vec<u32> {
        let until = Instant::now() + how_long;
        while Instant::now() < until {
            self.pump();
        }
        let mut ids = Vec::new();
        self.events.retain(|e| match e {
            Event::Message {
                link: l,
                delivery_id,
                ..
            } if *l == link => {
                ids.push(*delivery_id);
                false
            }
            _ => true,
        });
        ids
    }
}

/// Issue 18, point 1: a disposition for every delivery id (0..=0xFFFFFFFF, or a range
/// that wraps around) costs what the connection holds, not four billion steps: another
/// client is answered meanwhile, and the delivery it covers is accepted.
#[test]
fn a_disposition_over_every_delivery_id_is_answered_at_once() {
    let qm = start("AMQP.DISP");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)\nDEFINE QLOCAL(R)");
    let mut other = AmqpTestClient::connect(&qm, "itest-other");
    let other_sender = other.attach_sender("R");
    let mut c = AmqpTestClient::connect(&qm, "itest-disp");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("held", false));
    let receiver = c.attach_receiver("Q", 10);
    let (id, _, _) = c.receive(receiver);
    let session = c.session();
    for (first, last) in [(0, u32::MAX), (id.wrapping_add(1), id)] {
        c.conn
            .disposition(
                session,
                Role::Receiver,
                first,
                last,
                true,
                Some(DeliveryState::Accepted),
            )
            .expect("disposition");
        c.flush();
        let began = Instant::now();
        other.send_accepted(other_sender, &data_message("served", false));
        let took = began.elapsed();
        assert!(
            took < Duration::from_secs(1),
            "another client is answered within a second of a disposition {first}..={last}, not {took:?}"
        );
    }
    wait_depth(&qm, "Q", 0);
    c.send_accepted(sender, &data_message("still served", false));
    c.close();
}

/// Issue 18, point 2: before the AMQP open is done a peer may send frames of 512 bytes
/// at most (AMQP 1.0 section 2.7.1): a SASL frame header claiming 1 MiB is refused at
/// once (not waited for), and an open frame over 512 bytes is closed with
/// amqp:connection:framing-error.
#[test]
fn frames_over_512_bytes_before_open_are_refused() {
    let qm = start("AMQP.PREOPEN");
    let mut s = TcpStream::connect(("127.0.0.1", qm.amqp_port())).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    s.write_all(b"AMQP\x03\x01\x00\x00").expect("SASL header");
    // Size 1 MiB, doff 2, SASL frame, channel 0: the header alone.
    s.write_all(&[0, 0x10, 0, 0, 2, 1, 0, 0])
        .expect("frame header");
    let began = Instant::now();
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) => panic!(
                "the server kept the socket open ({e}) after {:?}",
                began.elapsed()
            ),
        }
    }
    assert!(
        began.elapsed() < Duration::from_secs(5),
        "refused at once, not after {:?}",
        began.elapsed()
    );
    assert!(got.starts_with(b"AMQP\x03\x01\x00\x00"), "{got:?}");

    let mut c = AmqpTestClient::socket(&qm);
    let mut open = Open::new("itest-big-open");
    open.hostname = Some("h".repeat(600).as_str().into());
    c.conn.open(open).expect("open");
    let error = c
        .expect_closed("the close of a connection whose open is over 512 bytes")
        .expect("the close carries an error");
    assert_eq!(
        error.condition.as_str(),
        condition::FRAMING_ERROR,
        "{error:?}"
    );

    // A client that keeps to 512 bytes is served.
    let c = AmqpTestClient::connect(&qm, "itest-small-open");
    c.close();
}

/// Issue 18, point 2: a frame header makes the server keep only what arrived, not the
/// size it claims. 200 opened connections each send the header of a 1 MiB frame and
/// one byte; the server's RSS grows by far less than 1 MiB each.
#[test]
fn a_frame_header_alone_does_not_reserve_the_size_it_claims() {
    let qm = start("AMQP.RESERVE");
    let n = 200u64;
    let mut clients: Vec<AmqpTestClient> = (0..n)
        .map(|i| AmqpTestClient::connect(&qm, &format!("itest-reserve-{i}")))
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_bytes(&qm);
    for c in &mut clients {
        c.stream
            .write_all(&[0, 0x10, 0, 0, 2, 0, 0, 0, 0x00])
            .expect("a frame header");
    }
    std::thread::sleep(Duration::from_secs(1));
    let after = rss_bytes(&qm);
    let per = after.saturating_sub(before) / n;
    eprintln!("RSS {before} -> {after}: {per} bytes per connection");
    assert!(
        per < 32 * 1024,
        "each connection cost {per} bytes of RSS for a 9-byte partial frame"
    );
    // The process still serves.
    let c = AmqpTestClient::connect(&qm, "itest-after-reserve");
    c.close();
}

/// Issue 18, point 2: an idle connection holds no read buffer. 300 connections with a
/// session and a sending link each, then nothing, and 300 sockets that never send a byte:
/// the server's RSS grows by far less than a 64 KiB buffer each.
#[test]
fn idle_opened_connections_hold_little_memory() {
    let qm = start("AMQP.IDLE.RSS");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut warm = AmqpTestClient::connect(&qm, "itest-warm");
    warm.attach_sender("Q");
    std::thread::sleep(Duration::from_millis(500));
    let before = rss_bytes(&qm);
    let n = 300u64;
    let mut clients = Vec::new();
    let mut silent = Vec::new();
    for i in 0..n {
        let mut c = AmqpTestClient::connect(&qm, &format!("itest-idle-{i}"));
        let sender = c.attach_sender("Q");
        c.send_accepted(sender, &data_message("x", false));
        clients.push(c);
        silent.push(TcpStream::connect(("127.0.0.1", qm.amqp_port())).expect("connect"));
    }
    std::thread::sleep(Duration::from_millis(500));
    let after = rss_bytes(&qm);
    let per = after.saturating_sub(before) / n;
    eprintln!(
        "an idle opened AMQP connection and a silent socket: RSS {before} -> {after}, {per} bytes"
    );
    assert!(
        per < 48 * 1024,
        "an idle connection and a silent socket cost {per} bytes"
    );
}

/// Issue 18, point 6: link credit is a uint: 0x7fffffff, 0x80000000 and 0xffffffff all
/// deliver.
#[test]
fn link_credit_of_2_to_the_31_and_more_delivers() {
    let qm = start("AMQP.CREDIT");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-credit");
    let sender = c.attach_sender("Q");
    for credit in [0x7fff_ffffu32, 0x8000_0000, u32::MAX] {
        let body = format!("credit {credit:#x}");
        c.send_accepted(sender, &data_message(&body, false));
        let receiver = c.attach_receiver("Q", credit);
        let (id, _, m) = c.receive(receiver);
        assert_eq!(data_text(&m), body, "credit {credit:#x} delivers");
        c.accept(id);
        c.conn.detach(receiver, true, None).expect("detach");
        c.flush();
        wait_depth(&qm, "Q", 0);
    }
    c.close();
}

/// Issue 18, point 9: a handle above handle-max and a channel above channel-max close
/// the connection with amqp:connection:framing-error (AMQP 1.0 sections 2.7.2, 2.7.3).
#[test]
fn a_handle_or_channel_above_the_maximum_closes_with_framing_error() {
    let qm = start("AMQP.HMAX");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-hmax");
    let attach = ferry_amqp::Attach {
        name: "too-high".into(),
        handle: 70_000,
        role: Role::Sender,
        source: Some(Source::default()),
        target: Some(LinkTarget::Node(Target {
            address: Some("Q".into()),
            ..Target::default()
        })),
        ..ferry_amqp::Attach::default()
    };
    c.send_raw_frame(0, &Performative::Attach(Box::new(attach)));
    let error = c
        .expect_closed("the close for a handle above handle-max")
        .expect("with an error");
    assert_eq!(
        error.condition.as_str(),
        condition::FRAMING_ERROR,
        "{error:?}"
    );

    let mut c = AmqpTestClient::connect(&qm, "itest-cmax");
    let begin = a_begin();
    c.send_raw_frame(60_000, &Performative::Begin(begin));
    let error = c
        .expect_closed("the close for a channel above channel-max")
        .expect("with an error");
    assert_eq!(
        error.condition.as_str(),
        condition::FRAMING_ERROR,
        "{error:?}"
    );
}

/// Puts `n` + 1 messages of 10 KiB on queue Q over AMQP: `n` pre-settled, then one
/// unsettled whose outcome says they are all there.
fn fill_with_10_kib_messages(qm: &TestQueueManager, container: &str, n: i64) {
    let mut p = AmqpTestClient::connect(qm, container);
    let sender = p.attach_sender("Q");
    let body = "b".repeat(10 * 1024);
    for _ in 0..n {
        p.send_settled(sender, &data_message(&body, false));
    }
    let id = p.send(sender, &data_message(&body, false));
    assert_eq!(p.outcome(id), Some(DeliveryState::Accepted));
    p.close();
}

/// A begin frame for a session the state machine does not know of (sent raw on any
/// channel).
fn a_begin() -> ferry_amqp::Begin {
    ferry_amqp::Begin {
        remote_channel: None,
        next_outgoing_id: 0,
        incoming_window: 100,
        outgoing_window: 100,
        handle_max: 10,
        offered_capabilities: Vec::new(),
        desired_capabilities: Vec::new(),
        properties: Vec::new(),
    }
}

/// Issue 18, point 9: a link refused because the connection has MAXHANDS handles open
/// (MQRC 2017) is refused with amqp:resource-limit-exceeded, not internal-error.
#[test]
fn running_out_of_maxhands_refuses_the_attach_with_resource_limit_exceeded() {
    let qm = start("AMQP.MAXHANDS");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)\nALTER QMGR MAXHANDS(1)");
    let mut c = AmqpTestClient::connect(&qm, "itest-maxhands");
    let first = c.attach_sender("Q");
    let (link, attach) = c.attach_sender_raw("Q");
    assert!(attach.target.is_none(), "refused: {attach:?}");
    let error = c.expect_detach_error(link);
    assert_eq!(
        error.condition.as_str(),
        condition::RESOURCE_LIMIT_EXCEEDED,
        "{error:?}"
    );
    assert!(
        error
            .description
            .as_ref()
            .is_some_and(|d| d.as_str().contains("2017")),
        "{error:?}"
    );
    c.send_accepted(first, &data_message("the first link works", false));
    c.close();
}

/// Issue 18, point 9: pre-settled transfers that cannot be put do not vanish: they go to
/// the dead-letter queue with an MQDLH giving the reason (as MQ's channel agents do), are
/// counted, and FRY9544W reports them: one line, then a count per SuppressInterval.
#[test]
fn presettled_transfers_to_a_full_queue_go_to_the_dead_letter_queue() {
    let qm = start("AMQP.DLQ");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(1)");
    let mut c = AmqpTestClient::connect(&qm, "itest-dlq");
    let sender = c.attach_sender("Q");
    for i in 0..3 {
        c.send_settled(sender, &data_message(&format!("settled {i}"), false));
    }
    // An unsettled one after them: its outcome says the others were handled.
    let id = c.send(sender, &data_message("unsettled", false));
    assert!(
        matches!(c.outcome(id), Some(DeliveryState::Rejected { .. })),
        "the queue is full"
    );
    assert_eq!(qstatus_depth(&qm, "Q"), 1);
    assert_eq!(
        qstatus_depth(&qm, "SYSTEM.DEAD.LETTER.QUEUE"),
        2,
        "the two pre-settled messages that did not fit are dead-lettered"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let (md, data) = rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "SYSTEM.DEAD.LETTER.QUEUE", OpenOptions::INPUT_SHARED).await;
        let (md, got) = get(&q).await.expect("get from the dead-letter queue");
        (md, got.data.to_vec())
    });
    assert_eq!(md.format.as_bytes(), b"MQDEAD  ", "{md:?}");
    assert_eq!(&data[..4], b"DLH ", "an MQDLH heads the body");
    let reason = i32::from_le_bytes([data[8], data[9], data[10], data[11]]);
    assert_eq!(reason, 2053, "the MQDLH's reason is MQRC_Q_FULL");
    assert_eq!(&data[12..14], b"Q ", "DestQName");
    let log = qm.error_log();
    assert_eq!(
        log.matches("FRY9544W: A pre-settled message").count(),
        1,
        "one line per interval, not one per message: {log}"
    );
    assert!(
        log.contains("could not be put on queue 'Q'")
            && log.contains("put to the dead-letter queue 'SYSTEM.DEAD.LETTER.QUEUE'"),
        "{log}"
    );
    c.close();

    // Without a dead-letter queue they are discarded, and still reported.
    let qm = start("AMQP.NODLQ");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(1)\nALTER QMGR DEADQ(' ')");
    let mut c = AmqpTestClient::connect(&qm, "itest-nodlq");
    let sender = c.attach_sender("Q");
    c.send_settled(sender, &data_message("fits", false));
    c.send_settled(sender, &data_message("does not fit", false));
    let id = c.send(sender, &data_message("unsettled", false));
    assert!(matches!(
        c.outcome(id),
        Some(DeliveryState::Rejected { .. })
    ));
    assert_eq!(qstatus_depth(&qm, "SYSTEM.DEAD.LETTER.QUEUE"), 0);
    wait_until("FRY9544W in the error log", || {
        qm.error_log().contains("FRY9544W")
    });
    assert!(qm.error_log().contains("discarded"), "{}", qm.error_log());
    c.close();
}

/// Issue 18, limits: links per connection (AmqpMaxLinks), across its sessions, are
/// announced as each session's handle-max; an attach beyond them is refused with
/// amqp:resource-limit-exceeded; the connection carries on, and a link detached frees its
/// place.
#[test]
fn links_per_connection_are_limited() {
    let qm = start_with_limits("AMQP.LINKS", &[("AmqpMaxLinks", "3")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::start(&qm, "itest-links");
    let Event::Begin { begin, .. } =
        c.expect("the server's begin", |e| matches!(e, Event::Begin { .. }))
    else {
        unreachable!()
    };
    assert_eq!(begin.handle_max, 2, "handle-max announces 3 links");
    let first = c.attach_sender("Q");
    c.attach_sender("Q");
    // A second session: the limit is the connection's.
    let other = c.conn.begin().expect("a second session");
    c.flush();
    c.expect("the second begin", |e| matches!(e, Event::Begin { .. }));
    c.session = Some(other);
    let third = c.attach_sender("Q");
    let (extra, attach) = c.attach_sender_raw("Q");
    assert!(attach.target.is_none(), "the fourth link is refused");
    let error = c.expect_detach_error(extra);
    assert_eq!(
        error.condition.as_str(),
        condition::RESOURCE_LIMIT_EXCEEDED,
        "{error:?}"
    );
    c.send_accepted(first, &data_message("still served", false));
    c.conn.detach(third, true, None).expect("detach");
    c.flush();
    let again = c.attach_sender("Q");
    c.send_accepted(again, &data_message("a freed place", false));
    c.close();
}

/// Issue 18, limits: sessions per connection (AmqpMaxSessions) are announced as
/// channel-max; a begin above it closes the connection with framing-error.
#[test]
fn sessions_per_connection_are_limited() {
    let qm = start_with_limits("AMQP.SESSIONS", &[("AmqpMaxSessions", "2")]);
    let mut c = AmqpTestClient::start(&qm, "itest-sessions");
    let Event::Open(open) = c.expect("the server's open", |e| matches!(e, Event::Open(_))) else {
        unreachable!()
    };
    assert_eq!(open.channel_max, 1, "channel-max announces 2 sessions");
    c.expect("the begin", |e| matches!(e, Event::Begin { .. }));
    let second = c.conn.begin().expect("a second session");
    assert_eq!(second.0, 1);
    c.flush();
    c.expect("the second begin", |e| matches!(e, Event::Begin { .. }));
    let begin = a_begin();
    c.send_raw_frame(2, &Performative::Begin(begin));
    let error = c
        .expect_closed("the close for a third session")
        .expect("with an error");
    assert_eq!(
        error.condition.as_str(),
        condition::FRAMING_ERROR,
        "{error:?}"
    );
}

/// Issue 18, limits: a client that grants 2^32-1 credit and never settles holds at most
/// AmqpMaxUnsettledPerLink deliveries; settling them lets more come.
#[test]
fn unsettled_deliveries_per_link_are_limited() {
    let qm = start_with_limits("AMQP.UNSETTLED", &[("AmqpMaxUnsettledPerLink", "5")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-unsettled");
    let sender = c.attach_sender("Q");
    for i in 0..20 {
        c.send_accepted(sender, &data_message(&format!("m{i}"), false));
    }
    let receiver = c.attach_receiver("Q", 0x7fff_ffff);
    let first = c.collect_for(receiver, Duration::from_secs(1));
    assert_eq!(
        first.len(),
        5,
        "five unsettled deliveries at most: {first:?}"
    );
    for id in first {
        c.accept(id);
    }
    let more = c.collect_for(receiver, Duration::from_secs(1));
    assert_eq!(more.len(), 5, "settling them lets five more come: {more:?}");
    c.close();
}

/// Issue 18, limits: the bodies of unsettled deliveries stay in the server's memory until
/// settled, so what a client may hold unsettled is bounded in bytes too
/// (AmqpMaxUnsettledBytes), not only in messages: 64 KiB of 10 KiB messages is seven
/// (the last one over), and settling them lets more come. A message larger than the bound
/// still goes, alone.
#[test]
fn unsettled_deliveries_are_limited_in_bytes() {
    let qm = start_with_limits("AMQP.UNSETTLEDB", &[("AmqpMaxUnsettledBytes", "65536")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)\nDEFINE QLOCAL(BIG)");
    let mut c = AmqpTestClient::connect(&qm, "itest-unsettled-bytes");
    let sender = c.attach_sender("Q");
    let body = "b".repeat(10 * 1024);
    for _ in 0..30 {
        c.send_accepted(sender, &data_message(&body, false));
    }
    let receiver = c.attach_receiver("Q", 0x7fff_ffff);
    let first = c.collect_for(receiver, Duration::from_secs(1));
    assert!(
        (6..=8).contains(&first.len()),
        "about 64 KiB of 10 KiB messages unsettled at most, got {}",
        first.len()
    );
    for id in first {
        c.accept(id);
    }
    let more = c.collect_for(receiver, Duration::from_secs(1));
    assert!(
        (6..=8).contains(&more.len()),
        "settling them lets as many more come, got {}",
        more.len()
    );
    let big_sender = c.attach_sender("BIG");
    c.send_accepted(big_sender, &data_message(&"x".repeat(200 * 1024), false));
    let big = c.attach_receiver("BIG", 10);
    assert_eq!(
        c.collect_for(big, Duration::from_secs(1)).len(),
        0,
        "64 KiB are held unsettled already"
    );
    for id in more {
        c.accept(id);
    }
    let got = c.collect_for(big, Duration::from_secs(2));
    c.close();
    // A new connection holding nothing gets the 200 KiB message, larger than the bound.
    let mut d = AmqpTestClient::connect(&qm, "itest-unsettled-big");
    let big = d.attach_receiver("BIG", 10);
    let alone = if got.is_empty() {
        d.collect_for(big, Duration::from_secs(2)).len()
    } else {
        got.len()
    };
    assert_eq!(alone, 1, "a message over the bound still goes, alone");
    d.close();
}

/// A consumer's byte window spent by a delivery opens again by itself. Eight receivers
/// share a connection (so each gets an eighth of AmqpOutputBuffer as its window) and
/// grant credit once, as a client with a large prefetch does; one of them is sent 3 KB
/// messages one at a time, each accepted before the next is put, and gets every one. (A
/// spent window used to wait for the connection to send half a window more, so a
/// request/reply requester whose connection fell quiet never got its last reply.)
#[test]
fn a_spent_byte_window_opens_again() {
    let qm = start_with_limits("AMQP.WINDOW", &[("AmqpOutputBuffer", "65536")]);
    let queues: Vec<String> = (1..=8).map(|i| format!("Q{i}")).collect();
    let defines: Vec<String> = queues
        .iter()
        .map(|q| format!("DEFINE QLOCAL({q})"))
        .collect();
    mqsc_ok(&qm, &defines.join("\n"));
    let mut c = AmqpTestClient::connect(&qm, "itest-window");
    let receivers: Vec<LinkId> = queues.iter().map(|q| c.attach_receiver(q, 500)).collect();
    let mut p = AmqpTestClient::connect(&qm, "itest-window-producer");
    let sender = p.attach_sender(&queues[7]);
    let body = "w".repeat(3000);
    for i in 0..12 {
        p.send_accepted(sender, &data_message(&body, false));
        let (id, _, m) = c.receive(receivers[7]);
        assert_eq!(data_text(&m), body, "message {i}");
        c.accept(id);
    }
    c.close();
    p.close();
}

/// Issue 18, limits: a client that grants endless credit on a pre-settled link and then
/// reads nothing does not pull the queue into the server's memory: deliveries stop once
/// what is unread reaches the output bound (and the socket's buffers).
#[test]
fn a_client_that_does_not_read_stops_its_deliveries() {
    let qm = start_with_limits("AMQP.NOREAD", &[("AmqpMaxUnsettledPerLink", "50")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(100000)");
    let n = 3000;
    fill_with_10_kib_messages(&qm, "itest-noread-producer", n);
    assert_eq!(qstatus_depth(&qm, "Q"), n + 1);
    let mut c = AmqpTestClient::connect(&qm, "itest-noread");
    small_receive_buffer(&c.stream);
    c.attach_receiver_with("Q", 0x7fff_ffff, |a| {
        a.snd_settle_mode = ferry_amqp::SenderSettleMode::Settled;
    });
    // From here on the client reads nothing.
    let depth = settled_depth(&qm, "Q");
    assert!(
        depth >= n - 1000,
        "a client that reads nothing took {} of {} messages",
        n + 1 - depth,
        n + 1
    );
    drop(c);
}

/// Issue 20, the cost of a connection: a requester (a connection that sends and also
/// receives) is told its non-persistent request was accepted with its reply, in one
/// write, not in a write of its own; a client that waits for its acceptances with
/// nothing else coming (a synchronous send on a consuming connection) still gets each,
/// within AmqpAcceptDelay, and at once after it was seen waiting twice.
#[test]
fn a_requester_hears_of_its_accepted_request_with_the_reply() {
    let qm = start_with_limits("AMQP.ACCEPTLATER", &[("AmqpAcceptDelay", "1000")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(REQUEST)");
    mqsc_ok(&qm, "DEFINE QLOCAL(REPLY)");
    mqsc_ok(&qm, "DEFINE QLOCAL(IDLE)");
    let mut requester = AmqpTestClient::connect(&qm, "itest-requester");
    let replies = requester.attach_receiver("REPLY", 10);
    let requests = requester.attach_sender("REQUEST");
    let mut responder = AmqpTestClient::connect(&qm, "itest-responder");
    let inbox = responder.attach_receiver("REQUEST", 10);
    let answers = responder.attach_sender("REPLY");
    for round in 0..3 {
        let id = requester.send(requests, &data_message(&format!("request {round}"), false));
        let (got, _, m) = responder.receive(inbox);
        assert_eq!(data_text(&m), format!("request {round}"));
        // The request went through; its acceptance waits for the requester's next frame.
        requester.pump();
        assert!(
            !requester
                .events
                .iter()
                .any(|e| matches!(e, Event::Disposition { .. })),
            "round {round}: no acceptance alone before the reply: {:?}",
            requester.events
        );
        responder.send(answers, &data_message(&format!("reply {round}"), false));
        responder.accept(got);
        let (_, _, reply) = requester.receive(replies);
        assert_eq!(data_text(&reply), format!("reply {round}"));
        assert_eq!(
            requester.outcome(id),
            Some(DeliveryState::Accepted),
            "round {round}: the request was accepted, told with the reply"
        );
    }
    // A responder left idle longer than the delay gets its reply's acceptance alone; its
    // next message comes only after its next request, so it is not taken for a client
    // that waits: twice idle, its acceptances still ride with the next request.
    responder.events.clear();
    for idle in 0..2 {
        // The delay, and the fifth of it the channel's overdue task may take.
        std::thread::sleep(Duration::from_millis(1500));
        responder.expect("the idle responder's acceptance, alone", |e| {
            matches!(
                e,
                Event::Disposition {
                    role: Role::Receiver,
                    ..
                }
            )
        });
        responder.events.clear();
        requester.send(
            requests,
            &data_message(&format!("after idle {idle}"), false),
        );
        let (got, _, _) = responder.receive(inbox);
        responder.send(
            answers,
            &data_message(&format!("reply after idle {idle}"), false),
        );
        responder.accept(got);
        requester.receive(replies);
        responder.pump();
        assert!(
            !responder
                .events
                .iter()
                .any(|e| matches!(e, Event::Disposition { .. })),
            "after idle {idle}: the reply's acceptance waits for the next request: {:?}",
            responder.events
        );
    }
    // A synchronous sender on a connection that also consumes (from a queue with
    // nothing for it): each send is answered, the first ones after the delay.
    let mut waiter = AmqpTestClient::connect(&qm, "itest-sync-sender");
    let _idle = waiter.attach_receiver("IDLE", 10);
    let out = waiter.attach_sender("REQUEST");
    for n in 0..4 {
        waiter.send_accepted(out, &data_message(&format!("sync {n}"), false));
    }
    let began = Instant::now();
    waiter.send_accepted(out, &data_message("sync 4", false));
    assert!(
        began.elapsed() < Duration::from_millis(900),
        "a client seen waiting is answered at once, not after AmqpAcceptDelay: {:?}",
        began.elapsed()
    );
    // A JMS requester on a shared reply queue attaches a consumer (with a selector) for
    // each reply and detaches it after: between replies it has no consumer, yet its next
    // request's acceptance still waits, and comes with the answer to its next attach.
    let mut jms = AmqpTestClient::connect(&qm, "itest-consumer-per-reply");
    let out = jms.attach_sender("REQUEST");
    let once = jms.attach_receiver("IDLE", 1);
    jms.conn.detach(once, true, None).expect("detach");
    jms.flush();
    let id = jms.send(out, &data_message("request", false));
    responder.receive(inbox);
    jms.pump();
    assert!(
        !jms.events
            .iter()
            .any(|e| matches!(e, Event::Disposition { .. })),
        "no acceptance alone before the next attach: {:?}",
        jms.events
    );
    jms.attach_receiver("IDLE", 1);
    assert_eq!(
        jms.outcome(id),
        Some(DeliveryState::Accepted),
        "the request's acceptance came with the attach's answer"
    );
    requester.close();
    responder.close();
    waiter.close();
    jms.close();
}

/// Issue 18, time limits: a socket that connects and says nothing is closed after
/// HandshakeTimeout (qm.ini Limits), whatever HBINT is.
#[test]
fn a_silent_socket_is_closed_after_the_handshake_timeout() {
    let qm = start_with_limits("AMQP.HANDSHAKE", &[("HandshakeTimeout", "2")]);
    let mut silent = TcpStream::connect(("127.0.0.1", qm.amqp_port())).expect("connect");
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    let began = Instant::now();
    let mut buf = [0u8; 64];
    let n = silent
        .read(&mut buf)
        .expect("the server closes the socket before the read times out");
    assert_eq!(n, 0);
    let took = began.elapsed();
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(5),
        "closed after about 2 s, not {took:?}"
    );
}

/// Issue 18, time limits: a connection that stops in the middle of a frame is closed
/// after PartialFrameTimeout, and FRY9505E says why.
#[test]
fn a_connection_that_stops_mid_frame_is_closed() {
    let qm = start_with_limits("AMQP.PARTIAL", &[("PartialFrameTimeout", "2")]);
    let mut c = AmqpTestClient::connect(&qm, "itest-partial");
    c.stream
        .write_all(&[0, 0, 1])
        .expect("three bytes of a frame");
    let began = Instant::now();
    let error = c
        .expect_closed("the close of a connection stalled mid-frame")
        .expect("with an error");
    let took = began.elapsed();
    assert!(took < Duration::from_secs(6), "closed after {took:?}");
    assert_eq!(
        error.condition.as_str(),
        condition::RESOURCE_LIMIT_EXCEEDED,
        "{error:?}"
    );
    wait_until("FRY9505E in the error log", || {
        qm.error_log().contains("FRY9505E")
    });
}

/// Issue 18, time limits: the server's idle-time-out (HBINT) holds whatever the client's
/// open announces: a client that opens with no idle-time-out and then sends nothing is
/// closed.
#[test]
fn a_client_without_idle_timeout_that_goes_silent_is_closed() {
    let qm = start("AMQP.IDLE");
    mqsc_ok(&qm, "ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) HBINT(1)");
    let mut c = AmqpTestClient::connect(&qm, "itest-idle");
    // The client announced no idle-time-out and now sends nothing, heartbeats included.
    let began = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    c.stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("read timeout");
    loop {
        match c.stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buf[..n]),
            Err(e) => panic!("still open after {:?}: {e}", began.elapsed()),
        }
    }
    assert!(
        began.elapsed() < Duration::from_secs(6),
        "{:?}",
        began.elapsed()
    );
    let mut input = BytesMut::from(&received[..]);
    let mut events = Vec::new();
    c.conn.receive(&mut input, 0, &mut events);
    let closed = events.iter().find_map(|e| match e {
        Event::Closed { error, .. } => Some(error.clone()),
        _ => None,
    });
    let error = closed.flatten().expect("closed with an error");
    assert_eq!(error.condition.as_str(), condition::RESOURCE_LIMIT_EXCEEDED);
}

/// Issue 18, point 5: a selector longer than MQ_SELECTOR_LENGTH (10,240 bytes) is
/// refused at attach with amqp:invalid-field, before it is parsed.
#[test]
fn a_selector_over_the_maximum_length_is_refused() {
    let qm = start("AMQP.SELECTOR");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-selector");
    let selector = vec!["a = 1"; 4000].join(" OR ");
    let began = Instant::now();
    let (link, attach) = c.attach_receiver_with("Q", 0, |a| {
        if let Some(source) = a.source.as_mut() {
            source.filter = vec![(
                ferry_amqp::Symbol::from_static("jms-selector"),
                Value::described(
                    ferry_amqp::Descriptor::Symbol(ferry_amqp::Symbol::from_static(
                        condition::SELECTOR_FILTER_SYMBOL,
                    )),
                    Value::from(selector.as_str()),
                ),
            )];
        }
    });
    assert!(
        attach.source.is_none(),
        "refused: the answering attach has a null source"
    );
    let error = c.expect_detach_error(link);
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(
        error.condition.as_str(),
        condition::INVALID_FIELD,
        "{error:?}"
    );
    assert!(
        error
            .description
            .as_ref()
            .is_some_and(|d| d.as_str().contains("10240")),
        "{error:?}"
    );
    c.close();
}

/// Issue 18, limits: incomplete multi-frame messages of one connection hold at most
/// AmqpMaxIncompleteBytes together (one message alone may still reach MAXMSGL): the link
/// whose frame would pass it is detached with amqp:resource-limit-exceeded.
#[test]
fn incomplete_messages_per_connection_are_limited() {
    let qm = start_with_limits("AMQP.INCOMPLETE", &[("AmqpMaxIncompleteBytes", "65536")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut c = AmqpTestClient::connect(&qm, "itest-incomplete");
    let one = c.attach_sender("Q");
    let two = c.attach_sender("Q");
    let part = vec![b'p'; 40 * 1024];
    for (link, id) in [(one, 100u32), (two, 101)] {
        let t = ferry_amqp::Transfer {
            handle: link.handle,
            delivery_id: Some(id),
            delivery_tag: Some(Bytes::copy_from_slice(&id.to_be_bytes())),
            message_format: Some(0),
            settled: Some(true),
            more: true,
            ..ferry_amqp::Transfer::default()
        };
        let mut out = BytesMut::new();
        ferry_amqp::encode_transfer(0, &t, &part, &mut out);
        c.stream.write_all(&out).expect("a first frame");
    }
    let error = c.expect_detach_error(two);
    assert_eq!(
        error.condition.as_str(),
        condition::RESOURCE_LIMIT_EXCEEDED,
        "{error:?}"
    );
    let third = c.attach_sender("Q");
    c.send_accepted(third, &data_message("the connection carries on", false));
}

/// Issue 18, time limits: a client that stops reading while the server has frames for it
/// is closed after AmqpSendTimeout; its unsettled deliveries go back to the queue.
#[test]
fn a_client_that_stops_reading_is_closed_after_the_send_timeout() {
    let qm = start_with_limits("AMQP.SENDTIMEOUT", &[("AmqpSendTimeout", "2")]);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(100000)");
    let n = 2000;
    fill_with_10_kib_messages(&qm, "itest-st-producer", n);
    let mut c = AmqpTestClient::connect(&qm, "itest-st");
    small_receive_buffer(&c.stream);
    c.attach_receiver("Q", 0x7fff_ffff);
    wait_until("the stalled connection is closed", || {
        let text = mqsc_ok(&qm, "DISPLAY CHSTATUS(SYSTEM.DEF.AMQP)");
        attr(&text, "CONNS").as_deref() == Some("0")
    });
    wait_depth(&qm, "Q", n + 1);
    drop(c);
}

/// The outcome of a transfer put in transaction `txn`: accepted, provisionally.
fn accepted_in(txn: &Bytes) -> Option<DeliveryState> {
    Some(DeliveryState::Transactional {
        txn_id: txn.clone(),
        outcome: Some(Box::new(DeliveryState::Accepted)),
    })
}

/// A native MQGET without wait from `q`: the body as text, or the MQ reason.
fn native_get(
    rt: &tokio::runtime::Runtime,
    qm: &TestQueueManager,
    q: &str,
) -> Result<String, ferry_mqi::ReasonCode> {
    rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, q, OpenOptions::INPUT_SHARED).await;
        get(&q)
            .await
            .map(|(_, got)| String::from_utf8_lossy(&got.data).into_owned())
            .map_err(|e| e.reason)
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The condition of a `rejected` outcome.
fn rejection(state: &Option<DeliveryState>) -> Option<String> {
    match state {
        Some(DeliveryState::Rejected { error: Some(e) }) => Some(e.condition.as_str().to_string()),
        _ => None,
    }
}

/// MQRC_NO_MSG_AVAILABLE.
const NO_MSG_AVAILABLE: ferry_mqi::ReasonCode = ferry_mqi::ReasonCode::NoMsgAvailable;

/// A transacted session's commit (Qpid JMS: declare, work, discharge): a send inside the
/// transaction is invisible until the discharge, then there; a message accepted inside
/// it is gone for good once the discharge is accepted, even after a kill -9.
#[test]
fn a_committed_transaction_publishes_its_sends_and_removes_its_receives() {
    let mut qm = start("AMQP.TXCOMMIT");
    mqsc_ok(&qm, "DEFINE QLOCAL(TX.IN)\nDEFINE QLOCAL(TX.OUT)");
    let rt = runtime();
    let mut c = AmqpTestClient::connect(&qm, "itest-tx-commit");
    let feed = c.attach_sender("TX.IN");
    c.send_accepted(feed, &data_message("request", true));

    let coordinator = c.attach_coordinator();
    let txn = c.declare(coordinator);
    let receiver = c.attach_receiver("TX.IN", 10);
    let (id, _, m) = c.receive(receiver);
    assert_eq!(data_text(&m), "request");
    c.accept_in(id, &txn);
    let out = c.attach_sender("TX.OUT");
    assert_eq!(
        c.send_in(out, &data_message("reply", true), &txn),
        accepted_in(&txn),
        "a transactional transfer is accepted provisionally"
    );
    assert_eq!(
        native_get(&rt, &qm, "TX.OUT"),
        Err(NO_MSG_AVAILABLE),
        "an uncommitted send is not visible"
    );
    // The transacted session is a connection of its own, on the AMQP channel, with the
    // unit of work open.
    let shown = mqsc_ok(&qm, "DISPLAY CONN(*) WHERE(UOWSTATE EQ ACTIVE) CHANNEL");
    assert_eq!(attrs(&shown, "CONN").len(), 1, "{shown}");
    assert_eq!(
        attr(&shown, "CHANNEL").as_deref(),
        Some("SYSTEM.DEF.AMQP"),
        "{shown}"
    );

    assert_eq!(
        c.discharge(coordinator, &txn, false),
        Some(DeliveryState::Accepted),
        "the commit is accepted"
    );
    assert_eq!(
        native_get(&rt, &qm, "TX.OUT").as_deref(),
        Ok("reply"),
        "the committed send is visible"
    );
    wait_depth(&qm, "TX.IN", 0);
    let shown = mqsc_ok(&qm, "DISPLAY CONN(*) WHERE(UOWSTATE EQ ACTIVE)");
    assert!(attrs(&shown, "CONN").is_empty(), "committed: {shown}");
    let again = c.discharge(coordinator, &txn, false);
    assert_eq!(
        rejection(&again).as_deref(),
        Some(condition::TRANSACTION_UNKNOWN_ID),
        "a discharged transaction is not known any more: {again:?}"
    );
    qm.kill9();
    drop(c);
    qm.launch();
    // (A fresh runtime: the old one's client tasks belonged to the killed server.)
    drop(rt);
    let rt = runtime();
    assert_eq!(
        native_get(&rt, &qm, "TX.IN"),
        Err(NO_MSG_AVAILABLE),
        "a receive committed before the crash stays done"
    );
}

/// A transacted session's rollback: the sends are dropped, and a message accepted inside
/// the transaction comes back with its delivery count raised (JMSRedelivered,
/// JMSXDeliveryCount); a connection that ends with a transaction open backs it out.
#[test]
fn a_rolled_back_transaction_drops_its_sends_and_redelivers_its_receives() {
    let qm = start("AMQP.TXBACK");
    mqsc_ok(&qm, "DEFINE QLOCAL(TX.IN)\nDEFINE QLOCAL(TX.OUT)");
    let rt = runtime();
    let mut c = AmqpTestClient::connect(&qm, "itest-tx-back");
    let feed = c.attach_sender("TX.IN");
    c.send_accepted(feed, &data_message("request", true));
    let coordinator = c.attach_coordinator();
    let receiver = c.attach_receiver("TX.IN", 10);
    let out = c.attach_sender("TX.OUT");

    let txn = c.declare(coordinator);
    let (id, _, m) = c.receive(receiver);
    assert_eq!(m.header.as_ref().map_or(0, |h| h.delivery_count), 0);
    c.accept_in(id, &txn);
    assert_eq!(
        c.send_in(out, &data_message("reply", false), &txn),
        accepted_in(&txn)
    );
    assert_eq!(
        c.discharge(coordinator, &txn, true),
        Some(DeliveryState::Accepted),
        "the rollback is accepted"
    );
    let (id, _, m) = c.receive(receiver);
    assert_eq!(data_text(&m), "request", "the received message comes back");
    assert_eq!(
        m.header.as_ref().map_or(0, |h| h.delivery_count),
        1,
        "with its delivery count raised: {m:?}"
    );
    assert_eq!(
        native_get(&rt, &qm, "TX.OUT"),
        Err(NO_MSG_AVAILABLE),
        "a rolled-back send is dropped"
    );

    // A transfer naming a transaction that is not open is refused.
    let stale = c.send_in(out, &data_message("stale", false), &txn);
    assert_eq!(
        rejection(&stale).as_deref(),
        Some(condition::TRANSACTION_UNKNOWN_ID),
        "{stale:?}"
    );

    // The connection ends with a transaction open: it is backed out.
    let txn = c.declare(coordinator);
    c.accept_in(id, &txn);
    assert_eq!(
        c.send_in(out, &data_message("orphan", false), &txn),
        accepted_in(&txn)
    );
    c.close();
    assert_eq!(native_get(&rt, &qm, "TX.OUT"), Err(NO_MSG_AVAILABLE));
    assert_eq!(native_get(&rt, &qm, "TX.IN").as_deref(), Ok("request"));
}

/// A queue manager killed (-9) between declare and discharge: the uncommitted sends
/// are lost, and the message received inside the transaction is still there.
#[test]
fn a_crash_inside_a_transaction_loses_its_sends_and_keeps_its_receives() {
    let mut qm = start("AMQP.TXCRASH");
    mqsc_ok(&qm, "DEFINE QLOCAL(TX.IN)\nDEFINE QLOCAL(TX.OUT)");
    let rt = runtime();
    let mut c = AmqpTestClient::connect(&qm, "itest-tx-crash");
    let feed = c.attach_sender("TX.IN");
    c.send_accepted(feed, &data_message("request", true));
    let coordinator = c.attach_coordinator();
    let txn = c.declare(coordinator);
    let receiver = c.attach_receiver("TX.IN", 10);
    let (id, _, _) = c.receive(receiver);
    c.accept_in(id, &txn);
    let out = c.attach_sender("TX.OUT");
    assert_eq!(
        c.send_in(out, &data_message("uncommitted", true), &txn),
        accepted_in(&txn)
    );
    // A committed durable send after it, on another connection, forces the log to
    // disk past the uncommitted work.
    let mut other = AmqpTestClient::connect(&qm, "itest-tx-crash-other");
    let marker = other.attach_sender("TX.OUT");
    other.send_accepted(marker, &data_message("marker", true));

    qm.kill9();
    drop(c);
    drop(other);
    qm.launch();
    assert_eq!(native_get(&rt, &qm, "TX.OUT").as_deref(), Ok("marker"));
    assert_eq!(
        native_get(&rt, &qm, "TX.OUT"),
        Err(NO_MSG_AVAILABLE),
        "the uncommitted send is lost"
    );
    assert_eq!(
        native_get(&rt, &qm, "TX.IN").as_deref(),
        Ok("request"),
        "the message received in the transaction is kept"
    );
}

#[test]
fn an_amqp_receiver_that_accepts_a_native_message_makes_its_cod() {
    use ferry_mqi::report::{feedback, options};
    let qm = start("AMQP.REPORTS");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)\nDEFINE QLOCAL(REPLY)");
    let rt = runtime();
    let mut c = AmqpTestClient::connect(&qm, "itest-reports");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &data_message("from amqp", true));
    let sent = rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "Q", OpenOptions::INPUT_SHARED | OpenOptions::OUTPUT).await;
        let (md, _) = get(&q).await.expect("the AMQP message");
        assert_eq!(
            md.report,
            options::NONE,
            "a message sent over AMQP asks for no report"
        );
        let mut md = MessageDescriptor {
            report: options::COD,
            reply_to_q: ferry_mqi::FixedStr::truncating("REPLY"),
            ..Default::default()
        };
        put_md(&q, &mut md, PutOptions::default(), "from native")
            .await
            .expect("native put");
        md
    });
    let receiver = c.attach_receiver("Q", 1);
    let (id, settled, m) = c.receive(receiver);
    assert!(!settled);
    assert_eq!(data_text(&m), "from native");
    assert_eq!(qstatus_depth(&qm, "REPLY"), 0, "no COD before the outcome");
    c.accept(id);
    wait_depth(&qm, "REPLY", 1);
    let report = rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "REPLY", OpenOptions::INPUT_SHARED).await;
        get(&q).await.expect("the COD").0
    });
    assert_eq!(report.feedback, feedback::COD);
    assert_eq!(report.correl_id, sent.msg_id);
    c.close();
}

/// A message with a `data` body and `priority` in its header.
fn priority_message(body: &str, priority: u8) -> Message {
    data_with_header(
        body,
        Header {
            priority,
            ..Header::default()
        },
    )
}

/// Issue 20, point 4: an AMQP browser (distribution-mode `copy`, a JMS QueueBrowser) has no
/// MQ browse cursor to keep: it receives each message once, also one of higher priority
/// arriving ahead of those it has browsed (which MQ's BROWSE_NEXT would pass over); a
/// message a native application locked with MQGMO_LOCK is hidden from AMQP receivers until
/// it is unlocked, and then goes to a receiver with credit at once.
#[test]
fn an_amqp_browser_sees_each_message_once_and_nothing_locked() {
    let qm = start("AMQP.BROWSE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let rt = runtime();
    let mut c = AmqpTestClient::connect(&qm, "itest-browse");
    let sender = c.attach_sender("Q");
    c.send_accepted(sender, &priority_message("low", 0));
    let (browser, _) = c.attach_receiver_with("Q", 100, |a| {
        if let Some(source) = a.source.as_mut() {
            source.distribution_mode = Some(ferry_amqp::Symbol::from_static("copy"));
        }
    });
    assert_eq!(data_text(&c.receive(browser).2), "low");
    c.send_accepted(sender, &priority_message("high", 9));
    assert_eq!(
        data_text(&c.receive(browser).2),
        "high",
        "behind the cursor, still browsed"
    );
    assert!(
        c.collect_for(browser, Duration::from_millis(300))
            .is_empty(),
        "each message once"
    );
    assert_eq!(qstatus_depth(&qm, "Q"), 2, "browsing removes nothing");

    // A native browse locks the first message in get order ("high").
    let lock = ferry_mqi::GetOptionFlags::BROWSE_FIRST | ferry_mqi::GetOptionFlags::LOCK;
    let (native, locker, locked) = rt.block_on(async {
        let conn = connect(&qm.client()).await;
        let q = open(&conn, "Q", OpenOptions::BROWSE).await;
        let (_, got) = get_with(&q, gmo(lock, 0)).await.expect("browse with lock");
        (conn, q, String::from_utf8_lossy(&got.data).into_owned())
    });
    assert_eq!(locked, "high");
    let receiver = c.attach_receiver("Q", 10);
    let (id, _, m) = c.receive(receiver);
    assert_eq!(data_text(&m), "low");
    c.accept(id);
    assert!(
        c.collect_for(receiver, Duration::from_millis(300))
            .is_empty(),
        "the locked message is not delivered"
    );
    rt.block_on(async {
        let unlock = gmo(ferry_mqi::GetOptionFlags::UNLOCK, 0);
        let got = locker
            .get(&mut MessageDescriptor::default(), &unlock, 0)
            .await;
        assert_eq!(got.expect("unlock").warning, None);
        native.disconnect().await.expect("disconnect");
    });
    let (id, _, m) = c.receive(receiver);
    assert_eq!(data_text(&m), "high", "unlocked, it is delivered at once");
    c.accept(id);
    c.close();
}
