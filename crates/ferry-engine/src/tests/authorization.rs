//! Authority checks: CONNECT at MQCONN, the open options at MQOPEN and MQPUT1,
//! alternate-user authority, and the creator's hold on its dynamic queues.

use super::*;
use crate::PrincipalDirectory;
use ferry_security::oam::{
    Authorities, Authority, EntityType, Principal, Profile, ProfileObjectType, RecordKey,
    QMGR_PROFILE,
};
use std::rc::Rc;

/// Users as the tests declare them: `admin` administers; `*-apps` users are in `apps`.
#[derive(Debug)]
struct Directory;

impl PrincipalDirectory for Directory {
    fn principal(&self, user: &str) -> Principal {
        Principal {
            user: user.to_string(),
            groups: if user.ends_with("-apps") {
                vec!["apps".into()]
            } else {
                vec![]
            },
            administrator: user == "admin",
        }
    }
}

fn grant(
    h: &mut Harness,
    t: ProfileObjectType,
    profile: &str,
    e: EntityType,
    who: &str,
    a: &[Authority],
) {
    let key = RecordKey::new(t, Profile::parse(profile).unwrap(), e, who).unwrap();
    h.qm.set_authority_record(
        key,
        Authorities::of(a),
        Authorities::NONE,
        &mut Effects::new(),
    );
}

fn checked() -> Harness {
    let mut h = Harness::new();
    h.qm.set_principal_directory(Some(Rc::new(Directory)));
    h.define("APP.IN", QueueType::Local, |_| {});
    h.define("APP.ALIAS", QueueType::Alias, |a| {
        a.target = "APP.IN".into()
    });
    h
}

fn connect(h: &mut Harness, user: &str) -> Result<ConnId, MqError> {
    let t = h.t();
    let info = ConnectionInfo {
        user_id: user.into(),
        ..ConnectionInfo::default()
    };
    h.qm.connect(info, t, &mut h.fx)
}

fn denials(h: &mut Harness) -> Vec<(String, String, Authorities)> {
    h.fx.drain()
        .filter_map(|e| match e {
            Effect::NotAuthorized {
                user,
                object,
                missing,
                ..
            } => Some((user, object, missing)),
            _ => None,
        })
        .collect()
}

#[test]
fn connect_needs_connect_on_the_queue_manager() {
    use Authority::*;
    let mut h = checked();
    let e = connect(&mut h, "fred").unwrap_err();
    assert_eq!(e.reason, ReasonCode::NotAuthorized);
    assert_eq!(
        denials(&mut h),
        [("fred".into(), "QM1".into(), Authorities::of(&[Connect]))]
    );
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Group,
        "apps",
        &[Connect],
    );
    assert!(connect(&mut h, "fred").is_err(), "fred is not in apps");
    assert!(connect(&mut h, "jo-apps").is_ok());
    assert!(
        connect(&mut h, "admin").is_ok(),
        "administrators need no record"
    );
}

#[test]
fn opens_need_what_their_options_ask_for() {
    use Authority::*;
    let mut h = checked();
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Principal,
        "fred",
        &[Connect],
    );
    grant(
        &mut h,
        ProfileObjectType::Queue,
        "APP.**",
        EntityType::Principal,
        "fred",
        &[Put],
    );
    let c = connect(&mut h, "fred").unwrap();
    assert!(h.try_open(c, "APP.IN", OpenOptions::OUTPUT).is_ok());
    let e = h
        .try_open(c, "APP.IN", OpenOptions::INPUT_SHARED | OpenOptions::OUTPUT)
        .unwrap_err();
    assert_eq!(e.reason, ReasonCode::NotAuthorized);
    assert_eq!(
        denials(&mut h),
        [("fred".into(), "APP.IN".into(), Authorities::of(&[Get]))]
    );
    // An alias is checked by its own name; the queue it stands for is not.
    assert!(h.try_open(c, "APP.ALIAS", OpenOptions::OUTPUT).is_ok());
    grant(
        &mut h,
        ProfileObjectType::Queue,
        "APP.ALIAS",
        EntityType::Principal,
        "fred",
        &[],
    );
    assert_eq!(
        h.try_open(c, "APP.ALIAS", OpenOptions::OUTPUT)
            .unwrap_err()
            .reason,
        ReasonCode::NotAuthorized,
        "a more specific record with no authority narrows APP.**"
    );
    // An unknown name is refused for want of authority before it is looked up.
    assert_eq!(
        h.try_open(c, "OTHER", OpenOptions::OUTPUT)
            .unwrap_err()
            .reason,
        ReasonCode::NotAuthorized
    );
    // Inquiring on the queue manager needs INQ on it.
    let qmgr = ObjectDescriptor {
        object_type: ferry_mqi::ObjectType::QMgr,
        ..ObjectDescriptor::default()
    };
    let t = h.t();
    let e =
        h.qm.open(c, &qmgr, OpenOptions::INQUIRE, t, &mut h.fx)
            .unwrap_err();
    assert_eq!(e.reason, ReasonCode::NotAuthorized);
}

#[test]
fn put1_is_checked_as_an_open_for_output() {
    use Authority::*;
    let mut h = checked();
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Principal,
        "fred",
        &[Connect],
    );
    let c = connect(&mut h, "fred").unwrap();
    let t = h.t();
    let mut md = MessageDescriptor::default();
    let e =
        h.qm.put1(
            c,
            &ObjectDescriptor::queue("APP.IN").unwrap(),
            &mut md,
            &PutOptions::default(),
            Bytes::from_static(b"x"),
            t,
            &mut h.fx,
        )
        .unwrap_err();
    assert_eq!(e.reason, ReasonCode::NotAuthorized);
}

#[test]
fn alternate_user_authority_needs_altusr_and_the_alternate_users_authority() {
    use Authority::*;
    let mut h = checked();
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Principal,
        "svc",
        &[Connect],
    );
    grant(
        &mut h,
        ProfileObjectType::Queue,
        "APP.IN",
        EntityType::Principal,
        "bob",
        &[Put],
    );
    let c = connect(&mut h, "svc").unwrap();
    let mut od = ObjectDescriptor::queue("APP.IN").unwrap();
    od.alternate_user_id = ferry_mqi::FixedStr::truncating("bob");
    let o = OpenOptions::OUTPUT | OpenOptions::ALTERNATE_USER_AUTHORITY;
    let t = h.t();
    assert_eq!(
        h.qm.open(c, &od, o, t, &mut h.fx).unwrap_err().reason,
        ReasonCode::NotAuthorized,
        "svc lacks ALTUSR"
    );
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Principal,
        "svc",
        &[Connect, AltUsr],
    );
    assert!(h.qm.open(c, &od, o, t, &mut h.fx).is_ok(), "bob may put");
    od.alternate_user_id = ferry_mqi::FixedStr::truncating("eve");
    assert_eq!(
        h.qm.open(c, &od, o, t, &mut h.fx).unwrap_err().reason,
        ReasonCode::NotAuthorized,
        "eve may not"
    );
}

#[test]
fn the_creator_of_a_temporary_queue_holds_every_authority_on_it() {
    use Authority::*;
    let mut h = checked();
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Principal,
        "fred",
        &[Connect],
    );
    grant(
        &mut h,
        ProfileObjectType::Queue,
        "SYSTEM.DEFAULT.MODEL.QUEUE",
        EntityType::Principal,
        "fred",
        &[Get, Inq],
    );
    let c = connect(&mut h, "fred").unwrap();
    let made = h
        .try_open(
            c,
            "SYSTEM.DEFAULT.MODEL.QUEUE",
            OpenOptions::INPUT_EXCLUSIVE,
        )
        .unwrap();
    assert!(h
        .try_open(c, &made.object_name, OpenOptions::OUTPUT)
        .is_ok());
    let other = {
        grant(
            &mut h,
            ProfileObjectType::Qmgr,
            QMGR_PROFILE,
            EntityType::Principal,
            "jim",
            &[Connect],
        );
        connect(&mut h, "jim").unwrap()
    };
    assert_eq!(
        h.try_open(other, &made.object_name, OpenOptions::OUTPUT)
            .unwrap_err()
            .reason,
        ReasonCode::NotAuthorized,
        "others need a record, as for any queue"
    );
}

#[test]
fn without_a_directory_nothing_is_checked() {
    let mut h = Harness::new();
    h.define("APP.IN", QueueType::Local, |_| {});
    let c = connect(&mut h, "fred").unwrap();
    assert!(h
        .try_open(c, "APP.IN", OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED)
        .is_ok());
}

#[test]
fn topics_need_pub_and_sub_on_the_node_or_an_administrative_node_above_it() {
    use ferry_mqi::subscription::SubscriptionDescriptor;
    use Authority::*;
    let mut h = checked();
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        EntityType::Principal,
        "fred",
        &[Connect],
    );
    grant(
        &mut h,
        ProfileObjectType::Queue,
        "SYSTEM.NDURABLE.MODEL.QUEUE",
        EntityType::Principal,
        "fred",
        &[Get],
    );
    let fred = connect(&mut h, "fred").unwrap();
    let t = h.t();
    let open = |h: &mut Harness, topic: &str| {
        h.qm.open_topic(fred, "", topic, OpenOptions::OUTPUT, &mut h.fx)
    };
    assert_eq!(
        rc(open(&mut h, "Sports/Football")),
        ReasonCode::NotAuthorized
    );
    assert_eq!(
        denials(&mut h),
        [(
            "fred".into(),
            "SYSTEM.BASE.TOPIC".into(),
            Authorities::of(&[Pub])
        )]
    );
    // PUB on an ancestor's topic object covers the subtree; SUB is separate.
    let def = ferry_objects::TopicDefinition::new("SPORTS", "Sports");
    h.qm.define_topic(def, false, &mut h.fx).unwrap();
    grant(
        &mut h,
        ProfileObjectType::Topic,
        "SPORTS",
        EntityType::Principal,
        "fred",
        &[Pub],
    );
    open(&mut h, "Sports/Football").unwrap();
    assert_eq!(rc(open(&mut h, "News")), ReasonCode::NotAuthorized);
    let sd = SubscriptionDescriptor::managed("Sports/Football");
    let sub = h.qm.subscribe(fred, &sd, None, None, t, &mut h.fx);
    assert_eq!(rc(sub), ReasonCode::NotAuthorized);
    assert_eq!(
        denials(&mut h).last().map(|d| d.1.clone()),
        Some("SPORTS".into()),
        "the refusal names the nearest topic object"
    );
    grant(
        &mut h,
        ProfileObjectType::Topic,
        "SYSTEM.BASE.TOPIC",
        EntityType::Principal,
        "fred",
        &[Sub],
    );
    h.qm.subscribe(fred, &sd, None, None, t, &mut h.fx).unwrap();
}

/// Distributed queuing (`crate::name_resolution`): a remote definition is checked as
/// named, as an alias is; a queue named with another queue manager's name is checked on
/// the transmission queue it resolves to.
#[test]
fn remote_destinations_are_checked_on_the_definition_or_the_transmission_queue() {
    let mut h = checked();
    h.define("QM2", QueueType::Local, |a| {
        a.usage = ferry_objects::queue::Usage::TransmissionQueue
    });
    h.define("R", QueueType::Remote, |a| {
        a.remote_name = "APP".into();
        a.remote_qmgr_name = "QM2".into();
    });
    let (t, e) = (ProfileObjectType::Queue, EntityType::Group);
    grant(
        &mut h,
        ProfileObjectType::Qmgr,
        QMGR_PROFILE,
        e,
        "apps",
        &[Authority::Connect],
    );
    grant(&mut h, t, "R", e, "apps", &[Authority::Put]);
    let c = connect(&mut h, "bob-apps").unwrap();
    h.try_open(c, "R", OpenOptions::OUTPUT).unwrap();
    let mut od = ObjectDescriptor::queue("APP").unwrap();
    od.object_qmgr_name = ferry_mqi::FixedStr::new("QM2").unwrap();
    let tm = h.t();
    let refused = h.qm.open(c, &od, OpenOptions::OUTPUT, tm, &mut h.fx);
    assert_eq!(rc(refused), ReasonCode::NotAuthorized);
    assert_eq!(
        denials(&mut h),
        [(
            "bob-apps".to_string(),
            "QM2".to_string(),
            Authorities::of(&[Authority::Put])
        )]
    );
    grant(&mut h, t, "QM2", e, "apps", &[Authority::Put]);
    h.qm.open(c, &od, OpenOptions::OUTPUT, tm, &mut h.fx)
        .unwrap();
}
