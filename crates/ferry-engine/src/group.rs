//! Message groups and segments (MQMD version 2: GroupId, MsgSeqNumber, Offset,
//! MsgFlags), as MQ has them.
//!
//! * **Put** ([`plan_put`]): MsgFlags are checked; with MQPMO_LOGICAL_ORDER the queue
//!   manager numbers the messages of a handle's group itself (a new unique GroupId at
//!   the first, MsgSeqNumber and Offset after) and checks the sequence (2241, 2242,
//!   2245); without it the application's numbers are range-checked (2250, 2251) and a
//!   grouped message without a GroupId gets a new one.
//! * **Get** ([`plan_get`]): MQMO_MATCH_GROUP_ID / MSG_SEQ_NUMBER / OFFSET match the
//!   fields ([`GroupMatch`]); MQGMO_LOGICAL_ORDER walks one group at a time per handle
//!   (first message, then the next MsgSeqNumber, segments by Offset); ALL_MSGS_AVAILABLE
//!   and ALL_SEGMENTS_AVAILABLE hide groups and logical messages not yet wholly on the
//!   queue ([`GroupTally`]); COMPLETE_MSG returns the segments of a logical message as
//!   one message.
//! * **Waiting**: a get with any of those options waits in [`GroupWaiters`], not among
//!   the plain waiters: whatever message becomes available, such a get is run again
//!   ([`crate::QueueManager::wake_group_waiters`]), since the message it can take (the
//!   first of a group that just became complete) need not be the one that arrived.
//!
//! Messages that are not grouped pay nothing beyond a flag test: the group index and the
//! tally hold grouped messages only, and a get without group options takes the old path.
//! Grouped messages are kept in full in memory (never in the compact filed form), so
//! their fields are at hand for the tally and the index.

use crate::clock::Timestamp;
use crate::connection::ConnId;
use crate::effects::{Effect, Effects};
use crate::msgid::IdGenerator;
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{Criteria, MessageStore, MsgKey, StoredMsg};
use bytes::{Bytes, BytesMut};
use ferry_mqi::descriptor::{msg_flags, GROUP_ID_NONE, MAX_MSG_SEQ_NUMBER};
use ferry_mqi::{
    CompCode, GetOptionFlags, MatchOptions, MessageDescriptor, MqError, PutOptionFlags, ReasonCode,
};
use foldhash::HashMap;
use std::collections::BTreeMap;

/// A 24-byte group identifier (MQBYTE24); all zeros is MQGI_NONE.
pub type GroupId = [u8; 24];

/// The group part of a get's criteria: `None` fields match anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct GroupMatch {
    pub group_id: Option<GroupId>,
    pub msg_seq_number: Option<i32>,
    pub offset: Option<i32>,
}

impl GroupMatch {
    /// True when `md` fits.
    pub fn matches(&self, md: &MessageDescriptor) -> bool {
        self.group_id.is_none_or(|g| g == md.group_id)
            && self.msg_seq_number.is_none_or(|s| s == md.msg_seq_number)
            && self.offset.is_none_or(|o| o == md.offset)
    }
}

/// The group criteria of the caller's descriptor under match options `mo` (MQ matches a
/// GroupId only when it is not MQGI_NONE; MsgSeqNumber and Offset always).
pub(crate) fn group_match(md: &MessageDescriptor, mo: MatchOptions) -> Option<GroupMatch> {
    if !mo.intersects(MatchOptions::GROUP_ID | MatchOptions::MSG_SEQ_NUMBER | MatchOptions::OFFSET)
    {
        return None;
    }
    let g = GroupMatch {
        group_id: (mo.contains(MatchOptions::GROUP_ID) && md.group_id != GROUP_ID_NONE)
            .then_some(md.group_id),
        msg_seq_number: mo
            .contains(MatchOptions::MSG_SEQ_NUMBER)
            .then_some(md.msg_seq_number),
        offset: mo.contains(MatchOptions::OFFSET).then_some(md.offset),
    };
    (g != GroupMatch::default()).then_some(g)
}

/// The get options that make a get a group get (its own path and its own waiters).
const GROUP_GET_OPTIONS: GetOptionFlags = GetOptionFlags::LOGICAL_ORDER
    .union(GetOptionFlags::ALL_MSGS_AVAILABLE)
    .union(GetOptionFlags::ALL_SEGMENTS_AVAILABLE)
    .union(GetOptionFlags::COMPLETE_MSG);

/// True when a get with these options and match options takes the group path.
pub(crate) fn is_group_get(opts: GetOptionFlags, mo: MatchOptions) -> bool {
    opts.intersects(GROUP_GET_OPTIONS)
        || mo.intersects(
            MatchOptions::GROUP_ID | MatchOptions::MSG_SEQ_NUMBER | MatchOptions::OFFSET,
        )
}

/// A failure with `reason` (for the reasons that are warnings in other cases).
fn failed(reason: ReasonCode) -> MqError {
    MqError {
        comp: CompCode::Failed,
        reason,
    }
}

/// Where a handle is in a group it puts or gets in logical order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sequence {
    pub group_id: GroupId,
    /// MsgSeqNumber of the last logical message put or got.
    pub seq: i32,
    /// Offset of the next segment when `msg_open`.
    pub next_offset: i32,
    /// A segmented logical message is under way (its last segment not reached).
    pub msg_open: bool,
    /// The group is under way (its last message not reached).
    pub group_open: bool,
    /// Whether it runs under syncpoint (every message of it must).
    pub sync: bool,
}

impl Sequence {
    /// The sequence after a message with `md` and a body of `len` bytes; `None` when
    /// the group and its last logical message are complete.
    fn after(md: &MessageDescriptor, len: usize, sync: bool) -> Option<Sequence> {
        let msg_open = !md.is_last_segment();
        let in_group = md.msg_flags & (msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP) != 0;
        let group_open = in_group && md.msg_flags & msg_flags::LAST_MSG_IN_GROUP == 0;
        let next_offset = if msg_open {
            md.offset
                .saturating_add(i32::try_from(len).unwrap_or(i32::MAX))
        } else {
            0
        };
        (msg_open || group_open).then_some(Sequence {
            group_id: md.group_id,
            seq: md.msg_seq_number,
            next_offset,
            msg_open,
            group_open,
            sync,
        })
    }

    /// The criteria of the next message in logical order.
    fn next(&self) -> GroupMatch {
        GroupMatch {
            group_id: Some(self.group_id),
            msg_seq_number: Some(if self.msg_open {
                self.seq
            } else {
                self.seq + 1
            }),
            offset: Some(if self.msg_open { self.next_offset } else { 0 }),
        }
    }
}

/// A handle's logical-order state: the group it puts, the one it gets, the one it
/// browses (MQ keeps them apart).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct HandleGroups {
    pub put: Option<Sequence>,
    pub get: Option<Sequence>,
    pub browse: Option<Sequence>,
}

/// The warning MQCLOSE gives a handle left in the middle of a group it puts or gets in
/// logical order: 2242 MQRC_INCOMPLETE_MSG when a segmented message is under way (MQ
/// prefers it), 2241 MQRC_INCOMPLETE_GROUP when only the group is. Browsing is not
/// counted: it leaves nothing half done.
pub(crate) fn incomplete_on_close(groups: &HandleGroups) -> Option<ReasonCode> {
    let open = [groups.put, groups.get];
    if open.iter().flatten().any(|s| s.msg_open) {
        Some(ReasonCode::IncompleteMsg)
    } else if open.iter().flatten().any(|s| s.group_open) {
        Some(ReasonCode::IncompleteGroup)
    } else {
        None
    }
}

/// What a put does to the descriptor's group fields and to its handle, decided before
/// the put's other effects (nothing changes if the put fails).
#[derive(Clone, Copy, Debug)]
pub(crate) struct PutPlan {
    /// Generate a new GroupId for the message.
    new_group: bool,
    /// Group fields set by the queue manager (logical order).
    assigned: Option<(GroupId, i32, i32)>,
    /// The handle's logical-order state after the put is decided at apply time.
    logical: bool,
    sync: bool,
    len: usize,
    /// The warning the put completes with (2241/2242 leaving logical order mid-group).
    pub warning: Option<ReasonCode>,
}

/// Checks the group fields of a put of `md` (`len` bytes) on a handle in state `state`;
/// `None` when the message is not grouped and nothing is asked of the queue manager
/// (the common path: three integer tests).
pub(crate) fn plan_put(
    state: Option<&Sequence>,
    md: &MessageDescriptor,
    o: PutOptionFlags,
    sync: bool,
    len: usize,
) -> Result<Option<PutPlan>, MqError> {
    let logical = o.contains(PutOptionFlags::LOGICAL_ORDER);
    if md.msg_flags == 0 && !logical && state.is_none() {
        if !(1..=MAX_MSG_SEQ_NUMBER).contains(&md.msg_seq_number) {
            return Err(ReasonCode::MsgSeqNumberError.into());
        }
        if md.offset < 0 {
            return Err(ReasonCode::OffsetError.into());
        }
        return Ok(None);
    }
    if md.msg_flags & !msg_flags::ALL != 0 {
        return Err(ReasonCode::MsgFlagsError.into());
    }
    let segment = md.is_segment();
    if segment && !md.is_last_segment() && len == 0 {
        return Err(ReasonCode::SegmentLengthZero.into());
    }
    let grouped = md.is_grouped();
    let mut plan = PutPlan {
        new_group: false,
        assigned: None,
        logical,
        sync,
        len,
        warning: None,
    };
    if !logical {
        if !(1..=MAX_MSG_SEQ_NUMBER).contains(&md.msg_seq_number) {
            return Err(ReasonCode::MsgSeqNumberError.into());
        }
        if md.offset < 0 {
            return Err(ReasonCode::OffsetError.into());
        }
        plan.new_group = grouped && md.group_id == GROUP_ID_NONE;
        plan.warning = state.map(|s| {
            if s.msg_open {
                ReasonCode::IncompleteMsg
            } else {
                ReasonCode::IncompleteGroup
            }
        });
        return Ok(Some(plan));
    }
    let in_group = md.msg_flags & (msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP) != 0;
    match state {
        None => {
            plan.new_group = grouped;
            plan.assigned = Some((GROUP_ID_NONE, 1, 0));
        }
        Some(s) => {
            if s.sync != sync {
                return Err(failed(ReasonCode::InconsistentUow));
            }
            if s.msg_open {
                if !segment {
                    return Err(failed(ReasonCode::IncompleteMsg));
                }
                plan.assigned = Some((s.group_id, s.seq, s.next_offset));
            } else {
                if !in_group {
                    return Err(failed(ReasonCode::IncompleteGroup));
                }
                if s.seq >= MAX_MSG_SEQ_NUMBER {
                    return Err(ReasonCode::MsgSeqNumberError.into());
                }
                plan.assigned = Some((s.group_id, s.seq + 1, 0));
            }
        }
    }
    Ok(Some(plan))
}

impl PutPlan {
    /// Sets the descriptor's group fields (after every other check of the put passed)
    /// and returns the handle's logical-order state after it, when the put was in
    /// logical order (`keep` otherwise).
    pub fn apply(
        &self,
        md: &mut MessageDescriptor,
        ids: &mut IdGenerator,
        keep: Option<Sequence>,
    ) -> Option<Sequence> {
        if let Some((g, seq, offset)) = self.assigned {
            md.group_id = g;
            md.msg_seq_number = seq;
            md.offset = offset;
        }
        if self.new_group {
            md.group_id = ids.next_id();
        }
        if self.logical {
            Sequence::after(md, self.len, self.sync)
        } else {
            keep
        }
    }
}

/// How a get looks for its message, from the options and the handle's state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct GetPlan {
    /// The group criteria to look with (replacing the caller's).
    pub group: Option<GroupMatch>,
    /// Look with no MsgId/CorrelId criteria (the next message of a group in logical
    /// order is found by its group fields alone).
    pub drop_ids: bool,
    /// A group is under way on the handle (its completeness was checked at its start).
    pub in_progress: bool,
    /// The options.
    pub opts: GetOptionFlags,
}

/// Plans a group get (see [`is_group_get`]) of a handle in state `state` (its get or
/// browse sequence, as the get is destructive or not) with criteria `group` from the
/// caller's descriptor.
pub(crate) fn plan_get(
    state: Option<&Sequence>,
    opts: GetOptionFlags,
    mo: MatchOptions,
    group: Option<GroupMatch>,
    sync: bool,
) -> Result<GetPlan, MqError> {
    let mut plan = GetPlan {
        group,
        drop_ids: false,
        in_progress: false,
        opts,
    };
    if !opts.contains(GetOptionFlags::LOGICAL_ORDER) {
        return Ok(plan);
    }
    if mo.intersects(MatchOptions::MSG_SEQ_NUMBER | MatchOptions::OFFSET) {
        return Err(ReasonCode::MatchOptionsError.into());
    }
    match state {
        None => {
            // The first message of a group (or a message alone).
            plan.group = Some(GroupMatch {
                group_id: group.and_then(|g| g.group_id),
                msg_seq_number: Some(1),
                offset: Some(0),
            });
        }
        Some(s) => {
            if !opts.is_browse() && s.sync != sync {
                return Err(failed(ReasonCode::InconsistentUow));
            }
            plan.group = Some(s.next());
            plan.drop_ids = true;
            plan.in_progress = true;
        }
    }
    Ok(plan)
}

/// The handle's sequence after a get in logical order of a message with `md` and
/// `len` bytes of body (for COMPLETE_MSG, the whole logical message).
pub(crate) fn after_get(md: &MessageDescriptor, len: usize, sync: bool) -> Option<Sequence> {
    Sequence::after(md, len, sync)
}

/// One logical message of a group on a queue: its stored segments (or the message).
#[derive(Clone, Copy, Debug, Default)]
struct LogicalCount {
    stored: u32,
    bytes: u64,
    /// Offset + length of the last segment, once it is on the queue.
    end: Option<u64>,
    complete: bool,
}

/// One group on a queue.
#[derive(Clone, Debug, Default)]
struct GroupCount {
    msgs: BTreeMap<i32, LogicalCount>,
    /// MsgSeqNumber of the last message, once it is on the queue.
    last: Option<i32>,
    /// Logical messages in `msgs` that are complete.
    complete_msgs: u32,
    /// Latched once every message of the group was on the queue: it stays complete
    /// while any of it remains (a group is not hidden again as it is consumed).
    complete: bool,
}

/// Which groups and logical messages are wholly on a queue (committed), for
/// MQGMO_ALL_MSGS_AVAILABLE and ALL_SEGMENTS_AVAILABLE. Counts grouped messages only.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupTally {
    groups: HashMap<GroupId, GroupCount>,
}

impl GroupTally {
    /// A grouped message (`md`, `len` bytes) is on the queue, committed.
    pub fn added(&mut self, md: &MessageDescriptor, len: usize) {
        debug_assert!(md.is_grouped());
        let g = self.groups.entry(md.group_id).or_default();
        let l = g.msgs.entry(md.msg_seq_number).or_default();
        l.stored += 1;
        if md.is_segment() {
            l.bytes += len as u64;
            if md.is_last_segment() {
                l.end = Some(u64::try_from(md.offset).unwrap_or(0) + len as u64);
            }
        }
        if !l.complete && (!md.is_segment() || l.end.is_some_and(|e| l.bytes >= e)) {
            l.complete = true;
            g.complete_msgs += 1;
        }
        if md.is_last_in_group() {
            g.last = Some(md.msg_seq_number);
        }
        if g.last
            .is_some_and(|n| i64::from(g.complete_msgs) >= i64::from(n))
        {
            g.complete = true;
        }
    }

    /// A grouped message that [`GroupTally::added`] counted left the queue.
    pub fn removed(&mut self, md: &MessageDescriptor, len: usize) {
        let Some(g) = self.groups.get_mut(&md.group_id) else {
            debug_assert!(false, "a grouped message left a group never counted");
            return;
        };
        if let Some(l) = g.msgs.get_mut(&md.msg_seq_number) {
            l.stored = l.stored.saturating_sub(1);
            if md.is_segment() {
                l.bytes = l.bytes.saturating_sub(len as u64);
            }
            if l.stored == 0 {
                if l.complete {
                    g.complete_msgs = g.complete_msgs.saturating_sub(1);
                }
                g.msgs.remove(&md.msg_seq_number);
            }
        }
        if g.msgs.is_empty() {
            self.groups.remove(&md.group_id);
        }
    }

    /// How many messages each logical message `(GroupId, MsgSeqNumber)` counts (for the
    /// store's invariant check against its messages).
    pub fn stored_counts(&self) -> BTreeMap<(GroupId, i32), u32> {
        let mut out = BTreeMap::new();
        for (g, count) in &self.groups {
            for (seq, l) in &count.msgs {
                out.insert((*g, *seq), l.stored);
            }
        }
        out
    }

    /// Forgets everything (the queue was emptied).
    pub fn clear(&mut self) {
        self.groups.clear();
    }

    /// True when a get planned as `plan` may take the message with `md`.
    pub fn eligible(&self, md: &MessageDescriptor, plan: &GetPlan) -> bool {
        if !md.is_grouped() {
            return true;
        }
        let g = self.groups.get(&md.group_id);
        let whole_group = !md.msg_flags & (msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP)
            == (msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP);
        if plan.opts.contains(GetOptionFlags::ALL_MSGS_AVAILABLE)
            && !plan.in_progress
            && !whole_group
            && !g.is_some_and(|g| g.complete)
        {
            return false;
        }
        if md.is_segment() {
            let logical_complete = g
                .and_then(|g| g.msgs.get(&md.msg_seq_number))
                .is_some_and(|l| l.complete);
            if plan.opts.contains(GetOptionFlags::COMPLETE_MSG) {
                return md.offset == 0 && logical_complete;
            }
            if plan.opts.contains(GetOptionFlags::ALL_SEGMENTS_AVAILABLE) && !logical_complete {
                return false;
            }
        }
        true
    }
}

/// Group gets waiting on a queue: `(token, connection)` in arrival order.
#[derive(Clone, Debug, Default)]
pub(crate) struct GroupWaiters {
    waiting: Vec<(u64, ConnId)>,
}

impl GroupWaiters {
    /// True when none waits.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// Adds a waiting group get.
    pub fn add(&mut self, token: u64, conn: ConnId) {
        self.waiting.push((token, conn));
    }

    /// Removes the wait with `token`; true if it was there.
    pub fn remove(&mut self, token: u64) -> bool {
        match self.waiting.iter().position(|(t, _)| *t == token) {
            Some(i) => {
                self.waiting.remove(i);
                true
            }
            None => false,
        }
    }

    /// True when the wait with `token` is here.
    pub fn contains(&self, token: u64) -> bool {
        self.waiting.iter().any(|(t, _)| *t == token)
    }

    /// The connections waiting, in arrival order.
    pub fn conns(&self) -> Vec<ConnId> {
        self.waiting.iter().map(|(_, c)| *c).collect()
    }

    /// Takes every waiting get out, in arrival order.
    pub fn take(&mut self) -> Vec<(u64, ConnId)> {
        std::mem::take(&mut self.waiting)
    }
}

/// What a waiting group get needs to be run again: the caller's match fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GroupWait {
    pub msg_id: [u8; 24],
    pub correl_id: [u8; 24],
    pub group_id: GroupId,
    pub msg_seq_number: i32,
    pub offset: i32,
}

impl GroupWait {
    /// The match fields of the caller's descriptor.
    pub fn of(md: &MessageDescriptor) -> Self {
        GroupWait {
            msg_id: md.msg_id,
            correl_id: md.correl_id,
            group_id: md.group_id,
            msg_seq_number: md.msg_seq_number,
            offset: md.offset,
        }
    }

    /// A descriptor with these match fields.
    pub fn descriptor(&self) -> MessageDescriptor {
        MessageDescriptor {
            msg_id: self.msg_id,
            correl_id: self.correl_id,
            group_id: self.group_id,
            msg_seq_number: self.msg_seq_number,
            offset: self.offset,
            ..MessageDescriptor::default()
        }
    }
}

/// The first available message after `after` that fits `crit`, passes `accept` and
/// that a get planned as `plan` may take (as [`crate::selection::find_next`], with the
/// group tally's say); expired messages met on the way are discarded.
pub(crate) fn find_eligible(
    store: &mut MessageStore,
    crit: &Criteria,
    mut after: Option<MsgKey>,
    now: Timestamp,
    plan: &GetPlan,
    mut accept: impl FnMut(&StoredMsg) -> bool,
) -> Option<MsgKey> {
    loop {
        let k = store.first(crit, after)?;
        let m = store.get(k.seq)?;
        if m.expired(now) {
            drop(m);
            store.remove(k.seq);
            continue;
        }
        if accept(&m) && store.groups.eligible(&m.md, plan) {
            return Some(k);
        }
        after = Some(k);
    }
}

/// The logical message whose first segment is `first`, reassembled (MQGMO_COMPLETE_MSG):
/// a copy of `first` whose descriptor is no longer a segment's, the bodies of its
/// segments in Offset order, and the arrival numbers of the segments after the first.
pub(crate) fn reassemble(
    store: &MessageStore,
    first: &StoredMsg,
) -> Result<(StoredMsg, Bytes, Vec<u64>), ReasonCode> {
    let mut parts: Vec<(i32, u64, Bytes)> = Vec::new();
    for k in store.group_members(&first.md.group_id) {
        let Some(m) = store.get(k.seq) else {
            continue;
        };
        if m.md.msg_seq_number == first.md.msg_seq_number && m.md.is_segment() {
            parts.push((m.md.offset, k.seq, m.body.load()?));
        }
    }
    parts.sort_by_key(|(offset, seq, _)| (*offset, *seq));
    let total: usize = parts.iter().map(|(_, _, b)| b.len()).sum();
    let mut body = BytesMut::with_capacity(total);
    let mut others = Vec::with_capacity(parts.len());
    for (_, seq, b) in &parts {
        body.extend_from_slice(b);
        if *seq != first.key.seq {
            others.push(*seq);
        }
    }
    let mut whole = first.clone();
    whole.md.msg_flags &= !(msg_flags::SEGMENT | msg_flags::LAST_SEGMENT);
    whole.md.offset = 0;
    Ok((whole, body.freeze(), others))
}

impl QueueManager {
    /// Runs again every group get waiting on queue `qid` (a message became available
    /// there): each completes now or waits on, with what is left of its interval.
    pub(crate) fn wake_group_waiters(&mut self, qid: QueueId, now: Timestamp, fx: &mut Effects) {
        let Some(lq) = self.queues.local_mut(qid) else {
            return;
        };
        for (token, conn) in lq.group_waiters.take() {
            let Some(c) = self.conns.get_mut(&conn) else {
                continue;
            };
            let Some(p) = c.pending.filter(|p| p.token == token) else {
                continue;
            };
            c.pending = None;
            if let Some(d) = p.deadline {
                self.deadlines.remove(&(d, token, conn));
            }
            let Some(wait) = p.group else {
                continue;
            };
            let mut gmo = p.gmo;
            if let Some(d) = p.deadline {
                gmo.wait_interval = i32::try_from(d.saturating_sub(now.0)).unwrap_or(i32::MAX);
            }
            let md = wait.descriptor();
            let mut unlocked = None;
            let r = self.get_inner(conn, p.hobj, &md, &gmo, p.max_len, now, fx, &mut unlocked);
            if let Some((queue, key)) = unlocked {
                self.unlock_message(queue, key, now, fx);
            }
            let result = match r {
                Ok(Some(r)) => r,
                Ok(None) => continue,
                Err(e) => Err(e.into()),
            };
            let needs_durable = result.is_ok() && fx.has_log();
            fx.push(Effect::GetCompleted {
                conn,
                hobj: p.hobj,
                result,
                needs_durable,
            });
        }
    }
}

impl QueueManager {
    /// The queue's MAXMSGL when a put of `md` with `body` must be segmented by the queue
    /// manager: MQMF_SEGMENTATION_ALLOWED, no properties, a body longer than the queue's
    /// MAXMSGL but within the queue manager's. `None` otherwise (and at once for a
    /// message that does not allow segmentation: a flag test on the common path).
    pub(crate) fn segmentation_needed(
        &self,
        conn: ConnId,
        hobj: crate::connection::Hobj,
        md: &MessageDescriptor,
        body: &Bytes,
        properties: &Bytes,
    ) -> Option<usize> {
        if md.msg_flags & msg_flags::SEGMENTATION_ALLOWED == 0 || !properties.is_empty() {
            return None;
        }
        let h = self.conns.get(&conn)?.handle(hobj)?;
        let crate::connection::HandleTarget::Queue { local, .. } = h.target else {
            return None;
        };
        let max = usize::try_from(self.queues.get(local)?.def.attributes.max_msg_length).ok()?;
        let qm_max = usize::try_from(self.qmgr.max_msg_length).ok()?;
        (max > 0 && body.len() > max && body.len() <= qm_max).then_some(max)
    }

    /// MQPUT of a message the queue manager splits into segments of at most `max`
    /// bytes (MQMF_SEGMENTATION_ALLOWED, as MQ does on put). The logical message takes
    /// its group fields as a whole message would (in logical order from the handle's
    /// sequence); each segment is put with SEGMENT (LAST_SEGMENT for the last) and its
    /// Offset. Outside syncpoint the segments are put in a unit of work of their own and
    /// committed together when the connection has none open (otherwise each stands
    /// alone, as a put outside syncpoint does). `md` comes back as the first segment's
    /// descriptor with the application's MsgFlags.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_segmented(
        &mut self,
        conn: ConnId,
        hobj: crate::connection::Hobj,
        md: &mut MessageDescriptor,
        pmo: &ferry_mqi::PutOptions,
        body: Bytes,
        max: usize,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        let o = pmo.options;
        let sync = o.contains(PutOptionFlags::SYNCPOINT);
        if md.is_segment() {
            // Already a segment: the queue manager does not segment it further.
            return Err(ReasonCode::MsgTooBigForQ.into());
        }
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let own_uow = !sync && c.uow.is_empty();
        let h = c.handle_mut(hobj).ok_or(ReasonCode::HobjError)?;
        let state = h.groups.put;
        let mut logical = *md;
        let plan = plan_put(state.as_ref(), &logical, o, sync, body.len())?;
        let next_state = match plan {
            Some(p) => p.apply(&mut logical, &mut self.ids, state),
            None => state,
        };
        if logical.group_id == GROUP_ID_NONE {
            logical.group_id = self.ids.next_id();
        }
        // The segments carry their own fields: no logical order, the unit of work chosen.
        let mut inner = o - PutOptionFlags::LOGICAL_ORDER - PutOptionFlags::NO_SYNCPOINT;
        if own_uow {
            inner |= PutOptionFlags::SYNCPOINT;
        }
        let inner = ferry_mqi::PutOptions {
            options: inner,
            ..*pmo
        };
        let kept = logical.msg_flags & (msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP);
        let mut first: Option<MessageDescriptor> = None;
        let mut warning = None;
        let mut start = 0usize;
        let result = loop {
            let end = (start + max).min(body.len());
            let last = end == body.len();
            let mut seg = MessageDescriptor {
                msg_flags: kept
                    | msg_flags::SEGMENTATION_ALLOWED
                    | if last {
                        msg_flags::LAST_SEGMENT
                    } else {
                        msg_flags::SEGMENT
                    },
                offset: logical
                    .offset
                    .saturating_add(i32::try_from(start).unwrap_or(i32::MAX)),
                ..logical
            };
            if let Some(h) = self.conns.get_mut(&conn).and_then(|c| c.handle_mut(hobj)) {
                h.groups.put = None;
            }
            match self.put_uncounted(
                conn,
                hobj,
                &mut seg,
                &inner,
                body.slice(start..end),
                Bytes::new(),
                false,
                now,
                fx,
            ) {
                Ok(w) => warning = warning.or(w),
                Err(e) => break Err(e),
            }
            first.get_or_insert(seg);
            if last {
                break Ok(warning);
            }
            start = end;
        };
        if let Some(h) = self.conns.get_mut(&conn).and_then(|c| c.handle_mut(hobj)) {
            h.groups.put = if result.is_ok() { next_state } else { state };
        }
        if own_uow {
            match result {
                Ok(_) => self.commit_uow(conn, now, fx),
                Err(_) => self.backout_uow(conn, now, fx),
            }
        }
        if let (Ok(_), Some(f)) = (&result, first) {
            *md = MessageDescriptor {
                msg_flags: md.msg_flags,
                ..f
            };
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(flags: i32, seq: i32, offset: i32) -> MessageDescriptor {
        MessageDescriptor {
            group_id: [7; 24],
            msg_flags: flags,
            msg_seq_number: seq,
            offset,
            ..MessageDescriptor::default()
        }
    }

    fn plan(opts: GetOptionFlags) -> GetPlan {
        GetPlan {
            group: None,
            drop_ids: false,
            in_progress: false,
            opts,
        }
    }

    #[test]
    fn a_group_is_complete_once_every_message_is_there_and_stays_so_as_it_is_got() {
        let mut t = GroupTally::default();
        let all = plan(GetOptionFlags::ALL_MSGS_AVAILABLE);
        let first = md(msg_flags::MSG_IN_GROUP, 1, 0);
        let last = md(msg_flags::LAST_MSG_IN_GROUP, 3, 0);
        t.added(&first, 1);
        t.added(&last, 1);
        assert!(!t.eligible(&first, &all));
        assert!(t.eligible(&first, &plan(GetOptionFlags::empty())));
        let second = md(msg_flags::MSG_IN_GROUP, 2, 0);
        t.added(&second, 1);
        assert!(t.eligible(&first, &all));
        t.removed(&first, 1);
        assert!(t.eligible(&second, &all));
        t.removed(&second, 1);
        t.removed(&last, 1);
        assert!(t.groups.is_empty());
    }

    #[test]
    fn a_segmented_message_is_complete_when_its_bytes_reach_the_last_segment() {
        let mut t = GroupTally::default();
        let whole = plan(GetOptionFlags::COMPLETE_MSG);
        let s1 = md(msg_flags::SEGMENT, 1, 0);
        let s2 = md(msg_flags::LAST_SEGMENT, 1, 4);
        t.added(&s2, 2);
        assert!(!t.eligible(&s1, &whole));
        t.added(&s1, 4);
        assert!(t.eligible(&s1, &whole));
        assert!(!t.eligible(&s2, &whole), "COMPLETE_MSG starts at offset 0");
    }

    #[test]
    fn logical_order_put_numbers_and_checks_the_sequence() {
        let lo = PutOptionFlags::LOGICAL_ORDER;
        let mut ids = IdGenerator::new("QM", crate::Timestamp(1));
        let mut m = md(msg_flags::MSG_IN_GROUP, 9, 9);
        let p = plan_put(None, &m, lo, false, 3).unwrap().unwrap();
        let s = p.apply(&mut m, &mut ids, None).unwrap();
        assert_eq!((m.msg_seq_number, m.offset), (1, 0));
        assert_ne!(m.group_id, [7; 24]);
        let plain = MessageDescriptor::default();
        assert_eq!(
            plan_put(Some(&s), &plain, lo, false, 3).unwrap_err().reason,
            ReasonCode::IncompleteGroup
        );
        assert_eq!(
            plan_put(Some(&s), &m, lo, true, 3).unwrap_err().reason,
            ReasonCode::InconsistentUow
        );
        let mut last = md(msg_flags::LAST_MSG_IN_GROUP, 1, 0);
        let p = plan_put(Some(&s), &last, lo, false, 3).unwrap().unwrap();
        assert_eq!(p.apply(&mut last, &mut ids, Some(s)), None);
        assert_eq!((last.group_id, last.msg_seq_number), (m.group_id, 2));
    }

    #[test]
    fn bad_fields_are_refused_with_mqs_reasons() {
        let none = PutOptionFlags::empty();
        let r =
            |m: &MessageDescriptor, len| plan_put(None, m, none, false, len).unwrap_err().reason;
        assert_eq!(r(&md(64, 1, 0), 1), ReasonCode::MsgFlagsError);
        assert_eq!(r(&md(0, 0, 0), 1), ReasonCode::MsgSeqNumberError);
        assert_eq!(
            r(&md(msg_flags::MSG_IN_GROUP, 1, -1), 1),
            ReasonCode::OffsetError
        );
        assert_eq!(
            r(&md(msg_flags::SEGMENT, 1, 0), 0),
            ReasonCode::SegmentLengthZero
        );
    }
}
