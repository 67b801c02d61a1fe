//! The queue manager's own user repository: a text file of user ids, salted password
//! hashes and groups, for hosts without the users (containers), as IBM's container image
//! keeps its own.
//!
//! One line per user, `name:hash:group,group`, the hash an Argon2id PHC string
//! (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`, RustCrypto's `argon2`); `#` starts a
//! comment. `ferry user add|remove|list` writes it; the queue manager reads it at start and
//! at `REFRESH SECURITY TYPE(CONNAUTH)`. Pure: text in, text out; the salt comes from the
//! caller, which owns the randomness.

use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The longest user id the file holds (MQCSP allows long ones; MQ's context keeps 12).
pub const MAX_USER_LEN: usize = 64;
/// The longest password looked at; a longer one is refused before any hashing, so a
/// client cannot make the queue manager hash megabytes.
pub const MAX_PASSWORD_LEN: usize = 1024;
/// The most users the file may hold.
pub const MAX_USERS: usize = 100_000;

/// One user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserEntry {
    /// The password's Argon2id PHC string.
    pub hash: String,
    /// The groups the user belongs to (for object authorities).
    pub groups: Vec<String>,
}

/// The users of the file, by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserFile {
    users: BTreeMap<String, UserEntry>,
}

/// Why a user file or an entry is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UserFileError {
    /// A line that is not `name:hash:groups`.
    #[error("line {line}: {reason}")]
    Line {
        /// Its number (1-based).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A user id that the file cannot hold.
    #[error("'{0}' is not a user id: 1 to 64 characters, no ':', blanks or control characters")]
    UserId(String),
    /// A group name that the file cannot hold.
    #[error("'{0}' is not a group name: letters, digits, '.', '_' and '-'")]
    Group(String),
    /// A password that is empty or too long.
    #[error("a password must be 1 to {MAX_PASSWORD_LEN} bytes")]
    Password,
    /// Too many users.
    #[error("the file holds {MAX_USERS} users at most")]
    Full,
    /// The hash could not be made.
    #[error("the password could not be hashed: {0}")]
    Hash(String),
}

/// What checking a password found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verification {
    /// The user is in the file and the password is theirs.
    Valid,
    /// The user is in the file; the password is not theirs.
    WrongPassword,
    /// The user is not in the file.
    UnknownUser,
}

/// Checks a user id the file may hold.
pub fn check_user_id(user: &str) -> Result<(), UserFileError> {
    let ok = !user.is_empty()
        && user.chars().count() <= MAX_USER_LEN
        && !user
            .chars()
            .any(|c| c == ':' || c.is_whitespace() || c.is_control());
    if ok {
        Ok(())
    } else {
        Err(UserFileError::UserId(user.to_string()))
    }
}

fn check_group(group: &str) -> Result<(), UserFileError> {
    let ok = !group.is_empty()
        && group.len() <= MAX_USER_LEN
        && group
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(UserFileError::Group(group.to_string()))
    }
}

/// Hashes `password` with Argon2id (RustCrypto's default parameters) and `salt` (16
/// random bytes from the caller) into a PHC string.
pub fn hash_password(password: &[u8], salt: &[u8; 16]) -> Result<String, UserFileError> {
    if password.is_empty() || password.len() > MAX_PASSWORD_LEN {
        return Err(UserFileError::Password);
    }
    argon2::Argon2::default()
        .hash_password_with_salt(password, salt)
        .map(|h| h.to_string())
        .map_err(|e| UserFileError::Hash(e.to_string()))
}

/// A hash no password matches, checked against for unknown users so that they cost as
/// long as known ones (no timing tells which user ids exist).
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| hash_password(b"\0decoy", &[0x5a; 16]).unwrap_or_default())
}

impl UserFile {
    /// Reads a file's text.
    pub fn parse(text: &str) -> Result<Self, UserFileError> {
        let mut file = UserFile::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |reason: String| UserFileError::Line {
                line: i + 1,
                reason,
            };
            let mut parts = line.splitn(3, ':');
            let (Some(name), Some(hash)) = (parts.next(), parts.next()) else {
                return Err(bad("not name:hash:groups".into()));
            };
            check_user_id(name).map_err(|e| bad(e.to_string()))?;
            if argon2::password_hash::phc::PasswordHash::new(hash).is_err() {
                return Err(bad(format!("the hash of '{name}' is not a PHC string")));
            }
            let groups: Vec<String> = parts
                .next()
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|g| !g.is_empty())
                .map(str::to_string)
                .collect();
            for g in &groups {
                check_group(g).map_err(|e| bad(e.to_string()))?;
            }
            if file.users.len() >= MAX_USERS {
                return Err(bad(UserFileError::Full.to_string()));
            }
            if file
                .users
                .insert(
                    name.to_string(),
                    UserEntry {
                        hash: hash.to_string(),
                        groups,
                    },
                )
                .is_some()
            {
                return Err(bad(format!("'{name}' is listed twice")));
            }
        }
        Ok(file)
    }

    /// The file's text, with a header saying what it is.
    pub fn render(&self) -> String {
        let mut out = String::from(
            "# Ferry user repository: name:argon2id-hash:groups. Written by `ferry user`;\n\
             # read at start and at REFRESH SECURITY TYPE(CONNAUTH).\n",
        );
        for (name, e) in &self.users {
            out.push_str(&format!("{name}:{}:{}\n", e.hash, e.groups.join(",")));
        }
        out
    }

    /// Adds or replaces `user` with a password hash and groups.
    pub fn set(
        &mut self,
        user: &str,
        hash: String,
        groups: Vec<String>,
    ) -> Result<(), UserFileError> {
        check_user_id(user)?;
        for g in &groups {
            check_group(g)?;
        }
        if !self.users.contains_key(user) && self.users.len() >= MAX_USERS {
            return Err(UserFileError::Full);
        }
        self.users
            .insert(user.to_string(), UserEntry { hash, groups });
        Ok(())
    }

    /// Removes `user`; false when it was not there.
    pub fn remove(&mut self, user: &str) -> bool {
        self.users.remove(user).is_some()
    }

    /// The entry of `user`.
    pub fn get(&self, user: &str) -> Option<&UserEntry> {
        self.users.get(user)
    }

    /// Every user, by name.
    pub fn users(&self) -> impl Iterator<Item = (&str, &UserEntry)> {
        self.users.iter().map(|(n, e)| (n.as_str(), e))
    }

    /// Whether `password` is `user`'s. Slow on purpose (Argon2id): callers run it off the
    /// thread that serves connections.
    pub fn verify(&self, user: &str, password: &[u8]) -> Verification {
        if password.is_empty() || password.len() > MAX_PASSWORD_LEN {
            return match self.users.contains_key(user) {
                true => Verification::WrongPassword,
                false => Verification::UnknownUser,
            };
        }
        let (hash, known) = match self.users.get(user) {
            Some(e) => (e.hash.as_str(), true),
            None => (decoy_hash(), false),
        };
        let matches = argon2::Argon2::default()
            .verify_password(password, hash)
            .is_ok();
        match (known, matches) {
            (true, true) => Verification::Valid,
            (true, false) => Verification::WrongPassword,
            (false, _) => Verification::UnknownUser,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_user_added_verifies_and_round_trips_through_the_text() {
        let mut f = UserFile::default();
        let hash = hash_password(b"s3cret!", &[7; 16]).expect("hash");
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        f.set("app", hash, vec!["apps".into()]).expect("set");
        assert_eq!(f.verify("app", b"s3cret!"), Verification::Valid);
        assert_eq!(f.verify("app", b"wrong"), Verification::WrongPassword);
        assert_eq!(f.verify("app", b""), Verification::WrongPassword);
        assert_eq!(f.verify("nobody", b"s3cret!"), Verification::UnknownUser);
        let again = UserFile::parse(&f.render()).expect("parses");
        assert_eq!(again, f);
        assert!(f.remove("app"));
        assert!(!f.remove("app"));
    }

    #[test]
    fn bad_lines_are_refused_with_their_number() {
        let hash = hash_password(b"pw", &[1; 16]).expect("hash");
        let text = format!("# header\n\napp:{hash}:apps\nbad line\n");
        match UserFile::parse(&text) {
            Err(UserFileError::Line { line: 4, .. }) => {}
            other => panic!("{other:?}"),
        }
        assert!(UserFile::parse("app:not-a-hash:").is_err());
        assert!(UserFile::parse(&format!("app:{hash}:\napp:{hash}:")).is_err());
        assert!(UserFile::parse(&format!("app:{hash}:bad group")).is_err());
        assert_eq!(hash_password(b"", &[0; 16]), Err(UserFileError::Password));
        assert_eq!(
            hash_password(&[b'x'; MAX_PASSWORD_LEN + 1], &[0; 16]),
            Err(UserFileError::Password)
        );
        assert!(check_user_id("a:b").is_err() && check_user_id("a b").is_err());
        assert!(check_user_id(&"u".repeat(MAX_USER_LEN + 1)).is_err());
    }
}
