//! Fuzz target: arbitrary text as an SSLPEER filter, an SNI host name, an SSLCIPH value,
//! a CHLAUTH address pattern, profile and record, and a user repository file. Nothing may
//! panic; a filter that parses must match or not match any DN, a channel name decoded from
//! SNI must encode back to the same host, a record SET accepts must decide any connection,
//! and a user file that parses must render back to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        ferry_security::fuzzing::check_text(text);
    }
});
