//! The queue manager a run measures: an embedded one (a `ferry start --foreground`
//! child process in a temporary `FERRY_HOME`, started by `ferry-launcher` as the
//! integration tests' are, with the reports' qm.ini tuning where
//! Ferry has the key, stopped and deleted at the end, whatever happens; `ferry perf
//! recovery` also stops, kills and restarts it on the same home) or an existing
//! one reached with `--connect` (its pid found with `ferry status` when it is local).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ferry_client::{ConnectOptions, Connection};
use ferry_launcher::{LaunchError, OnDrop, QueueManagerProcess};
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
    ferry_launcher::free_port().map_err(setup)
}

/// A launcher's failure as the harness reports it.
fn setup(e: LaunchError) -> PerfError {
    PerfError::Setup(e.to_string())
}

/// The channel `ferry perf --cipherspec` defines on its embedded queue manager.
pub const TLS_CHANNEL: &str = "PERF.TLS.SVRCONN";

/// A queue manager the harness drives.
pub struct QueueManager {
    opts: ConnectOptions,
    /// Where its listener is (CONNAME syntax).
    conn_name: String,
    /// The SVRCONN channel the applications connect through.
    channel: String,
    qmgr: String,
    bindings: Option<PathBuf>,
    server_pid: Option<u32>,
    description: String,
    tuning: Vec<String>,
    embedded: Option<QueueManagerProcess>,
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

/// `tuning` with `values` (`--qm-ini`) set over it: a key already there takes the new
/// value, another is added.
pub fn with_values(
    mut tuning: Vec<(&'static str, u32)>,
    values: &[(&'static str, u32)],
) -> Vec<(&'static str, u32)> {
    for &(key, value) in values {
        match tuning.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = value,
            None => tuning.push((key, value)),
        }
    }
    tuning
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
        QueueManager::embedded_named(bin, EMBEDDED_QMGR, tuning)
    }

    /// [`QueueManager::embedded`] with another name (RR-DQ-BB runs two).
    pub fn embedded_named(
        bin: &Path,
        name: &str,
        tuning: &[(&'static str, u32)],
    ) -> Result<QueueManager, PerfError> {
        let mut e = QueueManagerProcess::create(bin, name, "ferry-perf-", &[]).map_err(setup)?;
        e.set_on_drop(OnDrop::Terminate);
        e.set_detached(true);
        e.set_env(
            "FERRY_LOG",
            &std::env::var("FERRY_LOG").unwrap_or_else(|_| "warn".into()),
        );
        let ini_path = e.qm_dir().join("qm.ini");
        let ini = std::fs::read_to_string(&ini_path)
            .map_err(|err| PerfError::Setup(format!("{}: {err}", ini_path.display())))?;
        if let Some((key, _)) = tuning.iter().find(|(key, _)| {
            !ini.lines()
                .any(|l| l.trim_start().starts_with(&format!("{key}=")))
        }) {
            return Err(PerfError::Usage(format!(
                "qm.ini has no key {key} to set (a numeric key of its stanzas, e.g. WakeCoalescing)"
            )));
        }
        e.set_ini_values(tuning).map_err(setup)?;
        e.spawn().map_err(setup)?;
        let conn_name = e.conname();
        let pid = e.pid();
        let opts = ConnectOptions::client(&conn_name, DEFAULT_CHANNEL).queue_manager(name);
        Ok(QueueManager {
            opts,
            conn_name: conn_name.clone(),
            channel: DEFAULT_CHANNEL.to_string(),
            qmgr: name.to_string(),
            bindings: Some(e.bindings_socket()),
            tuning: tuning.iter().map(|(k, v)| format!("{k}={v}")).collect(),
            server_pid: pid,
            description: format!(
                "embedded {name} at {conn_name} (pid {})",
                pid.unwrap_or_default()
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
        let conn = conn_name.to_string();
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
            conn_name: conn,
            channel: channel.to_string(),
            qmgr: qmgr.to_string(),
            bindings,
            tuning: Vec::new(),
            server_pid,
            description: format!("queue manager {qm} at {conn_name} on channel {channel}"),
            embedded: None,
        }
    }

    /// Connects the applications over TLS with `tls` (CipherSpec `spec`).
    pub fn use_tls(&mut self, tls: ferry_client::TlsOptions, spec: &str) {
        self.opts = self.opts.clone().tls(tls);
        self.description.push_str(&format!(", TLS {spec}"));
    }

    /// TLS for the embedded queue manager: a throwaway CA signs its certificate (in its
    /// key repository, the ssl directory) and a client repository beside it; channel
    /// PERF.TLS.SVRCONN gets SSLCIPH(`spec`) SSLCAUTH(OPTIONAL), and the applications
    /// connect through it. `admin` is a connection already made (plain).
    pub async fn embedded_tls(&mut self, admin: &Connection, spec: &str) -> Result<(), PerfError> {
        let e = self.embedded_mut("a throwaway key repository")?;
        let repository = e.qm_dir().join("ssl");
        let client = e.home().join("perf-client-tls");
        let label = ferry_security::default_certificate_label(EMBEDDED_QMGR);
        let made = (|| {
            let ca = ferry_tls::self_signed::ThrowawayCa::new("ferry perf CA")?;
            ca.issue(
                &repository,
                &label,
                &[("O", "ferry perf"), ("CN", EMBEDDED_QMGR)],
                false,
            )?;
            ca.write_trust(&repository)?;
            ca.write_trust(&client)
        })();
        made.map_err(|err| PerfError::Setup(format!("cannot make the TLS certificates: {err}")))?;
        run_mqsc(admin, "REFRESH SECURITY TYPE(SSL)").await?;
        run_mqsc(
            admin,
            &format!(
                "DEFINE CHANNEL({TLS_CHANNEL}) CHLTYPE(SVRCONN) SSLCIPH({spec}) SSLCAUTH(OPTIONAL) \
                 MAXINST(999999999) MAXINSTC(999999999) REPLACE"
            ),
        )
        .await?;
        let conn_name = e.conname();
        let base = ConnectOptions::client(&conn_name, TLS_CHANNEL).queue_manager(EMBEDDED_QMGR);
        self.opts = base;
        self.channel = TLS_CHANNEL.to_string();
        self.use_tls(ferry_client::TlsOptions::new(spec, client), spec);
        Ok(())
    }

    /// Channel compression: the applications ask for COMPMSG `list`. On the embedded
    /// queue manager the channel they use lists COMPMSG(ANY): PERF.COMP.SVRCONN, defined
    /// here, or PERF.TLS.SVRCONN with --cipherspec; with --connect, --channel must list
    /// the technique itself. `admin` is a connection already made. Returns the channel.
    pub async fn use_compression(
        &mut self,
        admin: &Connection,
        list: &[ferry_mqi::MessageCompression],
    ) -> Result<String, PerfError> {
        if let Some(e) = &self.embedded {
            if self.channel == TLS_CHANNEL {
                run_mqsc(
                    admin,
                    &format!("ALTER CHANNEL({TLS_CHANNEL}) CHLTYPE(SVRCONN) COMPMSG(ANY)"),
                )
                .await?;
            } else {
                let channel = crate::compression::COMPRESSION_CHANNEL;
                run_mqsc(
                    admin,
                    &format!(
                        "DEFINE CHANNEL({channel}) CHLTYPE(SVRCONN) COMPMSG(ANY) \
                         MAXINST(999999999) MAXINSTC(999999999) REPLACE"
                    ),
                )
                .await?;
                self.opts =
                    ConnectOptions::client(&e.conname(), channel).queue_manager(EMBEDDED_QMGR);
                self.channel = channel.to_string();
            }
        }
        self.opts = self.opts.clone().message_compression(list);
        let list = crate::compression::describe(list);
        self.description.push_str(&format!(", COMPMSG({list})"));
        Ok(self.channel.clone())
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

    /// The queue manager's name (blank for a --connect target named by nobody).
    pub fn name(&self) -> &str {
        &self.qmgr
    }

    /// Where its listener is, as a CONNAME (`localhost(1414)`).
    pub fn conn_name(&self) -> &str {
        &self.conn_name
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
            self.check_alive()?;
            match Connection::connect(&opts).await {
                Ok(c) => return Ok(c),
                Err(err) if self.embedded.is_none() || Instant::now() > deadline => {
                    let console = self
                        .embedded
                        .as_ref()
                        .map(QueueManagerProcess::console_tail)
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
        self.embedded.as_ref().map(QueueManagerProcess::home)
    }

    /// The embedded queue manager's process, if it is running; an error with the end of
    /// its console output if it has ended (`Ok` for `--connect`).
    pub fn check_alive(&mut self) -> Result<(), PerfError> {
        match self.embedded.as_mut() {
            Some(e) => e.check_alive().map_err(setup),
            None => Ok(()),
        }
    }

    fn embedded_mut(&mut self, what: &str) -> Result<&mut QueueManagerProcess, PerfError> {
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
        let status = e.stop_controlled().map_err(setup)?;
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
        e.kill9();
        self.server_pid = None;
        Ok(())
    }

    /// Starts the stopped (or killed) embedded queue manager again, on the same
    /// FERRY_HOME and port; returns the moment its process was spawned. Connect to it
    /// with retries: it listens only once it has recovered.
    pub fn restart(&mut self) -> Result<Instant, PerfError> {
        let e = self.embedded_mut("a restart")?;
        // A process that ended by itself is reaped by check_alive and may be restarted.
        if e.pid().is_some() && e.check_alive().is_ok() {
            return Err(PerfError::Setup(
                "restart: the queue manager is still running".into(),
            ));
        }
        let spawned = Instant::now();
        e.spawn().map_err(setup)?;
        let pid = e.pid();
        let conn_name = e.conname();
        self.server_pid = pid;
        self.description = format!(
            "embedded {EMBEDDED_QMGR} at {conn_name} (pid {})",
            pid.unwrap_or_default()
        );
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

#[cfg(test)]
mod tests {
    use super::*;

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
