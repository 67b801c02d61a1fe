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
