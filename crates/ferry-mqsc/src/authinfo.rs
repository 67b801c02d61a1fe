//! Runs DEFINE, ALTER, DELETE and DISPLAY AUTHINFO against an [`AdminTarget`].
//!
//! DEFINE starts from LIKE(name) or, as MQ does, from SYSTEM.DEFAULT.AUTHINFO.IDPWOS when
//! it has the same AUTHTYPE, then the named attributes; the target stores it. The object
//! QMGR CONNAUTH names is used from the next REFRESH SECURITY TYPE(CONNAUTH) (or start).

use crate::command::{Selection, Setting};
use crate::display::{date_time, Field, FieldValue};
use crate::executor::{apply, display as show, outcome, table_fields, CommandResult};
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_objects::authinfo::DEFAULT_IDPWOS;
use ferry_objects::{AuthInfoDefinition, AuthInfoType};

/// DEFINE AUTHINFO.
pub fn define(
    target: &mut dyn AdminTarget,
    auth_type: AuthInfoType,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.authinfo(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base = match like {
        Some(l) => match target.authinfo(l).filter(|a| a.auth_type == auth_type) {
            Some(a) => a.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .authinfo(DEFAULT_IDPWOS)
            .filter(|a| a.auth_type == auth_type)
            .map(|a| a.attributes)
            .unwrap_or_default(),
    };
    let mut def = AuthInfoDefinition {
        name: name.to_string(),
        auth_type,
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(
        target.define_authinfo(def, replace),
        &messages::AUTHINFO_CREATED,
        true,
    )
}

/// ALTER AUTHINFO.
pub fn alter(
    target: &mut dyn AdminTarget,
    auth_type: Option<AuthInfoType>,
    name: &str,
    settings: &[Setting],
) -> CommandResult {
    let Some(mut def) = target
        .authinfo(name)
        .filter(|a| auth_type.is_none_or(|t| t == a.auth_type))
    else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    apply(&mut def.attributes, settings);
    stamp(target, &mut def);
    outcome(
        target.alter_authinfo(def),
        &messages::AUTHINFO_CHANGED,
        false,
    )
}

/// DELETE AUTHINFO.
pub fn delete(target: &mut dyn AdminTarget, name: &str) -> CommandResult {
    if target.authinfo(name).is_none() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    }
    outcome(
        target.delete_authinfo(name),
        &messages::AUTHINFO_DELETED,
        false,
    )
}

/// DISPLAY AUTHINFO.
pub fn display(
    target: &dyn AdminTarget,
    auth_type: Option<AuthInfoType>,
    selection: &Selection,
) -> CommandResult {
    let blocks = target
        .authinfos()
        .into_iter()
        .filter(|a| selection.name.matches(&a.name))
        .filter(|a| auth_type.is_none_or(|t| t == a.auth_type))
        .map(|a| {
            let mut fields = vec![
                Field::new("AUTHINFO", FieldValue::Text(a.name.clone())),
                Field::new("AUTHTYPE", FieldValue::Keyword(a.auth_type.keyword())),
            ];
            fields.extend(table_fields(&a.attributes, a.auth_type.mask()));
            // A password is never shown, only whether there is one (as MQ shows LDAPPWD).
            for f in &mut fields {
                if f.keyword == "LDAPPWD" && !a.attributes.ldap_password.is_empty() {
                    f.value = FieldValue::Text("********".into());
                }
            }
            fields
        })
        .collect();
    show(
        blocks,
        selection,
        &["AUTHINFO", "AUTHTYPE"],
        &messages::DISPLAY_AUTHINFO,
    )
}

fn stamp(target: &dyn AdminTarget, def: &mut AuthInfoDefinition) {
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
}
