//! Binding of cluster puts in the engine: MQOO_BIND_ON_GROUP sends each logical group to
//! one instance (messages outside a group choose as NOT_FIXED), DEFBIND(GROUP) does the
//! same for MQOO_BIND_AS_Q_DEF, two BIND options are 2046; NOT_FIXED messages are marked
//! reallocatable on the cluster transmission queue and bound ones are not; a
//! reallocatable message of a queue manager whose channel is retrying gets another
//! instance, and none when there is no other; MQINQ of a cluster queue elsewhere answers
//! what the cluster tells of it (MQQT_CLUSTER).

use bytes::Bytes;
use ferry_engine::cluster::workload::ChannelPreference;
use ferry_engine::cluster::REALLOCATABLE_FEEDBACK;
use ferry_engine::{ConnId, ConnectionInfo, Effects, GotMessage, Hobj, QueueManager, Timestamp};
use ferry_mqi::descriptor::msg_flags;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags,
    PutOptions, ReasonCode, TransmissionHeader,
};
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::{DefaultBind, CLUSTER_TRANSMIT_QUEUE};
use ferry_objects::{ChannelDefinition, QmgrAttributes, QueueDefinition, QueueType};

/// 2024-01-01T00:00:00Z.
const T0: u64 = 1_704_067_200_000;

struct Qm {
    qm: QueueManager,
    fx: Effects,
    conn: ConnId,
}

impl Qm {
    fn new(name: &str) -> Self {
        let attrs = QmgrAttributes {
            repository: "DEMO".into(),
            ..QmgrAttributes::default()
        };
        let mut qm = QueueManager::new(name, attrs, Timestamp(T0));
        qm.define_system_objects(Timestamp(T0));
        let mut fx = Effects::new();
        let conn = qm
            .connect(
                ConnectionInfo {
                    application_name: "binding-test".into(),
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
        Qm { qm, fx, conn }
    }

    fn open(&mut self, o: OpenOptions) -> Result<Hobj, ReasonCode> {
        let od = ObjectDescriptor::queue("APP.Q").expect("name");
        self.qm
            .open(self.conn, &od, o, Timestamp(T0), &mut self.fx)
            .map(|o| o.hobj)
            .map_err(|e| e.reason)
    }

    fn put(&mut self, h: Hobj, flags: i32, logical: bool) {
        let mut md = MessageDescriptor {
            msg_flags: flags,
            ..MessageDescriptor::default()
        };
        let mut o = PutOptionFlags::NO_SYNCPOINT;
        if logical {
            o |= PutOptionFlags::LOGICAL_ORDER;
        }
        self.qm
            .put(
                self.conn,
                h,
                &mut md,
                &PutOptions::new(o),
                Bytes::from_static(b"m"),
                Timestamp(T0 + 10),
                &mut self.fx,
            )
            .expect("put");
    }

    /// Every message on the cluster transmission queue: (header's queue manager, the
    /// transmission descriptor's Feedback).
    fn drain_sctq(&mut self) -> Vec<(String, i32)> {
        let od = ObjectDescriptor::queue(CLUSTER_TRANSMIT_QUEUE).expect("name");
        let h = self
            .qm
            .open(
                self.conn,
                &od,
                OpenOptions::INPUT_SHARED,
                Timestamp(T0),
                &mut self.fx,
            )
            .expect("open SCTQ")
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
            let (header, _) = TransmissionHeader::decode(&m.data).expect("MQXQH");
            out.push((header.remote_qmgr_name.as_str().to_string(), m.md.feedback));
        }
        out
    }
}

/// QM1 and QM2 host APP.Q (with `bind` as DEFBIND); QM3 knows them.
fn three(bind: DefaultBind) -> Qm {
    let mut qm3 = Qm::new("QM3");
    for name in ["QM1", "QM2"] {
        let mut host = Qm::new(name);
        let mut d = QueueDefinition::new("APP.Q", QueueType::Local);
        d.attributes.cluster = "DEMO".into();
        d.attributes.default_bind = bind;
        host.qm
            .define_queue(d, false, Timestamp(T0), &mut host.fx)
            .expect("define");
        let records = host.qm.cluster_publish(T0);
        qm3.qm.cluster_apply(records);
    }
    qm3
}

#[test]
fn each_group_goes_to_one_instance() {
    let mut qm3 = three(DefaultBind::Open);
    let h = qm3
        .open(OpenOptions::OUTPUT | OpenOptions::BIND_ON_GROUP)
        .expect("open");
    for _group in 0..4 {
        for _ in 0..4 {
            qm3.put(h, msg_flags::MSG_IN_GROUP, true);
        }
        qm3.put(h, msg_flags::LAST_MSG_IN_GROUP, true);
    }
    let sent = qm3.drain_sctq();
    assert_eq!(sent.len(), 20);
    for group in sent.chunks(5) {
        assert!(
            group.iter().all(|m| m.0 == group[0].0),
            "one instance per group: {group:?}"
        );
        assert!(
            group.iter().all(|m| m.1 != REALLOCATABLE_FEEDBACK),
            "messages of a group are bound"
        );
    }
    let firsts: Vec<&str> = sent.chunks(5).map(|g| g[0].0.as_str()).collect();
    assert!(
        firsts.contains(&"QM1") && firsts.contains(&"QM2"),
        "groups are shared: {firsts:?}"
    );
    // Outside a group, BIND_ON_GROUP chooses as NOT_FIXED.
    for _ in 0..4 {
        qm3.put(h, 0, false);
    }
    let sent = qm3.drain_sctq();
    assert_eq!(sent.iter().filter(|m| m.0 == "QM1").count(), 2, "{sent:?}");
    assert!(sent.iter().all(|m| m.1 == REALLOCATABLE_FEEDBACK));
}

#[test]
fn defbind_group_applies_to_bind_as_q_def_and_two_bind_options_are_refused() {
    let mut qm3 = three(DefaultBind::Group);
    let h = qm3.open(OpenOptions::OUTPUT).expect("open");
    for _ in 0..3 {
        qm3.put(h, msg_flags::MSG_IN_GROUP, true);
    }
    qm3.put(h, msg_flags::LAST_MSG_IN_GROUP, true);
    let sent = qm3.drain_sctq();
    assert!(sent.iter().all(|m| m.0 == sent[0].0), "{sent:?}");
    assert_eq!(
        qm3.open(OpenOptions::OUTPUT | OpenOptions::BIND_ON_OPEN | OpenOptions::BIND_ON_GROUP),
        Err(ReasonCode::OptionsError)
    );
    assert_eq!(
        qm3.open(OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED | OpenOptions::BIND_ON_OPEN),
        Err(ReasonCode::OptionsError)
    );
}

#[test]
fn not_fixed_messages_are_reallocatable_and_bound_ones_are_not() {
    let mut qm3 = three(DefaultBind::Open);
    let nf = qm3
        .open(OpenOptions::OUTPUT | OpenOptions::BIND_NOT_FIXED)
        .expect("open");
    qm3.put(nf, 0, false);
    let oo = qm3
        .open(OpenOptions::OUTPUT | OpenOptions::BIND_ON_OPEN)
        .expect("open");
    qm3.put(oo, 0, false);
    let sent = qm3.drain_sctq();
    assert_eq!(sent[0].1, REALLOCATABLE_FEEDBACK);
    assert_eq!(sent[1].1, 0, "bound at open: waits for its instance");

    // QM2's channel retries: its messages have QM1 to go to, and QM1's have nowhere
    // better while QM1 is fine.
    qm3.qm
        .set_cluster_channel_state("QM2", ChannelPreference::Retrying);
    let choice = qm3.qm.cluster_reallocate("APP.Q", "QM2").expect("QM1");
    assert_eq!(choice.qmgr, "QM1");
    assert_eq!(choice.channel.as_deref(), Some("TO.QM1"));
    assert!(qm3.qm.cluster_reallocate("APP.Q", "QM1").is_none());
}

#[test]
fn mqinq_of_a_cluster_queue_elsewhere_answers_what_the_cluster_tells() {
    use ferry_mqi::inquire::selector as sel;
    use ferry_mqi::InquireValue;
    let mut qm3 = three(DefaultBind::NotFixed);
    let h = qm3
        .open(OpenOptions::OUTPUT | OpenOptions::INQUIRE)
        .expect("open");
    let values = qm3
        .qm
        .inquire(
            qm3.conn,
            h,
            &[
                sel::Q_NAME,
                sel::Q_TYPE,
                sel::DEF_BIND,
                sel::INHIBIT_PUT,
                sel::CLUSTER_NAME,
            ],
        )
        .expect("inquire");
    assert_eq!(
        values,
        [
            InquireValue::Str("APP.Q".into()),
            InquireValue::Int(7),
            InquireValue::Int(1),
            InquireValue::Int(0),
            InquireValue::Str("DEMO".into()),
        ]
    );
    assert_eq!(
        qm3.qm
            .inquire(qm3.conn, h, &[sel::MAX_Q_DEPTH])
            .unwrap_err()
            .reason,
        ReasonCode::SelectorError
    );
}
