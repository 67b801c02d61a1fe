//! The Prometheus text exposition (format 0.0.4) of a queue manager, with the metric
//! names and labels of IBM's exporter (mq-metric-samples' `mq_prometheus`), so its
//! dashboards and alerts work unchanged: `ibmmq_qmgr_*` (the CPU, DISK and STATMQI
//! elements of [`crate::table::CLASSES`] plus status), `ibmmq_queue_*` (STATQ elements
//! plus DISPLAY QSTATUS values), `ibmmq_channel_*` (DISPLAY CHSTATUS values),
//! `ibmmq_topic_*` (DISPLAY TPSTATUS) and `ibmmq_subscription_*` (DISPLAY SBSTATUS).
//!
//! Units are bytes, seconds and percent (0-100) as the exporter normalises them; an
//! element of datatype DELTA is a counter (its value since the queue manager started),
//! everything else a gauge. [`render`] is pure: the runtime fills a [`Snapshot`] from
//! state it keeps anyway (counters, queue and channel status), choosing queues and
//! channels with a [`NameFilter`] that visits only the names it includes, so a scrape
//! costs the same whatever number of queues the filter leaves out.

use crate::counters::MqiCounters;
use crate::table::{lifetime_value, Datatype, QueueSample, ResourceSample, CLASSES};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::ops::Bound;

/// The content type of the exposition (for the HTTP reply).
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Why a name filter is not valid.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum FilterError {
    /// A pattern is empty or has characters MQ object names cannot have.
    #[error("'{0}' is not a generic object name (letters, digits, . / _ % and *)")]
    BadPattern(String),
}

/// Which objects to export: names matching an include pattern and no exclude pattern.
/// Patterns are MQ generic names: `*` matches any characters (`APP.*`, `*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameFilter {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl Default for NameFilter {
    /// Everything but `SYSTEM.*`.
    fn default() -> Self {
        NameFilter {
            include: vec!["*".into()],
            exclude: vec!["SYSTEM.*".into()],
        }
    }
}

fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, rest)) => {
            let Some(tail) = name.strip_prefix(head) else {
                return false;
            };
            if rest.is_empty() {
                return true;
            }
            (0..=tail.len())
                .filter(|i| tail.is_char_boundary(*i))
                .any(|i| glob(rest, &tail[i..]))
        }
    }
}

fn literal_prefix(pattern: &str) -> &str {
    pattern.split('*').next().unwrap_or("")
}

impl NameFilter {
    /// A filter of comma- or space-separated include and exclude pattern lists.
    pub fn parse(include: &str, exclude: &str) -> Result<Self, FilterError> {
        let list = |s: &str| -> Result<Vec<String>, FilterError> {
            s.split([',', ' '])
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(|p| {
                    if p.chars()
                        .all(|c| c.is_ascii_alphanumeric() || "./_%*".contains(c))
                    {
                        Ok(p.to_string())
                    } else {
                        Err(FilterError::BadPattern(p.to_string()))
                    }
                })
                .collect()
        };
        Ok(NameFilter {
            include: list(include)?,
            exclude: list(exclude)?,
        })
    }

    /// Whether `name` is exported.
    pub fn matches(&self, name: &str) -> bool {
        self.include.iter().any(|p| glob(p, name)) && !self.exclude.iter().any(|p| glob(p, name))
    }

    /// The entries of `map` (keyed by object name) the filter exports, in name order.
    /// Only the ranges of names the include patterns start with are visited, and a
    /// run of names under an excluded prefix (`SYSTEM.*`) is stepped over in one
    /// look-up: the cost follows the names exported, not the names in `map`.
    pub fn select<'a, V>(&self, map: &'a BTreeMap<String, V>) -> Vec<(&'a str, &'a V)> {
        let mut out: BTreeMap<&'a str, &'a V> = BTreeMap::new();
        // Exclusions that are a literal prefix and `*`: whole ranges to skip.
        let skips: Vec<&str> = self
            .exclude
            .iter()
            .filter(|p| p.ends_with('*') && p.matches('*').count() == 1)
            .map(|p| literal_prefix(p))
            .collect();
        for inc in &self.include {
            let prefix = literal_prefix(inc);
            let mut iter = map.range::<str, _>((Bound::Included(prefix), Bound::Unbounded));
            while let Some((name, v)) = iter.next() {
                if !name.starts_with(prefix) {
                    break;
                }
                // An excluded prefix longer than the include's: jump past its names.
                if let Some(skip) = skips
                    .iter()
                    .find(|s| s.len() > prefix.len() && name.starts_with(**s))
                {
                    let past = format!("{skip}{}", char::MAX);
                    iter = map.range::<str, _>((Bound::Excluded(past.as_str()), Bound::Unbounded));
                    continue;
                }
                if self.matches(name) {
                    out.insert(name.as_str(), v);
                }
            }
        }
        out.into_iter().collect()
    }
}

/// One queue's exported values.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueMetrics {
    /// Queue name (label `queue`).
    pub name: String,
    /// DESCR (label `description`).
    pub description: String,
    /// USAGE: `NORMAL` or `XMITQ` (label `usage`).
    pub usage: &'static str,
    /// CLUSTER (label `cluster`).
    pub cluster: String,
    /// Counters, depth and handle counts.
    pub sample: QueueSample,
    /// MAXDEPTH.
    pub max_depth: i64,
    /// UNCOM.
    pub uncommitted: u64,
    /// MSGAGE, seconds (none: the queue is empty).
    pub oldest_message_age: Option<u64>,
    /// Seconds since the last put (none: no put since the start).
    pub time_since_put: Option<u64>,
    /// Seconds since the last destructive get.
    pub time_since_get: Option<u64>,
}

/// One channel instance's exported values (DISPLAY CHSTATUS).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChannelMetrics {
    /// Channel name (label `channel`).
    pub name: String,
    /// DESCR.
    pub description: String,
    /// CHLTYPE as MQSC names it (label `type`).
    pub channel_type: String,
    /// RQMNAME.
    pub rqmname: String,
    /// CONNAME.
    pub connname: String,
    /// JOBNAME.
    pub jobname: String,
    /// STATUS as MQ's MQCHS_* number.
    pub status: i64,
    /// MSGS.
    pub messages: u64,
    /// BYTSSENT.
    pub bytes_sent: u64,
    /// BYTSRCVD.
    pub bytes_received: u64,
}

/// One node of the topic tree with publishers or subscribers (DISPLAY TPSTATUS).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TopicMetrics {
    /// TOPICSTR (label `topic`).
    pub topic_string: String,
    /// PUBCOUNT.
    pub publishers: u64,
    /// SUBCOUNT.
    pub subscribers: u64,
    /// NUMMSGS summed over the node's subscriptions: copies they received.
    pub messages_received: u64,
}

/// One subscription (DISPLAY SBSTATUS).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionMetrics {
    /// SUB (label `subscription`; blank for an unnamed non-durable subscription).
    pub name: String,
    /// SUBID (label `subid`).
    pub sub_id: String,
    /// TOPICSTR (label `topic`).
    pub topic_string: String,
    /// SUBTYPE: API, ADMIN or PROXY (label `type`).
    pub sub_type: String,
    /// NUMMSGS: copies received since the queue manager started.
    pub messages: u64,
    /// Seconds since it last received a copy (none: never).
    pub time_since_message: Option<u64>,
}

/// MQCHS_* values.
pub mod channel_status {
    /// MQCHS_INACTIVE.
    pub const INACTIVE: i64 = 0;
    /// MQCHS_BINDING.
    pub const BINDING: i64 = 1;
    /// MQCHS_STARTING.
    pub const STARTING: i64 = 2;
    /// MQCHS_RUNNING.
    pub const RUNNING: i64 = 3;
    /// MQCHS_STOPPING.
    pub const STOPPING: i64 = 4;
    /// MQCHS_RETRYING.
    pub const RETRYING: i64 = 5;
    /// MQCHS_STOPPED.
    pub const STOPPED: i64 = 6;
    /// MQCHS_REQUESTING.
    pub const REQUESTING: i64 = 7;
    /// MQCHS_PAUSED.
    pub const PAUSED: i64 = 8;
    /// MQCHS_DISCONNECTED.
    pub const DISCONNECTED: i64 = 9;
    /// MQCHS_INITIALIZING.
    pub const INITIALIZING: i64 = 13;
    /// MQCHS_SWITCHING.
    pub const SWITCHING: i64 = 14;

    /// The MQCHS value of an MQSC STATUS word (RUNNING, STOPPED...).
    pub fn from_mqsc(word: &str) -> i64 {
        match word {
            "BINDING" => BINDING,
            "STARTING" => STARTING,
            "RUNNING" => RUNNING,
            "STOPPING" => STOPPING,
            "RETRYING" => RETRYING,
            "STOPPED" => STOPPED,
            "REQUESTING" => REQUESTING,
            "PAUSED" => PAUSED,
            "DISCONNECTED" => DISCONNECTED,
            "INITIALIZING" => INITIALIZING,
            "SWITCHING" => SWITCHING,
            _ => INACTIVE,
        }
    }

    /// mq-metric-samples' `channel_status_squash`: 0 stopped, 1 transitional, 2 running.
    pub fn squash(status: i64) -> i64 {
        match status {
            RUNNING => 2,
            INACTIVE | STOPPED | DISCONNECTED => 0,
            _ => 1,
        }
    }
}

/// MQQMSTA_RUNNING: `ibmmq_qmgr_status` of a running queue manager.
pub const QMGR_RUNNING: i64 = 2;

/// Everything one scrape shows.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Queue manager name (label `qmgr`).
    pub qmgr: String,
    /// Label `platform` (`UNIX`, as MQ on Linux says).
    pub platform: String,
    /// DESCR of the queue manager (label `description`).
    pub description: String,
    /// Host name (label `hostname`).
    pub hostname: String,
    /// MQQMSTA_* (2 running).
    pub status: i64,
    /// Seconds since the start.
    pub uptime_secs: u64,
    /// Connections now.
    pub connections: u64,
    /// MQI counters since the start.
    pub mqi: MqiCounters,
    /// Host and queue manager measurements.
    pub resources: ResourceSample,
    /// The queues the filter exports.
    pub queues: Vec<QueueMetrics>,
    /// The channel instances the filter exports.
    pub channels: Vec<ChannelMetrics>,
    /// The topic nodes with publishers or subscribers.
    pub topics: Vec<TopicMetrics>,
    /// The subscriptions.
    pub subscriptions: Vec<SubscriptionMetrics>,
}

fn escape(v: &str, out: &mut String) {
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

fn labels(pairs: &[(&str, &str)], out: &mut String) {
    out.push('{');
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(k);
        out.push_str("=\"");
        escape(v, out);
        out.push('"');
    }
    out.push('}');
}

fn family(out: &mut String, name: &str, help: &str, counter: bool) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(
        out,
        "# TYPE {name} {}",
        if counter { "counter" } else { "gauge" }
    );
}

fn sample(out: &mut String, name: &str, pairs: &[(&str, &str)], value: f64) {
    out.push_str(name);
    labels(pairs, out);
    // Integers print without a fraction; Prometheus reads both.
    if value.fract() == 0.0 && value.abs() < 1e15 {
        let _ = writeln!(out, " {}", value as i64);
    } else {
        let _ = writeln!(out, " {value}");
    }
}

/// The metric name of a STATQ element: `ibmmq_queue_` + name, not doubled when the
/// name starts `queue_` already (as mq-metric-samples does).
pub fn queue_metric_name(metric: &str) -> String {
    if metric.starts_with("queue_") {
        format!("ibmmq_{metric}")
    } else {
        format!("ibmmq_queue_{metric}")
    }
}

/// Renders `s` as Prometheus text format 0.0.4.
pub fn render(s: &Snapshot) -> String {
    let mut out = String::with_capacity(8192 + 2048 * (s.queues.len() + s.channels.len()));
    let qm: [(&str, &str); 4] = [
        ("qmgr", &s.qmgr),
        ("platform", &s.platform),
        ("description", &s.description),
        ("hostname", &s.hostname),
    ];
    let gauge = |out: &mut String, name: &str, help: &str, v: f64| {
        family(out, name, help, false);
        sample(out, name, &qm, v);
    };
    gauge(
        &mut out,
        "ibmmq_qmgr_status",
        "Queue manager status (2 running)",
        s.status as f64,
    );
    gauge(
        &mut out,
        "ibmmq_qmgr_uptime",
        "Seconds since the queue manager started",
        s.uptime_secs as f64,
    );
    gauge(
        &mut out,
        "ibmmq_qmgr_connection_count",
        "Connections to the queue manager",
        s.connections as f64,
    );
    for class in CLASSES.iter().filter(|c| !c.per_object) {
        for ty in class.types {
            for e in ty.elements {
                let Some(v) = lifetime_value(e, &s.mqi, &s.resources, None) else {
                    continue;
                };
                let name = format!("ibmmq_qmgr_{}", e.metric);
                family(
                    &mut out,
                    &name,
                    e.description,
                    e.datatype == Datatype::Delta,
                );
                sample(
                    &mut out,
                    &name,
                    &qm,
                    v as f64 * e.datatype.prometheus_scale(),
                );
            }
        }
    }
    render_queues(s, &mut out);
    render_channels(s, &mut out);
    render_topics(s, &mut out);
    render_subscriptions(s, &mut out);
    out
}

fn render_queues(s: &Snapshot, out: &mut String) {
    if s.queues.is_empty() {
        return;
    }
    type Read = fn(&QueueMetrics) -> Option<f64>;
    let status: [(&str, &str, Read); 8] = [
        ("ibmmq_queue_depth", "Queue depth", |q| {
            Some(q.sample.depth as f64)
        }),
        (
            "ibmmq_queue_oldest_message_age",
            "Age of the oldest message, seconds",
            |q| Some(q.oldest_message_age.unwrap_or(0) as f64),
        ),
        ("ibmmq_queue_input_handles", "Handles open for input", |q| {
            Some(f64::from(q.sample.open_input))
        }),
        (
            "ibmmq_queue_output_handles",
            "Handles open for output",
            |q| Some(f64::from(q.sample.open_output)),
        ),
        (
            "ibmmq_queue_uncommitted_messages",
            "Uncommitted messages",
            |q| Some(q.uncommitted as f64),
        ),
        ("ibmmq_queue_attribute_max_depth", "MAXDEPTH", |q| {
            Some(q.max_depth as f64)
        }),
        (
            "ibmmq_queue_time_since_put",
            "Seconds since the last put",
            |q| q.time_since_put.map(|v| v as f64),
        ),
        (
            "ibmmq_queue_time_since_get",
            "Seconds since the last get",
            |q| q.time_since_get.map(|v| v as f64),
        ),
    ];
    type Emit<'a> = dyn FnMut(&[(&str, &str)]) + 'a;
    let with_labels = |q: &QueueMetrics, f: &mut Emit<'_>| {
        f(&[
            ("qmgr", &s.qmgr),
            ("platform", &s.platform),
            ("queue", &q.name),
            ("usage", q.usage),
            ("description", &q.description),
            ("cluster", &q.cluster),
        ]);
    };
    for (name, help, read) in status {
        family(out, name, help, false);
        for q in &s.queues {
            if let Some(v) = read(q) {
                with_labels(q, &mut |l| sample(out, name, l, v));
            }
        }
    }
    let taken: Vec<&str> = status.iter().map(|(n, _, _)| *n).collect();
    let empty = MqiCounters::default();
    let res = ResourceSample::default();
    for class in CLASSES.iter().filter(|c| c.per_object) {
        for ty in class.types {
            for e in ty.elements {
                let name = queue_metric_name(e.metric);
                if taken.contains(&name.as_str()) {
                    continue;
                }
                family(out, &name, e.description, e.datatype == Datatype::Delta);
                for q in &s.queues {
                    if let Some(v) = lifetime_value(e, &empty, &res, Some(&q.sample)) {
                        let v = v as f64 * e.datatype.prometheus_scale();
                        with_labels(q, &mut |l| sample(out, &name, l, v));
                    }
                }
            }
        }
    }
}

fn render_channels(s: &Snapshot, out: &mut String) {
    if s.channels.is_empty() {
        return;
    }
    type Read = fn(&ChannelMetrics) -> f64;
    let metrics: [(&str, &str, Read); 5] = [
        ("ibmmq_channel_status", "Channel status (MQCHS_*)", |c| {
            c.status as f64
        }),
        (
            "ibmmq_channel_status_squash",
            "Channel status: 0 stopped, 1 transitional, 2 running",
            |c| channel_status::squash(c.status) as f64,
        ),
        ("ibmmq_channel_messages", "Messages sent or received", |c| {
            c.messages as f64
        }),
        ("ibmmq_channel_bytes_sent", "Bytes sent", |c| {
            c.bytes_sent as f64
        }),
        ("ibmmq_channel_bytes_rcvd", "Bytes received", |c| {
            c.bytes_received as f64
        }),
    ];
    for (name, help, read) in metrics {
        family(out, name, help, false);
        for c in &s.channels {
            let l = [
                ("qmgr", s.qmgr.as_str()),
                ("platform", &s.platform),
                ("channel", &c.name),
                ("description", &c.description),
                ("type", &c.channel_type),
                ("rqmname", &c.rqmname),
                ("connname", &c.connname),
                ("jobname", &c.jobname),
            ];
            sample(out, name, &l, read(c));
        }
    }
}

fn render_topics(s: &Snapshot, out: &mut String) {
    if s.topics.is_empty() {
        return;
    }
    // The exporter's `type` label says which TPSTATUS type a value comes from.
    type Read = fn(&TopicMetrics) -> f64;
    let metrics: [(&str, &str, &str, bool, Read); 3] = [
        (
            "ibmmq_topic_publisher_count",
            "Handles open for publishing on the topic (PUBCOUNT)",
            "status",
            false,
            |t| t.publishers as f64,
        ),
        (
            "ibmmq_topic_subscriber_count",
            "Subscriptions on the topic (SUBCOUNT)",
            "status",
            false,
            |t| t.subscribers as f64,
        ),
        (
            "ibmmq_topic_messages_received",
            "Publications the topic's subscriptions received",
            "sub",
            true,
            |t| t.messages_received as f64,
        ),
    ];
    for (name, help, ty, counter, read) in metrics {
        family(out, name, help, counter);
        for t in &s.topics {
            let l = [
                ("qmgr", s.qmgr.as_str()),
                ("platform", &s.platform),
                ("topic", &t.topic_string),
                ("type", ty),
            ];
            sample(out, name, &l, read(t));
        }
    }
}

fn render_subscriptions(s: &Snapshot, out: &mut String) {
    if s.subscriptions.is_empty() {
        return;
    }
    let labels = |sub: &SubscriptionMetrics| {
        [
            ("qmgr", s.qmgr.clone()),
            ("platform", s.platform.clone()),
            ("subscription", sub.name.clone()),
            ("subid", sub.sub_id.clone()),
            ("topic", sub.topic_string.clone()),
            ("type", sub.sub_type.clone()),
        ]
    };
    // The exporter's name, misspelling included, so its dashboards find it.
    let name = "ibmmq_subscription_messsages_received";
    family(
        out,
        name,
        "Publications the subscription received (NUMMSGS)",
        true,
    );
    for sub in &s.subscriptions {
        let l = labels(sub);
        let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sample(out, name, &l, sub.messages as f64);
    }
    let name = "ibmmq_subscription_time_since_message_published";
    family(
        out,
        name,
        "Seconds since the subscription last received a publication",
        false,
    );
    for sub in &s.subscriptions {
        let Some(secs) = sub.time_since_message else {
            continue;
        };
        let l = labels(sub);
        let l: Vec<(&str, &str)> = l.iter().map(|(k, v)| (*k, v.as_str())).collect();
        sample(out, name, &l, secs as f64);
    }
}

/// Checks `text` against the text format's grammar as far as a scraper relies on it:
/// every sample's family was declared by `# TYPE` before it, names and label names are
/// valid, label values are quoted, values parse as numbers. Returns the first problem.
pub fn check_exposition(text: &str) -> Result<(), String> {
    let valid_name = |n: &str| {
        !n.is_empty()
            && n.chars().enumerate().all(|(i, c)| {
                c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit())
            })
    };
    let mut declared = std::collections::BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let no = i + 1;
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split(' ');
            let name = parts.next().unwrap_or("");
            let kind = parts.next().unwrap_or("");
            if !valid_name(name) || !["counter", "gauge"].contains(&kind) {
                return Err(format!("line {no}: bad TYPE line"));
            }
            if !declared.insert(name.to_string()) {
                return Err(format!("line {no}: {name} declared twice"));
            }
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        let (name, rest) = match line.find('{') {
            Some(b) => (&line[..b], &line[b..]),
            None => return Err(format!("line {no}: sample without labels")),
        };
        if !valid_name(name) || !declared.contains(name) {
            return Err(format!("line {no}: sample of undeclared {name}"));
        }
        // Labels: k="v" pairs, values with \\, \" and \n escapes.
        let mut chars = rest[1..].chars().peekable();
        loop {
            let key: String = chars.by_ref().take_while(|c| *c != '=').collect();
            if !valid_name(&key) || chars.next() != Some('"') {
                return Err(format!("line {no}: bad label {key}"));
            }
            loop {
                match chars.next() {
                    Some('\\') => {
                        if !matches!(chars.next(), Some('\\' | '"' | 'n')) {
                            return Err(format!("line {no}: bad escape"));
                        }
                    }
                    Some('"') => break,
                    Some(_) => {}
                    None => return Err(format!("line {no}: unterminated label value")),
                }
            }
            match chars.next() {
                Some(',') => continue,
                Some('}') => break,
                _ => return Err(format!("line {no}: bad label list")),
            }
        }
        let value: String = chars.collect();
        let value = value.strip_prefix(' ').unwrap_or("");
        if value.parse::<f64>().is_err() {
            return Err(format!("line {no}: bad value '{value}'"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snapshot(queues: &[&str]) -> Snapshot {
        let mut mqi = MqiCounters::default();
        mqi.note_put(false, true, 100);
        mqi.note_put(false, false, 50);
        Snapshot {
            qmgr: "QM1".into(),
            platform: "UNIX".into(),
            description: "a \"quoted\" \\ description".into(),
            hostname: "host".into(),
            status: QMGR_RUNNING,
            uptime_secs: 42,
            connections: 3,
            mqi,
            resources: ResourceSample {
                qmgr_user_cpu: Some(1234),
                ram_total_mb: Some(2),
                ..Default::default()
            },
            queues: queues
                .iter()
                .map(|n| QueueMetrics {
                    name: n.to_string(),
                    usage: "NORMAL",
                    max_depth: 5000,
                    sample: QueueSample {
                        depth: 7,
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            channels: vec![ChannelMetrics {
                name: "TO.QM2".into(),
                channel_type: "SDR".into(),
                status: channel_status::RUNNING,
                messages: 9,
                ..Default::default()
            }],
            topics: vec![TopicMetrics {
                topic_string: "price/fruit".into(),
                publishers: 1,
                subscribers: 2,
                messages_received: 6,
            }],
            subscriptions: vec![
                SubscriptionMetrics {
                    name: "APPLES".into(),
                    sub_id: "414D5120".into(),
                    topic_string: "price/fruit".into(),
                    sub_type: "API".into(),
                    messages: 6,
                    time_since_message: Some(3),
                },
                SubscriptionMetrics {
                    name: String::new(),
                    sub_id: "414D5121".into(),
                    topic_string: "price/fruit".into(),
                    sub_type: "API".into(),
                    ..Default::default()
                },
            ],
        }
    }

    #[test]
    fn renders_mqs_names_labels_and_units() {
        let text = render(&snapshot(&["APP.IN"]));
        check_exposition(&text).expect("valid exposition");
        assert!(text.contains("# TYPE ibmmq_qmgr_interval_mqput_mqput1_total_count counter\n"));
        assert!(text.contains("ibmmq_qmgr_interval_mqput_mqput1_total_count{qmgr=\"QM1\",platform=\"UNIX\",description=\"a \\\"quoted\\\" \\\\ description\",hostname=\"host\"} 2\n"));
        assert!(text.contains("ibmmq_qmgr_put_persistent_messages_bytes{"));
        // PERCENT hundredths → percent; MB → bytes.
        assert!(text.contains("ibmmq_qmgr_user_cpu_time_estimate_for_queue_manager_percentage{qmgr=\"QM1\",platform=\"UNIX\",description=\"a \\\"quoted\\\" \\\\ description\",hostname=\"host\"} 12.34\n"));
        assert!(text.contains("hostname=\"host\"} 2097152\n"));
        assert!(text.contains("# TYPE ibmmq_queue_depth gauge\n"));
        assert!(text.contains("ibmmq_queue_depth{qmgr=\"QM1\",platform=\"UNIX\",queue=\"APP.IN\",usage=\"NORMAL\",description=\"\",cluster=\"\"} 7\n"));
        assert!(text.contains("# TYPE ibmmq_queue_mqput_mqput1_count counter\n"));
        assert!(text.contains("# TYPE ibmmq_queue_average_queue_time_seconds gauge\n"));
        assert_eq!(text.matches("# TYPE ibmmq_queue_depth ").count(), 1);
        assert!(text.contains(
            "ibmmq_channel_status_squash{qmgr=\"QM1\",platform=\"UNIX\",channel=\"TO.QM2\""
        ));
        assert!(text.contains("# TYPE ibmmq_qmgr_status gauge\n"));
        // Not measured: left out rather than shown as 0.
        assert!(!text.contains("ibmmq_qmgr_cpu_load_one_minute_average_percentage{"));
    }

    #[test]
    fn renders_topics_and_subscriptions_as_the_exporter_names_them() {
        let text = render(&snapshot(&[]));
        check_exposition(&text).expect("valid exposition");
        assert!(text.contains("ibmmq_topic_subscriber_count{qmgr=\"QM1\",platform=\"UNIX\",topic=\"price/fruit\",type=\"status\"} 2\n"));
        assert!(text.contains("ibmmq_topic_publisher_count{qmgr=\"QM1\",platform=\"UNIX\",topic=\"price/fruit\",type=\"status\"} 1\n"));
        assert!(text.contains("# TYPE ibmmq_topic_messages_received counter\n"));
        // The exporter's misspelling, kept so its dashboards find the series.
        assert!(text.contains("ibmmq_subscription_messsages_received{qmgr=\"QM1\",platform=\"UNIX\",subscription=\"APPLES\",subid=\"414D5120\",topic=\"price/fruit\",type=\"API\"} 6\n"));
        assert!(text.contains("ibmmq_subscription_time_since_message_published{qmgr=\"QM1\",platform=\"UNIX\",subscription=\"APPLES\",subid=\"414D5120\",topic=\"price/fruit\",type=\"API\"} 3\n"));
        // A subscription that never received a copy has no "time since".
        assert_eq!(
            text.matches("ibmmq_subscription_time_since_message_published{")
                .count(),
            1
        );
    }

    #[test]
    fn checker_refuses_broken_text() {
        assert!(check_exposition("x{a=\"1\"} 1\n").is_err());
        assert!(check_exposition("# TYPE x gauge\nx{a=\"1} 1\n").is_err());
        assert!(check_exposition("# TYPE x gauge\nx{a=\"1\"} one\n").is_err());
        assert!(check_exposition("# TYPE x gauge\nx{a=\"\\q\"} 1\n").is_err());
    }

    #[test]
    fn filter_selects_generic_names_and_skips_excluded_ranges() {
        let mut map = BTreeMap::new();
        for n in [
            "APP.A",
            "APP.B",
            "DEV.QUEUE.1",
            "SYSTEM.ADMIN",
            "SYSTEM.DEAD",
            "Z",
        ] {
            map.insert(n.to_string(), ());
        }
        let names = |f: &NameFilter| {
            f.select(&map)
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(&NameFilter::default()),
            ["APP.A", "APP.B", "DEV.QUEUE.1", "Z"]
        );
        let app = NameFilter::parse("APP.*", "").expect("filter");
        assert_eq!(names(&app), ["APP.A", "APP.B"]);
        let some = NameFilter::parse("APP.*, DEV.*", "APP.B").expect("filter");
        assert_eq!(names(&some), ["APP.A", "DEV.QUEUE.1"]);
        assert!(some.matches("DEV.X") && !some.matches("APP.B"));
        let overlap = NameFilter::parse("*,APP.*", "SYSTEM.*").expect("filter");
        assert_eq!(names(&overlap).len(), 4);
        assert!(NameFilter::parse("BAD\"NAME", "").is_err());
        assert!(glob("A*B*C", "AxxBxC") && !glob("A*B*C", "AxxBx"));
    }

    #[test]
    fn the_grafana_dashboard_uses_only_names_this_exposition_has() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../deploy/grafana/ferry-mq-dashboard.json"
        );
        let dashboard = std::fs::read_to_string(path).expect("the dashboard");
        let mut s = snapshot(&["APP.IN"]);
        let all = Some(1);
        s.resources = ResourceSample {
            system_user_cpu: all,
            system_system_cpu: all,
            load_1: all,
            load_5: all,
            load_15: all,
            ram_free: all,
            ram_total_mb: all,
            qmgr_user_cpu: all,
            qmgr_system_cpu: all,
            qmgr_ram_mb: all,
            data_fs_in_use_mb: all,
            data_fs_free: all,
            log_written_bytes: all,
            log_in_use: all,
            log_in_use_bytes: all,
            log_max_bytes: all,
            log_fs_in_use_bytes: all,
            log_fs_max_bytes: all,
        };
        let text = render(&s);
        let mut rest = dashboard.as_str();
        let mut seen = 0;
        while let Some(i) = rest.find("ibmmq_") {
            let name: String = rest[i..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            // `ibmmq_*` in prose is not a name.
            if !name.ends_with('_') {
                assert!(
                    text.contains(&format!("# TYPE {name} ")),
                    "{name} is not exported"
                );
                seen += 1;
            }
            rest = &rest[i + name.len()..];
        }
        assert!(seen > 20, "{seen} metric names in the dashboard");
    }
}
