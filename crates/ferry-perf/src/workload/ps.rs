//! PS-CC: publish/subscribe (seed 001, Table 1 and section 5.3). Each publisher
//! publishes on its topic (`PS.1`, `PS.2`...; publisher `i` on topic `i mod T`) as fast
//! as it can (or at `--rate`); the step's subscribers, each a non-durable managed
//! subscription (a JMS non-durable consumer), are spread over the topics (subscriber
//! `j` on topic `j mod T`), so every publication fans out to the subscribers of its
//! topic. The report's run: one publisher, one topic, subscribers added step by step,
//! 2 KB non-persistent.
//!
//! One operation is one copy a subscriber received intact: the rate is deliveries per
//! second, and the step also reports the publications (`sent`), the per-subscriber
//! rate, the copies published and not yet received at the end of the window
//! (`queue_depth_end`, counted) and, after the publishers end and the subscribers
//! drain for at most 30 s, the copies that never came (`lost`: a subscriber's queue
//! was full, so the queue manager put the copy on the dead-letter queue or, as
//! NPMSGDLV(ALLAVAIL) allows, dropped it). A lost copy is an error: the step did not
//! deliver every publication to every subscriber.
//!
//! Subscriptions are made before the publishers start and end with the step (a
//! non-durable managed subscription's queue goes with it). Bodies are SR-CC's (tag at
//! both ends, publish time), so every copy is checked and put-to-get latency recorded.
//!
//! Written once over [`super::app::Topics`], run over the native protocol
//! ([`super::native_ps`]) or AMQP 1.0 ([`crate::amqp::ps`]).

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use ferry_client::Connection;

use super::app::{Sender, Topics};
use super::sr::receiver_loop;
use super::step::{finish, join_until, measure_window, StepOutcome};
use super::tally::Tally;
use crate::progress::Progress;
use crate::PerfError;

/// What a PS-CC run does, the same for every step.
#[derive(Clone, Debug)]
pub struct PsConfig {
    /// Message body size in bytes.
    pub size: usize,
    /// Persistent publications.
    pub persistent: bool,
    /// Publishes and gets in syncpoint, each committed at once (native only).
    pub syncpoint: bool,
    /// Publications per second per publisher (`None`: as fast as it can).
    pub rate: Option<f64>,
    /// Publishers, each on topic `i mod topics`.
    pub publishers: usize,
    /// Topics (at most `publishers`).
    pub topics: usize,
    /// Durable subscriptions (native), removed at the end of each step.
    pub durable: bool,
    /// SHARECNV the connections ask for.
    pub sharecnv: u32,
    /// Warm-up seconds.
    pub warmup: f64,
    /// Measured seconds.
    pub secs: f64,
    /// What the bodies hold.
    pub body: crate::compression::BodyKind,
}

/// The topic string of topic `i` (0-based): `PS.1`, `PS.2`...
pub fn topic_name(i: usize) -> String {
    format!("PS.{}", i + 1)
}

/// The topic (0-based) of publisher or subscriber `n` among `topics`: round-robin.
pub fn topic_for(n: usize, topics: usize) -> usize {
    n % topics.max(1)
}

/// How many of `subscribers` subscribers are on topic `topic` of `topics`.
pub fn subscribers_on(topic: usize, subscribers: usize, topics: usize) -> usize {
    (0..subscribers)
        .filter(|&j| topic_for(j, topics) == topic)
        .count()
}

/// How long the subscribers may take to receive the copies still due after the
/// publishers end.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(30);
/// The drain ends early when no copy arrived for this long: the rest are not coming.
pub const DRAIN_IDLE: Duration = Duration::from_secs(3);

/// Copies every publication so far is due to deliver, counted by the publishers.
#[derive(Default)]
pub struct Due(Cell<u64>);

impl Due {
    /// One publication reaching `fanout` subscribers.
    pub fn published(&self, fanout: usize) {
        self.0.set(self.0.get() + fanout as u64);
    }

    /// Copies due so far.
    pub fn get(&self) -> u64 {
        self.0.get()
    }
}

/// One publisher: SR-CC's sender loop, counting the copies each publication makes due.
async fn publisher_loop<S: Sender>(
    publisher: S,
    pace: super::sr::SendPace,
    fanout: usize,
    epoch: Instant,
    tally: Rc<Tally>,
    due: Rc<Due>,
) {
    super::sr::send_until_stopped(publisher, pace, epoch, tally, || due.published(fanout)).await;
}

/// Waits until the subscribers received (or refused as damaged) every copy due, for at
/// most `limit` ([`DRAIN_LIMIT`]), ending early after `idle` ([`DRAIN_IDLE`]) without
/// progress. Returns the copies still missing.
async fn drain(tally: &Tally, due: &Due, limit: Duration, idle: Duration) -> u64 {
    let received = || tally.round_trips() + tally.mismatches();
    let deadline = Instant::now() + limit;
    let mut last = received();
    let mut last_at = Instant::now();
    while received() < due.get() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = received();
        if now != last {
            (last, last_at) = (now, Instant::now());
        } else if last_at.elapsed() >= idle {
            break;
        }
    }
    due.get().saturating_sub(received())
}

/// What a step's lost copies are called in its problems.
pub fn lost_problem(lost: u64, due: u64) -> String {
    format!(
        "{lost} of {due} copies never reached their subscriber (a subscription's queue was \
         full: the queue manager put them on the dead-letter queue or dropped them, as \
         NPMSGDLV/PMSGDLV allow; the publishers outran the subscribers, try --rate)"
    )
}

/// Runs one step with `subscribers` subscribers and the configured publishers over
/// `topics`. `admin`, when the broker is a Ferry queue manager, is asked for the
/// recovery log's counters; `server_pid` is the broker's process, for its CPU. Must run
/// inside a `LocalSet`.
pub async fn run_step<P: Topics>(
    topics: &mut P,
    server_pid: Option<u32>,
    admin: Option<&Connection>,
    cfg: &PsConfig,
    subscribers: usize,
    progress: &Progress,
) -> Result<StepOutcome, PerfError> {
    let tally = Rc::new(Tally::default());
    let due = Rc::new(Due::default());
    let epoch = Instant::now();
    let t = cfg.topics.max(1);
    progress.status("subscribing");
    let mut receivers = Vec::new();
    for j in 0..subscribers {
        let s = topics.open_subscriber(topic_for(j, t), j).await?;
        receivers.push(tokio::task::spawn_local(receiver_loop(
            s,
            cfg.size,
            epoch,
            tally.clone(),
        )));
    }
    progress.status("connecting publishers");
    let mut opened = Vec::new();
    for id in 0..cfg.publishers {
        let topic = topic_for(id, t);
        let p = topics.open_publisher(id, topic).await?;
        opened.push((p, subscribers_on(topic, subscribers, t)));
    }
    topics.all_open();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let handles: Vec<_> = opened
        .into_iter()
        .enumerate()
        .map(|(id, (p, fanout))| {
            let pace = super::sr::SendPace {
                rate: cfg.rate,
                id,
                of: cfg.publishers,
                body: cfg.body,
                size: cfg.size,
                fill: 0x50,
            };
            tokio::task::spawn_local(publisher_loop(
                p,
                pace,
                fanout,
                epoch,
                tally.clone(),
                due.clone(),
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
        "deliveries",
    )
    .await;
    let publications = window.sent;
    let backlog = due
        .get()
        .saturating_sub(tally.round_trips() + tally.mismatches());
    tally.request_stop();
    let late = join_until(
        handles,
        tokio::time::Instant::now() + Duration::from_secs(30),
    )
    .await;
    if late > 0 {
        tally.error(format!("{late} publishers did not end within 30 s"));
    }
    progress.status("subscribers draining");
    let lost = drain(&tally, &due, DRAIN_LIMIT, DRAIN_IDLE).await;
    if lost > 0 {
        tally.error(lost_problem(lost, due.get()));
    }
    topics.stop_subscribers().await?;
    let late = join_until(
        receivers,
        tokio::time::Instant::now() + Duration::from_secs(10),
    )
    .await;
    if late > 0 {
        tally.error(format!("{late} subscribers did not end within 10 s"));
    }
    let mut outcome = finish(
        &tally,
        subscribers,
        cfg.publishers,
        window,
        1,
        Some(backlog),
        Some(publications),
    );
    outcome.lost = Some(lost);
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subscribers_spread_over_the_topics() {
        assert_eq!(topic_name(0), "PS.1");
        assert_eq!(topic_for(5, 2), 1);
        assert_eq!(topic_for(5, 0), 0, "no topics: everyone on the first");
        assert_eq!(subscribers_on(0, 5, 2), 3);
        assert_eq!(subscribers_on(1, 5, 2), 2);
        assert_eq!(subscribers_on(0, 64, 1), 64);
        let d = Due::default();
        d.published(3);
        d.published(2);
        assert_eq!(d.get(), 5);
        assert!(lost_problem(7, 100).starts_with("7 of 100 copies"));
    }

    #[tokio::test]
    async fn the_drain_waits_for_the_copies_due_and_gives_up_when_none_come() {
        let (limit, idle) = (Duration::from_secs(5), Duration::from_millis(200));
        let tally = Rc::new(Tally::default());
        let due = Due::default();
        due.published(2);
        let started = Instant::now();
        assert_eq!(
            drain(&tally, &due, limit, idle).await,
            2,
            "nothing came: both lost"
        );
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "idle ends it early"
        );
        // Copies that arrive during the drain are waited for.
        let late = tally.clone();
        let local = tokio::task::LocalSet::new();
        let missing = local
            .run_until(async {
                tokio::task::spawn_local(async move {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    late.reply(super::super::verify::ReplyCheck::Good, 1);
                    tokio::time::sleep(Duration::from_millis(150)).await;
                    late.reply(super::super::verify::ReplyCheck::CorruptBody, 1);
                });
                drain(&tally, &due, limit, idle).await
            })
            .await;
        assert_eq!(missing, 0, "a damaged copy is not a lost one");
    }
}
