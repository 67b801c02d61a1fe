//! Fuzz target: arbitrary bytes as the payload of a compressed frame, expanded under
//! techniques the first byte picks; never past the limit, and what expands round-trips.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_wire::fuzzing::expand_compressed(data);
});
