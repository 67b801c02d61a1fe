//! Log sequence numbers and the geometry of the circular log.
//!
//! An [`Lsn`] is a *physical* byte position in the endless log: page number × 4096 plus the
//! offset inside that page. Page headers occupy the first [`PAGE_HEADER_LEN`] bytes of every
//! page, so a canonical LSN always points into a page's data area. LSNs grow forever (u64 does
//! not wrap in practice: 2^64 bytes is 16 EiB); the *ring* position of a page is its page number
//! modulo the number of pages in the ring, and the *lap* (wrap count) is the quotient. Because the
//! page number is stored in every page header, a page left over from an earlier lap is detected
//! as stale.
//!
//! The *stream offset* is the position counting data bytes only (page headers excluded); record
//! arithmetic is done in stream offsets and converted back.

use crate::format::page::{PAGE_DATA_LEN, PAGE_HEADER_LEN, PAGE_SIZE};

/// A log sequence number: the physical byte position of a record in the endless log.
///
/// A record is durable once the log's durable LSN is greater than the record's LSN: flushes
/// always cover whole records, so "durable up to X" means every record that starts before X.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl Lsn {
    /// The LSN of the very first record of a new log (page 0, data offset 0).
    pub const FIRST: Lsn = Lsn(PAGE_HEADER_LEN as u64);

    /// Builds the canonical LSN of a stream offset (data bytes since the start of the log).
    pub fn from_stream(stream: u64) -> Lsn {
        let page = stream / PAGE_DATA_LEN as u64;
        let off = stream % PAGE_DATA_LEN as u64;
        Lsn(page * PAGE_SIZE as u64 + PAGE_HEADER_LEN as u64 + off)
    }

    /// Whether this LSN points into a page's data area (every LSN the log hands out does).
    pub fn is_canonical(self) -> bool {
        (self.0 % PAGE_SIZE as u64) >= PAGE_HEADER_LEN as u64
    }

    /// The stream offset (data bytes before this position). Panics on a non-canonical LSN.
    pub fn stream(self) -> u64 {
        assert!(self.is_canonical(), "non-canonical LSN {}", self.0);
        self.page_no() * PAGE_DATA_LEN as u64 + self.data_offset() as u64
    }

    /// The page number (counted from the start of the log, never wrapping).
    pub fn page_no(self) -> u64 {
        self.0 / PAGE_SIZE as u64
    }

    /// The offset inside the page's data area.
    pub fn data_offset(self) -> usize {
        (self.0 % PAGE_SIZE as u64) as usize - PAGE_HEADER_LEN
    }

    /// This LSN moved forward by `bytes` data bytes, skipping page headers.
    pub fn advance(self, bytes: u64) -> Lsn {
        Lsn::from_stream(self.stream() + bytes)
    }

    /// Data bytes from `self` up to `later` (`later >= self`).
    pub fn bytes_until(self, later: Lsn) -> u64 {
        later.stream() - self.stream()
    }
}

impl std::fmt::Display for Lsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // MQ prints LSNs as <0:0:a:b>; we print the page and offset, which is what matters.
        write!(f, "<{}:{}>", self.page_no(), self.0 % PAGE_SIZE as u64)
    }
}

/// Scratch pages at the start of every extent file (the two ping-pong slots for a partial page).
pub const SLOT_PAGES: u64 = 2;

/// The shape of the ring: `extents` files of `file_pages` data pages each.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Data pages per extent (LogFilePages).
    pub file_pages: u32,
    /// Extents in the ring (LogPrimaryFiles + LogSecondaryFiles).
    pub extents: u32,
}

impl Geometry {
    /// Pages in the whole ring.
    pub fn total_pages(&self) -> u64 {
        self.file_pages as u64 * self.extents as u64
    }

    /// Bytes of one extent file: the slot pages plus the data pages.
    pub fn extent_file_len(&self) -> u64 {
        (SLOT_PAGES + self.file_pages as u64) * PAGE_SIZE as u64
    }

    /// Which extent holds page `page_no` in the ring.
    pub fn extent_of(&self, page_no: u64) -> u32 {
        ((page_no % self.total_pages()) / self.file_pages as u64) as u32
    }

    /// The lap (wrap count) of page `page_no`.
    pub fn lap_of(&self, page_no: u64) -> u64 {
        page_no / self.total_pages()
    }

    /// Byte offset of page `page_no`'s home location inside its extent file.
    pub fn home_offset(&self, page_no: u64) -> u64 {
        let in_extent = (page_no % self.total_pages()) % self.file_pages as u64;
        (SLOT_PAGES + in_extent) * PAGE_SIZE as u64
    }

    /// Byte offset of scratch slot `slot` (0 or 1) inside an extent file.
    pub fn slot_offset(slot: u8) -> u64 {
        assert!(slot < 2);
        slot as u64 * PAGE_SIZE as u64
    }

    /// The file name of extent `index`, MQ style (`S0000000.LOG`).
    pub fn extent_name(index: u32) -> String {
        format!("S{index:07}.LOG")
    }

    /// Whether `name` is an extent's file name (`S` + 7 digits + `.LOG`).
    pub fn is_extent_name(name: &str) -> bool {
        name.strip_prefix('S')
            .and_then(|n| n.strip_suffix(".LOG"))
            .is_some_and(|digits| digits.len() == 7 && digits.bytes().all(|b| b.is_ascii_digit()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn extent_names_are_recognised() {
        assert!(Geometry::is_extent_name(&Geometry::extent_name(0)));
        assert!(Geometry::is_extent_name(&Geometry::extent_name(510)));
        for other in [
            "S000000.LOG",
            "S00000000.LOG",
            "SABCDEFG.LOG",
            "ferrylog.ctl",
            "S0000000.log",
        ] {
            assert!(!Geometry::is_extent_name(other), "{other}");
        }
    }

    use super::*;

    #[test]
    fn first_lsn_is_page_zero_data_zero() {
        assert_eq!(Lsn::FIRST.page_no(), 0);
        assert_eq!(Lsn::FIRST.data_offset(), 0);
        assert_eq!(Lsn::FIRST.stream(), 0);
        assert_eq!(Lsn::from_stream(0), Lsn::FIRST);
    }

    #[test]
    fn advance_skips_page_headers() {
        let a = Lsn::FIRST.advance(PAGE_DATA_LEN as u64 - 1);
        assert_eq!(a.page_no(), 0);
        let b = a.advance(1);
        assert_eq!(b.page_no(), 1);
        assert_eq!(b.data_offset(), 0);
        assert_eq!(b.0, PAGE_SIZE as u64 + PAGE_HEADER_LEN as u64);
        assert_eq!(Lsn::FIRST.bytes_until(b), PAGE_DATA_LEN as u64);
    }

    #[test]
    fn stream_round_trip() {
        for s in [0u64, 1, 4055, 4056, 4057, 1 << 40, u64::MAX / 8192] {
            let l = Lsn::from_stream(s);
            assert!(l.is_canonical());
            assert_eq!(l.stream(), s);
        }
    }

    #[test]
    fn ring_wrap_arithmetic() {
        let g = Geometry {
            file_pages: 4,
            extents: 3,
        };
        assert_eq!(g.total_pages(), 12);
        assert_eq!(g.extent_of(0), 0);
        assert_eq!(g.extent_of(3), 0);
        assert_eq!(g.extent_of(4), 1);
        assert_eq!(g.extent_of(11), 2);
        assert_eq!(g.extent_of(12), 0, "page 12 wraps to extent 0");
        assert_eq!(g.lap_of(11), 0);
        assert_eq!(g.lap_of(12), 1);
        assert_eq!(g.home_offset(0), 2 * 4096);
        assert_eq!(g.home_offset(12), g.home_offset(0));
        assert_eq!(g.home_offset(7), (2 + 3) * 4096);
        assert_eq!(g.extent_file_len(), 6 * 4096);
        assert_eq!(Geometry::extent_name(3), "S0000003.LOG");
    }

    #[test]
    fn display_shows_page_and_offset() {
        assert_eq!(Lsn::FIRST.to_string(), format!("<0:{PAGE_HEADER_LEN}>"));
    }
}
