//! Runs DISPLAY TOPIC against an [`AdminTarget`]; DEFINE, ALTER and DELETE are
//! [`crate::plain_object`]'s.
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.TOPIC (falling back
//! to the table defaults, which are that object's), then the named attributes; the target
//! stores it and refuses a blank TOPICSTR, one another topic object has, or a change of
//! an existing object's. DISPLAY shows attributes as defined: ASPARENT stays ASPARENT
//! (what a node resolves to is DISPLAY TPSTATUS's business).

use crate::command::Selection;
use crate::display::{Field, FieldValue};
use crate::executor::{display as show, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;

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
