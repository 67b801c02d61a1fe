//! Fuzz target: a valid queue file on the simulated device, its manifest and segments
//! rewritten by the input, then opened, every live message read, compacted and reopened.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_store::fuzzing::open_queue_file(data);
});
