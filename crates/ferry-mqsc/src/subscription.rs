//! Runs the publish/subscribe commands against an [`AdminTarget`]: DEFINE, ALTER, DELETE
//! and DISPLAY SUB, DISPLAY SBSTATUS, TPSTATUS and PUBSUB, and CLEAR TOPICSTR.
//!
//! DEFINE SUB starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.SUB's values
//! (the table defaults: Ferry has no such object, and LIKE(SYSTEM.DEFAULT.SUB) names
//! them too), then the named attributes; the target compiles the selector, resolves
//! the topic string and destination and makes the subscription. ALTER starts from the
//! subscription as it is. DISPLAY SUB always shows MQ's summary (SUB, SUBID, TOPICSTR,
//! DEST, DESTQMGR, DESTCORL, DURABLE, SUBTYPE, SUBUSER); ALL adds the rest.

use crate::command::{Selection, Setting, SubscriptionFilter, SubscriptionRef, TopicStatusType};
use crate::display::{
    render_block, Field, FieldValue, PUBSUB_FIELDS, SBSTATUS_FIELDS, TPSTATUS_PUB_FIELDS,
    TPSTATUS_SUB_FIELDS, TPSTATUS_TOPIC_FIELDS,
};
use crate::executor::{apply, display as show, outcome, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_objects::subscription::{DestinationClass, SUB, SYSTEM_DEFAULT_SUB};
use ferry_objects::{SubscriptionAttributes, SubscriptionDefinition};
use std::collections::BTreeSet;

/// The attributes DISPLAY SUB shows whatever is asked for (MQ's summary).
const SUMMARY: &[&str] = &[
    "SUB", "SUBID", "TOPICSTR", "DEST", "DESTQMGR", "DESTCORL", "DURABLE", "SUBTYPE", "SUBUSER",
];

/// DESTQMGR other than blank or this queue manager: FRY9002E (channels come later).
fn other_qmgr(target: &dyn AdminTarget, a: &SubscriptionAttributes) -> Option<CommandResult> {
    let q = a.dest_qmgr.trim();
    (!q.is_empty() && q != target.qmgr_name()).then(|| {
        CommandResult::failed(
            &messages::NOT_SUPPORTED,
            &[&format!(
                "SUB DESTQMGR({q}) (copies for another queue manager need channels between queue managers)"
            )],
        )
    })
}

/// DEFINE SUB.
pub fn define(
    target: &mut dyn AdminTarget,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.subscription(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let mut base = match like {
        None => SubscriptionAttributes::default(),
        Some(l) if l == SYSTEM_DEFAULT_SUB => SubscriptionAttributes::default(),
        Some(l) => match target.subscription(l) {
            Some(s) => s.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
    };
    // What the queue manager gives a subscription is not copied: its identity, dates,
    // type, and a managed one's queue.
    let defaults = SubscriptionAttributes::default();
    if base.dest_class == DestinationClass::Managed {
        base.destination = String::new();
    }
    base.sub_id = defaults.sub_id;
    base.sub_type = defaults.sub_type;
    base.durable = defaults.durable;
    base.creation_date = defaults.creation_date;
    base.creation_time = defaults.creation_time;
    base.alteration_date = defaults.alteration_date;
    base.alteration_time = defaults.alteration_time;
    if like.is_some() {
        // The source's TOPICSTR is its resolved topic string: it stands alone, unless a
        // TOPICOBJ given now starts the topic string again.
        if settings.iter().any(|s| s.keyword == "TOPICOBJ") {
            base.topic_string = String::new();
        } else {
            base.topic_object = String::new();
        }
    }
    let mut def = SubscriptionDefinition {
        name: name.to_string(),
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    if let Some(refused) = other_qmgr(target, &def.attributes) {
        return refused;
    }
    outcome(
        target.define_subscription(def, replace),
        &messages::SUB_CREATED,
        true,
    )
}

/// The subscription `sub` names, or the answer when there is none.
fn find(
    target: &dyn AdminTarget,
    sub: &SubscriptionRef,
) -> Result<SubscriptionDefinition, CommandResult> {
    let not_found = || CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&sub.text()]);
    let found = match (&sub.name, &sub.id) {
        (Some(n), _) => target.subscription(n),
        (None, Some(id)) => target
            .subscriptions()
            .into_iter()
            .find(|s| s.attributes.sub_id == *id),
        (None, None) => None,
    };
    let def = found.ok_or_else(not_found)?;
    match &sub.id {
        Some(id) if def.attributes.sub_id != *id => Err(not_found()),
        _ => Ok(def),
    }
}

/// ALTER SUB.
pub fn alter(
    target: &mut dyn AdminTarget,
    sub: &SubscriptionRef,
    settings: &[Setting],
) -> CommandResult {
    let mut def = match find(target, sub) {
        Ok(d) => d,
        Err(answer) => return answer,
    };
    if def.name.is_empty() {
        return CommandResult::failed(
            &messages::REQUEST_REFUSED,
            &["an unnamed subscription ends with its application and cannot be altered"],
        );
    }
    apply(&mut def.attributes, settings);
    if let Some(refused) = other_qmgr(target, &def.attributes) {
        return refused;
    }
    outcome(
        target.alter_subscription(def),
        &messages::SUB_CHANGED,
        false,
    )
}

/// DELETE SUB.
pub fn delete(target: &mut dyn AdminTarget, sub: &SubscriptionRef) -> CommandResult {
    let def = match find(target, sub) {
        Ok(d) => d,
        Err(answer) => return answer,
    };
    outcome(
        target.delete_subscription(&def.attributes.sub_id),
        &messages::SUB_DELETED,
        false,
    )
}

/// Whether DISPLAY SUB / SBSTATUS's filter selects a subscription.
fn selected(
    filter: &SubscriptionFilter,
    selection: &Selection,
    name: &str,
    sub_id: &str,
    durable: bool,
    kind: &str,
) -> bool {
    selection.name.matches(name)
        && filter.id.as_deref().is_none_or(|id| id == sub_id)
        && filter.durable.is_none_or(|d| d == durable)
        && filter.sub_type.selects(kind)
}

/// What "not found" names for a DISPLAY of subscriptions.
fn wanted(selection: &Selection, filter: &SubscriptionFilter) -> String {
    filter.id.clone().unwrap_or_else(|| selection.name.text())
}

/// DISPLAY SUB.
pub fn display(
    target: &dyn AdminTarget,
    selection: &Selection,
    filter: &SubscriptionFilter,
) -> CommandResult {
    let blocks: Vec<Vec<Field>> = target
        .subscriptions()
        .into_iter()
        .filter(|s| {
            let a = &s.attributes;
            selected(
                filter,
                selection,
                &s.name,
                &a.sub_id,
                a.durable.keyword() == "YES",
                a.sub_type.keyword(),
            )
        })
        .map(|s| {
            let mut fields = vec![Field::new("SUB", FieldValue::Text(s.name.clone()))];
            fields.extend(table_fields(&s.attributes, SUB));
            fields
        })
        .collect();
    if blocks.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&wanted(selection, filter)]);
    }
    show(blocks, selection, SUMMARY, &messages::DISPLAY_SUB)
}

/// DISPLAY SBSTATUS.
pub fn display_status(
    target: &dyn AdminTarget,
    selection: &Selection,
    filter: &SubscriptionFilter,
) -> CommandResult {
    let blocks: Vec<Vec<Field>> = target
        .subscription_statuses()
        .into_iter()
        .filter(|s| {
            selected(
                filter,
                selection,
                &s.name,
                &s.sub_id,
                s.durable,
                &s.sub_type,
            )
        })
        .map(|s| {
            let mut fields = vec![
                Field::new("SUB", FieldValue::Text(s.name.clone())),
                Field::new("SUBID", FieldValue::Text(s.sub_id.clone())),
            ];
            fields.extend(SBSTATUS_FIELDS.iter().map(|f| f.field(&s)));
            fields
        })
        .collect();
    if blocks.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&wanted(selection, filter)]);
    }
    show(
        blocks,
        selection,
        &["SUB", "SUBID"],
        &messages::DISPLAY_SBSTATUS,
    )
}

/// DISPLAY TPSTATUS: no node selected is "not found"; TYPE(SUB) and TYPE(PUB) with
/// nodes but none on them answer nothing and succeed (as DISPLAY QSTATUS TYPE(HANDLE)).
pub fn display_topic_status(
    target: &dyn AdminTarget,
    topic: &str,
    status_type: TopicStatusType,
    selection: &Selection,
) -> CommandResult {
    let nodes = target.topic_statuses(topic);
    if nodes.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[topic]);
    }
    let head = |t: &str| vec![Field::new("TOPICSTR", FieldValue::Text(t.to_string()))];
    let blocks: Vec<Vec<Field>> = match status_type {
        TopicStatusType::Topic => nodes
            .iter()
            .map(|n| {
                let mut fields = head(&n.topic_string);
                fields.extend(TPSTATUS_TOPIC_FIELDS.iter().map(|f| f.field(n)));
                fields
            })
            .collect(),
        TopicStatusType::Sub => {
            let on: BTreeSet<&str> = nodes.iter().map(|n| n.topic_string.as_str()).collect();
            let mut subs = target.subscription_statuses();
            subs.retain(|s| on.contains(s.topic_string.as_str()));
            subs.sort_by(|a, b| (&a.topic_string, &a.sub_id).cmp(&(&b.topic_string, &b.sub_id)));
            subs.iter()
                .map(|s| {
                    let mut fields = head(&s.topic_string);
                    fields.extend(TPSTATUS_SUB_FIELDS.iter().map(|f| f.field(s)));
                    fields
                })
                .collect()
        }
        TopicStatusType::Pub => target
            .publisher_statuses(topic)
            .iter()
            .map(|p| {
                let mut fields = head(&p.topic_string);
                fields.extend(TPSTATUS_PUB_FIELDS.iter().map(|f| f.field(p)));
                fields
            })
            .collect(),
    };
    if blocks.is_empty() {
        return CommandResult {
            ok: true,
            lines: Vec::new(),
        };
    }
    let always: &[&str] = match status_type {
        TopicStatusType::Topic => &["TOPICSTR"],
        TopicStatusType::Sub => &["TOPICSTR", "SUBID"],
        TopicStatusType::Pub => &["TOPICSTR", "ACTCONN"],
    };
    show(blocks, selection, always, &messages::DISPLAY_TPSTATUS)
}

/// DISPLAY PUBSUB.
pub fn display_pubsub(
    target: &dyn AdminTarget,
    request: &crate::command::Request,
) -> CommandResult {
    let status = target.pubsub_status();
    let mut fields = vec![Field::new("QMNAME", FieldValue::Text(target.qmgr_name()))];
    fields.extend(PUBSUB_FIELDS.iter().map(|f| f.field(&status)));
    let shown: Vec<Field> = fields
        .into_iter()
        .filter(|f| f.keyword == "QMNAME" || f.keyword == "TYPE" || request.wants(f.keyword))
        .collect();
    CommandResult {
        ok: true,
        lines: render_block(&messages::DISPLAY_PUBSUB, &shown),
    }
}

/// CLEAR TOPICSTR CLRTYPE(RETAINED).
pub fn clear_topic_string(target: &mut dyn AdminTarget, topic: &str) -> CommandResult {
    match target.clear_retained(topic) {
        Ok(was) => CommandResult {
            ok: true,
            lines: vec![messages::TOPIC_STRING_CLEARED.format(&[
                &topic,
                &if was {
                    "its retained publication was removed"
                } else {
                    "it had no retained publication"
                },
            ])],
        },
        Err(e) => crate::executor::admin_failure(e, false),
    }
}
