//! Cluster transmission queues in the engine (QMGR DEFCLXQ): a cluster message goes to
//! the queue its channel uses; DEFCLXQ(CHANNEL) asks for SYSTEM.CLUSTER.TRANSMIT.<channel>,
//! made from the shipped model as a permanent-dynamic transmission queue, used once the
//! channel switched to it (and after a restart, while DEFCLXQ(CHANNEL) holds).

use bytes::Bytes;
use ferry_engine::{ConnectionInfo, Effects, QueueManager, Timestamp};
use ferry_mqi::{MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags, PutOptions};
use ferry_objects::channel::ChannelType;
use ferry_objects::qmgr::DefaultClusterXmitQueue;
use ferry_objects::queue::{DefinitionType, Usage, CLUSTER_TRANSMIT_QUEUE};
use ferry_objects::{ChannelDefinition, QmgrAttributes, QueueDefinition, QueueType};

/// 2024-01-01T00:00:00Z.
const T0: u64 = 1_704_067_200_000;

fn member(name: &str) -> (QueueManager, Effects) {
    let attrs = QmgrAttributes {
        repository: "DEMO".into(),
        ..QmgrAttributes::default()
    };
    let mut qm = QueueManager::new(name, attrs, Timestamp(T0));
    qm.define_system_objects(Timestamp(T0));
    let mut fx = Effects::new();
    let mut ch = ChannelDefinition::new(format!("TO.{name}"), ChannelType::ClusterReceiver);
    ch.attributes.cluster = "DEMO".into();
    ch.attributes.connection_name = format!("{}(1414)", name.to_lowercase());
    qm.define_channel(ch, false, &mut fx).expect("CLUSRCVR");
    (qm, fx)
}

fn depth(qm: &QueueManager, q: &str) -> usize {
    qm.queue_status(q, Timestamp(T0))
        .map_or(0, |s| s.current_depth as usize)
}

#[test]
fn defclxq_channel_gives_a_channel_its_own_queue_once_it_switched() {
    let (mut qm3, mut fx) = member("QM3");
    let (mut qm1, mut fx1) = member("QM1");
    let mut d = QueueDefinition::new("APP.Q", QueueType::Local);
    d.attributes.cluster = "DEMO".into();
    qm1.define_queue(d, false, Timestamp(T0), &mut fx1)
        .expect("define");
    qm3.cluster_apply(qm1.cluster_publish(T0));
    let conn = qm3
        .connect(
            ConnectionInfo {
                application_name: "xmitq-test".into(),
                channel: String::new(),
                connection_name: String::new(),
                user_id: "alice".into(),
                pid: None,
            },
            Timestamp(T0),
            &mut fx,
        )
        .expect("connect");
    let od = ObjectDescriptor::queue("APP.Q").expect("name");
    let h = qm3
        .open(conn, &od, OpenOptions::OUTPUT, Timestamp(T0), &mut fx)
        .expect("open")
        .hobj;
    let put = |qm: &mut QueueManager, fx: &mut Effects| {
        let mut md = MessageDescriptor::default();
        qm.put(
            conn,
            h,
            &mut md,
            &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
            Bytes::from_static(b"m"),
            Timestamp(T0 + 1),
            fx,
        )
        .expect("put");
    };

    // DEFCLXQ(SCTQ), MQ's default: the shared queue.
    assert_eq!(qm3.cluster_xmit_q_name("TO.QM1"), CLUSTER_TRANSMIT_QUEUE);
    put(&mut qm3, &mut fx);
    assert_eq!(depth(&qm3, CLUSTER_TRANSMIT_QUEUE), 1);

    // DEFCLXQ(CHANNEL): asked for, but used only once the channel switched.
    let mut attrs = qm3.qmgr();
    attrs.default_cluster_xmit_q = DefaultClusterXmitQueue::Channel;
    qm3.alter_qmgr(attrs, &mut fx).expect("DEFCLXQ(CHANNEL)");
    assert_eq!(
        qm3.cluster_wanted_xmit_q("TO.QM1"),
        "SYSTEM.CLUSTER.TRANSMIT.TO.QM1"
    );
    assert_eq!(qm3.cluster_xmit_q_name("TO.QM1"), CLUSTER_TRANSMIT_QUEUE);
    let name = qm3
        .define_cluster_channel_xmit_q("TO.QM1", Timestamp(T0), &mut fx)
        .expect("made from the model");
    let def = qm3.queue(&name).expect("defined");
    assert_eq!(def.queue_type, QueueType::Local);
    assert_eq!(def.attributes.usage, Usage::TransmissionQueue);
    assert_eq!(
        def.attributes.definition_type,
        DefinitionType::PermanentDynamic
    );
    assert!(qm3.has_message_with_correl_id(
        CLUSTER_TRANSMIT_QUEUE,
        &ferry_engine::cluster::channel_correl_id("TO.QM1")
    ));
    qm3.set_cluster_xmit_q("TO.QM1", &name);
    put(&mut qm3, &mut fx);
    assert_eq!(depth(&qm3, &name), 1);
    assert_eq!(depth(&qm3, CLUSTER_TRANSMIT_QUEUE), 1);

    // After a restart (no switch remembered), DEFCLXQ(CHANNEL) and the queue decide.
    let restarted = QueueManager::from_catalogue("QM3", qm3.catalogue(), Timestamp(T0));
    assert_eq!(restarted.cluster_xmit_q_name("TO.QM1"), name);
    assert_eq!(
        restarted.cluster_xmit_q_name("TO.QM2"),
        CLUSTER_TRANSMIT_QUEUE,
        "no queue of its own yet"
    );
}
