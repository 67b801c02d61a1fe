//! Object authority checks (MQ's OAM): CONNECT on the queue manager at MQCONN, and what
//! the open options ask for at MQOPEN and MQPUT1, decided once: a handle that opened
//! may then put or get without another check, so the message path pays nothing.
//!
//! The records themselves ([`AuthorityRecords`]) are kept with the definitions. Who a
//! user is (its groups, whether it administers the queue manager) is the server's to
//! say, through a [`PrincipalDirectory`] it installs; without one, nothing is checked
//! (a queue manager created without an authorization service, as MQ's `MQSNOAUT`).
//! The creator of a dynamic queue holds every authority on it, as MQ grants.

use crate::connection::ConnId;
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::qmgr::QueueManager;
use ferry_mqi::{MqError, OpenOptions, ReasonCode};
use ferry_security::oam::{
    Authorities, Authority, AuthorityRecords, Principal, ProfileObjectType, RecordError, RecordKey,
};
use std::fmt;
use std::rc::Rc;

/// Resolves a user id into the principal checks are made for. The server's asks the
/// host and the user repository (and remembers the answers until REFRESH SECURITY).
pub trait PrincipalDirectory: fmt::Debug {
    /// The principal for `user`.
    fn principal(&self, user: &str) -> Principal;
}

/// The authorities MQOPEN's options ask for on the object opened.
pub fn open_authorities(options: OpenOptions) -> Authorities {
    let mut wanted = Authorities::NONE;
    for (option, authority) in [
        (OpenOptions::INPUT_AS_Q_DEF, Authority::Get),
        (OpenOptions::INPUT_SHARED, Authority::Get),
        (OpenOptions::INPUT_EXCLUSIVE, Authority::Get),
        (OpenOptions::BROWSE, Authority::Browse),
        (OpenOptions::OUTPUT, Authority::Put),
        (OpenOptions::INQUIRE, Authority::Inq),
        (OpenOptions::SET, Authority::Set),
        (OpenOptions::PASS_IDENTITY_CONTEXT, Authority::PassId),
        (OpenOptions::PASS_ALL_CONTEXT, Authority::PassAll),
        (OpenOptions::SET_IDENTITY_CONTEXT, Authority::SetId),
        (OpenOptions::SET_ALL_CONTEXT, Authority::SetAll),
    ] {
        if options.contains(option) {
            wanted.insert(authority);
        }
    }
    wanted
}

impl QueueManager {
    /// Installs the directory that makes authority checks happen (`None`: no checks).
    pub fn set_principal_directory(&mut self, directory: Option<Rc<dyn PrincipalDirectory>>) {
        self.principals = directory;
    }

    /// True when authority checks are made.
    pub fn checks_authority(&self) -> bool {
        self.principals.is_some()
    }

    /// The principal for `user`, when checks are made.
    pub fn principal(&self, user: &str) -> Option<Principal> {
        self.principals.as_ref().map(|d| d.principal(user))
    }

    /// Who connection `conn`'s calls are checked for (`None`: nothing is checked, or no
    /// such connection).
    pub fn connection_principal(&self, conn: ConnId) -> Option<Rc<Principal>> {
        self.conns.get(&conn).and_then(|c| c.principal.clone())
    }

    /// The authority records.
    pub fn authority_records(&self) -> &AuthorityRecords {
        &self.authority_records
    }

    /// SET AUTHREC: adds then removes authorities on one record (made when missing).
    /// Returns what the record now holds.
    pub fn set_authority_record(
        &mut self,
        key: RecordKey,
        add: Authorities,
        remove: Authorities,
        fx: &mut Effects,
    ) -> Authorities {
        debug_assert!(
            add.union(remove)
                .without(key.object_type.valid_for(key.profile.as_str()))
                .is_empty(),
            "MQSC checked the authorities against the object type"
        );
        let held = self.authority_records.set(key.clone(), add, remove);
        debug_assert_eq!(self.authority_records.get(&key), Some(held));
        fx.push(Effect::CatalogueChanged(CatalogueChange::AuthorityRecord(
            key,
        )));
        held
    }

    /// DELETE AUTHREC.
    pub fn delete_authority_record(
        &mut self,
        key: RecordKey,
        fx: &mut Effects,
    ) -> Result<(), RecordError> {
        self.authority_records.delete(&key)?;
        debug_assert!(self.authority_records.get(&key).is_none());
        fx.push(Effect::CatalogueChanged(CatalogueChange::AuthorityRecord(
            key,
        )));
        Ok(())
    }

    /// What `principal` may do to object `name` of `object_type` (DISPLAY ENTAUTH),
    /// the creator's hold on its dynamic queues included.
    pub fn authority_of(
        &self,
        object_type: ProfileObjectType,
        name: &str,
        principal: &Principal,
    ) -> Authorities {
        let held = self
            .authority_records
            .authority(object_type, name, principal);
        if object_type == ProfileObjectType::Queue
            && self.dynamic_creators.get(name) == Some(&principal.user)
        {
            return held.union(object_type.valid_for(name));
        }
        held
    }

    /// Checks that `principal` holds `wanted` on the object; a refusal is 2035 and an
    /// [`Effect::NotAuthorized`] for the error log.
    pub(crate) fn require(
        &self,
        principal: &Principal,
        object_type: ProfileObjectType,
        name: &str,
        wanted: Authorities,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        if wanted.is_empty() {
            return Ok(());
        }
        let held = self.authority_of(object_type, name, principal);
        if held.contains_all(wanted) {
            return Ok(());
        }
        fx.push(Effect::NotAuthorized {
            user: principal.user.clone(),
            object_type,
            object: name.to_string(),
            missing: wanted.without(held),
        });
        Err(ReasonCode::NotAuthorized.into())
    }

    /// A topic's check (PUB to publish, SUB to subscribe), as MQ makes it: the user needs
    /// the authority on the topic object of the node or of any administrative node
    /// above it, SYSTEM.BASE.TOPIC's included. A refusal names the nearest one.
    pub(crate) fn check_topic_authority(
        &self,
        conn: ConnId,
        topic: &str,
        authority: Authority,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        let Some(principal) = self.conns.get(&conn).and_then(|c| c.principal.clone()) else {
            return Ok(());
        };
        let objects = self.topic_objects_on_path(topic);
        let granted = objects.iter().any(|(_, def)| {
            self.authority_of(ProfileObjectType::Topic, &def.name, &principal)
                .contains(authority)
        });
        if granted || principal.administrator {
            return Ok(());
        }
        let nearest = objects.first().map_or(topic, |(_, def)| def.name.as_str());
        fx.push(Effect::NotAuthorized {
            user: principal.user.clone(),
            object_type: ProfileObjectType::Topic,
            object: nearest.to_string(),
            missing: Authorities::of(&[authority]),
        });
        Err(ReasonCode::NotAuthorized.into())
    }

    /// MQCONN's check: CONNECT on the queue manager. Returns the principal the
    /// connection's opens are checked for (`None` when nothing is checked).
    pub(crate) fn connect_principal(
        &self,
        user: &str,
        fx: &mut Effects,
    ) -> Result<Option<Rc<Principal>>, MqError> {
        let Some(principal) = self.principal(user) else {
            return Ok(None);
        };
        let name = self.name.clone();
        self.require(
            &principal,
            ProfileObjectType::Qmgr,
            &name,
            Authorities::of(&[Authority::Connect]),
            fx,
        )?;
        Ok(Some(Rc::new(principal)))
    }

    /// MQOPEN's check, on object `name` (as named: an alias, not its target; a model,
    /// not the queue made from it). MQOO_ALTERNATE_USER_AUTHORITY needs ALTUSR on the
    /// queue manager, and then the alternate user's authority is the one checked.
    pub(crate) fn check_open(
        &self,
        conn: ConnId,
        object_type: ProfileObjectType,
        name: &str,
        options: OpenOptions,
        alternate_user: &str,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        let Some(principal) = self.conns.get(&conn).and_then(|c| c.principal.clone()) else {
            return Ok(());
        };
        let alternate;
        let checked = if options.contains(OpenOptions::ALTERNATE_USER_AUTHORITY) {
            let qm = self.name.clone();
            self.require(
                &principal,
                ProfileObjectType::Qmgr,
                &qm,
                Authorities::of(&[Authority::AltUsr]),
                fx,
            )?;
            alternate = self.principal(alternate_user).unwrap_or_default();
            &alternate
        } else {
            principal.as_ref()
        };
        self.require(checked, object_type, name, open_authorities(options), fx)
    }

    /// The connection's user created dynamic queue `name`: it holds every authority on
    /// it, by an authority record saved with the definitions for a permanent queue, in
    /// memory for a temporary one (which dies with the queue manager anyway).
    pub(crate) fn grant_creator(
        &mut self,
        conn: ConnId,
        name: &str,
        permanent: bool,
        fx: &mut Effects,
    ) {
        let Some(user) = self
            .conns
            .get(&conn)
            .and_then(|c| c.principal.as_ref())
            .filter(|p| !p.administrator)
            .map(|p| p.user.clone())
        else {
            return;
        };
        if !permanent {
            self.dynamic_creators.insert(name.to_string(), user);
            return;
        }
        let key = ferry_security::oam::Profile::parse(name)
            .map_err(RecordError::from)
            .and_then(|profile| {
                RecordKey::new(
                    ProfileObjectType::Queue,
                    profile,
                    ferry_security::oam::EntityType::Principal,
                    &user,
                )
            });
        if let Ok(key) = key {
            let all = ProfileObjectType::Queue.valid_for(name);
            self.set_authority_record(key, all, Authorities::NONE, fx);
        }
    }

    /// Forgets the creator of a deleted dynamic queue.
    pub(crate) fn forget_dynamic_creator(&mut self, name: &str) {
        self.dynamic_creators.remove(name);
    }
}
