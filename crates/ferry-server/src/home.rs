//! Where queue managers live on disk.
//!
//! The data root comes from `FERRY_HOME` (default `/var/ferry` as root, else `~/.ferry`),
//! so tests, containers and users can put it anywhere. Each queue manager has its own
//! directory, as MQ's `/var/mqm/qmgrs/QM1`:
//!
//! ```text
//! $FERRY_HOME/qmgrs/QM1/qm.ini          configuration stanzas (Log, Channels, TCP, ...)
//! $FERRY_HOME/qmgrs/QM1/objects.json    object definitions (queues, channels, listeners, QMGR)
//! $FERRY_HOME/qmgrs/QM1/errors/FRYERR01.LOG   error log (rotated to 02, 03)
//! $FERRY_HOME/qmgrs/QM1/qm.sock         bindings (Unix socket) for local applications
//! $FERRY_HOME/qmgrs/QM1/queues/Q1/      queue file of Q1 (its lasting persistent messages)
//! $FERRY_HOME/qmgrs/QM1/run/            pid and status of the running process
//! $FERRY_HOME/log/QM1/                  recovery log (persistent messages)
//! ```

use std::path::{Path, PathBuf};

/// The data root: every queue manager of this installation lives below it.
#[derive(Clone, Debug)]
pub struct FerryHome {
    root: PathBuf,
}

impl FerryHome {
    /// The root from `FERRY_HOME`, else `/var/ferry` for root, else `~/.ferry`.
    pub fn from_env() -> Self {
        if let Some(dir) = std::env::var_os("FERRY_HOME").filter(|v| !v.is_empty()) {
            return FerryHome {
                root: PathBuf::from(dir),
            };
        }
        // SAFETY: geteuid has no preconditions and cannot fail.
        let euid = unsafe { libc::geteuid() };
        let root = if euid == 0 {
            PathBuf::from("/var/ferry")
        } else {
            let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
            home.join(".ferry")
        };
        FerryHome { root }
    }

    /// A root at an explicit path (tests, tools).
    pub fn at(root: impl Into<PathBuf>) -> Self {
        FerryHome { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory holding every queue manager's directory.
    pub fn qmgrs_dir(&self) -> PathBuf {
        self.root.join("qmgrs")
    }

    /// The paths of queue manager `name`.
    pub fn qmgr(&self, name: &str) -> QmgrPaths {
        let dir = dir_name(name);
        QmgrPaths {
            name: name.to_string(),
            dir: self.qmgrs_dir().join(&dir),
            log_dir: self.root.join("log").join(&dir),
        }
    }

    /// Names of every queue manager under this root, sorted.
    pub fn list(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.qmgrs_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| e.path().join("qm.ini").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .map(|d| name_from_dir(&d))
            .collect();
        names.sort();
        names
    }
}

/// The directory name of queue manager `name`. Names are valid MQ names (A-Z a-z 0-9
/// . / _ %), so two need care, as MQ's own directory names do: `/` is written `&` (a
/// name like `A/B` is one directory, not two), and a name of dots only (`.`, `..`) has
/// each dot written `!` (`..` must never mean the parent directory: deleting it would
/// remove every queue manager).
fn dir_name(name: &str) -> String {
    if !name.is_empty() && name.bytes().all(|b| b == b'.') {
        return name.replace('.', "!");
    }
    name.replace('/', "&")
}

/// The queue manager name of directory `dir` (the inverse of [`dir_name`]; `&` and `!`
/// cannot occur in names, so the mapping is unambiguous).
fn name_from_dir(dir: &str) -> String {
    if !dir.is_empty() && dir.bytes().all(|b| b == b'!') {
        return dir.replace('!', ".");
    }
    dir.replace('&', "/")
}

/// The files and directories of one queue manager.
#[derive(Clone, Debug)]
pub struct QmgrPaths {
    /// Queue manager name.
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// Its recovery-log directory.
    pub log_dir: PathBuf,
}

impl QmgrPaths {
    /// qm.ini.
    pub fn qm_ini(&self) -> PathBuf {
        self.dir.join("qm.ini")
    }
    /// The object definitions file.
    pub fn objects(&self) -> PathBuf {
        self.dir.join("objects.json")
    }
    /// The queue files' directory (one subdirectory per queue with lasting persistent
    /// messages; `runtime::queue_files`).
    pub fn queues_dir(&self) -> PathBuf {
        self.dir.join("queues")
    }
    /// The error-log directory.
    pub fn errors_dir(&self) -> PathBuf {
        self.dir.join("errors")
    }
    /// The bindings socket local applications connect to.
    pub fn bindings_socket(&self) -> PathBuf {
        self.dir.join("qm.sock")
    }
    /// Runtime state (pid, status) of the running process.
    pub fn run_dir(&self) -> PathBuf {
        self.dir.join("run")
    }
    /// The pid file of the running process.
    pub fn pid_file(&self) -> PathBuf {
        self.run_dir().join("qm.pid")
    }
    /// The status file the running process keeps current (state, listeners).
    pub fn status_file(&self) -> PathBuf {
        self.run_dir().join("status.json")
    }
    /// How the last run ended (`immediately`, `normally`), written at a clean end so
    /// dspmq can say "Ended immediately" as MQ does.
    pub fn end_file(&self) -> PathBuf {
        self.run_dir().join("ended")
    }
    /// Where a background start sends the process's own stdout/stderr.
    pub fn console_log(&self) -> PathBuf {
        self.run_dir().join("console.log")
    }
    /// True when the queue manager was created.
    pub fn exists(&self) -> bool {
        self.qm_ini().is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_like_names_get_one_directory_of_their_own() {
        let home = FerryHome::at("/data");
        assert_eq!(home.qmgr("QM1").dir, Path::new("/data/qmgrs/QM1"));
        assert_eq!(home.qmgr("A.B").dir, Path::new("/data/qmgrs/A.B"));
        assert_eq!(home.qmgr("A/B").dir, Path::new("/data/qmgrs/A&B"));
        assert_eq!(home.qmgr("..").dir, Path::new("/data/qmgrs/!!"));
        assert_eq!(home.qmgr(".").log_dir, Path::new("/data/log/!"));
        for name in ["QM1", "A.B", "A/B", "..", ".", "a/b/..", "%_"] {
            assert_eq!(name_from_dir(&dir_name(name)), name);
        }
    }
}
