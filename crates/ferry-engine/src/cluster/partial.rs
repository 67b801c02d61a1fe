//! Partial repositories learn on first use, as in MQ: a partial repository holds the
//! full repositories' records, its own, and those of the queues it asked about (and of
//! the queue managers hosting them). An MQOPEN or MQPUT1 of a queue it knows nothing of
//! asks its full repositories ([`QueueManager::cluster_unknown_queue`]): the call is
//! answered 2189 MQRC_CLUSTER_RESOLUTION_ERROR while the question is out (the server
//! waits up to [`QUERY_PATIENCE_MS`] for the answer and tries again, as MQ's MQOPEN
//! waits), and 2085 once a full repository answered that the cluster has no such queue.
//! A full repository subscribes the asker to the queue and sends it the queue's changes
//! from then on ([`QueueManager::cluster_audience`]).
//!
//! Records age: a record's sequence is its owner's clock at publication; the owner
//! publishes its records again after [`REPUBLISH_AFTER_MS`] (27 days) and the others
//! forget a record not renewed within [`EXPIRE_AFTER_MS`] (30 days), a queue manager's
//! auto-defined cluster-sender with it.

use super::repository::{ClusterQuery, ClusterRecord, ClusterSubscription, QueryState};
use crate::qmgr::QueueManager;
use ferry_mqi::ReasonCode;
use ferry_objects::channel::ChannelType;
use std::collections::BTreeSet;

/// One day in milliseconds.
const DAY_MS: u64 = 24 * 60 * 60 * 1000;
/// A queue manager publishes its records again after this long (MQ: 27 days).
pub const REPUBLISH_AFTER_MS: u64 = 27 * DAY_MS;
/// Another member forgets a record not renewed for this long (MQ: 30 days).
pub const EXPIRE_AFTER_MS: u64 = 30 * DAY_MS;
/// How long an MQOPEN waits for a full repository's answer before 2189 (MQ: 10 s).
pub const QUERY_PATIENCE_MS: u64 = 10_000;

impl QueueManager {
    /// The clusters this queue manager belongs to: those of its CLUSRCVRs and CLUSSDRs
    /// (CLUSTER or CLUSNL).
    pub fn member_clusters(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for ch in self.channels.values() {
            if !matches!(
                ch.channel_type,
                ChannelType::ClusterReceiver | ChannelType::ClusterSender
            ) {
                continue;
            }
            for c in self.clusters_named(&ch.attributes.cluster, &ch.attributes.cluster_namelist) {
                if !out.contains(&c) {
                    out.push(c);
                }
            }
        }
        out
    }

    /// The clusters this queue manager is a partial repository of.
    fn partial_clusters(&self) -> Vec<String> {
        self.member_clusters()
            .into_iter()
            .filter(|c| !self.is_full_repository(c))
            .collect()
    }

    /// The reason MQOPEN/MQPUT1 of `queue` gets when name resolution found nothing
    /// (`reason`, 2085): on a partial repository the question goes to the full
    /// repositories and the call gets 2189 MQRC_CLUSTER_RESOLUTION_ERROR while it is
    /// out (the server waits for the answer and tries again); once answered, 2085.
    /// Elsewhere, 2189 while this queue manager has a manual CLUSSDR but has heard from
    /// no full repository, else `reason`.
    pub(crate) fn cluster_unknown_queue(
        &mut self,
        queue: &str,
        reason: ReasonCode,
        now_ms: u64,
    ) -> ReasonCode {
        if reason != ReasonCode::UnknownObjectName {
            return reason;
        }
        if self.partial_clusters().is_empty() {
            return self.cluster_resolution_reason(reason);
        }
        match self.cluster.query(queue) {
            Some(QueryState::Answered) => reason,
            Some(QueryState::Pending { asked_ms, .. })
                if now_ms.saturating_sub(asked_ms) < QUERY_PATIENCE_MS =>
            {
                ReasonCode::ClusterResolutionError
            }
            _ => {
                // First use (or a question unanswered for too long: asked again).
                self.cluster.ask(queue, now_ms);
                ReasonCode::ClusterResolutionError
            }
        }
    }

    /// True while the question about `queue` waits for a full repository's answer.
    pub fn cluster_query_pending(&self, queue: &str) -> bool {
        matches!(self.cluster.query(queue), Some(QueryState::Pending { .. }))
    }

    /// The questions to send to the full repositories of each partial cluster, marked
    /// sent.
    pub fn cluster_take_queries(&mut self) -> Vec<ClusterQuery> {
        let queues = self.cluster.take_unsent_queries();
        let clusters = self.partial_clusters();
        let mut out = Vec::new();
        for queue in queues {
            for cluster in &clusters {
                out.push(ClusterQuery {
                    cluster: cluster.clone(),
                    queue: queue.clone(),
                });
            }
        }
        out
    }

    /// A full repository answered `answers`: the queues are known (their records came
    /// with the answer) and this queue manager is subscribed to them.
    pub fn cluster_answered(&mut self, answers: &[ClusterQuery]) {
        let me = self.name.clone();
        for a in answers {
            self.cluster.answered(&a.queue);
            self.cluster.subscribe(&a.cluster, &a.queue, &me);
        }
    }

    /// On a full repository: partial repository `sender` asks `queries`. Subscribes it
    /// to each queue of a cluster this queue manager is a full repository of, and
    /// returns the records to send it (the queue's instances and their queue managers)
    /// and the answers.
    pub fn cluster_answer(
        &mut self,
        sender: &str,
        queries: &[ClusterQuery],
    ) -> (Vec<ClusterRecord>, Vec<ClusterQuery>) {
        let mut records: Vec<ClusterRecord> = Vec::new();
        let mut answers = Vec::new();
        for q in queries {
            if !self.is_full_repository(&q.cluster) {
                continue;
            }
            self.cluster.subscribe(&q.cluster, &q.queue, sender);
            for r in self.queue_records(&q.cluster, &q.queue) {
                if r.owner() != sender && !records.contains(&r) {
                    records.push(r);
                }
            }
            answers.push(q.clone());
        }
        (records, answers)
    }

    /// The records of `queue` in `cluster` (withdrawn ones too) and of the queue
    /// managers hosting it.
    fn queue_records(&self, cluster: &str, queue: &str) -> Vec<ClusterRecord> {
        let all = self.cluster.records();
        let hosts: BTreeSet<String> = all
            .iter()
            .filter_map(|r| match r {
                ClusterRecord::Queue(q) if q.cluster == cluster && q.queue == queue => {
                    Some(q.qmgr.clone())
                }
                _ => None,
            })
            .collect();
        all.into_iter()
            .filter(|r| match r {
                ClusterRecord::Queue(q) => q.cluster == cluster && q.queue == queue,
                ClusterRecord::QueueManager(m) => m.cluster == cluster && hosts.contains(&m.qmgr),
            })
            .collect()
    }

    /// On a full repository of the record's cluster: the queue managers a new or newer
    /// `record` goes to. The other full repositories; for a full repository's own
    /// record, every member; for a queue, the members subscribed to it; for a queue
    /// manager, the members subscribed to a queue it hosts. Never this queue manager
    /// or the record's owner.
    pub fn cluster_audience(&self, record: &ClusterRecord) -> BTreeSet<String> {
        let cluster = record.cluster();
        let members = self.cluster.qmgrs().filter(|m| m.cluster == cluster);
        let mut out: BTreeSet<String> = BTreeSet::new();
        let everyone = matches!(record, ClusterRecord::QueueManager(m) if m.full_repository);
        for m in members {
            if m.full_repository || everyone {
                out.insert(m.qmgr.clone());
            }
        }
        match record {
            ClusterRecord::Queue(q) => out.extend(self.cluster.subscribers(cluster, &q.queue)),
            ClusterRecord::QueueManager(m) => {
                let hosted: BTreeSet<String> = self
                    .cluster
                    .records()
                    .into_iter()
                    .filter_map(|r| match r {
                        ClusterRecord::Queue(q) if q.cluster == cluster && q.qmgr == m.qmgr => {
                            Some(q.queue)
                        }
                        _ => None,
                    })
                    .collect();
                for queue in hosted {
                    out.extend(self.cluster.subscribers(cluster, &queue));
                }
            }
        }
        out.remove(&self.name);
        out.remove(record.owner());
        out
    }

    /// On a full repository: what a member it hears of for the first time (or that
    /// asks again with REFRESH CLUSTER) is told of `cluster`: the full repositories'
    /// records, and those of the queues it is subscribed to.
    pub fn cluster_join_records(&self, cluster: &str, member: &str) -> Vec<ClusterRecord> {
        let mut out: Vec<ClusterRecord> = self
            .cluster
            .records()
            .into_iter()
            .filter(|r| {
                matches!(r, ClusterRecord::QueueManager(m)
                    if m.cluster == cluster && m.full_repository && m.qmgr != member)
            })
            .collect();
        for queue in self.cluster.subscribed_queues(cluster, member) {
            for r in self.queue_records(cluster, &queue) {
                if r.owner() != member && !out.contains(&r) {
                    out.push(r);
                }
            }
        }
        out
    }

    /// Loads the saved subscriptions; this queue manager's own mark their queues as
    /// answered.
    pub fn cluster_restore_subscriptions(&mut self, saved: Vec<ClusterSubscription>) {
        for s in saved {
            if s.subscriber == self.name {
                self.cluster.answered(&s.queue);
            }
            self.cluster.subscribe(&s.cluster, &s.queue, &s.subscriber);
        }
    }

    /// Forgets the records of other queue managers not renewed within
    /// [`EXPIRE_AFTER_MS`] of `now_ms`: returns them (a queue manager's auto-defined
    /// cluster-sender goes with its record).
    pub fn cluster_expire(&mut self, now_ms: u64) -> Vec<ClusterRecord> {
        let cutoff = now_ms.saturating_sub(EXPIRE_AFTER_MS);
        let me = self.name.clone();
        self.cluster.expire(cutoff, &me)
    }

    /// True when an own record was last published [`REPUBLISH_AFTER_MS`] or more before
    /// `now_ms`: [`QueueManager::cluster_publish`] publishes it again.
    pub fn cluster_republish_due(&self, now_ms: u64) -> bool {
        let cutoff = now_ms.saturating_sub(REPUBLISH_AFTER_MS);
        self.cluster
            .records_of(&self.name)
            .iter()
            .any(|r| r.sequence() < cutoff && !is_removed(r))
    }
}

/// True for a withdrawn record.
pub(crate) fn is_removed(r: &ClusterRecord) -> bool {
    match r {
        ClusterRecord::QueueManager(q) => q.removed,
        ClusterRecord::Queue(q) => q.removed,
    }
}
