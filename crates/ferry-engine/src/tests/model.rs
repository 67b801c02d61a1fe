//! Property test: random puts, gets, commits, backouts and disconnects over a few
//! connections and queues, checked step by step against a simple model (no message
//! lost or duplicated, uncommitted puts invisible, backout restores position and
//! counts, CURDEPTH and UNCOM equal the model's).

use super::*;
use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};

const CONNS: usize = 3;
const QUEUES: [&str; 2] = ["MQ.A", "MQ.B"];

#[derive(Clone, Debug)]
enum Op {
    Put {
        c: usize,
        q: usize,
        sync: bool,
        prio: i32,
    },
    Get {
        c: usize,
        q: usize,
        sync: bool,
    },
    Commit {
        c: usize,
    },
    Backout {
        c: usize,
    },
    Reconnect {
        c: usize,
        normal: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..CONNS, 0..2usize, any::<bool>(), 0..10i32)
            .prop_map(|(c, q, sync, prio)| Op::Put { c, q, sync, prio }),
        4 => (0..CONNS, 0..2usize, any::<bool>()).prop_map(|(c, q, sync)| Op::Get { c, q, sync }),
        1 => (0..CONNS).prop_map(|c| Op::Commit { c }),
        1 => (0..CONNS).prop_map(|c| Op::Backout { c }),
        1 => (0..CONNS, any::<bool>()).prop_map(|(c, normal)| Op::Reconnect { c, normal }),
    ]
}

#[derive(Clone, Copy, Debug)]
enum Pending {
    Put { q: usize, key: (u8, u64), id: u64 },
    Get { q: usize, key: (u8, u64), id: u64 },
}

#[derive(Default)]
struct Model {
    /// Per queue: available messages in get order → id.
    available: [BTreeMap<(u8, u64), u64>; 2],
    next_seq: [u64; 2],
    uow: [Vec<Pending>; CONNS],
    backouts: HashMap<u64, i32>,
}

impl Model {
    fn depth(&self, q: usize) -> u64 {
        let pending = self
            .uow
            .iter()
            .flatten()
            .filter(|p| matches!(p, Pending::Put { q: pq, .. } | Pending::Get { q: pq, .. } if *pq == q))
            .count();
        (self.available[q].len() + pending) as u64
    }

    fn uncommitted(&self, q: usize) -> u64 {
        self.uow
            .iter()
            .flatten()
            .filter(|p| matches!(p, Pending::Put { q: pq, .. } | Pending::Get { q: pq, .. } if *pq == q))
            .count() as u64
    }

    fn commit(&mut self, c: usize) {
        for p in std::mem::take(&mut self.uow[c]) {
            if let Pending::Put { q, key, id } = p {
                self.available[q].insert(key, id);
            }
        }
    }

    fn backout(&mut self, c: usize) {
        for p in std::mem::take(&mut self.uow[c]) {
            if let Pending::Get { q, key, id } = p {
                *self.backouts.entry(id).or_default() += 1;
                self.available[q].insert(key, id);
            }
        }
    }
}

struct World {
    h: Harness,
    conns: Vec<ConnId>,
    handles: Vec<[Hobj; 2]>,
}

impl World {
    fn connect(h: &mut Harness) -> (ConnId, [Hobj; 2]) {
        let c = h.conn();
        let a = h.open(c, QUEUES[0], IO);
        let b = h.open(c, QUEUES[1], IO);
        (c, [a, b])
    }
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut h = Harness::new();
    for q in QUEUES {
        h.local(q);
    }
    let mut w = World {
        conns: Vec::new(),
        handles: Vec::new(),
        h,
    };
    for _ in 0..CONNS {
        let (c, hs) = World::connect(&mut w.h);
        w.conns.push(c);
        w.handles.push(hs);
    }
    let mut m = Model::default();
    let mut next_id = 0u64;
    for op in ops {
        let t = w.h.t();
        match op {
            Op::Put { c, q, sync, prio } => {
                next_id += 1;
                let mut md = MessageDescriptor {
                    priority: prio,
                    ..Default::default()
                };
                let flags = if sync {
                    PutOptionFlags::SYNCPOINT
                } else {
                    PutOptionFlags::empty()
                };
                w.h.put_md(
                    w.conns[c],
                    w.handles[c][q],
                    &mut md,
                    flags,
                    &next_id.to_be_bytes(),
                )
                .map_err(|e| TestCaseError::fail(format!("put failed {e}")))?;
                let key = ((9 - prio) as u8, m.next_seq[q]);
                m.next_seq[q] += 1;
                if sync {
                    m.uow[c].push(Pending::Put {
                        q,
                        key,
                        id: next_id,
                    });
                } else {
                    m.available[q].insert(key, next_id);
                }
            }
            Op::Get { c, q, sync } => {
                let flags = if sync {
                    GetOptionFlags::SYNCPOINT
                } else {
                    GetOptionFlags::empty()
                };
                let r = w.h.get_now(w.conns[c], w.handles[c][q], flags);
                match m.available[q].pop_first() {
                    None => {
                        prop_assert_eq!(r.unwrap_err().reason(), ReasonCode::NoMsgAvailable);
                    }
                    Some((key, id)) => {
                        let g = r.map_err(|e| TestCaseError::fail(format!("get failed {e:?}")))?;
                        let got = u64::from_be_bytes(g.data[..].try_into().unwrap());
                        prop_assert_eq!(got, id);
                        prop_assert_eq!(g.md.backout_count, *m.backouts.get(&id).unwrap_or(&0));
                        if sync {
                            m.uow[c].push(Pending::Get { q, key, id });
                        }
                    }
                }
            }
            Op::Commit { c } => {
                w.h.qm.commit(w.conns[c], t, &mut w.h.fx).unwrap();
                m.commit(c);
            }
            Op::Backout { c } => {
                w.h.qm.backout(w.conns[c], t, &mut w.h.fx).unwrap();
                m.backout(c);
            }
            Op::Reconnect { c, normal } => {
                w.h.qm.disconnect(w.conns[c], normal, t, &mut w.h.fx);
                if normal {
                    m.commit(c);
                } else {
                    m.backout(c);
                }
                let (nc, hs) = World::connect(&mut w.h);
                w.conns[c] = nc;
                w.handles[c] = hs;
            }
        }
        prop_assert!(w.h.fx.is_empty(), "nobody waits, so no completions");
        // Also in release test builds, where the engine does not check by itself.
        w.h.qm.check_invariants();
        for (qi, q) in QUEUES.iter().enumerate() {
            let st = w.h.qm.queue_status(q, w.h.t()).unwrap();
            prop_assert_eq!(st.current_depth, m.depth(qi));
            prop_assert_eq!(st.uncommitted, m.uncommitted(qi));
        }
    }
    // Commit everything, then drain: exactly the model's messages, in order.
    let t = w.h.t();
    for c in 0..CONNS {
        w.h.qm.commit(w.conns[c], t, &mut w.h.fx).unwrap();
        m.commit(c);
    }
    for q in 0..2 {
        let expected: Vec<u64> = m.available[q].values().copied().collect();
        let mut got = Vec::new();
        while let Ok(body) = w.h.get_body(w.conns[0], w.handles[0][q]) {
            got.push(u64::from_be_bytes(body[..].try_into().unwrap()));
        }
        prop_assert_eq!(got, expected);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    #[test]
    fn engine_matches_model(ops in proptest::collection::vec(op(), 1..120)) {
        run(ops)?;
    }
}
