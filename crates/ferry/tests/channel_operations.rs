//! Operating message channels between two real queue managers, with MQSC only: PING
//! CHANNEL reaches a partner that has the channel (beside a conversation already
//! running) and fails with the reason otherwise; RESET CHANNEL SEQNUM is taken by both
//! ends at the next start; RESOLVE CHANNEL settles a batch left in doubt (BACKOUT keeps
//! its messages to send again, COMMIT removes them) and RESET then mends the sequence
//! numbers a wrong COMMIT broke; and TLS between the queue managers (SSLCIPH, SSLCAUTH,
//! SSLPEER, certificates made by the test) carries messages, while a CipherSpec mismatch
//! or a failed SSLPEER refuses the channel with an error-log message at both ends and
//! leaves the sender RETRYING.

mod common;

use common::message_channels::*;
use common::*;
use ferry_tls::self_signed::ThrowawayCa;

/// The output of a command expected to fail.
fn mqsc_fails(qm: &TestQueueManager, command: &str) -> String {
    mqsc_exit(qm, &format!("{command}\n"), 10)
}

#[tokio::test(flavor = "current_thread")]
async fn ping_reaches_a_partner_with_the_channel_and_says_why_otherwise() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = link(&qma, &qmb);
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n",
    );

    // A channel that has never run: the ping needs no start.
    let out = mqsc_ok(&qma, &format!("PING CHANNEL({channel})\n"));
    assert!(out.contains("FRY8020I"), "{out}");
    let out = mqsc_ok(&qma, &format!("PING CHANNEL({channel}) DATALEN(32768)\n"));
    assert!(out.contains("FRY8020I"), "{out}");
    assert_eq!(status(&qma, &channel), None, "a ping is not a start");
    assert_eq!(status(&qmb, &channel), None, "nor at the receiver");

    // Beside a running conversation: the ping does not disturb it.
    start_channel(&qma, &channel);
    let a = connect(&qma.client()).await;
    put_many(&a, "APP.REMOTE", "before", 3, true).await;
    wait_until("3 messages crossed", || curdepth(&qmb, "APP.IN") == 3);
    let before = chstatus(&qmb, &channel);
    let out = mqsc_ok(&qma, &format!("PING CHANNEL({channel}) DATALEN(1000)\n"));
    assert!(out.contains("FRY8020I"), "{out}");
    let after = chstatus(&qmb, &channel);
    assert_eq!(after["STATUS"], "RUNNING");
    assert_eq!(after["MSGS"], before["MSGS"]);
    assert_eq!(after["LSTSEQNO"], before["LSTSEQNO"]);
    assert_eq!(
        after["BYTSSENT"], before["BYTSSENT"],
        "the ping counts apart"
    );
    put_many(&a, "APP.REMOTE", "after", 2, true).await;
    wait_until("2 more crossed", || curdepth(&qmb, "APP.IN") == 5);
    assert_eq!(status(&qma, &channel).as_deref(), Some("RUNNING"));
    // RESET and RESOLVE are refused while the channel runs.
    let out = mqsc_fails(&qma, &format!("RESET CHANNEL({channel})"));
    assert!(out.contains("FRY8162E") && out.contains("running"), "{out}");
    let out = mqsc_fails(&qma, &format!("RESOLVE CHANNEL({channel}) ACTION(COMMIT)"));
    assert!(out.contains("FRY8163E") && out.contains("running"), "{out}");

    // A partner without the channel: refused, with the partner's reason.
    mqsc_ok(
        &qma,
        &format!(
            "DEFINE CHANNEL(QMA.TO.NOWHERE) CHLTYPE(SDR) CONNAME('localhost({})') XMITQ(QMB)\n",
            qmb.port()
        ),
    );
    let out = mqsc_fails(&qma, "PING CHANNEL(QMA.TO.NOWHERE)");
    assert!(out.contains("FRY8161E"), "{out}");
    assert!(
        out.contains("no channel named QMA.TO.NOWHERE that answers a SDR"),
        "{out}"
    );
    // Nobody listening.
    mqsc_ok(
        &qma,
        &format!(
            "ALTER CHANNEL(QMA.TO.NOWHERE) CHLTYPE(SDR) CONNAME('localhost({})')\n",
            free_port()
        ),
    );
    let out = mqsc_fails(&qma, "PING CHANNEL(QMA.TO.NOWHERE)");
    assert!(
        out.contains("FRY8161E") && out.contains("could not connect"),
        "{out}"
    );
    // A receiving channel is not pinged from its own end.
    let out = mqsc_fails(&qmb, &format!("PING CHANNEL({channel})"));
    assert!(out.contains("applies to sending channels"), "{out}");
}

#[tokio::test(flavor = "current_thread")]
async fn reset_seqnum_is_taken_by_both_ends_at_the_next_start() {
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
    put_many(&a, "APP.REMOTE", "m", 3, true).await;
    wait_until("3 messages crossed", || curdepth(&qmb, "APP.IN") == 3);
    wait_until("the receiver committed sequence number 3", || {
        chstatus(&qmb, &channel).get("LSTSEQNO").map(String::as_str) == Some("3")
    });
    stop_channel(&qma, &channel);

    let out = mqsc_ok(&qma, &format!("RESET CHANNEL({channel}) SEQNUM(500)\n"));
    assert!(out.contains("FRY8023I"), "{out}");
    let out = mqsc_fails(&qmb, &format!("RESET CHANNEL({channel})"));
    assert!(out.contains("FRY8162E"), "the receiving end: {out}");
    start_channel(&qma, &channel);
    wait_until("the receiver took 500", || {
        chstatus(&qmb, &channel).get("LSTSEQNO").map(String::as_str) == Some("500")
    });
    assert_eq!(chstatus(&qma, &channel)["LSTSEQNO"], "500");
    put_many(&a, "APP.REMOTE", "n", 1, true).await;
    wait_until("the next message crossed", || curdepth(&qmb, "APP.IN") == 4);
    wait_until("both ends numbered it 501", || {
        chstatus(&qmb, &channel).get("LSTSEQNO").map(String::as_str) == Some("501")
            && chstatus(&qma, &channel).get("LSTSEQNO").map(String::as_str) == Some("501")
    });
}

/// Starts the sender and waits until the receiver fails its batch (a message for a
/// queue QMB does not have, and USEDLQ(NO)): the receiver stops, the sender's
/// batch stays in doubt and it retries; the sender is then stopped.
fn leave_a_batch_in_doubt(qma: &TestQueueManager, qmb: &TestQueueManager, channel: &str) {
    mqsc_ok(qmb, &format!("START CHANNEL({channel})\n"));
    mqsc_ok(qma, &format!("START CHANNEL({channel})\n"));
    wait_status(qmb, channel, "STOPPED");
    wait_status(qma, channel, "RETRYING");
    stop_channel(qma, channel);
}

#[tokio::test(flavor = "current_thread")]
async fn resolve_backout_keeps_the_batch_and_commit_removes_it() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let channel = link_with(&qma, &qmb, "", "USEDLQ(NO)");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(TO.MISSING) RNAME(MISSING) RQMNAME(QMB) XMITQ(QMB)\n\
         DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n",
    );
    let a = connect(&qma.client()).await;
    put_many(&a, "TO.MISSING", "lost", 3, true).await;
    let out = mqsc_fails(&qma, &format!("RESOLVE CHANNEL({channel}) ACTION(COMMIT)"));
    assert!(out.contains("no batch is in doubt"), "never ran: {out}");

    leave_a_batch_in_doubt(&qma, &qmb, &channel);
    assert!(qmb.error_log().contains("FRY9565E"), "{}", qmb.error_log());
    assert_eq!(
        curdepth(&qma, "QMB"),
        3,
        "the batch was backed out at the sender"
    );
    let out = mqsc_fails(&qma, &format!("RESET CHANNEL({channel}) SEQNUM(9)"));
    assert!(
        out.contains("FRY8162E") && out.contains("is in doubt") && out.contains("RESOLVE"),
        "{out}"
    );

    // BACKOUT: the messages stay to be sent again.
    let out = mqsc_ok(
        &qma,
        &format!("RESOLVE CHANNEL({channel}) ACTION(BACKOUT)\n"),
    );
    assert!(out.contains("FRY8012I"), "{out}");
    assert_eq!(curdepth(&qma, "QMB"), 3);
    let log = qma.error_log();
    assert!(
        log.contains("FRY9548I") && log.contains("RESOLVE CHANNEL ACTION(BACKOUT)"),
        "{log}"
    );
    let out = mqsc_fails(&qma, &format!("RESOLVE CHANNEL({channel}) ACTION(BACKOUT)"));
    assert!(
        out.contains("FRY8163E") && out.contains("no batch is in doubt"),
        "{out}"
    );

    // Again in doubt; COMMIT this time: the batch leaves the transmission queue.
    leave_a_batch_in_doubt(&qma, &qmb, &channel);
    assert_eq!(curdepth(&qma, "QMB"), 3);
    let out = mqsc_ok(
        &qma,
        &format!("RESOLVE CHANNEL({channel}) ACTION(COMMIT)\n"),
    );
    assert!(out.contains("FRY8012I"), "{out}");
    assert_eq!(curdepth(&qma, "QMB"), 0, "COMMIT removed the batch");

    // The receiver never committed that batch: the next start is a sequence error,
    // which RESET mends.
    mqsc_ok(&qmb, &format!("START CHANNEL({channel})\n"));
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_status(&qma, &channel, "STOPPED");
    assert!(qma.error_log().contains("FRY9526E"), "{}", qma.error_log());
    let out = mqsc_ok(&qma, &format!("RESET CHANNEL({channel}) SEQNUM(40)\n"));
    assert!(out.contains("FRY8023I"), "{out}");
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    start_channel(&qma, &channel);
    put_many(&a, "APP.REMOTE", "ok", 2, true).await;
    wait_until("the messages crossed after the reset", || {
        curdepth(&qmb, "APP.IN") == 2
    });
    wait_until("both ends numbered them 41 and 42", || {
        chstatus(&qmb, &channel).get("LSTSEQNO").map(String::as_str) == Some("42")
    });
}

/// A key repository for `qm` (its certificate, CN=<name>,O=Ferry, signed by `ca`, and
/// `ca` trusted), read at once.
fn key_repository(qm: &TestQueueManager, ca: &ThrowawayCa) {
    let dir = qm.qm_dir().join("ssl");
    let label = format!("ibmwebspheremq{}", qm.name().to_lowercase());
    ca.issue(&dir, &label, &[("O", "Ferry"), ("CN", qm.name())], false)
        .expect("certificate");
    ca.write_trust(&dir).expect("trust");
    let out = mqsc_ok(qm, "REFRESH SECURITY TYPE(SSL)\n");
    assert!(out.contains("with trust.pem"), "{out}");
}

#[tokio::test(flavor = "current_thread")]
async fn tls_carries_messages_and_mismatches_refuse_the_channel_at_both_ends() {
    let qma = start("QMA");
    let qmb = start("QMB");
    let ca = ThrowawayCa::new("Ferry Test CA").expect("ca");
    key_repository(&qma, &ca);
    key_repository(&qmb, &ca);
    let channel = link_with(
        &qma,
        &qmb,
        "SSLCIPH(TLS_AES_128_GCM_SHA256) SSLPEER('CN=QMB,O=Ferry')",
        "SSLCIPH(TLS_AES_128_GCM_SHA256) SSLCAUTH(REQUIRED) SSLPEER('CN=QMA')",
    );
    mqsc_ok(&qmb, "DEFINE QLOCAL(APP.IN)\n");
    mqsc_ok(
        &qma,
        "DEFINE QREMOTE(APP.REMOTE) RNAME(APP.IN) RQMNAME(QMB) XMITQ(QMB)\n",
    );
    start_channel(&qma, &channel);
    let a = connect(&qma.client()).await;
    put_many(&a, "APP.REMOTE", "secret", 5, true).await;
    wait_until("5 messages crossed over TLS", || {
        curdepth(&qmb, "APP.IN") == 5
    });
    let sender = chstatus(&qma, &channel);
    assert_eq!(sender["SSLCIPH"], "TLS_AES_128_GCM_SHA256");
    assert_eq!(sender["SSLPEER"], "CN=QMB,O=Ferry");
    wait_until("the receiver shows its partner's certificate", || {
        chstatus(&qmb, &channel).get("SSLPEER").map(String::as_str) == Some("CN=QMA,O=Ferry")
    });
    assert_eq!(
        chstatus(&qmb, &channel)["SSLCIPH"],
        "TLS_AES_128_GCM_SHA256"
    );
    let out = mqsc_ok(&qma, &format!("PING CHANNEL({channel})\n"));
    assert!(out.contains("FRY8020I"), "a ping over TLS: {out}");
    stop_channel(&qma, &channel);

    // A CipherSpec the receiver's SSLCIPH does not allow.
    mqsc_ok(
        &qma,
        &format!("ALTER CHANNEL({channel}) CHLTYPE(SDR) SSLCIPH(ANY_TLS12)\n"),
    );
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_status(&qma, &channel, "RETRYING");
    wait_until("FRY9631E at the receiver", || {
        qmb.error_log().contains("FRY9631E")
    });
    let log = qma.error_log();
    assert!(
        log.contains("FRY9503E") && log.contains("FRY9631E"),
        "the sender logs the receiver's reason: {log}"
    );
    let out = mqsc_fails(&qma, &format!("PING CHANNEL({channel})"));
    assert!(out.contains("FRY9631E"), "{out}");
    stop_channel(&qma, &channel);

    // The receiver's certificate is not the one the sender's SSLPEER names.
    mqsc_ok(
        &qma,
        &format!(
            "ALTER CHANNEL({channel}) CHLTYPE(SDR) SSLCIPH(TLS_AES_128_GCM_SHA256) SSLPEER('CN=SOMEONE.ELSE')\n"
        ),
    );
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_status(&qma, &channel, "RETRYING");
    assert!(qma.error_log().contains("FRY9636E"), "{}", qma.error_log());
    stop_channel(&qma, &channel);

    // The sender's certificate is not the one the receiver's SSLPEER names.
    mqsc_ok(
        &qma,
        &format!("ALTER CHANNEL({channel}) CHLTYPE(SDR) SSLPEER(' ')\n"),
    );
    mqsc_ok(
        &qmb,
        &format!("ALTER CHANNEL({channel}) CHLTYPE(RCVR) SSLPEER('CN=NOT.QMA')\n"),
    );
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_status(&qma, &channel, "RETRYING");
    wait_until("FRY9636E at the receiver", || {
        qmb.error_log().contains("FRY9636E")
    });
    stop_channel(&qma, &channel);

    // TLS to a receiver without SSLCIPH, as for client channels.
    mqsc_ok(
        &qmb,
        &format!("ALTER CHANNEL({channel}) CHLTYPE(RCVR) SSLCIPH(' ') SSLPEER(' ')\n"),
    );
    mqsc_ok(&qma, &format!("START CHANNEL({channel})\n"));
    wait_status(&qma, &channel, "RETRYING");
    wait_until("FRY9640E at the receiver", || {
        qmb.error_log().contains("FRY9640E")
    });
    stop_channel(&qma, &channel);

    // Both ends agree again: the channel runs and the messages still cross.
    mqsc_ok(
        &qmb,
        &format!("ALTER CHANNEL({channel}) CHLTYPE(RCVR) SSLCIPH(TLS_AES_128_GCM_SHA256)\n"),
    );
    start_channel(&qma, &channel);
    put_many(&a, "APP.REMOTE", "again", 1, true).await;
    wait_until("one more crossed", || curdepth(&qmb, "APP.IN") == 6);
}
