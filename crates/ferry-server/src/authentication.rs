//! What the queue manager authenticates connections with: the AUTHINFO object QMGR
//! CONNAUTH names and the user repository, as last read (at start, and at REFRESH
//! SECURITY TYPE(CONNAUTH)). The checks themselves, at the edges of every kind of
//! connection, are the runtime's (`runtime/connauth.rs`).

use crate::messages;
use ferry_objects::authinfo::AdoptContext;
use ferry_security::connauth::{CheckLevel, UserFile};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// What the queue manager checks with, as last read.
pub struct ConnAuth {
    /// The AUTHINFO object in use (None: CONNAUTH is blank or names none).
    pub(crate) config: Option<Config>,
    /// The user repository.
    pub(crate) users: Arc<UserFile>,
    /// One password check at a time.
    pub(crate) gate: Rc<tokio::sync::Semaphore>,
}

/// The AUTHINFO object's settings.
#[derive(Clone, Debug)]
pub(crate) struct Config {
    /// Its name.
    pub(crate) name: String,
    /// CHCKCLNT.
    pub(crate) check_client: CheckLevel,
    /// CHCKLOCL.
    pub(crate) check_local: CheckLevel,
    /// ADOPTCTX(YES).
    pub(crate) adopt: bool,
    /// FAILDLAY.
    pub(crate) fail_delay: Duration,
    /// The directory, for an IDPWLDAP object (None: IDPWOS).
    pub(crate) ldap: Option<crate::ldap_users::LdapSettings>,
}

impl ConnAuth {
    /// Reads the AUTHINFO object QMGR CONNAUTH names (from `engine`) and the user file in
    /// `qm_dir`. Problems are returned as error-log lines to write; what could be read is
    /// used (an unreadable user file: no users, so every password check fails).
    pub fn load(
        engine: &ferry_engine::QueueManager,
        qm_dir: &std::path::Path,
    ) -> (Self, Vec<(&'static ferry_messages::Message, Vec<String>)>) {
        let mut problems = Vec::new();
        let (config, users) = read(engine, qm_dir, &mut problems);
        (
            ConnAuth {
                config,
                users: Arc::new(users.unwrap_or_default()),
                gate: Rc::new(tokio::sync::Semaphore::new(1)),
            },
            problems,
        )
    }

    /// The directory users' groups come from, when the AUTHINFO object in use is an
    /// IDPWLDAP one with AUTHORMD other than OS.
    pub(crate) fn group_directory(&self) -> Option<crate::ldap_users::LdapSettings> {
        self.config
            .as_ref()?
            .ldap
            .clone()
            .filter(crate::ldap_users::LdapSettings::authorizes)
    }
}

/// The settings of IDPWLDAP object `a`: with SECCOMM(YES|ANON), TLS from the key
/// repository (its `trust.pem`, and for YES the queue manager's certificate), read now;
/// TLS that cannot be set up makes the directory unusable (FRY5532E), never plain.
fn directory_settings(
    engine: &ferry_engine::QueueManager,
    qm_dir: &std::path::Path,
    a: &ferry_objects::AuthInfoDefinition,
    problems: &mut Vec<(&'static ferry_messages::Message, Vec<String>)>,
) -> crate::ldap_users::LdapSettings {
    use crate::ldap_users::{DirectoryTls, LdapSettings};
    let settings = LdapSettings::of(a);
    if !LdapSettings::wants_tls(a) {
        return settings;
    }
    let qmgr = engine.qmgr();
    let dir = qmgr.key_repository_dir(qm_dir);
    let label = (a.attributes.secure_comms == ferry_objects::authinfo::SecureComms::Yes)
        .then(|| qmgr.certificate_label(engine.name()));
    let tls = ferry_tls::KeyRepository::load(&dir, &ferry_tls::provider())
        .map_err(|e| e.to_string())
        .and_then(|repo| {
            ferry_tls::directory_client_config(&repo, label.as_deref()).map_err(|e| e.to_string())
        });
    match tls {
        Ok(config) => settings.with_tls(DirectoryTls::Tls(config)),
        Err(why) => {
            problems.push((
                &messages::LDAP_TLS_UNUSABLE,
                vec![a.name.clone(), why.clone()],
            ));
            settings.with_tls(DirectoryTls::Unusable(format!(
                "TLS to the directory cannot be set up: {why}"
            )))
        }
    }
}

/// The configuration and the user file; `None` for a file that could not be used.
pub(crate) fn read(
    engine: &ferry_engine::QueueManager,
    qm_dir: &std::path::Path,
    problems: &mut Vec<(&'static ferry_messages::Message, Vec<String>)>,
) -> (Option<Config>, Option<UserFile>) {
    let name = engine.qmgr().connection_auth.trim().to_string();
    let config = if name.is_empty() {
        None
    } else {
        match engine.authinfo(&name) {
            Some(a) => Some(Config {
                ldap: (a.auth_type == ferry_objects::AuthInfoType::IdPwLdap)
                    .then(|| directory_settings(engine, qm_dir, &a, problems)),
                name: a.name,
                check_client: a.attributes.check_client,
                check_local: a.attributes.check_local,
                adopt: a.attributes.adopt_context == AdoptContext::Yes,
                fail_delay: Duration::from_secs(
                    u64::try_from(a.attributes.fail_delay).unwrap_or(1),
                ),
            }),
            None => {
                problems.push((&messages::CONNAUTH_OBJECT_MISSING, vec![name.clone()]));
                None
            }
        }
    };
    let users = match crate::user_repository::read(qm_dir) {
        Ok(f) => Some(f),
        Err(e) => {
            let path = crate::user_repository::path(qm_dir);
            problems.push((
                &messages::USER_REPOSITORY_ERROR,
                vec![path.display().to_string(), e],
            ));
            None
        }
    };
    (config, users)
}
