//! Fuzz target: arbitrary bytes through the W3C `traceparent` parser (a message property
//! any application can set), with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_mqi::fuzzing::parse_trace_parent(data);
});
