//! Fuzz target: arbitrary bytes through the engine's log-record payload decoder, as every
//! record kind, with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_engine::fuzzing::decode_everything(data);
});
