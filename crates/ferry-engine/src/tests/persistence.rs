//! Persistence: log records as effects, the record codec, restart recovery and
//! checkpoint images, with a crash-point property test against a model.

use super::*;
use crate::journal::{kind, LoggedMessage, Record};
use crate::LogRecord;
use ferry_mqi::descriptor::persistence;
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub(super) type View = BTreeMap<String, Vec<LoggedMessage>>;

pub(super) fn logging_harness(queues: &[&str]) -> Harness {
    let mut h = Harness::new();
    for q in queues {
        h.local(q);
    }
    h.qm.set_logging(true);
    h
}

pub(super) fn pmd() -> MessageDescriptor {
    MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    }
}

pub(super) fn put_p(
    h: &mut Harness,
    c: ConnId,
    o: Hobj,
    sync: bool,
    body: &[u8],
) -> MessageDescriptor {
    let mut md = pmd();
    let f = if sync {
        PutOptionFlags::SYNCPOINT
    } else {
        PutOptionFlags::NO_SYNCPOINT
    };
    h.put_md(c, o, &mut md, f, body).unwrap();
    md
}

pub(super) fn take_log(h: &mut Harness) -> Vec<LogRecord> {
    h.fx.drain_log().collect()
}

/// A fresh engine from `h`'s catalogue, recovered from `records` (no queue files).
pub(super) fn restart<'a>(
    h: &Harness,
    records: impl IntoIterator<Item = &'a LogRecord>,
) -> (QueueManager, Effects) {
    restart_from(h, &Files::new(), records)
}

/// A queue file record in the model: the message as it was filed.
#[derive(Debug)]
pub(super) struct FileRecord(LoggedMessage);

impl FileRecord {
    pub(super) fn of(m: &LoggedMessage) -> std::rc::Rc<dyn crate::FiledRecord> {
        std::rc::Rc::new(FileRecord(m.clone()))
    }
}

impl crate::FiledRecord for FileRecord {
    fn read_body(&self) -> Result<bytes::Bytes, ReasonCode> {
        Ok(self.0.body.clone())
    }
}

/// Reports `plan`'s filings to `qm` as the server does once they are synced, so bodies
/// over the buffer are left in the (model's) files.
pub(super) fn report_filed(qm: &mut QueueManager, plan: &crate::CheckpointPlan) {
    for f in &plan.queues {
        let filed: Vec<crate::FiledBody> = f
            .file
            .iter()
            .map(|m| crate::FiledBody::new(m, FileRecord::of(m)))
            .collect();
        qm.bodies_filed(&f.queue, &filed);
    }
    qm.check_invariants();
}

/// Queue files as the server keeps them: per queue, sequence number -> message.
pub(super) type Files = BTreeMap<String, BTreeMap<u64, LoggedMessage>>;

/// Applies `ops` filing operations of `plan` to `files` in the order the server does
/// (per queue: empty a fresh file, remove, write), at most `limit` per queue (a crash
/// part-way through). Files of queues the plan does not name are removed.
pub(super) fn apply_filings(files: &mut Files, plan: &crate::CheckpointPlan, limit: usize) {
    files.retain(|q, _| plan.queues.iter().any(|f| &f.queue == q));
    for f in &plan.queues {
        let mut budget = limit;
        let file = files.entry(f.queue.clone()).or_default();
        if f.fresh {
            if budget == 0 {
                continue;
            }
            budget -= 1;
            file.clear();
        }
        for seq in &f.unfile {
            if budget == 0 {
                break;
            }
            budget -= 1;
            file.remove(seq);
        }
        for m in &f.file {
            if budget == 0 {
                break;
            }
            budget -= 1;
            file.insert(m.seq, m.clone());
        }
    }
}

/// Takes a checkpoint of `qm` as the server does: files its plan into `files` and
/// returns the image to append to the log.
pub(super) fn checkpoint(qm: &mut QueueManager, files: &mut Files) -> Vec<LogRecord> {
    let plan = qm.checkpoint_plan(crate::Young::InImage).expect("plan");
    qm.checkpoint_taken(&plan);
    apply_filings(files, &plan, usize::MAX);
    plan.image
}

/// A fresh engine from `h`'s catalogue, restored from `files`, then recovered from
/// `records` (the log from the restart point).
pub(super) fn restart_from<'a>(
    h: &Harness,
    files: &Files,
    records: impl IntoIterator<Item = &'a LogRecord>,
) -> (QueueManager, Effects) {
    let mut qm = QueueManager::from_catalogue("QM1", h.qm.catalogue(), Timestamp(h.now + 1));
    // Every restored body but the first of each queue stays "in the file".
    qm.set_buffer_sizes(crate::BufferSizes {
        persistent: 1,
        ..crate::BufferSizes::default()
    });
    for (q, msgs) in files {
        let restored = msgs.values().map(|m| (m.clone(), Some(FileRecord::of(m))));
        assert!(qm.restore_filed(q, restored), "queue {q}");
        qm.check_invariants();
    }
    let mut fx = Effects::new();
    qm.recover(
        records.into_iter().map(|r| (r.kind, r.payload())),
        Timestamp(h.now + 1),
        &mut fx,
    )
    .expect("recovery");
    (qm, fx)
}

pub(super) fn view_of(qm: &QueueManager) -> View {
    qm.restart_view()
}

#[test]
fn every_record_kind_round_trips() {
    let mut md = pmd();
    md.msg_id = id(1);
    md.correl_id = id(2);
    md.priority = 7;
    md.expiry = 1234;
    md.backout_count = 3;
    md.reply_to_q = ferry_mqi::FixedStr::truncating("REPLY.Q");
    md.accounting_token[5] = 9;
    md.group_id[0] = 4;
    md.original_length = -1;
    let msg = LoggedMessage {
        rank: 2,
        seq: 77,
        put_ms: T0,
        expires_at: Some(T0 + 123_400),
        md,
        body: Bytes::from_static(b"hello"),
        properties: Bytes::from_static(b"\x01\x01\x00a\x00"),
    };
    let q = "Q.ONE".to_string();
    let records = [
        Record::Put {
            uow: None,
            queue: q.clone(),
            msg: msg.clone(),
        },
        Record::Put {
            uow: Some(u64::MAX - 1),
            queue: q.clone(),
            msg: LoggedMessage {
                expires_at: None,
                body: Bytes::new(),
                ..msg.clone()
            },
        },
        Record::Get {
            uow: None,
            queue: q.clone(),
            seq: 5,
        },
        Record::Get {
            uow: Some(9),
            queue: q.clone(),
            seq: 6,
        },
        Record::Commit { uow: 9 },
        Record::Backout { uow: 10 },
        Record::ClearQueue { queue: q.clone() },
        Record::DeleteQueue { queue: q.clone() },
        Record::DefineQueue { queue: q.clone() },
        Record::BackoutCount {
            queue: q.clone(),
            seq: 77,
            count: 4,
        },
        Record::Put {
            uow: None,
            queue: q,
            msg: LoggedMessage {
                properties: Bytes::new(),
                ..msg
            },
        },
    ];
    let mut kinds = BTreeSet::new();
    for r in records {
        let enc = r.encode();
        kinds.insert(enc.kind);
        assert_eq!(enc.payload()[0], crate::journal::FORMAT_VERSION);
        assert_eq!(
            Record::decode(enc.kind, &enc.payload()),
            Ok(r.clone()),
            "{r}"
        );
        // Every strict prefix and any extra byte is refused.
        let p = enc.payload();
        for n in 0..p.len() {
            assert!(Record::decode(enc.kind, &p[..n]).is_err());
        }
        let mut longer = p.clone();
        longer.push(0);
        assert!(Record::decode(enc.kind, &longer).is_err());
    }
    assert_eq!(kinds.len(), 8);
    assert!(Record::decode(15, &[1]).is_err());
    assert!(Record::decode(24, &[2]).is_err());
    assert!(Record::decode(kind::COMMIT, &[3, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    assert!(Record::decode(kind::COMMIT, &[0, 0, 0, 0, 0, 0, 0, 0, 0]).is_err());
    // Kind 23 exists only from version 2.
    let mut v1 = Record::BackoutCount {
        queue: "Q".into(),
        seq: 1,
        count: 1,
    }
    .encode()
    .payload();
    v1[0] = 1;
    assert!(Record::decode(kind::BACKOUT_COUNT, &v1).is_err());
}

proptest! {
    #[test]
    fn decoder_never_panics(kind in 14u8..26, bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        let _ = Record::decode(kind, &bytes);
        let mut v = vec![crate::journal::FORMAT_VERSION];
        v.extend_from_slice(&bytes);
        let _ = Record::decode(kind, &v);
    }
}

#[test]
fn non_persistent_work_logs_nothing_and_is_gone_after_restart() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"np1");
    let mut md = MessageDescriptor::default();
    h.put_md(c, o, &mut md, PutOptionFlags::SYNCPOINT, b"np2")
        .unwrap();
    let t = h.t();
    h.qm.commit(c, t, &mut h.fx).unwrap();
    h.get_body(c, o).unwrap();
    assert!(h.fx.log_records().is_empty());
    assert!(!h.fx.reply_needs_durable());
    let (qm, _) = restart(&h, &[]);
    assert!(view_of(&qm).is_empty());
    assert_eq!(
        qm.queue_status("Q", Timestamp(h.now))
            .unwrap()
            .current_depth,
        0
    );
}

#[test]
fn logging_off_by_default() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"p");
    assert!(h.fx.log_records().is_empty());
}

#[test]
fn implicit_syncpoint_put_is_one_record_and_waits() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let md = put_p(&mut h, c, o, false, b"p");
    assert!(h.fx.reply_needs_durable());
    let log = take_log(&mut h);
    assert!(!h.fx.reply_needs_durable(), "drain resets the flag");
    assert_eq!(log.len(), 1);
    match log[0].decode().unwrap() {
        Record::Put {
            uow: None,
            queue,
            msg,
        } => {
            assert_eq!(queue, "Q");
            assert_eq!(msg.md, md);
            assert_eq!(&msg.body[..], b"p");
        }
        other => panic!("{other:?}"),
    }
    // The get outside syncpoint is one record too, and waits.
    h.get_body(c, o).unwrap();
    assert!(h.fx.reply_needs_durable());
    let log2 = take_log(&mut h);
    assert!(matches!(
        log2[0].decode().unwrap(),
        Record::Get {
            uow: None,
            seq: 0,
            ..
        }
    ));
    let all: Vec<_> = log.iter().chain(&log2).collect();
    let (qm, _) = restart(&h, all);
    assert!(view_of(&qm).is_empty());
}

#[test]
fn syncpoint_records_carry_the_unit_of_work_and_only_the_commit_waits() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, true, b"a");
    put_p(&mut h, c, o, true, b"b");
    assert!(!h.fx.reply_needs_durable());
    let mut log = take_log(&mut h);
    let uows: BTreeSet<_> = log
        .iter()
        .map(|r| match r.decode().unwrap() {
            Record::Put { uow: Some(u), .. } => u,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(uows.len(), 1);
    let u = *uows.iter().next().unwrap();
    // Before the commit is logged a restart finds nothing.
    let (qm, fx) = restart(&h, &log);
    assert!(view_of(&qm).is_empty());
    assert_eq!(
        fx.log_records().len(),
        1,
        "recovery logs the backout it did"
    );
    let t = h.t();
    h.qm.commit(c, t, &mut h.fx).unwrap();
    assert!(h.fx.reply_needs_durable());
    let commit = take_log(&mut h);
    assert_eq!(commit[0].decode().unwrap(), Record::Commit { uow: u });
    log.extend(commit);
    let (qm, _) = restart(&h, &log);
    assert_eq!(view_of(&qm), view_of(&h.qm));
    assert_eq!(view_of(&qm)["Q"].len(), 2);
    // A second unit of work gets a new id.
    put_p(&mut h, c, o, true, b"c");
    match take_log(&mut h)[0].decode().unwrap() {
        Record::Put { uow: Some(u2), .. } => assert_ne!(u2, u),
        other => panic!("{other:?}"),
    }
}

#[test]
fn backout_count_survives_a_restart() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    put_p(&mut h, c, o, false, b"poison");
    let mut log = take_log(&mut h);
    for round in 1..=2 {
        let g = h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
        assert_eq!(g.md.backout_count, round - 1);
        assert!(
            !h.fx.reply_needs_durable(),
            "a syncpoint get answers at once"
        );
        let t = h.t();
        h.qm.backout(c, t, &mut h.fx).unwrap();
        assert!(h.fx.reply_needs_durable(), "MQBACK waits for its record");
        log.extend(take_log(&mut h));
    }
    let (mut qm, _) = restart(&h, &log);
    assert_eq!(view_of(&qm), view_of(&h.qm));
    assert_eq!(view_of(&qm)["Q"][0].md.backout_count, 2);
    // And on the restarted queue manager a get sees it.
    let mut fx = Effects::new();
    let c2 = qm
        .connect(
            ConnectionInfo::default(),
            Timestamp(h.now),
            &mut Effects::new(),
        )
        .unwrap();
    let o2 = qm
        .open(
            c2,
            &ObjectDescriptor::queue("Q").unwrap(),
            IO,
            Timestamp(h.now),
            &mut fx,
        )
        .unwrap()
        .hobj;
    let g = qm
        .get(
            c2,
            o2,
            &MessageDescriptor::default(),
            &GetOptions::default(),
            100,
            Timestamp(h.now),
            &mut fx,
        )
        .done()
        .unwrap()
        .unwrap();
    assert_eq!(g.md.backout_count, 2);
    assert_eq!(&g.data[..], b"poison");
}

#[test]
fn in_flight_get_at_the_crash_comes_back_counted_and_in_place() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    for b in [b"1", b"2", b"3"] {
        put_p(&mut h, c, o, false, b);
    }
    let g = h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    assert_eq!(&g.data[..], b"1");
    let log = take_log(&mut h);
    let (qm, fx) = restart(&h, &log);
    let v = view_of(&qm);
    let bodies: Vec<_> = v["Q"].iter().map(|m| m.body.to_vec()).collect();
    assert_eq!(bodies, [b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]);
    assert_eq!(v["Q"][0].md.backout_count, 1);
    assert_eq!(v, view_of(&h.qm));
    // The backout recovery did is logged: a second restart reads the same state.
    let again: Vec<_> = log.iter().chain(fx.log_records()).collect();
    let (qm2, fx2) = restart(&h, again);
    assert_eq!(view_of(&qm2), v);
    assert!(fx2.log_records().is_empty());
}

#[test]
fn waiter_completion_is_logged_before_it_and_waits() {
    let mut h = logging_harness(&["Q"]);
    let a = h.conn();
    let b = h.conn();
    let oa = h.open(a, "Q", IO);
    let ob = h.open(b, "Q", IO);
    let w = h.get_with(
        b,
        ob,
        &MessageDescriptor::default(),
        GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
        -1,
        100,
    );
    assert_eq!(w, GetOutcome::Waiting);
    put_p(&mut h, a, oa, false, b"x");
    let log = take_log(&mut h);
    let kinds: Vec<_> = log.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [kind::PUT, kind::GET]);
    match h.fx.as_slice() {
        [Effect::GetCompleted {
            conn,
            needs_durable,
            result: Ok(_),
            ..
        }] => {
            assert_eq!(*conn, b);
            assert!(*needs_durable);
        }
        other => panic!("{other:?}"),
    }
    let (qm, _) = restart(&h, &log);
    assert!(view_of(&qm).is_empty());
}

#[test]
fn deleted_and_cleared_queues_stay_that_way() {
    let mut h = logging_harness(&["A", "B"]);
    let c = h.conn();
    let oa = h.open(c, "A", IO);
    let ob = h.open(c, "B", IO);
    put_p(&mut h, c, oa, false, b"a");
    put_p(&mut h, c, ob, false, b"b");
    let t = h.t();
    h.qm.close(c, oa, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    h.qm.close(c, ob, ferry_mqi::CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    let cat_before = h.qm.catalogue();
    h.qm.delete_queue("A", true, t, &mut h.fx).unwrap();
    assert!(h.fx.reply_needs_durable());
    assert_eq!(h.qm.clear_queue_logged("B", &mut h.fx), Ok(1));
    let log = take_log(&mut h);
    let kinds: Vec<_> = log
        .iter()
        .map(|r| r.kind)
        .filter(|k| *k == kind::DELETE_QUEUE || *k == kind::CLEAR_QUEUE)
        .collect();
    assert_eq!(kinds, [kind::DELETE_QUEUE, kind::CLEAR_QUEUE]);
    // A stale catalogue that still names A: the log's deletion wins.
    let mut qm = QueueManager::from_catalogue("QM1", cat_before, Timestamp(h.now));
    let mut fx = Effects::new();
    let s = qm
        .recover(
            log.iter().map(|r| (r.kind, r.payload())),
            Timestamp(h.now),
            &mut fx,
        )
        .unwrap();
    assert_eq!(s.deleted_queues, ["A"]);
    assert!(qm.queue("A").is_none());
    assert!(view_of(&qm).is_empty());
    assert!(fx.as_slice().iter().any(
        |e| matches!(e, Effect::CatalogueChanged(crate::CatalogueChange::Queue(n)) if n == "A")
    ));
    // Defined again later: it exists, empty.
    h.qm.define_queue(
        ferry_objects::QueueDefinition::new("A", ferry_objects::QueueType::Local),
        false,
        t,
        &mut h.fx,
    )
    .unwrap();
    let redefine = take_log(&mut h);
    let all: Vec<_> = log.iter().chain(&redefine).collect();
    let mut qm = QueueManager::from_catalogue("QM1", h.qm.catalogue(), Timestamp(h.now));
    qm.recover(
        all.iter().map(|r| (r.kind, r.payload())),
        Timestamp(h.now),
        &mut fx,
    )
    .unwrap();
    assert!(qm.queue("A").is_some());
}

#[test]
fn ids_after_restart_do_not_repeat_recovered_ones() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut ids = BTreeSet::new();
    for _ in 0..50 {
        ids.insert(put_p(&mut h, c, o, false, b"m").msg_id);
    }
    let log = take_log(&mut h);
    // Restart "earlier" than the ids' sequence (a fast putter runs ahead of the clock).
    let mut qm = QueueManager::from_catalogue("QM1", h.qm.catalogue(), Timestamp(T0 - 1));
    let mut fx = Effects::new();
    qm.recover(
        log.iter().map(|r| (r.kind, r.payload())),
        Timestamp(T0),
        &mut fx,
    )
    .unwrap();
    qm.set_logging(true);
    let c2 = qm
        .connect(
            ConnectionInfo::default(),
            Timestamp(T0),
            &mut Effects::new(),
        )
        .unwrap();
    let o2 = qm
        .open(
            c2,
            &ObjectDescriptor::queue("Q").unwrap(),
            IO,
            Timestamp(T0),
            &mut fx,
        )
        .unwrap()
        .hobj;
    let mut md = pmd();
    qm.put(
        c2,
        o2,
        &mut md,
        &PutOptions::new(PutOptionFlags::NO_SYNCPOINT),
        Bytes::from_static(b"new"),
        Timestamp(T0),
        &mut fx,
    )
    .unwrap();
    assert!(!ids.contains(&md.msg_id));
    // The new message numbers after the recovered ones.
    let v = view_of(&qm);
    assert_eq!(v["Q"].len(), 51);
    assert_eq!(&v["Q"][50].body[..], b"new");
}

#[test]
fn expired_messages_are_dropped_at_restart() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    let mut md = pmd();
    md.expiry = 10; // one second
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"short")
        .unwrap();
    put_p(&mut h, c, o, false, b"long");
    let log = take_log(&mut h);
    let mut qm = QueueManager::from_catalogue("QM1", h.qm.catalogue(), Timestamp(h.now));
    let s = qm
        .recover(
            log.iter().map(|r| (r.kind, r.payload())),
            Timestamp(h.now + 5_000),
            &mut Effects::new(),
        )
        .unwrap();
    assert_eq!(s.expired, 1);
    assert_eq!(s.messages, 1);
}

#[test]
fn corrupt_record_stops_recovery() {
    let h = logging_harness(&["Q"]);
    let mut qm = QueueManager::from_catalogue("QM1", h.qm.catalogue(), Timestamp(h.now));
    let e = qm
        .recover(
            [(kind::PUT, vec![1u8, 7])],
            Timestamp(h.now),
            &mut Effects::new(),
        )
        .unwrap_err();
    assert_eq!(e.index, 0);
}

// ---------------------------------------------------------------------------------------
// Property: crash anywhere, restart, compare with the live engine and with a model.

const CONNS: usize = 3;
const QUEUES: [&str; 3] = ["P.A", "P.B", "P.C"];

#[derive(Clone, Debug)]
enum Op {
    Put {
        c: usize,
        q: usize,
        sync: bool,
        persistent: bool,
        prio: i32,
    },
    Get {
        c: usize,
        q: usize,
        sync: bool,
        wait: bool,
    },
    Commit {
        c: usize,
    },
    Backout {
        c: usize,
    },
    Reconnect {
        c: usize,
        normal: bool,
    },
    Checkpoint {
        young_in_image: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0..CONNS, 0..QUEUES.len(), any::<bool>(), prop::bool::weighted(0.7), 0..10i32)
            .prop_map(|(c, q, sync, persistent, prio)| Op::Put { c, q, sync, persistent, prio }),
        4 => (0..CONNS, 0..QUEUES.len(), any::<bool>(), prop::bool::weighted(0.2))
            .prop_map(|(c, q, sync, wait)| Op::Get { c, q, sync, wait }),
        2 => (0..CONNS).prop_map(|c| Op::Commit { c }),
        1 => (0..CONNS).prop_map(|c| Op::Backout { c }),
        1 => (0..CONNS, any::<bool>()).prop_map(|(c, normal)| Op::Reconnect { c, normal }),
        1 => prop::bool::weighted(0.7).prop_map(|young_in_image| Op::Checkpoint { young_in_image }),
    ]
}

/// What the applications were told: acknowledged persistent puts and gets (by MsgId),
/// and each connection's unacknowledged syncpoint work.
#[derive(Default, Clone)]
struct Acks {
    puts: BTreeSet<[u8; 24]>,
    gets: BTreeSet<[u8; 24]>,
    uow_puts: [Vec<[u8; 24]>; CONNS],
    uow_gets: [Vec<[u8; 24]>; CONNS],
}

impl Acks {
    fn commit(&mut self, c: usize) {
        self.puts.extend(self.uow_puts[c].drain(..));
        self.gets.extend(self.uow_gets[c].drain(..));
    }
    fn backout(&mut self, c: usize) {
        self.uow_puts[c].clear();
        self.uow_gets[c].clear();
    }
    /// Messages a restart must find.
    fn expected(&self) -> BTreeSet<[u8; 24]> {
        self.puts.difference(&self.gets).copied().collect()
    }
}

struct World {
    h: Harness,
    conns: Vec<ConnId>,
    handles: Vec<[Hobj; 3]>,
    /// For a waiting get: was it under syncpoint.
    waiting: HashMap<ConnId, bool>,
    acks: Acks,
    log: Vec<LogRecord>,
    /// The queue files as the checkpoints so far left them.
    files: Files,
    /// Per checkpoint: where its image starts in the log, the files before its filings,
    /// and its plan.
    checkpoints: Vec<(usize, Files, crate::CheckpointPlan)>,
}

impl World {
    fn new() -> Self {
        let mut h = logging_harness(&QUEUES);
        h.qm.set_buffer_sizes(crate::BufferSizes {
            persistent: 1,
            non_persistent: 1,
        });
        let mut w = World {
            h,
            conns: Vec::new(),
            handles: Vec::new(),
            waiting: HashMap::new(),
            acks: Acks::default(),
            log: Vec::new(),
            files: Files::new(),
            checkpoints: Vec::new(),
        };
        for _ in 0..CONNS {
            let (c, hs) = w.connect();
            w.conns.push(c);
            w.handles.push(hs);
        }
        w.drain();
        w
    }

    fn connect(&mut self) -> (ConnId, [Hobj; 3]) {
        let c = self.h.conn();
        let hs = QUEUES.map(|q| self.h.open(c, q, IO));
        (c, hs)
    }

    fn idx(&self, conn: ConnId) -> usize {
        self.conns
            .iter()
            .position(|c| *c == conn)
            .expect("known conn")
    }

    /// Moves the call's records to the log and settles completions against the model.
    fn drain(&mut self) {
        self.log.extend(self.h.fx.drain_log());
        let fx: Vec<Effect> = self.h.fx.drain().collect();
        for e in fx {
            if let Effect::GetCompleted {
                conn,
                result,
                needs_durable,
                ..
            } = e
            {
                let sync = self.waiting.remove(&conn).expect("was waiting");
                if let Ok(g) = result {
                    if g.md.is_persistent() {
                        assert!(needs_durable, "persistent delivery follows its record");
                        let c = self.idx(conn);
                        if sync {
                            self.acks.uow_gets[c].push(g.md.msg_id);
                        } else {
                            self.acks.gets.insert(g.md.msg_id);
                        }
                    }
                }
            }
        }
    }

    fn step(&mut self, op: &Op) {
        let t = self.h.t();
        match *op {
            Op::Put {
                c,
                q,
                sync,
                persistent,
                prio,
            } => {
                let mut md = MessageDescriptor {
                    persistence: if persistent {
                        persistence::PERSISTENT
                    } else {
                        persistence::NOT_PERSISTENT
                    },
                    priority: prio,
                    ..MessageDescriptor::default()
                };
                let f = if sync {
                    PutOptionFlags::SYNCPOINT
                } else {
                    PutOptionFlags::NO_SYNCPOINT
                };
                let (conn, h) = (self.conns[c], self.handles[c][q]);
                let body = prio.to_le_bytes();
                if self.h.put_md(conn, h, &mut md, f, &body).is_ok() && persistent {
                    assert_eq!(self.h.fx.reply_needs_durable(), !sync);
                    if sync {
                        self.acks.uow_puts[c].push(md.msg_id);
                    } else {
                        self.acks.puts.insert(md.msg_id);
                    }
                }
            }
            Op::Get { c, q, sync, wait } => {
                let (conn, h) = (self.conns[c], self.handles[c][q]);
                let mut o = if sync {
                    GetOptionFlags::SYNCPOINT
                } else {
                    GetOptionFlags::NO_SYNCPOINT
                };
                if wait {
                    o |= GetOptionFlags::WAIT;
                }
                match self
                    .h
                    .get_with(conn, h, &MessageDescriptor::default(), o, -1, 1 << 10)
                {
                    GetOutcome::Waiting => {
                        self.waiting.insert(conn, sync);
                    }
                    GetOutcome::Done(Ok(g)) if g.md.is_persistent() => {
                        assert_eq!(self.h.fx.reply_needs_durable(), !sync);
                        if sync {
                            self.acks.uow_gets[c].push(g.md.msg_id);
                        } else {
                            self.acks.gets.insert(g.md.msg_id);
                        }
                    }
                    GetOutcome::Done(_) => {}
                }
            }
            Op::Commit { c } => {
                if self.h.qm.commit(self.conns[c], t, &mut self.h.fx).is_ok() {
                    self.acks.commit(c);
                }
            }
            Op::Backout { c } => {
                if self.h.qm.backout(self.conns[c], t, &mut self.h.fx).is_ok() {
                    self.acks.backout(c);
                }
            }
            Op::Reconnect { c, normal } => {
                let conn = self.conns[c];
                self.waiting.remove(&conn);
                self.h.qm.disconnect(conn, normal, t, &mut self.h.fx);
                if normal {
                    self.acks.commit(c);
                } else {
                    self.acks.backout(c);
                }
                // Settle what the disconnect released before the slot is reused.
                self.drain();
                let (nc, hs) = self.connect();
                self.conns[c] = nc;
                self.handles[c] = hs;
            }
            Op::Checkpoint { young_in_image } => {
                // As the server does: image appended, then the filings applied.
                let young = if young_in_image {
                    crate::Young::InImage
                } else {
                    crate::Young::InQueueFiles
                };
                let plan = self.h.qm.checkpoint_plan(young).expect("plan");
                self.h.qm.checkpoint_taken(&plan);
                let before = self.files.clone();
                apply_filings(&mut self.files, &plan, usize::MAX);
                // Every filed body leaves memory (a buffer of one byte): later gets,
                // browses, backouts and checkpoints read them back.
                report_filed(&mut self.h.qm, &plan);
                // And every non-persistent body over a one-byte buffer spills.
                let spill = self.h.qm.spill_plan();
                for f in &spill {
                    let written: Vec<crate::FiledBody> = f
                        .file
                        .iter()
                        .map(|m| crate::FiledBody::new(m, FileRecord::of(m)))
                        .collect();
                    self.h.qm.bodies_spilled(&f.queue, &written);
                }
                self.checkpoints
                    .push((self.log.len(), before, plan.clone()));
                self.log.extend(plan.image);
            }
        }
        self.drain();
        self.h.qm.check_invariants();
        self.h.now += 1;
    }
}

fn ids(v: &View) -> Vec<[u8; 24]> {
    v.values().flatten().map(|m| m.md.msg_id).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn crash_anywhere_recovers_what_was_acknowledged(ops in proptest::collection::vec(op(), 1..70)) {
        let mut w = World::new();
        // Per call boundary: log length, the live restart view, the acknowledged set.
        let mut bounds = vec![(0usize, View::new(), BTreeSet::new())];
        let mut at_checkpoint = Vec::new();
        for op in &ops {
            if matches!(op, Op::Checkpoint { .. }) {
                at_checkpoint.push(bounds.len());
            }
            w.step(op);
            bounds.push((w.log.len(), view_of(&w.h.qm), w.acks.expected()));
        }
        // Crash at every call boundary: every acknowledged reply was released after its
        // records were durable, so the whole prefix is on disk.
        for (k, (end, live, expected)) in bounds.iter().enumerate() {
            let (qm, _) = restart(&w.h, &w.log[..*end]);
            let got = view_of(&qm);
            prop_assert_eq!(&got, live, "boundary {}", k);
            let found: BTreeSet<_> = ids(&got).into_iter().collect();
            prop_assert_eq!(found.len(), ids(&got).len(), "no duplicates");
            prop_assert_eq!(&found, expected, "acknowledged state at boundary {}", k);
        }
        // Crash inside a call's records (its replies were not released): recovery works,
        // nothing is duplicated, what was acknowledged both before and after the call is
        // there, and nothing appears that was never put.
        for k in 1..bounds.len() {
            let (start, before, exp_before) = &bounds[k - 1];
            let (end, after, exp_after) = &bounds[k];
            let put_so_far: BTreeSet<_> = w.log[..*end]
                .iter()
                .filter_map(|r| match r.decode() {
                    Ok(Record::Put { msg, .. }) => Some(msg.md.msg_id),
                    _ => None,
                })
                .collect();
            let known: BTreeSet<_> = ids(before)
                .into_iter()
                .chain(ids(after))
                .chain(put_so_far)
                .collect();
            let kept: BTreeSet<_> = exp_before.intersection(exp_after).copied().collect();
            for cut in *start + 1..*end {
                let (qm, _) = restart(&w.h, &w.log[..cut]);
                let got = ids(&view_of(&qm));
                let set: BTreeSet<_> = got.iter().copied().collect();
                prop_assert_eq!(set.len(), got.len());
                prop_assert!(set.is_subset(&known), "cut {} in call {}", cut, k);
                prop_assert!(kept.is_subset(&set), "lost at cut {} in call {}", cut, k);
            }
        }
        // Restart from a checkpoint: its queue files plus the log from its image equal
        // the live state at every later boundary. Until the next checkpoint's record is
        // durable the restart point stays here while that checkpoint's filings may be
        // on disk already, whole or in part ("ahead"): replay must come out the same.
        for (k, (pos, _, _)) in w.checkpoints.iter().enumerate() {
            let b = at_checkpoint[k];
            let files_here = w.checkpoints.get(k + 1).map_or(&w.files, |c| &c.1);
            let next = w.checkpoints.get(k + 1);
            for (i, (end, live, _)) in bounds.iter().enumerate().skip(b) {
                let (qm, _) = restart_from(&w.h, files_here, &w.log[*pos..*end]);
                prop_assert_eq!(&view_of(&qm), live, "checkpoint {} boundary {}", k, i);
                let Some((next_pos, _, next_plan)) = next else { continue };
                if *end < *next_pos {
                    continue;
                }
                for limit in [1, 2, usize::MAX] {
                    let mut ahead = files_here.clone();
                    apply_filings(&mut ahead, next_plan, limit);
                    let (qm, _) = restart_from(&w.h, &ahead, &w.log[*pos..*end]);
                    prop_assert_eq!(
                        &view_of(&qm), live,
                        "checkpoint {} boundary {}, next filings ahead ({})", k, i, limit
                    );
                }
            }
        }
    }
}

/// Found by the whole-queue-manager simulation (crates/ferry-simulation): a checkpoint
/// that files young messages at once must not re-file one its queue file already holds
/// (a new BackoutCount). Replacing it is a remove then a put; a crash between them left
/// the message in neither the file nor the log replayed from the previous checkpoint.
#[test]
fn filing_young_messages_at_once_images_those_a_file_may_hold() {
    let mut h = logging_harness(&["Q"]);
    let c = h.conn();
    let o = h.open(c, "Q", OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED);
    put_p(&mut h, c, o, false, b"old");
    let mut files = Files::new();
    // Imaged by the first checkpoint, filed by the second.
    checkpoint(&mut h.qm, &mut files);
    checkpoint(&mut h.qm, &mut files);
    let old_seq = files["Q"].keys().copied().next().expect("filed");
    // The old message gets a new BackoutCount; a new one appears.
    let got = h.get_now(c, o, GetOptionFlags::SYNCPOINT).expect("get");
    assert_eq!(&got.data[..], b"old");
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).expect("backout");
    put_p(&mut h, c, o, false, b"new");
    take_log(&mut h);

    let plan =
        h.qm.checkpoint_plan(crate::Young::InQueueFiles)
            .expect("plan");
    let filing = plan.queues.iter().find(|f| f.queue == "Q").expect("Q");
    let filed: Vec<u64> = filing.file.iter().map(|m| m.seq).collect();
    let imaged: Vec<u64> = plan
        .image
        .iter()
        .filter_map(|r| match r.decode() {
            Ok(Record::Put { msg, .. }) => Some(msg.seq),
            _ => None,
        })
        .collect();
    assert_eq!(
        imaged,
        vec![old_seq],
        "the message the file holds is imaged"
    );
    assert_eq!(filed, vec![old_seq + 1], "the new message is filed at once");
    assert!(!filing.unfile.contains(&old_seq));
    h.qm.checkpoint_taken(&plan);
    // The next checkpoint files the imaged one (with its new count) as usual.
    let next = h.qm.checkpoint_plan(crate::Young::InImage).expect("plan");
    let filing = next.queues.iter().find(|f| f.queue == "Q").expect("Q");
    assert_eq!(filing.file.len(), 1);
    assert_eq!(filing.file[0].md.backout_count, 1);
}
