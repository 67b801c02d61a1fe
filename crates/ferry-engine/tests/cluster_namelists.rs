//! Namelists in the engine, and the clusters objects name through them: a queue manager
//! that is a full repository for two clusters (REPOSNL) with one CLUSRCVR in both (CLUSNL)
//! publishes a record for each cluster, as does a queue advertised with CLUSNL; CLUSTER
//! and CLUSNL together are refused; MQINQ answers a namelist (MQOT_NAMELIST) and the
//! cluster attributes of queues and the queue manager; the shipped namelists are added
//! once to a queue manager from before them.

use ferry_engine::cluster::repository::ClusterRecord;
use ferry_engine::{ConnId, ConnectionInfo, Effects, QueueManager, Timestamp};
use ferry_mqi::inquire::selector as sel;
use ferry_mqi::{InquireValue, ObjectDescriptor, ObjectType, OpenOptions, ReasonCode};
use ferry_objects::channel::ChannelType;
use ferry_objects::namelist::DEFAULT_NAMELIST;
use ferry_objects::{AdminError, QueueType};
use ferry_objects::{ChannelDefinition, NamelistDefinition, QmgrAttributes, QueueDefinition};

/// 2024-01-01T00:00:00Z.
const T0: u64 = 1_704_067_200_000;

fn qm(name: &str) -> (QueueManager, ConnId, Effects) {
    let mut qm = QueueManager::new(name, QmgrAttributes::default(), Timestamp(T0));
    qm.define_system_objects(Timestamp(T0));
    let mut fx = Effects::new();
    let conn = qm
        .connect(
            ConnectionInfo {
                application_name: "namelist-test".into(),
                channel: String::new(),
                connection_name: String::new(),
                user_id: "alice".into(),
                pid: None,
            },
            Timestamp(T0),
            &mut fx,
        )
        .expect("connect");
    (qm, conn, fx)
}

fn namelist(name: &str, names: &[&str]) -> NamelistDefinition {
    let mut nl = NamelistDefinition::new(name);
    nl.attributes.names = names.iter().map(|n| n.to_string()).collect();
    nl
}

#[test]
fn one_queue_manager_takes_part_in_two_clusters_through_namelists() {
    let (mut qm, _, mut fx) = qm("QM1");
    qm.define_namelist(namelist("BOTH", &["CLUS1", "CLUS2"]), false, &mut fx)
        .unwrap();
    let mut attrs = qm.qmgr();
    attrs.repository_namelist = "BOTH".into();
    qm.alter_qmgr(attrs, &mut fx).unwrap();
    let mut ch = ChannelDefinition::new("TO.QM1", ChannelType::ClusterReceiver);
    ch.attributes.cluster_namelist = "BOTH".into();
    ch.attributes.connection_name = "qm1(1414)".into();
    qm.define_channel(ch, false, &mut fx).unwrap();
    let mut q = QueueDefinition::new("APP.Q", QueueType::Local);
    q.attributes.cluster_namelist = "BOTH".into();
    qm.define_queue(q, false, Timestamp(T0), &mut fx).unwrap();

    assert!(qm.is_full_repository("CLUS1") && qm.is_full_repository("CLUS2"));
    assert!(!qm.is_full_repository("CLUS3"));
    let records = qm.cluster_publish(T0);
    let mut qmgrs: Vec<(String, bool)> = Vec::new();
    let mut queues: Vec<String> = Vec::new();
    for r in &records {
        match r {
            ClusterRecord::QueueManager(q) => qmgrs.push((q.cluster.clone(), q.full_repository)),
            ClusterRecord::Queue(q) => queues.push(q.cluster.clone()),
        }
    }
    qmgrs.sort();
    queues.sort();
    assert_eq!(
        qmgrs,
        [("CLUS1".to_string(), true), ("CLUS2".to_string(), true)]
    );
    assert_eq!(queues, ["CLUS1", "CLUS2"]);

    // ALTER NAMELIST: the queue leaves CLUS2 (a withdrawn record), the rest is unchanged.
    qm.alter_namelist(namelist("BOTH", &["CLUS1"]), &mut fx)
        .unwrap();
    let changed = qm.cluster_publish(T0 + 1_000);
    assert!(
        changed.iter().all(|r| r.cluster() == "CLUS2"),
        "{changed:?}"
    );
    assert!(changed.iter().all(|r| match r {
        ClusterRecord::QueueManager(q) => q.removed,
        ClusterRecord::Queue(q) => q.removed,
    }));
    assert_eq!(changed.len(), 2, "the CLUSRCVR and the queue leave CLUS2");
}

#[test]
fn cluster_and_clusnl_together_are_refused() {
    let (mut qm, _, mut fx) = qm("QM1");
    let mut q = QueueDefinition::new("APP.Q", QueueType::Local);
    q.attributes.cluster = "CLUS1".into();
    q.attributes.cluster_namelist = "BOTH".into();
    assert!(matches!(
        qm.define_queue(q, false, Timestamp(T0), &mut fx),
        Err(AdminError::Invalid(_))
    ));
    let mut ch = ChannelDefinition::new("TO.QM1", ChannelType::ClusterSender);
    ch.attributes.cluster = "CLUS1".into();
    ch.attributes.cluster_namelist = "BOTH".into();
    assert!(matches!(
        qm.define_channel(ch, false, &mut fx),
        Err(AdminError::Invalid(_))
    ));
}

#[test]
fn mqinq_answers_namelists_and_cluster_attributes() {
    let (mut qm, conn, mut fx) = qm("QM1");
    qm.define_namelist(namelist("BOTH", &["CLUS1", "CLUS2"]), false, &mut fx)
        .unwrap();
    let mut od = ObjectDescriptor::queue("BOTH").unwrap();
    od.object_type = ObjectType::Namelist;
    let h = qm
        .open(conn, &od, OpenOptions::INQUIRE, Timestamp(T0), &mut fx)
        .unwrap()
        .hobj;
    let values = qm
        .inquire(conn, h, &[sel::NAMELIST_NAME, sel::NAME_COUNT, sel::NAMES])
        .unwrap();
    assert_eq!(values[0], InquireValue::Str("BOTH".into()));
    assert_eq!(values[1], InquireValue::Int(2));
    assert_eq!(
        values[2],
        InquireValue::Str(format!("{:<48}{:<48}", "CLUS1", "CLUS2"))
    );
    // A namelist is opened to inquire only; one that is not there is unknown.
    assert_eq!(
        qm.open(conn, &od, OpenOptions::OUTPUT, Timestamp(T0), &mut fx)
            .unwrap_err()
            .reason,
        ReasonCode::OptionNotValidForType
    );
    let mut missing = ObjectDescriptor::queue("NONE.SUCH").unwrap();
    missing.object_type = ObjectType::Namelist;
    assert_eq!(
        qm.open(conn, &missing, OpenOptions::INQUIRE, Timestamp(T0), &mut fx)
            .unwrap_err()
            .reason,
        ReasonCode::UnknownObjectName
    );

    // A cluster queue's attributes.
    let mut q = QueueDefinition::new("APP.Q", QueueType::Local);
    q.attributes.cluster = "CLUS1".into();
    q.attributes.default_bind = ferry_objects::queue::DefaultBind::NotFixed;
    q.attributes.cluster_workload_rank = 3;
    q.attributes.cluster_workload_priority = 4;
    qm.define_queue(q, false, Timestamp(T0), &mut fx).unwrap();
    let h = qm
        .open(
            conn,
            &ObjectDescriptor::queue("APP.Q").unwrap(),
            OpenOptions::INQUIRE,
            Timestamp(T0),
            &mut fx,
        )
        .unwrap()
        .hobj;
    let values = qm
        .inquire(
            conn,
            h,
            &[
                sel::CLUSTER_NAME,
                sel::CLUSTER_NAMELIST,
                sel::DEF_BIND,
                sel::CLWL_Q_RANK,
                sel::CLWL_Q_PRIORITY,
                sel::CLWL_USEQ,
            ],
        )
        .unwrap();
    assert_eq!(
        values,
        [
            InquireValue::Str("CLUS1".into()),
            InquireValue::Str(String::new()),
            InquireValue::Int(1),
            InquireValue::Int(3),
            InquireValue::Int(4),
            InquireValue::Int(-3),
        ]
    );

    // The queue manager's.
    let mut attrs = qm.qmgr();
    attrs.repository = "CLUS1".into();
    attrs.repository_namelist = "BOTH".into();
    qm.alter_qmgr(attrs, &mut fx).unwrap();
    let od = ObjectDescriptor {
        object_type: ObjectType::QMgr,
        ..Default::default()
    };
    let h = qm
        .open(conn, &od, OpenOptions::INQUIRE, Timestamp(T0), &mut fx)
        .unwrap()
        .hobj;
    let values = qm
        .inquire(
            conn,
            h,
            &[
                sel::REPOSITORY_NAME,
                sel::REPOSITORY_NAMELIST,
                sel::CLWL_USEQ,
                sel::CLWL_MRU_CHANNELS,
                sel::DEF_CLUSTER_XMIT_Q_TYPE,
            ],
        )
        .unwrap();
    assert_eq!(
        values,
        [
            InquireValue::Str("CLUS1".into()),
            InquireValue::Str("BOTH".into()),
            InquireValue::Int(0),
            InquireValue::Int(999_999_999),
            InquireValue::Int(0),
        ]
    );
}

#[test]
fn shipped_namelists_are_added_once_to_an_older_queue_manager() {
    let (qm, _, mut fx) = qm("QM1");
    assert!(
        qm.namelist(DEFAULT_NAMELIST).is_some(),
        "a new one has them"
    );
    // An older queue manager: its catalogue holds no namelists.
    let mut catalogue = qm.catalogue();
    catalogue.namelists.clear();
    let mut old = QueueManager::from_catalogue("QM1", catalogue, Timestamp(T0));
    let added = old.define_missing_namelists(Timestamp(T0), &mut fx);
    assert_eq!(added.len(), 3, "{added:?}");
    assert!(old.namelist(DEFAULT_NAMELIST).is_some());
    // Once: an administrator's deletion of one is not undone at the next start.
    old.delete_namelist("SYSTEM.QPUBSUB.SUBPOINT.NAMELIST", &mut fx)
        .unwrap();
    assert!(old
        .define_missing_namelists(Timestamp(T0), &mut fx)
        .is_empty());
}
