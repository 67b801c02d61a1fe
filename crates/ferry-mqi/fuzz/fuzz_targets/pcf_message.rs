//! Fuzz target: arbitrary bytes through the PCF decoder (resource-monitoring
//! publications that `ferry monitor` reads from `$SYS` topics), with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_mqi::fuzzing::decode_pcf(data);
});
