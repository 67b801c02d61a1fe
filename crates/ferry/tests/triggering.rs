//! Triggering against a real queue manager: PROCESS objects, the trigger messages
//! (MQTM) TRIGTYPE FIRST, EVERY and DEPTH put on an initiation queue as a plain getter
//! reads them, the channel initiator starting a sender channel from its transmission
//! queue's trigger message (and leaving a STOPPED one alone), and `ferry trigmon`
//! starting a real program with the MQTMC2 argument.

mod common;

use common::*;
use ferry_client::{Connection, Queue};
use ferry_mqi::trigger::{TriggerMessage, FORMAT_TRIGGER, TRIGGER_MESSAGE_LEN};
use ferry_mqi::{GetOptionFlags, OpenOptions, ReasonCode};
use std::time::Duration;

/// Defines process APP.PROC, initiation queue APP.INITQ and application queue `queue`
/// triggered with `trigger` (e.g. `TRIGTYPE(FIRST)`).
fn triggered_queue(qm: &TestQueueManager, queue: &str, trigger: &str) {
    mqsc_ok(
        qm,
        &format!(
            "DEFINE PROCESS(APP.PROC) APPLICID('/opt/app/serve') USERDATA('user data') ENVRDATA('env data') REPLACE\n\
             DEFINE QLOCAL(APP.INITQ) REPLACE\n\
             DEFINE QLOCAL({queue}) TRIGGER {trigger} INITQ(APP.INITQ) PROCESS(APP.PROC) TRIGDATA('data for {queue}') REPLACE\n"
        ),
    );
}

/// Gets the trigger messages waiting on `initq` (no wait): each checked as MQ's
/// descriptor says, decoded.
async fn trigger_messages(initq: &Queue) -> Vec<TriggerMessage> {
    let mut out = Vec::new();
    loop {
        match get(initq).await {
            Ok((md, got)) => {
                assert_eq!(md.format, FORMAT_TRIGGER, "Format MQTRIG");
                assert_eq!(md.persistence, 0, "trigger messages are non-persistent");
                assert_eq!(md.msg_type, ferry_mqi::descriptor::msg_type::DATAGRAM);
                assert_eq!(got.data.len(), TRIGGER_MESSAGE_LEN);
                out.push(TriggerMessage::decode(&got.data, md.encoding).expect("an MQTM"));
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => return out,
            Err(e) => panic!("get from the initiation queue: {e}"),
        }
    }
}

async fn put_n(conn: &Connection, queue: &str, n: usize) {
    let q = open(conn, queue, OpenOptions::OUTPUT).await;
    for i in 0..n {
        put(&q, &format!("m{i}")).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn first_every_and_depth_put_mqs_trigger_messages() {
    let qm = start("TRIG1");
    triggered_queue(&qm, "APP.FIRST", "TRIGTYPE(FIRST)");
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(APP.EVERY) TRIGGER TRIGTYPE(EVERY) INITQ(APP.INITQ) PROCESS(APP.PROC)\n\
         DEFINE QLOCAL(APP.DEPTH) TRIGGER TRIGTYPE(DEPTH) TRIGDPTH(3) INITQ(APP.INITQ) PROCESS(APP.PROC)\n",
    );
    let shown = mqsc_ok(&qm, "DISPLAY PROCESS(APP.PROC) ALL\n");
    assert!(shown.contains("APPLTYPE(UNIX)"), "{shown}");
    assert!(shown.contains("APPLICID(/opt/app/serve)"), "{shown}");

    let conn = connect(&qm.client()).await;
    // MQOPEN of the process (MQOT_PROCESS) for MQINQ.
    let od = ferry_mqi::ObjectDescriptor {
        object_type: ferry_mqi::ObjectType::Process,
        object_name: ferry_mqi::FixedStr::truncating("APP.PROC"),
        ..Default::default()
    };
    let process = conn
        .open(&od, OpenOptions::INQUIRE)
        .await
        .expect("open the process");
    use ferry_mqi::inquire::selector as sel;
    assert_eq!(
        process
            .inquire(&[sel::APPL_TYPE, sel::APPL_ID, sel::USER_DATA])
            .await
            .unwrap(),
        vec![
            ferry_mqi::InquireValue::Int(6),
            ferry_mqi::InquireValue::Str("/opt/app/serve".into()),
            ferry_mqi::InquireValue::Str("user data".into()),
        ]
    );
    // A plain getter holding the initiation queue open is the trigger monitor.
    let initq = open(&conn, "APP.INITQ", OpenOptions::INPUT_SHARED).await;

    put_n(&conn, "APP.FIRST", 3).await;
    let tms = trigger_messages(&initq).await;
    assert_eq!(tms.len(), 1, "FIRST: one trigger message for three puts");
    let tm = &tms[0];
    assert_eq!(tm.q_name.as_str(), "APP.FIRST");
    assert_eq!(tm.process_name.as_str(), "APP.PROC");
    assert_eq!(tm.trigger_data.as_str(), "data for APP.FIRST");
    assert_eq!(tm.appl_type, 6, "MQAT_UNIX");
    assert_eq!(tm.appl_id.as_str(), "/opt/app/serve");
    assert_eq!(tm.env_data.as_str(), "env data");
    assert_eq!(tm.user_data.as_str(), "user data");

    put_n(&conn, "APP.EVERY", 3).await;
    let tms = trigger_messages(&initq).await;
    assert_eq!(tms.len(), 3, "EVERY: one per message");
    assert!(tms.iter().all(|t| t.q_name.as_str() == "APP.EVERY"));

    put_n(&conn, "APP.DEPTH", 2).await;
    assert!(
        trigger_messages(&initq).await.is_empty(),
        "depth 2 < TRIGDPTH(3)"
    );
    put_n(&conn, "APP.DEPTH", 1).await;
    assert_eq!(trigger_messages(&initq).await.len(), 1);
    let shown = mqsc_ok(&qm, "DISPLAY QLOCAL(APP.DEPTH) TRIGGER\n");
    assert!(
        shown.contains("NOTRIGGER"),
        "DEPTH turns TRIGGER off: {shown}"
    );
    put_n(&conn, "APP.DEPTH", 3).await;
    assert!(trigger_messages(&initq).await.is_empty());
    // The served application turns it on again: three messages wait, so it triggers.
    mqsc_ok(&qm, "ALTER QLOCAL(APP.DEPTH) TRIGGER\n");
    assert_eq!(trigger_messages(&initq).await.len(), 1);
}

#[tokio::test(flavor = "current_thread")]
async fn a_trigger_monitor_opening_its_queue_finds_waiting_work() {
    let qm = start("TRIG2");
    triggered_queue(&qm, "APP.Q", "TRIGTYPE(FIRST)");
    let conn = connect(&qm.client()).await;
    put_n(&conn, "APP.Q", 2).await;
    assert_eq!(curdepth(&qm, "APP.INITQ"), 0, "no trigger monitor yet");
    let initq = open(&conn, "APP.INITQ", OpenOptions::INPUT_SHARED).await;
    let tms = trigger_messages(&initq).await;
    assert_eq!(tms.len(), 1);
    assert_eq!(tms[0].q_name.as_str(), "APP.Q");
    // The queues and process are there on a new queue manager, as on MQ.
    let shown = mqsc_ok(
        &qm,
        "DISPLAY QLOCAL(SYSTEM.DEFAULT.INITIATION.QUEUE)\nDISPLAY PROCESS(SYSTEM.DEFAULT.PROCESS)\n",
    );
    assert!(!shown.contains("FRY8147E"), "{shown}");
}

/// Defines on `from` what sends to `to` over a triggered transmission queue: xmitq named
/// like `to` (`TRIGGER INITQ(SYSTEM.CHANNEL.INITQ) TRIGDATA(channel)`), sender channel
/// `FROM.TO.TO` with DISCINT `discint`, its receiver on `to`, and remote queue
/// `APP.REMOTE` for APP.IN on `to`.
fn triggered_link(from: &TestQueueManager, to: &TestQueueManager, discint: u32) -> String {
    let channel = format!("{}.TO.{}", from.name(), to.name());
    mqsc_ok(
        to,
        &format!("DEFINE CHANNEL({channel}) CHLTYPE(RCVR)\nDEFINE QLOCAL(APP.IN)\n"),
    );
    mqsc_ok(
        from,
        &format!(
            "DEFINE QLOCAL({to}) USAGE(XMITQ) TRIGGER TRIGTYPE(FIRST) INITQ(SYSTEM.CHANNEL.INITQ) TRIGDATA({channel})\n\
             DEFINE CHANNEL({channel}) CHLTYPE(SDR) CONNAME('localhost({port})') XMITQ({to}) SHORTTMR(1) HBINT(5) DISCINT({discint})\n\
             DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME({to}) XMITQ({to})\n",
            to = to.name(),
            port = to.port(),
        ),
    );
    channel
}

fn channel_status(qm: &TestQueueManager, channel: &str) -> Option<String> {
    let out = qm.mqsc(&format!("DISPLAY CHSTATUS({channel}) STATUS\n"));
    attr(&stdout(&out), "STATUS")
}

async fn get_all(conn: &Connection, queue: &str, n: usize) -> Vec<String> {
    let q = open(conn, queue, OpenOptions::INPUT_SHARED).await;
    let mut bodies = Vec::new();
    while bodies.len() < n {
        let (_, got) = get_with(
            &q,
            gmo(GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT, 20_000),
        )
        .await
        .unwrap_or_else(|e| panic!("message {} of {n} on {queue}: {e}", bodies.len()));
        bodies.push(String::from_utf8(got.data.to_vec()).unwrap());
    }
    bodies
}

#[tokio::test(flavor = "current_thread")]
async fn the_channel_initiator_starts_a_triggered_sender_and_again_after_discint() {
    let qma = start("TRIGA");
    let qmb = start("TRIGB");
    let channel = triggered_link(&qma, &qmb, 1);
    assert_eq!(
        channel_status(&qma, &channel),
        None,
        "not started by anyone"
    );

    let a = connect(&qma.client()).await;
    let b = connect(&qmb.client()).await;
    put_n(&a, "APP.REMOTE", 3).await;
    // No START CHANNEL: the trigger message on SYSTEM.CHANNEL.INITQ starts it.
    assert_eq!(get_all(&b, "APP.IN", 3).await.len(), 3);

    // DISCINT(1) ends it normally: INACTIVE, until the next trigger message.
    wait_until("the channel ended for DISCINT", || {
        channel_status(&qma, &channel).as_deref() != Some("RUNNING")
    });
    put_n(&a, "APP.REMOTE", 2).await;
    assert_eq!(get_all(&b, "APP.IN", 2).await.len(), 2);
    assert_eq!(
        curdepth(&qma, "SYSTEM.CHANNEL.INITQ"),
        0,
        "the initiator took them"
    );
}

#[tokio::test(flavor = "current_thread")]
async fn a_stopped_channel_is_not_started_by_its_trigger_messages() {
    let qma = start("TRIGC");
    let qmb = start("TRIGD");
    let channel = triggered_link(&qma, &qmb, 0);
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_until("RUNNING", || {
        channel_status(&qma, &channel).as_deref() == Some("RUNNING")
    });
    mqsc_ok(&qma, &format!("STOP CHANNEL({channel})\n"));
    wait_until("STOPPED", || {
        channel_status(&qma, &channel).as_deref() == Some("STOPPED")
    });

    let a = connect(&qma.client()).await;
    put_n(&a, "APP.REMOTE", 2).await;
    // The trigger message is made and taken by the initiator, which leaves the channel
    // STOPPED: the messages wait on the transmission queue.
    wait_until("the initiator took the trigger message", || {
        curdepth(&qma, "SYSTEM.CHANNEL.INITQ") == 0
    });
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(channel_status(&qma, &channel).as_deref(), Some("STOPPED"));
    assert_eq!(
        curdepth(&qma, qmb.name()),
        2,
        "still on the transmission queue"
    );

    // START CHANNEL sends them.
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    let b = connect(&qmb.client()).await;
    assert_eq!(get_all(&b, "APP.IN", 2).await.len(), 2);
}

#[tokio::test(flavor = "current_thread")]
async fn a_triggered_transmission_queue_holding_messages_starts_its_channel_at_restart() {
    let mut qma = start("TRIGE");
    let mut qmb = start("TRIGF");
    triggered_link(&qma, &qmb, 0);
    // The partner is down: the channel is triggered, cannot connect, and retries.
    stop_qm(&mut qmb);
    let a = connect(&qma.client()).await;
    let q = open(&a, "APP.REMOTE", OpenOptions::OUTPUT).await;
    let mut md = ferry_mqi::MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..Default::default()
    };
    put_md(&q, &mut md, Default::default(), "kept over the restart")
        .await
        .unwrap();
    drop(q);
    a.disconnect().await.expect("MQDISC");
    stop_qm(&mut qma);
    qmb.launch();
    // At start the channel initiator opens SYSTEM.CHANNEL.INITQ: the transmission queue
    // holds a message, so it triggers, and the channel starts without START CHANNEL.
    qma.launch();
    let b = connect(&qmb.client()).await;
    assert_eq!(
        get_all(&b, "APP.IN", 1).await,
        vec!["kept over the restart".to_string()]
    );
}

/// Ends a `ferry trigmon` child with SIGTERM and returns what it printed.
fn end_trigmon(child: std::process::Child) -> String {
    // SAFETY: kill(2) on our own child's pid, which has not been reaped yet.
    let pid = i32::try_from(child.id()).expect("pid");
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let out = child.wait_with_output().expect("trigmon output");
    assert!(out.status.success(), "trigmon exit: {}", out.status);
    format!("{}{}", stdout(&out), stderr(&out))
}

#[tokio::test(flavor = "current_thread")]
async fn trigmon_starts_the_process_with_the_mqtmc2_argument() {
    let qm = start("TRIGM");
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("argument.txt");
    let script = dir.path().join("served.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > {out}.tmp\nprintf '%s' \"$2\" > {out}.env\nmv {out}.tmp {out}\n",
            out = out_file.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    mqsc_ok(
        &qm,
        &format!(
            "DEFINE PROCESS(TM.PROC) APPLTYPE(UNIX) APPLICID('{}') USERDATA('user data') ENVRDATA('extra')\n\
             DEFINE QLOCAL(TM.Q) TRIGGER TRIGTYPE(FIRST) INITQ(SYSTEM.DEFAULT.INITIATION.QUEUE) PROCESS(TM.PROC) TRIGDATA('trigger data')\n",
            script.display()
        ),
    );
    let monitor = qm.ferry_spawn(&["trigmon", qm.name()]);
    // The monitor has the initiation queue open once IPPROCS says so.
    wait_until("trigmon opened the initiation queue", || {
        let out = mqsc_ok(
            &qm,
            "DISPLAY QSTATUS(SYSTEM.DEFAULT.INITIATION.QUEUE) IPPROCS\n",
        );
        attr(&out, "IPPROCS").is_some_and(|n| n != "0")
    });
    let conn = connect(&qm.client()).await;
    put_n(&conn, "TM.Q", 2).await;
    wait_until("the served script wrote its argument", || out_file.exists());
    let arg = std::fs::read(&out_file).unwrap();
    assert_eq!(arg.len(), 732, "MQTMC2 is 732 characters");
    assert_eq!(&arg[..8], b"TMC    2");
    let field = |from: usize, len: usize| {
        String::from_utf8_lossy(&arg[from..from + len])
            .trim_end()
            .to_string()
    };
    assert_eq!(field(8, 48), "TM.Q");
    assert_eq!(field(56, 48), "TM.PROC");
    assert_eq!(field(104, 64), "trigger data");
    assert_eq!(field(168, 4), "", "ApplType is blanks in MQTMC2");
    assert_eq!(field(172, 256), script.display().to_string());
    assert_eq!(field(428, 128), "extra");
    assert_eq!(field(556, 128), "user data");
    assert_eq!(field(684, 48), "TRIGM");
    let env = std::fs::read_to_string(out_file.with_extension("txt.env")).unwrap();
    assert_eq!(
        env, "extra",
        "ENVRDATA follows the MQTMC2 on the command line"
    );
    assert_eq!(
        curdepth(&qm, "TM.Q"),
        2,
        "the monitor does not touch the messages"
    );
    conn.disconnect().await.unwrap();

    let printed = end_trigmon(monitor);
    assert!(printed.contains("FRY5030I"), "{printed}");
    assert!(printed.contains("FRY5032I"), "{printed}");
    assert!(printed.contains("TM.Q"), "{printed}");
    assert!(printed.contains("FRY5031I"), "{printed}");
}

#[tokio::test(flavor = "current_thread")]
async fn trigmon_ends_when_the_queue_manager_stops() {
    let mut qm = start("TRIGN");
    mqsc_ok(&qm, "DEFINE QLOCAL(MY.INITQ)\n");
    let monitor = qm.ferry_spawn(&["runmqtrm", "-m", qm.name(), "-q", "MY.INITQ"]);
    wait_until("runmqtrm opened its initiation queue", || {
        let out = mqsc_ok(&qm, "DISPLAY QSTATUS(MY.INITQ) IPPROCS\n");
        attr(&out, "IPPROCS").is_some_and(|n| n != "0")
    });
    stop_qm(&mut qm);
    let out = monitor.wait_with_output().expect("runmqtrm output");
    let printed = stdout(&out);
    assert!(out.status.success(), "{printed}{}", stderr(&out));
    assert!(printed.contains("FRY5031I"), "{printed}");
    // No such initiation queue: MQ's 2085, and a non-zero exit.
    let mut qm = start("TRIGO");
    let out = qm.ferry(&["trigmon", qm.name(), "--initq", "NO.SUCH.Q"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("FRY5035E"), "{}", stderr(&out));
    stop_qm(&mut qm);
}
