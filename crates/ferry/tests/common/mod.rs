//! Helpers shared by the integration test files: starting queue managers, connecting
//! over TCP or the bindings socket, MQSC output parsing, and a raw protocol speaker for
//! hand-built bytes.
//!
//! Every helper that waits does so against a generous deadline ([`DEADLINE`]) and
//! panics with a description when it passes, so a hang is a clear failure, never a
//! stuck test.

#![allow(dead_code)]

use std::future::Future;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use ferry_client::{ConnectOptions, Connection, GotMessage, Queue};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MessageDescriptor, MqError, ObjectDescriptor, OpenOptions,
    PutOptions, ReasonCode,
};
use ferry_wire::{decode_frame, max_frame_len, ClientHello, Frame, Reply, Request, ServerHello};

#[allow(unused_imports)]
pub use ferry_test_support::{free_port, TestQueueManager};

pub mod audited;
pub mod message_channels;
pub mod slapd;

/// How long anything may take before a test calls it a hang.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// The `ferry` binary under test.
pub fn bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_ferry"))
}

/// Creates and starts queue manager `name` (foreground child process, temp FERRY_HOME).
pub fn start(name: &str) -> TestQueueManager {
    TestQueueManager::start(bin(), name)
}

/// Creates queue manager `name`, sets `settings` (stanza, key, value) in its qm.ini, then
/// starts it: the first start already runs with them.
pub fn start_with_ini(name: &str, settings: &[(&str, &str, &str)]) -> TestQueueManager {
    let mut qm = TestQueueManager::create_with(bin(), name, &[]);
    for (stanza, key, value) in settings {
        qm.set_ini(stanza, key, value);
    }
    qm.launch();
    qm
}

/// [`start_with_ini`] for keys of the `Limits:` stanza (docs/operations.md).
pub fn start_with_limits(name: &str, limits: &[(&str, &str)]) -> TestQueueManager {
    let settings: Vec<(&str, &str, &str)> =
        limits.iter().map(|(k, v)| ("Limits", *k, *v)).collect();
    start_with_ini(name, &settings)
}

/// Stops `qm` with `ferry stop` (controlled) and waits for a clean exit.
pub fn stop_qm(qm: &mut TestQueueManager) {
    let out = qm.ferry(&["stop", qm.name()]);
    assert!(out.status.success(), "ferry stop: {}", stderr(&out));
    let exit = qm.wait_exit(DEADLINE).expect("the queue manager ended");
    assert!(exit.success(), "controlled stop exit: {exit}");
}

/// Creates and starts queue manager `name` with a small recovery log: `primary_files`
/// primary files (and the default 2 secondary ones) of `file_pages` 4 KiB pages each
/// (`ferry create --log-primary-files --log-file-pages`, crtmqm -lp -lf).
pub fn start_with_log(name: &str, primary_files: u32, file_pages: u32) -> TestQueueManager {
    TestQueueManager::start_with(
        bin(),
        name,
        &[
            "--log-primary-files",
            &primary_files.to_string(),
            "--log-file-pages",
            &file_pages.to_string(),
        ],
    )
}

/// Creates and starts `name` with a 1 MiB log (2 + 2 files of 64 pages), queues Q (deep)
/// and NPQ, and checkpoints that take at least 1.5 s to write their queue files
/// (FERRY_FAULT_CHECKPOINT_DELAY_MS, a slow disk): persistent puts of messages that stay
/// queued soon wait for log space.
pub fn start_with_slow_checkpoints(name: &str) -> TestQueueManager {
    let mut qm = start_with_log(name, 2, 64);
    mqsc_ok(
        &qm,
        "DEFINE QLOCAL(Q) MAXDEPTH(999999999)\nDEFINE QLOCAL(NPQ)",
    );
    stop_qm(&mut qm);
    qm.set_env("FERRY_FAULT_CHECKPOINT_DELAY_MS", "1500");
    qm.launch();
    qm
}

/// Asserts that a `what` waited for a slow checkpoint (its slowest call took `slowest`)
/// while another application's non-persistent put+get went on: its worst round trip of
/// `round_trips` took `worst`.
#[track_caller]
pub fn assert_waited_aside(what: &str, slowest: Duration, worst: Duration, round_trips: u32) {
    assert!(
        slowest >= Duration::from_millis(700),
        "a {what} waited for a slow checkpoint (else the test shows nothing): {slowest:?}"
    );
    assert!(
        worst < Duration::from_millis(500),
        "non-persistent put+get went on while a {what} waited {slowest:?}: worst {worst:?} \
         in {round_trips} round trips"
    );
}

/// The recovery log's directory (qm.ini LogPath) of `qm`.
pub fn log_dir(qm: &TestQueueManager) -> std::path::PathBuf {
    let ini = std::fs::read_to_string(qm.qm_dir().join("qm.ini")).expect("qm.ini");
    let path = ini
        .lines()
        .find_map(|l| l.trim().strip_prefix("LogPath="))
        .expect("qm.ini has a LogPath");
    std::path::PathBuf::from(path)
}

/// Awaits `f`, panicking with `what` if it takes longer than [`DEADLINE`].
pub async fn within<F: Future>(what: &str, f: F) -> F::Output {
    match tokio::time::timeout(DEADLINE, f).await {
        Ok(v) => v,
        Err(_) => panic!("timed out after {DEADLINE:?}: {what}"),
    }
}

/// Polls `cond` (a cheap check) until it holds, panicking with `what` at the deadline.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Async version of [`wait_until`] for conditions that need the client.
pub async fn wait_until_async<F, Fut>(what: &str, mut cond: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + DEADLINE;
    while !cond().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The two ways an application reaches a queue manager.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// Client connection over TCP loopback on SYSTEM.DEF.SVRCONN.
    Tcp,
    /// Local connection over the bindings Unix socket.
    Bindings,
}

impl Via {
    /// Connect options for `qm` over this transport.
    pub fn opts(self, qm: &TestQueueManager) -> ConnectOptions {
        match self {
            Via::Tcp => qm.client(),
            Via::Bindings => qm.bindings(),
        }
    }
}

/// Connects or panics.
pub async fn connect(opts: &ConnectOptions) -> Connection {
    within("connect", Connection::connect(opts))
        .await
        .unwrap_or_else(|e| panic!("connect {:?} failed: {e}", opts.target()))
}

/// Opens queue `name` or panics.
pub async fn open(conn: &Connection, name: &str, options: OpenOptions) -> Queue {
    try_open(conn, name, options)
        .await
        .unwrap_or_else(|e| panic!("open {name} {options:?} failed: {e}"))
}

/// Opens queue `name`.
pub async fn try_open(
    conn: &Connection,
    name: &str,
    options: OpenOptions,
) -> Result<Queue, MqError> {
    let od = ObjectDescriptor::queue(name).expect("valid queue name");
    within("open", conn.open(&od, options)).await
}

/// Puts `body` with a default descriptor outside syncpoint; returns the output descriptor.
pub async fn put(q: &Queue, body: &str) -> MessageDescriptor {
    let mut md = MessageDescriptor::default();
    put_md(q, &mut md, PutOptions::default(), body)
        .await
        .unwrap_or_else(|e| panic!("put to {} failed: {e}", q.name()));
    md
}

/// Puts `body` with `md` and `pmo`.
pub async fn put_md(
    q: &Queue,
    md: &mut MessageDescriptor,
    pmo: PutOptions,
    body: &str,
) -> Result<(), MqError> {
    within("put", q.put(md, &pmo, body.to_owned())).await
}

/// Get options with these flags (and WAIT's interval when given).
pub fn gmo(options: GetOptionFlags, wait_ms: i32) -> GetOptions {
    GetOptions {
        options,
        wait_interval: wait_ms,
        ..Default::default()
    }
}

/// Gets the next message (no wait, no match, outside syncpoint, 64 KiB buffer).
pub async fn get(q: &Queue) -> Result<(MessageDescriptor, GotMessage), MqError> {
    get_with(q, gmo(GetOptionFlags::NO_SYNCPOINT, 0)).await
}

/// Gets the next message with `gmo` (no match fields, 64 KiB buffer).
pub async fn get_with(
    q: &Queue,
    gmo: GetOptions,
) -> Result<(MessageDescriptor, GotMessage), MqError> {
    let mut md = MessageDescriptor::default();
    let got = within("get", q.get(&mut md, &gmo, 64 * 1024)).await?;
    Ok((md, got))
}

/// Gets the next message and returns its body as text, or panics.
pub async fn get_text(q: &Queue) -> String {
    let (_, got) = get(q)
        .await
        .unwrap_or_else(|e| panic!("get from {} failed: {e}", q.name()));
    String::from_utf8(got.data.to_vec()).expect("utf-8 body")
}

/// Asserts that `r` failed with `want`.
#[track_caller]
pub fn assert_reason<T: std::fmt::Debug>(r: Result<T, MqError>, want: ReasonCode) {
    match r {
        Err(e) => assert_eq!(e.reason, want, "expected {want}, got {e}"),
        Ok(v) => panic!("expected {want}, the call succeeded: {v:?}"),
    }
}

/// Runs an MQSC script, asserts exit 0, returns stdout.
#[track_caller]
pub fn mqsc_ok(qm: &TestQueueManager, script: &str) -> String {
    let out = qm.mqsc(script);
    let text = stdout(&out);
    assert!(
        out.status.success(),
        "mqsc failed ({}):\n{script}\n---\n{text}\n{}",
        out.status,
        stderr(&out)
    );
    text
}

/// Runs `ferry ARGS` in `qm`'s FERRY_HOME, asserting success; returns stdout.
#[track_caller]
pub fn ferry_ok(qm: &TestQueueManager, args: &[&str]) -> String {
    let out = qm.ferry(args);
    assert!(
        out.status.success(),
        "ferry {args:?} failed ({}): {}{}",
        out.status,
        stdout(&out),
        stderr(&out)
    );
    stdout(&out)
}

/// stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// True for runmqsc's echo of a command line (`     1 : DISPLAY ...`, `       : ...`).
fn is_echo(line: &str) -> bool {
    let t = line
        .trim_start()
        .trim_start_matches(|c: char| c.is_ascii_digit());
    t.trim_start().starts_with(": ")
}

/// Every value of `KEY(value)` in MQSC (or `ferry status`) output, in order. Matches
/// whole keywords only (`DEPTH` does not match `CURDEPTH`) and skips the echoed commands.
pub fn attrs(text: &str, key: &str) -> Vec<String> {
    let pat = format!("{key}(");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !is_echo(l)) {
        let mut from = 0;
        while let Some(pos) = line[from..].find(&pat) {
            let at = from + pos;
            let starts_word = line[..at]
                .chars()
                .next_back()
                .is_none_or(char::is_whitespace);
            let rest = &line[at + pat.len()..];
            let Some(end) = rest.find(')') else { break };
            if starts_word {
                out.push(rest[..end].trim().to_string());
            }
            from = at + pat.len() + end;
        }
    }
    out
}

/// The value of the first `KEY(value)` in MQSC output (`None` when absent).
pub fn attr(text: &str, key: &str) -> Option<String> {
    attrs(text, key).into_iter().next()
}

/// CURDEPTH of local queue `q` as DISPLAY QLOCAL shows it.
#[track_caller]
pub fn curdepth(qm: &TestQueueManager, q: &str) -> i64 {
    let text = mqsc_ok(qm, &format!("DISPLAY QLOCAL({q}) CURDEPTH"));
    attr(&text, "CURDEPTH")
        .unwrap_or_else(|| panic!("no CURDEPTH in {text}"))
        .parse()
        .expect("CURDEPTH is a number")
}

/// Queue manager directory of `name` in `qm`'s FERRY_HOME.
pub fn qm_dir_in(qm: &TestQueueManager, name: &str) -> PathBuf {
    qm.home().join("qmgrs").join(name)
}

/// A queue manager started in the background (`ferry start`, not a child of the test)
/// inside another test queue manager's FERRY_HOME. Drop kills it if it still runs.
pub struct BackgroundQm {
    pub dir: PathBuf,
}

impl BackgroundQm {
    /// The pid the running process wrote, if the process is alive.
    pub fn pid(&self) -> Option<i32> {
        let text = std::fs::read_to_string(self.dir.join("run").join("qm.pid")).ok()?;
        let pid: i32 = text.trim().parse().ok()?;
        alive(pid).then_some(pid)
    }
}

impl Drop for BackgroundQm {
    fn drop(&mut self) {
        if let Some(pid) = self.pid() {
            // SAFETY: a pid this test's own `ferry start` wrote; SIGKILL as cleanup.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
}

/// True while process `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !matches!(
            stat.rsplit(')')
                .next()
                .and_then(|s| s.split_whitespace().next()),
            Some("Z" | "X")
        ),
        Err(_) => false,
    }
}

/// A byte stream to a queue manager that the test drives by hand.
pub trait Stream: Read + Write + Send {
    /// Half-closes the sending side.
    fn shutdown_write(&self);
}

impl Stream for std::net::TcpStream {
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

impl Stream for std::os::unix::net::UnixStream {
    fn shutdown_write(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// A raw protocol speaker: hand-built hellos and frames over a real socket.
pub struct Raw {
    pub stream: Box<dyn Stream>,
    buf: BytesMut,
    pub max_frame: u32,
    /// The protocol minor the hello agreed (requests are laid out for it).
    pub minor: u16,
}

impl Raw {
    /// A TCP connection to `qm`'s listener (no hello sent yet).
    pub fn tcp(qm: &TestQueueManager) -> Raw {
        let s = std::net::TcpStream::connect(("127.0.0.1", qm.port())).expect("tcp connect");
        s.set_read_timeout(Some(DEADLINE)).expect("timeout");
        s.set_nodelay(true).expect("nodelay");
        Raw::new(Box::new(s))
    }

    /// A connection to `qm`'s bindings socket (no hello sent yet).
    pub fn unix(qm: &TestQueueManager) -> Raw {
        let s = std::os::unix::net::UnixStream::connect(qm.qm_dir().join("qm.sock"))
            .expect("unix connect");
        s.set_read_timeout(Some(DEADLINE)).expect("timeout");
        Raw::new(Box::new(s))
    }

    fn new(stream: Box<dyn Stream>) -> Raw {
        Raw {
            stream,
            buf: BytesMut::new(),
            max_frame: max_frame_len(ferry_wire::handshake::DEFAULT_MAX_MSG_LENGTH),
            minor: ferry_wire::PROTOCOL_MINOR,
        }
    }

    /// Sends a client hello for `channel` (blank on bindings) with `max_msg_length`
    /// and reads the server's answer.
    pub fn hello(&mut self, channel: &str, max_msg_length: u32) -> ServerHello {
        self.hello_with_heartbeat(channel, max_msg_length, 0)
    }

    /// As [`Raw::hello`], asking for heartbeats every `heartbeat_secs` (0: none).
    pub fn hello_with_heartbeat(
        &mut self,
        channel: &str,
        max_msg_length: u32,
        heartbeat_secs: u32,
    ) -> ServerHello {
        self.send_hello(ClientHello {
            channel: ferry_mqi::FixedStr::new(channel).expect("channel name"),
            max_msg_length,
            heartbeat_interval: heartbeat_secs,
            ..ClientHello::default()
        })
    }

    /// As [`Raw::hello`], as a client of protocol minor `minor` (an older client).
    pub fn hello_at_minor(&mut self, channel: &str, minor: u16) -> ServerHello {
        self.send_hello(ClientHello {
            channel: ferry_mqi::FixedStr::new(channel).expect("channel name"),
            minor,
            ..ClientHello::default()
        })
    }

    /// Sends `hello` and reads the server's answer.
    pub fn send_hello(&mut self, hello: ClientHello) -> ServerHello {
        let mut out = BytesMut::new();
        hello.encode(&mut out).expect("encode hello");
        self.send_bytes(&out);
        let answer = loop {
            if let Some(h) = ServerHello::decode(&mut self.buf).expect("server hello decodes") {
                break h;
            }
            assert!(self.fill(), "server closed before answering the hello");
        };
        self.max_frame = max_frame_len(answer.max_msg_length);
        if answer.status.reason == ReasonCode::None {
            self.minor = answer.minor;
        }
        answer
    }

    /// Opens conversation `conv` (CONN, request id 1) on a greeted socket, asserting
    /// it is accepted.
    pub fn open_conversation(&mut self, conv: u32) {
        let reply = self.call(conv, 1, &Request::Conn(Default::default()));
        assert_eq!(reply.status().reason, ReasonCode::None, "CONN: {reply:?}");
    }

    /// Writes raw bytes.
    pub fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).expect("write");
        self.stream.flush().expect("flush");
    }

    /// Encodes and writes one request frame, laid out for the minor the hello agreed.
    pub fn send(&mut self, conv: u32, rid: u32, req: &Request) {
        let mut out = BytesMut::new();
        ferry_wire::encode_request_at(conv, rid, req, self.minor, &mut out).expect("encode");
        self.send_bytes(&out);
    }

    /// Reads more bytes; false at EOF (or a reset, which is an end too).
    fn fill(&mut self) -> bool {
        let mut chunk = [0u8; 8192];
        match self.stream.read(&mut chunk) {
            Ok(0) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                panic!("no data from the server within {DEADLINE:?}")
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                panic!("no data from the server within {DEADLINE:?}")
            }
            Err(_) => false,
        }
    }

    /// The next frame, or `None` when the server closed the socket.
    pub fn read_frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(f) = decode_frame(&mut self.buf, self.max_frame).expect("server frame") {
                return Some(f);
            }
            if !self.fill() {
                return None;
            }
        }
    }

    /// Sends a request (laid out for the minor the hello agreed) and returns the reply with
    /// the same conversation and request id.
    pub fn call(&mut self, conv: u32, rid: u32, req: &Request) -> Reply {
        self.call_at(conv, rid, req, self.minor)
    }

    /// As [`Raw::call`], the request laid out for protocol minor `minor`.
    pub fn call_at(&mut self, conv: u32, rid: u32, req: &Request, minor: u16) -> Reply {
        let mut out = BytesMut::new();
        ferry_wire::encode_request_at(conv, rid, req, minor, &mut out).expect("encode");
        self.send_bytes(&out);
        loop {
            let f = self
                .read_frame()
                .unwrap_or_else(|| panic!("socket closed before the reply to {req:?}"));
            if f.conversation == conv && f.request_id == rid && f.is_reply() {
                return Reply::decode(&f).expect("reply decodes");
            }
        }
    }

    /// Reads until the server closes the socket; returns the frames that came.
    pub fn read_to_eof(&mut self) -> Vec<Frame> {
        let mut frames = Vec::new();
        while let Some(f) = self.read_frame() {
            frames.push(f);
        }
        frames
    }

    /// Reads until EOF, ignoring whatever arrives (also bytes that are not frames).
    pub fn drain_to_eof(&mut self) {
        self.buf.clear();
        while self.fill() {
            self.buf.clear();
        }
    }
}

/// A small deterministic PRNG (xorshift64*) for generated inputs.
pub struct Rng(u64);

impl Rng {
    /// Seeded generator (seed 0 is replaced).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// Runs an MQSC script expected to exit with `code` (runmqsc's 0, 10 or 20); returns stdout.
#[track_caller]
pub fn mqsc_exit(qm: &TestQueueManager, script: &str, code: i32) -> String {
    let out = qm.mqsc(script);
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit status of:\n{script}\n---\n{text}{}",
        stderr(&out)
    );
    text
}

/// A small tmpfs mounted over a directory for one test: a real file system that fills up
/// (ENOSPC from the kernel, not an injected error). Unmounted when dropped.
pub struct SmallDisk(PathBuf);

impl SmallDisk {
    /// Mounts a tmpfs of `size` (mount's syntax: `4m`) at `dir`; `Err` says why not (the
    /// test then cannot run: mounting needs root, which CI has).
    pub fn mount(dir: &Path, size: &str) -> Result<SmallDisk, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("mount: {e}"))?;
        if out.status.success() {
            Ok(SmallDisk(dir.to_path_buf()))
        } else {
            Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
        }
    }

    /// Grows the file system to `size`, as an administrator frees or adds space.
    pub fn grow(&self, size: &str) {
        let out = std::process::Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .output()
            .expect("mount -o remount");
        assert!(out.status.success(), "remount: {out:?}");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .output();
    }
}

/// How many times message `id` (e.g. `FRY9504E`) was reported in error-log text `log`:
/// the entries written plus the repeats counted in FRY7185W summaries
/// ("FRY9504E repeated 1,234 times in the last 30 s"). Summaries come when the
/// suppression interval ends or the queue manager stops.
pub fn error_log_accounted(log: &str, id: &str) -> u64 {
    let written = log.matches(&format!("{id}: ")).count() as u64;
    let marker = format!("{id} repeated ");
    let counted: u64 = log
        .match_indices(&marker)
        .map(|(i, _)| {
            let number: String = log[i + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == ',')
                .filter(char::is_ascii_digit)
                .collect();
            number.parse::<u64>().unwrap_or(0)
        })
        .sum();
    written + counted
}

/// `SCHED_OTHER`, the system's default policy, as [`thread_policies`] reads it.
pub const SCHED_OTHER: u32 = 0;
/// `SCHED_BATCH`, as [`thread_policies`] reads it.
pub const SCHED_BATCH: u32 = 3;

/// The scheduling policy of a thread of a running process (field 41 of its stat file:
/// 0 SCHED_OTHER, 3 SCHED_BATCH), by thread name.
pub fn thread_policies(pid: u32) -> Vec<(String, u32)> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap();
        let stat = std::fs::read_to_string(dir.join("stat")).unwrap();
        // The name in parentheses may hold spaces: count fields after its closing one.
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let policy = after.split(' ').nth(41 - 3).unwrap().parse().unwrap();
        let tid: u32 = dir.file_name().unwrap().to_str().unwrap().parse().unwrap();
        let name = if tid == pid {
            "runtime".to_string()
        } else {
            comm.trim().to_string()
        };
        out.push((name, policy));
    }
    out.sort();
    out
}
