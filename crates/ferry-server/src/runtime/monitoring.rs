//! Resource monitoring as IBM MQ does it: the METADATA publications (retained, made
//! once at start) and, every `Monitoring:PublicationInterval` seconds, the data
//! publications of each class and type someone subscribes to, on
//! `$SYS/MQ/INFO/QMGR/<qmgr>/Monitor/...` (ferry-monitoring's table and PCF layout);
//! and the Prometheus exposition of the same values ([`Server::prometheus_text`]).
//!
//! Publications go through the pub/sub engine like any application's, from a
//! connection the queue manager makes for each round and ends after it. A round asks
//! the subscription index first: when nobody subscribes to a data topic it builds and
//! publishes nothing, and per-queue (STATQ) publications are made only for the queues
//! named in subscriptions. The queue manager's own publishing is taken out of the
//! counts it publishes (the round's own calls are measured and subtracted), so STATMQI
//! shows the applications' work only.
//!
//! Host and process figures (CPU, RAM, file systems) are read from Linux's /proc and
//! statvfs where a class needs them; elsewhere they are left out, not made up.

use super::clock;
use super::server::Server;
use ferry_engine::{ConnectionInfo, Timestamp};
use ferry_monitoring::prometheus::{
    channel_status, ChannelMetrics, Snapshot, SubscriptionMetrics, TopicMetrics, QMGR_RUNNING,
};
use ferry_monitoring::publication::{data_message, data_topic, metadata, monitor_root};
use ferry_monitoring::table::{interval_value, Element, MonitorClass, MonitorType};
use ferry_monitoring::{MqiCounters, QueueSample, ResourceSample, CLASSES};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::pcf::{Encoding, PcfMessage, FORMAT_ADMIN};
use ferry_mqi::{FixedStr, MessageDescriptor, OpenOptions, PutOptionFlags, PutOptions};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use ferry_monitoring::table::CpuTimes;

fn read_cpu_times() -> Option<CpuTimes> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command (which may hold spaces) closed by ')'.
    let rest = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let proc_user = f.get(11)?.parse().ok()?;
    let proc_system = f.get(12)?.parse().ok()?;
    let host = std::fs::read_to_string("/proc/stat").ok()?;
    let cpu = host.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = cpu
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    Some(CpuTimes {
        proc_user,
        proc_system,
        host_user: at(0) + at(1),
        host_system: at(2) + at(5) + at(6),
        host_total: v.iter().take(8).sum(),
        at: Some(Instant::now()),
    })
}

fn clock_ticks() -> u64 {
    // SAFETY: sysconf only reads a configuration value.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(t).ok().filter(|t| *t > 0).unwrap_or(100)
}

fn hundredths_pct(part: u64, whole: u64) -> Option<i64> {
    (whole > 0).then(|| i64::try_from(part.saturating_mul(10_000) / whole).unwrap_or(i64::MAX))
}

/// (bytes in use, size in bytes) of the file system holding `path`.
fn fs_usage(path: &std::path::Path) -> Option<(u64, u64)> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs writes into the zeroed struct we own; the path is NUL-terminated.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    let block = s.f_frsize as u64;
    let size = (s.f_blocks as u64).saturating_mul(block);
    let free = (s.f_bavail as u64).saturating_mul(block);
    Some((size.saturating_sub(free), size))
}

/// Reads the host's and the queue manager's figures; CPU percentages cover the time
/// since `prev` (updated to now).
pub(crate) fn sample_resources(server: &Server, prev: &mut CpuTimes) -> ResourceSample {
    let mut r = ResourceSample::default();
    if let Some(now) = read_cpu_times() {
        let host = now.host_total.saturating_sub(prev.host_total);
        if prev.at.is_some() && host > 0 {
            r.system_user_cpu = hundredths_pct(now.host_user.saturating_sub(prev.host_user), host);
            r.system_system_cpu =
                hundredths_pct(now.host_system.saturating_sub(prev.host_system), host);
            // The process's share of all CPUs over the same wall time.
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
            let wall_ticks = prev
                .at
                .map(|t| now.at.unwrap_or_else(Instant::now).duration_since(t))
                .map_or(0, |d| d.as_millis() as u64 * clock_ticks() / 1000)
                .saturating_mul(cpus);
            r.qmgr_user_cpu =
                hundredths_pct(now.proc_user.saturating_sub(prev.proc_user), wall_ticks);
            r.qmgr_system_cpu =
                hundredths_pct(now.proc_system.saturating_sub(prev.proc_system), wall_ticks);
        }
        *prev = now;
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        let l: Vec<Option<i64>> = load
            .split_whitespace()
            .take(3)
            .map(|x| x.parse::<f64>().ok().map(|v| (v * 100.0).round() as i64))
            .collect();
        r.load_1 = l.first().copied().flatten();
        r.load_5 = l.get(1).copied().flatten();
        r.load_15 = l.get(2).copied().flatten();
    }
    if let Ok(mem) = std::fs::read_to_string("/proc/meminfo") {
        let kb = |key: &str| {
            mem.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<u64>().ok())
        };
        if let (Some(total), Some(avail)) = (kb("MemTotal:"), kb("MemAvailable:")) {
            r.ram_total_mb = i64::try_from(total / 1024).ok();
            r.ram_free = hundredths_pct(avail, total);
        }
    }
    if let Ok(statm) = std::fs::read_to_string("/proc/self/statm") {
        // SAFETY: sysconf only reads a configuration value.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
        if let Some(pages) = statm
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<u64>().ok())
        {
            r.qmgr_ram_mb = i64::try_from(pages * page / 1_048_576).ok();
        }
    }
    if let Some((used, size)) = fs_usage(&server.paths.dir) {
        r.data_fs_in_use_mb = i64::try_from(used / 1_048_576).ok();
        r.data_fs_free = hundredths_pct(size.saturating_sub(used), size);
    }
    if let Some(log) = server.log.as_ref() {
        let s = log.summary();
        r.log_written_bytes = i64::try_from(s.bytes_written).ok();
        r.log_in_use = i64::try_from(s.in_use_percent()).ok().map(|p| p * 100);
        r.log_in_use_bytes = i64::try_from(s.space_in_use).ok();
        r.log_max_bytes = i64::try_from(s.space_total).ok();
        if let Some((used, size)) = fs_usage(std::path::Path::new(&server.ini.log.path)) {
            r.log_fs_in_use_bytes = i64::try_from(used).ok();
            r.log_fs_max_bytes = i64::try_from(size).ok();
        }
    }
    r
}

/// MQMD of a monitoring publication: PCF (MQADMIN), native encoding, UTF-8,
/// non-persistent.
fn publication_md() -> MessageDescriptor {
    MessageDescriptor {
        format: FixedStr::new(FORMAT_ADMIN).unwrap_or(FixedStr::BLANK),
        encoding: Encoding::Native.mqmd_value(),
        ccsid: ferry_mqi::pcf::CCSID_UTF8,
        persistence: persistence::NOT_PERSISTENT,
        ..MessageDescriptor::default()
    }
}

/// Publishes `messages` (topic, PCF) from a connection of the queue manager's own,
/// retained when `retain`; returns how many were published.
fn publish_all(server: &Server, messages: &[(String, PcfMessage)], retain: bool) -> usize {
    if messages.is_empty() {
        return 0;
    }
    let info = ConnectionInfo {
        application_name: "ferry resource monitor".to_string(),
        channel: String::new(),
        connection_name: String::new(),
        user_id: server.administrators.process_user().to_string(),
        pid: Some(std::process::id()),
    };
    let Ok(conn) = server.with_engine(|e, now, fx| {
        let conn = e.connect(info, now, fx)?;
        e.set_system_connection(conn);
        Ok::<_, ferry_mqi::MqError>(conn)
    }) else {
        return 0;
    };
    let mut options = PutOptionFlags::NO_SYNCPOINT;
    if retain {
        options |= PutOptionFlags::RETAIN;
    }
    let pmo = PutOptions::new(options);
    let mut published = 0;
    for (topic, message) in messages {
        let body = bytes::Bytes::from(message.encode(Encoding::Native));
        let done = server.with_engine(|e, now, fx| {
            let opened = e
                .open_topic(conn, "", topic, OpenOptions::OUTPUT, fx)
                .ok()?;
            let mut md = publication_md();
            let r = e.put(conn, opened.hobj, &mut md, &pmo, body, now, fx);
            let _ = e.close(conn, opened.hobj, ferry_mqi::CloseOptions::empty(), now, fx);
            r.ok()
        });
        if done.is_some() {
            published += 1;
        }
    }
    server.with_engine(|e, now, fx| e.disconnect(conn, true, now, fx));
    published
}

/// Subtracts `own` (the queue manager's own monitoring work) from `m`.
fn without(m: MqiCounters, own: &MqiCounters) -> MqiCounters {
    m.minus(own)
}

/// What one round compares with the next.
struct Reading {
    mqi: MqiCounters,
    resources: ResourceSample,
    at: Instant,
}

/// The publisher: metadata at start, then a round every interval.
pub(crate) async fn monitor_task(server: Rc<Server>) {
    let before = server.engine.borrow().mqi_counters();
    let published = publish_all(&server, &metadata(&server.name), true);
    tracing::debug!("{published} monitoring METADATA publications retained");
    // Publishing the METADATA was the queue manager's own work.
    let mut own = server.engine.borrow().mqi_counters().minus(&before);
    let interval = Duration::from_secs(server.ini.monitoring.interval_secs.max(1));
    let mut cpu = CpuTimes::default();
    let mut prev = Reading {
        mqi: without(server.engine.borrow().mqi_counters(), &own),
        resources: sample_resources(&server, &mut cpu),
        at: Instant::now(),
    };
    let mut queues: BTreeMap<String, QueueSample> = BTreeMap::new();
    let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + interval, interval);
    loop {
        tick.tick().await;
        round(&server, &mut prev, &mut own, &mut cpu, &mut queues);
    }
}

fn round(
    server: &Server,
    prev: &mut Reading,
    own: &mut MqiCounters,
    cpu: &mut CpuTimes,
    queues: &mut BTreeMap<String, QueueSample>,
) {
    let qm = &server.name;
    let wanted: Vec<(&'static MonitorClass, &'static MonitorType)> = {
        let e = server.engine.borrow();
        CLASSES
            .iter()
            .filter(|c| !c.per_object)
            .flat_map(|c| c.types.iter().map(move |t| (c, t)))
            .filter(|(c, t)| e.has_subscribers(&data_topic(qm, c, t, None)))
            .collect()
    };
    let statq_prefix = format!("{}/STATQ/", monitor_root(qm));
    let watched = server.engine.borrow().subscribed_under(&statq_prefix);
    if wanted.is_empty() && watched.is_empty() {
        // Nobody subscribes: nothing is read or made. The next interval starts now.
        queues.clear();
        *prev = Reading {
            mqi: without(server.engine.borrow().mqi_counters(), own),
            resources: prev.resources,
            at: Instant::now(),
        };
        return;
    }
    let before = server.engine.borrow().mqi_counters();
    debug_assert!(
        own.topic_put_count() <= before.topic_put_count() && own.conns <= before.conns,
        "the monitor's own work is part of what the engine counted"
    );
    let cur = Reading {
        mqi: without(before, own),
        resources: if wanted
            .iter()
            .any(|(c, _)| c.name == "CPU" || c.name == "DISK")
        {
            sample_resources(server, cpu)
        } else {
            ResourceSample::default()
        },
        at: Instant::now(),
    };
    let interval_us = i64::try_from(cur.at.duration_since(prev.at).as_micros()).unwrap_or(i64::MAX);
    let mut messages = Vec::new();
    for (class, ty) in &wanted {
        let values = element_values(
            ty.elements,
            (&cur.mqi, &cur.resources, None),
            (&prev.mqi, &prev.resources, None),
        );
        messages.push((
            data_topic(qm, class, ty, None),
            data_message(qm, class, ty, None, interval_us, values),
        ));
    }
    // STATQ: "QUEUE/TYPE" of each subscription (`&` stands for `/` in names).
    let statq = CLASSES.iter().find(|c| c.per_object);
    let mut seen: BTreeMap<String, QueueSample> = BTreeMap::new();
    for rest in &watched {
        let (Some(class), Some((object, type_name))) = (statq, rest.rsplit_once('/')) else {
            continue;
        };
        let Some(ty) = class.find_type(type_name) else {
            continue;
        };
        let queue = object.replace('&', "/");
        let Some(now) = seen
            .get(&queue)
            .copied()
            .or_else(|| server.engine.borrow().queue_sample(&queue))
        else {
            continue;
        };
        seen.insert(queue.clone(), now);
        // A queue first watched this round starts its interval now.
        let Some(before) = queues.get(&queue) else {
            continue;
        };
        let values = element_values(
            ty.elements,
            (&cur.mqi, &cur.resources, Some(&now)),
            (&prev.mqi, &prev.resources, Some(before)),
        );
        messages.push((
            data_topic(qm, class, ty, Some(&queue)),
            data_message(qm, class, ty, Some(&queue), interval_us, values),
        ));
    }
    *queues = seen;
    let published = publish_all(server, &messages, false);
    tracing::trace!(
        "{published} of {} monitoring publications made",
        messages.len()
    );
    // What publishing counted is the queue manager's own work.
    let after = server.engine.borrow().mqi_counters();
    *own = own.plus(&after.minus(&before));
    debug_assert!(
        after.put_count() == before.put_count(),
        "publishing puts to no queue"
    );
    *prev = cur;
}

fn element_values(
    elements: &[Element],
    cur: (&MqiCounters, &ResourceSample, Option<&QueueSample>),
    prev: (&MqiCounters, &ResourceSample, Option<&QueueSample>),
) -> Vec<(i32, i64)> {
    elements
        .iter()
        .filter_map(|e| interval_value(e, cur, prev).map(|v| (e.id, v)))
        .collect()
}

// `GET /metrics` of the HTTP server (built apart) calls these; until it is merged
// nothing in this crate does.
impl Server {
    /// The Prometheus text exposition (format 0.0.4; [`ferry_monitoring::prometheus`])
    /// of this queue manager: qmgr, queue, channel and recovery-log metrics with IBM's
    /// exporter's names and labels, queues and channels chosen by qm.ini's
    /// `Monitoring:Prometheus*` keys. Reads counters and status only (no message
    /// bodies); for `GET /metrics` with content type
    /// [`ferry_monitoring::prometheus::CONTENT_TYPE`]. Runs on the queue manager's
    /// thread (the engine is not shared across threads).
    pub fn prometheus_text(&self) -> String {
        ferry_monitoring::render(&self.prometheus_snapshot())
    }

    /// What [`Server::prometheus_text`] renders.
    pub fn prometheus_snapshot(&self) -> Snapshot {
        let now: Timestamp = clock::now();
        let resources = {
            let mut prev = self.scrape_cpu.get();
            let r = sample_resources(self, &mut prev);
            self.scrape_cpu.set(prev);
            r
        };
        let queue_filter = self.ini.monitoring.queue_filter().unwrap_or_default();
        let channel_filter = self.ini.monitoring.channel_filter().unwrap_or_default();
        let (mqi, queues, description, topic_nodes, subscriptions) = {
            let e = self.engine.borrow();
            (
                e.mqi_counters(),
                e.queue_metrics(&queue_filter, now),
                e.qmgr().descr,
                e.topic_node_statuses("#"),
                e.subscription_status_records(),
            )
        };
        let (topics, subscriptions) = pubsub_metrics(topic_nodes, subscriptions, now);
        let channels = self
            .endpoints
            .channel_status(&|name| channel_filter.matches(name))
            .into_iter()
            .map(|c| {
                let (status, messages, connname, rqmname) = match &c.message {
                    Some(m) => (
                        channel_status::from_mqsc(m.state.keyword()),
                        m.messages,
                        m.connection_name.clone(),
                        m.remote_qmgr.clone(),
                    ),
                    None => (
                        if c.running {
                            channel_status::RUNNING
                        } else {
                            channel_status::STOPPED
                        },
                        c.messages_sent + c.messages_received,
                        String::new(),
                        String::new(),
                    ),
                };
                ChannelMetrics {
                    name: c.name.clone(),
                    channel_type: c.channel_type.keyword().to_string(),
                    status,
                    messages,
                    bytes_sent: c.bytes_sent,
                    bytes_received: c.bytes_received,
                    connname,
                    rqmname,
                    ..Default::default()
                }
            })
            .collect();
        Snapshot {
            qmgr: self.name.clone(),
            platform: "UNIX".into(),
            description,
            hostname: hostname(),
            status: QMGR_RUNNING,
            uptime_secs: now.0.saturating_sub(self.started_ms) / 1000,
            connections: self.conversations.get(),
            mqi,
            resources,
            queues,
            channels,
            topics,
            subscriptions,
        }
    }
}

/// The topic nodes with publishers or subscribers (each with the copies its
/// subscriptions received) and every subscription, as the exporter shows them.
fn pubsub_metrics(
    nodes: Vec<ferry_objects::status::TopicNodeStatus>,
    subscriptions: Vec<ferry_objects::status::SubscriptionStatusRecord>,
    now: Timestamp,
) -> (Vec<TopicMetrics>, Vec<SubscriptionMetrics>) {
    let mut received: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for sub in &subscriptions {
        *received.entry(sub.topic_string.as_str()).or_default() += sub.messages;
    }
    let topics = nodes
        .into_iter()
        .filter(|n| n.pub_count + n.sub_count > 0)
        .map(|n| TopicMetrics {
            messages_received: received.get(n.topic_string.as_str()).copied().unwrap_or(0),
            publishers: n.pub_count,
            subscribers: n.sub_count,
            topic_string: n.topic_string,
        })
        .collect();
    let subscriptions = subscriptions
        .into_iter()
        .map(|sub| SubscriptionMetrics {
            time_since_message: sub
                .last_message_ms
                .map(|ms| now.0.saturating_sub(ms) / 1000),
            name: sub.name,
            sub_id: sub.sub_id,
            topic_string: sub.topic_string,
            sub_type: sub.sub_type,
            messages: sub.messages,
        })
        .collect();
    (topics, subscriptions)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}
