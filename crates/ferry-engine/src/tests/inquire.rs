//! MQINQ values for queues and the queue manager.

use super::*;
use ferry_mqi::inquire::selector as sel;
use ferry_mqi::{InquireValue, ObjectType};
use ferry_objects::queue::{Enablement, YesNo};

#[test]
fn queue_attributes_and_live_values() {
    let mut h = Harness::new();
    h.define("Q", QueueType::Local, |a| {
        a.get = Enablement::Disabled;
        a.def_persistence = YesNo::Yes;
        a.max_depth = 77;
        a.descr = "hello".into();
    });
    let c = h.conn();
    let o = h.open(c, "Q", OpenOptions::OUTPUT | OpenOptions::INQUIRE);
    h.put(c, o, b"x");
    let v =
        h.qm.inquire(
            c,
            o,
            &[
                sel::CURRENT_Q_DEPTH,
                sel::OPEN_INPUT_COUNT,
                sel::OPEN_OUTPUT_COUNT,
                sel::Q_TYPE,
                sel::Q_NAME,
                sel::INHIBIT_GET,
                sel::INHIBIT_PUT,
                sel::DEF_PERSISTENCE,
                sel::MAX_Q_DEPTH,
                sel::SHAREABILITY,
                sel::DEF_INPUT_OPEN_OPTION,
                sel::Q_DESC,
                sel::BASE_Q_NAME,
            ],
        )
        .unwrap();
    use InquireValue::{Int, Str};
    assert_eq!(
        v,
        vec![
            Int(1),
            Int(0),
            Int(1),
            Int(1),
            Str("Q".into()),
            Int(1),
            Int(0),
            Int(1),
            Int(77),
            Int(1),
            Int(2),
            Str("hello".into()),
            Str(String::new()),
        ]
    );
    assert_eq!(rc(h.qm.inquire(c, o, &[9999])), ReasonCode::SelectorError);
    let no_inq = h.open(c, "Q", OpenOptions::OUTPUT);
    assert_eq!(
        rc(h.qm.inquire(c, no_inq, &[sel::Q_TYPE])),
        ReasonCode::NotOpenForInquire
    );
}

#[test]
fn alias_inquire_answers_for_the_alias() {
    let mut h = Harness::new();
    h.local("BASE");
    h.define("A", QueueType::Alias, |a| a.target = "BASE".into());
    let c = h.conn();
    let o = h.open(c, "A", OpenOptions::INQUIRE);
    let v =
        h.qm.inquire(c, o, &[sel::Q_TYPE, sel::BASE_Q_NAME, sel::MAX_Q_DEPTH])
            .unwrap();
    assert_eq!(
        v,
        vec![
            InquireValue::Int(3),
            InquireValue::Str("BASE".into()),
            InquireValue::Int(-1)
        ]
    );
}

#[test]
fn queue_manager_attributes() {
    let mut h = Harness::new();
    let c = h.conn();
    let t = h.t();
    let od = ObjectDescriptor {
        object_type: ObjectType::QMgr,
        ..Default::default()
    };
    let o =
        h.qm.open(c, &od, OpenOptions::INQUIRE, t, &mut h.fx)
            .unwrap()
            .hobj;
    let v =
        h.qm.inquire(
            c,
            o,
            &[
                sel::Q_MGR_NAME,
                sel::MAX_MSG_LENGTH,
                sel::MAX_PRIORITY,
                sel::MAX_HANDLES,
                sel::MAX_UNCOMMITTED_MSGS,
                sel::COMMAND_LEVEL,
                sel::PLATFORM,
                sel::CODED_CHAR_SET_ID,
                sel::DEAD_LETTER_Q_NAME,
            ],
        )
        .unwrap();
    use InquireValue::{Int, Str};
    assert_eq!(
        v,
        vec![
            Str("QM1".into()),
            Int(4_194_304),
            Int(9),
            Int(256),
            Int(10_000),
            Int(940),
            Int(3),
            Int(1208),
            Str("SYSTEM.DEAD.LETTER.QUEUE".into()),
        ]
    );
    assert_eq!(
        rc(h.qm.inquire(c, o, &[sel::CURRENT_Q_DEPTH])),
        ReasonCode::SelectorError
    );
}
