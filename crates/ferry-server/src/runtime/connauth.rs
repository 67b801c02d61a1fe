//! Connection authentication (CONNAUTH) at the edges of every kind of connection.
//!
//! QMGR CONNAUTH names an AUTHINFO object; its CHCKCLNT (client channels) or CHCKLOCL
//! (bindings), tightened by the CHLAUTH record that let a client in, decide whether the
//! connection must prove its user id ([`plan`]). Passwords are checked against the
//! queue manager's user repository (`<qm dir>/users`, written by `ferry user`), then the
//! host's users through PAM (`crate::host_users`), by [`verify`], off the thread that serves connections and one at a time (Argon2id is slow
//! on purpose, and a flood of guesses must not take the machine), and a failure is
//! answered only after FAILDLAY seconds. What was refused, and why, goes to the error log
//! (FRY5534E, FRY5540E) with the user id and never the password; the client learns 2035
//! MQRC_NOT_AUTHORIZED (AMQP: amqp:unauthorized-access).
//!
//! The object and the file are read at start and at REFRESH SECURITY TYPE(CONNAUTH)
//! ([`refresh`]); connections already made are not checked again.
//!
//! An IDPWLDAP object with AUTHORMD other than OS also gives users their groups for
//! object authorities. The directory is asked over the network and the engine's principal
//! directory answers inside engine calls, so a user's groups are read before its
//! connection is made ([`groups_to_read`], [`read_groups`]), aside like a password check,
//! and remembered until REFRESH SECURITY. Groups that cannot be read refuse the
//! connection (FRY5531E): checking it without them could grant less, or a PRINCIPAL
//! record more, than the directory says.

use super::server::Server;
use crate::authentication::read;
use crate::host_users::{self, HostCheck};
use crate::ldap_users::{self, LdapCheck, LdapGroups, LdapSettings};
use crate::messages;
use ferry_security::chlauth::CheckClient;
use ferry_security::connauth::{credential_check, CredentialCheck, Verification};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// REFRESH SECURITY TYPE(CONNAUTH): reads the object and the file again. A user file
/// that cannot be read leaves the one in use (FRY7480E) and fails the command.
pub(crate) fn refresh(server: &Server) -> Result<String, String> {
    let mut problems = Vec::new();
    let (config, users) = read(&server.engine.borrow(), &server.paths.dir, &mut problems);
    let mut log = server.error_log.borrow_mut();
    for (message, args) in &problems {
        let inserts: Vec<&dyn std::fmt::Display> =
            args.iter().map(|a| a as &dyn std::fmt::Display).collect();
        log.write(message, &inserts);
    }
    drop(log);
    let mut auth = server.connauth.borrow_mut();
    let described = match &config {
        Some(c) => format!(
            "CONNAUTH({}) CHCKCLNT({}) CHCKLOCL({}){}",
            c.name,
            c.check_client.keyword(),
            c.check_local.keyword(),
            if c.ldap.as_ref().is_some_and(LdapSettings::authorizes) {
                "; groups from the LDAP directory"
            } else {
                ""
            }
        ),
        None => "CONNAUTH blank: passwords are not checked".to_string(),
    };
    auth.config = config;
    server
        .principals
        .use_directory(auth.group_directory().is_some());
    match users {
        Some(u) => {
            let n = u.users().count();
            auth.users = Arc::new(u);
            server.principals.refresh(Some(auth.users.clone()));
            Ok(format!("{described}; user repository with {n} users"))
        }
        None => {
            // What was looked up is forgotten all the same (the directory's groups too).
            server.principals.refresh(None);
            let path = crate::user_repository::path(&server.paths.dir);
            Err(format!(
                "{described}; the user repository {} cannot be read: the one in use stays (FRY7480E)",
                path.display()
            ))
        }
    }
}

/// What one connection needs.
pub(crate) enum Plan {
    /// Nothing to check.
    Skip,
    /// Check these credentials; on success, `adopt` says whether their user id becomes
    /// the connection's (ADOPTCTX(YES)).
    Verify {
        /// The user id to check.
        user: String,
        /// Its password.
        password: String,
        /// ADOPTCTX(YES).
        adopt: bool,
        /// FAILDLAY.
        fail_delay: Duration,
    },
    /// Refuse after `fail_delay`: a password was required and none was given (logged).
    Refuse {
        /// FAILDLAY.
        fail_delay: Duration,
    },
}

/// Who is connecting, for [`plan`] and the error log.
pub(crate) struct Claimant<'a> {
    /// A bindings connection (CHCKLOCL) rather than a client (CHCKCLNT).
    pub local: bool,
    /// The CHLAUTH record's CHCKCLNT (ASQMGR when none or for bindings).
    pub record: CheckClient,
    /// The user id the application asserts (MQCSP's when it gave one).
    pub asserted: &'a str,
    /// The credentials, when given.
    pub credentials: Option<(&'a str, &'a str)>,
    /// Channel (blank for bindings) and partner address, for the log.
    pub channel: &'a str,
    /// The partner's address.
    pub address: &'a str,
    /// The application's name, for the log.
    pub application: &'a str,
}

/// Decides what `claimant` needs.
pub(crate) fn plan(server: &Server, claimant: &Claimant<'_>) -> Plan {
    let auth = server.connauth.borrow();
    let Some(config) = &auth.config else {
        return Plan::Skip;
    };
    let level = if claimant.local {
        config.check_local
    } else {
        config.check_client
    };
    let privileged = server.administrators.is_administrator(claimant.asserted);
    match credential_check(
        level,
        claimant.record,
        claimant.credentials.is_some(),
        privileged,
    ) {
        CredentialCheck::Skip => Plan::Skip,
        CredentialCheck::Verify => {
            let (user, password) = claimant.credentials.unwrap_or_default();
            Plan::Verify {
                user: user.to_string(),
                password: password.to_string(),
                adopt: config.adopt,
                fail_delay: config.fail_delay,
            }
        }
        CredentialCheck::Missing => {
            let level_word = if claimant.record == CheckClient::AsQmgr {
                level.keyword()
            } else {
                claimant.record.keyword()
            };
            server.error_log.borrow_mut().write(
                &messages::CONNAUTH_MISSING,
                &[
                    &claimant.application,
                    &claimant.address,
                    &claimant.channel,
                    &config.name,
                    &level_word,
                    &claimant.asserted,
                ],
            );
            Plan::Refuse {
                fail_delay: config.fail_delay,
            }
        }
    }
}

/// Checks `user`'s `password`, one check at a time and off this thread where it blocks; a
/// failure is logged (FRY5534E) and answered after `fail_delay`. The user id the password
/// proved (an LDAP entry's SHORTUSR, else `user`), or `None`.
pub(crate) async fn verify(
    server: &Rc<Server>,
    claimant_channel: &str,
    address: &str,
    user: String,
    password: String,
    fail_delay: Duration,
) -> Option<String> {
    let (gate, users, ldap) = {
        let auth = server.connauth.borrow();
        let ldap = auth.config.as_ref().and_then(|c| c.ldap.clone());
        (auth.gate.clone(), auth.users.clone(), ldap)
    };
    let outcome: Result<String, String> = match gate.acquire().await {
        Err(_) => Err("the check could not run".to_string()),
        // IDPWLDAP: the directory alone, as MQ's.
        Ok(_permit) if ldap.is_some() => {
            let settings = ldap.unwrap_or_else(|| unreachable!("checked by the guard"));
            match ldap_users::check_password(&settings, &user, &password).await {
                LdapCheck::Valid(short) => Ok(short.unwrap_or_else(|| user.clone())),
                LdapCheck::Refused(why) => Err(format!("the LDAP directory refused it: {why}")),
                LdapCheck::Unavailable(why) => {
                    Err(format!("the LDAP directory cannot be asked: {why}"))
                }
            }
        }
        // IDPWOS: the repository first; a user id it does not hold is the host's (PAM), as
        // MQ's IDPWOS checks the operating system's users.
        Ok(_permit) => {
            let user = user.clone();
            tokio::task::spawn_blocking(move || match users.verify(&user, password.as_bytes()) {
                Verification::Valid => Ok(user),
                Verification::WrongPassword => Err("the password is not the user's".to_string()),
                Verification::UnknownUser => match host_users::check_password(&user, &password) {
                    HostCheck::Valid => Ok(user),
                    HostCheck::Refused(why) => Err(format!(
                        "the user id is not in the queue manager's user repository, and the host (PAM service '{}') refused it: {why}",
                        host_users::PAM_SERVICE
                    )),
                    HostCheck::Unavailable(why) => Err(format!(
                        "the user id is not in the queue manager's user repository, and host users cannot be checked: {why}"
                    )),
                },
            })
            .await
            .unwrap_or_else(|e| Err(format!("the check failed: {e}")))
        }
    };
    let why = match outcome {
        Ok(proved) => return Some(proved),
        Err(why) => why,
    };
    server.error_log.borrow_mut().write(
        &messages::CONNAUTH_FAILED,
        &[&user, &address, &claimant_channel, &why],
    );
    tokio::time::sleep(fail_delay).await;
    None
}

/// The directory `user`'s groups must be read from before its connection is made: authority
/// checks are on, the AUTHINFO object in use has AUTHORMD other than OS, and `user` (not
/// an administrator) was not read since the last REFRESH SECURITY. `None`: nothing to
/// wait for (the common case, answered without touching the network).
pub(crate) fn groups_to_read(server: &Server, user: &str) -> Option<LdapSettings> {
    if !server.principals.needs_directory_groups(user) || !server.engine.borrow().checks_authority()
    {
        return None;
    }
    server.connauth.borrow().group_directory()
}

/// Reads `user`'s groups from the directory into the principal directory, where the
/// engine's checks find them. False when they cannot be read (the directory cannot be
/// asked, or several entries match the user id): FRY5531E is logged and the connection is
/// refused. Bounded in time (each server of CONNAME has a limit), never a hang.
pub(crate) async fn read_groups(
    server: &Rc<Server>,
    directory: LdapSettings,
    user: &str,
    channel: &str,
    address: &str,
) -> bool {
    let why = match ldap_users::user_groups(&directory, user).await {
        LdapGroups::Found(groups) => {
            server.principals.remember_groups(user, groups);
            return true;
        }
        LdapGroups::Refused(why) => format!("the directory's answer does not settle it: {why}"),
        LdapGroups::Unavailable(why) => format!("the directory cannot be asked: {why}"),
    };
    let authinfo = server
        .connauth
        .borrow()
        .config
        .as_ref()
        .map(|c| c.name.clone())
        .unwrap_or_default();
    server.error_log.borrow_mut().write(
        &messages::LDAP_GROUPS_FAILED,
        &[&user, &address, &channel, &authinfo, &why],
    );
    false
}

/// Waits FAILDLAY before a refusal for missing credentials is answered.
pub(crate) async fn refuse_later(fail_delay: Duration) {
    tokio::time::sleep(fail_delay).await;
}
