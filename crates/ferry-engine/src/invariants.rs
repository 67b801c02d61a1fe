//! The queue manager's invariants, checked as a whole.
//!
//! [`QueueManager::check_invariants`] panics with a message naming what drifted unless
//! every counter agrees with what it counts: each queue's handle counts with the
//! connections' open handles, its UNCOM with the units of work's entries on it and with
//! its messages in an uncommitted state, each unit-of-work entry with a message in the
//! matching state, each held delivery with a message held for its consumer, each
//! handle's lock with a message locked for it (and every locked message with a lock),
//! each timed
//! wait with a deadline, and each store with itself (`crate::queue`). Debug builds run it
//! before and after every call that changes state (`QueueManager::debug_check`), so the
//! engine's tests, and the simulation that drives a whole queue manager, stop at the
//! first call that breaks one; release builds never run it.

use crate::connection::{HandleTarget, Hobj, InputMode};
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::MsgState;
use crate::uow::UowEntry;
use ferry_mqi::OpenOptions;
use std::collections::BTreeMap;

/// The most queues a queue manager may have for [`QueueManager::debug_check`] to run
/// the whole check on every call.
const WHOLE_CHECK_QUEUES: usize = 256;

/// What the connections say one queue should count.
#[derive(Debug, Default, PartialEq, Eq)]
struct Expected {
    handles: u32,
    input: u32,
    exclusive: u32,
    output: u32,
    uncommitted: u32,
    locked: u32,
}

impl QueueManager {
    /// Panics, saying what drifted, unless the state is consistent (see the module
    /// documentation). Cost: a scan of every connection and every queue not deeper
    /// than a few thousand messages. For tests, the simulation and debug builds.
    pub fn check_invariants(&self) {
        assert!(
            self.expired_to_report.is_empty(),
            "expiration reports left unsent between calls"
        );
        assert!(
            self.consumers.cod_pending.is_empty(),
            "COD reports of settled deliveries left unsent between calls"
        );
        for (key, sub) in self.subscriptions.iter() {
            assert!(
                sub.shared || sub.open_by.len() <= 1,
                "subscription {} is open twice without being shared",
                sub.id
            );
            assert!(
                sub.durable || !sub.open_by.is_empty(),
                "a non-durable subscription {} outlived its handles",
                sub.id
            );
            for &(conn, hsub) in &sub.open_by {
                let target = self
                    .conns
                    .get(&conn)
                    .and_then(|c| c.handle(hsub))
                    .map(|h| h.target);
                assert_eq!(
                    target,
                    Some(HandleTarget::Subscription(key)),
                    "subscription {} is open by a handle that is not its own",
                    sub.id
                );
            }
        }
        let mut expected: BTreeMap<QueueId, Expected> = BTreeMap::new();
        for (conn, c) in &self.conns {
            let open = c.handles.iter().flatten().count();
            assert_eq!(c.open_count, open, "{conn:?}: open_count drifted");
            for (i, h) in c.handles.iter().enumerate() {
                let Some(h) = h else {
                    continue;
                };
                if let HandleTarget::Subscription(key) = h.target {
                    let sub = self.subscriptions.get(key);
                    assert!(
                        sub.is_some_and(|s| s.open_by.contains(&(*conn, Hobj(i as i32 + 1)))),
                        "{conn:?}: subscription handle {} and its subscription disagree",
                        i + 1
                    );
                }
                if let HandleTarget::Remote(r) = h.target {
                    // Name resolution only ever chose a local queue, and a queue's type
                    // never changes (a deleted one fails the next put with 2052).
                    let xmitq = self.queues.get(r.xmit_q);
                    assert!(
                        xmitq.is_none_or(|q| q.local.is_some()),
                        "{conn:?}: a remote handle's transmission queue is not local"
                    );
                    assert!(
                        !r.remote_qmgr_name.is_blank(),
                        "{conn:?}: remote handle without a queue manager"
                    );
                }
                let HandleTarget::Queue { local, .. } = h.target else {
                    continue;
                };
                if self.queues.get(local).is_none() {
                    // The queue was deleted under the handle: its next use fails 2052.
                    continue;
                }
                let x = expected.entry(local).or_default();
                x.handles += 1;
                x.input += u32::from(h.input != InputMode::None);
                x.exclusive += u32::from(h.input == InputMode::Exclusive);
                x.output += u32::from(h.options.contains(OpenOptions::OUTPUT));
                if let Some(k) = h.lock {
                    let lq = self.queues.get(local).and_then(|q| q.local.as_ref());
                    let state = lq.and_then(|lq| lq.store.get(k.seq).map(|m| m.state));
                    let hobj = Hobj(i as i32 + 1);
                    assert_eq!(
                        state,
                        Some(MsgState::Locked(*conn, hobj)),
                        "{conn:?} {hobj:?}: locks message {} but it is not locked for it",
                        k.seq
                    );
                    x.locked += 1;
                }
            }
            for e in &c.uow.entries {
                let (UowEntry::Put { queue, seq } | UowEntry::Get { queue, seq }) = *e;
                let want = match e {
                    UowEntry::Put { .. } => MsgState::UncommittedPut(*conn),
                    UowEntry::Get { .. } => MsgState::UncommittedGet(*conn),
                };
                let lq = self.queues.get(queue).and_then(|q| q.local.as_ref());
                let lq = lq.unwrap_or_else(|| panic!("{conn:?}: {e:?} on a queue that is gone"));
                let state = lq.store.get(seq).map(|m| m.state);
                assert_eq!(state, Some(want), "{conn:?}: {e:?} but the message is not");
                expected.entry(queue).or_default().uncommitted += 1;
            }
            if let Some(p) = c.pending {
                if p.group.is_some() {
                    let lq = self.queues.get(p.queue).and_then(|q| q.local.as_ref());
                    assert!(
                        lq.is_some_and(|lq| lq.group_waiters.contains(p.token)),
                        "{conn:?}: a group get waits but not among its queue's group waiters"
                    );
                }
                if let Some(d) = p.deadline {
                    assert!(
                        self.deadlines.contains(&(d, p.token, *conn)),
                        "{conn:?}: a timed wait without its deadline"
                    );
                }
            }
        }
        for (token, h) in &self.consumers.held {
            let lq = self.queues.get(h.queue).and_then(|q| q.local.as_ref());
            let state = lq.and_then(|lq| lq.store.get(h.seq).map(|m| m.state));
            assert_eq!(
                state,
                Some(MsgState::Held(h.consumer)),
                "delivery {token:?} holds message {} but it is not held for it",
                h.seq
            );
        }
        for (id, e) in self.queues.iter() {
            let Some(lq) = e.local.as_ref() else {
                continue;
            };
            let name = &e.def.name;
            lq.check_invariants(name);
            let x = expected.remove(&id).unwrap_or_default();
            let counted = Expected {
                handles: lq.open_handles(),
                input: lq.open_input(),
                exclusive: u32::from(lq.open_exclusive()),
                output: lq.open_output(),
                uncommitted: lq.uncommitted(),
                locked: lq.store.count_locked().map_or(x.locked, |n| n as u32),
            };
            assert_eq!(
                counted, x,
                "{name}: counters (left) differ from the connections'"
            );
        }
        assert!(
            expected.is_empty(),
            "units of work on queues that are gone: {expected:?}"
        );
        self.check_redelivery_invariants();
    }

    /// [`QueueManager::check_invariants`] in debug builds; nothing in release builds.
    /// Called before and after every call that changes state.
    ///
    /// The whole check scans every queue, so a queue manager with more than
    /// [`WHOLE_CHECK_QUEUES`] queues (a test that defines thousands) is not checked on
    /// every call: that made each call cost the number of queues, and a script of 20,000
    /// DEFINEs quadratic in a debug build. The engine's tests and the simulation, which
    /// keep few queues, are checked on every call, and may call
    /// [`QueueManager::check_invariants`] themselves at any size.
    #[inline]
    pub(crate) fn debug_check(&self) {
        if cfg!(debug_assertions) && self.queues.len() <= WHOLE_CHECK_QUEUES {
            self.check_invariants();
        }
    }
}
