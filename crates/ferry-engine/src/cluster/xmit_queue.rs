//! Cluster transmission queues, as QMGR DEFCLXQ says: SCTQ (every cluster-sender sends
//! from SYSTEM.CLUSTER.TRANSMIT.QUEUE, MQ's default) or CHANNEL (each has its own
//! SYSTEM.CLUSTER.TRANSMIT.<channel>, a permanent-dynamic queue made from
//! SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE when the channel starts).
//!
//! A channel uses the queue it switched to; the switch happens when the channel next
//! starts (the server moves its waiting messages, then [`QueueManager::set_cluster_xmit_q`]),
//! as in MQ. Before any switch (and after a restart), a channel uses its own queue when
//! DEFCLXQ(CHANNEL) holds and the queue exists, SYSTEM.CLUSTER.TRANSMIT.QUEUE otherwise.

use crate::clock::Timestamp;
use crate::effects::Effects;
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use ferry_objects::qmgr::DefaultClusterXmitQueue;
use ferry_objects::queue::{
    DefinitionType, Usage, CLUSTER_TRANSMIT_MODEL_QUEUE, CLUSTER_TRANSMIT_PREFIX,
    CLUSTER_TRANSMIT_QUEUE,
};
use ferry_objects::{AdminError, QueueDefinition, QueueType};

/// The name of cluster-sender `channel`'s own transmission queue.
pub fn channel_xmit_q(channel: &str) -> String {
    format!("{CLUSTER_TRANSMIT_PREFIX}{}", channel.trim())
}

impl QueueManager {
    /// The transmission queue cluster-sender `channel` sends from now, and messages for
    /// it are put to.
    pub fn cluster_xmit_q_name(&self, channel: &str) -> String {
        if let Some(q) = self.cluster_xmit_qs.get(channel) {
            return q.clone();
        }
        if self.qmgr.default_cluster_xmit_q == DefaultClusterXmitQueue::Channel {
            let own = channel_xmit_q(channel);
            if self.queues.lookup(&own).is_some() {
                return own;
            }
        }
        CLUSTER_TRANSMIT_QUEUE.to_string()
    }

    /// The transmission queue DEFCLXQ asks cluster-sender `channel` to use from its
    /// next start.
    pub fn cluster_wanted_xmit_q(&self, channel: &str) -> String {
        match self.qmgr.default_cluster_xmit_q {
            DefaultClusterXmitQueue::Channel => channel_xmit_q(channel),
            DefaultClusterXmitQueue::Sctq => CLUSTER_TRANSMIT_QUEUE.to_string(),
        }
    }

    /// The channel switched to `queue` (its messages were moved there).
    pub fn set_cluster_xmit_q(&mut self, channel: &str, queue: &str) {
        debug_assert!(self.queues.lookup(queue).is_some(), "{queue} exists");
        self.cluster_xmit_qs
            .insert(channel.to_string(), queue.to_string());
    }

    /// True when local queue `queue` holds a message with CorrelId `correl_id` (a
    /// cluster-sender's messages waiting there).
    pub fn has_message_with_correl_id(&self, queue: &str, correl_id: &[u8; 24]) -> bool {
        let Some(lq) = self
            .queues
            .lookup(queue)
            .and_then(|id| self.queues.get(id))
            .and_then(|e| e.local.as_ref())
        else {
            return false;
        };
        let mut found = false;
        lq.store.for_each_id(|_, c| found |= c == correl_id);
        found
    }

    /// The queue a put of a cluster message for `channel` goes to (its id).
    pub(crate) fn cluster_xmit_q_for(&self, channel: &str) -> Option<QueueId> {
        if self.cluster_xmit_qs.is_empty()
            && self.qmgr.default_cluster_xmit_q == DefaultClusterXmitQueue::Sctq
        {
            // MQ's default, every put: no name to make.
            return self.queues.lookup(CLUSTER_TRANSMIT_QUEUE);
        }
        self.queues.lookup(&self.cluster_xmit_q_name(channel))
    }

    /// Makes cluster-sender `channel`'s own transmission queue from
    /// SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE (a permanent-dynamic local queue, USAGE(XMITQ))
    /// unless it exists: returns its name.
    pub fn define_cluster_channel_xmit_q(
        &mut self,
        channel: &str,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<String, AdminError> {
        let name = channel_xmit_q(channel);
        if self.queues.lookup(&name).is_some() {
            return Ok(name);
        }
        let model = self
            .queues
            .lookup(CLUSTER_TRANSMIT_MODEL_QUEUE)
            .and_then(|id| self.queues.get(id))
            .filter(|e| e.def.queue_type == QueueType::Model)
            .map(|e| e.def.attributes.clone())
            .ok_or_else(|| AdminError::NotFound {
                name: CLUSTER_TRANSMIT_MODEL_QUEUE.to_string(),
            })?;
        let mut def = QueueDefinition::new(name.clone(), QueueType::Local);
        def.attributes = model;
        def.attributes.definition_type = DefinitionType::PermanentDynamic;
        def.attributes.usage = Usage::TransmissionQueue;
        def.attributes.descr = format!("Cluster transmission queue of channel {}", channel.trim());
        let (date, time) = crate::clock::admin_date_time(now);
        def.attributes.creation_date = date.clone();
        def.attributes.creation_time = time.clone();
        def.attributes.alteration_date = date;
        def.attributes.alteration_time = time;
        self.define_queue(def, false, now, fx)?;
        Ok(name)
    }
}
