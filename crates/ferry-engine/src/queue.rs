//! A local queue's storage: messages, their get order, and the MsgId/CorrelId indexes.
//!
//! Every message gets a [`MsgKey`] when it is put: `(rank, seq)`, where `rank` is
//! `9 - priority` under MSGDLVSQ(PRIORITY) (or `9 - DEFPRTY` under FIFO, as MQ does) and
//! `seq` the arrival number. The key never changes, so a backed-out message returns to
//! its original position. Only *available* messages (committed, not held by a
//! syncpoint get or an unsettled consumer delivery) are in the order set and the id
//! indexes; uncommitted puts and gets and held deliveries stay in `msgs` (they count in
//! CURDEPTH, as MQ counts locked messages) but cannot be found. Finding the first
//! message, or the first with a given MsgId/CorrelId, is an index lookup whatever the
//! depth.
//!
//! The store also notes which persistent messages changed (appeared, went, or got a new
//! BackoutCount) since the last checkpoint, so a checkpoint writes only what changed
//! (`crate::checkpoint`): uncommitted puts are not noted until they are committed.

use crate::body::Body;
use crate::clock::Timestamp;
use crate::connection::ConnId;
use crate::consumer::ConsumerId;
use crate::waiters::Waiters;
use bytes::Bytes;
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{CorrelId, MessageDescriptor, MsgId, ReasonCode};
use foldhash::HashMap;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::rc::Rc;

/// Where a message sits in its queue's get order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MsgKey {
    /// `9 - priority`: lower ranks are got first.
    pub rank: u8,
    /// Arrival number on the queue.
    pub seq: u64,
}

/// Whether a stored message can be got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MsgState {
    /// Committed and not held: in the order set and indexes.
    Available,
    /// Put under syncpoint by a connection, not yet committed.
    UncommittedPut(ConnId),
    /// Got under syncpoint by a connection, not yet committed.
    UncommittedGet(ConnId),
    /// Delivered unsettled to a consumer: held for it until settled.
    Held(ConsumerId),
}

/// A message on a queue.
#[derive(Clone, Debug)]
pub(crate) struct StoredMsg {
    pub key: MsgKey,
    pub md: MessageDescriptor,
    /// In memory, or (persistent messages beyond the queue's buffer) in the queue file.
    pub body: Body,
    /// The encoded message properties ([`ferry_mqi::MessageProperties`]); empty = none.
    pub properties: Bytes,
    /// When it was put (for MSGAGE and the remaining expiry).
    pub put_ms: u64,
    /// When it expires, if it does.
    pub expires_at: Option<u64>,
    pub state: MsgState,
}

impl StoredMsg {
    /// The message as a log record carries it. Its body is read back from the queue
    /// file if it is not in memory (never for a message whose change is noted for a
    /// checkpoint: see `crate::body`).
    pub fn logged(&self) -> Result<crate::journal::LoggedMessage, ReasonCode> {
        Ok(crate::journal::LoggedMessage {
            rank: self.key.rank,
            seq: self.key.seq,
            put_ms: self.put_ms,
            expires_at: self.expires_at,
            md: self.md,
            body: self.body.load()?,
            properties: self.properties.clone(),
        })
    }

    /// A message rebuilt from a log record, in `state`.
    pub fn from_logged(m: crate::journal::LoggedMessage, state: MsgState) -> Self {
        StoredMsg {
            key: MsgKey {
                rank: m.rank,
                seq: m.seq,
            },
            md: m.md,
            body: Body::Resident(m.body),
            properties: m.properties,
            put_ms: m.put_ms,
            expires_at: m.expires_at,
            state,
        }
    }

    /// True when the message has expired at `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        self.expires_at.is_some_and(|e| e <= now.0)
    }
}

/// What a get looks for: `None` fields match anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Criteria {
    pub msg_id: Option<MsgId>,
    pub correl_id: Option<CorrelId>,
}

impl Criteria {
    /// True when `md` fits.
    pub fn matches(&self, md: &MessageDescriptor) -> bool {
        self.msg_id.is_none_or(|m| m == md.msg_id)
            && self.correl_id.is_none_or(|c| c == md.correl_id)
    }
}

/// The keys of available messages sharing one id: usually one, so no allocation.
#[derive(Clone, Debug)]
enum IdSet {
    One(MsgKey),
    Many(BTreeSet<MsgKey>),
}

impl IdSet {
    fn insert(&mut self, k: MsgKey) {
        match self {
            IdSet::One(o) if *o == k => {}
            IdSet::One(o) => {
                let mut s = BTreeSet::new();
                s.insert(*o);
                s.insert(k);
                *self = IdSet::Many(s);
            }
            IdSet::Many(s) => {
                s.insert(k);
            }
        }
    }

    /// Removes `k`; true when the set is now empty.
    fn remove(&mut self, k: MsgKey) -> bool {
        match self {
            IdSet::One(o) => *o == k,
            IdSet::Many(s) => {
                s.remove(&k);
                if s.len() == 1 {
                    if let Some(&only) = s.iter().next() {
                        *self = IdSet::One(only);
                    }
                    false
                } else {
                    s.is_empty()
                }
            }
        }
    }

    /// Keys after `after` in order, for the first that passes `ok`.
    fn first_after(
        &self,
        after: Option<MsgKey>,
        mut ok: impl FnMut(MsgKey) -> bool,
    ) -> Option<MsgKey> {
        match self {
            IdSet::One(k) => (after.is_none_or(|a| *k > a) && ok(*k)).then_some(*k),
            IdSet::Many(s) => {
                let lower = after.map_or(Bound::Unbounded, Bound::Excluded);
                s.range((lower, Bound::Unbounded)).copied().find(|k| ok(*k))
            }
        }
    }
}

fn index_add<K: std::hash::Hash + Eq>(map: &mut HashMap<K, IdSet>, id: K, k: MsgKey) {
    match map.entry(id) {
        std::collections::hash_map::Entry::Occupied(mut e) => e.get_mut().insert(k),
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(IdSet::One(k));
        }
    }
}

fn index_remove<K: std::hash::Hash + Eq>(map: &mut HashMap<K, IdSet>, id: &K, k: MsgKey) {
    if let Some(set) = map.get_mut(id) {
        if set.remove(k) {
            map.remove(id);
        }
    }
}

/// Messages of one local queue with their order and indexes.
#[derive(Debug, Default)]
pub(crate) struct MessageStore {
    /// Boxed: a deep queue's table then holds 16 bytes per message, so growing it (a
    /// rehash that moves every entry) stays cheap — inline 480-byte messages made each
    /// doubling of a million-message queue stall the queue manager for about half a second.
    msgs: HashMap<u64, Box<StoredMsg>>,
    order: BTreeSet<MsgKey>,
    by_msg_id: HashMap<MsgId, IdSet>,
    by_correl_id: HashMap<CorrelId, IdSet>,
    next_seq: u64,
    /// Bytes of every stored message's body and properties, in memory or not (what
    /// MAXFSIZE bounds).
    bytes: u64,
    /// Bytes of persistent messages' bodies in memory (held within DefaultPQBufferSize
    /// once they are filed: `crate::body`).
    resident_persistent: u64,
    /// Bytes of non-persistent messages' bodies in memory (held within
    /// DefaultQBufferSize by spilling: `crate::body`).
    resident_non_persistent: u64,
    /// Non-persistent messages spilled to the queue file (or on their way), with the
    /// bytes each will free once its spill is reported written (0 after that).
    pub spilled: HashMap<u64, u32>,
    /// Spilled non-persistent messages gone since the last spill: their records must be
    /// removed from the queue file.
    pub spill_gone: Vec<u64>,
    /// Bytes of spilled bodies not yet reported written (still in memory).
    pub spill_pending: u64,
    /// Checkpoint bookkeeping (see `crate::checkpoint`).
    pub filing: Filing,
}

/// Which persistent messages of a queue its queue file does not reflect yet.
///
/// A checkpoint writes a message changed since the previous checkpoint into the log's
/// image (cheap: most messages are got before the next one), and files a message that
/// changed in the interval before and has stayed since ("imaged" then), so only messages
/// that outlive a checkpoint interval reach the queue file.
#[derive(Debug, Default)]
pub(crate) struct Filing {
    /// Sequence numbers of persistent messages that appeared, went or changed since the
    /// last checkpoint, in the order noted, repeats included (a push is the cheapest note
    /// on the hot path; [`Filing::changed_set`] sorts them once per checkpoint).
    pub changed: Vec<u64>,
    /// Those noted in the interval before it (in the last checkpoint's image), sorted,
    /// without repeats.
    pub imaged: Vec<u64>,
    /// True while the queue file holds this store's messages as of the last checkpoint;
    /// false for a new queue, one cleared by a (re)definition, or one whose file was not
    /// loaded: the next write to its file, a checkpoint's or a spill's, starts it afresh.
    pub file_matches: bool,
    /// True once a spill has started the queue file afresh while `file_matches` was
    /// false: the file then holds nothing of an earlier incarnation but holds spilled
    /// bodies, so the next checkpoint adds to it instead of emptying it.
    pub file_started: bool,
}

impl Filing {
    /// [`Filing::changed`] sorted, without repeats.
    pub fn changed_set(&self) -> Vec<u64> {
        let mut v = self.changed.clone();
        v.sort_unstable();
        v.dedup();
        v
    }
}

impl MessageStore {
    /// Messages stored, available or not (CURDEPTH).
    pub fn depth(&self) -> usize {
        self.msgs.len()
    }

    /// The next arrival key for a message of `rank`.
    pub fn next_key(&mut self, rank: u8) -> MsgKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        MsgKey { rank, seq }
    }

    /// Stores a recovered message, keeping its key; later arrivals number after it.
    pub fn insert_recovered(&mut self, m: StoredMsg) {
        self.next_seq = self.next_seq.max(m.key.seq.saturating_add(1));
        self.remove(m.key.seq);
        self.insert(m);
    }

    /// Makes later arrivals number after `seq` (a recovered message not stored yet).
    pub fn reserve_seq(&mut self, seq: u64) {
        self.next_seq = self.next_seq.max(seq.saturating_add(1));
    }

    /// Every message, in get order (for checkpoint images and tests).
    pub fn sorted(&self) -> Vec<&StoredMsg> {
        let mut v: Vec<&StoredMsg> = self.msgs.values().map(|m| &**m).collect();
        v.sort_by_key(|m| m.key);
        v
    }

    /// Bytes of persistent messages' bodies held in memory.
    pub fn resident_persistent_bytes(&self) -> u64 {
        self.resident_persistent
    }

    /// Bytes of non-persistent messages' bodies held in memory.
    pub fn resident_non_persistent_bytes(&self) -> u64 {
        self.resident_non_persistent
    }

    /// The resident-bytes counter `m`'s body counts in.
    fn counter(&mut self, m: &StoredMsg) -> &mut u64 {
        if m.md.is_persistent() {
            &mut self.resident_persistent
        } else {
            &mut self.resident_non_persistent
        }
    }

    /// Bytes of every stored message's body and properties (MAXFSIZE's measure).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Counts `m`'s body in or out of the resident bytes.
    fn account(&mut self, m: &StoredMsg, add: bool) {
        let size = (m.body.len() + m.properties.len()) as u64;
        self.bytes = if add {
            self.bytes + size
        } else {
            self.bytes.saturating_sub(size)
        };
        if m.body.is_resident() {
            let n = m.body.len() as u64;
            let c = self.counter(m);
            *c = if add { *c + n } else { c.saturating_sub(n) };
        }
    }

    /// A message leaves the store: a spilled one's record must leave the queue file (and
    /// one whose spill is not reported yet no longer frees anything).
    fn forget_spilled(&mut self, m: &StoredMsg) {
        if let Some(pending) = self.spilled.remove(&m.key.seq) {
            self.spill_pending = self.spill_pending.saturating_sub(u64::from(pending));
            self.spill_gone.push(m.key.seq);
        }
    }

    /// [`MessageStore::resident_persistent_bytes`] counted afresh (tests check the
    /// running count against it).
    #[cfg(test)]
    pub fn recount_resident(&self, persistent: bool) -> u64 {
        self.msgs
            .values()
            .filter(|m| m.md.is_persistent() == persistent && m.body.is_resident())
            .map(|m| m.body.len() as u64)
            .sum()
    }

    /// The newest available, resident, not yet spilled non-persistent messages whose
    /// bodies add up to at least `bytes` (fewer if there are not enough), newest first.
    pub fn spill_candidates(&self, bytes: u64) -> Vec<&StoredMsg> {
        let mut out = Vec::new();
        let mut total = 0u64;
        for k in self.order.iter().rev() {
            if total >= bytes {
                break;
            }
            let Some(m) = self.msgs.get(&k.seq) else {
                continue;
            };
            if m.md.is_persistent() || !m.body.is_resident() || self.spilled.contains_key(&k.seq) {
                continue;
            }
            total += m.body.len() as u64;
            out.push(&**m);
        }
        out
    }

    /// Takes message `seq`'s body back into memory (it was just read for a delivery
    /// that may return the message to the queue).
    pub fn make_resident(&mut self, seq: u64, body: &Bytes) {
        let Some(m) = self.msgs.get_mut(&seq) else {
            return;
        };
        if m.body.is_resident() {
            return;
        }
        m.body = Body::Resident(body.clone());
        let persistent = m.md.is_persistent();
        if persistent {
            self.resident_persistent += body.len() as u64;
        } else {
            self.resident_non_persistent += body.len() as u64;
        }
    }

    /// Message `seq`'s body, if it is left in the queue file, is now read from `record`
    /// (the file was compacted).
    pub fn relocate(&mut self, seq: u64, record: &Rc<dyn crate::body::FiledRecord>) {
        if let Some(m) = self.msgs.get_mut(&seq) {
            if let Body::Filed { record: r, .. } = &mut m.body {
                *r = record.clone();
            }
        }
    }

    /// Leaves the body of message `f.seq` in its queue file, if the message is still the
    /// one filed, available, and unchanged since its filing (`changed` = the sorted
    /// changes noted since); returns the bytes freed.
    pub fn leave_filed(&mut self, f: &crate::body::FiledBody, changed: &[u64]) -> u64 {
        let Some(m) = self.msgs.get_mut(&f.seq) else {
            return 0;
        };
        let same = m.md.msg_id == f.msg_id && m.put_ms == f.put_ms;
        if !same
            || m.state != MsgState::Available
            || !m.body.is_resident()
            || changed.binary_search(&f.seq).is_ok()
        {
            return 0;
        }
        let len = m.body.len();
        m.body = Body::Filed {
            len,
            record: f.record.clone(),
        };
        // Properties may share one buffer with the body (a channel that copies both into
        // one allocation): a copy of their own lets the body's memory go.
        if !m.properties.is_empty() {
            m.properties = Bytes::copy_from_slice(&m.properties);
        }
        let persistent = m.md.is_persistent();
        let c = if persistent {
            &mut self.resident_persistent
        } else {
            &mut self.resident_non_persistent
        };
        *c = c.saturating_sub(len as u64);
        len as u64
    }

    /// Removes every message whatever its state; the queue file starts afresh at the
    /// next checkpoint.
    pub fn clear_all(&mut self) {
        self.bytes = 0;
        self.resident_persistent = 0;
        self.resident_non_persistent = 0;
        self.spilled.clear();
        self.spill_gone.clear();
        self.spill_pending = 0;
        self.msgs.clear();
        self.order.clear();
        self.by_msg_id.clear();
        self.by_correl_id.clear();
        self.filing = Filing::default();
    }

    /// Notes a change to message `m` for the next checkpoint (persistent, committed).
    fn note(&mut self, m: &StoredMsg) {
        if m.md.is_persistent() && !matches!(m.state, MsgState::UncommittedPut(_)) {
            self.filing.changed.push(m.key.seq);
        }
    }

    /// Stores a message; available ones become findable.
    pub fn insert(&mut self, m: impl Into<Box<StoredMsg>>) {
        let m = m.into();
        self.note(&m);
        self.insert_quietly(m);
    }

    /// Stores a message read back from the queue file (no change to note).
    pub fn insert_filed(&mut self, m: impl Into<Box<StoredMsg>>) {
        let m = m.into();
        self.next_seq = self.next_seq.max(m.key.seq.saturating_add(1));
        self.insert_quietly(m);
    }

    fn insert_quietly(&mut self, m: Box<StoredMsg>) {
        self.account(&m, true);
        let available = m.state == MsgState::Available;
        let (key, msg_id, correl_id) = (m.key, m.md.msg_id, m.md.correl_id);
        if let Some(old) = self.msgs.insert(key.seq, m) {
            self.account(&old, false);
        }
        if available {
            self.link(key, msg_id, correl_id);
        }
    }

    fn link(&mut self, key: MsgKey, msg_id: MsgId, correl_id: CorrelId) {
        self.order.insert(key);
        if msg_id != NONE_ID {
            index_add(&mut self.by_msg_id, msg_id, key);
        }
        if correl_id != NONE_ID {
            index_add(&mut self.by_correl_id, correl_id, key);
        }
    }

    fn unlink(&mut self, key: MsgKey, msg_id: MsgId, correl_id: CorrelId) {
        self.order.remove(&key);
        if msg_id != NONE_ID {
            index_remove(&mut self.by_msg_id, &msg_id, key);
        }
        if correl_id != NONE_ID {
            index_remove(&mut self.by_correl_id, &correl_id, key);
        }
    }

    /// The message with arrival number `seq`.
    pub fn get(&self, seq: u64) -> Option<&StoredMsg> {
        self.msgs.get(&seq).map(|m| &**m)
    }

    /// Sets a stored message's BackoutCount (it is not part of any index).
    pub fn set_backout_count(&mut self, seq: u64, count: i32) {
        if let Some(m) = self.msgs.get_mut(&seq) {
            m.md.backout_count = count;
            if m.md.is_persistent() {
                self.filing.changed.push(seq);
            }
        }
    }

    /// Changes a message's state, linking or unlinking it from the indexes.
    pub fn set_state(&mut self, seq: u64, state: MsgState) {
        let Some(m) = self.msgs.get_mut(&seq) else {
            return;
        };
        let was = m.state == MsgState::Available;
        let now = state == MsgState::Available;
        let committed = matches!(m.state, MsgState::UncommittedPut(_))
            && !matches!(state, MsgState::UncommittedPut(_));
        m.state = state;
        let (key, msg_id, correl_id) = (m.key, m.md.msg_id, m.md.correl_id);
        if committed && m.md.is_persistent() {
            self.filing.changed.push(seq);
        }
        match (was, now) {
            (false, true) => self.link(key, msg_id, correl_id),
            (true, false) => self.unlink(key, msg_id, correl_id),
            _ => {}
        }
    }

    /// Removes a message whatever its state (boxed as it was stored: a message that is
    /// put back, e.g. held for an unsettled delivery, is not copied twice).
    pub fn remove(&mut self, seq: u64) -> Option<Box<StoredMsg>> {
        let m = self.msgs.remove(&seq)?;
        self.account(&m, false);
        self.forget_spilled(&m);
        self.note(&m);
        if m.state == MsgState::Available {
            self.unlink(m.key, m.md.msg_id, m.md.correl_id);
        }
        Some(m)
    }

    /// The first available message after `after` (from the start when `None`) that fits
    /// `c`: an index lookup, never a scan of the queue.
    pub fn first(&self, c: &Criteria, after: Option<MsgKey>) -> Option<MsgKey> {
        if let Some(mid) = c.msg_id {
            let set = self.by_msg_id.get(&mid)?;
            return set.first_after(after, |k| match c.correl_id {
                None => true,
                Some(cid) => self.msgs.get(&k.seq).is_some_and(|m| m.md.correl_id == cid),
            });
        }
        if let Some(cid) = c.correl_id {
            return self.by_correl_id.get(&cid)?.first_after(after, |_| true);
        }
        let lower = after.map_or(Bound::Unbounded, Bound::Excluded);
        self.order.range((lower, Bound::Unbounded)).next().copied()
    }

    /// True when `key` is an available message.
    pub fn is_available(&self, key: MsgKey) -> bool {
        self.order.contains(&key)
    }

    /// Removes every available message; returns how many.
    pub fn clear_available(&mut self) -> u64 {
        let keys: Vec<MsgKey> = std::mem::take(&mut self.order).into_iter().collect();
        self.by_msg_id.clear();
        self.by_correl_id.clear();
        for k in &keys {
            if let Some(m) = self.msgs.remove(&k.seq) {
                self.account(&m, false);
                self.forget_spilled(&m);
                self.note(&m);
            }
        }
        keys.len() as u64
    }

    /// Put time of the oldest available message: looks at the head of each priority.
    pub fn oldest_put_ms(&self) -> Option<u64> {
        let mut oldest: Option<u64> = None;
        let mut from = Bound::Unbounded;
        while let Some(k) = self.order.range((from, Bound::Unbounded)).next() {
            if let Some(m) = self.msgs.get(&k.seq) {
                oldest = Some(oldest.map_or(m.put_ms, |o| o.min(m.put_ms)));
            }
            from = Bound::Excluded(MsgKey {
                rank: k.rank,
                seq: u64::MAX,
            });
        }
        oldest
    }
}

/// The live state of a local queue: messages, waiters and the counters QSTATUS shows.
#[derive(Debug, Default)]
pub(crate) struct LocalQueue {
    pub store: MessageStore,
    pub waiters: Waiters,
    /// Async consumers registered on the queue, indexed by their id criteria.
    pub consumers: crate::consumer_index::QueueConsumers,
    /// IPPROCS.
    pub open_input: u32,
    /// Handles open with INPUT_EXCLUSIVE (0 or 1).
    pub open_exclusive: u32,
    /// OPPROCS.
    pub open_output: u32,
    /// Handles of any kind open on the queue (directly or through an alias).
    pub open_handles: u32,
    /// UNCOM: uncommitted puts and gets.
    pub uncommitted: u64,
    /// LPUT, ms.
    pub last_put_ms: Option<u64>,
    /// LGET, ms.
    pub last_get_ms: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(store: &mut MessageStore, rank: u8, correl: u8) -> MsgKey {
        let key = store.next_key(rank);
        let mut md = MessageDescriptor::default();
        md.msg_id[0] = 1;
        md.msg_id[23] = key.seq as u8;
        md.correl_id[0] = correl;
        store.insert(StoredMsg {
            key,
            md,
            body: Body::default(),
            properties: Bytes::new(),
            put_ms: key.seq,
            expires_at: None,
            state: MsgState::Available,
        });
        key
    }

    #[test]
    fn order_is_rank_then_seq() {
        let mut s = MessageStore::default();
        let a = msg(&mut s, 5, 0);
        let b = msg(&mut s, 0, 0);
        let c = msg(&mut s, 5, 0);
        let any = Criteria::default();
        assert_eq!(s.first(&any, None), Some(b));
        assert_eq!(s.first(&any, Some(b)), Some(a));
        assert_eq!(s.first(&any, Some(a)), Some(c));
        assert_eq!(s.oldest_put_ms(), Some(0));
    }

    #[test]
    fn correl_index_tracks_state() {
        let mut s = MessageStore::default();
        let a = msg(&mut s, 0, 7);
        let b = msg(&mut s, 0, 7);
        let c = Criteria {
            msg_id: None,
            correl_id: Some({
                let mut x = [0; 24];
                x[0] = 7;
                x
            }),
        };
        assert_eq!(s.first(&c, None), Some(a));
        s.set_state(a.seq, MsgState::UncommittedGet(ConnId(1)));
        assert_eq!(s.first(&c, None), Some(b));
        assert_eq!(s.depth(), 2);
        s.set_state(a.seq, MsgState::Available);
        assert_eq!(s.first(&c, None), Some(a));
        s.remove(a.seq);
        s.remove(b.seq);
        assert_eq!(s.first(&c, None), None);
        assert!(s.by_correl_id.is_empty());
    }
}
