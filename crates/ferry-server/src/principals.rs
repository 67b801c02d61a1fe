//! Who a user is, for object authority checks: its groups and whether it administers
//! the queue manager.
//!
//! A user's groups are those the host gives it (its primary group and the groups that
//! list it: /etc/group, or whatever NSS reads) and those the queue manager's user
//! repository gives it (`ferry user add --group`), together, so a container without host
//! users still has groups. When QMGR CONNAUTH names an IDPWLDAP object with AUTHORMD other
//! than OS, the LDAP directory's groups take the host's place: the runtime reads them
//! before the user's connection is made (the directory is asked over the network, and
//! this directory answers inside engine calls) and hands them over with
//! [`Principals::remember_groups`]. Answers are remembered per user id until REFRESH
//! SECURITY (TYPE(AUTHSERV), or TYPE(CONNAUTH) when the repository is read again), as MQ's
//! OAM caches group memberships.

use crate::administrators::Administrators;
use ferry_security::connauth::UserFile;
use ferry_security::oam::Principal;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::ffi::CString;
use std::rc::Rc;
use std::sync::Arc;

/// The most users remembered; beyond it the memory starts again, so a stranger sending
/// many user ids cannot grow it without bound.
const MAX_REMEMBERED: usize = 10_000;

/// The queue manager's principal directory (installed in the engine when its qm.ini
/// names the AuthorizationService).
#[derive(Debug)]
pub struct Principals {
    administrators: Rc<Administrators>,
    repository: RefCell<Arc<UserFile>>,
    known: RefCell<HashMap<String, Principal>>,
    /// Groups come from an LDAP directory (AUTHORMD other than OS) instead of the host.
    directory: Cell<bool>,
    /// The directory's groups of the users read so far.
    directory_groups: RefCell<HashMap<String, Vec<String>>>,
}

impl Principals {
    /// A directory over the administrators and the user repository as read at start.
    pub fn new(administrators: Rc<Administrators>, repository: Arc<UserFile>) -> Self {
        Principals {
            administrators,
            repository: RefCell::new(repository),
            known: RefCell::new(HashMap::new()),
            directory: Cell::new(false),
            directory_groups: RefCell::new(HashMap::new()),
        }
    }

    /// Forgets what was looked up (REFRESH SECURITY), the directory's groups included;
    /// `repository` replaces the user repository when it was read again.
    pub fn refresh(&self, repository: Option<Arc<UserFile>>) {
        if let Some(r) = repository {
            *self.repository.borrow_mut() = r;
        }
        self.known.borrow_mut().clear();
        self.directory_groups.borrow_mut().clear();
    }

    /// Whether users' groups come from an LDAP directory (true) or the host (false), as
    /// the AUTHINFO object in use says. A change forgets what was looked up.
    pub fn use_directory(&self, directory: bool) {
        if self.directory.replace(directory) != directory {
            self.known.borrow_mut().clear();
            self.directory_groups.borrow_mut().clear();
        }
    }

    /// True when users' groups come from an LDAP directory.
    pub fn uses_directory(&self) -> bool {
        self.directory.get()
    }

    /// True when `user` needs its groups read from the directory before it connects:
    /// they come from one, were not read since the last REFRESH SECURITY, and `user` is
    /// not blank nor an administrator (who holds every authority whatever its groups).
    pub fn needs_directory_groups(&self, user: &str) -> bool {
        self.directory.get()
            && !user.is_empty()
            && !self.directory_groups.borrow().contains_key(user)
            && !self.administrators.is_administrator(user)
    }

    /// The directory's groups of `user`, read by the runtime; used from now on until
    /// REFRESH SECURITY.
    pub fn remember_groups(&self, user: &str, groups: Vec<String>) {
        let mut remembered = self.directory_groups.borrow_mut();
        if remembered.len() >= MAX_REMEMBERED {
            remembered.clear();
        }
        remembered.insert(user.to_string(), groups);
        self.known.borrow_mut().remove(user);
    }

    /// True when `group` is a group on the host or in the user repository. With groups
    /// from an LDAP directory any group is taken: the directory cannot be asked here (this
    /// answers inside an MQSC command), so a record may name a group no user has yet.
    pub fn group_exists(&self, group: &str) -> bool {
        self.directory.get()
            || matches!(nix::unistd::Group::from_name(group), Ok(Some(_)))
            || self
                .repository
                .borrow()
                .users()
                .any(|(_, e)| e.groups.iter().any(|g| g == group))
    }

    /// True when `user` is a user on the host or in the user repository; any user with
    /// groups from an LDAP directory (which cannot be asked here).
    pub fn user_exists(&self, user: &str) -> bool {
        self.directory.get()
            || self.repository.borrow().get(user).is_some()
            || matches!(nix::unistd::User::from_name(user), Ok(Some(_)))
    }

    fn look_up(&self, user: &str) -> Principal {
        let mut groups = if self.directory.get() {
            // Read before the user connected; a user not read (an alternate user, DISPLAY
            // ENTAUTH for one who has not connected) has only the repository's.
            self.directory_groups
                .borrow()
                .get(user)
                .cloned()
                .unwrap_or_default()
        } else {
            host_groups(user)
        };
        if let Some(entry) = self.repository.borrow().get(user) {
            groups.extend(entry.groups.iter().cloned());
        }
        groups.sort_unstable();
        groups.dedup();
        Principal {
            user: user.to_string(),
            groups,
            administrator: self.administrators.is_administrator(user),
        }
    }
}

impl ferry_engine::PrincipalDirectory for Principals {
    fn principal(&self, user: &str) -> Principal {
        if let Some(p) = self.known.borrow().get(user) {
            return p.clone();
        }
        let p = self.look_up(user);
        let mut known = self.known.borrow_mut();
        if known.len() >= MAX_REMEMBERED {
            known.clear();
        }
        known.insert(user.to_string(), p.clone());
        p
    }
}

/// The host's groups of `user`: its primary group and every group that lists it (none
/// when the host does not know the user).
fn host_groups(user: &str) -> Vec<String> {
    let Ok(Some(account)) = nix::unistd::User::from_name(user) else {
        return Vec::new();
    };
    let Ok(name) = CString::new(user) else {
        return Vec::new();
    };
    let gids = nix::unistd::getgrouplist(&name, account.gid).unwrap_or_else(|_| vec![account.gid]);
    gids.into_iter()
        .filter_map(|gid| nix::unistd::Group::from_gid(gid).ok().flatten())
        .map(|g| g.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_engine::PrincipalDirectory;

    #[test]
    fn root_is_an_administrator_in_its_groups() {
        let dir = std::env::temp_dir();
        let p = Principals::new(
            Rc::new(Administrators::of_queue_manager(&dir)),
            Arc::new(UserFile::default()),
        );
        let root = p.principal("root");
        assert!(root.administrator);
        assert!(root.groups.iter().any(|g| g == "root"), "{root:?}");
        let stranger = p.principal("no-such-user-here");
        assert!(!stranger.administrator && stranger.groups.is_empty());
    }

    #[test]
    fn repository_groups_count() {
        let mut file = UserFile::default();
        file.set(
            "app",
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA".into(),
            vec!["apps".into()],
        )
        .unwrap();
        let p = Principals::new(
            Rc::new(Administrators::of_queue_manager(&std::env::temp_dir())),
            Arc::new(file),
        );
        assert_eq!(p.principal("app").groups, ["apps"]);
        assert!(p.group_exists("apps") && p.user_exists("app"));
        assert!(!p.group_exists("no-such-group-here"));
    }

    #[test]
    fn directory_groups_replace_the_hosts_until_refresh() {
        let mut file = UserFile::default();
        file.set(
            "root",
            "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHQ$aGFzaA".into(),
            vec!["local".into()],
        )
        .unwrap();
        let p = Principals::new(
            Rc::new(Administrators::of_queue_manager(&std::env::temp_dir())),
            Arc::new(file),
        );
        assert!(p.principal("root").groups.iter().any(|g| g == "root"));
        assert!(
            !p.needs_directory_groups("carol"),
            "host groups need no reading"
        );
        p.use_directory(true);
        assert!(p.needs_directory_groups("carol"));
        assert!(
            !p.needs_directory_groups("root"),
            "an administrator needs no groups"
        );
        assert!(!p.needs_directory_groups(""));
        // Not read yet: the repository's groups only, never the host's.
        assert_eq!(p.principal("root").groups, ["local"]);
        assert!(p.principal("carol").groups.is_empty());
        p.remember_groups("carol", vec!["apps".into(), "ops".into()]);
        assert!(!p.needs_directory_groups("carol"));
        assert_eq!(p.principal("carol").groups, ["apps", "ops"]);
        // Any name is taken for records: the directory cannot be asked in a command.
        assert!(p.group_exists("no-such-group-here") && p.user_exists("nobody-at-all"));
        p.refresh(None);
        assert!(
            p.needs_directory_groups("carol"),
            "REFRESH SECURITY forgets them"
        );
        assert!(p.principal("carol").groups.is_empty());
        p.use_directory(false);
        assert!(!p.group_exists("no-such-group-here"));
    }
}
