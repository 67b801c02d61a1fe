//! Publish/subscribe: MQSUB, publishing with MQPUT to a topic, fan-out, delivery
//! policies, durable subscriptions, topic attributes.

use super::*;
use crate::pubsub::publish::{SUB_USER_DATA_PROPERTY, TOPIC_STRING_PROPERTY};
use crate::Subscribed;
use ferry_mqi::subscription::{SubscribeOptions as SO, SubscriptionDescriptor};
use ferry_mqi::{CloseOptions, MessageProperties, PropertyRef};
use ferry_objects::topic::{MessageDelivery, TopicEnablement, WildcardOperation};
use ferry_objects::TopicDefinition;

impl Harness {
    fn subscribe(&mut self, c: ConnId, sd: &SubscriptionDescriptor) -> Result<Subscribed, MqError> {
        let t = self.t();
        self.qm.subscribe(c, sd, None, None, t, &mut self.fx)
    }

    fn subscribe_to(&mut self, c: ConnId, sd: &SubscriptionDescriptor, q: Hobj) -> Subscribed {
        let t = self.t();
        self.qm
            .subscribe(c, sd, Some(q), None, t, &mut self.fx)
            .unwrap()
    }

    fn managed(&mut self, c: ConnId, topic: &str) -> Subscribed {
        self.subscribe(c, &SubscriptionDescriptor::managed(topic))
            .unwrap()
    }

    fn publisher(&mut self, c: ConnId, topic: &str) -> Hobj {
        self.qm
            .open_topic(c, "", topic, OpenOptions::OUTPUT, &mut self.fx)
            .unwrap()
            .hobj
    }

    fn publish(
        &mut self,
        c: ConnId,
        topic: &str,
        body: &[u8],
    ) -> Result<Option<ReasonCode>, MqError> {
        let h = self.publisher(c, topic);
        let mut md = MessageDescriptor::default();
        let r = self.put_md(c, h, &mut md, PutOptionFlags::NO_SYNCPOINT, body);
        self.close(c, h, CloseOptions::empty()).unwrap();
        r
    }

    fn close(
        &mut self,
        c: ConnId,
        h: Hobj,
        o: CloseOptions,
    ) -> Result<Option<ReasonCode>, MqError> {
        let t = self.t();
        self.qm.close(c, h, o, t, &mut self.fx)
    }

    fn topic_object(&mut self, name: &str, topic: &str, f: impl FnOnce(&mut TopicDefinition)) {
        let mut def = TopicDefinition::new(name, topic);
        f(&mut def);
        self.qm.define_topic(def, false, &mut self.fx).unwrap();
    }

    fn queue_exists(&self, name: &str) -> bool {
        self.qm.queues.lookup(name).is_some()
    }
}

fn property(encoded: &[u8], name: &str) -> Option<String> {
    match MessageProperties::find(encoded, name)? {
        PropertyRef::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn durable(name: &str, topic: &str) -> SubscriptionDescriptor {
    SubscriptionDescriptor {
        options: SO::CREATE | SO::DURABLE | SO::MANAGED,
        sub_name: name.to_string(),
        ..SubscriptionDescriptor::managed(topic)
    }
}

#[test]
fn a_managed_subscription_receives_each_publication_once_with_its_topic_and_sub_id() {
    let mut h = Harness::new();
    let (sub_conn, pub_conn) = (h.conn(), h.conn());
    let s = h.managed(sub_conn, "Price/Fruit/#");
    assert_eq!(s.topic_string, "Price/Fruit/#");
    assert!(s.destination.starts_with("SYSTEM.MANAGED.NDURABLE."));
    h.publish(pub_conn, "Price/Fruit/Apple", b"1.20").unwrap();
    h.publish(pub_conn, "Price/Vegetable/Leek", b"0.80")
        .unwrap();
    let q = s.hobj.unwrap();
    let got = h
        .get_now(sub_conn, q, GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert_eq!(&got.data[..], b"1.20");
    assert_eq!(
        got.md.correl_id, s.sub_id.0,
        "copies carry the SubId as CorrelId"
    );
    assert_eq!(
        property(&got.properties, TOPIC_STRING_PROPERTY).as_deref(),
        Some("Price/Fruit/Apple")
    );
    assert!(matches!(
        MessageProperties::find(&got.properties, crate::pubsub::publish::PUB_LEVEL_PROPERTY),
        Some(PropertyRef::Int32(9))
    ));
    assert_eq!(h.get_body(sub_conn, q), Err(ReasonCode::NoMsgAvailable));
}

#[test]
fn a_publication_reaches_every_matching_subscription_and_no_other() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let exact = h.managed(c, "a/b/c");
    let plus = h.managed(c, "a/+/c");
    let all = h.managed(c, "#");
    let other = h.managed(c, "a/b/d");
    let chars = h
        .subscribe(
            c,
            &SubscriptionDescriptor {
                options: SO::CREATE | SO::MANAGED | SO::WILDCARD_CHAR,
                ..SubscriptionDescriptor::managed("a/*")
            },
        )
        .unwrap();
    h.publish(p, "a/b/c", b"m").unwrap();
    for s in [&exact, &plus, &all, &chars] {
        assert_eq!(h.get_body(c, s.hobj.unwrap()), Ok(b"m".to_vec()));
    }
    assert_eq!(
        h.get_body(c, other.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
}

#[test]
fn a_persistent_publication_reaches_a_non_durable_subscriber_as_persistent_unlogged() {
    let mut h = Harness::new();
    h.qm.set_logging(true);
    let (c, p) = (h.conn(), h.conn());
    let s = h.managed(c, "t");
    let ph = h.publisher(p, "t");
    let mut md = MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    h.fx.drain_log();
    h.put_md(p, ph, &mut md, PutOptionFlags::NO_SYNCPOINT, b"p")
        .unwrap();
    assert_eq!(
        h.fx.drain_log().count(),
        0,
        "a temporary queue's copy is not logged"
    );
    let got = h
        .get_now(c, s.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert!(got.md.is_persistent(), "delivered as it was published");
}

#[test]
fn copies_share_the_publication_body() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let a = h.managed(c, "t");
    let b = h.managed(c, "t");
    h.publish(p, "t", &[7u8; 4096]).unwrap();
    let x = h
        .get_now(c, a.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    let y = h
        .get_now(c, b.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert_eq!(x.data.as_ptr(), y.data.as_ptr(), "one body, two copies");
}

#[test]
fn a_provided_queue_gets_copies_with_the_subscription_correl_id_and_user_data() {
    let mut h = Harness::new();
    h.local("APP.FEED");
    let (c, p) = (h.conn(), h.conn());
    let q = h.open(c, "APP.FEED", OpenOptions::INPUT_AS_Q_DEF);
    let sd = SubscriptionDescriptor {
        options: SO::CREATE | SO::SET_CORREL_ID,
        object_string: "Prices".into(),
        sub_user_data: "desk=fx".into(),
        sub_correl_id: id(9),
        pub_priority: 7,
        ..SubscriptionDescriptor::default()
    };
    let s = h.subscribe_to(c, &sd, q);
    assert_eq!(s.destination, "APP.FEED");
    assert_eq!(s.hobj, None);
    h.publish(p, "Prices", b"x").unwrap();
    let got = h.get_now(c, q, GetOptionFlags::NO_SYNCPOINT).unwrap();
    assert_eq!(got.md.correl_id, id(9));
    assert_eq!(got.md.priority, 7);
    assert_eq!(
        property(&got.properties, SUB_USER_DATA_PROPERTY).as_deref(),
        Some("desk=fx")
    );
    // Closing the subscription stops the copies; the provided queue stays.
    h.close(c, s.hsub, CloseOptions::empty()).unwrap();
    h.publish(p, "Prices", b"y").unwrap();
    assert_eq!(h.depth("APP.FEED"), 0);
}

#[test]
fn a_non_durable_subscription_and_its_queue_end_with_the_connection() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let s = h.managed(c, "t");
    h.publish(p, "t", b"unread").unwrap();
    assert!(h.queue_exists(&s.destination));
    let t = h.t();
    h.qm.disconnect(c, true, t, &mut h.fx);
    assert!(
        !h.queue_exists(&s.destination),
        "the managed queue went with its copies"
    );
    assert!(h.qm.subscription_statuses().is_empty());
    assert_eq!(h.publish(p, "t", b"x").unwrap(), None);
}

#[test]
fn a_durable_subscription_collects_publications_while_closed_until_removed() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let s = h.subscribe(c, &durable("SUB1", "news")).unwrap();
    assert!(s.destination.starts_with("SYSTEM.MANAGED.DURABLE."));
    h.close(c, s.hobj.unwrap(), CloseOptions::empty()).unwrap();
    h.close(c, s.hsub, CloseOptions::KEEP_SUB).unwrap();
    let t = h.t();
    h.qm.disconnect(c, true, t, &mut h.fx);
    h.publish(p, "news", b"while away").unwrap();

    let c = h.conn();
    let resume = SubscriptionDescriptor {
        options: SO::RESUME | SO::DURABLE | SO::MANAGED,
        sub_name: "SUB1".into(),
        ..SubscriptionDescriptor::default()
    };
    let r = h.subscribe(c, &resume).unwrap();
    assert_eq!((r.sub_id, &r.destination), (s.sub_id, &s.destination));
    assert_eq!(h.get_body(c, r.hobj.unwrap()), Ok(b"while away".to_vec()));
    assert_eq!(rc(h.subscribe(c, &resume)), ReasonCode::SubscriptionInUse);
    assert_eq!(
        rc(h.subscribe(c, &durable("SUB1", "news"))),
        ReasonCode::SubAlreadyExists
    );

    h.close(c, r.hobj.unwrap(), CloseOptions::empty()).unwrap();
    h.close(c, r.hsub, CloseOptions::REMOVE_SUB).unwrap();
    assert!(
        !h.queue_exists(&s.destination),
        "REMOVE_SUB deletes the managed queue"
    );
    assert_eq!(rc(h.subscribe(c, &resume)), ReasonCode::NoSubscription);
}

#[test]
fn mqsub_checks_its_descriptor() {
    let mut h = Harness::new();
    let c = h.conn();
    let no_name = SubscriptionDescriptor {
        sub_name: String::new(),
        ..durable("x", "t")
    };
    assert_eq!(rc(h.subscribe(c, &no_name)), ReasonCode::SubNameError);
    let no_verb = SubscriptionDescriptor {
        options: SO::MANAGED,
        ..SubscriptionDescriptor::managed("t")
    };
    assert_eq!(rc(h.subscribe(c, &no_verb)), ReasonCode::OptionsError);
    let no_topic = SubscriptionDescriptor::managed("");
    assert_eq!(rc(h.subscribe(c, &no_topic)), ReasonCode::UnknownObjectName);
    let unknown_object = SubscriptionDescriptor {
        object_name: "NO.SUCH.TOPIC".into(),
        ..SubscriptionDescriptor::managed("t")
    };
    assert_eq!(
        rc(h.subscribe(c, &unknown_object)),
        ReasonCode::UnknownObjectName
    );
    let unmanaged_without_queue = SubscriptionDescriptor {
        options: SO::CREATE,
        ..SubscriptionDescriptor::managed("t")
    };
    assert_eq!(
        rc(h.subscribe(c, &unmanaged_without_queue)),
        ReasonCode::HobjError
    );
}

#[test]
fn topic_objects_name_topics_and_their_attributes_apply() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    h.topic_object("SPORTS", "Sports", |_| {});
    let by_object = SubscriptionDescriptor {
        object_name: "SPORTS".into(),
        object_string: "Football".into(),
        ..SubscriptionDescriptor::managed("")
    };
    let s = h.subscribe(c, &by_object).unwrap();
    assert_eq!(s.topic_string, "Sports/Football");

    h.topic_object("CLOSED", "Closed", |d| {
        d.attributes.publish = TopicEnablement::Disabled;
        d.attributes.subscribe = TopicEnablement::Disabled;
    });
    assert_eq!(
        rc(h.publish(p, "Closed/Below", b"x")),
        ReasonCode::PutInhibited
    );
    assert_eq!(
        rc(h.subscribe(c, &SubscriptionDescriptor::managed("Closed/Below"))),
        ReasonCode::SubInhibited
    );
    h.topic_object("NODUR", "NoDur", |d| {
        d.attributes.durable_subscriptions = ferry_objects::topic::AsParentYesNo::No;
    });
    assert_eq!(
        rc(h.subscribe(c, &durable("D", "NoDur/x"))),
        ReasonCode::DurabilityNotAllowed
    );
}

#[test]
fn wildcard_block_hides_a_subtree_from_wildcards_made_above_it() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    h.topic_object("INTERNAL", "Price/Internal", |d| {
        d.attributes.wildcard = WildcardOperation::Block;
    });
    let above = h.managed(c, "Price/#");
    let at = h.managed(c, "Price/Internal/#");
    let exact = h.managed(c, "Price/Internal/Cost");
    h.publish(p, "Price/Internal/Cost", b"secret").unwrap();
    assert_eq!(
        h.get_body(c, above.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    assert_eq!(h.get_body(c, at.hobj.unwrap()), Ok(b"secret".to_vec()));
    assert_eq!(h.get_body(c, exact.hobj.unwrap()), Ok(b"secret".to_vec()));
}

#[test]
fn a_full_subscriber_queue_follows_the_delivery_policy() {
    let mut h = Harness::new();
    h.define("FULL", QueueType::Local, |a| a.max_depth = 0);
    let (c, p) = (h.conn(), h.conn());
    let full = h.open(c, "FULL", OpenOptions::INPUT_AS_Q_DEF);
    let sd = SubscriptionDescriptor {
        options: SO::CREATE,
        object_string: "t/x".into(),
        ..SubscriptionDescriptor::default()
    };
    h.subscribe_to(c, &sd, full);
    let ok = h.managed(c, "t/x");
    // A new queue manager has a dead-letter queue and USEDLQ(YES): the refused copy goes
    // there, which counts as delivered.
    h.publish(p, "t/x", b"1").unwrap();
    assert_eq!(h.get_body(c, ok.hobj.unwrap()), Ok(b"1".to_vec()));
    assert_eq!(h.depth("SYSTEM.DEAD.LETTER.QUEUE"), 1);
    // USEDLQ(NO) and NPMSGDLV(ALLAVAIL), the shipped value: the others still get it.
    h.topic_object("T", "t", |d| {
        d.attributes.use_dlq = ferry_objects::topic::AsParentYesNo::No;
    });
    h.publish(p, "t/x", b"2").unwrap();
    assert_eq!(h.get_body(c, ok.hobj.unwrap()), Ok(b"2".to_vec()));
    assert_eq!(h.depth("SYSTEM.DEAD.LETTER.QUEUE"), 1);
    // NPMSGDLV(ALL): nobody does, and the publish fails.
    let mut def = h.qm.topic("T").unwrap();
    def.attributes.non_persistent_delivery = MessageDelivery::All;
    h.qm.define_topic(def, true, &mut h.fx).unwrap();
    assert_eq!(
        rc(h.publish(p, "t/x", b"3")),
        ReasonCode::PublicationFailure
    );
    assert_eq!(
        h.get_body(c, ok.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
}

#[test]
fn publications_under_syncpoint_appear_at_commit_and_vanish_at_backout() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let s = h.managed(c, "t");
    let ph = h.publisher(p, "t");
    h.put_sync(p, ph, b"kept");
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    let t = h.t();
    h.qm.commit(p, t, &mut h.fx).unwrap();
    assert_eq!(h.get_body(c, s.hobj.unwrap()), Ok(b"kept".to_vec()));
    h.put_sync(p, ph, b"dropped");
    h.qm.backout(p, t, &mut h.fx).unwrap();
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
}

#[test]
fn not_own_subs_skips_the_publishers_own_subscriptions_and_warnings_say_none_matched() {
    let mut h = Harness::new();
    let c = h.conn();
    let s = h.managed(c, "chat");
    let ph = h.publisher(c, "chat");
    let mut md = MessageDescriptor::default();
    let o = PutOptionFlags::NO_SYNCPOINT
        | PutOptionFlags::NOT_OWN_SUBS
        | PutOptionFlags::WARN_IF_NO_SUBS_MATCHED;
    assert_eq!(
        h.put_md(c, ph, &mut md, o, b"me"),
        Ok(Some(ReasonCode::NoSubsMatched))
    );
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    let mut md = MessageDescriptor::default();
    assert_eq!(
        h.put_md(c, ph, &mut md, PutOptionFlags::NO_SYNCPOINT, b"me"),
        Ok(None)
    );
    assert_eq!(h.get_body(c, s.hobj.unwrap()), Ok(b"me".to_vec()));
}

#[test]
fn a_topic_handle_is_for_output_only() {
    let mut h = Harness::new();
    let c = h.conn();
    let r =
        h.qm.open_topic(c, "", "t", OpenOptions::INPUT_AS_Q_DEF, &mut h.fx);
    assert_eq!(rc(r), ReasonCode::OptionNotValidForType);
}

#[test]
fn durable_subscriptions_are_saved_in_the_catalogue_and_restored_with_their_queue() {
    let mut h = Harness::new();
    let c = h.conn();
    let s = h.subscribe(c, &durable("KEEP", "news/#")).unwrap();
    h.managed(c, "news/#"); // non-durable: not saved
    let saved = h.qm.catalogue();
    assert_eq!(saved.subscriptions.len(), 1);
    assert_eq!(saved.subscriptions[0].name, "KEEP");
    assert!(saved.queues.iter().any(|q| q.name == s.destination));

    let mut catalogue = saved;
    let subs = std::mem::take(&mut catalogue.subscriptions);
    let t = Timestamp(h.now);
    let mut h = Harness {
        qm: QueueManager::from_catalogue("QM1", catalogue, t),
        fx: Effects::new(),
        now: h.now,
    };
    let skipped = h.qm.restore_subscriptions(subs, &|_| None, t);
    assert!(skipped.is_empty());
    let p = h.conn();
    h.publish(p, "news/today", b"after restart").unwrap();
    let c = h.conn();
    let resume = SubscriptionDescriptor {
        options: SO::RESUME | SO::DURABLE | SO::MANAGED,
        sub_name: "KEEP".into(),
        ..SubscriptionDescriptor::default()
    };
    let r = h.subscribe(c, &resume).unwrap();
    assert_eq!(r.sub_id, s.sub_id);
    assert_eq!(
        h.get_body(c, r.hobj.unwrap()),
        Ok(b"after restart".to_vec())
    );
}

#[test]
fn a_shared_subscription_gives_each_copy_to_one_of_its_consumers_and_ends_with_the_last() {
    let mut h = Harness::new();
    let (a, b, p) = (h.conn(), h.conn(), h.conn());
    let shared = crate::SubscribeExtras {
        shared: true,
        no_local: false,
    };
    let sd = SubscriptionDescriptor {
        options: SO::CREATE | SO::RESUME | SO::MANAGED,
        sub_name: ":share:orders".into(),
        ..SubscriptionDescriptor::managed("orders")
    };
    let t = h.t();
    let first =
        h.qm.subscribe_with(a, &sd, None, None, shared, t, &mut h.fx)
            .unwrap();
    let second =
        h.qm.subscribe_with(b, &sd, None, None, shared, t, &mut h.fx)
            .unwrap();
    assert_eq!(first.destination, second.destination, "one queue for both");
    // An unshared MQSUB cannot take a shared subscription over.
    assert_eq!(rc(h.subscribe(p, &sd)), ReasonCode::InvalidSubscription);
    h.publish(p, "orders", b"1").unwrap();
    h.publish(p, "orders", b"2").unwrap();
    assert_eq!(h.get_body(a, first.hobj.unwrap()), Ok(b"1".to_vec()));
    assert_eq!(h.get_body(b, second.hobj.unwrap()), Ok(b"2".to_vec()));
    let t = h.t();
    h.qm.disconnect(a, true, t, &mut h.fx);
    h.publish(p, "orders", b"3").unwrap();
    assert_eq!(h.get_body(b, second.hobj.unwrap()), Ok(b"3".to_vec()));
    h.qm.disconnect(b, true, t, &mut h.fx);
    assert!(h.qm.subscription_status(":share:orders").is_none());
    assert!(!h.queue_exists(&first.destination));
}

#[test]
fn no_local_keeps_a_connections_own_publications_from_its_subscription() {
    let mut h = Harness::new();
    let (c, other) = (h.conn(), h.conn());
    let extras = crate::SubscribeExtras {
        shared: false,
        no_local: true,
    };
    let t = h.t();
    let s =
        h.qm.subscribe_with(
            c,
            &SubscriptionDescriptor::managed("chat"),
            None,
            None,
            extras,
            t,
            &mut h.fx,
        )
        .unwrap();
    h.publish(c, "chat", b"mine").unwrap();
    h.publish(other, "chat", b"theirs").unwrap();
    assert_eq!(h.get_body(c, s.hobj.unwrap()), Ok(b"theirs".to_vec()));
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
}

#[test]
fn delete_subscription_removes_a_closed_durable_subscription_only() {
    let mut h = Harness::new();
    let c = h.conn();
    let s = h.subscribe(c, &durable("D1", "x")).unwrap();
    let t = h.t();
    assert_eq!(
        rc(h.qm.delete_subscription("D1", t, &mut h.fx)),
        ReasonCode::SubscriptionInUse
    );
    h.close(c, s.hsub, CloseOptions::KEEP_SUB).unwrap();
    h.close(c, s.hobj.unwrap(), CloseOptions::empty()).unwrap();
    h.qm.delete_subscription("D1", t, &mut h.fx).unwrap();
    assert!(!h.queue_exists(&s.destination));
    assert_eq!(
        rc(h.qm.delete_subscription("D1", t, &mut h.fx)),
        ReasonCode::NoSubscription
    );
}

fn publish_retained(h: &mut Harness, c: ConnId, topic: &str, body: &[u8], persistent: bool) {
    let ph = h.publisher(c, topic);
    let mut md = MessageDescriptor {
        persistence: i32::from(persistent),
        ..MessageDescriptor::default()
    };
    let o = PutOptionFlags::NO_SYNCPOINT | PutOptionFlags::RETAIN;
    h.put_md(c, ph, &mut md, o, body).unwrap();
    h.close(c, ph, CloseOptions::empty()).unwrap();
}

#[test]
fn a_new_subscription_gets_the_newest_retained_publication_marked_as_retained() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    publish_retained(&mut h, p, "price/apple", b"1.10", false);
    publish_retained(&mut h, p, "price/apple", b"1.20", false);
    publish_retained(&mut h, p, "price/pear", b"0.90", false);
    h.publish(p, "price/apple", b"not retained").unwrap();
    assert_eq!(
        h.depth(crate::pubsub::retained::RETAINED_QUEUE),
        2,
        "one per topic"
    );
    let s = h.managed(c, "price/apple");
    let got = h
        .get_now(c, s.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert_eq!(&got.data[..], b"1.20");
    assert_eq!(got.md.correl_id, s.sub_id.0);
    assert!(matches!(
        MessageProperties::find(&got.properties, "MQIsRetained"),
        Some(PropertyRef::Boolean(true))
    ));
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    // A wildcard subscription gets every retained publication it matches.
    let all = h.managed(c, "price/#");
    let mut bodies = vec![
        h.get_body(c, all.hobj.unwrap()).unwrap(),
        h.get_body(c, all.hobj.unwrap()).unwrap(),
    ];
    bodies.sort();
    assert_eq!(bodies, [b"0.90".to_vec(), b"1.20".to_vec()]);
    // NEW_PUBLICATIONS_ONLY: none.
    let new_only = SubscriptionDescriptor {
        options: SO::CREATE | SO::MANAGED | SO::NEW_PUBLICATIONS_ONLY,
        ..SubscriptionDescriptor::managed("price/apple")
    };
    let n = h.subscribe(c, &new_only).unwrap();
    assert_eq!(
        h.get_body(c, n.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    assert_eq!(h.qm.retained_topics(), ["price/apple", "price/pear"]);
    assert!(h.qm.clear_retained("price/apple", &mut h.fx));
    assert!(!h.qm.clear_retained("price/apple", &mut h.fx));
    assert_eq!(h.qm.retained_topics(), ["price/pear"]);
}

#[test]
fn publications_on_request_come_only_with_mqsubrq() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let sd = SubscriptionDescriptor {
        options: SO::CREATE | SO::MANAGED | SO::PUBLICATIONS_ON_REQUEST,
        ..SubscriptionDescriptor::managed("status")
    };
    let s = h.subscribe(c, &sd).unwrap();
    let t = h.t();
    assert_eq!(
        rc(h.qm.subscription_request(c, s.hsub, t, &mut h.fx)),
        ReasonCode::NoRetainedMsg
    );
    publish_retained(&mut h, p, "status", b"up", false);
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    assert_eq!(h.qm.subscription_request(c, s.hsub, t, &mut h.fx), Ok(1));
    assert_eq!(h.get_body(c, s.hobj.unwrap()), Ok(b"up".to_vec()));
}

#[test]
fn a_persistent_retained_publication_is_logged_with_the_one_it_replaces_in_one_unit_of_work() {
    let mut h = Harness::new();
    h.qm.set_logging(true);
    let p = h.conn();
    publish_retained(&mut h, p, "cfg", b"v1", true);
    h.fx.drain_log();
    publish_retained(&mut h, p, "cfg", b"v2", true);
    let kinds: Vec<u8> = h.fx.drain_log().map(|r| r.kind).collect();
    use crate::journal::kind;
    assert_eq!(kinds, [kind::GET, kind::PUT, kind::COMMIT], "{kinds:?}");
}

#[test]
fn a_persistent_publication_logs_its_body_once_for_all_durable_subscriptions_and_recovers() {
    let mut h = Harness::new();
    h.qm.set_logging(true);
    let c = h.conn();
    let subs: Vec<Subscribed> = (1..=3)
        .map(|n| {
            h.subscribe(c, &durable(&format!("D{n}"), "orders"))
                .unwrap()
        })
        .collect();
    let mut records: Vec<crate::LogRecord> = h.fx.drain_log().collect();
    let p = h.conn();
    let ph = h.publisher(p, "orders");
    let mut md = MessageDescriptor {
        persistence: ferry_mqi::descriptor::persistence::PERSISTENT,
        ..MessageDescriptor::default()
    };
    let body = vec![7u8; 1000];
    h.put_md(p, ph, &mut md, PutOptionFlags::NO_SYNCPOINT, &body)
        .unwrap();
    let published: Vec<crate::LogRecord> = h.fx.drain_log().collect();
    assert_eq!(published.len(), 1, "one record for the three copies");
    assert_eq!(published[0].kind, crate::journal::kind::PUBLISH);
    assert_eq!(published[0].body.len(), 1000, "the body once");
    assert!(published[0].head.len() < 3 * 500, "three small heads");
    let Ok(crate::journal::Record::Publish { uow: None, copies }) = published[0].decode() else {
        panic!("not a publish record");
    };
    assert_eq!(copies.len(), 3);
    records.extend(published);
    let (qm, _) = super::persistence::restart(&h, &records);
    for s in &subs {
        let status = qm
            .queue_status(&s.destination, Timestamp(h.now + 2))
            .unwrap();
        assert_eq!(
            status.current_depth, 1,
            "{} recovered its copy",
            s.destination
        );
    }
}

#[test]
fn each_copy_gets_a_msg_id_of_its_own_unless_the_publisher_gave_one() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let a = h.managed(c, "ids");
    let b = h.managed(c, "ids");
    let ph = h.publisher(p, "ids");
    let mut md = MessageDescriptor::default();
    h.put_md(p, ph, &mut md, PutOptionFlags::NO_SYNCPOINT, b"x")
        .unwrap();
    assert_eq!(
        md.msg_id,
        ferry_mqi::descriptor::NONE_ID,
        "MQMI_NONE comes back unchanged"
    );
    let x = h
        .get_now(c, a.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    let y = h
        .get_now(c, b.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert_ne!(x.md.msg_id, y.md.msg_id);
    assert_ne!(x.md.msg_id, ferry_mqi::descriptor::NONE_ID);
    let mut md = MessageDescriptor {
        msg_id: id(5),
        correl_id: id(6),
        ..MessageDescriptor::default()
    };
    h.put_md(p, ph, &mut md, PutOptionFlags::NO_SYNCPOINT, b"y")
        .unwrap();
    let x = h
        .get_now(c, a.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert_eq!(x.md.msg_id, id(5), "the publisher's MsgId is every copy's");
    assert_eq!(
        x.md.correl_id, a.sub_id.0,
        "the CorrelId is the subscription's"
    );
    // SET_CORREL_ID with MQCI_NONE: the publication's own CorrelId.
    let sd = SubscriptionDescriptor {
        options: SO::CREATE | SO::MANAGED | SO::SET_CORREL_ID,
        ..SubscriptionDescriptor::managed("ids")
    };
    let s = h.subscribe(c, &sd).unwrap();
    let mut md = MessageDescriptor {
        correl_id: id(7),
        ..MessageDescriptor::default()
    };
    h.put_md(p, ph, &mut md, PutOptionFlags::NO_SYNCPOINT, b"z")
        .unwrap();
    let got = h
        .get_now(c, s.hobj.unwrap(), GetOptionFlags::NO_SYNCPOINT)
        .unwrap();
    assert_eq!(got.md.correl_id, id(7));
}

#[test]
fn subscriptions_count_toward_maxhands() {
    let mut h = Harness::new();
    h.qm.qmgr.max_handles = 3;
    let c = h.conn();
    h.managed(c, "a");
    let t = h.t();
    let r = h.qm.subscribe(
        c,
        &SubscriptionDescriptor::managed("b"),
        None,
        None,
        t,
        &mut h.fx,
    );
    assert_eq!(
        rc(r),
        ReasonCode::HandleNotAvailable,
        "two more handles than MAXHANDS allows"
    );
}

#[test]
fn an_expired_subscription_gets_no_copies_and_goes_when_closed() {
    let mut h = Harness::new();
    let (c, p) = (h.conn(), h.conn());
    let sd = SubscriptionDescriptor {
        sub_expiry: 10, // one second
        ..durable("EXP", "t")
    };
    let s = h.subscribe(c, &sd).unwrap();
    h.publish(p, "t", b"in time").unwrap();
    h.now += 1_000;
    h.publish(p, "t", b"too late").unwrap();
    assert_eq!(h.get_body(c, s.hobj.unwrap()), Ok(b"in time".to_vec()));
    assert_eq!(
        h.get_body(c, s.hobj.unwrap()),
        Err(ReasonCode::NoMsgAvailable)
    );
    h.close(c, s.hobj.unwrap(), CloseOptions::empty()).unwrap();
    h.close(c, s.hsub, CloseOptions::KEEP_SUB).unwrap();
    assert!(
        h.qm.subscription_status("EXP").is_none(),
        "expired: not kept"
    );
    assert!(!h.queue_exists(&s.destination));
}
