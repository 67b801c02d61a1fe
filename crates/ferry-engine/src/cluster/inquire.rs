//! MQINQ of a cluster queue with no definition here (opened MQOO_INQUIRE, resolved to an
//! instance elsewhere): the attributes the cluster tells of it, from the instance the
//! handle resolved to (MQ answers QType MQQT_CLUSTER for such a handle).

use crate::qmgr::QueueManager;
use ferry_mqi::inquire::selector as sel;
use ferry_mqi::{InquireValue, MqError, ReasonCode, Selector};

/// MQQT_CLUSTER: the queue type MQINQ answers for a cluster queue elsewhere.
pub const QUEUE_TYPE_CLUSTER: i32 = 7;

impl QueueManager {
    /// MQINQ selector `s` of cluster queue `queue` as instance-host `qmgr` advertises it
    /// (the first instance known when `qmgr`'s is not): Q_NAME, Q_TYPE (MQQT_CLUSTER),
    /// INHIBIT_PUT, DEF_BIND, CLWL_Q_RANK, CLWL_Q_PRIORITY, CLUSTER_NAME and
    /// Q_MGR_NAME; other selectors 2067 MQRC_SELECTOR_ERROR.
    pub(crate) fn inquire_cluster_queue(
        &self,
        queue: &str,
        qmgr: &str,
        s: Selector,
    ) -> Result<InquireValue, MqError> {
        let instances = self.cluster.instances(queue);
        let i = instances
            .iter()
            .find(|i| i.qmgr == qmgr)
            .or_else(|| instances.first())
            .ok_or(ReasonCode::ObjectChanged)?;
        Ok(match s {
            sel::Q_NAME => InquireValue::Str(i.queue.clone()),
            sel::Q_TYPE => InquireValue::Int(QUEUE_TYPE_CLUSTER),
            sel::INHIBIT_PUT => InquireValue::Int(if i.put_enabled { 0 } else { 1 }),
            sel::DEF_BIND => InquireValue::Int(match i.default_bind {
                ferry_objects::queue::DefaultBind::Open => 0,
                ferry_objects::queue::DefaultBind::NotFixed => 1,
                ferry_objects::queue::DefaultBind::Group => 2,
            }),
            sel::CLWL_Q_RANK => InquireValue::Int(i.rank),
            sel::CLWL_Q_PRIORITY => InquireValue::Int(i.priority),
            sel::CLUSTER_NAME => InquireValue::Str(i.cluster.clone()),
            sel::Q_MGR_NAME => InquireValue::Str(i.qmgr.clone()),
            _ => return Err(ReasonCode::SelectorError.into()),
        })
    }
}
