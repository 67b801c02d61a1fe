//! MQOPEN/MQCLOSE rules: options, sharing, names, aliases, models, MAXHANDS.

use super::*;
use ferry_mqi::{CloseOptions, ObjectType};
use ferry_objects::queue::{DefaultShareOption, DefinitionType};

#[test]
fn needs_an_access_option_and_one_input_option() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    assert_eq!(
        rc(h.try_open(c, "Q", OpenOptions::FAIL_IF_QUIESCING)),
        ReasonCode::OptionsError
    );
    assert_eq!(
        rc(h.try_open(
            c,
            "Q",
            OpenOptions::INPUT_SHARED | OpenOptions::INPUT_EXCLUSIVE
        )),
        ReasonCode::OptionsError
    );
    assert_eq!(
        rc(h.try_open(c, "NOPE", OpenOptions::OUTPUT)),
        ReasonCode::UnknownObjectName
    );
    let mut od = ObjectDescriptor::default();
    let t = h.t();
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::OUTPUT, t, &mut h.fx)),
        ReasonCode::ObjectNameError
    );
    od = ObjectDescriptor::queue("Q").unwrap();
    od.object_qmgr_name = ferry_mqi::FixedStr::new("OTHER").unwrap();
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::OUTPUT, t, &mut h.fx)),
        ReasonCode::UnknownRemoteQMgr,
        "no alias, transmission queue or DEFXMITQ leads to OTHER"
    );
    assert_eq!(
        rc(h.qm.open(
            ConnId(42),
            &ObjectDescriptor::queue("Q").unwrap(),
            OpenOptions::OUTPUT,
            t,
            &mut h.fx
        )),
        ReasonCode::HconnError
    );
}

#[test]
fn exclusive_input_conflicts() {
    let mut h = Harness::new();
    h.local("Q");
    let a = h.conn();
    let b = h.conn();
    let x = h.open(a, "Q", OpenOptions::INPUT_EXCLUSIVE);
    assert_eq!(
        rc(h.try_open(b, "Q", OpenOptions::INPUT_SHARED)),
        ReasonCode::ObjectInUse
    );
    assert_eq!(
        rc(h.try_open(b, "Q", OpenOptions::INPUT_EXCLUSIVE)),
        ReasonCode::ObjectInUse
    );
    h.open(b, "Q", OpenOptions::OUTPUT | OpenOptions::BROWSE);
    let t = h.t();
    h.qm.close(a, x, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    h.open(b, "Q", OpenOptions::INPUT_SHARED);
    assert_eq!(
        rc(h.try_open(a, "Q", OpenOptions::INPUT_EXCLUSIVE)),
        ReasonCode::ObjectInUse
    );
}

#[test]
fn noshare_and_defsopt() {
    let mut h = Harness::new();
    h.define("NS", QueueType::Local, |a| a.shareable = false);
    h.define("EX", QueueType::Local, |a| {
        a.def_share_option = DefaultShareOption::Exclusive
    });
    let a = h.conn();
    let b = h.conn();
    h.open(a, "NS", OpenOptions::INPUT_SHARED);
    assert_eq!(
        rc(h.try_open(b, "NS", OpenOptions::INPUT_SHARED)),
        ReasonCode::ObjectInUse
    );
    h.open(a, "EX", OpenOptions::INPUT_AS_Q_DEF);
    assert_eq!(
        rc(h.try_open(b, "EX", OpenOptions::INPUT_AS_Q_DEF)),
        ReasonCode::ObjectInUse
    );
    let hs = h.qm.handle_status("EX");
    assert_eq!(hs.len(), 1);
    assert_eq!(hs[0].input, "EXCL");
}

#[test]
fn maxhands() {
    let mut h = Harness::new();
    let mut q = h.qm.qmgr();
    q.max_handles = 2;
    h.qm.alter_qmgr(q, &mut h.fx).unwrap();
    h.local("Q");
    let c = h.conn();
    h.open(c, "Q", OpenOptions::OUTPUT);
    let second = h.open(c, "Q", OpenOptions::OUTPUT);
    assert_eq!(
        rc(h.try_open(c, "Q", OpenOptions::OUTPUT)),
        ReasonCode::HandleNotAvailable
    );
    let t = h.t();
    h.qm.close(c, second, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert_eq!(
        h.open(c, "Q", OpenOptions::OUTPUT),
        second,
        "handle slots are reused"
    );
    assert_eq!(
        rc(h.qm.close(c, Hobj(7), CloseOptions::empty(), t, &mut h.fx)),
        ReasonCode::HobjError
    );
}

#[test]
fn alias_resolution() {
    let mut h = Harness::new();
    h.local("BASE");
    h.define("A", QueueType::Alias, |a| a.target = "BASE".into());
    h.define("DANGLING", QueueType::Alias, |a| {
        a.target = "MISSING".into()
    });
    h.define("A2", QueueType::Alias, |a| a.target = "A".into());
    let c = h.conn();
    let o = h.try_open(c, "A", IO).unwrap();
    assert_eq!(o.resolved_q_name, "BASE");
    assert_eq!(o.resolved_qmgr_name, "QM1");
    h.put(c, o.hobj, b"via alias");
    assert_eq!(h.depth("BASE"), 1);
    assert_eq!(h.get_body(c, o.hobj).unwrap(), b"via alias");
    assert_eq!(
        rc(h.try_open(c, "DANGLING", OpenOptions::OUTPUT)),
        ReasonCode::UnknownAliasBaseQ
    );
    assert_eq!(
        rc(h.try_open(c, "A2", OpenOptions::OUTPUT)),
        ReasonCode::AliasBaseQTypeError
    );
    assert_eq!(
        h.qm.queue_status("BASE", h.t()).unwrap().open_output_count,
        1
    );
}

#[test]
fn temporary_dynamic_queue_lives_with_its_handle() {
    let mut h = Harness::new();
    let c = h.conn();
    let o = h
        .try_open(c, "SYSTEM.DEFAULT.MODEL.QUEUE", OpenOptions::OUTPUT)
        .unwrap();
    assert!(o.object_name.starts_with("AMQ."));
    assert_eq!(o.resolved_q_name, o.object_name);
    let def = h.qm.queue(&o.object_name).unwrap();
    assert_eq!(def.queue_type, QueueType::Local);
    assert_eq!(
        def.attributes.definition_type,
        DefinitionType::TemporaryDynamic
    );
    assert!(h
        .qm
        .catalogue()
        .queues
        .iter()
        .all(|q| q.name != o.object_name));
    assert!(
        h.fx.is_empty(),
        "a temporary queue changes no saved definition"
    );
    let mut md = MessageDescriptor {
        persistence: 1,
        ..Default::default()
    };
    assert_eq!(
        rc(h.put_md(c, o.hobj, &mut md, PutOptionFlags::empty(), b"x")),
        ReasonCode::PersistentNotAllowed
    );
    h.put_sync(c, o.hobj, b"x");
    let t = h.t();
    h.qm.close(c, o.hobj, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert!(h.qm.queue(&o.object_name).is_none());
    assert!(!h.qm.in_unit_of_work(c), "work on it was backed out");
    // Disconnect also removes temporary queues.
    let o2 = h
        .try_open(c, "SYSTEM.DEFAULT.MODEL.QUEUE", OpenOptions::INPUT_SHARED)
        .unwrap();
    assert_ne!(o2.object_name, o.object_name);
    h.qm.disconnect(c, true, t, &mut h.fx);
    assert!(h.qm.queue(&o2.object_name).is_none());
}

#[test]
fn dynamic_names() {
    let mut h = Harness::new();
    let c = h.conn();
    let t = h.t();
    let mut od = ObjectDescriptor::queue("SYSTEM.DEFAULT.MODEL.QUEUE").unwrap();
    od.dynamic_q_name = ferry_mqi::FixedStr::new("MY.REPLY.*").unwrap();
    let o =
        h.qm.open(c, &od, OpenOptions::INPUT_SHARED, t, &mut h.fx)
            .unwrap();
    assert!(o.object_name.starts_with("MY.REPLY."));
    od.dynamic_q_name = ferry_mqi::FixedStr::new("FIXED.NAME").unwrap();
    h.qm.open(c, &od, OpenOptions::INPUT_SHARED, t, &mut h.fx)
        .unwrap();
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::INPUT_SHARED, t, &mut h.fx)),
        ReasonCode::ObjectAlreadyExists
    );
    od.dynamic_q_name = ferry_mqi::FixedStr::new("BAD*NAME").unwrap();
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::INPUT_SHARED, t, &mut h.fx)),
        ReasonCode::ObjectNameError
    );
}

#[test]
fn permanent_dynamic_queue_persists_and_close_delete_rules() {
    let mut h = Harness::new();
    h.define("PERM.MODEL", QueueType::Model, |a| {
        a.definition_type = DefinitionType::PermanentDynamic
    });
    let c = h.conn();
    h.fx.clear();
    let o = h.try_open(c, "PERM.MODEL", IO).unwrap();
    assert!(matches!(
        h.fx.as_slice(),
        [Effect::CatalogueChanged(crate::CatalogueChange::Queue(n))] if n == &o.resolved_q_name
    ));
    assert!(h
        .qm
        .catalogue()
        .queues
        .iter()
        .any(|q| q.name == o.object_name));
    h.put(c, o.hobj, b"x");
    let t = h.t();
    assert_eq!(
        rc(h.qm.close(c, o.hobj, CloseOptions::DELETE, t, &mut h.fx)),
        ReasonCode::QNotEmpty
    );
    h.qm.close(c, o.hobj, CloseOptions::DELETE_PURGE, t, &mut h.fx)
        .unwrap();
    assert!(h.qm.queue(&o.object_name).is_none());
    // Closing without DELETE keeps it; DELETE on a predefined queue is refused.
    let o = h.try_open(c, "PERM.MODEL", OpenOptions::OUTPUT).unwrap();
    h.qm.close(c, o.hobj, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert!(h.qm.queue(&o.object_name).is_some());
    h.local("Q");
    let q = h.open(c, "Q", OpenOptions::OUTPUT);
    assert_eq!(
        rc(h.qm.close(c, q, CloseOptions::DELETE, t, &mut h.fx)),
        ReasonCode::OptionNotValidForType
    );
}

#[test]
fn queue_manager_object_is_inquire_only() {
    let mut h = Harness::new();
    let c = h.conn();
    let t = h.t();
    let od = ObjectDescriptor {
        object_type: ObjectType::QMgr,
        ..Default::default()
    };
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::OUTPUT, t, &mut h.fx)),
        ReasonCode::OptionNotValidForType
    );
    h.qm.open(c, &od, OpenOptions::INQUIRE, t, &mut h.fx)
        .unwrap();
    let od = ObjectDescriptor {
        object_type: ObjectType::Listener,
        ..Default::default()
    };
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::INQUIRE, t, &mut h.fx)),
        ReasonCode::ObjectTypeError
    );
    // A topic needs a topic object or a topic string (2085 without either).
    let od = ObjectDescriptor {
        object_type: ObjectType::Topic,
        ..Default::default()
    };
    assert_eq!(
        rc(h.qm.open(c, &od, OpenOptions::OUTPUT, t, &mut h.fx)),
        ReasonCode::UnknownObjectName
    );
}

#[test]
fn put1_opens_puts_and_closes() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let t = h.t();
    let mut md = MessageDescriptor::default();
    h.qm.put1(
        c,
        &ObjectDescriptor::queue("Q").unwrap(),
        &mut md,
        &PutOptions::default(),
        Bytes::from_static(b"one"),
        t,
        &mut h.fx,
    )
    .unwrap();
    assert_eq!(h.depth("Q"), 1);
    assert!(h.qm.handle_status("Q").is_empty());
    assert_eq!(
        rc(h.qm.put1(
            c,
            &ObjectDescriptor::queue("NOPE").unwrap(),
            &mut md,
            &PutOptions::default(),
            Bytes::new(),
            t,
            &mut h.fx
        )),
        ReasonCode::UnknownObjectName
    );
}
