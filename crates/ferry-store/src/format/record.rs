//! Log records: a 24-byte header and a payload, laid end to end in the page data stream
//! (a record may span any number of pages).
//!
//! ```text
//! offset size field
//!      0    2 magic "FR"
//!      2    1 kind (0 is never valid; 1 = checkpoint; 16..=255 belong to the caller)
//!      3    1 flags, zero
//!      4    4 payload length
//!      8    8 the record's own LSN (a record copied or read at the wrong place fails)
//!     16    4 crc32c of header (this field zeroed) and payload
//!     20    4 reserved, zero
//!     24    . payload
//! ```

use super::{get_u16, get_u32, get_u64, put_u16, put_u32, put_u64};
use crate::lsn::Lsn;

/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 24;
/// The largest payload a record may carry (64 MiB; also bounded by the ring size).
pub const MAX_RECORD_LEN: usize = 64 << 20;
/// The record magic, "FR".
pub const RECORD_MAGIC: u16 = u16::from_le_bytes(*b"FR");

const CRC_AT: usize = 16;

/// The type of a record. The log owns kinds below 16; the caller defines its own from 16 up.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordKind(u8);

impl RecordKind {
    /// A checkpoint record, written by [`crate::Log::checkpoint`].
    pub const CHECKPOINT: RecordKind = RecordKind(1);
    /// The first kind available to callers.
    pub const FIRST_USER: u8 = 16;

    /// A caller-defined kind; `k` must be at least [`RecordKind::FIRST_USER`].
    pub fn user(k: u8) -> RecordKind {
        assert!(
            k >= Self::FIRST_USER,
            "record kinds below 16 are reserved for the log"
        );
        RecordKind(k)
    }

    /// The raw byte.
    pub fn as_u8(self) -> u8 {
        self.0
    }

    fn from_u8(k: u8) -> Option<RecordKind> {
        (k == 1 || k >= Self::FIRST_USER).then_some(RecordKind(k))
    }
}

/// A decoded record header.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// The record's kind.
    pub kind: RecordKind,
    /// Payload length.
    pub len: u32,
    /// The record's LSN as stored.
    pub lsn: Lsn,
    /// The stored checksum.
    pub crc: u32,
}

impl RecordHeader {
    /// Header plus payload bytes.
    pub fn total_len(&self) -> usize {
        RECORD_HEADER_LEN + self.len as usize
    }
}

/// Why bytes are not a valid record.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RecordError {
    /// Wrong magic, unknown kind, non-zero reserved bytes or an impossible length.
    Malformed,
    /// The stored LSN is not where the record was read.
    WrongLsn(Lsn),
    /// The checksum does not match header and payload.
    Checksum,
}

/// Total encoded size of a record with `payload_len` payload bytes.
pub fn encoded_len(payload_len: usize) -> usize {
    RECORD_HEADER_LEN + payload_len
}

/// Appends the encoding of a record (header then the concatenated `parts`) at `lsn` to `out`.
pub fn encode(out: &mut Vec<u8>, lsn: Lsn, kind: RecordKind, parts: &[&[u8]]) {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    assert!(len <= MAX_RECORD_LEN);
    let start = out.len();
    let mut h = [0u8; RECORD_HEADER_LEN];
    put_u16(&mut h, 0, RECORD_MAGIC);
    h[2] = kind.0;
    h[3] = 0;
    put_u32(&mut h, 4, len as u32);
    put_u64(&mut h, 8, lsn.0);
    let mut crc = crc32c::crc32c(&h);
    for p in parts {
        crc = crc32c::crc32c_append(crc, p);
    }
    put_u32(&mut h, CRC_AT, crc);
    out.extend_from_slice(&h);
    for p in parts {
        out.extend_from_slice(p);
    }
    // Check what we wrote (cheap: the header only; the payload is covered by the crc above).
    debug_assert_eq!(
        decode_header(&out[start..start + RECORD_HEADER_LEN], lsn).map(|h| h.len),
        Ok(len as u32)
    );
}

/// Decodes a record header read at `at`.
pub fn decode_header(h: &[u8], at: Lsn) -> Result<RecordHeader, RecordError> {
    assert_eq!(h.len(), RECORD_HEADER_LEN);
    if get_u16(h, 0) != RECORD_MAGIC || h[3] != 0 || get_u32(h, 20) != 0 {
        return Err(RecordError::Malformed);
    }
    let kind = RecordKind::from_u8(h[2]).ok_or(RecordError::Malformed)?;
    let len = get_u32(h, 4);
    if len as usize > MAX_RECORD_LEN {
        return Err(RecordError::Malformed);
    }
    let lsn = Lsn(get_u64(h, 8));
    if lsn != at {
        return Err(RecordError::WrongLsn(lsn));
    }
    Ok(RecordHeader {
        kind,
        len,
        lsn,
        crc: get_u32(h, CRC_AT),
    })
}

/// Checks a record's checksum given its raw header bytes and payload.
pub fn verify(raw_header: &[u8], header: &RecordHeader, payload: &[u8]) -> Result<(), RecordError> {
    assert_eq!(payload.len(), header.len as usize);
    let mut h = [0u8; RECORD_HEADER_LEN];
    h.copy_from_slice(raw_header);
    put_u32(&mut h, CRC_AT, 0);
    let crc = crc32c::crc32c_append(crc32c::crc32c(&h), payload);
    if crc == header.crc {
        Ok(())
    } else {
        Err(RecordError::Checksum)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        let mut out = Vec::new();
        let at = Lsn::FIRST.advance(100);
        encode(&mut out, at, RecordKind::user(20), &[b"hello ", b"world"]);
        assert_eq!(out.len(), encoded_len(11));
        let h = decode_header(&out[..RECORD_HEADER_LEN], at).unwrap();
        assert_eq!(h.kind, RecordKind::user(20));
        assert_eq!(h.len, 11);
        assert_eq!(h.total_len(), 35);
        verify(&out[..RECORD_HEADER_LEN], &h, &out[RECORD_HEADER_LEN..]).unwrap();
        assert_eq!(&out[RECORD_HEADER_LEN..], b"hello world");
    }

    #[test]
    fn empty_payload_is_fine() {
        let mut out = Vec::new();
        encode(&mut out, Lsn::FIRST, RecordKind::CHECKPOINT, &[]);
        let h = decode_header(&out, Lsn::FIRST).unwrap();
        verify(&out, &h, &[]).unwrap();
    }

    #[test]
    fn wrong_place_is_detected() {
        let mut out = Vec::new();
        encode(&mut out, Lsn::FIRST, RecordKind::user(16), &[b"x"]);
        assert_eq!(
            decode_header(&out[..24], Lsn::FIRST.advance(1)),
            Err(RecordError::WrongLsn(Lsn::FIRST))
        );
    }

    #[test]
    fn corrupt_payload_and_header_are_detected() {
        let mut out = Vec::new();
        encode(&mut out, Lsn::FIRST, RecordKind::user(16), &[b"payload"]);
        let mut bad = out.clone();
        bad[26] ^= 1;
        let h = decode_header(&bad[..24], Lsn::FIRST).unwrap();
        assert_eq!(
            verify(&bad[..24], &h, &bad[24..]),
            Err(RecordError::Checksum)
        );
        for at in [0, 1, 3, 8, 20] {
            let mut bad = out.clone();
            bad[at] ^= 0x40;
            assert!(decode_header(&bad[..24], Lsn::FIRST).is_err(), "byte {at}");
        }
        assert_eq!(
            decode_header(&[0u8; 24], Lsn::FIRST),
            Err(RecordError::Malformed)
        );
    }

    #[test]
    #[should_panic]
    fn reserved_kinds_are_refused() {
        let _ = RecordKind::user(3);
    }
}
