//! Wake coalescing: under load from many connections, the runtime thread naps briefly
//! before it sleeps on its sockets, so that one wake-up serves several connections.
//!
//! Real clients write every frame on its own (Qpid JMS: a transfer, then a disposition,
//! each a `write`), and with the CPUs busy running them each frame woke the queue
//! manager's one thread for a pass of its own: two context switches per JMS round trip,
//! each with cold caches, the bulk of the queue manager's CPU. When the thread is about to
//! park (every task waits) right after a short park, it first sleeps `nap` (qm.ini
//! `TuningParameters: WakeCoalescing`, microseconds); the pass after the nap handles what
//! every connection sent meanwhile.
//!
//! A nap only pays when the CPU it leaves is used. Applications that keep the CPUs busy
//! (many JMS clients on two vCPUs) run during it, and their frames wait for the next pass;
//! fast clients waiting on the queue manager (the Rust harness) would only sit idle with
//! it. So [`NapPolicy`] measures: every few seconds it reads from the sockets for a while
//! with naps and for as long without, and keeps napping only if naps cost no more than a
//! tenth of the bytes read per second ([`KEEP_RATE`]). And with one application waiting on the
//! queue manager a nap only delays its reply: naps stop when the passes after them read
//! from about one connection each ([`Activity`], a moving average under
//! [`KEEP_NAPPING_AT`]). A park that lasted longer than [`BUSY_GAP_NS`] (the load has
//! gone) never leads to a nap, so a lightly used queue manager answers at once. The
//! thread's timers (heartbeats, deadlines) may fire up to one nap late.
//!
//! Naps stop while a message channel runs ([`WakeCoalescing::suspend_naps`], from
//! `scheduling::ThreadScheduling`): a message crossing to another queue manager and its
//! reply coming back would wait for a nap at every hop, in both queue managers, and the
//! trials, which count bytes read, do not see a round trip four hops long slowing down.
//!
//! The hooks run on the runtime thread only (tokio's `on_thread_park` and
//! `on_thread_unpark` of the current-thread runtime); the statics are atomics because the
//! hooks must be `Sync`, not because they are shared.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A park shorter than this (ns) means frames are arriving densely: the next may nap.
pub const BUSY_GAP_NS: u64 = 1_000_000;
/// Naps go on while the moving average of connections read per pass after a nap is at
/// least this.
pub const KEEP_NAPPING_AT: f64 = 1.5;
/// Weight of the latest pass in the moving average.
const AVERAGE_WEIGHT: f64 = 0.1;

/// Passes of the runtime thread so far (incremented at each park).
static PASS: AtomicU64 = AtomicU64::new(1);
/// Connections that read something in the current pass.
static CONNECTIONS_READ: AtomicU32 = AtomicU32::new(0);
/// Bytes read by every connection since the last park.
static BYTES_READ: AtomicU64 = AtomicU64::new(0);

/// A connection's part in the count of connections read per pass: each read calls
/// [`Activity::note`].
#[derive(Debug, Default)]
pub struct Activity {
    pass: Cell<u64>,
}

impl Activity {
    /// The connection read `bytes`: it counts once per pass.
    pub fn note(&self, bytes: usize) {
        BYTES_READ.fetch_add(bytes as u64, Ordering::Relaxed);
        let pass = PASS.load(Ordering::Relaxed);
        if self.pass.get() != pass {
            self.pass.set(pass);
            CONNECTIONS_READ.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// When to nap: a pure state machine over the park times, the connections read per pass
/// and the bytes read, so that it can be tested without a clock.
///
/// Whether naps cost throughput depends on the clients: applications that keep the CPUs
/// busy (many JMS clients on two vCPUs) use the CPU the queue manager leaves during a nap,
/// while fast clients waiting on its replies (the Rust harness) lose that time. So the
/// policy measures: every [`CYCLE_NS`] it reads from the sockets for [`TRIAL_NS`] with naps
/// and for as long without (in alternating order), and naps for the rest of the cycle only
/// if the bytes read per second with naps were at least [`KEEP_RATE`] of those without.
#[derive(Debug)]
pub struct NapPolicy {
    parked_at: u64,
    last_park: u64,
    napped_last: bool,
    /// Moving average of the connections read in the pass after a nap.
    gathered: f64,
    /// The current phase and when it started.
    phase: Phase,
    phase_started: u64,
    phase_bytes: u64,
    /// Bytes per ns read in the last trial without naps, and with.
    rate_without: f64,
    rate_with: f64,
    cycles: u64,
}

/// The phases of a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Measuring without naps (`then_with`: the trial with naps comes next).
    TrialWithout { then_with: bool },
    /// Measuring with naps.
    TrialWith { then_without: bool },
    /// The rest of the cycle, with naps or without.
    Run { naps: bool },
}

/// Length of one trial.
pub const TRIAL_NS: u64 = 300_000_000;
/// Length of a whole cycle (two trials and the run).
pub const CYCLE_NS: u64 = 4_000_000_000;
/// Naps go on only if they keep at least this share of the bytes read per second.
pub const KEEP_RATE: f64 = 0.9;

impl Default for NapPolicy {
    fn default() -> Self {
        NapPolicy {
            parked_at: 0,
            last_park: u64::MAX,
            napped_last: false,
            gathered: 2.0,
            phase: Phase::TrialWithout { then_with: true },
            phase_started: 0,
            phase_bytes: 0,
            rate_without: 0.0,
            rate_with: 0.0,
            cycles: 0,
        }
    }
}

impl NapPolicy {
    /// The thread is about to park at `now` (ns) after a pass that read `bytes` from
    /// `connections_read` connections: true when it should nap first.
    pub fn before_park(&mut self, now: u64, connections_read: u32, bytes: u64) -> bool {
        if self.napped_last {
            self.gathered = self.gathered * (1.0 - AVERAGE_WEIGHT)
                + f64::from(connections_read) * AVERAGE_WEIGHT;
        }
        self.phase_bytes = self.phase_bytes.saturating_add(bytes);
        self.advance(now);
        let naps = match self.phase {
            Phase::TrialWithout { .. } => false,
            Phase::TrialWith { .. } => true,
            Phase::Run { naps } => naps,
        };
        let nap = naps && self.last_park < BUSY_GAP_NS && self.gathered >= KEEP_NAPPING_AT;
        self.napped_last = nap;
        nap
    }

    fn advance(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.phase_started);
        let rate = self.phase_bytes as f64 / elapsed.max(1) as f64;
        let next = match self.phase {
            Phase::TrialWithout { then_with } if elapsed >= TRIAL_NS => {
                self.rate_without = rate;
                if then_with {
                    Phase::TrialWith {
                        then_without: false,
                    }
                } else {
                    Phase::Run {
                        naps: self.trial_with_won(),
                    }
                }
            }
            Phase::TrialWith { then_without } if elapsed >= TRIAL_NS => {
                self.rate_with = rate;
                if then_without {
                    Phase::TrialWithout { then_with: false }
                } else {
                    Phase::Run {
                        naps: self.trial_with_won(),
                    }
                }
            }
            Phase::Run { .. } if elapsed >= CYCLE_NS - 2 * TRIAL_NS => {
                self.cycles += 1;
                // Alternate which trial goes first, so a drift of the load favours neither.
                // A trial with naps starts with the benefit of the doubt on gathering.
                self.gathered = 2.0;
                if self.cycles.is_multiple_of(2) {
                    Phase::TrialWithout { then_with: true }
                } else {
                    Phase::TrialWith { then_without: true }
                }
            }
            _ => return,
        };
        if matches!(next, Phase::TrialWith { .. }) {
            self.gathered = 2.0;
        }
        self.phase = next;
        self.phase_started = now;
        self.phase_bytes = 0;
    }

    fn trial_with_won(&self) -> bool {
        self.rate_with > 0.0 && self.rate_with >= self.rate_without * KEEP_RATE
    }

    /// The thread parks at `now` (after its nap, if it took one).
    pub fn parked(&mut self, now: u64) {
        self.parked_at = now;
    }

    /// The thread woke at `now`.
    pub fn unparked(&mut self, now: u64) {
        self.last_park = now.saturating_sub(self.parked_at);
    }
}

/// The hooks' side: the policy, the clock and the nap itself.
#[derive(Debug)]
pub struct WakeCoalescing {
    nap: Duration,
    base: Instant,
    policy: Mutex<NapPolicy>,
    /// Naps are suspended: message channels run.
    suspended: AtomicBool,
}

impl WakeCoalescing {
    /// Naps of `nap` (non-zero) under the policy above.
    pub fn new(nap: Duration) -> Self {
        debug_assert!(!nap.is_zero(), "a zero nap installs no hooks");
        WakeCoalescing {
            nap,
            base: Instant::now(),
            policy: Mutex::new(NapPolicy::default()),
            suspended: AtomicBool::new(false),
        }
    }

    fn now(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Suspends naps (`true`, while message channels run) or lets them resume.
    pub fn suspend_naps(&self, suspended: bool) {
        self.suspended.store(suspended, Ordering::Relaxed);
    }

    /// Whether naps are suspended.
    #[cfg(test)]
    pub fn naps_suspended(&self) -> bool {
        self.suspended.load(Ordering::Relaxed)
    }

    /// tokio's `on_thread_park`: maybe nap, then note the time of the park.
    pub fn before_park(&self) {
        let Ok(mut policy) = self.policy.lock() else {
            return;
        };
        let read = CONNECTIONS_READ.swap(0, Ordering::Relaxed);
        let bytes = BYTES_READ.swap(0, Ordering::Relaxed);
        PASS.fetch_add(1, Ordering::Relaxed);
        if self.suspended.load(Ordering::Relaxed) {
            policy.parked(self.now());
            return;
        }
        if policy.before_park(self.now(), read, bytes) {
            std::thread::sleep(self.nap);
        }
        policy.parked(self.now());
    }

    /// tokio's `on_thread_unpark`.
    pub fn after_unpark(&self) {
        if let Ok(mut policy) = self.policy.lock() {
            policy.unparked(self.now());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: u64 = 1_000;
    const NAP: u64 = 500 * US;

    /// How the clients answer, in a simulation of the runtime thread's passes.
    #[derive(Clone, Copy)]
    enum Clients {
        /// Busy applications: bytes arrive at a fixed rate whatever the queue manager
        /// does (`per_us` bytes a microsecond), from `connections` connections a pass.
        Busy { per_us: u64, connections: u32 },
        /// Fast clients waiting on the queue manager: each pass brings `bytes`, whenever
        /// it runs, `gap` after the last.
        Waiting {
            bytes: u64,
            gap: u64,
            connections: u32,
        },
        /// Light load: parks of `gap`.
        Light { gap: u64 },
    }

    /// Runs the passes of `secs` seconds; returns the share of passes that napped in
    /// the last second.
    fn run(p: &mut NapPolicy, now: &mut u64, secs: u64, clients: Clients) -> f64 {
        let end = *now + secs * 1_000_000_000;
        let (mut naps, mut passes, mut last) = (0u64, 0u64, *now);
        while *now < end {
            let (bytes, connections) = match clients {
                Clients::Busy {
                    per_us,
                    connections,
                } => ((*now - last) / US * per_us, connections),
                Clients::Waiting {
                    bytes, connections, ..
                } => (bytes, connections),
                Clients::Light { .. } => (100, 1),
            };
            last = *now;
            let nap = p.before_park(*now, connections, bytes);
            if nap {
                *now += NAP;
            }
            p.parked(*now);
            *now += match clients {
                Clients::Busy { .. } => 20 * US,
                Clients::Waiting { gap, .. } | Clients::Light { gap } => gap,
            };
            p.unparked(*now);
            *now += 30 * US;
            if *now + 1_000_000_000 >= end {
                passes += 1;
                naps += u64::from(nap);
            }
        }
        naps as f64 / passes.max(1) as f64
    }

    #[test]
    fn busy_applications_get_naps_that_cost_them_nothing() {
        let (mut p, mut now) = (NapPolicy::default(), 0);
        let busy = Clients::Busy {
            per_us: 10,
            connections: 4,
        };
        let share = run(&mut p, &mut now, 7, busy);
        assert!(share > 0.5, "most passes nap: {share}");
    }

    #[test]
    fn clients_waiting_on_the_queue_manager_get_no_naps() {
        let (mut p, mut now) = (NapPolicy::default(), 0);
        let waiting = Clients::Waiting {
            bytes: 20_000,
            gap: 10 * US,
            connections: 8,
        };
        let share = run(&mut p, &mut now, 7, waiting);
        assert!(share < 0.1, "only the trials nap: {share}");
    }

    #[test]
    fn one_application_waiting_gets_no_naps() {
        let (mut p, mut now) = (NapPolicy::default(), 0);
        let one = Clients::Busy {
            per_us: 10,
            connections: 1,
        };
        let share = run(&mut p, &mut now, 7, one);
        assert!(share < 0.05, "a few passes of each trial decide: {share}");
    }

    #[test]
    fn light_load_is_answered_at_once() {
        let (mut p, mut now) = (NapPolicy::default(), 0);
        let share = run(&mut p, &mut now, 7, Clients::Light { gap: 5_000 * US });
        assert_eq!(share, 0.0);
    }
}
