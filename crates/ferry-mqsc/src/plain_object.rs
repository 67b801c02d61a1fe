//! DEFINE, ALTER and DELETE for the objects whose commands have MQ's plain shape:
//! PROCESS, NAMELIST and TOPIC.
//!
//! DEFINE refuses an existing name unless REPLACE, starts from LIKE(name) or from the
//! kind's default object (SYSTEM.DEFAULT.PROCESS...; the table defaults when that is
//! gone), sets the named attributes and stamps ALTDATE/ALTTIME; ALTER reads the object,
//! sets and stamps; DELETE refuses an unknown name. What differs between kinds (where the
//! target keeps them, which messages confirm) is a [`PlainObject`] implementation; the
//! target still decides what it refuses (a topic's TOPICSTR, a namelist in use...).

use crate::command::Setting;
use crate::display::date_time;
use crate::executor::{apply, outcome, CommandResult};
use crate::target::AdminTarget;
use ferry_messages::{self as messages, Message};
use ferry_objects::{
    AdminError, AttributeSet, NamelistDefinition, ProcessDefinition, TopicDefinition,
};

/// A kind of object administered with the plain DEFINE/ALTER/DELETE shape.
pub(crate) trait PlainObject: Sized {
    /// Its attribute table.
    type Attributes: AttributeSet + Default;
    /// The object DEFINE copies when LIKE is not given.
    const DEFAULT_OBJECT: &'static str;
    /// The messages confirming DEFINE, ALTER and DELETE.
    const CREATED: &'static Message;
    /// See [`PlainObject::CREATED`].
    const CHANGED: &'static Message;
    /// See [`PlainObject::CREATED`].
    const DELETED: &'static Message;

    /// A definition named `name` with `attributes`.
    fn new(name: &str, attributes: Self::Attributes) -> Self;
    /// Its attributes.
    fn attributes_mut(&mut self) -> &mut Self::Attributes;
    /// Its attributes, taking it apart.
    fn into_attributes(self) -> Self::Attributes;
    /// Sets ALTDATE and ALTTIME.
    fn stamp(attributes: &mut Self::Attributes, date: String, time: String);
    /// The object of this kind named `name`, from the target.
    fn find(target: &dyn AdminTarget, name: &str) -> Option<Self>;
    /// Stores a new one (or with `replace` replaces one).
    fn define(self, target: &mut dyn AdminTarget, replace: bool) -> Result<(), AdminError>;
    /// Replaces an existing one's attributes.
    fn alter(self, target: &mut dyn AdminTarget) -> Result<(), AdminError>;
    /// Deletes the one named `name`.
    fn delete(target: &mut dyn AdminTarget, name: &str) -> Result<(), AdminError>;
}

/// DEFINE of a plain object.
pub(crate) fn define<O: PlainObject>(
    target: &mut dyn AdminTarget,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if O::find(target, name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base = match like {
        Some(l) => match O::find(target, l) {
            Some(o) => o.into_attributes(),
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => O::find(target, O::DEFAULT_OBJECT)
            .map(O::into_attributes)
            .unwrap_or_default(),
    };
    let mut def = O::new(name, base);
    set_and_stamp(target, &mut def, settings);
    outcome(def.define(target, replace), O::CREATED, true)
}

/// ALTER of a plain object.
pub(crate) fn alter<O: PlainObject>(
    target: &mut dyn AdminTarget,
    name: &str,
    settings: &[Setting],
) -> CommandResult {
    let Some(mut def) = O::find(target, name) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    set_and_stamp(target, &mut def, settings);
    outcome(def.alter(target), O::CHANGED, false)
}

/// DELETE of a plain object.
pub(crate) fn delete<O: PlainObject>(target: &mut dyn AdminTarget, name: &str) -> CommandResult {
    if O::find(target, name).is_none() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    }
    outcome(O::delete(target, name), O::DELETED, false)
}

fn set_and_stamp<O: PlainObject>(target: &dyn AdminTarget, def: &mut O, settings: &[Setting]) {
    apply(def.attributes_mut(), settings);
    let (date, time) = date_time(target.now_ms());
    O::stamp(def.attributes_mut(), date, time);
}

/// Implements [`PlainObject`] for a definition type from where the target keeps it.
macro_rules! plain_object {
    ($def:ty, $attrs:ty, $default:expr, [$created:ident, $changed:ident, $deleted:ident],
     $find:ident, $define:ident, $alter:ident, $delete:ident) => {
        impl PlainObject for $def {
            type Attributes = $attrs;
            const DEFAULT_OBJECT: &'static str = $default;
            const CREATED: &'static Message = &messages::$created;
            const CHANGED: &'static Message = &messages::$changed;
            const DELETED: &'static Message = &messages::$deleted;

            fn new(name: &str, attributes: $attrs) -> Self {
                Self {
                    name: name.to_string(),
                    attributes,
                }
            }
            fn attributes_mut(&mut self) -> &mut $attrs {
                &mut self.attributes
            }
            fn into_attributes(self) -> $attrs {
                self.attributes
            }
            fn stamp(attributes: &mut $attrs, date: String, time: String) {
                attributes.alteration_date = date;
                attributes.alteration_time = time;
            }
            fn find(target: &dyn AdminTarget, name: &str) -> Option<Self> {
                target.$find(name)
            }
            fn define(self, target: &mut dyn AdminTarget, replace: bool) -> Result<(), AdminError> {
                target.$define(self, replace)
            }
            fn alter(self, target: &mut dyn AdminTarget) -> Result<(), AdminError> {
                target.$alter(self)
            }
            fn delete(target: &mut dyn AdminTarget, name: &str) -> Result<(), AdminError> {
                target.$delete(name)
            }
        }
    };
}

plain_object!(
    ProcessDefinition,
    ferry_objects::ProcessAttributes,
    ferry_objects::process::DEFAULT_PROCESS,
    [PROCESS_CREATED, PROCESS_CHANGED, PROCESS_DELETED],
    process,
    define_process,
    alter_process,
    delete_process
);
plain_object!(
    NamelistDefinition,
    ferry_objects::NamelistAttributes,
    ferry_objects::namelist::DEFAULT_NAMELIST,
    [NAMELIST_CREATED, NAMELIST_CHANGED, NAMELIST_DELETED],
    namelist,
    define_namelist,
    alter_namelist,
    delete_namelist
);
plain_object!(
    TopicDefinition,
    ferry_objects::TopicAttributes,
    ferry_objects::topic::SYSTEM_DEFAULT_TOPIC,
    [TOPIC_CREATED, TOPIC_CHANGED, TOPIC_DELETED],
    topic,
    define_topic,
    alter_topic,
    delete_topic
);
