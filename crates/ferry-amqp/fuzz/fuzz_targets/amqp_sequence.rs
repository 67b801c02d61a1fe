//! Fuzz target: the input is a script of whole AMQP frames (headers, SASL, open, begin,
//! attach, flow, transfer, disposition, detach, end, close, raw bytes, time passing)
//! played against a server-role connection answered like a broker; the connection must
//! stay within its limits (sessions, links, incomplete bytes, output) and never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_amqp::fuzzing::drive_sequence(data);
});
