//! The scheduling policy of the runtime thread, the one thread that serves every socket.
//!
//! Under Linux's default policy a thread woken by a socket preempts whatever runs on its
//! CPU. When applications keep the CPUs busy (two vCPUs shared with JMS clients, or a
//! container on a crowded node), every frame a client writes then costs the queue manager
//! a context switch and a pass with cold caches, for one frame each: about 2.7 context
//! switches per JMS round trip. `SCHED_BATCH` keeps the thread's share of CPU but lets no
//! wake-up preempt: the queue manager runs at the next switch (the application blocks, or
//! its slice ends) and handles everything that arrived meanwhile in one pass. Idle CPUs
//! still run it at once, so an unloaded machine sees no difference. Measured in
//! docs/performance.md ("Scheduling policy"); qm.ini `TuningParameters: RuntimeScheduling`.
//!
//! A message channel changes the trade. A message crossing to another queue manager wakes
//! that queue manager's thread, whose answer wakes this one again: with more runnable
//! threads than CPUs (two queue managers and their applications on two vCPUs), each of
//! those wake-ups waits for a time slice to end under `SCHED_BATCH`, several milliseconds
//! per hop. So the default, `AUTO`, runs the thread as a batch thread while no message
//! channel runs and under the normal policy while one does ([`ThreadScheduling`]), which
//! also suspends wake coalescing's naps meanwhile, whatever the policy.
//!
//! Only the runtime thread takes the policy: it is set just before the runtime starts,
//! after the log writer, the queue-file writer and the definition writer are running, so
//! a flush completing still wakes its waiter at once.

use super::wake_coalescing::WakeCoalescing;
use std::cell::{Cell, RefCell};
use std::io;
use std::sync::Arc;

/// The policy qm.ini asks for (`RuntimeScheduling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeScheduling {
    /// Batch while no message channel runs, normal while one does (the default).
    Auto,
    /// `SCHED_BATCH` always: wake-ups do not preempt.
    Batch,
    /// `SCHED_OTHER` always: the system's default.
    Normal,
}

impl RuntimeScheduling {
    /// The policy a qm.ini value names (checked against the key's words when read).
    pub fn from_ini(word: &str) -> RuntimeScheduling {
        if word.eq_ignore_ascii_case("NORMAL") {
            RuntimeScheduling::Normal
        } else if word.eq_ignore_ascii_case("BATCH") {
            RuntimeScheduling::Batch
        } else {
            RuntimeScheduling::Auto
        }
    }

    /// The qm.ini word.
    pub fn word(self) -> &'static str {
        match self {
            RuntimeScheduling::Auto => "AUTO",
            RuntimeScheduling::Batch => "BATCH",
            RuntimeScheduling::Normal => "NORMAL",
        }
    }

    /// The thread's policy with `running_channels` message channels running.
    fn policy(self, running_channels: u32) -> ThreadPolicy {
        match self {
            RuntimeScheduling::Batch => ThreadPolicy::Batch,
            RuntimeScheduling::Normal => ThreadPolicy::Normal,
            RuntimeScheduling::Auto if running_channels == 0 => ThreadPolicy::Batch,
            RuntimeScheduling::Auto => ThreadPolicy::Normal,
        }
    }
}

/// A Linux scheduling policy the runtime thread runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadPolicy {
    /// `SCHED_BATCH`.
    Batch,
    /// `SCHED_OTHER`.
    Normal,
}

impl ThreadPolicy {
    /// The policy's name in messages.
    pub fn word(self) -> &'static str {
        match self {
            ThreadPolicy::Batch => "BATCH",
            ThreadPolicy::Normal => "NORMAL",
        }
    }

    /// Gives the calling thread this policy (threads it starts later inherit it).
    pub fn apply_to_this_thread(self) -> io::Result<()> {
        let policy = match self {
            ThreadPolicy::Batch => libc::SCHED_BATCH,
            ThreadPolicy::Normal => libc::SCHED_OTHER,
        };
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param for the call's duration; pid 0 is the
        // calling thread on Linux.
        let rc = unsafe { libc::sched_setscheduler(0, policy, &param) };
        if rc == 0 {
            debug_assert_eq!(
                // SAFETY: no pointers; pid 0 is the calling thread.
                unsafe { libc::sched_getscheduler(0) },
                policy,
                "the thread's policy after setting it"
            );
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
}

/// The runtime thread's policy as qm.ini asks for it, following the message channels
/// that run under `AUTO`. Lives on the runtime thread (it sets the calling thread's
/// policy), owned by the server.
#[derive(Debug)]
pub struct ThreadScheduling {
    /// What qm.ini asks for.
    asked: RuntimeScheduling,
    /// Message channels in their RUNNING phase now.
    running_channels: Cell<u32>,
    /// The policy the thread was last given (None before [`ThreadScheduling::start`],
    /// or once setting one failed: it then runs under what it had, and is left alone).
    current: Cell<Option<ThreadPolicy>>,
    /// Wake coalescing's hooks, when qm.ini asks for naps: suspended while channels run.
    naps: RefCell<Option<Arc<WakeCoalescing>>>,
}

impl ThreadScheduling {
    /// The policy qm.ini's `asked`, not yet applied.
    pub fn new(asked: RuntimeScheduling) -> ThreadScheduling {
        ThreadScheduling {
            asked,
            running_channels: Cell::new(0),
            current: Cell::new(None),
            naps: RefCell::new(None),
        }
    }

    /// The runtime's wake coalescing, whose naps stop while message channels run.
    pub fn coalesce_with(&self, naps: Arc<WakeCoalescing>) {
        naps.suspend_naps(self.running_channels.get() > 0);
        *self.naps.borrow_mut() = Some(naps);
    }

    /// Gives the calling (runtime) thread its starting policy. On failure the thread
    /// keeps the system's default and later changes are not tried.
    pub fn start(&self) -> Result<(), (ThreadPolicy, io::Error)> {
        let policy = self.asked.policy(self.running_channels.get());
        policy.apply_to_this_thread().map_err(|e| (policy, e))?;
        self.current.set(Some(policy));
        Ok(())
    }

    /// A message channel starts its RUNNING phase; it ends when the guard is dropped.
    /// Call on the runtime thread.
    pub fn message_channel_running(&self) -> MessageChannelRunning<'_> {
        let n = self.running_channels.get() + 1;
        self.running_channels.set(n);
        self.follow();
        MessageChannelRunning { scheduling: self }
    }

    /// Moves the thread to the policy the running channels call for, if it changed, and
    /// suspends wake coalescing's naps while any runs.
    fn follow(&self) {
        if let Some(naps) = self.naps.borrow().as_ref() {
            naps.suspend_naps(self.running_channels.get() > 0);
        }
        let Some(current) = self.current.get() else {
            return;
        };
        let wanted = self.asked.policy(self.running_channels.get());
        if wanted == current {
            return;
        }
        match wanted.apply_to_this_thread() {
            Ok(()) => self.current.set(Some(wanted)),
            Err(e) => {
                tracing::warn!(
                    "the runtime thread could not move to scheduling policy {} \
                     (qm.ini RuntimeScheduling {}): {e}",
                    wanted.word(),
                    self.asked.word()
                );
                self.current.set(None);
            }
        }
    }
}

/// A message channel in its RUNNING phase, for [`ThreadScheduling`].
#[must_use = "the channel counts as running only while the guard lives"]
pub struct MessageChannelRunning<'a> {
    scheduling: &'a ThreadScheduling,
}

impl Drop for MessageChannelRunning<'_> {
    fn drop(&mut self) {
        let n = self.scheduling.running_channels.get();
        debug_assert!(n > 0, "a running channel ends that was counted");
        self.scheduling.running_channels.set(n.saturating_sub(1));
        self.scheduling.follow();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calling thread's policy.
    fn this_thread_policy() -> i32 {
        // SAFETY: no pointers; pid 0 is the calling thread.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[test]
    fn a_thread_takes_the_policy_asked_for() {
        std::thread::spawn(|| {
            ThreadPolicy::Batch.apply_to_this_thread().unwrap();
            assert_eq!(this_thread_policy(), libc::SCHED_BATCH);
            ThreadPolicy::Normal.apply_to_this_thread().unwrap();
            assert_eq!(this_thread_policy(), libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn auto_runs_normal_exactly_while_a_message_channel_runs() {
        std::thread::spawn(|| {
            let s = ThreadScheduling::new(RuntimeScheduling::Auto);
            s.start().unwrap();
            assert_eq!(this_thread_policy(), libc::SCHED_BATCH);
            let first = s.message_channel_running();
            assert_eq!(this_thread_policy(), libc::SCHED_OTHER);
            let second = s.message_channel_running();
            drop(first);
            assert_eq!(this_thread_policy(), libc::SCHED_OTHER, "one still runs");
            drop(second);
            assert_eq!(this_thread_policy(), libc::SCHED_BATCH);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn naps_stop_while_a_message_channel_runs() {
        let s = ThreadScheduling::new(RuntimeScheduling::Normal);
        let naps = Arc::new(WakeCoalescing::new(std::time::Duration::from_micros(500)));
        s.coalesce_with(naps.clone());
        assert!(!naps.naps_suspended());
        let running = s.message_channel_running();
        assert!(naps.naps_suspended());
        drop(running);
        assert!(!naps.naps_suspended());
    }

    #[test]
    fn batch_and_normal_ignore_message_channels() {
        std::thread::spawn(|| {
            for (asked, policy) in [
                (RuntimeScheduling::Batch, libc::SCHED_BATCH),
                (RuntimeScheduling::Normal, libc::SCHED_OTHER),
            ] {
                let s = ThreadScheduling::new(asked);
                s.start().unwrap();
                let running = s.message_channel_running();
                assert_eq!(this_thread_policy(), policy, "{asked:?}");
                drop(running);
                assert_eq!(this_thread_policy(), policy, "{asked:?}");
            }
        })
        .join()
        .unwrap();
    }

    #[test]
    fn qm_ini_words_name_the_policies() {
        for p in [
            RuntimeScheduling::Auto,
            RuntimeScheduling::Batch,
            RuntimeScheduling::Normal,
        ] {
            assert_eq!(RuntimeScheduling::from_ini(p.word()), p);
            assert_eq!(RuntimeScheduling::from_ini(&p.word().to_lowercase()), p);
        }
    }
}
