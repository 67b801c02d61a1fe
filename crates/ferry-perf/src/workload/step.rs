//! What one step of any workload measured ([`StepOutcome`]), and the helpers every
//! workload's step shares: the warm-up and measured window ([`measure_window`]: the
//! samples, and the recovery log's counters when the broker is a Ferry queue manager),
//! the outcome from the step's tally ([`finish`]), joining tasks with a deadline,
//! connecting with a clear message when the queue manager runs out of channels.

use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::{MqError, ObjectDescriptor, OpenOptions, ReasonCode};
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

use super::tally::Tally;
use crate::measure::{self, Latency, Sample, WindowFigures};
use crate::progress::Progress;
use crate::recovery_log::{self, LogFigures, Reading};
use crate::report::group_thousands;
use crate::PerfError;

/// What one step measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepOutcome {
    /// Requesters (senders for SR-CC, connecting clients for the connection test,
    /// subscribers for PS-CC).
    pub clients: usize,
    /// Responders (receivers for SR-CC, publishers for PS-CC).
    pub responders: usize,
    /// Rate and CPU over the measured window (for the connection test: the time it
    /// took to connect every client).
    pub window: WindowFigures,
    /// Latency over the measured window (round trip; SR-CC: put to get; connection
    /// test: connect and open).
    pub latency: Latency,
    /// Failed calls (any error invalidates the step).
    pub errors: u64,
    /// Replies or requests that were not what they should be.
    pub mismatches: u64,
    /// Messages left on the workload's queues at the end of the window (SR-CC's queue
    /// build-up, from MQINQ CURRENT_Q_DEPTH; PS-CC: copies published and not yet
    /// received, counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth_end: Option<u64>,
    /// Messages put in the window (SR-CC: compare with the messages got; PS-CC:
    /// publications).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
    /// What the recovery log did in the window (a Ferry queue manager only; `None`
    /// when its counters could not be read, or in result files from before they were).
    #[serde(default)]
    pub log: Option<LogFigures>,
    /// PS-CC: copies published and never received, after the subscribers drained (a
    /// subscription's queue was full).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost: Option<u64>,
    /// COMPRATE and COMPTIME at the end of the window (`--compress` runs only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compression: Option<crate::compression::CompressionFigures>,
    /// RR-DQ-BB: messages per batch over both sending channels (MSGS / BATCHES of
    /// DISPLAY CHSTATUS across the step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages_per_batch: Option<f64>,
    /// RR-CLUSTER-BB: the requests each instance of the cluster queues got.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<Vec<super::cluster::InstanceShare>>,
    /// The first few problems.
    pub problems: Vec<String>,
    /// No errors, no mismatches, at least one operation, everyone ended in time.
    pub valid: bool,
}

/// A measured window: its start and end samples, the messages sent inside it (SR-CC)
/// and the recovery log's counters read just outside it.
pub struct Window {
    /// The sample at the start.
    pub start: Sample,
    /// The sample at the end.
    pub end: Sample,
    /// Messages sent in the window.
    pub sent: u64,
    /// The log's counters right before the start sample.
    pub log_start: Reading,
    /// The log's counters right after the end sample.
    pub log_end: Reading,
}

/// Warm-up, then the measured window. `admin` (the embedded Ferry queue manager's
/// command server) is asked for the recovery log's counters right before and right
/// after it. `what` names what the counter counts for the progress line
/// (`round trips`, `messages`).
pub async fn measure_window(
    tally: &Tally,
    servers: &[u32],
    admin: Option<&Connection>,
    warmup: f64,
    secs: f64,
    progress: &Progress,
    what: &str,
) -> Window {
    let count = |_: f64| format!("{} {what}", group_thousands(tally.round_trips() as f64));
    progress.wait("warm-up", warmup, count).await;
    let log_start = recovery_log::read_if(admin).await;
    let start = Sample::take(tally.round_trips(), servers);
    let sent0 = tally.sent();
    tally.set_measuring(true);
    let base = start.round_trips;
    let live = |t: f64| {
        format!(
            "{} {what}/s",
            group_thousands(measure::rate(tally.round_trips() - base, t))
        )
    };
    progress.wait("measuring", secs, live).await;
    tally.set_measuring(false);
    let end = Sample::take(tally.round_trips(), servers);
    let log_end = recovery_log::read_if(admin).await;
    Window {
        start,
        end,
        sent: tally.sent() - sent0,
        log_start,
        log_end,
    }
}

/// The step's outcome from its tally and window; `messages_per_op` is how many
/// messages one counted operation moves (RR: 2, SR: 1), for the log's figures.
pub fn finish(
    tally: &Tally,
    clients: usize,
    responders: usize,
    w: Window,
    messages_per_op: u64,
    queue_depth_end: Option<u64>,
    sent: Option<u64>,
) -> StepOutcome {
    let window = measure::window(
        &w.start,
        &w.end,
        measure::clock_ticks_per_sec(),
        measure::online_cpus(),
    );
    let (log, note) = recovery_log::step_figures(
        w.log_start,
        w.log_end,
        messages_per_op * window.round_trips,
        window.elapsed_secs,
    );
    if let Some(n) = note {
        tally.note(n);
    }
    let errors = tally.errors();
    let mismatches = tally.mismatches();
    StepOutcome {
        clients,
        responders,
        window,
        latency: tally.latency(),
        errors,
        mismatches,
        queue_depth_end,
        sent,
        log,
        compression: None,
        lost: None,
        messages_per_batch: None,
        instances: None,
        problems: tally.problems(),
        valid: errors == 0 && mismatches == 0 && window.round_trips > 0,
    }
}

/// An [`MqError`] in context.
pub fn mq(what: &str, e: MqError) -> PerfError {
    PerfError::Mq(what.to_string(), e)
}

/// The object descriptor of queue `name`.
pub fn queue_od(name: &str) -> Result<ObjectDescriptor, PerfError> {
    ObjectDescriptor::queue(name)
        .map_err(|e| PerfError::Setup(format!("bad queue name {name}: {e}")))
}

/// Connects, explaining 2537 MQRC_CHANNEL_NOT_AVAILABLE (MaxChannels reached).
pub async fn connect(opts: &ConnectOptions) -> Result<Connection, PerfError> {
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

/// Waits for `handles` until `deadline`; aborts and counts the ones still running.
pub async fn join_until(handles: Vec<JoinHandle<()>>, deadline: tokio::time::Instant) -> usize {
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

/// Connects and opens queue `name` with `oo`: one application's connection and handle.
pub(crate) async fn open(
    opts: &ConnectOptions,
    name: &str,
    oo: OpenOptions,
) -> Result<(Connection, Queue), PerfError> {
    let conn = connect(opts).await?;
    let q = conn
        .open(&queue_od(name)?, oo)
        .await
        .map_err(|e| mq(&format!("open {name}"), e))?;
    Ok((conn, q))
}
