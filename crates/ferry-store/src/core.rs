//! [`LogCore`]: the whole log as one synchronous value — append buffer plus writer — with no
//! threads. The simulator drives it step by step (`append`, `flush`, crash); [`crate::Log`]
//! splits it across the caller's thread and a writer thread.

use crate::append::{AppendBuffer, Batch};
use crate::checkpoint::SpaceLimits;
use crate::config::LogConfig;
use crate::control::{
    self, ControlBlock, CONTROL_LEN, CONTROL_NAME, CONTROL_TMP_NAME, QM_NAME_MAX,
};
use crate::device::LogDevice;
use crate::error::{LogError, Result};
use crate::format::record::RecordKind;
use crate::lsn::{Geometry, Lsn};
use crate::recovery::Recovery;
use crate::stats::{LogStatus, SlowIo};
use crate::writer::LogWriter;
use std::sync::atomic::Ordering::Relaxed;

/// The recovery log as a single synchronous value.
pub struct LogCore<D: LogDevice> {
    pub(crate) buffer: AppendBuffer,
    pub(crate) writer: LogWriter<D>,
}

/// Writes one batch and, if it carried a checkpoint, the control file. Returns the new durable
/// end and the new restart point (if any).
pub(crate) fn run_batch<D: LogDevice>(
    writer: &mut LogWriter<D>,
    batch: &Batch,
) -> Result<(Lsn, Option<Lsn>)> {
    assert_eq!(
        writer.durable_end(),
        batch.start,
        "batches must be written in order"
    );
    let end = writer.write(&batch.data)?;
    assert_eq!(end, batch.end);
    let mut restart = None;
    if let Some(ck) = batch.checkpoint {
        writer.write_checkpoint(ck.checkpoint, ck.restart)?;
        restart = Some(ck.restart);
    }
    writer.stats().records.fetch_add(batch.records, Relaxed);
    Ok((end, restart))
}

fn qm_id(name: &str) -> [u8; 16] {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&nanos.to_le_bytes());
    id[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    id[12..].copy_from_slice(&crc32c::crc32c(name.as_bytes()).to_le_bytes());
    id
}

fn create_files<D: LogDevice>(
    device: &mut D,
    config: &LogConfig,
    qm_name: &str,
    created: &mut Vec<String>,
) -> Result<()> {
    let geo = config.geometry();
    for i in 0..geo.extents {
        let name = Geometry::extent_name(i);
        // Left over from a creation that never completed (there is no control file).
        device
            .remove(&name)
            .map_err(|e| LogError::io("remove", &name, e))?;
        device
            .create(&name, geo.extent_file_len())
            .map_err(|e| LogError::io("create", &name, e))?;
        created.push(name);
    }
    device
        .remove(CONTROL_TMP_NAME)
        .map_err(|e| LogError::io("remove", CONTROL_TMP_NAME, e))?;
    let mut f = device
        .create(CONTROL_TMP_NAME, CONTROL_LEN)
        .map_err(|e| LogError::io("create", CONTROL_TMP_NAME, e))?;
    created.push(CONTROL_TMP_NAME.to_string());
    let block = ControlBlock {
        seq: 1,
        qm_id: qm_id(qm_name),
        qm_name: qm_name.to_string(),
        geometry: geo,
        write_integrity: config.write_integrity.code(),
        epoch: 0,
        checkpoint: Lsn(0),
        restart: Lsn::FIRST,
        head_hint: Lsn::FIRST,
    };
    control::write(&mut f, &block)?;
    drop(f);
    device
        .rename(CONTROL_TMP_NAME, CONTROL_NAME)
        .map_err(|e| LogError::io("rename", CONTROL_TMP_NAME, e))
}

impl<D: LogDevice> LogCore<D> {
    /// The ring's shape (from the control file for an opened log).
    pub fn geometry(&self) -> crate::Geometry {
        self.writer.geometry()
    }

    /// Creates a new log on `device`: preallocates every extent zero-filled, then writes the
    /// control file under a temporary name and renames it into place. On failure (ENOSPC...)
    /// everything created is removed.
    pub fn create(mut device: D, config: &LogConfig, qm_name: &str) -> Result<LogCore<D>> {
        config.validate()?;
        if qm_name.is_empty() || qm_name.len() > QM_NAME_MAX {
            return Err(LogError::Config(format!(
                "queue manager name {qm_name:?} must be 1 to 48 bytes"
            )));
        }
        if device
            .exists(CONTROL_NAME)
            .map_err(|e| LogError::io("stat", CONTROL_NAME, e))?
        {
            return Err(LogError::AlreadyExists(CONTROL_NAME.into()));
        }
        let mut created = Vec::new();
        if let Err(e) = create_files(&mut device, config, qm_name, &mut created) {
            for name in created {
                let _ = device.remove(&name);
            }
            return Err(e);
        }
        Recovery::open(device, config)?.finish()
    }

    /// Opens an existing log for recovery (see [`Recovery`]).
    pub fn open(device: D, config: &LogConfig) -> Result<Recovery<D>> {
        Recovery::open(device, config)
    }

    pub(crate) fn from_parts(buffer: AppendBuffer, writer: LogWriter<D>) -> LogCore<D> {
        assert_eq!(buffer.next_lsn(), writer.durable_end());
        LogCore { buffer, writer }
    }

    /// Appends a record to the buffer (no I/O). Returns its LSN.
    pub fn append(&mut self, kind: RecordKind, payload: &[u8]) -> Result<Lsn> {
        self.buffer.append(kind, &[payload], false)
    }

    /// Appends a record whose payload is the concatenation of `parts` (no copy to join them).
    pub fn append_parts(&mut self, kind: RecordKind, parts: &[&[u8]]) -> Result<Lsn> {
        self.buffer.append(kind, parts, false)
    }

    /// Appends a checkpoint record; once it is durable the restart point moves to
    /// `min(oldest_needed, its LSN)` and earlier space becomes reusable.
    pub fn checkpoint(&mut self, payload: &[u8], oldest_needed: Lsn) -> Result<Lsn> {
        self.buffer.checkpoint(payload, oldest_needed)
    }

    /// Writes and syncs everything appended so far: one flush. Returns the new durable LSN, or
    /// `None` if there was nothing to write.
    pub fn flush(&mut self) -> Result<Option<Lsn>> {
        let Some(batch) = self.buffer.take() else {
            return Ok(None);
        };
        match run_batch(&mut self.writer, &batch) {
            Ok((end, restart)) => {
                self.buffer.completed(batch.data, restart);
                Ok(Some(end))
            }
            Err(e) => {
                self.buffer.fail(e.to_string());
                Err(e)
            }
        }
    }

    /// Everything before this LSN is durable.
    pub fn durable_lsn(&self) -> Lsn {
        self.writer.durable_end()
    }

    /// Data bytes that ordinary records (24-byte headers included) may still take before
    /// the log is full; see [`crate::Log::room`].
    pub fn room(&self) -> u64 {
        self.buffer.room()
    }

    /// The LSN the next record will get.
    pub fn next_lsn(&self) -> Lsn {
        self.buffer.next_lsn()
    }

    /// The durable restart point.
    pub fn restart_lsn(&self) -> Lsn {
        self.buffer.restart()
    }

    /// A status snapshot.
    pub fn status(&self) -> LogStatus {
        self.writer
            .stats()
            .head
            .store(self.buffer.next_lsn().0, Relaxed);
        self.writer.stats().snapshot(self.writer.geometry())
    }

    /// Slow operations since the last call.
    pub fn take_slow_ops(&self) -> Vec<SlowIo> {
        self.writer.stats().take_slow()
    }

    /// Why the log failed, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.buffer.failure()
    }

    /// The limits on appends.
    pub fn space(&self) -> SpaceLimits {
        SpaceLimits::new(self.writer.geometry())
    }

    /// Gives back the device (to reopen the log, e.g. after a simulated crash).
    pub fn into_device(self) -> D {
        self.writer.into_device()
    }
}
