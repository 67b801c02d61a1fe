//! Entry points that push arbitrary bytes through this crate's decoders of structures
//! that come from outside: the transmission queue header ([`crate::transmission`]) heads
//! messages that arrive over channels and that come back from disk at restart.
//!
//! ferry-engine's cargo-fuzz target `journal_record` (crates/ferry-engine/fuzz) calls
//! [`decode_transmission_header`] on every input, and this crate's proptests call it too,
//! so stable CI covers the same path. Besides "never panics", it checks that whatever
//! decodes re-encodes to a header that decodes to the same value.

use crate::transmission::TransmissionHeader;

/// Decodes `data` as an MQXQH (and MQMDE); if it decodes, re-encodes it and checks the
/// round trip. Panics only on a codec bug.
pub fn decode_transmission_header(data: &[u8]) {
    let Ok((header, used)) = TransmissionHeader::decode(data) else {
        return;
    };
    assert!(
        used <= data.len(),
        "consumed {used} of {} bytes",
        data.len()
    );
    let mut again = Vec::new();
    header.encode(&mut again);
    let (back, _) = TransmissionHeader::decode(&again).expect("a re-encoded header decodes");
    assert_eq!(back, header, "re-encoded header decodes differently");
}
