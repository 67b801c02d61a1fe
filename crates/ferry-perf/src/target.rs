//! The queue manager a run measures: an embedded one (a `ferry start --foreground`
//! child process in a temporary `FERRY_HOME`, with the reports' qm.ini tuning where
//! Ferry has the key, stopped and deleted at the end, whatever happens; `ferry perf
//! recovery` also stops, kills and restarts it on the same home) or an existing
//! one reached with `--connect` (its pid found with `ferry status` when it is local).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{MqError, ObjectDescriptor, OpenOptions, ReasonCode};

use crate::workload::Mode;
use crate::PerfError;

/// Name of the embedded queue manager.
pub const EMBEDDED_QMGR: &str = "PERFQM";
/// The channel applications use unless `--channel` says otherwise.
pub const DEFAULT_CHANNEL: &str = "SYSTEM.DEF.SVRCONN";

/// Where to find the `ferry` binary: `$FERRY_BIN`, else `ferry` in the directory of this
/// executable (the harness is installed beside it and run as `ferry perf`).
pub fn ferry_binary() -> Result<PathBuf, PerfError> {
    if let Some(p) = std::env::var_os("FERRY_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()
        .map_err(|e| PerfError::Setup(format!("cannot find the ferry binary: {e}")))?;
    let ferry = exe.with_file_name("ferry");
    if ferry.is_file() {
        Ok(ferry)
    } else {
        Err(PerfError::Setup(format!(
            "no ferry binary beside {}: set FERRY_BIN to the ferry executable, or use --connect",
            exe.display()
        )))
    }
}

/// A TCP port on loopback that nothing listens on right now.
pub fn free_port() -> Result<u16, PerfError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| PerfError::Setup(format!("no free port on loopback: {e}")))
}

/// A queue manager the harness drives.
pub struct QueueManager {
    opts: ConnectOptions,
    qmgr: String,
    bindings: Option<PathBuf>,
    server_pid: Option<u32>,
    description: String,
    tuning: Vec<String>,
    embedded: Option<Embedded>,
}

/// The qm.ini values of the reports (seed 000 appendix A.2.2, seed 001, seed 004) that
/// Ferry has a key for, as the embedded queue manager gets them. `max_size` is the
/// largest message of the run (200KB and more get the larger queue buffers, as in the
/// reports); `channels` is at least the reports' 5000.
pub fn reports_tuning(max_size: usize, channels: u32) -> Vec<(&'static str, u32)> {
    let buffer = if max_size >= 200 * 1024 {
        104_857_600
    } else {
        10_485_760
    };
    let channels = channels.max(5000);
    vec![
        ("MaxChannels", channels),
        ("MaxActiveChannels", channels),
        ("LogBufferPages", 4096),
        ("DefaultQBufferSize", buffer),
        ("DefaultPQBufferSize", buffer),
    ]
}

/// What the embedded queue manager does not take from the reports, and why.
pub const TUNING_NOT_APPLIED: &str = "MQIBindType=FASTPATH: no key in Ferry (no channel exits; \
every channel is trusted); LogFilePages=32767/LogPrimaryFiles=64: left at Ferry's defaults so a \
temporary queue manager does not preallocate 8 GB of log; LogType=CIRCULAR and \
LogWriteIntegrity=TripleWrite are Ferry's defaults already";

/// The bindings socket of local queue manager `qmgr` under `FERRY_HOME` (as `ferry`
/// finds it: `$FERRY_HOME`, else `/var/ferry` for root, else `~/.ferry`).
pub fn local_bindings_socket(qmgr: &str) -> PathBuf {
    let root = match std::env::var_os("FERRY_HOME").filter(|v| !v.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => {
            // SAFETY: geteuid has no preconditions and cannot fail.
            if unsafe { libc::geteuid() } == 0 {
                PathBuf::from("/var/ferry")
            } else {
                std::env::var_os("HOME")
                    .map_or_else(|| PathBuf::from("."), PathBuf::from)
                    .join(".ferry")
            }
        }
    };
    root.join("qmgrs").join(qmgr).join("qm.sock")
}

/// Reads `PID(n)` out of a `ferry status` line.
pub fn parse_status_pid(line: &str) -> Option<u32> {
    let start = line.find("PID(")? + 4;
    let end = start + line[start..].find(')')?;
    line[start..end].trim().parse().ok()
}

/// Asks `ferry status QMGR` for the pid of a local queue manager (`None` when it is not
/// local, not running or the binary cannot be run).
pub fn find_server_pid(qmgr: &str) -> Option<u32> {
    let bin = ferry_binary().ok()?;
    let out = Command::new(bin)
        .args(["status", qmgr])
        .stdin(Stdio::null())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(parse_status_pid)
}

impl QueueManager {
    /// Creates and starts an embedded queue manager with the `ferry` binary at `bin`,
    /// allowing `max_channels` client sockets (qm.ini Channels/MaxChannels).
    /// Call [`QueueManager::wait_ready`] before using it.
    pub fn embedded(bin: &Path, tuning: &[(&'static str, u32)]) -> Result<QueueManager, PerfError> {
        let e = Embedded::start(bin, tuning)?;
        let conn_name = format!("127.0.0.1({})", e.port);
        let opts = ConnectOptions::client(&conn_name, DEFAULT_CHANNEL).queue_manager(EMBEDDED_QMGR);
        Ok(QueueManager {
            opts,
            qmgr: EMBEDDED_QMGR.to_string(),
            bindings: Some(
                e.home
                    .path()
                    .join("qmgrs")
                    .join(EMBEDDED_QMGR)
                    .join("qm.sock"),
            ),
            tuning: tuning.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            server_pid: Some(e.child.id()),
            description: format!(
                "embedded {EMBEDDED_QMGR} at {conn_name} (pid {})",
                e.child.id()
            ),
            embedded: Some(e),
        })
    }

    /// An existing queue manager at `conn_name` on `channel`; `qmgr` may be blank.
    /// Server CPU is measured when its `server_pid` is given or, for a named local
    /// queue manager, found with `ferry status`. Bindings connections use `bindings`, or
    /// the named queue manager's socket under `FERRY_HOME` when it exists.
    pub fn existing(
        conn_name: &str,
        channel: &str,
        qmgr: &str,
        server_pid: Option<u32>,
        bindings: Option<PathBuf>,
    ) -> QueueManager {
        let opts = ConnectOptions::client(conn_name, channel).queue_manager(qmgr);
        let qm = if qmgr.is_empty() { "(any)" } else { qmgr };
        let server_pid = server_pid.or_else(|| {
            if qmgr.is_empty() {
                None
            } else {
                find_server_pid(qmgr)
            }
        });
        let bindings = bindings.or_else(|| {
            let p = local_bindings_socket(qmgr);
            (!qmgr.is_empty() && p.exists()).then_some(p)
        });
        QueueManager {
            opts,
            qmgr: qmgr.to_string(),
            bindings,
            tuning: Vec::new(),
            server_pid,
            description: format!("queue manager {qm} at {conn_name} on channel {channel}"),
            embedded: None,
        }
    }

    /// Connection options for the workload's applications.
    pub fn connect_options(&self) -> ConnectOptions {
        self.opts.clone().application_name("ferry perf")
    }

    /// Connection options for an application connecting in `mode`; bindings needs the
    /// queue manager's socket (embedded, `--bindings`, or a local `--qmgr`).
    pub fn options_for(&self, mode: Mode) -> Result<ConnectOptions, PerfError> {
        match mode {
            Mode::Client => Ok(self.connect_options()),
            Mode::Bindings => match &self.bindings {
                Some(path) => Ok(ConnectOptions::bindings(path)
                    .queue_manager(&self.qmgr)
                    .application_name("ferry perf")),
                None => Err(PerfError::Setup(
                    "bindings connections need the queue manager's socket: give --bindings \
                     PATH (its qm.sock) or --qmgr NAME of a local queue manager"
                        .into(),
                )),
            },
        }
    }

    /// The qm.ini values the embedded queue manager was given (empty for --connect).
    pub fn tuning(&self) -> &[String] {
        &self.tuning
    }

    /// The server's pid, when known (embedded, or `--server-pid`).
    pub fn server_pid(&self) -> Option<u32> {
        self.server_pid
    }

    /// One line saying what is measured.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Waits until the queue manager accepts a connection (at most 60 s) and returns it.
    pub async fn wait_ready(&mut self) -> Result<Connection, PerfError> {
        let opts = self
            .connect_options()
            .sharecnv(1)
            .connect_timeout(Duration::from_secs(2));
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(e) = self.embedded.as_mut() {
                e.check_alive()?;
            }
            match Connection::connect(&opts).await {
                Ok(c) => return Ok(c),
                Err(err) if self.embedded.is_none() || Instant::now() > deadline => {
                    let console = self
                        .embedded
                        .as_ref()
                        .map(Embedded::console_tail)
                        .unwrap_or_default();
                    return Err(PerfError::Setup(format!(
                        "cannot connect to {}: {}{console}",
                        self.description, err.reason
                    )));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    /// The embedded queue manager's FERRY_HOME (`None` for `--connect`).
    pub fn home(&self) -> Option<&Path> {
        self.embedded.as_ref().map(|e| e.home.path())
    }

    /// The embedded queue manager's process, if it is running; an error with the end of
    /// its console output if it has ended (`Ok` for `--connect`).
    pub fn check_alive(&mut self) -> Result<(), PerfError> {
        match self.embedded.as_mut() {
            Some(e) => e.check_alive(),
            None => Ok(()),
        }
    }

    fn embedded_mut(&mut self, what: &str) -> Result<&mut Embedded, PerfError> {
        self.embedded.as_mut().ok_or_else(|| {
            PerfError::Usage(format!(
                "{what} needs an embedded queue manager (not --connect)"
            ))
        })
    }

    /// Stops the embedded queue manager the way an operator does, with `ferry stop`
    /// (a controlled stop: the final checkpoint files every persistent message), and
    /// waits until its process has ended. Returns how long that took. Applications must
    /// have disconnected: a controlled stop waits for them.
    pub fn stop_controlled(&mut self) -> Result<Duration, PerfError> {
        let e = self.embedded_mut("a controlled stop")?;
        let started = Instant::now();
        let out = Command::new(&e.bin)
            .args(["stop", EMBEDDED_QMGR])
            .env("FERRY_HOME", e.home.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|err| PerfError::Setup(format!("cannot run {}: {err}", e.bin.display())))?;
        if !out.status.success() {
            return Err(PerfError::Setup(format!(
                "ferry stop {EMBEDDED_QMGR} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let status = e
            .child
            .wait()
            .map_err(|err| PerfError::Setup(format!("cannot reap the queue manager: {err}")))?;
        let took = started.elapsed();
        if !status.success() {
            return Err(PerfError::Setup(format!(
                "the queue manager ended with {status} after ferry stop{}",
                e.console_tail()
            )));
        }
        self.server_pid = None;
        Ok(took)
    }

    /// Kills the embedded queue manager with SIGKILL (a crash: no final checkpoint, the
    /// next start replays the log) and reaps it.
    pub fn kill(&mut self) -> Result<(), PerfError> {
        let e = self.embedded_mut("kill -9")?;
        e.child
            .kill()
            .and_then(|()| e.child.wait().map(|_| ()))
            .map_err(|err| PerfError::Setup(format!("cannot kill the queue manager: {err}")))?;
        self.server_pid = None;
        Ok(())
    }

    /// Starts the stopped (or killed) embedded queue manager again, on the same
    /// FERRY_HOME and port; returns the moment its process was spawned. Connect to it
    /// with retries: it listens only once it has recovered.
    pub fn restart(&mut self) -> Result<Instant, PerfError> {
        let e = self.embedded_mut("a restart")?;
        if let Ok(None) = e.child.try_wait() {
            return Err(PerfError::Setup(
                "restart: the queue manager is still running".into(),
            ));
        }
        let spawned = Instant::now();
        e.child = spawn_server(&e.bin, e.home.path())?;
        let pid = e.child.id();
        let conn_name = format!("127.0.0.1({})", e.port);
        self.server_pid = Some(pid);
        self.description = format!("embedded {EMBEDDED_QMGR} at {conn_name} (pid {pid})");
        Ok(spawned)
    }

    /// Stops the embedded queue manager (if any) and deletes its files. Also done on drop.
    pub fn shutdown(&mut self) {
        if let Some(e) = self.embedded.take() {
            drop(e);
        }
    }
}

/// Runs an MQSC command the harness needs to succeed through `admin`'s command server;
/// returns its output lines. A command the queue manager refuses is a setup error
/// naming the command and the queue manager's messages.
pub async fn run_mqsc(admin: &Connection, cmd: &str) -> Result<Vec<String>, PerfError> {
    let out = admin
        .mqsc(cmd)
        .await
        .map_err(|e| PerfError::Mq(cmd.to_string(), e))?;
    if out.failed {
        return Err(PerfError::Setup(format!(
            "{cmd} failed: {}",
            out.lines.join(" / ")
        )));
    }
    Ok(out.lines)
}

/// Sets the queues' PUT attribute: DISABLED when `inhibited`, else ENABLED (the fault
/// that makes every put fail with 2051, and its undoing).
pub async fn inhibit_puts(
    admin: &Connection,
    names: &[String],
    inhibited: bool,
) -> Result<(), PerfError> {
    let put = if inhibited { "DISABLED" } else { "ENABLED" };
    for name in names {
        run_mqsc(admin, &format!("ALTER QLOCAL({name}) PUT({put})")).await?;
    }
    Ok(())
}

/// Makes sure local queue `name` exists: opens it, and defines it with MQSC when the
/// queue manager says 2085 MQRC_UNKNOWN_OBJECT_NAME.
pub async fn ensure_queue(admin: &Connection, name: &str) -> Result<(), PerfError> {
    let od = ObjectDescriptor::queue(name)
        .map_err(|e| PerfError::Setup(format!("bad queue name {name}: {e}")))?;
    match admin.open(&od, OpenOptions::OUTPUT).await {
        Ok(q) => {
            q.close(Default::default())
                .await
                .map_err(|e| mq("close", name, e))?;
            Ok(())
        }
        Err(e) if e.reason == ReasonCode::UnknownObjectName => {
            run_mqsc(admin, &format!("DEFINE QLOCAL({name})")).await?;
            Ok(())
        }
        Err(e) => Err(mq("open", name, e)),
    }
}

fn mq(what: &str, name: &str, e: MqError) -> PerfError {
    PerfError::Mq(format!("{what} {name}"), e)
}

/// Rewrites the given keys of a qm.ini file (e.g. MQ's default MaxChannels of 100 is
/// too few for 64 requesters and 64 responders at SHARECNV 1).
fn apply_tuning(qm_ini: &Path, values: &[(&'static str, u32)]) -> Result<(), PerfError> {
    let text = std::fs::read_to_string(qm_ini)
        .map_err(|e| PerfError::Setup(format!("{}: {e}", qm_ini.display())))?;
    let new = set_ini_values(&text, values);
    std::fs::write(qm_ini, new).map_err(|e| PerfError::Setup(format!("{}: {e}", qm_ini.display())))
}

/// Replaces the value of every `   Key=value` line whose key is in `values`.
pub fn set_ini_values(text: &str, values: &[(&str, u32)]) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        match values.iter().find(|(k, _)| *k == key && line.contains('=')) {
            Some((k, v)) => {
                let indent = &line[..line.len() - line.trim_start().len()];
                out.push_str(&format!("{indent}{k}={v}"));
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// The child process of an embedded queue manager and its temporary FERRY_HOME.
struct Embedded {
    home: tempfile::TempDir,
    child: Child,
    port: u16,
    bin: PathBuf,
}

/// Starts `ferry start EMBEDDED_QMGR --foreground` under FERRY_HOME `home`, its output
/// appended to `home/console.log`.
fn spawn_server(bin: &Path, home: &Path) -> Result<Child, PerfError> {
    let console_path = home.join("console.log");
    let console = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&console_path)
        .map_err(|e| PerfError::Setup(format!("{}: {e}", console_path.display())))?;
    let console_err = console
        .try_clone()
        .map_err(|e| PerfError::Setup(format!("{}: {e}", console_path.display())))?;
    let mut cmd = Command::new(bin);
    cmd.args(["start", EMBEDDED_QMGR, "--foreground"])
        .env("FERRY_HOME", home)
        .env(
            "FERRY_LOG",
            std::env::var("FERRY_LOG").unwrap_or_else(|_| "warn".into()),
        )
        .stdin(Stdio::null())
        .stdout(console)
        .stderr(console_err)
        // Its own process group: a terminal's Ctrl-C reaches only the harness, which
        // then stops the queue manager in order.
        .process_group(0);
    // SAFETY: prctl and getppid are async-signal-safe; they only ask the kernel to
    // send SIGTERM to the queue manager if the harness dies without cleaning up.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            if libc::getppid() != parent {
                libc::raise(libc::SIGTERM);
            }
            Ok(())
        });
    }
    cmd.spawn()
        .map_err(|e| PerfError::Setup(format!("cannot start {}: {e}", bin.display())))
}

impl Embedded {
    fn start(bin: &Path, tuning: &[(&'static str, u32)]) -> Result<Embedded, PerfError> {
        let home = tempfile::Builder::new()
            .prefix("ferry-perf-")
            .tempdir()
            .map_err(|e| PerfError::Setup(format!("cannot create a temporary FERRY_HOME: {e}")))?;
        let port = free_port()?;
        let out = Command::new(bin)
            .args(["create", EMBEDDED_QMGR, "--port", &port.to_string()])
            .env("FERRY_HOME", home.path())
            .stdin(Stdio::null())
            .output()
            .map_err(|e| PerfError::Setup(format!("cannot run {}: {e}", bin.display())))?;
        if !out.status.success() {
            return Err(PerfError::Setup(format!(
                "ferry create {EMBEDDED_QMGR} failed ({}): {}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout).trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        apply_tuning(
            &home.path().join("qmgrs").join(EMBEDDED_QMGR).join("qm.ini"),
            tuning,
        )?;
        let child = spawn_server(bin, home.path())?;
        Ok(Embedded {
            home,
            child,
            port,
            bin: bin.to_path_buf(),
        })
    }

    fn check_alive(&mut self) -> Result<(), PerfError> {
        match self.child.try_wait() {
            Ok(Some(status)) => Err(PerfError::Setup(format!(
                "the queue manager process ended during start ({status}){}",
                self.console_tail()
            ))),
            _ => Ok(()),
        }
    }

    fn console_tail(&self) -> String {
        let text =
            std::fs::read_to_string(self.home.path().join("console.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n  ");
        if tail.is_empty() {
            String::new()
        } else {
            format!("\n  console: {tail}")
        }
    }
}

impl Drop for Embedded {
    /// Stops the queue manager as `ferry stop -i` does (SIGTERM), kills it if it has not
    /// ended within 10 s, reaps it; the temporary FERRY_HOME is deleted afterwards.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
                // SAFETY: signalling our own child, which has not been reaped yet.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            while let Ok(None) = self.child.try_wait() {
                if Instant::now() > deadline {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ini_values_are_replaced_in_place() {
        let ini = "QueueManager:\n   Name=PERFQM\nChannels:\n   MaxChannels=100\n   MaxActiveChannels=100\nTCP:\n   KeepAlive=NO\n";
        let out = set_ini_values(ini, &[("MaxChannels", 400), ("MaxActiveChannels", 400)]);
        assert_eq!(
            out,
            "QueueManager:\n   Name=PERFQM\nChannels:\n   MaxChannels=400\n   MaxActiveChannels=400\nTCP:\n   KeepAlive=NO\n"
        );
    }

    #[test]
    fn reports_tuning_and_status_pid() {
        let t = reports_tuning(2048, 300);
        assert!(t.contains(&("MaxChannels", 5000)));
        assert!(t.contains(&("DefaultQBufferSize", 10_485_760)));
        let big = reports_tuning(2 * 1024 * 1024, 9000);
        assert!(big.contains(&("MaxActiveChannels", 9000)));
        assert!(big.contains(&("DefaultPQBufferSize", 104_857_600)));
        let line = "QMNAME(QM1)                                               STATUS(Running) PID(4242) LISTENERS(1414) CONNS(0) BINDINGS(0)";
        assert_eq!(parse_status_pid(line), Some(4242));
        assert_eq!(parse_status_pid("QMNAME(QM1) STATUS(Ended normally)"), None);
        assert!(local_bindings_socket("QM1").ends_with("qmgrs/QM1/qm.sock"));
    }

    #[test]
    fn the_ferry_binary_is_found_or_explained() {
        // Under cargo test no `ferry` is beside this executable: without FERRY_BIN, say
        // what to do.
        if std::env::var_os("FERRY_BIN").is_none() {
            let e = ferry_binary().expect_err("no ferry beside the test binary");
            assert!(e.to_string().contains("FERRY_BIN"), "{e}");
        }
    }
}
