//! This process's CPU time (user and system, all threads), from `getrusage`: the yardsticks
//! report CPU per operation, kernel time included (for the relay most of it is TCP).

use std::io;

/// User and system CPU time of the whole process so far, in microseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProcessCpu {
    /// User-space CPU, µs.
    pub user_us: u64,
    /// Kernel CPU, µs.
    pub system_us: u64,
}

impl ProcessCpu {
    /// Reads this process's CPU time now.
    pub fn now() -> io::Result<ProcessCpu> {
        // SAFETY: getrusage writes a plain struct we own; zeroed is a valid rusage.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: RUSAGE_SELF with a valid pointer to a rusage.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        let us = |t: libc::timeval| {
            u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000 + u64::try_from(t.tv_usec).unwrap_or(0)
        };
        Ok(ProcessCpu {
            user_us: us(usage.ru_utime),
            system_us: us(usage.ru_stime),
        })
    }

    /// CPU spent between `earlier` and `self` (user, system), µs.
    pub fn since(&self, earlier: &ProcessCpu) -> ProcessCpu {
        ProcessCpu {
            user_us: self.user_us.saturating_sub(earlier.user_us),
            system_us: self.system_us.saturating_sub(earlier.system_us),
        }
    }

    /// User plus system, µs.
    pub fn total_us(&self) -> u64 {
        self.user_us + self.system_us
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = ProcessCpu::now().unwrap();
        let start = std::time::Instant::now();
        let mut x = 0u64;
        // Spin until the kernel has charged some CPU time (bounded, for a loaded machine).
        while ProcessCpu::now().unwrap().since(&before).total_us() == 0
            && start.elapsed() < std::time::Duration::from_secs(10)
        {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        let spent = ProcessCpu::now().unwrap().since(&before);
        assert!(spent.total_us() > 0, "10 s of spinning took no CPU time");
    }
}
