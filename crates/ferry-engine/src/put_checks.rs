//! The checks a queue makes of a message about to be put on it, in MQ's order, shared
//! by MQPUT and by the puts the queue manager makes itself (report messages, backed-out
//! messages requeued to BOQNAME or the dead-letter queue): one place decides which
//! reason refuses a put and where the message ranks.

use crate::queue::MessageStore;
use ferry_mqi::descriptor::{persistence, priority, EXPIRY_UNLIMITED};
use ferry_mqi::MessageDescriptor;
use ferry_mqi::ReasonCode;
use ferry_objects::queue::Enablement;
use ferry_objects::queue::{DefinitionType, MsgDeliverySequence, QueueAttributes};

/// MQPUT's checks of the application's descriptor, in MQ's order: 2050
/// MQRC_PRIORITY_ERROR, 2047 MQRC_PERSISTENCE_ERROR, 2013 MQRC_EXPIRY_ERROR. Shared by
/// puts to queues and publications.
pub(crate) fn check_descriptor(md: &MessageDescriptor) -> Result<(), ReasonCode> {
    if md.priority < priority::AS_Q_DEF {
        return Err(ReasonCode::PriorityError);
    }
    if !(0..=2).contains(&md.persistence) {
        return Err(ReasonCode::PersistenceError);
    }
    if md.expiry == 0 || md.expiry < EXPIRY_UNLIMITED {
        return Err(ReasonCode::ExpiryError);
    }
    Ok(())
}

/// The priority and persistence a checked put stores: "as queue (or topic) definition"
/// resolved from `def_priority` and `def_persistent`, a priority above 9 lowered to 9 with
/// the warning 2049 MQRC_PRIORITY_EXCEEDS_MAXIMUM.
pub(crate) fn stored_priority_persistence(
    md: &MessageDescriptor,
    def_priority: i32,
    def_persistent: bool,
) -> (i32, i32, Option<ReasonCode>) {
    let (prio, warning) = if md.priority == priority::AS_Q_DEF {
        (def_priority.clamp(0, priority::MAX), None)
    } else if md.priority > priority::MAX {
        (priority::MAX, Some(ReasonCode::PriorityExceedsMaximum))
    } else {
        (md.priority, None)
    };
    let pers = match (md.persistence, def_persistent) {
        (persistence::AS_Q_DEF, true) => persistence::PERSISTENT,
        (persistence::AS_Q_DEF, false) => persistence::NOT_PERSISTENT,
        (p, _) => p,
    };
    (prio, pers, warning)
}

/// A put of `msg_len` bytes (body and properties) to a queue with `attrs`: refused
/// with 2051 MQRC_PUT_INHIBITED or 2030 MQRC_MSG_TOO_BIG_FOR_Q. MQPUT makes these
/// checks itself, with the alias's PUT and the queue manager's MAXMSGL between them.
pub(crate) fn check_put_allowed(attrs: &QueueAttributes, msg_len: usize) -> Result<(), ReasonCode> {
    if attrs.put == Enablement::Disabled {
        return Err(ReasonCode::PutInhibited);
    }
    if msg_len > attrs.max_msg_length.max(0) as usize {
        return Err(ReasonCode::MsgTooBigForQ);
    }
    Ok(())
}

/// Where a message of `priority` (0-9) and `msg_len` bytes ranks on a queue with `attrs`
/// holding `store` (the store's key rank: 0 first), or why it may not go there: 2048
/// MQRC_PERSISTENT_NOT_ALLOWED (a persistent message to a temporary dynamic queue), 2053
/// MQRC_Q_FULL (MAXDEPTH), 2056 MQRC_Q_SPACE_NOT_AVAILABLE (MAXFSIZE).
pub(crate) fn place_for(
    attrs: &QueueAttributes,
    store: &MessageStore,
    persistent: bool,
    priority: i32,
    msg_len: usize,
) -> Result<u8, ReasonCode> {
    if persistent && attrs.definition_type == DefinitionType::TemporaryDynamic {
        return Err(ReasonCode::PersistentNotAllowed);
    }
    let rank = match attrs.msg_delivery_sequence {
        MsgDeliverySequence::Priority => (priority::MAX - priority.clamp(0, 9)) as u8,
        MsgDeliverySequence::Fifo => (priority::MAX - attrs.def_priority.clamp(0, 9)) as u8,
    };
    if store.depth() >= attrs.max_depth.max(0) as usize {
        return Err(ReasonCode::QFull);
    }
    if store.bytes().saturating_add(msg_len as u64) > attrs.max_file_bytes() {
        return Err(ReasonCode::QSpaceNotAvailable);
    }
    Ok(rank)
}

/// What a put has settled when every check passed, for [`complete_descriptor`].
pub(crate) struct Settled<'a> {
    /// The stored priority and persistence ([`stored_priority_persistence`]).
    pub priority_persistence: (i32, i32),
    /// The group or segment fields to apply (`crate::group::plan_put`).
    pub group_plan: Option<crate::group::PutPlan>,
    /// The ReplyToQ and ReplyToQMgr MQ fills (`reply_to_resolution`).
    pub reply_to: Option<(ferry_mqi::FixedStr<48>, ferry_mqi::FixedStr<48>)>,
    /// The context passed from an input handle (PASS_*_CONTEXT).
    pub passed: Option<&'a crate::context::SavedContext>,
    /// PutDate and PutTime of the put.
    pub put_date_time: (ferry_mqi::FixedStr<8>, ferry_mqi::FixedStr<8>),
}

/// Completes the application's descriptor once every check has passed, the same for a
/// put to a local queue and to a transmission queue (`crate::remote_put`): priority and
/// persistence resolved, BackoutCount 0, MsgId and CorrelId generated as asked, the group
/// fields, ReplyToQ/ReplyToQMgr, and the context.
pub(crate) fn complete_descriptor(
    md: &mut MessageDescriptor,
    o: ferry_mqi::PutOptionFlags,
    settled: Settled<'_>,
    ids: &mut crate::msgid::IdGenerator,
    c: &mut crate::connection::Connection,
    hobj: crate::connection::Hobj,
) {
    use ferry_mqi::descriptor::NONE_ID;
    use ferry_mqi::PutOptionFlags;
    let (prio, pers) = settled.priority_persistence;
    md.priority = prio;
    md.persistence = pers;
    md.backout_count = 0;
    if md.msg_id == NONE_ID || o.contains(PutOptionFlags::NEW_MSG_ID) {
        md.msg_id = ids.next_id();
    }
    if o.contains(PutOptionFlags::NEW_CORREL_ID) {
        md.correl_id = ids.next_id();
    }
    if let Some(p) = settled.group_plan {
        if let Some(h) = c.handle_mut(hobj) {
            h.groups.put = p.apply(md, ids, h.groups.put);
        }
    }
    if let Some((q, qm)) = settled.reply_to {
        md.reply_to_q = q;
        md.reply_to_qmgr = qm;
    }
    crate::context::complete_put_context(
        md,
        o,
        settled.passed,
        &crate::context::GeneratedContext {
            user_id: &c.info.user_id,
            appl_name: &c.info.application_name,
            put_date_time: settled.put_date_time,
        },
    );
}
