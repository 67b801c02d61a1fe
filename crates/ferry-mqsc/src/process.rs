//! Runs DISPLAY PROCESS against an [`AdminTarget`]; DEFINE, ALTER and DELETE are
//! [`crate::plain_object`]'s.
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.PROCESS, then the
//! named attributes. A process is read when a queue naming it triggers, so a change is
//! seen by the next trigger message.

use crate::command::Selection;
use crate::display::{Field, FieldValue};
use crate::executor::{display as show, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;

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
