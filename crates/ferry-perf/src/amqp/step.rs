//! What the AMQP applications share: the stop signal for responders and receivers,
//! and setup errors that say which queues the broker must have.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use super::error::AmqpError;
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
    pub fn wait(&self) -> StopWait {
        StopWait {
            stop: self.clone(),
            slot: None,
        }
    }
}

/// The future of [`Stop::wait`].
pub struct StopWait {
    stop: Stop,
    slot: Option<usize>,
}

impl Future for StopWait {
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

impl Drop for StopWait {
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
