//! One entry point that pushes arbitrary bytes through the log-record payload codec.
//!
//! The payloads the engine logs ([`crate::journal`]) come back from disk at restart — from
//! the recovery log and from queue files — so their decoder must take anything without
//! panicking. The cargo-fuzz target `journal_record` (crates/ferry-engine/fuzz) calls
//! [`decode_everything`], and a proptest in this crate's tests calls it too, so stable CI
//! covers the same path. Besides "never panics", it checks that whatever decodes re-encodes
//! to a payload that decodes to the same record, byte for byte where the versions match.
//!
//! The same input also goes through the transmission queue header's decoder
//! ([`ferry_mqi::fuzzing::decode_transmission_header`]): a message on a transmission
//! queue comes back from disk as a logged body that starts with an MQXQH, and the
//! channel that sends it decodes that header.

use crate::journal::{kind, Record, FORMAT_VERSION};

/// Record kinds tried besides the real ones: the edges of the valid range and the log's own.
const OTHER_KINDS: [u8; 6] = [0, 1, kind::PUT - 1, kind::PUBLISH + 1, 128, 255];

/// Decodes `data` as the payload of every record kind (and of the kinds around them), and
/// `data[1..]` as the payload of kind `data[0]`. Panics only if a decoded record fails to
/// round-trip (a codec bug).
pub fn decode_everything(data: &[u8]) {
    for k in (kind::PUT..=kind::PUBLISH).chain(OTHER_KINDS) {
        check(k, data);
    }
    if let Some((&k, payload)) = data.split_first() {
        check(k, payload);
    }
    ferry_mqi::fuzzing::decode_transmission_header(data);
}

/// Decodes one payload; if it decodes, re-encodes the record and checks the round trip.
fn check(k: u8, payload: &[u8]) {
    let Ok(rec) = Record::decode(k, payload) else {
        return;
    };
    assert!((kind::PUT..=kind::PUBLISH).contains(&k), "kind {k} decoded");
    // Display must not panic either (recovery logs records this way).
    let _ = rec.to_string();
    if let Record::Put { msg, .. } = &rec {
        // The properties come from disk too; their decoder must take them as they are.
        let _ = ferry_mqi::MessageProperties::decode(&msg.properties);
    }
    let enc = rec.encode();
    assert_eq!(enc.kind, k, "re-encoded {rec} under another kind");
    let again = enc.payload();
    assert_eq!(
        Record::decode(enc.kind, &again).as_ref(),
        Ok(&rec),
        "re-encoded record decodes differently"
    );
    assert_eq!(enc.decode().as_ref(), Ok(&rec));
    if payload[0] == FORMAT_VERSION {
        // Same version: the encoding is canonical, so the bytes come back unchanged.
        assert_eq!(again, payload, "{rec} re-encodes to other bytes");
    } else if k != kind::PUT {
        // An older version differs only in its version byte (a version 1 put also lacks
        // the properties length, which the current version adds).
        assert_eq!(again[1..], payload[1..], "{rec} re-encodes to other bytes");
    }
}
