//! Log pages: 4 KiB units, each with a 40-byte header, checked independently on read.
//!
//! ```text
//! offset size field
//!      0    4 magic "FRYP"
//!      4    2 page format version (2; version 1 pages are still read)
//!      6    2 flush delta, low 16 bits (version 1: reserved, zero)
//!      8    4 crc32c of the whole page with this field zeroed
//!     12    2 used: data bytes in this page (0..=4056); < 4056 means a partial (tail) page
//!     14    2 flush delta, high 16 bits (version 1: reserved, zero)
//!     16    8 page number (LSN / 4096): identifies the lap, so stale pages are detected
//!     24    8 epoch: incremented each time the log is opened for writing
//!     32    8 sequence: incremented on every page write within an epoch
//!     40 4056 data (the record stream); bytes past `used` are zero
//! ```
//!
//! A page is *valid* for page number `n` when the magic, version, checksum, reserved fields,
//! `used` bound and zero padding all check out and the stored page number equals `n`. A torn
//! write fails the checksum; a page from an earlier lap has the wrong page number; a
//! zero-filled (never written) page has no magic.
//!
//! The *flush delta* (version 2) is `page number - first page of the flush that wrote this
//! copy`. Every flush ends with a sync before the next one starts, so a valid page whose
//! flush started after page `p` proves that page `p` was durable: recovery uses it to tell
//! a damaged page in the middle of the log (refuse: acknowledged records are behind it) from
//! a page torn in the last, unsynced flush (the log ends there).

use super::{get_u16, get_u32, get_u64, put_u16, put_u32, put_u64};

/// The page format version written by this build.
pub const PAGE_VERSION: u16 = 2;
/// The first page format (no flush delta), still read.
const PAGE_VERSION_1: u16 = 1;

/// Bytes in a log page (MQ's log page size).
pub const PAGE_SIZE: usize = 4096;
/// Bytes of the page header.
pub const PAGE_HEADER_LEN: usize = 40;
/// Data bytes a page can carry.
pub const PAGE_DATA_LEN: usize = PAGE_SIZE - PAGE_HEADER_LEN;
/// The page magic, "FRYP".
pub const PAGE_MAGIC: u32 = u32::from_le_bytes(*b"FRYP");

const CRC_AT: usize = 8;

/// The decoded header of a valid page.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PageHeader {
    /// Page number (never wraps).
    pub page_no: u64,
    /// Epoch (open generation) that wrote this page version.
    pub epoch: u64,
    /// Write sequence within the epoch: orders versions of the same page.
    pub seq: u64,
    /// Data bytes used.
    pub used: u16,
    /// The first page of the flush that wrote this copy (`None` on version 1 pages).
    pub flush_start: Option<u64>,
}

impl PageHeader {
    /// Whether the page's data area is full (a partial page is a log tail).
    pub fn is_full(&self) -> bool {
        self.used as usize == PAGE_DATA_LEN
    }

    /// The version order of two copies of the same page: higher wins.
    pub fn version(&self) -> (u64, u64) {
        (self.epoch, self.seq)
    }
}

/// Why a page is not valid.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PageError {
    /// No page magic: never written (zero-filled) or not a log page at all.
    NoMagic,
    /// A page format version this build does not know.
    UnknownVersion(u16),
    /// Checksum mismatch: a torn or damaged write.
    Checksum,
    /// A header field out of range, or non-zero bytes past `used`.
    Malformed,
    /// A valid page, but for another page number (an earlier lap, or misplaced).
    WrongPage(u64),
}

/// Writes `header` into `page` and seals it with its checksum. `page` must already hold the
/// data bytes; the bytes past `used` must be zero (asserted).
pub fn seal(page: &mut [u8], header: &PageHeader) {
    assert_eq!(page.len(), PAGE_SIZE);
    assert!(header.used as usize <= PAGE_DATA_LEN);
    debug_assert!(
        page[PAGE_HEADER_LEN + header.used as usize..]
            .iter()
            .all(|&b| b == 0),
        "bytes past `used` must be zero"
    );
    let delta = header.flush_start.map_or(0, |f| {
        u32::try_from(header.page_no.saturating_sub(f)).unwrap_or(u32::MAX)
    });
    put_u32(page, 0, PAGE_MAGIC);
    put_u16(page, 4, PAGE_VERSION);
    put_u16(page, 6, delta as u16);
    put_u32(page, CRC_AT, 0);
    put_u16(page, 12, header.used);
    put_u16(page, 14, (delta >> 16) as u16);
    put_u64(page, 16, header.page_no);
    put_u64(page, 24, header.epoch);
    put_u64(page, 32, header.seq);
    let crc = crc32c::crc32c(page);
    put_u32(page, CRC_AT, crc);
}

fn checksum(page: &[u8]) -> u32 {
    let c = crc32c::crc32c(&page[..CRC_AT]);
    let c = crc32c::crc32c_append(c, &[0u8; 4]);
    crc32c::crc32c_append(c, &page[CRC_AT + 4..])
}

/// Decodes and checks a page read from disk; `expected_page` is the page number it must carry.
pub fn open(page: &[u8], expected_page: u64) -> Result<PageHeader, PageError> {
    assert_eq!(page.len(), PAGE_SIZE);
    if get_u32(page, 0) != PAGE_MAGIC {
        return Err(PageError::NoMagic);
    }
    let version = get_u16(page, 4);
    if version != PAGE_VERSION && version != PAGE_VERSION_1 {
        return Err(PageError::UnknownVersion(version));
    }
    if checksum(page) != get_u32(page, CRC_AT) {
        return Err(PageError::Checksum);
    }
    let used = get_u16(page, 12);
    let delta = u64::from(get_u16(page, 6)) | (u64::from(get_u16(page, 14)) << 16);
    if (version == PAGE_VERSION_1 && delta != 0) || used as usize > PAGE_DATA_LEN {
        return Err(PageError::Malformed);
    }
    if page[PAGE_HEADER_LEN + used as usize..]
        .iter()
        .any(|&b| b != 0)
    {
        return Err(PageError::Malformed);
    }
    let page_no = get_u64(page, 16);
    if delta > page_no {
        return Err(PageError::Malformed);
    }
    let header = PageHeader {
        page_no,
        epoch: get_u64(page, 24),
        seq: get_u64(page, 32),
        used,
        flush_start: (version == PAGE_VERSION).then(|| page_no - delta),
    };
    if header.page_no != expected_page {
        return Err(PageError::WrongPage(header.page_no));
    }
    Ok(header)
}

/// The data bytes of a valid page.
pub fn data<'a>(page: &'a [u8], header: &PageHeader) -> &'a [u8] {
    &page[PAGE_HEADER_LEN..PAGE_HEADER_LEN + header.used as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(used: usize) -> (Vec<u8>, PageHeader) {
        let mut p = vec![0u8; PAGE_SIZE];
        for (i, b) in p[PAGE_HEADER_LEN..PAGE_HEADER_LEN + used]
            .iter_mut()
            .enumerate()
        {
            *b = (i % 251) as u8 + 1;
        }
        let h = PageHeader {
            page_no: 77,
            epoch: 3,
            seq: 9,
            used: used as u16,
            flush_start: Some(70),
        };
        seal(&mut p, &h);
        (p, h)
    }

    #[test]
    fn seal_then_open_round_trips() {
        for used in [0, 1, 100, PAGE_DATA_LEN] {
            let (p, h) = sample(used);
            assert_eq!(open(&p, 77), Ok(h));
            assert_eq!(data(&p, &h).len(), used);
            assert_eq!(h.is_full(), used == PAGE_DATA_LEN);
        }
    }

    #[test]
    fn version_1_pages_are_read_without_a_flush_start() {
        let (mut p, h) = sample(500);
        // A version 1 page: version 1, zero delta fields, resealed.
        put_u16(&mut p, 4, PAGE_VERSION_1);
        put_u16(&mut p, 6, 0);
        put_u16(&mut p, 14, 0);
        put_u32(&mut p, CRC_AT, 0);
        let crc = crc32c::crc32c(&p);
        put_u32(&mut p, CRC_AT, crc);
        let read = open(&p, 77).expect("a version 1 page is valid");
        assert_eq!(read.flush_start, None);
        assert_eq!(read.used, h.used);
        assert_eq!(h.flush_start, Some(70), "version 2 keeps the flush start");
    }

    #[test]
    fn zero_page_has_no_magic() {
        assert_eq!(open(&[0u8; PAGE_SIZE], 0), Err(PageError::NoMagic));
    }

    #[test]
    fn any_flipped_bit_is_detected() {
        let (p, _) = sample(3000);
        for at in (0..PAGE_SIZE).step_by(37) {
            let mut q = p.clone();
            q[at] ^= 0x10;
            assert!(open(&q, 77).is_err(), "flip at {at} not detected");
        }
    }

    #[test]
    fn torn_page_is_detected() {
        let (old, _) = sample(1000);
        let (new, _) = {
            let mut p = vec![0u8; PAGE_SIZE];
            p[PAGE_HEADER_LEN..PAGE_HEADER_LEN + 2000].fill(0xAB);
            let h = PageHeader {
                page_no: 77,
                epoch: 3,
                seq: 10,
                used: 2000,
                flush_start: Some(77),
            };
            seal(&mut p, &h);
            (p, h)
        };
        // Past byte 2040 both versions are zero padding: a "tear" there is the whole new page.
        for cut in [12, 16, 40, 512, 1040, 2039] {
            let mut torn = new.clone();
            torn[cut..].copy_from_slice(&old[cut..]);
            assert!(open(&torn, 77).is_err(), "tear at {cut} not detected");
        }
        // A tear before any differing byte leaves the old page, which is still valid.
        let mut torn = new.clone();
        torn[1..].copy_from_slice(&old[1..]);
        assert_eq!(open(&torn, 77).map(|h| h.seq), Ok(9));
    }

    #[test]
    fn stale_lap_is_wrong_page() {
        let (p, _) = sample(10);
        assert_eq!(open(&p, 77 + 1024), Err(PageError::WrongPage(77)));
    }

    #[test]
    fn unknown_version_is_refused() {
        let (mut p, _) = sample(10);
        put_u16(&mut p, 4, 3);
        assert_eq!(open(&p, 77), Err(PageError::UnknownVersion(3)));
    }

    #[test]
    fn garbage_past_used_is_malformed() {
        let (mut p, h) = sample(10);
        p[PAGE_HEADER_LEN + 20] = 1;
        let crc = checksum(&p);
        put_u32(&mut p, CRC_AT, crc);
        assert_eq!(open(&p, 77), Err(PageError::Malformed));
        let _ = h;
    }
}
