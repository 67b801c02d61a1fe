//! SR-CC: sender/receiver (seed 001 section 4.3). Each sender puts to its own queue
//! (`SR.1`, `SR.2`...) as fast as it can (or at `--rate`); two receivers per queue
//! (configurable) get-wait on it, so a getter is always there. The rate is messages got
//! per second; the step also reports the messages put, and the queue build-up: the sum
//! of CURDEPTH (MQINQ CURRENT_Q_DEPTH) of the step's queues at the end of the window.
//!
//! Every body carries the sender's tag at both ends and, when it has room, the time it
//! was put, so a receiver checks its integrity and records put-to-get latency.

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferry_client::{Connection, Queue};
use ferry_mqi::descriptor::{msg_type, persistence};
use ferry_mqi::inquire::selector::CURRENT_Q_DEPTH;
use ferry_mqi::{
    GetOptionFlags, GetOptions, InquireValue, MatchOptions, MessageDescriptor, OpenOptions,
    ReasonCode,
};

use super::rr::{get_wait, put_options, Pacer, STOP_BODY};
use super::step::{join_until, mq, open, queue_od, StepOutcome};
use super::tally::Tally;
use super::verify::{request_tag, write_tag, ReplyCheck, TAG_LEN};
use crate::measure::{self, Sample};
use crate::progress::Progress;
use crate::recovery_log;
use crate::report::group_thousands;
use crate::target::QueueManager;
use crate::PerfError;

/// What an SR-CC run does, the same for every step.
#[derive(Clone, Debug)]
pub struct SrConfig {
    /// Message body size in bytes.
    pub size: usize,
    /// Persistent messages.
    pub persistent: bool,
    /// Puts and gets in syncpoint, each committed at once.
    pub syncpoint: bool,
    /// Messages per second per sender (`None`: as fast as it can).
    pub rate: Option<f64>,
    /// Receivers per queue (the report uses 2).
    pub receivers_per_queue: usize,
    /// SHARECNV the connections ask for.
    pub sharecnv: u32,
    /// Warm-up seconds.
    pub warmup: f64,
    /// Measured seconds.
    pub secs: f64,
}

/// Name of sender `i`'s queue (0-based): `SR.1`, `SR.2`...
pub fn queue_name(i: usize) -> String {
    format!("SR.{}", i + 1)
}

/// Byte offset of the put time in a body (after the leading tag).
const TIME_AT: usize = TAG_LEN;
/// Smallest body that carries the put time as well as both tags.
const TIMED_MIN: usize = 2 * TAG_LEN + 8;

/// Defines (if missing) the queues of up to `senders` senders.
pub async fn prepare_queues(admin: &Connection, senders: usize) -> Result<(), PerfError> {
    for i in 0..senders {
        crate::target::ensure_queue(admin, &queue_name(i)).await?;
    }
    Ok(())
}

/// A body: `template`'s size, tag at both ends, put time (ns since `epoch`) when it fits.
/// Reuses `previous`'s buffer when nobody else holds it.
pub fn sr_body(previous: Option<Bytes>, template: &[u8], tag: &[u8; TAG_LEN], ns: u64) -> Bytes {
    let mut b = match previous.map(Bytes::try_into_mut) {
        Some(Ok(b)) if b.len() == template.len() => b,
        _ => BytesMut::from(template),
    };
    write_tag(&mut b, tag);
    if b.len() >= TIMED_MIN {
        b[TIME_AT..TIME_AT + 8].copy_from_slice(&ns.to_le_bytes());
    }
    b.freeze()
}

/// Checks a received body: the right length and the same tag at both ends. Returns the
/// verdict and the put time, when the body carries one.
pub fn check_body(body: &[u8], data_length: usize, size: usize) -> (ReplyCheck, Option<u64>) {
    if data_length != size || body.len() != size {
        return (
            ReplyCheck::WrongLength {
                got: data_length,
                want: size,
            },
            None,
        );
    }
    // Bodies shorter than two tags have overlapping ends: only the length is checked.
    if size >= 2 * TAG_LEN && body[..TAG_LEN] != body[size - TAG_LEN..] {
        return (ReplyCheck::CorruptBody, None);
    }
    let at = (size >= TIMED_MIN).then(|| {
        let mut t = [0u8; 8];
        t.copy_from_slice(&body[TIME_AT..TIME_AT + 8]);
        u64::from_le_bytes(t)
    });
    (ReplyCheck::Good, at)
}

fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

async fn sender_loop(
    id: usize,
    conn: Connection,
    q: Queue,
    cfg: SrConfig,
    senders: usize,
    epoch: Instant,
    tally: Rc<Tally>,
) {
    let template = vec![0x33u8; cfg.size];
    let pmo = put_options(cfg.syncpoint);
    let mut pacer = Pacer::new(cfg.rate, id as f64 / senders.max(1) as f64);
    let mut previous: Option<Bytes> = None;
    let mut seq = 0u64;
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
        let kept = body.clone();
        let mut md = MessageDescriptor {
            msg_type: msg_type::DATAGRAM,
            persistence: if cfg.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            ..MessageDescriptor::default()
        };
        if let Err(e) = q.put(&mut md, &pmo, body).await {
            tally.error(format!("sender {id}: put: {}", e.reason));
            break;
        }
        if cfg.syncpoint {
            if let Err(e) = conn.commit().await {
                tally.error(format!("sender {id}: commit: {}", e.reason));
                break;
            }
        }
        tally.count_sent();
        previous = Some(kept);
    }
    let _ = q.close(Default::default()).await;
    let _ = conn.disconnect().await;
}

async fn receiver_loop(
    conn: Connection,
    q: Queue,
    cfg: SrConfig,
    epoch: Instant,
    tally: Rc<Tally>,
) {
    let gmo = get_wait(MatchOptions::empty(), cfg.syncpoint, None);
    loop {
        let mut md = MessageDescriptor::default();
        let got = match q.get(&mut md, &gmo, cfg.size).await {
            Ok(g) => g,
            Err(e) => {
                tally.error(format!("receiver: get: {}", e.reason));
                break;
            }
        };
        if cfg.syncpoint {
            if let Err(e) = conn.commit().await {
                tally.error(format!("receiver: commit: {}", e.reason));
                break;
            }
        }
        if got.data.as_ref() == STOP_BODY {
            break;
        }
        let (check, put_at) = check_body(&got.data, got.data_length, cfg.size);
        let ns = put_at.map_or(0, |t| nanos_since(epoch).saturating_sub(t));
        tally.reply(check, ns);
    }
    let _ = q.close(Default::default()).await;
    let _ = conn.disconnect().await;
}

/// The sum of CURDEPTH of `queues` (MQINQ CURRENT_Q_DEPTH through the admin connection).
pub async fn total_depth(admin: &Connection, queues: &[String]) -> Result<u64, PerfError> {
    let mut total = 0u64;
    for name in queues {
        let q = admin
            .open(&queue_od(name)?, OpenOptions::INQUIRE)
            .await
            .map_err(|e| mq(&format!("open {name} to inquire"), e))?;
        let values = q
            .inquire(&[CURRENT_Q_DEPTH])
            .await
            .map_err(|e| mq(&format!("inquire CURDEPTH of {name}"), e))?;
        if let Some(InquireValue::Int(d)) = values.first() {
            total += u64::try_from(*d).unwrap_or(0);
        }
        let _ = q.close(Default::default()).await;
    }
    Ok(total)
}

/// Empties `queues`; returns how many messages were removed.
async fn drain(admin: &Connection, queues: &[String]) -> Result<u64, PerfError> {
    let gmo = GetOptions {
        options: GetOptionFlags::NO_SYNCPOINT | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: 0,
        match_options: MatchOptions::empty(),
    };
    let mut n = 0;
    for name in queues {
        let q = admin
            .open(&queue_od(name)?, OpenOptions::INPUT_SHARED)
            .await
            .map_err(|e| mq(&format!("open {name} to drain it"), e))?;
        loop {
            let mut md = MessageDescriptor::default();
            match q.get(&mut md, &gmo, 0).await {
                Ok(_) => n += 1,
                Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(mq(&format!("drain {name}"), e)),
            }
        }
        let _ = q.close(Default::default()).await;
    }
    Ok(n)
}

/// Runs one step with `senders` senders. Must run inside a `LocalSet`.
pub async fn run_step(
    qm: &QueueManager,
    admin: &Connection,
    cfg: &SrConfig,
    senders: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let names: Vec<String> = (0..senders).map(queue_name).collect();
    let tally = Rc::new(Tally::default());
    let left = drain(admin, &names).await?;
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    let opts = qm.connect_options().sharecnv(cfg.sharecnv);
    let epoch = Instant::now();
    let per_queue = cfg.receivers_per_queue.max(1);
    progress.status("connecting receivers");
    let mut receivers = Vec::new();
    for name in &names {
        for _ in 0..per_queue {
            let (c, q) = open(&opts, name, OpenOptions::INPUT_SHARED).await?;
            receivers.push(tokio::task::spawn_local(receiver_loop(
                c,
                q,
                cfg.clone(),
                epoch,
                tally.clone(),
            )));
        }
    }
    progress.status("connecting senders");
    let mut opened = Vec::new();
    for name in &names {
        opened.push(open(&opts, name, OpenOptions::OUTPUT).await?);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let handles: Vec<_> = opened
        .into_iter()
        .enumerate()
        .map(|(id, (c, q))| {
            tokio::task::spawn_local(sender_loop(
                id,
                c,
                q,
                cfg.clone(),
                senders,
                epoch,
                tally.clone(),
            ))
        })
        .collect();

    let count = |_: f64| format!("{} messages", group_thousands(tally.round_trips() as f64));
    progress.wait("warm-up", cfg.warmup, count).await;
    let pid = qm.server_pid();
    let log_start = recovery_log::read_if(Some(admin)).await;
    let start = Sample::take(tally.round_trips(), pid);
    let sent0 = tally.sent();
    tally.set_measuring(true);
    let live = |t: f64| {
        format!(
            "{} msgs/s got, {} put",
            group_thousands(measure::rate(tally.round_trips() - start.round_trips, t)),
            group_thousands(measure::rate(tally.sent() - sent0, t))
        )
    };
    progress.wait("measuring", cfg.secs, live).await;
    tally.set_measuring(false);
    let end = Sample::take(tally.round_trips(), pid);
    let log_end = recovery_log::read_if(Some(admin)).await;
    let sent = tally.sent() - sent0;
    let depth = total_depth(admin, &names).await?;
    tally.request_stop();

    let late = join_until(
        handles,
        tokio::time::Instant::now() + Duration::from_secs(30),
    )
    .await;
    if late > 0 {
        tally.error(format!("{late} senders did not end within 30 s"));
    }
    // One stop message per receiver, behind whatever is still queued.
    for name in &names {
        let q = admin
            .open(&queue_od(name)?, OpenOptions::OUTPUT)
            .await
            .map_err(|e| mq(&format!("open {name} to stop receivers"), e))?;
        for _ in 0..per_queue {
            let mut md = MessageDescriptor {
                msg_type: msg_type::DATAGRAM,
                persistence: persistence::NOT_PERSISTENT,
                ..MessageDescriptor::default()
            };
            q.put(&mut md, &put_options(false), Bytes::from_static(STOP_BODY))
                .await
                .map_err(|e| mq(&format!("put stop message to {name}"), e))?;
        }
        let _ = q.close(Default::default()).await;
    }
    let late = join_until(
        receivers,
        tokio::time::Instant::now() + Duration::from_secs(30),
    )
    .await;
    if late > 0 {
        tally.note(format!(
            "{late} receivers were still draining the build-up after 30 s (stopped)"
        ));
    }
    if depth > 2 * senders as u64 {
        tally.note(format!(
            "queue build-up: {depth} messages on the {senders} queues at the end of the window \
             (receivers did not keep up)"
        ));
    }
    let window = measure::window(
        &start,
        &end,
        measure::clock_ticks_per_sec(),
        measure::online_cpus(),
    );
    // The messages moved are the messages got.
    let (log, note) =
        recovery_log::step_figures(log_start, log_end, window.round_trips, window.elapsed_secs);
    if let Some(n) = note {
        tally.note(n);
    }
    let errors = tally.errors();
    let mismatches = tally.mismatches();
    Ok(StepOutcome {
        clients: senders,
        responders: senders * per_queue,
        window,
        latency: tally.latency(),
        errors,
        mismatches,
        queue_depth_end: Some(depth),
        sent: Some(sent),
        log,
        problems: tally.problems(),
        valid: errors == 0 && mismatches == 0 && window.round_trips > 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_carry_tag_and_time() {
        let tag = request_tag(2, 9);
        let b = sr_body(None, &[0u8; 2048], &tag, 123_456);
        assert_eq!(
            check_body(&b, 2048, 2048),
            (ReplyCheck::Good, Some(123_456))
        );
        let mut bad = b.to_vec();
        bad[2047] ^= 1;
        assert_eq!(check_body(&bad, 2048, 2048).0, ReplyCheck::CorruptBody);
        assert_eq!(
            check_body(&b[..100], 100, 2048).0,
            ReplyCheck::WrongLength {
                got: 100,
                want: 2048
            }
        );
        // Too small for the time: still checked, no latency.
        let small = sr_body(None, &[0u8; 20], &tag, 5);
        assert_eq!(check_body(&small, 20, 20), (ReplyCheck::Good, None));
        // The buffer is reused when free.
        let again = sr_body(Some(b), &[0u8; 2048], &request_tag(2, 10), 7);
        assert_eq!(check_body(&again, 2048, 2048).1, Some(7));
        assert_eq!(queue_name(0), "SR.1");
    }
}
