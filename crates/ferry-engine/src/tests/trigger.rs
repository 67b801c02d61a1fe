//! Triggering: one test per condition of MQ's list (`crate::trigger`), and the
//! re-evaluation events.

use super::*;
use ferry_mqi::dead_letter::DEAD_LETTER_HEADER_LEN;
use ferry_mqi::descriptor::ENCODING_NATIVE;
use ferry_mqi::trigger::{TriggerMessage, FORMAT_TRIGGER};
use ferry_mqi::CloseOptions;
use ferry_objects::queue::{Enablement, TriggerType, Usage};
use ferry_objects::ProcessDefinition;

const INITQ: &str = "APP.INITQ";
const APPQ: &str = "APP.Q";
const PROC: &str = "APP.PROC";
const INPUT: OpenOptions = OpenOptions::INPUT_SHARED;

/// A harness with a process, an initiation queue and a triggered application queue of
/// `kind` (adjusted by `f`).
fn triggered(kind: TriggerType, f: impl FnOnce(&mut QueueAttributes)) -> Harness {
    let mut h = Harness::new();
    let mut p = ProcessDefinition::new(PROC);
    p.attributes.appl_id = "/usr/local/bin/serve".into();
    p.attributes.user_data = "user data".into();
    p.attributes.env_data = "env data".into();
    let t = h.t();
    let _ = t;
    h.qm.define_process(p, false, &mut h.fx).unwrap();
    h.local(INITQ);
    h.define(APPQ, QueueType::Local, |a| {
        a.trigger = true;
        a.trigger_type = kind;
        a.initiation_q = INITQ.into();
        a.process = PROC.into();
        a.trigger_data = "trigger data".into();
        f(a);
    });
    h.fx.clear();
    h
}

/// A trigger monitor: a connection with the initiation queue open for input.
fn monitor(h: &mut Harness) -> (ConnId, Hobj) {
    let c = h.conn();
    let hobj = h.open(c, INITQ, INPUT);
    (c, hobj)
}

/// A putter: a connection with the application queue open for output.
fn putter(h: &mut Harness) -> (ConnId, Hobj) {
    let c = h.conn();
    let hobj = h.open(c, APPQ, OpenOptions::OUTPUT);
    (c, hobj)
}

fn put_priority(h: &mut Harness, c: ConnId, hobj: Hobj, priority: i32) {
    let mut md = MessageDescriptor {
        priority,
        ..MessageDescriptor::default()
    };
    h.put_md(c, hobj, &mut md, PutOptionFlags::NO_SYNCPOINT, b"m")
        .unwrap();
}

/// The trigger messages on the initiation queue, got by the monitor.
fn trigger_messages(h: &mut Harness, (c, hobj): (ConnId, Hobj)) -> Vec<TriggerMessage> {
    let mut out = Vec::new();
    while let Ok(g) = h.get_now(c, hobj, GetOptionFlags::NO_SYNCPOINT) {
        assert_eq!(g.md.format, FORMAT_TRIGGER);
        assert_eq!(g.md.persistence, 0, "trigger messages are non-persistent");
        assert_eq!(g.md.msg_type, ferry_mqi::descriptor::msg_type::DATAGRAM);
        assert_eq!(g.md.put_appl_type, 7, "put by the queue manager");
        out.push(TriggerMessage::decode(&g.data, g.md.encoding).unwrap());
    }
    out
}

#[test]
fn first_triggers_when_the_queue_was_empty_with_mqs_fields() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"one");
    h.put(c, p, b"two");
    let tms = trigger_messages(&mut h, m);
    assert_eq!(tms.len(), 1, "FIRST: only the put on an empty queue");
    let tm = &tms[0];
    assert_eq!(tm.q_name.as_str(), APPQ);
    assert_eq!(tm.process_name.as_str(), PROC);
    assert_eq!(tm.trigger_data.as_str(), "trigger data");
    assert_eq!(tm.appl_type, 6, "MQAT_UNIX");
    assert_eq!(tm.appl_id.as_str(), "/usr/local/bin/serve");
    assert_eq!(tm.env_data.as_str(), "env data");
    assert_eq!(tm.user_data.as_str(), "user data");
    assert_eq!(h.depth(APPQ), 2, "the application's messages are untouched");
}

#[test]
fn first_triggers_again_once_the_queue_is_empty_again() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"one");
    let server = h.conn();
    let s = h.open(server, APPQ, INPUT);
    h.get_body(server, s).unwrap();
    h.qm.close(server, s, CloseOptions::empty(), h.t(), &mut h.fx)
        .unwrap();
    h.put(c, p, b"two");
    assert_eq!(trigger_messages(&mut h, m).len(), 2);
}

#[test]
fn every_triggers_on_each_message() {
    let mut h = triggered(TriggerType::Every, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    for _ in 0..3 {
        h.put(c, p, b"x");
    }
    assert_eq!(trigger_messages(&mut h, m).len(), 3);
}

#[test]
fn every_triggers_even_while_the_queue_is_open_for_input() {
    let mut h = triggered(TriggerType::Every, |_| {});
    let m = monitor(&mut h);
    let server = h.conn();
    h.open(server, APPQ, INPUT);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
}

#[test]
fn depth_triggers_at_trigdpth_and_turns_trigger_off() {
    let mut h = triggered(TriggerType::Depth, |a| a.trigger_depth = 3);
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"1");
    h.put(c, p, b"2");
    assert!(trigger_messages(&mut h, m).is_empty());
    h.fx.clear();
    h.put(c, p, b"3");
    assert!(
        h.fx.drain()
            .any(|e| matches!(e, Effect::CatalogueChanged(crate::CatalogueChange::Queue(ref n)) if n == APPQ)),
        "NOTRIGGER is saved"
    );
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
    assert!(
        !h.qm.queue(APPQ).unwrap().attributes.trigger,
        "MQ sets NOTRIGGER"
    );
    h.put(c, p, b"4");
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn messages_below_trigmpri_do_not_count() {
    let mut h = triggered(TriggerType::First, |a| a.trigger_msg_priority = 5);
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    put_priority(&mut h, c, p, 4);
    assert!(
        trigger_messages(&mut h, m).is_empty(),
        "priority 4 < TRIGMPRI(5)"
    );
    put_priority(&mut h, c, p, 5);
    assert_eq!(
        trigger_messages(&mut h, m).len(),
        1,
        "no message of priority 5 or more was there before"
    );
    put_priority(&mut h, c, p, 9);
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn first_and_depth_do_not_trigger_while_the_queue_is_open_for_input() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let server = h.conn();
    let s = h.open(server, APPQ, INPUT);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());
    // The server closes with a message left: MQ triggers then.
    h.qm.close(server, s, CloseOptions::empty(), h.t(), &mut h.fx)
        .unwrap();
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
}

#[test]
fn closing_an_empty_queue_does_not_trigger() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let server = h.conn();
    let s = h.open(server, APPQ, INPUT);
    h.qm.close(server, s, CloseOptions::empty(), h.t(), &mut h.fx)
        .unwrap();
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn notrigger_and_trigtype_none_make_nothing() {
    let mut h = triggered(TriggerType::First, |a| a.trigger = false);
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());

    let mut h = triggered(TriggerType::None, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn no_initiation_queue_no_trigger() {
    let mut h = triggered(TriggerType::Every, |a| a.initiation_q = String::new());
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());

    let mut h = triggered(TriggerType::Every, |a| a.initiation_q = "NO.SUCH.Q".into());
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn nothing_triggers_until_a_monitor_opens_the_initiation_queue() {
    let mut h = triggered(TriggerType::First, |_| {});
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert_eq!(h.depth(INITQ), 0, "no trigger monitor: no trigger message");
    // The monitor starts: the queue it serves holds a message, so it triggers now.
    let m = monitor(&mut h);
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
    // A second monitor opening it is not a new event.
    let other = h.conn();
    h.open(other, INITQ, INPUT);
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn the_process_must_exist_except_on_a_transmission_queue() {
    let mut h = triggered(TriggerType::Every, |a| a.process = "NO.SUCH.PROC".into());
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(
        trigger_messages(&mut h, m).is_empty(),
        "named process missing"
    );

    let mut h = triggered(TriggerType::Every, |a| a.process = String::new());
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(
        trigger_messages(&mut h, m).is_empty(),
        "blank process, normal queue"
    );

    let mut h = triggered(TriggerType::Every, |a| {
        a.process = String::new();
        a.usage = Usage::TransmissionQueue;
        a.trigger_data = "QM1.TO.QM2".into();
    });
    let m = monitor(&mut h);
    let c = h.conn();
    let xq = h.open(c, APPQ, OpenOptions::OUTPUT | OpenOptions::SET_ALL_CONTEXT);
    let mut md = MessageDescriptor::default();
    h.put_md(c, xq, &mut md, PutOptionFlags::SET_ALL_CONTEXT, b"xmit")
        .unwrap();
    let tms = trigger_messages(&mut h, m);
    assert_eq!(tms.len(), 1, "a transmission queue needs no process");
    assert_eq!(tms[0].trigger_data.as_str(), "QM1.TO.QM2");
    assert!(tms[0].process_name.is_blank());
    assert_eq!(tms[0].appl_type, 0);
}

#[test]
fn get_inhibited_queues_do_not_trigger_until_get_is_enabled() {
    let mut h = triggered(TriggerType::First, |a| a.get = Enablement::Disabled);
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());
    let mut def = h.qm.queue(APPQ).unwrap();
    def.attributes.get = Enablement::Enabled;
    let t = h.t();
    h.qm.alter_queue(def, false, t, &mut h.fx).unwrap();
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
}

#[test]
fn turning_trigger_on_over_waiting_messages_triggers() {
    let mut h = triggered(TriggerType::First, |a| a.trigger = false);
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());
    let mut def = h.qm.queue(APPQ).unwrap();
    def.attributes.trigger = true;
    let t = h.t();
    h.qm.alter_queue(def, false, t, &mut h.fx).unwrap();
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
}

#[test]
fn depth_re_armed_by_mqset_triggers_when_the_depth_is_there() {
    let mut h = triggered(TriggerType::Depth, |a| a.trigger_depth = 2);
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"1");
    h.put(c, p, b"2");
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
    // The served application turns TRIGGER on again with MQSET: two messages wait.
    let app = h.conn();
    let s = h.open(app, APPQ, OpenOptions::SET);
    let t = h.t();
    h.qm.set(
        app,
        s,
        &[(
            ferry_mqi::inquire::selector::TRIGGER_CONTROL,
            ferry_mqi::InquireValue::Int(1),
        )],
        t,
        &mut h.fx,
    )
    .unwrap();
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
}

#[test]
fn a_put_under_syncpoint_triggers_when_its_unit_of_work_ends() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put_sync(c, p, b"x");
    assert_eq!(h.depth(INITQ), 0, "held with the unit of work");
    let t = h.t();
    h.qm.commit(c, t, &mut h.fx).unwrap();
    assert_eq!(trigger_messages(&mut h, m).len(), 1);

    // FIRST: put even when the unit of work backs out (the condition was met).
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put_sync(c, p, b"x");
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
    assert_eq!(h.depth(APPQ), 0);

    // EVERY: only a committed put's trigger message is put.
    let mut h = triggered(TriggerType::Every, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put_sync(c, p, b"x");
    let t = h.t();
    h.qm.backout(c, t, &mut h.fx).unwrap();
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn uncommitted_messages_count() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put_sync(c, p, b"uncommitted");
    let (c2, p2) = putter(&mut h);
    h.put(c2, p2, b"second");
    let t = h.t();
    h.qm.commit(c, t, &mut h.fx).unwrap();
    assert_eq!(
        trigger_messages(&mut h, m).len(),
        1,
        "the second put found an (uncommitted) message there"
    );
}

#[test]
fn a_full_initiation_queue_sends_the_trigger_message_to_the_dead_letter_queue() {
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    let mut def = h.qm.queue(INITQ).unwrap();
    def.attributes.put = Enablement::Disabled;
    let t = h.t();
    h.qm.alter_queue(def, false, t, &mut h.fx).unwrap();
    let (c, p) = putter(&mut h);
    h.put(c, p, b"x");
    assert!(trigger_messages(&mut h, m).is_empty());
    let dl = h.conn();
    let d = h.open(dl, "SYSTEM.DEAD.LETTER.QUEUE", INPUT);
    let g = h.get_now(dl, d, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(g.md.format.as_str(), "MQDEAD");
    let reason = i32::from_le_bytes([g.data[8], g.data[9], g.data[10], g.data[11]]);
    assert_eq!(reason, ReasonCode::PutInhibited.number());
    assert_eq!(&g.data[12..12 + INITQ.len()], INITQ.as_bytes());
    let tm = TriggerMessage::decode(&g.data[DEAD_LETTER_HEADER_LEN..], ENCODING_NATIVE).unwrap();
    assert_eq!(tm.q_name.as_str(), APPQ);
}

#[test]
fn without_a_dead_letter_queue_the_trigger_message_is_reported_and_dropped() {
    let mut h = triggered(TriggerType::First, |_| {});
    h.qm.qmgr.dead_letter_q = String::new();
    let m = monitor(&mut h);
    let mut def = h.qm.queue(INITQ).unwrap();
    def.attributes.max_depth = 0;
    let t = h.t();
    h.qm.alter_queue(def, false, t, &mut h.fx).unwrap();
    let (c, p) = putter(&mut h);
    h.fx.clear();
    h.put(c, p, b"x");
    assert!(h.fx.drain().any(|e| matches!(
        e,
        Effect::TriggerMessageDiscarded { ref queue, reason: ReasonCode::QFull, .. } if queue == APPQ
    )));
    assert!(trigger_messages(&mut h, m).is_empty());
}

#[test]
fn trigint_lets_first_trigger_again_on_a_queue_that_was_not_empty() {
    let mut h = triggered(TriggerType::First, |_| {});
    h.qm.qmgr.trigger_interval = 1000;
    let m = monitor(&mut h);
    let (c, p) = putter(&mut h);
    h.put(c, p, b"1");
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
    h.now += 500;
    h.put(c, p, b"2");
    assert!(trigger_messages(&mut h, m).is_empty(), "within TRIGINT");
    h.now += 600;
    h.put(c, p, b"3");
    assert_eq!(
        trigger_messages(&mut h, m).len(),
        1,
        "TRIGINT passed and nobody serves the queue"
    );
}

#[test]
fn reports_and_publications_trigger_too() {
    // A confirm-on-arrival report put on a triggered reply queue.
    let mut h = triggered(TriggerType::First, |_| {});
    let m = monitor(&mut h);
    h.local("OTHER.Q");
    let c = h.conn();
    let o = h.open(c, "OTHER.Q", OpenOptions::OUTPUT);
    let mut md = MessageDescriptor {
        report: ferry_mqi::report::options::COA,
        reply_to_q: ferry_mqi::FixedStr::truncating(APPQ),
        ..MessageDescriptor::default()
    };
    h.put_md(c, o, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    assert_eq!(h.depth(APPQ), 1, "the report arrived");
    assert_eq!(trigger_messages(&mut h, m).len(), 1);
}

#[test]
fn initiation_queues_are_shipped_with_the_default_process() {
    let h = Harness::new();
    assert!(h.qm.queue("SYSTEM.DEFAULT.INITIATION.QUEUE").is_some());
    assert!(h.qm.queue("SYSTEM.CHANNEL.INITQ").is_some());
    assert!(h.qm.process("SYSTEM.DEFAULT.PROCESS").is_some());
}

#[test]
fn older_queue_managers_get_the_triggering_objects_once() {
    let mut h = Harness::new();
    let mut catalogue = h.qm.catalogue();
    catalogue.processes.clear();
    catalogue
        .queues
        .retain(|q| q.name != "SYSTEM.DEFAULT.INITIATION.QUEUE");
    let mut qm = QueueManager::from_catalogue("QM1", catalogue, h.t());
    let t = h.t();
    let added = qm.define_missing_channel_queues(t, &mut h.fx);
    assert_eq!(
        added,
        vec![
            "SYSTEM.DEFAULT.INITIATION.QUEUE".to_string(),
            "SYSTEM.DEFAULT.PROCESS".to_string()
        ]
    );
    assert!(qm.define_missing_channel_queues(t, &mut h.fx).is_empty());
}

#[test]
fn a_process_opens_for_inquire_only_and_answers_its_attributes() {
    use ferry_mqi::inquire::selector as sel;
    use ferry_mqi::{InquireValue, ObjectType};
    let mut h = triggered(TriggerType::First, |_| {});
    let c = h.conn();
    let od = |name: &str| ObjectDescriptor {
        object_type: ObjectType::Process,
        object_name: ferry_mqi::FixedStr::truncating(name),
        ..ObjectDescriptor::default()
    };
    let t = h.t();
    let opened =
        h.qm.open(c, &od(PROC), OpenOptions::INQUIRE, t, &mut h.fx)
            .unwrap();
    let values =
        h.qm.inquire(
            c,
            opened.hobj,
            &[
                sel::PROCESS_NAME,
                sel::APPL_TYPE,
                sel::APPL_ID,
                sel::USER_DATA,
                sel::ENV_DATA,
            ],
        )
        .unwrap();
    assert_eq!(
        values,
        vec![
            InquireValue::Str(PROC.into()),
            InquireValue::Int(6),
            InquireValue::Str("/usr/local/bin/serve".into()),
            InquireValue::Str("user data".into()),
            InquireValue::Str("env data".into()),
        ]
    );
    assert_eq!(
        rc(h.qm.inquire(c, opened.hobj, &[sel::Q_NAME])),
        ReasonCode::SelectorError
    );
    assert_eq!(
        rc(h.qm.open(c, &od(PROC), OpenOptions::OUTPUT, t, &mut h.fx)),
        ReasonCode::OptionNotValidForType
    );
    assert_eq!(
        rc(h.qm.open(c, &od("NO.SUCH"), OpenOptions::INQUIRE, t, &mut h.fx)),
        ReasonCode::UnknownObjectName
    );
}
