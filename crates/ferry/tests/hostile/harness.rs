//! The probe harness: a real `ferry` server per probe, its memory and file descriptors
//! watched from /proc while the abuse runs, well-behaved clients doing round trips
//! meanwhile, and one summary line per probe.
//!
//! A probe is written as
//!
//! ```text
//! let mut p = Probe::start(Setup::new("NAME").mqsc("DEFINE QLOCAL(Q)"));
//! p.abusing(connections, PER_CONNECTION_KIB);   // the documented bound for this probe
//! ... the abuse, against p.qm ...
//! p.wait_fds_back("what the server's time limit should close", within);
//! p.finish();                                      // summary line; panics on any failure
//! ```
//!
//! Every check is recorded, not asserted at once, so the summary line is printed for a
//! failing probe too and one run shows every way a probe fails. [`Probe::finish`] then
//! panics with all of them (what was expected, what was seen).
//!
//! Probes run one at a time ([`serial`]): each opens hundreds or thousands of sockets
//! and the good clients' round-trip bound must measure the server, not the other probes.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ferry_client::{Connection, Queue};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
    PutOptions,
};

use super::amqp_peer::AmqpPeer;
use crate::common::{self, TestQueueManager};

/// The bound issue 18 sets: a well-behaved client keeps getting answers within a second
/// while any probe runs.
pub const GOOD_ROUND_TRIP_BOUND: Duration = Duration::from_secs(1);

/// How long a good client waits for one round trip before recording it as unanswered.
/// Anything past [`GOOD_ROUND_TRIP_BOUND`] fails the probe already; this only bounds how
/// long a probe against a frozen server takes.
pub const GIVE_UP: Duration = Duration::from_secs(5);

/// How often a good client with `reconnect` also makes a fresh connection (a new socket,
/// handshake and connect), as a new application would.
const FRESH_CONNECT_EVERY: Duration = Duration::from_millis(500);

/// RSS the server may gain during any probe on top of its per-connection bound: what is
/// not one connection's (the allocator's arenas, tokio's structures, the good clients'
/// fresh connections, buffers of the logs). 32 MiB is small next to what issue 18 reports
/// (1.1 MB per socket, 25 MB per selector) and large enough not to flag a debug build's
/// noise.
pub const RSS_SLACK_KIB: u64 = 32 * 1024;

/// RSS the server may still hold over its baseline once a probe's connections are gone
/// (checked for up to 5 s): what a hostile client made it allocate must go back to the
/// system, or a small machine stays short after every flood. (mimalloc keeps freed pages
/// until asked: the server gives memory back after spills today, not yet after a burst of
/// connections ends.)
pub const RSS_AFTER_SLACK_KIB: u64 = 32 * 1024;

/// Open file descriptors the server may hold over its baseline once a probe's connections
/// are gone (a log file opened by rotation, a socket still closing).
pub const FD_AFTER_SLACK: usize = 8;

/// Bytes the server may write to its logs (error log, console) per bad connection, on top
/// of [`LOG_SLACK_BYTES`]: issue 18 asks that repeated messages be suppressed with a count,
/// so a flood of bad connections writes a bounded number of lines, not one or two
/// (~170-550 bytes) per connection.
pub const LOG_BYTES_PER_BAD_CONNECTION: u64 = 8;

/// Log bytes any probe may cause whatever its size: the first few messages of each kind
/// and the "repeated N times" summaries.
pub const LOG_SLACK_BYTES: u64 = 16 * 1024;

/// The watchdog: a server whose RSS grows past this over its baseline is killed, so a
/// probe against a weak server cannot take the (shared) machine's memory. The probe then
/// fails, saying so.
fn rss_hard_cap_kib() -> u64 {
    match scale() {
        Scale::Short => 1536 * 1024,
        Scale::Long => 4096 * 1024,
    }
}

/// How big a run is: `cargo test` runs the short form (the whole suite in well under
/// two minutes in a debug build); `FERRY_HOSTILE_SCALE=long` (scripts/hostile.sh, release
/// build) thousands of sockets and longer stalls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// The form `cargo test` runs.
    Short,
    /// The form scripts/hostile.sh runs.
    Long,
}

/// The scale chosen by `FERRY_HOSTILE_SCALE`.
pub fn scale() -> Scale {
    match std::env::var("FERRY_HOSTILE_SCALE").as_deref() {
        Ok("long") => Scale::Long,
        _ => Scale::Short,
    }
}

/// `short` in the short form, `long` in the long one.
pub fn scaled<T>(short: T, long: T) -> T {
    match scale() {
        Scale::Short => short,
        Scale::Long => long,
    }
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Holds the suite's one probe slot: probes run one after another.
pub fn serial() -> MutexGuard<'static, ()> {
    // A probe that failed poisoned the lock; the next one still runs.
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The server's resident memory in KiB (VmRSS), if it still runs.
pub fn rss_kib(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The server's open file descriptors other than its queue files, if it still runs.
///
/// Queue files follow what is stored on the queues (a probe that leaves messages behind
/// says so with `retains`), not the connections: a receiver that never reads makes the
/// queue spill into more of them, and they stay open after the connection is gone. What
/// the probes judge is what connections hold: sockets, timers, logs.
pub fn fd_count(pid: i32) -> Option<usize> {
    let entries = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    Some(
        entries
            .flatten()
            .filter(|e| {
                std::fs::read_link(e.path())
                    .map(|t| !t.to_string_lossy().contains("/queues/"))
                    .unwrap_or(true)
            })
            .count(),
    )
}

/// Raises this process's soft descriptor limit to its hard limit (the probes hold
/// thousands of sockets); returns the limit now in force.
pub fn raise_own_nofile() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on this process with a valid rlimit struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                return raised.rlim_cur;
            }
        }
    }
    lim.rlim_cur
}

/// What the server's open descriptors are, counted by kind (socket, pipe, anon_inode,
/// or the directory of a file), for failure messages.
pub fn fd_kinds(pid: i32) -> String {
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for e in dir.flatten() {
            let target = std::fs::read_link(e.path())
                .map(|t| t.display().to_string())
                .unwrap_or_default();
            let kind = match target.split_once(':') {
                Some((k, _)) if !target.starts_with('/') => k.to_string(),
                _ => Path::new(&target)
                    .parent()
                    .and_then(|d| d.file_name())
                    .map_or(target.clone(), |d| format!("{}/", d.to_string_lossy())),
            };
            *kinds.entry(kind).or_default() += 1;
        }
    }
    let mut v: Vec<_> = kinds.into_iter().collect();
    v.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    v.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn ms(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}

/// How to start a probe's server.
pub struct Setup {
    name: String,
    ini: Vec<(&'static str, u64)>,
    mqsc: Vec<String>,
    nofile: Option<u64>,
    reconnect: bool,
}

impl Setup {
    /// Queue manager `name`, with the probes' short time limits (HandshakeTimeout and
    /// PartialFrameTimeout of [`SHORT_TIME_LIMIT_SECS`]) so stalls end quickly.
    pub fn new(name: &str) -> Setup {
        Setup {
            name: name.to_string(),
            ini: vec![
                ("HandshakeTimeout", SHORT_TIME_LIMIT_SECS),
                ("PartialFrameTimeout", SHORT_TIME_LIMIT_SECS),
            ],
            mqsc: Vec::new(),
            nofile: None,
            reconnect: true,
        }
    }

    /// Sets a qm.ini key (in whichever stanza `ferry create` writes it: `Limits:`
    /// `HandshakeTimeout`, `Channels:` `MaxChannels`...) before the first start. A key
    /// this server's `ferry create` does not write is not set: the server runs without
    /// that limit, and the probe notes it.
    pub fn ini(mut self, key: &'static str, value: u64) -> Setup {
        self.ini.retain(|(k, _)| *k != key);
        self.ini.push((key, value));
        self
    }

    /// Allows `n` native client sockets (qm.ini MaxChannels and MaxActiveChannels, and
    /// the SVRCONN channel's MAXINST and MAXINSTC), for probes whose hostile sockets are
    /// connected channels: those limits are not what they probe, and the good clients'
    /// fresh connections must not be refused for them.
    pub fn max_channels(self, n: u64) -> Setup {
        self.ini("MaxChannels", n)
            .ini("MaxActiveChannels", n)
            .mqsc(&format!(
                "ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) MAXINST({n}) MAXINSTC({n})"
            ))
    }

    /// Allows `n` connections on the AMQP channel (its MAXINST and MAXINSTC), for probes
    /// that open more than its default of 1000: MAXINST is not what they probe.
    pub fn amqp_instances(self, n: u64) -> Setup {
        self.mqsc(&format!(
            "ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) MAXINST({n}) MAXINSTC({n})"
        ))
    }

    /// An MQSC command run once the server is up.
    pub fn mqsc(mut self, command: &str) -> Setup {
        self.mqsc.push(command.to_string());
        self
    }

    /// Starts the server with this file-descriptor limit (RLIMIT_NOFILE, soft and hard).
    pub fn nofile(mut self, n: u64) -> Setup {
        self.nofile = Some(n);
        self
    }

    /// Whether the good clients also make fresh connections during the probe (default
    /// yes). A probe that fills MaxConnections on purpose turns it off: a refusal is then
    /// the documented answer.
    pub fn fresh_connections(mut self, yes: bool) -> Setup {
        self.reconnect = yes;
        self
    }
}

/// The time limits (seconds) probes run with, so a stall is cut off within seconds.
pub const SHORT_TIME_LIMIT_SECS: u64 = 2;

/// The queue the good native client uses.
pub const GOOD_NATIVE_Q: &str = "GOOD.NATIVE";
/// The queue the good AMQP client uses.
pub const GOOD_AMQP_Q: &str = "GOOD.AMQP";

/// Writes a wrapper around the `ferry` binary that applies `setup`'s qm.ini keys right
/// after `ferry create` (before the first start) and starts the server with its
/// file-descriptor limit. ferry-test-support starts the server from the binary it is
/// given and exec keeps the pid, so the probe measures the server itself.
fn wrapper(dir: &Path, setup: &Setup) -> PathBuf {
    let real = common::bin();
    let mut edits = String::new();
    for (key, value) in &setup.ini {
        let _ = write!(edits, " -e 's/^\\([[:space:]]*{key}=\\).*$/\\1{value}/'");
    }
    let mut script = String::from("#!/bin/sh\n");
    if let Some(n) = setup.nofile {
        let _ = writeln!(script, "ulimit -n {n} || exit 70");
    }
    let _ = writeln!(
        script,
        "if [ \"$1\" = create ]; then\n  \"{real}\" \"$@\" || exit $?\n  {sed}\n  exit $?\nfi\nexec \"{real}\" \"$@\"",
        real = real.display(),
        sed = if edits.is_empty() {
            "true".to_string()
        } else {
            format!("sed -i{edits} \"$FERRY_HOME/qmgrs/$2/qm.ini\"")
        },
    );
    let path = dir.join("ferry");
    std::fs::write(&path, script).expect("write the ferry wrapper");
    let mut perm = std::fs::metadata(&path).expect("wrapper").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&path, perm).expect("chmod the wrapper");
    path
}

/// Sizes of every log the server writes: its error logs, its console (foreground
/// output), run/console.log.
fn log_bytes(qm: &TestQueueManager) -> u64 {
    let mut total = 0;
    if let Ok(dir) = std::fs::read_dir(qm.qm_dir().join("errors")) {
        for e in dir.flatten() {
            total += e.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    for p in [
        qm.qm_dir().join("run").join("console.log"),
        qm.home().join(format!("{}.console", qm.name())),
    ] {
        total += std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
    }
    total
}

/// The message ids in the error log and the console's last line, most frequent first,
/// for failure messages.
fn log_contents(qm: &TestQueueManager) -> String {
    let mut ids = std::collections::BTreeMap::<String, usize>::new();
    let text = qm.error_log();
    for word in text.split(|c: char| !c.is_ascii_alphanumeric()) {
        if word.len() == 8 && word.starts_with("FRY") {
            *ids.entry(word.to_string()).or_default() += 1;
        }
    }
    let mut v: Vec<_> = ids.into_iter().collect();
    v.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    let console = qm.console();
    let last = console
        .lines()
        .last()
        .unwrap_or("")
        .chars()
        .take(160)
        .collect::<String>();
    format!(
        "error log: {}; console: {} bytes, last line {last:?}",
        v.iter()
            .take(4)
            .map(|(id, n)| format!("{id} x{n}"))
            .collect::<Vec<_>>()
            .join(", "),
        console.len()
    )
}

/// What the sampler thread saw.
#[derive(Default)]
struct Samples {
    max_rss_kib: AtomicU64,
    max_fds: AtomicU64,
    killed_at_kib: AtomicU64,
}

/// One probe: its server, its measurements and its findings.
pub struct Probe {
    /// The probe's name, as the summary line shows it.
    name: String,
    /// The server under attack.
    pub qm: TestQueueManager,
    pid: i32,
    base_rss_kib: u64,
    base_fds: usize,
    base_log: u64,
    samples: Arc<Samples>,
    sampling: Arc<AtomicBool>,
    sampler: Option<JoinHandle<()>>,
    good: Option<GoodClients>,
    failures: Vec<String>,
    notes: Vec<String>,
    connections: usize,
    per_connection_kib: u64,
    bad_connections: u64,
    retained_kib: u64,
    started: Instant,
    _wrapper_dir: tempfile::TempDir,
}

impl Probe {
    /// Starts the server as `setup` says, defines the good clients' queues, starts the
    /// good clients and the sampler, and takes the baseline.
    pub fn start(setup: Setup) -> Probe {
        raise_own_nofile();
        let dir = tempfile::tempdir().expect("temp dir");
        let bin = wrapper(dir.path(), &setup);
        let qm = TestQueueManager::start_with(&bin, &setup.name, &[]);
        let mut notes = Vec::new();
        let ini = std::fs::read_to_string(qm.qm_dir().join("qm.ini")).unwrap_or_default();
        for (key, value) in &setup.ini {
            let line = format!("{key}={value}");
            if !ini.lines().any(|l| l.trim() == line) {
                notes.push(format!(
                    "qm.ini has no {key}: this server runs without that limit"
                ));
            }
        }
        let mut script = format!("DEFINE QLOCAL({GOOD_NATIVE_Q})\nDEFINE QLOCAL({GOOD_AMQP_Q})\n");
        for c in &setup.mqsc {
            script.push_str(c);
            script.push('\n');
        }
        common::mqsc_ok(&qm, &script);
        let pid = qm.pid().expect("the probe started the server") as i32;
        let good = GoodClients::start(&qm, setup.reconnect);
        // The baseline includes the good clients' own connections.
        std::thread::sleep(Duration::from_millis(300));
        let base_rss_kib = rss_kib(pid).expect("the server runs");
        let base_fds = fd_count(pid).expect("the server runs");
        let samples = Arc::new(Samples::default());
        samples.max_rss_kib.store(base_rss_kib, Ordering::Relaxed);
        samples.max_fds.store(base_fds as u64, Ordering::Relaxed);
        let sampling = Arc::new(AtomicBool::new(true));
        let sampler = {
            let (samples, sampling) = (samples.clone(), sampling.clone());
            let cap = base_rss_kib + rss_hard_cap_kib();
            std::thread::spawn(move || sample(pid, cap, &samples, &sampling))
        };
        let base_log = log_bytes(&qm);
        Probe {
            name: setup.name,
            qm,
            pid,
            base_rss_kib,
            base_fds,
            base_log,
            samples,
            sampling,
            sampler: Some(sampler),
            good: Some(good),
            failures: Vec::new(),
            notes,
            connections: 0,
            per_connection_kib: 0,
            bad_connections: 0,
            retained_kib: 0,
            started: Instant::now(),
            _wrapper_dir: dir,
        }
    }

    /// Takes the baseline again, after a probe's legitimate set-up (a queue filled before
    /// the abuse begins), so only the abuse is judged against its bounds.
    pub fn rebaseline(&mut self) {
        self.base_rss_kib = rss_kib(self.pid).expect("the server runs");
        self.base_fds = fd_count(self.pid).expect("the server runs");
        self.samples
            .max_rss_kib
            .store(self.base_rss_kib, Ordering::Relaxed);
        self.samples
            .max_fds
            .store(self.base_fds as u64, Ordering::Relaxed);
    }

    /// Says what the probe does to the server: `connections` hostile connections, each
    /// allowed `per_connection_kib` of the server's memory while it lasts (the probe's
    /// documented bound).
    pub fn abusing(&mut self, connections: usize, per_connection_kib: u64) {
        self.connections = connections;
        self.per_connection_kib = per_connection_kib;
    }

    /// Counts `n` connections as bad (protocol errors, stalls): each may add at most
    /// [`LOG_BYTES_PER_BAD_CONNECTION`] to the logs.
    pub fn bad_connections(&mut self, n: u64) {
        self.bad_connections += n;
    }

    /// Memory the server legitimately keeps after the probe (what the probe defined or
    /// queued), allowed on top of [`RSS_AFTER_SLACK_KIB`].
    pub fn retains(&mut self, kib: u64) {
        self.retained_kib += kib;
    }

    /// Records a failure unless `ok`.
    pub fn check(&mut self, ok: bool, failure: impl FnOnce() -> String) {
        if !ok {
            self.failures.push(failure());
        }
    }

    /// Records a failure.
    pub fn fail(&mut self, failure: String) {
        self.failures.push(failure);
    }

    /// Adds a note to the summary (a fact, not a failure).
    pub fn note(&mut self, note: String) {
        self.notes.push(note);
    }

    /// The server's open descriptors now.
    pub fn fds(&self) -> usize {
        fd_count(self.pid).unwrap_or(0)
    }

    /// The server's RSS now (KiB).
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.pid).unwrap_or(0)
    }

    /// Waits (at most 3 s) until the server has accepted about `expected` of the hostile
    /// sockets (its descriptors up by 90% of them), so that a time limit is judged on
    /// sockets the server holds, not on ones still in the kernel's listen queue.
    pub fn wait_accepted(&mut self, expected: usize) {
        let want = self.base_fds + expected * 9 / 10;
        let began = Instant::now();
        let mut seen = self.fds();
        while seen < want && began.elapsed() < Duration::from_secs(3) {
            std::thread::sleep(Duration::from_millis(20));
            seen = seen.max(self.fds());
        }
        self.notes.push(format!(
            "the server held {} descriptors over its baseline {} ms after the hostile sockets \
             were opened ({expected} expected)",
            seen.saturating_sub(self.base_fds),
            began.elapsed().as_millis()
        ));
    }

    /// Waits until the server has closed every socket in `sockets` (a read on our end
    /// sees EOF or a reset; what it sent before is read and dropped), at most `within`;
    /// records a failure naming `what` (the limit that should have closed them) for
    /// those still open.
    pub fn wait_closed_by_server(
        &mut self,
        what: &str,
        sockets: &mut [std::net::TcpStream],
        within: Duration,
    ) {
        use std::io::Read as _;
        let began = Instant::now();
        let mut open: Vec<bool> = sockets
            .iter()
            .map(|s| s.set_nonblocking(true).is_ok())
            .collect();
        let mut chunk = [0u8; 4096];
        loop {
            for (s, open) in sockets.iter_mut().zip(open.iter_mut()) {
                while *open {
                    match s.read(&mut chunk) {
                        Ok(0) => *open = false,
                        Ok(_) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                        Err(_) => *open = false,
                    }
                }
            }
            let still = open.iter().filter(|o| **o).count();
            if still == 0 {
                self.notes.push(format!(
                    "{what}: all {} sockets closed by the server after {}",
                    sockets.len(),
                    ms(began.elapsed())
                ));
                return;
            }
            if began.elapsed() >= within || rss_kib(self.pid).is_none() {
                self.failures.push(format!(
                    "{what}: expected the server to close all {} sockets within {within:?}, \
                     {still} still open",
                    sockets.len()
                ));
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the server's descriptors are back within [`FD_AFTER_SLACK`] of the
    /// baseline, at most `within`; records a failure naming `what` (the limit that should
    /// have closed them) if they are not.
    pub fn wait_fds_back(&mut self, what: &str, within: Duration) -> bool {
        let began = Instant::now();
        let deadline = began + within;
        loop {
            let fds = self.fds();
            if fds <= self.base_fds + FD_AFTER_SLACK {
                self.notes
                    .push(format!("{what}: fds back after {}", ms(began.elapsed())));
                return true;
            }
            if Instant::now() >= deadline || rss_kib(self.pid).is_none() {
                self.failures.push(format!(
                    "{what}: expected the server's open descriptors back within {FD_AFTER_SLACK} of \
                     its baseline {} within {within:?}, saw {fds} ({})",
                    self.base_fds,
                    fd_kinds(self.pid)
                ));
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Ends the probe: stops the good clients and the sampler, checks every bound,
    /// prints the summary line (and appends it to target/tmp/hostile-summary.txt), and
    /// panics with every failure recorded.
    pub fn finish(mut self) {
        let reports = self.good.take().map(GoodClients::stop).unwrap_or_default();
        let alive = rss_kib(self.pid).is_some();
        // Memory the server gave back once the abuse is over (the allocator returns it
        // within a few seconds at most).
        let rss_bound_after = self.base_rss_kib + RSS_AFTER_SLACK_KIB + self.retained_kib;
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut rss_after = self.rss_kib();
        while alive && rss_after > rss_bound_after && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(100));
            rss_after = self.rss_kib();
        }
        self.sampling.store(false, Ordering::Release);
        if let Some(h) = self.sampler.take() {
            let _ = h.join();
        }
        let fds_after = self.fds();
        let max_rss = self.samples.max_rss_kib.load(Ordering::Relaxed);
        let max_fds = self.samples.max_fds.load(Ordering::Relaxed);
        let growth = max_rss.saturating_sub(self.base_rss_kib);
        let bound = RSS_SLACK_KIB + self.per_connection_kib * self.connections as u64;
        let killed = self.samples.killed_at_kib.load(Ordering::Relaxed);
        if killed > 0 {
            self.failures.push(format!(
                "the server's RSS reached {} ({} over its baseline): the watchdog killed it \
                 (documented bound {})",
                mib(killed),
                mib(killed.saturating_sub(self.base_rss_kib)),
                mib(bound)
            ));
        } else if !alive {
            self.failures
                .push("the server process died during the probe".to_string());
        }
        if growth > bound {
            self.failures.push(format!(
                "expected the server's RSS to grow by at most {} ({} + {} KiB x {} connections) \
                 during the abuse, saw {}",
                mib(bound),
                mib(RSS_SLACK_KIB),
                self.per_connection_kib,
                self.connections,
                mib(growth)
            ));
        }
        if alive && rss_after > rss_bound_after {
            self.failures.push(format!(
                "expected the server's RSS back within {} of its baseline {} after the abuse, \
                 saw {}",
                mib(RSS_AFTER_SLACK_KIB + self.retained_kib),
                mib(self.base_rss_kib),
                mib(rss_after)
            ));
        }
        if alive && fds_after > self.base_fds + FD_AFTER_SLACK {
            self.failures.push(format!(
                "expected the server's open descriptors back within {FD_AFTER_SLACK} of its \
                 baseline {} after the abuse, saw {fds_after} ({})",
                self.base_fds,
                fd_kinds(self.pid)
            ));
        }
        let log_growth = log_bytes(&self.qm).saturating_sub(self.base_log);
        let log_bound = LOG_SLACK_BYTES + LOG_BYTES_PER_BAD_CONNECTION * self.bad_connections;
        if log_growth > log_bound {
            self.failures.push(format!(
                "expected the logs to grow by at most {log_bound} bytes ({LOG_SLACK_BYTES} + \
                 {LOG_BYTES_PER_BAD_CONNECTION} per bad connection x {}): repeated messages \
                 suppressed with a count; saw {log_growth} bytes ({})",
                self.bad_connections,
                log_contents(&self.qm)
            ));
        }
        let mut worst = Duration::ZERO;
        let mut round_trips = 0;
        for r in &reports {
            worst = worst.max(r.max);
            round_trips += r.round_trips;
            if r.max > GOOD_ROUND_TRIP_BOUND {
                self.failures.push(format!(
                    "expected every round trip of the good {} client under {GOOD_ROUND_TRIP_BOUND:?}, \
                     its slowest took {}{}",
                    r.who,
                    ms(r.max),
                    if r.max >= GIVE_UP { " (gave up waiting)" } else { "" }
                ));
            }
            if r.failed > 0 {
                self.failures.push(format!(
                    "the good {} client failed {} time(s); first: {}",
                    r.who,
                    r.failed,
                    r.first_failures.join("; ")
                ));
            }
            if r.round_trips == 0 {
                self.failures
                    .push(format!("the good {} client completed no round trip", r.who));
            }
        }
        let line = format!(
            "hostile: probe={} scale={:?} connections={} rss_growth_max={} (bound {}) \
             rss_after=+{} fds={}->{}->{} logs=+{}B good_rtt_max={} ({} round trips) \
             took={} result={}",
            self.name,
            scale(),
            self.connections,
            mib(growth),
            mib(bound),
            mib(rss_after.saturating_sub(self.base_rss_kib)),
            self.base_fds,
            max_fds,
            fds_after,
            log_growth,
            ms(worst),
            round_trips,
            ms(self.started.elapsed()),
            if self.failures.is_empty() {
                "ok"
            } else {
                "FAIL"
            }
        );
        println!("{line}");
        for n in &self.notes {
            println!("    note: {n}");
        }
        for f in &self.failures {
            println!("    failed: {f}");
        }
        let summary = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hostile-summary.txt");
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(summary)
        {
            let _ = writeln!(file, "{line}");
            for f in &self.failures {
                let _ = writeln!(file, "    failed: {f}");
            }
        }
        if !self.failures.is_empty() {
            panic!(
                "probe {} failed:\n  - {}\n(summary: {line})",
                self.name,
                self.failures.join("\n  - ")
            );
        }
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        self.sampling.store(false, Ordering::Release);
        if let Some(good) = self.good.take() {
            good.stop();
        }
        if let Some(h) = self.sampler.take() {
            let _ = h.join();
        }
    }
}

/// Samples the server's RSS and its descriptors every 20 ms, keeping the
/// maxima; kills the server if its RSS passes `cap_kib`.
fn sample(pid: i32, cap_kib: u64, samples: &Samples, sampling: &AtomicBool) {
    while sampling.load(Ordering::Acquire) {
        let Some(rss) = rss_kib(pid) else { return };
        samples.max_rss_kib.fetch_max(rss, Ordering::Relaxed);
        if rss > cap_kib {
            samples.killed_at_kib.store(rss, Ordering::Relaxed);
            // SAFETY: the pid of the server this probe started; SIGKILL protects the
            // machine from a server that is taking all of its memory.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            return;
        }
        if let Some(fds) = fd_count(pid) {
            samples.max_fds.fetch_max(fds as u64, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// What one good client saw.
#[derive(Debug, Default)]
pub struct GoodReport {
    /// Which client.
    pub who: &'static str,
    /// Round trips completed.
    pub round_trips: u64,
    /// The slowest round trip (or fresh connection).
    pub max: Duration,
    /// Round trips or connections that failed.
    pub failed: u64,
    /// The first few failures, described.
    pub first_failures: Vec<String>,
}

impl GoodReport {
    fn new(who: &'static str) -> Self {
        GoodReport {
            who,
            ..GoodReport::default()
        }
    }

    fn took(&mut self, d: Duration) {
        self.max = self.max.max(d);
    }

    fn failure(&mut self, at: Duration, what: String) {
        self.failed += 1;
        if self.first_failures.len() < 3 {
            self.first_failures.push(format!("at +{} {what}", ms(at)));
        }
    }
}

/// The well-behaved clients: a native one (ferry-client: put, then get by CorrelId) and
/// an AMQP one (send, receive, accept), each in its own thread, round trips in a loop.
pub struct GoodClients {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<GoodReport>>,
}

impl GoodClients {
    /// Starts both clients and returns once each has completed a first round trip.
    fn start(qm: &TestQueueManager, reconnect: bool) -> GoodClients {
        let stop = Arc::new(AtomicBool::new(false));
        let ready = Arc::new(AtomicU64::new(0));
        let native = {
            let (opts, stop, ready) = (qm.client().sharecnv(1), stop.clone(), ready.clone());
            std::thread::spawn(move || good_native(opts, reconnect, &stop, &ready))
        };
        let amqp = {
            let (port, stop, ready) = (qm.amqp_port(), stop.clone(), ready.clone());
            std::thread::spawn(move || good_amqp(port, reconnect, &stop, &ready))
        };
        common::wait_until("the good clients' first round trips", || {
            ready.load(Ordering::Acquire) == 2 || native.is_finished() || amqp.is_finished()
        });
        GoodClients {
            stop,
            threads: vec![native, amqp],
        }
    }

    /// Stops the clients and returns what they saw.
    fn stop(self) -> Vec<GoodReport> {
        self.stop.store(true, Ordering::Release);
        self.threads
            .into_iter()
            .map(|t| {
                t.join().unwrap_or_else(|_| {
                    let mut r = GoodReport::new("(panicked)");
                    r.failure(Duration::ZERO, "the client thread panicked".into());
                    r
                })
            })
            .collect()
    }
}

/// A unique CorrelId for round trip `n`.
fn correl_id(n: u64) -> [u8; 24] {
    let mut id = [0u8; 24];
    id[..8].copy_from_slice(b"HOSTILE.");
    id[8..16].copy_from_slice(&n.to_be_bytes());
    id
}

async fn open_good_queue(conn: &Connection) -> Result<Queue, String> {
    let od = ObjectDescriptor::queue(GOOD_NATIVE_Q).expect("queue name");
    conn.open(&od, OpenOptions::OUTPUT | OpenOptions::INPUT_SHARED)
        .await
        .map_err(|e| format!("open {GOOD_NATIVE_Q}: {e}"))
}

/// One native round trip: put a message with CorrelId `n`, get it back by CorrelId.
async fn native_round_trip(q: &Queue, n: u64) -> Result<(), String> {
    let mut md = MessageDescriptor {
        correl_id: correl_id(n),
        ..MessageDescriptor::default()
    };
    q.put(&mut md, &PutOptions::default(), format!("round trip {n}"))
        .await
        .map_err(|e| format!("put: {e}"))?;
    let mut md = MessageDescriptor {
        correl_id: correl_id(n),
        ..MessageDescriptor::default()
    };
    let gmo = GetOptions {
        options: GetOptionFlags::WAIT | GetOptionFlags::NO_SYNCPOINT,
        wait_interval: i32::try_from(GIVE_UP.as_millis()).unwrap_or(i32::MAX),
        match_options: MatchOptions::CORREL_ID,
    };
    q.get(&mut md, &gmo, 4096)
        .await
        .map(drop)
        .map_err(|e| format!("get by CorrelId: {e}"))
}

/// A fresh connection: connect on a new socket, open, one round trip, disconnect.
async fn native_fresh(opts: &ferry_client::ConnectOptions, n: u64) -> Result<(), String> {
    let conn = Connection::connect(opts)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let q = open_good_queue(&conn).await?;
    native_round_trip(&q, n).await?;
    conn.disconnect()
        .await
        .map_err(|e| format!("disconnect: {e}"))
}

fn good_native(
    opts: ferry_client::ConnectOptions,
    reconnect: bool,
    stop: &AtomicBool,
    ready: &AtomicU64,
) -> GoodReport {
    let mut report = GoodReport::new("native");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    let opts = opts.connect_timeout(GIVE_UP);
    let began = Instant::now();
    rt.block_on(async {
        let mut held: Option<(Connection, Queue)> = None;
        let mut n = 0u64;
        let mut last_fresh = Instant::now();
        let mut first = true;
        while !stop.load(Ordering::Acquire) {
            n += 1;
            if held.is_none() {
                let t = Instant::now();
                match tokio::time::timeout(GIVE_UP, async {
                    let conn = Connection::connect(&opts)
                        .await
                        .map_err(|e| format!("connect: {e}"))?;
                    let q = open_good_queue(&conn).await?;
                    Ok::<_, String>((conn, q))
                })
                .await
                {
                    Ok(Ok(c)) => {
                        report.took(t.elapsed());
                        held = Some(c);
                    }
                    Ok(Err(e)) => report.failure(began.elapsed(), e),
                    Err(_) => {
                        report.took(GIVE_UP);
                        report.failure(began.elapsed(), "connect: no answer".into());
                    }
                }
            }
            if let Some((_, q)) = held.as_ref() {
                let t = Instant::now();
                match tokio::time::timeout(GIVE_UP, native_round_trip(q, n)).await {
                    Ok(Ok(())) => {
                        report.took(t.elapsed());
                        report.round_trips += 1;
                        if first {
                            first = false;
                            ready.fetch_add(1, Ordering::AcqRel);
                        }
                    }
                    Ok(Err(e)) => {
                        report.failure(began.elapsed(), e);
                        held = None;
                    }
                    Err(_) => {
                        report.took(GIVE_UP);
                        report.failure(began.elapsed(), "round trip: no answer".into());
                        held = None;
                    }
                }
            }
            if reconnect && last_fresh.elapsed() >= FRESH_CONNECT_EVERY {
                last_fresh = Instant::now();
                n += 1;
                let t = Instant::now();
                match tokio::time::timeout(GIVE_UP, native_fresh(&opts, n)).await {
                    Ok(Ok(())) => report.took(t.elapsed()),
                    Ok(Err(e)) => report.failure(began.elapsed(), format!("fresh connection: {e}")),
                    Err(_) => {
                        report.took(GIVE_UP);
                        report.failure(began.elapsed(), "fresh connection: no answer".into());
                    }
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if let Some((conn, _)) = held {
            let _ = tokio::time::timeout(GIVE_UP, conn.disconnect()).await;
        }
    });
    report
}

fn good_amqp(port: u16, reconnect: bool, stop: &AtomicBool, ready: &AtomicU64) -> GoodReport {
    let mut report = GoodReport::new("AMQP");
    let began = Instant::now();
    let mut held: Option<AmqpPeer> = None;
    let mut n = 0u64;
    let mut last_fresh = Instant::now();
    let mut first = true;
    while !stop.load(Ordering::Acquire) {
        n += 1;
        if held.is_none() {
            let t = Instant::now();
            match AmqpPeer::connect(port, "hostile-good", GIVE_UP)
                .and_then(|mut p| p.round_trip_links(GOOD_AMQP_Q, GIVE_UP).map(|()| p))
            {
                Ok(p) => {
                    report.took(t.elapsed());
                    held = Some(p);
                }
                Err(e) => {
                    report.took(t.elapsed());
                    report.failure(began.elapsed(), format!("connect: {e}"));
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
        if let Some(p) = held.as_mut() {
            let t = Instant::now();
            match p.round_trip(n, GIVE_UP) {
                Ok(()) => {
                    report.took(t.elapsed());
                    report.round_trips += 1;
                    if first {
                        first = false;
                        ready.fetch_add(1, Ordering::AcqRel);
                    }
                }
                Err(e) => {
                    report.took(t.elapsed());
                    report.failure(began.elapsed(), format!("round trip: {e}"));
                    held = None;
                }
            }
        }
        if reconnect && last_fresh.elapsed() >= FRESH_CONNECT_EVERY {
            last_fresh = Instant::now();
            let t = Instant::now();
            match AmqpPeer::connect(port, "hostile-fresh", GIVE_UP).and_then(|p| p.close(GIVE_UP)) {
                Ok(()) => report.took(t.elapsed()),
                Err(e) => {
                    report.took(t.elapsed());
                    report.failure(began.elapsed(), format!("fresh connection: {e}"));
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    if let Some(p) = held {
        let _ = p.close(Duration::from_secs(1));
    }
    report
}

/// Runs `ferry mqsc` with `script` on stdin, waiting at most `within`; `Err` says what went
/// wrong (no answer in time: the process is killed).
pub fn mqsc_within(
    qm: &TestQueueManager,
    bin: &Path,
    script: &str,
    within: Duration,
) -> Result<(std::process::ExitStatus, String, Duration), String> {
    use std::process::{Command, Stdio};
    let began = Instant::now();
    let mut child = Command::new(bin)
        .args(["mqsc", qm.name()])
        .env("FERRY_HOME", qm.home())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn ferry mqsc: {e}"))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = script.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.stdout.take().expect("piped stdout");
    let err = child.stderr.take().expect("piped stderr");
    let read_all = |mut from: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = from.read_to_string(&mut text);
            text
        })
    };
    let (out, err) = (read_all(Box::new(out)), read_all(Box::new(err)));
    let reader = std::thread::spawn(move || {
        let mut text = out.join().unwrap_or_default();
        text.push_str(&err.join().unwrap_or_default());
        text
    });
    loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let _ = writer.join();
            let text = reader.join().unwrap_or_default();
            return Ok((status, text, began.elapsed()));
        }
        if began.elapsed() > within {
            let _ = child.kill();
            let _ = child.wait();
            let _ = writer.join();
            let text = reader.join().unwrap_or_default();
            return Err(format!(
                "ferry mqsc gave no answer within {within:?} (killed); output so far: {}",
                text.chars().take(400).collect::<String>()
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
