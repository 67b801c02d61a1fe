//! Storage behind a trait: the log touches the disk only through [`LogDevice`] and [`LogFile`],
//! so tests run it on [`SimDevice`] (in memory, with seeded crashes, torn writes and injected
//! faults) and production runs it on [`FileDevice`] (std::fs + fdatasync).
//!
//! Contract every device keeps (the conformance suite in `tests/conformance.rs` checks it):
//! - `create` makes a zero-filled file of exactly `len` bytes, durable (data and directory
//!   entry) before it returns; it fails with `AlreadyExists` if the name exists.
//! - `write_at` may write fewer bytes than asked (a short write); callers loop.
//! - Data written is durable once `sync_data` on that file returns `Ok`. After a failed
//!   `sync_data` nothing written since the previous successful sync is known to be durable
//!   (and a later successful sync does not make it so: callers must not retry).
//! - `rename` atomically replaces the target and is durable when it returns.

pub mod file;
pub mod sim;

pub use file::{FileDevice, FileSync};
pub use sim::{CrashModel, FaultPlan, SimDevice};

use std::io;

/// A directory of log files.
pub trait LogDevice: Send + 'static {
    /// An open file.
    type File: LogFile;

    /// Creates a zero-filled, preallocated file of `len` bytes, durable on return.
    fn create(&mut self, name: &str, len: u64) -> io::Result<Self::File>;
    /// Opens an existing file for reading and writing (`NotFound` if absent).
    fn open(&mut self, name: &str) -> io::Result<Self::File>;
    /// Whether a file exists.
    fn exists(&mut self, name: &str) -> io::Result<bool>;
    /// Atomically renames `from` to `to` (replacing `to`), durable on return.
    fn rename(&mut self, from: &str, to: &str) -> io::Result<()>;
    /// Removes a file (missing is fine).
    fn remove(&mut self, name: &str) -> io::Result<()>;
}

/// An open log file.
pub trait LogFile: Send + 'static {
    /// Writes some prefix of `buf` at `offset`; returns how many bytes were written.
    fn write_at(&mut self, offset: u64, buf: &[u8]) -> io::Result<usize>;
    /// Reads up to `buf.len()` bytes at `offset`; returns how many (0 at end of file).
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize>;
    /// Makes everything written so far durable (fdatasync).
    fn sync_data(&mut self) -> io::Result<()>;
    /// The file's size in bytes.
    fn size(&mut self) -> io::Result<u64>;
}

/// Writes all of `buf` at `offset`, looping over short writes. A write of zero bytes is an error.
pub fn write_all_at<F: LogFile + ?Sized>(
    f: &mut F,
    mut offset: u64,
    mut buf: &[u8],
) -> io::Result<()> {
    while !buf.is_empty() {
        match f.write_at(offset, buf) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "write returned 0 bytes",
                ))
            }
            Ok(n) => {
                assert!(n <= buf.len(), "device wrote more than asked");
                offset += n as u64;
                buf = &buf[n..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes at `offset` (`UnexpectedEof` if the file is shorter).
pub fn read_exact_at<F: LogFile + ?Sized>(
    f: &mut F,
    mut offset: u64,
    mut buf: &mut [u8],
) -> io::Result<()> {
    while !buf.is_empty() {
        match f.read_at(offset, buf) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "log file shorter than expected",
                ))
            }
            Ok(n) => {
                offset += n as u64;
                buf = &mut buf[n..];
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
