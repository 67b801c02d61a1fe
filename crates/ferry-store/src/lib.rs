//! Ferry's recovery log: a circular write-ahead log with group commit, checkpoints, torn-write
//! safe partial pages (LogWriteIntegrity) and restart recovery. Design and on-disk format:
//! `docs/internals/log.md`.
//!
//! - [`LogCore`]: the whole log as one synchronous value (append, flush, checkpoint), for the
//!   deterministic simulator and for callers that drive the writer themselves.
//! - [`Log`]: the same with a writer thread; one [`Notice`] per flush.
//! - [`Recovery`]: open an existing log, read its records from the restart point, resume.
//! - [`QueueFile`]: the persistent messages that stay on one queue, in segment files of their
//!   own (`docs/internals/queue-files.md`), so the circular log can be reused.
//! - [`device`]: storage behind [`LogDevice`]: [`FileDevice`] (real files) and [`SimDevice`]
//!   (in memory, with seeded crashes, torn writes and injected faults).

#![warn(missing_docs)]

mod append;
pub mod checkpoint;
pub mod config;
pub mod control;
mod core;
pub mod device;
pub mod error;
pub mod format;
pub mod fuzzing;
mod log;
pub mod lsn;
pub mod queue_file;
pub mod recovery;
pub mod stats;
pub mod writer;

pub use crate::core::LogCore;
pub use crate::log::{DurableWait, Log, Notice, Notify};
pub use checkpoint::{CheckpointRequest, SpaceLimits};
pub use config::{LogConfig, WriteIntegrity};
pub use device::{CrashModel, FaultPlan, FileDevice, FileSync, LogDevice, LogFile, SimDevice};
pub use error::{LogError, Result};
pub use format::record::RecordKind;
pub use lsn::{Geometry, Lsn};
pub use queue_file::{
    QueueFile, QueueFileConfig, QueueFileError, QueueFileStatus, RecordLocation,
    Recovered as QueueFileRecovered,
};
pub use recovery::{Record, Recovery};
pub use stats::{IoOp, LogStatus, SlowIo};
