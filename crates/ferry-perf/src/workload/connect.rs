//! The connection test (seed 002 section 6): N client applications connect as fast as
//! they can, each opening its request and reply queue, then each is rated at one
//! request/reply round trip every 100 s (the first right after it connected, proving
//! the connection works). A step reports the time it took to connect them all,
//! connections per second, the queue manager's CPU while they connected, and each
//! client's connect-and-open latency; round trips made while holding are counted.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::{FixedStr, MatchOptions, MessageDescriptor, OpenOptions, ReasonCode};
use tokio::sync::watch;

use super::app::Protocol;
use super::native::{self, Native};
use super::rr::{self, get_wait, put_options, Pacer, RrConfig, REPLY_QUEUE};
use super::step::{join_until, queue_od, StepOutcome};
use super::tally::Tally;
use super::verify::{check_reply, make_body, request_tag, ReplyCheck};
use crate::measure::{self, Sample};
use crate::progress::Progress;
use crate::target::QueueManager;
use crate::PerfError;

/// What a connection test does, the same for every step.
#[derive(Clone, Debug)]
pub struct ConnectConfig {
    /// The request/reply shape the clients use once connected (size, queues...).
    pub rr: RrConfig,
    /// Seconds between a client's round trips (the report: 100).
    pub interval_secs: f64,
    /// Longest wait for every client to connect.
    pub connect_timeout: Duration,
}

struct Client {
    conn: Connection,
    request_q: Queue,
    reply_q: Queue,
}

async fn open_client(id: usize, opts: &ConnectOptions, queues: usize) -> Result<Client, String> {
    let conn = Connection::connect(opts)
        .await
        .map_err(|e| format!("client {id}: connect: {}", e.reason))?;
    let name = rr::request_queue_name(rr::queue_for(id, queues));
    let od = queue_od(&name).map_err(|e| e.to_string())?;
    let request_q = conn
        .open(&od, OpenOptions::OUTPUT)
        .await
        .map_err(|e| format!("client {id}: open {name}: {}", e.reason))?;
    let od = queue_od(REPLY_QUEUE).map_err(|e| e.to_string())?;
    let reply_q = conn
        .open(&od, OpenOptions::INPUT_SHARED)
        .await
        .map_err(|e| format!("client {id}: open {REPLY_QUEUE}: {}", e.reason))?;
    Ok(Client {
        conn,
        request_q,
        reply_q,
    })
}

/// One round trip: the verdict on the reply, or what failed.
async fn round_trip(c: &Client, id: usize, seq: u64, cfg: &RrConfig) -> Result<ReplyCheck, String> {
    let tag = request_tag(id, seq);
    let body: Bytes = make_body(&vec![0x5Au8; cfg.size], &tag);
    let mut md = MessageDescriptor {
        msg_type: msg_type::REQUEST,
        persistence: if cfg.persistent {
            persistence::PERSISTENT
        } else {
            persistence::NOT_PERSISTENT
        },
        reply_to_q: FixedStr::new(REPLY_QUEUE).map_err(|e| e.to_string())?,
        ..MessageDescriptor::default()
    };
    c.request_q
        .put(&mut md, &put_options(false), body)
        .await
        .map_err(|e| format!("client {id}: put: {}", e.reason))?;
    let mut reply = MessageDescriptor {
        correl_id: md.msg_id,
        ..MessageDescriptor::default()
    };
    let gmo = get_wait(MatchOptions::CORREL_ID, false, Some(cfg.reply_timeout));
    match c.reply_q.get(&mut reply, &gmo, cfg.size).await {
        Ok(got) => Ok(check_reply(
            &md.msg_id,
            &reply,
            &got.data,
            got.data_length,
            cfg.size,
            &tag,
        )),
        Err(e) if e.reason == ReasonCode::NoMsgAvailable => Err(format!(
            "client {id}: no reply within {:.0} s",
            cfg.reply_timeout.as_secs_f64()
        )),
        Err(e) => Err(format!("client {id}: get reply: {}", e.reason)),
    }
}

async fn client_task(
    id: usize,
    opts: ConnectOptions,
    cfg: ConnectConfig,
    connected: Rc<Tally>,
    trips: Rc<Tally>,
    mut stop: watch::Receiver<bool>,
) {
    let started = Instant::now();
    let c = match open_client(id, &opts, cfg.rr.queues).await {
        Ok(c) => c,
        Err(e) => return connected.error(e),
    };
    let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    connected.reply(ReplyCheck::Good, ns);
    let mut pacer = Pacer::new(Some(1.0 / cfg.interval_secs), 0.0);
    let mut seq = 0;
    loop {
        tokio::select! {
            _ = pacer.wait() => {}
            _ = stop.changed() => break,
        }
        if *stop.borrow() {
            break;
        }
        seq += 1;
        match round_trip(&c, id, seq, &cfg.rr).await {
            Ok(check) => {
                if !trips.reply(check, 0) {
                    break;
                }
            }
            Err(e) => {
                trips.error(e);
                break;
            }
        }
    }
    let _ = c.request_q.close(Default::default()).await;
    let _ = c.reply_q.close(Default::default()).await;
    let _ = c.conn.disconnect().await;
}

/// Runs one step with `clients` connecting clients. Must run inside a `LocalSet`.
pub async fn run_step(
    qm: &QueueManager,
    admin: &Connection,
    cfg: &ConnectConfig,
    clients: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    native::drain(admin, &rr::queue_names(&cfg.rr)).await?;
    let trips = Rc::new(Tally::default());
    let connected = Rc::new(Tally::default());
    connected.set_measuring(true);
    let opts = qm.connect_options().sharecnv(cfg.rr.sharecnv);
    let responders = cfg.rr.responders.count(1, cfg.rr.queues);
    progress.status("connecting responders");
    // The connection test's responders are RR-CC's, over the native protocol.
    let mut native = Native::new(qm, admin, &cfg.rr)?;
    let resp = rr::start_responders(&mut native, responders, &trips).await?;

    let (stop_tx, stop_rx) = watch::channel(false);
    let pid = qm.server_pid();
    let start = Sample::take(0, pid.as_slice());
    let handles: Vec<_> = (0..clients)
        .map(|id| {
            tokio::task::spawn_local(client_task(
                id,
                opts.clone(),
                cfg.clone(),
                connected.clone(),
                trips.clone(),
                stop_rx.clone(),
            ))
        })
        .collect();
    let deadline = Instant::now() + cfg.connect_timeout;
    loop {
        let done = connected.round_trips() + connected.errors();
        progress.status(&format!("connected {}/{clients}", connected.round_trips()));
        if done >= clients as u64 || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let end = Sample::take(connected.round_trips(), pid.as_slice());
    if connected.round_trips() + connected.errors() < clients as u64 {
        connected.error(format!(
            "only {} of {clients} clients connected within {:.0} s",
            connected.round_trips(),
            cfg.connect_timeout.as_secs_f64()
        ));
    }
    let status = |_: f64| format!("{} round trips", trips.round_trips());
    progress.wait("holding", cfg.rr.secs, status).await;
    let _ = stop_tx.send(true);
    let late = join_until(
        handles,
        tokio::time::Instant::now() + Duration::from_secs(60),
    )
    .await;
    if late > 0 {
        trips.error(format!("{late} clients did not end within 60 s"));
    }
    native.stop_responders(responders).await?;
    let late = join_until(resp, tokio::time::Instant::now() + Duration::from_secs(10)).await;
    if late > 0 {
        trips.error(format!("{late} responders did not end within 10 s"));
    }

    let window = measure::window(
        &start,
        &end,
        measure::clock_ticks_per_sec(),
        measure::online_cpus(),
    );
    let errors = connected.errors() + trips.errors();
    let mismatches = trips.mismatches();
    let mut problems = connected.problems();
    problems.extend(trips.problems());
    problems.truncate(5);
    Ok(StepOutcome {
        clients,
        responders,
        window,
        latency: connected.latency(),
        errors,
        mismatches,
        queue_depth_end: None,
        sent: Some(trips.round_trips()),
        log: None,
        compression: None,
        lost: None,
        messages_per_batch: None,
        instances: None,
        problems,
        valid: errors == 0 && mismatches == 0 && window.round_trips == clients as u64,
    })
}

/// Checks that the request and reply queues exist (defines them when missing).
pub async fn prepare_queues(admin: &Connection, cfg: &ConnectConfig) -> Result<(), PerfError> {
    rr::prepare_queues(admin, &cfg.rr).await
}
