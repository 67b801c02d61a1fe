//! MQINQ: attribute values by selector, from the attribute tables plus live counters,
//! with keyword attributes turned into MQ's numeric constants.

use crate::connection::{ConnId, HandleTarget, Hobj};
use crate::qmgr::QueueManager;
use ferry_mqi::inquire::selector as sel;
use ferry_mqi::{InquireValue, MqError, OpenOptions, ReasonCode, Selector};
use ferry_objects::{AttrValue, AttributeSet, ProcessAttributes, QmgrAttributes, QueueAttributes};

/// MQPL_UNIX.
pub const PLATFORM_UNIX: i32 = 3;
/// MQIAV_NOT_APPLICABLE: an integer attribute that does not apply to the object.
pub const NOT_APPLICABLE: i32 = -1;

/// The MQ constant for a keyword value of an integer selector.
fn keyword_number(selector: Selector, kw: &str) -> Option<i32> {
    Some(match (selector, kw) {
        (sel::INHIBIT_PUT | sel::INHIBIT_GET, "ENABLED") => 0,
        (sel::INHIBIT_PUT | sel::INHIBIT_GET, "DISABLED") => 1,
        (sel::DEF_PERSISTENCE, "NO") => 0,
        (sel::DEF_PERSISTENCE, "YES") => 1,
        (sel::DEF_INPUT_OPEN_OPTION, "SHARED") => 2,
        (sel::DEF_INPUT_OPEN_OPTION, "EXCL") => 4,
        (sel::MSG_DELIVERY_SEQUENCE, "PRIORITY") => 0,
        (sel::MSG_DELIVERY_SEQUENCE, "FIFO") => 1,
        (sel::USAGE, "NORMAL") => 0,
        (sel::USAGE, "XMITQ") => 1,
        (sel::DEFINITION_TYPE, "PREDEFINED") => 1,
        (sel::DEFINITION_TYPE, "PERMDYN") => 2,
        (sel::DEFINITION_TYPE, "TEMPDYN") => 3,
        (sel::PLATFORM, "UNIX") => PLATFORM_UNIX,
        (sel::TRIGGER_TYPE, "NONE") => 0,
        (sel::TRIGGER_TYPE, "FIRST") => 1,
        (sel::TRIGGER_TYPE, "EVERY") => 2,
        (sel::TRIGGER_TYPE, "DEPTH") => 3,
        (sel::APPL_TYPE, kw) => ferry_objects::ApplType::from_keyword(kw)?.mqat(),
        (sel::DEF_BIND, "OPEN") => 0,
        (sel::DEF_BIND, "NOTFIXED") => 1,
        (sel::DEF_BIND, "GROUP") => 2,
        (sel::CLWL_USEQ, "LOCAL") => 0,
        (sel::CLWL_USEQ, "ANY") => 1,
        (sel::CLWL_USEQ, "QMGR") => -3,
        (sel::DEF_CLUSTER_XMIT_Q_TYPE, "SCTQ") => 0,
        (sel::DEF_CLUSTER_XMIT_Q_TYPE, "CHANNEL") => 1,
        _ => return None,
    })
}

/// An MQCA selector (2001..=4000) answers text; the rest integers.
fn is_char_selector(s: Selector) -> bool {
    (2001..=4000).contains(&s)
}

/// Converts a table value into what MQINQ returns.
pub(crate) fn to_inquire(selector: Selector, v: AttrValue) -> Result<InquireValue, MqError> {
    Ok(match v {
        AttrValue::Int(n) => InquireValue::Int(n),
        AttrValue::Text(s) => InquireValue::Str(s),
        AttrValue::Flag(b) => InquireValue::Int(i32::from(b)),
        AttrValue::Keyword(k) => {
            InquireValue::Int(keyword_number(selector, k).ok_or(ReasonCode::SelectorError)?)
        }
    })
}

impl QueueManager {
    /// MQINQ on `hobj` (opened with MQOO_INQUIRE, else 2038). Unknown selectors fail
    /// 2067; integer attributes that do not apply to the queue's type answer -1
    /// (MQIAV_NOT_APPLICABLE), text ones blank.
    pub fn inquire(
        &self,
        conn: ConnId,
        hobj: Hobj,
        selectors: &[Selector],
    ) -> Result<Vec<InquireValue>, MqError> {
        let r = self.inquire_uncounted(conn, hobj, selectors);
        // MQINQ takes `&self`: its counts live in a cell beside the other counters.
        let (ok, failed) = self.inq_stats.get();
        self.inq_stats.set(match r {
            Ok(_) => (ok + 1, failed),
            Err(_) => (ok, failed + 1),
        });
        r
    }

    fn inquire_uncounted(
        &self,
        conn: ConnId,
        hobj: Hobj,
        selectors: &[Selector],
    ) -> Result<Vec<InquireValue>, MqError> {
        self.check_running(false)?;
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
        if !h.options.contains(OpenOptions::INQUIRE) {
            return Err(ReasonCode::NotOpenForInquire.into());
        }
        selectors
            .iter()
            .map(|&s| match h.target {
                HandleTarget::QMgr => self.inquire_qmgr(s),
                HandleTarget::Process => self.inquire_process(&h.name, s),
                HandleTarget::Namelist => self.inquire_namelist(&h.name, s),
                HandleTarget::Queue { opened, .. } => self.inquire_queue(opened, s),
                // A remote definition opened by name: its own attributes.
                HandleTarget::Remote(r) => match (r.definition, r.cluster) {
                    (Some(def), _) => self.inquire_queue(def, s),
                    // A cluster queue elsewhere: what the cluster tells of it.
                    (None, Some(_)) => self.inquire_cluster_queue(
                        r.remote_q_name.as_str(),
                        r.remote_qmgr_name.as_str(),
                        s,
                    ),
                    (None, None) => Err(ReasonCode::NotOpenForInquire.into()),
                },
                HandleTarget::Topic | HandleTarget::Subscription(_) => {
                    Err(ReasonCode::NotOpenForInquire.into())
                }
            })
            .collect()
    }

    /// A process definition's attributes (deleted since the open: 2085).
    fn inquire_process(&self, name: &str, s: Selector) -> Result<InquireValue, MqError> {
        let p = self
            .processes
            .get(name)
            .ok_or(ReasonCode::UnknownObjectName)?;
        if s == sel::PROCESS_NAME {
            return Ok(InquireValue::Str(p.name.clone()));
        }
        let row = ProcessAttributes::by_selector(s).ok_or(ReasonCode::SelectorError)?;
        to_inquire(s, (row.get)(&p.attributes))
    }

    fn inquire_qmgr(&self, s: Selector) -> Result<InquireValue, MqError> {
        match s {
            sel::Q_MGR_NAME => return Ok(InquireValue::Str(self.name.clone())),
            sel::PLATFORM => return Ok(InquireValue::Int(PLATFORM_UNIX)),
            _ => {}
        }
        let row = QmgrAttributes::by_selector(s).ok_or(ReasonCode::SelectorError)?;
        to_inquire(s, (row.get)(&self.qmgr))
    }

    fn inquire_queue(
        &self,
        id: crate::objects::QueueId,
        s: Selector,
    ) -> Result<InquireValue, MqError> {
        let e = self.queues.get(id).ok_or(ReasonCode::QDeleted)?;
        let lq = e.local.as_ref();
        let live = |f: &dyn Fn(&crate::queue::LocalQueue) -> i64| -> InquireValue {
            match lq {
                Some(q) => InquireValue::Int(i32::try_from(f(q)).unwrap_or(i32::MAX)),
                None => InquireValue::Int(NOT_APPLICABLE),
            }
        };
        match s {
            sel::Q_NAME => return Ok(InquireValue::Str(e.def.name.clone())),
            sel::Q_TYPE => return Ok(InquireValue::Int(e.def.queue_type.mqqt())),
            sel::CURRENT_Q_DEPTH => return Ok(live(&|q| q.store.depth() as i64)),
            sel::OPEN_INPUT_COUNT => return Ok(live(&|q| i64::from(q.open_input()))),
            sel::OPEN_OUTPUT_COUNT => return Ok(live(&|q| i64::from(q.open_output()))),
            _ => {}
        }
        let row = QueueAttributes::by_selector(s).ok_or(ReasonCode::SelectorError)?;
        if !row.applies_to(e.def.queue_type.mask()) {
            return Ok(if is_char_selector(s) {
                InquireValue::Str(String::new())
            } else {
                InquireValue::Int(NOT_APPLICABLE)
            });
        }
        to_inquire(s, (row.get)(&e.def.attributes))
    }
}
