//! The queue manager a run measures: an embedded one (a `ferry start --foreground`
//! child process in a temporary `FERRY_HOME`, stopped and deleted at the end, whatever
//! happens) or an existing one reached with `--connect`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ferry_client::{ConnectOptions, Connection};
use ferry_mqi::{MqError, ObjectDescriptor, OpenOptions, ReasonCode};

use crate::PerfError;

/// Name of the embedded queue manager.
pub const EMBEDDED_QMGR: &str = "PERFQM";
/// The channel applications use unless `--channel` says otherwise.
pub const DEFAULT_CHANNEL: &str = "SYSTEM.DEF.SVRCONN";

/// Where to find the `ferry` binary: `$FERRY_BIN`, else this executable (the harness
/// runs as `ferry perf`).
pub fn ferry_binary() -> Result<PathBuf, PerfError> {
    if let Some(p) = std::env::var_os("FERRY_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe()
        .map_err(|e| PerfError::Setup(format!("cannot find the ferry binary: {e}")))?;
    let is_ferry = exe
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == "ferry");
    if is_ferry {
        Ok(exe)
    } else {
        Err(PerfError::Setup(format!(
            "{} is not the ferry binary: set FERRY_BIN to the ferry executable, or use --connect",
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
    server_pid: Option<u32>,
    description: String,
    embedded: Option<Embedded>,
}

impl QueueManager {
    /// Creates and starts an embedded queue manager with the `ferry` binary at `bin`,
    /// allowing `max_channels` client sockets (qm.ini Channels/MaxChannels).
    /// Call [`QueueManager::wait_ready`] before using it.
    pub fn embedded(bin: &Path, max_channels: u32) -> Result<QueueManager, PerfError> {
        let e = Embedded::start(bin, max_channels)?;
        let conn_name = format!("127.0.0.1({})", e.port);
        let opts = ConnectOptions::client(&conn_name, DEFAULT_CHANNEL).queue_manager(EMBEDDED_QMGR);
        Ok(QueueManager {
            opts,
            server_pid: Some(e.child.id()),
            description: format!(
                "embedded {EMBEDDED_QMGR} at {conn_name} (pid {})",
                e.child.id()
            ),
            embedded: Some(e),
        })
    }

    /// An existing queue manager at `conn_name` on `channel`; `qmgr` may be blank.
    /// Server CPU is measured only when its `server_pid` is given.
    pub fn existing(
        conn_name: &str,
        channel: &str,
        qmgr: &str,
        server_pid: Option<u32>,
    ) -> QueueManager {
        let opts = ConnectOptions::client(conn_name, channel).queue_manager(qmgr);
        let qm = if qmgr.is_empty() { "(any)" } else { qmgr };
        QueueManager {
            opts,
            server_pid,
            description: format!("queue manager {qm} at {conn_name} on channel {channel}"),
            embedded: None,
        }
    }

    /// Connection options for the workload's applications.
    pub fn connect_options(&self) -> ConnectOptions {
        self.opts.clone().application_name("ferry perf")
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

    /// Stops the embedded queue manager (if any) and deletes its files. Also done on drop.
    pub fn shutdown(&mut self) {
        if let Some(e) = self.embedded.take() {
            drop(e);
        }
    }
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
            let out = admin
                .mqsc(&format!("DEFINE QLOCAL({name})"))
                .await
                .map_err(|e| mq("DEFINE QLOCAL", name, e))?;
            if out.failed {
                return Err(PerfError::Setup(format!(
                    "DEFINE QLOCAL({name}) failed: {}",
                    out.lines.join(" / ")
                )));
            }
            Ok(())
        }
        Err(e) => Err(mq("open", name, e)),
    }
}

fn mq(what: &str, name: &str, e: MqError) -> PerfError {
    PerfError::Mq(format!("{what} {name}"), e)
}

/// Rewrites the Channels stanza's MaxChannels and MaxActiveChannels of a qm.ini file
/// (MQ's default of 100 is too few for 64 requesters and 64 responders at SHARECNV 1).
fn set_max_channels(qm_ini: &Path, max_channels: u32) -> Result<(), PerfError> {
    let text = std::fs::read_to_string(qm_ini)
        .map_err(|e| PerfError::Setup(format!("{}: {e}", qm_ini.display())))?;
    let new = set_ini_values(
        &text,
        &[
            ("MaxChannels", max_channels),
            ("MaxActiveChannels", max_channels),
        ],
    );
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
}

impl Embedded {
    fn start(bin: &Path, max_channels: u32) -> Result<Embedded, PerfError> {
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
        set_max_channels(
            &home.path().join("qmgrs").join(EMBEDDED_QMGR).join("qm.ini"),
            max_channels,
        )?;
        let console_path = home.path().join("console.log");
        let console = std::fs::File::create(&console_path)
            .map_err(|e| PerfError::Setup(format!("{}: {e}", console_path.display())))?;
        let console_err = console
            .try_clone()
            .map_err(|e| PerfError::Setup(format!("{}: {e}", console_path.display())))?;
        let mut cmd = Command::new(bin);
        cmd.args(["start", EMBEDDED_QMGR, "--foreground"])
            .env("FERRY_HOME", home.path())
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
        let child = cmd
            .spawn()
            .map_err(|e| PerfError::Setup(format!("cannot start {}: {e}", bin.display())))?;
        Ok(Embedded { home, child, port })
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
    fn the_ferry_binary_is_found_or_explained() {
        // Under cargo test this executable is not `ferry`: without FERRY_BIN, say what to do.
        if std::env::var_os("FERRY_BIN").is_none() {
            let e = ferry_binary().expect_err("test binary is not ferry");
            assert!(e.to_string().contains("FERRY_BIN"), "{e}");
        }
    }
}
