//! Who a user is, for object authority checks: its groups and whether it administers
//! the queue manager.
//!
//! A user's groups are those the host gives it (its primary group and the groups that
//! list it: /etc/group, or whatever NSS reads) and those the queue manager's user
//! repository gives it (`ferry user add --group`), together, so a container without host
//! users still has groups. Answers are remembered per user id until REFRESH SECURITY
//! (TYPE(AUTHSERV), or TYPE(CONNAUTH) when the repository is read again), as MQ's OAM
//! caches group memberships.

use crate::administrators::Administrators;
use ferry_security::connauth::UserFile;
use ferry_security::oam::Principal;
use std::cell::RefCell;
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
}

impl Principals {
    /// A directory over the administrators and the user repository as read at start.
    pub fn new(administrators: Rc<Administrators>, repository: Arc<UserFile>) -> Self {
        Principals {
            administrators,
            repository: RefCell::new(repository),
            known: RefCell::new(HashMap::new()),
        }
    }

    /// Forgets what was looked up (REFRESH SECURITY); `repository` replaces the user
    /// repository when it was read again.
    pub fn refresh(&self, repository: Option<Arc<UserFile>>) {
        if let Some(r) = repository {
            *self.repository.borrow_mut() = r;
        }
        self.known.borrow_mut().clear();
    }

    /// True when `group` is a group on the host or in the user repository.
    pub fn group_exists(&self, group: &str) -> bool {
        matches!(nix::unistd::Group::from_name(group), Ok(Some(_)))
            || self
                .repository
                .borrow()
                .users()
                .any(|(_, e)| e.groups.iter().any(|g| g == group))
    }

    /// True when `user` is a user on the host or in the user repository.
    pub fn user_exists(&self, user: &str) -> bool {
        self.repository.borrow().get(user).is_some()
            || matches!(nix::unistd::User::from_name(user), Ok(Some(_)))
    }

    fn look_up(&self, user: &str) -> Principal {
        let mut groups = host_groups(user);
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
}
