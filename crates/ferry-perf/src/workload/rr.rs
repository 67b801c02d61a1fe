//! Request/reply: RR-CC (report section 3.1), RR-BB and RR-CB, which differ only in how
//! requesters and responders connect (client over TCP, or bindings over the queue
//! manager's Unix socket), written once over [`super::app::Protocol`] and run over the
//! native protocol ([`super::native`]) or AMQP 1.0 ([`crate::amqp::rr`]).
//!
//! Each requester sends a request to one of the request queues, round-robin by
//! requester number, and waits for its reply on the reply queue, matched by
//! correlation. Responders wait on the request queues (enough of them that a getter is
//! always waiting) and send a same-size reply with the request's correlation to its
//! reply queue. A round trip counts only when the reply's correlation matches and its
//! body is intact ([`super::verify::check_reply`]); anything else is recorded and marks
//! the step invalid. With `--syncpoint` every put and get is in a unit of work committed
//! right after it; with `--rate` each requester sends at most that many requests per
//! second (for latency at a given load).
//!
//! A step: drain the queues, connect responders then requesters, warm up, measure for
//! the window (rate, server and harness CPU, latency; the recovery log's counters are
//! read just outside it), then stop: requesters finish their round trip, responders
//! are told to stop, everyone disconnects.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_client::Connection;
use ferry_mqi::options::WAIT_UNLIMITED;
use ferry_mqi::{GetOptionFlags, GetOptions, MatchOptions, PutOptionFlags, PutOptions};
use tokio::task::JoinHandle;

use super::app::{Answer, Protocol, Requester, Responder};
pub use super::step::StepOutcome;
use super::step::{finish, join_until, measure_window};
use super::tally::Tally;
use super::verify::{next_body, request_tag};
use super::Mode;
use crate::progress::Progress;
use crate::PerfError;

/// Body of the message that tells a responder to end.
pub const STOP_BODY: &[u8] = b"FERRY-PERF-STOP";

/// What an RR-CC run does, the same for every step.
#[derive(Clone, Debug)]
pub struct RrConfig {
    /// Message body size in bytes (requests and replies).
    pub size: usize,
    /// Persistent messages (else non-persistent).
    pub persistent: bool,
    /// Number of request queues.
    pub queues: usize,
    /// Responders per step.
    pub responders: crate::args::Responders,
    /// SHARECNV the connections ask for.
    pub sharecnv: u32,
    /// Warm-up seconds (not measured).
    pub warmup: f64,
    /// Measured seconds.
    pub secs: f64,
    /// How requesters connect.
    pub requester_mode: Mode,
    /// How responders connect.
    pub responder_mode: Mode,
    /// Puts and gets in syncpoint, each committed at once.
    pub syncpoint: bool,
    /// Requests per second per requester (`None`: unrated, as fast as replies come).
    pub rate: Option<f64>,
    /// How long a requester waits for its reply before counting an error.
    pub reply_timeout: Duration,
    /// A deliberate fault, for the harness's own tests.
    pub fault: Fault,
    /// What the bodies hold.
    pub body: crate::compression::BodyKind,
    /// The channel whose COMPRATE and COMPTIME are read at the end of the window
    /// (`--compress` runs against a Ferry queue manager).
    pub compression_channel: Option<String>,
    /// RR-DQ: sender/receiver pairs per direction between the two queue managers.
    pub channel_pairs: usize,
    /// Queue managers hosting an instance of every request queue, each with its own
    /// responders (1; 2 for RR-CLUSTER-BB's cluster queues).
    pub responder_hosts: usize,
    /// The bind option requesters open their request queue with (RR-CLUSTER-BB:
    /// BIND_ON_OPEN or BIND_NOT_FIXED; empty otherwise).
    pub bind: ferry_mqi::OpenOptions,
}

/// A deliberate fault the responders make, so tests can see a step marked invalid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fault {
    /// No fault.
    #[default]
    None,
    /// Replies carry a CorrelId that is not the request's MsgId (the requester's get
    /// by CorrelId never finds its reply: a timeout).
    WrongCorrelId,
    /// Replies' bodies are damaged (the requester's check fails).
    CorruptBody,
    /// Requests name a reply queue that does not exist (the responder's open fails).
    MissingReplyQueue,
    /// The request queues refuse puts (PUT(DISABLED)) for the step: every request
    /// fails with 2051 MQRC_PUT_INHIBITED, however it is sent.
    PutInhibited,
}

/// Parses the hidden `--fault` value.
pub fn parse_fault(text: &str) -> Result<Fault, String> {
    match text {
        "none" => Ok(Fault::None),
        "wrong-correl-id" => Ok(Fault::WrongCorrelId),
        "corrupt-body" => Ok(Fault::CorruptBody),
        "missing-reply-queue" => Ok(Fault::MissingReplyQueue),
        "put-inhibited" => Ok(Fault::PutInhibited),
        _ => Err(format!(
            "invalid fault '{text}': use none, wrong-correl-id, corrupt-body, \
             missing-reply-queue or put-inhibited"
        )),
    }
}

/// The ReplyToQ requests name under [`Fault::MissingReplyQueue`].
pub const MISSING_QUEUE: &str = "FERRY.PERF.NO.SUCH.QUEUE";

/// Name of request queue `i` (0-based): `REQUEST.1`, `REQUEST.2`...
pub fn request_queue_name(i: usize) -> String {
    format!("REQUEST.{}", i + 1)
}

/// Name of the shared reply queue.
pub const REPLY_QUEUE: &str = "REPLY";

/// The request queue (0-based) requester or responder `n` uses: round-robin.
pub fn queue_for(n: usize, queues: usize) -> usize {
    n % queues.max(1)
}

/// Defines (if missing) the request queues and the reply queue.
pub async fn prepare_queues(admin: &Connection, cfg: &RrConfig) -> Result<(), PerfError> {
    for i in 0..cfg.queues {
        crate::target::ensure_queue(admin, &request_queue_name(i)).await?;
    }
    crate::target::ensure_queue(admin, REPLY_QUEUE).await
}

/// The workload's queues: the request queues, then the reply queue.
pub fn queue_names(cfg: &RrConfig) -> Vec<String> {
    let mut names: Vec<String> = (0..cfg.queues).map(request_queue_name).collect();
    names.push(REPLY_QUEUE.to_string());
    names
}

/// Put options in or out of syncpoint.
pub fn put_options(syncpoint: bool) -> PutOptions {
    PutOptions::new(if syncpoint {
        PutOptionFlags::SYNCPOINT
    } else {
        PutOptionFlags::NO_SYNCPOINT
    })
}

/// Get-with-wait options in or out of syncpoint; `wait` `None` waits forever.
pub fn get_wait(
    match_options: MatchOptions,
    syncpoint: bool,
    wait: Option<Duration>,
) -> GetOptions {
    GetOptions {
        options: GetOptionFlags::WAIT
            | if syncpoint {
                GetOptionFlags::SYNCPOINT
            } else {
                GetOptionFlags::NO_SYNCPOINT
            }
            | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: wait.map_or(WAIT_UNLIMITED, |d| {
            i32::try_from(d.as_millis()).unwrap_or(i32::MAX)
        }),
        match_options,
    }
}

/// Paces a rated application: `None` when unrated.
pub struct Pacer {
    interval: Option<Duration>,
    next: tokio::time::Instant,
}

impl Pacer {
    /// One message every `1/rate` seconds, the first after `offset` of an interval (0..1),
    /// so many rated applications do not all send at once.
    pub fn new(rate: Option<f64>, offset: f64) -> Pacer {
        let interval = rate.map(|r| Duration::from_secs_f64(1.0 / r));
        let first = interval.map_or(Duration::ZERO, |i| i.mul_f64(offset.clamp(0.0, 1.0)));
        Pacer {
            interval,
            next: tokio::time::Instant::now() + first,
        }
    }

    /// Waits until the next message is due (at once when unrated; a late application
    /// does not try to catch up).
    pub async fn wait(&mut self) {
        if let Some(i) = self.interval {
            tokio::time::sleep_until(self.next).await;
            let now = tokio::time::Instant::now();
            self.next = (self.next + i).max(now);
        }
    }
}

async fn requester_loop<R: Requester>(
    mut r: R,
    id: usize,
    cfg: RrConfig,
    clients: usize,
    tally: Rc<Tally>,
) {
    let template = crate::compression::body_template(cfg.body, cfg.size, 0x5A);
    let mut pacer = Pacer::new(cfg.rate, id as f64 / clients.max(1) as f64);
    let mut seq = 0u64;
    let mut previous: Option<Bytes> = None;
    while !tally.stopping() {
        pacer.wait().await;
        if tally.stopping() {
            break;
        }
        seq += 1;
        let tag = request_tag(id, seq);
        let body = next_body(previous.take(), &template, &tag);
        let started = Instant::now();
        match r.round_trip(body, &tag).await {
            Ok(reply) => {
                let ns =
                    u64::try_from(reply.at.duration_since(started).as_nanos()).unwrap_or(u64::MAX);
                if !tally.reply(reply.check, ns) {
                    break;
                }
                previous = reply.buffer;
            }
            Err(e) => {
                tally.error(e);
                break;
            }
        }
    }
    r.close().await;
}

async fn responder_loop<R: Responder>(mut r: R, tally: Rc<Tally>) {
    loop {
        match r.answer().await {
            Ok(Answer::Replied) => {}
            Ok(Answer::NotARequest(what)) => tally.mismatch(what),
            Ok(Answer::Stopped) => break,
            Err(e) => {
                tally.error(e);
                break;
            }
        }
    }
    r.close().await;
}

/// Runs one step with `clients` requesters over `protocol`. `admin`, when the broker is
/// a Ferry queue manager, sets the put-inhibited fault and is asked for the recovery
/// log's counters; `servers` are the broker's processes, for their CPU (RR-DQ-BB: the
/// requesters' queue manager, then the responders'). Must run inside a `LocalSet`.
pub async fn run_step<P: Protocol>(
    protocol: &mut P,
    servers: &[u32],
    admin: Option<&Connection>,
    cfg: &RrConfig,
    clients: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let responders = cfg.responders.count(clients, cfg.queues) * cfg.responder_hosts.max(1);
    let tally = Rc::new(Tally::default());
    progress.status("draining the queues");
    let left = protocol.drain().await?;
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    let requests: Vec<String> = (0..cfg.queues).map(request_queue_name).collect();
    if let (Some(admin), Fault::PutInhibited) = (admin, cfg.fault) {
        crate::target::inhibit_puts(admin, &requests, true).await?;
    }
    // Responders first, so every request finds a getter waiting.
    progress.status("connecting responders");
    let resp_handles = start_responders(protocol, responders, &tally).await?;
    progress.status("connecting requesters");
    let mut reqs = Vec::with_capacity(clients);
    for id in 0..clients {
        reqs.push(protocol.open_requester(id).await?);
    }
    protocol.all_open();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let req_handles: Vec<JoinHandle<()>> = reqs
        .into_iter()
        .enumerate()
        .map(|(id, r)| {
            tokio::task::spawn_local(requester_loop(r, id, cfg.clone(), clients, tally.clone()))
        })
        .collect();

    let window = measure_window(
        &tally,
        servers,
        admin,
        cfg.warmup,
        cfg.secs,
        progress,
        "round trips",
    )
    .await;
    // Read while the applications are still connected: a channel instance's figures go
    // with it.
    let compression = match (admin, &cfg.compression_channel) {
        (Some(admin), Some(channel)) => crate::compression::read(admin, channel)
            .await
            .unwrap_or_else(|e| {
                tally.note(format!("COMPRATE not read: {e}"));
                None
            }),
        _ => None,
    };
    tally.request_stop();
    let late_requesters = join_until(
        req_handles,
        tokio::time::Instant::now() + Duration::from_secs(30),
    )
    .await;
    if late_requesters > 0 {
        tally.error(format!(
            "{late_requesters} requesters did not end within 30 s (reply lost?)"
        ));
    }
    if let (Some(admin), Fault::PutInhibited) = (admin, cfg.fault) {
        // Native responders are stopped by messages on the request queues.
        crate::target::inhibit_puts(admin, &requests, false).await?;
    }
    protocol.stop_responders(responders).await?;
    let late_responders = join_until(
        resp_handles,
        tokio::time::Instant::now() + Duration::from_secs(10),
    )
    .await;
    if late_responders > 0 {
        tally.error(format!(
            "{late_responders} responders did not end within 10 s"
        ));
    }
    // Every round trip moves two messages: the request and the reply.
    let mut outcome = finish(&tally, clients, responders, window, 2, None, None);
    outcome.compression = compression;
    Ok(outcome)
}

/// Connects `responders` responders (round-robin over the request queues) and starts
/// them as tasks. Must run inside a `LocalSet`.
pub async fn start_responders<P: Protocol>(
    protocol: &mut P,
    responders: usize,
    tally: &Rc<Tally>,
) -> Result<Vec<JoinHandle<()>>, PerfError> {
    let mut handles = Vec::with_capacity(responders);
    for id in 0..responders {
        let r = protocol.open_responder(id).await?;
        handles.push(tokio::task::spawn_local(responder_loop(r, tally.clone())));
    }
    Ok(handles)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_round_robin() {
        assert_eq!(request_queue_name(0), "REQUEST.1");
        assert_eq!(request_queue_name(9), "REQUEST.10");
        assert_eq!(queue_for(0, 10), 0);
        assert_eq!(queue_for(10, 10), 0);
        assert_eq!(queue_for(13, 10), 3);
        assert_eq!(queue_for(5, 0), 0);
    }

    #[test]
    fn faults_parse_and_options_follow_syncpoint() {
        assert_eq!(parse_fault("corrupt-body"), Ok(Fault::CorruptBody));
        assert!(parse_fault("x").is_err());
        assert!(put_options(true)
            .options
            .contains(PutOptionFlags::SYNCPOINT));
        let g = get_wait(MatchOptions::CORREL_ID, false, Some(Duration::from_secs(2)));
        assert_eq!(g.wait_interval, 2000);
        assert!(g.options.contains(GetOptionFlags::NO_SYNCPOINT));
        assert_eq!(
            get_wait(MatchOptions::empty(), true, None).wait_interval,
            WAIT_UNLIMITED
        );
    }

    #[tokio::test]
    async fn a_rated_requester_waits_its_interval() {
        let mut p = Pacer::new(Some(100.0), 0.0);
        let t0 = tokio::time::Instant::now();
        for _ in 0..5 {
            p.wait().await;
        }
        // The first is due at once, the next four 10 ms apart.
        let waited = t0.elapsed();
        assert!(waited >= Duration::from_millis(40), "{waited:?}");
        let mut unrated = Pacer::new(None, 0.5);
        let t1 = tokio::time::Instant::now();
        unrated.wait().await;
        assert!(t1.elapsed() < Duration::from_millis(5), "unrated: at once");
    }
}
