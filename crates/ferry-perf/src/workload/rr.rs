//! Request/reply: RR-CC (report section 3.1), RR-BB and RR-CB, which differ only in how
//! requesters and responders connect (client over TCP, or bindings over the queue
//! manager's Unix socket).
//!
//! Each requester puts a request (MsgType REQUEST, ReplyToQ set) to one of the request
//! queues, round-robin by requester number, keeps the MsgId the queue manager generated,
//! then gets with WAIT, matching CorrelId = that MsgId, on the shared reply queue.
//! Responders get-wait on the request queues (enough of them that a getter is always
//! waiting) and put a same-size reply (the request's body, zero-copy) with CorrelId =
//! the request's MsgId to its ReplyToQ. A round trip counts only when the reply's
//! CorrelId matches and its body is intact ([`super::verify::check_reply`]); anything else is
//! recorded and marks the step invalid. With `--syncpoint` every put and get is in a unit
//! of work committed right after it; with `--rate` each requester sends at most that
//! many requests per second (for latency at a given load).
//!
//! A step: drain the queues, connect responders then requesters, warm up, measure for
//! the window (rate, server and harness CPU, latency; the recovery log's counters are
//! read just outside it), then stop: requesters finish
//! their round trip, each responder gets a stop message, everyone disconnects.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::descriptor::{msg_type, persistence, NONE_ID};
use ferry_mqi::options::WAIT_UNLIMITED;
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor,
    OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};
use tokio::task::JoinHandle;

pub use super::step::StepOutcome;
use super::step::{connect, join_until, mq, queue_od};
use super::tally::Tally;
use super::verify::{check_reply, next_body, request_tag};
use super::Mode;
use crate::measure::{self, Sample};
use crate::progress::Progress;
use crate::recovery_log;
use crate::report::group_thousands;
use crate::target::QueueManager;
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

/// Removes whatever messages are left on the workload's queues; returns how many.
pub async fn drain_queues(admin: &Connection, cfg: &RrConfig) -> Result<u64, PerfError> {
    let mut names: Vec<String> = (0..cfg.queues).map(request_queue_name).collect();
    names.push(REPLY_QUEUE.to_string());
    let gmo = GetOptions {
        options: GetOptionFlags::NO_SYNCPOINT | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: 0,
        match_options: MatchOptions::empty(),
    };
    let mut drained = 0;
    for name in names {
        let q = admin
            .open(&queue_od(&name)?, OpenOptions::INPUT_SHARED)
            .await
            .map_err(|e| mq(&format!("open {name} to drain it"), e))?;
        loop {
            let mut md = MessageDescriptor::default();
            match q.get(&mut md, &gmo, 0).await {
                Ok(_) => drained += 1,
                Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(mq(&format!("drain {name}"), e)),
            }
        }
        q.close(Default::default())
            .await
            .map_err(|e| mq(&format!("close {name}"), e))?;
    }
    Ok(drained)
}

struct Requester {
    id: usize,
    conn: Connection,
    request_q: Queue,
    reply_q: Queue,
}

struct Responder {
    conn: Connection,
    request_q: Queue,
}

async fn open_requester(
    id: usize,
    opts: &ConnectOptions,
    cfg: &RrConfig,
) -> Result<Requester, PerfError> {
    let conn = connect(opts).await?;
    let name = request_queue_name(queue_for(id, cfg.queues));
    let request_q = conn
        .open(&queue_od(&name)?, OpenOptions::OUTPUT)
        .await
        .map_err(|e| mq(&format!("open {name} for output"), e))?;
    let reply_q = conn
        .open(&queue_od(REPLY_QUEUE)?, OpenOptions::INPUT_SHARED)
        .await
        .map_err(|e| mq(&format!("open {REPLY_QUEUE} for input"), e))?;
    Ok(Requester {
        id,
        conn,
        request_q,
        reply_q,
    })
}

async fn open_responder(
    id: usize,
    opts: &ConnectOptions,
    cfg: &RrConfig,
) -> Result<Responder, PerfError> {
    let conn = connect(opts).await?;
    let name = request_queue_name(queue_for(id, cfg.queues));
    let request_q = conn
        .open(&queue_od(&name)?, OpenOptions::INPUT_SHARED)
        .await
        .map_err(|e| mq(&format!("open {name} for input"), e))?;
    Ok(Responder { conn, request_q })
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

async fn requester_loop(r: Requester, cfg: RrConfig, clients: usize, tally: Rc<Tally>) {
    let size = cfg.size;
    let template = vec![0x5Au8; size];
    let reply_name = if cfg.fault == Fault::MissingReplyQueue {
        MISSING_QUEUE
    } else {
        REPLY_QUEUE
    };
    let reply_to = match FixedStr::new(reply_name) {
        Ok(n) => n,
        Err(e) => return tally.error(format!("reply queue name: {e}")),
    };
    let pmo = put_options(cfg.syncpoint);
    let gmo = get_wait(
        MatchOptions::CORREL_ID,
        cfg.syncpoint,
        Some(cfg.reply_timeout),
    );
    let mut pacer = Pacer::new(cfg.rate, r.id as f64 / clients.max(1) as f64);
    let mut seq = 0u64;
    let mut previous: Option<Bytes> = None;
    while !tally.stopping() {
        pacer.wait().await;
        if tally.stopping() {
            break;
        }
        seq += 1;
        let tag = request_tag(r.id, seq);
        let body = next_body(previous.take(), &template, &tag);
        let sent = body.clone();
        let mut md = MessageDescriptor {
            msg_type: msg_type::REQUEST,
            persistence: if cfg.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            reply_to_q: reply_to,
            ..MessageDescriptor::default()
        };
        let started = Instant::now();
        if let Err(e) = r.request_q.put(&mut md, &pmo, body).await {
            tally.error(format!("requester {}: put request: {}", r.id, e.reason));
            break;
        }
        if cfg.syncpoint {
            if let Err(e) = r.conn.commit().await {
                tally.error(format!("requester {}: commit request: {}", r.id, e.reason));
                break;
            }
        }
        let msg_id = md.msg_id;
        if msg_id == NONE_ID {
            tally.error(format!(
                "requester {}: the queue manager generated no MsgId",
                r.id
            ));
            break;
        }
        let mut reply_md = MessageDescriptor {
            correl_id: msg_id,
            ..MessageDescriptor::default()
        };
        match r.reply_q.get(&mut reply_md, &gmo, size).await {
            Ok(got) => {
                if cfg.syncpoint {
                    if let Err(e) = r.conn.commit().await {
                        tally.error(format!("requester {}: commit reply: {}", r.id, e.reason));
                        break;
                    }
                }
                let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                let check = check_reply(&msg_id, &reply_md, &got.data, got.data_length, size, &tag);
                if !tally.reply(check, ns) {
                    break;
                }
                previous = Some(sent);
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => {
                tally.error(format!(
                    "requester {}: no reply within {:.0} s (2033 MQRC_NO_MSG_AVAILABLE)",
                    r.id,
                    cfg.reply_timeout.as_secs_f64()
                ));
                break;
            }
            Err(e) => {
                tally.error(format!("requester {}: get reply: {}", r.id, e.reason));
                break;
            }
        }
    }
    let _ = r.request_q.close(Default::default()).await;
    let _ = r.reply_q.close(Default::default()).await;
    let _ = r.conn.disconnect().await;
}

async fn responder_loop(r: Responder, cfg: RrConfig, tally: Rc<Tally>) {
    let size = cfg.size;
    let pmo = put_options(cfg.syncpoint);
    let gmo = get_wait(MatchOptions::empty(), cfg.syncpoint, None);
    let mut reply_queues: Vec<(FixedStr<48>, Queue)> = Vec::new();
    loop {
        let mut md = MessageDescriptor::default();
        let got = match r.request_q.get(&mut md, &gmo, size).await {
            Ok(g) => g,
            Err(e) => {
                tally.error(format!("responder: get request: {}", e.reason));
                break;
            }
        };
        if md.msg_type == msg_type::DATAGRAM && got.data.as_ref() == STOP_BODY {
            if cfg.syncpoint {
                let _ = r.conn.commit().await;
            }
            break;
        }
        if md.msg_type != msg_type::REQUEST {
            tally.mismatch(format!(
                "responder: got MsgType {} instead of a request",
                md.msg_type
            ));
            continue;
        }
        let idx = match reply_queues.iter().position(|(n, _)| *n == md.reply_to_q) {
            Some(i) => i,
            None => {
                let od = ObjectDescriptor {
                    object_name: md.reply_to_q,
                    ..ObjectDescriptor::default()
                };
                match r.conn.open(&od, OpenOptions::OUTPUT).await {
                    Ok(q) => {
                        reply_queues.push((md.reply_to_q, q));
                        reply_queues.len() - 1
                    }
                    Err(e) => {
                        tally.error(format!(
                            "responder: open ReplyToQ '{}': {}",
                            md.reply_to_q.as_str().trim_end(),
                            e.reason
                        ));
                        break;
                    }
                }
            }
        };
        let mut reply = MessageDescriptor {
            msg_type: msg_type::REPLY,
            correl_id: md.msg_id,
            persistence: md.persistence,
            ..MessageDescriptor::default()
        };
        let mut data = got.data;
        match cfg.fault {
            Fault::WrongCorrelId => reply.correl_id[0] ^= 0xFF,
            Fault::CorruptBody if !data.is_empty() => {
                let mut v = data.to_vec();
                v[0] ^= 0xFF;
                data = Bytes::from(v);
            }
            _ => {}
        }
        if let Err(e) = reply_queues[idx].1.put(&mut reply, &pmo, data).await {
            tally.error(format!("responder: put reply: {}", e.reason));
            break;
        }
        if cfg.syncpoint {
            if let Err(e) = r.conn.commit().await {
                tally.error(format!("responder: commit: {}", e.reason));
                break;
            }
        }
    }
    for (_, q) in reply_queues {
        let _ = q.close(Default::default()).await;
    }
    let _ = r.request_q.close(Default::default()).await;
    let _ = r.conn.disconnect().await;
}

/// Runs one step with `clients` requesters. Must run inside a `LocalSet`.
pub async fn run_step(
    qm: &QueueManager,
    admin: &Connection,
    cfg: &RrConfig,
    clients: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let responders = cfg.responders.count(clients, cfg.queues);
    let left = drain_queues(admin, cfg).await?;
    let tally = Rc::new(Tally::default());
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    let req_opts = qm.options_for(cfg.requester_mode)?.sharecnv(cfg.sharecnv);
    let resp_opts = qm.options_for(cfg.responder_mode)?.sharecnv(cfg.sharecnv);

    let requests: Vec<String> = (0..cfg.queues).map(request_queue_name).collect();
    if cfg.fault == Fault::PutInhibited {
        crate::target::inhibit_puts(admin, &requests, true).await?;
    }
    // Responders first, so every request finds a getter waiting.
    progress.status("connecting responders");
    let resp_handles = start_responders(&resp_opts, cfg, responders, &tally).await?;
    progress.status("connecting requesters");
    let mut reqs = Vec::with_capacity(clients);
    for id in 0..clients {
        reqs.push(open_requester(id, &req_opts, cfg).await?);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let req_handles: Vec<JoinHandle<()>> = reqs
        .into_iter()
        .map(|r| tokio::task::spawn_local(requester_loop(r, cfg.clone(), clients, tally.clone())))
        .collect();

    let count = |_: f64| {
        format!(
            "{} round trips",
            group_thousands(tally.round_trips() as f64)
        )
    };
    progress.wait("warm-up", cfg.warmup, count).await;
    let pid = qm.server_pid();
    let log_start = recovery_log::read_if(Some(admin)).await;
    let start = Sample::take(tally.round_trips(), pid);
    tally.set_measuring(true);
    let base = start.round_trips;
    let live = |t: f64| {
        format!(
            "{} RT/s",
            group_thousands(measure::rate(tally.round_trips() - base, t))
        )
    };
    progress.wait("measuring", cfg.secs, live).await;
    tally.set_measuring(false);
    let end = Sample::take(tally.round_trips(), pid);
    let log_end = recovery_log::read_if(Some(admin)).await;
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
    if cfg.fault == Fault::PutInhibited {
        // The responders are stopped by messages on the request queues.
        crate::target::inhibit_puts(admin, &requests, false).await?;
    }
    stop_responders(admin, cfg, responders).await?;
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

    let window = measure::window(
        &start,
        &end,
        measure::clock_ticks_per_sec(),
        measure::online_cpus(),
    );
    // Every round trip moves two messages: the request and the reply.
    let (log, note) = recovery_log::step_figures(
        log_start,
        log_end,
        2 * window.round_trips,
        window.elapsed_secs,
    );
    if let Some(n) = note {
        tally.note(n);
    }
    let errors = tally.errors();
    let mismatches = tally.mismatches();
    Ok(StepOutcome {
        clients,
        responders,
        window,
        latency: tally.latency(),
        errors,
        mismatches,
        queue_depth_end: None,
        sent: None,
        log,
        problems: tally.problems(),
        valid: errors == 0 && mismatches == 0 && window.round_trips > 0,
    })
}

/// Connects `responders` responders (round-robin over the request queues) and starts
/// them as tasks. Must run inside a `LocalSet`.
pub async fn start_responders(
    opts: &ConnectOptions,
    cfg: &RrConfig,
    responders: usize,
    tally: &Rc<Tally>,
) -> Result<Vec<JoinHandle<()>>, PerfError> {
    let mut handles = Vec::with_capacity(responders);
    for id in 0..responders {
        let r = open_responder(id, opts, cfg).await?;
        handles.push(tokio::task::spawn_local(responder_loop(
            r,
            cfg.clone(),
            tally.clone(),
        )));
    }
    Ok(handles)
}

/// Puts one stop message per responder on each request queue.
pub async fn stop_responders(
    admin: &Connection,
    cfg: &RrConfig,
    responders: usize,
) -> Result<(), PerfError> {
    for q in 0..cfg.queues {
        let on_this = (0..responders)
            .filter(|&r| queue_for(r, cfg.queues) == q)
            .count();
        if on_this == 0 {
            continue;
        }
        let name = request_queue_name(q);
        let queue = admin
            .open(&queue_od(&name)?, OpenOptions::OUTPUT)
            .await
            .map_err(|e| mq(&format!("open {name} to stop responders"), e))?;
        for _ in 0..on_this {
            let mut md = MessageDescriptor {
                msg_type: msg_type::DATAGRAM,
                persistence: persistence::NOT_PERSISTENT,
                ..MessageDescriptor::default()
            };
            queue
                .put(&mut md, &put_options(false), Bytes::from_static(STOP_BODY))
                .await
                .map_err(|e| mq(&format!("put stop message to {name}"), e))?;
        }
        queue
            .close(Default::default())
            .await
            .map_err(|e| mq(&format!("close {name}"), e))?;
    }
    Ok(())
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
