//! Handing free memory back to the system.
//!
//! The allocator keeps the pages of what the queue manager frees, to reuse them. That is
//! right for the steady state, but after a burst (bodies moved to the queue files, a
//! flood of connections that ended, a huge frame read and dropped) the process would stay
//! at its peak size for good. So the server counts the large buffers it lets go of
//! ([`MemoryTrim::note_freed`]) and, once a second, when enough was freed or many sockets
//! have closed since the most were open ([`super::admission`]), asks the allocator to
//! return its free pages: glibc's `malloc_trim`, then the allocator the embedding binary
//! registered ([`set_allocator_trim`]; the `ferry` binary: mimalloc's `mi_collect`). The
//! walk of a large heap costs little at most once a second.

use super::admission::Admission;
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

/// Bytes freed in large buffers after which the next tick hands memory back.
pub const TRIM_AFTER_BYTES: u64 = 1 << 20;

/// Buffers at least this large are counted when they are let go of: smaller ones are
/// reused by the allocator without growing the process.
pub const LARGE_BUFFER: usize = 256 * 1024;

/// How the process's global allocator gives free memory back to the system, when it is
/// not glibc's (set by the embedding binary, see [`set_allocator_trim`]).
static ALLOCATOR_TRIM: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Registers how the process's global allocator returns free memory to the system (the
/// `ferry` binary: mimalloc's `mi_collect`). Without it mimalloc kept the pages of spilled
/// bodies for 10-25 s. Only the first registration counts.
pub fn set_allocator_trim(trim: fn()) {
    let _ = ALLOCATOR_TRIM.set(trim);
}

/// Hands free heap memory back to the system: glibc's `malloc_trim` releases free pages
/// anywhere in its arenas (elsewhere it does nothing), then the registered allocator's
/// trim, if any ([`set_allocator_trim`]).
pub fn return_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only inspects and releases the allocator's free memory.
    unsafe {
        libc::malloc_trim(0);
    }
    if let Some(trim) = ALLOCATOR_TRIM.get() {
        trim();
    }
}

/// What was freed since memory was last handed back.
#[derive(Debug, Default)]
pub struct MemoryTrim {
    freed: Cell<u64>,
}

impl MemoryTrim {
    /// Counts `bytes` let go of (a large buffer dropped, bodies left on disk).
    pub fn note_freed(&self, bytes: u64) {
        self.freed.set(self.freed.get().saturating_add(bytes));
    }

    /// Counts a buffer of `capacity` bytes let go of, if it is large.
    pub fn note_buffer(&self, capacity: usize) {
        if capacity >= LARGE_BUFFER {
            self.note_freed(capacity as u64);
        }
    }

    /// True once [`TRIM_AFTER_BYTES`] were freed; the count starts again.
    fn due(&self) -> bool {
        if self.freed.get() < TRIM_AFTER_BYTES {
            return false;
        }
        self.freed.set(0);
        true
    }
}

/// Once a second: hands free memory back after enough was freed, or after a flood of
/// connections ended.
pub async fn trim_task(memory: Rc<MemoryTrim>, admission: Rc<Admission>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        let freed = memory.due();
        let closed = admission.many_closed_since_peak();
        if freed || closed {
            return_free_memory();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_large_buffers_count_and_a_trim_resets_the_count() {
        let m = MemoryTrim::default();
        m.note_buffer(64 * 1024);
        assert_eq!(m.freed.get(), 0);
        for _ in 0..3 {
            m.note_buffer(LARGE_BUFFER);
        }
        assert!(!m.due(), "768 KiB is not enough");
        m.note_freed(TRIM_AFTER_BYTES);
        assert!(m.due());
        assert!(!m.due(), "the count started again");
    }
}
