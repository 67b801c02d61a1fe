//! Fuzz target: whole byte sequences (a hello, then frames) fed to the server's inbound
//! buffer in socket-sized reads; the hellos and frames taken must not depend on how the
//! bytes were split, and the buffer must grow only with what arrived.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    ferry_wire::fuzzing::drive_inbound(data);
});
