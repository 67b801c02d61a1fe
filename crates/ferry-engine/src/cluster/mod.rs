//! MQ clusters, the engine's part: the repository of what this queue manager knows of
//! its clusters ([`repository`]), the workload algorithm ([`workload`]), and how name
//! resolution uses them: a queue that is not defined here but is known in a cluster
//! resolves to SYSTEM.CLUSTER.TRANSMIT.QUEUE, the message's CorrelId naming the
//! cluster-sender channel of the instance chosen, as MQ puts it there.
//!
//! The engine does no I/O for clusters: the server's repository task feeds it the
//! records other members send ([`QueueManager::cluster_apply`]), asks it for this queue
//! manager's own records ([`QueueManager::cluster_publish`]) and keeps the repository
//! on SYSTEM.CLUSTER.REPOSITORY.QUEUE.

pub mod binding;
pub mod inquire;
pub mod partial;
pub mod repository;
pub mod workload;
pub mod xmit_queue;

use crate::qmgr::QueueManager;
use ferry_mqi::{FixedStr, ReasonCode};
use ferry_objects::channel::ChannelType;
use ferry_objects::qmgr::ClusterUseQueue;
use ferry_objects::queue::{DefaultBind, Enablement, QueueClusterUseQueue, CLUSTER_TRANSMIT_QUEUE};
use ferry_objects::QueueType;
use repository::{ClusterQmgrRecord, ClusterQueueRecord, ClusterRecord, ClusterRepository};
use std::collections::BTreeMap;
use workload::{Candidate, ChannelPreference, WorkloadRules};

pub use binding::REALLOCATABLE_FEEDBACK;

/// Where a cluster queue's message goes: the instance's queue manager and the
/// cluster-sender channel to it (the CorrelId of the message on the cluster
/// transmission queue). `None` channel: the local instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterChoice {
    /// The queue manager hosting the instance chosen.
    pub qmgr: String,
    /// The channel to it; `None` for the instance on this queue manager.
    pub channel: Option<String>,
}

/// What a handle to a cluster queue keeps: the channel fixed at open, and when a put
/// chooses again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ClusterBinding {
    /// The cluster-sender channel the handle's messages go through (while bound).
    pub channel: FixedStr<20>,
    /// MQOO_BIND_ON_OPEN, BIND_NOT_FIXED or BIND_ON_GROUP (or the queue's DEFBIND).
    pub mode: BindMode,
}

/// How a handle to a cluster queue binds its messages to an instance (MQBND_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BindMode {
    /// One instance for the handle, chosen at MQOPEN.
    OnOpen,
    /// Each put chooses (and the message may be reallocated while it waits).
    NotFixed,
    /// Each logical message group goes to one instance, chosen at its first message;
    /// a message outside a group chooses as NOT_FIXED.
    OnGroup,
}

impl BindMode {
    /// The binding an MQOPEN's options ask for: 2046 MQRC_OPTIONS_ERROR for more than
    /// one BIND option; `default` (the queue's DEFBIND) for none (MQOO_BIND_AS_Q_DEF).
    pub(crate) fn of_options(
        options: ferry_mqi::OpenOptions,
        default: DefaultBind,
    ) -> Result<BindMode, ReasonCode> {
        use ferry_mqi::OpenOptions as O;
        let asked = [
            (O::BIND_ON_OPEN, BindMode::OnOpen),
            (O::BIND_NOT_FIXED, BindMode::NotFixed),
            (O::BIND_ON_GROUP, BindMode::OnGroup),
        ];
        let mut given = asked.iter().filter(|(o, _)| options.contains(*o));
        match (given.next(), given.next()) {
            (Some(_), Some(_)) => Err(ReasonCode::OptionsError),
            (Some((_, mode)), None) => Ok(*mode),
            (None, _) => Ok(match default {
                DefaultBind::Open => BindMode::OnOpen,
                DefaultBind::NotFixed => BindMode::NotFixed,
                DefaultBind::Group => BindMode::OnGroup,
            }),
        }
    }

    /// True when the messages may be reallocated to another instance while they wait
    /// on the cluster transmission queue (MQ reallocates NOT_FIXED ones).
    pub(crate) fn reallocatable(self) -> bool {
        self == BindMode::NotFixed
    }
}

/// The CorrelId of a message for cluster-sender `channel` on the cluster transmission
/// queue: the channel's name, blank-padded to 24 bytes, as MQ writes it.
pub fn channel_correl_id(channel: &str) -> [u8; 24] {
    let mut id = [b' '; 24];
    let n = channel.len().min(24);
    id[..n].copy_from_slice(&channel.as_bytes()[..n]);
    id
}

impl QueueManager {
    /// What this queue manager knows of its clusters.
    pub fn cluster_repository(&self) -> &ClusterRepository {
        &self.cluster
    }

    /// A copy of the repository, for [`QueueManager::cluster_roll_back`]: the
    /// repository task takes one before a round whose unit of work may be backed out.
    pub fn cluster_checkpoint(&self) -> ClusterRepository {
        self.cluster.clone()
    }

    /// Puts back the repository `saved` (the round that changed it was backed out, so
    /// its records are read, and its own changes published, again).
    pub fn cluster_roll_back(&mut self, saved: ClusterRepository) {
        self.cluster = saved;
    }

    /// This queue manager's QMID: its name and creation time, as MQ forms it.
    pub fn qmid(&self) -> String {
        format!(
            "{}_{}_{}",
            self.name, self.qmgr.creation_date, self.qmgr.creation_time
        )
    }

    /// Merges records other members sent (or the saved repository): returns those that
    /// were new or newer, for a full repository to pass on. Records about this queue
    /// manager come only from itself and are ignored.
    pub fn cluster_apply(&mut self, records: Vec<ClusterRecord>) -> Vec<ClusterRecord> {
        let mut changed = Vec::new();
        for r in records {
            if r.owner() == self.name {
                continue;
            }
            if self.cluster.apply(r.clone()) {
                if let ClusterRecord::QueueManager(q) = &r {
                    if q.removed {
                        // A queue manager that left is subscribed to nothing any more.
                        self.cluster.unsubscribe_all(&q.cluster, &q.qmgr);
                    }
                }
                changed.push(r);
            }
        }
        changed
    }

    /// Loads the saved repository, this queue manager's own records included.
    pub fn cluster_restore(&mut self, records: Vec<ClusterRecord>) {
        for r in records {
            self.cluster.apply(r);
        }
    }

    /// This queue manager's own records as its definitions say now, each merged into
    /// the repository with a new sequence number when it changed: returns the changed
    /// ones, to send to the full repositories. `now_ms` numbers the new versions.
    pub fn cluster_publish(&mut self, now_ms: u64) -> Vec<ClusterRecord> {
        let qmid = self.qmid();
        let mut wanted: Vec<ClusterRecord> = Vec::new();
        for ch in self.channels.values() {
            let a = &ch.attributes;
            if ch.channel_type != ChannelType::ClusterReceiver {
                continue;
            }
            for cluster in self.clusters_named(&a.cluster, &a.cluster_namelist) {
                let suspended = self
                    .cluster
                    .qmgr(&cluster, &self.name)
                    .is_some_and(|r| r.suspended);
                wanted.push(ClusterRecord::QueueManager(ClusterQmgrRecord {
                    full_repository: self.is_full_repository(&cluster),
                    cluster,
                    qmgr: self.name.clone(),
                    qmid: qmid.clone(),
                    channel: ch.name.clone(),
                    conname: a.connection_name.trim().to_string(),
                    suspended,
                    rank: a.cluster_workload_rank,
                    priority: a.cluster_workload_priority,
                    weight: a.cluster_workload_weight,
                    network_priority: a.network_priority,
                    channel_values: Some(repository::ClusterChannelValues {
                        short_retry_count: a.short_retry_count,
                        short_retry_interval: a.short_retry_interval,
                        long_retry_count: a.long_retry_count,
                        long_retry_interval: a.long_retry_interval,
                        heartbeat_interval: a.heartbeat_interval,
                        disconnect_interval: a.disconnect_interval,
                        batch_size: a.batch_size,
                    }),
                    sequence: 0,
                    removed: false,
                }));
            }
        }
        for (_, e) in self.queues.iter() {
            let a = &e.def.attributes;
            if e.def.queue_type == QueueType::Model {
                continue;
            }
            for cluster in self.clusters_named(&a.cluster, &a.cluster_namelist) {
                wanted.push(ClusterRecord::Queue(ClusterQueueRecord {
                    cluster,
                    queue: e.def.name.clone(),
                    qmgr: self.name.clone(),
                    qmid: qmid.clone(),
                    default_bind: a.default_bind,
                    put_enabled: a.put == Enablement::Enabled,
                    rank: a.cluster_workload_rank,
                    priority: a.cluster_workload_priority,
                    sequence: 0,
                    removed: false,
                }));
            }
        }
        // Own records no longer wanted are withdrawn.
        let mut held = self.cluster.records_of(&self.name);
        held.retain(|h| !same_object(h, &wanted));
        for mut gone in held {
            match &mut gone {
                ClusterRecord::QueueManager(r) if !r.removed => r.removed = true,
                ClusterRecord::Queue(r) if !r.removed => r.removed = true,
                _ => continue,
            }
            wanted.push(gone);
        }
        let mut changed = self.cluster.take_pending();
        for mut w in wanted {
            let old = self
                .cluster
                .records_of(&self.name)
                .into_iter()
                .find(|h| same_object(h, std::slice::from_ref(&w)));
            let old_seq = old.as_ref().map_or(0, |o| o.sequence());
            let renew_due = old_seq < now_ms.saturating_sub(partial::REPUBLISH_AFTER_MS)
                && !partial::is_removed(&w);
            if !renew_due && old.is_some_and(|o| with_sequence(o, 0) == w) {
                continue;
            }
            let seq = now_ms.max(old_seq + 1);
            w = with_sequence(w, seq);
            let applied = self.cluster.apply(w.clone());
            debug_assert!(applied, "a newer own record replaces the old one");
            changed.push(w);
        }
        changed
    }

    /// SUSPEND (`true`) or RESUME QMGR CLUSTER(`cluster`): changes this queue manager's
    /// record in the cluster. Returns the changed record to send, or `None` when this
    /// queue manager has no CLUSRCVR in the cluster.
    pub fn cluster_suspend(
        &mut self,
        cluster: &str,
        suspend: bool,
        now_ms: u64,
    ) -> Option<ClusterRecord> {
        let mut r = self.cluster.qmgr(cluster, &self.name)?.clone();
        r.suspended = suspend;
        r.sequence = now_ms.max(r.sequence + 1);
        let record = ClusterRecord::QueueManager(r);
        self.cluster.apply(record.clone());
        self.cluster.hold_for_publication(record.clone());
        Some(record)
    }

    /// REFRESH CLUSTER(`cluster`) REPOS(NO): forgets what other members told, but for
    /// the full repositories' records, and asks them for everything again (the
    /// repository task sends the request). Refused on a full repository of the cluster,
    /// as MQ refuses it there.
    pub fn cluster_refresh(&mut self, cluster: &str) -> Result<(), ferry_objects::AdminError> {
        if self.is_full_repository(cluster) {
            return Err(ferry_objects::AdminError::Invalid(format!(
                "this queue manager is a full repository of cluster {cluster}: REFRESH CLUSTER applies to partial repositories"
            )));
        }
        let me = self.name.clone();
        self.cluster.forget_others(cluster, &me);
        self.cluster.request_refresh(cluster);
        Ok(())
    }

    /// RESET CLUSTER(`cluster`) ACTION(FORCEREMOVE) QMNAME(`qmgr`): on a full
    /// repository, withdraws the queue manager and its queues from the cluster (records
    /// one version above theirs, published to every member). It is back when it next
    /// publishes a change of its own. Refused elsewhere, and for this queue manager.
    pub fn cluster_force_remove(
        &mut self,
        cluster: &str,
        qmgr: &str,
    ) -> Result<(), ferry_objects::AdminError> {
        use ferry_objects::AdminError;
        if !self.is_full_repository(cluster) {
            return Err(AdminError::Invalid(format!(
                "RESET CLUSTER is issued on a full repository of cluster {cluster}"
            )));
        }
        if qmgr == self.name {
            return Err(AdminError::Invalid(
                "a queue manager cannot remove itself: delete its CLUSRCVR or take it out of the cluster"
                    .to_string(),
            ));
        }
        let mut gone: Vec<ClusterRecord> = self
            .cluster
            .records_of(qmgr)
            .into_iter()
            .filter(|r| r.cluster() == cluster)
            .collect();
        if gone.is_empty() {
            return Err(AdminError::NotFound {
                name: qmgr.to_string(),
            });
        }
        for r in &mut gone {
            match r {
                ClusterRecord::QueueManager(q) => {
                    q.removed = true;
                    q.sequence += 1;
                }
                ClusterRecord::Queue(q) => {
                    q.removed = true;
                    q.sequence += 1;
                }
            }
            self.cluster.apply(r.clone());
            self.cluster.hold_for_publication(r.clone());
        }
        Ok(())
    }

    /// The clusters REFRESH CLUSTER asks the full repositories about, emptied.
    pub fn cluster_take_refresh(&mut self) -> Vec<String> {
        self.cluster.take_refresh()
    }

    /// Tells the workload algorithm the state of the cluster-sender to `qmgr`.
    pub fn set_cluster_channel_state(&mut self, qmgr: &str, state: ChannelPreference) {
        self.cluster_channel_states.insert(qmgr.to_string(), state);
    }

    /// The cluster-sender channel to queue manager `qmgr`, when the cluster knows it:
    /// the route of a message for another queue manager with no transmission queue of
    /// its own.
    pub(crate) fn cluster_channel_to(&self, qmgr: &str) -> Option<String> {
        self.cluster.any_qmgr(qmgr).map(|r| r.channel.clone())
    }

    /// True when name resolution should ask the cluster about `queue` (opened with a
    /// blank or this queue manager's name): no definition here, or a local instance
    /// whose CLWLUSEQ resolves to ANY while other instances exist.
    pub(crate) fn resolves_in_cluster(&self, queue: &str) -> bool {
        let remote_instances = self
            .cluster
            .instances(queue)
            .iter()
            .any(|i| i.qmgr != self.name);
        match self.queues.lookup(queue).and_then(|id| self.queues.get(id)) {
            None => remote_instances,
            Some(e) => {
                remote_instances
                    && e.def.queue_type == QueueType::Local
                    && !self.queue_clusters(&e.def.attributes).is_empty()
                    && !self.use_local(Some(e.def.attributes.cluster_workload_use_q))
            }
        }
    }

    /// The clusters a queue with attributes `a` is advertised in (CLUSTER or CLUSNL).
    fn queue_clusters(&self, a: &ferry_objects::QueueAttributes) -> Vec<String> {
        self.clusters_named(&a.cluster, &a.cluster_namelist)
    }

    fn use_local(&self, queue: Option<QueueClusterUseQueue>) -> bool {
        match queue {
            Some(QueueClusterUseQueue::Local) => true,
            Some(QueueClusterUseQueue::Any) => false,
            Some(QueueClusterUseQueue::QMgr) | None => {
                self.qmgr.cluster_workload_use_q == ClusterUseQueue::Local
            }
        }
    }

    /// The reason an unresolved name gets: 2189 MQRC_CLUSTER_RESOLUTION_ERROR instead
    /// of 2085 when this queue manager belongs to a cluster (it has a manual
    /// cluster-sender) but has heard from no full repository yet, so it cannot know
    /// whether the cluster has the queue.
    pub(crate) fn cluster_resolution_reason(&self, reason: ReasonCode) -> ReasonCode {
        let in_cluster = self.channels.values().any(|c| {
            c.channel_type == ChannelType::ClusterSender
                && !self
                    .clusters_named(&c.attributes.cluster, &c.attributes.cluster_namelist)
                    .is_empty()
        });
        let repository_heard = self
            .cluster
            .qmgrs()
            .any(|q| q.full_repository && q.qmgr != self.name);
        if reason == ReasonCode::UnknownObjectName
            && in_cluster
            && !repository_heard
            && self.full_repository_clusters().is_empty()
        {
            ReasonCode::ClusterResolutionError
        } else {
            reason
        }
    }

    /// The instance of cluster queue `queue` a message goes to now, by the workload
    /// algorithm (the local instance a candidate only when `include_local`). The
    /// caller counts the choice ([`ClusterRepository::note_chosen`]) when a message
    /// goes. 2085 when the queue is not known.
    pub(crate) fn cluster_choose(
        &mut self,
        queue: &str,
        include_local: bool,
    ) -> Result<ClusterChoice, ReasonCode> {
        let local_def = self
            .queues
            .lookup(queue)
            .and_then(|id| self.queues.get(id))
            .filter(|e| e.def.queue_type == QueueType::Local)
            .map(|e| e.def.attributes.clone());
        let use_local = self.use_local(local_def.as_ref().map(|a| a.cluster_workload_use_q));
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut channels: Vec<Option<String>> = Vec::new();
        for i in self.cluster.instances(queue) {
            if i.qmgr == self.name {
                continue;
            }
            let Some(q) = self.cluster.qmgr(&i.cluster, &i.qmgr) else {
                // An instance whose queue manager is not known yet cannot be reached.
                continue;
            };
            let usage = self.cluster.usage(&i.qmgr);
            candidates.push(Candidate {
                qmgr: i.qmgr.clone(),
                local: false,
                channel_rank: q.rank,
                queue_rank: i.rank,
                put_enabled: i.put_enabled,
                suspended: q.suspended,
                channel_state: self
                    .cluster_channel_states
                    .get(&i.qmgr)
                    .copied()
                    .unwrap_or(ChannelPreference::Ready),
                network_priority: q.network_priority,
                channel_priority: q.priority,
                queue_priority: i.priority,
                weight: q.weight,
                sent: usage.sent,
                last_used: usage.last_used,
            });
            channels.push(Some(q.channel.clone()));
        }
        let local_clusters = local_def
            .as_ref()
            .map(|a| self.queue_clusters(a))
            .unwrap_or_default();
        if let Some(a) = local_def.filter(|_| include_local && !local_clusters.is_empty()) {
            let usage = self.cluster.usage("");
            let me = local_clusters
                .iter()
                .find_map(|c| self.cluster.qmgr(c, &self.name));
            candidates.push(Candidate {
                qmgr: self.name.clone(),
                local: true,
                channel_rank: me.map_or(0, |m| m.rank),
                queue_rank: a.cluster_workload_rank,
                put_enabled: a.put == Enablement::Enabled,
                suspended: me.is_some_and(|m| m.suspended),
                channel_state: ChannelPreference::Ready,
                network_priority: me.map_or(0, |m| m.network_priority),
                channel_priority: me.map_or(0, |m| m.priority),
                queue_priority: a.cluster_workload_priority,
                weight: me.map_or(50, |m| m.weight),
                sent: usage.sent,
                last_used: usage.last_used,
            });
            channels.push(None);
        }
        let rules = WorkloadRules {
            use_local,
            most_recently_used: self.qmgr.cluster_workload_mruc.max(1) as usize,
        };
        let i = workload::choose(&candidates, rules)?;
        Ok(ClusterChoice {
            qmgr: candidates[i].qmgr.clone(),
            channel: channels[i].clone(),
        })
    }

    /// DEFBIND of cluster queue `queue` as the instances advertise it (the first
    /// instance's, as MQ takes the one it resolves to).
    pub(crate) fn cluster_default_bind(&self, queue: &str) -> DefaultBind {
        self.cluster
            .instances(queue)
            .first()
            .map_or(DefaultBind::Open, |i| i.default_bind)
    }

    /// The cluster transmission queue's name.
    pub(crate) fn cluster_xmit_q(&self) -> &'static str {
        CLUSTER_TRANSMIT_QUEUE
    }
}

/// The states of the cluster-senders as the server reports them, by queue manager.
pub(crate) type ChannelStates = BTreeMap<String, ChannelPreference>;

/// Whether `r` describes the same object as one of `among`.
fn same_object(r: &ClusterRecord, among: &[ClusterRecord]) -> bool {
    among.iter().any(|w| match (r, w) {
        (ClusterRecord::QueueManager(a), ClusterRecord::QueueManager(b)) => {
            a.cluster == b.cluster && a.qmgr == b.qmgr
        }
        (ClusterRecord::Queue(a), ClusterRecord::Queue(b)) => {
            a.cluster == b.cluster && a.queue == b.queue && a.qmgr == b.qmgr
        }
        _ => false,
    })
}

/// `r` with sequence number `seq`.
fn with_sequence(mut r: ClusterRecord, seq: u64) -> ClusterRecord {
    match &mut r {
        ClusterRecord::QueueManager(q) => q.sequence = seq,
        ClusterRecord::Queue(q) => q.sequence = seq,
    }
    r
}
