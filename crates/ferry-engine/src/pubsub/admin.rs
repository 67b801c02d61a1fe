//! Administering subscriptions and looking at the topic tree: DEFINE, ALTER and DELETE
//! SUB, and what DISPLAY SUB, SBSTATUS, TPSTATUS and PUBSUB show.
//!
//! **DEFINE SUB** makes an administrative subscription (SUBTYPE(ADMIN)), always durable:
//! saved in the catalogue through `CatalogueChange::Subscription` as MQSUB's durable ones
//! are, and restored with them. Its topic string is TOPICOBJ's TOPICSTR and TOPICSTR
//! combined as MQ combines them (MQSUB's rule). DESTCLAS(PROVIDED) needs DEST, a local
//! queue or an alias of one (DEST then names the local queue, as MQSUB's provided
//! destination does); DESTCLAS(MANAGED) makes a permanent dynamic queue from the
//! topic's MDURMDL, named `SYSTEM.MANAGED.DURABLE.*` as MQSUB's. Retained publications
//! the topic string matches are put on the destination at once (not with REQONLY(YES)),
//! as at MQSUB; when one cannot be, the subscription is not made (2526).
//!
//! **ALTER SUB** (and DEFINE SUB REPLACE of an existing subscription) may change what
//! MQ lets ALTER SUB change ([`ferry_objects::subscription::ALTERABLE`]); a change of any
//! other attribute is refused with MQSUB's reason code for it (2510 topic, 2524
//! selector, 2512 SUBLEVEL, 2533 DESTCLAS, else 2435). Any named subscription may be
//! altered, MQSUB's too; a durable one is saved again.
//!
//! **Nodes of the topic tree**, for TPSTATUS and PUBSUB: the topic strings of the topic
//! objects, of the subscriptions, of the retained publications and of the handles open
//! for publishing. Ferry keeps no tree of its own (MQ's non-administrative nodes live
//! TREELIFE seconds after their last use; Ferry's as long as one of those uses them).

use crate::clock::Timestamp;
use crate::connection::{ConnId, HandleTarget, Hobj};
use crate::effects::Effects;
use crate::pubsub::subscribe::MANAGED_DURABLE_PREFIX;
use crate::pubsub::subscription::{SubKey, Subscription, SubscriptionId, SubscriptionType};
use crate::qmgr::QueueManager;
use crate::selection::{MessageFilter, SharedFilter};
use ferry_mqi::{FixedStr, MqError, ObjectDescriptor, ReasonCode};
use ferry_objects::queue::DefinitionType;
use ferry_objects::status::{PublisherStatus, SubscriptionStatusRecord, TopicNodeStatus};
use ferry_objects::subscription::{
    from_hex, not_alterable_reason, DestinationClass, SubscriptionKind, YesNo, ALTERABLE,
    MAX_SUB_STRING,
};
use ferry_objects::topic::TopicScope;
use ferry_objects::{
    AdminError, AttributeSet, DurableSubscription, QueueType, ResolvedTopicAttributes,
    SubscriptionAttributes, SubscriptionDefinition,
};
use ferry_pubsub::{TopicFilter, WildcardScheme};
use std::collections::BTreeSet;
use std::rc::Rc;

fn failed(reason: ReasonCode, text: impl Into<String>) -> AdminError {
    AdminError::Failed {
        reason,
        text: text.into(),
    }
}

fn mq_failed(e: MqError, text: impl Into<String>) -> AdminError {
    failed(e.reason, text)
}

/// True when TPSTATUS's `pattern` (topic-based wildcards) selects `node`: `#` alone is
/// the whole tree, the root ('') included.
fn selects(pattern: &str, node: &str) -> bool {
    pattern == "#" || TopicFilter::new(pattern, WildcardScheme::Topic).matches(node)
}

impl QueueManager {
    /// The subscription with SUBID `id`.
    fn sub_by_id(&self, id: &SubscriptionId) -> Option<SubKey> {
        self.subscriptions
            .iter()
            .find(|(_, s)| s.id == *id)
            .map(|(k, _)| k)
    }

    /// A subscription as MQSC shows it (every SUB attribute).
    fn definition_of(sub: &Subscription) -> SubscriptionDefinition {
        let mut def = sub.record().definition();
        if !sub.durable {
            def.attributes.durable = YesNo::No;
        }
        def
    }

    /// Every subscription as DISPLAY SUB shows it, sorted by name (unnamed non-durable
    /// ones first), then by SUBID.
    pub fn subscription_definitions(&self) -> Vec<SubscriptionDefinition> {
        let mut defs: Vec<SubscriptionDefinition> = self
            .subscriptions
            .iter()
            .map(|(_, s)| Self::definition_of(s))
            .collect();
        defs.sort_by(|a, b| (&a.name, &a.attributes.sub_id).cmp(&(&b.name, &b.attributes.sub_id)));
        defs
    }

    /// The subscription named `name` as DISPLAY SUB shows it.
    pub fn subscription_definition(&self, name: &str) -> Option<SubscriptionDefinition> {
        let key = self.subscriptions.by_name(name)?;
        self.subscriptions.get(key).map(Self::definition_of)
    }

    /// The subscription with SUBID `id` as DISPLAY SUB shows it.
    pub fn subscription_definition_by_id(
        &self,
        id: &SubscriptionId,
    ) -> Option<SubscriptionDefinition> {
        let key = self.sub_by_id(id)?;
        self.subscriptions.get(key).map(Self::definition_of)
    }

    /// The attributes in force at `topic` (TPSTATUS's resolved values).
    pub fn resolved_topic_attributes(&self, topic: &str) -> ResolvedTopicAttributes {
        self.topic_attributes(topic)
    }

    /// DESTQMGR: blank or this queue manager.
    fn check_dest_qmgr(&self, a: &SubscriptionAttributes) -> Result<(), AdminError> {
        let q = a.dest_qmgr.trim();
        if q.is_empty() || q == self.name {
            return Ok(());
        }
        Err(failed(
            ReasonCode::UnknownObjectQMgr,
            format!(
                "DESTQMGR({q}) is another queue manager; copies for other queue managers need channels between queue managers, which are not available yet"
            ),
        ))
    }

    /// The local queue a provided DEST names (directly or through an alias).
    fn provided_queue(&self, dest: &str) -> Result<String, AdminError> {
        let dest = dest.trim();
        if dest.is_empty() {
            return Err(failed(
                ReasonCode::InvalidDestination,
                "DEST is blank: name the queue the copies go to, or give DESTCLAS(MANAGED)",
            ));
        }
        let unknown = || {
            failed(
                ReasonCode::UnknownObjectName,
                format!("DEST({dest}) is not a queue of this queue manager"),
            )
        };
        let id = self.queues.lookup(dest).ok_or_else(unknown)?;
        let entry = self.queues.get(id).ok_or_else(unknown)?;
        let local = match entry.def.queue_type {
            QueueType::Local => id,
            QueueType::Alias => self.queues.alias_base(entry).map_err(|r| {
                failed(
                    r,
                    format!("DEST({dest}) is an alias that does not resolve to a local queue"),
                )
            })?,
            other => {
                return Err(failed(
                    ReasonCode::InvalidDestination,
                    format!(
                        "DEST({dest}) is a {} queue: give a local queue or an alias of one",
                        other.keyword()
                    ),
                ))
            }
        };
        let entry = self.queues.get(local).ok_or_else(unknown)?;
        if entry.is_temporary() {
            return Err(failed(
                ReasonCode::InvalidDestination,
                format!(
                    "DEST({dest}) is a temporary dynamic queue, which ends before a durable subscription would"
                ),
            ));
        }
        Ok(entry.def.name.clone())
    }

    /// Makes a managed durable subscription's queue from `model` (MDURMDL), as MQSUB
    /// does, without opening it.
    fn make_admin_managed_queue(
        &mut self,
        model: &str,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<String, AdminError> {
        let bad_model = |why: &str| {
            failed(
                ReasonCode::InvalidDestination,
                format!("MDURMDL({model}) {why}, so no managed queue can be made"),
            )
        };
        let id = self
            .queues
            .lookup(model)
            .ok_or_else(|| bad_model("is not a queue"))?;
        let entry = self
            .queues
            .get(id)
            .ok_or_else(|| bad_model("is not a queue"))?;
        if entry.def.queue_type != QueueType::Model {
            return Err(bad_model("is not a model queue"));
        }
        if entry.def.attributes.definition_type != DefinitionType::PermanentDynamic {
            return Err(bad_model("does not make permanent dynamic queues"));
        }
        let model_def = entry.def.clone();
        let od = ObjectDescriptor {
            object_name: FixedStr::truncating(model),
            dynamic_q_name: FixedStr::truncating(MANAGED_DURABLE_PREFIX),
            ..ObjectDescriptor::default()
        };
        let def = self
            .dynamic_definition(&model_def, &od, now)
            .map_err(|e| mq_failed(e, format!("no queue could be made from {model}")))?;
        let name = def.name.clone();
        self.define_queue(def, false, now, fx)?;
        Ok(name)
    }

    /// The topic string TOPICOBJ and TOPICSTR make together.
    fn admin_topic_string(&self, a: &SubscriptionAttributes) -> Result<String, AdminError> {
        let object = a.topic_object.trim();
        if object.is_empty() && a.topic_string.is_empty() {
            return Err(failed(
                ReasonCode::UnknownObjectName,
                "give TOPICSTR, TOPICOBJ or both",
            ));
        }
        self.resolve_topic_string(object, &a.topic_string)
            .map_err(|e| match e.reason {
                ReasonCode::UnknownObjectName if !object.is_empty() => failed(
                    e.reason,
                    format!("TOPICOBJ({object}) is not a topic object"),
                ),
                r => failed(r, "the topic string is not valid"),
            })
    }

    /// DEFINE SUB: makes the administrative durable subscription `def.name` (see the
    /// module comment); with `replace`, an existing subscription of that name is altered
    /// to `def` instead (what ALTER may not change must then be as it is). `selection`
    /// is SELECTOR compiled by the caller (None when there is none). Returns its SUBID.
    pub fn define_subscription(
        &mut self,
        def: SubscriptionDefinition,
        replace: bool,
        selection: Option<Rc<dyn MessageFilter>>,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<SubscriptionId, AdminError> {
        self.debug_check();
        let result = self.define_subscription_inner(def, replace, selection, now, fx);
        self.debug_check();
        result
    }

    fn define_subscription_inner(
        &mut self,
        def: SubscriptionDefinition,
        replace: bool,
        selection: Option<Rc<dyn MessageFilter>>,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<SubscriptionId, AdminError> {
        let name = def.name.clone();
        if name.trim().is_empty() || name.len() > MAX_SUB_STRING {
            return Err(failed(
                ReasonCode::SubNameError,
                format!("a subscription name has 1 to {MAX_SUB_STRING} characters"),
            ));
        }
        let a = &def.attributes;
        if let Some(key) = self.subscriptions.by_name(&name) {
            if !replace {
                return Err(AdminError::AlreadyExists { name });
            }
            let mut def = def;
            def.attributes.topic_string = self.admin_topic_string(&def.attributes)?;
            let id = self.subscriptions.get(key).map(|s| s.id);
            self.alter_subscription_inner(def, now, fx)?;
            return id.ok_or(AdminError::NotFound { name });
        }
        self.check_dest_qmgr(a)?;
        let topic_string = self.admin_topic_string(a)?;
        let attrs = self.topic_attributes(&topic_string);
        if !attrs.subscribe {
            return Err(failed(
                ReasonCode::SubInhibited,
                format!("subscriptions to '{topic_string}' are not allowed (SUB(DISABLED))"),
            ));
        }
        if !attrs.durable_subscriptions {
            return Err(failed(
                ReasonCode::DurabilityNotAllowed,
                format!("durable subscriptions to '{topic_string}' are not allowed (DURSUB(NO)), and DEFINE SUB makes durable ones"),
            ));
        }
        if !a.selector.is_empty() && selection.is_none() {
            return Err(failed(
                ReasonCode::SelectorSyntaxError,
                format!("SELECTOR('{}') is not a valid selector", a.selector),
            ));
        }
        let managed = a.dest_class == DestinationClass::Managed;
        if managed && !a.destination.trim().is_empty() {
            return Err(AdminError::Invalid(format!(
                "DEST({}) cannot be given with DESTCLAS(MANAGED): the queue manager makes the queue",
                a.destination.trim()
            )));
        }
        // Everything that can be refused is checked before the managed queue is made.
        let destination = if managed {
            self.make_admin_managed_queue(&attrs.durable_model_q.clone(), now, fx)?
        } else {
            self.provided_queue(&a.destination)?
        };
        let mut record = DurableSubscription {
            name: name.clone(),
            id: self.ids.next_id(),
            topic_string: topic_string.clone(),
            character_wildcards: false,
            destination: String::new(),
            managed,
            selector: String::new(),
            user_data: String::new(),
            correl_id: None,
            pub_priority: 0,
            sub_level: 1,
            on_request: false,
            any_user: true,
            user_id: String::new(),
            administrative: true,
            created_ms: now.0,
            shared: false,
            no_local: false,
            details: Default::default(),
        };
        record.set_attributes(a);
        record.destination = destination;
        let sub = Subscription {
            id: SubscriptionId(record.id),
            name: record.name,
            topic_string,
            scheme: if record.character_wildcards {
                WildcardScheme::Character
            } else {
                WildcardScheme::Topic
            },
            durable: true,
            destination: record.destination,
            managed,
            selector: selection.map(|f| (record.selector.clone(), SharedFilter(f))),
            user_data: record.user_data,
            correl_id: record.correl_id,
            pub_priority: record.pub_priority,
            sub_level: record.sub_level,
            on_request: record.on_request,
            any_user: record.any_user,
            user_id: record.user_id,
            kind: SubscriptionType::Admin,
            open_by: Vec::new(),
            shared: false,
            no_local: false,
            created: now,
            resumed: now,
            last_message: None,
            messages: 0,
            details: record.details,
        };
        let id = sub.id;
        let on_request = sub.on_request;
        let key = self.subscriptions.insert(sub);
        if !on_request {
            if let Err(e) = self.send_retained(key, now, fx) {
                // As at MQSUB: the subscription is not made (nor its managed queue).
                self.end_subscription(key, now, fx);
                return Err(mq_failed(
                    e,
                    "a retained publication could not be put on the destination, so the subscription was not made",
                ));
            }
        }
        self.durable_subscription_changed(key, fx);
        Ok(id)
    }

    /// ALTER SUB: gives subscription `def.name` the attributes of `def`. Only those MQ
    /// lets ALTER change may differ from the subscription's (see the module comment);
    /// DEST is checked as at DEFINE (a managed subscription's cannot change).
    pub fn alter_subscription(
        &mut self,
        def: SubscriptionDefinition,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        self.debug_check();
        let result = self.alter_subscription_inner(def, now, fx);
        self.debug_check();
        result
    }

    fn alter_subscription_inner(
        &mut self,
        def: SubscriptionDefinition,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        let name = def.name.clone();
        let key = self
            .subscriptions
            .by_name(&name)
            .ok_or_else(|| AdminError::NotFound { name: name.clone() })?;
        let sub = self
            .subscriptions
            .get(key)
            .ok_or_else(|| AdminError::NotFound { name: name.clone() })?;
        let current = Self::definition_of(sub).attributes;
        let new = &def.attributes;
        for row in SubscriptionAttributes::table() {
            if row.read_only || ALTERABLE.contains(&row.keyword) {
                continue;
            }
            if (row.get)(&current) != (row.get)(new) {
                return Err(failed(
                    not_alterable_reason(row.keyword),
                    format!(
                        "{} of subscription {name} cannot be changed (it is {}); DELETE SUB and DEFINE it again to change it",
                        row.keyword,
                        match (row.get)(&current).to_string() {
                            s if s.is_empty() => "blank".to_string(),
                            s => s,
                        }
                    ),
                ));
            }
        }
        self.check_dest_qmgr(new)?;
        let managed = current.dest_class == DestinationClass::Managed;
        let destination = if new.destination.trim() == current.destination {
            current.destination.clone()
        } else if managed {
            return Err(failed(
                ReasonCode::DestClassNotAlterable,
                format!("DEST of subscription {name} is its managed queue and cannot be changed"),
            ));
        } else {
            self.provided_queue(&new.destination)?
        };
        let Some(sub) = self.subscriptions.get_mut(key) else {
            return Err(AdminError::NotFound { name });
        };
        let mut record = sub.record();
        let mut wanted = new.clone();
        if wanted.sub_user.trim().is_empty() {
            wanted.sub_user = current.sub_user.clone();
        }
        record.set_attributes(&wanted);
        sub.destination = destination;
        sub.user_data = record.user_data;
        sub.correl_id = record.correl_id;
        sub.pub_priority = record.pub_priority;
        sub.on_request = record.on_request;
        sub.any_user = record.any_user;
        sub.user_id = record.user_id;
        sub.details = record.details;
        sub.details.altered_ms = now.0;
        let durable = sub.durable;
        self.subscriptions.recount_expiring();
        if durable {
            self.durable_subscription_changed(key, fx);
        }
        Ok(())
    }

    /// DELETE SUB SUBID(..): removes the subscription with SUBID `id` and its managed
    /// queue, as [`QueueManager::delete_subscription`] does by name (2428 when there is
    /// none, 2429 while a handle has it open).
    pub fn delete_subscription_by_id(
        &mut self,
        id: &SubscriptionId,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        let key = self.sub_by_id(id).ok_or(ReasonCode::NoSubscription)?;
        if self
            .subscriptions
            .get(key)
            .is_some_and(|s| !s.open_by.is_empty())
        {
            return Err(ReasonCode::SubscriptionInUse.into());
        }
        self.end_subscription(key, now, fx);
        self.debug_check();
        Ok(())
    }

    /// The SUBID 48 hex digits give, if they do.
    pub fn parse_subscription_id(hex: &str) -> Option<SubscriptionId> {
        from_hex::<24>(hex).map(SubscriptionId)
    }

    /// Every subscription as DISPLAY SBSTATUS and TPSTATUS TYPE(SUB) show it, sorted as
    /// [`QueueManager::subscription_definitions`].
    pub fn subscription_status_records(&self) -> Vec<SubscriptionStatusRecord> {
        let mut records: Vec<SubscriptionStatusRecord> = self
            .subscriptions
            .iter()
            .map(|(_, s)| SubscriptionStatusRecord {
                name: s.name.clone(),
                sub_id: s.id.to_string(),
                topic_string: s.topic_string.clone(),
                sub_type: match s.kind {
                    SubscriptionType::Api => SubscriptionKind::Api,
                    SubscriptionType::Admin => SubscriptionKind::Admin,
                }
                .keyword()
                .to_string(),
                durable: s.durable,
                user_id: s.user_id.clone(),
                active_connection: s
                    .open_by
                    .first()
                    .map(|(c, _)| c.to_string())
                    .unwrap_or_default(),
                resumed_ms: s.resumed.0,
                last_message_ms: s.last_message.map(|t| t.0),
                messages: s.messages,
            })
            .collect();
        records.sort_by(|a, b| (&a.name, &a.sub_id).cmp(&(&b.name, &b.sub_id)));
        records
    }

    /// The handles open for publishing: connection, handle and topic string.
    pub fn open_publishers(&self) -> Vec<(ConnId, Hobj, String)> {
        let mut out: Vec<(ConnId, Hobj, String)> = self
            .conns
            .iter()
            .flat_map(|(id, c)| {
                c.handles.iter().enumerate().filter_map(move |(i, h)| {
                    let h = h.as_ref()?;
                    matches!(h.target, HandleTarget::Topic)
                        .then(|| (*id, Hobj(i as i32 + 1), h.name.clone()))
                })
            })
            .collect();
        out.sort();
        out
    }

    /// Every node of the topic tree (see the module comment), sorted.
    pub fn topic_nodes(&self) -> BTreeSet<String> {
        let mut nodes: BTreeSet<String> = self
            .topics
            .values()
            .filter(|t| t.in_tree())
            .map(|t| t.topic_string().to_string())
            .collect();
        nodes.extend(
            self.subscriptions
                .iter()
                .map(|(_, s)| s.topic_string.clone()),
        );
        nodes.extend(self.retained_topics());
        nodes.extend(self.open_publishers().into_iter().map(|(_, _, t)| t));
        nodes
    }

    /// PUBSCOPE and SUBSCOPE in force at `topic`: the nearest topic object's that is not
    /// ASPARENT, ALL when none is.
    fn resolved_scopes(&self, topic: &str) -> (&'static str, &'static str) {
        let on_path = self.topic_objects_on_path(topic);
        let first = |get: fn(&ferry_objects::TopicAttributes) -> TopicScope| {
            on_path
                .iter()
                .map(|(_, d)| get(&d.attributes))
                .find(|s| *s != TopicScope::AsParent)
                .unwrap_or(TopicScope::All)
                .keyword()
        };
        (first(|a| a.pub_scope), first(|a| a.sub_scope))
    }

    /// DISPLAY TPSTATUS(`pattern`) TYPE(TOPIC): every node `pattern` selects (topic-based
    /// wildcards; `#` is the whole tree), sorted by topic string.
    pub fn topic_node_statuses(&self, pattern: &str) -> Vec<TopicNodeStatus> {
        let retained: BTreeSet<String> = self.retained_topics().into_iter().collect();
        let publishers = self.open_publishers();
        self.topic_nodes()
            .into_iter()
            .filter(|n| selects(pattern, n))
            .map(|node| {
                let (pub_scope, sub_scope) = self.resolved_scopes(&node);
                TopicNodeStatus {
                    admin: self
                        .topic_object_for_string(&node)
                        .map(|t| t.name.clone())
                        .unwrap_or_default(),
                    resolved: self.topic_attributes(&node),
                    pub_scope,
                    sub_scope,
                    pub_count: publishers.iter().filter(|(_, _, t)| *t == node).count() as u64,
                    sub_count: self
                        .subscriptions
                        .iter()
                        .filter(|(_, s)| s.topic_string == node)
                        .count() as u64,
                    retained: retained.contains(&node),
                    topic_string: node,
                }
            })
            .collect()
    }

    /// DISPLAY TPSTATUS(`pattern`) TYPE(PUB): every handle open for publishing on a node
    /// `pattern` selects. Ferry does not count publications per handle yet, so
    /// LPUBDATE/LPUBTIME are blank and NUMPUBS 0.
    pub fn publisher_statuses(&self, pattern: &str) -> Vec<PublisherStatus> {
        self.open_publishers()
            .into_iter()
            .filter(|(_, _, t)| selects(pattern, t))
            .map(|(conn, _, topic)| PublisherStatus {
                topic_string: topic,
                active_connection: conn.to_string(),
                last_publish_ms: None,
                publishes: 0,
            })
            .collect()
    }
}
