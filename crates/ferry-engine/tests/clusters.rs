//! Clusters in the engine: the records a queue manager publishes from its definitions,
//! what another member learns from them, and where MQOPEN/MQPUT of a cluster queue
//! sends a message: SYSTEM.CLUSTER.TRANSMIT.QUEUE, CorrelId the chosen instance's
//! channel, shared by the workload algorithm (BIND_NOT_FIXED), fixed for the handle
//! (BIND_ON_OPEN), away from PUT(DISABLED) instances; 2085 and 2189.

use bytes::Bytes;
use ferry_engine::cluster::channel_correl_id;
use ferry_engine::cluster::repository::{ClusterRecord, RepositoryMessage};
use ferry_engine::{ConnId, ConnectionInfo, Effects, GotMessage, QueueManager, Timestamp};
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, MessageDescriptor, MqError, ObjectDescriptor,
    OpenOptions, PutOptionFlags, PutOptions, ReasonCode, TransmissionHeader,
};
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::{DefaultBind, Enablement, CLUSTER_TRANSMIT_QUEUE};
use ferry_objects::{ChannelDefinition, QmgrAttributes, QueueDefinition, QueueType};

/// 2024-01-01T00:00:00Z.
const T0: u64 = 1_704_067_200_000;

struct Qm {
    qm: QueueManager,
    fx: Effects,
    conn: ConnId,
}

impl Qm {
    fn new(name: &str, full_repository: bool) -> Self {
        let mut attrs = QmgrAttributes::default();
        if full_repository {
            attrs.repository = "DEMO".into();
        }
        let mut qm = QueueManager::new(name, attrs, Timestamp(T0));
        qm.define_system_objects(Timestamp(T0));
        let mut fx = Effects::new();
        let conn = qm
            .connect(
                ConnectionInfo {
                    application_name: "cluster-test".into(),
                    channel: String::new(),
                    connection_name: String::new(),
                    user_id: "alice".into(),
                    pid: None,
                },
                Timestamp(T0),
                &mut fx,
            )
            .unwrap();
        let mut ch = ChannelDefinition::new(format!("TO.{name}"), ChannelType::ClusterReceiver);
        ch.attributes.cluster = "DEMO".into();
        ch.attributes.connection_name = format!("{}(1414)", name.to_lowercase());
        qm.define_channel(ch, false, &mut fx).unwrap();
        Qm { qm, fx, conn }
    }

    fn cluster_queue(&mut self, name: &str, f: impl FnOnce(&mut QueueDefinition)) {
        let mut d = QueueDefinition::new(name, QueueType::Local);
        d.attributes.cluster = "DEMO".into();
        f(&mut d);
        self.qm
            .define_queue(d, true, Timestamp(T0), &mut self.fx)
            .unwrap();
    }

    fn publish(&mut self, now: u64) -> Vec<ClusterRecord> {
        self.qm.cluster_publish(now)
    }

    fn open(&mut self, q: &str, o: OpenOptions) -> Result<ferry_engine::Opened, MqError> {
        let od = ObjectDescriptor::queue(q).unwrap();
        self.qm.open(self.conn, &od, o, Timestamp(T0), &mut self.fx)
    }

    fn put(&mut self, h: ferry_engine::Hobj) {
        let mut md = MessageDescriptor::default();
        self.qm
            .put(
                self.conn,
                h,
                &mut md,
                &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
                Bytes::from_static(b"hello"),
                Timestamp(T0 + 10),
                &mut self.fx,
            )
            .unwrap();
    }

    /// Every message on the cluster transmission queue: (CorrelId, the header's
    /// RemoteQMgrName).
    fn drain_sctq(&mut self) -> Vec<([u8; 24], String)> {
        let h = self
            .open(CLUSTER_TRANSMIT_QUEUE, OpenOptions::INPUT_SHARED)
            .unwrap()
            .hobj;
        let gmo = GetOptions {
            options: GetOptionFlags::NO_SYNCPOINT,
            ..GetOptions::default()
        };
        let mut out = Vec::new();
        loop {
            let got: Result<GotMessage, _> = self
                .qm
                .get(
                    self.conn,
                    h,
                    &MessageDescriptor::default(),
                    &gmo,
                    1 << 20,
                    Timestamp(T0 + 20),
                    &mut self.fx,
                )
                .done()
                .expect("get finished");
            let Ok(m) = got else { break };
            let (header, _) = TransmissionHeader::decode(&m.data).unwrap();
            out.push((m.md.correl_id, header.remote_qmgr_name.as_str().to_string()));
        }
        out
    }
}

/// QM1 and QM2 host APP.Q; QM3 has learnt their records.
fn three() -> (Qm, Qm, Qm) {
    let mut qm1 = Qm::new("QM1", true);
    let mut qm2 = Qm::new("QM2", true);
    let mut qm3 = Qm::new("QM3", false);
    qm1.cluster_queue("APP.Q", |_| {});
    qm2.cluster_queue("APP.Q", |_| {});
    let r1 = qm1.publish(T0);
    let r2 = qm2.publish(T0);
    assert_eq!(r1.len(), 2, "a queue manager record and a queue record");
    assert_eq!(qm3.qm.cluster_apply(r1).len(), 2);
    assert_eq!(qm3.qm.cluster_apply(r2).len(), 2);
    qm3.publish(T0);
    (qm1, qm2, qm3)
}

#[test]
fn own_records_are_published_once_and_again_when_they_change() {
    let mut qm1 = Qm::new("QM1", true);
    qm1.cluster_queue("APP.Q", |_| {});
    let first = qm1.publish(T0);
    assert_eq!(first.len(), 2);
    let ClusterRecord::QueueManager(me) = &first[0] else {
        panic!("{first:?}")
    };
    assert!(me.full_repository);
    assert_eq!(
        (me.channel.as_str(), me.conname.as_str()),
        ("TO.QM1", "qm1(1414)")
    );
    assert!(qm1.publish(T0 + 1).is_empty(), "nothing changed");
    qm1.cluster_queue("APP.Q", |d| d.attributes.put = Enablement::Disabled);
    let changed = qm1.publish(T0 + 2);
    assert_eq!(changed.len(), 1);
    assert!(
        matches!(&changed[0], ClusterRecord::Queue(q) if !q.put_enabled && q.sequence == T0 + 2)
    );
    qm1.qm
        .delete_queue("APP.Q", false, Timestamp(T0), &mut qm1.fx)
        .unwrap();
    let changed = qm1.publish(T0 + 3);
    assert!(matches!(&changed[..], [ClusterRecord::Queue(q)] if q.removed));
    // What travels: the records, as JSON, with a version.
    let m = RepositoryMessage::new("QM1", first);
    assert_eq!(RepositoryMessage::decode(&m.encode()).unwrap(), m);
}

#[test]
fn not_fixed_puts_share_the_instances_and_name_their_channel() {
    let (_, _, mut qm3) = three();
    let h = qm3
        .open("APP.Q", OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED)
        .unwrap()
        .hobj;
    for _ in 0..100 {
        qm3.put(h);
    }
    let sent = qm3.drain_sctq();
    assert_eq!(sent.len(), 100);
    let to1 = sent.iter().filter(|(_, qm)| qm == "QM1").count();
    let to2 = sent.iter().filter(|(_, qm)| qm == "QM2").count();
    assert_eq!((to1, to2), (50, 50));
    for (correl, qm) in &sent {
        assert_eq!(*correl, channel_correl_id(&format!("TO.{qm}")));
    }
}

#[test]
fn bind_on_open_keeps_one_instance_and_defbind_notfixed_shares() {
    let (_, _, mut qm3) = three();
    let h = qm3
        .open("APP.Q", OpenOptions::OUTPUT | OpenOptions::BIND_ON_OPEN)
        .unwrap()
        .hobj;
    for _ in 0..10 {
        qm3.put(h);
    }
    let sent = qm3.drain_sctq();
    assert!(sent.iter().all(|s| s.1 == sent[0].1), "{sent:?}");
    // DEFBIND(NOTFIXED) advertised: BIND_AS_Q_DEF shares.
    let (mut qm1, mut qm2, mut qm3) = three();
    for qm in [&mut qm1, &mut qm2] {
        qm.cluster_queue("APP.Q", |d| {
            d.attributes.default_bind = DefaultBind::NotFixed
        });
        let r = qm.publish(T0 + 5);
        qm3.qm.cluster_apply(r);
    }
    let h = qm3.open("APP.Q", OpenOptions::OUTPUT).unwrap().hobj;
    for _ in 0..10 {
        qm3.put(h);
    }
    let sent = qm3.drain_sctq();
    assert_eq!(sent.iter().filter(|s| s.1 == "QM1").count(), 5);
}

/// Handles opened one after another with BIND_ON_OPEN, before anything is put, are
/// spread over the instances: each open counts as a use of the instance it binds to.
#[test]
fn successive_bind_on_open_handles_spread_over_the_instances() {
    let (_, _, mut qm3) = three();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            qm3.open("APP.Q", OpenOptions::OUTPUT | OpenOptions::BIND_ON_OPEN)
                .unwrap()
                .hobj
        })
        .collect();
    for h in handles {
        qm3.put(h);
    }
    let sent = qm3.drain_sctq();
    let to1 = sent.iter().filter(|(_, qm)| qm == "QM1").count();
    assert_eq!((to1, sent.len() - to1), (2, 2), "{sent:?}");
}

#[test]
fn a_put_disabled_instance_gets_nothing() {
    let (mut qm1, _, mut qm3) = three();
    qm1.cluster_queue("APP.Q", |d| d.attributes.put = Enablement::Disabled);
    let r = qm1.publish(T0 + 5);
    assert_eq!(qm3.qm.cluster_apply(r).len(), 1);
    let h = qm3
        .open("APP.Q", OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED)
        .unwrap()
        .hobj;
    for _ in 0..10 {
        qm3.put(h);
    }
    assert!(qm3.drain_sctq().iter().all(|s| s.1 == "QM2"));
}

#[test]
fn a_local_instance_is_used_first_unless_clwluseq_any() {
    let (mut qm1, _, _) = three();
    let (_, _, qm3) = three();
    qm1.qm.cluster_apply(qm3.qm.cluster_repository().records());
    let mut qm2_records = Qm::new("QM2", true);
    qm2_records.cluster_queue("APP.Q", |_| {});
    let r = qm2_records.publish(T0);
    qm1.qm.cluster_apply(r);
    let h = qm1.open("APP.Q", OpenOptions::OUTPUT).unwrap().hobj;
    qm1.put(h);
    assert!(
        qm1.drain_sctq().is_empty(),
        "CLWLUSEQ(LOCAL): the local instance"
    );
    let mut attrs = qm1.qm.qmgr();
    attrs.cluster_workload_use_q = ferry_objects::qmgr::ClusterUseQueue::Any;
    qm1.qm.alter_qmgr(attrs, &mut qm1.fx).unwrap();
    let mut remote = 0;
    for _ in 0..4 {
        let h = qm1
            .open("APP.Q", OpenOptions::OUTPUT | OpenOptions::BIND_ON_OPEN)
            .unwrap()
            .hobj;
        qm1.put(h);
        remote += qm1.drain_sctq().len();
    }
    assert!(
        (1..4).contains(&remote),
        "ANY shares: {remote} of 4 went away"
    );
}

#[test]
fn unknown_queues_are_2085_and_2189_before_a_full_repository_answered() {
    let (_, _, mut qm3) = three();
    // A partial repository asks its full repositories first: 2189 while the question
    // is out, 2085 once they answered that the cluster has no such queue.
    assert_eq!(
        qm3.open("NOPE", OpenOptions::OUTPUT).unwrap_err().reason,
        ReasonCode::ClusterResolutionError
    );
    let asked = qm3.qm.cluster_take_queries();
    assert_eq!(asked.len(), 1);
    qm3.qm.cluster_answered(&asked);
    assert_eq!(
        qm3.open("NOPE", OpenOptions::OUTPUT).unwrap_err().reason,
        ReasonCode::UnknownObjectName
    );
    let mut lonely = Qm::new("QM4", false);
    let mut sdr = ChannelDefinition::new("TO.QM1", ChannelType::ClusterSender);
    sdr.attributes.cluster = "DEMO".into();
    sdr.attributes.connection_name = "qm1(1414)".into();
    lonely
        .qm
        .define_channel(sdr, false, &mut lonely.fx)
        .unwrap();
    assert_eq!(
        lonely
            .open("APP.Q", OpenOptions::OUTPUT)
            .unwrap_err()
            .reason,
        ReasonCode::ClusterResolutionError
    );
}

#[test]
fn a_queue_manager_of_the_cluster_is_reached_by_name() {
    let (_, _, mut qm3) = three();
    let mut od = ObjectDescriptor::queue("REPLY.Q").unwrap();
    od.object_qmgr_name = FixedStr::new("QM2").unwrap();
    let mut md = MessageDescriptor::default();
    qm3.qm
        .put1(
            qm3.conn,
            &od,
            &mut md,
            &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
            Bytes::from_static(b"reply"),
            Timestamp(T0 + 10),
            &mut qm3.fx,
        )
        .unwrap();
    assert_eq!(
        qm3.drain_sctq(),
        vec![(channel_correl_id("TO.QM2"), "QM2".to_string())]
    );
}

#[test]
fn suspend_and_refresh() {
    let (_, _, mut qm3) = three();
    let r = qm3
        .qm
        .cluster_suspend("DEMO", true, T0 + 50)
        .expect("a record");
    assert!(matches!(&r, ClusterRecord::QueueManager(q) if q.suspended));
    assert_eq!(qm3.publish(T0 + 60), vec![r], "SUSPEND is published");
    assert!(qm3.publish(T0 + 70).is_empty(), "and survives a publish");
    assert!(qm3.qm.cluster_suspend("OTHER", true, T0).is_none());
    qm3.qm.cluster_refresh("DEMO").unwrap();
    assert_eq!(qm3.qm.cluster_repository().instances("APP.Q").len(), 0);
    assert_eq!(qm3.qm.cluster_take_refresh(), vec!["DEMO".to_string()]);
    assert_eq!(
        qm3.qm.cluster_repository().qmgrs().count(),
        3,
        "FRs and self kept"
    );
}

#[test]
fn a_backed_out_round_is_rolled_back_and_published_again() {
    let mut qm1 = Qm::new("QM1", true);
    let saved = qm1.qm.cluster_checkpoint();
    let first = qm1.publish(T0);
    assert_eq!(first.len(), 1);
    qm1.qm.cluster_roll_back(saved);
    assert_eq!(qm1.publish(T0 + 1).len(), 1, "published again");
    assert!(qm1.publish(T0 + 2).is_empty());
}

#[test]
fn a_full_repository_forces_a_member_out() {
    let (mut qm1, _, _) = three();
    let mut qm3 = Qm::new("QM3", false);
    qm3.cluster_queue("APP.Q", |_| {});
    let r = qm3.publish(T0);
    qm1.qm.cluster_apply(r);
    assert!(qm3.qm.cluster_refresh("DEMO").is_ok());
    assert!(
        qm1.qm.cluster_refresh("DEMO").is_err(),
        "not on a full repository"
    );
    assert!(qm1.qm.cluster_force_remove("DEMO", "QM1").is_err());
    assert!(qm1.qm.cluster_force_remove("DEMO", "NOPE").is_err());
    qm1.qm.cluster_force_remove("DEMO", "QM3").unwrap();
    assert!(qm1.qm.cluster_repository().qmgr("DEMO", "QM3").is_none());
    assert!(qm1
        .qm
        .cluster_repository()
        .instances("APP.Q")
        .iter()
        .all(|i| i.qmgr != "QM3"));
    let published = qm1.publish(T0 + 5);
    assert_eq!(published.len(), 2, "both withdrawals go out: {published:?}");
    assert!(published.iter().all(|r| r.owner() == "QM3"));
}
