//! Test helpers: a real `ferry` queue manager process in a temporary `FERRY_HOME`.
//!
//! Integration tests talk to a real server over real sockets; this crate starts one
//! (through `ferry-launcher`, the launcher the performance harness uses too), tells the
//! test how to reach it (TCP connection name, bindings socket), runs `ferry` commands
//! against it, and kills it when the test ends, whatever happens. Its calls panic with
//! the reason when something fails: they are for tests.

use ferry_client::ConnectOptions;
use ferry_launcher::QueueManagerProcess;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

/// A queue manager process started for one test.
pub struct TestQueueManager {
    process: QueueManagerProcess,
}

/// A TCP port nobody listens on right now.
pub fn free_port() -> u16 {
    ferry_launcher::free_port().expect("no free port on loopback")
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
        let process = QueueManagerProcess::create(bin, name, ".tmp", create_args)
            .unwrap_or_else(|e| panic!("{e}"));
        TestQueueManager { process }
    }

    /// Creates queue manager `name` with MQ's security defaults, as `ferry create` makes
    /// it for a user (no test access records: SYSTEM.* channels closed to clients,
    /// administrators refused on client channels), without starting it.
    pub fn create_with_mq_defaults(bin: &Path, name: &str) -> Self {
        let process = QueueManagerProcess::create_with_access(
            bin,
            name,
            ".tmp",
            &[],
            ferry_launcher::Access::MqDefaults,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        TestQueueManager { process }
    }

    /// Turns object authority checks on for the next start (test queue managers are made
    /// without them, as MQ's MQSNOAUT=yes).
    pub fn check_authorities(&self) {
        self.process
            .check_authorities()
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Sets `key=value` in stanza `stanza` of qm.ini (adding the stanza or key when
    /// missing); read by the next [`launch`](TestQueueManager::launch).
    pub fn set_ini(&self, stanza: &str, key: &str, value: &str) {
        self.process
            .set_ini(stanza, key, value)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// Gives the server process an open-file limit of `n` (soft and hard) from its next
    /// [`launch`](TestQueueManager::launch), to test what happens when descriptors run out.
    pub fn set_open_file_limit(&mut self, n: u64) {
        self.process.set_open_file_limit(n);
    }

    /// Sets an environment variable for the server process from its next [`launch`]
    /// (`AMQ_IODELAY`...).
    ///
    /// [`launch`]: TestQueueManager::launch
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.process.set_env(key, value);
    }

    /// Starts the process (again) and waits until it accepts connections.
    pub fn launch(&mut self) {
        self.process
            .launch()
            .unwrap_or_else(|e| panic!("ferry did not start: {e}"));
    }

    /// The process's console output so far.
    pub fn console(&self) -> String {
        self.process.console()
    }

    /// The port of its AMQP channel SYSTEM.DEF.AMQP.
    pub fn amqp_port(&self) -> u16 {
        self.process.amqp_port()
    }

    /// Queue manager name.
    pub fn name(&self) -> &str {
        self.process.name()
    }

    /// The data root (FERRY_HOME).
    pub fn home(&self) -> &Path {
        self.process.home()
    }

    /// The queue manager's directory.
    pub fn qm_dir(&self) -> PathBuf {
        self.process.qm_dir()
    }

    /// The listener's port.
    pub fn port(&self) -> u16 {
        self.process.port()
    }

    /// `127.0.0.1(port)`.
    pub fn conname(&self) -> String {
        self.process.conname()
    }

    /// The server process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.pid()
    }

    /// Options for a client connection over TCP on SYSTEM.DEF.SVRCONN.
    pub fn client(&self) -> ConnectOptions {
        ConnectOptions::client(&self.conname(), "SYSTEM.DEF.SVRCONN").queue_manager(self.name())
    }

    /// Options for a bindings connection over the Unix socket.
    pub fn bindings(&self) -> ConnectOptions {
        ConnectOptions::bindings(self.process.bindings_socket()).queue_manager(self.name())
    }

    /// Runs `ferry ARGS` against this installation.
    pub fn ferry(&self, args: &[&str]) -> Output {
        self.process.ferry(args).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Starts `ferry ARGS` against this installation without waiting for it (stdout and
    /// stderr piped): for long-running commands such as `ferry trigmon`.
    pub fn ferry_spawn(&self, args: &[&str]) -> std::process::Child {
        self.process
            .ferry_command()
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run ferry")
    }

    /// Runs `ferry mqsc NAME` with `script` on stdin.
    pub fn mqsc(&self, script: &str) -> Output {
        let name = self.name().to_string();
        self.ferry_with_stdin(&["mqsc", &name], script)
    }

    /// Runs `ferry ARGS` with `input` on stdin.
    pub fn ferry_with_stdin(&self, args: &[&str], input: &str) -> Output {
        let mut child = self
            .process
            .ferry_command()
            .args(args)
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
        self.process.kill9();
    }

    /// Waits for the process to exit by itself (after `ferry stop`), at most `timeout`.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        self.process.wait_exit(timeout)
    }

    /// Reads the error log (FRYERR01.LOG).
    pub fn error_log(&self) -> String {
        std::fs::read_to_string(self.qm_dir().join("errors").join("FRYERR01.LOG"))
            .unwrap_or_default()
    }
}
