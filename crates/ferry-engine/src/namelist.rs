//! Namelists (DEFINE NAMELIST) and the cluster names objects give through them: a queue's
//! or cluster channel's CLUSTER or CLUSNL, the queue manager's REPOS and REPOSNL.
//!
//! A namelist named by CLUSNL or REPOSNL is read each time the clusters are asked for,
//! so ALTER NAMELIST takes effect at the cluster repository's next round, as MQ's
//! repository process picks up namelist changes.

use crate::clock::{admin_date_time, Timestamp};
use crate::connection::{ConnId, Handle, HandleTarget, InputMode};
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::open::Opened;
use crate::qmgr::QueueManager;
use ferry_mqi::inquire::selector as sel;
use ferry_mqi::{
    validate_object_name, InquireValue, MqError, ObjectDescriptor, OpenOptions, ReasonCode,
    Selector,
};
use ferry_objects::{AdminError, AttributeSet, NamelistAttributes, NamelistDefinition};

/// MQ_OBJECT_NAME_LENGTH: each name of MQCA_NAMES takes this many characters.
const NAME_LENGTH: usize = 48;

/// CLUSTER and CLUSNL of one object: MQ lets only one of them be set.
fn check_cluster_names(cluster: &str, namelist: &str) -> Result<(), AdminError> {
    if !cluster.trim().is_empty() && !namelist.trim().is_empty() {
        return Err(AdminError::Invalid(format!(
            "CLUSTER({}) and CLUSNL({}) cannot both be set: name one cluster, or a namelist of clusters",
            cluster.trim(),
            namelist.trim()
        )));
    }
    Ok(())
}

impl QueueManager {
    /// CLUSTER and CLUSNL of a queue or cluster channel being defined or altered: not
    /// both set, and CLUSNL naming a namelist that is defined (as MQ checks).
    pub(crate) fn check_cluster_attributes(
        &self,
        cluster: &str,
        namelist: &str,
    ) -> Result<(), AdminError> {
        check_cluster_names(cluster, namelist)?;
        self.check_namelist_named(namelist)
    }

    /// A CLUSNL or REPOSNL value: blank, or the name of a defined namelist.
    pub(crate) fn check_namelist_named(&self, namelist: &str) -> Result<(), AdminError> {
        let name = namelist.trim();
        if name.is_empty() || self.namelists.contains_key(name) {
            Ok(())
        } else {
            Err(AdminError::NotFound {
                name: name.to_string(),
            })
        }
    }

    /// A namelist by exact name.
    pub fn namelist(&self, name: &str) -> Option<NamelistDefinition> {
        self.namelists.get(name).cloned()
    }

    /// Every namelist, sorted by name.
    pub fn namelists(&self) -> Vec<NamelistDefinition> {
        self.namelists.values().cloned().collect()
    }

    /// DEFINE NAMELIST, or with `replace` replaces one.
    pub fn define_namelist(
        &mut self,
        def: NamelistDefinition,
        replace: bool,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        if self.namelists.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        let change = CatalogueChange::Namelist(def.name.clone());
        self.namelists.insert(def.name.clone(), def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// ALTER NAMELIST.
    pub fn alter_namelist(
        &mut self,
        def: NamelistDefinition,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        let old = self
            .namelists
            .get_mut(&def.name)
            .ok_or_else(|| AdminError::NotFound {
                name: def.name.clone(),
            })?;
        let change = CatalogueChange::Namelist(def.name.clone());
        *old = def;
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// DELETE NAMELIST. As in MQ, objects naming it are not checked: a CLUSNL or
    /// REPOSNL naming a namelist that is not there names no clusters.
    pub fn delete_namelist(&mut self, name: &str, fx: &mut Effects) -> Result<(), AdminError> {
        self.namelists
            .remove(name)
            .ok_or_else(|| AdminError::NotFound {
                name: name.to_string(),
            })?;
        fx.push(Effect::CatalogueChanged(CatalogueChange::Namelist(
            name.to_string(),
        )));
        Ok(())
    }

    /// The clusters an object with CLUSTER(`cluster`) and CLUSNL(`namelist`) belongs to:
    /// the one cluster, or the names of the namelist (none when it is not defined).
    pub fn clusters_named(&self, cluster: &str, namelist: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        if !cluster.trim().is_empty() {
            out.push(cluster.trim().to_string());
        }
        if let Some(nl) = self.namelists.get(namelist.trim()) {
            for n in &nl.attributes.names {
                if !out.contains(n) {
                    out.push(n.clone());
                }
            }
        }
        out
    }

    /// The clusters this queue manager is a full repository for: REPOS, and the names
    /// of the namelist REPOSNL names.
    pub fn full_repository_clusters(&self) -> Vec<String> {
        self.clusters_named(&self.qmgr.repository, &self.qmgr.repository_namelist)
    }

    /// True when this queue manager is a full repository for `cluster`.
    pub fn is_full_repository(&self, cluster: &str) -> bool {
        !cluster.is_empty() && self.full_repository_clusters().iter().any(|c| c == cluster)
    }

    /// Defines the namelists MQ ships ([`NamelistDefinition::shipped`]) on a queue
    /// manager made by a Ferry from before namelists, once: recovery calls it at every
    /// start, and it adds them only to a queue manager that has the shipped objects
    /// (SYSTEM.DEFAULT.LOCAL.QUEUE) and no namelist at all. Each addition is a
    /// [`CatalogueChange`], so the server saves them. Returns the names added.
    pub fn define_missing_namelists(&mut self, now: Timestamp, fx: &mut Effects) -> Vec<String> {
        if self.queues.lookup("SYSTEM.DEFAULT.LOCAL.QUEUE").is_none() || !self.namelists.is_empty()
        {
            return Vec::new();
        }
        let (date, time) = admin_date_time(now);
        let mut added = Vec::new();
        for mut nl in NamelistDefinition::shipped() {
            nl.attributes.alteration_date = date.clone();
            nl.attributes.alteration_time = time.clone();
            fx.push(Effect::CatalogueChanged(CatalogueChange::Namelist(
                nl.name.clone(),
            )));
            added.push(nl.name.clone());
            self.namelists.insert(nl.name.clone(), nl);
        }
        added
    }
}

impl QueueManager {
    /// MQOPEN of a namelist (MQOT_NAMELIST): for MQOO_INQUIRE only (other options 2045
    /// MQRC_OPTION_NOT_VALID_FOR_TYPE); 2085 when it is not defined.
    pub(crate) fn open_namelist(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
    ) -> Result<Opened, MqError> {
        let name = od.object_name.as_str().to_string();
        if !self.namelists.contains_key(&name) {
            return Err(ReasonCode::UnknownObjectName.into());
        }
        let inquire_only = OpenOptions::INQUIRE
            | OpenOptions::FAIL_IF_QUIESCING
            | OpenOptions::ALTERNATE_USER_AUTHORITY;
        if !inquire_only.contains(options) {
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        let qm = self.name.clone();
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let hobj = c.add_handle(Handle {
            target: HandleTarget::Namelist,
            options,
            input: InputMode::None,
            name: name.clone(),
            cursor: None,
            lock: None,
            owns_temp_queue: false,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        Ok(Opened {
            hobj,
            object_name: name,
            resolved_q_name: String::new(),
            resolved_qmgr_name: qm,
        })
    }

    /// MQINQ of namelist `name`: MQCA_NAMELIST_NAME, MQIA_NAME_COUNT, MQCA_NAMES (each
    /// name blank-padded to 48 characters, as MQ returns them), and the table's rows.
    pub(crate) fn inquire_namelist(
        &self,
        name: &str,
        s: Selector,
    ) -> Result<InquireValue, MqError> {
        let nl = self.namelists.get(name).ok_or(ReasonCode::ObjectChanged)?;
        match s {
            sel::NAMELIST_NAME => Ok(InquireValue::Str(nl.name.clone())),
            sel::NAME_COUNT => Ok(InquireValue::Int(
                i32::try_from(nl.name_count()).unwrap_or(i32::MAX),
            )),
            sel::NAMES => Ok(InquireValue::Str(
                nl.attributes
                    .names
                    .iter()
                    .map(|n| format!("{n:<NAME_LENGTH$}"))
                    .collect(),
            )),
            _ => {
                let row = NamelistAttributes::by_selector(s).ok_or(ReasonCode::SelectorError)?;
                crate::inquire::to_inquire(s, (row.get)(&nl.attributes))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cluster_and_clusnl_exclude_each_other() {
        assert!(check_cluster_names("A", "").is_ok());
        assert!(check_cluster_names("", "NL").is_ok());
        assert!(check_cluster_names("", "").is_ok());
        assert!(check_cluster_names("A", "NL").is_err());
    }
}
