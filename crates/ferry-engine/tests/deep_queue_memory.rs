//! What a message whose body is in its queue file costs in memory: the bound that lets a
//! queue hold millions of messages (issue 3: deep queues larger than memory). A global
//! allocator counts the bytes the engine holds after restoring a deep queue from its
//! queue file, as a restart does; the figure is printed, and the test fails if a change
//! makes each message cost more than the bound.

use bytes::Bytes;
use ferry_engine::{FiledRecord, LoggedMessage, QueueManager, Timestamp};
use ferry_mqi::{FixedStr, MessageDescriptor, ReasonCode};
use ferry_objects::{QmgrAttributes, QueueDefinition, QueueType};
use std::alloc::{GlobalAlloc, Layout, System};
use std::rc::Rc;
use std::sync::atomic::{AtomicIsize, Ordering};

/// Live bytes allocated through the global allocator.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// A record location as the server's queue-file record holds one: a shared segment
/// handle, the sequence number and where the record is (48 bytes).
#[derive(Debug)]
struct Location {
    _segment: Rc<()>,
    _seq: u64,
    _at: [u64; 4],
}

impl FiledRecord for Location {
    fn read_body(&self) -> Result<Bytes, ReasonCode> {
        Err(ReasonCode::ResourceProblem)
    }
}

/// A persistent 2 KB message as a client's put leaves it: a generated MsgId, the
/// identity and origin context filled in by the queue manager.
fn message(seq: u64, body: &Bytes) -> LoggedMessage {
    let mut msg_id = *b"AMQ PERFQM      \0\0\0\0\0\0\0\0";
    msg_id[16..].copy_from_slice(&seq.to_be_bytes());
    LoggedMessage {
        rank: 5,
        seq,
        put_ms: 1_764_000_000_000 + seq,
        expires_at: None,
        md: MessageDescriptor {
            msg_id,
            persistence: 1,
            priority: 4,
            ccsid: 1208,
            format: FixedStr::truncating("MQSTR"),
            user_identifier: FixedStr::truncating("ferry"),
            put_appl_type: 28,
            put_appl_name: FixedStr::truncating("ferry perf recovery"),
            put_date: FixedStr::truncating("20261127"),
            put_time: FixedStr::truncating("16150012"),
            ..MessageDescriptor::default()
        },
        body: body.clone(),
        properties: Bytes::new(),
    }
}

#[test]
fn a_message_left_in_its_queue_file_costs_a_few_hundred_bytes() {
    const MESSAGES: u64 = 200_000;
    const BOUND: isize = 450;
    let mut qm = QueueManager::new("QM1", QmgrAttributes::default(), Timestamp(0));
    qm.define_system_objects(Timestamp(0));
    let mut fx = ferry_engine::Effects::new();
    qm.define_queue(
        QueueDefinition::new("DEEP", QueueType::Local),
        false,
        Timestamp(0),
        &mut fx,
    )
    .expect("define DEEP");
    // Everything allocated from here on and still held after the restore counts: the
    // engine's structures and the records, which the server makes for it.
    let before = LIVE.load(Ordering::Relaxed);
    let segment = Rc::new(());
    let body = Bytes::from(vec![b'x'; 2048]);
    let msgs: Vec<(LoggedMessage, Option<Rc<dyn FiledRecord>>)> = (0..MESSAGES)
        .map(|seq| {
            let record: Rc<dyn FiledRecord> = Rc::new(Location {
                _segment: segment.clone(),
                _seq: seq,
                _at: [0; 4],
            });
            (message(seq, &body), Some(record))
        })
        .collect();
    assert!(qm.restore_filed("DEEP", msgs));
    let per_message = (LIVE.load(Ordering::Relaxed) - before) / MESSAGES as isize;
    println!("{MESSAGES} messages left in the queue file: {per_message} bytes each in memory");
    assert!(
        per_message <= BOUND,
        "each message costs {per_message} bytes, more than {BOUND}"
    );
}
