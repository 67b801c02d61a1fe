//! MQ's statistics messages: at the end of every QMGR STATINT interval, one
//! MQCMD_STATISTICS_MQI message when STATMQI(ON) and one MQCMD_STATISTICS_Q message when
//! any queue's statistics are on (STATQ, [`ferry_engine::QueueManager::statistics_queues`])
//! are put to SYSTEM.ADMIN.STATISTICS.QUEUE: PCF (MQFMT_ADMIN), non-persistent, as MQ
//! writes them ([`ferry_monitoring::statistics_message`]).
//!
//! The engine's counters only grow (Prometheus and the `$SYS` publications read them
//! too), so an interval's counts are the difference from the reading taken when the
//! interval began: every interval starts from zero, as MQ's do. The reading is taken
//! again right after the messages are put, so the queue manager's own MQCONN, MQPUT1
//! and MQDISC are never counted. STATINT, STATMQI and STATQ are read every second, so an
//! ALTER QMGR takes effect within one; RESET QMGR TYPE(STATISTICS) ends the interval
//! within one too (its messages are written, the next interval starts).

use super::clock;
use super::server::Server;
use ferry_engine::admin::STATISTICS_QUEUE;
use ferry_engine::clock::admin_date_time;
use ferry_engine::{ConnectionInfo, Timestamp};
use ferry_monitoring::statistics_message::{mqi_statistics, queue_statistics, Interval};
use ferry_monitoring::{MqiCounters, QueueCounters};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::pcf::{Encoding, PcfMessage, CCSID_UTF8, FORMAT_ADMIN};
use ferry_mqi::{FixedStr, MessageDescriptor, ObjectDescriptor, PutOptionFlags, PutOptions};
use ferry_objects::qmgr::StatisticsSwitch;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The counters when the current interval began.
struct Baseline {
    began: Timestamp,
    began_at: Instant,
    mqi: MqiCounters,
    queues: BTreeMap<String, QueueCounters>,
}

impl Baseline {
    fn now(server: &Server) -> Self {
        let mut engine = server.engine.borrow_mut();
        Baseline {
            began: clock::now(),
            began_at: Instant::now(),
            mqi: engine.mqi_counters(),
            queues: engine
                .statistics_queues()
                .into_iter()
                .map(|q| (q.name, q.counts))
                .collect(),
        }
    }
}

/// Writes the statistics messages every STATINT seconds until the queue manager ends.
pub(crate) async fn statistics_task(server: Rc<Server>) {
    let mut baseline = Baseline::now(&server);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let qmgr = server.engine.borrow().qmgr();
        let interval =
            Duration::from_secs(u64::try_from(qmgr.statistics_interval.max(1)).unwrap_or(1));
        if baseline.began_at.elapsed() < interval && !server.statistics_reset.take() {
            continue;
        }
        let messages =
            interval_messages(&server, &baseline, qmgr.statistics_mqi, qmgr.command_level);
        let written = put_all(&server, &messages);
        if written < messages.len() {
            tracing::debug!(
                "{} of {} statistics messages could not be put to {STATISTICS_QUEUE}",
                messages.len() - written,
                messages.len()
            );
        }
        baseline = Baseline::now(&server);
    }
}

/// The messages of the interval that began at `baseline` and ends now (the queues'
/// depth ranges start again).
fn interval_messages(
    server: &Server,
    baseline: &Baseline,
    mqi: StatisticsSwitch,
    command_level: i32,
) -> Vec<PcfMessage> {
    let (start_date, start_time) = admin_date_time(baseline.began);
    let (end_date, end_time) = admin_date_time(clock::now());
    let interval = Interval {
        start_date,
        start_time,
        end_date,
        end_time,
    };
    let mut engine = server.engine.borrow_mut();
    let mut messages = Vec::new();
    if mqi == StatisticsSwitch::On {
        let counts = engine.mqi_counters().minus(&baseline.mqi);
        messages.push(mqi_statistics(
            &server.name,
            &interval,
            command_level,
            &counts,
        ));
    }
    let mut queues = engine.statistics_queues();
    if !queues.is_empty() {
        for q in &mut queues {
            // A queue whose statistics came on (or that was made) during the interval
            // counts from zero.
            if let Some(began) = baseline.queues.get(&q.name) {
                q.counts = q.counts.minus(began);
            }
        }
        messages.push(queue_statistics(
            &server.name,
            &interval,
            command_level,
            &queues,
        ));
    }
    messages
}

/// MQMD of a statistics message: PCF (MQADMIN), native encoding, UTF-8,
/// non-persistent.
fn statistics_md() -> MessageDescriptor {
    MessageDescriptor {
        format: FixedStr::new(FORMAT_ADMIN).unwrap_or(FixedStr::BLANK),
        encoding: Encoding::Native.mqmd_value(),
        ccsid: CCSID_UTF8,
        persistence: persistence::NOT_PERSISTENT,
        ..MessageDescriptor::default()
    }
}

/// Puts `messages` to SYSTEM.ADMIN.STATISTICS.QUEUE from a connection of the queue
/// manager's own; returns how many were put.
fn put_all(server: &Server, messages: &[PcfMessage]) -> usize {
    if messages.is_empty() {
        return 0;
    }
    let Ok(od) = ObjectDescriptor::queue(STATISTICS_QUEUE) else {
        return 0;
    };
    let info = ConnectionInfo {
        application_name: "ferry statistics".to_string(),
        channel: String::new(),
        connection_name: String::new(),
        user_id: server.administrators.process_user().to_string(),
        pid: Some(std::process::id()),
    };
    let Ok(conn) = server.with_engine(|e, now, fx| e.connect(info, now, fx)) else {
        return 0;
    };
    let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::NEW_MSG_ID);
    let mut put = 0;
    for message in messages {
        let body = bytes::Bytes::from(message.encode(Encoding::Native));
        let mut md = statistics_md();
        if server
            .with_engine(|e, now, fx| e.put1(conn, &od, &mut md, &pmo, body, now, fx))
            .is_ok()
        {
            put += 1;
        }
    }
    server.with_engine(|e, now, fx| e.disconnect(conn, true, now, fx));
    put
}
