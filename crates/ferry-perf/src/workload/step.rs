//! What one step of any workload measured ([`StepOutcome`]), and the helpers every
//! workload's step shares: joining tasks with a deadline, connecting with a clear
//! message when the queue manager runs out of channels.

use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::{MqError, ObjectDescriptor, OpenOptions, ReasonCode};
use serde::{Deserialize, Serialize};
use tokio::task::JoinHandle;

use crate::measure::{Latency, WindowFigures};
use crate::recovery_log::LogFigures;
use crate::PerfError;

/// What one step measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StepOutcome {
    /// Requesters (senders for SR-CC, connecting clients for the connection test).
    pub clients: usize,
    /// Responders (receivers for SR-CC).
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
    /// build-up, from MQINQ CURRENT_Q_DEPTH).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_depth_end: Option<u64>,
    /// Messages put in the window (SR-CC: compare with the messages got).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
    /// What the recovery log did in the window (a Ferry queue manager only; `None`
    /// when its counters could not be read, or in result files from before they were).
    #[serde(default)]
    pub log: Option<LogFigures>,
    /// The first few problems.
    pub problems: Vec<String>,
    /// No errors, no mismatches, at least one operation, everyone ended in time.
    pub valid: bool,
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
