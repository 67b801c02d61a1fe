//! Administration rules: define/replace/alter/delete/clear, status, catalogue.

use super::*;
use crate::Catalogue;
use ferry_objects::qmgr::QmgrMonitoring;
use ferry_objects::queue::{MonitoringLevel, Usage};
use ferry_objects::{AdminError, ChannelDefinition, ChannelType, ListenerDefinition};

fn t(h: &Harness) -> Timestamp {
    h.t()
}

#[test]
fn system_objects_exist() {
    let h = Harness::new();
    for q in [
        "SYSTEM.DEFAULT.LOCAL.QUEUE",
        "SYSTEM.DEFAULT.MODEL.QUEUE",
        "SYSTEM.DEFAULT.ALIAS.QUEUE",
        "SYSTEM.DEAD.LETTER.QUEUE",
        "SYSTEM.ADMIN.COMMAND.QUEUE",
    ] {
        assert!(h.qm.queue(q).is_some(), "{q}");
    }
    assert_eq!(
        h.qm.queue("SYSTEM.DEFAULT.MODEL.QUEUE").unwrap().queue_type,
        QueueType::Model
    );
    assert!(h.qm.channel("SYSTEM.DEF.SVRCONN").is_some());
    assert_eq!(
        h.qm.listener("SYSTEM.DEFAULT.LISTENER.TCP")
            .unwrap()
            .attributes
            .port,
        0
    );
    assert_eq!(h.qm.qmgr().dead_letter_q, "SYSTEM.DEAD.LETTER.QUEUE");
    assert_eq!(
        h.qm.queue("SYSTEM.DEAD.LETTER.QUEUE")
            .unwrap()
            .attributes
            .creation_date,
        "2024-01-01"
    );
}

#[test]
fn define_replace_and_type_rules() {
    let mut h = Harness::new();
    h.fx.clear();
    let now = t(&h);
    h.qm.define_queue(
        QueueDefinition::new("Q", QueueType::Local),
        false,
        now,
        &mut h.fx,
    )
    .unwrap();
    assert!(matches!(
        h.fx.as_slice(),
        [Effect::CatalogueChanged(crate::CatalogueChange::Queue(n))] if n == "Q"
    ));
    assert_eq!(
        h.qm.define_queue(
            QueueDefinition::new("Q", QueueType::Local),
            false,
            now,
            &mut h.fx
        ),
        Err(AdminError::AlreadyExists { name: "Q".into() })
    );
    assert_eq!(
        h.qm.define_queue(
            QueueDefinition::new("Q", QueueType::Alias),
            true,
            now,
            &mut h.fx
        ),
        Err(AdminError::TypeMismatch { name: "Q".into() })
    );
    let mut d = QueueDefinition::new("Q", QueueType::Local);
    d.attributes.max_depth = 3;
    h.qm.define_queue(d, true, now, &mut h.fx).unwrap();
    assert_eq!(h.qm.queue("Q").unwrap().attributes.max_depth, 3);
    assert!(matches!(
        h.qm.define_queue(
            QueueDefinition::new("BAD NAME", QueueType::Local),
            false,
            now,
            &mut h.fx
        ),
        Err(AdminError::Invalid(_))
    ));
    assert_eq!(
        h.qm.alter_queue(
            QueueDefinition::new("NOPE", QueueType::Local),
            false,
            now,
            &mut h.fx
        ),
        Err(AdminError::NotFound {
            name: "NOPE".into()
        })
    );
    assert_eq!(
        h.qm.alter_queue(
            QueueDefinition::new("Q", QueueType::Alias),
            false,
            now,
            &mut h.fx
        ),
        Err(AdminError::TypeMismatch { name: "Q".into() })
    );
}

#[test]
fn alter_needs_force_for_noshare_and_usage_while_open() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let b = h.conn();
    h.open(a, "Q", OpenOptions::INPUT_SHARED);
    h.open(b, "Q", OpenOptions::INPUT_SHARED);
    let now = t(&h);
    let mut d = h.qm.queue("Q").unwrap();
    d.attributes.shareable = false;
    assert_eq!(
        h.qm.alter_queue(d.clone(), false, now, &mut h.fx),
        Err(AdminError::InUse { name: "Q".into() })
    );
    h.qm.alter_queue(d, true, now, &mut h.fx).unwrap();
    let mut d = h.qm.queue("Q").unwrap();
    d.attributes.usage = Usage::TransmissionQueue;
    assert!(h.qm.alter_queue(d.clone(), false, now, &mut h.fx).is_err());
    h.qm.alter_queue(d, true, now, &mut h.fx).unwrap();
    // Other attributes change freely while open.
    let mut d = h.qm.queue("Q").unwrap();
    d.attributes.max_depth = 10;
    h.qm.alter_queue(d, false, now, &mut h.fx).unwrap();
}

#[test]
fn usage_changes_only_on_an_empty_queue() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"x");
    let now = t(&h);
    let mut d = h.qm.queue("Q").unwrap();
    d.attributes.usage = Usage::TransmissionQueue;
    assert_eq!(
        h.qm.alter_queue(d.clone(), true, now, &mut h.fx),
        Err(AdminError::NotEmpty { name: "Q".into() }),
        "FORCE or not"
    );
    h.get_body(c, o).unwrap();
    h.qm.alter_queue(d, true, now, &mut h.fx).unwrap();
}

#[test]
fn delete_rules() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"x");
    let now = t(&h);
    assert_eq!(
        h.qm.delete_queue("Q", true, now, &mut h.fx),
        Err(AdminError::InUse { name: "Q".into() })
    );
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), now, &mut h.fx)
        .unwrap();
    assert_eq!(
        h.qm.delete_queue("Q", false, now, &mut h.fx),
        Err(AdminError::NotEmpty { name: "Q".into() })
    );
    h.qm.delete_queue("Q", true, now, &mut h.fx).unwrap();
    assert!(h.qm.queue("Q").is_none());
    assert!(matches!(
        h.qm.delete_queue("Q", true, now, &mut h.fx),
        Err(AdminError::NotFound { .. })
    ));
    // Uncommitted work keeps a queue in use even without handles.
    h.local("U");
    let o = h.open(c, "U", OpenOptions::OUTPUT);
    h.put_sync(c, o, b"x");
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), now, &mut h.fx)
        .unwrap();
    assert!(matches!(
        h.qm.delete_queue("U", true, now, &mut h.fx),
        Err(AdminError::InUse { .. })
    ));
    // An alias in use cannot be deleted either.
    h.local("B");
    h.define("AL", QueueType::Alias, |a| a.target = "B".into());
    let o = h.open(c, "AL", OpenOptions::OUTPUT);
    assert!(matches!(
        h.qm.delete_queue("AL", false, now, &mut h.fx),
        Err(AdminError::InUse { .. })
    ));
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), now, &mut h.fx)
        .unwrap();
    h.qm.delete_queue("AL", false, now, &mut h.fx).unwrap();
}

#[test]
fn clear_rules() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", OpenOptions::OUTPUT);
    h.put(c, o, b"1");
    h.put(c, o, b"2");
    // Open for output only still counts as in use.
    assert!(matches!(
        h.qm.clear_queue("Q"),
        Err(AdminError::InUse { .. })
    ));
    let now = t(&h);
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), now, &mut h.fx)
        .unwrap();
    assert_eq!(h.qm.clear_queue("Q"), Ok(2));
    assert_eq!(h.depth("Q"), 0);
    let o = h.open(c, "Q", OpenOptions::OUTPUT);
    h.put_sync(c, o, b"3");
    h.qm.close(c, o, ferry_mqi::CloseOptions::empty(), now, &mut h.fx)
        .unwrap();
    assert!(matches!(
        h.qm.clear_queue("Q"),
        Err(AdminError::InUse { .. })
    ));
    h.qm.commit(c, now, &mut h.fx).unwrap();
    let i = h.open(c, "Q", OpenOptions::INPUT_SHARED);
    assert!(matches!(
        h.qm.clear_queue("Q"),
        Err(AdminError::InUse { .. })
    ));
    h.qm.close(c, i, ferry_mqi::CloseOptions::empty(), now, &mut h.fx)
        .unwrap();
    assert_eq!(h.qm.clear_queue("Q"), Ok(1));
    assert!(matches!(
        h.qm.clear_queue("SYSTEM.DEFAULT.ALIAS.QUEUE"),
        Err(AdminError::TypeMismatch { .. })
    ));
}

#[test]
fn status_counters() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"1");
    h.now += 5_000;
    h.put_sync(c, o, b"2");
    // MQ's default QMGR MONQ(OFF): no monitoring values for a queue with MONQ(QMGR).
    let st = h.qm.queue_status("Q", h.t()).unwrap();
    assert_eq!(
        (st.last_put_ms, st.oldest_msg_age_secs),
        (None, None),
        "MONQ(OFF)"
    );
    let mut q = h.qm.qmgr();
    q.monitoring_q = QmgrMonitoring::Medium;
    h.qm.alter_qmgr(q, &mut h.fx).unwrap();
    let st = h.qm.queue_status("Q", h.t()).unwrap();
    assert_eq!(st.current_depth, 2);
    assert_eq!(st.open_input_count, 1);
    assert_eq!(st.open_output_count, 1);
    assert_eq!(st.uncommitted, 1);
    assert_eq!(st.last_put_ms, Some(T0 + 5_000));
    assert_eq!(st.last_get_ms, None);
    assert_eq!(st.oldest_msg_age_secs, Some(5));
    let conns = h.qm.connections();
    assert_eq!(conns.len(), 1);
    assert!(conns[0].uow_active);
    assert_eq!(conns[0].uow_messages, 1);
    assert_eq!(conns[0].open_objects, vec!["Q".to_string()]);
    assert_eq!(conns[0].user_id, "alice");
    let hs = h.qm.handle_status("Q");
    assert_eq!(hs.len(), 1);
    assert!(hs[0].output);
    assert_eq!(hs[0].input, "SHARED");
    assert_eq!(hs[0].connection_id, conns[0].connection_id);
}

#[test]
fn channels_and_listeners() {
    let mut h = Harness::new();
    let ch = ChannelDefinition::new("APP.SVRCONN", ChannelType::Svrconn);
    h.qm.define_channel(ch.clone(), false, &mut h.fx).unwrap();
    assert!(matches!(
        h.qm.define_channel(ch.clone(), false, &mut h.fx),
        Err(AdminError::AlreadyExists { .. })
    ));
    h.qm.define_channel(ch.clone(), true, &mut h.fx).unwrap();
    h.qm.alter_channel(ch, &mut h.fx).unwrap();
    assert!(h
        .qm
        .define_channel(
            ChannelDefinition::new("A.NAME.LONGER.THAN.20", ChannelType::Svrconn),
            false,
            &mut h.fx
        )
        .is_err());
    // In use while a connection came in on it.
    let _c = h.conn();
    assert!(matches!(
        h.qm.delete_channel("SYSTEM.DEF.SVRCONN", &mut h.fx),
        Err(AdminError::InUse { .. })
    ));
    h.qm.delete_channel("APP.SVRCONN", &mut h.fx).unwrap();
    assert!(matches!(
        h.qm.delete_channel("APP.SVRCONN", &mut h.fx),
        Err(AdminError::NotFound { .. })
    ));
    let mut l = ListenerDefinition::new("L1");
    l.attributes.port = 1414;
    h.qm.define_listener(l.clone(), false, &mut h.fx).unwrap();
    assert!(h.qm.define_listener(l.clone(), false, &mut h.fx).is_err());
    h.qm.alter_listener(l, &mut h.fx).unwrap();
    assert_eq!(h.qm.listeners().len(), 2);
    h.qm.delete_listener("L1", &mut h.fx).unwrap();
    assert!(h.qm.delete_listener("L1", &mut h.fx).is_err());
    assert!(h
        .qm
        .alter_listener(ListenerDefinition::new("NOPE"), &mut h.fx)
        .is_err());
}

#[test]
fn catalogue_round_trip_skips_temporary_queues() {
    let mut h = Harness::new();
    h.define("APP.Q", QueueType::Local, |a| a.max_depth = 42);
    let c = h.conn();
    let tmp = h
        .try_open(c, "SYSTEM.DEFAULT.MODEL.QUEUE", OpenOptions::INPUT_SHARED)
        .unwrap();
    let o = h.open(c, "APP.Q", OpenOptions::OUTPUT);
    h.put(c, o, b"not saved here");
    let cat = h.qm.catalogue();
    assert!(cat.queues.iter().all(|q| q.name != tmp.object_name));
    let json = serde_json::to_string(&cat).unwrap();
    let back: Catalogue = serde_json::from_str(&json).unwrap();
    assert_eq!(back, cat);
    let qm2 = QueueManager::from_catalogue("QM1", back, Timestamp(T0 + 1));
    assert_eq!(qm2.queue("APP.Q").unwrap().attributes.max_depth, 42);
    assert_eq!(
        qm2.queue_status("APP.Q", Timestamp(T0))
            .unwrap()
            .current_depth,
        0
    );
    assert_eq!(qm2.channels(), h.qm.channels());
    assert_eq!(qm2.qmgr(), h.qm.qmgr());
}

#[test]
fn monq_of_the_queue_manager_and_the_queue_decide_what_qstatus_shows() {
    use QmgrMonitoring as Q;
    // MQ's rules: NONE off everywhere; OFF off for queues saying QMGR; a queue's OFF off.
    for (qmgr, queue, shown) in [
        (Q::Off, MonitoringLevel::QMgr, false),
        (Q::Off, MonitoringLevel::Medium, true),
        (Q::Medium, MonitoringLevel::QMgr, true),
        (Q::Medium, MonitoringLevel::Off, false),
        (Q::None, MonitoringLevel::High, false),
        (Q::Low, MonitoringLevel::Low, true),
    ] {
        assert_eq!(queue.collects(qmgr), shown, "{qmgr:?} {queue:?}");
    }
    let mut h = Harness::new();
    h.local("Q");
    let mut def = h.qm.queue("Q").unwrap();
    def.attributes.monitoring = MonitoringLevel::High;
    let now = h.t();
    h.qm.alter_queue(def, false, now, &mut h.fx).unwrap();
    let c = h.conn();
    let o = h.open(c, "Q", IO);
    h.put(c, o, b"1");
    h.now += 3_000;
    let st = h.qm.queue_status("Q", h.t()).unwrap();
    assert_eq!(st.oldest_msg_age_secs, Some(3), "the queue's MONQ(HIGH)");
    let mut q = h.qm.qmgr();
    q.monitoring_q = QmgrMonitoring::None;
    h.qm.alter_qmgr(q, &mut h.fx).unwrap();
    let st = h.qm.queue_status("Q", h.t()).unwrap();
    assert_eq!(
        st.oldest_msg_age_secs, None,
        "the queue manager's MONQ(NONE)"
    );
    assert_eq!(st.last_put_ms, None);
}
