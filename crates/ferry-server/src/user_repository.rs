//! The queue manager's user repository on disk: `<qm dir>/users`, the file
//! `ferry-security`'s [`UserFile`] reads and renders.
//!
//! Written whole to a temporary file with mode 0600 (it holds password hashes), synced
//! and renamed over the old one, so a reader sees the old or the new file, never half of
//! one. `ferry user` writes it; the queue manager reads it at start and at REFRESH
//! SECURITY TYPE(CONNAUTH).

use ferry_security::connauth::UserFile;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The file's name in the queue manager's directory.
pub const FILE_NAME: &str = "users";

/// Where the repository of the queue manager in `qm_dir` is.
pub fn path(qm_dir: &Path) -> PathBuf {
    qm_dir.join(FILE_NAME)
}

/// Reads the repository; a missing file is an empty one.
pub fn read(qm_dir: &Path) -> Result<UserFile, String> {
    let path = path(qm_dir);
    match std::fs::read_to_string(&path) {
        Ok(text) => UserFile::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UserFile::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

/// Replaces the repository with `file`.
pub fn write(qm_dir: &Path, file: &UserFile) -> std::io::Result<()> {
    let path = path(qm_dir);
    let tmp = path.with_extension("tmp");
    {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        f.write_all(file.render().as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, &path)?;
    if let Ok(dir) = std::fs::File::open(qm_dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

/// 16 random bytes for a password hash's salt.
pub fn new_salt() -> std::io::Result<[u8; 16]> {
    let mut salt = [0u8; 16];
    getrandom::fill(&mut salt).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(salt)
}

/// A password for a user the queue manager makes itself: 24 characters from letters and
/// digits (about 140 bits).
pub fn generate_password() -> std::io::Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    let mut raw = [0u8; 24];
    getrandom::fill(&mut raw).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(raw
        .iter()
        .map(|b| ALPHABET[usize::from(*b) % ALPHABET.len()] as char)
        .collect())
}
