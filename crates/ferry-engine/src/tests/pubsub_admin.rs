//! Administering subscriptions (DEFINE, ALTER, DELETE SUB) and what DISPLAY SUB,
//! SBSTATUS, TPSTATUS and PUBSUB read.

use super::*;
use crate::pubsub::publish::SUB_USER_DATA_PROPERTY;
use crate::selection::MessageFilter;
use crate::SubscriptionId;
use ferry_mqi::subscription::{SubscribeOptions as SO, SubscriptionDescriptor};
use ferry_mqi::{CloseOptions, MessageProperties, PropertyRef};
use ferry_objects::subscription::{
    DestinationClass, PublishPriority, SubscriptionKind, YesNo, SYSTEM_DEFAULT_SUB,
};
use ferry_objects::topic::TopicEnablement;
use ferry_objects::{AdminError, SubscriptionAttributes, SubscriptionDefinition, TopicDefinition};
use std::rc::Rc;

fn sub_def(name: &str, topic: &str, dest: &str) -> SubscriptionDefinition {
    SubscriptionDefinition {
        name: name.into(),
        attributes: SubscriptionAttributes {
            topic_string: topic.into(),
            destination: dest.into(),
            sub_user: "admin".into(),
            ..SubscriptionAttributes::default()
        },
    }
}

fn define(h: &mut Harness, def: SubscriptionDefinition) -> Result<SubscriptionId, AdminError> {
    let t = h.t();
    h.qm.define_subscription(def, false, None, t, &mut h.fx)
}

fn publish(h: &mut Harness, c: ConnId, topic: &str, body: &[u8], retain: bool) {
    let ph =
        h.qm.open_topic(c, "", topic, OpenOptions::OUTPUT, &mut h.fx)
            .unwrap()
            .hobj;
    let mut md = MessageDescriptor::default();
    let mut o = PutOptionFlags::NO_SYNCPOINT;
    if retain {
        o |= PutOptionFlags::RETAIN;
    }
    h.put_md(c, ph, &mut md, o, body).unwrap();
    let t = h.t();
    h.qm.close(c, ph, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
}

fn reason(r: Result<impl std::fmt::Debug, AdminError>) -> ReasonCode {
    r.expect_err("refused").reason()
}

fn saved(h: &Harness, name: &str) -> bool {
    h.qm.catalogue()
        .subscriptions
        .iter()
        .any(|s| s.name == name)
}

#[test]
fn a_defined_subscription_is_durable_admin_and_receives_publications() {
    let mut h = Harness::new();
    h.local("APP.FEED");
    let mut def = sub_def("APP.SUB", "Prices/EUR/+", "APP.FEED");
    def.attributes.user_data = "desk=fx".into();
    def.attributes.pub_priority = PublishPriority::P5;
    let id = define(&mut h, def).unwrap();
    assert!(saved(&h, "APP.SUB"), "saved in the catalogue");
    assert!(h.fx.drain().any(|e| matches!(
        &e,
        Effect::CatalogueChanged(crate::CatalogueChange::Subscription(n)) if n == "APP.SUB"
    )));
    let shown = h.qm.subscription_definition("APP.SUB").unwrap();
    let a = &shown.attributes;
    assert_eq!(a.sub_type, SubscriptionKind::Admin);
    assert_eq!(a.durable, YesNo::Yes);
    assert_eq!(a.sub_id, id.to_string());
    assert_eq!(a.destination, "APP.FEED");
    assert_eq!(a.creation_date, "2024-01-01");
    assert_eq!(
        h.qm.subscription_definition_by_id(&id).unwrap().name,
        "APP.SUB"
    );

    let p = h.conn();
    publish(&mut h, p, "Prices/EUR/GBP", b"0.86", false);
    publish(&mut h, p, "Prices/USD/GBP", b"0.79", false);
    assert_eq!(h.depth("APP.FEED"), 1);
    let c = h.conn();
    let q = h.open(c, "APP.FEED", OpenOptions::INPUT_AS_Q_DEF);
    let got = h.get_now(c, q, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(&got.data[..], b"0.86");
    assert_eq!(got.md.priority, 5);
    assert_eq!(got.md.correl_id, id.0);
    assert_eq!(got.md.user_identifier.as_str(), "admin");
    assert!(matches!(
        MessageProperties::find(&got.properties, SUB_USER_DATA_PROPERTY),
        Some(PropertyRef::String("desk=fx"))
    ));
    let status = &h.qm.subscription_status_records()[0];
    assert_eq!((status.messages, status.sub_type.as_str()), (1, "ADMIN"));
}

#[test]
fn topicobj_and_topicstr_combine_and_an_alias_destination_resolves() {
    let mut h = Harness::new();
    h.local("BASE.Q");
    h.define("ALIAS.Q", QueueType::Alias, |a| a.target = "BASE.Q".into());
    h.qm.define_topic(TopicDefinition::new("PRICES", "Prices"), false, &mut h.fx)
        .unwrap();
    let mut def = sub_def("S", "EUR/+", "ALIAS.Q");
    def.attributes.topic_object = "PRICES".into();
    define(&mut h, def).unwrap();
    let a = h.qm.subscription_definition("S").unwrap().attributes;
    assert_eq!(a.topic_string, "Prices/EUR/+");
    assert_eq!(a.topic_object, "PRICES");
    assert_eq!(a.destination, "BASE.Q", "DEST names the local queue");
    let p = h.conn();
    publish(&mut h, p, "Prices/EUR/GBP", b"x", false);
    assert_eq!(h.depth("BASE.Q"), 1);

    let mut unknown = sub_def("S2", "", "BASE.Q");
    unknown.attributes.topic_object = "NOPE".into();
    assert_eq!(
        reason(define(&mut h, unknown)),
        ReasonCode::UnknownObjectName
    );
    assert_eq!(
        reason(define(&mut h, sub_def("S3", "", "BASE.Q"))),
        ReasonCode::UnknownObjectName,
        "neither TOPICSTR nor TOPICOBJ"
    );
}

#[test]
fn define_refuses_what_cannot_work() {
    let mut h = Harness::new();
    h.local("Q");
    assert_eq!(
        reason(define(&mut h, sub_def("S", "a", "NOT.THERE"))),
        ReasonCode::UnknownObjectName
    );
    assert_eq!(
        reason(define(&mut h, sub_def("S", "a", ""))),
        ReasonCode::InvalidDestination
    );
    assert_eq!(
        reason(define(
            &mut h,
            sub_def("S", "a", "SYSTEM.DEFAULT.MODEL.QUEUE")
        )),
        ReasonCode::InvalidDestination
    );
    let mut elsewhere = sub_def("S", "a", "Q");
    elsewhere.attributes.dest_qmgr = "QM2".into();
    assert_eq!(
        reason(define(&mut h, elsewhere)),
        ReasonCode::UnknownObjectQMgr
    );
    let mut here = sub_def("S", "a", "Q");
    here.attributes.dest_qmgr = "QM1".into();
    define(&mut h, here).unwrap();
    assert!(matches!(
        define(&mut h, sub_def("S", "a", "Q")),
        Err(AdminError::AlreadyExists { .. })
    ));
    let mut selector = sub_def("SEL", "a", "Q");
    selector.attributes.selector = "a = ".into();
    assert_eq!(
        reason(define(&mut h, selector)),
        ReasonCode::SelectorSyntaxError,
        "a selector the caller could not compile"
    );
    h.qm.define_topic(
        {
            let mut t = TopicDefinition::new("NOSUB", "closed");
            t.attributes.subscribe = TopicEnablement::Disabled;
            t
        },
        false,
        &mut h.fx,
    )
    .unwrap();
    assert_eq!(
        reason(define(&mut h, sub_def("S4", "closed/x", "Q"))),
        ReasonCode::SubInhibited
    );
    assert!(!saved(&h, "S4"));
}

struct Always(bool);
impl MessageFilter for Always {
    fn matches(&self, _: &MessageDescriptor, _: &[u8]) -> bool {
        self.0
    }
}

#[test]
fn the_selector_compiled_by_the_caller_filters_copies() {
    let mut h = Harness::new();
    h.local("Q");
    let mut def = sub_def("S", "t", "Q");
    def.attributes.selector = "never".into();
    let t = h.t();
    h.qm.define_subscription(def, false, Some(Rc::new(Always(false))), t, &mut h.fx)
        .unwrap();
    let a = h.qm.subscription_definition("S").unwrap().attributes;
    assert_eq!(a.selector, "never");
    assert_eq!(a.selector_type.keyword(), "STANDARD");
    let p = h.conn();
    publish(&mut h, p, "t", b"x", false);
    assert_eq!(h.depth("Q"), 0);
}

#[test]
fn a_managed_definition_makes_its_queue_and_delete_removes_it() {
    let mut h = Harness::new();
    let mut def = sub_def("M", "news/#", "");
    def.attributes.dest_class = DestinationClass::Managed;
    let id = define(&mut h, def).unwrap();
    let dest =
        h.qm.subscription_definition("M")
            .unwrap()
            .attributes
            .destination;
    assert!(dest.starts_with("SYSTEM.MANAGED.DURABLE."), "{dest}");
    let p = h.conn();
    publish(&mut h, p, "news/today", b"x", false);
    assert_eq!(h.depth(&dest), 1);
    let mut with_dest = sub_def("M2", "news/#", "Q");
    with_dest.attributes.dest_class = DestinationClass::Managed;
    assert!(matches!(
        define(&mut h, with_dest),
        Err(AdminError::Invalid(_))
    ));
    let t = h.t();
    h.qm.delete_subscription_by_id(&id, t, &mut h.fx).unwrap();
    assert!(
        h.qm.queue(&dest).is_none(),
        "the managed queue went with it"
    );
    assert!(!saved(&h, "M"));
    assert_eq!(
        rc(h.qm.delete_subscription_by_id(&id, t, &mut h.fx)),
        ReasonCode::NoSubscription
    );
}

#[test]
fn retained_publications_reach_a_new_definition() {
    let mut h = Harness::new();
    h.local("Q");
    h.local("ONREQ");
    let p = h.conn();
    publish(&mut h, p, "price/apple", b"1.20", true);
    define(&mut h, sub_def("S", "price/#", "Q")).unwrap();
    assert_eq!(h.depth("Q"), 1);
    let mut on_request = sub_def("R", "price/#", "ONREQ");
    on_request.attributes.request_only = ferry_objects::subscription::RequestOnly::Yes;
    define(&mut h, on_request).unwrap();
    assert_eq!(h.depth("ONREQ"), 0, "REQONLY(YES): only on MQSUBRQ");
    // A destination that cannot take it: the subscription is not made.
    h.define("FULL", QueueType::Local, |a| a.max_depth = 0);
    assert_eq!(
        reason(define(&mut h, sub_def("F", "price/#", "FULL"))),
        ReasonCode::RetainedNotDelivered
    );
    assert!(h.qm.subscription_definition("F").is_none());
}

#[test]
fn alter_changes_what_mq_allows_and_refuses_the_rest() {
    let mut h = Harness::new();
    h.local("Q1");
    h.local("Q2");
    define(&mut h, sub_def("S", "a/b", "Q1")).unwrap();
    h.now += 60_000;
    let t = h.t();
    let mut def = h.qm.subscription_definition("S").unwrap();
    def.attributes.user_data = "changed".into();
    def.attributes.destination = "Q2".into();
    def.attributes.pub_priority = PublishPriority::AsQueueDefault;
    def.attributes.expiry = 600;
    h.qm.alter_subscription(def, t, &mut h.fx).unwrap();
    let a = h.qm.subscription_definition("S").unwrap().attributes;
    assert_eq!(a.user_data, "changed");
    assert_eq!(a.destination, "Q2");
    assert_eq!(a.expiry, 600);
    assert_eq!(a.alteration_time, "00.01.00");
    assert_eq!(a.creation_time, "00.00.00");
    let record =
        h.qm.catalogue()
            .subscriptions
            .into_iter()
            .find(|s| s.name == "S")
            .unwrap();
    assert_eq!(record.user_data, "changed");
    assert_eq!(record.details.expiry, 600);

    for (kw, change, code) in [
        (
            "TOPICSTR",
            Box::new(|a: &mut SubscriptionAttributes| a.topic_string = "x".into())
                as Box<dyn Fn(&mut SubscriptionAttributes)>,
            ReasonCode::TopicNotAlterable,
        ),
        (
            "SELECTOR",
            Box::new(|a: &mut SubscriptionAttributes| a.selector = "x = 1".into()),
            ReasonCode::SelectorNotAlterable,
        ),
        (
            "SUBLEVEL",
            Box::new(|a: &mut SubscriptionAttributes| a.sub_level = 3),
            ReasonCode::SublevelNotAlterable,
        ),
        (
            "DESTCLAS",
            Box::new(|a: &mut SubscriptionAttributes| a.dest_class = DestinationClass::Managed),
            ReasonCode::DestClassNotAlterable,
        ),
    ] {
        let mut def = h.qm.subscription_definition("S").unwrap();
        change(&mut def.attributes);
        let r = h.qm.alter_subscription(def, t, &mut h.fx);
        assert_eq!(reason(r), code, "{kw}");
    }
    let mut def = h.qm.subscription_definition("S").unwrap();
    def.attributes.destination = "NOPE".into();
    assert_eq!(
        reason(h.qm.alter_subscription(def, t, &mut h.fx)),
        ReasonCode::UnknownObjectName
    );
    let missing = sub_def("NOPE", "a", "Q1");
    assert!(matches!(
        h.qm.alter_subscription(missing, t, &mut h.fx),
        Err(AdminError::NotFound { .. })
    ));
}

#[test]
fn define_replace_alters_an_existing_subscription() {
    let mut h = Harness::new();
    h.local("Q");
    let id = define(&mut h, sub_def("S", "a/b", "Q")).unwrap();
    let mut again = sub_def("S", "a/b", "Q");
    again.attributes.user_data = "new".into();
    let t = h.t();
    let same =
        h.qm.define_subscription(again, true, None, t, &mut h.fx)
            .unwrap();
    assert_eq!(same, id);
    assert_eq!(
        h.qm.subscription_definition("S")
            .unwrap()
            .attributes
            .user_data,
        "new"
    );
    let other_topic = sub_def("S", "a/c", "Q");
    assert_eq!(
        reason(h.qm.define_subscription(other_topic, true, None, t, &mut h.fx)),
        ReasonCode::TopicNotAlterable
    );
}

#[test]
fn definitions_survive_a_restart() {
    let mut h = Harness::new();
    h.local("Q");
    let mut def = sub_def("KEEP", "news/#", "Q");
    def.attributes.topic_object = String::new();
    def.attributes.ps_prop = ferry_objects::subscription::PublishSubscribeProperties::Rfh2;
    def.attributes.pub_appl_id = "app-id".into();
    let id = define(&mut h, def).unwrap();
    let mut catalogue = h.qm.catalogue();
    let subs = std::mem::take(&mut catalogue.subscriptions);
    let t = h.t();
    let mut h = Harness {
        qm: QueueManager::from_catalogue("QM1", catalogue, t),
        fx: Effects::new(),
        now: h.now,
    };
    assert!(h.qm.restore_subscriptions(subs, &|_| None, t).is_empty());
    let a = h.qm.subscription_definition("KEEP").unwrap().attributes;
    assert_eq!(a.sub_id, id.to_string());
    assert_eq!(a.sub_type, SubscriptionKind::Admin);
    assert_eq!(a.ps_prop.keyword(), "RFH2");
    assert_eq!(a.pub_appl_id, "app-id");
    let p = h.conn();
    publish(&mut h, p, "news/x", b"after", false);
    assert_eq!(h.depth("Q"), 1);
}

#[test]
fn delete_by_name_refuses_an_open_subscription() {
    let mut h = Harness::new();
    h.local("Q");
    let c = h.conn();
    let sd = SubscriptionDescriptor {
        options: SO::CREATE | SO::DURABLE | SO::MANAGED,
        sub_name: "API.SUB".into(),
        ..SubscriptionDescriptor::managed("x/#")
    };
    let t = h.t();
    let s = h.qm.subscribe(c, &sd, None, None, t, &mut h.fx).unwrap();
    let id = s.sub_id;
    assert_eq!(
        rc(h.qm.delete_subscription_by_id(&id, t, &mut h.fx)),
        ReasonCode::SubscriptionInUse
    );
    let api = h.qm.subscription_definition("API.SUB").unwrap().attributes;
    assert_eq!(api.sub_type, SubscriptionKind::Api);
    assert_eq!(
        h.qm.subscription_status_records()[0].active_connection,
        c.to_string()
    );
    h.qm.close(c, s.hsub, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    h.qm.delete_subscription("API.SUB", t, &mut h.fx).unwrap();
    assert!(h.qm.subscription_definitions().is_empty());
    assert!(QueueManager::parse_subscription_id(&id.to_string()) == Some(id));
    assert!(QueueManager::parse_subscription_id("XYZ").is_none());
    assert_eq!(SYSTEM_DEFAULT_SUB, "SYSTEM.DEFAULT.SUB");
}

#[test]
fn the_topic_tree_lists_objects_subscriptions_retained_and_publishers() {
    let mut h = Harness::new();
    h.local("Q");
    h.qm.define_topic(
        {
            let mut t = TopicDefinition::new("PRICES", "Prices");
            t.attributes.def_priority = 4;
            t.attributes.pub_scope = ferry_objects::topic::TopicScope::QMgr;
            t
        },
        false,
        &mut h.fx,
    )
    .unwrap();
    define(&mut h, sub_def("S", "Prices/EUR/#", "Q")).unwrap();
    let p = h.conn();
    publish(&mut h, p, "Prices/EUR/GBP", b"r", true);
    let open =
        h.qm.open_topic(p, "", "Sports/Tennis", OpenOptions::OUTPUT, &mut h.fx)
            .unwrap()
            .hobj;
    let nodes = h.qm.topic_nodes();
    for n in [
        "",
        "Prices",
        "Prices/EUR/#",
        "Prices/EUR/GBP",
        "Sports/Tennis",
    ] {
        assert!(nodes.contains(n), "{n} in {nodes:?}");
    }

    let all = h.qm.topic_node_statuses("#");
    assert_eq!(all.len(), nodes.len());
    let root = all.iter().find(|n| n.topic_string.is_empty()).unwrap();
    assert_eq!(root.admin, "SYSTEM.BASE.TOPIC");
    let prices = h.qm.topic_node_statuses("Prices/#");
    assert_eq!(
        prices
            .iter()
            .map(|n| n.topic_string.as_str())
            .collect::<Vec<_>>(),
        ["Prices", "Prices/EUR/#", "Prices/EUR/GBP"]
    );
    assert_eq!(prices[0].admin, "PRICES");
    assert_eq!(prices[0].resolved.default_priority, 4);
    assert_eq!(prices[0].pub_scope, "QMGR");
    assert_eq!(prices[0].sub_scope, "ALL");
    let gbp = &prices[2];
    assert_eq!(gbp.admin, "", "no object of its own");
    assert_eq!(gbp.resolved.default_priority, 4, "inherited");
    assert!(gbp.retained);
    assert_eq!(prices[1].sub_count, 1);
    let tennis = h.qm.topic_node_statuses("Sports/+");
    assert_eq!(tennis[0].pub_count, 1);
    let pubs = h.qm.publisher_statuses("#");
    assert_eq!(pubs.len(), 1);
    assert_eq!(pubs[0].active_connection, p.to_string());
    assert_eq!(pubs[0].topic_string, "Sports/Tennis");
    let t = h.t();
    h.qm.close(p, open, CloseOptions::empty(), t, &mut h.fx)
        .unwrap();
    assert!(h.qm.publisher_statuses("#").is_empty());
    assert!(h.qm.clear_retained("Prices/EUR/GBP", &mut h.fx));
    assert!(!h.qm.topic_nodes().contains("Prices/EUR/GBP"));
    assert!(!h.qm.clear_retained("Prices/EUR/GBP", &mut h.fx));
}
