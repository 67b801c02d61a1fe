//! The definitions journal (`objects.journal`): its byte format, encoder and decoder.
//!
//! Pure: bytes in, records out, no I/O (the store and its writer thread do the files).
//! One record per changed definition, appended after the snapshot (`objects.json`) it
//! follows. The file is grown ahead of the records with zeros (a sync of a write into
//! space already allocated need not update the file's size), so the records end where
//! zeros to the end of the file begin: a clean end. Each record is length-prefixed and
//! checksummed, so a reader tells a complete record from one a crash cut short; anything
//! but zeros from the first record that fails its checks on is a torn tail and is ignored
//! (the store cuts it off before appending again). Everything is little-endian. See
//! docs/internals/catalogue.md.
//!
//! ```text
//! file header (32 bytes)                 record (24-byte header + payload)
//!   0  4 magic "FRYJ"                      0  2 magic "FJ"
//!   4  4 format version (1)                2  2 reserved, 0
//!   8  8 generation of the snapshot it     4  4 payload length
//!        follows                           8  8 sequence number (1, 2, ... in this file)
//!  16 12 reserved, 0                      16  4 crc32c of the payload
//!  28  4 crc32c of bytes 0..28            20  4 crc32c of header bytes 0..20
//! ```
//!
//! The payload is one [`JournalRecord`] as JSON: the whole new definition (or the name of
//! the one deleted), never a difference, so applying a record twice is harmless.

use ferry_objects::{ChannelDefinition, ListenerDefinition, QmgrAttributes, QueueDefinition};

/// The format version written by this build.
pub const JOURNAL_VERSION: u32 = 1;
/// File header magic, "FRYJ".
const FILE_MAGIC: [u8; 4] = *b"FRYJ";
/// Record header magic, "FJ".
const RECORD_MAGIC: [u8; 2] = *b"FJ";
/// Bytes of the file header; the first record starts here.
pub const FILE_HEADER_LEN: usize = 32;
/// Bytes of a record header.
pub const RECORD_HEADER_LEN: usize = 24;
/// Largest payload a record may claim. A definition is a few KiB of JSON; a length field
/// above this is damage, and no reader allocates what such a field asks for.
pub const MAX_PAYLOAD: usize = 1 << 20;

/// One change to the definitions: the definition as it now is, or its deletion.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalRecord {
    /// A queue defined or altered: its whole definition.
    Queue(QueueDefinition),
    /// The queue of this name was deleted.
    DeleteQueue(String),
    /// A channel defined or altered.
    Channel(ChannelDefinition),
    /// The channel of this name was deleted.
    DeleteChannel(String),
    /// A listener defined or altered.
    Listener(ListenerDefinition),
    /// The listener of this name was deleted.
    DeleteListener(String),
    /// ALTER QMGR: the queue manager's attributes.
    Qmgr(QmgrAttributes),
    /// An authentication information object defined or altered.
    AuthInfo(ferry_objects::AuthInfoDefinition),
    /// The authentication information object of this name was deleted.
    DeleteAuthInfo(String),
    /// A process definition defined or altered. Added with triggering: a Ferry from
    /// before it refuses to start on a journal holding one, naming the record that does
    /// not decode.
    Process(ferry_objects::ProcessDefinition),
    /// The process definition of this name was deleted.
    DeleteProcess(String),
    /// A topic object defined or altered. Added with topic objects: a Ferry from before
    /// them refuses to start on a journal holding one, naming the record that does not
    /// decode.
    Topic(ferry_objects::TopicDefinition),
    /// The topic object of this name was deleted.
    DeleteTopic(String),
    /// A durable subscription made or altered. Added with durable subscriptions: a Ferry
    /// from before them refuses to start on a journal holding one, naming the record
    /// that does not decode.
    Subscription(ferry_objects::DurableSubscription),
    /// The durable subscription of this name was removed.
    DeleteSubscription(String),
    /// SET AUTHREC or DELETE AUTHREC: one authority record as it now is (its
    /// authorities `None`: deleted). Added with authority records: a Ferry from before
    /// them refuses to start on a journal holding one, naming the record that does not
    /// decode.
    AuthorityRecord(ferry_security::oam::SavedAuthorityRecord),
    /// SET CHLAUTH: every record of one channel profile, as they now are (none: the
    /// profile's records were removed).
    Chlauth {
        /// The channel profile.
        profile: String,
        /// Its records.
        records: ferry_security::chlauth::ChlauthRules,
    },
    /// A namelist defined or altered. Added with namelists: a Ferry from before them
    /// refuses to start on a journal holding one, naming the record that does not decode.
    Namelist(ferry_objects::NamelistDefinition),
    /// The namelist of this name was deleted.
    DeleteNamelist(String),
}

/// Why a journal could not be read at all (a torn tail is not an error: see
/// [`JournalScan::torn_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JournalError {
    /// Shorter than its header, or the header fails its checks.
    #[error("the journal header is damaged ({0})")]
    Header(&'static str),
    /// Written by a newer Ferry.
    #[error("journal format version {0} is not supported (this Ferry writes {JOURNAL_VERSION})")]
    Version(u32),
    /// A record passed its checksums but is not a record this Ferry writes.
    #[error("record {seq} at offset {offset} passed its checksums but does not decode: {reason}")]
    Record {
        /// Its sequence number.
        seq: u64,
        /// Its offset in the file.
        offset: u64,
        /// What the JSON decoder said.
        reason: String,
    },
}

/// What a journal holds.
#[derive(Debug, Clone, PartialEq)]
pub struct JournalScan {
    /// The generation of the snapshot the records follow.
    pub generation: u64,
    /// The complete records, in order.
    pub records: Vec<JournalRecord>,
    /// Offset just past the last complete record: where the next one goes.
    pub valid_len: u64,
    /// Bytes from `valid_len` to the last byte that is not zero: a write a crash cut
    /// short (dropped). 0 when only zeros (space allocated ahead) follow the records.
    pub torn_bytes: u64,
    /// Why the record at `valid_len` was rejected, when `torn_bytes` is not 0.
    pub torn_reason: Option<&'static str>,
}

impl JournalScan {
    /// The sequence number of the last complete record (0 for none).
    pub fn last_seq(&self) -> u64 {
        self.records.len() as u64
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(w)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The file header of a journal following snapshot `generation`.
pub fn encode_file_header(generation: u64) -> [u8; FILE_HEADER_LEN] {
    let mut b = [0u8; FILE_HEADER_LEN];
    b[0..4].copy_from_slice(&FILE_MAGIC);
    b[4..8].copy_from_slice(&JOURNAL_VERSION.to_le_bytes());
    b[8..16].copy_from_slice(&generation.to_le_bytes());
    let crc = crc32c::crc32c(&b[..28]);
    b[28..32].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Appends record number `seq` to `out`.
pub fn encode_record(
    seq: u64,
    record: &JournalRecord,
    out: &mut Vec<u8>,
) -> serde_json::Result<()> {
    let start = out.len();
    out.resize(start + RECORD_HEADER_LEN, 0);
    serde_json::to_writer(&mut *out, record)?;
    let payload_len = out.len() - start - RECORD_HEADER_LEN;
    debug_assert!(
        payload_len <= MAX_PAYLOAD,
        "a definition of {payload_len} bytes"
    );
    let payload_crc = crc32c::crc32c(&out[start + RECORD_HEADER_LEN..]);
    let h = &mut out[start..start + RECORD_HEADER_LEN];
    h[0..2].copy_from_slice(&RECORD_MAGIC);
    h[4..8].copy_from_slice(&(payload_len as u32).to_le_bytes());
    h[8..16].copy_from_slice(&seq.to_le_bytes());
    h[16..20].copy_from_slice(&payload_crc.to_le_bytes());
    let header_crc = crc32c::crc32c(&h[..20]);
    h[20..24].copy_from_slice(&header_crc.to_le_bytes());
    Ok(())
}

/// Reads the file header: the generation.
fn decode_file_header(bytes: &[u8]) -> Result<u64, JournalError> {
    if bytes.len() < FILE_HEADER_LEN {
        return Err(JournalError::Header("shorter than its header"));
    }
    let h = &bytes[..FILE_HEADER_LEN];
    if h[0..4] != FILE_MAGIC {
        return Err(JournalError::Header("not a Ferry definitions journal"));
    }
    if crc32c::crc32c(&h[..28]) != u32_at(h, 28) {
        return Err(JournalError::Header("checksum mismatch"));
    }
    let version = u32_at(h, 4);
    if version != JOURNAL_VERSION {
        return Err(JournalError::Version(version));
    }
    Ok(u64_at(h, 8))
}

/// The payload of the record at `at`, when it is complete and numbered `seq`.
fn record_at(bytes: &[u8], at: usize, seq: u64) -> Result<&[u8], &'static str> {
    let rest = &bytes[at..];
    if rest.len() < RECORD_HEADER_LEN {
        return Err("a record header cut short");
    }
    let h = &rest[..RECORD_HEADER_LEN];
    if h[0..2] != RECORD_MAGIC {
        return Err("no record magic");
    }
    if crc32c::crc32c(&h[..20]) != u32_at(h, 20) {
        return Err("record header checksum mismatch");
    }
    let len = u32_at(h, 4) as usize;
    if len > MAX_PAYLOAD {
        return Err("record length out of range");
    }
    if u64_at(h, 8) != seq {
        return Err("record out of sequence");
    }
    let payload = rest
        .get(RECORD_HEADER_LEN..RECORD_HEADER_LEN + len)
        .ok_or("a record cut short")?;
    if crc32c::crc32c(payload) != u32_at(h, 16) {
        return Err("record checksum mismatch");
    }
    Ok(payload)
}

/// Decodes a whole journal file. Never panics and never allocates more than the input
/// holds, whatever the bytes.
pub fn scan(bytes: &[u8]) -> Result<JournalScan, JournalError> {
    let generation = decode_file_header(bytes)?;
    let mut records = Vec::new();
    let mut at = FILE_HEADER_LEN;
    let mut torn_reason = None;
    while at < bytes.len() {
        let seq = records.len() as u64 + 1;
        match record_at(bytes, at, seq) {
            Ok(payload) => {
                let record = serde_json::from_slice(payload).map_err(|e| JournalError::Record {
                    seq,
                    offset: at as u64,
                    reason: e.to_string(),
                })?;
                records.push(record);
                at += RECORD_HEADER_LEN + payload.len();
            }
            Err(reason) => {
                torn_reason = Some(reason);
                break;
            }
        }
    }
    debug_assert!(at <= bytes.len());
    let rest = &bytes[at..];
    let torn_bytes = rest
        .iter()
        .rposition(|&b| b != 0)
        .map_or(0, |last| last + 1);
    Ok(JournalScan {
        generation,
        records,
        valid_len: at as u64,
        torn_bytes: torn_bytes as u64,
        torn_reason: torn_reason.filter(|_| torn_bytes > 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_objects::QueueType;
    use proptest::prelude::*;

    fn sample(n: usize) -> Vec<JournalRecord> {
        (0..n)
            .map(|i| match i % 4 {
                0 => JournalRecord::Queue(QueueDefinition::new(
                    format!("APP.Q{i}"),
                    QueueType::Local,
                )),
                1 => JournalRecord::DeleteQueue(format!("APP.Q{}", i - 1)),
                2 => JournalRecord::Qmgr(QmgrAttributes::default()),
                _ => JournalRecord::DeleteListener(format!("L{i}")),
            })
            .collect()
    }

    fn journal(generation: u64, records: &[JournalRecord]) -> Vec<u8> {
        let mut out = encode_file_header(generation).to_vec();
        for (i, r) in records.iter().enumerate() {
            encode_record(i as u64 + 1, r, &mut out).unwrap();
        }
        out
    }

    #[test]
    fn records_round_trip() {
        let records = sample(9);
        let bytes = journal(7, &records);
        let s = scan(&bytes).unwrap();
        assert_eq!(s.generation, 7);
        assert_eq!(s.records, records);
        assert_eq!(s.valid_len, bytes.len() as u64);
        assert_eq!(s.torn_bytes, 0);
        assert_eq!(s.torn_reason, None);
        assert_eq!(s.last_seq(), 9);
    }

    #[test]
    fn an_empty_journal_is_its_header() {
        let s = scan(&encode_file_header(1)).unwrap();
        assert!(s.records.is_empty());
        assert_eq!(s.valid_len, FILE_HEADER_LEN as u64);
    }

    #[test]
    fn a_torn_tail_is_ignored_at_every_cut() {
        let records = sample(5);
        let bytes = journal(3, &records);
        // Offsets where each record ends.
        let mut ends = vec![FILE_HEADER_LEN];
        let mut at = FILE_HEADER_LEN;
        for _ in &records {
            let len = u32_at(&bytes, at + 4) as usize;
            at += RECORD_HEADER_LEN + len;
            ends.push(at);
        }
        for cut in FILE_HEADER_LEN..bytes.len() {
            let s = scan(&bytes[..cut]).unwrap();
            let complete = ends.iter().filter(|&&e| e <= cut).count() - 1;
            assert_eq!(s.records, records[..complete], "cut at {cut}");
            assert_eq!(s.valid_len, ends[complete] as u64);
            // Up to the last byte that is not zero (a header's reserved bytes are).
            assert!(s.torn_bytes <= (cut - ends[complete]) as u64);
            assert_eq!(s.torn_bytes > 0, cut != ends[complete], "cut at {cut}");
            assert_eq!(s.torn_reason.is_some(), cut != ends[complete]);
        }
    }

    #[test]
    fn garbage_or_zeros_after_the_last_record_are_a_torn_tail() {
        let records = sample(3);
        let mut bytes = journal(1, &records);
        let good = bytes.len();
        // Zeros are space allocated ahead: a clean end.
        bytes.extend_from_slice(&[0u8; 100]);
        let s = scan(&bytes).unwrap();
        assert_eq!(s.records, records);
        assert_eq!(s.valid_len, good as u64);
        assert_eq!((s.torn_bytes, s.torn_reason), (0, None));
        // Anything else is a torn tail, up to its last byte that is not zero.
        bytes[good + 10] = 7;
        let s = scan(&bytes).unwrap();
        assert_eq!(s.records, records);
        assert_eq!(s.torn_bytes, 11);
        assert_eq!(s.torn_reason, Some("no record magic"));
        // A record whose payload was not all written (its checksum fails).
        let mut torn = journal(1, &records[..2]);
        let before = torn.len();
        encode_record(3, &records[2], &mut torn).unwrap();
        let last = torn.len() - 1;
        torn[last] ^= 0x55;
        let s = scan(&torn).unwrap();
        assert_eq!(s.records, records[..2]);
        assert_eq!(s.valid_len, before as u64);
        assert_eq!(s.torn_reason, Some("record checksum mismatch"));
    }

    #[test]
    fn a_damaged_header_is_refused() {
        assert_eq!(
            scan(b"FRYJ"),
            Err(JournalError::Header("shorter than its header"))
        );
        let mut h = encode_file_header(2);
        h[9] ^= 1;
        assert_eq!(scan(&h), Err(JournalError::Header("checksum mismatch")));
        let mut h = encode_file_header(2);
        h[0] = b'X';
        assert!(matches!(scan(&h), Err(JournalError::Header(_))));
        let mut h = encode_file_header(2);
        h[4] = 9;
        let crc = crc32c::crc32c(&h[..28]);
        h[28..32].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(scan(&h), Err(JournalError::Version(9)));
    }

    #[test]
    fn a_checksummed_record_that_does_not_decode_is_refused() {
        let mut bytes = encode_file_header(1).to_vec();
        let start = bytes.len();
        bytes.resize(start + RECORD_HEADER_LEN, 0);
        bytes.extend_from_slice(b"{\"no_such_record\":1}");
        let payload_len = bytes.len() - start - RECORD_HEADER_LEN;
        let payload_crc = crc32c::crc32c(&bytes[start + RECORD_HEADER_LEN..]);
        let h = &mut bytes[start..start + RECORD_HEADER_LEN];
        h[0..2].copy_from_slice(&RECORD_MAGIC);
        h[4..8].copy_from_slice(&(payload_len as u32).to_le_bytes());
        h[8..16].copy_from_slice(&1u64.to_le_bytes());
        h[16..20].copy_from_slice(&payload_crc.to_le_bytes());
        let crc = crc32c::crc32c(&h[..20]);
        h[20..24].copy_from_slice(&crc.to_le_bytes());
        assert!(matches!(
            scan(&bytes),
            Err(JournalError::Record { seq: 1, .. })
        ));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Any bytes at all: a scan or an error, never a panic.
        #[test]
        fn any_bytes_decode_or_fail_cleanly(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = scan(&bytes);
        }

        /// Any bytes after a valid header: never a panic, and what decodes is exactly
        /// the complete records.
        #[test]
        fn any_tail_after_a_valid_header(tail in proptest::collection::vec(any::<u8>(), 0..512)) {
            let mut bytes = encode_file_header(5).to_vec();
            bytes.extend_from_slice(&tail);
            let s = scan(&bytes).unwrap();
            prop_assert!(s.valid_len + s.torn_bytes <= bytes.len() as u64);
            prop_assert!(bytes[(s.valid_len + s.torn_bytes) as usize..].iter().all(|&b| b == 0));
        }

        /// A valid journal with bytes overwritten, cut or appended anywhere after its
        /// header: the records read back are a prefix of the records written.
        #[test]
        fn damage_leaves_a_prefix(
            n in 0usize..12,
            cut in any::<prop::sample::Index>(),
            flip in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            extra in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let records = sample(n);
            let mut bytes = journal(9, &records);
            let body = bytes.len() - FILE_HEADER_LEN;
            if body > 0 {
                let i = FILE_HEADER_LEN + flip.index(body);
                bytes[i] ^= byte;
                let keep = FILE_HEADER_LEN + cut.index(body + 1);
                bytes.truncate(keep);
            }
            bytes.extend_from_slice(&extra);
            match scan(&bytes) {
                Ok(s) => {
                    prop_assert_eq!(s.generation, 9);
                    prop_assert!(s.records.len() <= records.len());
                    prop_assert_eq!(&records[..s.records.len()], &s.records[..]);
                }
                // Only a payload that passes both checksums yet is not JSON of a record
                // can be refused; a one-byte change cannot do that.
                Err(e) => prop_assert!(false, "refused: {}", e),
            }
        }
    }
}
