//! Test helpers: a real `ferry` queue manager process in a temporary `FERRY_HOME`.
//!
//! Integration tests talk to a real server over real sockets; this crate starts one
//! (`ferry create` + `ferry start --foreground` as a child process), tells the test how
//! to reach it (TCP connection name, bindings socket), runs `ferry` commands against it,
//! and kills it when the test ends, whatever happens.

use ferry_client::ConnectOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A queue manager process started for one test.
pub struct TestQueueManager {
    home: tempfile::TempDir,
    bin: PathBuf,
    name: String,
    port: u16,
    amqp_port: u16,
    child: Option<Child>,
    /// Environment the server process gets on top of FERRY_HOME and FERRY_LOG.
    env: Vec<(String, String)>,
    /// The server process's open-file limit (soft and hard), when a test sets one.
    open_file_limit: Option<u64>,
}

/// A TCP port nobody listens on right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port on loopback")
}

impl TestQueueManager {
    /// Creates and starts queue manager `name` with the `ferry` binary at `bin`.
    pub fn start(bin: &Path, name: &str) -> Self {
        Self::start_with(bin, name, &[])
    }

    /// Creates queue manager `name` with extra `ferry create` arguments (a log's shape:
    /// `--log-file-pages 64`...), then starts it.
    pub fn start_with(bin: &Path, name: &str, create_args: &[&str]) -> Self {
        let mut qm = Self::create_with(bin, name, create_args);
        qm.launch();
        qm
    }

    /// Creates queue manager `name` (with extra `ferry create` arguments) without starting
    /// it, so a test can edit its qm.ini ([`set_ini`]) or process limits first; then
    /// [`launch`] starts it.
    ///
    /// [`set_ini`]: TestQueueManager::set_ini
    /// [`launch`]: TestQueueManager::launch
    pub fn create_with(bin: &Path, name: &str, create_args: &[&str]) -> Self {
        let home = tempfile::tempdir().expect("temp dir");
        let port = free_port();
        let amqp_port = free_port();
        let qm = TestQueueManager {
            home,
            bin: bin.to_path_buf(),
            name: name.to_string(),
            port,
            amqp_port,
            child: None,
            env: Vec::new(),
            open_file_limit: None,
        };
        let (port_arg, amqp_arg) = (port.to_string(), amqp_port.to_string());
        let mut args = vec![
            "create",
            name,
            "--port",
            &port_arg,
            "--amqp-port",
            &amqp_arg,
        ];
        args.extend_from_slice(create_args);
        let out = qm.ferry(&args);
        assert!(
            out.status.success(),
            "ferry create failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        qm
    }

    /// Sets `key=value` in stanza `stanza` of qm.ini (adding the stanza or key when
    /// missing); read by the next [`launch`](TestQueueManager::launch).
    pub fn set_ini(&self, stanza: &str, key: &str, value: &str) {
        let path = self.qm_dir().join("qm.ini");
        let text = std::fs::read_to_string(&path).expect("qm.ini");
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let header = format!("{stanza}:");
        let start = match lines.iter().position(|l| l.trim() == header) {
            Some(i) => i,
            None => {
                lines.push(header);
                lines.len() - 1
            }
        };
        let end = lines[start + 1..]
            .iter()
            .position(|l| !l.starts_with([' ', '\t']) && !l.trim().is_empty())
            .map_or(lines.len(), |i| start + 1 + i);
        let entry = format!("   {key}={value}");
        match lines[start + 1..end]
            .iter()
            .position(|l| l.trim().split('=').next() == Some(key))
        {
            Some(i) => lines[start + 1 + i] = entry,
            None => lines.insert(end, entry),
        }
        std::fs::write(&path, lines.join("\n") + "\n").expect("write qm.ini");
    }

    /// Gives the server process an open-file limit of `n` (soft and hard) from its next
    /// [`launch`](TestQueueManager::launch), to test what happens when descriptors run out.
    pub fn set_open_file_limit(&mut self, n: u64) {
        self.open_file_limit = Some(n);
    }

    /// Sets an environment variable for the server process from its next [`launch`]
    /// (`AMQ_IODELAY`...).
    ///
    /// [`launch`]: TestQueueManager::launch
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_string(), value.to_string()));
    }

    /// Starts the process (again) and waits until it accepts connections.
    pub fn launch(&mut self) {
        assert!(self.child.is_none(), "already running");
        let log = std::fs::File::create(self.home.path().join(format!("{}.console", self.name)))
            .expect("console log");
        let mut command = Command::new(&self.bin);
        if let Some(n) = self.open_file_limit {
            use std::os::unix::process::CommandExt;
            // SAFETY: only setrlimit, which is async-signal-safe, runs in the child
            // between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let lim = libc::rlimit {
                        rlim_cur: n,
                        rlim_max: n,
                    };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) == 0 {
                        Ok(())
                    } else {
                        Err(std::io::Error::last_os_error())
                    }
                });
            }
        }
        let child = command
            .args(["start", &self.name, "--foreground"])
            .env("FERRY_HOME", self.home.path())
            .env("FERRY_LOG", "warn")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("console log"))
            .stderr(log)
            .spawn()
            .expect("spawn ferry start");
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = self.qm_dir().join("run").join("status.json");
        loop {
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(exit)) = child.try_wait() {
                    panic!("ferry exited during start ({exit}): {}", self.console());
                }
            }
            if let Ok(text) = std::fs::read(&status) {
                if let Ok(v) = serde_json::from_slice::<serde_json::Value>(&text) {
                    let pid_ok =
                        v["pid"].as_u64() == self.child.as_ref().map(|c| u64::from(c.id()));
                    if pid_ok && v["state"] == "Running" {
                        return;
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "ferry did not start: {}",
                self.console()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The process's console output so far.
    pub fn console(&self) -> String {
        std::fs::read_to_string(self.home.path().join(format!("{}.console", self.name)))
            .unwrap_or_default()
    }

    /// The port of its AMQP channel SYSTEM.DEF.AMQP.
    pub fn amqp_port(&self) -> u16 {
        self.amqp_port
    }

    /// Queue manager name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The data root (FERRY_HOME).
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// The queue manager's directory.
    pub fn qm_dir(&self) -> PathBuf {
        self.home.path().join("qmgrs").join(&self.name)
    }

    /// The listener's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `127.0.0.1(port)`.
    pub fn conname(&self) -> String {
        format!("127.0.0.1({})", self.port)
    }

    /// The server process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Options for a client connection over TCP on SYSTEM.DEF.SVRCONN.
    pub fn client(&self) -> ConnectOptions {
        ConnectOptions::client(&self.conname(), "SYSTEM.DEF.SVRCONN").queue_manager(&self.name)
    }

    /// Options for a bindings connection over the Unix socket.
    pub fn bindings(&self) -> ConnectOptions {
        ConnectOptions::bindings(self.qm_dir().join("qm.sock")).queue_manager(&self.name)
    }

    /// Runs `ferry ARGS` against this installation.
    pub fn ferry(&self, args: &[&str]) -> Output {
        Command::new(&self.bin)
            .args(args)
            .env("FERRY_HOME", self.home.path())
            .output()
            .expect("run ferry")
    }

    /// Runs `ferry mqsc NAME` with `script` on stdin.
    pub fn mqsc(&self, script: &str) -> Output {
        self.ferry_with_stdin(&["mqsc", &self.name], script)
    }

    /// Runs `ferry ARGS` with `input` on stdin.
    pub fn ferry_with_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut child = Command::new(&self.bin)
            .args(args)
            .env("FERRY_HOME", self.home.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run ferry");
        if let Some(mut stdin) = child.stdin.take() {
            // The command may end before reading its input (e.g. the queue manager is
            // not running): a broken pipe then is its answer, not the test's failure.
            match stdin.write_all(input.as_bytes()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    panic!("write stdin: {e}")
                }
                _ => {}
            }
        }
        child.wait_with_output().expect("ferry output")
    }

    /// Kills the process with SIGKILL, as a crash would, and reaps it.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Waits for the process to exit by itself (after `ferry stop`), at most `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
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

    /// Reads the error log (FRYERR01.LOG).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.qm_dir().join("errors").join("FRYERR01.LOG"))
            .unwrap_or_default()
    }
}

impl Drop for TestQueueManager {
    fn drop(&mut self) {
        self.kill9();
    }
}
