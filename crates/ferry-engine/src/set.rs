//! MQSET: the few queue attributes an application may change through a handle opened
//! with MQOO_SET: InhibitGet, InhibitPut and the trigger attributes, as MQ allows.
//!
//! Every value is checked before any is applied, so a refused call changes nothing
//! (MQ's rule). The change then takes the same path as an ALTER: waiting gets end with
//! 2016 when gets are inhibited, and the definition is saved (it outlives a restart).

use crate::clock::Timestamp;
use crate::connection::{ConnId, HandleTarget, Hobj};
use crate::effects::Effects;
use crate::qmgr::QueueManager;
use ferry_mqi::inquire::selector as sel;
use ferry_mqi::{InquireValue, MqError, OpenOptions, ReasonCode, Selector};
use ferry_objects::queue::{Enablement, TriggerType};
use ferry_objects::{AttrValue, AttributeSet, QueueAttributes};

/// The longest TriggerData MQSET accepts (MQ_TRIGGER_DATA_LENGTH).
pub const TRIGGER_DATA_LENGTH: usize = 64;

/// Checks one MQSET value and turns it into the attribute table's value, or the reason
/// MQ gives for it.
fn settable_value(selector: Selector, value: &InquireValue) -> Result<AttrValue, ReasonCode> {
    let int = |v: &InquireValue| match v {
        InquireValue::Int(n) => Ok(*n),
        InquireValue::Str(_) => Err(ReasonCode::SelectorError),
    };
    Ok(match selector {
        sel::INHIBIT_GET | sel::INHIBIT_PUT => match int(value)? {
            0 => AttrValue::Keyword(Enablement::Enabled.keyword()),
            1 => AttrValue::Keyword(Enablement::Disabled.keyword()),
            _ => return Err(ReasonCode::InhibitValueError),
        },
        sel::TRIGGER_CONTROL => match int(value)? {
            0 => AttrValue::Flag(false),
            1 => AttrValue::Flag(true),
            _ => return Err(ReasonCode::TriggerControlError),
        },
        sel::TRIGGER_TYPE => AttrValue::Keyword(
            match int(value)? {
                0 => TriggerType::None,
                1 => TriggerType::First,
                2 => TriggerType::Every,
                3 => TriggerType::Depth,
                _ => return Err(ReasonCode::TriggerTypeError),
            }
            .keyword(),
        ),
        sel::TRIGGER_DEPTH => match int(value)? {
            n if n > 0 => AttrValue::Int(n),
            _ => return Err(ReasonCode::TriggerDepthError),
        },
        sel::TRIGGER_MSG_PRIORITY => match int(value)? {
            n @ 0..=9 => AttrValue::Int(n),
            _ => return Err(ReasonCode::TriggerMsgPriorityErr),
        },
        sel::TRIGGER_DATA => match value {
            InquireValue::Str(s) if s.len() <= TRIGGER_DATA_LENGTH => AttrValue::Text(s.clone()),
            InquireValue::Str(_) => return Err(ReasonCode::CharAttrLengthError),
            InquireValue::Int(_) => return Err(ReasonCode::SelectorError),
        },
        // Everything else, DistLists included (Ferry has no distribution lists).
        _ => return Err(ReasonCode::SelectorError),
    })
}

impl QueueManager {
    /// MQSET on `hobj` (opened with MQOO_SET, else 2040): sets each `(selector, value)`
    /// on the queue the handle opened (an alias itself, not its target). A selector MQSET
    /// does not allow, or named twice, fails 2067; one that does not apply to the queue's
    /// type 2068; a bad value its own reason (2074-2078, 2006). All or nothing.
    pub fn set(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        attrs: &[(Selector, InquireValue)],
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        let r = self.set_uncounted(conn, hobj, attrs, now, fx);
        self.mqi_stats
            .note_result(&r, |m| &mut m.sets, |m| &mut m.sets_failed);
        r
    }

    fn set_uncounted(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        attrs: &[(Selector, InquireValue)],
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.check_running(false)?;
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
        if !h.options.contains(OpenOptions::SET) {
            return Err(ReasonCode::NotOpenForSet.into());
        }
        let HandleTarget::Queue { opened, .. } = h.target else {
            // Open refuses MQOO_SET on the queue manager; nothing else is settable.
            return Err(ReasonCode::SelectorError.into());
        };
        let entry = self.queues.get(opened).ok_or(ReasonCode::QDeleted)?;
        let mut def = entry.def.clone();
        let mask = def.queue_type.mask();
        for (i, (s, value)) in attrs.iter().enumerate() {
            if attrs[..i].iter().any(|(earlier, _)| earlier == s) {
                return Err(ReasonCode::SelectorError.into());
            }
            let v = settable_value(*s, value)?;
            let row = QueueAttributes::by_selector(*s).ok_or(ReasonCode::SelectorError)?;
            if !row.applies_to(mask) {
                return Err(ReasonCode::SelectorNotForType.into());
            }
            (row.set)(&mut def.attributes, v);
        }
        if attrs.is_empty() {
            return Ok(());
        }
        self.alter_queue(def, true, now, fx)
            .map_err(|_| MqError::from(ReasonCode::UnexpectedError))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_out_of_range_get_mq_reasons() {
        let bad = |s, v: i32| settable_value(s, &InquireValue::Int(v)).unwrap_err();
        assert_eq!(bad(sel::INHIBIT_GET, 2), ReasonCode::InhibitValueError);
        assert_eq!(bad(sel::INHIBIT_PUT, -1), ReasonCode::InhibitValueError);
        assert_eq!(
            bad(sel::TRIGGER_CONTROL, 5),
            ReasonCode::TriggerControlError
        );
        assert_eq!(bad(sel::TRIGGER_TYPE, 4), ReasonCode::TriggerTypeError);
        assert_eq!(bad(sel::TRIGGER_DEPTH, 0), ReasonCode::TriggerDepthError);
        assert_eq!(
            bad(sel::TRIGGER_MSG_PRIORITY, 10),
            ReasonCode::TriggerMsgPriorityErr
        );
        assert_eq!(bad(sel::MAX_Q_DEPTH, 10), ReasonCode::SelectorError);
        assert_eq!(bad(sel::DIST_LISTS, 1), ReasonCode::SelectorError);
        let long = InquireValue::Str("x".repeat(TRIGGER_DATA_LENGTH + 1));
        assert_eq!(
            settable_value(sel::TRIGGER_DATA, &long).unwrap_err(),
            ReasonCode::CharAttrLengthError
        );
    }
}
