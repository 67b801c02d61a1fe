//! `ferry runmqserver`: the container's entry point, in the role of IBM's runmqserver.
//!
//! On the first start it creates the queue manager named by FERRY_QMGR_NAME (or IBM's
//! MQ_QMGR_NAME, else the host name) in the data volume (FERRY_HOME). At every start it
//! merges every `*.ini` file of its configuration directories into qm.ini (IBM's
//! IniConfig, `crtmqm -ii /etc/mqm/`), names the directories in qm.ini's
//! AutoConfig/MQSCConfig so that the queue manager runs their `*.mqsc` files in name
//! order before its listeners start (IBM's MQSCConfig, `crtmqm -ic /etc/mqm/`), sets the
//! application and administrator passwords from the environment, then runs the queue
//! manager (`ferry start --foreground`) as its child. SIGTERM or SIGINT becomes a
//! controlled stop (`endmqm -w`), and an immediate one once the grace period has passed,
//! as IBM's `endmqm -w -r -tp`; the command exits with the queue manager's status.
//!
//! A bad `.ini` file stops the start (FRY8953E names the file and line), as MQ refuses an
//! IniConfig it cannot parse. A failing MQSC command does not: it is logged (FRY8951E
//! with file and line) and the queue manager starts with the rest, as MQ's AutoConfig
//! does.

use ferry_server::home::{FerryHome, QmgrPaths};
use ferry_server::lifecycle::{self, ControlError, LogOptions};
use ferry_server::qm_ini::{merge_overrides, QmIni};
use ferry_server::{messages, CreateOptions};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

/// Where the configuration files are read from by default: IBM's /etc/mqm, with only
/// the path changed.
pub const DEFAULT_CONFIG_DIR: &str = "/etc/ferry";

/// The grace period of a controlled stop before it becomes immediate, in seconds (IBM's
/// MQ_GRACE_PERIOD default).
pub const DEFAULT_GRACE_SECS: u64 = 30;

/// What `ferry runmqserver` is given on its command line.
pub struct RunOptions {
    /// The queue manager's name (else the environment's, else the host name).
    pub name: Option<String>,
    /// Directories of `*.ini` and `*.mqsc` files (else FERRY_CONFIG_DIRS, else /etc/ferry).
    pub config_dirs: Vec<PathBuf>,
    /// The listener's port when the queue manager is created.
    pub port: u16,
    /// The AMQP channel's port when the queue manager is created.
    pub amqp_port: u16,
    /// The web server's port when the queue manager is created (0: none).
    pub web_port: u16,
}

/// The first non-empty value of these environment variables.
fn env_first(names: &[&str]) -> Option<String> {
    names
        .iter()
        .find_map(|n| std::env::var(n).ok().filter(|v| !v.is_empty()))
}

/// The queue manager's name from the environment: FERRY_QMGR_NAME, then IBM's
/// MQ_QMGR_NAME.
pub fn name_from_env() -> Option<String> {
    env_first(&["FERRY_QMGR_NAME", "MQ_QMGR_NAME"])
}

/// The host name with the characters a queue manager name cannot have removed, as IBM's
/// container names its queue manager when MQ_QMGR_NAME is not set.
fn name_from_host() -> Option<String> {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())?;
    let name: String = host
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '/'))
        .collect();
    (!name.is_empty()).then_some(name)
}

/// The queue manager `ferry status --ready/--healthy` probes when none is named: the
/// environment's, else the only one under FERRY_HOME, else the host name's.
pub fn probe_name(home: &FerryHome) -> Option<String> {
    name_from_env().or_else(|| {
        let all = home.list();
        match all.as_slice() {
            [only] => Some(only.clone()),
            _ => name_from_host(),
        }
    })
}

/// A `true`/`false` environment variable (IBM's MQ_DEV style).
fn env_flag(names: &[&str]) -> Option<bool> {
    env_first(names).map(|v| matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

/// Runs the entry point; returns the exit status.
pub fn run(home: &FerryHome, options: RunOptions) -> ExitCode {
    match prepare(home, &options) {
        Ok(paths) => supervise(home, &paths),
        Err(e) => {
            eprintln!("{}", e.message);
            ExitCode::from(u8::try_from(e.exit_code).unwrap_or(1))
        }
    }
}

fn error(message: String) -> ControlError {
    ControlError {
        message,
        exit_code: 71,
    }
}

/// One `*.ini` override file and its text.
struct Override {
    path: PathBuf,
    text: String,
}

/// The files of `dirs` with extension `ext` (any case), each directory's in name order.
fn config_files(dirs: &[PathBuf], ext: &str) -> Result<Vec<PathBuf>, ControlError> {
    let mut out = Vec::new();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(error(format!("{}: {e}", dir.display()))),
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x.eq_ignore_ascii_case(ext)))
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        out.extend(files);
    }
    Ok(out)
}

/// Merges every override into `base`; FRY8953E names the first file and line that
/// cannot be merged.
fn merge_all(
    base: &str,
    overrides: &[Override],
    name: &str,
    log_dir: &Path,
) -> Result<(String, Vec<(PathBuf, usize)>), ControlError> {
    let mut text = base.to_string();
    let mut applied = Vec::new();
    for o in overrides {
        let (merged, keys) = merge_overrides(&text, &o.text, log_dir).map_err(|e| {
            let place = if e.line > 0 {
                format!("{} (line {})", o.path.display(), e.line)
            } else {
                o.path.display().to_string()
            };
            error(messages::CONTAINER_INI_INVALID.format(&[&place, &name, &e.reason]))
        })?;
        text = merged;
        applied.push((o.path.clone(), keys));
    }
    Ok((text, applied))
}

/// Creates the queue manager if needed and applies the configuration files.
fn prepare(home: &FerryHome, options: &RunOptions) -> Result<QmgrPaths, ControlError> {
    let name = options
        .name
        .clone()
        .or_else(name_from_env)
        .or_else(name_from_host)
        .ok_or_else(|| {
            error("name the queue manager: FERRY_QMGR_NAME or MQ_QMGR_NAME".to_string())
        })?;
    lifecycle::check_name(&name)?;
    let dirs = if !options.config_dirs.is_empty() {
        options.config_dirs.clone()
    } else if let Some(list) = env_first(&["FERRY_CONFIG_DIRS"]) {
        list.split(':')
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .collect()
    } else {
        vec![PathBuf::from(DEFAULT_CONFIG_DIR)]
    };
    let dirs: Vec<PathBuf> = dirs
        .iter()
        .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.clone()))
        .collect();
    let mut overrides = Vec::new();
    for path in config_files(&dirs, "ini")? {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| error(format!("{}: {e}", path.display())))?;
        overrides.push(Override { path, text });
    }
    let app_password = env_first(&["FERRY_APP_PASSWORD", "MQ_APP_PASSWORD"]);
    let admin_password = env_first(&["FERRY_ADMIN_PASSWORD", "MQ_ADMIN_PASSWORD"]);
    let paths = home.qmgr(&name);

    if !paths.exists() {
        // The files' Log stanza shapes the recovery log, which is fixed once created
        // (MQ's IniConfig cannot do this; crtmqm's -lp -ls -lf can).
        let defaults = QmIni::defaults(&name, &paths.log_dir);
        let (text, _) = merge_all(&defaults.render(), &overrides, &name, &paths.log_dir)?;
        let wanted = QmIni::parse(&text, &paths.log_dir).map_err(|e| error(e.to_string()))?;
        let differs = |a: u32, b: u32| (a != b).then_some(a);
        let mut log = LogOptions {
            primary_files: differs(wanted.log.primary_files, defaults.log.primary_files),
            secondary_files: differs(wanted.log.secondary_files, defaults.log.secondary_files),
            file_pages: differs(wanted.log.file_pages, defaults.log.file_pages),
            path: None,
        };
        if let Some(pages) = env_first(&["FERRY_QMGR_LOG_FILE_PAGES", "MQ_QMGR_LOG_FILE_PAGES"]) {
            log.file_pages = Some(pages.parse().map_err(|_| {
                error(format!(
                    "MQ_QMGR_LOG_FILE_PAGES={pages:?}: a number from 64 to 65535"
                ))
            })?);
        }
        let developer = env_flag(&["FERRY_DEV", "MQ_DEV"]).unwrap_or(app_password.is_some());
        let create = CreateOptions {
            developer,
            app_password: app_password.clone(),
            log,
            web_port: options.web_port,
            ..CreateOptions::new(options.port, options.amqp_port)
        };
        for line in ferry_server::create_queue_manager(home, &name, &create)? {
            println!("{line}");
        }
    }

    // Every start: the overrides, then the MQSC directories, into qm.ini.
    let ini_path = paths.qm_ini();
    let base = std::fs::read_to_string(&ini_path)
        .map_err(|e| error(format!("{}: {e}", ini_path.display())))?;
    let (mut text, applied) = merge_all(&base, &overrides, &name, &paths.log_dir)?;
    let developer_dir = paths.dir.join(ferry_server::developer_config::DIRECTORY);
    let mqsc: Vec<String> = std::iter::once(developer_dir)
        .filter(|d| d.is_dir())
        .chain(dirs.iter().cloned())
        .map(|d| d.display().to_string())
        .collect();
    let auto_config = format!("AutoConfig:\n   MQSCConfig={}\n", mqsc.join(","));
    text = merge_overrides(&text, &auto_config, &paths.log_dir)
        .map_err(|e| error(messages::CONFIG_ERROR.format(&[&name, &e.reason])))?
        .0;
    if text != base {
        let tmp = ini_path.with_extension("ini.tmp");
        std::fs::write(&tmp, &text)
            .and_then(|()| std::fs::rename(&tmp, &ini_path))
            .map_err(|e| error(format!("{}: {e}", ini_path.display())))?;
    }
    for (path, keys) in applied {
        println!(
            "{}",
            messages::CONTAINER_INI_APPLIED.format(&[&path.display(), &name, &keys])
        );
    }

    // Passwords at every start, so that a changed Secret takes effect with a restart.
    let users = ferry_server::user_repository::read(&paths.dir).map_err(error)?;
    let app = ferry_server::developer_config::APP_USER;
    let mut changes = Vec::new();
    if let Some(p) = &app_password {
        if users.get(app).is_some() {
            changes.push((app, p, vec!["apps".to_string()]));
        }
    }
    if let Some(p) = &admin_password {
        changes.push((
            "admin",
            p,
            vec![ferry_server::administrators::ADMIN_GROUP.to_string()],
        ));
    }
    if !changes.is_empty() {
        let mut users = users;
        for (user, password, groups) in changes {
            let salt =
                ferry_server::user_repository::new_salt().map_err(|e| error(e.to_string()))?;
            let hash = ferry_security::connauth::hash_password(password.as_bytes(), &salt)
                .map_err(|e| error(e.to_string()))?;
            users
                .set(user, hash, groups)
                .map_err(|e| error(e.to_string()))?;
        }
        ferry_server::user_repository::write(&paths.dir, &users)
            .map_err(|e| error(e.to_string()))?;
    }

    // A pid file left by the last container (killed) may name a pid this container
    // reuses, even this process's own: only a queue manager process counts.
    if let Some(pid) = lifecycle::running_pid(&paths) {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let is_qmgr = cmdline.split(|b| *b == 0).any(|a| a == b"--foreground");
        if pid != std::process::id() && is_qmgr {
            return Err(ControlError {
                message: messages::QMGR_RUNNING.format(&[&name, &pid]),
                exit_code: 5,
            });
        }
        let _ = std::fs::remove_file(paths.pid_file());
    }
    Ok(paths)
}

/// The signal that asked the entry point to stop (0: none yet).
static STOP_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_stop_signal(signal: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    STOP_SIGNAL.store(signal, Ordering::SeqCst);
}

/// Runs the queue manager as a child and waits for it, passing stop requests on.
fn supervise(home: &FerryHome, paths: &QmgrPaths) -> ExitCode {
    let name = paths.name.clone();
    let grace = env_first(&["FERRY_GRACE_PERIOD", "MQ_GRACE_PERIOD"])
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_GRACE_SECS);
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            libc::signal(sig, on_stop_signal as *const () as libc::sighandler_t);
        }
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("cannot find the ferry executable: {e}");
            return ExitCode::from(71);
        }
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("start")
        .arg(&name)
        .arg("--foreground")
        .env("FERRY_HOME", home.root())
        .stdin(std::process::Stdio::null());
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setpgid and prctl are async-signal-safe. Its own process group: a
        // Ctrl-C at a terminal reaches this process only, which decides how the queue
        // manager ends. Should this process die without passing a stop on (SIGKILL),
        // the queue manager is told SIGTERM: an immediate stop, not an orphan.
        unsafe {
            cmd.pre_exec(|| {
                libc::setpgid(0, 0);
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
    }
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot start the queue manager process: {e}");
            return ExitCode::from(71);
        }
    };
    let Ok(pid) = libc::pid_t::try_from(child.id()) else {
        return ExitCode::from(71);
    };
    let mut stop_at: Option<Instant> = None;
    let mut immediate_sent = false;
    let mut controlled_sent = false;
    loop {
        // Reap every child that ended: the queue manager, and as process 1 of a
        // container, any orphan handed to this process.
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: waitpid with WNOHANG on any child; status is a valid out pointer.
            let ended = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if ended <= 0 {
                break;
            }
            if ended == pid {
                let code = if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else if libc::WIFSIGNALED(status) {
                    128 + libc::WTERMSIG(status)
                } else {
                    1
                };
                return ExitCode::from(u8::try_from(code).unwrap_or(1));
            }
        }
        let signal = STOP_SIGNAL.load(Ordering::SeqCst);
        if signal != 0 && stop_at.is_none() {
            let what = if signal == libc::SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            eprintln!(
                "{}",
                messages::CONTAINER_STOP_REQUESTED.format(&[&what, &name, &grace])
            );
            stop_at = Some(Instant::now());
        }
        if let Some(at) = stop_at {
            // The controlled stop once the queue manager handles it: it publishes its
            // state after its signal handlers are in place (before, SIGUSR1 would end
            // the process as the system's default).
            if !controlled_sent {
                let published = lifecycle::RunStatus::read(paths)
                    .is_some_and(|s| i64::from(s.pid) == i64::from(pid));
                if published {
                    // SAFETY: signalling our own child.
                    unsafe { libc::kill(pid, libc::SIGUSR1) };
                    controlled_sent = true;
                }
            }
            if !immediate_sent && at.elapsed() >= Duration::from_secs(grace) {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(pid, libc::SIGTERM) };
                immediate_sent = true;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
