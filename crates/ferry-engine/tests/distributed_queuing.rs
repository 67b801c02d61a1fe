//! Distributed queuing in the engine: MQOPEN's name resolution (every row of MQ's table
//! and each reason code), what MQPUT and MQPUT1 leave on a transmission queue (its own
//! descriptor, the MQXQH with the application's descriptor and context, an MQMDE for a
//! grouped message), ReplyToQMgr and reply-to queue aliases, the receiving side's
//! MQPUT1 resolving here or onward, persistence across a restart, units of work, the
//! transmission queue's limits, and the shipped channel queues.

use bytes::Bytes;
use ferry_engine::{
    CatalogueChange, ConnId, ConnectionInfo, Effect, Effects, GotMessage, Hobj, Opened,
    QueueManager, Timestamp,
};
use ferry_mqi::descriptor::{msg_flags, persistence};
use ferry_mqi::transmission::{MD_EXTENSION_LEN, TRANSMISSION_HEADER_LEN};
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, MessageDescriptor, MqError, ObjectDescriptor,
    OpenOptions, PutOptionFlags, PutOptions, ReasonCode, TransmissionHeader, FORMAT_XMIT_Q_HEADER,
};
use ferry_objects::queue::{
    Enablement, Usage, YesNo, CHANNEL_INITIATION_QUEUE, CHANNEL_SYNC_QUEUE,
};
use ferry_objects::{QmgrAttributes, QueueAttributes, QueueDefinition, QueueType};

/// 2024-01-01T00:00:00Z.
const T0: u64 = 1_704_067_200_000;

/// One queue manager with a connection and an effects buffer.
struct Qm {
    qm: QueueManager,
    fx: Effects,
    conn: ConnId,
}

impl Qm {
    fn new(name: &str, user: &str) -> Self {
        let mut qm = QueueManager::new(name, QmgrAttributes::default(), Timestamp(T0));
        qm.define_system_objects(Timestamp(T0));
        let conn = connect(&mut qm, user);
        Qm {
            qm,
            fx: Effects::new(),
            conn,
        }
    }

    fn define(&mut self, name: &str, qt: QueueType, f: impl FnOnce(&mut QueueAttributes)) {
        let mut d = QueueDefinition::new(name, qt);
        f(&mut d.attributes);
        self.qm
            .define_queue(d, false, Timestamp(T0), &mut self.fx)
            .unwrap();
        self.fx.clear();
    }

    fn local(&mut self, name: &str) {
        self.define(name, QueueType::Local, |_| {});
    }

    fn xmitq(&mut self, name: &str) {
        self.define(name, QueueType::Local, |a| {
            a.usage = Usage::TransmissionQueue
        });
    }

    fn remote(&mut self, name: &str, rname: &str, rqm: &str, xmitq: &str) {
        self.define(name, QueueType::Remote, |a| {
            a.remote_name = rname.into();
            a.remote_qmgr_name = rqm.into();
            a.xmit_q = xmitq.into();
        });
    }

    fn set_default_xmit_q(&mut self, name: &str) {
        let mut attrs = self.qm.qmgr();
        attrs.default_xmit_q = name.into();
        self.qm.alter_qmgr(attrs, &mut self.fx).unwrap();
    }

    fn open_in(&mut self, qmgr: &str, q: &str, o: OpenOptions) -> Result<Opened, MqError> {
        let mut od = ObjectDescriptor::queue(q).unwrap();
        od.object_qmgr_name = FixedStr::new(qmgr).unwrap();
        self.qm.open(self.conn, &od, o, Timestamp(T0), &mut self.fx)
    }

    fn open(&mut self, q: &str, o: OpenOptions) -> Result<Opened, MqError> {
        self.open_in("", q, o)
    }

    fn reason(&mut self, qmgr: &str, q: &str, o: OpenOptions) -> ReasonCode {
        self.open_in(qmgr, q, o).unwrap_err().reason
    }

    fn put(
        &mut self,
        h: Hobj,
        md: &mut MessageDescriptor,
        o: PutOptionFlags,
        body: &[u8],
    ) -> Result<Option<ReasonCode>, MqError> {
        self.qm.put(
            self.conn,
            h,
            md,
            &PutOptions::new(o),
            Bytes::copy_from_slice(body),
            Timestamp(T0 + 10),
            &mut self.fx,
        )
    }

    fn put1(
        &mut self,
        qmgr: &str,
        q: &str,
        md: &mut MessageDescriptor,
        o: PutOptionFlags,
        body: &[u8],
    ) -> Result<Option<ReasonCode>, MqError> {
        let mut od = ObjectDescriptor::queue(q).unwrap();
        od.object_qmgr_name = FixedStr::new(qmgr).unwrap();
        self.qm.put1(
            self.conn,
            &od,
            md,
            &PutOptions::new(o),
            Bytes::copy_from_slice(body),
            Timestamp(T0 + 10),
            &mut self.fx,
        )
    }

    fn depth(&self, q: &str) -> u64 {
        self.qm
            .queue_status(q, Timestamp(T0 + 20))
            .unwrap()
            .current_depth
    }

    /// Gets the next message of `q` (no syncpoint).
    fn get(&mut self, q: &str) -> GotMessage {
        let h = self.open(q, OpenOptions::INPUT_SHARED).unwrap().hobj;
        let gmo = GetOptions {
            options: GetOptionFlags::NO_SYNCPOINT,
            ..GetOptions::default()
        };
        self.qm
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
            .expect("get finished")
            .expect("a message")
    }
}

fn connect(qm: &mut QueueManager, user: &str) -> ConnId {
    qm.connect(
        ConnectionInfo {
            application_name: "dq-test".into(),
            channel: String::new(),
            connection_name: String::new(),
            user_id: user.into(),
            pid: None,
        },
        Timestamp(T0),
        &mut Effects::new(),
    )
    .unwrap()
}

/// QM1 with a transmission queue to QM2, a remote definition, and the rest of what the
/// resolution table needs.
fn qm1() -> Qm {
    let mut q = Qm::new("QM1", "alice");
    q.xmitq("QM2");
    q.xmitq("X");
    q.local("PLAIN");
    q.define("AL", QueueType::Alias, |a| a.target = "PLAIN".into());
    q.remote("R", "APP.IN", "QM2", "");
    q
}

const OUT: OpenOptions = OpenOptions::OUTPUT;

#[test]
fn a_remote_definition_resolves_to_its_transmission_queue() {
    let mut q = qm1();
    q.remote("R.X", "APP.IN", "QM2", "X");
    q.remote("R.HERE", "PLAIN", "QM1", "");
    let opened = q.open("R", OUT).unwrap();
    assert_eq!(opened.object_name, "R");
    assert_eq!(opened.resolved_q_name, "APP.IN");
    assert_eq!(opened.resolved_qmgr_name, "QM2");
    let opened = q.open("R.X", OUT | OpenOptions::INQUIRE).unwrap();
    assert_eq!(
        (
            opened.resolved_q_name.as_str(),
            opened.resolved_qmgr_name.as_str()
        ),
        ("APP.IN", "QM2")
    );
    // MQINQ on a remote definition: its own attributes.
    use ferry_mqi::inquire::selector as sel;
    use ferry_mqi::InquireValue;
    let asked = [
        sel::Q_TYPE,
        sel::REMOTE_Q_NAME,
        sel::REMOTE_Q_MGR_NAME,
        sel::XMIT_Q_NAME,
    ];
    let values = q.qm.inquire(q.conn, opened.hobj, &asked).unwrap();
    assert_eq!(
        values,
        [
            InquireValue::Int(6),
            InquireValue::Str("APP.IN".into()),
            InquireValue::Str("QM2".into()),
            InquireValue::Str("X".into()),
        ]
    );
    // RQMNAME names this queue manager: RNAME is a queue here.
    let here = q.open("R.HERE", OUT).unwrap();
    assert_eq!(
        (
            here.resolved_q_name.as_str(),
            here.resolved_qmgr_name.as_str()
        ),
        ("PLAIN", "QM1")
    );
    let mut md = MessageDescriptor::default();
    q.put(here.hobj, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    assert_eq!(q.depth("PLAIN"), 1);
    assert_eq!(q.depth("QM2"), 0);
}

#[test]
fn remote_definitions_refuse_what_mq_refuses() {
    let mut q = qm1();
    q.xmitq("QM9.X");
    q.remote("R.MISSING", "APP", "QM2", "NOPE");
    q.remote("R.ALIAS", "APP", "QM2", "AL");
    q.remote("R.PLAIN", "APP", "QM2", "PLAIN");
    q.remote("R.BLANK", "APP", "", "");
    q.remote("R.NOROUTE", "APP", "QM9", "");
    q.remote("QM.ALIAS", "", "QM2", "");
    assert_eq!(q.reason("", "R.MISSING", OUT), ReasonCode::UnknownXmitQ);
    assert_eq!(q.reason("", "R.ALIAS", OUT), ReasonCode::XmitQTypeError);
    assert_eq!(q.reason("", "R.PLAIN", OUT), ReasonCode::XmitQUsageError);
    assert_eq!(q.reason("", "R.BLANK", OUT), ReasonCode::UnknownRemoteQMgr);
    assert_eq!(
        q.reason("", "R.NOROUTE", OUT),
        ReasonCode::UnknownRemoteQMgr
    );
    assert_eq!(q.reason("", "QM.ALIAS", OUT), ReasonCode::UnknownObjectName);
    assert_eq!(q.reason("", "NONE", OUT), ReasonCode::UnknownObjectName);
    for o in [
        OpenOptions::INPUT_SHARED,
        OpenOptions::INPUT_AS_Q_DEF,
        OpenOptions::BROWSE,
        OpenOptions::SET,
    ] {
        assert_eq!(q.reason("", "R", o), ReasonCode::OptionNotValidForType);
    }
    // DEFXMITQ routes a remote definition whose RQMNAME has no transmission queue.
    q.set_default_xmit_q("QM9.X");
    let opened = q.open("R.NOROUTE", OUT).unwrap();
    assert_eq!(opened.resolved_qmgr_name, "QM9");
}

#[test]
fn a_queue_manager_name_resolves_in_mqs_order() {
    let mut q = qm1();
    q.remote("QM3", "", "QM2", "");
    q.remote("QM3.VIA.X", "", "QM3", "X");
    q.remote("QM1.OLD", "", "QM1", "");
    // A transmission queue named like the queue manager.
    let o = q.open_in("QM2", "APP.IN", OUT).unwrap();
    assert_eq!(
        (o.resolved_q_name.as_str(), o.resolved_qmgr_name.as_str()),
        ("APP.IN", "QM2")
    );
    // A queue-manager alias renames the target and takes its route.
    let o = q.open_in("QM3", "APP.IN", OUT).unwrap();
    assert_eq!(o.resolved_qmgr_name, "QM2");
    let o = q.open_in("QM3.VIA.X", "APP.IN", OUT).unwrap();
    assert_eq!(o.resolved_qmgr_name, "QM3");
    // An alias of this queue manager: the queue here.
    let o = q.open_in("QM1.OLD", "PLAIN", OUT).unwrap();
    assert_eq!(
        (o.resolved_q_name.as_str(), o.resolved_qmgr_name.as_str()),
        ("PLAIN", "QM1")
    );
    // This queue manager's own name is as good as blank.
    let o = q
        .open_in("QM1", "PLAIN", OpenOptions::INPUT_SHARED)
        .unwrap();
    assert_eq!(o.resolved_qmgr_name, "QM1");
    // Only output reaches a queue named with another queue manager's name.
    for o in [
        OpenOptions::INPUT_SHARED,
        OpenOptions::BROWSE,
        OpenOptions::INQUIRE,
        OpenOptions::SET,
    ] {
        assert_eq!(
            q.reason("QM2", "APP.IN", o),
            ReasonCode::OptionNotValidForType
        );
        assert_eq!(
            q.reason("QM1.OLD", "PLAIN", o),
            ReasonCode::OptionNotValidForType
        );
    }
    assert_eq!(q.reason("PLAIN", "APP", OUT), ReasonCode::XmitQUsageError);
    assert_eq!(q.reason("AL", "APP", OUT), ReasonCode::XmitQTypeError);
    assert_eq!(q.reason("QM9", "APP", OUT), ReasonCode::UnknownRemoteQMgr);
    q.set_default_xmit_q("NOPE");
    assert_eq!(q.reason("QM9", "APP", OUT), ReasonCode::UnknownDefXmitQ);
    q.set_default_xmit_q("AL");
    assert_eq!(q.reason("QM9", "APP", OUT), ReasonCode::DefXmitQTypeError);
    q.set_default_xmit_q("PLAIN");
    assert_eq!(q.reason("QM9", "APP", OUT), ReasonCode::DefXmitQUsageError);
    q.set_default_xmit_q("X");
    let o = q.open_in("QM9", "APP", OUT).unwrap();
    assert_eq!(
        (o.resolved_q_name.as_str(), o.resolved_qmgr_name.as_str()),
        ("APP", "QM9")
    );
    // A known queue manager still goes its own way, not DEFXMITQ's.
    let h = q.open_in("QM2", "APP.IN", OUT).unwrap().hobj;
    let mut md = MessageDescriptor::default();
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"m")
        .unwrap();
    assert_eq!((q.depth("QM2"), q.depth("X")), (1, 0));
}

#[test]
fn the_transmission_queue_message_carries_the_header_and_its_own_descriptor() {
    let mut q = qm1();
    q.define("R.P", QueueType::Remote, |a| {
        a.remote_name = "APP.IN".into();
        a.remote_qmgr_name = "QM2".into();
        a.def_persistence = YesNo::Yes;
        a.def_priority = 7;
    });
    let h = q.open("R.P", OUT).unwrap().hobj;
    let mut md = MessageDescriptor {
        format: ferry_mqi::descriptor::format::STRING,
        expiry: 6000,
        correl_id: [5; 24],
        ..MessageDescriptor::default()
    };
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"hello")
        .unwrap();
    // The application's descriptor is completed as for a local put.
    assert_eq!(md.persistence, persistence::PERSISTENT, "DEFPSIST of R.P");
    assert_eq!(md.priority, 7, "DEFPRTY of R.P");
    assert_ne!(md.msg_id, [0; 24]);
    assert_eq!(q.depth("QM2"), 1);
    let got = q.get("QM2");
    let outer = got.md;
    assert_eq!(outer.format, FORMAT_XMIT_Q_HEADER);
    assert_eq!(outer.encoding, 546);
    assert_eq!(outer.ccsid, q.qm.qmgr().ccsid);
    assert_ne!(outer.msg_id, md.msg_id, "the queue manager's own MsgId");
    assert_eq!(outer.correl_id, [0; 24]);
    assert_eq!(outer.persistence, persistence::PERSISTENT);
    assert_eq!(outer.priority, 7);
    assert!(outer.expiry > 0 && outer.expiry <= 6000);
    let (header, used) = TransmissionHeader::decode(&got.data).unwrap();
    assert_eq!(used, TRANSMISSION_HEADER_LEN);
    assert_eq!(header.remote_q_name.as_str(), "APP.IN");
    assert_eq!(header.remote_qmgr_name.as_str(), "QM2");
    assert_eq!(header.md, md, "the application's descriptor, as completed");
    assert_eq!(header.md.user_identifier.as_str(), "alice");
    assert_eq!(header.md.put_appl_name.as_str(), "dq-test");
    assert!(!header.md.put_date.is_blank() && !header.md.put_time.is_blank());
    assert_eq!(header.md.correl_id, [5; 24]);
    assert_eq!(header.md.expiry, 6000);
    assert_eq!(&got.data[used..], b"hello");
}

#[test]
fn a_grouped_message_carries_an_extension() {
    let mut q = qm1();
    let h = q.open("R", OUT).unwrap().hobj;
    let mut md = MessageDescriptor {
        group_id: [9; 24],
        msg_seq_number: 1,
        msg_flags: msg_flags::MSG_IN_GROUP,
        ..MessageDescriptor::default()
    };
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"part")
        .unwrap();
    let got = q.get("QM2");
    assert_eq!(&got.data[104 + 32..104 + 40], b"MQHMDE  ");
    let (header, used) = TransmissionHeader::decode(&got.data).unwrap();
    assert_eq!(used, TRANSMISSION_HEADER_LEN + MD_EXTENSION_LEN);
    assert_eq!(header.md.group_id, [9; 24]);
    assert_eq!(header.md.msg_flags, msg_flags::MSG_IN_GROUP);
    assert_eq!(header.md.format, md.format);
    assert_eq!(&got.data[used..], b"part");
}

#[test]
fn reply_to_queue_manager_is_filled_as_mq_does() {
    let mut q = qm1();
    q.remote("MY.REPLY", "REAL.REPLY", "QM9", "");
    let h = q.open("PLAIN", OUT).unwrap().hobj;
    // A reply-to queue alias.
    let mut md = MessageDescriptor {
        reply_to_q: FixedStr::new("MY.REPLY").unwrap(),
        ..MessageDescriptor::default()
    };
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"a")
        .unwrap();
    assert_eq!(md.reply_to_q.as_str(), "REAL.REPLY");
    assert_eq!(md.reply_to_qmgr.as_str(), "QM9");
    assert_eq!(q.get("PLAIN").md.reply_to_qmgr.as_str(), "QM9");
    // Any other reply-to queue: this queue manager.
    let mut md = MessageDescriptor {
        reply_to_q: FixedStr::new("OTHER.REPLY").unwrap(),
        ..MessageDescriptor::default()
    };
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"b")
        .unwrap();
    assert_eq!(md.reply_to_qmgr.as_str(), "QM1");
    // A ReplyToQMgr given is kept.
    let mut md = MessageDescriptor {
        reply_to_q: FixedStr::new("MY.REPLY").unwrap(),
        reply_to_qmgr: FixedStr::new("QMX").unwrap(),
        ..MessageDescriptor::default()
    };
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"c")
        .unwrap();
    assert_eq!(
        (md.reply_to_q.as_str(), md.reply_to_qmgr.as_str()),
        ("MY.REPLY", "QMX")
    );
    // The same rule for a put to a remote queue, in the header's descriptor.
    let r = q.open("R", OUT).unwrap().hobj;
    let mut md = MessageDescriptor {
        reply_to_q: FixedStr::new("MY.REPLY").unwrap(),
        ..MessageDescriptor::default()
    };
    q.put(r, &mut md, PutOptionFlags::NO_SYNCPOINT, b"d")
        .unwrap();
    let (header, _) = TransmissionHeader::decode(&q.get("QM2").data).unwrap();
    assert_eq!(header.md.reply_to_q.as_str(), "REAL.REPLY");
    assert_eq!(header.md.reply_to_qmgr.as_str(), "QM9");
}

/// What QM1 sent towards QM2, decoded as QM2's receiving channel does.
fn sent_from_qm1(remote: &str, qmgr: &str, xmitq: &str) -> (TransmissionHeader, Vec<u8>) {
    let mut q1 = qm1();
    q1.xmitq("QM2.OLD");
    // QM3 is reached through QM2, as MQ documents it: the alias chooses the route, the
    // header keeps QM3.
    q1.remote("QM3", "", "QM3", "QM2");
    let h = q1.open_in(qmgr, remote, OUT).unwrap().hobj;
    let mut md = MessageDescriptor {
        reply_to_q: FixedStr::new("ANSWERS").unwrap(),
        ..MessageDescriptor::default()
    };
    q1.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"payload")
        .unwrap();
    let got = q1.get(xmitq);
    let (header, used) = TransmissionHeader::decode(&got.data).unwrap();
    (header, got.data[used..].to_vec())
}

/// QM2, whose channel agent connects as `mca`.
fn qm2() -> Qm {
    let mut q = Qm::new("QM2", "mca");
    q.local("APP.IN");
    q.xmitq("QM3");
    q.remote("QM2.OLD", "", "QM2", "");
    q
}

#[test]
fn the_receiving_side_puts_here_with_the_senders_context() {
    let (header, data) = sent_from_qm1("R", "", "QM2");
    let mut q2 = qm2();
    let mut md = header.md;
    q2.put1(
        header.remote_qmgr_name.as_str(),
        header.remote_q_name.as_str(),
        &mut md,
        PutOptionFlags::SET_ALL_CONTEXT | PutOptionFlags::NO_SYNCPOINT,
        &data,
    )
    .unwrap();
    let got = q2.get("APP.IN");
    assert_eq!(got.data, &b"payload"[..]);
    assert_eq!(got.md.msg_id, header.md.msg_id);
    assert_eq!(got.md.user_identifier.as_str(), "alice");
    assert_eq!(got.md.put_date, header.md.put_date);
    assert_eq!(got.md.reply_to_qmgr.as_str(), "QM1");

    // Sent to an old name of QM2 (a queue-manager alias of it): here too.
    let (header, data) = sent_from_qm1("APP.IN", "QM2.OLD", "QM2.OLD");
    assert_eq!(header.remote_qmgr_name.as_str(), "QM2.OLD");
    let mut md = header.md;
    q2.put1(
        header.remote_qmgr_name.as_str(),
        header.remote_q_name.as_str(),
        &mut md,
        PutOptionFlags::SET_ALL_CONTEXT | PutOptionFlags::NO_SYNCPOINT,
        &data,
    )
    .unwrap();
    assert_eq!(q2.get("APP.IN").md.msg_id, header.md.msg_id);
}

#[test]
fn the_receiving_side_sends_a_further_hop_onward() {
    let (header, data) = sent_from_qm1("FAR.Q", "QM3", "QM2");
    // QM1 addressed QM3 through QM2: the header names QM3.
    assert_eq!(header.remote_qmgr_name.as_str(), "QM3");
    let mut q2 = qm2();
    let mut md = header.md;
    q2.put1(
        header.remote_qmgr_name.as_str(),
        header.remote_q_name.as_str(),
        &mut md,
        PutOptionFlags::SET_ALL_CONTEXT | PutOptionFlags::NO_SYNCPOINT,
        &data,
    )
    .unwrap();
    assert_eq!(q2.depth("QM3"), 1);
    let got = q2.get("QM3");
    let (onward, used) = TransmissionHeader::decode(&got.data).unwrap();
    assert_eq!(onward.remote_q_name.as_str(), "FAR.Q");
    assert_eq!(onward.remote_qmgr_name.as_str(), "QM3");
    assert_eq!(onward.md.msg_id, header.md.msg_id);
    assert_eq!(onward.md.user_identifier.as_str(), "alice", "not the MCA's");
    assert_eq!(&got.data[used..], b"payload");
}

#[test]
fn a_persistent_message_for_a_remote_queue_survives_a_restart() {
    let mut q = qm1();
    q.qm.set_logging(true);
    let h = q.open("R", OUT).unwrap().hobj;
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"keep")
        .unwrap();
    let mut np = MessageDescriptor::default();
    q.put(h, &mut np, PutOptionFlags::NO_SYNCPOINT, b"lose")
        .unwrap();
    let log: Vec<_> = q.fx.drain_log().collect();
    assert_eq!(log.len(), 1, "only the persistent put is logged");
    let mut restarted = QueueManager::from_catalogue("QM1", q.qm.catalogue(), Timestamp(T0 + 100));
    let mut fx = Effects::new();
    restarted
        .recover(
            log.iter().map(|r| (r.kind, r.payload())),
            Timestamp(T0 + 100),
            &mut fx,
        )
        .unwrap();
    let conn = connect(&mut restarted, "alice");
    let mut q = Qm {
        qm: restarted,
        fx,
        conn,
    };
    assert_eq!(q.depth("QM2"), 1);
    let got = q.get("QM2");
    assert_eq!(got.md.format, FORMAT_XMIT_Q_HEADER);
    let (header, used) = TransmissionHeader::decode(&got.data).unwrap();
    assert_eq!(header.md.msg_id, md.msg_id);
    assert_eq!(header.remote_q_name.as_str(), "APP.IN");
    assert_eq!(&got.data[used..], b"keep");
}

#[test]
fn a_backed_out_put_leaves_the_transmission_queue_empty() {
    let mut q = qm1();
    let h = q.open("R", OUT).unwrap().hobj;
    let mut md = MessageDescriptor::default();
    q.put(h, &mut md, PutOptionFlags::SYNCPOINT, b"maybe")
        .unwrap();
    let status = q.qm.queue_status("QM2", Timestamp(T0 + 20)).unwrap();
    assert_eq!(status.uncommitted, 1);
    q.qm.backout(q.conn, Timestamp(T0 + 30), &mut q.fx).unwrap();
    assert_eq!(q.depth("QM2"), 0);
    // Committed, it is there.
    q.put(h, &mut md, PutOptionFlags::SYNCPOINT, b"sure")
        .unwrap();
    q.qm.commit(q.conn, Timestamp(T0 + 40), &mut q.fx).unwrap();
    assert_eq!(q.depth("QM2"), 1);
}

#[test]
fn the_transmission_queue_limits_apply() {
    let mut q = qm1();
    q.define("R.OFF", QueueType::Remote, |a| {
        a.remote_name = "APP".into();
        a.remote_qmgr_name = "QM2".into();
        a.put = Enablement::Disabled;
    });
    let off = q.open("R.OFF", OUT).unwrap().hobj;
    let mut md = MessageDescriptor::default();
    let err = q.put(off, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x");
    assert_eq!(err.unwrap_err().reason, ReasonCode::PutInhibited);

    q.define("SMALL", QueueType::Local, |a| {
        a.usage = Usage::TransmissionQueue;
        a.max_msg_length = TRANSMISSION_HEADER_LEN as i32 + 4;
        a.max_depth = 1;
    });
    q.remote("R.SMALL", "APP", "QM2", "SMALL");
    let h = q.open("R.SMALL", OUT).unwrap().hobj;
    let err = q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"12345");
    assert_eq!(
        err.unwrap_err().reason,
        ReasonCode::MsgTooBigForQ,
        "the header counts"
    );
    q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"1234")
        .unwrap();
    md.msg_id = [0; 24];
    let err = q.put(h, &mut md, PutOptionFlags::NO_SYNCPOINT, b"1");
    assert_eq!(err.unwrap_err().reason, ReasonCode::QFull);

    let mut attrs = q.qm.queue("SMALL").unwrap();
    attrs.attributes.put = Enablement::Disabled;
    q.qm.alter_queue(attrs, false, Timestamp(T0), &mut q.fx)
        .unwrap();
    let err = q.put1("", "R.SMALL", &mut md, PutOptionFlags::NO_SYNCPOINT, b"1");
    assert_eq!(err.unwrap_err().reason, ReasonCode::PutInhibited);
}

#[test]
fn every_queue_manager_has_the_channel_queues() {
    let q = Qm::new("QM1", "alice");
    let sync =
        q.qm.queue(CHANNEL_SYNC_QUEUE)
            .expect("SYSTEM.CHANNEL.SYNCQ");
    assert_eq!(sync.queue_type, QueueType::Local);
    assert_eq!(sync.attributes.def_persistence, YesNo::Yes);
    assert!(q.qm.queue(CHANNEL_INITIATION_QUEUE).is_some());

    // A queue manager from before distributed queuing gets them at its first start.
    let mut old = q.qm.catalogue();
    old.queues
        .retain(|d| d.name != CHANNEL_SYNC_QUEUE && d.name != CHANNEL_INITIATION_QUEUE);
    let mut qm = QueueManager::from_catalogue("QM1", old, Timestamp(T0));
    let mut fx = Effects::new();
    qm.recover(std::iter::empty::<(u8, Vec<u8>)>(), Timestamp(T0), &mut fx)
        .unwrap();
    let changed: Vec<_> = fx
        .drain()
        .filter_map(|e| match e {
            Effect::CatalogueChanged(CatalogueChange::Queue(n)) => Some(n),
            _ => None,
        })
        .collect();
    assert_eq!(changed, [CHANNEL_SYNC_QUEUE, CHANNEL_INITIATION_QUEUE]);
    assert!(qm.queue(CHANNEL_SYNC_QUEUE).is_some());
    // Once: the next start adds nothing.
    let mut again = QueueManager::from_catalogue("QM1", qm.catalogue(), Timestamp(T0));
    let mut fx = Effects::new();
    again
        .recover(std::iter::empty::<(u8, Vec<u8>)>(), Timestamp(T0), &mut fx)
        .unwrap();
    assert_eq!(fx.drain().count(), 0);
}
