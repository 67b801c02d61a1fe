//! Runs DEFINE, ALTER, DELETE and DISPLAY TOPIC against an [`AdminTarget`].
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.TOPIC (falling back
//! to the table defaults, which are that object's), then the named attributes; the target
//! stores it and refuses a blank TOPICSTR, one another topic object has, or a change of
//! an existing object's. DISPLAY shows attributes as defined: ASPARENT stays ASPARENT
//! (what a node resolves to is DISPLAY TPSTATUS's business).

use crate::command::{Selection, Setting};
use crate::display::{date_time, Field, FieldValue};
use crate::executor::{apply, display as show, outcome, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_objects::topic::SYSTEM_DEFAULT_TOPIC;
use ferry_objects::TopicDefinition;

/// DEFINE TOPIC.
pub fn define(
    target: &mut dyn AdminTarget,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.topic(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base = match like {
        Some(l) => match target.topic(l) {
            Some(t) => t.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .topic(SYSTEM_DEFAULT_TOPIC)
            .map(|t| t.attributes)
            .unwrap_or_default(),
    };
    let mut def = TopicDefinition {
        name: name.to_string(),
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(
        target.define_topic(def, replace),
        &messages::TOPIC_CREATED,
        true,
    )
}

/// ALTER TOPIC.
pub fn alter(target: &mut dyn AdminTarget, name: &str, settings: &[Setting]) -> CommandResult {
    let Some(mut def) = target.topic(name) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(target.alter_topic(def), &messages::TOPIC_CHANGED, false)
}

/// DELETE TOPIC.
pub fn delete(target: &mut dyn AdminTarget, name: &str) -> CommandResult {
    if target.topic(name).is_none() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    }
    outcome(target.delete_topic(name), &messages::TOPIC_DELETED, false)
}

/// DISPLAY TOPIC: every topic object is TYPE(LOCAL), so TYPE(LOCAL) and TYPE(ALL) show
/// the same ones.
pub fn display(target: &dyn AdminTarget, selection: &Selection) -> CommandResult {
    let blocks = target
        .topics()
        .into_iter()
        .filter(|t| selection.name.matches(&t.name))
        .map(|t| {
            let mut fields = vec![
                Field::new("TOPIC", FieldValue::Text(t.name.clone())),
                Field::new("TYPE", FieldValue::Keyword(t.topic_type().keyword())),
            ];
            fields.extend(table_fields(&t.attributes, t.topic_type().mask()));
            fields
        })
        .collect();
    show(
        blocks,
        selection,
        &["TOPIC", "TYPE"],
        &messages::DISPLAY_TOPIC,
    )
}

fn stamp(target: &dyn AdminTarget, def: &mut TopicDefinition) {
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
}
