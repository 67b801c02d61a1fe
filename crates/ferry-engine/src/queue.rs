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
//!
//! An available message whose body is only in the queue file is kept in compact form
//! (`crate::filed_message`), so a deep queue costs a few hundred bytes a message;
//! [`MessageStore::get`] hands out a copy in full of such a message, and anything that
//! changes it thaws it in place first.

use crate::body::Body;
use crate::browse_marks::BrowseMarks;
use crate::clock::Timestamp;
use crate::connection::InputMode;
use crate::connection::{ConnId, Hobj};
use crate::consumer::ConsumerId;
use crate::filed_message::FiledMessage;
use crate::group::{GroupId, GroupMatch, GroupTally, GroupWaiters};
use crate::waiters::Waiters;
use bytes::Bytes;
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{CorrelId, MessageDescriptor, MsgId, OpenOptions, ReasonCode};
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
    /// Locked by a browse with MQGMO_LOCK on a handle (`crate::browse_lock`): only
    /// that handle sees it until it is unlocked or got.
    Locked(ConnId, Hobj),
    /// Backed out onto a queue with a redelivery delay (BODELAY): committed but hidden
    /// from gets, browses and consumers until `crate::redelivery_delay` releases it.
    Delayed,
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
    /// A copy of a persistent publication kept on a temporary dynamic queue (a managed
    /// non-durable subscription's): stored, and never logged, as non-persistent, since
    /// the queue cannot outlive a restart; delivered as the persistent message it was
    /// published as.
    pub delivered_persistent: bool,
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
            delivered_persistent: false,
        }
    }

    /// True when the message has expired at `now`.
    pub fn expired(&self, now: Timestamp) -> bool {
        expired_at(self.expires_at, now)
    }
}

/// What a get looks for: `None` fields match anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Criteria {
    pub msg_id: Option<MsgId>,
    pub correl_id: Option<CorrelId>,
    /// GroupId / MsgSeqNumber / Offset (`crate::group`); `None` for most gets.
    pub group: Option<GroupMatch>,
}

impl Criteria {
    /// True when `md` fits.
    pub fn matches(&self, md: &MessageDescriptor) -> bool {
        self.msg_id.is_none_or(|m| m == md.msg_id)
            && self.correl_id.is_none_or(|c| c == md.correl_id)
            && self.group.is_none_or(|g| g.matches(md))
    }
}

/// The keys of available messages sharing one id: usually one, so no allocation (and
/// the rare set is boxed, so an index entry stays small in a deep queue).
#[derive(Clone, Debug)]
enum IdSet {
    One(MsgKey),
    #[expect(
        clippy::box_collection,
        reason = "boxed, the set makes IdSet 24 bytes instead of 32 in every index entry"
    )]
    Many(Box<BTreeSet<MsgKey>>),
}

impl IdSet {
    fn insert(&mut self, k: MsgKey) {
        match self {
            IdSet::One(o) if *o == k => {}
            IdSet::One(o) => {
                let mut s = BTreeSet::new();
                s.insert(*o);
                s.insert(k);
                *self = IdSet::Many(Box::new(s));
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

    /// Every key in the set.
    fn keys(&self) -> Box<dyn Iterator<Item = MsgKey> + '_> {
        match self {
            IdSet::One(k) => Box::new(std::iter::once(*k)),
            IdSet::Many(s) => Box::new(s.iter().copied()),
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

/// A stored message: in full, or in compact form once its body is in the queue file
/// (`crate::filed_message`). Boxed either way: a deep queue's table then holds 16 bytes
/// per message, so growing it (a rehash that moves every entry) stays cheap — inline
/// 480-byte messages made each doubling of a million-message queue stall the queue
/// manager for about half a second.
#[derive(Debug)]
enum Slot {
    Full(Box<StoredMsg>),
    Filed(Box<FiledMessage>),
}

impl Slot {
    /// `m` in compact form when it can take it.
    fn new(m: Box<StoredMsg>) -> Slot {
        if m.state == MsgState::Available && !m.body.is_resident() && !stays_in_full(&m.md) {
            match FiledMessage::freeze(m) {
                Ok(f) => Slot::Filed(f),
                Err(m) => Slot::Full(m),
            }
        } else {
            Slot::Full(m)
        }
    }

    fn view(&self) -> MsgRef<'_> {
        match self {
            Slot::Full(m) => MsgRef::Borrowed(m),
            Slot::Filed(f) => MsgRef::Thawed(Box::new(f.thaw())),
        }
    }

    fn into_full(self) -> Box<StoredMsg> {
        match self {
            Slot::Full(m) => m,
            Slot::Filed(f) => Box::new(f.thaw()),
        }
    }

    /// The message in full, thawed in place if it was filed.
    fn full_mut(&mut self) -> &mut StoredMsg {
        if let Slot::Filed(f) = self {
            *self = Slot::Full(Box::new(f.thaw()));
        }
        match self {
            Slot::Full(m) => m,
            Slot::Filed(_) => unreachable!("thawed above"),
        }
    }

    fn key(&self) -> MsgKey {
        match self {
            Slot::Full(m) => m.key,
            Slot::Filed(f) => f.key(),
        }
    }

    fn msg_id(&self) -> MsgId {
        match self {
            Slot::Full(m) => m.md.msg_id,
            Slot::Filed(f) => f.msg_id(),
        }
    }

    fn correl_id(&self) -> CorrelId {
        match self {
            Slot::Full(m) => m.md.correl_id,
            Slot::Filed(f) => f.correl_id(),
        }
    }

    /// The GroupId (a filed message never has one: grouped messages stay in full).
    fn group_id(&self) -> GroupId {
        match self {
            Slot::Full(m) => m.md.group_id,
            Slot::Filed(_) => NONE_ID,
        }
    }

    /// The descriptor and body length of a grouped message, counted in the group tally
    /// while it is committed (`None` for the rest, filed messages included).
    fn grouped(&self) -> Option<(&MessageDescriptor, usize)> {
        match self {
            Slot::Full(m)
                if m.md.is_grouped() && !matches!(m.state, MsgState::UncommittedPut(_)) =>
            {
                Some((&m.md, m.body.len()))
            }
            _ => None,
        }
    }

    fn put_ms(&self) -> u64 {
        match self {
            Slot::Full(m) => m.put_ms,
            Slot::Filed(f) => f.put_ms(),
        }
    }

    fn expires_at(&self) -> Option<u64> {
        match self {
            Slot::Full(m) => m.expires_at,
            Slot::Filed(f) => f.expires_at(),
        }
    }

    fn is_persistent(&self) -> bool {
        match self {
            Slot::Full(m) => m.md.is_persistent(),
            Slot::Filed(f) => f.is_persistent(),
        }
    }

    fn state(&self) -> MsgState {
        match self {
            Slot::Full(m) => m.state,
            Slot::Filed(_) => MsgState::Available,
        }
    }

    /// The body's length, whether it is in memory, and the properties' length.
    fn sizes(&self) -> (usize, bool, usize) {
        match self {
            Slot::Full(m) => (m.body.len(), m.body.is_resident(), m.properties.len()),
            Slot::Filed(f) => (f.body_len(), false, f.properties_len()),
        }
    }
}

/// True when a message must stay in full even with its body in the queue file: a
/// grouped one, whose fields the group index and tally read (`crate::group`).
fn stays_in_full(md: &MessageDescriptor) -> bool {
    md.is_grouped() || md.group_id != NONE_ID
}

/// True when a message that expires at `at` has expired at `now` (as
/// [`StoredMsg::expired`]).
fn expired_at(at: Option<u64>, now: Timestamp) -> bool {
    at.is_some_and(|e| e <= now.0)
}

/// A stored message as [`MessageStore::get`] gives it: borrowed when the store keeps it
/// in full, a copy in full when it keeps it compact. Two words, so the common case moves
/// no more than a reference.
#[derive(Debug)]
pub(crate) enum MsgRef<'a> {
    Borrowed(&'a StoredMsg),
    Thawed(Box<StoredMsg>),
}

impl std::ops::Deref for MsgRef<'_> {
    type Target = StoredMsg;

    fn deref(&self) -> &StoredMsg {
        match self {
            MsgRef::Borrowed(m) => m,
            MsgRef::Thawed(m) => m,
        }
    }
}

/// Messages of one local queue with their order and indexes.
#[derive(Debug, Default)]
pub(crate) struct MessageStore {
    msgs: HashMap<u64, Slot>,
    order: BTreeSet<MsgKey>,
    by_msg_id: HashMap<MsgId, IdSet>,
    by_correl_id: HashMap<CorrelId, IdSet>,
    /// Available messages with a GroupId (empty while no groups are used).
    by_group_id: HashMap<GroupId, IdSet>,
    /// Which groups are wholly on the queue (`crate::group`).
    pub groups: GroupTally,
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
    /// Expired messages a get or consumer discarded that ask for an expiration report,
    /// until the queue manager sends it (`crate::report`).
    pub expired_for_report: Vec<StoredMsg>,
    /// The lowest and highest depth since [`MessageStore::take_depth_range`] last
    /// asked (QMinDepth and QMaxDepth of MQ's queue statistics messages).
    depth_range: (usize, usize),
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
    /// Messages numbered from here on appeared since the last checkpoint (or since the
    /// restart), so no queue file holds them yet: the next arrival number when the last
    /// checkpoint was taken, or when restart recovery ended (a crash may leave a file
    /// ahead of the log, holding any message numbered before).
    pub interval_start: u64,
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

/// `counter - n` for a byte count that must not go below zero: a debug build panics
/// naming `what`; a release build keeps 0 rather than wrap.
pub(crate) fn subtract(counter: u64, n: u64, what: &str) -> u64 {
    counter.checked_sub(n).unwrap_or_else(|| {
        debug_assert!(false, "{what}: {counter} - {n} would go below zero");
        0
    })
}

/// Stores deeper than this are not scanned by [`MessageStore::check_invariants`] (it
/// runs before and after every call in debug builds: a scan of a deep queue per call
/// makes filling a queue quadratic, and a debug server filled with 8,000 messages took
/// minutes at 4,096). Their O(1) checks still run.
const SCAN_LIMIT: usize = 256;

impl MessageStore {
    /// Messages held by units of work (uncommitted puts and gets), or `None` when the
    /// store is too deep to count them on every call.
    pub fn count_uncommitted(&self) -> Option<u64> {
        (self.msgs.len() <= SCAN_LIMIT).then(|| {
            self.msgs
                .values()
                .filter(|m| {
                    matches!(
                        m.state(),
                        MsgState::UncommittedPut(_) | MsgState::UncommittedGet(_)
                    )
                })
                .count() as u64
        })
    }

    /// Messages locked by browse handles, or `None` when the store is too deep to count
    /// them on every call.
    pub fn count_locked(&self) -> Option<u64> {
        (self.msgs.len() <= SCAN_LIMIT).then(|| {
            self.msgs
                .values()
                .filter(|m| matches!(m.state(), MsgState::Locked(..)))
                .count() as u64
        })
    }

    /// Messages waiting out a redelivery delay, or `None` when the store is too deep to
    /// count them (for invariant checks).
    pub fn count_delayed(&self) -> Option<usize> {
        (self.msgs.len() <= SCAN_LIMIT).then(|| {
            self.msgs
                .values()
                .filter(|m| m.state() == MsgState::Delayed)
                .count()
        })
    }

    /// Panics, naming `queue`, unless the store agrees with itself: exactly the
    /// available messages are in the get order and in the MsgId/CorrelId indexes (under
    /// their own ids), every message is filed under its own arrival number below the
    /// next one, and the byte counts equal the sums over the messages. Stores deeper
    /// than `SCAN_LIMIT` get only the checks that do not scan.
    pub fn check_invariants(&self, queue: &str) {
        assert!(
            self.expired_for_report.is_empty(),
            "{queue}: expired messages left without their expiration report"
        );
        assert!(
            self.order.len() <= self.msgs.len(),
            "{queue}: {} messages in the get order but {} stored",
            self.order.len(),
            self.msgs.len()
        );
        if self.msgs.len() > SCAN_LIMIT {
            return;
        }
        let mut available = 0usize;
        let mut grouped = std::collections::BTreeMap::new();
        let (mut with_msg_id, mut with_correl_id, mut with_group_id) = (0usize, 0usize, 0usize);
        let (mut bytes, mut resident_p, mut resident_np) = (0u64, 0u64, 0u64);
        for (seq, m) in &self.msgs {
            let key = m.key();
            assert_eq!(key.seq, *seq, "{queue}: message {seq} filed under {key:?}");
            assert!(
                *seq < self.next_seq,
                "{queue}: message {seq} at or past the next arrival number {}",
                self.next_seq
            );
            let (body, resident, properties) = m.sizes();
            bytes += (body + properties) as u64;
            if resident {
                if m.is_persistent() {
                    resident_p += body as u64;
                } else {
                    resident_np += body as u64;
                }
            }
            if let Some((md, _)) = m.grouped() {
                *grouped
                    .entry((md.group_id, md.msg_seq_number))
                    .or_insert(0u32) += 1;
            }
            let is_available = m.state() == MsgState::Available;
            assert_eq!(
                self.order.contains(&key),
                is_available,
                "{queue}: message {seq} in state {:?} {} the get order",
                m.state(),
                if is_available { "missing from" } else { "in" }
            );
            if is_available {
                available += 1;
                with_msg_id += usize::from(m.msg_id() != NONE_ID);
                with_correl_id += usize::from(m.correl_id() != NONE_ID);
                with_group_id += usize::from(m.group_id() != NONE_ID);
            }
        }
        assert_eq!(
            self.order.len(),
            available,
            "{queue}: get order holds {} keys for {available} available messages",
            self.order.len()
        );
        let indexed = |index: &HashMap<[u8; 24], IdSet>, id_of: fn(&Slot) -> [u8; 24]| {
            let mut n = 0usize;
            for (id, set) in index {
                for k in set.keys() {
                    let m = self.msgs.get(&k.seq);
                    assert!(
                        m.is_some_and(|m| id_of(m) == *id
                            && m.state() == MsgState::Available
                            && m.key() == k),
                        "{queue}: index entry {k:?} is not an available message with that id"
                    );
                    n += 1;
                }
            }
            n
        };
        assert_eq!(
            indexed(&self.by_msg_id, Slot::msg_id),
            with_msg_id,
            "{queue}: MsgId index does not hold every available message"
        );
        assert_eq!(
            indexed(&self.by_correl_id, Slot::correl_id),
            with_correl_id,
            "{queue}: CorrelId index does not hold every available message"
        );
        assert_eq!(
            indexed(&self.by_group_id, Slot::group_id),
            with_group_id,
            "{queue}: GroupId index does not hold every available message"
        );
        assert_eq!(
            self.groups.stored_counts(),
            grouped,
            "{queue}: the group tally does not count the grouped messages"
        );
        assert_eq!(self.bytes, bytes, "{queue}: stored bytes drifted");
        assert_eq!(
            (self.resident_persistent, self.resident_non_persistent),
            (resident_p, resident_np),
            "{queue}: resident bytes (persistent, non-persistent) drifted"
        );
        let pending: u64 = self.spilled.values().map(|p| u64::from(*p)).sum();
        assert_eq!(self.spill_pending, pending, "{queue}: spill bytes drifted");
    }

    /// Messages stored, available or not (CURDEPTH).
    pub fn depth(&self) -> usize {
        self.msgs.len()
    }

    /// Messages stored (committed or not, available or not) of priority `min_priority`
    /// or higher, counted up to `limit` (what triggering needs: TRIGMPRI's count).
    /// All of them, in O(1), when `min_priority` is 0; otherwise a scan that stops at
    /// `limit`. `ranked_by_priority`: the queue is MSGDLVSQ(PRIORITY), so a key's rank
    /// is its priority; on a FIFO queue each message's own priority is read.
    pub fn count_at_priority(
        &self,
        min_priority: i32,
        limit: usize,
        ranked_by_priority: bool,
    ) -> usize {
        if min_priority <= 0 {
            return self.msgs.len().min(limit);
        }
        let max_rank = 9 - min_priority.min(9);
        self.msgs
            .values()
            .filter(|m| {
                if ranked_by_priority {
                    i32::from(m.key().rank) <= max_rank
                } else {
                    m.view().md.priority >= min_priority
                }
            })
            .take(limit)
            .count()
    }

    /// The arrival number the next message will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
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

    /// Arrival numbers of the messages expired at `now` (restart removes them).
    pub fn expired(&self, now: Timestamp) -> Vec<u64> {
        self.msgs
            .iter()
            .filter(|(_, m)| expired_at(m.expires_at(), now))
            .map(|(seq, _)| *seq)
            .collect()
    }

    /// Calls `f` with every message's MsgId and CorrelId, in no particular order.
    pub fn for_each_id(&self, mut f: impl FnMut(&MsgId, &CorrelId)) {
        for m in self.msgs.values() {
            f(&m.msg_id(), &m.correl_id());
        }
    }

    /// Every message, in get order (a filed one thawed: its body stays on disk).
    pub fn sorted(&self) -> Vec<MsgRef<'_>> {
        let mut v: Vec<&Slot> = self.msgs.values().collect();
        v.sort_by_key(|m| m.key());
        v.into_iter().map(Slot::view).collect()
    }

    /// Bytes of persistent messages' bodies held in memory.
    pub fn resident_persistent_bytes(&self) -> u64 {
        self.resident_persistent
    }

    /// Bytes of non-persistent messages' bodies held in memory.
    pub fn resident_non_persistent_bytes(&self) -> u64 {
        self.resident_non_persistent
    }

    /// The resident-bytes counter a message's body counts in.
    fn counter(&mut self, persistent: bool) -> &mut u64 {
        if persistent {
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
    fn account(&mut self, m: &Slot, add: bool) {
        let (body, resident, properties) = m.sizes();
        let size = (body + properties) as u64;
        self.bytes = if add {
            self.bytes + size
        } else {
            subtract(self.bytes, size, "stored bytes")
        };
        if resident {
            let n = body as u64;
            let c = self.counter(m.is_persistent());
            *c = if add {
                *c + n
            } else {
                subtract(*c, n, "resident bytes")
            };
        }
    }

    /// Message `seq` leaves the store: a spilled one's record must leave the queue file
    /// (and one whose spill is not reported yet no longer frees anything).
    fn forget_spilled(&mut self, seq: u64) {
        if let Some(pending) = self.spilled.remove(&seq) {
            self.spill_pending = subtract(self.spill_pending, u64::from(pending), "spill bytes");
            self.spill_gone.push(seq);
        }
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
            let Some(Slot::Full(m)) = self.msgs.get(&k.seq) else {
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
        let Some(slot) = self.msgs.get_mut(&seq) else {
            return;
        };
        if slot.sizes().1 {
            return;
        }
        let m = slot.full_mut();
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
        match self.msgs.get_mut(&seq) {
            Some(Slot::Filed(f)) => f.relocate(record),
            Some(Slot::Full(m)) => {
                if let Body::Filed { record: r, .. } = &mut m.body {
                    *r = record.clone();
                }
            }
            None => {}
        }
    }

    /// Leaves the body of message `f.seq` in its queue file, if the message is still the
    /// one filed, available, and unchanged since its filing (`changed` = the sorted
    /// changes noted since); returns the bytes freed.
    pub fn leave_filed(&mut self, f: &crate::body::FiledBody, changed: &[u64]) -> u64 {
        let Some(Slot::Full(m)) = self.msgs.get(&f.seq) else {
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
        let mut m = match self.msgs.remove(&f.seq) {
            Some(Slot::Full(m)) => m,
            Some(other) => {
                self.msgs.insert(f.seq, other);
                return 0;
            }
            None => return 0,
        };
        let len = m.body.len();
        let persistent = m.md.is_persistent();
        m.body = Body::Filed {
            len,
            record: f.record.clone(),
        };
        // The compact form keeps a copy of the properties; so does a message left in
        // full: they may share one buffer with the body (a channel that copies both into
        // one allocation), and a copy of their own lets the body's memory go.
        let frozen = if stays_in_full(&m.md) {
            Err(m)
        } else {
            FiledMessage::freeze(m)
        };
        let slot = match frozen {
            Ok(filed) => Slot::Filed(filed),
            Err(mut m) => {
                if !m.properties.is_empty() {
                    m.properties = Bytes::copy_from_slice(&m.properties);
                }
                Slot::Full(m)
            }
        };
        self.msgs.insert(f.seq, slot);
        let c = self.counter(persistent);
        *c = subtract(*c, len as u64, "resident bytes");
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
        self.by_group_id.clear();
        self.groups.clear();
        self.filing = Filing::default();
        self.note_depth();
    }

    /// Notes a change to message `m` for the next checkpoint (persistent, committed).
    fn note(&mut self, m: &Slot) {
        if m.is_persistent() && !matches!(m.state(), MsgState::UncommittedPut(_)) {
            self.filing.changed.push(m.key().seq);
        }
    }

    /// Stores a message; available ones become findable (in compact form if the body is
    /// in the queue file: a delivery that failed puts such a message back).
    pub fn insert(&mut self, m: impl Into<Box<StoredMsg>>) {
        let m = Slot::new(m.into());
        self.note(&m);
        self.insert_quietly(m);
    }

    /// Stores a message read back from the queue file (no change to note); in compact
    /// form if its body stays there.
    pub fn insert_filed(&mut self, m: impl Into<Box<StoredMsg>>) {
        let m = Slot::new(m.into());
        self.next_seq = self.next_seq.max(m.key().seq.saturating_add(1));
        self.insert_quietly(m);
    }

    fn insert_quietly(&mut self, m: Slot) {
        self.account(&m, true);
        if let Some((md, len)) = m.grouped() {
            self.groups.added(md, len);
        }
        let available = m.state() == MsgState::Available;
        let (key, msg_id, correl_id, group_id) = (m.key(), m.msg_id(), m.correl_id(), m.group_id());
        if let Some(old) = self.msgs.insert(key.seq, m) {
            self.account(&old, false);
            if let Some((md, len)) = old.grouped() {
                self.groups.removed(md, len);
            }
        }
        if available {
            self.link(key, msg_id, correl_id, group_id);
        }
        self.note_depth();
    }

    /// Widens the depth range to the depth now.
    fn note_depth(&mut self) {
        let depth = self.msgs.len();
        self.depth_range = (self.depth_range.0.min(depth), self.depth_range.1.max(depth));
    }

    /// The lowest and highest depth since the previous call (or since the store was
    /// made); the range starts again from the depth now.
    pub fn take_depth_range(&mut self) -> (usize, usize) {
        let depth = self.msgs.len();
        let range = std::mem::replace(&mut self.depth_range, (depth, depth));
        debug_assert!(range.0 <= range.1, "depth range {range:?}");
        (range.0.min(depth), range.1.max(depth))
    }

    fn link(&mut self, key: MsgKey, msg_id: MsgId, correl_id: CorrelId, group_id: GroupId) {
        self.order.insert(key);
        if msg_id != NONE_ID {
            index_add(&mut self.by_msg_id, msg_id, key);
        }
        if correl_id != NONE_ID {
            index_add(&mut self.by_correl_id, correl_id, key);
        }
        if group_id != NONE_ID {
            index_add(&mut self.by_group_id, group_id, key);
        }
    }

    fn unlink(&mut self, key: MsgKey, msg_id: MsgId, correl_id: CorrelId, group_id: GroupId) {
        self.order.remove(&key);
        if msg_id != NONE_ID {
            index_remove(&mut self.by_msg_id, &msg_id, key);
        }
        if correl_id != NONE_ID {
            index_remove(&mut self.by_correl_id, &correl_id, key);
        }
        if group_id != NONE_ID {
            index_remove(&mut self.by_group_id, &group_id, key);
        }
    }

    /// The available messages of group `group_id` (for COMPLETE_MSG's reassembly).
    pub fn group_members(&self, group_id: &GroupId) -> Vec<MsgKey> {
        self.by_group_id
            .get(group_id)
            .map(|s| s.keys().collect())
            .unwrap_or_default()
    }

    /// The message with arrival number `seq`.
    /// A message in compact form comes back as a copy in full.
    pub fn get(&self, seq: u64) -> Option<MsgRef<'_>> {
        self.msgs.get(&seq).map(Slot::view)
    }

    /// True when message `seq` is stored.
    pub fn contains(&self, seq: u64) -> bool {
        self.msgs.contains_key(&seq)
    }

    /// True when message `seq` is stored, persistent and committed (what checkpoints
    /// carry).
    pub fn is_committed_persistent(&self, seq: u64) -> bool {
        self.msgs
            .get(&seq)
            .is_some_and(|m| m.is_persistent() && !matches!(m.state(), MsgState::UncommittedPut(_)))
    }

    /// True when message `seq` is stored and not expired at `now`.
    pub fn is_live(&self, seq: u64, now: Timestamp) -> bool {
        self.msgs
            .get(&seq)
            .is_some_and(|m| !expired_at(m.expires_at(), now))
    }

    /// Sets a stored message's BackoutCount (it is not part of any index).
    pub fn set_backout_count(&mut self, seq: u64, count: i32) {
        if let Some(m) = self.msgs.get_mut(&seq) {
            let m = m.full_mut();
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
        let m = m.full_mut();
        let was = m.state == MsgState::Available;
        let now = state == MsgState::Available;
        let committed = matches!(m.state, MsgState::UncommittedPut(_))
            && !matches!(state, MsgState::UncommittedPut(_));
        m.state = state;
        let (key, msg_id, correl_id, group_id) =
            (m.key, m.md.msg_id, m.md.correl_id, m.md.group_id);
        if committed && m.md.is_persistent() {
            self.filing.changed.push(seq);
        }
        if committed && m.md.is_grouped() {
            let (md, len) = (m.md, m.body.len());
            self.groups.added(&md, len);
        }
        match (was, now) {
            (false, true) => self.link(key, msg_id, correl_id, group_id),
            (true, false) => self.unlink(key, msg_id, correl_id, group_id),
            _ => {}
        }
    }

    /// Removes a message whatever its state (boxed as it was stored: a message that is
    /// put back, e.g. held for an unsettled delivery, is not copied twice).
    pub fn remove(&mut self, seq: u64) -> Option<Box<StoredMsg>> {
        let m = self.msgs.remove(&seq)?;
        self.note_depth();
        self.account(&m, false);
        self.forget_spilled(seq);
        self.note(&m);
        if let Some((md, len)) = m.grouped() {
            self.groups.removed(md, len);
        }
        if m.state() == MsgState::Available {
            self.unlink(m.key(), m.msg_id(), m.correl_id(), m.group_id());
        }
        Some(m.into_full())
    }

    /// The first available message after `after` (from the start when `None`) that fits
    /// `c`: an index lookup, never a scan of the queue.
    pub fn first(&self, c: &Criteria, after: Option<MsgKey>) -> Option<MsgKey> {
        // Group criteria (rare) are checked on the candidates the ids give.
        let in_group = |k: MsgKey| {
            c.group.is_none_or(|g| {
                self.msgs
                    .get(&k.seq)
                    .is_some_and(|m| g.matches(&m.view().md))
            })
        };
        if let Some(mid) = c.msg_id {
            let set = self.by_msg_id.get(&mid)?;
            return set.first_after(after, |k| {
                c.correl_id
                    .is_none_or(|cid| self.msgs.get(&k.seq).is_some_and(|m| m.correl_id() == cid))
                    && in_group(k)
            });
        }
        if let Some(cid) = c.correl_id {
            return self.by_correl_id.get(&cid)?.first_after(after, in_group);
        }
        if let Some(gid) = c.group.and_then(|g| g.group_id) {
            return self.by_group_id.get(&gid)?.first_after(after, in_group);
        }
        let lower = after.map_or(Bound::Unbounded, Bound::Excluded);
        let mut rest = self.order.range((lower, Bound::Unbounded)).copied();
        if c.group.is_some() {
            return rest.find(|k| in_group(*k));
        }
        rest.next()
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
        self.by_group_id.clear();
        for k in &keys {
            if let Some(m) = self.msgs.remove(&k.seq) {
                if let Some((md, len)) = m.grouped() {
                    self.groups.removed(md, len);
                }
                self.account(&m, false);
                self.forget_spilled(k.seq);
                self.note(&m);
            }
        }
        self.note_depth();
        keys.len() as u64
    }

    /// Put time of the oldest available message: looks at the head of each priority.
    pub fn oldest_put_ms(&self) -> Option<u64> {
        let mut oldest: Option<u64> = None;
        let mut from = Bound::Unbounded;
        while let Some(k) = self.order.range((from, Bound::Unbounded)).next() {
            if let Some(m) = self.msgs.get(&k.seq) {
                let put_ms = m.put_ms();
                oldest = Some(oldest.map_or(put_ms, |o| o.min(put_ms)));
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
///
/// The counters are private: each changes only through the method that records the
/// event it counts (a handle opened or closed, a message entering or leaving a unit of
/// work), which checks it cannot go below zero; [`LocalQueue::check_invariants`] checks
/// them against the messages and handles they count.
#[derive(Debug, Default)]
pub(crate) struct LocalQueue {
    pub store: MessageStore,
    pub waiters: Waiters,
    /// Async consumers registered on the queue, indexed by their id criteria.
    pub consumers: crate::consumer_index::QueueConsumers,
    /// Browse marks of the handles on the queue (`crate::browse_marks`); `None` while
    /// no handle has marked anything, so a get pays one check.
    pub marks: Option<Box<BrowseMarks>>,
    /// Gets with group options waiting on the queue (`crate::group`).
    pub group_waiters: GroupWaiters,
    /// IPPROCS.
    open_input: u32,
    /// Handles open with INPUT_EXCLUSIVE (0 or 1).
    open_exclusive: u32,
    /// OPPROCS.
    open_output: u32,
    /// Handles open with MQOO_CO_OP: the cooperating set of `marks`.
    open_co_op: u32,
    /// Handles of any kind open on the queue (directly or through an alias).
    open_handles: u32,
    /// UNCOM: messages on the queue held by a unit of work (uncommitted puts and gets).
    uncommitted: u32,
    /// LPUT, ms.
    pub last_put_ms: Option<u64>,
    /// LGET, ms.
    pub last_get_ms: Option<u64>,
    /// Statistics (STATQ): puts, gets and opens counted as they happen.
    pub stats: ferry_monitoring::QueueCounters,
}

/// `counter - 1`, which must not go below zero: a debug build panics naming `what`; a
/// release build keeps 0 rather than wrap (a counter is then wrong, but the queue
/// manager goes on).
fn decrement(counter: u32, what: &str) -> u32 {
    counter.checked_sub(1).unwrap_or_else(|| {
        debug_assert!(false, "{what} would go below zero");
        0
    })
}

/// `counter + 1`; a u32 cannot overflow in practice (handles and uncommitted messages
/// are bounded by MAXHANDS and MAXUMSGS per connection), but it is checked all the same.
fn increment(counter: u32, what: &str) -> u32 {
    counter.checked_add(1).unwrap_or_else(|| {
        debug_assert!(false, "{what} would overflow");
        u32::MAX
    })
}

impl LocalQueue {
    /// IPPROCS: handles open for input.
    pub fn open_input(&self) -> u32 {
        self.open_input
    }

    /// True when a handle has the queue open for exclusive input.
    pub fn open_exclusive(&self) -> bool {
        self.open_exclusive > 0
    }

    /// OPPROCS: handles open for output.
    pub fn open_output(&self) -> u32 {
        self.open_output
    }

    /// Handles of any kind open on the queue.
    pub fn open_handles(&self) -> u32 {
        self.open_handles
    }

    /// Handles open with MQOO_CO_OP (the set that shares cooperative browse marks).
    pub fn open_co_op(&self) -> u32 {
        self.open_co_op
    }

    /// UNCOM: messages on the queue held by units of work.
    pub fn uncommitted(&self) -> u32 {
        self.uncommitted
    }

    /// A handle opened the queue with `options` (for `input`).
    pub fn handle_opened(&mut self, input: InputMode, options: OpenOptions) {
        let output = options.contains(OpenOptions::OUTPUT);
        if options.contains(OpenOptions::CO_OP) {
            self.open_co_op = increment(self.open_co_op, "cooperating handles");
        }
        self.open_handles = increment(self.open_handles, "open handles");
        self.stats.opens += 1;
        if input != InputMode::None {
            self.open_input = increment(self.open_input, "IPPROCS");
        }
        if input == InputMode::Exclusive {
            debug_assert_eq!(self.open_exclusive, 0, "two exclusive input handles");
            self.open_exclusive = increment(self.open_exclusive, "exclusive handles");
        }
        if output {
            self.open_output = increment(self.open_output, "OPPROCS");
        }
    }

    /// A handle that [`LocalQueue::handle_opened`] counted closed.
    pub fn handle_closed(&mut self, input: InputMode, options: OpenOptions) {
        let output = options.contains(OpenOptions::OUTPUT);
        self.stats.closes += 1;
        if options.contains(OpenOptions::CO_OP) {
            self.open_co_op = decrement(self.open_co_op, "cooperating handles");
        }
        self.open_handles = decrement(self.open_handles, "open handles");
        if input != InputMode::None {
            self.open_input = decrement(self.open_input, "IPPROCS");
        }
        if input == InputMode::Exclusive {
            self.open_exclusive = decrement(self.open_exclusive, "exclusive handles");
        }
        if output {
            self.open_output = decrement(self.open_output, "OPPROCS");
        }
    }

    /// A message on this queue joined a unit of work (put or got under syncpoint).
    pub fn joined_uow(&mut self) {
        self.uncommitted = increment(self.uncommitted, "UNCOM");
    }

    /// A message that [`LocalQueue::joined_uow`] counted left its unit of work
    /// (committed or backed out).
    pub fn left_uow(&mut self) {
        self.uncommitted = decrement(self.uncommitted, "UNCOM");
    }

    /// Panics, naming the queue, unless the queue's counters agree with its messages:
    /// UNCOM equals the messages in an uncommitted state, and the store's own
    /// invariants hold ([`MessageStore::check_invariants`]). Handle counts are checked
    /// against the connections' handles by [`crate::QueueManager::check_invariants`].
    pub fn check_invariants(&self, queue: &str) {
        assert!(
            self.open_exclusive <= 1 && self.open_exclusive <= self.open_input,
            "{queue}: {} exclusive of {} input handles",
            self.open_exclusive,
            self.open_input
        );
        assert!(
            self.open_input <= self.open_handles && self.open_output <= self.open_handles,
            "{queue}: {} input and {} output of {} handles",
            self.open_input,
            self.open_output,
            self.open_handles
        );
        if let Some(held) = self.store.count_uncommitted() {
            assert_eq!(
                u64::from(self.uncommitted),
                held,
                "{queue}: UNCOM {} but {held} messages are in units of work",
                self.uncommitted
            );
        }
        self.store.check_invariants(queue);
    }
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
            delivered_persistent: false,
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
    fn a_store_agrees_with_itself_through_state_changes() {
        let mut s = MessageStore::default();
        let a = msg(&mut s, 0, 7);
        let b = msg(&mut s, 3, 7);
        s.check_invariants("Q");
        s.set_state(a.seq, MsgState::UncommittedGet(ConnId(1)));
        s.check_invariants("Q");
        assert_eq!(s.count_uncommitted(), Some(1));
        s.set_state(a.seq, MsgState::Available);
        s.remove(b.seq);
        s.check_invariants("Q");
        assert_eq!(s.count_uncommitted(), Some(0));
    }

    #[test]
    #[should_panic(expected = "stored bytes drifted")]
    fn a_drifted_byte_count_is_caught() {
        let mut s = MessageStore::default();
        msg(&mut s, 0, 0);
        s.bytes += 1;
        s.check_invariants("Q");
    }

    #[test]
    #[should_panic(expected = "missing from the get order")]
    fn a_message_missing_from_the_get_order_is_caught() {
        let mut s = MessageStore::default();
        let a = msg(&mut s, 0, 0);
        s.order.remove(&a);
        s.check_invariants("Q");
    }

    #[test]
    #[should_panic(expected = "UNCOM 1 but 0 messages")]
    fn an_uncommitted_count_without_its_message_is_caught() {
        let mut q = LocalQueue::default();
        msg(&mut q.store, 0, 0);
        q.joined_uow();
        q.check_invariants("Q");
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "UNCOM would go below zero")]
    fn leaving_a_unit_of_work_never_entered_panics() {
        LocalQueue::default().left_uow();
    }

    #[test]
    #[cfg(debug_assertions)]
    #[should_panic(expected = "open handles would go below zero")]
    fn closing_a_handle_never_opened_panics() {
        LocalQueue::default().handle_closed(InputMode::Shared, OpenOptions::empty());
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
            group: None,
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

#[cfg(test)]
mod filed_tests {
    use super::*;
    use crate::body::{FiledBody, FiledRecord};

    #[derive(Debug)]
    struct Disk(Bytes);
    impl FiledRecord for Disk {
        fn read_body(&self) -> Result<Bytes, ReasonCode> {
            Ok(self.0.clone())
        }
    }

    /// A store holding one persistent message whose body has just been filed.
    fn filed_store(correl: u8) -> (MessageStore, MsgKey, Rc<dyn FiledRecord>) {
        let mut s = MessageStore::default();
        let key = s.next_key(4);
        let mut md = MessageDescriptor::default();
        md.msg_id[0] = 9;
        md.correl_id[0] = correl;
        md.persistence = ferry_mqi::descriptor::persistence::PERSISTENT;
        s.insert(StoredMsg {
            key,
            md,
            body: Body::Resident(Bytes::from_static(b"body")),
            properties: Bytes::from_static(b"props"),
            put_ms: 5,
            expires_at: None,
            state: MsgState::Available,
            delivered_persistent: false,
        });
        let record: Rc<dyn FiledRecord> = Rc::new(Disk(Bytes::from_static(b"body")));
        let f = FiledBody {
            seq: key.seq,
            msg_id: md.msg_id,
            put_ms: 5,
            record: record.clone(),
        };
        assert_eq!(s.leave_filed(&f, &[]), 4);
        (s, key, record)
    }

    #[test]
    fn a_filed_message_is_kept_compact_and_found_by_its_ids() {
        let (s, key, _) = filed_store(7);
        assert!(matches!(s.msgs.get(&key.seq), Some(Slot::Filed(_))));
        let mut mid = NONE_ID;
        mid[0] = 9;
        let mut cid = NONE_ID;
        cid[0] = 7;
        let by_both = Criteria {
            msg_id: Some(mid),
            correl_id: Some(cid),
            group: None,
        };
        assert_eq!(s.first(&by_both, None), Some(key));
        let m = s.get(key.seq).expect("stored");
        assert!(matches!(m, MsgRef::Thawed(_)));
        assert_eq!((m.md.correl_id, &m.properties[..]), (cid, &b"props"[..]));
        assert_eq!(
            m.body.load().expect("read back"),
            Bytes::from_static(b"body")
        );
        assert_eq!(s.bytes(), 9);
        assert_eq!(s.resident_persistent_bytes(), 0);
        assert_eq!(s.oldest_put_ms(), Some(5));
    }

    #[test]
    fn a_filed_message_taken_under_syncpoint_is_kept_in_full_until_it_is_back() {
        let (mut s, key, _) = filed_store(0);
        s.make_resident(key.seq, &Bytes::from_static(b"body"));
        s.set_state(key.seq, MsgState::UncommittedGet(ConnId(1)));
        assert!(matches!(s.msgs.get(&key.seq), Some(Slot::Full(_))));
        assert_eq!(s.first(&Criteria::default(), None), None);
        s.set_state(key.seq, MsgState::Available);
        assert_eq!(s.first(&Criteria::default(), None), Some(key));
        assert_eq!(s.resident_persistent_bytes(), 4);
        let m = s.remove(key.seq).expect("stored");
        assert!(m.body.is_resident());
        assert_eq!((s.bytes(), s.depth()), (0, 0));
        assert!(s.by_msg_id.is_empty());
    }

    #[test]
    fn a_filed_message_follows_its_record_and_keeps_a_new_backout_count() {
        let (mut s, key, _) = filed_store(0);
        let moved: Rc<dyn FiledRecord> = Rc::new(Disk(Bytes::from_static(b"moved")));
        s.relocate(key.seq, &moved);
        let got = s.get(key.seq).expect("stored").body.load();
        // The length recorded at filing no longer matches: the read is refused.
        assert_eq!(got, Err(ReasonCode::UnexpectedError));
        s.set_backout_count(key.seq, 3);
        assert_eq!(s.get(key.seq).expect("stored").md.backout_count, 3);
        assert_eq!(s.filing.changed, vec![key.seq, key.seq]);
    }
}
