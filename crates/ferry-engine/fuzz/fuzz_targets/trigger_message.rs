//! Fuzz target: arbitrary bytes through the trigger message decoders (MQTM, read by the
//! channel initiator and `ferry trigmon` from initiation queues anyone may put to, and
//! MQTMC2), with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_mqi::fuzzing::decode_trigger_messages(data);
});
