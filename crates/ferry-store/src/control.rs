//! The log control file (`ferrylog.ctl`, MQ's `amqhlctl.lfh`): the log's identity, shape and
//! restart point, kept in two alternating 4 KiB slots.
//!
//! Each update writes the slot *not* holding the newest copy (sequence + 1, checksum), then
//! fdatasyncs; a torn update leaves the other slot, which is still correct because the log only
//! relies on the new values after the update's sync returned. Reading picks the valid slot with
//! the higher sequence. A new control file is written under a temporary name, synced, then
//! renamed into place (and the directory synced), so a log exists only once complete.
//!
//! ```text
//! slot layout (little-endian)        offset size field
//!   0  4 magic "FRYC"                  88  4 file pages per extent
//!   4  4 format version (1)            92  4 extents in the ring
//!   8  4 crc32c of the slot            96  1 LogWriteIntegrity last used (1,2,3)
//!  12  4 page size (4096)             104  8 epoch (open generation)
//!  16  8 sequence                     112  8 checkpoint LSN (0: none yet)
//!  24 16 queue manager id             120  8 restart LSN: oldest LSN still needed
//!  40 48 queue manager name           128  8 head LSN when written (informational)
//! ```
//! Future versions must keep magic, version and checksum where they are.

use crate::device::{read_exact_at, write_all_at, LogFile};
use crate::error::{LogError, Result};
use crate::format::page::PAGE_SIZE;
use crate::format::{get_u32, get_u64, put_u32, put_u64};
use crate::lsn::{Geometry, Lsn};

/// The control file's name.
pub const CONTROL_NAME: &str = "ferrylog.ctl";
/// The temporary name used while creating it.
pub const CONTROL_TMP_NAME: &str = "ferrylog.ctl.tmp";
/// The control file format version.
pub const CONTROL_VERSION: u32 = 1;
/// The control slot magic, "FRYC".
pub const CONTROL_MAGIC: u32 = u32::from_le_bytes(*b"FRYC");
/// Bytes of the control file (two slots).
pub const CONTROL_LEN: u64 = 2 * PAGE_SIZE as u64;
/// Longest queue manager name (MQ's MQ_Q_MGR_NAME_LENGTH).
pub const QM_NAME_MAX: usize = 48;

/// The contents of a control slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControlBlock {
    /// Update sequence (the newer slot wins).
    pub seq: u64,
    /// A random identity given at creation.
    pub qm_id: [u8; 16],
    /// The queue manager's name.
    pub qm_name: String,
    /// The ring's shape.
    pub geometry: Geometry,
    /// LogWriteIntegrity code last used (informational).
    pub write_integrity: u8,
    /// Open generation: every page written carries the epoch of the open that wrote it.
    pub epoch: u64,
    /// LSN of the last completed checkpoint record (`Lsn(0)`: none).
    pub checkpoint: Lsn,
    /// Oldest LSN still needed: recovery reads from here; space before it is reusable.
    pub restart: Lsn,
    /// Head of the log when this slot was written (informational).
    pub head_hint: Lsn,
}

enum SlotError {
    Invalid,
    Version(u32),
}

/// The furthest log position a control block may name: 4 EiB of log, which no queue
/// manager writes (146 years at 1 GB/s). A slot beyond it is damaged, not refused
/// later by arithmetic that would overflow near `u64::MAX` (found by fuzzing).
pub const MAX_POSITION: u64 = 1 << 62;

/// Encodes a control block into a 4 KiB slot.
pub fn encode(b: &ControlBlock) -> Vec<u8> {
    assert!(b.qm_name.len() <= QM_NAME_MAX);
    assert!(b.restart.is_canonical());
    assert!(b.checkpoint == Lsn(0) || b.checkpoint >= b.restart);
    let mut s = vec![0u8; PAGE_SIZE];
    put_u32(&mut s, 0, CONTROL_MAGIC);
    put_u32(&mut s, 4, CONTROL_VERSION);
    put_u32(&mut s, 12, PAGE_SIZE as u32);
    put_u64(&mut s, 16, b.seq);
    s[24..40].copy_from_slice(&b.qm_id);
    s[40..40 + b.qm_name.len()].copy_from_slice(b.qm_name.as_bytes());
    put_u32(&mut s, 88, b.geometry.file_pages);
    put_u32(&mut s, 92, b.geometry.extents);
    s[96] = b.write_integrity;
    put_u64(&mut s, 104, b.epoch);
    put_u64(&mut s, 112, b.checkpoint.0);
    put_u64(&mut s, 120, b.restart.0);
    put_u64(&mut s, 128, b.head_hint.0);
    let crc = crc32c::crc32c(&s);
    put_u32(&mut s, 8, crc);
    s
}

fn decode(s: &[u8]) -> Result<ControlBlock, SlotError> {
    if get_u32(s, 0) != CONTROL_MAGIC {
        return Err(SlotError::Invalid);
    }
    let mut copy = s.to_vec();
    put_u32(&mut copy, 8, 0);
    if crc32c::crc32c(&copy) != get_u32(s, 8) {
        return Err(SlotError::Invalid);
    }
    let version = get_u32(s, 4);
    if version != CONTROL_VERSION {
        return Err(SlotError::Version(version));
    }
    if get_u32(s, 12) != PAGE_SIZE as u32 {
        return Err(SlotError::Invalid);
    }
    let name_bytes = &s[40..88];
    let name_len = name_bytes
        .iter()
        .position(|&c| c == 0)
        .unwrap_or(QM_NAME_MAX);
    let qm_name = std::str::from_utf8(&name_bytes[..name_len])
        .map_err(|_| SlotError::Invalid)?
        .to_string();
    let mut qm_id = [0u8; 16];
    qm_id.copy_from_slice(&s[24..40]);
    let b = ControlBlock {
        seq: get_u64(s, 16),
        qm_id,
        qm_name,
        geometry: Geometry {
            file_pages: get_u32(s, 88),
            extents: get_u32(s, 92),
        },
        write_integrity: s[96],
        epoch: get_u64(s, 104),
        checkpoint: Lsn(get_u64(s, 112)),
        restart: Lsn(get_u64(s, 120)),
        head_hint: Lsn(get_u64(s, 128)),
    };
    let sane = b.geometry.file_pages >= 4
        && b.geometry.extents >= 2
        && [b.restart, b.checkpoint, b.head_hint]
            .iter()
            .all(|l| l.0 <= MAX_POSITION)
        && b.restart.is_canonical()
        && (b.checkpoint == Lsn(0) || (b.checkpoint.is_canonical() && b.checkpoint >= b.restart));
    if !sane {
        return Err(SlotError::Invalid);
    }
    Ok(b)
}

/// Reads the newest valid control block from an open control file.
pub fn read<F: LogFile>(file: &mut F) -> Result<ControlBlock> {
    let mut buf = vec![0u8; CONTROL_LEN as usize];
    read_exact_at(file, 0, &mut buf).map_err(|e| LogError::io("read", CONTROL_NAME, e))?;
    let mut best: Option<ControlBlock> = None;
    let mut unknown_version = None;
    for slot in buf.chunks(PAGE_SIZE) {
        match decode(slot) {
            Ok(b) => {
                if best.as_ref().is_none_or(|x| b.seq > x.seq) {
                    best = Some(b);
                }
            }
            Err(SlotError::Version(v)) => unknown_version = Some(v),
            Err(SlotError::Invalid) => {}
        }
    }
    if let Some(found) = unknown_version {
        // A slot written by another format version: refuse rather than guess which is newer.
        return Err(LogError::UnsupportedVersion {
            file: CONTROL_NAME.into(),
            found,
            supported: CONTROL_VERSION,
        });
    }
    best.ok_or_else(|| LogError::Corrupt(format!("{CONTROL_NAME}: neither control slot is valid")))
}

/// Writes `b` into slot `b.seq % 2`, syncs, and reads it back to check it.
pub fn write<F: LogFile>(file: &mut F, b: &ControlBlock) -> Result<()> {
    let slot = encode(b);
    let at = (b.seq % 2) * PAGE_SIZE as u64;
    write_all_at(file, at, &slot).map_err(|e| LogError::io("write", CONTROL_NAME, e))?;
    file.sync_data()
        .map_err(|e| LogError::io("sync", CONTROL_NAME, e))?;
    let mut back = vec![0u8; PAGE_SIZE];
    read_exact_at(file, at, &mut back).map_err(|e| LogError::io("read", CONTROL_NAME, e))?;
    match decode(&back) {
        Ok(r) if &r == b => Ok(()),
        _ => Err(LogError::Corrupt(format!(
            "{CONTROL_NAME}: slot read back differs from what was written"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{CrashModel, LogDevice, SimDevice};

    fn block(seq: u64) -> ControlBlock {
        ControlBlock {
            seq,
            qm_id: [7; 16],
            qm_name: "QM1".into(),
            geometry: Geometry {
                file_pages: 64,
                extents: 3,
            },
            write_integrity: 3,
            epoch: 2,
            checkpoint: Lsn::FIRST.advance(500),
            restart: Lsn::FIRST.advance(100),
            head_hint: Lsn::FIRST.advance(900),
        }
    }

    #[test]
    fn a_slot_naming_a_position_past_the_end_of_any_log_is_invalid() {
        for near_end in [MAX_POSITION + 4096, u64::MAX - 4095] {
            let mut b = block(1);
            b.restart = Lsn(near_end - near_end % 4096 + Lsn::FIRST.0);
            b.checkpoint = Lsn(0);
            assert!(matches!(decode(&encode(&b)), Err(SlotError::Invalid)));
        }
        assert!(decode(&encode(&block(1))).is_ok());
    }

    #[test]
    fn newest_valid_slot_wins_and_torn_slot_falls_back() {
        let mut dev = SimDevice::new(1, CrashModel::default());
        let mut f = dev.create(CONTROL_NAME, CONTROL_LEN).unwrap();
        write(&mut f, &block(1)).unwrap();
        write(&mut f, &block(2)).unwrap();
        assert_eq!(read(&mut f).unwrap().seq, 2);
        // Tear slot 0 (seq 2): the reader falls back to seq 1.
        dev.corrupt(CONTROL_NAME, 100, &[0xFF; 8]);
        let mut f = dev.open(CONTROL_NAME).unwrap();
        assert_eq!(read(&mut f).unwrap().seq, 1);
    }

    #[test]
    fn unknown_version_is_refused_clearly() {
        let mut dev = SimDevice::new(1, CrashModel::default());
        let mut f = dev.create(CONTROL_NAME, CONTROL_LEN).unwrap();
        let mut s = encode(&block(1));
        put_u32(&mut s, 4, 9);
        put_u32(&mut s, 8, 0);
        let crc = crc32c::crc32c(&s);
        put_u32(&mut s, 8, crc);
        write_all_at(&mut f, 0, &s).unwrap();
        let e = read(&mut f).unwrap_err();
        assert!(
            matches!(
                e,
                LogError::UnsupportedVersion {
                    found: 9,
                    supported: 1,
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("version 9"));
    }

    #[test]
    fn empty_control_file_is_corrupt() {
        let mut dev = SimDevice::new(1, CrashModel::default());
        let mut f = dev.create(CONTROL_NAME, CONTROL_LEN).unwrap();
        assert!(matches!(read(&mut f), Err(LogError::Corrupt(_))));
    }
}
