//! What the engine counts for monitoring, read out: the queue manager's MQI counters
//! (STATMQI), each local queue's counters and state (STATQ, DISPLAY QSTATUS values for
//! Prometheus), and which `$SYS` monitoring topics someone subscribes to.
//!
//! The counters themselves ([`ferry_monitoring::MqiCounters`] on the queue manager,
//! [`ferry_monitoring::QueueCounters`] on each local queue) are plain integers the verbs
//! bump where they decide an outcome (`put`, `get`, `handoff`, `consumer`, `open`,
//! `syncpoint`, `pubsub`): no look-up, lock or allocation of their own. Reading them
//! here is the only place that walks queues, and only the ones asked for.

use crate::qmgr::QueueManager;
use crate::Timestamp;
use ferry_monitoring::prometheus::{NameFilter, QueueMetrics};
use ferry_monitoring::statistics_message::QueueStatistics;
use ferry_monitoring::{MqiCounters, QueueSample};
use ferry_objects::qmgr::StatisticsSwitch;
use ferry_objects::queue::{DefinitionType, QueueStatistics as QueueSwitch, Usage};

impl QueueManager {
    /// The MQI counters since the queue manager started (STATMQI).
    pub fn mqi_counters(&self) -> MqiCounters {
        let mut m = self.mqi_stats;
        (m.inqs, m.inqs_failed) = self.inq_stats.get();
        m
    }

    /// Makes `conn` the queue manager's own connection, the one that may publish on the
    /// administrative topics (`$SYS/MQ/...`, 2598 MQRC_ADMIN_TOPIC_STRING_ERROR for any
    /// other). Returns false when there is no such connection.
    pub fn set_system_connection(&mut self, conn: crate::ConnId) -> bool {
        let Some(c) = self.conns.get_mut(&conn) else {
            return false;
        };
        c.system = true;
        debug_assert!(self.conns.get(&conn).is_some_and(|c| c.system));
        true
    }

    /// Connections now.
    pub fn connection_count(&self) -> usize {
        self.conns.len()
    }

    /// Local queue `name`'s counters, depth and handle counts (STATQ); `None` when it
    /// is not a local queue.
    pub fn queue_sample(&self, name: &str) -> Option<QueueSample> {
        let lq = self.queues.get(self.queues.lookup(name)?)?.local.as_ref()?;
        Some(QueueSample {
            counters: lq.stats,
            depth: lq.store.depth() as u64,
            open_input: lq.open_input(),
            open_output: lq.open_output(),
        })
    }

    /// The local queues `filter` exports, with what a Prometheus scrape shows of each:
    /// counters and status values, read from the queues' state (no message is looked
    /// at but each queue's oldest). Only the names the filter includes are visited.
    pub fn queue_metrics(&self, filter: &NameFilter, now: Timestamp) -> Vec<QueueMetrics> {
        filter
            .select(self.queues.names())
            .into_iter()
            .filter_map(|(name, id)| {
                let e = self.queues.get(*id)?;
                let lq = e.local.as_ref()?;
                let a = &e.def.attributes;
                // MONQ decides whether the monitoring values show, as DISPLAY QSTATUS.
                let monitored = a.monitoring.collects(self.qmgr.monitoring_q);
                let since = |t: Option<u64>| {
                    t.filter(|_| monitored)
                        .map(|t| now.0.saturating_sub(t) / 1000)
                };
                Some(QueueMetrics {
                    name: name.to_string(),
                    description: a.descr.clone(),
                    usage: match a.usage {
                        Usage::TransmissionQueue => "XMITQ",
                        _ => "NORMAL",
                    },
                    cluster: a.cluster.clone(),
                    sample: QueueSample {
                        counters: lq.stats,
                        depth: lq.store.depth() as u64,
                        open_input: lq.open_input(),
                        open_output: lq.open_output(),
                    },
                    max_depth: i64::from(a.max_depth),
                    uncommitted: lq.uncommitted().into(),
                    oldest_message_age: since(lq.store.oldest_put_ms()),
                    time_since_put: since(lq.last_put_ms),
                    time_since_get: since(lq.last_get_ms),
                })
            })
            .collect()
    }

    /// The local queues whose statistics messages are collected, with their counters
    /// and the lowest and highest depth since the previous call (which starts a new
    /// range for each): STATQ(ON), or STATQ(QMGR) while the queue manager's STATQ is ON;
    /// none while the queue manager's STATQ is NONE. Sorted by name.
    pub fn statistics_queues(&mut self) -> Vec<QueueStatistics> {
        let qmgr = self.qmgr.statistics_q;
        if qmgr == StatisticsSwitch::None {
            return Vec::new();
        }
        let ids: Vec<(String, crate::objects::QueueId)> = self
            .queues
            .names()
            .iter()
            .map(|(name, id)| (name.clone(), *id))
            .collect();
        ids.into_iter()
            .filter_map(|(name, id)| {
                let e = self.queues.get_mut(id)?;
                let lq = e.local.as_mut()?;
                let a = &e.def.attributes;
                let on = match a.statistics {
                    QueueSwitch::On => true,
                    QueueSwitch::Off => false,
                    QueueSwitch::QMgr => qmgr == StatisticsSwitch::On,
                };
                let (min_depth, max_depth) = lq.store.take_depth_range();
                on.then(|| QueueStatistics {
                    name,
                    min_depth: min_depth as u64,
                    max_depth: max_depth as u64,
                    created: (a.creation_date.clone(), a.creation_time.clone()),
                    // MQQDT_*.
                    definition_type: match a.definition_type {
                        DefinitionType::Predefined => 1,
                        DefinitionType::PermanentDynamic => 2,
                        DefinitionType::TemporaryDynamic => 3,
                    },
                    counts: lq.stats,
                })
            })
            .collect()
    }

    /// Whether a publication on `topic` would reach a subscription: what a publisher
    /// asks before making one, so that nobody subscribing costs nothing.
    pub fn has_subscribers(&self, topic: &str) -> bool {
        let mut matches = Vec::new();
        self.subscriptions.index.matching(topic, &mut matches);
        let path = self.cached_topic_path(topic);
        matches
            .iter()
            .any(|m| match (m.wildcard_depth, path.blocked_above) {
                (Some(depth), Some(block)) => depth >= block,
                _ => true,
            })
    }

    /// The levels that follow `prefix` (which ends with `/`) in the topic strings of
    /// subscriptions without wildcards: for `.../Monitor/STATQ/` the `queue/TYPE` of
    /// each STATQ subscription, so per-queue publications are made only for queues
    /// someone watches.
    pub fn subscribed_under(&self, prefix: &str) -> Vec<String> {
        let mut out: Vec<String> = self
            .subscriptions
            .iter()
            .filter_map(|(_, s)| s.topic_string.strip_prefix(prefix))
            .filter(|rest| !rest.contains(['#', '+', '*', '?']))
            .map(str::to_string)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}
