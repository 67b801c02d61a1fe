//! Checking a password against the directory: find the user's entry (or take a DN as
//! given), then bind as it.

use super::*;

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

/// Checks `user`'s `password` against the directory.
pub async fn check_password(s: &LdapSettings, user: &str, password: &str) -> LdapCheck {
    if password.is_empty() {
        return LdapCheck::Refused(
            "an empty password (LDAP would take it as an anonymous bind)".into(),
        );
    }
    if let Some(why) = s.unusable() {
        return LdapCheck::Unavailable(why.to_string());
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
    let (conn, mut ldap) = LdapConnAsync::with_settings(s.connection(), url).await?;
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
