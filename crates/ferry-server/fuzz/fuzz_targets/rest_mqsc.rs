//! Fuzz target: arbitrary bytes as the MQSC of a REST request (runCommand text, a
//! runCommandJSON body) and as command server output read into IBM's `parameters`
//! objects. Whatever they are, the decoders answer or refuse: they never panic, and a
//! command built from JSON is always one line. The property test in ferry-server's
//! rest_mqsc module drives the same decoders in `cargo test`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_server::rest_mqsc::fuzz_one(data);
});
