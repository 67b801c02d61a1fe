//! The web server's one way into the queue manager: closures run on its thread.
//!
//! The engine and everything around it live on the queue manager's thread (`Rc`,
//! `RefCell`, no locks). A handler on the web thread sends a closure over a bounded
//! channel; [`serve_jobs`], a task on the queue manager's thread, runs each as a task of
//! its own beside the connections (one engine call at a time, as theirs), and the
//! closure's result comes back over a one-shot channel. A full channel makes the handler
//! wait, never the queue manager; a stopped queue manager answers [`BridgeError`].

use super::super::log_driver::DurableHold;
use super::super::reply_wait::{ReplyHold, ReplyWait};
use super::super::server::Server;
use ferry_durability::Hold;
use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use tokio::sync::{mpsc, oneshot};

/// Work for the queue manager's thread.
type Job = Box<dyn FnOnce(Rc<Server>) -> Pin<Box<dyn Future<Output = ()>>> + Send>;

/// The bridge could not run a closure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BridgeError {
    /// The queue manager is ending: nothing runs on its thread any more.
    #[error("the queue manager is not running")]
    Stopped,
}

/// Sends closures to the queue manager's thread (cheap to clone, `Send`).
#[derive(Clone)]
pub(crate) struct EngineBridge {
    jobs: mpsc::Sender<Job>,
}

impl EngineBridge {
    /// A bridge holding at most `capacity` jobs not yet started, and the receiving end for
    /// [`serve_jobs`].
    pub(crate) fn new(capacity: usize) -> (Self, mpsc::Receiver<Job>) {
        let (jobs, receiver) = mpsc::channel(capacity.max(1));
        (EngineBridge { jobs }, receiver)
    }

    /// Runs `work` on the queue manager's thread with its [`Server`] and returns what its
    /// future gives. `work` itself is sent there; its future never leaves that thread.
    pub(crate) async fn run<T, F, Fut>(&self, work: F) -> Result<T, BridgeError>
    where
        T: Send + 'static,
        F: FnOnce(Rc<Server>) -> Fut + Send + 'static,
        Fut: Future<Output = T> + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |server| {
            Box::pin(async move {
                let _ = answer.send(work(server).await);
            })
        });
        self.jobs
            .send(job)
            .await
            .map_err(|_| BridgeError::Stopped)?;
        answered.await.map_err(|_| BridgeError::Stopped)
    }
}

/// Runs the bridge's jobs on the queue manager's thread, each as a task of its own, until
/// every bridge is dropped (or the task is aborted when the queue manager ends).
pub(crate) async fn serve_jobs(server: Rc<Server>, mut jobs: mpsc::Receiver<Job>) {
    while let Some(job) = jobs.recv().await {
        tokio::task::spawn_local(job(server.clone()));
    }
}

/// Waits until what `wait` names is durable: the definitions a call changed are saved,
/// the log records it wrote are on disk. False when either failed.
pub(crate) async fn settled(server: &Rc<Server>, wait: ReplyWait) -> bool {
    if let Some(ticket) = wait.definitions {
        let (tx, rx) = oneshot::channel();
        server.after_definitions(ticket, move |_, saved| {
            let _ = tx.send(saved);
        });
        if !rx.await.unwrap_or(false) {
            return false;
        }
    }
    let lsn = match wait.log {
        ReplyHold::Now => return true,
        ReplyHold::Fail => return false,
        ReplyHold::Until(lsn) => lsn,
    };
    match server.log_hold(lsn) {
        Hold::Now => true,
        Hold::Fail => false,
        Hold::Until(lsn) => {
            let (tx, rx) = oneshot::channel();
            let waiter = Rc::new(LogWaiter {
                lsn,
                answer: RefCell::new(Some(tx)),
            });
            server.note_held(waiter);
            rx.await.unwrap_or(false)
        }
    }
}

/// One answer waiting for the log to be durable up to `lsn`.
struct LogWaiter {
    lsn: u64,
    answer: RefCell<Option<oneshot::Sender<bool>>>,
}

impl DurableHold for LogWaiter {
    fn release_held(&self, durable: u64) -> bool {
        if durable < self.lsn {
            return true;
        }
        if let Some(tx) = self.answer.borrow_mut().take() {
            let _ = tx.send(true);
        }
        false
    }

    fn fail_held(&self) {
        if let Some(tx) = self.answer.borrow_mut().take() {
            let _ = tx.send(false);
        }
    }
}
