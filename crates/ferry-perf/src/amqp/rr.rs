//! RR-CC over AMQP 1.0: the native RR-CC (see [`crate::workload::rr`]) as JMS
//! applications on an AMQP broker do it.
//!
//! Each requester has its own session (up to `--sessions-per-connection` applications
//! share a connection, see [`super::pool`]) with a sender to its request queue
//! (`REQUEST.<i mod N + 1>`, round-robin as native) and ONE long-lived receiver on its
//! reply queue: the shared `REPLY` with the selector `JMSCorrelationID = 'RQ-<i>'`
//! (the broker's correlation-id lookup, as MQ's get by CorrelId), or `REPLY.<i>` with no
//! selector under `--reply-queues per-requester`; its credit is Qpid JMS's default
//! prefetch, see [`REPLY_PREFETCH`]. It sends a request (correlation-id
//! `RQ-<i>`, reply-to, durable when persistent) as Qpid JMS would (see
//! [`Settings::send_mode`]: a persistent request waits for the broker's `accepted`, a
//! non-persistent one is sent async and, the harness's choice, a refusal ends the wait
//! for its reply), then
//! waits for the reply and checks its correlation-id, length and the tag of this
//! request in its body (see [`super::message`]). Responders, each with its own session
//! and one receiver (credit `--prefetch`) on a request queue, send the reply likewise
//! and only then accept the request.
//!
//! A step: drain the queues, connect responders then requesters (packed onto shared
//! connections in that order, as native conversations fill sockets), warm up, measure,
//! then stop: requesters finish their round trip, responders stop waiting, everyone
//! closes.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_amqp::{Message, MessageId};
use ferry_client::Connection;
use tokio::task::JoinHandle;

use super::client::Client;
use super::error::AmqpError;
use super::link::{Delivery, ReceiverLink, SendMode, SenderLink};
use super::message::{
    body_bytes, check_reply, reply_selector, reply_to, request, requester_correlation, set_body,
    take_body, BadRequest,
};
use super::pool::Pool;
use super::settings::Settings;
use super::step::{finish, measure_window, setup_error, Stop};
use crate::args::ReplyQueues;
use crate::progress::Progress;
use crate::workload::rr::{queue_for, request_queue_name, Fault, Pacer, RrConfig, MISSING_QUEUE};
use crate::workload::step::{join_until, StepOutcome};
use crate::workload::tally::Tally;
use crate::workload::verify::{next_body, request_tag};
use crate::PerfError;

/// Credit of a requester's reply receiver: Qpid JMS's default prefetch
/// (`jms.prefetchPolicy.queuePrefetch`, 1000). A requester has one request, so at most
/// one reply, outstanding at a time: the credit changes no order or distribution, it
/// only spares the flow frame that credit 1 needs after every reply. (`--prefetch` is
/// the responders' credit, where it does decide who gets which request.)
const REPLY_PREFETCH: u32 = 1000;

struct Requester {
    id: usize,
    client: Client,
    sender: SenderLink,
    replies: ReceiverLink,
    reply_address: String,
}

struct Responder {
    client: Client,
    requests: ReceiverLink,
}

async fn open_requester(
    id: usize,
    s: &Settings,
    cfg: &RrConfig,
    pool: &mut Pool,
) -> Result<Requester, AmqpError> {
    let client = pool.session(&format!("ferry-perf-rq-{}", id + 1)).await?;
    let request_address = s.address(&request_queue_name(queue_for(id, cfg.queues)));
    let sender = SenderLink::attach(&client, &request_address).await?;
    let reply_address = s.address(&s.reply_queue(id));
    let selector = match s.reply_queues {
        ReplyQueues::Shared => Some(reply_selector(id)),
        ReplyQueues::PerRequester => None,
    };
    let replies =
        ReceiverLink::attach(&client, &reply_address, selector.as_deref(), REPLY_PREFETCH).await?;
    Ok(Requester {
        id,
        client,
        sender,
        replies,
        reply_address,
    })
}

async fn open_responder(
    id: usize,
    s: &Settings,
    cfg: &RrConfig,
    pool: &mut Pool,
) -> Result<Responder, AmqpError> {
    let client = pool.session(&format!("ferry-perf-rs-{}", id + 1)).await?;
    let address = s.address(&request_queue_name(queue_for(id, cfg.queues)));
    let requests = ReceiverLink::attach(&client, &address, None, s.prefetch).await?;
    Ok(Responder { client, requests })
}

async fn requester_loop(
    mut r: Requester,
    cfg: RrConfig,
    s: Settings,
    clients: usize,
    tally: Rc<Tally>,
) {
    let template = vec![0x5Au8; cfg.size];
    let correlation = requester_correlation(r.id);
    let reply_address = if cfg.fault == Fault::MissingReplyQueue {
        s.address(MISSING_QUEUE)
    } else {
        r.reply_address.clone()
    };
    let to = r.sender.address().to_string();
    let mut pacer = Pacer::new(cfg.rate, r.id as f64 / clients.max(1) as f64);
    let mode = s.send_mode(cfg.persistent);
    let mut seq = 0u64;
    let mut previous: Option<Bytes> = None;
    // One request message whose body is swapped per request (its addresses and
    // correlation-id are the same every time), and one reply timer moved forward per
    // request rather than a timer made and cancelled per round trip.
    let mut msg = request(
        Bytes::new(),
        &to,
        &reply_address,
        &correlation,
        cfg.persistent,
    );
    let reply_timer = tokio::time::sleep(cfg.reply_timeout);
    tokio::pin!(reply_timer);
    while !tally.stopping() {
        pacer.wait().await;
        if tally.stopping() {
            break;
        }
        seq += 1;
        let tag = request_tag(r.id, seq);
        set_body(&mut msg, next_body(previous.take(), &template, &tag));
        let started = Instant::now();
        if let Err(e) = r.sender.send(&msg, mode).await {
            tally.error(format!("requester {}: send request: {e}", r.id + 1));
            break;
        }
        reply_timer
            .as_mut()
            .reset(tokio::time::Instant::now() + cfg.reply_timeout);
        // A request sent async may still be refused (a full queue). Qpid JMS would tell
        // an ExceptionListener and leave the receive to time out; the harness ends the
        // wait for its reply at once, with the refusal as the error.
        let received = tokio::select! {
            biased;
            d = r.replies.recv() => Some(d),
            e = r.sender.refused(), if mode == SendMode::Async => {
                tally.error(format!("requester {}: send request: {e}", r.id + 1));
                break;
            }
            _ = &mut reply_timer => None,
        };
        let d = match received {
            Some(Ok(d)) => d,
            None => {
                tally.error(format!(
                    "requester {}: no reply within {:.0} s",
                    r.id + 1,
                    cfg.reply_timeout.as_secs_f64()
                ));
                break;
            }
            Some(Err(e)) => {
                tally.error(format!("requester {}: receive reply: {e}", r.id + 1));
                break;
            }
        };
        let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        if let Err(e) = r.replies.accept(&d) {
            tally.error(format!("requester {}: accept reply: {e}", r.id + 1));
            break;
        }
        let check = match Message::decode(d.message) {
            Ok(reply) => check_reply(&reply, &correlation, cfg.size, &tag),
            Err(e) => {
                tally.mismatch(format!("requester {}: undecodable reply: {e}", r.id + 1));
                break;
            }
        };
        if !tally.reply(check, ns) {
            break;
        }
        // The body went into the message; take it back so its buffer is reused.
        previous = take_body(&mut msg);
    }
    r.client.close().await;
}

/// What a responder does with one request.
async fn answer(
    r: &mut Responder,
    d: &Delivery,
    senders: &mut Vec<SenderLink>,
    cfg: &RrConfig,
    s: &Settings,
) -> Result<(), String> {
    let request = Message::decode(d.message.clone())
        .map_err(|e| format!("responder: undecodable request: {e}"))?;
    let (mut reply, address) = match reply_to(&request) {
        Ok(r) => r,
        Err(BadRequest::NoReplyTo) => return Err("responder: request without reply-to".into()),
        Err(BadRequest::Undecodable(e)) => return Err(format!("responder: {e}")),
    };
    match cfg.fault {
        Fault::WrongCorrelId => {
            if let Some(p) = reply.properties.as_mut() {
                p.correlation_id = Some(MessageId::String("RQ-WRONG".into()));
            }
        }
        Fault::CorruptBody => {
            if let Some(mut b) = body_bytes(&reply).map(|b| b.to_vec()) {
                if let Some(first) = b.first_mut() {
                    *first ^= 0xFF;
                }
                reply.body = Some(ferry_amqp::Body::data(Bytes::from(b)));
            }
        }
        _ => {}
    }
    // One reply queue (or one per requester): a short list, searched by address.
    let link = match senders.iter().position(|l| l.address() == address.as_str()) {
        Some(i) => &mut senders[i],
        None => {
            let link = SenderLink::attach(&r.client, address.as_str())
                .await
                .map_err(|e| format!("responder: reply queue: {e}"))?;
            senders.push(link);
            let last = senders.len() - 1;
            &mut senders[last]
        }
    };
    link.send(&reply, s.send_mode(cfg.persistent))
        .await
        .map_err(|e| format!("responder: send reply: {e}"))?;
    r.requests
        .accept(d)
        .map_err(|e| format!("responder: accept request: {e}"))
}

async fn responder_loop(
    mut r: Responder,
    cfg: RrConfig,
    s: Settings,
    stop: Stop,
    tally: Rc<Tally>,
) {
    let mut senders: Vec<SenderLink> = Vec::new();
    // Waits for the stop once for the whole loop, not once per request.
    let stopped = stop.wait();
    tokio::pin!(stopped);
    loop {
        let d = tokio::select! {
            biased;
            d = r.requests.recv() => d,
            _ = &mut stopped => break,
        };
        let d = match d {
            Ok(d) => d,
            Err(e) => {
                tally.error(format!("responder: receive request: {e}"));
                break;
            }
        };
        if let Err(e) = answer(&mut r, &d, &mut senders, &cfg, &s).await {
            tally.error(e);
            break;
        }
    }
    drop(senders);
    r.client.close().await;
}

/// Runs one RR-CC step over AMQP with `clients` requesters; `admin`, when the broker
/// is the embedded Ferry queue manager, is asked for its recovery log's counters.
/// Must run inside a `LocalSet`.
pub async fn run_step(
    server_pid: Option<u32>,
    admin: Option<&Connection>,
    s: &Settings,
    cfg: &RrConfig,
    clients: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let responders = cfg.responders.count(clients, cfg.queues);
    let queues = s.rr_queues(cfg.queues, clients);
    let tally = Rc::new(Tally::default());
    progress.status("draining the queues");
    let left = super::drain::drain(s, &queues)
        .await
        .map_err(|e| setup_error("drain the queues", e, &queues))?;
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    if let (Some(admin), Fault::PutInhibited) = (admin, cfg.fault) {
        let requests: Vec<String> = (0..cfg.queues).map(request_queue_name).collect();
        crate::target::inhibit_puts(admin, &requests, true).await?;
    }
    let stop = Stop::new();
    let mut pool = Pool::new(&s.url, s.sessions_per_connection);
    progress.status("connecting responders");
    let mut resp_handles: Vec<JoinHandle<()>> = Vec::with_capacity(responders);
    for id in 0..responders {
        let r = open_responder(id, s, cfg, &mut pool)
            .await
            .map_err(|e| setup_error("connect a responder", e, &queues))?;
        resp_handles.push(tokio::task::spawn_local(responder_loop(
            r,
            cfg.clone(),
            s.clone(),
            stop.clone(),
            tally.clone(),
        )));
    }
    progress.status("connecting requesters");
    let mut reqs = Vec::with_capacity(clients);
    for id in 0..clients {
        reqs.push(
            open_requester(id, s, cfg, &mut pool)
                .await
                .map_err(|e| setup_error("connect a requester", e, &queues))?,
        );
    }
    // The last session of each connection closes it.
    drop(pool);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let req_handles: Vec<JoinHandle<()>> = reqs
        .into_iter()
        .map(|r| {
            tokio::task::spawn_local(requester_loop(
                r,
                cfg.clone(),
                s.clone(),
                clients,
                tally.clone(),
            ))
        })
        .collect();

    let window = measure_window(
        &tally,
        server_pid,
        admin,
        cfg.warmup,
        cfg.secs,
        progress,
        "round trips",
    )
    .await;
    tally.request_stop();
    let late = join_until(
        req_handles,
        tokio::time::Instant::now() + Duration::from_secs(30),
    )
    .await;
    if late > 0 {
        tally.error(format!(
            "{late} requesters did not end within 30 s (reply lost?)"
        ));
    }
    stop.now();
    let late = join_until(
        resp_handles,
        tokio::time::Instant::now() + Duration::from_secs(10),
    )
    .await;
    if late > 0 {
        tally.error(format!("{late} responders did not end within 10 s"));
    }
    // Every round trip moves two messages: the request and the reply.
    Ok(finish(&tally, clients, responders, window, 2, None, None))
}
