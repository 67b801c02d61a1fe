//! The recovery log's tasks on the runtime thread: each waits for one kind of wake-up and
//! hands it to the log driver ([`RecoveryLog`]), which feeds the durability decisions
//! and performs their commands. Calls waiting for log room try again after each.

use super::log_driver::{LogHost, RecoveryLog};
use super::server::Server;
use crate::error_log::ErrorLog;
use ferry_engine::QueueManager;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

impl LogHost for Server {
    fn name(&self) -> &str {
        &self.name
    }
    fn engine(&self) -> &RefCell<QueueManager> {
        &self.engine
    }
    fn error_log(&self) -> &RefCell<ErrorLog> {
        &self.error_log
    }
    fn back_out_long_unit_of_work(&self, log: &RecoveryLog) {
        Server::back_out_long_unit_of_work(self, log);
    }
}

/// Releases held replies once per flush notice.
pub async fn durable_task(server: Rc<Server>) {
    on_each_wake(server, RecoveryLog::flush_notify, |log, server| {
        log.on_flush(server)
    })
    .await;
}

/// Records each checkpoint once the queue files' thread has written its filings, and
/// reports each spill it has written.
pub async fn queue_files_task(server: Rc<Server>) {
    on_each_wake(server, RecoveryLog::queue_files_notify, |log, server| {
        log.on_queue_files(server)
    })
    .await;
}

/// Runs `act` each time the log's `notify` (a thread's wake-up of the runtime thread) is
/// woken, for as long as the queue manager runs; returns at once without a log.
async fn on_each_wake(
    server: Rc<Server>,
    notify: impl Fn(&RecoveryLog) -> Arc<Notify>,
    act: impl Fn(&RecoveryLog, &Server),
) {
    let Some(wake) = server.log.as_ref().map(notify) else {
        return;
    };
    loop {
        wake.notified().await;
        if let Some(log) = server.log.as_ref() {
            act(log, &server);
        }
        // A checkpoint may have finished: calls waiting for log space try again.
        server.retry_log_room_waiters();
    }
}

/// Wakes the log writer for records appended without waking it, once the ready tasks
/// have run ([`RecoveryLog::kick_when_asked`]).
pub async fn kick_task(server: Rc<Server>) {
    let Some(log) = server.log.as_ref() else {
        return;
    };
    loop {
        log.kick_when_asked().await;
    }
}

/// Once a second: slow-I/O warnings, the time/space checkpoint policy, spills, and calls
/// that have waited too long for log space.
pub async fn housekeeping_task(server: Rc<Server>) {
    if server.log.is_none() {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let Some(log) = server.log.as_ref() else {
            return;
        };
        log.tick(&*server);
        // Calls that have waited too long for log space get 2102.
        server.retry_log_room_waiters();
        // Bodies now only on disk: memory::trim_task hands their pages back.
        server.memory.note_freed(log.take_freed());
    }
}

/// At shutdown: waits (at most 5 s) until everything appended is durable and the held
/// replies are on their way.
pub async fn settle(server: &Rc<Server>) {
    if let Some(log) = server.log.as_ref() {
        log.settle(&**server).await;
    }
}
