//! RR-CC: client-mode requesters and responders (report section 3.1).
//!
//! Each requester puts a request (MsgType REQUEST, ReplyToQ set) to one of the request
//! queues, round-robin by requester number, keeps the MsgId the queue manager generated,
//! then gets with WAIT, matching CorrelId = that MsgId, on the shared reply queue.
//! Responders get-wait on the request queues (enough of them that a getter is always
//! waiting) and put a same-size reply (the request's body, zero-copy) with CorrelId =
//! the request's MsgId to its ReplyToQ. A round trip counts only when the reply's
//! CorrelId matches and its body is intact ([`super::verify::check_reply`]); anything else is
//! recorded and marks the step invalid.
//!
//! A step: drain the queues, connect responders then requesters, warm up, measure for
//! the window (rate, server and harness CPU, latency), then stop: requesters finish
//! their round trip, each responder gets a stop message, everyone disconnects.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::descriptor::{msg_type, persistence, NONE_ID};
use ferry_mqi::options::WAIT_UNLIMITED;
use ferry_mqi::{
    FixedStr, GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, MqError,
    ObjectDescriptor, OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
};
use tokio::task::JoinHandle;

use super::tally::Tally;
use super::verify::{check_reply, next_body, request_tag};
use crate::measure::{self, Latency, Sample, WindowFigures};
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
}

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

/// What one step measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct StepOutcome {
    /// Requesters.
    pub clients: usize,
    /// Responders.
    pub responders: usize,
    /// Rate and CPU over the measured window.
    pub window: WindowFigures,
    /// Round-trip latency over the measured window.
    pub latency: Latency,
    /// Failed calls (any error invalidates the step).
    pub errors: u64,
    /// Replies or requests that were not what they should be.
    pub mismatches: u64,
    /// The first few problems.
    pub problems: Vec<String>,
    /// No errors, no mismatches, at least one round trip, everyone ended in time.
    pub valid: bool,
}

fn mq(what: &str, e: MqError) -> PerfError {
    PerfError::Mq(what.to_string(), e)
}

fn queue_od(name: &str) -> Result<ObjectDescriptor, PerfError> {
    ObjectDescriptor::queue(name)
        .map_err(|e| PerfError::Setup(format!("bad queue name {name}: {e}")))
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

async fn connect(opts: &ConnectOptions) -> Result<Connection, PerfError> {
    Connection::connect(opts).await.map_err(|e| {
        if e.reason == ReasonCode::ChannelNotAvailable {
            mq(
                "connect (the queue manager allows no more channel instances: raise \
                 qm.ini Channels/MaxChannels, or use a larger --sharecnv)",
                e,
            )
        } else {
            mq("connect", e)
        }
    })
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

fn put_options() -> PutOptions {
    PutOptions::new(PutOptionFlags::NO_SYNCPOINT)
}

fn get_wait(match_options: MatchOptions) -> GetOptions {
    GetOptions {
        options: GetOptionFlags::WAIT
            | GetOptionFlags::NO_SYNCPOINT
            | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: WAIT_UNLIMITED,
        match_options,
    }
}

async fn requester_loop(r: Requester, size: usize, persistent: bool, tally: Rc<Tally>) {
    let template = vec![0x5Au8; size];
    let reply_to = match FixedStr::new(REPLY_QUEUE) {
        Ok(n) => n,
        Err(e) => return tally.error(format!("reply queue name: {e}")),
    };
    let pmo = put_options();
    let gmo = get_wait(MatchOptions::CORREL_ID);
    let mut seq = 0u64;
    let mut previous: Option<Bytes> = None;
    while !tally.stopping() {
        seq += 1;
        let tag = request_tag(r.id, seq);
        let body = next_body(previous.take(), &template, &tag);
        let sent = body.clone();
        let mut md = MessageDescriptor {
            msg_type: msg_type::REQUEST,
            persistence: if persistent {
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
                let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
                let check = check_reply(&msg_id, &reply_md, &got.data, got.data_length, size, &tag);
                if !tally.reply(check, ns) {
                    break;
                }
                previous = Some(sent);
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

async fn responder_loop(r: Responder, size: usize, tally: Rc<Tally>) {
    let pmo = put_options();
    let gmo = get_wait(MatchOptions::empty());
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
        if let Err(e) = reply_queues[idx].1.put(&mut reply, &pmo, got.data).await {
            tally.error(format!("responder: put reply: {}", e.reason));
            break;
        }
    }
    for (_, q) in reply_queues {
        let _ = q.close(Default::default()).await;
    }
    let _ = r.request_q.close(Default::default()).await;
    let _ = r.conn.disconnect().await;
}

/// Waits for `handles` until `deadline`; aborts and counts the ones still running.
async fn join_until(handles: Vec<JoinHandle<()>>, deadline: tokio::time::Instant) -> usize {
    let mut late = 0;
    for h in handles {
        if h.is_finished() {
            continue;
        }
        let abort = h.abort_handle();
        if tokio::time::timeout_at(deadline, h).await.is_err() {
            abort.abort();
            late += 1;
        }
    }
    late
}

/// Runs one step with `clients` requesters. Must run inside a `LocalSet`.
pub async fn run_step(
    qm: &QueueManager,
    admin: &Connection,
    cfg: &RrConfig,
    clients: usize,
) -> Result<StepOutcome, PerfError> {
    let responders = cfg.responders.count(clients, cfg.queues);
    let left = drain_queues(admin, cfg).await?;
    let tally = Rc::new(Tally::default());
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    let opts = qm.connect_options().sharecnv(cfg.sharecnv);

    // Responders first, so every request finds a getter waiting.
    let mut resp_handles = Vec::with_capacity(responders);
    for id in 0..responders {
        let r = open_responder(id, &opts, cfg).await?;
        resp_handles.push(tokio::task::spawn_local(responder_loop(
            r,
            cfg.size,
            tally.clone(),
        )));
    }
    let mut reqs = Vec::with_capacity(clients);
    for id in 0..clients {
        reqs.push(open_requester(id, &opts, cfg).await?);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let req_handles: Vec<JoinHandle<()>> = reqs
        .into_iter()
        .map(|r| {
            tokio::task::spawn_local(requester_loop(r, cfg.size, cfg.persistent, tally.clone()))
        })
        .collect();

    tokio::time::sleep(Duration::from_secs_f64(cfg.warmup)).await;
    let pid = qm.server_pid();
    let start = Sample::take(tally.round_trips(), pid);
    tally.set_measuring(true);
    tokio::time::sleep(Duration::from_secs_f64(cfg.secs)).await;
    tally.set_measuring(false);
    let end = Sample::take(tally.round_trips(), pid);
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
    let errors = tally.errors();
    let mismatches = tally.mismatches();
    Ok(StepOutcome {
        clients,
        responders,
        window,
        latency: tally.latency(),
        errors,
        mismatches,
        problems: tally.problems(),
        valid: errors == 0 && mismatches == 0 && window.round_trips > 0,
    })
}

/// Puts one stop message per responder on each request queue.
async fn stop_responders(
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
                .put(&mut md, &put_options(), Bytes::from_static(STOP_BODY))
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
}
