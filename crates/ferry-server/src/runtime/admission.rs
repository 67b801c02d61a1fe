//! Admission: which sockets the queue manager takes, so that clients can never use up
//! what the queue manager itself needs.
//!
//! Every socket accepted on a TCP listener or AMQP channel takes a [`Permit`] before its
//! task starts and gives it back when the task ends, so at most `MaxConnections` client
//! sockets are open at once, handshakes included (qm.ini `Limits:`; lowered at start to
//! what the process's file-descriptor limit allows after `ReservedFileDescriptors`). A
//! socket over the limit is closed as soon as it is accepted: taking it off the backlog
//! costs nothing, while leaving it there would make the accept loop spin.
//!
//! The descriptors kept back serve the queue manager itself: the bindings socket (local
//! applications and `ferry mqsc`), log and queue files. Should the process run out of
//! descriptors anyway (EMFILE/ENFILE), an accept loop frees a spare descriptor kept for
//! that moment, takes the waiting socket off the backlog and closes it, then backs off;
//! other accept errors back off too (10 ms doubling to 1 s). Each is logged through the
//! error log, whose suppression keeps a flood to a line per interval.

use crate::limits::Limits;
use std::cell::Cell;
use std::os::fd::{AsRawFd, OwnedFd};
use std::rc::Rc;
use std::time::Duration;

/// The first pause after a failed accept; doubled on each failure in a row.
const FIRST_BACKOFF: Duration = Duration::from_millis(10);
/// The longest pause after failed accepts.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// Once this many sockets have closed since the most open at once, their buffers' memory
/// is handed back to the system (a flood of connections that ended must not leave the
/// process at its peak size).
const TRIM_AFTER_CLOSED: u64 = 64;

/// How many client sockets the process can hold, from its limits and its descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Client sockets admitted at once.
    pub max_connections: u64,
    /// True when the descriptor limit, not MaxConnections, set `max_connections`.
    pub lowered: bool,
    /// The process's open-file limit (soft).
    pub open_file_limit: u64,
}

impl Budget {
    /// The budget for `limits` in a process that may open `open_file_limit` files and has
    /// `in_use` open now.
    pub fn new(limits: &Limits, open_file_limit: u64, in_use: u64) -> Self {
        let room = open_file_limit
            .saturating_sub(limits.reserved_file_descriptors)
            .saturating_sub(in_use);
        let max_connections = limits.max_connections.min(room);
        Budget {
            max_connections,
            lowered: max_connections < limits.max_connections,
            open_file_limit,
        }
    }

    /// The budget of this process, reading its descriptor limit and use.
    pub fn of_this_process(limits: &Limits) -> Self {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit only writes the struct we pass.
        let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0;
        let limit = if ok && lim.rlim_cur != libc::RLIM_INFINITY {
            lim.rlim_cur
        } else {
            1 << 20
        };
        let in_use = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64);
        Budget::new(limits, limit, in_use)
    }
}

/// Counts the client sockets open and hands out permits within the budget.
pub struct Admission {
    budget: Budget,
    max: u64,
    open: Cell<u64>,
    refused: Cell<u64>,
    failures_in_a_row: Cell<u32>,
    /// The most sockets open at once since memory was last handed back.
    peak: Cell<u64>,
    /// A descriptor kept open to be given up when the process runs out (see the module).
    spare: Cell<Option<OwnedFd>>,
}

/// One admitted socket: dropping it gives its place back.
pub struct Permit {
    admission: Rc<Admission>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let open = self.admission.open.get();
        debug_assert!(open > 0, "a permit outlived the count");
        self.admission.open.set(open.saturating_sub(1));
    }
}

/// What to do after an accept failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AcceptFailure {
    /// Pause before accepting again.
    pub pause: Duration,
    /// The process was out of descriptors and one waiting socket was closed.
    pub shed: bool,
}

impl Admission {
    /// Admission within `budget`.
    pub fn new(budget: Budget) -> Rc<Self> {
        Rc::new(Admission {
            budget,
            max: budget.max_connections,
            open: Cell::new(0),
            refused: Cell::new(0),
            failures_in_a_row: Cell::new(0),
            peak: Cell::new(0),
            spare: Cell::new(open_spare()),
        })
    }

    /// The budget it admits within.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// A permit for one more socket just accepted, or `None` when `MaxConnections` are
    /// open. (An accept succeeded, so the back-off after failures starts again.)
    pub fn admit(self: &Rc<Self>) -> Option<Permit> {
        self.failures_in_a_row.set(0);
        let open = self.open.get();
        if open >= self.max {
            self.refused.set(self.refused.get() + 1);
            return None;
        }
        self.open.set(open + 1);
        self.peak.set(self.peak.get().max(open + 1));
        debug_assert!(self.open.get() <= self.max);
        Some(Permit {
            admission: self.clone(),
        })
    }

    /// Client sockets open now.
    pub fn open(&self) -> u64 {
        self.open.get()
    }

    /// The most client sockets admitted at once.
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Sockets refused since the start.
    pub fn refused(&self) -> u64 {
        self.refused.get()
    }

    /// True once [`TRIM_AFTER_CLOSED`] sockets have closed since the peak: the caller
    /// hands free memory back to the system (`memory::trim_task`), and the peak starts
    /// again from now.
    pub fn many_closed_since_peak(&self) -> bool {
        let open = self.open.get();
        if self.peak.get().saturating_sub(open) < TRIM_AFTER_CLOSED {
            return false;
        }
        self.peak.set(open);
        true
    }

    /// After a failed accept on `listener`: when the process is out of descriptors, the
    /// spare one is given up to take the waiting socket off the backlog and close it; the
    /// pause before the next accept doubles with each failure in a row.
    pub fn accept_failed(&self, listener: &impl AsRawFd, error: &std::io::Error) -> AcceptFailure {
        let n = self.failures_in_a_row.get().saturating_add(1);
        self.failures_in_a_row.set(n);
        let pause = FIRST_BACKOFF
            .saturating_mul(1u32 << (n - 1).min(10))
            .min(MAX_BACKOFF);
        let out_of_fds = matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE));
        let shed = out_of_fds && self.shed_one(listener);
        AcceptFailure { pause, shed }
    }

    /// Frees the spare descriptor, accepts one waiting socket and closes it, then takes a
    /// spare again. True when a socket was shed.
    fn shed_one(&self, listener: &impl AsRawFd) -> bool {
        drop(self.spare.take());
        // SAFETY: accept4 on a listening socket we own, with no address buffers; the
        // descriptor it returns is ours and closed at once.
        let fd = unsafe {
            libc::accept4(
                listener.as_raw_fd(),
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            )
        };
        if fd >= 0 {
            // SAFETY: fd was just returned by accept4 and is closed once, here.
            unsafe { libc::close(fd) };
        }
        self.spare.set(open_spare());
        fd >= 0
    }
}

fn open_spare() -> Option<OwnedFd> {
    std::fs::File::open("/dev/null").ok().map(OwnedFd::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_keeps_the_reserve() {
        let limits = Limits {
            max_connections: 5_000,
            reserved_file_descriptors: 128,
            ..Limits::default()
        };
        let b = Budget::new(&limits, 1_024, 20);
        assert_eq!(b.max_connections, 1_024 - 128 - 20);
        assert!(b.lowered);
        let b = Budget::new(&limits, 1 << 20, 20);
        assert_eq!(b.max_connections, 5_000);
        assert!(!b.lowered);
        // A limit smaller than the reserve admits nobody rather than underflowing.
        assert_eq!(Budget::new(&limits, 100, 20).max_connections, 0);
    }

    #[test]
    fn permits_are_counted_and_given_back() {
        let a = Admission::new(Budget {
            max_connections: 2,
            lowered: false,
            open_file_limit: 1_024,
        });
        let p1 = a.admit().expect("first");
        let p2 = a.admit().expect("second");
        assert!(a.admit().is_none());
        assert_eq!((a.open(), a.refused()), (2, 1));
        drop(p1);
        assert_eq!(a.open(), 1);
        let _p3 = a.admit().expect("a place came free");
        drop(p2);
        assert_eq!(a.open(), 1);
    }

    #[test]
    fn a_flood_that_ended_is_noticed_once() {
        let a = Admission::new(Budget {
            max_connections: 1_000,
            lowered: false,
            open_file_limit: 4_096,
        });
        let mut permits: Vec<Permit> = (0..200).filter_map(|_| a.admit()).collect();
        assert!(!a.many_closed_since_peak());
        permits.truncate(100);
        assert!(a.many_closed_since_peak(), "100 closed since 200 were open");
        assert!(!a.many_closed_since_peak(), "noticed once");
        permits.truncate(60);
        assert!(!a.many_closed_since_peak(), "only 40 more closed");
        permits.clear();
        assert!(
            a.many_closed_since_peak(),
            "100 closed since the last notice"
        );
    }

    #[test]
    fn failed_accepts_back_off_up_to_a_second() {
        let a = Admission::new(Budget {
            max_connections: 1,
            lowered: false,
            open_file_limit: 1_024,
        });
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let other = std::io::Error::from_raw_os_error(libc::ECONNABORTED);
        let pauses: Vec<Duration> = (0..9).map(|_| a.accept_failed(&l, &other).pause).collect();
        assert_eq!(pauses[0], Duration::from_millis(10));
        assert_eq!(pauses[1], Duration::from_millis(20));
        assert_eq!(pauses[8], MAX_BACKOFF);
        // An admitted socket means accepting works again.
        let _p = a.admit();
        assert_eq!(a.accept_failed(&l, &other).pause, FIRST_BACKOFF);
    }

    #[test]
    fn out_of_descriptors_sheds_the_waiting_socket() {
        let a = Admission::new(Budget {
            max_connections: 1,
            lowered: false,
            open_file_limit: 1_024,
        });
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        let mut c = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let emfile = std::io::Error::from_raw_os_error(libc::EMFILE);
        assert!(a.accept_failed(&l, &emfile).shed);
        // The client sees its socket closed.
        use std::io::Read;
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut buf = [0u8; 1];
        assert!(matches!(c.read(&mut buf), Ok(0) | Err(_)));
        // Nothing waits now: nothing is shed, and the spare is back.
        assert!(!a.accept_failed(&l, &emfile).shed);
        assert!(a.spare.take().is_some());
    }
}
