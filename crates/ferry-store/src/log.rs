//! [`Log`]: the threaded front end. The caller's thread appends without blocking; one writer
//! thread takes everything appended since its last flush, writes it, syncs once, and reports
//! "durable up to LSN X" with a single [`Notice`] per flush — so a server runtime gets one
//! wake-up per flush, never one per record.
//!
//! The writer thread sleeps on a condition variable only when the buffer is empty; an append
//! signals it only if it is asleep, so there is at most one writer wake-up per flush as well.

use crate::append::AppendBuffer;
use crate::core::{run_batch, LogCore};
use crate::device::LogDevice;
use crate::error::{LogError, Result};
use crate::format::record::RecordKind;
use crate::lsn::{Geometry, Lsn};
use crate::stats::{LogStatus, SlowIo, Stats};
use crate::writer::LogWriter;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What the writer reports after each flush.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Every record with an LSN below this is durable.
    Durable(Lsn),
    /// The log failed; nothing more will become durable (the message says why).
    Failed(String),
}

/// The callback the writer thread calls once per flush. Keep it cheap: wake the runtime
/// (eventfd write, `tokio::sync::Notify::notify_one`, channel send) and return.
pub type Notify = Box<dyn Fn(Notice) + Send + Sync>;

struct State {
    buffer: AppendBuffer,
    writer_idle: bool,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    stats: Arc<Stats>,
    geo: Geometry,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The recovery log with its own writer thread.
pub struct Log<D: LogDevice> {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<LogWriter<D>>>,
}

impl<D: LogDevice> Log<D> {
    /// Starts the writer thread over a recovered or new log.
    pub fn start(core: LogCore<D>, notify: Notify) -> Result<Log<D>> {
        Self::start_with_gather(core, notify, Duration::ZERO)
    }

    /// Starts the writer thread; when an append wakes it from idle, it lets records gather
    /// for `gather` before flushing (see the writer loop's note). Zero flushes at once.
    pub fn start_with_gather(core: LogCore<D>, notify: Notify, gather: Duration) -> Result<Log<D>> {
        let LogCore { buffer, writer } = core;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                buffer,
                writer_idle: false,
                stop: false,
            }),
            wake: Condvar::new(),
            stats: writer.stats().clone(),
            geo: writer.geometry(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("ferry-log-writer".into())
            .spawn(move || writer_loop(&s, writer, &notify, gather))
            .map_err(|e| LogError::io("spawn", "log writer thread", e))?;
        Ok(Log {
            shared,
            thread: Some(thread),
        })
    }

    fn appended(&self, mut st: MutexGuard<'_, State>, r: Result<Lsn>) -> Result<Lsn> {
        if r.is_ok() && st.writer_idle {
            st.writer_idle = false;
            drop(st);
            self.shared.wake.notify_one();
        }
        r
    }

    /// Appends a record (never blocks on I/O). Returns its LSN; it is durable once a
    /// [`Notice::Durable`] with a greater LSN arrives.
    pub fn append(&self, kind: RecordKind, payload: &[u8]) -> Result<Lsn> {
        let mut st = self.shared.lock();
        let r = st.buffer.append(kind, &[payload], false);
        self.appended(st, r)
    }

    /// Appends a record whose payload is the concatenation of `parts`.
    pub fn append_parts(&self, kind: RecordKind, parts: &[&[u8]]) -> Result<Lsn> {
        let mut st = self.shared.lock();
        let r = st.buffer.append(kind, parts, false);
        self.appended(st, r)
    }

    /// Appends like [`Log::append_parts`] but never wakes an idle writer: the caller
    /// promises to call [`Log::kick`] soon (e.g. once it has handled everything that is
    /// ready), so records appended meanwhile share one flush instead of the first one
    /// getting a flush of its own.
    pub fn append_parts_deferred(&self, kind: RecordKind, parts: &[&[u8]]) -> Result<Lsn> {
        self.shared.lock().buffer.append(kind, parts, false)
    }

    /// Wakes the writer if it is idle and records are waiting (see
    /// [`Log::append_parts_deferred`]).
    pub fn kick(&self) {
        let mut st = self.shared.lock();
        if st.writer_idle && !st.buffer.is_empty() {
            st.writer_idle = false;
            drop(st);
            self.shared.wake.notify_one();
        }
    }

    /// Appends a checkpoint record (see [`crate::checkpoint`]).
    pub fn checkpoint(&self, payload: &[u8], oldest_needed: Lsn) -> Result<Lsn> {
        let mut st = self.shared.lock();
        let r = st.buffer.checkpoint(payload, oldest_needed);
        self.appended(st, r)
    }

    /// Data bytes that ordinary records (headers included) may still take before the log
    /// is full; the checkpoint reserve is excluded. A caller
    /// that checks this before a change it will log can refuse the change up front
    /// instead of undoing it after a failed append.
    pub fn room(&self) -> u64 {
        self.shared.lock().buffer.room()
    }

    /// The LSN the next record will get.
    pub fn next_lsn(&self) -> Lsn {
        self.shared.lock().buffer.next_lsn()
    }

    /// Everything before this LSN is durable.
    pub fn durable_lsn(&self) -> Lsn {
        Lsn(self.shared.stats.durable.load(Relaxed))
    }

    /// Whether the record at `lsn` is durable.
    pub fn is_durable(&self, lsn: Lsn) -> bool {
        lsn < self.durable_lsn()
    }

    /// A status snapshot.
    pub fn status(&self) -> LogStatus {
        let head = self.shared.lock().buffer.next_lsn();
        self.shared.stats.head.store(head.0, Relaxed);
        self.shared.stats.snapshot(self.shared.geo)
    }

    /// The LSN of the last checkpoint record made durable (its control file written): one
    /// atomic read, for callers that poll it (a full [`Log::status`] takes locks).
    pub fn checkpoint_lsn(&self) -> Lsn {
        Lsn(self.shared.stats.checkpoint.load(Relaxed))
    }

    /// Slow operations since the last call (for AMQ6729W-style warnings).
    pub fn take_slow_ops(&self) -> Vec<SlowIo> {
        self.shared.stats.take_slow()
    }

    /// Why the log failed, if it did.
    pub fn failure(&self) -> Option<String> {
        self.shared.lock().buffer.failure().map(str::to_string)
    }

    fn stop(&mut self) -> Option<LogWriter<D>> {
        let t = self.thread.take()?;
        self.shared.lock().stop = true;
        self.shared.wake.notify_one();
        t.join().ok()
    }

    /// Flushes what is buffered, stops the writer thread and returns the synchronous core.
    pub fn close(mut self) -> Result<LogCore<D>> {
        let writer = self
            .stop()
            .ok_or_else(|| LogError::Failed("the log writer thread panicked".into()))?;
        let shared = self.shared.clone();
        drop(self);
        let shared = Arc::try_unwrap(shared)
            .map_err(|_| LogError::Failed("log state still shared".into()))?;
        let state = shared.state.into_inner().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = state.buffer.failure() {
            return Err(LogError::Failed(m.to_string()));
        }
        Ok(LogCore::from_parts(state.buffer, writer))
    }
}

impl<D: LogDevice> Drop for Log<D> {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The writer thread. Under load it is never idle: each flush takes everything appended
/// during the previous one. When an append wakes it from idle, it first waits `gather`
/// (if non-zero) so records that are about to follow join the same flush: in a request/
/// reply exchange the responder's reply (a put) and the requester's get of it typically
/// arrive a few tens of microseconds apart, and one flush for both beats a second flush
/// of its own for the get (~100 µs on this machine). The thread's timer slack is set to
/// 1 µs so the wait is that short, not the kernel's default 50 µs more.
fn writer_loop<D: LogDevice>(
    shared: &Shared,
    mut writer: LogWriter<D>,
    notify: &Notify,
    gather: Duration,
) -> LogWriter<D> {
    if !gather.is_zero() {
        // SAFETY: prctl(PR_SET_TIMERSLACK) only changes this thread's timer slack.
        unsafe {
            libc::prctl(libc::PR_SET_TIMERSLACK, 1_000u64, 0u64, 0u64, 0u64);
        }
    }
    loop {
        let batch = {
            let mut st = shared.lock();
            loop {
                if st.buffer.failure().is_none() {
                    if let Some(b) = st.buffer.take() {
                        break b;
                    }
                }
                if st.stop {
                    return writer;
                }
                st.writer_idle = true;
                st = shared.wake.wait(st).unwrap_or_else(|p| p.into_inner());
                st.writer_idle = false;
                if !gather.is_zero() && !st.stop {
                    // Woken from idle: let companions of this record arrive (appends
                    // meanwhile do not signal: the writer is not idle).
                    st = shared
                        .wake
                        .wait_timeout(st, gather)
                        .map(|(g, _)| g)
                        .unwrap_or_else(|p| p.into_inner().0);
                }
            }
        };
        let r = run_batch(&mut writer, &batch);
        let mut st = shared.lock();
        match r {
            Ok((end, restart)) => {
                st.buffer.completed(batch.data, restart);
                drop(st);
                notify(Notice::Durable(end));
            }
            Err(e) => {
                let m = e.to_string();
                st.buffer.fail(m.clone());
                drop(st);
                notify(Notice::Failed(m));
            }
        }
    }
}

/// A simple [`Notify`] target for threads that want to block until a record is durable (tests,
/// tools). A server should not use it: it wakes every waiting thread on every flush.
#[derive(Default)]
pub struct DurableWait {
    state: Mutex<(Lsn, Option<String>)>,
    cv: Condvar,
}

impl DurableWait {
    /// A new waiter shared between the log's callback and the waiting threads.
    pub fn new() -> Arc<DurableWait> {
        Arc::new(DurableWait::default())
    }

    /// The callback to pass to [`Log::start`].
    pub fn notifier(self: &Arc<Self>) -> Notify {
        let me = self.clone();
        Box::new(move |n| {
            let mut g = me.state.lock().unwrap_or_else(|p| p.into_inner());
            match n {
                Notice::Durable(l) => g.0 = g.0.max(l),
                Notice::Failed(m) => g.1 = Some(m),
            }
            drop(g);
            me.cv.notify_all();
        })
    }

    /// Blocks until the record at `lsn` is durable (`Ok`), the log fails, or `timeout` passes.
    pub fn wait(&self, lsn: Lsn, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if lsn < g.0 {
                return Ok(());
            }
            if let Some(m) = &g.1 {
                return Err(LogError::Failed(m.clone()));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(LogError::Failed(format!(
                    "timed out waiting for {lsn} to become durable"
                )));
            }
            g = self
                .cv
                .wait_timeout(g, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}
