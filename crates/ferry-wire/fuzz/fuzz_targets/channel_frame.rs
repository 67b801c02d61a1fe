//! Fuzz target: arbitrary bytes as a message channel's: a channel hello or hello reply,
//! then channel frames; never a panic, and whatever decodes round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_wire::fuzzing::decode_channel(data);
});
