//! The relay's load generator: RR-CC's shape without a queue manager. `n` requesters and
//! `n` responders connect to a [`crate::relay`]; each requester sends a request of `size`
//! bytes and waits for its reply before sending the next (one outstanding request, like an
//! MQ requester's put then get-wait by CorrelId); each responder answers every request with
//! a reply of the same size. A step warms up, then counts round trips over its measured
//! window and reads the relay's CPU time (through a stats connection) and its own
//! (getrusage) at both ends of the window.
//!
//! A reply counts only if it has the request's size and the responders' fill byte and its
//! requester was waiting for one; anything else is counted as a bad frame and reported.

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::cpu_time::ProcessCpu;
use crate::frame::{self, Header, RelayStats, Role, HEADER_LEN, MAX_PAYLOAD};
use crate::YardstickError;

const REQUEST_FILL: u8 = 0x11;
const REPLY_FILL: u8 = 0x22;
/// Round-trip latencies are recorded in nanoseconds up to a minute.
const LATENCY_MAX_NS: u64 = 60_000_000_000;

/// One measured step.
#[derive(Clone, Debug)]
pub struct StepConfig {
    /// The relay's address.
    pub addr: SocketAddr,
    /// Requesters (and as many responders).
    pub requesters: usize,
    /// Request and reply payload bytes.
    pub size: usize,
    /// Load generator threads the connections are spread over.
    pub threads: usize,
    /// Time before the measured window.
    pub warmup: Duration,
    /// The measured window.
    pub secs: Duration,
}

/// What one step measured.
#[derive(Clone, Debug)]
pub struct StepResult {
    /// The step's configuration.
    pub config: StepConfig,
    /// Length of the measured window, seconds.
    pub elapsed_secs: f64,
    /// Round trips completed in the window.
    pub round_trips: u64,
    /// Round-trip latency percentiles over the window, µs: p50, p99, p99.9.
    pub latency_us: [f64; 3],
    /// The relay's CPU over the window, if its stats could be read.
    pub relay_cpu: Option<ProcessCpu>,
    /// This process's CPU over the window.
    pub load_cpu: ProcessCpu,
    /// Frames that were not a valid reply (should be 0).
    pub bad_frames: u64,
}

impl StepResult {
    /// Round trips per second.
    pub fn rate(&self) -> f64 {
        self.round_trips as f64 / self.elapsed_secs.max(f64::MIN_POSITIVE)
    }

    /// The `RESULT bench=rr ...` line `ferry perf --relay-baseline` parses (rate, latency,
    /// CPU per round trip of each process, relay CPU as % of one CPU; `BAD_FRAMES=` if any).
    pub fn result_line(&self, label: &str) -> String {
        let rts = self.round_trips.max(1) as f64;
        let pct = |us: u64| us as f64 / self.elapsed_secs / 1e4;
        let (relay_per_rt, relay_pct, relay_usr, relay_sys) = match self.relay_cpu {
            Some(c) => (
                c.total_us() as f64 / rts,
                pct(c.total_us()),
                pct(c.user_us),
                pct(c.system_us),
            ),
            None => (f64::NAN, f64::NAN, f64::NAN, f64::NAN),
        };
        let c = &self.config;
        let mut line = format!(
            "RESULT bench=rr relay={label} n={} size={} threads={} secs={:.1} rts={} rate={:.0} \
             p50_us={:.1} p99_us={:.1} p999_us={:.1} relay_cpu_us_per_rt={relay_per_rt:.2} \
             load_cpu_us_per_rt={:.2} relay_cpu_pct={relay_pct:.0} relay_usr_pct={relay_usr:.0} \
             relay_sys_pct={relay_sys:.0} load_cpu_pct={:.0}",
            c.requesters,
            c.size,
            c.threads,
            self.elapsed_secs,
            self.round_trips,
            self.rate(),
            self.latency_us[0],
            self.latency_us[1],
            self.latency_us[2],
            self.load_cpu.total_us() as f64 / rts,
            pct(self.load_cpu.total_us()),
        );
        if self.bad_frames > 0 {
            line.push_str(&format!(" BAD_FRAMES={}", self.bad_frames));
        }
        line
    }
}

/// Reads the relay's CPU time and frame count through a stats connection.
pub fn fetch_stats(addr: SocketAddr) -> Result<RelayStats, YardstickError> {
    let what = || format!("read the relay's stats at {addr}");
    let mut s = std::net::TcpStream::connect(addr).map_err(|e| YardstickError::io(what(), e))?;
    s.write_all(&[Role::Stats.byte()])
        .map_err(|e| YardstickError::io(what(), e))?;
    let mut buf = vec![0; HEADER_LEN + RelayStats::PAYLOAD_LEN];
    s.read_exact(&mut buf)
        .map_err(|e| YardstickError::io(what(), e))?;
    RelayStats::decode(&buf).ok_or_else(|| YardstickError::Protocol("bad stats frame".into()))
}

/// Runs one step against the relay at `config.addr`.
pub fn run_step(config: &StepConfig) -> Result<StepResult, YardstickError> {
    if config.requesters == 0 || config.threads == 0 {
        return Err(YardstickError::Usage(
            "requesters and threads must be at least 1".into(),
        ));
    }
    if config.size < 2 || config.size > MAX_PAYLOAD {
        return Err(YardstickError::Usage(format!(
            "size {} is outside 2..={MAX_PAYLOAD}",
            config.size
        )));
    }
    let threads = config.threads.min(2 * config.requesters);
    // Responders first, so the first requests find them.
    let mut per_thread: Vec<Vec<Endpoint>> = (0..threads).map(|_| Vec::new()).collect();
    for (i, role) in std::iter::repeat_n(Role::Responder, config.requesters)
        .chain(std::iter::repeat_n(Role::Requester, config.requesters))
        .enumerate()
    {
        per_thread[i % threads].push(Endpoint::connect(config.addr, role, config.size)?);
    }
    let control = Arc::new(Control::default());
    let mut handles = Vec::new();
    for endpoints in per_thread {
        let control = Arc::clone(&control);
        let size = config.size;
        handles.push(std::thread::spawn(move || drive(endpoints, size, &control)));
    }
    std::thread::sleep(config.warmup);
    let start = Snapshot::take(config.addr, &control)?;
    control.measuring.store(true, Ordering::SeqCst);
    std::thread::sleep(config.secs);
    control.measuring.store(false, Ordering::SeqCst);
    let end = Snapshot::take(config.addr, &control)?;
    control.stop.store(true, Ordering::SeqCst);
    let mut latency = new_histogram()?;
    let mut bad_frames = 0;
    for h in handles {
        let (hist, bad) = h
            .join()
            .map_err(|_| YardstickError::ThreadPanicked("load generator"))??;
        latency
            .add(hist)
            .map_err(|e| YardstickError::Protocol(format!("merge histograms: {e}")))?;
        bad_frames += bad;
    }
    let q = |quantile: f64| latency.value_at_quantile(quantile) as f64 / 1000.0;
    Ok(StepResult {
        config: config.clone(),
        elapsed_secs: end.at.duration_since(start.at).as_secs_f64(),
        round_trips: end.round_trips - start.round_trips,
        latency_us: [q(0.5), q(0.99), q(0.999)],
        relay_cpu: match (start.relay, end.relay) {
            (Some(a), Some(b)) => Some(ProcessCpu {
                user_us: b.user_us.saturating_sub(a.user_us),
                system_us: b.system_us.saturating_sub(a.system_us),
            }),
            _ => None,
        },
        load_cpu: end.load_cpu.since(&start.load_cpu),
        bad_frames,
    })
}

/// Flags and the round-trip count shared by the step's threads.
#[derive(Default)]
struct Control {
    measuring: AtomicBool,
    stop: AtomicBool,
    round_trips: AtomicU64,
}

/// The step's counters at one end of the measured window.
struct Snapshot {
    at: Instant,
    round_trips: u64,
    relay: Option<RelayStats>,
    load_cpu: ProcessCpu,
}

impl Snapshot {
    fn take(addr: SocketAddr, control: &Control) -> Result<Snapshot, YardstickError> {
        // A relay without stats (another implementation) still gives a rate.
        let relay = fetch_stats(addr).ok();
        Ok(Snapshot {
            at: Instant::now(),
            round_trips: control.round_trips.load(Ordering::SeqCst),
            relay,
            load_cpu: ProcessCpu::now().map_err(|e| YardstickError::io("getrusage", e))?,
        })
    }
}

/// One requester's or responder's connection.
struct Endpoint {
    socket: TcpStream,
    role: Role,
    input: Vec<u8>,
    input_len: usize,
    /// A requester's request (rewritten from the start for each one); a responder's
    /// pending replies.
    output: Vec<u8>,
    output_pos: usize,
    /// Requester: when the outstanding request was sent; `None` when none is.
    sent_at: Option<Instant>,
}

impl Endpoint {
    fn connect(addr: SocketAddr, role: Role, size: usize) -> Result<Endpoint, YardstickError> {
        let what = || format!("connect to the relay at {addr}");
        let mut s =
            std::net::TcpStream::connect(addr).map_err(|e| YardstickError::io(what(), e))?;
        s.set_nodelay(true)
            .map_err(|e| YardstickError::io(what(), e))?;
        s.write_all(&[role.byte()])
            .map_err(|e| YardstickError::io(what(), e))?;
        s.set_nonblocking(true)
            .map_err(|e| YardstickError::io(what(), e))?;
        let output = match role {
            Role::Requester => frame::make(size, 0, REQUEST_FILL),
            _ => Vec::new(),
        };
        let output_pos = output.len();
        Ok(Endpoint {
            socket: TcpStream::from_std(s),
            role,
            input: vec![0; (2 * (size + HEADER_LEN)).max(64 * 1024)],
            input_len: 0,
            output,
            output_pos,
            sent_at: None,
        })
    }

    /// Writes pending output until done or the socket is full; false if the socket broke.
    fn write(&mut self) -> bool {
        while self.output_pos < self.output.len() {
            match self.socket.write(&self.output[self.output_pos..]) {
                Ok(n) => self.output_pos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
        if self.role == Role::Responder {
            self.output.clear();
            self.output_pos = 0;
        }
        true
    }

    /// Reads everything available; false at end of stream or on an error.
    fn read(&mut self) -> bool {
        loop {
            if self.input_len == self.input.len() {
                let grown = self.input.len() * 2;
                self.input.resize(grown, 0);
            }
            match self.socket.read(&mut self.input[self.input_len..]) {
                Ok(0) => return false,
                Ok(n) => self.input_len += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return false,
            }
        }
    }

    fn send_request(&mut self) -> bool {
        debug_assert!(
            self.sent_at.is_none(),
            "one outstanding request per requester"
        );
        self.sent_at = Some(Instant::now());
        self.output_pos = 0;
        let ok = self.write();
        debug_assert!(self.sent_at.is_some());
        ok
    }
}

fn new_histogram() -> Result<Histogram<u64>, YardstickError> {
    Histogram::new_with_bounds(1, LATENCY_MAX_NS, 3)
        .map_err(|e| YardstickError::Protocol(format!("histogram: {e}")))
}

/// One thread's event loop over its endpoints until the step stops; returns its latency
/// histogram and the bad frames it saw.
fn drive(
    mut endpoints: Vec<Endpoint>,
    size: usize,
    control: &Control,
) -> Result<(Histogram<u64>, u64), YardstickError> {
    let mut poll = Poll::new().map_err(|e| YardstickError::io("create a poll", e))?;
    for (i, e) in endpoints.iter_mut().enumerate() {
        poll.registry()
            .register(
                &mut e.socket,
                Token(i),
                Interest::READABLE | Interest::WRITABLE,
            )
            .map_err(|err| YardstickError::io("register a connection", err))?;
    }
    let mut latency = new_histogram()?;
    let mut bad = 0u64;
    for e in endpoints.iter_mut().filter(|e| e.role == Role::Requester) {
        if !e.send_request() {
            return Err(broken());
        }
    }
    let reply_template = frame::make(size, 0, REPLY_FILL);
    let mut events = Events::with_capacity(1024);
    while !control.stop.load(Ordering::Relaxed) {
        match poll.poll(&mut events, Some(Duration::from_millis(50))) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(YardstickError::io("poll", e)),
        }
        for event in events.iter() {
            let Some(e) = endpoints.get_mut(event.token().0) else {
                continue;
            };
            if event.is_writable() && !e.write() {
                return Err(broken());
            }
            if !event.is_readable() {
                continue;
            }
            if !e.read() {
                return Err(broken());
            }
            let mut pos = 0;
            let mut replies = 0u64;
            while let Some(h) = Header::read(&e.input[pos..e.input_len]) {
                let end = pos + HEADER_LEN + h.len;
                if end > e.input_len {
                    break;
                }
                let payload = &e.input[pos + HEADER_LEN..end];
                match e.role {
                    Role::Responder => {
                        if h.len != size {
                            bad += 1;
                        }
                        let start = e.output.len();
                        e.output.extend_from_slice(&reply_template);
                        frame::set_corr(&mut e.output[start..], h.corr);
                    }
                    _ => {
                        let valid = h.len == size
                            && payload.first() == Some(&REPLY_FILL)
                            && payload.last() == Some(&REPLY_FILL);
                        if valid && e.sent_at.is_some() {
                            replies += 1;
                        } else {
                            bad += 1;
                        }
                    }
                }
                pos = end;
            }
            if pos > 0 {
                e.input.copy_within(pos..e.input_len, 0);
                e.input_len -= pos;
            }
            let role = e.role;
            match role {
                Role::Responder if !e.write() => return Err(broken()),
                Role::Responder => {}
                _ if replies > 0 => {
                    if let Some(sent) = e.sent_at.take() {
                        if control.measuring.load(Ordering::Relaxed) {
                            let ns = u64::try_from(sent.elapsed().as_nanos()).unwrap_or(u64::MAX);
                            // Out-of-range values are clamped; recording cannot fail then.
                            latency.saturating_record(ns.clamp(1, LATENCY_MAX_NS));
                        }
                    }
                    control.round_trips.fetch_add(1, Ordering::Relaxed);
                    bad += replies - 1;
                    if !control.stop.load(Ordering::Relaxed) && !e.send_request() {
                        return Err(broken());
                    }
                }
                _ => {}
            }
        }
    }
    Ok((latency, bad))
}

fn broken() -> YardstickError {
    YardstickError::Protocol("a connection to the relay broke during the step".into())
}
