//! The queue manager's channel authentication records, and the decisions they make for
//! an inbound connection.
//!
//! A connection meets the records twice. At the listener, before anything is read, its
//! address is checked against BLOCKADDR ([`ChlauthRules::blocked_address`]). Once the
//! channel and the partner are known (address, certificate, asserted user id), one
//! mapping record decides the user id the connection runs as, or refuses it
//! (USERSRC(NOACCESS)); then the BLOCKUSER record of the most specific profile is checked
//! against that user id ([`ChlauthRules::check`]).
//!
//! The mapping record is the one whose profile matches the channel most specifically;
//! among those of that profile, SSLPEERMAP comes before USERMAP and QMGRMAP, which come
//! before ADDRESSMAP; among records of one type, the one with the more specific ADDRESS
//! wins. A record with WARN(YES) never refuses: the decision records what it would have
//! done, so the queue manager logs it.

use super::record::{
    CheckClient, ChlauthError, ChlauthRecord, ChlauthType, CompiledRecord, RecordKey, UserSource,
    ANY_ADMIN,
};
use crate::peer_name::DistinguishedName;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// SET CHLAUTH's ACTION.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetAction {
    /// ADD: a new record; refused when one with the same key exists.
    Add,
    /// REPLACE: add, or replace the record with the same key.
    Replace,
    /// REMOVE: the record with the same key must exist.
    Remove,
    /// REMOVEALL: every record of this profile and type.
    RemoveAll,
}

impl SetAction {
    /// The MQSC keywords.
    pub const KEYWORDS: &'static [&'static str] = &["ADD", "REPLACE", "REMOVE", "REMOVEALL"];

    /// The action named by `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        match keyword {
            "ADD" => Some(SetAction::Add),
            "REPLACE" => Some(SetAction::Replace),
            "REMOVE" => Some(SetAction::Remove),
            "REMOVEALL" => Some(SetAction::RemoveAll),
            _ => None,
        }
    }
}

/// What is known about a partner once its channel is known.
#[derive(Clone, Copy, Debug)]
pub struct Partner<'a> {
    /// The channel it connected to.
    pub channel: &'a str,
    /// Its IP address.
    pub address: IpAddr,
    /// The user id it asserts (a client's; blank when none).
    pub client_user: &'a str,
    /// Its certificate's subject, when it sent one over TLS.
    pub peer: Option<&'a DistinguishedName>,
    /// Its certificate's issuer.
    pub issuer: Option<&'a DistinguishedName>,
    /// The partner queue manager (message channels).
    pub remote_qmgr: Option<&'a str>,
    /// The channel's MCAUSER (blank: the asserted user id stands).
    pub channel_mca_user: &'a str,
}

/// Why a connection is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockReason {
    /// Its address is in a BLOCKADDR list.
    Address,
    /// A mapping record says USERSRC(NOACCESS).
    NoAccess,
    /// Its final user id is in the BLOCKUSER list of the channel's profile.
    User,
}

/// A refusal (or with WARN(YES), what would have been one).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Block {
    /// Why.
    pub reason: BlockReason,
    /// The record that refused.
    pub record: Box<ChlauthRecord>,
    /// The user id it was about (the final one for BLOCKUSER).
    pub user: String,
}

/// The decision for one connection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it in.
    Allowed {
        /// The user id it runs as (for authorities and message context).
        user: String,
        /// The mapping record that decided it, if one did.
        mapped_by: Option<Box<ChlauthRecord>>,
        /// The mapping record's CHCKCLNT (ASQMGR when none).
        check_client: CheckClient,
        /// What WARN(YES) records would have refused: log them.
        warnings: Vec<Block>,
    },
    /// Refuse it.
    Blocked(Block),
}

/// What the mapping step decided for a connection it let through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// The mapping record that matched, if one did.
    pub record: Option<ChlauthRecord>,
    /// Its CHCKCLNT (ASQMGR when none).
    pub check_client: CheckClient,
    /// What WARN(YES) records would have refused.
    pub warnings: Vec<Block>,
}

impl Mapping {
    /// The user id a USERSRC(MAP) record gives, if the record is one.
    pub fn mapped_user(&self) -> Option<&str> {
        self.record
            .as_ref()
            .filter(|r| r.user_source == UserSource::Map)
            .map(|r| r.mca_user.as_str())
    }

    /// The user id without password checks: the record's MAP user, else the channel's
    /// MCAUSER, else the asserted one.
    pub fn user(&self, partner: &Partner<'_>) -> String {
        crate::connauth::effective_user(
            self.mapped_user(),
            partner.channel_mca_user,
            None,
            partner.client_user,
        )
    }

    fn flowed<'a>(partner: &Partner<'a>) -> &'a str {
        if partner.channel_mca_user.is_empty() {
            partner.client_user
        } else {
            partner.channel_mca_user
        }
    }
}

/// Every record, by key. Saved as the list of its records; reading the list back makes
/// the checks SET makes, so a damaged catalogue is refused rather than half obeyed.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "Vec<ChlauthRecord>", into = "Vec<ChlauthRecord>")]
pub struct ChlauthRules {
    records: BTreeMap<RecordKey, CompiledRecord>,
}

impl PartialEq for ChlauthRules {
    fn eq(&self, other: &Self) -> bool {
        self.records().eq(other.records())
    }
}

impl TryFrom<Vec<ChlauthRecord>> for ChlauthRules {
    type Error = String;

    fn try_from(records: Vec<ChlauthRecord>) -> Result<Self, String> {
        ChlauthRules::from_records(records).map_err(|(key, e)| {
            format!(
                "channel authentication record CHLAUTH('{}') TYPE({}): {e}",
                key.profile,
                key.kind.keyword()
            )
        })
    }
}

impl From<ChlauthRules> for Vec<ChlauthRecord> {
    fn from(rules: ChlauthRules) -> Self {
        rules.records.into_values().map(|c| c.record).collect()
    }
}

impl ChlauthRules {
    /// Builds the set from stored records (a queue manager's catalogue), refusing any
    /// that SET would refuse.
    pub fn from_records(records: Vec<ChlauthRecord>) -> Result<Self, (RecordKey, ChlauthError)> {
        let mut rules = ChlauthRules::default();
        for r in records {
            let key = r.key();
            let compiled = r.compile().map_err(|e| (key.clone(), e))?;
            rules.records.insert(key, compiled);
        }
        Ok(rules)
    }

    /// The records MQ gives a new queue manager: no remote access to SYSTEM.* channels,
    /// no privileged user ids on any channel, SYSTEM.ADMIN.SVRCONN open to the others.
    pub fn mq_defaults(now_ms: u64) -> Vec<ChlauthRecord> {
        let mut system = ChlauthRecord::new("SYSTEM.*", ChlauthType::AddressMap);
        system.address = "*".into();
        system.user_source = UserSource::NoAccess;
        system.description = "Default rule to disable all SYSTEM channels".into();
        let mut admins = ChlauthRecord::new("*", ChlauthType::BlockUser);
        admins.user_list = vec![ANY_ADMIN.to_string()];
        admins.description = "Default rule to disallow privileged users".into();
        let mut explorer = ChlauthRecord::new("SYSTEM.ADMIN.SVRCONN", ChlauthType::AddressMap);
        explorer.address = "*".into();
        explorer.user_source = UserSource::Channel;
        explorer.description = "Default rule to allow MQ Explorer access".into();
        let mut out = vec![system, admins, explorer];
        for r in &mut out {
            r.altered_ms = now_ms;
        }
        out
    }

    /// Every record, sorted by profile, type and key.
    pub fn records(&self) -> impl Iterator<Item = &ChlauthRecord> {
        self.records.values().map(|c| &c.record)
    }

    /// The number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// True when there are no records.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// SET CHLAUTH: applies `action` with `record` (REMOVEALL removes every record of its
    /// profile and type).
    pub fn set(&mut self, record: ChlauthRecord, action: SetAction) -> Result<(), ChlauthError> {
        let key = record.key();
        let before = self.records.len();
        match action {
            SetAction::Add | SetAction::Replace => {
                if action == SetAction::Add && self.records.contains_key(&key) {
                    return Err(ChlauthError::Exists);
                }
                let compiled = record.compile()?;
                self.records.insert(key, compiled);
                debug_assert!(self.records.len() >= before);
            }
            SetAction::Remove => {
                if self.records.remove(&key).is_none() {
                    return Err(ChlauthError::NotFound);
                }
                debug_assert_eq!(self.records.len() + 1, before);
            }
            SetAction::RemoveAll => {
                self.records
                    .retain(|k, _| !(k.profile == key.profile && k.kind == key.kind));
            }
        }
        Ok(())
    }

    /// The records of one profile (after a SET, what the catalogue saves for it).
    pub fn profile(&self, profile: &str) -> ChlauthRules {
        ChlauthRules {
            records: self
                .records
                .iter()
                .filter(|(k, _)| k.profile == profile)
                .map(|(k, c)| (k.clone(), c.clone()))
                .collect(),
        }
    }

    /// Replaces every record of `profile` with those of `records` (a catalogue journal
    /// record, which holds one profile's records).
    pub fn replace_profile(&mut self, profile: &str, records: ChlauthRules) {
        debug_assert!(records.records.keys().all(|k| k.profile == profile));
        self.records.retain(|k, _| k.profile != profile);
        self.records.extend(records.records);
    }

    /// At the listener: the BLOCKADDR record whose list holds `address`, if any.
    pub fn blocked_address(&self, address: IpAddr) -> Option<Block> {
        self.records
            .values()
            .filter(|c| c.kind == ChlauthType::BlockAddr)
            .find(|c| c.address_list.iter().any(|p| p.matches(address)))
            .map(|c| Block {
                reason: BlockReason::Address,
                record: Box::new(c.record.clone()),
                user: String::new(),
            })
    }

    /// The decision for `partner`; `privileged` says whether a user id is an
    /// administrator (for BLOCKUSER's `*MQADMIN`). [`ChlauthRules::map`] then
    /// [`ChlauthRules::check_user`] with the user id they give.
    pub fn check(&self, partner: &Partner<'_>, privileged: &dyn Fn(&str) -> bool) -> Verdict {
        let mapping = match self.map(partner) {
            Ok(m) => m,
            Err(block) => return Verdict::Blocked(block),
        };
        let user = mapping.user(partner);
        let mut warnings = mapping.warnings;
        match self.check_user(partner.channel, &user, privileged) {
            Err(block) => Verdict::Blocked(block),
            Ok(warning) => {
                warnings.extend(warning);
                Verdict::Allowed {
                    user,
                    check_client: mapping.check_client,
                    mapped_by: mapping.record.map(Box::new),
                    warnings,
                }
            }
        }
    }

    /// The first step for `partner`: BLOCKADDR, then the mapping record (USERSRC(NOACCESS)
    /// refuses). What WARN(YES) records would have refused is in the mapping's warnings.
    pub fn map(&self, partner: &Partner<'_>) -> Result<Mapping, Block> {
        let mut warnings = Vec::new();
        if let Some(block) = self.blocked_address(partner.address) {
            if !block.record.warn {
                return Err(block);
            }
            warnings.push(block);
        }
        let record = self.mapping_record(partner);
        if let Some(m) = record.filter(|m| m.record.user_source == UserSource::NoAccess) {
            let block = Block {
                reason: BlockReason::NoAccess,
                record: Box::new(m.record.clone()),
                user: Mapping::flowed(partner).to_string(),
            };
            if !m.record.warn {
                return Err(block);
            }
            warnings.push(block);
        }
        Ok(Mapping {
            check_client: record.map_or(CheckClient::AsQmgr, |m| m.record.check_client),
            record: record.map(|m| m.record.clone()),
            warnings,
        })
    }

    /// The last step: the BLOCKUSER record of the most specific profile matching `channel`
    /// against the user id the connection will run as. `Ok(Some)`: a WARN(YES) record
    /// would have refused it.
    pub fn check_user(
        &self,
        channel: &str,
        user: &str,
        privileged: &dyn Fn(&str) -> bool,
    ) -> Result<Option<Block>, Block> {
        let Some(b) = self.block_user_record(channel) else {
            return Ok(None);
        };
        let listed = b.record.user_list.iter().any(|u| {
            if u == ANY_ADMIN {
                privileged(user)
            } else {
                u == user
            }
        });
        if !listed {
            return Ok(None);
        }
        let block = Block {
            reason: BlockReason::User,
            record: Box::new(b.record.clone()),
            user: user.to_string(),
        };
        if b.record.warn {
            Ok(Some(block))
        } else {
            Err(block)
        }
    }

    /// DISPLAY CHLAUTH MATCH(RUNCHECK): the record a connection from `partner` would
    /// meet: the one that refuses it, or else the mapping record that lets it in.
    pub fn runcheck(
        &self,
        partner: &Partner<'_>,
        privileged: &dyn Fn(&str) -> bool,
    ) -> Option<ChlauthRecord> {
        match self.check(partner, privileged) {
            Verdict::Blocked(b) => Some(*b.record),
            Verdict::Allowed {
                mapped_by,
                warnings,
                ..
            } => warnings
                .into_iter()
                .next()
                .map(|w| *w.record)
                .or(mapped_by.map(|r| *r)),
        }
    }

    /// The mapping record that applies to `partner`, if any.
    fn mapping_record(&self, partner: &Partner<'_>) -> Option<&CompiledRecord> {
        self.records
            .values()
            .filter(|c| c.kind.is_mapping() && c.profile.matches(partner.channel))
            .filter(|c| {
                c.address
                    .as_ref()
                    .is_none_or(|a| a.matches(partner.address))
            })
            .filter(|c| match c.kind {
                ChlauthType::UserMap => c.record.client_user == partner.client_user,
                ChlauthType::SslPeerMap => {
                    let subject = partner
                        .peer
                        .is_some_and(|dn| c.peer.as_ref().is_some_and(|f| f.matches(dn)));
                    let issuer = match (&c.issuer, partner.issuer) {
                        (None, _) => true,
                        (Some(f), Some(dn)) => f.matches(dn),
                        (Some(_), None) => false,
                    };
                    subject && issuer
                }
                ChlauthType::QmgrMap => partner
                    .remote_qmgr
                    .is_some_and(|q| c.qmgr_name.as_ref().is_some_and(|g| g.matches(q))),
                _ => true,
            })
            .max_by(|a, b| {
                a.profile
                    .specificity()
                    .cmp(&b.profile.specificity())
                    .then(b.kind.mapping_rank().cmp(&a.kind.mapping_rank()))
                    .then(address_specificity(a).cmp(&address_specificity(b)))
            })
    }

    /// The BLOCKUSER record of the most specific profile matching `channel`.
    fn block_user_record(&self, channel: &str) -> Option<&CompiledRecord> {
        self.records
            .values()
            .filter(|c| c.kind == ChlauthType::BlockUser && c.profile.matches(channel))
            .max_by_key(|c| c.profile.specificity())
    }
}

fn address_specificity(c: &CompiledRecord) -> u32 {
    c.address.as_ref().map_or(0, |a| a.specificity())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partner<'a>(channel: &'a str, address: &str, user: &'a str) -> Partner<'a> {
        Partner {
            channel,
            address: address.parse().expect("address"),
            client_user: user,
            peer: None,
            issuer: None,
            remote_qmgr: None,
            channel_mca_user: "",
        }
    }

    fn defaults() -> ChlauthRules {
        ChlauthRules::from_records(ChlauthRules::mq_defaults(0)).expect("defaults compile")
    }

    fn is_root(u: &str) -> bool {
        u == "root" || u == "mqm"
    }

    #[test]
    fn defaults_close_system_channels_and_admins() {
        let rules = defaults();
        let v = rules.check(&partner("SYSTEM.DEF.SVRCONN", "10.0.0.1", "app"), &is_root);
        assert!(matches!(
            v,
            Verdict::Blocked(Block {
                reason: BlockReason::NoAccess,
                ..
            })
        ));
        let v = rules.check(&partner("APP.SVRCONN", "10.0.0.1", "root"), &is_root);
        assert!(matches!(
            v,
            Verdict::Blocked(Block {
                reason: BlockReason::User,
                ..
            })
        ));
        let v = rules.check(&partner("APP.SVRCONN", "10.0.0.1", "app"), &is_root);
        assert!(matches!(v, Verdict::Allowed { ref user, mapped_by: None, .. } if user == "app"));
        // The more specific SYSTEM.ADMIN.SVRCONN record lets non-admins in.
        let v = rules.check(
            &partner("SYSTEM.ADMIN.SVRCONN", "10.0.0.1", "app"),
            &is_root,
        );
        assert!(matches!(v, Verdict::Allowed { .. }), "{v:?}");
        let v = rules.check(
            &partner("SYSTEM.ADMIN.SVRCONN", "10.0.0.1", "mqm"),
            &is_root,
        );
        assert!(matches!(v, Verdict::Blocked(_)));
    }

    #[test]
    fn a_more_specific_blockuser_record_displaces_the_default() {
        let mut rules = defaults();
        let mut r = ChlauthRecord::new("ADMIN.SVRCONN", ChlauthType::BlockUser);
        r.user_list = vec!["nobody".into()];
        rules.set(r, SetAction::Add).expect("set");
        let v = rules.check(&partner("ADMIN.SVRCONN", "10.0.0.1", "root"), &is_root);
        assert!(matches!(v, Verdict::Allowed { .. }));
        let v = rules.check(&partner("ADMIN.SVRCONN", "10.0.0.1", "nobody"), &is_root);
        assert!(matches!(v, Verdict::Blocked(_)));
    }

    #[test]
    fn mappings_pick_the_user_and_the_most_specific_record() {
        let mut rules = defaults();
        let mut backstop = ChlauthRecord::new("*", ChlauthType::AddressMap);
        backstop.address = "*".into();
        backstop.user_source = UserSource::NoAccess;
        rules.set(backstop, SetAction::Add).expect("backstop");
        let mut lan = ChlauthRecord::new("APP.*", ChlauthType::AddressMap);
        lan.address = "10.1.*".into();
        lan.user_source = UserSource::Map;
        lan.mca_user = "appuser".into();
        rules.set(lan, SetAction::Add).expect("lan");
        let mut alice = ChlauthRecord::new("APP.*", ChlauthType::UserMap);
        alice.client_user = "alice".into();
        alice.mca_user = "alice1".into();
        rules.set(alice, SetAction::Add).expect("usermap");

        let v = rules.check(&partner("APP.SVRCONN", "10.1.0.5", "bob"), &is_root);
        assert!(
            matches!(v, Verdict::Allowed { ref user, .. } if user == "appuser"),
            "{v:?}"
        );
        let v = rules.check(&partner("APP.SVRCONN", "10.1.0.5", "alice"), &is_root);
        assert!(
            matches!(v, Verdict::Allowed { ref user, .. } if user == "alice1"),
            "{v:?}"
        );
        let v = rules.check(&partner("APP.SVRCONN", "192.0.2.1", "bob"), &is_root);
        assert!(matches!(
            v,
            Verdict::Blocked(Block {
                reason: BlockReason::NoAccess,
                ..
            })
        ));
        // A mapped user that is privileged is still blocked by BLOCKUSER.
        let mut to_root = ChlauthRecord::new("APP.SVRCONN", ChlauthType::UserMap);
        to_root.client_user = "eve".into();
        to_root.mca_user = "root".into();
        rules.set(to_root, SetAction::Add).expect("to root");
        let v = rules.check(&partner("APP.SVRCONN", "10.1.0.5", "eve"), &is_root);
        assert!(matches!(
            v,
            Verdict::Blocked(Block {
                reason: BlockReason::User,
                ..
            })
        ));
    }

    #[test]
    fn blockaddr_and_warn() {
        let mut rules = defaults();
        let mut r = ChlauthRecord::new("*", ChlauthType::BlockAddr);
        r.address_list = vec!["192.0.2.*".into()];
        rules.set(r.clone(), SetAction::Add).expect("set");
        assert!(rules
            .blocked_address("192.0.2.9".parse().expect("ip"))
            .is_some());
        assert!(rules
            .blocked_address("192.0.3.9".parse().expect("ip"))
            .is_none());
        r.warn = true;
        rules.set(r, SetAction::Replace).expect("replace");
        let v = rules.check(&partner("APP.SVRCONN", "192.0.2.9", "app"), &is_root);
        match v {
            Verdict::Allowed { warnings, .. } => assert_eq!(warnings.len(), 1),
            other => panic!("WARN(YES) must not refuse: {other:?}"),
        }
    }

    #[test]
    fn set_actions() {
        let mut rules = ChlauthRules::default();
        let mut r = ChlauthRecord::new("APP.*", ChlauthType::AddressMap);
        r.address = "10.*".into();
        r.user_source = UserSource::Channel;
        rules.set(r.clone(), SetAction::Add).expect("add");
        assert_eq!(
            rules.set(r.clone(), SetAction::Add),
            Err(ChlauthError::Exists)
        );
        rules.set(r.clone(), SetAction::Replace).expect("replace");
        let mut other = r.clone();
        other.address = "11.*".into();
        rules.set(other, SetAction::Add).expect("second address");
        assert_eq!(rules.len(), 2);
        rules.set(r.clone(), SetAction::Remove).expect("remove");
        assert_eq!(
            rules.set(r.clone(), SetAction::Remove),
            Err(ChlauthError::NotFound)
        );
        rules.set(r, SetAction::RemoveAll).expect("remove all");
        assert!(rules.is_empty());
    }

    #[test]
    fn set_refuses_incomplete_records() {
        let mut rules = ChlauthRules::default();
        let r = ChlauthRecord::new("APP.*", ChlauthType::AddressMap);
        assert_eq!(
            rules.set(r, SetAction::Add),
            Err(ChlauthError::Missing("ADDRESSMAP", "ADDRESS"))
        );
        let mut r = ChlauthRecord::new("APP.*", ChlauthType::AddressMap);
        r.address = "*".into();
        assert_eq!(
            rules.set(r, SetAction::Add),
            Err(ChlauthError::MapWithoutUser)
        );
        let mut r = ChlauthRecord::new("APP.*", ChlauthType::BlockAddr);
        r.address_list = vec!["10.*".into()];
        assert_eq!(
            rules.set(r, SetAction::Add),
            Err(ChlauthError::BlockAddrProfile)
        );
        let mut r = ChlauthRecord::new("bad name!", ChlauthType::BlockUser);
        r.user_list = vec!["x".into()];
        assert!(matches!(
            rules.set(r, SetAction::Add),
            Err(ChlauthError::Profile(_))
        ));
    }

    #[test]
    fn sslpeermap_matches_subject_and_issuer() {
        use crate::peer_name::DnAttribute;
        let mut rules = ChlauthRules::default();
        let mut r = ChlauthRecord::new("PAY.SVRCONN", ChlauthType::SslPeerMap);
        r.ssl_peer = "CN=pay-*,O=Example".into();
        r.ssl_cert_issuer = "CN=Example CA".into();
        r.mca_user = "payapp".into();
        rules.set(r, SetAction::Add).expect("set");
        let subject = DistinguishedName {
            attributes: vec![
                (DnAttribute::Organization, "Example".into()),
                (DnAttribute::CommonName, "pay-1".into()),
            ],
        };
        let issuer = DistinguishedName {
            attributes: vec![(DnAttribute::CommonName, "Example CA".into())],
        };
        let mut p = partner("PAY.SVRCONN", "10.0.0.1", "x");
        p.peer = Some(&subject);
        p.issuer = Some(&issuer);
        let v = rules.check(&p, &is_root);
        assert!(
            matches!(v, Verdict::Allowed { ref user, .. } if user == "payapp"),
            "{v:?}"
        );
        p.issuer = None;
        let v = rules.check(&p, &is_root);
        assert!(
            matches!(v, Verdict::Allowed { ref user, .. } if user == "x"),
            "{v:?}"
        );
    }
}
