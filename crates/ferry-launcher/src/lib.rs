//! A queue manager as a child process: `ferry create` in a temporary `FERRY_HOME` (its
//! listener and AMQP channel on free loopback ports), `ferry start --foreground` with its
//! console captured, then stopped, killed or restarted on the same home, and killed and
//! deleted when dropped, whatever happened.
//!
//! One launcher for the two things that need one: the integration tests
//! (`ferry-test-support`) and the performance harness's embedded queue manager
//! (`ferry-perf`). It runs the `ferry` executable it is given and links none of the
//! server, so neither the server binary nor the harness depends on test code.

mod ini;
mod port;

pub use ini::{set_ini_value, set_ini_values};

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

/// Why a queue manager could not be created, started or stopped.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// A file, a directory or a process could not be made or run.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The system's answer.
        source: std::io::Error,
    },
    /// A `ferry` command (create, stop) failed.
    #[error("ferry {command} failed ({status}): {output}")]
    Command {
        /// The command's arguments.
        command: String,
        /// Its exit status.
        status: ExitStatus,
        /// What it printed.
        output: String,
    },
    /// The server process ended while it was expected to run.
    #[error("the queue manager process ended ({status}){console}")]
    Ended {
        /// Its exit status.
        status: ExitStatus,
        /// The end of its console output, as [`QueueManagerProcess::console_tail`].
        console: String,
    },
    /// The server did not report `Running` in time.
    #[error("the queue manager did not start within {secs} s{console}")]
    NotReady {
        /// How long it was given.
        secs: u64,
        /// The end of its console output.
        console: String,
    },
    /// The call needs a running (or a stopped) process.
    #[error("{0}")]
    State(&'static str),
}

fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> LaunchError {
    let what = what.into();
    move |source| LaunchError::Io { what, source }
}

/// A TCP port that nothing listens on right now, below the kernel's ephemeral range (so
/// no outgoing connection takes it before the server binds it) and never handed out twice
/// by this process.
pub fn free_port() -> Result<u16, LaunchError> {
    port::choose().ok_or_else(|| LaunchError::Io {
        what: "no free port below the ephemeral range".to_string(),
        source: std::io::Error::from(std::io::ErrorKind::AddrInUse),
    })
}

/// How the dropped process is ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnDrop {
    /// SIGKILL at once, as a crash (tests: fast, and nothing depends on a clean end).
    Kill,
    /// SIGTERM (what `ferry stop -i` sends), SIGKILL if it has not ended within 10 s.
    Terminate,
}

/// What clients of a queue manager made by the launcher may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// MQ's defaults of a new queue manager: CHLAUTH closes SYSTEM.* channels to clients
    /// and refuses administrators (the user running the tests is one) on every channel.
    MqDefaults,
    /// For tests and benchmarks on this host: [`OPEN_TO_TEST_CLIENTS`] is run at every
    /// start (`ferry create --ic`), so clients reach SYSTEM.DEF.SVRCONN and
    /// SYSTEM.DEF.AMQP as the user running them.
    TestClients,
}

/// The MQSC [`Access::TestClients`] runs at every start (`test-clients.mqsc` beside this
/// crate's manifest, which the bench scripts pass to `ferry create --ic` too).
pub const OPEN_TO_TEST_CLIENTS: &str = include_str!("../test-clients.mqsc");

/// A queue manager process in its own temporary `FERRY_HOME`.
pub struct QueueManagerProcess {
    home: tempfile::TempDir,
    bin: PathBuf,
    name: String,
    port: u16,
    amqp_port: u16,
    child: Option<Child>,
    env: Vec<(String, String)>,
    open_file_limit: Option<u64>,
    detached: bool,
    on_drop: OnDrop,
}

impl QueueManagerProcess {
    /// Creates queue manager `name` with the `ferry` executable `bin` in a new temporary
    /// `FERRY_HOME` (its directory named `<prefix>XXXXXX`), its listener and AMQP channel
    /// on free loopback ports, passing `create_args` on to `ferry create`
    /// (`--log-file-pages 64`...), open to test clients ([`Access::TestClients`]).
    /// Nothing runs yet: [`launch`](Self::launch) or [`spawn`](Self::spawn) starts it.
    pub fn create(
        bin: &Path,
        name: &str,
        prefix: &str,
        create_args: &[&str],
    ) -> Result<Self, LaunchError> {
        Self::create_with_access(bin, name, prefix, create_args, Access::TestClients)
    }

    /// [`create`](Self::create) with the access clients get.
    pub fn create_with_access(
        bin: &Path,
        name: &str,
        prefix: &str,
        create_args: &[&str],
        access: Access,
    ) -> Result<Self, LaunchError> {
        let home = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir()
            .map_err(io("cannot create a temporary FERRY_HOME"))?;
        let qm = QueueManagerProcess {
            home,
            bin: bin.to_path_buf(),
            name: name.to_string(),
            port: free_port()?,
            amqp_port: free_port()?,
            child: None,
            env: Vec::new(),
            open_file_limit: None,
            detached: false,
            on_drop: OnDrop::Kill,
        };
        let (port, amqp_port) = (qm.port.to_string(), qm.amqp_port.to_string());
        let mut args = vec!["create", name, "--port", &port, "--amqp-port", &amqp_port];
        let script = qm.home.path().join("test-clients.mqsc");
        let script_arg = script.display().to_string();
        if access == Access::TestClients {
            std::fs::write(&script, OPEN_TO_TEST_CLIENTS)
                .map_err(io(script.display().to_string()))?;
            args.extend_from_slice(&["--ic", &script_arg]);
        }
        args.extend_from_slice(create_args);
        // Test and benchmark queue managers check no object authorities (MQ's
        // MQSNOAUT=yes at crtmqm): tests of other things connect as whatever user id
        // they need. A test of authorities turns them on before the first start with
        // qm.ini Service/Name=AuthorizationService ([`Self::check_authorities`]).
        let mut create = qm.ferry_command();
        create.env("MQSNOAUT", "yes");
        qm.run_checked(create, &args)?;
        Ok(qm)
    }

    /// How the process is ended when this value is dropped (default [`OnDrop::Kill`]).
    pub fn set_on_drop(&mut self, on_drop: OnDrop) {
        self.on_drop = on_drop;
    }

    /// Runs the process from its next start in its own process group (a terminal's
    /// Ctrl-C then reaches only the parent, which stops it in order) and has the kernel
    /// send it SIGTERM if the parent dies without cleaning up.
    pub fn set_detached(&mut self, detached: bool) {
        self.detached = detached;
    }

    /// Sets an environment variable for the process from its next start
    /// (`FERRY_LOG`, `AMQ_IODELAY`...). `FERRY_LOG` is `warn` unless set here.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
    }

    /// Gives the process an open-file limit of `n` (soft and hard) from its next start.
    pub fn set_open_file_limit(&mut self, n: u64) {
        self.open_file_limit = Some(n);
    }

    /// Turns object authority checks on (qm.ini Service/Name=AuthorizationService, as
    /// `ferry create` writes it for users); read at the next start.
    pub fn check_authorities(&self) -> Result<(), LaunchError> {
        self.set_ini("Service", "Name", "AuthorizationService")
    }

    /// Sets `key=value` in stanza `stanza` of its qm.ini (adding either when missing);
    /// read at its next start.
    pub fn set_ini(&self, stanza: &str, key: &str, value: &str) -> Result<(), LaunchError> {
        self.edit_ini(|text| set_ini_value(text, stanza, key, value))
    }

    /// Replaces the value of every qm.ini key in `values` where the file has it.
    pub fn set_ini_values(&self, values: &[(&str, u32)]) -> Result<(), LaunchError> {
        self.edit_ini(|text| set_ini_values(text, values))
    }

    fn edit_ini(&self, edit: impl FnOnce(&str) -> String) -> Result<(), LaunchError> {
        let path = self.qm_dir().join("qm.ini");
        let text = std::fs::read_to_string(&path).map_err(io(path.display().to_string()))?;
        std::fs::write(&path, edit(&text)).map_err(io(path.display().to_string()))
    }

    /// Starts `ferry start NAME --foreground` (again) and returns at once; its output is
    /// appended to [`console_path`](Self::console_path).
    pub fn spawn(&mut self) -> Result<(), LaunchError> {
        if self.child.is_some() {
            return Err(LaunchError::State("the queue manager is already running"));
        }
        let path = self.console_path();
        let console = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io(path.display().to_string()))?;
        let console_err = console
            .try_clone()
            .map_err(io(path.display().to_string()))?;
        let mut command = Command::new(&self.bin);
        command
            .args(["start", &self.name, "--foreground"])
            .env("FERRY_HOME", self.home.path())
            .env("FERRY_LOG", "warn")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(console)
            .stderr(console_err);
        if self.detached {
            command.process_group(0);
        }
        let (limit, detached) = (self.open_file_limit, self.detached);
        // SAFETY: only setrlimit, prctl, getpid/getppid and raise run in the child
        // between fork and exec, all async-signal-safe.
        unsafe {
            let parent = libc::getpid();
            command.pre_exec(move || {
                if let Some(n) = limit {
                    let lim = libc::rlimit {
                        rlim_cur: n,
                        rlim_max: n,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                if detached {
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                    if libc::getppid() != parent {
                        libc::raise(libc::SIGTERM);
                    }
                }
                Ok(())
            });
        }
        let child = command
            .spawn()
            .map_err(io(format!("cannot start {}", self.bin.display())))?;
        self.child = Some(child);
        Ok(())
    }

    /// Waits until the process reports `Running` in its `run/status.json` (it then
    /// accepts connections), at most `timeout`.
    pub fn wait_ready(&mut self, timeout: Duration) -> Result<(), LaunchError> {
        let deadline = Instant::now() + timeout;
        let status = self.qm_dir().join("run").join("status.json");
        loop {
            self.check_alive()?;
            let pid = self.pid().map(u64::from);
            let running = std::fs::read(&status)
                .ok()
                .and_then(|t| serde_json::from_slice::<serde_json::Value>(&t).ok())
                .is_some_and(|v| v["pid"].as_u64() == pid && v["state"] == "Running");
            if running {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(LaunchError::NotReady {
                    secs: timeout.as_secs(),
                    console: self.console_tail(),
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// [`spawn`](Self::spawn), then [`wait_ready`](Self::wait_ready) up to 30 s.
    pub fn launch(&mut self) -> Result<(), LaunchError> {
        self.spawn()?;
        self.wait_ready(Duration::from_secs(30))
    }

    /// `Ok` while the process runs (or before it was started); [`LaunchError::Ended`]
    /// with the end of its console once it has ended by itself.
    pub fn check_alive(&mut self) -> Result<(), LaunchError> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        match child.try_wait() {
            Ok(Some(status)) => {
                self.child = None;
                Err(LaunchError::Ended {
                    status,
                    console: self.console_tail(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Stops it as an operator does, `ferry stop NAME` (controlled: waits for
    /// applications), and reaps the process; its exit status.
    pub fn stop_controlled(&mut self) -> Result<ExitStatus, LaunchError> {
        if self.child.is_none() {
            return Err(LaunchError::State("the queue manager is not running"));
        }
        let name = self.name.clone();
        self.ferry_checked(&["stop", &name])?;
        let mut child = self.child.take().ok_or(LaunchError::State("not running"))?;
        child.wait().map_err(io("cannot reap the queue manager"))
    }

    /// Kills the process with SIGKILL, as a crash would, and reaps it.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends SIGTERM (as `ferry stop -i`), SIGKILL if it has not ended within `grace`,
    /// and reaps it.
    pub fn terminate(&mut self, grace: Duration) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        if let Ok(None) = child.try_wait() {
            if let Ok(pid) = libc::pid_t::try_from(child.id()) {
                // SAFETY: signalling our own child, which has not been reaped yet.
                unsafe {
                    libc::kill(pid, libc::SIGTERM);
                }
            }
            let deadline = Instant::now() + grace;
            while let Ok(None) = child.try_wait() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = child.wait();
    }

    /// Waits for the process to end by itself (after a stop), at most `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let child = self.child.as_mut()?;
            if let Ok(Some(status)) = child.try_wait() {
                self.child = None;
                return Some(status);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Runs `ferry ARGS` against this installation (its `FERRY_HOME`).
    pub fn ferry(&self, args: &[&str]) -> Result<Output, LaunchError> {
        self.ferry_command()
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(io(format!("cannot run {}", self.bin.display())))
    }

    /// `ferry ARGS`, an error naming the command and its output when it fails.
    fn ferry_checked(&self, args: &[&str]) -> Result<Output, LaunchError> {
        self.run_checked(self.ferry_command(), args)
    }

    /// Runs `command` with `args`, an error naming them and the output when it fails.
    fn run_checked(&self, mut command: Command, args: &[&str]) -> Result<Output, LaunchError> {
        let out = command
            .args(args)
            .stdin(Stdio::null())
            .output()
            .map_err(io(format!("cannot run {}", self.bin.display())))?;
        if out.status.success() {
            Ok(out)
        } else {
            Err(LaunchError::Command {
                command: args.join(" "),
                status: out.status,
                output: format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout).trim(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            })
        }
    }

    /// A `ferry` command with this installation's `FERRY_HOME`, to add arguments and
    /// pipes to.
    pub fn ferry_command(&self) -> Command {
        let mut c = Command::new(&self.bin);
        c.env("FERRY_HOME", self.home.path());
        c
    }

    /// The process's console output so far (every start's).
    pub fn console(&self) -> String {
        std::fs::read_to_string(self.console_path()).unwrap_or_default()
    }

    /// The last ten lines of the console, as `\n  console: ...` (empty when there is
    /// none), to end an error message with.
    pub fn console_tail(&self) -> String {
        let text = self.console();
        let lines: Vec<&str> = text.lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n  ");
        if tail.is_empty() {
            String::new()
        } else {
            format!("\n  console: {tail}")
        }
    }

    /// Where the console output goes: `console.log` in the `FERRY_HOME`.
    pub fn console_path(&self) -> PathBuf {
        self.home.path().join("console.log")
    }

    /// Queue manager name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `FERRY_HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The queue manager's directory.
    pub fn qm_dir(&self) -> PathBuf {
        self.home.path().join("qmgrs").join(&self.name)
    }

    /// Its bindings socket.
    pub fn bindings_socket(&self) -> PathBuf {
        self.qm_dir().join("qm.sock")
    }

    /// The listener's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The port of its AMQP channel SYSTEM.DEF.AMQP.
    pub fn amqp_port(&self) -> u16 {
        self.amqp_port
    }

    /// `127.0.0.1(port)`, its listener as an MQ connection name.
    pub fn conname(&self) -> String {
        format!("127.0.0.1({})", self.port)
    }

    /// The `ferry` executable it runs.
    pub fn bin(&self) -> &Path {
        &self.bin
    }

    /// The process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }
}

impl Drop for QueueManagerProcess {
    /// Ends the process as [`OnDrop`] says; the temporary `FERRY_HOME` is deleted after.
    fn drop(&mut self) {
        match self.on_drop {
            OnDrop::Kill => self.kill9(),
            OnDrop::Terminate => self.terminate(Duration::from_secs(10)),
        }
    }
}
