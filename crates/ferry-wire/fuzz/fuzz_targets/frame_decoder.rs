//! Fuzz target: arbitrary bytes through the handshake decoders, the frame decoder loop
//! and the request/reply/close-notice decoders, with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_wire::fuzzing::decode_everything(data);
});
