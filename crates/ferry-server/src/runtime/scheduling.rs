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
//! Only the runtime thread takes the policy: it is set just before the runtime starts,
//! after the log writer, the queue-file writer and the definition writer are running, so
//! a flush completing still wakes its waiter at once.

use std::io;

/// The policy qm.ini asks for (`RuntimeScheduling`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeScheduling {
    /// `SCHED_BATCH`: wake-ups do not preempt (the default).
    Batch,
    /// `SCHED_OTHER`: the system's default.
    Normal,
}

impl RuntimeScheduling {
    /// The policy a qm.ini value names (checked against the key's words when read).
    pub fn from_ini(word: &str) -> RuntimeScheduling {
        if word.eq_ignore_ascii_case("NORMAL") {
            RuntimeScheduling::Normal
        } else {
            RuntimeScheduling::Batch
        }
    }

    /// The qm.ini word.
    pub fn word(self) -> &'static str {
        match self {
            RuntimeScheduling::Batch => "BATCH",
            RuntimeScheduling::Normal => "NORMAL",
        }
    }

    /// Gives the calling thread this policy (threads it starts later inherit it).
    pub fn apply_to_this_thread(self) -> io::Result<()> {
        let policy = match self {
            RuntimeScheduling::Batch => libc::SCHED_BATCH,
            RuntimeScheduling::Normal => libc::SCHED_OTHER,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_takes_the_policy_asked_for() {
        std::thread::spawn(|| {
            RuntimeScheduling::Batch.apply_to_this_thread().unwrap();
            // SAFETY: no pointers; pid 0 is the calling thread.
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_BATCH);
            RuntimeScheduling::Normal.apply_to_this_thread().unwrap();
            // SAFETY: as above.
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_OTHER);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn qm_ini_words_name_the_policies() {
        for p in [RuntimeScheduling::Batch, RuntimeScheduling::Normal] {
            assert_eq!(RuntimeScheduling::from_ini(p.word()), p);
            assert_eq!(RuntimeScheduling::from_ini(&p.word().to_lowercase()), p);
        }
    }
}
