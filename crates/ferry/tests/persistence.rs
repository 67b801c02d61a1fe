//! Persistent messaging through the recovery log, with real processes and real files:
//! persistent messages (in and out of syncpoint) survive a controlled stop and a kill -9
//! in order with MsgId, CorrelId and BackoutCount; non-persistent ones do not; a unit of
//! work in flight at a crash is backed out; a got-and-committed message does not come
//! back; CLEAR is logged; and a small crash audit kills the server at random moments
//! while putters run, then checks that every acknowledged put is there exactly once and
//! nothing unknown appears. Also: concurrent puts share flushes, slow log writes are
//! warned (AMQ_IODELAY), status shows the log, and damage or a missing log stops the start.

mod common;

use common::*;
use ferry_client::{Connection, Queue};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{GetOptionFlags, MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions};
use ferry_mqi::{MqError, ReasonCode};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const IO: OpenOptions = OpenOptions::OUTPUT
    .union(OpenOptions::INPUT_SHARED)
    .union(OpenOptions::BROWSE);

fn id(n: u8) -> [u8; 24] {
    let mut b = [0u8; 24];
    b[0] = n;
    b[23] = 0xAB;
    b
}

fn md(persistent: bool, correl: u8) -> MessageDescriptor {
    MessageDescriptor {
        persistence: if persistent {
            persistence::PERSISTENT
        } else {
            persistence::NOT_PERSISTENT
        },
        correl_id: id(correl),
        ..Default::default()
    }
}

/// What a test expects of a message on a queue.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Seen {
    body: String,
    msg_id: [u8; 24],
    correl_id: [u8; 24],
    backout_count: i32,
}

fn seen(md: &MessageDescriptor, body: &[u8]) -> Seen {
    Seen {
        body: String::from_utf8_lossy(body).into_owned(),
        msg_id: md.msg_id,
        correl_id: md.correl_id,
        backout_count: md.backout_count,
    }
}

async fn put_one(q: &Queue, persistent: bool, correl: u8, sync: bool, body: &str) -> Seen {
    let mut m = md(persistent, correl);
    let pmo = PutOptions::new(if sync {
        PutOptionFlags::SYNCPOINT
    } else {
        PutOptionFlags::NO_SYNCPOINT
    });
    put_md(q, &mut m, pmo, body)
        .await
        .unwrap_or_else(|e| panic!("put {body}: {e}"));
    Seen {
        body: body.to_string(),
        msg_id: m.msg_id,
        correl_id: m.correl_id,
        backout_count: 0,
    }
}

/// Browses the whole queue in order.
async fn browse_all(q: &Queue) -> Vec<Seen> {
    let mut out = Vec::new();
    let mut flags = GetOptionFlags::BROWSE_FIRST;
    loop {
        match get_with(q, gmo(flags | GetOptionFlags::NO_SYNCPOINT, 0)).await {
            Ok((md, got)) => out.push(seen(&md, &got.data)),
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => return out,
            Err(e) => panic!("browse: {e}"),
        }
        flags = GetOptionFlags::BROWSE_NEXT;
    }
}

/// Gets (destructively, outside syncpoint) everything on the queue, in order.
async fn drain(q: &Queue) -> Vec<Seen> {
    let mut out = Vec::new();
    loop {
        match get(q).await {
            Ok((md, got)) => out.push(seen(&md, &got.data)),
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => return out,
            Err(e) => panic!("get: {e}"),
        }
    }
}

async fn open_q(qm: &TestQueueManager, name: &str) -> (Connection, Queue) {
    let conn = connect(&qm.client()).await;
    let q = open(&conn, name, IO).await;
    (conn, q)
}

/// Kills the queue manager with SIGKILL, starts it again and opens queue `name`.
async fn reopen_after_kill9(qm: &mut TestQueueManager, name: &str) -> (Connection, Queue) {
    qm.kill9();
    qm.launch();
    open_q(qm, name).await
}

fn stop(qm: &mut TestQueueManager) {
    stop_qm(qm);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_messages_survive_stop_and_kill_9() {
    let mut qm = start("PS.SURVIVE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let (conn, q) = open_q(&qm, "Q").await;

    // Got and committed before the restarts: must not come back.
    put_one(&q, true, 90, false, "gone").await;
    assert_eq!(get_text(&q).await, "gone");

    let mut want = Vec::new();
    want.push(put_one(&q, true, 1, false, "p1").await);
    put_one(&q, false, 2, false, "np1").await;
    want.push(put_one(&q, true, 3, true, "p2-sync").await);
    want.push(put_one(&q, true, 4, true, "p3-sync").await);
    within("commit", conn.commit()).await.expect("commit");
    put_one(&q, false, 5, true, "np2-sync").await;
    within("commit", conn.commit()).await.expect("commit");
    want.push(put_one(&q, true, 6, false, "p4").await);

    // Got under syncpoint and backed out: BackoutCount 1, still first.
    let (m, _) = get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("get under syncpoint");
    assert_eq!(m.msg_id, want[0].msg_id);
    within("backout", conn.backout()).await.expect("backout");
    want[0].backout_count = 1;

    let persistent_only = |v: Vec<Seen>| -> Vec<Seen> {
        v.into_iter()
            .filter(|s| !s.body.starts_with("np"))
            .collect()
    };
    assert_eq!(persistent_only(browse_all(&q).await), want);
    conn.disconnect().await.expect("disconnect");

    stop(&mut qm);
    qm.launch();
    let (conn, q) = open_q(&qm, "Q").await;
    assert_eq!(
        browse_all(&q).await,
        want,
        "after a controlled stop: persistent messages only, in order"
    );
    drop(q);
    drop(conn);

    let (_conn, q) = reopen_after_kill9(&mut qm, "Q").await;
    assert_eq!(drain(&q).await, want, "after kill -9");
    // The controlled stop's checkpoints filed the messages: restarts read them back from
    // the queue files.
    assert!(
        qm.error_log()
            .contains("loaded 4 persistent messages from its queue files (1 queues)"),
        "the queue files' messages are in the error log: {}",
        qm.error_log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uncommitted_work_is_backed_out_and_clear_is_logged() {
    let mut qm = start("PS.UOW");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q)\nDEFINE QLOCAL(MARK)\nDEFINE QLOCAL(CLR)",
    );
    let (_c0, clr) = open_q(&qm, "CLR").await;
    put_one(&clr, true, 1, false, "cleared").await;
    drop(clr);
    drop(_c0);
    mqsc_ok(&qm, "CLEAR QLOCAL(CLR)");

    let (conn, q) = open_q(&qm, "Q").await;
    let mut a = put_one(&q, true, 1, false, "a").await;
    let b = put_one(&q, true, 2, false, "b").await;
    // A unit of work in flight: two puts and a get of "a".
    put_one(&q, true, 3, true, "uncommitted-1").await;
    put_one(&q, true, 4, true, "uncommitted-2").await;
    let (m, _) = get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("get a under syncpoint");
    assert_eq!(m.msg_id, a.msg_id);
    // An out-of-syncpoint persistent put acknowledges only once the log is durable past
    // it, so every record before it (the unit of work's) is durable too.
    let (_c2, mark) = open_q(&qm, "MARK").await;
    put_one(&mark, true, 9, false, "mark").await;

    qm.kill9();
    drop(conn);
    qm.launch();
    let (_conn, q) = open_q(&qm, "Q").await;
    a.backout_count = 1;
    assert_eq!(
        drain(&q).await,
        vec![a, b],
        "in-flight puts gone, the in-flight get backed out with BackoutCount 1"
    );
    let (_c3, clr) = open_q(&qm, "CLR").await;
    assert_eq!(drain(&clr).await, vec![], "CLEAR survives the crash");
}

/// One audit putter: puts persistent messages `tag-n` (odd n under syncpoint + commit),
/// recording each put's id before sending it and after its acknowledgement.
async fn audit_putter(
    opts: ferry_client::ConnectOptions,
    tag: String,
    attempted: Arc<Mutex<BTreeSet<String>>>,
    acked: Arc<Mutex<BTreeSet<String>>>,
) {
    let Ok(conn) = Connection::connect(&opts).await else {
        return;
    };
    let Ok(q) = conn
        .open(
            &ferry_mqi::ObjectDescriptor::queue("AUDIT").expect("name"),
            OpenOptions::OUTPUT,
        )
        .await
    else {
        return;
    };
    for n in 0u64.. {
        let body = format!("{tag}-{n}");
        let sync = n % 2 == 1;
        attempted.lock().expect("lock").insert(body.clone());
        let mut m = md(true, 0);
        let pmo = PutOptions::new(if sync {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        });
        let r: Result<(), MqError> = async {
            q.put(&mut m, &pmo, body.clone()).await?;
            if sync {
                conn.commit().await?;
            }
            Ok(())
        }
        .await;
        match r {
            Ok(()) => {
                acked.lock().expect("lock").insert(body);
            }
            Err(_) => return,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_audit_acknowledged_puts_survive_kill_9() {
    let mut qm = start("PS.AUDIT");
    mqsc_ok(&qm, "DEFINE QLOCAL(AUDIT) MAXDEPTH(999999999)");
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    let mut rng = Rng::new(seed);
    eprintln!("crash audit seed {seed}");
    let mut consumed: BTreeSet<String> = BTreeSet::new();
    for round in 0..3 {
        let attempted = Arc::new(Mutex::new(BTreeSet::new()));
        let acked = Arc::new(Mutex::new(BTreeSet::new()));
        let putters: Vec<_> = (0..4)
            .map(|p| {
                tokio::spawn(audit_putter(
                    qm.client(),
                    format!("r{round}p{p}"),
                    attempted.clone(),
                    acked.clone(),
                ))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(100 + rng.below(400) as u64)).await;
        qm.kill9();
        for p in putters {
            let _ = tokio::time::timeout(DEADLINE, p).await;
        }
        qm.launch();
        let (_conn, q) = open_q(&qm, "AUDIT").await;
        let found = drain(&q).await;
        let attempted = attempted.lock().expect("lock").clone();
        let acked = acked.lock().expect("lock").clone();
        eprintln!(
            "round {round}: {} puts attempted, {} acknowledged, {} found after restart",
            attempted.len(),
            acked.len(),
            found.len()
        );
        let mut counts: BTreeMap<String, u32> = BTreeMap::new();
        for s in &found {
            *counts.entry(s.body.clone()).or_default() += 1;
        }
        for (body, n) in &counts {
            assert_eq!(*n, 1, "round {round} (seed {seed}): {body} found {n} times");
            assert!(
                attempted.contains(body),
                "round {round} (seed {seed}): unknown message {body}"
            );
            assert!(
                !consumed.contains(body),
                "round {round} (seed {seed}): {body} was got and committed before"
            );
        }
        let missing: Vec<_> = acked.iter().filter(|b| !counts.contains_key(*b)).collect();
        assert!(
            missing.is_empty(),
            "round {round} (seed {seed}): acknowledged puts lost: {missing:?} ({} acked, {} found)",
            acked.len(),
            found.len()
        );
        assert!(
            !acked.is_empty(),
            "round {round}: some puts were acknowledged"
        );
        // Each putter's messages come back in put order.
        for p in 0..4 {
            let prefix = format!("r{round}p{p}-");
            let ns: Vec<u64> = found
                .iter()
                .filter_map(|s| s.body.strip_prefix(&prefix)?.parse().ok())
                .collect();
            assert!(
                ns.windows(2).all(|w| w[0] < w[1]),
                "round {round}: putter {p} out of order: {ns:?}"
            );
        }
        consumed.extend(counts.into_keys());
    }
}

/// A 16 KiB body that says which message it is.
fn big_body(n: usize) -> String {
    let head = format!("message {n:05} ");
    format!("{head}{}", "x".repeat(16 * 1024 - head.len()))
}

/// Puts persistent `big_body(0..)` messages out of syncpoint until the log is full (at
/// most `max`, `why` says why it must fill): checks that some were acknowledged and that
/// the refusal is 2102 MQRC_RESOURCE_PROBLEM; returns how many were acknowledged.
async fn put_until_log_full(q: &Queue, max: usize, why: &str) -> usize {
    for i in 0..max {
        let mut m = md(true, 0);
        if let Err(e) = put_md(q, &mut m, PutOptions::default(), &big_body(i)).await {
            assert_eq!(e.reason, ReasonCode::ResourceProblem, "after {i} puts: {e}");
            assert!(i > 0, "puts worked until the log filled");
            return i;
        }
    }
    panic!("{max} puts acknowledged, none refused: {why}");
}

/// Drains `q` and checks it held exactly `big_body(from..to)`, each once, in order.
async fn assert_drains_in_order(q: &Queue, from: usize, to: usize) {
    let bodies: Vec<String> = drain(q).await.into_iter().map(|s| s.body).collect();
    assert_eq!(bodies.len(), to - from, "every acknowledged put, once");
    for (i, b) in (from..to).zip(&bodies) {
        assert!(*b == big_body(i), "message {i} intact and in order");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_deeper_than_the_log_is_filed_and_survives_kill_9() {
    let mut qm = start_with_log("PS.DEEP", 2, 64);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    let (conn, q) = open_q(&qm, "Q").await;
    // 300 × 16 KiB = 4.7 MiB of persistent messages stay queued in a log of 1 MiB (2
    // primary and 2 secondary files of 256 KiB): checkpoints move them to the queue file,
    // and the log is reused.
    let n = 300;
    for i in 0..n {
        let mut m = md(true, 0);
        put_md(&q, &mut m, PutOptions::default(), &big_body(i))
            .await
            .unwrap_or_else(|e| panic!("persistent put {i} of {n}: {e}"));
    }
    let qf = qm.qm_dir().join("queues").join("Q");
    assert!(
        qf.join("QUEUE.MAN").is_file(),
        "Q's queue file exists: {}",
        qf.display()
    );
    // DISPLAY QSTATUS shows the queue file's size (one 8 MiB segment at least).
    wait_until("CURFSIZE shows Q's queue file", || {
        let status = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) CURFSIZE");
        attr(&status, "CURFSIZE")
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|mb| mb >= 8)
    });
    drop(q);
    drop(conn);
    qm.kill9();
    // What a crash in the middle of removing a queue file leaves (its manifest goes
    // first): segments without a manifest. The start removes them.
    let gone = qm.qm_dir().join("queues").join("GONE");
    std::fs::create_dir_all(&gone).expect("GONE dir");
    std::fs::copy(qf.join("Q0000001.SEG"), gone.join("Q0000001.SEG")).expect("copy segment");
    qm.launch();
    let (_conn, q) = open_q(&qm, "Q").await;
    assert!(
        !gone.exists(),
        "a queue file without a manifest is removed at start"
    );
    assert_drains_in_order(&q, 0, n).await;
    assert!(
        qm.error_log().contains("FRY7234I"),
        "the restart read the queue file: {}",
        qm.error_log()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_queue_file_that_cannot_be_written_stops_checkpoints_and_loses_nothing() {
    let mut qm = start_with_log("PS.QFFAIL", 2, 64);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    // A plain file where Q's queue file directory must go: every write of it fails, as
    // on a full or broken disk.
    let queues = qm.qm_dir().join("queues");
    std::fs::create_dir_all(&queues).expect("queues dir");
    std::fs::write(queues.join("Q"), b"in the way").expect("blocking file");
    let (conn, q) = open_q(&qm, "Q").await;
    let acked = put_until_log_full(&q, 200, "with checkpoints stopped, the 1 MiB log fills").await;
    let errors = qm.error_log();
    assert!(
        errors.contains("FRY7468E"),
        "the queue file failure is reported: {errors}"
    );
    assert!(errors.contains("FRY7463W"), "then the full log: {errors}");
    // Non-persistent work goes on, and so do gets: consumers can drain what is queued.
    put_one(&q, false, 1, false, "np").await;
    let got_now = 10.min(acked);
    for i in 0..got_now {
        assert_eq!(get_text(&q).await, big_body(i), "get {i} after the failure");
    }
    drop(q);
    drop(conn);
    // Fix the "disk" and restart after a crash: every acknowledged put not yet got is
    // there, once.
    qm.kill9();
    std::fs::remove_file(queues.join("Q")).expect("remove blocking file");
    qm.launch();
    let (_conn, q) = open_q(&qm, "Q").await;
    assert_drains_in_order(&q, got_now, acked).await;
}

/// A full disk under the queue files (a 4 MiB tmpfs over `queues/`, too small for one
/// 8 MiB segment, so the first filing gets ENOSPC from the kernel): the failure is
/// reported with the system's words, puts get 2102 once the log fills, gets go on, and
/// once the disk has room a restart after kill -9 has every acknowledged message, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_under_the_queue_files_refuses_puts_clearly_and_loses_nothing() {
    let mut qm = start_with_log("PS.ENOSPC", 2, 64);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    qm.kill9();
    let disk = match SmallDisk::mount(&qm.qm_dir().join("queues"), "4m") {
        Ok(d) => d,
        Err(why) => {
            eprintln!("skipped: cannot mount a small tmpfs to fill ({why}); needs root");
            return;
        }
    };
    qm.launch();
    let (conn, q) = open_q(&qm, "Q").await;
    let why = "with the queue files' disk full, the 512 KiB log fills";
    let acked = put_until_log_full(&q, 400, why).await;
    let errors = qm.error_log();
    let failure = errors
        .lines()
        .find(|l| l.contains("FRY7468E"))
        .unwrap_or_else(|| panic!("the queue file failure is reported: {errors}"));
    assert!(
        failure.contains("No space left on device"),
        "the report says why: {failure}"
    );
    eprintln!("{acked} puts acknowledged, then 2102; {failure}");
    let got_now = 10.min(acked);
    for i in 0..got_now {
        assert_eq!(get_text(&q).await, big_body(i), "get {i} on a full disk");
    }
    drop(q);
    drop(conn);
    qm.kill9();
    disk.grow("64m");
    qm.launch();
    let (_conn, q) = open_q(&qm, "Q").await;
    assert_drains_in_order(&q, got_now, acked).await;
    qm.kill9();
}

/// A persistent put that finds the log full waits for the checkpoint that frees it without
/// holding up the queue manager: another application's non-persistent work goes on
/// meanwhile (non-persistent work never waits for the disk), and the put succeeds once
/// the checkpoint ends. The checkpoints are made slow (FERRY_FAULT_CHECKPOINT_DELAY_MS:
/// 1.5 s of "disk" for each one's queue files).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_put_waiting_for_log_space_does_not_hold_up_other_work() {
    let mut qm = start_with_slow_checkpoints("PS.WAIT");
    // 120 × 16 KiB that stay queued fill the 1 MiB log several times over: every
    // checkpoint must file them first.
    let n = 120;
    let (pconn, pq) = open_q(&qm, "Q").await;
    let putter = tokio::spawn(async move {
        let mut slowest = Duration::ZERO;
        for i in 0..n {
            let started = std::time::Instant::now();
            let mut m = md(true, 0);
            put_md(&pq, &mut m, PutOptions::default(), &big_body(i))
                .await
                .map_err(|e| format!("put {i}: {e}"))?;
            slowest = slowest.max(started.elapsed());
        }
        drop(pq);
        drop(pconn);
        Ok::<Duration, String>(slowest)
    });
    let (_nconn, nq) = open_q(&qm, "NPQ").await;
    let mut worst = Duration::ZERO;
    let mut round_trips = 0;
    while !putter.is_finished() {
        let started = std::time::Instant::now();
        put_one(&nq, false, 1, false, "np").await;
        assert_eq!(get_text(&nq).await, "np");
        worst = worst.max(started.elapsed());
        round_trips += 1;
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let slowest_put = within("the persistent putter", putter)
        .await
        .expect("putter task")
        .expect("every persistent put succeeds once a checkpoint frees the log");
    assert_waited_aside("put", slowest_put, worst, round_trips);
    let (_conn, q) = reopen_after_kill9(&mut qm, "Q").await;
    assert_drains_in_order(&q, 0, n).await;
}

/// While a call waits for log space, its conversation has a call in progress, as in MQ:
/// another request on it is answered 2219 MQRC_CALL_IN_PROGRESS at once (so a client
/// cannot pile requests up behind it), and MQDISC drops the waiting call, which is never
/// made. Raw frames, so the test can send while a call is outstanding.
#[test]
fn a_call_waiting_for_log_space_is_a_call_in_progress() {
    use ferry_wire::{Reply, Request};
    let qm = start_with_slow_checkpoints("PS.INPROG");
    let mut r = Raw::tcp(&qm);
    let hello = r.hello("SYSTEM.DEF.SVRCONN", 0);
    assert_eq!(hello.status.reason, ReasonCode::None, "{hello:?}");
    r.open_conversation(1);
    let od = ferry_mqi::ObjectDescriptor::queue("Q").expect("name");
    let hobj = match r.call(
        1,
        2,
        &Request::Open {
            od,
            options: OpenOptions::OUTPUT,
        },
    ) {
        Reply::Open { status, hobj, .. } if status.reason == ReasonCode::None => hobj,
        other => panic!("{other:?}"),
    };
    let put = |i: usize| Request::Put {
        properties: bytes::Bytes::new(),
        hobj,
        md: md(true, 0),
        pmo: PutOptions::default(),
        body: bytes::Bytes::from(big_body(i)),
    };
    // Each round: a persistent put, then at once a commit on the same conversation. While
    // the log has room both run (the put's reply is held until its record is durable, so
    // the commit's may come first); once the put waits for a checkpoint, the commit is
    // answered 2219 at once.
    let (mut acked, mut in_progress) = (0usize, 0usize);
    let mut dropped = false;
    let mut rid = 10;
    let reason = |f: &ferry_wire::Frame| Reply::decode(f).expect("reply").status().reason;
    for i in 0..200 {
        let (put_rid, cmit_rid) = (rid, rid + 1);
        rid += 2;
        r.send(1, put_rid, &put(i));
        r.send(1, cmit_rid, &Request::Cmit);
        let first = r.read_frame().expect("a reply");
        if first.request_id == cmit_rid && reason(&first) == ReasonCode::CallInProgress {
            in_progress += 1;
            if in_progress == 3 {
                // The put still waits: MQDISC drops it.
                let disc = r.call(1, rid, &Request::Disc { backout: false });
                assert_eq!(disc.status().reason, ReasonCode::None, "{disc:?}");
                dropped = true;
                break;
            }
        }
        let second = r.read_frame().expect("a reply");
        let (put_reply, cmit_reply) = if first.request_id == put_rid {
            (first, second)
        } else {
            (second, first)
        };
        assert_eq!(
            (put_reply.request_id, cmit_reply.request_id),
            (put_rid, cmit_rid)
        );
        assert_eq!(reason(&put_reply), ReasonCode::None, "put {i}");
        assert!(
            matches!(
                reason(&cmit_reply),
                ReasonCode::None | ReasonCode::CallInProgress
            ),
            "commit {i}"
        );
        acked += 1;
    }
    assert!(
        dropped,
        "a put waited for the slow checkpoint ({in_progress} times 2219)"
    );
    // The dropped put never happens, even once the checkpoint has freed the log.
    std::thread::sleep(std::time::Duration::from_millis(2000));
    let depth = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) CURDEPTH");
    assert_eq!(
        attr(&depth, "CURDEPTH").and_then(|v| v.parse::<usize>().ok()),
        Some(acked),
        "every acknowledged put, and not the one dropped by MQDISC: {depth}"
    );
}

/// A unit of work too large for the log: its put that finds the log full gets 2102, the
/// queue manager backs the unit of work out (FRY7471W) so the log frees up, gets go on
/// meanwhile, and the application's MQCMIT reports 2003 MQRC_BACKED_OUT.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_unit_of_work_that_fills_the_log_is_backed_out_with_2102_and_2003() {
    let mut qm = start_with_log("PS.FULL", 2, 64);
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    let (conn, q) = open_q(&qm, "Q").await;
    // Committed before the unit of work starts: to be got while the log is full.
    let kept: Vec<Seen> = vec![
        put_one(&q, true, 1, false, "kept-1").await,
        put_one(&q, true, 2, false, "kept-2").await,
    ];
    // Uncommitted puts must stay in the log (every checkpoint images them) until the
    // unit of work ends: a 1 MiB log cannot hold 3 MiB of them.
    let body = "x".repeat(16 * 1024);
    let mut failed = None;
    for n in 0..200 {
        let mut m = md(true, 0);
        let pmo = PutOptions::new(PutOptionFlags::SYNCPOINT);
        if let Err(e) = put_md(&q, &mut m, pmo, &body).await {
            failed = Some((n, e));
            break;
        }
    }
    let (n, e) = failed.expect("a 1 MiB log cannot hold a 3 MiB unit of work");
    assert_eq!(e.reason, ReasonCode::ResourceProblem, "after {n} puts: {e}");
    assert!(n > 0, "some persistent puts fitted before the log filled");
    // The queue manager still serves non-persistent work.
    put_one(&q, false, 3, false, "np").await;
    assert!(
        qm.error_log().contains("FRY7463W"),
        "log full is in the error log: {}",
        qm.error_log()
    );
    // Gets keep working while the log is full: the committed messages, in order.
    let got = within("get", get(&q))
        .await
        .expect("get while the log is full");
    assert_eq!(seen(&got.0, &got.1.data), kept[0]);
    // The queue manager backed the unit of work out to free the log (as MQ does rather
    // than run out): persistent puts work again, and the application's MQCMIT says 2003.
    assert!(
        qm.error_log().contains("FRY7471W"),
        "the backout is in the error log: {}",
        qm.error_log()
    );
    let mut resumed = false;
    for _ in 0..100 {
        let mut m = md(true, 0);
        if put_md(&q, &mut m, PutOptions::default(), "after")
            .await
            .is_ok()
        {
            resumed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        resumed,
        "persistent puts work again after the log was freed"
    );
    let e = within("commit", conn.commit())
        .await
        .expect_err("the unit of work was backed out");
    assert_eq!(e.reason, ReasonCode::BackedOut);
    // After a restart: the second committed message and the last put; nothing of the
    // unit of work, nothing got. (A controlled stop waits for applications.)
    drop(q);
    drop(conn);
    stop(&mut qm);
    qm.launch();
    let (_conn, q) = open_q(&qm, "Q").await;
    let after: Vec<String> = drain(&q).await.into_iter().map(|s| s.body).collect();
    assert_eq!(after, vec!["kept-2".to_string(), "after".to_string()]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qmstatus_and_ferry_status_show_the_log_at_work() {
    let qm = start("PS.STATUS");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let before = mqsc_ok(&qm, "DISPLAY QMSTATUS ALL");
    assert_eq!(
        attr(&before, "CURRLOG").as_deref(),
        Some("S0000000.LOG"),
        "{before}"
    );
    assert_eq!(
        attr(&before, "LOGTYPE").as_deref(),
        Some("CIRCULAR"),
        "{before}"
    );
    // LogPrimaryFiles=3 and LogSecondaryFiles=2 (the defaults): five extents, ready.
    let mut extents: Vec<String> = std::fs::read_dir(log_dir(&qm))
        .expect("log dir")
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".LOG"))
        .collect();
    extents.sort();
    assert_eq!(
        extents,
        [
            "S0000000.LOG",
            "S0000001.LOG",
            "S0000002.LOG",
            "S0000003.LOG",
            "S0000004.LOG"
        ]
    );
    let recs = |t: &str| -> u64 { attr(t, "LOGRECS").and_then(|v| v.parse().ok()).unwrap_or(0) };
    let (conn, q) = open_q(&qm, "Q").await;
    for n in 0..20 {
        put_one(&q, true, 1, false, &format!("p{n}")).await;
    }
    assert_eq!(drain(&q).await.len(), 20);
    drop(q);
    drop(conn);
    let after = mqsc_ok(
        &qm,
        "DISPLAY QMSTATUS CURRLOG LOGRECS LOGFLUSH LOGBYTES LOGINUSE",
    );
    assert!(
        recs(&after) >= recs(&before) + 40,
        "20 puts and 20 gets were logged: {before} / {after}"
    );
    let flushes: u64 = attr(&after, "LOGFLUSH")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(flushes > 0 && attr(&after, "LOGBYTES").is_some(), "{after}");
    // ferry status shows the same log fields from run/status.json (refreshed each second).
    let mut shown = String::new();
    for _ in 0..30 {
        let out = qm.ferry(&["status", qm.name()]);
        shown = String::from_utf8_lossy(&out.stdout).into_owned();
        if attr(&shown, "LOGRECS").and_then(|v| v.parse::<u64>().ok()) >= Some(recs(&before) + 40) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(shown.contains("CURRLOG(S0000000.LOG)"), "{shown}");
    assert!(
        attr(&shown, "LOGRECS").and_then(|v| v.parse::<u64>().ok()) >= Some(recs(&before) + 40),
        "ferry status catches up with the log: {shown}"
    );
    for keyword in [
        "RECLOG", "LOGINUSE", "CHKPTLSN", "RESTLSN", "DURLSN", "LOGFLUSH", "SLOWWRT",
    ] {
        assert!(
            attr(&shown, keyword).is_some(),
            "ferry status shows {keyword}: {shown}"
        );
    }
}

/// Group commit seen from outside: 16 applications putting persistent messages at once
/// share flushes (LOGFLUSH grows at most half as fast as LOGRECS; ~5 records a flush here), and every put is acknowledged
/// only once durable (they all come back after a kill -9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_persistent_puts_share_log_flushes() {
    let mut qm = start("PS.GROUP");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(100000)");
    let count = |t: &str, k: &str| -> u64 { attr(t, k).and_then(|v| v.parse().ok()).unwrap_or(0) };
    let before = mqsc_ok(&qm, "DISPLAY QMSTATUS LOGRECS LOGFLUSH");
    let (putters, each) = (16u8, 40usize);
    let mut tasks = Vec::new();
    for p in 0..putters {
        let (conn, q) = open_q(&qm, "Q").await;
        tasks.push(tokio::spawn(async move {
            for n in 0..each {
                put_one(&q, true, p, false, &format!("putter {p} message {n}")).await;
            }
            drop(q);
            conn.disconnect().await.expect("disconnect");
        }));
    }
    for t in tasks {
        within("a putter", t).await.expect("putter");
    }
    let after = mqsc_ok(&qm, "DISPLAY QMSTATUS LOGRECS LOGFLUSH");
    let records = count(&after, "LOGRECS") - count(&before, "LOGRECS");
    let flushes = count(&after, "LOGFLUSH") - count(&before, "LOGFLUSH");
    let puts = u64::from(putters) * each as u64;
    eprintln!("{putters} putters: {flushes} flushes for {records} records");
    assert!(
        records >= puts,
        "every put logged: {records} records for {puts} puts"
    );
    assert!(
        flushes > 0 && flushes * 2 <= records,
        "16 putters share flushes: {flushes} flushes for {records} records"
    );
    let (_conn, q) = reopen_after_kill9(&mut qm, "Q").await;
    assert_eq!(
        drain(&q).await.len() as u64,
        puts,
        "every acknowledged put survives"
    );
}

/// AMQ_IODELAY in the queue manager's environment sets the slow-I/O threshold (here 1
/// microsecond, so every log write is slow): FRY6729W (MQ's AMQ6729W) names the operation,
/// bytes and threshold, at most once a minute however many writes were slow, and DISPLAY
/// QMSTATUS and `ferry status` show the count and the last slow write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_log_writes_are_warned_once_a_minute() {
    let mut qm = start("PS.SLOW");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    stop_qm(&mut qm);
    qm.set_env("AMQ_IODELAY", "1");
    qm.launch();
    let (conn, q) = open_q(&qm, "Q").await;
    // Persistent work for ~2.5 s: the warning check runs once a second.
    let started = std::time::Instant::now();
    let mut n = 0;
    while started.elapsed() < Duration::from_millis(2500) {
        put_one(&q, true, 1, false, &format!("slow {n}")).await;
        n += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    drop(q);
    drop(conn);
    let log = qm.error_log();
    let warnings: Vec<&str> = log.lines().filter(|l| l.contains("FRY6729W")).collect();
    assert_eq!(warnings.len(), 1, "one warning a minute: {log}");
    assert!(
        warnings[0].contains("A log W operation of")
            && warnings[0].contains("longer than the threshold of 1 microseconds"),
        "the warning says what was slow and the threshold: {}",
        warnings[0]
    );
    let st = mqsc_ok(&qm, "DISPLAY QMSTATUS SLOWWRT LASTSLOW");
    let slow: u64 = attr(&st, "SLOWWRT")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    assert!(slow >= 2, "every slow write is counted: {st}");
    assert!(
        attr(&st, "LASTSLOW").is_some_and(|v| !v.trim().is_empty()),
        "LASTSLOW shows the last one: {st}"
    );
    let mut shown = String::new();
    for _ in 0..30 {
        shown = String::from_utf8_lossy(&qm.ferry(&["status", qm.name()]).stdout).into_owned();
        if shown.contains("LASTSLOW(") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        shown.contains("LASTSLOW("),
        "ferry status shows the last slow write: {shown}"
    );
}

/// Storage fault through the server: an acknowledged record damaged on disk (a byte flipped
/// inside the written part of the log, not at its tail) must never be served and must not be
/// silently dropped: the queue manager refuses to start with FRY7467E.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_log_record_stops_the_start_instead_of_serving_a_corrupt_message() {
    let mut qm = start("PS.DAMAGE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    {
        let (conn, q) = open_q(&qm, "Q").await;
        for n in 0..40 {
            let body = format!("m{n}-{}", "x".repeat(3000));
            put_one(&q, true, 1, false, &body).await;
        }
        drop(q);
        drop(conn);
    }
    qm.kill9();
    let extent = log_dir(&qm).join("S0000000.LOG");
    let mut bytes = std::fs::read(&extent).expect("first extent");
    // 40 records of ~3 KB fill ~30 pages: page 10 holds acknowledged, synced records.
    let at = 10 * 4096 + 1000;
    assert!(
        bytes[at..at + 16].iter().any(|b| *b != 0),
        "page 10 was written"
    );
    bytes[at] ^= 0xFF;
    std::fs::write(&extent, &bytes).expect("write extent");

    let out = qm.ferry(&["start", qm.name()]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.success() {
        let st = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) CURDEPTH");
        let qs = mqsc_ok(&qm, "DISPLAY QMSTATUS ALL");
        panic!(
            "the start must fail: {said}\n{st}\n{qs}\n{}",
            qm.error_log()
        );
    }
    assert!(
        said.contains("FRY7467E") || qm.error_log().contains("FRY7467E"),
        "the refusal names the log (FRY7467E): {said}\n{}",
        qm.error_log()
    );
}

/// A log placed outside FERRY_HOME (`ferry create --log-path`) with LogWriteIntegrity
/// changed to SingleWrite in qm.ini between runs: persistent messages survive a kill -9.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_placed_single_write_log_recovers_after_kill_9() {
    let elsewhere = tempfile::tempdir().expect("temp dir");
    let log_path = elsewhere.path().join("fastdisk");
    let mut qm = TestQueueManager::start_with(
        bin(),
        "PS.PLACED",
        &["--log-path", log_path.to_str().expect("utf-8 path")],
    );
    assert_eq!(log_dir(&qm), log_path.join(""), "qm.ini's LogPath");
    assert!(
        log_path.join("ferrylog.ctl").exists(),
        "the log is where it was asked for"
    );
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    stop_qm(&mut qm);
    let ini_path = qm.qm_dir().join("qm.ini");
    let ini = std::fs::read_to_string(&ini_path).expect("qm.ini");
    assert!(ini.contains("LogWriteIntegrity=TripleWrite"), "{ini}");
    std::fs::write(
        &ini_path,
        ini.replace(
            "LogWriteIntegrity=TripleWrite",
            "LogWriteIntegrity=SingleWrite",
        ),
    )
    .expect("qm.ini");
    qm.launch();
    let mut want = Vec::new();
    {
        let (conn, q) = open_q(&qm, "Q").await;
        for n in 0..20u8 {
            want.push(put_one(&q, true, n, n % 2 == 1, &format!("single {n}")).await);
            if n % 2 == 1 {
                within("commit", conn.commit()).await.expect("commit");
            }
        }
        drop(q);
        drop(conn);
    }
    let (_conn, q) = reopen_after_kill9(&mut qm, "Q").await;
    assert_eq!(
        drain(&q).await,
        want,
        "every message, in order, after kill -9"
    );
}

/// A log whose control file is missing (deleted, or LogPath pointed elsewhere) stops the
/// start with FRY7467E instead of a new, empty log taking its place: that would drop every
/// persistent message logged since the last checkpoint. Put back, the log recovers them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_log_control_file_stops_the_start_and_loses_nothing() {
    let mut qm = start("PS.NOCTL");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let mut want = Vec::new();
    {
        let (conn, q) = open_q(&qm, "Q").await;
        for n in 0..5u8 {
            want.push(put_one(&q, true, n, false, &format!("kept {n}")).await);
        }
        drop(q);
        drop(conn);
    }
    // Killed: the messages are in the log only (no checkpoint has filed them).
    qm.kill9();
    let dir = log_dir(&qm);
    let control = dir.join("ferrylog.ctl");
    let aside = dir.join("ferrylog.ctl.aside");
    std::fs::rename(&control, &aside).expect("move the control file aside");

    let out = qm.ferry(&["start", qm.name()]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "the start must fail: {said}");
    assert!(
        said.contains("FRY7467E") && said.contains("ferrylog.ctl does not exist"),
        "the refusal names the log and its control file: {said}"
    );
    assert!(
        said.contains("holds 5 log files"),
        "the refusal says the extents are there: {said}"
    );
    assert!(!control.exists(), "no new log was made: {said}");
    let extents = std::fs::read_dir(&dir)
        .expect("log dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".LOG"))
        .count();
    assert_eq!(extents, 5, "the old extents are untouched");

    std::fs::rename(&aside, &control).expect("put the control file back");
    qm.launch();
    let (_conn, q) = open_q(&qm, "Q").await;
    assert_eq!(
        drain(&q).await,
        want,
        "the restored log recovers every message"
    );
}

/// A body of `len` bytes that says which message it is.
fn sized_body(n: usize, len: usize) -> String {
    let head = format!("message {n:05} ");
    format!("{head}{}", "y".repeat(len - head.len()))
}

/// The queue manager process's resident and peak memory, KiB (VmRSS, VmHWM).
fn memory_kib(qm: &TestQueueManager) -> (u64, u64) {
    let pid = qm.pid().expect("the queue manager runs");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/{pid}/status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// DefaultPQBufferSize: a queue far larger than its buffer keeps its bodies in its queue
/// file, not in memory. After a restart, 96 MiB of persistent messages cost the queue
/// manager a few MiB (their descriptors), every body is read back intact and in order
/// when browsed and got, and one got under syncpoint and backed out comes back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_queue_keeps_its_bodies_on_disk_beyond_its_buffer() {
    const N: usize = 1536;
    const LEN: usize = 64 * 1024;
    let mut qm = start("PS.BUFFER");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    let (conn, q) = open_q(&qm, "Q").await;
    for i in 0..N {
        let mut m = md(true, 0);
        put_md(&q, &mut m, PutOptions::default(), &sized_body(i, LEN))
            .await
            .unwrap_or_else(|e| panic!("persistent put {i} of {N}: {e}"));
    }
    drop(q);
    conn.disconnect().await.expect("disconnect");
    // The controlled stop's last checkpoints file every message.
    stop(&mut qm);
    qm.launch();
    let (rss, peak) = memory_kib(&qm);
    let queued_kib = (N * LEN / 1024) as u64;
    eprintln!("restarted with {queued_kib} KiB queued: VmRSS {rss} KiB, VmHWM {peak} KiB");
    assert!(
        peak < queued_kib / 2,
        "restart loaded {queued_kib} KiB of messages within {peak} KiB at most (now {rss} KiB): \
         bodies beyond the 128 KiB buffer stay in the queue file"
    );
    let (conn, q) = open_q(&qm, "Q").await;
    let browsed = browse_all(&q).await;
    assert_eq!(browsed.len(), N);
    for (i, s) in browsed.iter().enumerate() {
        assert!(s.body == sized_body(i, LEN), "browsed message {i} intact");
    }
    // Skip past the buffer, then get one under syncpoint and back it out.
    for i in 0..10 {
        let (_, got) = get(&q).await.expect("get");
        assert!(
            got.data[..] == *sized_body(i, LEN).as_bytes(),
            "message {i}"
        );
    }
    let (m, got) = get_with(&q, gmo(GetOptionFlags::SYNCPOINT, 0))
        .await
        .expect("get under syncpoint");
    assert!(got.data[..] == *sized_body(10, LEN).as_bytes());
    within("backout", conn.backout()).await.expect("backout");
    let rest = drain(&q).await;
    assert_eq!(rest.len(), N - 10, "every other message is still there");
    assert_eq!((rest[0].msg_id, rest[0].backout_count), (m.msg_id, 1));
    for (k, s) in rest.iter().enumerate() {
        assert!(
            s.body == sized_body(k + 10, LEN),
            "message {} intact",
            k + 10
        );
    }
}

/// A body left in the queue file that is damaged on disk is never served: the get fails
/// with 2195 MQRC_UNEXPECTED_ERROR, the message stays, and the other messages (got by
/// MsgId past it) are unaffected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_damaged_body_in_a_queue_file_is_refused_not_served() {
    const N: usize = 40;
    const LEN: usize = 60 * 1024;
    let mut qm = start("PS.DAMAGE");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q)");
    let (conn, q) = open_q(&qm, "Q").await;
    let mut ids = Vec::new();
    for i in 0..N {
        ids.push(
            put_one(&q, true, 0, false, &sized_body(i, LEN))
                .await
                .msg_id,
        );
    }
    drop(q);
    conn.disconnect().await.expect("disconnect");
    stop(&mut qm);
    qm.launch();
    // Only the first two bodies are in memory now. Flip a byte in the middle of message
    // 20's body in its segment file (damage a start would have found is cut as a torn
    // tail and replayed from the log, docs/internals/queue-files.md).
    let seg = qm.qm_dir().join("queues").join("Q").join("Q0000001.SEG");
    let bytes = std::fs::read(&seg).expect("segment");
    let marker = format!("message {:05} ", 20);
    let at = bytes
        .windows(marker.len())
        .position(|w| w == marker.as_bytes())
        .expect("message 20 is in the queue file")
        + LEN / 2;
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&seg)
            .expect("open segment");
        f.write_all_at(&[bytes[at] ^ 0x55], at as u64)
            .expect("write segment");
    }
    let (_conn, q) = open_q(&qm, "Q").await;
    for i in 0..20 {
        assert_eq!(get_text(&q).await, sized_body(i, LEN), "message {i}");
    }
    assert_reason(get(&q).await, ReasonCode::UnexpectedError);
    assert_reason(get(&q).await, ReasonCode::UnexpectedError);
    let mut want = MessageDescriptor {
        msg_id: ids[21],
        ..Default::default()
    };
    let got = within(
        "get by MsgId",
        q.get(
            &mut want,
            &ferry_mqi::GetOptions {
                match_options: ferry_mqi::MatchOptions::MSG_ID,
                ..gmo(GetOptionFlags::NO_SYNCPOINT, 0)
            },
            64 * 1024,
        ),
    )
    .await
    .expect("message 21 by MsgId");
    assert!(got.data[..] == *sized_body(21, LEN).as_bytes());
    let depth = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) CURDEPTH");
    assert_eq!(attr(&depth, "CURDEPTH").as_deref(), Some("19"), "{depth}");
    // The error log names the queue and the damage, once for the two failed gets.
    let log = qm.error_log();
    assert_eq!(log.matches("FRY7470E").count(), 1, "{log}");
    assert!(
        log.contains("queue 'Q'") && log.contains("checksum"),
        "FRY7470E says which queue and what: {log}"
    );
}

/// DefaultQBufferSize: non-persistent messages beyond a queue's buffer spill to its queue
/// file, so 96 MiB of them cost the queue manager far less memory; every body comes back
/// intact and in order; a restart discards them (non-persistent) while the persistent
/// message among them survives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_persistent_messages_beyond_the_buffer_spill_to_disk() {
    const N: usize = 1536;
    const LEN: usize = 64 * 1024;
    let mut qm = start("PS.SPILL");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    let (conn, q) = open_q(&qm, "Q").await;
    let (rss_before, _) = memory_kib(&qm);
    let kept = put_one(&q, true, 0, false, "persistent").await;
    for i in 0..N {
        let mut m = md(false, 0);
        put_md(&q, &mut m, PutOptions::default(), &sized_body(i, LEN))
            .await
            .unwrap_or_else(|e| panic!("non-persistent put {i} of {N}: {e}"));
    }
    let queued_kib = (N * LEN / 1024) as u64;
    // Spills run behind the puts: wait until the queue file holds them and the memory
    // has come down (either can come first, depending on the allocator).
    let deadline = std::time::Instant::now() + DEADLINE;
    let filed_mb = |qm: &TestQueueManager| {
        let status = mqsc_ok(qm, "DISPLAY QSTATUS(Q) CURFSIZE CURDEPTH");
        attr(&status, "CURFSIZE").and_then(|v| v.parse::<u64>().ok())
    };
    let mut rss = memory_kib(&qm).0;
    let mut filed = filed_mb(&qm);
    while rss >= rss_before + queued_kib / 2 || filed.is_none_or(|mb| mb < 64) {
        assert!(
            std::time::Instant::now() < deadline,
            "the spilled bodies leave memory for the queue file: VmRSS {rss_before} -> {rss} \
             KiB with {queued_kib} KiB queued, CURFSIZE {filed:?} MB"
        );
        std::thread::sleep(Duration::from_millis(20));
        rss = memory_kib(&qm).0;
        filed = filed_mb(&qm);
    }
    eprintln!(
        "{queued_kib} KiB of non-persistent messages queued: VmRSS {rss_before} -> {rss} KiB"
    );
    // The queue's first checkpoint comes after the spills started its file: it must add
    // to the file, not empty it (which once left the spilled bodies only in deleted
    // segments still open, and CURFSIZE at 0).
    force_checkpoint(&qm, &conn).await;
    let filed = filed_mb(&qm);
    assert!(
        filed.is_some_and(|mb| mb >= 64),
        "the spilled bodies stay in the queue file across a checkpoint: CURFSIZE {filed:?} MB"
    );
    let browsed = browse_all(&q).await;
    assert_eq!(browsed.len(), N + 1);
    assert_eq!(browsed[0].msg_id, kept.msg_id);
    for (i, s) in browsed[1..].iter().enumerate() {
        assert!(s.body == sized_body(i, LEN), "browsed message {i} intact");
    }
    // Get half of them, then restart: the rest are gone, the persistent one is not.
    assert_eq!(get_text(&q).await, "persistent");
    for i in 0..N / 2 {
        assert_eq!(get_text(&q).await, sized_body(i, LEN), "message {i}");
    }
    put_one(&q, true, 0, false, "persistent 2").await;
    drop(q);
    conn.disconnect().await.expect("disconnect");
    let (_conn, q) = reopen_after_kill9(&mut qm, "Q").await;
    let left: Vec<String> = drain(&q).await.into_iter().map(|s| s.body).collect();
    assert_eq!(
        left,
        ["persistent 2"],
        "non-persistent messages do not survive a restart"
    );
}

/// Brings on a checkpoint now: persistent puts under syncpoint on queue CKPT (defined
/// here) until DISPLAY QMSTATUS LOGCHKPT counts one more (10,000 log records make one,
/// rather than waiting for the 30-second interval).
async fn force_checkpoint(qm: &TestQueueManager, conn: &Connection) {
    let checkpoints = |qm: &TestQueueManager| {
        let status = mqsc_ok(qm, "DISPLAY QMSTATUS LOGCHKPT");
        attr(&status, "LOGCHKPT").and_then(|v| v.parse::<u64>().ok())
    };
    let before = checkpoints(qm).expect("LOGCHKPT");
    mqsc_ok(qm, "DEFINE QLOCAL(CKPT) MAXDEPTH(999999999)");
    let q = open(conn, "CKPT", IO).await;
    for batch in 0..30 {
        for i in 0..1000 {
            put_one(&q, true, 0, true, &format!("ckpt {batch}.{i}")).await;
        }
        conn.commit().await.expect("commit");
        if checkpoints(qm).is_some_and(|n| n > before) {
            return;
        }
    }
    panic!("no checkpoint after 30,000 log records");
}

/// Queue-file segments the queue manager still holds open although they were deleted.
fn deleted_files_open(qm: &TestQueueManager) -> usize {
    let pid = qm.pid().expect("the queue manager runs");
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .expect("/proc fd")
        .flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|p| {
            let p = p.to_string_lossy();
            p.contains("/queues/") && p.ends_with("(deleted)")
        })
        .count()
}

/// When a compaction rewrites a queue file, the bodies left on disk are read from the new
/// segments from then on, so the old ones' space is given back at once (instead of when
/// the messages are got), and every body still comes back intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_moves_the_bodies_left_on_disk_and_frees_the_old_segments() {
    const N: usize = 2000;
    const LEN: usize = 64 * 1024;
    let mut qm = start("PS.COMPACT");
    mqsc_ok(&qm, "DEFINE QLOCAL(Q) MAXDEPTH(999999999)");
    mqsc_ok(&qm, "DEFINE QLOCAL(FILLER) MAXDEPTH(999999999)");
    let (conn, q) = open_q(&qm, "Q").await;
    // Message i has CorrelId 1 (to take) or 2 (to keep): 1,100 taken, 900 kept.
    let take = |i: usize| i % 20 < 11;
    for i in 0..N {
        let mut m = md(true, if take(i) { 1 } else { 2 });
        put_md(&q, &mut m, PutOptions::default(), &sized_body(i, LEN))
            .await
            .unwrap_or_else(|e| panic!("put {i}: {e}"));
    }
    drop(q);
    conn.disconnect().await.expect("disconnect");
    stop(&mut qm);
    qm.launch();
    // Only the first two bodies are in memory; take the others by CorrelId.
    let (conn, q) = open_q(&qm, "Q").await;
    for n in 0..N.div_ceil(20) * 11 {
        let mut want = MessageDescriptor {
            correl_id: id(1),
            ..Default::default()
        };
        let opts = ferry_mqi::GetOptions {
            match_options: ferry_mqi::MatchOptions::CORREL_ID,
            ..gmo(GetOptionFlags::NO_SYNCPOINT, 0)
        };
        within("get by CorrelId", q.get(&mut want, &opts, 64 * 1024))
            .await
            .unwrap_or_else(|e| panic!("take {n}: {e}"));
    }
    assert_eq!(deleted_files_open(&qm), 0);
    // 32 MiB of other persistent work fills half the log: a checkpoint removes the taken
    // messages from Q's file, which is then more dead than live, and compacts it.
    let filler = open(&conn, "FILLER", IO).await;
    for i in 0..32 {
        put_one(&filler, true, 0, false, &sized_body(i, 1 << 20)).await;
    }
    wait_until("Q's queue file is compacted", || {
        let status = mqsc_ok(&qm, "DISPLAY QSTATUS(Q) CURFSIZE");
        attr(&status, "CURFSIZE")
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|mb| mb < 100)
    });
    wait_until("no deleted segment stays open", || {
        deleted_files_open(&qm) == 0
    });
    let kept: Vec<String> = drain(&q).await.into_iter().map(|s| s.body).collect();
    let want: Vec<String> = (0..N)
        .filter(|i| !take(*i))
        .map(|i| sized_body(i, LEN))
        .collect();
    assert!(kept == want, "the kept messages, intact and in order");
}
