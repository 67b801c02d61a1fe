//! Runs DISPLAY NAMELIST against an [`AdminTarget`]; DEFINE, ALTER and DELETE are
//! [`crate::plain_object`]'s.
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.NAMELIST, then the
//! named attributes; DISPLAY adds NAMCOUNT, the number of names, as MQ shows it.

use crate::command::Selection;
use crate::display::{Field, FieldValue};
use crate::executor::{display as show, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_objects::namelist::NAMELIST;

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
