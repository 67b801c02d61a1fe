//! Message selection (MQ's SelectionString, JMS/AMQP selectors): which messages a
//! handle, a waiting get or a consumer may receive beyond its MsgId/CorrelId criteria.
//!
//! The engine does not parse selectors: the server implements [`MessageFilter`] (with a
//! JMS selector crate) and hands it over as `Rc<dyn MessageFilter>` (the engine is
//! single-threaded). The id criteria are applied first, through the queue's indexes, and
//! the filter only on those candidates, so `JMSCorrelationID = 'x'` mapped to a CorrelId
//! criterion stays an index lookup. A filter that matches nothing costs a scan of the
//! candidates, as it does in MQ.

use crate::clock::Timestamp;
use crate::queue::{Criteria, MessageStore, MsgKey, StoredMsg};
use ferry_mqi::MessageDescriptor;
use std::fmt;
use std::rc::Rc;

/// A message selector: decides from a message's descriptor and encoded properties
/// (see [`ferry_mqi::MessageProperties::find`]) whether a getter or consumer receives it.
/// It must be a pure function of its inputs: the engine may call it any number of times.
pub trait MessageFilter {
    /// True when the message is selected.
    fn matches(&self, md: &MessageDescriptor, properties: &[u8]) -> bool;
}

/// A shared filter, as handles, waiters and consumers keep it.
#[derive(Clone)]
pub(crate) struct SharedFilter(pub Rc<dyn MessageFilter>);

impl SharedFilter {
    /// True when `msg` is selected.
    pub fn selects(&self, msg: &StoredMsg) -> bool {
        self.0.matches(&msg.md, &msg.properties)
    }
}

impl fmt::Debug for SharedFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MessageFilter")
    }
}

/// True when `filter` (if any) selects `msg`.
pub(crate) fn selected(filter: Option<&SharedFilter>, msg: &StoredMsg) -> bool {
    filter.is_none_or(|f| f.selects(msg))
}

/// The first available message after `after` (from the start when `None`), in get
/// order, that fits `crit` and passes `accept`; expired messages met on the way are
/// discarded, as MQGET does (those that ask for an expiration report are kept aside in
/// the store's `expired_for_report` for the queue manager to report).
pub(crate) fn find_next(
    store: &mut MessageStore,
    crit: &Criteria,
    mut after: Option<MsgKey>,
    now: Timestamp,
    mut accept: impl FnMut(&StoredMsg) -> bool,
) -> Option<MsgKey> {
    loop {
        let k = store.first(crit, after)?;
        let m = store.get(k.seq)?;
        if m.expired(now) {
            if let Some(gone) = store.remove(k.seq) {
                if crate::report::wants_expiration(&gone.md) {
                    store.expired_for_report.push(*gone);
                }
            }
            continue;
        }
        if accept(&m) {
            return Some(k);
        }
        after = Some(k);
    }
}
