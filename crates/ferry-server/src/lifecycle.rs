//! Control commands: create, start, stop, status and delete a queue manager.
//!
//! These are MQ's crtmqm, strmqm, endmqm, dspmq and dltmqm. `start` without
//! `--foreground` starts the queue manager as a background process of its own and
//! returns once it accepts connections (as strmqm does); `stop` is controlled by default
//! (new connections refused, connected applications may finish, like `endmqm -c -w`)
//! and immediate with `--immediate` (`endmqm -i`). The running process tells the
//! others what it is doing through `run/status.json` and `run/qm.pid`.

use crate::home::{FerryHome, QmgrPaths};
use crate::messages;
use crate::qm_ini::QmIni;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

/// What a control command reports when it fails: a numbered message and an exit status.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct ControlError {
    /// The numbered message, e.g. `FRY8118E: Ferry queue manager 'QM9' does not exist.`
    pub message: String,
    /// The exit status MQ's command would give (e.g. 16 for "does not exist").
    pub exit_code: i32,
}

impl ControlError {
    fn new(message: String, exit_code: i32) -> Self {
        ControlError { message, exit_code }
    }
}

/// Lifecycle state a running queue manager publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum QmgrState {
    /// Restoring objects, opening listeners.
    Starting,
    /// Accepting connections.
    Running,
    /// Controlled stop in progress: no new connections.
    Quiescing,
    /// Immediate stop in progress.
    Ending,
}

impl QmgrState {
    /// The word dspmq prints.
    pub fn display(self) -> &'static str {
        match self {
            QmgrState::Starting => "Starting",
            QmgrState::Running => "Running",
            QmgrState::Quiescing => "Quiescing",
            QmgrState::Ending => "Ending immediately",
        }
    }
}

/// One listening endpoint, as published in the status file.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PublishedListener {
    /// Listener object name.
    pub name: String,
    /// Port bound.
    pub port: u16,
}

/// `run/status.json`: what the running process says about itself.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStatus {
    /// Process id.
    pub pid: u32,
    /// Lifecycle state.
    pub state: QmgrState,
    /// When it started, ms since epoch.
    pub started_ms: u64,
    /// TCP listeners running.
    pub listeners: Vec<PublishedListener>,
    /// The bindings socket.
    pub bindings: String,
    /// Ferry version.
    pub version: String,
    /// Connected applications at the last update.
    pub connections: u64,
    /// The recovery log's state at the last update (absent in files written before
    /// the log had status, and for a queue manager running without a log).
    #[serde(default)]
    pub log: Option<LogSummary>,
    /// Ports of the AMQP channels running (absent in files written before AMQP).
    #[serde(default)]
    pub amqp_ports: Vec<u16>,
    /// Client sockets against Limits/MaxConnections (absent in files written before
    /// admission was counted).
    #[serde(default)]
    pub sockets: Option<SocketSummary>,
    /// The FRY messages of listeners and AMQP channels that could not start with the
    /// queue manager (FRY9212E, FRY9213E): `ferry start` shows them on the terminal.
    #[serde(default)]
    pub start_failures: Vec<String>,
}

/// Client sockets as `ferry status` shows them: open, the most admitted, refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SocketSummary {
    /// TCP sockets open now, handshakes included.
    pub open: u64,
    /// The most admitted at once (Limits/MaxConnections, or less: FRY9781I).
    pub max: u64,
    /// Sockets refused since the start because `max` were open.
    pub refused: u64,
}

/// The recovery log as `ferry status` and DISPLAY QMSTATUS show it (MQ's CURRLOG,
/// RECLOG, LOGINUSE, plus Ferry's checkpoint position, bytes written, flushes per record
/// and the last slow write).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LogSummary {
    /// The extent being written (CURRLOG).
    pub current_extent: String,
    /// The oldest extent restart recovery needs (RECLOG).
    pub restart_extent: String,
    /// The last checkpoint's LSN.
    pub checkpoint_lsn: u64,
    /// The restart point: recovery replays from here.
    pub restart_lsn: u64,
    /// Everything below this LSN is on stable storage.
    pub durable_lsn: u64,
    /// Bytes written to the log files since the queue manager started.
    pub bytes_written: u64,
    /// Records made durable since start.
    pub records: u64,
    /// Flushes (write + fdatasync rounds) since start.
    pub flushes: u64,
    /// Checkpoints taken since start.
    pub checkpoints: u64,
    /// Bytes of the ring between the restart point and the head.
    pub space_in_use: u64,
    /// Bytes of the ring.
    pub space_total: u64,
    /// Bytes of its primary extents (LogPrimaryFiles; 0 in status files written before
    /// secondary extents existed: all primary).
    #[serde(default)]
    pub space_primary: u64,
    /// Log writes slower than AMQ_IODELAY since start.
    pub slow_writes: u64,
    /// The last slow write, as FRY6729W describes it.
    pub last_slow_write: Option<String>,
}

impl LogSummary {
    /// LOGINUSE: the percentage of the *primary* log space in use, as MQ defines it: 100
    /// or more means the secondary extents are in use.
    pub fn in_use_percent(&self) -> u64 {
        let primary = if self.space_primary == 0 {
            self.space_total
        } else {
            self.space_primary
        };
        (self.space_in_use * 100).checked_div(primary).unwrap_or(0)
    }

    /// Flushes per record (1.0 = one flush per record; group commit makes it small).
    pub fn flushes_per_record(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.flushes as f64 / self.records as f64
        }
    }

    /// The `ferry status` lines for the log, under DISPLAY QMSTATUS's keywords (plus
    /// FLUSHPERREC, LOGFLUSH / LOGRECS).
    pub fn display_lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!(
                "   CURRLOG({}) RECLOG({}) LOGINUSE({}) CHKPTLSN({}) RESTLSN({}) DURLSN({})",
                self.current_extent,
                self.restart_extent,
                self.in_use_percent(),
                self.checkpoint_lsn,
                self.restart_lsn,
                self.durable_lsn
            ),
            format!(
                "   LOGBYTES({}) LOGRECS({}) LOGFLUSH({}) FLUSHPERREC({:.3}) LOGCHKPT({}) SLOWWRT({})",
                self.bytes_written,
                self.records,
                self.flushes,
                self.flushes_per_record(),
                self.checkpoints,
                self.slow_writes
            ),
        ];
        if let Some(s) = &self.last_slow_write {
            lines.push(format!("   LASTSLOW({s})"));
        }
        lines
    }
}

impl RunStatus {
    /// Writes the file atomically (temp file + rename) so readers never see half of it.
    pub fn publish(&self, paths: &QmgrPaths) -> std::io::Result<()> {
        std::fs::create_dir_all(paths.run_dir())?;
        let tmp = paths.run_dir().join("status.json.tmp");
        let text = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, paths.status_file())
    }

    /// Reads the file, if there is one.
    pub fn read(paths: &QmgrPaths) -> Option<RunStatus> {
        let text = std::fs::read(paths.status_file()).ok()?;
        serde_json::from_slice(&text).ok()
    }
}

/// True when process `pid` exists.
pub fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    if pid <= 0 {
        return false;
    }
    // A zombie still answers kill(0); look at /proc for its state.
    if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        if let Some(state) = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next())
        {
            if state == "Z" || state == "X" {
                return false;
            }
        }
    }
    // SAFETY: kill with signal 0 only checks for existence and permission.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The pid of the running process of `paths`, if it runs.
pub fn running_pid(paths: &QmgrPaths) -> Option<u32> {
    let text = std::fs::read_to_string(paths.pid_file()).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    process_alive(pid).then_some(pid)
}

/// Checks a queue manager name, returning the FRY8117E message when it is not valid.
pub fn check_name(name: &str) -> Result<(), ControlError> {
    ferry_mqi::validate_object_name(name)
        .map_err(|e| ControlError::new(messages::QMGR_NAME_INVALID.format(&[&name, &e]), 72))
}

/// Finds an existing queue manager or fails with FRY8118E (exit 16, as strmqm).
pub fn existing(home: &FerryHome, name: &str) -> Result<QmgrPaths, ControlError> {
    check_name(name)?;
    let paths = home.qmgr(name);
    if !paths.exists() {
        return Err(ControlError::new(
            messages::QMGR_UNKNOWN.format(&[&name, &home.qmgrs_dir().display()]),
            16,
        ));
    }
    Ok(paths)
}

/// What `dspmq -o` asks to see beside each queue manager's name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatusView {
    /// Ferry's line: state, pid, listeners, connections, sockets and the recovery log.
    #[default]
    Ferry,
    /// `-o status`: MQ's plain `QMNAME(QM1)  STATUS(Running)`.
    Status,
    /// `-o default`: whether it is the default queue manager (Ferry has none).
    Default,
    /// `-o standby`: whether it may run as a standby instance (Ferry: not permitted).
    Standby,
    /// `-o installation`: the installation's name, path and version.
    Installation,
    /// `-o all`: every field above, then Ferry's.
    All,
}

/// One line of `ferry status`: `QMNAME(QM1)   STATUS(Running) PID(123) PORTS(1414)`.
pub fn status_line(home: &FerryHome, name: &str) -> String {
    status_view(home, name, StatusView::Ferry)
}

/// One queue manager as `dspmq -o <view>` shows it.
pub fn status_view(home: &FerryHome, name: &str, view: StatusView) -> String {
    let paths = home.qmgr(name);
    let pid = running_pid(&paths);
    let status = RunStatus::read(&paths).filter(|s| Some(s.pid) == pid);
    let qmname = format!("QMNAME({name})");
    let state = state_word(&paths, pid);
    let mut text = format!("{qmname:<58}STATUS({state})");
    let installation = || {
        format!(
            " INSTNAME({}) INSTPATH({}) INSTVER({})",
            crate::installation::INSTALLATION_NAME,
            crate::installation::installation_path().display(),
            crate::installation::version()
        )
    };
    match view {
        StatusView::Status => return text,
        StatusView::Default => return text + " DEFAULT(no)",
        StatusView::Standby => return text + " STANDBY(Not permitted)",
        StatusView::Installation => return text + &installation(),
        StatusView::All => {
            text.push_str(" DEFAULT(no) STANDBY(Not permitted)");
            text.push_str(&installation());
        }
        StatusView::Ferry => {}
    }
    match (pid, status) {
        (Some(pid), Some(s)) => {
            let ports: Vec<String> = s.listeners.iter().map(|l| l.port.to_string()).collect();
            let amqp: Vec<String> = s.amqp_ports.iter().map(|p| p.to_string()).collect();
            let _ = write!(
                text,
                " PID({pid}) LISTENERS({}) AMQP({}) CONNS({}) BINDINGS({})",
                ports.join(","),
                amqp.join(","),
                s.connections,
                s.bindings
            );
            if let Some(k) = s.sockets {
                let _ = write!(
                    text,
                    " SOCKETS({}) MAXCONN({}) REFUSED({})",
                    k.open, k.max, k.refused
                );
            }
            for line in s.log.iter().flat_map(LogSummary::display_lines) {
                text.push('\n');
                text.push_str(&line);
            }
        }
        (Some(pid), None) => {
            let _ = write!(text, " PID({pid})");
        }
        (None, _) => {}
    }
    text
}

/// `ferry status --ready` (IBM's chkmqready): the exit status when the queue manager is
/// ready for work.
pub const READY_EXIT: u8 = 0;
/// `ferry status --ready` / `--healthy`: not ready, or not healthy.
pub const NOT_READY_EXIT: u8 = 1;
/// `ferry status --healthy` (IBM's chkmqhealthy): the state could not be found out (no
/// such queue manager, a name that is not valid).
pub const PROBE_ERROR_EXIT: u8 = 2;

/// What a probe found: whether it passed, and one line saying why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeResult {
    /// True when ready (or healthy).
    pub passed: bool,
    /// `QMNAME(QM1) READY(yes) STATUS(Running) LISTENERS(1414) AMQP(5672)`, or why not.
    pub line: String,
}

/// Is queue manager `name` ready for work, as IBM's chkmqready decides for its
/// container: it runs (not starting, quiescing or ending), it has at least one TCP
/// listener, and every listener and AMQP channel it published accepts a connection on
/// this host (127.0.0.1, within a second each). Everything is looked at locally: the pid
/// file, run/status.json and the ports, never the queue manager's own commands.
pub fn readiness(home: &FerryHome, name: &str) -> Result<ProbeResult, ControlError> {
    let paths = existing(home, name)?;
    let qmname = format!("QMNAME({name})");
    let not = |why: String| ProbeResult {
        passed: false,
        line: format!("{qmname} READY(no) {why}"),
    };
    let Some(pid) = running_pid(&paths) else {
        return Ok(not(format!("STATUS({})", state_word(&paths, None))));
    };
    let Some(status) = RunStatus::read(&paths).filter(|s| s.pid == pid) else {
        return Ok(not("STATUS(Starting)".into()));
    };
    if status.state != QmgrState::Running {
        return Ok(not(format!("STATUS({})", status.state.display())));
    }
    if status.listeners.is_empty() {
        return Ok(not("STATUS(Running) REASON(no TCP listener runs)".into()));
    }
    let ports = status
        .listeners
        .iter()
        .map(|l| l.port)
        .chain(status.amqp_ports.iter().copied());
    for port in ports {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        if let Err(e) = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(1)) {
            return Ok(not(format!(
                "STATUS(Running) REASON(port {port} does not accept connections: {e})"
            )));
        }
    }
    let list = |v: Vec<String>| v.join(",");
    Ok(ProbeResult {
        passed: true,
        line: format!(
            "{qmname} READY(yes) STATUS(Running) LISTENERS({}) AMQP({})",
            list(
                status
                    .listeners
                    .iter()
                    .map(|l| l.port.to_string())
                    .collect()
            ),
            list(status.amqp_ports.iter().map(u16::to_string).collect())
        ),
    })
}

/// Is queue manager `name` healthy, as IBM's chkmqhealthy decides: its process runs,
/// whatever it is doing (starting, running, quiescing or ending). Ended, normally or
/// not, is not healthy.
pub fn health(home: &FerryHome, name: &str) -> Result<ProbeResult, ControlError> {
    let paths = existing(home, name)?;
    let pid = running_pid(&paths);
    let state = state_word(&paths, pid);
    Ok(ProbeResult {
        passed: pid.is_some(),
        line: format!(
            "QMNAME({name}) HEALTHY({}) STATUS({state})",
            if pid.is_some() { "yes" } else { "no" }
        ),
    })
}

/// The state word dspmq shows for the process `pid` (running) or none.
fn state_word(paths: &QmgrPaths, pid: Option<u32>) -> String {
    match (pid, RunStatus::read(paths).filter(|s| Some(s.pid) == pid)) {
        (Some(_), Some(s)) => s.state.display().to_string(),
        (Some(_), None) => "Starting".to_string(),
        // A clean end removes the pid file; one left behind means the process died.
        (None, _) if paths.pid_file().exists() => "Ended unexpectedly".to_string(),
        (None, _) => last_end(paths)
            .unwrap_or(EndKind::Normally)
            .display()
            .to_string(),
    }
}

/// How a queue manager's last run ended cleanly, as dspmq names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndKind {
    /// A controlled stop: every application disconnected first (endmqm -c).
    Normally,
    /// An immediate stop: applications were disconnected, their work backed out
    /// (endmqm -i, SIGTERM, Ctrl-C).
    Immediately,
}

impl EndKind {
    /// The words dspmq prints.
    pub fn display(self) -> &'static str {
        match self {
            EndKind::Normally => "Ended normally",
            EndKind::Immediately => "Ended immediately",
        }
    }

    fn word(self) -> &'static str {
        match self {
            EndKind::Normally => "normally",
            EndKind::Immediately => "immediately",
        }
    }
}

/// Records how the queue manager ended, for dspmq (run/ended). A failure to write it only
/// makes dspmq say "Ended normally".
pub fn record_end(paths: &QmgrPaths, how: EndKind) {
    let _ = std::fs::write(paths.end_file(), how.word());
}

/// Forgets the last end (a new run starts); dspmq then tells the new run's state.
pub fn forget_end(paths: &QmgrPaths) {
    let _ = std::fs::remove_file(paths.end_file());
}

/// How the last run ended, when it ended cleanly and said so.
fn last_end(paths: &QmgrPaths) -> Option<EndKind> {
    let text = std::fs::read_to_string(paths.end_file()).ok()?;
    match text.trim() {
        "normally" => Some(EndKind::Normally),
        "immediately" => Some(EndKind::Immediately),
        _ => None,
    }
}

/// Removes a stopped queue manager and its recovery log (dltmqm).
pub fn delete(home: &FerryHome, name: &str) -> Result<String, ControlError> {
    let paths = existing(home, name)?;
    if let Some(pid) = running_pid(&paths) {
        return Err(ControlError::new(
            messages::QMGR_RUNNING.format(&[&name, &pid]),
            5,
        ));
    }
    let remove = |p: &Path| match std::fs::remove_dir_all(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(ControlError::new(format!("{}: {e}", p.display()), 71)),
    };
    // A log placed elsewhere (LogPath, crtmqm -ld) loses its files but keeps a directory
    // that may hold other things.
    let placed_log = QmIni::read(&paths.qm_ini(), &paths.log_dir)
        .ok()
        .map(|ini| std::path::PathBuf::from(ini.log.path))
        .filter(|p| *p != paths.log_dir);
    remove(&paths.dir)?;
    remove(&paths.log_dir)?;
    if let Some(dir) = placed_log {
        remove_log_files(&dir, name)
            .map_err(|e| ControlError::new(format!("{}: {e}", dir.display()), 71))?;
    }
    Ok(messages::QMGR_DELETED.format(&[&name]))
}

/// Removes queue manager `name`'s recovery log files (control file and extents) from
/// `dir`, then `dir` itself if nothing else is left in it. Files of a log whose control
/// file names another queue manager, or that has none, are left alone.
fn remove_log_files(dir: &Path, name: &str) -> std::io::Result<()> {
    use ferry_store::LogDevice;
    let control = dir.join(ferry_store::control::CONTROL_NAME);
    if !control.try_exists()? {
        return Ok(());
    }
    let owner = ferry_store::FileDevice::new(dir)
        .and_then(|mut device| device.open(ferry_store::control::CONTROL_NAME))
        .ok()
        .and_then(|mut file| ferry_store::control::read(&mut file).ok())
        .map(|block| block.qm_name);
    if owner.as_deref() != Some(name) {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir)?;
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = name == ferry_store::control::CONTROL_NAME
            || name == ferry_store::control::CONTROL_TMP_NAME
            || ferry_store::Geometry::is_extent_name(&name);
        if ours {
            std::fs::remove_file(entry.path())?;
        }
    }
    let _ = std::fs::remove_dir(dir);
    Ok(())
}

/// The exit status of `ferry start` when the queue manager runs but some of its
/// listeners or AMQP channels could not start.
pub const START_INCOMPLETE_EXIT: u8 = 10;

/// What a background start reports once the queue manager runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StartReport {
    /// FRY8003I and the listeners that started, for stdout.
    pub lines: Vec<String>,
    /// For stderr: each listener or AMQP channel that could not start (FRY9212E,
    /// FRY9213E), then FRY9214W; empty when everything started.
    pub warnings: Vec<String>,
}

/// Starts `name` as a background process and waits until it accepts connections.
pub fn start_background(
    home: &FerryHome,
    name: &str,
    timeout: Duration,
) -> Result<StartReport, ControlError> {
    let paths = existing(home, name)?;
    if let Some(pid) = running_pid(&paths) {
        return Err(ControlError::new(
            messages::QMGR_RUNNING.format(&[&name, &pid]),
            5,
        ));
    }
    std::fs::create_dir_all(paths.run_dir())
        .map_err(|e| ControlError::new(format!("{}: {e}", paths.run_dir().display()), 71))?;
    let console = std::fs::File::create(paths.console_log())
        .map_err(|e| ControlError::new(format!("{}: {e}", paths.console_log().display()), 71))?;
    let console_err = console
        .try_clone()
        .map_err(|e| ControlError::new(e.to_string(), 71))?;
    let exe = std::env::current_exe().map_err(|e| ControlError::new(e.to_string(), 71))?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("start")
        .arg(name)
        .arg("--foreground")
        .env("FERRY_HOME", home.root())
        .stdin(std::process::Stdio::null())
        .stdout(console)
        .stderr(console_err);
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: setsid is async-signal-safe; it detaches the queue manager from the
        // starting terminal's session so it outlives the command that started it.
        unsafe {
            cmd.pre_exec(|| {
                libc::setsid();
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| {
        ControlError::new(format!("cannot start the queue manager process: {e}"), 71)
    })?;
    let mut out = vec![messages::QMGR_STARTING.format(&[&name])];
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(exit)) = child.try_wait() {
            let console = std::fs::read_to_string(paths.console_log()).unwrap_or_default();
            let reason = console
                .lines()
                .rev()
                .find(|l| has_error_id(l))
                .map(str::to_string)
                .unwrap_or_else(|| format!("the process ended with {exit}"));
            return Err(ControlError::new(
                messages::QMGR_START_FAILED.format(&[
                    &name,
                    &reason,
                    &paths.console_log().display(),
                ]),
                exit.code().unwrap_or(71),
            ));
        }
        if let Some(s) = RunStatus::read(&paths) {
            if s.pid == child.id() && s.state == QmgrState::Running {
                out.push(messages::QMGR_STARTED.format(&[&name, &env!("CARGO_PKG_VERSION")]));
                for l in &s.listeners {
                    out.push(messages::LISTENER_STARTED.format(&[&l.name, &l.port]));
                }
                out.push(messages::BINDINGS_STARTED.format(&[&s.bindings]));
                let mut warnings = s.start_failures.clone();
                if !warnings.is_empty() {
                    warnings.push(
                        messages::QMGR_START_INCOMPLETE.format(&[&name, &s.start_failures.len()]),
                    );
                }
                return Ok(StartReport {
                    lines: out,
                    warnings,
                });
            }
        }
        if Instant::now() > deadline {
            return Err(ControlError::new(
                messages::QMGR_START_FAILED.format(&[
                    &name,
                    &"it did not become ready in time",
                    &paths.console_log().display(),
                ]),
                71,
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True when `line` holds an error message id such as `FRY7028E`.
fn has_error_id(line: &str) -> bool {
    line.match_indices("FRY").any(|(i, _)| {
        let id = line.as_bytes().get(i + 3..i + 8);
        matches!(id, Some([a, b, c, d, b'E']) if [a, b, c, d].iter().all(|x| x.is_ascii_digit()))
    })
}

/// How to stop a queue manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopMode {
    /// endmqm -c: refuse new connections, wait for applications to disconnect.
    Controlled,
    /// endmqm -i: disconnect applications now, backing out their uncommitted work.
    Immediate,
}

impl StopMode {
    /// The signal the running process takes this request as (SIGUSR1 controlled, SIGTERM immediate).
    pub fn signal(self) -> libc::c_int {
        match self {
            StopMode::Controlled => libc::SIGUSR1,
            StopMode::Immediate => libc::SIGTERM,
        }
    }
}

/// Asks the queue manager to stop and waits until its process has ended.
pub fn stop(
    home: &FerryHome,
    name: &str,
    mode: StopMode,
    mut progress: impl FnMut(&str),
) -> Result<String, ControlError> {
    let paths = existing(home, name)?;
    let Some(pid) = running_pid(&paths) else {
        return Err(ControlError::new(
            messages::QMGR_NOT_RUNNING.format(&[&name]),
            40,
        ));
    };
    let Ok(raw_pid) = libc::pid_t::try_from(pid) else {
        return Err(ControlError::new(format!("bad pid {pid}"), 71));
    };
    // SAFETY: sending a signal to a pid we read from our own pid file.
    if unsafe { libc::kill(raw_pid, mode.signal()) } != 0 {
        return Err(ControlError::new(
            format!(
                "cannot signal process {pid}: {}",
                std::io::Error::last_os_error()
            ),
            71,
        ));
    }
    progress(&match mode {
        StopMode::Controlled => messages::QMGR_QUIESCE_ACCEPTED.format(&[&name]),
        StopMode::Immediate => messages::QMGR_ENDING_IMMEDIATE.format(&[&name]),
    });
    let mut last_report = Instant::now();
    while process_alive(pid) {
        std::thread::sleep(Duration::from_millis(20));
        if mode == StopMode::Controlled && last_report.elapsed() > Duration::from_secs(10) {
            last_report = Instant::now();
            let conns = RunStatus::read(&paths).map_or(0, |s| s.connections);
            progress(&format!(
                "Waiting for queue manager '{name}' to end: {conns} application connection(s) remain."
            ));
        }
    }
    Ok(messages::QMGR_ENDED.format(&[&name]))
}

/// The recovery log of a new queue manager, as crtmqm's log options give it (each `None`
/// keeps MQ's default). Its shape is fixed once the log exists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// LogPrimaryFiles (crtmqm -lp).
    pub primary_files: Option<u32>,
    /// LogSecondaryFiles (crtmqm -ls).
    pub secondary_files: Option<u32>,
    /// LogFilePages (crtmqm -lf).
    pub file_pages: Option<u32>,
    /// LogPath (crtmqm -ld); by default `$FERRY_HOME/log/QM1/`.
    pub path: Option<std::path::PathBuf>,
}

/// Writes qm.ini and the directories of a new queue manager; the caller adds objects and
/// creates the log. Log options out of range are refused before anything is written, with
/// the message a bad qm.ini value gets.
pub fn create_layout(
    home: &FerryHome,
    name: &str,
    log: &LogOptions,
    mqsc_config: Option<&Path>,
) -> Result<(QmgrPaths, QmIni), ControlError> {
    check_name(name)?;
    let paths = home.qmgr(name);
    if paths.exists() {
        return Err(ControlError::new(messages::QMGR_EXISTS.format(&[&name]), 8));
    }
    let mut ini = QmIni::defaults(name, &paths.log_dir);
    // As crtmqm: MQSNOAUT=yes in the environment makes a queue manager without
    // object authority checks.
    let no_authorities = std::env::var("MQSNOAUT").is_ok_and(|v| v.eq_ignore_ascii_case("yes"));
    if !no_authorities {
        ini.service.name = crate::qm_ini::AUTHORIZATION_SERVICE.to_string();
    }
    if let Some(n) = log.primary_files {
        ini.log.primary_files = n;
    }
    if let Some(n) = log.secondary_files {
        ini.log.secondary_files = n;
    }
    if let Some(n) = log.file_pages {
        ini.log.file_pages = n;
    }
    if let Some(p) = &log.path {
        // Absolute, so start and delete find it from any working directory.
        let p = std::path::absolute(p)
            .map_err(|e| ControlError::new(format!("{}: {e}", p.display()), 71))?;
        ini.log.path = format!("{}/", p.display().to_string().trim_end_matches('/'));
    }
    if let Some(p) = mqsc_config {
        let p = std::path::absolute(p)
            .map_err(|e| ControlError::new(format!("{}: {e}", p.display()), 71))?;
        if !p.exists() {
            return Err(ControlError::new(
                format!("the MQSC configuration {} does not exist", p.display()),
                71,
            ));
        }
        ini.auto_config.mqsc_config = p.display().to_string();
    }
    // The same checks (and messages) as a hand-edited qm.ini gets at start.
    let ini = QmIni::parse(&ini.render(), &paths.log_dir)
        .map_err(|e| ControlError::new(messages::CONFIG_ERROR.format(&[&name, &e]), 71))?;
    let io = |p: &Path, e: std::io::Error| ControlError::new(format!("{}: {e}", p.display()), 71);
    for dir in [
        paths.dir.clone(),
        paths.errors_dir(),
        paths.run_dir(),
        Path::new(&ini.log.path).to_path_buf(),
    ] {
        std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    }
    ini.write(&paths.qm_ini())
        .map_err(|e| ControlError::new(e.to_string(), 71))?;
    Ok((paths, ini))
}

#[cfg(test)]
mod tests {
    use super::has_error_id;

    #[test]
    fn error_ids_are_recognised() {
        assert!(has_error_id("2026 ERROR FRY7028E: The configuration ..."));
        assert!(!has_error_id(
            "INFO FRY5026I: The listener 'SYSTEM.LISTENER.TCP.1' has started."
        ));
        assert!(!has_error_id("FRY"));
    }
}
