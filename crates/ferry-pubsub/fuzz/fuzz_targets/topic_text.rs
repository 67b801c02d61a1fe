//! Fuzz target: arbitrary UTF-8 as topic strings, combined strings and subscription
//! patterns under both wildcard schemes (ferry_pubsub::fuzzing).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        ferry_pubsub::fuzzing::check_text(text);
    }
});
