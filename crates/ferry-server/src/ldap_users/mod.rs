//! Users of an LDAP directory: AUTHINFO AUTHTYPE(IDPWLDAP), as MQ checks them.
//!
//! A user id that is a distinguished name (it holds `=`) is bound as directly; any other is
//! looked for under BASEDNU, `(&(objectClass=CLASSUSR)(USRFIELD=user))`, as LDAPUSER (or
//! anonymously), and must name exactly one entry. The password is then checked by binding
//! as that entry. An empty password is refused before anything is sent: LDAP takes a bind
//! without one as an anonymous bind, which succeeds. SHORTUSR names the attribute holding
//! the short user id the connection runs as (ADOPTCTX(YES)). Each server of CONNAME is tried
//! in order; every step has a time limit.
//!
//! With AUTHORMD other than OS the directory also says which groups a user belongs to, for
//! object authorities ([`user_groups`]), as MQ's LDAP authorization does:
//!
//! - SEARCHGRP: group entries under BASEDNG, of object class CLASSGRP, whose FINDGRP
//!   attribute (member) holds the user's DN;
//! - SEARCHUSR: the DNs the user entry's FINDGRP attribute (memberOf) lists;
//! - SRCHGRPSN: group entries whose FINDGRP attribute (memberUid) holds the user's short
//!   name.
//!
//! The user's entry is found as for authentication, by SHORTUSR first and then USRFIELD
//! (or read directly when the user id is a DN); a user the directory does not hold has no
//! groups there. A group is named by its GRPFIELD attribute (cn), or by its DN when GRPFIELD
//! is blank. NESTGRP(YES) adds the groups that hold those groups, found the same way (a
//! group's short name being its GRPFIELD value), up to [`MAX_NESTING`] levels, each group
//! once.

mod groups;
mod password;

pub use groups::{user_groups, LdapGroups};
pub use password::{check_password, LdapCheck};

use ferry_objects::authinfo::{
    AuthorizationMethod, GroupNesting, SecureComms, DEFAULT_GROUP_CLASS,
};
use ferry_objects::AuthInfoDefinition;
use ldap3::{ldap_escape, Ldap, LdapConnAsync, LdapConnSettings, LdapError, Scope, SearchEntry};
use std::collections::HashSet;
use std::time::Duration;

/// How long one LDAP server has to answer each step.
const STEP_TIMEOUT: Duration = Duration::from_secs(5);

/// How long one LDAP server has for a whole password check or group lookup.
const SERVER_TIMEOUT: Duration = Duration::from_secs(20);

/// How many levels of groups holding groups NESTGRP(YES) follows.
pub const MAX_NESTING: usize = 8;

/// The most groups one user is given from the directory.
const MAX_GROUPS: usize = 1000;

/// LDAP's noSuchObject result code: an entry read by its DN is not there.
const NO_SUCH_OBJECT: u32 = 32;

/// What an IDPWLDAP object says about the directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LdapSettings {
    /// `ldap://host:port` URLs, in CONNAME's order.
    urls: Vec<String>,
    /// LDAPUSER.
    bind_dn: String,
    /// LDAPPWD.
    bind_password: String,
    /// BASEDNU.
    base_dn: String,
    /// CLASSUSR.
    class: String,
    /// SHORTUSR.
    short_attribute: String,
    /// USRFIELD (SHORTUSR when blank).
    user_attribute: String,
    /// AUTHORMD.
    authorization: AuthorizationMethod,
    /// BASEDNG.
    group_base_dn: String,
    /// CLASSGRP (groupOfNames when blank).
    group_class: String,
    /// FINDGRP (when blank: member, memberOf or memberUid, by AUTHORMD).
    membership_attribute: String,
    /// GRPFIELD (blank: groups are named by their DNs).
    group_name_attribute: String,
    /// NESTGRP(YES).
    nested: bool,
    /// SECCOMM(YES|ANON): the TLS client configuration (`None`: plain LDAP).
    tls: DirectoryTls,
}

/// How a directory connection is made. Equal when of the same kind (a TLS configuration
/// has no equality of its own).
#[derive(Clone, Debug, Default)]
pub enum DirectoryTls {
    /// Plain LDAP (SECCOMM(NO)).
    #[default]
    Plain,
    /// LDAP over TLS with this client configuration.
    Tls(std::sync::Arc<ferry_tls::tokio_rustls::rustls::ClientConfig>),
    /// SECCOMM asks for TLS, which cannot be set up (the reason): the directory is never
    /// asked, rather than asked in clear text.
    Unusable(String),
}

impl PartialEq for DirectoryTls {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}

impl Eq for DirectoryTls {}

impl LdapSettings {
    /// The settings of `def` (an IDPWLDAP object).
    pub fn of(def: &AuthInfoDefinition) -> Self {
        let a = &def.attributes;
        // SECCOMM(YES|ANON): LDAP over TLS (ldaps, port 636 unless CONNAME names one).
        let (scheme, port) = if a.secure_comms == SecureComms::No {
            ("ldap", 389)
        } else {
            ("ldaps", 636)
        };
        let urls = a
            .conname
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(|c| match c.split_once('(') {
                Some((host, port)) => format!(
                    "{scheme}://{}:{}",
                    host.trim(),
                    port.trim_end_matches(')').trim()
                ),
                None => format!("{scheme}://{c}:{port}"),
            })
            .collect();
        let short = a.short_user.trim().to_string();
        let user_attribute = if a.user_field.trim().is_empty() {
            short.clone()
        } else {
            a.user_field.trim().to_string()
        };
        let trimmed_or = |value: &str, blank: &str| {
            let value = value.trim();
            if value.is_empty() { blank } else { value }.to_string()
        };
        let method = a.authorization_method;
        LdapSettings {
            urls,
            bind_dn: a.ldap_user.clone(),
            bind_password: a.ldap_password.clone(),
            base_dn: a.base_dn_user.clone(),
            class: a.class_user.clone(),
            short_attribute: short,
            user_attribute,
            authorization: method,
            group_base_dn: a.base_dn_group.trim().to_string(),
            group_class: trimmed_or(&a.class_group, DEFAULT_GROUP_CLASS),
            membership_attribute: trimmed_or(
                &a.find_group,
                method.default_membership_attribute().unwrap_or_default(),
            ),
            group_name_attribute: a.group_field.trim().to_string(),
            nested: a.nested_groups == GroupNesting::Yes,
            tls: DirectoryTls::default(),
        }
    }

    /// True when the object asks for TLS (SECCOMM(YES|ANON)).
    pub fn wants_tls(def: &AuthInfoDefinition) -> bool {
        def.attributes.secure_comms != SecureComms::No
    }

    /// How connections to the directory are made (SECCOMM(YES|ANON): TLS).
    pub fn with_tls(mut self, tls: DirectoryTls) -> Self {
        self.tls = tls;
        self
    }

    /// Why the directory cannot be asked at all (TLS that cannot be set up).
    fn unusable(&self) -> Option<&str> {
        match &self.tls {
            DirectoryTls::Unusable(why) => Some(why),
            _ => None,
        }
    }

    /// How to connect: the step timeout, and TLS when SECCOMM asks for it.
    fn connection(&self) -> LdapConnSettings {
        let settings = LdapConnSettings::new().set_conn_timeout(STEP_TIMEOUT);
        match &self.tls {
            DirectoryTls::Tls(config) => settings.set_config(config.clone()),
            _ => settings,
        }
    }

    /// True when the directory gives users their groups (AUTHORMD other than OS).
    pub fn authorizes(&self) -> bool {
        self.authorization != AuthorizationMethod::Os
    }
}

/// `(&(objectClass=class)(attribute=value))`, the class and the value escaped (the
/// attribute is the AUTHINFO object's, checked at DEFINE).
fn entry_filter(class: &str, attribute: &str, value: &str) -> String {
    format!(
        "(&(objectClass={})({}={}))",
        ldap_escape(class),
        attribute,
        ldap_escape(value)
    )
}

/// True when `user` is a distinguished name rather than a short user id.
fn is_dn(user: &str) -> bool {
    user.contains('=')
}

/// The user's entry with `attrs`: read by its DN, else searched for under BASEDNU by
/// SHORTUSR and then USRFIELD (MQ's order for authorization); `Ok(None)` when the directory
/// does not hold it, `Err` when several entries match.
async fn find_user(
    ldap: &mut Ldap,
    s: &LdapSettings,
    user: &str,
    attrs: &[&str],
) -> Result<Result<Option<SearchEntry>, String>, LdapError> {
    if is_dn(user) {
        let found = search(ldap, user, Scope::Base, "(objectClass=*)", attrs).await?;
        return Ok(Ok(found.into_iter().next()));
    }
    let mut tried: Vec<&str> = Vec::new();
    for attribute in [s.short_attribute.as_str(), s.user_attribute.as_str()] {
        if attribute.is_empty() || tried.iter().any(|t| t.eq_ignore_ascii_case(attribute)) {
            continue;
        }
        tried.push(attribute);
        let filter = entry_filter(&s.class, attribute, user);
        let found = search(ldap, &s.base_dn, Scope::Subtree, &filter, attrs).await?;
        match found.len() {
            0 => continue,
            1 => return Ok(Ok(found.into_iter().next())),
            n => {
                return Ok(Err(format!(
                    "{n} entries match {filter} under '{}'",
                    s.base_dn
                )))
            }
        }
    }
    Ok(Ok(None))
}

/// The values of `attribute` in `entry` (attribute names are case-insensitive).
fn values(entry: &SearchEntry, attribute: &str) -> Vec<String> {
    entry
        .attrs
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case(attribute))
        .flat_map(|(_, v)| v.iter().cloned())
        .collect()
}

/// One search, each step within [`STEP_TIMEOUT`]; entries that do not parse are left out
/// (ldap3 panics on them). A base-scope read of an entry that is not there finds nothing;
/// a search under a base that is not there is an error (a misconfigured BASEDNU or
/// BASEDNG must not pass for a user without groups).
async fn search(
    ldap: &mut Ldap,
    base: &str,
    scope: Scope,
    filter: &str,
    attrs: &[&str],
) -> Result<Vec<SearchEntry>, LdapError> {
    let mut wanted: Vec<&str> = attrs.iter().copied().filter(|a| !a.is_empty()).collect();
    if wanted.is_empty() {
        wanted.push("1.1");
    }
    ldap.with_timeout(STEP_TIMEOUT);
    let result = ldap.search(base, scope, filter, wanted).await?;
    if scope == Scope::Base && result.1.rc == NO_SUCH_OBJECT {
        return Ok(Vec::new());
    }
    let (raw, _) = result.success()?;
    Ok(raw
        .into_iter()
        .filter_map(|r| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| SearchEntry::construct(r)))
                .ok()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::groups::group_of;
    use super::*;
    use ferry_objects::AuthInfoType;

    fn ldap_object() -> AuthInfoDefinition {
        let mut def = AuthInfoDefinition::new("LDAP", AuthInfoType::IdPwLdap);
        def.attributes.conname = "ldap.example.com(1389), backup".into();
        def.attributes.short_user = "uid".into();
        def.attributes.base_dn_group = " ou=groups,dc=example,dc=com ".into();
        def
    }

    #[test]
    fn filters_escape_what_users_give() {
        assert_eq!(
            entry_filter(
                "groupOfNames",
                "member",
                "uid=carol,ou=people,dc=example,dc=com"
            ),
            "(&(objectClass=groupOfNames)(member=uid=carol,ou=people,dc=example,dc=com))"
        );
        // A user id that would widen the filter is taken literally.
        assert_eq!(
            entry_filter("posixGroup", "memberUid", "*)(uid=*"),
            "(&(objectClass=posixGroup)(memberUid=\\2a\\29\\28uid=\\2a))"
        );
        assert_eq!(
            entry_filter("inetOrgPerson", "uid", "a\\b\0c"),
            "(&(objectClass=inetOrgPerson)(uid=a\\5cb\\00c))"
        );
    }

    #[test]
    fn settings_of_an_object() {
        let mut def = ldap_object();
        let s = LdapSettings::of(&def);
        assert_eq!(
            s.urls,
            ["ldap://ldap.example.com:1389", "ldap://backup:389"]
        );
        assert!(!s.authorizes(), "AUTHORMD(OS) is the default");
        assert_eq!(s.group_class, "groupOfNames");
        assert_eq!(s.group_base_dn, "ou=groups,dc=example,dc=com");
        for (method, attribute) in [
            (AuthorizationMethod::SearchGroup, "member"),
            (AuthorizationMethod::SearchUser, "memberOf"),
            (AuthorizationMethod::SearchGroupShortName, "memberUid"),
        ] {
            def.attributes.authorization_method = method;
            let s = LdapSettings::of(&def);
            assert!(s.authorizes());
            assert_eq!(
                s.membership_attribute, attribute,
                "FINDGRP blank for {method:?}"
            );
        }
        def.attributes.find_group = " uniqueMember ".into();
        def.attributes.class_group = String::new();
        def.attributes.group_field = "cn".into();
        def.attributes.nested_groups = GroupNesting::Yes;
        let s = LdapSettings::of(&def);
        assert_eq!(s.membership_attribute, "uniqueMember");
        assert_eq!(
            s.group_class, "groupOfNames",
            "CLASSGRP blank: MQ's default"
        );
        assert_eq!(s.group_name_attribute, "cn");
        assert!(s.nested);
    }

    fn entry(dn: &str, attrs: &[(&str, &[&str])]) -> SearchEntry {
        SearchEntry {
            dn: dn.into(),
            attrs: attrs
                .iter()
                .map(|(k, v)| (k.to_string(), v.iter().map(|x| x.to_string()).collect()))
                .collect(),
            bin_attrs: Default::default(),
        }
    }

    #[test]
    fn groups_are_named_by_grpfield_else_by_dn() {
        let mut def = ldap_object();
        def.attributes.authorization_method = AuthorizationMethod::SearchGroup;
        let by_dn = LdapSettings::of(&def);
        let e = entry("cn=apps,ou=groups,dc=example,dc=com", &[("CN", &["apps"])]);
        assert_eq!(
            group_of(&by_dn, &e).name(),
            "cn=apps,ou=groups,dc=example,dc=com"
        );
        def.attributes.group_field = "cn".into();
        let by_cn = LdapSettings::of(&def);
        assert_eq!(
            group_of(&by_cn, &e).name(),
            "apps",
            "attribute names ignore case"
        );
        let nameless = entry("cn=x,ou=groups,dc=example,dc=com", &[]);
        assert_eq!(
            group_of(&by_cn, &nameless).name(),
            "cn=x,ou=groups,dc=example,dc=com"
        );
    }

    #[tokio::test]
    async fn no_server_no_groups() {
        let mut def = ldap_object();
        def.attributes.authorization_method = AuthorizationMethod::SearchGroup;
        def.attributes.conname = String::new();
        let s = LdapSettings::of(&def);
        assert!(matches!(
            user_groups(&s, "carol").await,
            LdapGroups::Unavailable(_)
        ));
        // A port nobody listens on: refused at once, never a hang.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap_or(9);
        def.attributes.conname = format!("127.0.0.1({port})");
        let s = LdapSettings::of(&def);
        match user_groups(&s, "carol").await {
            LdapGroups::Unavailable(why) => assert!(why.contains(&port.to_string()), "{why}"),
            other => panic!("{other:?}"),
        }
        def.attributes.authorization_method = AuthorizationMethod::Os;
        let s = LdapSettings::of(&def);
        assert_eq!(
            user_groups(&s, "carol").await,
            LdapGroups::Found(Vec::new())
        );
    }
}
