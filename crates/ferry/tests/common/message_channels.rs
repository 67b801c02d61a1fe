//! Set-up shared by the message-channel tests: a sender/receiver pair between two test
//! queue managers defined with MQSC, starting and stopping channels, reading DISPLAY
//! CHSTATUS, and putting and draining numbered messages.

use super::*;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::PutOptionFlags;
use std::collections::BTreeMap;

/// The CHSTATUS fields [`chstatus`] reads.
const CHSTATUS_FIELDS: &[&str] = &[
    "STATUS", "SUBSTATE", "CHLTYPE", "MSGS", "BATCHES", "CURSEQNO", "LSTSEQNO", "INDOUBT",
    "RQMNAME", "XMITQ", "CONNAME", "NPMSPEED", "BATCHSZ", "LSTLUWID", "SSLCIPH", "SSLPEER",
    "BYTSSENT", "BYTSRCVD", "BUFSSENT", "BUFSRCVD", "COMPRATE", "COMPHDR", "COMPMSG", "NETTIME",
    "XQTIME",
];

/// Defines on `from` what sends to `to`: the transmission queue named like `to`, the
/// sender channel `FROM.TO.TO` (short retries every second, HBINT 5, `sdr` added) and
/// its receiver on `to` (`rcvr` added). Returns the channel's name.
pub fn link_with(from: &TestQueueManager, to: &TestQueueManager, sdr: &str, rcvr: &str) -> String {
    let channel = format!("{}.TO.{}", from.name(), to.name());
    mqsc_ok(
        to,
        &format!("DEFINE CHANNEL({channel}) CHLTYPE(RCVR) {rcvr} REPLACE\n"),
    );
    mqsc_ok(
        from,
        &format!(
            "DEFINE QLOCAL({to}) USAGE(XMITQ) REPLACE\n\
             DEFINE CHANNEL({channel}) CHLTYPE(SDR) CONNAME('localhost({port})') XMITQ({to}) SHORTTMR(1) HBINT(5) {sdr} REPLACE\n",
            to = to.name(),
            port = to.port(),
        ),
    );
    channel
}

/// [`link_with`] with the channels' defaults.
pub fn link(from: &TestQueueManager, to: &TestQueueManager) -> String {
    link_with(from, to, "", "")
}

/// DISPLAY CHSTATUS(channel) ALL as keyword → value (empty when it has no status).
pub fn chstatus(qm: &TestQueueManager, channel: &str) -> BTreeMap<String, String> {
    let out = qm.mqsc(&format!("DISPLAY CHSTATUS({channel}) ALL\n"));
    let text = stdout(&out);
    CHSTATUS_FIELDS
        .iter()
        .filter_map(|key| attr(&text, key).map(|v| (key.to_string(), v)))
        .collect()
}

/// The channel's STATUS, if it has a status.
pub fn status(qm: &TestQueueManager, channel: &str) -> Option<String> {
    chstatus(qm, channel).get("STATUS").cloned()
}

/// Waits until DISPLAY CHSTATUS of `channel` on `qm` says `state`.
pub fn wait_status(qm: &TestQueueManager, channel: &str, state: &str) {
    wait_until(&format!("{channel} {state} on {}", qm.name()), || {
        status(qm, channel).as_deref() == Some(state)
    });
}

/// Starts channel `channel` on `qm` and waits until it runs.
pub fn start_channel(qm: &TestQueueManager, channel: &str) {
    mqsc_ok(qm, &format!("START CHANNEL({channel})\n"));
    wait_status(qm, channel, "RUNNING");
}

/// Stops channel `channel` on `qm` (MODE(FORCE)) and waits until it is stopped.
pub fn stop_channel(qm: &TestQueueManager, channel: &str) {
    mqsc_ok(qm, &format!("STOP CHANNEL({channel}) MODE(FORCE)\n"));
    wait_status(qm, channel, "STOPPED");
}

/// Puts `count` messages named `prefix-N` to `queue` (a remote queue definition)
/// outside syncpoint.
pub async fn put_many(
    conn: &Connection,
    queue: &str,
    prefix: &str,
    count: usize,
    persistent: bool,
) {
    let q = open(conn, queue, OpenOptions::OUTPUT).await;
    for i in 0..count {
        let mut md = MessageDescriptor {
            persistence: if persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            ..MessageDescriptor::default()
        };
        put_md(
            &q,
            &mut md,
            PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
            &format!("{prefix}-{i}"),
        )
        .await
        .unwrap_or_else(|e| panic!("put {prefix}-{i} to {queue}: {e}"));
    }
}

/// Gets every message from `queue` until none arrives for `quiet_ms`: their bodies.
pub async fn drain(conn: &Connection, queue: &str, quiet_ms: i32) -> Vec<String> {
    let q = open(conn, queue, OpenOptions::INPUT_SHARED).await;
    let mut bodies = Vec::new();
    loop {
        match get_with(
            &q,
            gmo(
                GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
                quiet_ms,
            ),
        )
        .await
        {
            Ok((_, got)) => bodies.push(String::from_utf8(got.data.to_vec()).expect("utf-8")),
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => return bodies,
            Err(e) => panic!("get from {queue}: {e}"),
        }
    }
}
