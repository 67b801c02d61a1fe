//! What the AMQP steps share: the stop signal for responders and receivers, the
//! warm-up and measured window (the same samples as native steps, and the recovery
//! log's counters when the broker is the embedded Ferry queue manager), the step's
//! [`StepOutcome`], and setup errors that say which queues the broker must have.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use ferry_client::Connection;

use super::error::AmqpError;
use crate::measure::{self, Sample};
use crate::progress::Progress;
use crate::recovery_log::{self, Reading};
use crate::report::group_thousands;
use crate::workload::step::StepOutcome;
use crate::workload::tally::Tally;
use crate::PerfError;

/// Tells tasks that wait for messages to end (they would otherwise wait forever).
/// Every task of a step runs on one thread, so the waiters are a plain list (no lock).
#[derive(Clone, Default)]
pub struct Stop {
    inner: Rc<StopInner>,
}

#[derive(Default)]
struct StopInner {
    given: Cell<bool>,
    /// One slot per pending wait (`None`: free, listed in `free`).
    waiters: RefCell<Vec<Option<Waker>>>,
    free: RefCell<Vec<usize>>,
}

impl Stop {
    /// A stop not yet given.
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Gives the stop: every waiter ends now, later ones at once.
    pub fn now(&self) {
        self.inner.given.set(true);
        let waiters = std::mem::take(&mut *self.inner.waiters.borrow_mut());
        self.inner.free.borrow_mut().clear();
        for w in waiters.into_iter().flatten() {
            w.wake();
        }
    }

    /// Resolves once [`Stop::now`] was called. Keep one wait pinned across a loop
    /// rather than making one per iteration.
    pub fn wait(&self) -> StopWait<'_> {
        StopWait {
            stop: self,
            slot: None,
        }
    }
}

/// The future of [`Stop::wait`].
pub struct StopWait<'a> {
    stop: &'a Stop,
    slot: Option<usize>,
}

impl Future for StopWait<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let inner = &self.stop.inner;
        if inner.given.get() {
            return Poll::Ready(());
        }
        let mut waiters = inner.waiters.borrow_mut();
        match self.slot {
            Some(i) if i < waiters.len() => match &waiters[i] {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => waiters[i] = Some(cx.waker().clone()),
            },
            _ => {
                let waker = Some(cx.waker().clone());
                let i = match inner.free.borrow_mut().pop() {
                    Some(i) => {
                        waiters[i] = waker;
                        i
                    }
                    None => {
                        waiters.push(waker);
                        waiters.len() - 1
                    }
                };
                drop(waiters);
                self.slot = Some(i);
            }
        }
        Poll::Pending
    }
}

impl Drop for StopWait<'_> {
    fn drop(&mut self) {
        let inner = &self.stop.inner;
        if let (Some(i), Ok(mut waiters)) = (self.slot, inner.waiters.try_borrow_mut()) {
            if let Some(w) = waiters.get_mut(i) {
                *w = None;
                inner.free.borrow_mut().push(i);
            }
        }
    }
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
    server_pid: Option<u32>,
    admin: Option<&Connection>,
    warmup: f64,
    secs: f64,
    progress: &Progress,
    what: &str,
) -> Window {
    let count = |_: f64| format!("{} {what}", group_thousands(tally.round_trips() as f64));
    progress.wait("warm-up", warmup, count).await;
    let log_start = recovery_log::read_if(admin).await;
    let start = Sample::take(tally.round_trips(), server_pid);
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
    let end = Sample::take(tally.round_trips(), server_pid);
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
        problems: tally.problems(),
        valid: errors == 0 && mismatches == 0 && window.round_trips > 0,
    }
}

/// A setup failure; when the broker has no such queue, it lists the queues a run needs
/// (an external broker's queues are not defined by the harness).
pub fn setup_error(what: &str, e: AmqpError, queues: &[String]) -> PerfError {
    if e.is_not_found() {
        PerfError::Setup(format!(
            "{what}: {e}\n  the broker must have these queues (the harness does not define \
             queues on an external broker): {}",
            queues.join(", ")
        ))
    } else {
        PerfError::Setup(format!("{what}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stop_reaches_waiters_before_and_after() {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let stop = Stop::new();
                let waiter = {
                    let s = stop.clone();
                    tokio::task::spawn_local(async move { s.wait().await })
                };
                tokio::task::yield_now().await;
                stop.now();
                tokio::time::timeout(std::time::Duration::from_secs(1), waiter)
                    .await
                    .expect("woken")
                    .expect("joined");
                // Late waiters end at once.
                tokio::time::timeout(std::time::Duration::from_secs(1), stop.wait())
                    .await
                    .expect("at once");
            })
            .await;
    }

    #[test]
    fn missing_queues_are_listed() {
        let e = AmqpError::Refused {
            address: "REPLY".into(),
            condition: super::super::error::Condition {
                condition: ferry_amqp::condition::NOT_FOUND.into(),
                description: String::new(),
            },
        };
        let msg = setup_error("connect", e, &["REQUEST.1".into(), "REPLY".into()]).to_string();
        assert!(msg.contains("REQUEST.1, REPLY"), "{msg}");
    }
}
