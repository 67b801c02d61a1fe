//! Topic objects in the engine: the shipped objects and model queues of a new queue
//! manager, DEFINE/ALTER/DELETE with their rules (TOPICSTR required, fixed and unique;
//! no clusters), the lookup by topic string, the catalogue round trip, and ASPARENT
//! resolved through the objects found.

use ferry_engine::{CatalogueChange, Effect, Effects, QueueManager, Timestamp};
use ferry_objects::queue::DefinitionType;
use ferry_objects::topic::{
    TopicEnablement, DURABLE_MODEL_QUEUE, NON_DURABLE_MODEL_QUEUE, SYSTEM_BASE_TOPIC,
    SYSTEM_DEFAULT_TOPIC,
};
use ferry_objects::{
    AdminError, QmgrAttributes, QueueType, ResolvedTopicAttributes, TopicDefinition,
};

fn new_qmgr() -> QueueManager {
    let mut qm = QueueManager::new("QM1", QmgrAttributes::default(), Timestamp(0));
    qm.define_system_objects(Timestamp(1_700_000_000_000));
    qm
}

fn changes(fx: &mut Effects) -> Vec<CatalogueChange> {
    fx.drain()
        .filter_map(|e| match e {
            Effect::CatalogueChanged(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// The administrative nodes from `topic_string` up to the root, nearest first: what
/// pub/sub hands the resolver.
fn resolve(qm: &QueueManager, topic_string: &str) -> ResolvedTopicAttributes {
    let mut levels: Vec<&str> = topic_string.split('/').collect();
    let mut nodes = Vec::new();
    while !levels.is_empty() {
        if let Some(t) = qm.topic_object_for_string(&levels.join("/")) {
            nodes.push(&t.attributes);
        }
        levels.pop();
    }
    if let Some(root) = qm.topic_object_for_string("") {
        nodes.push(&root.attributes);
    }
    ResolvedTopicAttributes::resolve(nodes)
}

#[test]
fn a_new_queue_manager_has_the_shipped_topics_and_model_queues() {
    let qm = new_qmgr();
    let base = qm.topic(SYSTEM_BASE_TOPIC).expect("SYSTEM.BASE.TOPIC");
    assert_eq!(base.topic_string(), "");
    assert_eq!(base.attributes.durable_model_q, DURABLE_MODEL_QUEUE);
    assert!(!base.attributes.alteration_date.is_empty());
    let template = qm
        .topic(SYSTEM_DEFAULT_TOPIC)
        .expect("SYSTEM.DEFAULT.TOPIC");
    assert_eq!(template.attributes.publish, TopicEnablement::AsParent);
    assert_eq!(
        qm.topic_object_for_string("").map(|t| t.name.as_str()),
        Some(SYSTEM_BASE_TOPIC),
        "the root is SYSTEM.BASE.TOPIC's, never the template's"
    );
    let durable = qm.queue(DURABLE_MODEL_QUEUE).expect("durable model queue");
    assert_eq!(durable.queue_type, QueueType::Model);
    assert_eq!(
        durable.attributes.definition_type,
        DefinitionType::PermanentDynamic
    );
    let non_durable = qm
        .queue(NON_DURABLE_MODEL_QUEUE)
        .expect("non-durable model");
    assert_eq!(
        non_durable.attributes.definition_type,
        DefinitionType::TemporaryDynamic
    );
    assert_eq!(resolve(&qm, "a/b"), ResolvedTopicAttributes::shipped());
}

#[test]
fn define_alter_delete_keep_the_topic_string_index() {
    let mut qm = new_qmgr();
    let mut fx = Effects::new();
    let mut prices = TopicDefinition::new("PRICES", "Prices");
    prices.attributes.publish = TopicEnablement::Disabled;
    qm.define_topic(prices.clone(), false, &mut fx).unwrap();
    assert_eq!(changes(&mut fx), [CatalogueChange::Topic("PRICES".into())]);
    assert_eq!(qm.topic_object_for_string("Prices"), Some(&prices));
    assert_eq!(qm.topic_object_for_string("prices"), None, "case matters");
    assert!(!resolve(&qm, "Prices/EUR").publish);
    assert!(resolve(&qm, "Other").publish);

    assert_eq!(
        qm.define_topic(prices.clone(), false, &mut fx),
        Err(AdminError::AlreadyExists {
            name: "PRICES".into()
        })
    );
    prices.attributes.publish = TopicEnablement::Enabled;
    qm.alter_topic(prices.clone(), &mut fx).unwrap();
    assert!(resolve(&qm, "Prices/EUR").publish);
    qm.define_topic(prices.clone(), true, &mut fx).unwrap();
    // One change per definition and batch.
    assert_eq!(changes(&mut fx), [CatalogueChange::Topic("PRICES".into())]);

    qm.delete_topic("PRICES", &mut fx).unwrap();
    assert_eq!(changes(&mut fx), [CatalogueChange::Topic("PRICES".into())]);
    assert_eq!(qm.topic_object_for_string("Prices"), None);
    assert_eq!(
        qm.delete_topic("PRICES", &mut fx),
        Err(AdminError::NotFound {
            name: "PRICES".into()
        })
    );
    assert_eq!(
        qm.alter_topic(prices, &mut fx),
        Err(AdminError::NotFound {
            name: "PRICES".into()
        })
    );
    assert!(fx.is_empty(), "nothing refused is saved");
}

#[test]
fn topic_strings_are_required_fixed_and_unique() {
    let mut qm = new_qmgr();
    let mut fx = Effects::new();
    let refused = |r: Result<(), AdminError>| match r {
        Err(AdminError::Invalid(text)) => text,
        other => panic!("expected a refusal, got {other:?}"),
    };
    let e = refused(qm.define_topic(TopicDefinition::new("T", " "), false, &mut fx));
    assert!(e.contains("blank"), "{e}");
    let e = refused(
        qm.define_topic(TopicDefinition::new("T", "a"), false, &mut fx)
            .and_then(|()| qm.define_topic(TopicDefinition::new("U", "a"), false, &mut fx)),
    );
    assert!(e.contains("'a'") && e.contains("topic object T"), "{e}");
    let e = refused(qm.alter_topic(TopicDefinition::new("T", "b"), &mut fx));
    assert!(e.contains("cannot be changed"), "{e}");
    let e = refused(qm.define_topic(TopicDefinition::new("T", "b"), true, &mut fx));
    assert!(e.contains("cannot be changed"), "{e}");
    let mut clustered = TopicDefinition::new("C", "c");
    clustered.attributes.cluster = "DEMO".into();
    let e = refused(qm.define_topic(clustered, false, &mut fx));
    assert!(e.contains("clusters are not available yet"), "{e}");
    let e = refused(qm.define_topic(TopicDefinition::new("BAD NAME", "x"), false, &mut fx));
    assert!(!e.is_empty());
    let e = refused(qm.define_topic(TopicDefinition::new(SYSTEM_BASE_TOPIC, "x"), true, &mut fx));
    assert!(e.contains("root"), "{e}");
    assert_eq!(
        qm.topics().len(),
        3,
        "SYSTEM.BASE.TOPIC, SYSTEM.DEFAULT.TOPIC, T"
    );
}

#[test]
fn system_base_topic_may_be_deleted_and_defined_again() {
    let mut qm = new_qmgr();
    let mut fx = Effects::new();
    qm.delete_topic(SYSTEM_BASE_TOPIC, &mut fx).unwrap();
    assert_eq!(qm.topic_object_for_string(""), None);
    assert_eq!(resolve(&qm, "a"), ResolvedTopicAttributes::shipped());
    let [base, _] = TopicDefinition::shipped();
    qm.define_topic(base, false, &mut fx).unwrap();
    assert!(qm.topic_object_for_string("").is_some());
}

#[test]
fn topics_survive_the_catalogue_round_trip() {
    let mut qm = new_qmgr();
    let mut fx = Effects::new();
    qm.define_topic(TopicDefinition::new("A", "a/b"), false, &mut fx)
        .unwrap();
    qm.delete_topic(SYSTEM_BASE_TOPIC, &mut fx).unwrap();
    let catalogue = qm.catalogue();
    let json = serde_json::to_string(&catalogue).unwrap();
    let back: ferry_engine::Catalogue = serde_json::from_str(&json).unwrap();
    let again = QueueManager::from_catalogue("QM1", back, Timestamp(0));
    assert_eq!(again.topics(), qm.topics());
    assert_eq!(
        again
            .topic_object_for_string("a/b")
            .map(|t| t.name.as_str()),
        Some("A")
    );
    assert!(again.topic(SYSTEM_BASE_TOPIC).is_none(), "stays deleted");
}
