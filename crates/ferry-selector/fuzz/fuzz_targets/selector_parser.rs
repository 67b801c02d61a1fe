//! Fuzz target: arbitrary UTF-8 through the selector parser; whatever parses must print,
//! re-parse to the same selector and evaluate without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        ferry_selector::fuzzing::parse_everything(text);
    }
});
