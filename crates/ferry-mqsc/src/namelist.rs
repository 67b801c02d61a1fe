//! Runs DEFINE, ALTER, DELETE and DISPLAY NAMELIST against an [`AdminTarget`].
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.NAMELIST, then the
//! named attributes; DISPLAY adds NAMCOUNT, the number of names, as MQ shows it.

use crate::command::{Selection, Setting};
use crate::display::{date_time, Field, FieldValue};
use crate::executor::{apply, display as show, outcome, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_objects::namelist::{DEFAULT_NAMELIST, NAMELIST};
use ferry_objects::NamelistDefinition;

/// DEFINE NAMELIST.
pub fn define(
    target: &mut dyn AdminTarget,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.namelist(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base = match like {
        Some(l) => match target.namelist(l) {
            Some(n) => n.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .namelist(DEFAULT_NAMELIST)
            .map(|n| n.attributes)
            .unwrap_or_default(),
    };
    let mut def = NamelistDefinition {
        name: name.to_string(),
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(
        target.define_namelist(def, replace),
        &messages::NAMELIST_CREATED,
        true,
    )
}

/// ALTER NAMELIST.
pub fn alter(target: &mut dyn AdminTarget, name: &str, settings: &[Setting]) -> CommandResult {
    let Some(mut def) = target.namelist(name) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(
        target.alter_namelist(def),
        &messages::NAMELIST_CHANGED,
        false,
    )
}

/// DELETE NAMELIST.
pub fn delete(target: &mut dyn AdminTarget, name: &str) -> CommandResult {
    if target.namelist(name).is_none() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    }
    outcome(
        target.delete_namelist(name),
        &messages::NAMELIST_DELETED,
        false,
    )
}

/// DISPLAY NAMELIST.
pub fn display(target: &dyn AdminTarget, selection: &Selection) -> CommandResult {
    let blocks = target
        .namelists()
        .into_iter()
        .filter(|n| selection.name.matches(&n.name))
        .map(|n| {
            let count = i64::try_from(n.name_count()).unwrap_or(i64::MAX);
            let mut fields = vec![
                Field::new("NAMELIST", FieldValue::Text(n.name.clone())),
                Field::new("NAMCOUNT", FieldValue::Int(count)),
            ];
            fields.extend(table_fields(&n.attributes, NAMELIST));
            fields
        })
        .collect();
    show(
        blocks,
        selection,
        &["NAMELIST"],
        &messages::DISPLAY_NAMELIST,
    )
}

fn stamp(target: &dyn AdminTarget, def: &mut NamelistDefinition) {
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
}
