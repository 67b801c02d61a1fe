//! The queue manager's authority records (SET AUTHREC, `setmqaut`), and the authority
//! they give a principal on an object.
//!
//! A record grants one entity (a user, or a group of users) a set of authorities on the
//! objects of one type that a profile covers. For each entity only its most specific
//! matching profile counts ([`super::Profile::most_specific_first`]); a principal holds
//! what its own records and the records of each of its groups give, together. A record
//! may grant nothing (AUTHADD(NONE)): it still counts as the entity's most specific
//! profile, which is how a broad grant is narrowed for one object.
//!
//! Records are kept ordered by object type and entity, so the records of one entity for
//! one type are a range: a check costs a handful of profile matches, whatever the
//! number of other entities' records.

use super::authority::Authorities;
use super::object_type::ProfileObjectType;
use super::profile::{Profile, ProfileError, QMGR_PROFILE};
use std::collections::BTreeMap;
use std::fmt;

/// The longest user or group name a record takes.
pub const MAX_ENTITY_LENGTH: usize = 64;

/// ENTTYPE: whether a record is for a user or a group.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "UPPERCASE")]
pub enum EntityType {
    /// A user (PRINCIPAL, `setmqaut -p`).
    Principal,
    /// A group (GROUP, `setmqaut -g`).
    Group,
}

impl EntityType {
    /// Its ENTTYPE keyword.
    pub fn mqsc_name(self) -> &'static str {
        match self {
            EntityType::Principal => "PRINCIPAL",
            EntityType::Group => "GROUP",
        }
    }
}

impl fmt::Display for EntityType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mqsc_name())
    }
}

/// Why a record cannot be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The profile does not parse.
    #[error("profile: {0}")]
    Profile(#[from] ProfileError),
    /// The entity name is empty, too long or holds a character no name holds.
    #[error("'{0}' is not a user or group name")]
    Entity(String),
    /// No record has this key (DELETE AUTHREC).
    #[error("no authority record matches")]
    NotFound,
}

/// What identifies a record.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordKey {
    /// OBJTYPE.
    pub object_type: ProfileObjectType,
    /// ENTTYPE.
    pub entity_type: EntityType,
    /// The user or group.
    pub entity: String,
    /// The profile.
    pub profile: Profile,
}

impl RecordKey {
    /// A key, with the entity name checked.
    pub fn new(
        object_type: ProfileObjectType,
        profile: Profile,
        entity_type: EntityType,
        entity: &str,
    ) -> Result<Self, RecordError> {
        check_entity(entity)?;
        Ok(RecordKey {
            object_type,
            entity_type,
            entity: entity.to_string(),
            profile,
        })
    }
}

/// Checks a user or group name: 1 to [`MAX_ENTITY_LENGTH`] characters, none of them a
/// blank, a control character, a quote, a comma or a parenthesis.
pub fn check_entity(entity: &str) -> Result<(), RecordError> {
    let ok = !entity.is_empty()
        && entity.chars().count() <= MAX_ENTITY_LENGTH
        && entity
            .chars()
            .all(|c| !(c.is_whitespace() || c.is_control() || "'\",()".contains(c)));
    if ok {
        Ok(())
    } else {
        Err(RecordError::Entity(entity.chars().take(80).collect()))
    }
}

/// Who an authority check is for: a user and the groups it belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Principal {
    /// The user id.
    pub user: String,
    /// Its groups (primary and supplementary, from the host and the user repository).
    pub groups: Vec<String>,
    /// True for the queue manager's administrators, who hold every authority.
    pub administrator: bool,
}

/// The authority records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AuthorityRecords {
    records: BTreeMap<RecordKey, Authorities>,
}

impl AuthorityRecords {
    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The record with this key.
    pub fn get(&self, key: &RecordKey) -> Option<Authorities> {
        self.records.get(key).copied()
    }

    /// SET AUTHREC: adds `add` and then removes `remove` from the record, made when it
    /// does not exist (with no authority when both are empty). Returns what it holds.
    pub fn set(&mut self, key: RecordKey, add: Authorities, remove: Authorities) -> Authorities {
        let entry = self.records.entry(key).or_default();
        *entry = entry.union(add).without(remove);
        *entry
    }

    /// DELETE AUTHREC.
    pub fn delete(&mut self, key: &RecordKey) -> Result<(), RecordError> {
        self.records
            .remove(key)
            .map(|_| ())
            .ok_or(RecordError::NotFound)
    }

    /// Makes the record what it is (`None`: deleted): how a saved change is replayed.
    pub fn restore(&mut self, key: RecordKey, authorities: Option<Authorities>) {
        match authorities {
            Some(a) => {
                self.records.insert(key, a);
            }
            None => {
                self.records.remove(&key);
            }
        }
    }

    /// Every record, ordered by object type, entity type, entity and profile.
    pub fn iter(&self) -> impl Iterator<Item = (&RecordKey, Authorities)> {
        self.records.iter().map(|(k, a)| (k, *a))
    }

    /// The records of one entity for one object type.
    fn of_entity(
        &self,
        object_type: ProfileObjectType,
        entity_type: EntityType,
        entity: &str,
    ) -> impl Iterator<Item = (&RecordKey, Authorities)> {
        let start = RecordKey {
            object_type,
            entity_type,
            entity: entity.to_string(),
            profile: Profile::lowest(),
        };
        let entity = start.entity.clone();
        self.records
            .range(start..)
            .take_while(move |(k, _)| {
                k.object_type == object_type && k.entity_type == entity_type && k.entity == entity
            })
            .map(|(k, a)| (k, *a))
    }

    /// The record that decides what `entity` may do to object `name` of `object_type`:
    /// its most specific profile covering the name (for the queue manager, its `self`
    /// profile, whatever the name).
    pub fn entity_record(
        &self,
        object_type: ProfileObjectType,
        name: &str,
        entity_type: EntityType,
        entity: &str,
    ) -> Option<(&RecordKey, Authorities)> {
        let name = if object_type == ProfileObjectType::Qmgr {
            QMGR_PROFILE
        } else {
            name
        };
        self.of_entity(object_type, entity_type, entity)
            .filter(|(k, _)| k.profile.matches(name))
            .min_by(|(a, _), (b, _)| Profile::most_specific_first(&a.profile, &b.profile))
    }

    /// What `principal` may do to object `name` of `object_type`: its own most specific
    /// record and each of its groups', together. Administrators may do everything.
    pub fn authority(
        &self,
        object_type: ProfileObjectType,
        name: &str,
        principal: &Principal,
    ) -> Authorities {
        if principal.administrator {
            return Authorities::everything();
        }
        let own = self
            .entity_record(object_type, name, EntityType::Principal, &principal.user)
            .map_or(Authorities::NONE, |(_, a)| a);
        principal.groups.iter().fold(own, |held, group| {
            held.union(
                self.entity_record(object_type, name, EntityType::Group, group)
                    .map_or(Authorities::NONE, |(_, a)| a),
            )
        })
    }
}

impl Profile {
    /// The profile that sorts before every other (a range start).
    fn lowest() -> Self {
        Profile::parse_unchecked("")
    }
}

/// A record as saved with the definitions: names, not bits, so the file reads the same
/// whatever order the authorities are declared in.
#[derive(serde::Serialize, serde::Deserialize)]
struct SavedRecord {
    object_type: ProfileObjectType,
    profile: String,
    entity_type: EntityType,
    entity: String,
    authorities: Vec<String>,
}

impl serde::Serialize for AuthorityRecords {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.records.iter().map(|(k, a)| SavedRecord {
            object_type: k.object_type,
            profile: k.profile.as_str().to_string(),
            entity_type: k.entity_type,
            entity: k.entity.clone(),
            authorities: a.iter().map(|x| x.mqsc_name().to_string()).collect(),
        }))
    }
}

impl<'de> serde::Deserialize<'de> for AuthorityRecords {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let saved = Vec::<SavedRecord>::deserialize(d)?;
        let mut records = BTreeMap::new();
        for r in saved {
            let (key, authorities) = saved_record(r).map_err(D::Error::custom)?;
            records.insert(key, authorities);
        }
        Ok(AuthorityRecords { records })
    }
}

/// One saved record, as a key and its authorities.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SavedAuthorityRecord {
    /// OBJTYPE.
    pub object_type: ProfileObjectType,
    /// The profile.
    pub profile: String,
    /// ENTTYPE.
    pub entity_type: EntityType,
    /// The user or group.
    pub entity: String,
    /// The authorities' MQSC names; `None`: the record was deleted.
    pub authorities: Option<Vec<String>>,
}

impl SavedAuthorityRecord {
    /// The record `key` as it now is in `records`.
    pub fn of(records: &AuthorityRecords, key: &RecordKey) -> Self {
        SavedAuthorityRecord {
            object_type: key.object_type,
            profile: key.profile.as_str().to_string(),
            entity_type: key.entity_type,
            entity: key.entity.clone(),
            authorities: records
                .get(key)
                .map(|a| a.iter().map(|x| x.mqsc_name().to_string()).collect()),
        }
    }

    /// Replays it into `records`.
    pub fn apply(self, records: &mut AuthorityRecords) -> Result<(), String> {
        let deleted = self.authorities.is_none();
        let (key, authorities) = saved_record(SavedRecord {
            object_type: self.object_type,
            profile: self.profile,
            entity_type: self.entity_type,
            entity: self.entity,
            authorities: self.authorities.unwrap_or_default(),
        })?;
        records.restore(key, (!deleted).then_some(authorities));
        Ok(())
    }
}

fn saved_record(r: SavedRecord) -> Result<(RecordKey, Authorities), String> {
    let profile = Profile::parse(&r.profile).map_err(|e| e.to_string())?;
    let key = RecordKey::new(r.object_type, profile, r.entity_type, &r.entity)
        .map_err(|e| e.to_string())?;
    let mut authorities = Authorities::NONE;
    for name in &r.authorities {
        match super::AuthorityName::parse(name) {
            Some(super::AuthorityName::One(a)) => authorities.insert(a),
            _ => return Err(format!("'{name}' is not an authority")),
        }
    }
    Ok((key, authorities))
}

#[cfg(test)]
mod tests {
    use super::super::authority::Authority::*;
    use super::*;

    fn key(t: ProfileObjectType, profile: &str, e: EntityType, who: &str) -> RecordKey {
        RecordKey::new(t, Profile::parse(profile).unwrap(), e, who).unwrap()
    }

    fn user(name: &str, groups: &[&str]) -> Principal {
        Principal {
            user: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            administrator: false,
        }
    }

    #[test]
    fn the_most_specific_profile_of_each_entity_counts_and_groups_add_up() {
        use EntityType::*;
        use ProfileObjectType::Queue;
        let mut r = AuthorityRecords::default();
        r.set(
            key(Queue, "AB.*", Principal, "fred"),
            Authorities::of(&[Put]),
            Authorities::NONE,
        );
        r.set(
            key(Queue, "AB.C*", Principal, "fred"),
            Authorities::of(&[Get]),
            Authorities::NONE,
        );
        r.set(
            key(Queue, "**", Group, "apps"),
            Authorities::of(&[Inq]),
            Authorities::NONE,
        );
        let fred = user("fred", &["apps"]);
        // MQ's own example: AB.CD is covered by AB.C*, not AB.*.
        assert_eq!(
            r.authority(Queue, "AB.CD", &fred),
            Authorities::of(&[Get, Inq])
        );
        assert_eq!(
            r.authority(Queue, "AB.XY", &fred),
            Authorities::of(&[Put, Inq])
        );
        assert_eq!(
            r.authority(Queue, "OTHER", &user("fred", &[])),
            Authorities::NONE
        );
        assert_eq!(
            r.authority(Queue, "OTHER", &user("jim", &["apps"])),
            Authorities::of(&[Inq])
        );
        // A record with no authority narrows a broader one.
        r.set(
            key(Queue, "AB.CD", Principal, "fred"),
            Authorities::NONE,
            Authorities::NONE,
        );
        assert_eq!(r.authority(Queue, "AB.CD", &fred), Authorities::of(&[Inq]));
        let admin = super::Principal {
            administrator: true,
            ..user("root", &[])
        };
        assert!(r.authority(Queue, "ANY", &admin).contains(Get));
    }

    #[test]
    fn the_queue_manager_record_is_self() {
        use ProfileObjectType::Qmgr;
        let mut r = AuthorityRecords::default();
        r.set(
            key(Qmgr, QMGR_PROFILE, EntityType::Principal, "app"),
            Authorities::of(&[Connect, Inq]),
            Authorities::NONE,
        );
        assert!(r
            .authority(Qmgr, "QM1", &user("app", &[]))
            .contains(Connect));
    }

    #[test]
    fn records_save_and_replay() {
        use ProfileObjectType::Queue;
        let mut r = AuthorityRecords::default();
        let k = key(Queue, "DEV.**", EntityType::Group, "apps");
        r.set(k.clone(), Authorities::of(&[Put, Get]), Authorities::NONE);
        let text = serde_json::to_string(&r).unwrap();
        let back: AuthorityRecords = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        let saved = SavedAuthorityRecord::of(&r, &k);
        let mut other = AuthorityRecords::default();
        saved.apply(&mut other).unwrap();
        assert_eq!(other, r);
        r.delete(&k).unwrap();
        SavedAuthorityRecord::of(&r, &k).apply(&mut other).unwrap();
        assert!(other.is_empty());
        assert_eq!(r.delete(&k), Err(RecordError::NotFound));
    }
}
