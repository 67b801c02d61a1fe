//! MQGET: destructive gets, browse, match by MsgId/CorrelId, truncation and waiting.
//!
//! A get looks up the first eligible message by index (never scanning the queue),
//! discarding expired messages it meets; a handle opened with a selector
//! ([`crate::MessageFilter`]) gets the first of those candidates the selector selects. With no message and MQGMO_WAIT the connection
//! becomes a waiter on the queue (the `waiters` module); a later put, commit or backout
//! hands a fitting message straight to it as [`crate::Effect::GetCompleted`]. A
//! destructive get of a message that asks for confirm on delivery makes its report in
//! the get's unit of work; expired messages met make their expiration reports
//! (`crate::report`).

use crate::browse_lock::own_locked;
use crate::browse_marks::{is_marked, Browser};
use crate::clock::Timestamp;
use crate::connection::{ConnId, HandleTarget, Hobj, PendingGet};
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{Criteria, MsgKey, MsgState, StoredMsg};
use crate::report::{wants_cod, ReportUow};
use crate::selection::{find_next, selected};
use crate::uow::UowEntry;
use crate::waiters::Waiter;
use bytes::Bytes;
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, MqError, OpenOptions, ReasonCode,
};
use ferry_objects::queue::Enablement;

/// A message returned by MQGET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GotMessage {
    /// The message's descriptor (Expiry = time left, BackoutCount current).
    pub md: MessageDescriptor,
    /// The body, cut to the caller's buffer length when truncated.
    pub data: Bytes,
    /// The full length of the body (MQGET's DataLength).
    pub data_length: usize,
    /// The message's encoded properties ([`ferry_mqi::MessageProperties`]); empty when
    /// it has none.
    pub properties: Bytes,
    /// A warning: 2079 MQRC_TRUNCATED_MSG_ACCEPTED.
    pub warning: Option<ReasonCode>,
}

/// A failed MQGET.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GetError {
    /// Completion code and reason.
    pub error: MqError,
    /// With 2080 MQRC_TRUNCATED_MSG_FAILED: the message's descriptor, the part of the
    /// body that fits and the full DataLength, as MQ returns them (the message stays).
    pub truncated: Option<Box<GotMessage>>,
}

impl From<MqError> for GetError {
    fn from(error: MqError) -> Self {
        GetError {
            error,
            truncated: None,
        }
    }
}

impl From<ReasonCode> for GetError {
    fn from(r: ReasonCode) -> Self {
        MqError::from(r).into()
    }
}

impl GetError {
    /// The reason code.
    pub fn reason(&self) -> ReasonCode {
        self.error.reason
    }
}

/// What an MQGET returns now or later.
pub type GetResult = Result<GotMessage, GetError>;

/// The outcome of [`QueueManager::get`]. The message stays inline (no allocation per
/// get); the value is moved once.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GetOutcome {
    /// The call is complete.
    Done(GetResult),
    /// The caller waits; the answer comes as [`crate::Effect::GetCompleted`].
    Waiting,
}

impl GetOutcome {
    /// The result when done.
    pub fn done(self) -> Option<GetResult> {
        match self {
            GetOutcome::Done(r) => Some(r),
            GetOutcome::Waiting => None,
        }
    }
}

/// The whole of `msg` with its `body` (loaded: `crate::body`) as delivered at `now`
/// (Expiry = time left): what a consumer receives, and what MQGET returns when the body
/// fits.
pub(crate) fn whole_message(msg: &StoredMsg, body: Bytes, now: Timestamp) -> GotMessage {
    let mut md = msg.md;
    if msg.delivered_persistent {
        md.persistence = ferry_mqi::descriptor::persistence::PERSISTENT;
    }
    if let Some(e) = msg.expires_at {
        let left = e.saturating_sub(now.0).div_ceil(100);
        md.expiry = i32::try_from(left).unwrap_or(i32::MAX).max(1);
    }
    GotMessage {
        md,
        data_length: body.len(),
        data: body,
        properties: msg.properties.clone(),
        warning: None,
    }
}

/// Builds the answer for `msg` with its `body` given the buffer length: truncation
/// rules 2079/2080.
pub(crate) fn got_message(
    msg: &StoredMsg,
    body: Bytes,
    max_len: usize,
    opts: GetOptionFlags,
    now: Timestamp,
) -> GetResult {
    let mut got = whole_message(msg, body, now);
    if got.data_length <= max_len {
        return Ok(got);
    }
    got.data.truncate(max_len);
    got.warning = Some(ReasonCode::TruncatedMsgAccepted);
    if opts.contains(GetOptionFlags::ACCEPT_TRUNCATED_MSG) {
        Ok(got)
    } else {
        Err(GetError {
            error: ReasonCode::TruncatedMsgFailed.into(),
            truncated: Some(Box::new(GotMessage {
                warning: None,
                ..got
            })),
        })
    }
}

/// Whether a destructive get of a message with `md` joins the unit of work.
pub(crate) fn under_syncpoint(opts: GetOptionFlags, md: &MessageDescriptor) -> bool {
    opts.contains(GetOptionFlags::SYNCPOINT)
        || (opts.contains(GetOptionFlags::SYNCPOINT_IF_PERSISTENT) && md.is_persistent())
}

/// The match criteria of a get from the caller's descriptor and match options.
pub(crate) fn criteria(md: &MessageDescriptor, mo: MatchOptions) -> Criteria {
    Criteria {
        msg_id: (mo.contains(MatchOptions::MSG_ID) && md.msg_id != NONE_ID).then_some(md.msg_id),
        correl_id: (mo.contains(MatchOptions::CORREL_ID) && md.correl_id != NONE_ID)
            .then_some(md.correl_id),
        group: crate::group::group_match(md, mo),
    }
}

fn check_get_options(gmo: &GetOptions) -> Result<(), MqError> {
    let o = gmo.options;
    let browse_kinds = [
        GetOptionFlags::BROWSE_FIRST,
        GetOptionFlags::BROWSE_NEXT,
        GetOptionFlags::BROWSE_MSG_UNDER_CURSOR,
        GetOptionFlags::MSG_UNDER_CURSOR,
    ]
    .iter()
    .filter(|f| o.contains(**f))
    .count();
    let sync_kinds = [
        GetOptionFlags::SYNCPOINT,
        GetOptionFlags::NO_SYNCPOINT,
        GetOptionFlags::SYNCPOINT_IF_PERSISTENT,
    ]
    .iter()
    .filter(|f| o.contains(**f))
    .count();
    if browse_kinds > 1 || sync_kinds > 1 {
        return Err(ReasonCode::OptionsError.into());
    }
    if o.is_browse()
        && o.intersects(GetOptionFlags::SYNCPOINT | GetOptionFlags::SYNCPOINT_IF_PERSISTENT)
    {
        return Err(ReasonCode::OptionsError.into());
    }
    if o.contains(GetOptionFlags::WAIT) && gmo.wait_interval < -1 {
        return Err(ReasonCode::WaitIntervalError.into());
    }
    Ok(())
}

impl QueueManager {
    /// MQGET on `hobj`. `md` supplies the match fields (MsgId/CorrelId per
    /// `gmo.match_options`); `max_len` is the caller's buffer length. Either done now,
    /// or waiting (with MQGMO_WAIT): the answer then comes as an effect.
    #[allow(clippy::too_many_arguments)]
    pub fn get(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        md: &MessageDescriptor,
        gmo: &GetOptions,
        max_len: usize,
        now: Timestamp,
        fx: &mut Effects,
    ) -> GetOutcome {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> GetOutcome {
            let mut unlocked = None;
            let r = self.get_inner(conn, hobj, md, gmo, max_len, now, fx, &mut unlocked);
            if let Some((queue, key)) = unlocked {
                self.unlock_message(queue, key, now, fx);
            }
            let browse = gmo.options.is_browse();
            let outcome = match r {
                Ok(Some(r)) => {
                    if let Ok(got) = &r {
                        self.note_got(conn, hobj, browse, &got.md);
                    }
                    GetOutcome::Done(r)
                }
                Ok(None) => GetOutcome::Waiting,
                Err(e) => GetOutcome::Done(Err(e.into())),
            };
            // Destructive gets are counted where the message leaves its queue.
            let m = &mut self.mqi_stats;
            match (&outcome, browse) {
                (GetOutcome::Done(Ok(got)), true) => {
                    m.note_browse(got.md.is_persistent(), got.data_length)
                }
                (GetOutcome::Done(Err(_)), true) => m.browses_failed += 1,
                (GetOutcome::Done(Err(_)), false) => m.gets_failed += 1,
                _ => {}
            }
            self.report_expired_met(now, fx);
            outcome
        })();
        self.debug_check();
        result
    }

    /// The get; a message whose lock the handle let go is left in `unlocked` for
    /// [`QueueManager::unlock_message`] (`crate::browse_lock`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn get_inner(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        md: &MessageDescriptor,
        gmo: &GetOptions,
        max_len: usize,
        now: Timestamp,
        fx: &mut Effects,
        unlocked: &mut Option<(QueueId, MsgKey)>,
    ) -> Result<Option<GetResult>, MqError> {
        let opts = gmo.options;
        let logging = self.logging;
        self.check_running(opts.contains(GetOptionFlags::FAIL_IF_QUIESCING))?;
        let max_uncommitted = self.qmgr.max_uncommitted_msgs.max(0) as usize;
        let mark_interval = self.qmgr.msg_mark_browse_interval;
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        if c.pending.is_some() {
            return Err(ReasonCode::CallInProgress.into());
        }
        let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
        check_get_options(gmo)?;
        crate::browse_lock::check_options(opts)?;
        let co_op = crate::browse_marks::cooperates(h);
        crate::browse_marks::check_options(opts, co_op)?;
        let browser = Browser::new(conn, hobj, co_op, mark_interval, now);
        let HandleTarget::Queue { opened, local } = h.target else {
            return Err(ReasonCode::NotOpenForInput.into());
        };
        if opts.contains(GetOptionFlags::UNLOCK) {
            let lock = c.handle_mut(hobj).and_then(|h| h.lock.take());
            *unlocked = lock.map(|k| (local, k));
            return Ok(Some(Ok(crate::browse_lock::unlock_answer(lock.is_some()))));
        }
        let browse = opts.is_browse();
        if browse && !h.options.contains(OpenOptions::BROWSE) {
            return Err(ReasonCode::NotOpenForBrowse.into());
        }
        if !browse && !h.options.wants_input() {
            return Err(ReasonCode::NotOpenForInput.into());
        }
        let cursor = h.cursor;
        let own_lock = h.lock;
        // A logical-order group under way on the handle (Some(true): a segmented message).
        let group_under_way = h.groups.get.map(|s| s.msg_open);
        let selection = h.selection.clone();
        let alias_get = self
            .queues
            .get(opened)
            .ok_or(ReasonCode::QDeleted)?
            .def
            .attributes
            .get;
        let entry = self.queues.get_mut(local).ok_or(ReasonCode::QDeleted)?;
        if alias_get == Enablement::Disabled || entry.def.attributes.get == Enablement::Disabled {
            return Err(ReasonCode::GetInhibited.into());
        }
        let lq = entry.local.as_mut().ok_or(ReasonCode::QTypeError)?;
        let mut crit = criteria(md, gmo.match_options);
        let unmarked = opts.contains(GetOptionFlags::UNMARKED_BROWSE_MSG);
        let marks = &lq.marks;
        let fits = |m: &StoredMsg| {
            selected(selection.as_ref(), m) && !(unmarked && is_marked(marks, m.key.seq, &browser))
        };
        // Groups, segments and logical order (`crate::group`): their own plan.
        let plan = if crate::group::is_group_get(opts, gmo.match_options) {
            let state = if !browse {
                h.groups.get
            } else if opts.contains(GetOptionFlags::BROWSE_FIRST) {
                None
            } else {
                h.groups.browse
            };
            let sync = opts.contains(GetOptionFlags::SYNCPOINT);
            let p =
                crate::group::plan_get(state.as_ref(), opts, gmo.match_options, crit.group, sync)?;
            crit.group = p.group;
            if p.drop_ids {
                crit.msg_id = None;
                crit.correl_id = None;
            }
            Some(p)
        } else {
            None
        };

        let under_cursor = opts
            .intersects(GetOptionFlags::MSG_UNDER_CURSOR | GetOptionFlags::BROWSE_MSG_UNDER_CURSOR);
        let found = if under_cursor {
            let Some(k) = cursor else {
                return Err(ReasonCode::NoMsgUnderCursor.into());
            };
            let visible = lq.store.is_available(k) || own_lock == Some(k);
            if !visible || !lq.store.is_live(k.seq, now) {
                return Err(ReasonCode::NoMsgUnderCursor.into());
            }
            Some(k)
        } else {
            let after = if opts.contains(GetOptionFlags::BROWSE_NEXT)
                && !plan.is_some_and(|p| p.in_progress)
            {
                cursor
            } else {
                None
            };
            let next = match &plan {
                None => find_next(&mut lq.store, &crit, after, now, fits),
                Some(p) => crate::group::find_eligible(&mut lq.store, &crit, after, now, p, fits),
            };
            let own = own_locked(&lq.store, own_lock, &crit, after, now, fits);
            next.into_iter().chain(own).min()
        };
        if !lq.store.expired_for_report.is_empty() {
            self.expired_to_report.push(local);
        }

        let Some(key) = found else {
            if browse && own_lock.is_some() {
                // A browse that finds nothing lets its lock go, before it waits too.
                *unlocked = own_lock.map(|k| (local, k));
                if let Some(h) = c.handle_mut(hobj) {
                    h.lock = None;
                }
            }
            if !opts.contains(GetOptionFlags::WAIT) || gmo.wait_interval == 0 {
                return Ok(Some(Err(ReasonCode::NoMsgAvailable.into())));
            }
            let token = self.next_token;
            self.next_token += 1;
            let deadline = u64::try_from(gmo.wait_interval)
                .ok()
                .map(|ms| now.0.saturating_add(ms));
            if plan.is_some() {
                lq.group_waiters.add(token, conn);
            } else {
                lq.waiters.add(Waiter {
                    token,
                    conn,
                    criteria: crit,
                    filter: selection,
                    after: if opts.contains(GetOptionFlags::BROWSE_NEXT) {
                        cursor
                    } else {
                        None
                    },
                });
            }
            if let Some(d) = deadline {
                self.deadlines.insert((d, token, conn));
            }
            c.pending = Some(PendingGet {
                hobj,
                queue: local,
                token,
                gmo: *gmo,
                criteria: crit,
                max_len,
                deadline,
                group: plan.map(|_| crate::group::GroupWait::of(md)),
            });
            return Ok(None);
        };

        let Some(msg) = lq.store.get(key.seq) else {
            return Err(ReasonCode::UnexpectedError.into());
        };
        // A body left in the queue file is read now; if that fails the message stays.
        let mut body = msg.body.load()?;
        let first_body = body.clone();
        // COMPLETE_MSG: the segments of a logical message come back as one.
        let mut segments = Vec::new();
        let mut whole = None;
        if plan.is_some_and(|p| p.opts.contains(GetOptionFlags::COMPLETE_MSG))
            && msg.md.is_segment()
        {
            let (m, b, others) = crate::group::reassemble(&lq.store, &msg)?;
            (whole, body, segments) = (Some(m), b, others);
        }
        let shown: &StoredMsg = whole.as_ref().unwrap_or(&msg);
        let got = got_message(shown, body.clone(), max_len, opts, now);
        let (got_md, got_len) = (shown.md, body.len());
        let sync = under_syncpoint(opts, &msg.md);
        // The group's unit-of-work option as the application gave it (2245 compares it).
        let group_sync = opts.contains(GetOptionFlags::SYNCPOINT);
        let logical = plan.is_some_and(|p| p.opts.contains(GetOptionFlags::LOGICAL_ORDER));
        if browse {
            if got.is_ok() {
                let lock = opts.contains(GetOptionFlags::LOCK);
                if own_lock.is_some_and(|k| k != key || !lock) {
                    *unlocked = own_lock.map(|k| (local, k));
                }
                if lock && own_lock != Some(key) {
                    lq.store.set_state(key.seq, MsgState::Locked(conn, hobj));
                }
                crate::browse_marks::browsed(&mut lq.marks, &lq.store, key.seq, &browser, opts);
                if let Some(h) = c.handle_mut(hobj) {
                    h.cursor = Some(key);
                    h.lock = lock.then_some(key);
                    if logical {
                        h.groups.browse = crate::group::after_get(&got_md, got_len, group_sync);
                    }
                }
            }
            return Ok(Some(got));
        }
        if got.is_err() {
            return Ok(Some(got));
        }
        if sync && c.uow.len() + segments.len() >= max_uncommitted {
            return Err(ReasonCode::SyncpointLimitReached.into());
        }
        let cod = if wants_cod(&msg.md) {
            Some((msg.md, msg.expires_at))
        } else {
            None
        };
        let mut report_uow = match sync {
            true => ReportUow::Syncpoint(conn),
            false => ReportUow::Outside,
        };
        let (stat_persistent, stat_put_ms) = (msg.md.is_persistent(), msg.put_ms);
        drop(msg);
        // The message, or with COMPLETE_MSG every segment of it.
        let mut own_uow = None;
        for seq in std::iter::once(key.seq).chain(segments) {
            let persistent = lq.store.get(seq).is_some_and(|m| m.md.is_persistent());
            if logging && persistent {
                let uow = if sync {
                    Some(c.uow.log_id(&mut self.next_uow))
                } else if cod.is_some() {
                    // The get and its report: one unit of work of their own.
                    let id = *own_uow.get_or_insert_with(|| Self::own_uow_id(&mut self.next_uow));
                    report_uow = ReportUow::Own(id);
                    Some(id)
                } else {
                    None
                };
                fx.log(LogRecord::get(uow, &entry.def.name, seq));
                if !sync {
                    fx.reply_waits();
                }
            }
            if sync {
                // It may come back (backout): its body stays in memory until then.
                let part = if seq == key.seq {
                    first_body.clone()
                } else {
                    match lq.store.get(seq) {
                        Some(m) => m.body.load()?,
                        None => continue,
                    }
                };
                lq.store.make_resident(seq, &part);
                lq.store.set_state(seq, MsgState::UncommittedGet(conn));
                lq.joined_uow();
                c.uow.entries.push(UowEntry::Get { queue: local, seq });
            } else {
                lq.store.remove(seq);
            }
            crate::browse_marks::message_got(&mut lq.marks, seq);
        }
        if own_lock == Some(key) {
            if let Some(h) = c.handle_mut(hobj) {
                h.lock = None;
            }
        }
        if logical {
            if let Some(h) = c.handle_mut(hobj) {
                h.groups.get = crate::group::after_get(&got_md, got_len, group_sync);
            }
        }
        lq.last_get_ms = Some(now.0);
        let waited = now.0.saturating_sub(stat_put_ms);
        lq.stats.note_get(stat_persistent, got_len, waited);
        self.mqi_stats.note_get(stat_persistent, got_len);
        if let Some((md, expires_at)) = cod {
            self.send_cod(&md, &body, expires_at, report_uow, now, fx);
        }
        let mut got = got;
        if let (Some(msg_open), false, Ok(g)) = (group_under_way, logical, got.as_mut()) {
            // Leaving logical order mid-group: done, with MQ's warning.
            g.warning.get_or_insert(if msg_open {
                ReasonCode::IncompleteMsg
            } else {
                ReasonCode::IncompleteGroup
            });
        }
        Ok(Some(got))
    }
}
