//! Partial repositories in the engine: a partial repository knows a cluster queue only
//! once it asked (its first MQOPEN answers 2189 while the question is out, then works,
//! or 2085 when the full repository answered that the cluster has no such queue); a
//! full repository sends a record only to who is to know it; records expire after 30
//! days unless their owner republishes them, which it does after 27.

use ferry_engine::cluster::partial::{EXPIRE_AFTER_MS, REPUBLISH_AFTER_MS};
use ferry_engine::cluster::repository::{ClusterQuery, ClusterRecord};
use ferry_engine::{ConnId, ConnectionInfo, Effects, QueueManager, Timestamp};
use ferry_mqi::{ObjectDescriptor, OpenOptions, ReasonCode};
use ferry_objects::channel::ChannelType;
use ferry_objects::{ChannelDefinition, QmgrAttributes, QueueDefinition, QueueType};

/// 2024-01-01T00:00:00Z.
const T0: u64 = 1_704_067_200_000;

struct Qm {
    qm: QueueManager,
    fx: Effects,
    conn: ConnId,
}

impl Qm {
    /// A member of cluster DEMO: its CLUSRCVR, REPOS(DEMO) when `full`, and for a
    /// partial a manual CLUSSDR to QM1.
    fn new(name: &str, full: bool) -> Self {
        let mut attrs = QmgrAttributes::default();
        if full {
            attrs.repository = "DEMO".into();
        }
        let mut qm = QueueManager::new(name, attrs, Timestamp(T0));
        qm.define_system_objects(Timestamp(T0));
        let mut fx = Effects::new();
        let conn = qm
            .connect(
                ConnectionInfo {
                    application_name: "partial-test".into(),
                    channel: String::new(),
                    connection_name: String::new(),
                    user_id: "alice".into(),
                    pid: None,
                },
                Timestamp(T0),
                &mut fx,
            )
            .expect("connect");
        let mut ch = ChannelDefinition::new(format!("TO.{name}"), ChannelType::ClusterReceiver);
        ch.attributes.cluster = "DEMO".into();
        ch.attributes.connection_name = format!("{}(1414)", name.to_lowercase());
        qm.define_channel(ch, false, &mut fx).expect("CLUSRCVR");
        if !full {
            let mut ch = ChannelDefinition::new("TO.QM1", ChannelType::ClusterSender);
            ch.attributes.cluster = "DEMO".into();
            ch.attributes.connection_name = "qm1(1414)".into();
            qm.define_channel(ch, false, &mut fx).expect("CLUSSDR");
        }
        Qm { qm, fx, conn }
    }

    fn cluster_queue(&mut self, name: &str) {
        let mut d = QueueDefinition::new(name, QueueType::Local);
        d.attributes.cluster = "DEMO".into();
        self.qm
            .define_queue(d, false, Timestamp(T0), &mut self.fx)
            .expect("define");
    }

    fn open_at(&mut self, q: &str, now: u64) -> Result<(), ReasonCode> {
        let od = ObjectDescriptor::queue(q).expect("name");
        self.qm
            .open(
                self.conn,
                &od,
                OpenOptions::OUTPUT,
                Timestamp(now),
                &mut self.fx,
            )
            .map(|_| ())
            .map_err(|e| e.reason)
    }
}

/// Gives `to` the records `from` publishes.
fn tell(to: &mut Qm, records: Vec<ClusterRecord>) {
    to.qm.cluster_apply(records);
}

#[test]
fn a_partial_repository_learns_a_queue_on_first_use() {
    let mut fr = Qm::new("QM1", true);
    let mut host = Qm::new("QM2", false);
    let mut pr = Qm::new("QM3", false);
    host.cluster_queue("APP.Q");
    // The members publish; the full repository learns everything.
    let fr_own = fr.qm.cluster_publish(T0);
    let host_own = host.qm.cluster_publish(T0);
    let pr_own = pr.qm.cluster_publish(T0);
    tell(&mut fr, host_own.clone());
    tell(&mut fr, pr_own.clone());
    // A member hears of the full repositories only (and of nothing else) when it joins.
    let join = fr.qm.cluster_join_records("DEMO", "QM3");
    assert!(join
        .iter()
        .all(|r| matches!(r, ClusterRecord::QueueManager(m) if m.full_repository)));
    tell(&mut pr, fr_own);
    tell(&mut pr, join);
    assert!(pr.qm.cluster_repository().instances("APP.Q").is_empty());

    // The first MQOPEN asks, and answers 2189 while the question is out.
    assert_eq!(
        pr.open_at("APP.Q", T0 + 10),
        Err(ReasonCode::ClusterResolutionError)
    );
    assert!(pr.qm.cluster_query_pending("APP.Q"));
    let queries = pr.qm.cluster_take_queries();
    assert_eq!(
        queries,
        [ClusterQuery {
            cluster: "DEMO".into(),
            queue: "APP.Q".into()
        }]
    );
    assert!(pr.qm.cluster_take_queries().is_empty(), "sent once");

    // The full repository subscribes QM3 and sends the queue and its host.
    let (records, answers) = fr.qm.cluster_answer("QM3", &queries);
    assert_eq!(answers, queries);
    assert!(records
        .iter()
        .any(|r| matches!(r, ClusterRecord::Queue(q) if q.queue == "APP.Q")));
    assert!(records
        .iter()
        .any(|r| matches!(r, ClusterRecord::QueueManager(m) if m.qmgr == "QM2")));
    tell(&mut pr, records);
    pr.qm.cluster_answered(&answers);
    assert!(!pr.qm.cluster_query_pending("APP.Q"));
    assert_eq!(pr.open_at("APP.Q", T0 + 20), Ok(()));

    // From now on, the queue's changes reach QM3; another member's do not.
    let apq = host_own
        .iter()
        .find(|r| matches!(r, ClusterRecord::Queue(_)))
        .cloned()
        .expect("the queue's record");
    let audience = fr.qm.cluster_audience(&apq);
    assert!(audience.contains("QM3"), "{audience:?}");
    assert!(!audience.contains("QM2"), "never its owner");
    let mut other = Qm::new("QM4", false);
    other.cluster_queue("OTHER.Q");
    let other_own = other.qm.cluster_publish(T0);
    tell(&mut fr, other_own.clone());
    for r in &other_own {
        assert!(
            !fr.qm.cluster_audience(r).contains("QM3"),
            "QM3 did not ask about QM4 or its queues: {r:?}"
        );
    }

    // QM3 leaving the cluster (its CLUSRCVR deleted) ends its subscriptions.
    let mut leaving = pr_own
        .iter()
        .find_map(|r| match r {
            ClusterRecord::QueueManager(m) => Some(m.clone()),
            ClusterRecord::Queue(_) => None,
        })
        .expect("QM3's record");
    leaving.removed = true;
    leaving.sequence += 1;
    tell(&mut fr, vec![ClusterRecord::QueueManager(leaving)]);
    assert!(!fr.qm.cluster_audience(&apq).contains("QM3"));

    // A queue the cluster does not have: 2189 while asked, 2085 once answered.
    assert_eq!(
        pr.open_at("NO.SUCH.Q", T0 + 30),
        Err(ReasonCode::ClusterResolutionError)
    );
    let queries = pr.qm.cluster_take_queries();
    let (records, answers) = fr.qm.cluster_answer("QM3", &queries);
    assert!(records.is_empty());
    pr.qm.cluster_answered(&answers);
    assert_eq!(
        pr.open_at("NO.SUCH.Q", T0 + 40),
        Err(ReasonCode::UnknownObjectName)
    );
}

#[test]
fn an_unanswered_question_is_asked_again_after_ten_seconds() {
    let mut pr = Qm::new("QM3", false);
    assert_eq!(
        pr.open_at("APP.Q", T0),
        Err(ReasonCode::ClusterResolutionError)
    );
    assert_eq!(pr.qm.cluster_take_queries().len(), 1);
    assert_eq!(
        pr.open_at("APP.Q", T0 + 5_000),
        Err(ReasonCode::ClusterResolutionError)
    );
    assert!(pr.qm.cluster_take_queries().is_empty(), "still out");
    assert_eq!(
        pr.open_at("APP.Q", T0 + 10_001),
        Err(ReasonCode::ClusterResolutionError)
    );
    assert_eq!(pr.qm.cluster_take_queries().len(), 1, "asked again");
}

#[test]
fn records_expire_after_thirty_days_unless_republished() {
    let mut fr = Qm::new("QM1", true);
    let mut host = Qm::new("QM2", false);
    host.cluster_queue("APP.Q");
    fr.qm.cluster_publish(T0);
    tell(&mut fr, host.qm.cluster_publish(T0));
    assert_eq!(fr.qm.cluster_repository().instances("APP.Q").len(), 1);

    // 27 days on, the owner publishes its records again (unchanged but for the sequence).
    let day27 = T0 + REPUBLISH_AFTER_MS;
    assert!(!host.qm.cluster_republish_due(day27 - 1));
    assert!(host.qm.cluster_republish_due(day27 + 1));
    let renewed = host.qm.cluster_publish(day27 + 1);
    assert_eq!(
        renewed.len(),
        2,
        "the queue manager and its queue: {renewed:?}"
    );
    assert!(!host.qm.cluster_republish_due(day27 + 2));
    tell(&mut fr, renewed);
    // 30 days after the first publication the renewed records stay.
    assert!(fr.qm.cluster_expire(T0 + EXPIRE_AFTER_MS + 1).is_empty());
    assert_eq!(fr.qm.cluster_repository().instances("APP.Q").len(), 1);

    // A member that stops renewing is forgotten 30 days after its last publication; the
    // full repository's own records never expire here.
    let gone = fr.qm.cluster_expire(day27 + EXPIRE_AFTER_MS + 2);
    assert_eq!(gone.len(), 2, "{gone:?}");
    assert!(fr.qm.cluster_repository().instances("APP.Q").is_empty());
    assert!(fr.qm.cluster_repository().qmgr("DEMO", "QM2").is_none());
    assert!(fr.qm.cluster_repository().qmgr("DEMO", "QM1").is_some());
}
