//! Retained publications (MQPMO_RETAIN): the newest one per topic string, given to each
//! new subscription that matches it (unless it asks for NEW_PUBLICATIONS_ONLY) and, for
//! a subscription that takes publications on request, on MQSUBRQ.
//!
//! As in IBM MQ, they are messages on the queue SYSTEM.RETAINED.PUB.QUEUE, one per topic
//! string, each carrying its topic in the MQTopicString property. A persistent retained
//! publication therefore survives a restart and kill -9 exactly as any persistent message
//! does (logged, filed, recovered); a non-persistent one is lost at restart, as MQ
//! documents. Replacing one is a get of the old message and a put of the new, in the
//! publication's unit of work.
//!
//! They are found by scanning that queue: retained publications are few (one per topic
//! that has any), and each scan reads properties only (a filed message's body stays on
//! disk unless it is delivered).

use crate::clock::Timestamp;
use crate::connection::ConnId;
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::pubsub::publish::{SUB_USER_DATA_PROPERTY, TOPIC_STRING_PROPERTY};
use crate::pubsub::subscription::SubKey;
use crate::put_checks::{check_put_allowed, place_for};
use crate::qmgr::QueueManager;
use crate::queue::MsgState;
use crate::report::ReportUow;
use crate::uow::UowEntry;
use bytes::Bytes;
use ferry_mqi::{
    FixedStr, MessageDescriptor, MessageProperties, MqError, PropertyRef, PropertyValue, ReasonCode,
};
use ferry_objects::{QueueDefinition, QueueType};
use ferry_pubsub::TopicFilter;

/// The queue retained publications are kept on.
pub const RETAINED_QUEUE: &str = "SYSTEM.RETAINED.PUB.QUEUE";
/// The property marking a copy that is a retained publication.
pub const IS_RETAINED_PROPERTY: &str = "MQIsRetained";

/// A retained publication found on the queue.
struct Retained {
    seq: u64,
    topic: String,
}

impl QueueManager {
    /// SYSTEM.RETAINED.PUB.QUEUE, made when a queue manager from before retained
    /// publications first needs it.
    pub(crate) fn retained_queue(&mut self, now: Timestamp, fx: &mut Effects) -> Option<QueueId> {
        if let Some(id) = self.queues.lookup(RETAINED_QUEUE) {
            return Some(id);
        }
        let def = QueueDefinition::new(RETAINED_QUEUE, QueueType::Local);
        self.define_queue(def, false, now, fx).ok()?;
        self.queues.lookup(RETAINED_QUEUE)
    }

    /// The retained publications whose topic string satisfies `wanted`, in the queue's
    /// order (committed ones only: one being replaced under syncpoint is the old one
    /// until the commit).
    fn retained_where(&self, wanted: impl Fn(&str) -> bool) -> Vec<Retained> {
        let Some(lq) = self
            .queues
            .lookup(RETAINED_QUEUE)
            .and_then(|id| self.queues.get(id))
            .and_then(|e| e.local.as_ref())
        else {
            return Vec::new();
        };
        lq.store
            .sorted()
            .iter()
            .filter(|m| matches!(m.state, MsgState::Available))
            .filter_map(
                |m| match MessageProperties::find(&m.properties, TOPIC_STRING_PROPERTY) {
                    Some(PropertyRef::String(t)) if wanted(t) => Some(Retained {
                        seq: m.key.seq,
                        topic: t.to_string(),
                    }),
                    _ => None,
                },
            )
            .collect()
    }

    /// Checks that a publication of `len` bytes can be retained (2479
    /// MQRC_PUT_NOT_RETAINED otherwise: nothing is then published).
    pub(crate) fn check_retainable(
        &mut self,
        md: &MessageDescriptor,
        len: usize,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<QueueId, MqError> {
        let qid = self
            .retained_queue(now, fx)
            .ok_or(ReasonCode::PutNotRetained)?;
        let entry = self.queues.get(qid).ok_or(ReasonCode::PutNotRetained)?;
        let lq = entry.local.as_ref().ok_or(ReasonCode::PutNotRetained)?;
        let attrs = &entry.def.attributes;
        check_put_allowed(attrs, len).map_err(|_| ReasonCode::PutNotRetained)?;
        place_for(attrs, &lq.store, md.is_persistent(), md.priority, len)
            .map_err(|_| ReasonCode::PutNotRetained)?;
        Ok(qid)
    }

    /// Makes `md`/`body`/`properties` (the publication, complete) the retained one for
    /// `topic`, in unit of work `uow`: the one it replaces is got, this one put.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn retain(
        &mut self,
        qid: QueueId,
        topic: &str,
        md: &MessageDescriptor,
        body: Bytes,
        properties: Bytes,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), ReasonCode> {
        for old in self.retained_where(|t| t == topic) {
            self.take_retained(qid, old.seq, uow, fx);
        }
        let mut kept = *md;
        // Its own copy: the original's CorrelId and reply-to, for MQSUBRQ and new
        // subscribers to receive with their own marks.
        kept.backout_count = 0;
        if kept.msg_id == ferry_mqi::descriptor::NONE_ID {
            kept.msg_id = self.ids.next_id();
        }
        self.put_internal(qid, kept, body, properties, false, uow, now, fx)
    }

    /// Removes retained message `seq` from `qid` in `uow` (logged when persistent).
    fn take_retained(&mut self, qid: QueueId, seq: u64, uow: ReportUow, fx: &mut Effects) {
        let logging = self.logging;
        let log_id = match uow {
            ReportUow::Outside => None,
            ReportUow::Own(id) => Some(id),
            ReportUow::Syncpoint(conn) => self
                .conns
                .get_mut(&conn)
                .map(|c| c.uow.log_id(&mut self.next_uow)),
        };
        let Some(entry) = self.queues.get_mut(qid) else {
            return;
        };
        let name = entry.def.name.clone();
        let Some(lq) = entry.local.as_mut() else {
            return;
        };
        let persistent = lq.store.get(seq).is_some_and(|m| m.md.is_persistent());
        if logging && persistent {
            fx.log(LogRecord::get(log_id, &name, seq));
        }
        match uow {
            ReportUow::Syncpoint(conn) => {
                let body = lq.store.get(seq).and_then(|m| m.body.load().ok());
                if let Some(body) = body {
                    lq.store.make_resident(seq, &body);
                }
                lq.store.set_state(seq, MsgState::UncommittedGet(conn));
                lq.joined_uow();
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.uow.entries.push(UowEntry::Get { queue: qid, seq });
                }
            }
            _ => {
                lq.store.remove(seq);
            }
        }
    }

    /// Puts a copy of every retained publication subscription `key` matches on its
    /// destination, marked MQIsRetained: at MQSUB (unless NEW_PUBLICATIONS_ONLY or on
    /// request) and at MQSUBRQ. Returns how many; 2526 MQRC_RETAINED_NOT_DELIVERED when
    /// one could not be put.
    pub(crate) fn send_retained(
        &mut self,
        key: SubKey,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<usize, MqError> {
        let Some(sub) = self.subscriptions.get(key) else {
            return Ok(0);
        };
        let filter = TopicFilter::new(&sub.topic_string, sub.scheme);
        let text = &sub.topic_string;
        let found = self.retained_where(|t| {
            filter.matches(t) && super::topic_attributes::admin_topic_visible(t, text)
        });
        if found.is_empty() {
            return Ok(0);
        }
        let Some(rq) = self.queues.lookup(RETAINED_QUEUE) else {
            return Ok(0);
        };
        let marks = sub.clone();
        let (dest, user, user_data, priority) = (
            sub.destination.clone(),
            sub.user_id.clone(),
            sub.user_data.clone(),
            sub.pub_priority,
        );
        let dest_qid = self
            .queues
            .lookup(&dest)
            .ok_or(ReasonCode::RetainedNotDelivered)?;
        let mut sent = 0;
        for r in found {
            let Some((mut md, body, properties)) = self.retained_message(rq, r.seq) else {
                continue;
            };
            let mut props = MessageProperties::decode(&properties).map_err(|e| e.reason())?;
            props
                .set_reserved(IS_RETAINED_PROPERTY, PropertyValue::Boolean(true))
                .map_err(|e| e.reason())?;
            if !user_data.is_empty() {
                props
                    .set_reserved(
                        SUB_USER_DATA_PROPERTY,
                        PropertyValue::String(user_data.clone()),
                    )
                    .map_err(|e| e.reason())?;
            }
            md.correl_id = marks.copy_correl_id(&md.correl_id);
            md.user_identifier = FixedStr::truncating(&user);
            md.msg_id = self.ids.next_id();
            let published_persistent = md.is_persistent();
            let temporary = self.queues.get(dest_qid).is_some_and(|e| e.is_temporary());
            if temporary {
                md.persistence = ferry_mqi::descriptor::persistence::NOT_PERSISTENT;
            }
            if priority >= 0 {
                md.priority = priority.min(9);
            }
            let uow = if self.logging && md.is_persistent() {
                ReportUow::Own(Self::own_uow_id(&mut self.next_uow))
            } else {
                ReportUow::Outside
            };
            let put = self.put_internal(
                dest_qid,
                md,
                body,
                props.encode(),
                published_persistent && temporary,
                uow,
                now,
                fx,
            );
            if let ReportUow::Own(id) = uow {
                fx.log(LogRecord::end_uow(id, true));
                fx.reply_waits();
            }
            put.map_err(|_| ReasonCode::RetainedNotDelivered)?;
            self.subscriptions.delivered(key, now);
            sent += 1;
        }
        Ok(sent)
    }

    /// The descriptor, body and properties of retained message `seq` on `rq`.
    fn retained_message(&self, rq: QueueId, seq: u64) -> Option<(MessageDescriptor, Bytes, Bytes)> {
        let lq = self.queues.get(rq)?.local.as_ref()?;
        let m = lq.store.get(seq)?;
        let body = m.body.load().ok()?;
        Some((m.md, body, m.properties.clone()))
    }

    /// MQSUBRQ(MQSR_ACTION_PUBLICATION) on subscription handle `hsub`: sends the
    /// retained publications it matches again. Returns how many (MQSRO NumPubs); 2437
    /// MQRC_NO_RETAINED_MSG when there is none.
    pub fn subscription_request(
        &mut self,
        conn: ConnId,
        hsub: crate::Hobj,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<usize, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<usize, MqError> {
            self.check_running(false)?;
            let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
            let h = c.handle(hsub).ok_or(ReasonCode::HobjError)?;
            let crate::connection::HandleTarget::Subscription(key) = h.target else {
                return Err(ReasonCode::HobjError.into());
            };
            match self.send_retained(key, now, fx)? {
                0 => Err(ReasonCode::NoRetainedMsg.into()),
                n => Ok(n),
            }
        })();
        self.debug_check();
        result
    }

    /// CLEAR TOPICSTR(`topic`) CLRTYPE(RETAINED): forgets the retained publication of
    /// `topic` (none is not an error, as in MQ). Returns whether there was one.
    pub fn clear_retained(&mut self, topic: &str, fx: &mut Effects) -> bool {
        self.debug_check();
        let found = self.retained_where(|t| t == topic);
        let Some(qid) = self.queues.lookup(RETAINED_QUEUE) else {
            return false;
        };
        let any = !found.is_empty();
        for r in found {
            let persistent = self
                .queues
                .get(qid)
                .and_then(|e| e.local.as_ref())
                .and_then(|lq| lq.store.get(r.seq).map(|m| m.md.is_persistent()))
                .unwrap_or(false);
            let uow = if self.logging && persistent {
                ReportUow::Own(Self::own_uow_id(&mut self.next_uow))
            } else {
                ReportUow::Outside
            };
            self.take_retained(qid, r.seq, uow, fx);
            if let ReportUow::Own(id) = uow {
                fx.log(LogRecord::end_uow(id, true));
                fx.reply_waits();
            }
            debug_assert_eq!(r.topic, topic);
        }
        self.debug_check();
        any
    }

    /// The topic strings that have a retained publication (DISPLAY TPSTATUS RETAINED).
    pub fn retained_topics(&self) -> Vec<String> {
        self.retained_where(|_| true)
            .into_iter()
            .map(|r| r.topic)
            .collect()
    }
}
