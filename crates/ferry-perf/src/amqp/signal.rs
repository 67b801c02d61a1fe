//! A wake-up for the one task that waits on it, for tasks of one thread: what
//! `tokio::sync::Notify::notify_one` does for a single waiter, without its mutex and
//! atomics (a connection, its tasks and its applications all run on one `LocalSet`, and
//! each `Signal` has one waiter at a time: the writer, one link's caller, one session's
//! or the connection's opener/closer).
//!
//! As with `Notify`, a wake-up given while nobody waits is kept (one permit), so the
//! next wait returns at once: a waiter that checks its state, then waits, misses
//! nothing. Waiters re-check their state after every wake-up, so a spare one is
//! harmless.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};

/// Wakes one waiter of this thread (see the module docs).
#[derive(Debug, Default)]
pub(super) struct Signal {
    /// A wake-up not yet taken by a wait.
    permit: Cell<bool>,
    /// The waiting task, if any.
    waker: RefCell<Option<Waker>>,
}

impl Signal {
    /// A signal without permit or waiter.
    pub fn new() -> Signal {
        Signal::default()
    }

    /// Wakes the waiter, or leaves a permit for the next wait.
    pub fn notify_one(&self) {
        self.permit.set(true);
        let waker = self.waker.borrow_mut().take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Resolves at the next [`notify_one`](Self::notify_one), or at once if a permit
    /// is left.
    pub fn notified(&self) -> Notified<'_> {
        Notified { signal: self }
    }
}

/// The future of [`Signal::notified`].
#[derive(Debug)]
pub(super) struct Notified<'a> {
    signal: &'a Signal,
}

impl Future for Notified<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.signal.permit.replace(false) {
            return Poll::Ready(());
        }
        let mut slot = self.signal.waker.borrow_mut();
        match slot.as_mut() {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => *slot = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::rc::Rc;
    use std::time::Duration;

    #[tokio::test]
    async fn a_wake_up_reaches_the_waiter_or_waits_for_it() {
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async {
                let s = Rc::new(Signal::new());
                // Given before the wait: kept, and only once.
                s.notify_one();
                s.notify_one();
                tokio::time::timeout(Duration::from_secs(1), s.notified())
                    .await
                    .expect("permit kept");
                assert!(
                    tokio::time::timeout(Duration::from_millis(20), s.notified())
                        .await
                        .is_err(),
                    "one permit only"
                );
                // Given while a task waits: wakes it.
                let waiter = {
                    let s = s.clone();
                    tokio::task::spawn_local(async move { s.notified().await })
                };
                tokio::task::yield_now().await;
                s.notify_one();
                tokio::time::timeout(Duration::from_secs(1), waiter)
                    .await
                    .expect("woken")
                    .expect("joined");
            })
            .await;
    }
}
