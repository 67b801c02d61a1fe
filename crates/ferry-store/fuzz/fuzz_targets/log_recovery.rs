//! Fuzz target: a valid recovery log on the simulated device, its control file and extents
//! rewritten by the input, then recovered, read to the end, resumed and recovered again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_store::fuzzing::recover_log(data);
});
