//! Restart recovery and checkpoint images.
//!
//! **Recovery** rebuilds the persistent messages of a queue manager made with
//! [`QueueManager::from_catalogue`] from the records the log hands back, oldest first:
//!
//! ```text
//! let mut qm = QueueManager::from_catalogue(name, catalogue, now);
//! let mut rec = qm.recovery();
//! for record in log { rec.apply(record.kind, &record.payload)?; }
//! let summary = rec.finish(now, &mut fx);   // append fx's records, then set_logging(true)
//! ```
//!
//! Messages come back on their queues with their original keys (so in their original
//! order, priorities included) and full descriptors. Units of work still in flight at the
//! end of the log are backed out: their puts vanish, and the messages they got return to
//! their places with BackoutCount + 1 — the message was delivered once, and counting it
//! is what lets BOTHRESH stop a message that crashes its consumer (MQ keeps the count
//! across restarts on distributed platforms whatever HARDENBO says; counting at restart
//! cannot double count, because the get record of an in-flight unit of work is only ever
//! resolved once). A returned message whose count reaches its queue's BOTHRESH moves to
//! BOQNAME or DEADQ as at any other backout (`crate::backout_threshold`), so a message
//! that crashes the queue manager's consumers, or the queue manager, cannot loop for
//! ever. [`Recovery::finish`] pushes a backout record for each of them, each returned
//! message's new BackoutCount and any such move, so a second restart reads the same
//! outcome. A queue
//! whose last word in the log is a deletion stays deleted even when the catalogue still
//! names it. Messages already expired are dropped. A message a consumer held unsettled
//! at the crash (no get record was written) comes back as an ordinary committed message,
//! to be delivered again: at-least-once; a `BackoutCount` record restores the count a
//! failed delivery gave it. Message ids and unit-of-work ids made
//! afterwards never repeat recovered ones.
//!
//! Replay starts from the queue files' messages ([`QueueManager::restore_filed`]) and
//! the log from its restart point, a checkpoint image (`crate::checkpoint`), so every
//! record is idempotent against messages already present: a put of a present message
//! replaces it, a get of an absent one is nothing. (A log written before queue files
//! existed starts with an image of every message: the same replay reads it.)

use crate::clock::Timestamp;
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::journal::{DecodeError, LogRecord, Record};
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use ferry_objects::QueueType;
use std::collections::{BTreeMap, BTreeSet};

/// What recovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoverySummary {
    /// Records applied.
    pub records: u64,
    /// Records naming a queue the catalogue does not have (ignored).
    pub skipped: u64,
    /// Persistent messages on the queues after recovery.
    pub messages: u64,
    /// Units of work in flight at the end of the log, backed out.
    pub backed_out: u64,
    /// Queues the log deleted that the catalogue still named (removed now).
    pub deleted_queues: Vec<String>,
    /// Expired messages dropped.
    pub expired: u64,
}

/// A recovery failure: a record that cannot be decoded (the log is corrupt or from a
/// newer Ferry). Recovery stops; the queue manager must not start.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("log record {index} (kind {kind}): {error}")]
pub struct RecoveryError {
    /// The record's position among those applied (from 0).
    pub index: u64,
    /// The record kind.
    pub kind: u8,
    /// What was wrong.
    pub error: DecodeError,
}

/// One operation of a unit of work in flight during replay.
#[derive(Debug)]
enum Pending {
    /// A put not yet committed: the message waits here, off the queue.
    Put { queue: QueueId, msg: StoredMsg },
    /// A get not yet committed: the message waits here, off the queue.
    Get { queue: QueueId, msg: StoredMsg },
}

impl Pending {
    fn queue(&self) -> QueueId {
        match self {
            Pending::Put { queue, .. } | Pending::Get { queue, .. } => *queue,
        }
    }
}

/// Replays log records into a queue manager; see the module documentation.
#[derive(Debug)]
pub struct Recovery<'a> {
    qm: &'a mut QueueManager,
    uows: BTreeMap<u64, Vec<Pending>>,
    deleted: BTreeSet<String>,
    max_uow: Option<u64>,
    summary: RecoverySummary,
}

impl QueueManager {
    /// Starts recovery (call once, on a queue manager fresh from
    /// [`QueueManager::from_catalogue`], before any connection).
    pub fn recovery(&mut self) -> Recovery<'_> {
        Recovery {
            qm: self,
            uows: BTreeMap::new(),
            deleted: BTreeSet::new(),
            max_uow: None,
            summary: RecoverySummary::default(),
        }
    }

    /// Recovers from `records` (kind, payload), oldest first, then finishes
    /// ([`Recovery::finish`]).
    pub fn recover<I, P>(
        &mut self,
        records: I,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<RecoverySummary, RecoveryError>
    where
        I: IntoIterator<Item = (u8, P)>,
        P: AsRef<[u8]>,
    {
        let mut rec = self.recovery();
        for (kind, payload) in records {
            rec.apply(kind, payload.as_ref())?;
        }
        Ok(rec.finish(now, fx))
    }

    /// The local, non-temporary queue named `name`.
    pub(crate) fn recoverable_queue(&self, name: &str) -> Option<QueueId> {
        let id = self.queues.lookup(name)?;
        let e = self.queues.get(id)?;
        (e.def.queue_type == QueueType::Local && !e.is_temporary()).then_some(id)
    }
}

impl Recovery<'_> {
    /// Applies one record (kind and payload as appended). A record that does not decode
    /// stops recovery with an error; a record naming a queue the catalogue lacks is
    /// counted in [`RecoverySummary::skipped`] and ignored.
    pub fn apply(&mut self, kind: u8, payload: &[u8]) -> Result<(), RecoveryError> {
        let index = self.summary.records;
        let rec =
            Record::decode(kind, payload).map_err(|error| RecoveryError { index, kind, error })?;
        self.summary.records += 1;
        self.apply_record(rec);
        Ok(())
    }

    /// Applies one decoded record.
    pub fn apply_record(&mut self, rec: Record) {
        match rec {
            Record::Put { uow, queue, msg } => {
                self.deleted.remove(&queue);
                let Some(qid) = self.queue(&queue) else {
                    return;
                };
                match uow {
                    None => self.store_msg(qid, StoredMsg::from_logged(msg, MsgState::Available)),
                    Some(u) => {
                        self.see_uow(u);
                        let m = StoredMsg::from_logged(msg, MsgState::Available);
                        if let Some(lq) = self.qm.queues.local_mut(qid) {
                            lq.store.reserve_seq(m.key.seq);
                        }
                        self.uows
                            .entry(u)
                            .or_default()
                            .push(Pending::Put { queue: qid, msg: m });
                    }
                }
            }
            Record::Publish { uow, copies } => {
                for (queue, msg) in copies {
                    self.apply_record(Record::Put { uow, queue, msg });
                }
            }
            Record::Get { uow, queue, seq } => {
                let Some(qid) = self.queue(&queue) else {
                    return;
                };
                let Some(msg) = self
                    .qm
                    .queues
                    .local_mut(qid)
                    .and_then(|lq| lq.store.remove(seq))
                else {
                    return;
                };
                if let Some(u) = uow {
                    self.see_uow(u);
                    self.uows.entry(u).or_default().push(Pending::Get {
                        queue: qid,
                        msg: *msg,
                    });
                }
            }
            Record::Commit { uow } => self.end(uow, true),
            Record::Backout { uow } => self.end(uow, false),
            Record::ClearQueue { queue } => {
                if let Some(lq) = self
                    .qm
                    .recoverable_queue(&queue)
                    .and_then(|q| self.qm.queues.local_mut(q))
                {
                    lq.store.clear_available();
                }
            }
            Record::DeleteQueue { queue } => {
                self.reset_queue(&queue);
                self.deleted.insert(queue);
            }
            Record::DefineQueue { queue } => {
                self.reset_queue(&queue);
                self.deleted.remove(&queue);
            }
            Record::BackoutCount { queue, seq, count } => {
                if let Some(lq) = self
                    .qm
                    .recoverable_queue(&queue)
                    .and_then(|q| self.qm.queues.local_mut(q))
                {
                    lq.store.set_backout_count(seq, count);
                }
            }
        }
    }

    /// Ends recovery: backs out units of work still in flight (pushing a backout record
    /// for each into `fx`, to be appended before new work), removes queues the log
    /// deleted, drops expired messages (sending the expiration reports they ask for),
    /// and moves the id generators past every recovered id.
    pub fn finish(mut self, now: Timestamp, fx: &mut Effects) -> RecoverySummary {
        let in_flight: Vec<u64> = self.uows.keys().copied().collect();
        if let Some(u) = self.max_uow {
            // Before any new unit of work: a backout-threshold move below logs one.
            self.qm.next_uow = self.qm.next_uow.max(u.saturating_add(1));
        }
        let mut backed_out = Vec::new();
        for u in in_flight {
            let returned: Vec<(QueueId, u64)> = self.uows[&u]
                .iter()
                .filter_map(|p| match p {
                    Pending::Get { queue, msg } => Some((*queue, msg.key.seq)),
                    Pending::Put { .. } => None,
                })
                .collect();
            self.end(u, false);
            fx.log(LogRecord::end_uow(u, false));
            // Each returned message's new BackoutCount as a value (see `end_uow`).
            for (queue, seq) in returned {
                let Some(e) = self.qm.queues.get(queue) else {
                    continue;
                };
                if let Some(m) = e.local.as_ref().and_then(|lq| lq.store.get(seq)) {
                    fx.log(LogRecord::backout_count(
                        &e.def.name,
                        seq,
                        m.md.backout_count,
                    ));
                    backed_out.push((queue, seq));
                }
            }
            self.summary.backed_out += 1;
        }
        for (queue, seq) in backed_out {
            self.qm.backout_threshold_at_restart(queue, seq, now, fx);
        }
        for name in std::mem::take(&mut self.deleted) {
            if let Some(id) = self.qm.recoverable_queue(&name) {
                self.qm.queues.remove(id);
                fx.push(Effect::CatalogueChanged(CatalogueChange::Queue(
                    name.clone(),
                )));
                self.summary.deleted_queues.push(name);
            }
        }
        let ids: Vec<QueueId> = self.qm.queues.iter().map(|(id, _)| id).collect();
        // Messages that expired while the queue manager was down: their expiration
        // reports go once every recovered id is known (a report gets a new MsgId).
        let mut expired = Vec::new();
        for id in ids {
            let Some(lq) = self.qm.queues.local_mut(id) else {
                continue;
            };
            for seq in lq.store.expired(now) {
                if let Some(m) = lq.store.remove(seq) {
                    if ferry_mqi::report::wanted(ferry_mqi::report::ReportKind::Expiration, &m.md) {
                        expired.push((id, m));
                    }
                }
                self.summary.expired += 1;
            }
            let ids = &mut self.qm.ids;
            lq.store.for_each_id(|msg_id, correl_id| {
                ids.observe(msg_id);
                ids.observe(correl_id);
            });
            self.summary.messages += lq.store.depth() as u64;
            // A queue file may hold any message recovered (files can be ahead of the
            // log): only later arrivals may be filed without being imaged first.
            lq.store.filing.interval_start = lq.store.next_seq();
        }
        // Each is logged as got with its report put, in a unit of work of their own (as
        // a get that meets an expired message does): a crash before that is on disk
        // finds the message expired again at the next restart, and reports it then.
        for (id, m) in expired {
            self.qm.report_expired(id, &m, now, fx);
        }
        // A queue manager from before distributed queuing gets its channel queues once.
        self.qm.define_missing_channel_queues(now, fx);
        // And one from before namelists its shipped namelists.
        self.qm.define_missing_namelists(now, fx);
        self.summary
    }

    fn queue(&mut self, name: &str) -> Option<QueueId> {
        let q = self.qm.recoverable_queue(name);
        if q.is_none() {
            self.summary.skipped += 1;
        }
        q
    }

    fn see_uow(&mut self, u: u64) {
        self.max_uow = Some(self.max_uow.map_or(u, |m| m.max(u)));
    }

    fn store_msg(&mut self, qid: QueueId, m: StoredMsg) {
        if let Some(lq) = self.qm.queues.local_mut(qid) {
            lq.store.insert_recovered(m);
        }
    }

    /// Commit or backout of unit of work `u` during replay.
    fn end(&mut self, u: u64, commit: bool) {
        self.see_uow(u);
        for p in self.uows.remove(&u).unwrap_or_default() {
            match (p, commit) {
                (Pending::Put { queue, msg }, true) => self.store_msg(queue, msg),
                (Pending::Get { queue, mut msg }, false) => {
                    msg.md.backout_count = msg.md.backout_count.saturating_add(1);
                    self.store_msg(queue, msg);
                }
                _ => {}
            }
        }
    }

    /// A queue deleted or (re)defined: it is empty from here on, and the work of units
    /// in flight on it is gone.
    fn reset_queue(&mut self, name: &str) {
        if let Some(lq) = self
            .qm
            .recoverable_queue(name)
            .and_then(|q| self.qm.queues.local_mut(q))
        {
            lq.store.clear_all();
        }
        if let Some(qid) = self.qm.recoverable_queue(name) {
            for ops in self.uows.values_mut() {
                ops.retain(|p| p.queue() != qid);
            }
        }
    }
}

#[cfg(test)]
impl QueueManager {
    /// What a restart would find now, per queue in get order: committed persistent
    /// messages, those held by uncommitted gets counted as backed out once.
    pub(crate) fn restart_view(&self) -> BTreeMap<String, Vec<crate::journal::LoggedMessage>> {
        let mut out = BTreeMap::new();
        for (_, e) in self.queues.iter() {
            let Some(lq) = e.local.as_ref() else {
                continue;
            };
            if e.is_temporary() {
                continue;
            }
            let v: Vec<_> = lq
                .store
                .sorted()
                .into_iter()
                .filter(|m| m.md.is_persistent() && !matches!(m.state, MsgState::UncommittedPut(_)))
                .map(|m| {
                    let mut l = m.logged().expect("a filed body reads back");
                    if matches!(m.state, MsgState::UncommittedGet(_)) {
                        l.md.backout_count += 1;
                    }
                    l
                })
                .collect();
            if !v.is_empty() {
                out.insert(e.def.name.clone(), v);
            }
        }
        out
    }
}
