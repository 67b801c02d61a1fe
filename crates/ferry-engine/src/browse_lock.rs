//! MQGMO_LOCK and MQGMO_UNLOCK: a browse that locks the message it returns for its
//! handle.
//!
//! A browse (BROWSE_FIRST, BROWSE_NEXT or BROWSE_MSG_UNDER_CURSOR) with LOCK locks the
//! message it returns: the message becomes invisible to every other handle (their gets,
//! browses, waits and consumers), counts in CURDEPTH, and stays visible to its handle,
//! which may browse it again or get it (MSG_UNDER_CURSOR, or any get it fits). A handle
//! locks at most one message, always the one under its cursor. The lock is released by:
//!
//! - a get with UNLOCK (2209 MQRC_NO_MSG_LOCKED, a warning, when nothing is locked);
//! - the next BROWSE_FIRST or BROWSE_NEXT of the handle that completes (with LOCK the
//!   message it returns is locked instead), or that finds nothing (2033), also before
//!   such a browse starts to wait; a BROWSE_MSG_UNDER_CURSOR without LOCK that
//!   completes. A browse failing otherwise, or with 2080 MQRC_TRUNCATED_MSG_FAILED,
//!   keeps the lock;
//! - a destructive get of the locked message by its handle (under syncpoint the message
//!   is then the unit of work's; backed out, it comes back unlocked);
//! - MQCLOSE of the handle, and so MQDISC or a broken connection.
//!
//! A released message becomes available as if it had just arrived (`crate::handoff`):
//! a getter waiting for it receives it at once. A waiting browse with LOCK takes a
//! message like a destructive getter (MQ treats it as a non-browse get when it picks
//! whom to wake) and locks it. Locks are not logged: after a restart nothing is locked.
//!
//! The locked message is in state [`MsgState::Locked`], out of the queue's get order and
//! indexes, so nobody else can find it and a get that locks nothing pays nothing; the
//! handle's own get considers its locked message beside what the indexes find
//! ([`own_locked`]).

use crate::clock::Timestamp;
use crate::effects::Effects;
use crate::get::GotMessage;
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::queue::{Criteria, MessageStore, MsgKey, MsgState, StoredMsg};
use bytes::Bytes;
use ferry_mqi::{GetOptionFlags, MessageDescriptor, MqError, ReasonCode};

/// Refuses, with 2046 MQRC_OPTIONS_ERROR, LOCK without a browse option or with
/// SYNCPOINT, SYNCPOINT_IF_PERSISTENT or UNLOCK, and UNLOCK with any option but
/// NO_SYNCPOINT (and NO_WAIT, which is 0), as MQ does.
pub(crate) fn check_options(o: GetOptionFlags) -> Result<(), MqError> {
    if o.contains(GetOptionFlags::LOCK) {
        let unlock_or_sync = GetOptionFlags::UNLOCK
            | GetOptionFlags::SYNCPOINT
            | GetOptionFlags::SYNCPOINT_IF_PERSISTENT;
        if !o.is_browse() || o.intersects(unlock_or_sync) {
            return Err(ReasonCode::OptionsError.into());
        }
    }
    if o.contains(GetOptionFlags::UNLOCK)
        && !(o - GetOptionFlags::UNLOCK - GetOptionFlags::NO_SYNCPOINT).is_empty()
    {
        return Err(ReasonCode::OptionsError.into());
    }
    Ok(())
}

/// What MQGET with UNLOCK returns: no message (MQ leaves the descriptor and buffer
/// alone), with 2209 MQRC_NO_MSG_LOCKED when nothing was locked.
pub(crate) fn unlock_answer(was_locked: bool) -> GotMessage {
    GotMessage {
        md: MessageDescriptor::default(),
        data: Bytes::new(),
        data_length: 0,
        properties: Bytes::new(),
        warning: (!was_locked).then_some(ReasonCode::NoMsgLocked),
    }
}

/// The handle's own locked message `lock`, when it is a candidate for the handle's get:
/// after `after` (a BROWSE_NEXT's cursor), fitting `crit` and `accept`, not expired.
pub(crate) fn own_locked(
    store: &MessageStore,
    lock: Option<MsgKey>,
    crit: &Criteria,
    after: Option<MsgKey>,
    now: Timestamp,
    accept: impl Fn(&StoredMsg) -> bool,
) -> Option<MsgKey> {
    let k = lock?;
    if after.is_some_and(|a| k <= a) {
        return None;
    }
    let m = store.get(k.seq)?;
    (!m.expired(now) && crit.matches(&m.md) && accept(&m)).then_some(k)
}

impl QueueManager {
    /// Releases the lock on message `key` of queue `queue` (its handle let it go): the
    /// message becomes available and goes where any message that becomes available goes.
    /// Nothing happens when it is no longer locked (got, or its queue deleted).
    pub(crate) fn unlock_message(
        &mut self,
        queue: QueueId,
        key: MsgKey,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(lq) = self.queues.local_mut(queue) else {
            return;
        };
        let locked = lq
            .store
            .get(key.seq)
            .is_some_and(|m| matches!(m.state, MsgState::Locked(..)));
        if !locked {
            return;
        }
        let Some(msg) = lq.store.remove(key.seq) else {
            return;
        };
        debug_assert!(!lq.store.contains(key.seq), "an unlocked message stayed");
        self.place(queue, *msg, now, fx);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_and_unlock_take_only_the_options_mq_allows_with_them() {
        let ok = |o| check_options(o).is_ok();
        assert!(ok(GetOptionFlags::BROWSE_FIRST | GetOptionFlags::LOCK));
        assert!(ok(
            GetOptionFlags::BROWSE_MSG_UNDER_CURSOR | GetOptionFlags::LOCK
        ));
        assert!(!ok(GetOptionFlags::LOCK), "LOCK needs a browse");
        assert!(!ok(GetOptionFlags::LOCK
            | GetOptionFlags::BROWSE_NEXT
            | GetOptionFlags::UNLOCK));
        assert!(ok(GetOptionFlags::UNLOCK | GetOptionFlags::NO_SYNCPOINT));
        assert!(!ok(GetOptionFlags::UNLOCK | GetOptionFlags::WAIT));
        assert!(!ok(GetOptionFlags::UNLOCK | GetOptionFlags::BROWSE_FIRST));
    }
}
