//! One segment file: creating it (preallocated, header written and synced before anyone relies
//! on it), opening it (the header must name this segment and generation), and appending bytes
//! at its end.

use super::error::{QfResult, QueueFileError};
use super::format::{
    decode_header, encode_header, segment_name, HeaderError, SegmentHeader, QF_VERSION,
    SEGMENT_HEADER_LEN,
};
use crate::device::{read_exact_at, write_all_at, LogDevice, LogFile};

/// An open segment of the current set.
#[derive(Debug)]
pub struct Segment<F> {
    /// The open file.
    pub file: F,
    /// Its name.
    pub name: String,
    /// Its preallocated size.
    pub size: u64,
    /// Where the next record goes.
    pub end: u64,
}

impl<F: LogFile> Segment<F> {
    /// Bytes still free for records.
    pub fn room(&self) -> u64 {
        self.size - self.end
    }

    /// Writes `buf` at the end and advances it (the caller checked the room).
    pub fn append(&mut self, buf: &[u8]) -> QfResult<()> {
        debug_assert!(buf.len() as u64 <= self.room());
        write_all_at(&mut self.file, self.end, buf)
            .map_err(|e| QueueFileError::io("write", &self.name, e))?;
        self.end += buf.len() as u64;
        Ok(())
    }

    /// fdatasync.
    pub fn sync(&mut self) -> QfResult<()> {
        self.file
            .sync_data()
            .map_err(|e| QueueFileError::io("sync", &self.name, e))
    }
}

/// Creates segment `number` of `generation` with `size` bytes, writes its header and syncs it.
pub fn create<D: LogDevice>(
    dev: &mut D,
    number: u64,
    generation: u64,
    size: u64,
) -> QfResult<Segment<D::File>> {
    let name = segment_name(number);
    let mut file = dev
        .create(&name, size)
        .map_err(|e| QueueFileError::io("create", &name, e))?;
    let header = encode_header(&SegmentHeader { number, generation });
    write_all_at(&mut file, 0, &header).map_err(|e| QueueFileError::io("write", &name, e))?;
    file.sync_data()
        .map_err(|e| QueueFileError::io("sync", &name, e))?;
    Ok(Segment {
        file,
        name,
        size,
        end: SEGMENT_HEADER_LEN,
    })
}

/// Opens segment `number`, which the manifest says belongs to `generation`; its header must
/// agree (it was synced before the manifest named the segment). `end` is left at the header:
/// the recovery scan sets it.
pub fn open<D: LogDevice>(dev: &mut D, number: u64, generation: u64) -> QfResult<Segment<D::File>> {
    let name = segment_name(number);
    let bad = |why: String| QueueFileError::corrupt(&name, 0, why);
    if !dev
        .exists(&name)
        .map_err(|e| QueueFileError::io("stat", &name, e))?
    {
        return Err(bad("a segment named by the manifest is missing".into()));
    }
    let mut file = dev
        .open(&name)
        .map_err(|e| QueueFileError::io("open", &name, e))?;
    let size = file
        .size()
        .map_err(|e| QueueFileError::io("stat", &name, e))?;
    if size < SEGMENT_HEADER_LEN {
        return Err(bad(format!("segment is only {size} bytes")));
    }
    let mut h = [0u8; SEGMENT_HEADER_LEN as usize];
    read_exact_at(&mut file, 0, &mut h).map_err(|e| QueueFileError::io("read", &name, e))?;
    match decode_header(&h) {
        Ok(h) if h.number == number && h.generation == generation => {}
        Ok(h) => {
            return Err(bad(format!(
            "segment header says segment {} of generation {}, expected {number} of {generation}",
            h.number, h.generation
        )))
        }
        Err(HeaderError::Version(found)) => {
            return Err(QueueFileError::UnsupportedVersion {
                file: name,
                found,
                supported: QF_VERSION,
            })
        }
        Err(_) => return Err(bad("damaged segment header".into())),
    }
    Ok(Segment {
        file,
        name,
        size,
        end: SEGMENT_HEADER_LEN,
    })
}
