//! Users of an LDAP directory: AUTHINFO AUTHTYPE(IDPWLDAP), as MQ checks them.
//!
//! A user id that is a distinguished name (it holds `=`) is bound as directly; any other is
//! looked for under BASEDNU, `(&(objectClass=CLASSUSR)(USRFIELD=user))`, as LDAPUSER (or
//! anonymously), and must name exactly one entry. The password is then checked by binding
//! as that entry. An empty password is refused before anything is sent: LDAP takes a bind
//! without one as an anonymous bind, which succeeds. SHORTUSR names the attribute holding
//! the short user id the connection runs as (ADOPTCTX(YES)). Each server of CONNAME is tried
//! in order; every step has a time limit.

use ferry_objects::AuthInfoDefinition;
use ldap3::{ldap_escape, LdapConnAsync, LdapConnSettings, Scope, SearchEntry};
use std::time::Duration;

/// How long one LDAP server has to answer each step.
const STEP_TIMEOUT: Duration = Duration::from_secs(5);

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
        LdapSettings {
            urls,
            bind_dn: a.ldap_user.clone(),
            bind_password: a.ldap_password.clone(),
            base_dn: a.base_dn_user.clone(),
            class: a.class_user.clone(),
            short_attribute: short,
            user_attribute,
        }
    }
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
        match tokio::time::timeout(STEP_TIMEOUT * 4, check_on(url, s, user, password)).await {
            Ok(Ok(answer)) => return answer,
            Ok(Err(e)) => last = format!("{url}: {e}"),
            Err(_) => last = format!("{url}: no answer within {} s", (STEP_TIMEOUT * 4).as_secs()),
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
        let filter = format!(
            "(&(objectClass={})({}={}))",
            ldap_escape(s.class.as_str()),
            s.user_attribute,
            ldap_escape(user)
        );
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
