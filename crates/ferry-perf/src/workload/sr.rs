//! SR-CC: sender/receiver (seed 001 section 4.3). Each sender puts to its own queue
//! (`SR.1`, `SR.2`...) as fast as it can (or at `--rate`); two receivers per queue
//! (configurable) get-wait on it, so a getter is always there. The rate is messages got
//! per second; the step also reports the messages put, and the queue build-up: the sum
//! of CURDEPTH (MQINQ CURRENT_Q_DEPTH) of the step's queues at the end of the window.
//!
//! Every body carries the sender's tag at both ends and, when it has room, the time it
//! was put, so a receiver checks its integrity and records put-to-get latency.
//!
//! Written once over [`super::app::Streams`], run over the native protocol
//! ([`super::native`]) or AMQP 1.0 ([`crate::amqp::sr`]).

use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use ferry_client::Connection;
use ferry_mqi::inquire::selector::CURRENT_Q_DEPTH;
use ferry_mqi::{InquireValue, OpenOptions};

use super::app::{Received, Receiver, Sender, Streams};
use super::rr::Pacer;
use super::step::{finish, join_until, measure_window, mq, queue_od, StepOutcome};
use super::tally::Tally;
use super::verify::{request_tag, write_tag, ReplyCheck, TAG_LEN};
use crate::progress::Progress;
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
    /// What the bodies hold.
    pub body: crate::compression::BodyKind,
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

/// Nanoseconds since `epoch` (the put time a body carries).
pub(crate) fn nanos_since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

async fn sender_loop<S: Sender>(
    sender: S,
    id: usize,
    cfg: SrConfig,
    senders: usize,
    epoch: Instant,
    tally: Rc<Tally>,
) {
    let pace = SendPace {
        rate: cfg.rate,
        id,
        of: senders,
        body: cfg.body,
        size: cfg.size,
        fill: 0x33,
    };
    send_until_stopped(sender, pace, epoch, tally, || {}).await;
}

/// How one sender (or publisher) of a step sends: its rate and its place among the others
/// (so their sends spread over the interval), and its bodies.
pub(crate) struct SendPace {
    /// Messages per second (`None`: as fast as it can).
    pub rate: Option<f64>,
    /// This sender's number, from 0.
    pub id: usize,
    /// How many senders there are.
    pub of: usize,
    /// What the bodies hold.
    pub body: crate::compression::BodyKind,
    /// Body size in bytes.
    pub size: usize,
    /// The template's filler byte.
    pub fill: u8,
}

/// Sends tagged, timed bodies (`sr_body`) until the step stops or a send fails, counting
/// each sent message (and calling `on_sent`), then closes the sender. SR-CC's senders and
/// PS-CC's publishers.
pub(crate) async fn send_until_stopped<S: Sender>(
    mut sender: S,
    pace: SendPace,
    epoch: Instant,
    tally: Rc<Tally>,
    on_sent: impl Fn(),
) {
    let (id, template) = (
        pace.id,
        crate::compression::body_template(pace.body, pace.size, pace.fill),
    );
    let mut pacer = Pacer::new(pace.rate, id as f64 / pace.of.max(1) as f64);
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
        match sender.send(body).await {
            Ok(buffer) => {
                tally.count_sent();
                on_sent();
                previous = buffer;
            }
            Err(e) => {
                tally.error(e);
                break;
            }
        }
    }
    sender.close().await;
}

/// One receiver (or subscriber): checks every message it gets, records its put-to-get
/// latency, until it is told to stop or fails.
pub(crate) async fn receiver_loop<R: Receiver>(
    mut r: R,
    size: usize,
    epoch: Instant,
    tally: Rc<Tally>,
) {
    loop {
        match r.receive().await {
            Ok(Received::Message { body, length }) => {
                let (check, put_at) = check_body(&body, length, size);
                let ns = put_at.map_or(0, |t| nanos_since(epoch).saturating_sub(t));
                tally.reply(check, ns);
            }
            Ok(Received::Undecodable(what)) => {
                tally.reply(ReplyCheck::CorruptBody, 0);
                tally.note(what);
            }
            Ok(Received::Stopped) => break,
            Err(e) => {
                tally.error(e);
                break;
            }
        }
    }
    r.close().await;
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

/// Runs one step with `senders` senders over `streams`. `admin`, when the broker is a
/// Ferry queue manager, is asked for the recovery log's counters; `server_pid` is the
/// broker's process, for its CPU. Must run inside a `LocalSet`.
pub async fn run_step<P: Streams>(
    streams: &mut P,
    server_pid: Option<u32>,
    admin: Option<&Connection>,
    cfg: &SrConfig,
    senders: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let tally = Rc::new(Tally::default());
    progress.status("draining the queues");
    let left = streams.drain().await?;
    if left > 0 {
        tally.note(format!(
            "{left} messages were left on the queues before the step (drained)"
        ));
    }
    let epoch = Instant::now();
    let per_queue = cfg.receivers_per_queue.max(1);
    progress.status("connecting receivers");
    let mut receivers = Vec::new();
    for id in 0..senders {
        for n in 0..per_queue {
            let r = streams.open_receiver(id, n).await?;
            receivers.push(tokio::task::spawn_local(receiver_loop(
                r,
                cfg.size,
                epoch,
                tally.clone(),
            )));
        }
    }
    progress.status("connecting senders");
    let mut opened = Vec::new();
    for id in 0..senders {
        opened.push(streams.open_sender(id).await?);
    }
    streams.all_open();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let handles: Vec<_> = opened
        .into_iter()
        .enumerate()
        .map(|(id, s)| {
            tokio::task::spawn_local(sender_loop(
                s,
                id,
                cfg.clone(),
                senders,
                epoch,
                tally.clone(),
            ))
        })
        .collect();

    let window = measure_window(
        &tally,
        server_pid.as_slice(),
        admin,
        cfg.warmup,
        cfg.secs,
        progress,
        "messages",
    )
    .await;
    let sent = window.sent;
    let depth = streams.depth(tally.sent(), tally.round_trips()).await?;
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
    streams.stop_receivers(per_queue).await?;
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
            "queue build-up: {depth} messages {} at the end of the window (receivers did \
             not keep up)",
            P::DEPTH_IS
        ));
    }
    // The messages moved are the messages got.
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
