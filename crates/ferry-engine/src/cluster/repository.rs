//! What a queue manager knows of its clusters: the cluster queue managers (their
//! CLUSRCVR channels) and the cluster queues, as records that travel between members.
//! Pure: the server's repository task moves the records and keeps them on
//! SYSTEM.CLUSTER.REPOSITORY.QUEUE; this module merges them and answers questions.
//!
//! Every record belongs to the queue manager it describes, which numbers its versions
//! (`sequence`, increasing); a record replaces the one it describes only when its
//! sequence is higher, so records may arrive twice, late or by several paths. A
//! withdrawn object is a record with `removed` set (kept, so an older copy arriving
//! later does not bring it back). The format is docs/protocol.md, "Cluster repository
//! messages".

use ferry_objects::queue::DefaultBind;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The version of [`RepositoryMessage`] this Ferry writes and reads.
pub const REPOSITORY_FORMAT_VERSION: u32 = 1;

/// A cluster queue manager: what its CLUSRCVR channel advertises.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterQmgrRecord {
    /// The cluster.
    pub cluster: String,
    /// The queue manager's name.
    pub qmgr: String,
    /// Its QMID (name and creation time).
    pub qmid: String,
    /// Its CLUSRCVR channel: the name of the cluster-senders to it.
    pub channel: String,
    /// Its CLUSRCVR's CONNAME: where the others call it.
    pub conname: String,
    /// True when it is a full repository of the cluster (QMGR REPOS).
    pub full_repository: bool,
    /// SUSPEND QMGR CLUSTER: others send to it only when nothing else will do.
    pub suspended: bool,
    /// CLWLRANK of its CLUSRCVR.
    pub rank: i32,
    /// CLWLPRTY of its CLUSRCVR.
    pub priority: i32,
    /// CLWLWGHT of its CLUSRCVR.
    pub weight: i32,
    /// NETPRTY of its CLUSRCVR.
    pub network_priority: i32,
    /// The CLUSRCVR's values the cluster-senders auto-defined from it take (absent in
    /// records of Ferry versions before them: Ferry's defaults apply).
    #[serde(default)]
    pub channel_values: Option<ClusterChannelValues>,
    /// The version, numbered by the queue manager described.
    pub sequence: u64,
    /// The queue manager left the cluster (its CLUSRCVR was deleted or left it).
    pub removed: bool,
}

/// The values of a CLUSRCVR that the cluster-senders auto-defined from it copy, as MQ
/// copies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterChannelValues {
    /// SHORTRTY.
    pub short_retry_count: i32,
    /// SHORTTMR.
    pub short_retry_interval: i32,
    /// LONGRTY.
    pub long_retry_count: i32,
    /// LONGTMR.
    pub long_retry_interval: i32,
    /// HBINT.
    pub heartbeat_interval: i32,
    /// DISCINT.
    pub disconnect_interval: i32,
    /// BATCHSZ.
    pub batch_size: i32,
}

/// A cluster queue: one instance, on the queue manager hosting it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterQueueRecord {
    /// The cluster.
    pub cluster: String,
    /// The queue's name.
    pub queue: String,
    /// The queue manager hosting this instance.
    pub qmgr: String,
    /// Its QMID.
    pub qmid: String,
    /// DEFBIND.
    pub default_bind: DefaultBind,
    /// PUT(ENABLED).
    pub put_enabled: bool,
    /// CLWLRANK.
    pub rank: i32,
    /// CLWLPRTY.
    pub priority: i32,
    /// The version, numbered by the hosting queue manager.
    pub sequence: u64,
    /// The queue left the cluster (deleted, or its CLUSTER changed).
    pub removed: bool,
}

/// One record of a repository message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum ClusterRecord {
    /// A cluster queue manager.
    QueueManager(ClusterQmgrRecord),
    /// A cluster queue instance.
    Queue(ClusterQueueRecord),
}

impl ClusterRecord {
    /// The queue manager the record belongs to.
    pub fn owner(&self) -> &str {
        match self {
            ClusterRecord::QueueManager(r) => &r.qmgr,
            ClusterRecord::Queue(r) => &r.qmgr,
        }
    }

    /// The record's cluster.
    pub fn cluster(&self) -> &str {
        match self {
            ClusterRecord::QueueManager(r) => &r.cluster,
            ClusterRecord::Queue(r) => &r.cluster,
        }
    }

    /// The record's version.
    pub fn sequence(&self) -> u64 {
        match self {
            ClusterRecord::QueueManager(r) => r.sequence,
            ClusterRecord::Queue(r) => r.sequence,
        }
    }
}

/// What one message on SYSTEM.CLUSTER.COMMAND.QUEUE (and the repository's own message
/// on SYSTEM.CLUSTER.REPOSITORY.QUEUE) holds, as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepositoryMessage {
    /// [`REPOSITORY_FORMAT_VERSION`].
    pub version: u32,
    /// The queue manager that sent the message.
    pub sender: String,
    /// The records.
    pub records: Vec<ClusterRecord>,
    /// REFRESH CLUSTER: the sender forgot what it knew of the clusters it names here
    /// and asks a full repository for every record of them (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refresh: Vec<String>,
    /// A partial repository's questions: it opened these queues and knows no instance;
    /// the full repository subscribes it to them and answers (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<ClusterQuery>,
    /// A full repository's answers to `queries`: it sent what it knows of each queue
    /// (perhaps nothing) and will send the queue's changes (absent: none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<ClusterQuery>,
    /// Only in the saved repository: who is subscribed to which cluster queue (this
    /// queue manager, and on a full repository the partial repositories that asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subscriptions: Vec<ClusterSubscription>,
}

/// A cluster queue asked about: its cluster and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClusterQuery {
    /// The cluster.
    pub cluster: String,
    /// The queue.
    pub queue: String,
}

/// A queue manager subscribed to the records of a cluster queue (and of the queue
/// managers hosting it).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ClusterSubscription {
    /// The cluster.
    pub cluster: String,
    /// The queue.
    pub queue: String,
    /// The queue manager subscribed.
    pub subscriber: String,
}

/// Where a partial repository's question about a queue stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryState {
    /// Asked at this time (ms), not answered yet; `sent` once the repository task sent it.
    Pending {
        /// When MQOPEN asked (the queue manager's clock, ms).
        asked_ms: u64,
        /// True once the question left for the full repositories.
        sent: bool,
    },
    /// A full repository answered: what the cluster has of the queue is known here.
    Answered,
}

/// Why a repository message was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RepositoryMessageError {
    /// Not JSON of the expected shape.
    #[error("not a cluster repository message: {0}")]
    Malformed(String),
    /// A version this Ferry does not read.
    #[error("cluster repository message version {0} is not supported (this Ferry reads version {REPOSITORY_FORMAT_VERSION})")]
    Version(u32),
}

impl RepositoryMessage {
    /// A message from `sender` holding `records`.
    pub fn new(sender: &str, records: Vec<ClusterRecord>) -> Self {
        RepositoryMessage {
            version: REPOSITORY_FORMAT_VERSION,
            sender: sender.to_string(),
            records,
            refresh: Vec::new(),
            queries: Vec::new(),
            answers: Vec::new(),
            subscriptions: Vec::new(),
        }
    }

    /// The message as JSON bytes.
    pub fn encode(&self) -> Vec<u8> {
        // Serialising plain data to a Vec cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The message in `data`.
    pub fn decode(data: &[u8]) -> Result<Self, RepositoryMessageError> {
        #[derive(Deserialize)]
        struct Version {
            version: u32,
        }
        let v: Version = serde_json::from_slice(data)
            .map_err(|e| RepositoryMessageError::Malformed(e.to_string()))?;
        if v.version != REPOSITORY_FORMAT_VERSION {
            return Err(RepositoryMessageError::Version(v.version));
        }
        serde_json::from_slice(data).map_err(|e| RepositoryMessageError::Malformed(e.to_string()))
    }
}

/// How much a cluster channel was used: what the workload algorithm's last rules need.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChannelUse {
    /// Messages sent through it.
    pub sent: u64,
    /// When it was last chosen (the repository's counter).
    pub last_used: u64,
}

/// Everything a queue manager knows of its clusters.
#[derive(Clone, Debug, Default)]
pub struct ClusterRepository {
    /// (cluster, queue manager) to its record.
    qmgrs: BTreeMap<(String, String), ClusterQmgrRecord>,
    /// (cluster, queue, hosting queue manager) to its record.
    queues: BTreeMap<(String, String, String), ClusterQueueRecord>,
    /// Workload state per queue manager name ("" for local instances): not persisted.
    usage: BTreeMap<String, ChannelUse>,
    /// Counts choices, for `last_used`.
    choices: u64,
    /// Own records changed by command (SUSPEND, RESUME) not yet published.
    pending: Vec<ClusterRecord>,
    /// Clusters REFRESH CLUSTER asks the full repositories to tell everything again.
    refresh: Vec<String>,
    /// Subscriptions: (cluster, queue, subscriber).
    subscriptions: BTreeSet<(String, String, String)>,
    /// This queue manager's questions about queues, by queue name.
    queries: BTreeMap<String, QueryState>,
}

impl ClusterRepository {
    /// An empty repository.
    pub fn new() -> Self {
        Self::default()
    }

    /// Merges `record`: true when it was new or newer than the one held.
    pub fn apply(&mut self, record: ClusterRecord) -> bool {
        match record {
            ClusterRecord::QueueManager(r) => {
                let key = (r.cluster.clone(), r.qmgr.clone());
                match self.qmgrs.get(&key) {
                    Some(old) if old.sequence >= r.sequence => false,
                    _ => {
                        self.qmgrs.insert(key, r);
                        true
                    }
                }
            }
            ClusterRecord::Queue(r) => {
                let key = (r.cluster.clone(), r.queue.clone(), r.qmgr.clone());
                match self.queues.get(&key) {
                    Some(old) if old.sequence >= r.sequence => false,
                    _ => {
                        self.queues.insert(key, r);
                        true
                    }
                }
            }
        }
    }

    /// Every record held, withdrawn ones included: what is saved and what a full
    /// repository tells a new member.
    pub fn records(&self) -> Vec<ClusterRecord> {
        self.qmgrs
            .values()
            .cloned()
            .map(ClusterRecord::QueueManager)
            .chain(self.queues.values().cloned().map(ClusterRecord::Queue))
            .collect()
    }

    /// The records owned by `qmgr`, withdrawn ones included.
    pub fn records_of(&self, qmgr: &str) -> Vec<ClusterRecord> {
        self.records()
            .into_iter()
            .filter(|r| r.owner() == qmgr)
            .collect()
    }

    /// Forgets every record of cluster `cluster` not owned by `keep` (REFRESH CLUSTER),
    /// and which queues were answered (so their next MQOPEN asks again); subscriptions
    /// stay, so the full repositories tell their records again.
    pub fn forget_others(&mut self, cluster: &str, keep: &str) {
        self.queries.clear();
        self.qmgrs
            .retain(|(c, q), r| c != cluster || q == keep || r.full_repository);
        self.queues.retain(|(c, _, q), _| c != cluster || q == keep);
    }

    /// The cluster queue managers known (withdrawn ones left out).
    pub fn qmgrs(&self) -> impl Iterator<Item = &ClusterQmgrRecord> {
        self.qmgrs.values().filter(|r| !r.removed)
    }

    /// The cluster queue instances known (withdrawn ones left out).
    pub fn queues(&self) -> impl Iterator<Item = &ClusterQueueRecord> {
        self.queues.values().filter(|r| !r.removed)
    }

    /// The record of queue manager `qmgr` in `cluster`.
    pub fn qmgr(&self, cluster: &str, qmgr: &str) -> Option<&ClusterQmgrRecord> {
        self.qmgrs
            .get(&(cluster.to_string(), qmgr.to_string()))
            .filter(|r| !r.removed)
    }

    /// A record of queue manager `qmgr` in any cluster (the first by cluster name).
    pub fn any_qmgr(&self, qmgr: &str) -> Option<&ClusterQmgrRecord> {
        self.qmgrs().find(|r| r.qmgr == qmgr)
    }

    /// The instances of cluster queue `queue`, in every cluster.
    pub fn instances(&self, queue: &str) -> Vec<&ClusterQueueRecord> {
        self.queues().filter(|r| r.queue == queue).collect()
    }

    /// The workload state of the channel to `qmgr` ("" for the local instance).
    pub fn usage(&self, qmgr: &str) -> ChannelUse {
        self.usage.get(qmgr).copied().unwrap_or_default()
    }

    /// Keeps `record` (an own record a command changed) for the next publication.
    pub fn hold_for_publication(&mut self, record: ClusterRecord) {
        self.pending.push(record);
    }

    /// True when own records (or a refresh request) wait for publication.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty() || !self.refresh.is_empty()
    }

    /// Asks the full repositories of `cluster` for everything again.
    pub fn request_refresh(&mut self, cluster: &str) {
        if !self.refresh.iter().any(|c| c == cluster) {
            self.refresh.push(cluster.to_string());
        }
    }

    /// The clusters to ask for everything again, emptied.
    pub fn take_refresh(&mut self) -> Vec<String> {
        std::mem::take(&mut self.refresh)
    }

    /// The own records held for publication, emptied.
    pub fn take_pending(&mut self) -> Vec<ClusterRecord> {
        std::mem::take(&mut self.pending)
    }

    /// Subscribes `subscriber` to cluster queue `queue` of `cluster`: true when new.
    pub fn subscribe(&mut self, cluster: &str, queue: &str, subscriber: &str) -> bool {
        self.subscriptions.insert((
            cluster.to_string(),
            queue.to_string(),
            subscriber.to_string(),
        ))
    }

    /// The queue managers subscribed to `queue` of `cluster`.
    pub fn subscribers(&self, cluster: &str, queue: &str) -> BTreeSet<String> {
        self.subscriptions
            .iter()
            .filter(|(c, q, _)| c == cluster && q == queue)
            .map(|(_, _, s)| s.clone())
            .collect()
    }

    /// The queues of `cluster` `subscriber` is subscribed to.
    pub fn subscribed_queues(&self, cluster: &str, subscriber: &str) -> Vec<String> {
        self.subscriptions
            .iter()
            .filter(|(c, _, s)| c == cluster && s == subscriber)
            .map(|(_, q, _)| q.clone())
            .collect()
    }

    /// Every subscription, for the saved repository.
    pub fn subscriptions(&self) -> Vec<ClusterSubscription> {
        self.subscriptions
            .iter()
            .map(|(cluster, queue, subscriber)| ClusterSubscription {
                cluster: cluster.clone(),
                queue: queue.clone(),
                subscriber: subscriber.clone(),
            })
            .collect()
    }

    /// Forgets the subscriptions of `subscriber` (a queue manager that left the cluster).
    pub fn unsubscribe_all(&mut self, cluster: &str, subscriber: &str) {
        self.subscriptions
            .retain(|(c, _, s)| c != cluster || s != subscriber);
    }

    /// Where this queue manager's question about `queue` stands.
    pub fn query(&self, queue: &str) -> Option<QueryState> {
        self.queries.get(queue).copied()
    }

    /// Records a question about `queue`, asked at `now_ms`, to send.
    pub fn ask(&mut self, queue: &str, now_ms: u64) {
        self.queries.insert(
            queue.to_string(),
            QueryState::Pending {
                asked_ms: now_ms,
                sent: false,
            },
        );
    }

    /// The questions not sent yet, marked sent.
    pub fn take_unsent_queries(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        for (queue, state) in self.queries.iter_mut() {
            if let QueryState::Pending { sent, .. } = state {
                if !*sent {
                    *sent = true;
                    out.push(queue.clone());
                }
            }
        }
        out
    }

    /// A full repository answered the question about `queue`.
    pub fn answered(&mut self, queue: &str) {
        self.queries.insert(queue.to_string(), QueryState::Answered);
    }

    /// Removes the records older than `cutoff_ms` (by sequence, the owner's clock at
    /// publication) not owned by `keep`: returns them.
    pub fn expire(&mut self, cutoff_ms: u64, keep: &str) -> Vec<ClusterRecord> {
        let mut gone = Vec::new();
        self.qmgrs.retain(|_, r| {
            let stale = r.qmgr != keep && r.sequence < cutoff_ms;
            if stale {
                gone.push(ClusterRecord::QueueManager(r.clone()));
            }
            !stale
        });
        self.queues.retain(|_, r| {
            let stale = r.qmgr != keep && r.sequence < cutoff_ms;
            if stale {
                gone.push(ClusterRecord::Queue(r.clone()));
            }
            !stale
        });
        gone
    }

    /// Counts a message sent to `qmgr` ("" for the local instance).
    pub fn note_chosen(&mut self, qmgr: &str) {
        self.choices += 1;
        let u = self.usage.entry(qmgr.to_string()).or_default();
        u.sent += 1;
        u.last_used = self.choices;
        debug_assert!(u.last_used <= self.choices);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn qm(cluster: &str, name: &str, seq: u64) -> ClusterQmgrRecord {
        ClusterQmgrRecord {
            cluster: cluster.into(),
            qmgr: name.into(),
            qmid: format!("{name}_1"),
            channel: format!("TO.{name}"),
            conname: "localhost(1414)".into(),
            full_repository: false,
            suspended: false,
            rank: 0,
            priority: 0,
            weight: 50,
            network_priority: 0,
            channel_values: None,
            sequence: seq,
            removed: false,
        }
    }

    fn q(name: &str, host: &str, seq: u64) -> ClusterQueueRecord {
        ClusterQueueRecord {
            cluster: "DEMO".into(),
            queue: name.into(),
            qmgr: host.into(),
            qmid: format!("{host}_1"),
            default_bind: DefaultBind::Open,
            put_enabled: true,
            rank: 0,
            priority: 0,
            sequence: seq,
            removed: false,
        }
    }

    #[test]
    fn newer_records_replace_older_and_duplicates_change_nothing() {
        let mut r = ClusterRepository::new();
        assert!(r.apply(ClusterRecord::QueueManager(qm("DEMO", "QM1", 5))));
        assert!(!r.apply(ClusterRecord::QueueManager(qm("DEMO", "QM1", 5))));
        let mut older = qm("DEMO", "QM1", 4);
        older.conname = "old(1)".into();
        assert!(!r.apply(ClusterRecord::QueueManager(older)));
        let mut newer = qm("DEMO", "QM1", 6);
        newer.suspended = true;
        assert!(r.apply(ClusterRecord::QueueManager(newer)));
        assert!(r.qmgr("DEMO", "QM1").is_some_and(|q| q.suspended));
        assert!(r.qmgr("OTHER", "QM1").is_none());
    }

    #[test]
    fn withdrawn_records_hide_and_stay_withdrawn() {
        let mut r = ClusterRepository::new();
        r.apply(ClusterRecord::Queue(q("APP.Q", "QM1", 1)));
        r.apply(ClusterRecord::Queue(q("APP.Q", "QM2", 1)));
        assert_eq!(r.instances("APP.Q").len(), 2);
        let mut gone = q("APP.Q", "QM1", 2);
        gone.removed = true;
        assert!(r.apply(ClusterRecord::Queue(gone)));
        assert!(!r.apply(ClusterRecord::Queue(q("APP.Q", "QM1", 1))));
        let left: Vec<&str> = r
            .instances("APP.Q")
            .iter()
            .map(|i| i.qmgr.as_str())
            .collect();
        assert_eq!(left, vec!["QM2"]);
        assert_eq!(r.records().len(), 2, "the withdrawn record is kept");
    }

    #[test]
    fn messages_round_trip_and_other_versions_are_refused() {
        let m = RepositoryMessage::new(
            "QM1",
            vec![
                ClusterRecord::QueueManager(qm("DEMO", "QM1", 1)),
                ClusterRecord::Queue(q("APP.Q", "QM1", 1)),
            ],
        );
        let bytes = m.encode();
        assert_eq!(RepositoryMessage::decode(&bytes), Ok(m));
        let text = String::from_utf8(bytes).expect("JSON");
        assert!(text.contains(r#""kind":"QueueManager""#), "{text}");
        let v2 = text.replace(r#""version":1"#, r#""version":2"#);
        assert_eq!(
            RepositoryMessage::decode(v2.as_bytes()),
            Err(RepositoryMessageError::Version(2))
        );
        assert!(matches!(
            RepositoryMessage::decode(b"nonsense"),
            Err(RepositoryMessageError::Malformed(_))
        ));
    }

    #[test]
    fn refresh_keeps_own_records_and_full_repositories() {
        let mut r = ClusterRepository::new();
        let mut fr = qm("DEMO", "QM1", 1);
        fr.full_repository = true;
        r.apply(ClusterRecord::QueueManager(fr));
        r.apply(ClusterRecord::QueueManager(qm("DEMO", "QM2", 1)));
        r.apply(ClusterRecord::QueueManager(qm("DEMO", "QM3", 1)));
        r.apply(ClusterRecord::Queue(q("APP.Q", "QM2", 1)));
        r.apply(ClusterRecord::Queue(q("APP.Q", "QM3", 1)));
        r.forget_others("DEMO", "QM3");
        let names: Vec<&str> = r.qmgrs().map(|q| q.qmgr.as_str()).collect();
        assert_eq!(names, vec!["QM1", "QM3"]);
        assert_eq!(r.instances("APP.Q").len(), 1);
    }

    #[test]
    fn usage_counts_choices() {
        let mut r = ClusterRepository::new();
        r.note_chosen("QM1");
        r.note_chosen("QM2");
        r.note_chosen("QM1");
        assert_eq!(
            r.usage("QM1"),
            ChannelUse {
                sent: 2,
                last_used: 3
            }
        );
        assert_eq!(
            r.usage("QM2"),
            ChannelUse {
                sent: 1,
                last_used: 2
            }
        );
        assert_eq!(r.usage("QM9"), ChannelUse::default());
    }
}
