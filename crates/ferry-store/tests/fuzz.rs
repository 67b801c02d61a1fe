//! Property tests over the fuzzing entry points (`ferry_store::fuzzing`): a valid log or
//! queue file with arbitrary bytes spliced over its files, resized or removed, is recovered
//! with records or a typed error, never a panic. The cargo-fuzz targets `log_recovery` and
//! `queue_file_open` run the same entry points for longer.

use ferry_store::fuzzing::{open_queue_file, recover_log};
use proptest::prelude::*;

/// An input: the starting-state byte, the crash seed, then edits. Writes (op 0) are the
/// most common; `reseal` sets the entry point's "recompute checksums" bit.
fn input(reseal_bit: u8) -> impl Strategy<Value = Vec<u8>> {
    let edit = (
        any::<u8>(),
        any::<u16>(),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(op, offset, bytes)| {
            let mut v = vec![op];
            v.extend_from_slice(&offset.to_le_bytes());
            if op & 3 == 0 || op & 3 == 3 {
                v.extend_from_slice(&(bytes.len() as u16).to_le_bytes());
                v.extend_from_slice(&bytes);
            }
            v
        });
    (
        any::<u8>(),
        any::<bool>(),
        any::<u8>(),
        proptest::collection::vec(edit, 0..4),
    )
        .prop_map(move |(shape, reseal, seed, edits)| {
            let shape = if reseal {
                shape | reseal_bit
            } else {
                shape & !reseal_bit
            };
            let mut v = vec![shape, seed];
            v.extend(edits.into_iter().flatten());
            v
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn log_recovery_never_panics(data in input(32)) {
        recover_log(&data);
    }

    #[test]
    fn queue_file_open_never_panics(data in input(8)) {
        open_queue_file(&data);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..256)) {
        recover_log(&data);
        open_queue_file(&data);
    }
}

#[test]
fn every_starting_state_recovers() {
    for shape in 0..64u8 {
        recover_log(&[shape, 3]);
        open_queue_file(&[shape, 3]);
    }
}
