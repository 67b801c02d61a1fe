//! Model check of queue files: random puts, removes, syncs, compactions, power cuts and
//! crashes on the simulator, against a model. After every crash the recovered contents must be
//! the state after some prefix of the operations attempted, no shorter than the last sync
//! (or compaction): synced data never disappears, removed-and-synced messages never return,
//! and nothing appears that was never written.

use ferry_store::{CrashModel, FaultPlan, QueueFile, QueueFileConfig, SimDevice};
use proptest::prelude::*;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Op {
    Put(usize),
    Remove(usize),
    Sync,
    Compact,
    PowerCut(u64),
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..6000).prop_map(Op::Put),
        4 => any::<usize>().prop_map(Op::Remove),
        2 => Just(Op::Sync),
        1 => Just(Op::Compact),
        1 => (0u64..12).prop_map(Op::PowerCut),
        1 => Just(Op::Crash),
    ]
}

fn payload(seq: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| (seq as usize ^ (i * 131)) as u8).collect()
}

type State = BTreeMap<u64, Vec<u8>>;

fn cfg() -> QueueFileConfig {
    QueueFileConfig {
        segment_size: 4096,
        compact_min_dead_bytes: 0,
    }
}

fn run(seed: u64, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let dev = SimDevice::new(seed, CrashModel::default());
    let mut qf = QueueFile::create(dev.clone(), cfg()).unwrap();
    // states[k] = contents after the first k attempted changes since the last crash.
    let mut states: Vec<State> = vec![State::new()];
    let mut synced = 0usize;
    let mut next_seq = 1u64;
    let mut ops = ops;
    ops.push(Op::Crash);
    for op in ops {
        let failed_before = qf.failure().is_some();
        let cur = states.last().unwrap().clone();
        match op {
            Op::Put(len) => {
                let seq = next_seq;
                next_seq += 1;
                let p = payload(seq, len);
                let r = qf.append_put(seq, &p);
                if r.is_ok() || !failed_before {
                    let mut s = cur;
                    s.insert(seq, p);
                    states.push(s);
                }
            }
            Op::Remove(i) => {
                if cur.is_empty() {
                    continue;
                }
                let seq = *cur.keys().nth(i % cur.len()).unwrap();
                let r = qf.append_remove(seq);
                if r.is_ok() || !failed_before {
                    let mut s = cur;
                    s.remove(&seq);
                    states.push(s);
                }
            }
            Op::Sync => {
                if qf.sync().is_ok() {
                    synced = states.len() - 1;
                }
            }
            Op::Compact => {
                if qf.compact().is_ok() {
                    synced = states.len() - 1;
                    prop_assert_eq!(qf.status().dead_bytes, 0);
                }
            }
            Op::PowerCut(k) => dev.set_faults(FaultPlan {
                power_cut_after: Some(k),
                ..FaultPlan::default()
            }),
            Op::Crash => {
                drop(qf);
                dev.crash();
                let (mut q, _) = QueueFile::open(dev.clone(), cfg()).unwrap();
                let got: State = q.iter().map(|r| r.unwrap()).collect();
                let ok = states[synced..].contains(&got);
                prop_assert!(
                    ok,
                    "recovered {:?} is no state between the last sync ({}) and the end ({})",
                    got.keys().collect::<Vec<_>>(),
                    synced,
                    states.len() - 1
                );
                let st = q.status();
                prop_assert_eq!(st.live_messages, got.len() as u64);
                states = vec![got];
                synced = 0;
                qf = q;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("FERRY_QF_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300)
    ))]

    #[test]
    fn queue_file_matches_the_model(seed in any::<u64>(), ops in proptest::collection::vec(op(), 1..80)) {
        run(seed, ops)?;
    }
}
