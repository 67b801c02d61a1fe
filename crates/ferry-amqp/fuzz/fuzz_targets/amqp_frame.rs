//! Fuzz target: arbitrary bytes through the AMQP frame decoder, every performative
//! decoder, the value decoder and the message decoder, with round-trip checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_amqp::fuzzing::decode_everything(data);
});
