//! Fuzz target: arbitrary text through the reader of message property values as the
//! messaging REST API's `ibm-mq-usr-*` headers carry them, with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_mqi::fuzzing::parse_property_text(data);
});
