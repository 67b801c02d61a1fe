//! The manifest (`QUEUE.MAN`): which segment files make up the queue file right now.
//!
//! It names the generation and the first and last segment numbers; segments are numbered
//! consecutively. It changes when a segment is added (a roll), when compaction switches to a
//! new set, and when leading segments whose messages have all been removed are dropped (a
//! trim: `first` moves up, `base` stays where the set began). Every change is a safe write: the new manifest is written as
//! `QUEUE.MAN.TMP`, synced, then renamed over `QUEUE.MAN` (the rename is atomic and durable), so
//! a reader always finds either the old or the new manifest, complete. Segment files outside
//! the manifest's range are leftovers of an interrupted roll, compaction or deletion and are
//! removed at open.
//!
//! ```text
//! manifest (512 bytes, little-endian)
//!   0  4 magic "FRQM"        16  8 generation
//!   4  4 format version (1)  24  8 first segment number
//!   8  4 crc32c              32  8 last segment number
//!  12  4 reserved, 0         40  8 segment size (bytes, informational)
//!                             48  8 base: the set's first segment when it was written
//! ```
//!
//! `base` was added without a version change: manifests written before it have 0 there, read
//! as `base = first` (nothing trimmed). A reader that predates it would refuse a trimmed file
//! as damaged (removes of messages it cannot find), never misread it.

use super::error::{QfResult, QueueFileError};
use super::format::QF_VERSION;
use crate::device::{read_exact_at, write_all_at, LogDevice, LogFile};
use crate::format::{get_u32, get_u64, put_u32, put_u64};

/// The manifest's name.
pub const MANIFEST_NAME: &str = "QUEUE.MAN";
/// The temporary name a new manifest is written under.
pub const MANIFEST_TMP_NAME: &str = "QUEUE.MAN.TMP";
const MANIFEST_MAGIC: u32 = u32::from_le_bytes(*b"FRQM");
const MANIFEST_LEN: usize = 512;

/// The contents of the manifest.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Manifest {
    /// Incremented by every compaction; every segment of the set carries it.
    pub generation: u64,
    /// The first segment of the set.
    pub first: u64,
    /// The first segment of the set when the generation began (`first` when nothing was
    /// trimmed). Segments `base..first` were dropped with every message in them removed, so
    /// removes later in the set may name messages no longer found: expected, not damage.
    pub base: u64,
    /// The last segment of the set (appends go here).
    pub last: u64,
    /// The configured segment size when written (informational).
    pub segment_size: u64,
}

fn encode(m: &Manifest) -> Vec<u8> {
    let mut b = vec![0u8; MANIFEST_LEN];
    put_u32(&mut b, 0, MANIFEST_MAGIC);
    put_u32(&mut b, 4, QF_VERSION);
    put_u64(&mut b, 16, m.generation);
    put_u64(&mut b, 24, m.first);
    put_u64(&mut b, 32, m.last);
    put_u64(&mut b, 40, m.segment_size);
    put_u64(&mut b, 48, m.base);
    let crc = crc32c::crc32c(&b);
    put_u32(&mut b, 8, crc);
    b
}

fn decode(b: &[u8]) -> QfResult<Manifest> {
    let bad = |reason: &str| QueueFileError::corrupt(MANIFEST_NAME, 0, reason);
    if get_u32(b, 0) != MANIFEST_MAGIC {
        return Err(bad("bad manifest magic"));
    }
    let mut copy = b.to_vec();
    put_u32(&mut copy, 8, 0);
    if crc32c::crc32c(&copy) != get_u32(b, 8) {
        return Err(bad("manifest checksum mismatch"));
    }
    let version = get_u32(b, 4);
    if version != QF_VERSION {
        return Err(QueueFileError::UnsupportedVersion {
            file: MANIFEST_NAME.to_string(),
            found: version,
            supported: QF_VERSION,
        });
    }
    let first = get_u64(b, 24);
    let m = Manifest {
        generation: get_u64(b, 16),
        first,
        last: get_u64(b, 32),
        segment_size: get_u64(b, 40),
        base: match get_u64(b, 48) {
            0 => first,
            base => base,
        },
    };
    // Segment numbers count up from 1 by one per roll: `last` can never reach u64::MAX, and
    // recovery and the next roll look at `last + 1`.
    if m.first == 0
        || m.base > m.first
        || m.last < m.first
        || m.last == u64::MAX
        || m.last - m.first > u32::MAX as u64
    {
        return Err(bad("manifest names an impossible segment range"));
    }
    Ok(m)
}

/// Reads the manifest (`Ok(None)` if there is none).
pub fn read<D: LogDevice>(dev: &mut D) -> QfResult<Option<Manifest>> {
    let io = |op, e| QueueFileError::io(op, MANIFEST_NAME, e);
    if !dev.exists(MANIFEST_NAME).map_err(|e| io("stat", e))? {
        return Ok(None);
    }
    let mut f = dev.open(MANIFEST_NAME).map_err(|e| io("open", e))?;
    let size = f.size().map_err(|e| io("stat", e))?;
    if size < MANIFEST_LEN as u64 {
        return Err(QueueFileError::corrupt(
            MANIFEST_NAME,
            0,
            format!("manifest is {size} bytes, expected {MANIFEST_LEN}"),
        ));
    }
    let mut b = vec![0u8; MANIFEST_LEN];
    read_exact_at(&mut f, 0, &mut b).map_err(|e| io("read", e))?;
    decode(&b).map(Some)
}

/// Replaces the manifest safely: write the temporary file, sync, rename over the manifest.
pub fn write<D: LogDevice>(dev: &mut D, m: &Manifest) -> QfResult<()> {
    let io = |op, e| QueueFileError::io(op, MANIFEST_TMP_NAME, e);
    dev.remove(MANIFEST_TMP_NAME).map_err(|e| io("remove", e))?;
    let mut f = dev
        .create(MANIFEST_TMP_NAME, MANIFEST_LEN as u64)
        .map_err(|e| io("create", e))?;
    write_all_at(&mut f, 0, &encode(m)).map_err(|e| io("write", e))?;
    f.sync_data().map_err(|e| io("sync", e))?;
    drop(f);
    dev.rename(MANIFEST_TMP_NAME, MANIFEST_NAME)
        .map_err(|e| io("rename", e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{CrashModel, SimDevice};

    #[test]
    fn write_read_and_damage() {
        let mut dev = SimDevice::new(1, CrashModel::default());
        assert_eq!(read(&mut dev).unwrap(), None);
        let m = Manifest {
            generation: 2,
            first: 5,
            last: 9,
            segment_size: 1 << 20,
            base: 3,
        };
        write(&mut dev, &m).unwrap();
        assert_eq!(read(&mut dev).unwrap(), Some(m));
        assert!(!dev.exists(MANIFEST_TMP_NAME).unwrap());
        dev.corrupt(MANIFEST_NAME, 30, &[0xFF]);
        assert!(matches!(
            read(&mut dev),
            Err(QueueFileError::Corrupt { .. })
        ));
    }
}
