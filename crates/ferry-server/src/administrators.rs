//! Who administers a queue manager: the users MQ calls privileged.
//!
//! As on MQ for Unix: `root`, the user that owns the queue manager's directory (the one
//! who created it, as `mqm` owns MQ's), and the members of the `mqm` group (listed in
//! it, or with it as their primary group). BLOCKUSER's `*MQADMIN` stands for them, so a
//! new queue manager refuses them on client channels until an administrator decides
//! otherwise. Group membership is read from the host (NSS: /etc/group, LDAP...) once per
//! user id and remembered; `REFRESH SECURITY` forgets what was remembered.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// The group whose members administer queue managers, as MQ's.
pub const ADMIN_GROUP: &str = "mqm";

/// The administrators of one queue manager.
#[derive(Debug)]
pub struct Administrators {
    /// The owner of the queue manager's directory.
    owner: Option<String>,
    /// The user the queue manager runs as.
    process_user: String,
    /// Answers already looked up.
    known: RefCell<HashMap<String, bool>>,
}

impl Administrators {
    /// The administrators of the queue manager in `qm_dir`.
    pub fn of_queue_manager(qm_dir: &Path) -> Self {
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(qm_dir)
            .ok()
            .and_then(|m| nix::unistd::User::from_uid(m.uid().into()).ok().flatten())
            .map(|u| u.name);
        let process_user = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map_or_else(|| nix::unistd::geteuid().to_string(), |u| u.name);
        Administrators {
            owner,
            process_user,
            known: RefCell::new(HashMap::new()),
        }
    }

    /// The user the queue manager runs as: what a channel whose final user id is blank
    /// runs as, as MQ's channels run as the MCA's user (an administrator, so BLOCKUSER
    /// `*MQADMIN` refuses such channels until MCAUSER or a mapping names a user).
    pub fn process_user(&self) -> &str {
        &self.process_user
    }

    /// Whether `user` is an administrator.
    pub fn is_administrator(&self, user: &str) -> bool {
        if user.is_empty() {
            return false;
        }
        if user == "root" || self.owner.as_deref() == Some(user) {
            return true;
        }
        if let Some(&known) = self.known.borrow().get(user) {
            return known;
        }
        let answer = in_admin_group(user);
        let mut known = self.known.borrow_mut();
        // A stranger sending many user ids cannot grow the memory without bound.
        if known.len() >= 10_000 {
            known.clear();
        }
        known.insert(user.to_string(), answer);
        answer
    }

    /// Forgets the group memberships looked up (REFRESH SECURITY).
    pub fn refresh(&self) {
        self.known.borrow_mut().clear();
    }
}

fn in_admin_group(user: &str) -> bool {
    let Ok(Some(group)) = nix::unistd::Group::from_name(ADMIN_GROUP) else {
        return false;
    };
    if group.mem.iter().any(|m| m == user) {
        return true;
    }
    matches!(nix::unistd::User::from_name(user), Ok(Some(u)) if u.gid == group.gid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_and_the_owner_are_administrators() {
        let dir = std::env::temp_dir();
        let admins = Administrators::of_queue_manager(&dir);
        assert!(admins.is_administrator("root"));
        assert!(!admins.is_administrator(""));
        assert!(!admins.is_administrator("no-such-user-ferry-test"));
        let me = nix::unistd::User::from_uid(nix::unistd::geteuid())
            .ok()
            .flatten()
            .map(|u| u.name);
        let mine = std::env::temp_dir().join(format!("ferry-admins-{}", std::process::id()));
        std::fs::create_dir_all(&mine).expect("temp dir");
        let admins = Administrators::of_queue_manager(&mine);
        if let Some(me) = me {
            assert!(admins.is_administrator(&me), "the owner administers");
        }
        let _ = std::fs::remove_dir(&mine);
    }
}
