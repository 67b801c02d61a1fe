//! DefaultPQBufferSize: bodies of filed persistent messages leave memory beyond a
//! queue's buffer and are read back when got, browsed or backed out (`crate::body`).

use super::persistence::{logging_harness, put_p, take_log};
use super::*;
use crate::{BufferSizes, CheckpointPlan, FiledBody, FiledRecord, Young};
use std::cell::Cell;
use std::rc::Rc;

/// A record of a test "queue file": counts its reads, and can be made unreadable.
#[derive(Debug)]
struct Record {
    body: Bytes,
    reads: Rc<Cell<u32>>,
    broken: Rc<Cell<bool>>,
}

impl FiledRecord for Record {
    fn read_body(&self) -> Result<Bytes, ReasonCode> {
        self.reads.set(self.reads.get() + 1);
        if self.broken.get() {
            return Err(ReasonCode::ResourceProblem);
        }
        Ok(self.body.clone())
    }
}

struct Filed {
    reads: Rc<Cell<u32>>,
    broken: Rc<Cell<bool>>,
}

/// `msgs` as the server reports them written, each a [`Record`] sharing `reads`/`broken`.
fn written(
    msgs: &[crate::LoggedMessage],
    reads: &Rc<Cell<u32>>,
    broken: &Rc<Cell<bool>>,
) -> Vec<FiledBody> {
    msgs.iter()
        .map(|m| {
            let record = Record {
                body: m.body.clone(),
                reads: reads.clone(),
                broken: broken.clone(),
            };
            FiledBody::new(m, Rc::new(record))
        })
        .collect()
}

/// Puts `n` persistent 1,000-byte messages (body = index) on Q, files them all in one
/// checkpoint straight to the "queue file", and reports the filing.
fn fill_and_file(h: &mut Harness, c: ConnId, o: Hobj, n: u8) -> (CheckpointPlan, Filed) {
    for i in 0..n {
        put_p(h, c, o, false, &[i; 1000]);
    }
    take_log(h);
    let plan = h.qm.checkpoint_plan(Young::InQueueFiles).unwrap();
    h.qm.checkpoint_taken(&plan);
    let reads = Rc::new(Cell::new(0));
    let broken = Rc::new(Cell::new(false));
    let filed = written(&plan.queues[0].file, &reads, &broken);
    let freed = h.qm.bodies_filed("Q", &filed);
    assert_eq!(freed, 7000, "10 x 1,000 bytes in memory, 3,000 kept");
    h.qm.check_invariants();
    (plan, Filed { reads, broken })
}

fn harness() -> (Harness, ConnId, Hobj) {
    let mut h = logging_harness(&["Q"]);
    h.qm.set_buffer_sizes(BufferSizes {
        persistent: 3000,
        ..BufferSizes::default()
    });
    let c = h.conn();
    let o = h.open(c, "Q", IO | OpenOptions::BROWSE);
    (h, c, o)
}

#[test]
fn the_head_stays_in_memory_and_the_rest_is_read_back_in_order() {
    let (mut h, c, o) = harness();
    let (_, f) = fill_and_file(&mut h, c, o, 10);
    for i in 0..10u8 {
        assert_eq!(h.get_body(c, o).unwrap(), vec![i; 1000], "message {i}");
        // The first three were kept in memory: no reads for them.
        assert_eq!(f.reads.get(), u32::from(i.saturating_sub(2)));
    }
    assert_eq!(h.depth("Q"), 0);
    h.qm.check_invariants();
}

#[test]
fn a_read_error_fails_the_get_and_keeps_the_message() {
    let (mut h, c, o) = harness();
    let (_, f) = fill_and_file(&mut h, c, o, 10);
    for _ in 0..3 {
        h.get_body(c, o).unwrap();
    }
    f.broken.set(true);
    assert_eq!(h.get_body(c, o), Err(ReasonCode::ResourceProblem));
    assert_eq!(h.depth("Q"), 7);
    f.broken.set(false);
    assert_eq!(h.get_body(c, o).unwrap(), vec![3; 1000]);
}

#[test]
fn a_backed_out_get_brings_the_body_back_into_memory() {
    let (mut h, c, o) = harness();
    let (_, f) = fill_and_file(&mut h, c, o, 10);
    for _ in 0..3 {
        h.get_body(c, o).unwrap();
    }
    let got = h.get_now(c, o, GetOptionFlags::SYNCPOINT).unwrap();
    assert_eq!(got.data.to_vec(), vec![3; 1000]);
    assert_eq!(f.reads.get(), 1);
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    h.qm.check_invariants();
    // Changed (BackoutCount 1): the next checkpoint images it without a read, and
    // the get that follows reads nothing either.
    let plan = h.qm.checkpoint_plan(Young::InImage).unwrap();
    assert_eq!(plan.image.len(), 1);
    assert_eq!(f.reads.get(), 1);
    let got = h.get_now(c, o, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!((got.md.backout_count, got.data.len()), (1, 1000));
    assert_eq!(f.reads.get(), 1);
}

#[test]
fn browsing_reads_without_taking_bodies_back() {
    let (mut h, c, o) = harness();
    let (_, f) = fill_and_file(&mut h, c, o, 10);
    let mut first = true;
    for i in 0..10u8 {
        let opt = if first {
            GetOptionFlags::BROWSE_FIRST
        } else {
            GetOptionFlags::BROWSE_NEXT
        };
        first = false;
        let got = h.get_now(c, o, opt).unwrap();
        assert_eq!(got.data.to_vec(), vec![i; 1000]);
    }
    assert_eq!(f.reads.get(), 7);
    h.qm.check_invariants();
    assert_eq!(
        h.qm.queues
            .local_mut(h.qm.queues.lookup("Q").unwrap())
            .unwrap()
            .store
            .resident_persistent_bytes(),
        3000
    );
}

#[test]
fn a_report_for_a_message_that_changed_since_its_filing_leaves_it_in_memory() {
    let (mut h, c, o) = harness();
    for i in 0..4u8 {
        put_p(&mut h, c, o, false, &[i; 1000]);
    }
    let plan = h.qm.checkpoint_plan(Young::InQueueFiles).unwrap();
    h.qm.checkpoint_taken(&plan);
    // Before the filing is reported, message 3 is got under syncpoint and backed out.
    let mut md = MessageDescriptor::default();
    md.msg_id = plan.queues[0].file[3].md.msg_id;
    let got = h
        .get_with(c, o, &md, GetOptionFlags::SYNCPOINT, 0, 1 << 20)
        .done()
        .unwrap()
        .unwrap();
    assert_eq!(got.data[0], 3);
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    let filed = written(&plan.queues[0].file, &Rc::default(), &Rc::default());
    // 4,000 in memory, 3,000 allowed: message 3 changed, so message 2 goes instead.
    assert_eq!(h.qm.bodies_filed("Q", &filed), 1000);
    let q = h.qm.queues.lookup("Q").unwrap();
    let store = &h.qm.queues.local_mut(q).unwrap().store;
    let resident: Vec<bool> = store
        .sorted()
        .iter()
        .map(|m| m.body.is_resident())
        .collect();
    assert_eq!(resident, [true, true, false, true]);
}

/// Reports a spill plan as the server does once written; returns the bytes freed.
fn report_spill(h: &mut Harness, plan: &[crate::QueueFiling], reads: &Rc<Cell<u32>>) -> u64 {
    let mut freed = 0;
    for f in plan {
        let spilled = written(&f.file, reads, &Rc::default());
        freed += h.qm.bodies_spilled(&f.queue, &spilled);
    }
    h.qm.check_invariants();
    freed
}

fn np_harness() -> (Harness, ConnId, Hobj) {
    let mut h = logging_harness(&["Q"]);
    h.qm.set_buffer_sizes(BufferSizes {
        non_persistent: 3000,
        ..BufferSizes::default()
    });
    let c = h.conn();
    let o = h.open(c, "Q", IO | OpenOptions::BROWSE);
    (h, c, o)
}

#[test]
fn non_persistent_messages_over_the_buffer_spill_newest_first_and_come_back() {
    let (mut h, c, o) = np_harness();
    for i in 0..10u8 {
        h.put(c, o, &[i; 1000]);
    }
    assert!(h.qm.spill_wanted());
    let plan = h.qm.spill_plan();
    assert!(!h.qm.spill_wanted());
    assert_eq!(plan.len(), 1);
    let seqs: Vec<u8> = plan[0].file.iter().map(|m| m.body[0]).collect();
    assert_eq!(
        seqs,
        [3, 4, 5, 6, 7, 8, 9],
        "the newest, written in get order"
    );
    assert!(plan[0].unfile.is_empty());
    // Planned but not reported yet: a second plan spills nothing more.
    assert!(h.qm.spill_plan().is_empty());
    h.qm.check_invariants();
    let reads = Rc::new(Cell::new(0));
    assert_eq!(report_spill(&mut h, &plan, &reads), 7000);
    for i in 0..10u8 {
        assert_eq!(h.get_body(c, o).unwrap(), vec![i; 1000], "message {i}");
    }
    assert_eq!(reads.get(), 7);
    // The next spill removes their records.
    let plan = h.qm.spill_plan();
    assert_eq!(plan[0].unfile.len(), 7);
    assert!(plan[0].file.is_empty());
    h.qm.check_invariants();
}

#[test]
fn a_spill_before_the_first_checkpoint_starts_the_file_and_the_checkpoint_keeps_it() {
    // A new queue's file may hold an earlier incarnation: the first write empties it.
    // When that write is a spill, the checkpoint after it must not empty the file again,
    // which would leave the spilled bodies only in deleted segments still open.
    let (mut h, c, o) = np_harness();
    put_p(&mut h, c, o, false, b"kept");
    for i in 0..10u8 {
        h.put(c, o, &[i; 1000]);
    }
    let spill = h.qm.spill_plan();
    assert_eq!(spill.len(), 1);
    assert!(
        spill[0].fresh,
        "the first write to a new queue's file starts it"
    );
    let checkpoint = h.qm.checkpoint_plan(Young::InQueueFiles).unwrap();
    h.qm.checkpoint_taken(&checkpoint);
    let q = checkpoint.queues.iter().find(|f| f.queue == "Q").unwrap();
    assert!(
        !q.fresh,
        "the spill started the file: the checkpoint adds to it"
    );
    assert_eq!(q.file.len(), 1, "the persistent message is filed");
    // Later spills and checkpoints append.
    h.put(c, o, &[10; 1000]);
    let reads = Rc::new(Cell::new(0));
    report_spill(&mut h, &spill, &reads);
    assert!(h.qm.spill_plan().iter().all(|f| !f.fresh));
    let again = h.qm.checkpoint_plan(Young::InQueueFiles).unwrap();
    assert!(again.queues.iter().all(|f| !f.fresh));
}

#[test]
fn a_checkpoint_before_any_spill_starts_the_file_and_spills_append() {
    let (mut h, c, o) = np_harness();
    put_p(&mut h, c, o, false, b"kept");
    let checkpoint = h.qm.checkpoint_plan(Young::InQueueFiles).unwrap();
    assert!(checkpoint.queues.iter().any(|f| f.queue == "Q" && f.fresh));
    h.qm.checkpoint_taken(&checkpoint);
    for i in 0..10u8 {
        h.put(c, o, &[i; 1000]);
    }
    let spill = h.qm.spill_plan();
    assert_eq!(spill.len(), 1);
    assert!(!spill[0].fresh);
}

#[test]
fn a_message_got_before_its_spill_is_reported_stays_accounted_for() {
    let (mut h, c, o) = np_harness();
    for i in 0..5u8 {
        h.put(c, o, &[i; 1000]);
    }
    let plan = h.qm.spill_plan();
    assert_eq!(plan[0].file.len(), 2);
    // Got (messages 0..=3) before the spill is reported; 3 was chosen for it.
    for i in 0..4u8 {
        assert_eq!(h.get_body(c, o).unwrap(), vec![i; 1000]);
    }
    h.qm.check_invariants();
    let reads = Rc::new(Cell::new(0));
    // Only message 4 is left to give up its body.
    assert_eq!(report_spill(&mut h, &plan, &reads), 1000);
    assert_eq!(h.get_body(c, o).unwrap(), vec![4; 1000]);
    assert_eq!(reads.get(), 1);
    assert_eq!(h.qm.spill_plan()[0].unfile.len(), 2);
}

#[test]
fn persistent_messages_are_not_spilled() {
    let (mut h, c, o) = np_harness();
    for i in 0..10u8 {
        put_p(&mut h, c, o, false, &[i; 1000]);
    }
    assert!(!h.qm.spill_wanted());
    assert!(h.qm.spill_plan().is_empty());
}

#[test]
fn after_a_compaction_bodies_are_read_from_where_the_records_moved() {
    let (mut h, c, o) = harness();
    let (plan, old) = fill_and_file(&mut h, c, o, 10);
    let new_reads = Rc::new(Cell::new(0));
    let moved: Vec<(u64, Rc<dyn FiledRecord>)> =
        written(&plan.queues[0].file, &new_reads, &Rc::default())
            .into_iter()
            .map(|f| (f.seq, f.record))
            .collect();
    h.qm.bodies_moved("Q", &moved);
    old.broken.set(true);
    for i in 0..10u8 {
        assert_eq!(h.get_body(c, o).unwrap(), vec![i; 1000], "message {i}");
    }
    assert_eq!((old.reads.get(), new_reads.get()), (0, 7));
    h.qm.check_invariants();
}

#[test]
fn a_spilled_body_does_not_stay_in_memory_through_properties_sharing_its_buffer() {
    let (mut h, c, o) = np_harness();
    let mut props = ferry_mqi::MessageProperties::new();
    props
        .set("colour", ferry_mqi::PropertyValue::String("red".into()))
        .unwrap();
    let props = props.encode();
    let mut buffers = Vec::new();
    for i in 0..10u8 {
        // Properties then body in one buffer, as the AMQP channel puts them.
        let whole = Bytes::from([&props[..], &[i; 1000]].concat());
        let (p, b) = (whole.slice(..props.len()), whole.slice(props.len()..));
        buffers.push(whole.as_ptr_range());
        let t = h.t();
        h.qm.put_with_properties(
            c,
            o,
            &mut MessageDescriptor::default(),
            &PutOptions::default(),
            b,
            p,
            t,
            &mut h.fx,
        )
        .unwrap();
    }
    let plan = h.qm.spill_plan();
    assert_eq!(report_spill(&mut h, &plan, &Rc::default()), 7000);
    let id = h.qm.queues.lookup("Q").unwrap();
    let lq = h.qm.queues.local_mut(id).unwrap();
    for (i, range) in buffers.iter().enumerate() {
        let key = lq.store.first(&crate::queue::Criteria::default(), None);
        let msg = lq.store.get(key.unwrap().seq).unwrap();
        let spilled = !msg.body.is_resident();
        assert_eq!(spilled, i >= 3, "message {i}");
        assert_eq!(msg.properties, props, "message {i}");
        // A spilled message's properties no longer hold its old buffer (body included).
        assert_eq!(
            range.contains(&msg.properties.as_ptr()),
            !spilled,
            "message {i}"
        );
        let seq = msg.key.seq;
        lq.store.remove(seq);
    }
}
