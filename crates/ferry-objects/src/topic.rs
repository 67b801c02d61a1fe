//! Topic objects (DEFINE TOPIC): administrative nodes of the publish/subscribe topic tree.
//!
//! A topic object names one topic string (TOPICSTR, fixed when the object is defined) and
//! says how publications and subscriptions at that node and below behave. Most attributes
//! may be ASPARENT: the value then comes from the nearest ancestor node that has an object
//! saying something else, and when every one says ASPARENT, from SYSTEM.BASE.TOPIC (the
//! object of the root, topic string ''). [`ResolvedTopicAttributes::resolve`] does that
//! walk; if SYSTEM.BASE.TOPIC has been deleted its shipped values still apply, as in MQ.
//!
//! A DEFINEd topic starts from SYSTEM.DEFAULT.TOPIC, the template that is not part of the
//! tree (blank TOPICSTR), whose every attribute that can be ASPARENT is ASPARENT: the
//! table defaults below. Defaults and values are MQ's (pubsub-and-monitoring.md §1, §4).
//! TYPE is always LOCAL: cluster topics come with clusters.

use crate::attribute::AttrKind::{IntOrWord, Keyword, Name, Text};
use crate::attribute::WORD_VALUE;
use crate::queue::PutResponse;
use crate::{attribute_table, keyword_enum};

/// Applies to local topic objects (the only kind).
pub const LOCAL: u32 = 1;

/// The object of the root of the topic tree (topic string ''), where ASPARENT ends.
pub const SYSTEM_BASE_TOPIC: &str = "SYSTEM.BASE.TOPIC";

/// The template DEFINE TOPIC starts from (not part of the topic tree).
pub const SYSTEM_DEFAULT_TOPIC: &str = "SYSTEM.DEFAULT.TOPIC";

/// The model queue of managed durable subscriptions when every node says ASPARENT.
pub const DURABLE_MODEL_QUEUE: &str = "SYSTEM.DURABLE.MODEL.QUEUE";

/// The model queue of managed non-durable subscriptions when every node says ASPARENT.
pub const NON_DURABLE_MODEL_QUEUE: &str = "SYSTEM.NDURABLE.MODEL.QUEUE";

/// The longest topic string (MQ_TOPIC_STR_LENGTH).
pub const MAX_TOPIC_STRING: usize = 10_240;

/// MQ's PCF and MQINQ selectors of the topic attributes (MQCA_* / MQIA_*).
mod sel {
    use ferry_mqi::Selector;
    pub const TOPIC_DESC: Selector = 2093;
    pub const TOPIC_STRING: Selector = 2094;
    pub const CLUSTER_NAME: Selector = 2029;
    pub const DURABLE_SUB: Selector = 175;
    pub const INHIBIT_PUB: Selector = 181;
    pub const INHIBIT_SUB: Selector = 182;
    pub const TOPIC_DEF_PERSISTENCE: Selector = 185;
    pub const DEF_PRIORITY: Selector = 6;
    pub const DEF_PUT_RESPONSE_TYPE: Selector = 184;
    pub const PM_DELIVERY: Selector = 195;
    pub const NPM_DELIVERY: Selector = 196;
    pub const USE_DEAD_LETTER_Q: Selector = 234;
    pub const MODEL_DURABLE_Q: Selector = 2096;
    pub const MODEL_NON_DURABLE_Q: Selector = 2097;
    pub const WILDCARD_OPERATION: Selector = 216;
    pub const SUB_SCOPE: Selector = 218;
    pub const PUB_SCOPE: Selector = 219;
    pub const PROXY_SUB: Selector = 199;
    pub const CUSTOM: Selector = 2119;
    pub const ALTERATION_DATE: Selector = 2027;
    pub const ALTERATION_TIME: Selector = 2028;
}

keyword_enum! {
    /// TYPE: the kind of topic object. Only LOCAL can be defined; CLUSTER (topics shared
    /// through a cluster) comes with clusters.
    TopicType {
        /// Defined on this queue manager.
        Local = "LOCAL"
    }
}

impl TopicType {
    /// The bit the attribute table's `applies` uses for this type.
    pub fn mask(self) -> u32 {
        match self {
            TopicType::Local => LOCAL,
        }
    }

    /// The types MQ has and Ferry does not yet (answered FRY9002E).
    pub const LATER: &'static [&'static str] = &["CLUSTER"];
}

keyword_enum! {
    /// PUB / SUB: whether publishing or subscribing is allowed at the node.
    TopicEnablement {
        /// As the nearest ancestor node with an object says.
        AsParent = "ASPARENT",
        /// Allowed.
        Enabled = "ENABLED",
        /// Refused.
        Disabled = "DISABLED"
    }
}

keyword_enum! {
    /// DURSUB, DEFPSIST, USEDLQ: a YES/NO value that may be inherited.
    AsParentYesNo {
        /// As the nearest ancestor node with an object says.
        AsParent = "ASPARENT",
        /// No.
        No = "NO",
        /// Yes.
        Yes = "YES"
    }
}

keyword_enum! {
    /// DEFPRESP: the put response of publications put with MQPMO_RESPONSE_AS_TOPIC_DEF.
    TopicPutResponse {
        /// As the nearest ancestor node with an object says.
        AsParent = "ASPARENT",
        /// Every put is answered.
        Sync = "SYNC",
        /// Puts outside syncpoint may be answered before they are done.
        Async = "ASYNC"
    }
}

keyword_enum! {
    /// PMSGDLV / NPMSGDLV: what happens to a publication when a copy cannot be delivered
    /// to one of its subscribers.
    MessageDelivery {
        /// As the nearest ancestor node with an object says.
        AsParent = "ASPARENT",
        /// Every subscriber gets it or none does (the publish fails).
        All = "ALL",
        /// Every durable subscriber gets it or none does; non-durable ones may miss it.
        AllDurable = "ALLDUR",
        /// Every subscriber that can take it gets it.
        AllAvailable = "ALLAVAIL"
    }
}

keyword_enum! {
    /// WILDCARD: whether wildcard subscriptions made above the node see it and below.
    WildcardOperation {
        /// They do.
        Passthru = "PASSTHRU",
        /// They do not (subscriptions naming the node or below by wildcard still do).
        Block = "BLOCK"
    }
}

keyword_enum! {
    /// PUBSCOPE / SUBSCOPE: whether publications and subscriptions go to other queue
    /// managers of a hierarchy or cluster.
    TopicScope {
        /// As the nearest ancestor node with an object says.
        AsParent = "ASPARENT",
        /// This queue manager only.
        QMgr = "QMGR",
        /// Connected queue managers too.
        All = "ALL"
    }
}

keyword_enum! {
    /// PROXYSUB: when proxy subscriptions are sent to connected queue managers.
    ProxySubscriptions {
        /// When a subscription is first made.
        FirstUse = "FIRSTUSE",
        /// At once, for a wildcard subscription at the node.
        Force = "FORCE"
    }
}

attribute_table! {
    /// The attributes of a topic object. Defaults are SYSTEM.DEFAULT.TOPIC's: everything
    /// that can be ASPARENT is (DEFPRTY's ASPARENT is held as
    /// [`crate::attribute::WORD_VALUE`]; a blank MDURMDL or MNDURMDL also means as parent).
    pub struct TopicAttributes;
    pub static TOPIC_ATTRIBUTES;
    topic_string: String = "TOPICSTR", Text { max_len: MAX_TOPIC_STRING }, default String::new(),
        applies LOCAL, inq Some(sel::TOPIC_STRING), rw, "The topic string the object administers (case matters; '' is the root). Set by DEFINE, which needs it; ALTER cannot change it.";
    descr: String = "DESCR", Text { max_len: 64 }, default String::new(),
        applies LOCAL, inq Some(sel::TOPIC_DESC), rw, "Description for operators.";
    cluster: String = "CLUSTER", Name { max_len: 48 }, default String::new(),
        applies LOCAL, inq Some(sel::CLUSTER_NAME), rw, "The cluster the topic is shared in; blank only, until Ferry has clusters.";
    durable_subscriptions: AsParentYesNo = "DURSUB", Keyword { values: AsParentYesNo::KEYWORDS }, default AsParentYesNo::AsParent,
        applies LOCAL, inq Some(sel::DURABLE_SUB), rw, "Whether durable subscriptions may be made (NO: MQSUB with MQSO_DURABLE fails 2436).";
    publish: TopicEnablement = "PUB", Keyword { values: TopicEnablement::KEYWORDS }, default TopicEnablement::AsParent,
        applies LOCAL, inq Some(sel::INHIBIT_PUB), rw, "Whether messages may be published to the topic.";
    subscribe: TopicEnablement = "SUB", Keyword { values: TopicEnablement::KEYWORDS }, default TopicEnablement::AsParent,
        applies LOCAL, inq Some(sel::INHIBIT_SUB), rw, "Whether subscriptions may be made (DISABLED: MQSUB fails 2503).";
    def_persistence: AsParentYesNo = "DEFPSIST", Keyword { values: AsParentYesNo::KEYWORDS }, default AsParentYesNo::AsParent,
        applies LOCAL, inq Some(sel::TOPIC_DEF_PERSISTENCE), rw, "Persistence of publications put with MQPER_PERSISTENCE_AS_TOPIC_DEF.";
    def_priority: i32 = "DEFPRTY", IntOrWord { min: 0, max: 9, word: "ASPARENT" }, default WORD_VALUE,
        applies LOCAL, inq Some(sel::DEF_PRIORITY), rw, "Priority of publications put with MQPRI_PRIORITY_AS_TOPIC_DEF.";
    def_put_response: TopicPutResponse = "DEFPRESP", Keyword { values: TopicPutResponse::KEYWORDS }, default TopicPutResponse::AsParent,
        applies LOCAL, inq Some(sel::DEF_PUT_RESPONSE_TYPE), rw, "Put response of publications put with MQPMO_RESPONSE_AS_TOPIC_DEF.";
    persistent_delivery: MessageDelivery = "PMSGDLV", Keyword { values: MessageDelivery::KEYWORDS }, default MessageDelivery::AsParent,
        applies LOCAL, inq Some(sel::PM_DELIVERY), rw, "Persistent publications when a subscriber cannot take its copy: ALL (the publish fails), ALLDUR (fails only for a durable subscriber), ALLAVAIL (the others get it).";
    non_persistent_delivery: MessageDelivery = "NPMSGDLV", Keyword { values: MessageDelivery::KEYWORDS }, default MessageDelivery::AsParent,
        applies LOCAL, inq Some(sel::NPM_DELIVERY), rw, "Non-persistent publications when a subscriber cannot take its copy, with PMSGDLV's values.";
    pub_scope: TopicScope = "PUBSCOPE", Keyword { values: TopicScope::KEYWORDS }, default TopicScope::AsParent,
        applies LOCAL, inq Some(sel::PUB_SCOPE), rw, "Whether publications go to connected queue managers (QMGR: this one only).";
    sub_scope: TopicScope = "SUBSCOPE", Keyword { values: TopicScope::KEYWORDS }, default TopicScope::AsParent,
        applies LOCAL, inq Some(sel::SUB_SCOPE), rw, "Whether subscriptions are sent to connected queue managers (QMGR: this one only).";
    proxy_subscriptions: ProxySubscriptions = "PROXYSUB", Keyword { values: ProxySubscriptions::KEYWORDS }, default ProxySubscriptions::FirstUse,
        applies LOCAL, inq Some(sel::PROXY_SUB), rw, "When proxy subscriptions go to connected queue managers: FIRSTUSE, or FORCE (at once).";
    wildcard: WildcardOperation = "WILDCARD", Keyword { values: WildcardOperation::KEYWORDS }, default WildcardOperation::Passthru,
        applies LOCAL, inq Some(sel::WILDCARD_OPERATION), rw, "BLOCK: wildcard subscriptions made above this node do not see it or anything below (not inherited).";
    durable_model_q: String = "MDURMDL", Name { max_len: 48 }, default String::new(),
        applies LOCAL, inq Some(sel::MODEL_DURABLE_Q), rw, "Model queue of managed durable subscriptions (blank: as parent; SYSTEM.DURABLE.MODEL.QUEUE at the root).";
    non_durable_model_q: String = "MNDURMDL", Name { max_len: 48 }, default String::new(),
        applies LOCAL, inq Some(sel::MODEL_NON_DURABLE_Q), rw, "Model queue of managed non-durable subscriptions (blank: as parent; SYSTEM.NDURABLE.MODEL.QUEUE at the root).";
    use_dlq: AsParentYesNo = "USEDLQ", Keyword { values: AsParentYesNo::KEYWORDS }, default AsParentYesNo::AsParent,
        applies LOCAL, inq Some(sel::USE_DEAD_LETTER_Q), rw, "Whether a copy that cannot be delivered may go to the dead-letter queue (DEADQ).";
    custom: String = "CUSTOM", Text { max_len: 128 }, default String::new(),
        applies LOCAL, inq Some(sel::CUSTOM), rw, "Attributes for features to come, as NAME(value) pairs.";
    alteration_date: String = "ALTDATE", Text { max_len: 10 }, default String::new(),
        applies LOCAL, inq Some(sel::ALTERATION_DATE), ro, "Date of the last change (yyyy-mm-dd).";
    alteration_time: String = "ALTTIME", Text { max_len: 8 }, default String::new(),
        applies LOCAL, inq Some(sel::ALTERATION_TIME), ro, "Time of the last change (hh.mm.ss).";
}

impl TopicAttributes {
    /// SYSTEM.BASE.TOPIC as MQ ships it: the root (topic string ''), with a concrete value
    /// wherever the template says ASPARENT.
    pub fn system_base() -> Self {
        let r = ResolvedTopicAttributes::SHIPPED;
        let yes_no = |b: bool| {
            if b {
                AsParentYesNo::Yes
            } else {
                AsParentYesNo::No
            }
        };
        let enablement = |b: bool| {
            if b {
                TopicEnablement::Enabled
            } else {
                TopicEnablement::Disabled
            }
        };
        TopicAttributes {
            topic_string: String::new(),
            descr: "Base topic for resolving attributes".to_string(),
            durable_subscriptions: yes_no(r.durable_subscriptions),
            publish: enablement(r.publish),
            subscribe: enablement(r.subscribe),
            def_persistence: yes_no(r.default_persistent),
            def_priority: r.default_priority,
            def_put_response: match r.default_put_response {
                PutResponse::Sync => TopicPutResponse::Sync,
                PutResponse::Async => TopicPutResponse::Async,
            },
            persistent_delivery: r.persistent_delivery.keyword_value(),
            non_persistent_delivery: r.non_persistent_delivery.keyword_value(),
            pub_scope: TopicScope::All,
            sub_scope: TopicScope::All,
            use_dlq: yes_no(r.use_dlq),
            durable_model_q: DURABLE_MODEL_QUEUE.to_string(),
            non_durable_model_q: NON_DURABLE_MODEL_QUEUE.to_string(),
            ..TopicAttributes::default()
        }
    }
}

/// A topic object: its name and attributes (the topic string is
/// [`TopicAttributes::topic_string`]). What DEFINE TOPIC creates and restart restores.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TopicDefinition {
    /// Object name (MQ name rules, up to 48 characters).
    pub name: String,
    /// Every attribute of the table.
    pub attributes: TopicAttributes,
}

impl TopicDefinition {
    /// A definition with SYSTEM.DEFAULT.TOPIC's attributes and topic string `topic_string`.
    pub fn new(name: impl Into<String>, topic_string: impl Into<String>) -> Self {
        TopicDefinition {
            name: name.into(),
            attributes: TopicAttributes {
                topic_string: topic_string.into(),
                ..TopicAttributes::default()
            },
        }
    }

    /// TYPE: always LOCAL.
    pub fn topic_type(&self) -> TopicType {
        TopicType::Local
    }

    /// The topic string the object administers.
    pub fn topic_string(&self) -> &str {
        &self.attributes.topic_string
    }

    /// The two topic objects a new queue manager has: SYSTEM.BASE.TOPIC (the root, with
    /// the shipped values) and SYSTEM.DEFAULT.TOPIC (the DEFINE template, all ASPARENT).
    pub fn shipped() -> [TopicDefinition; 2] {
        [
            TopicDefinition {
                name: SYSTEM_BASE_TOPIC.to_string(),
                attributes: TopicAttributes::system_base(),
            },
            TopicDefinition::new(SYSTEM_DEFAULT_TOPIC, ""),
        ]
    }

    /// True for the objects whose TOPICSTR may be blank: SYSTEM.BASE.TOPIC (the root) and
    /// SYSTEM.DEFAULT.TOPIC (the template, outside the tree).
    pub fn may_have_blank_topic_string(name: &str) -> bool {
        name == SYSTEM_BASE_TOPIC || name == SYSTEM_DEFAULT_TOPIC
    }

    /// True when the object is a node of the topic tree: every topic object but
    /// SYSTEM.DEFAULT.TOPIC, the template.
    pub fn in_tree(&self) -> bool {
        self.name != SYSTEM_DEFAULT_TOPIC
    }
}

/// The model queues managed subscriptions are made from when every node says ASPARENT:
/// SYSTEM.DURABLE.MODEL.QUEUE (DEFTYPE(PERMDYN): durable subscriptions outlive their
/// application) and SYSTEM.NDURABLE.MODEL.QUEUE (DEFTYPE(TEMPDYN)), as `crtmqm` makes them.
pub fn shipped_model_queues() -> [crate::QueueDefinition; 2] {
    use crate::queue::{DefinitionType, QueueType};
    let model = |name: &str, definition_type| {
        let mut q = crate::QueueDefinition::new(name, QueueType::Model);
        q.attributes.definition_type = definition_type;
        q
    };
    [
        model(DURABLE_MODEL_QUEUE, DefinitionType::PermanentDynamic),
        model(NON_DURABLE_MODEL_QUEUE, DefinitionType::TemporaryDynamic),
    ]
}

/// PMSGDLV / NPMSGDLV once resolved: what a publication does when one of its subscribers
/// cannot take its copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeliveryPolicy {
    /// ALL: every subscriber gets the publication or none does; the publish fails.
    All,
    /// ALLDUR: as ALL for durable subscribers; non-durable ones may miss it.
    AllDurable,
    /// ALLAVAIL: every subscriber that can take it gets it; the publish succeeds.
    AllAvailable,
}

impl DeliveryPolicy {
    /// The attribute value saying this policy.
    pub fn keyword_value(self) -> MessageDelivery {
        match self {
            DeliveryPolicy::All => MessageDelivery::All,
            DeliveryPolicy::AllDurable => MessageDelivery::AllDurable,
            DeliveryPolicy::AllAvailable => MessageDelivery::AllAvailable,
        }
    }
}

impl MessageDelivery {
    /// The policy this value says; `None` for ASPARENT.
    pub fn policy(self) -> Option<DeliveryPolicy> {
        match self {
            MessageDelivery::AsParent => None,
            MessageDelivery::All => Some(DeliveryPolicy::All),
            MessageDelivery::AllDurable => Some(DeliveryPolicy::AllDurable),
            MessageDelivery::AllAvailable => Some(DeliveryPolicy::AllAvailable),
        }
    }
}

impl AsParentYesNo {
    /// The value as a bool; `None` for ASPARENT.
    pub fn value(self) -> Option<bool> {
        match self {
            AsParentYesNo::AsParent => None,
            AsParentYesNo::No => Some(false),
            AsParentYesNo::Yes => Some(true),
        }
    }
}

impl TopicEnablement {
    /// True for ENABLED, false for DISABLED; `None` for ASPARENT.
    pub fn value(self) -> Option<bool> {
        match self {
            TopicEnablement::AsParent => None,
            TopicEnablement::Enabled => Some(true),
            TopicEnablement::Disabled => Some(false),
        }
    }
}

impl TopicPutResponse {
    /// The put response; `None` for ASPARENT.
    pub fn value(self) -> Option<PutResponse> {
        match self {
            TopicPutResponse::AsParent => None,
            TopicPutResponse::Sync => Some(PutResponse::Sync),
            TopicPutResponse::Async => Some(PutResponse::Async),
        }
    }
}

/// The attributes in force at a node of the topic tree, every ASPARENT resolved: what one
/// publication or subscription uses (MQ resolves once per publication, for all its
/// subscribers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedTopicAttributes {
    /// PUB: publishing is allowed.
    pub publish: bool,
    /// SUB: subscribing is allowed.
    pub subscribe: bool,
    /// DURSUB: durable subscriptions may be made.
    pub durable_subscriptions: bool,
    /// DEFPSIST: publications put "as topic definition" are persistent.
    pub default_persistent: bool,
    /// DEFPRTY: the priority of publications put "as topic definition" (0-9).
    pub default_priority: i32,
    /// DEFPRESP: the put response of publications put "as topic definition".
    pub default_put_response: PutResponse,
    /// PMSGDLV: persistent publications when a copy cannot be delivered.
    pub persistent_delivery: DeliveryPolicy,
    /// NPMSGDLV: non-persistent publications when a copy cannot be delivered.
    pub non_persistent_delivery: DeliveryPolicy,
    /// USEDLQ: an undeliverable copy may go to the dead-letter queue.
    pub use_dlq: bool,
    /// MDURMDL: the model queue of managed durable subscriptions.
    pub durable_model_q: String,
    /// MNDURMDL: the model queue of managed non-durable subscriptions.
    pub non_durable_model_q: String,
    /// WILDCARD of the node itself: not inherited, so it is the first (nearest)
    /// definition's, PASSTHRU when none is given. Only meaningful when that definition
    /// is the node's own object: a node without one passes wildcards through.
    pub wildcard: WildcardOperation,
}

/// The shipped values as a constant (model queue names are filled in by
/// [`ResolvedTopicAttributes::shipped`]).
struct Shipped {
    publish: bool,
    subscribe: bool,
    durable_subscriptions: bool,
    default_persistent: bool,
    default_priority: i32,
    default_put_response: PutResponse,
    persistent_delivery: DeliveryPolicy,
    non_persistent_delivery: DeliveryPolicy,
    use_dlq: bool,
}

impl ResolvedTopicAttributes {
    /// SYSTEM.BASE.TOPIC's shipped values (the model queues are
    /// [`DURABLE_MODEL_QUEUE`] and [`NON_DURABLE_MODEL_QUEUE`]).
    const SHIPPED: Shipped = Shipped {
        publish: true,
        subscribe: true,
        durable_subscriptions: true,
        default_persistent: false,
        default_priority: 0,
        default_put_response: PutResponse::Sync,
        persistent_delivery: DeliveryPolicy::AllDurable,
        non_persistent_delivery: DeliveryPolicy::AllAvailable,
        use_dlq: true,
    };

    /// What applies when every node says ASPARENT: SYSTEM.BASE.TOPIC's shipped values
    /// (DEFPSIST NO, DEFPRTY 0, DEFPRESP SYNC, DURSUB YES, PUB and SUB ENABLED, PMSGDLV
    /// ALLDUR, NPMSGDLV ALLAVAIL, USEDLQ YES, MDURMDL SYSTEM.DURABLE.MODEL.QUEUE, MNDURMDL
    /// SYSTEM.NDURABLE.MODEL.QUEUE, WILDCARD PASSTHRU), whether or not that object exists.
    pub fn shipped() -> Self {
        let s = Self::SHIPPED;
        ResolvedTopicAttributes {
            publish: s.publish,
            subscribe: s.subscribe,
            durable_subscriptions: s.durable_subscriptions,
            default_persistent: s.default_persistent,
            default_priority: s.default_priority,
            default_put_response: s.default_put_response,
            persistent_delivery: s.persistent_delivery,
            non_persistent_delivery: s.non_persistent_delivery,
            use_dlq: s.use_dlq,
            durable_model_q: DURABLE_MODEL_QUEUE.to_string(),
            non_durable_model_q: NON_DURABLE_MODEL_QUEUE.to_string(),
            wildcard: WildcardOperation::Passthru,
        }
    }

    /// Resolves ASPARENT: `nearest_first` are the definitions of the administrative nodes
    /// from the node in question (or its nearest ancestor with an object) up to the root
    /// (SYSTEM.BASE.TOPIC, when it exists). Each attribute takes the first value that is
    /// not ASPARENT (for MDURMDL and MNDURMDL: not blank); one that every definition
    /// leaves ASPARENT takes the shipped value ([`ResolvedTopicAttributes::shipped`]), so
    /// a deleted SYSTEM.BASE.TOPIC changes nothing. WILDCARD is not inherited: see
    /// [`ResolvedTopicAttributes::wildcard`].
    pub fn resolve<'a>(nearest_first: impl IntoIterator<Item = &'a TopicAttributes>) -> Self {
        let mut publish = None;
        let mut subscribe = None;
        let mut durable_subscriptions = None;
        let mut default_persistent = None;
        let mut default_priority = None;
        let mut default_put_response = None;
        let mut persistent_delivery = None;
        let mut non_persistent_delivery = None;
        let mut use_dlq = None;
        let mut durable_model_q: Option<&str> = None;
        let mut non_durable_model_q: Option<&str> = None;
        let mut wildcard = None;
        for a in nearest_first {
            wildcard = wildcard.or(Some(a.wildcard));
            publish = publish.or(a.publish.value());
            subscribe = subscribe.or(a.subscribe.value());
            durable_subscriptions = durable_subscriptions.or(a.durable_subscriptions.value());
            default_persistent = default_persistent.or(a.def_persistence.value());
            default_priority =
                default_priority.or((a.def_priority != WORD_VALUE).then_some(a.def_priority));
            default_put_response = default_put_response.or(a.def_put_response.value());
            persistent_delivery = persistent_delivery.or(a.persistent_delivery.policy());
            non_persistent_delivery =
                non_persistent_delivery.or(a.non_persistent_delivery.policy());
            use_dlq = use_dlq.or(a.use_dlq.value());
            let named = |q: &'a String| Some(q.trim()).filter(|q| !q.is_empty());
            durable_model_q = durable_model_q.or_else(|| named(&a.durable_model_q));
            non_durable_model_q = non_durable_model_q.or_else(|| named(&a.non_durable_model_q));
        }
        let s = Self::SHIPPED;
        ResolvedTopicAttributes {
            publish: publish.unwrap_or(s.publish),
            subscribe: subscribe.unwrap_or(s.subscribe),
            durable_subscriptions: durable_subscriptions.unwrap_or(s.durable_subscriptions),
            default_persistent: default_persistent.unwrap_or(s.default_persistent),
            default_priority: default_priority.unwrap_or(s.default_priority),
            default_put_response: default_put_response.unwrap_or(s.default_put_response),
            persistent_delivery: persistent_delivery.unwrap_or(s.persistent_delivery),
            non_persistent_delivery: non_persistent_delivery.unwrap_or(s.non_persistent_delivery),
            use_dlq: use_dlq.unwrap_or(s.use_dlq),
            durable_model_q: durable_model_q.unwrap_or(DURABLE_MODEL_QUEUE).to_string(),
            non_durable_model_q: non_durable_model_q
                .unwrap_or(NON_DURABLE_MODEL_QUEUE)
                .to_string(),
            wildcard: wildcard.unwrap_or(WildcardOperation::Passthru),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AttrValue, AttributeSet};

    #[test]
    fn defaults_are_system_default_topic_all_asparent() {
        let d = TopicAttributes::default();
        for row in TOPIC_ATTRIBUTES {
            assert_eq!((row.get)(&d), (row.default)(), "{}", row.keyword);
            if let crate::AttrKind::Keyword { values } = row.kind {
                if values.contains(&"ASPARENT") {
                    assert_eq!(
                        (row.get)(&d),
                        AttrValue::Keyword("ASPARENT"),
                        "{}",
                        row.keyword
                    );
                }
            }
        }
        assert_eq!(d.def_priority, WORD_VALUE);
        assert_eq!(d.wildcard, WildcardOperation::Passthru);
        assert_eq!(d.proxy_subscriptions, ProxySubscriptions::FirstUse);
        assert!(d.durable_model_q.is_empty() && d.non_durable_model_q.is_empty());
    }

    #[test]
    fn keywords_are_unique_and_asparent_parses() {
        let mut seen = std::collections::HashSet::new();
        for row in TOPIC_ATTRIBUTES {
            assert!(seen.insert(row.keyword), "{}", row.keyword);
        }
        let (row, _) = TopicAttributes::lookup("DEFPRTY").unwrap();
        assert_eq!(
            row.check(AttrValue::Text("asparent".into())),
            Ok(AttrValue::Int(WORD_VALUE))
        );
        assert!(row.check(AttrValue::Int(10)).is_err());
        let (row, _) = TopicAttributes::lookup("PMSGDLV").unwrap();
        assert_eq!(
            row.check(AttrValue::Text("allavail".into())),
            Ok(AttrValue::Keyword("ALLAVAIL"))
        );
        assert!(row.check(AttrValue::Text("SOME".into())).is_err());
        let (row, _) = TopicAttributes::lookup("TOPICSTR").unwrap();
        assert!(row
            .check(AttrValue::Text("x".repeat(MAX_TOPIC_STRING + 1)))
            .is_err());
        assert!(row
            .check(AttrValue::Text("x".repeat(MAX_TOPIC_STRING)))
            .is_ok());
        let (row, _) = TopicAttributes::lookup("ALTDATE").unwrap();
        assert!(row.read_only);
    }

    #[test]
    fn nothing_given_resolves_to_the_shipped_values() {
        let r = ResolvedTopicAttributes::resolve([]);
        assert_eq!(r, ResolvedTopicAttributes::shipped());
        assert!(r.publish && r.subscribe && r.durable_subscriptions && r.use_dlq);
        assert!(!r.default_persistent);
        assert_eq!(r.default_priority, 0);
        assert_eq!(r.default_put_response, PutResponse::Sync);
        assert_eq!(r.persistent_delivery, DeliveryPolicy::AllDurable);
        assert_eq!(r.non_persistent_delivery, DeliveryPolicy::AllAvailable);
        assert_eq!(r.durable_model_q, DURABLE_MODEL_QUEUE);
        assert_eq!(r.non_durable_model_q, NON_DURABLE_MODEL_QUEUE);
        assert_eq!(r.wildcard, WildcardOperation::Passthru);
    }

    #[test]
    fn all_asparent_resolves_to_the_shipped_values_without_system_base_topic() {
        let template = TopicAttributes::default();
        let r = ResolvedTopicAttributes::resolve([&template, &template]);
        assert_eq!(r, ResolvedTopicAttributes::shipped());
    }

    #[test]
    fn system_base_topic_resolves_to_itself() {
        let base = TopicAttributes::system_base();
        assert_eq!(
            ResolvedTopicAttributes::resolve([&base]),
            ResolvedTopicAttributes::shipped()
        );
        assert_eq!(base.topic_string, "");
        assert_eq!(base.durable_model_q, DURABLE_MODEL_QUEUE);
        assert_eq!(base.def_priority, 0);
        assert_eq!(base.persistent_delivery, MessageDelivery::AllDurable);
    }

    #[test]
    fn the_nearest_value_that_is_not_asparent_wins() {
        let node = TopicAttributes {
            publish: TopicEnablement::Disabled,
            wildcard: WildcardOperation::Block,
            ..TopicAttributes::default()
        };
        let mut parent = TopicAttributes {
            publish: TopicEnablement::Enabled,
            def_priority: 7,
            durable_model_q: "APP.DUR.MODEL".into(),
            persistent_delivery: MessageDelivery::All,
            wildcard: WildcardOperation::Passthru,
            ..TopicAttributes::default()
        };
        let mut base = TopicAttributes::system_base();
        base.def_priority = 3;
        base.use_dlq = AsParentYesNo::No;
        base.subscribe = TopicEnablement::Disabled;
        let r = ResolvedTopicAttributes::resolve([&node, &parent, &base]);
        assert!(!r.publish, "the node's own DISABLED");
        assert!(!r.subscribe, "the root's DISABLED");
        assert_eq!(r.default_priority, 7, "the parent's, not the root's");
        assert_eq!(r.durable_model_q, "APP.DUR.MODEL");
        assert_eq!(r.non_durable_model_q, NON_DURABLE_MODEL_QUEUE);
        assert_eq!(r.persistent_delivery, DeliveryPolicy::All);
        assert_eq!(r.non_persistent_delivery, DeliveryPolicy::AllAvailable);
        assert!(!r.use_dlq);
        assert_eq!(r.wildcard, WildcardOperation::Block, "the node's own");
        // WILDCARD is not inherited: the parent's BLOCK does not reach the child.
        parent.wildcard = WildcardOperation::Block;
        let child = TopicAttributes::default();
        let r = ResolvedTopicAttributes::resolve([&child, &parent]);
        assert_eq!(r.wildcard, WildcardOperation::Passthru);
    }

    #[test]
    fn a_root_that_says_asparent_falls_back_to_the_shipped_values() {
        let mut base = TopicAttributes::system_base();
        base.def_persistence = AsParentYesNo::AsParent;
        base.non_durable_model_q = "  ".into();
        let node = TopicAttributes {
            def_persistence: AsParentYesNo::AsParent,
            ..TopicAttributes::default()
        };
        let r = ResolvedTopicAttributes::resolve([&node, &base]);
        assert!(!r.default_persistent);
        assert_eq!(r.non_durable_model_q, NON_DURABLE_MODEL_QUEUE);
    }

    #[test]
    fn shipped_objects_and_round_trip() {
        let [base, template] = TopicDefinition::shipped();
        assert_eq!(base.name, SYSTEM_BASE_TOPIC);
        assert!(base.in_tree());
        assert_eq!(template.name, SYSTEM_DEFAULT_TOPIC);
        assert!(!template.in_tree());
        assert_eq!(template.attributes, TopicAttributes::default());
        assert!(TopicDefinition::may_have_blank_topic_string(
            SYSTEM_BASE_TOPIC
        ));
        assert!(!TopicDefinition::may_have_blank_topic_string("APP.TOPIC"));
        let d = TopicDefinition::new("PRICES", "Prices/EUR");
        assert_eq!(d.topic_string(), "Prices/EUR");
        assert_eq!(d.topic_type(), TopicType::Local);
        let s = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<TopicDefinition>(&s).unwrap(), d);
        // Attributes added later read as their defaults from an older definition.
        let old = r#"{"name":"T","attributes":{"topic_string":"a/b"}}"#;
        let t: TopicDefinition = serde_json::from_str(old).unwrap();
        assert_eq!(t.attributes.publish, TopicEnablement::AsParent);
    }
}
