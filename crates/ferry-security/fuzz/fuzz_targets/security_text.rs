//! Fuzz target: arbitrary text as an SSLPEER filter, an SNI host name and an SSLCIPH
//! value. Nothing may panic; a filter that parses must match or not match any DN, and a
//! channel name decoded from SNI must encode back to the same host.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        ferry_security::fuzzing::check_text(text);
    }
});
