//! Property tests over the fuzzing entry point (`ferry_engine::fuzzing`): arbitrary bytes,
//! and real log-record payloads with bytes changed, never panic, and whatever decodes
//! re-encodes to the same record. The cargo-fuzz target `journal_record` runs the same
//! entry point for longer.

use bytes::Bytes;
use ferry_engine::fuzzing::decode_everything;
use ferry_engine::{LoggedMessage, Record};
use ferry_mqi::{MessageDescriptor, MessageProperties, PropertyValue};
use proptest::prelude::*;

/// One encoded payload of every record kind, the kind byte in front (the layout the entry
/// point reads from its input's first byte).
fn seeds() -> Vec<Vec<u8>> {
    let mut props = MessageProperties::default();
    props
        .set("colour", PropertyValue::String("red".into()))
        .unwrap();
    let msg = LoggedMessage {
        rank: 4,
        seq: 7,
        put_ms: 1_700_000_000_000,
        expires_at: Some(1_700_000_060_000),
        md: MessageDescriptor::default(),
        body: Bytes::from_static(b"hello"),
        properties: props.encode(),
    };
    let q = "APP.QUEUE".to_string();
    [
        Record::Put {
            uow: Some(3),
            queue: q.clone(),
            msg,
        },
        Record::Get {
            uow: None,
            queue: q.clone(),
            seq: 7,
        },
        Record::Commit { uow: 3 },
        Record::Backout { uow: 4 },
        Record::ClearQueue { queue: q.clone() },
        Record::DeleteQueue { queue: q.clone() },
        Record::DefineQueue { queue: q.clone() },
        Record::BackoutCount {
            queue: q,
            seq: 7,
            count: 2,
        },
    ]
    .iter()
    .map(|r| {
        let enc = r.encode();
        let mut v = vec![enc.kind];
        v.extend_from_slice(&enc.payload());
        v
    })
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..600)) {
        decode_everything(&data);
    }

    #[test]
    fn changed_records_never_panic(
        which in 0usize..8,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut v = seeds().swap_remove(which);
        for (i, b) in flips {
            let at = i.index(v.len());
            v[at] ^= b;
        }
        decode_everything(&v);
        decode_everything(&v[..cut.index(v.len() + 1)]);
    }
}

#[test]
fn every_seed_decodes_and_round_trips() {
    for s in seeds() {
        assert!(
            Record::decode(s[0], &s[1..]).is_ok(),
            "seed of kind {}",
            s[0]
        );
        decode_everything(&s);
    }
}
