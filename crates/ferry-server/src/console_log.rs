//! run/console.log: a background queue manager's stdout and stderr, rotated by size.
//!
//! `ferry start` points the server process's stdout and stderr at run/console.log, and
//! `tracing` writes there (every error-log entry that is not suppressed, and the
//! diagnostics that are not error-log messages). When the queue manager finds its stderr
//! is that file, it takes it over ([`adopt`]): before a `tracing` line would take the
//! file past QMErrorLog/ConsoleLogSize, console.log.1 becomes console.log.2 (the old .2
//! is dropped), console.log becomes console.log.1, and a new console.log is opened and
//! put in place of descriptors 1 and 2 (`dup2`). Whatever is written straight to those
//! descriptors (a panic message, the start-up failure `ferry start` quotes) therefore
//! still lands in the current console.log.
//!
//! A size-based writer is small enough to keep here: `tracing-appender` rotates by time
//! only, and what must be bounded is bytes on disk.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// How many files are kept: console.log, console.log.1, console.log.2.
pub const FILES: usize = 3;

/// The console log this process writes to, once adopted. A mutex, not a thread-local:
/// the recovery log's writer thread logs through `tracing` too.
static CONSOLE: Mutex<Option<ConsoleLog>> = Mutex::new(None);

/// A console log file and the descriptors that write to it.
#[derive(Debug)]
pub struct ConsoleLog {
    path: PathBuf,
    max_size: u64,
    size: u64,
    fds: Vec<RawFd>,
}

impl ConsoleLog {
    /// Rotation of `path` past `max_size` bytes; `fds` are the descriptors open on it,
    /// which each rotation points at the new file.
    pub fn new(path: &Path, max_size: u64, fds: Vec<RawFd>) -> io::Result<Self> {
        debug_assert!(!fds.is_empty());
        let size = std::fs::metadata(path)?.len();
        Ok(ConsoleLog {
            path: path.to_path_buf(),
            max_size,
            size,
            fds,
        })
    }

    /// The path of file `n` (0: console.log itself).
    pub fn file(&self, n: usize) -> PathBuf {
        match n {
            0 => self.path.clone(),
            n => {
                let mut p = self.path.clone().into_os_string();
                p.push(format!(".{n}"));
                PathBuf::from(p)
            }
        }
    }

    /// Called before `n` more bytes are written: rotates first if they would take the
    /// file past its size. The size is read from the file each time (one `fstat`; lines
    /// are few, the error log suppresses floods), so bytes written straight to the
    /// descriptors count too.
    pub fn make_room(&mut self, n: u64) -> io::Result<()> {
        self.size = fd_size(self.fds[0]).unwrap_or(self.size);
        if self.size > 0 && self.size + n > self.max_size {
            self.rotate()?;
        }
        Ok(())
    }

    /// Counts `n` bytes written (used when the size cannot be read back).
    pub fn wrote(&mut self, n: u64) {
        self.size += n;
    }

    fn rotate(&mut self) -> io::Result<()> {
        for n in (1..FILES).rev() {
            let from = self.file(n - 1);
            if from.exists() {
                std::fs::rename(&from, self.file(n))?;
            }
        }
        // console.log was just renamed away: this creates it anew.
        let fresh = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)?;
        for &fd in &self.fds {
            // SAFETY: dup2 on descriptors this process owns: `fresh` is open, and `fd` is
            // one of its standard descriptors (or a test's file) already open on the old
            // console log; dup2 closes that and reuses the number atomically.
            if unsafe { libc::dup2(fresh.as_raw_fd(), fd) } < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        self.size = 0;
        Ok(())
    }
}

/// The size of the file open on `fd`.
fn fd_size(fd: RawFd) -> Option<u64> {
    // SAFETY: fstat only writes the struct we pass.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then(|| u64::try_from(st.st_size).unwrap_or(0))
    }
}

/// Device and inode of the file open on `fd`.
fn fd_identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: fstat only writes the struct we pass.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        (libc::fstat(fd, &mut st) == 0).then_some((st.st_dev, st.st_ino))
    }
}

/// Takes over rotation of `path` if this process's stderr is that file (a queue manager
/// started in the background by `ferry start`); stdout is included when it is the same
/// file. Returns whether it did: a queue manager in the foreground writes where its
/// caller pointed it, and that is the caller's to rotate.
pub fn adopt(path: &Path, max_size: u64) -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(false);
    };
    let wanted = Some((meta.dev(), meta.ino()));
    if fd_identity(libc::STDERR_FILENO) != wanted {
        return Ok(false);
    }
    let mut fds = vec![libc::STDERR_FILENO];
    if fd_identity(libc::STDOUT_FILENO) == wanted {
        fds.push(libc::STDOUT_FILENO);
    }
    let log = ConsoleLog::new(path, max_size, fds)?;
    *CONSOLE.lock().unwrap_or_else(PoisonError::into_inner) = Some(log);
    Ok(true)
}

/// What `tracing` writes with: stderr, rotated once [`adopt`]ed.
#[derive(Debug, Default)]
pub struct ConsoleWriter;

/// A [`ConsoleWriter`], for `tracing_subscriber::fmt().with_writer(console_log::writer)`.
pub fn writer() -> ConsoleWriter {
    ConsoleWriter
}

impl Write for ConsoleWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut console = CONSOLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = console.as_mut() {
            // A failed rotation must not lose the line: it goes to the old file.
            let _ = c.make_room(buf.len() as u64);
        }
        io::stderr().write_all(buf)?;
        if let Some(c) = console.as_mut() {
            c.wrote(buf.len() as u64);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stderr().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn len(p: &Path) -> u64 {
        std::fs::metadata(p).map_or(0, |m| m.len())
    }

    #[test]
    fn rotates_by_size_and_keeps_three_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.log");
        // The descriptor a start would have given the process as its stderr.
        let mut out = std::fs::File::create(&path).unwrap();
        let mut log = ConsoleLog::new(&path, 1000, vec![out.as_raw_fd()]).unwrap();
        let line = [b'x'; 96];
        for i in 0..100u32 {
            let mut text = line.to_vec();
            text.extend_from_slice(format!("{i:03}\n").as_bytes());
            log.make_room(text.len() as u64).unwrap();
            out.write_all(&text).unwrap();
            log.wrote(text.len() as u64);
            for n in 0..FILES {
                assert!(len(&log.file(n)) <= 1000, "file {n} after line {i}");
            }
            assert!(!log.file(FILES).exists(), "only {FILES} files are kept");
        }
        // The newest line is in console.log, the ones before in .1 and .2, in order.
        let newest = std::fs::read_to_string(log.file(0)).unwrap();
        assert!(newest.ends_with("099\n"), "{newest}");
        let older = std::fs::read_to_string(log.file(1)).unwrap();
        let oldest = std::fs::read_to_string(log.file(2)).unwrap();
        let first_of = |s: &str| s[96..99].parse::<u32>().unwrap();
        assert!(first_of(&oldest) < first_of(&older) && first_of(&older) < first_of(&newest));
        assert_eq!(len(&log.file(1)), 1000, "ten 100-byte lines per file");
    }

    #[test]
    fn bytes_written_straight_to_the_descriptor_count_and_follow_the_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.log");
        let mut out = std::fs::File::create(&path).unwrap();
        let mut log = ConsoleLog::new(&path, 100, vec![out.as_raw_fd()]).unwrap();
        // A panic message, written without the log knowing.
        out.write_all(&[b'p'; 90]).unwrap();
        log.make_room(20).unwrap();
        assert_eq!(len(&log.file(1)), 90, "the file was full: rotated first");
        // The same descriptor now writes into the new console.log.
        out.write_all(b"after rotation\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "after rotation\n");
    }

    #[test]
    fn a_line_bigger_than_the_file_still_goes_somewhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.log");
        let mut out = std::fs::File::create(&path).unwrap();
        let mut log = ConsoleLog::new(&path, 10, vec![out.as_raw_fd()]).unwrap();
        log.make_room(50).unwrap();
        assert!(!log.file(1).exists(), "an empty file is not rotated");
        out.write_all(&[b'y'; 50]).unwrap();
        log.wrote(50);
        log.make_room(5).unwrap();
        assert_eq!(len(&log.file(1)), 50);
        assert_eq!(len(&path), 0);
    }

    #[test]
    fn only_a_stderr_that_is_the_file_is_adopted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.log");
        std::fs::write(&path, b"").unwrap();
        // The test's stderr is not that file.
        assert!(!adopt(&path, 1 << 20).unwrap());
        assert!(!adopt(&dir.path().join("missing.log"), 1 << 20).unwrap());
        assert!(CONSOLE.lock().unwrap().is_none());
    }
}
