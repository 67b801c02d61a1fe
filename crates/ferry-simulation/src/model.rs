//! What the simulated applications know: every queue's available messages in get order,
//! each application's unit of work, and the persistent state the log must bring back.
//!
//! The model is exact for the running queue manager (the engine is deterministic, so the
//! model predicts every get). Across a crash it keeps a history of **durable states**:
//! the committed persistent messages after each call that changed them. The queue
//! manager recovered from the log must be in one of the states from the last one an
//! application was told about (its reply released) onwards: never behind an
//! acknowledgement (nothing acknowledged lost, no acknowledged get undone), never a
//! mixture (a unit of work is all or nothing; nothing backed out or never committed
//! shows up; nothing twice).

use std::collections::{BTreeMap, BTreeSet};

/// Names of the simulated queues: requests, replies and plain data.
pub const QUEUES: [&str; 3] = ["SIM.REQUEST", "SIM.REPLY", "SIM.DATA"];
/// Index of the request queue in [`QUEUES`].
pub const REQUEST: usize = 0;
/// Index of the reply queue in [`QUEUES`].
pub const REPLY: usize = 1;

/// A message as the model knows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msg {
    /// Unique in the run; the MsgId and the body carry it.
    pub id: u64,
    /// Persistent or not.
    pub persistent: bool,
    /// The CorrelId (a reply's is its request's MsgId); 0 = none.
    pub correl: u64,
}

/// One operation of a unit of work.
#[derive(Clone, Copy, Debug)]
pub enum UowOp {
    /// Put under syncpoint (invisible until committed).
    Put { q: usize, order: u64, msg: Msg },
    /// Got under syncpoint (back in place if backed out).
    Get { q: usize, order: u64, msg: Msg },
}

/// The persistent messages a recovered queue manager may hold: (queue, message id).
pub type DurableState = BTreeSet<(usize, u64)>;

/// The model; see the module documentation.
#[derive(Debug, Default)]
pub struct Model {
    /// Per queue: available messages by get order.
    pub available: [BTreeMap<u64, Msg>; 3],
    /// Per application: its unit of work.
    pub uow: Vec<Vec<UowOp>>,
    next_order: u64,
    next_id: u64,
    /// Durable states since the oldest still possible: (first call in that state, state).
    history: Vec<(u64, DurableState)>,
    /// The last call whose reply an application got that changed the durable state.
    acked: u64,
}

impl Model {
    /// A model of empty queues used by `apps` applications.
    pub fn new(apps: usize) -> Self {
        Model {
            uow: vec![Vec::new(); apps],
            history: vec![(0, DurableState::new())],
            next_id: 1,
            ..Model::default()
        }
    }

    /// A new message id.
    pub fn new_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// A message put on queue `q` by `app`, under syncpoint or not.
    pub fn put(&mut self, app: usize, q: usize, msg: Msg, sync: bool) {
        let order = self.next_order;
        self.next_order += 1;
        if sync {
            self.uow[app].push(UowOp::Put { q, order, msg });
        } else {
            self.available[q].insert(order, msg);
        }
    }

    /// The message a get on `q` (by CorrelId `correl` when not 0) must return.
    pub fn expect_get(&self, q: usize, correl: u64) -> Option<(u64, Msg)> {
        self.available[q]
            .iter()
            .find(|(_, m)| correl == 0 || m.correl == correl)
            .map(|(o, m)| (*o, *m))
    }

    /// `app` got the message at `order` from `q`.
    pub fn got(&mut self, app: usize, q: usize, order: u64, sync: bool) {
        let msg = self.available[q]
            .remove(&order)
            .expect("model: got a message it lacks");
        if sync {
            self.uow[app].push(UowOp::Get { q, order, msg });
        }
    }

    /// `app`'s unit of work ends: committed or backed out.
    pub fn end_uow(&mut self, app: usize, commit: bool) {
        for op in std::mem::take(&mut self.uow[app]) {
            match (op, commit) {
                (UowOp::Put { q, order, msg }, true) | (UowOp::Get { q, order, msg }, false) => {
                    self.available[q].insert(order, msg);
                }
                _ => {}
            }
        }
    }

    /// CURDEPTH of `q`: available messages and those held by units of work.
    pub fn depth(&self, q: usize) -> u64 {
        self.available[q].len() as u64 + self.uncommitted(q)
    }

    /// UNCOM of `q`.
    pub fn uncommitted(&self, q: usize) -> u64 {
        self.uow
            .iter()
            .flatten()
            .filter(|op| matches!(op, UowOp::Put { q: x, .. } | UowOp::Get { q: x, .. } if *x == q))
            .count() as u64
    }

    /// The committed persistent messages now (a get under syncpoint still counts: its
    /// message comes back if the unit of work does not commit).
    pub fn durable_state(&self) -> DurableState {
        let mut s = DurableState::new();
        for (q, msgs) in self.available.iter().enumerate() {
            s.extend(msgs.values().filter(|m| m.persistent).map(|m| (q, m.id)));
        }
        for op in self.uow.iter().flatten() {
            if let UowOp::Get { q, msg, .. } = op {
                if msg.persistent {
                    s.insert((*q, msg.id));
                }
            }
        }
        s
    }

    /// Call `call` is over: notes the durable state if it changed; true if it did.
    pub fn call_done(&mut self, call: u64) -> bool {
        let now = self.durable_state();
        if self.history.last().is_some_and(|(_, s)| *s == now) {
            return false;
        }
        self.history.push((call, now));
        true
    }

    /// An application got the reply of `call`, which changed the durable state.
    pub fn acknowledged(&mut self, call: u64) {
        self.acked = self.acked.max(call);
        // States wholly before the acknowledged one can no longer be recovered.
        let keep_from = self
            .history
            .iter()
            .rposition(|(c, _)| *c <= self.acked)
            .unwrap_or(0);
        self.history.drain(..keep_from);
    }

    /// Checks a recovered queue manager's persistent messages against the states it may
    /// be in; on success the model restarts from them (`recovered` in get order per
    /// queue, units of work gone).
    pub fn recovered(&mut self, recovered: [Vec<Msg>; 3], call: u64) -> Result<(), String> {
        let mut state = DurableState::new();
        for (q, msgs) in recovered.iter().enumerate() {
            for m in msgs {
                if !m.persistent {
                    return Err(format!(
                        "non-persistent message {} survived on {}",
                        m.id, QUEUES[q]
                    ));
                }
                if !state.insert((q, m.id)) {
                    return Err(format!("message {} twice on {}", m.id, QUEUES[q]));
                }
            }
        }
        if !self.history.iter().any(|(_, s)| *s == state) {
            let (acked_call, acked_state) = &self.history[0];
            let lost: Vec<_> = acked_state.difference(&state).collect();
            let extra: Vec<_> = state.difference(acked_state).collect();
            return Err(format!(
                "recovered state matches none of the {} possible since call {acked_call} \
                 (acknowledged up to call {}): against that one, missing {lost:?}, extra {extra:?}",
                self.history.len(),
                self.acked
            ));
        }
        for (q, msgs) in recovered.into_iter().enumerate() {
            self.available[q] = msgs
                .into_iter()
                .map(|m| {
                    let o = self.next_order;
                    self.next_order += 1;
                    (o, m)
                })
                .collect();
        }
        for u in &mut self.uow {
            u.clear();
        }
        self.history = vec![(call, state)];
        self.acked = call;
        Ok(())
    }
}
