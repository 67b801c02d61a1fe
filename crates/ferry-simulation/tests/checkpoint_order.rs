//! A checkpoint must not write queue files ahead of the log: found by the simulation
//! (seed 36 of the short run, before the fix in `Node::checkpoint`).
//!
//! A persistent message stays long enough to be filed in its queue file; an application
//! gets it (the get record is appended, not yet durable, so the reply is held); a
//! checkpoint starts; the power goes before the log is flushed. The application never
//! got the message, so after the restart it must still be on the queue. If the
//! checkpoint's filings (which remove the message from the queue file) were written
//! before the log was durable up to the checkpoint's position, the restart would find
//! neither the message in its file nor its put in the log: the message would be lost.

use bytes::Bytes;
use ferry_engine::{ConnectionInfo, Effects, GetOutcome, QueueManager, Timestamp, Young};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, ObjectDescriptor, OpenOptions, PutOptionFlags,
    PutOptions,
};
use ferry_objects::{QmgrAttributes, QueueDefinition, QueueType};
use ferry_simulation::node::{Disk, Node, QM_NAME};
use ferry_store::{CrashModel, FaultPlan, LogConfig, WriteIntegrity};
use std::time::Duration;

const Q: &str = "SIM.DATA";

fn info() -> ConnectionInfo {
    ConnectionInfo {
        application_name: "checkpoint-order".into(),
        channel: String::new(),
        connection_name: "simulated".into(),
        user_id: "sim".into(),
        pid: None,
    }
}

/// Gets (or with `browse`, browses) the first message of `Q`; its body if there is one.
fn first(node: &mut Node, now: Timestamp, browse: bool) -> Option<Bytes> {
    let conn = node
        .qm
        .connect(info(), now, &mut Effects::new())
        .expect("connect");
    let od = ObjectDescriptor::queue(Q).expect("name");
    let o = OpenOptions::INPUT_SHARED | OpenOptions::BROWSE;
    let h = node
        .qm
        .open(conn, &od, o, now, &mut node.fx)
        .expect("open")
        .hobj;
    let options = if browse {
        GetOptionFlags::BROWSE_FIRST
    } else {
        GetOptionFlags::NO_SYNCPOINT
    };
    let gmo = GetOptions {
        options,
        wait_interval: 0,
        ..GetOptions::default()
    };
    let md = MessageDescriptor::default();
    let r = node.qm.get(conn, h, &md, &gmo, 1024, now, &mut node.fx);
    match r {
        GetOutcome::Done(Ok(m)) => Some(m.data),
        _ => None,
    }
}

#[test]
fn a_get_lost_in_a_crash_during_a_checkpoint_leaves_its_message_on_the_queue() {
    let now = Timestamp(1_704_067_200_000);
    let mut qm = QueueManager::new(QM_NAME, QmgrAttributes::default(), now);
    let mut fx = Effects::new();
    qm.define_queue(
        QueueDefinition::new(Q, QueueType::Local),
        false,
        now,
        &mut fx,
    )
    .expect("define");
    let config = LogConfig {
        file_pages: 16,
        extents: 3,
        primary_extents: 2,
        buffer_pages: 8,
        write_integrity: WriteIntegrity::TripleWrite,
        slow_io_threshold: Duration::from_secs(3600),
    };
    // Nothing unsynced survives the crash.
    let model = CrashModel {
        atomic_pages: false,
        survive_percent: 0,
    };
    let mut disk = Disk::new(7, config, model, qm.catalogue());
    let mut node = Node::create(&mut disk, now).expect("create");

    let conn = node
        .qm
        .connect(info(), now, &mut Effects::new())
        .expect("connect");
    let od = ObjectDescriptor::queue(Q).expect("name");
    let h = node
        .qm
        .open(conn, &od, OpenOptions::OUTPUT, now, &mut node.fx)
        .expect("open")
        .hobj;
    let mut md = MessageDescriptor {
        persistence: persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    let pmo = PutOptions::new(PutOptionFlags::NO_SYNCPOINT);
    let body = Bytes::from_static(b"keep me");
    node.qm
        .put(conn, h, &mut md, &pmo, body.clone(), now, &mut node.fx)
        .expect("put");
    node.log_effects().expect("append");
    node.flush().expect("flush");
    // Imaged by the first checkpoint, filed in its queue file by the second.
    node.checkpoint(&mut disk, Young::InImage)
        .expect("checkpoint");
    node.checkpoint(&mut disk, Young::InImage)
        .expect("checkpoint");

    assert_eq!(first(&mut node, now, false), Some(body.clone()));
    node.log_effects().expect("append the get record");
    // The power goes at the next write to the log.
    disk.log.set_faults(FaultPlan {
        power_cut_after: Some(0),
        ..FaultPlan::default()
    });
    assert!(
        node.checkpoint(&mut disk, Young::InImage).is_err(),
        "the log cannot be written"
    );

    disk.crash();
    let mut node = Node::start(&mut disk, now).expect("restart");
    assert_eq!(
        first(&mut node, now, true),
        Some(body),
        "the message whose get never became durable is on its queue"
    );
}
