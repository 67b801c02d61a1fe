//! The groups a user belongs to in the directory, for object authorities (AUTHORMD
//! SEARCHGRP, SEARCHUSR, SRCHGRPSN; NESTGRP).

use super::*;

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
    if let Some(why) = s.unusable() {
        return LdapGroups::Unavailable(why.to_string());
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
    let (conn, mut ldap) = LdapConnAsync::with_settings(s.connection(), url).await?;
    ldap3::drive!(conn);
    let answer = look_up_groups(&mut ldap, s, user).await;
    let _ = ldap.unbind().await;
    answer
}

/// A group entry found for a user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Group {
    dn: String,
    /// Its GRPFIELD value, when GRPFIELD is set and the entry has one.
    short: Option<String>,
    /// Its own FINDGRP values (SEARCHUSR with NESTGRP(YES): the groups holding it).
    memberships: Vec<String>,
}

impl Group {
    /// The name authority records know it by: GRPFIELD's value, else its DN.
    pub(super) fn name(&self) -> String {
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
pub(super) fn group_of(s: &LdapSettings, entry: &SearchEntry) -> Group {
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
