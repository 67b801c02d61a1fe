//! Runs DEFINE, ALTER, DELETE and DISPLAY PROCESS against an [`AdminTarget`].
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.PROCESS, then the
//! named attributes. A process is read when a queue naming it triggers, so a change is
//! seen by the next trigger message.

use crate::command::{Selection, Setting};
use crate::display::{date_time, Field, FieldValue};
use crate::executor::{apply, display as show, outcome, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_objects::process::DEFAULT_PROCESS;
use ferry_objects::ProcessDefinition;

/// DEFINE PROCESS.
pub fn define(
    target: &mut dyn AdminTarget,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.process(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base = match like {
        Some(l) => match target.process(l) {
            Some(p) => p.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .process(DEFAULT_PROCESS)
            .map(|p| p.attributes)
            .unwrap_or_default(),
    };
    let mut def = ProcessDefinition {
        name: name.to_string(),
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(
        target.define_process(def, replace),
        &messages::PROCESS_CREATED,
        true,
    )
}

/// ALTER PROCESS.
pub fn alter(target: &mut dyn AdminTarget, name: &str, settings: &[Setting]) -> CommandResult {
    let Some(mut def) = target.process(name) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(target.alter_process(def), &messages::PROCESS_CHANGED, false)
}

/// DELETE PROCESS.
pub fn delete(target: &mut dyn AdminTarget, name: &str) -> CommandResult {
    if target.process(name).is_none() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    }
    outcome(
        target.delete_process(name),
        &messages::PROCESS_DELETED,
        false,
    )
}

/// DISPLAY PROCESS.
pub fn display(target: &dyn AdminTarget, selection: &Selection) -> CommandResult {
    let blocks = target
        .processes()
        .into_iter()
        .filter(|p| selection.name.matches(&p.name))
        .map(|p| {
            let mut fields = vec![Field::new("PROCESS", FieldValue::Text(p.name.clone()))];
            fields.extend(table_fields(&p.attributes, u32::MAX));
            fields
        })
        .collect();
    show(blocks, selection, &["PROCESS"], &messages::DISPLAY_PROCESS)
}

fn stamp(target: &dyn AdminTarget, def: &mut ProcessDefinition) {
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
}
