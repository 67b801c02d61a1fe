//! Runs SET, DELETE and DISPLAY AUTHREC and DISPLAY ENTAUTH against an [`AdminTarget`]
//! and words the answer as MQ does: one block per record with PROFILE, ENTITY, ENTTYPE,
//! OBJTYPE and AUTHLIST.

use crate::command::{AuthRecKey, AuthRecMatch};
use crate::display::{render_block, Field, FieldValue};
use crate::executor::CommandResult;
use crate::target::AdminTarget;
use ferry_messages as messages;
use ferry_mqi::ReasonCode;
use ferry_objects::AdminError;
use ferry_security::oam::{
    Authorities, AuthorityName, EntityType, Principal, Profile, ProfileObjectType, RecordKey,
};

fn failed(line: String) -> CommandResult {
    CommandResult {
        ok: false,
        lines: vec![line],
    }
}

fn invalid(why: impl std::fmt::Display) -> CommandResult {
    failed(messages::AUTHREC_INVALID.format(&[&why]))
}

/// The record key, with the profile and entity checked.
fn record_key(key: &AuthRecKey) -> Result<RecordKey, CommandResult> {
    let profile = Profile::parse(&key.profile).map_err(invalid)?;
    RecordKey::new(key.object_type, profile, key.entity_type, &key.entity).map_err(invalid)
}

/// The authorities `names` stand for on the record's object type.
fn expand(key: &RecordKey, names: &[AuthorityName]) -> Result<Authorities, CommandResult> {
    let valid = key.object_type.valid_for(key.profile.as_str());
    names.iter().try_fold(Authorities::NONE, |all, n| {
        n.expand(valid).map(|a| all.union(a)).map_err(|a| {
            invalid(format!(
                "{a} does not apply to OBJTYPE({}) PROFILE({})",
                key.object_type,
                key.profile.as_str()
            ))
        })
    })
}

fn admin_failure(e: AdminError) -> CommandResult {
    match e {
        AdminError::Failed {
            reason: ReasonCode::UnknownEntity,
            text,
        } => failed(text),
        AdminError::Failed {
            reason: ReasonCode::UnknownObjectName,
            ..
        } => failed(messages::AUTHREC_NOT_FOUND.line()),
        other => invalid(other),
    }
}

/// SET AUTHREC.
pub fn set(
    target: &mut dyn AdminTarget,
    key: &AuthRecKey,
    add: &[AuthorityName],
    remove: &[AuthorityName],
) -> CommandResult {
    let result = (|| {
        let key = record_key(key)?;
        let add = expand(&key, add)?;
        let remove = expand(&key, remove)?;
        target
            .set_authority_record(key, add, remove)
            .map_err(admin_failure)
    })();
    match result {
        Ok(_) => CommandResult {
            ok: true,
            lines: vec![messages::AUTHREC_SET.line()],
        },
        Err(failure) => failure,
    }
}

/// DELETE AUTHREC.
pub fn delete(target: &mut dyn AdminTarget, key: &AuthRecKey) -> CommandResult {
    let result =
        record_key(key).and_then(|key| target.delete_authority_record(key).map_err(admin_failure));
    match result {
        Ok(()) => CommandResult {
            ok: true,
            lines: vec![messages::AUTHREC_DELETED.line()],
        },
        Err(failure) => failure,
    }
}

fn record_fields(key: &RecordKey, authorities: Authorities) -> Vec<Field> {
    let text = |s: &str| FieldValue::Text(s.to_string());
    vec![
        Field::new("PROFILE", text(key.profile.as_str())),
        Field::new("ENTITY", text(&key.entity)),
        Field::new("ENTTYPE", FieldValue::Keyword(key.entity_type.mqsc_name())),
        Field::new("OBJTYPE", FieldValue::Keyword(key.object_type.mqsc_name())),
        Field::new("AUTHLIST", text(&authorities.mqsc_names().join(","))),
    ]
}

/// DISPLAY AUTHREC.
pub fn display(
    target: &dyn AdminTarget,
    profile: Option<&str>,
    object_type: Option<ProfileObjectType>,
    entity: Option<&(EntityType, String)>,
    matching: AuthRecMatch,
) -> CommandResult {
    let records = target.authority_records();
    let membership = match (matching, entity) {
        (AuthRecMatch::Membership, Some((EntityType::Principal, user))) => {
            Some(target.principal(user))
        }
        _ => None,
    };
    let entity_wanted = |k: &RecordKey| match (&membership, entity) {
        (Some(p), _) => match k.entity_type {
            EntityType::Principal => k.entity == p.user,
            EntityType::Group => p.groups.contains(&k.entity),
        },
        (None, Some((t, name))) => k.entity_type == *t && &k.entity == name,
        (None, None) => true,
    };
    let profile_wanted = |k: &RecordKey| match profile {
        None => true,
        Some(p) if matching == AuthRecMatch::Exact => k.profile.as_str() == p,
        Some(p) => k.profile.as_str() == p || (k.profile.is_generic() && k.profile.matches(p)),
    };
    let mut lines = Vec::new();
    for (k, a) in records.iter() {
        if object_type.is_none_or(|t| k.object_type == t) && entity_wanted(k) && profile_wanted(k) {
            lines.extend(render_block(
                &messages::DISPLAY_AUTHREC,
                &record_fields(k, a),
            ));
        }
    }
    if lines.is_empty() {
        return failed(messages::AUTHREC_NOT_FOUND.line());
    }
    CommandResult { ok: true, lines }
}

/// DISPLAY ENTAUTH.
pub fn display_entity(
    target: &dyn AdminTarget,
    entity: &(EntityType, String),
    object_name: &str,
    object_type: ProfileObjectType,
) -> CommandResult {
    let (kind, name) = entity;
    let principal = match kind {
        EntityType::Principal => target.principal(name),
        EntityType::Group => Principal {
            user: String::new(),
            groups: vec![name.clone()],
            administrator: false,
        },
    };
    let object_name = if object_name.is_empty() {
        target.qmgr_name()
    } else {
        object_name.to_string()
    };
    let held = target
        .authority_of(object_type, &object_name, &principal)
        .intersection(
            object_type
                .valid_for(&object_name)
                .union(Authorities::of(&[ferry_security::oam::Authority::Crt])),
        );
    let text = |s: &str| FieldValue::Text(s.to_string());
    let fields = [
        Field::new("ENTITY", text(name)),
        Field::new("ENTTYPE", FieldValue::Keyword(kind.mqsc_name())),
        Field::new("OBJNAME", text(&object_name)),
        Field::new("OBJTYPE", FieldValue::Keyword(object_type.mqsc_name())),
        Field::new("AUTHLIST", text(&held.mqsc_names().join(","))),
    ];
    CommandResult {
        ok: true,
        lines: render_block(&messages::DISPLAY_ENTAUTH, &fields),
    }
}
