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

use ferry_objects::authinfo::{AuthorizationMethod, GroupNesting, DEFAULT_GROUP_CLASS};
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
}

/// What the directory said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LdapCheck {
    /// The password binds as the user's entry; the short user id (SHORTUSR), if the entry
    /// has one.
    Valid(Option<String>),
    /// The directory refused the user id or password.
    Refused(String),
    /// No server of CONNAME could be asked.
    Unavailable(String),
}

impl LdapSettings {
    /// The settings of `def` (an IDPWLDAP object).
    pub fn of(def: &AuthInfoDefinition) -> Self {
        let a = &def.attributes;
        let urls = a
            .conname
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(|c| match c.split_once('(') {
                Some((host, port)) => format!(
                    "ldap://{}:{}",
                    host.trim(),
                    port.trim_end_matches(')').trim()
                ),
                None => format!("ldap://{c}:389"),
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

/// Checks `user`'s `password` against the directory.
pub async fn check_password(s: &LdapSettings, user: &str, password: &str) -> LdapCheck {
    if password.is_empty() {
        return LdapCheck::Refused(
            "an empty password (LDAP would take it as an anonymous bind)".into(),
        );
    }
    if s.urls.is_empty() {
        return LdapCheck::Unavailable("CONNAME names no LDAP server".into());
    }
    let mut last = String::new();
    for url in &s.urls {
        match tokio::time::timeout(SERVER_TIMEOUT, check_on(url, s, user, password)).await {
            Ok(Ok(answer)) => return answer,
            Ok(Err(e)) => last = format!("{url}: {e}"),
            Err(_) => last = format!("{url}: no answer within {} s", SERVER_TIMEOUT.as_secs()),
        }
    }
    LdapCheck::Unavailable(last)
}

/// One server: `Err` when it could not be asked (the next one is tried).
async fn check_on(
    url: &str,
    s: &LdapSettings,
    user: &str,
    password: &str,
) -> Result<LdapCheck, ldap3::LdapError> {
    let settings = LdapConnSettings::new().set_conn_timeout(STEP_TIMEOUT);
    let (conn, mut ldap) = LdapConnAsync::with_settings(settings, url).await?;
    ldap3::drive!(conn);
    ldap.with_timeout(STEP_TIMEOUT);
    let answer = lookup_and_bind(&mut ldap, s, user, password).await;
    let _ = ldap.unbind().await;
    answer
}

async fn lookup_and_bind(
    ldap: &mut ldap3::Ldap,
    s: &LdapSettings,
    user: &str,
    password: &str,
) -> Result<LdapCheck, ldap3::LdapError> {
    let (dn, short) = if user.contains('=') {
        (user.to_string(), None)
    } else {
        if s.user_attribute.is_empty() {
            return Ok(LdapCheck::Refused(
                "the user id is not a DN and neither USRFIELD nor SHORTUSR names the attribute to find it by".into(),
            ));
        }
        if !s.bind_dn.is_empty() {
            ldap.with_timeout(STEP_TIMEOUT);
            ldap.simple_bind(&s.bind_dn, &s.bind_password)
                .await?
                .success()?;
        }
        let filter = entry_filter(&s.class, &s.user_attribute, user);
        let attrs: Vec<&str> = if s.short_attribute.is_empty() {
            vec!["1.1"]
        } else {
            vec![s.short_attribute.as_str()]
        };
        ldap.with_timeout(STEP_TIMEOUT);
        let (entries, _) = ldap
            .search(&s.base_dn, Scope::Subtree, &filter, attrs)
            .await?
            .success()?;
        if entries.len() != 1 {
            return Ok(LdapCheck::Refused(format!(
                "{} entries match {filter} under '{}'",
                entries.len(),
                s.base_dn
            )));
        }
        let Some(raw) = entries.into_iter().next() else {
            return Ok(LdapCheck::Refused("no entry".into()));
        };
        // ldap3 panics on an entry it cannot parse: a bad answer is a refusal, not a crash.
        let Ok(entry) =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| SearchEntry::construct(raw)))
        else {
            return Ok(LdapCheck::Refused(
                "the directory's answer does not parse".into(),
            ));
        };
        let short = entry
            .attrs
            .get(&s.short_attribute)
            .and_then(|v| v.first().cloned());
        (entry.dn, short)
    };
    ldap.with_timeout(STEP_TIMEOUT);
    let bound = ldap.simple_bind(&dn, password).await?;
    Ok(match bound.success() {
        Ok(_) => LdapCheck::Valid(short),
        Err(e) => LdapCheck::Refused(format!("the bind as '{dn}' failed: {e}")),
    })
}

/// What the directory said about a user's groups.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LdapGroups {
    /// The user's groups (none when the directory does not hold the user).
    Found(Vec<String>),
    /// The directory answered, but not so that the groups can be known (several entries
    /// match the user id).
    Refused(String),
    /// No server of CONNAME could be asked.
    Unavailable(String),
}

/// The groups `user` belongs to, as the directory says (AUTHORMD other than OS).
pub async fn user_groups(s: &LdapSettings, user: &str) -> LdapGroups {
    if !s.authorizes() || user.trim().is_empty() {
        return LdapGroups::Found(Vec::new());
    }
    if s.urls.is_empty() {
        return LdapGroups::Unavailable("CONNAME names no LDAP server".into());
    }
    let mut last = String::new();
    for url in &s.urls {
        match tokio::time::timeout(SERVER_TIMEOUT, groups_on(url, s, user)).await {
            Ok(Ok(answer)) => return answer,
            Ok(Err(e)) => last = format!("{url}: {e}"),
            Err(_) => last = format!("{url}: no answer within {} s", SERVER_TIMEOUT.as_secs()),
        }
    }
    LdapGroups::Unavailable(last)
}

/// One server: `Err` when it could not be asked (the next one is tried).
async fn groups_on(url: &str, s: &LdapSettings, user: &str) -> Result<LdapGroups, LdapError> {
    let settings = LdapConnSettings::new().set_conn_timeout(STEP_TIMEOUT);
    let (conn, mut ldap) = LdapConnAsync::with_settings(settings, url).await?;
    ldap3::drive!(conn);
    let answer = look_up_groups(&mut ldap, s, user).await;
    let _ = ldap.unbind().await;
    answer
}

/// A group entry found for a user.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Group {
    dn: String,
    /// Its GRPFIELD value, when GRPFIELD is set and the entry has one.
    short: Option<String>,
    /// Its own FINDGRP values (SEARCHUSR with NESTGRP(YES): the groups holding it).
    memberships: Vec<String>,
}

impl Group {
    /// The name authority records know it by: GRPFIELD's value, else its DN.
    fn name(&self) -> String {
        self.short.clone().unwrap_or_else(|| self.dn.clone())
    }
}

async fn look_up_groups(
    ldap: &mut Ldap,
    s: &LdapSettings,
    user: &str,
) -> Result<LdapGroups, LdapError> {
    if !s.bind_dn.is_empty() {
        ldap.with_timeout(STEP_TIMEOUT);
        ldap.simple_bind(&s.bind_dn, &s.bind_password)
            .await?
            .success()?;
    }
    let membership = s.membership_attribute.as_str();
    let direct = match s.authorization {
        AuthorizationMethod::Os => return Ok(LdapGroups::Found(Vec::new())),
        AuthorizationMethod::SearchGroup => match find_user(ldap, s, user, &[]).await? {
            Ok(Some(entry)) => search_groups(ldap, s, &entry.dn).await?,
            Ok(None) => Vec::new(),
            Err(why) => return Ok(LdapGroups::Refused(why)),
        },
        AuthorizationMethod::SearchGroupShortName => {
            let short = if is_dn(user) {
                let attrs = [s.short_attribute.as_str()];
                match find_user(ldap, s, user, &attrs).await? {
                    Ok(Some(entry)) => values(&entry, &s.short_attribute).into_iter().next(),
                    Ok(None) => None,
                    Err(why) => return Ok(LdapGroups::Refused(why)),
                }
            } else {
                Some(user.to_string())
            };
            match short {
                Some(short) => search_groups(ldap, s, &short).await?,
                None => Vec::new(),
            }
        }
        AuthorizationMethod::SearchUser => match find_user(ldap, s, user, &[membership]).await? {
            Ok(Some(entry)) => read_groups(ldap, s, values(&entry, membership)).await?,
            Ok(None) => Vec::new(),
            Err(why) => return Ok(LdapGroups::Refused(why)),
        },
    };
    let mut seen = HashSet::new();
    let mut all: Vec<Group> = direct
        .into_iter()
        .filter(|g| seen.insert(g.dn.to_ascii_lowercase()))
        .collect();
    if s.nested {
        let mut frontier = all.clone();
        for _ in 0..MAX_NESTING {
            let mut next = Vec::new();
            for group in &frontier {
                let holders = match s.authorization {
                    AuthorizationMethod::SearchGroup => search_groups(ldap, s, &group.dn).await?,
                    AuthorizationMethod::SearchGroupShortName => match &group.short {
                        Some(short) => search_groups(ldap, s, short).await?,
                        None => Vec::new(),
                    },
                    AuthorizationMethod::SearchUser => {
                        read_groups(ldap, s, group.memberships.clone()).await?
                    }
                    AuthorizationMethod::Os => Vec::new(),
                };
                for holder in holders {
                    if all.len() < MAX_GROUPS && seen.insert(holder.dn.to_ascii_lowercase()) {
                        all.push(holder.clone());
                        next.push(holder);
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
    }
    let mut names: Vec<String> = all.iter().map(Group::name).collect();
    names.truncate(MAX_GROUPS);
    names.sort_unstable();
    names.dedup();
    Ok(LdapGroups::Found(names))
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

/// The group entries under BASEDNG whose FINDGRP attribute holds `member`.
async fn search_groups(
    ldap: &mut Ldap,
    s: &LdapSettings,
    member: &str,
) -> Result<Vec<Group>, LdapError> {
    let filter = entry_filter(&s.group_class, &s.membership_attribute, member);
    let attrs = [s.group_name_attribute.as_str()];
    let found = search(ldap, &s.group_base_dn, Scope::Subtree, &filter, &attrs).await?;
    Ok(found.iter().map(|e| group_of(s, e)).collect())
}

/// The groups named by `dns` (SEARCHUSR): read for their GRPFIELD (and, nested, their
/// own memberships) when those are wanted; a DN naming no entry is left out.
async fn read_groups(
    ldap: &mut Ldap,
    s: &LdapSettings,
    dns: Vec<String>,
) -> Result<Vec<Group>, LdapError> {
    if s.group_name_attribute.is_empty() && !s.nested {
        return Ok(dns
            .into_iter()
            .map(|dn| Group {
                dn,
                short: None,
                memberships: Vec::new(),
            })
            .collect());
    }
    let attrs = [
        s.group_name_attribute.as_str(),
        s.membership_attribute.as_str(),
    ];
    let mut groups = Vec::new();
    for dn in dns.into_iter().take(MAX_GROUPS) {
        let found = search(ldap, &dn, Scope::Base, "(objectClass=*)", &attrs).await?;
        groups.extend(found.iter().map(|e| group_of(s, e)));
    }
    Ok(groups)
}

/// A group entry as a [`Group`].
fn group_of(s: &LdapSettings, entry: &SearchEntry) -> Group {
    let short = if s.group_name_attribute.is_empty() {
        None
    } else {
        values(entry, &s.group_name_attribute).into_iter().next()
    };
    Group {
        dn: entry.dn.clone(),
        short,
        memberships: if s.nested {
            values(entry, &s.membership_attribute)
        } else {
            Vec::new()
        },
    }
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
