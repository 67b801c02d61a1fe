//! Getters waiting on one queue, found by what they want without scanning them all.
//!
//! A waiter wanting a specific MsgId sits in the MsgId map, one wanting only a CorrelId
//! in the CorrelId map, one wanting any message in a FIFO. When a message becomes
//! available the candidates are the head of the FIFO, the head of the CorrelId entry and
//! the first fitting MsgId waiter; the one that arrived first (lowest token) wins, so
//! arrival order is respected among all waiters that could take the message. A waiter
//! with a selector the message does not pass is skipped, never blocking those behind it
//! (finding the first fitting one then walks the list, which only selectors make longer
//! than one step).
//!
//! A waiting BROWSE_NEXT keeps its handle's cursor ([`Waiter::after`]): a message that
//! sorts before the cursor (a higher priority put while it waits) is not the next one
//! for it, as in MQ, so it is passed over and the browse goes on waiting.

use crate::connection::ConnId;
use crate::queue::{Criteria, MsgKey};
use crate::selection::SharedFilter;
use ferry_mqi::{CorrelId, MessageDescriptor, MsgId};
use foldhash::HashMap;
use std::collections::VecDeque;

/// One waiting getter.
#[derive(Clone, Debug)]
pub(crate) struct Waiter {
    /// Arrival number across the queue manager; lower arrived first.
    pub token: u64,
    /// Who waits.
    pub conn: ConnId,
    /// What it wants.
    pub criteria: Criteria,
    /// The selector of the handle it waits on.
    pub filter: Option<SharedFilter>,
    /// A waiting BROWSE_NEXT: its browse cursor; only messages sorting after it fit.
    pub after: Option<MsgKey>,
}

impl Waiter {
    /// True when the message at `key` fits the criteria, the selector and the cursor.
    fn wants(&self, key: MsgKey, md: &MessageDescriptor, properties: &[u8]) -> bool {
        self.after.is_none_or(|a| key > a)
            && self.criteria.matches(md)
            && self
                .filter
                .as_ref()
                .is_none_or(|f| f.0.matches(md, properties))
    }
}

/// Where a chosen waiter sits: the list and the position in it.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Slot {
    Any(usize),
    Correl(usize),
    MsgId(usize),
}

/// The waiters of one queue.
#[derive(Debug, Default)]
pub(crate) struct Waiters {
    any: VecDeque<Waiter>,
    by_correl: HashMap<CorrelId, VecDeque<Waiter>>,
    by_msg_id: HashMap<MsgId, VecDeque<Waiter>>,
    count: usize,
}

impl Waiters {
    /// How many wait.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.count
    }

    /// True when nobody waits.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds a waiter (tokens must increase with each call).
    pub fn add(&mut self, w: Waiter) {
        self.count += 1;
        if let Some(m) = w.criteria.msg_id {
            self.by_msg_id.entry(m).or_default().push_back(w);
        } else if let Some(c) = w.criteria.correl_id {
            self.by_correl.entry(c).or_default().push_back(w);
        } else {
            self.any.push_back(w);
        }
    }

    /// Removes the waiter with `token` (registered with `criteria`); true if found.
    pub fn remove(&mut self, token: u64, criteria: &Criteria) -> bool {
        let found = if let Some(m) = criteria.msg_id {
            remove_from(&mut self.by_msg_id, &m, token)
        } else if let Some(c) = criteria.correl_id {
            remove_from(&mut self.by_correl, &c, token)
        } else {
            match self.any.iter().position(|w| w.token == token) {
                Some(i) => {
                    self.any.remove(i);
                    true
                }
                None => false,
            }
        };
        if found {
            self.count -= 1;
        }
        found
    }

    /// Takes the earliest-arrived waiter that wants a message with `md` and no
    /// properties, if any.
    #[cfg(test)]
    pub fn take_for(&mut self, md: &MessageDescriptor) -> Option<Waiter> {
        let key = MsgKey { rank: 0, seq: 0 };
        let (_, slot) = self.best(key, md, &[], |_| true)?;
        self.take(slot, md)
    }

    /// The earliest-arrived waiter that wants the message at `key` (`md`, encoded
    /// `properties`) and passes `also` (what the waiter's handle knows: its browse
    /// marks): its token and where it sits, without removing it.
    pub fn best(
        &self,
        key: MsgKey,
        md: &MessageDescriptor,
        properties: &[u8],
        also: impl Fn(&Waiter) -> bool,
    ) -> Option<(u64, Slot)> {
        if self.count == 0 {
            return None;
        }
        let mut best: Option<(u64, Slot)> = None;
        let mut consider = |token: u64, slot: Slot| {
            if best.is_none_or(|(t, _)| token < t) {
                best = Some((token, slot));
            }
        };
        let first = |q: &VecDeque<Waiter>| {
            q.iter()
                .position(|w| w.wants(key, md, properties) && also(w))
        };
        if let Some(i) = first(&self.any) {
            consider(self.any[i].token, Slot::Any(i));
        }
        if let Some(q) = self.by_correl.get(&md.correl_id) {
            if let Some(i) = first(q) {
                consider(q[i].token, Slot::Correl(i));
            }
        }
        if let Some(q) = self.by_msg_id.get(&md.msg_id) {
            if let Some(i) = first(q) {
                consider(q[i].token, Slot::MsgId(i));
            }
        }
        best
    }

    /// Removes the waiter [`Waiters::best`] found for `md`.
    pub fn take(&mut self, slot: Slot, md: &MessageDescriptor) -> Option<Waiter> {
        let w = match slot {
            Slot::Any(i) => self.any.remove(i),
            Slot::Correl(i) => pop_at(&mut self.by_correl, &md.correl_id, i),
            Slot::MsgId(i) => pop_at(&mut self.by_msg_id, &md.msg_id, i),
        };
        if w.is_some() {
            self.count -= 1;
        }
        w
    }

    /// Every waiter, in arrival order, without removing them.
    pub fn snapshot(&self) -> Vec<Waiter> {
        let mut all: Vec<Waiter> = self.any.iter().cloned().collect();
        all.extend(self.by_correl.values().flatten().cloned());
        all.extend(self.by_msg_id.values().flatten().cloned());
        all.sort_by_key(|w| w.token);
        all
    }
}

fn remove_from<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, VecDeque<Waiter>>,
    key: &K,
    token: u64,
) -> bool {
    let Some(q) = map.get_mut(key) else {
        return false;
    };
    let Some(i) = q.iter().position(|w| w.token == token) else {
        return false;
    };
    q.remove(i);
    if q.is_empty() {
        map.remove(key);
    }
    true
}

fn pop_at<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, VecDeque<Waiter>>,
    key: &K,
    i: usize,
) -> Option<Waiter> {
    let q = map.get_mut(key)?;
    let w = q.remove(i);
    if q.is_empty() {
        map.remove(key);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(b: u8) -> [u8; 24] {
        let mut x = [0; 24];
        x[0] = b;
        x
    }

    fn w(token: u64, msg: Option<u8>, correl: Option<u8>) -> Waiter {
        Waiter {
            token,
            conn: ConnId(token),
            criteria: Criteria {
                msg_id: msg.map(id),
                correl_id: correl.map(id),
                group: None,
            },
            filter: None,
            after: None,
        }
    }

    #[test]
    fn earliest_fitting_waiter_wins() {
        let mut ws = Waiters::default();
        ws.add(w(1, None, Some(5)));
        ws.add(w(2, None, None));
        ws.add(w(3, None, Some(6)));
        let mut md = MessageDescriptor {
            correl_id: id(6),
            ..Default::default()
        };
        assert_eq!(ws.take_for(&md).map(|w| w.token), Some(2));
        assert_eq!(ws.take_for(&md).map(|w| w.token), Some(3));
        assert!(ws.take_for(&md).is_none());
        md.correl_id = id(5);
        assert_eq!(ws.take_for(&md).map(|w| w.token), Some(1));
        assert!(ws.is_empty());
    }

    #[test]
    fn msg_id_waiters_check_correl_too() {
        let mut ws = Waiters::default();
        ws.add(w(1, Some(1), Some(9)));
        ws.add(w(2, Some(1), None));
        let md = MessageDescriptor {
            msg_id: id(1),
            ..Default::default()
        };
        assert_eq!(ws.take_for(&md).map(|w| w.token), Some(2));
        assert_eq!(ws.len(), 1);
        assert!(ws.remove(1, &w(1, Some(1), Some(9)).criteria));
        assert!(ws.is_empty());
    }

    #[test]
    fn a_browse_waiter_passes_over_messages_before_its_cursor() {
        let mut ws = Waiters::default();
        let mut browse = w(1, None, None);
        browse.after = Some(MsgKey { rank: 5, seq: 10 });
        ws.add(browse);
        ws.add(w(2, None, None));
        let md = MessageDescriptor::default();
        let before = MsgKey { rank: 0, seq: 11 };
        let after = MsgKey { rank: 5, seq: 11 };
        let token = |b: Option<(u64, Slot)>| b.map(|(t, _)| t);
        assert_eq!(token(ws.best(before, &md, &[], |_| true)), Some(2));
        assert_eq!(token(ws.best(after, &md, &[], |_| true)), Some(1));
        assert_eq!(token(ws.best(after, &md, &[], |w| w.token != 1)), Some(2));
    }
}
