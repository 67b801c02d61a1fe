//! The queue files' on-disk format: segment names, the segment header and the records.
//!
//! A segment is a preallocated, zero-filled file: a 64-byte header, then records packed one
//! after another, then zeros. A record is self-checking (length + CRC-32C over header and
//! payload), so a reader can tell a complete record from a torn one and from the zeros that
//! end the data. Everything is little-endian. See `docs/internals/queue-files.md`.
//!
//! ```text
//! segment header (64 bytes)              record (24-byte header + payload)
//!   0  4 magic "FRQS"                      0  2 magic "FQ"
//!   4  4 format version (1)                2  1 kind: 1 = put, 2 = remove
//!   8  4 crc32c of the header              3  1 flags, 0
//!  12  4 reserved, 0                       4  4 payload length (0 for remove)
//!  16  8 segment number                    8  8 message sequence number
//!  24  8 generation (of the manifest)     16  4 crc32c of header (this field 0) + payload
//!  32 32 reserved, 0                      20  4 reserved, 0
//! ```

use crate::format::{get_u32, get_u64, put_u32, put_u64};

/// The format version of segments and manifest written by this build.
pub const QF_VERSION: u32 = 1;
/// Segment header magic, "FRQS".
pub const SEGMENT_MAGIC: u32 = u32::from_le_bytes(*b"FRQS");
/// Bytes of the segment header; the first record starts here.
pub const SEGMENT_HEADER_LEN: u64 = 64;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 24;
/// Largest payload a put record carries (MQ's largest message is 100 MB).
pub const MAX_PAYLOAD: usize = 256 << 20;
const RECORD_MAGIC: [u8; 2] = *b"FQ";

/// The name of segment `n`: `Q0000001.SEG`.
pub fn segment_name(n: u64) -> String {
    format!("Q{n:07}.SEG")
}

/// What a record does.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RecordKind {
    /// A message (its payload) is on the queue.
    Put,
    /// A message left the queue.
    Remove,
}

impl RecordKind {
    fn code(self) -> u8 {
        match self {
            RecordKind::Put => 1,
            RecordKind::Remove => 2,
        }
    }
}

/// The contents of a segment header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The segment's number (its name).
    pub number: u64,
    /// The manifest generation the segment was written for.
    pub generation: u64,
}

/// Why a segment header did not decode.
#[derive(Debug, PartialEq, Eq)]
pub enum HeaderError {
    /// All zeros: created but never written.
    Blank,
    /// Not a valid header (torn or damaged).
    Invalid,
    /// A valid header of another format version.
    Version(u32),
}

/// Encodes a segment header.
pub fn encode_header(h: &SegmentHeader) -> [u8; SEGMENT_HEADER_LEN as usize] {
    let mut b = [0u8; SEGMENT_HEADER_LEN as usize];
    put_u32(&mut b, 0, SEGMENT_MAGIC);
    put_u32(&mut b, 4, QF_VERSION);
    put_u64(&mut b, 16, h.number);
    put_u64(&mut b, 24, h.generation);
    let crc = crc32c::crc32c(&b);
    put_u32(&mut b, 8, crc);
    b
}

/// Decodes a segment header (`b` holds at least [`SEGMENT_HEADER_LEN`] bytes).
pub fn decode_header(b: &[u8]) -> Result<SegmentHeader, HeaderError> {
    let b = &b[..SEGMENT_HEADER_LEN as usize];
    if b.iter().all(|&x| x == 0) {
        return Err(HeaderError::Blank);
    }
    if get_u32(b, 0) != SEGMENT_MAGIC {
        return Err(HeaderError::Invalid);
    }
    let mut copy = [0u8; SEGMENT_HEADER_LEN as usize];
    copy.copy_from_slice(b);
    put_u32(&mut copy, 8, 0);
    if crc32c::crc32c(&copy) != get_u32(b, 8) {
        return Err(HeaderError::Invalid);
    }
    let version = get_u32(b, 4);
    if version != QF_VERSION {
        return Err(HeaderError::Version(version));
    }
    if get_u32(b, 12) != 0 || b[32..].iter().any(|&x| x != 0) {
        return Err(HeaderError::Invalid);
    }
    Ok(SegmentHeader {
        number: get_u64(b, 16),
        generation: get_u64(b, 24),
    })
}

/// Bytes a record with a payload of `payload_len` bytes occupies.
pub fn record_len(payload_len: usize) -> u64 {
    (RECORD_HEADER_LEN + payload_len) as u64
}

/// Appends an encoded record to `out`.
pub fn encode_record(out: &mut Vec<u8>, kind: RecordKind, seq: u64, payload: &[u8]) {
    debug_assert!(payload.len() <= MAX_PAYLOAD);
    let start = out.len();
    let mut h = [0u8; RECORD_HEADER_LEN];
    h[..2].copy_from_slice(&RECORD_MAGIC);
    h[2] = kind.code();
    put_u32(&mut h, 4, payload.len() as u32);
    put_u64(&mut h, 8, seq);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&h), payload);
    put_u32(&mut h, 16, crc);
    out.extend_from_slice(&h);
    out.extend_from_slice(payload);
    debug_assert_eq!(out.len() - start, RECORD_HEADER_LEN + payload.len());
}

/// A record header that passed its structural checks (the CRC needs the payload too).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// Put or remove.
    pub kind: RecordKind,
    /// The message's sequence number.
    pub seq: u64,
    /// Payload bytes following the header.
    pub payload_len: usize,
    crc: u32,
}

/// What the bytes at a record position are.
#[derive(Debug, PartialEq, Eq)]
pub enum HeaderParse {
    /// A plausible record header.
    Record(RecordHeader),
    /// All zeros: the end of the data.
    End,
    /// Anything else: damaged or torn.
    Bad(&'static str),
}

/// Parses a record header (`b` holds [`RECORD_HEADER_LEN`] bytes).
pub fn parse_record_header(b: &[u8]) -> HeaderParse {
    let b = &b[..RECORD_HEADER_LEN];
    if b.iter().all(|&x| x == 0) {
        return HeaderParse::End;
    }
    if b[..2] != RECORD_MAGIC {
        return HeaderParse::Bad("bad record magic");
    }
    let kind = match b[2] {
        1 => RecordKind::Put,
        2 => RecordKind::Remove,
        _ => return HeaderParse::Bad("unknown record kind"),
    };
    if b[3] != 0 || get_u32(b, 20) != 0 {
        return HeaderParse::Bad("reserved record fields are not zero");
    }
    let payload_len = get_u32(b, 4) as usize;
    if payload_len > MAX_PAYLOAD || (kind == RecordKind::Remove && payload_len != 0) {
        return HeaderParse::Bad("impossible record length");
    }
    HeaderParse::Record(RecordHeader {
        kind,
        seq: get_u64(b, 8),
        payload_len,
        crc: get_u32(b, 16),
    })
}

/// Whether a record's CRC matches its header bytes and payload.
pub fn record_crc_ok(header: &[u8], h: &RecordHeader, payload: &[u8]) -> bool {
    let mut copy = [0u8; RECORD_HEADER_LEN];
    copy.copy_from_slice(&header[..RECORD_HEADER_LEN]);
    put_u32(&mut copy, 16, 0);
    crc32c::crc32c_append(crc32c::crc32c(&copy), payload) == h.crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_round_trip_and_every_bit_flip_detected() {
        let mut out = Vec::new();
        encode_record(&mut out, RecordKind::Put, 42, b"hello");
        let HeaderParse::Record(h) = parse_record_header(&out) else {
            panic!("valid record did not parse")
        };
        assert_eq!((h.kind, h.seq, h.payload_len), (RecordKind::Put, 42, 5));
        assert!(record_crc_ok(&out, &h, &out[RECORD_HEADER_LEN..]));
        for bit in 0..out.len() * 8 {
            let mut bad = out.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let ok = match parse_record_header(&bad) {
                HeaderParse::Record(h2) => {
                    let end = RECORD_HEADER_LEN + h2.payload_len;
                    end <= bad.len() && record_crc_ok(&bad, &h2, &bad[RECORD_HEADER_LEN..end])
                }
                _ => false,
            };
            assert!(!ok, "bit {bit} flipped went unnoticed");
        }
        assert_eq!(parse_record_header(&[0u8; 24]), HeaderParse::End);
    }

    #[test]
    fn header_round_trip() {
        let h = SegmentHeader {
            number: 7,
            generation: 3,
        };
        let b = encode_header(&h);
        assert_eq!(decode_header(&b), Ok(h));
        assert_eq!(decode_header(&[0u8; 64]), Err(HeaderError::Blank));
        let mut bad = b;
        bad[20] ^= 1;
        assert_eq!(decode_header(&bad), Err(HeaderError::Invalid));
        assert_eq!(segment_name(1), "Q0000001.SEG");
    }
}
