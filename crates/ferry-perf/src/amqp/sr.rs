//! SR-CC over AMQP 1.0: the native SR-CC (see [`crate::workload::sr`]) on an AMQP
//! broker. Each sender has its own session (up to `--sessions-per-connection`
//! applications share a connection, see [`super::pool`]) and sends to its own queue (`SR.1`,
//! `SR.2`...) as fast as the broker accepts (each send waits for `accepted` unless
//! `--presettled`) or at `--rate`; receivers (two per queue unless `--responders`
//! says otherwise), each with its own session and credit `--prefetch`, accept every
//! message. Bodies are the native ones (tag at both ends, put time), so integrity and
//! put-to-get latency are checked the same way.
//!
//! The rate is messages got per second; the step also reports the messages sent and
//! the build-up at the end of the window. AMQP has no queue-depth inquiry, so the
//! build-up is counted: messages sent minus messages got since the step began (what
//! is on the queues plus what is in flight).

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_amqp::Message;
use ferry_client::Connection;

use super::client::Client;
use super::error::AmqpError;
use super::link::{ReceiverLink, SendMode, SenderLink};
use super::message::{body_bytes, datagram};
use super::pool::Pool;
use super::settings::Settings;
use super::step::{finish, measure_window, setup_error, Stop};
use crate::progress::Progress;
use crate::workload::rr::Pacer;
use crate::workload::sr::{check_body, queue_name, sr_body, SrConfig};
use crate::workload::step::{join_until, StepOutcome};
use crate::workload::tally::Tally;
use crate::workload::verify::{request_tag, ReplyCheck};
use crate::PerfError;

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// One sender's session and link, with its number.
struct Sender {
    id: usize,
    client: Client,
    link: SenderLink,
}

async fn sender_loop(
    Sender {
        id,
        client,
        mut link,
    }: Sender,
    cfg: SrConfig,
    s: Settings,
    senders: usize,
    epoch: Instant,
    tally: Rc<Tally>,
) {
    let template = vec![0x33u8; cfg.size];
    let to = link.address().to_string();
    let mut pacer = Pacer::new(cfg.rate, id as f64 / senders.max(1) as f64);
    let mut previous: Option<Bytes> = None;
    let mut seq = 0u64;
    // Every unsettled send waits for its outcome, persistent or not: a sender that does
    // not wait (Qpid JMS's async send) would only fill its queue at full speed, and
    // the rate measured would be the queue's limit, not the broker's.
    let mode = if s.presettled {
        SendMode::Presettled
    } else {
        SendMode::Sync
    };
    while !tally.stopping() {
        pacer.wait().await;
        if tally.stopping() {
            break;
        }
        seq += 1;
        let body = sr_body(
            previous.take(),
            &template,
            &request_tag(id, seq),
            nanos_since(epoch),
        );
        let msg = datagram(body, &to, cfg.persistent);
        if let Err(e) = link.send(&msg, mode).await {
            tally.error(format!("sender {}: send: {e}", id + 1));
            break;
        }
        tally.count_sent();
        previous = body_bytes(&msg);
    }
    client.close().await;
}

async fn receiver_loop(
    client: Client,
    mut link: ReceiverLink,
    cfg: SrConfig,
    epoch: Instant,
    stop: Stop,
    tally: Rc<Tally>,
) {
    let stopped = stop.wait();
    tokio::pin!(stopped);
    loop {
        let d = tokio::select! {
            biased;
            d = link.recv() => d,
            _ = &mut stopped => break,
        };
        let d = match d {
            Ok(d) => d,
            Err(e) => {
                tally.error(format!("receiver: receive: {e}"));
                break;
            }
        };
        if let Err(e) = link.accept(&d) {
            tally.error(format!("receiver: accept: {e}"));
            break;
        }
        match Message::decode(d.message) {
            Ok(m) => {
                let body = body_bytes(&m).unwrap_or_default();
                let (check, put_at) = check_body(&body, body.len(), cfg.size);
                let ns = put_at.map_or(0, |t| nanos_since(epoch).saturating_sub(t));
                tally.reply(check, ns);
            }
            Err(e) => {
                tally.reply(ReplyCheck::CorruptBody, 0);
                tally.note(format!("receiver: undecodable message: {e}"));
            }
        }
    }
    client.close().await;
}

async fn open_sender(
    id: usize,
    s: &Settings,
    pool: &mut Pool,
) -> Result<(Client, SenderLink), AmqpError> {
    let client = pool
        .session(&format!("ferry-perf-sender-{}", id + 1))
        .await?;
    let link = SenderLink::attach(&client, &s.address(&queue_name(id))).await?;
    Ok((client, link))
}

async fn open_receiver(
    id: usize,
    n: usize,
    s: &Settings,
    pool: &mut Pool,
) -> Result<(Client, ReceiverLink), AmqpError> {
    let client = pool
        .session(&format!("ferry-perf-receiver-{}-{}", id + 1, n + 1))
        .await?;
    let link = ReceiverLink::attach(&client, &s.address(&queue_name(id)), None, s.prefetch).await?;
    Ok((client, link))
}

/// Runs one SR-CC step over AMQP with `senders` senders; `admin`, when the broker is
/// the embedded Ferry queue manager, is asked for its recovery log's counters. Must run
/// inside a `LocalSet`.
pub async fn run_step(
    server_pid: Option<u32>,
    admin: Option<&Connection>,
    s: &Settings,
    cfg: &SrConfig,
    senders: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let names: Vec<String> = (0..senders).map(queue_name).collect();
    let tally = Rc::new(Tally::default());
    progress.status("draining the queues");
    let left = super::drain::drain(s, &names)
        .await
        .map_err(|e| setup_error("drain the queues", e, &names))?;
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    let epoch = Instant::now();
    let per_queue = cfg.receivers_per_queue.max(1);
    let stop = Stop::new();
    let mut pool = Pool::new(&s.url, s.sessions_per_connection);
    progress.status("connecting receivers");
    let mut receivers = Vec::new();
    for id in 0..senders {
        for n in 0..per_queue {
            let (c, l) = open_receiver(id, n, s, &mut pool)
                .await
                .map_err(|e| setup_error("connect a receiver", e, &names))?;
            receivers.push(tokio::task::spawn_local(receiver_loop(
                c,
                l,
                cfg.clone(),
                epoch,
                stop.clone(),
                tally.clone(),
            )));
        }
    }
    progress.status("connecting senders");
    let mut opened = Vec::new();
    for id in 0..senders {
        opened.push(
            open_sender(id, s, &mut pool)
                .await
                .map_err(|e| setup_error("connect a sender", e, &names))?,
        );
    }
    // The last session of each connection closes it.
    drop(pool);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let handles: Vec<_> = opened
        .into_iter()
        .enumerate()
        .map(|(id, (c, l))| {
            tokio::task::spawn_local(sender_loop(
                Sender {
                    id,
                    client: c,
                    link: l,
                },
                cfg.clone(),
                s.clone(),
                senders,
                epoch,
                tally.clone(),
            ))
        })
        .collect();

    let window = measure_window(
        &tally, server_pid, admin, cfg.warmup, cfg.secs, progress, "messages",
    )
    .await;
    let sent = window.sent;
    let depth = tally.sent().saturating_sub(tally.round_trips());
    tally.request_stop();
    let late = join_until(
        handles,
        tokio::time::Instant::now() + Duration::from_secs(30),
    )
    .await;
    if late > 0 {
        tally.error(format!("{late} senders did not end within 30 s"));
    }
    // Let the receivers take what is still queued, for at most 30 s.
    let deadline = Instant::now() + Duration::from_secs(30);
    while tally.round_trips() + tally.mismatches() < tally.sent() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let undelivered = tally
        .sent()
        .saturating_sub(tally.round_trips() + tally.mismatches());
    if undelivered > 0 {
        tally.note(format!(
            "{undelivered} messages were still queued 30 s after the senders ended (drained \
             before the next step)"
        ));
    }
    stop.now();
    let late = join_until(
        receivers,
        tokio::time::Instant::now() + Duration::from_secs(10),
    )
    .await;
    if late > 0 {
        tally.error(format!("{late} receivers did not end within 10 s"));
    }
    if depth > 2 * senders as u64 {
        tally.note(format!(
            "queue build-up: {depth} messages sent and not yet got at the end of the window \
             (receivers did not keep up)"
        ));
    }
    Ok(finish(
        &tally,
        senders,
        senders * per_queue,
        window,
        1,
        Some(depth),
        Some(sent),
    ))
}
