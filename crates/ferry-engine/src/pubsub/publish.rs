//! Publishing: MQOPEN of a topic for output, and MQPUT (or MQPUT1) to it, which puts one
//! copy of the publication on the queue of every subscription it reaches.
//!
//! Order of work, all in one engine call:
//! 1. the put's own checks (options, context, lengths, priority, persistence, expiry) and
//!    the topic's PUB; then the descriptor is completed once (MsgId, context, AS_TOPIC_DEF
//!    persistence and priority from DEFPSIST and DEFPRTY);
//! 2. the subscriptions it reaches: the index's matches, less those a WILDCARD(BLOCK)
//!    node hides, those that only take publications on request, the publisher's own
//!    with MQPMO_NOT_OWN_SUBS, those whose selector refuses it, and those below the
//!    highest SubLevel in reach;
//! 3. every copy's destination is checked before any copy is put. A refused copy goes
//!    to the dead-letter queue when USEDLQ allows it (with an MQDLH, which counts as
//!    delivered); otherwise PMSGDLV (persistent) or NPMSGDLV (non-persistent) decides:
//!    ALL fails the publish with 2502 and nothing is put, ALLDUR does so when the
//!    subscription is durable, ALLAVAIL drops that copy;
//! 4. the copies are put: in the publisher's unit of work under MQPMO_SYNCPOINT (each
//!    counts toward MAXUMSGS), otherwise persistent copies are logged as one unit of work
//!    of the queue manager's own, so a crash keeps all of them or none.
//!
//! A copy on a temporary dynamic queue (a managed non-durable subscription's) is stored,
//! and not logged, as non-persistent: the queue, and so the copy, cannot outlive a
//! restart. It is delivered as persistent all the same, as it was published (JMS
//! subscribers see the publisher's JMSDeliveryMode).

use crate::clock::Timestamp;
use crate::connection::{ConnId, Handle, HandleTarget, Hobj, InputMode};
use crate::context::{check_put_context, complete_put_context, passed_context, GeneratedContext};
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::objects::QueueId;
use crate::open::Opened;
use crate::pubsub::subscription::SubKey;
use crate::pubsub::topic_attributes::TopicPath;
use crate::put_checks::{
    check_descriptor, check_put_allowed, place_for, stored_priority_persistence,
};
use crate::qmgr::QueueManager;
use crate::report::ReportUow;
use bytes::Bytes;
use ferry_mqi::dead_letter::{
    DeadLetterHeader, APPL_TYPE_QMGR, DEAD_LETTER_HEADER_LEN, FORMAT_DEAD_LETTER_HEADER,
};
use ferry_mqi::descriptor::{persistence, priority, NONE_ID};
use ferry_mqi::subscription::{PRIORITY_AS_PUBLISHED, PRIORITY_AS_QUEUE_DEFAULT};
use ferry_mqi::{
    FixedStr, MessageDescriptor, MessageProperties, MqError, OpenOptions, PropertyValue,
    PutOptionFlags, PutOptions, ReasonCode,
};
use ferry_objects::topic::DeliveryPolicy;
use ferry_security::oam::Authority;
use std::collections::HashMap;

/// The property naming the topic a copy was published on.
pub const TOPIC_STRING_PROPERTY: &str = "MQTopicString";
/// The property carrying the subscription's SubUserData.
pub const SUB_USER_DATA_PROPERTY: &str = "MQSubUserData";
/// The property giving the publication's PubLevel.
pub const PUB_LEVEL_PROPERTY: &str = "MQPubLevel";

/// The highest SubLevel a publication reaches (MQPMO PubLevel's default).
const PUB_LEVEL: i32 = 9;

/// A publication's properties (`encoded`) with those the queue manager adds to every copy:
/// MQTopicString and MQPubLevel.
pub(crate) fn publication_properties(
    topic: &str,
    encoded: &[u8],
) -> Result<MessageProperties, ferry_mqi::PropertyError> {
    let mut p = MessageProperties::decode(encoded)?;
    p.set_reserved(
        TOPIC_STRING_PROPERTY,
        PropertyValue::String(topic.to_string()),
    )?;
    p.set_reserved(PUB_LEVEL_PROPERTY, PropertyValue::Int32(PUB_LEVEL))?;
    Ok(p)
}

/// The open options that make sense on a topic: output and its companions.
fn topic_options() -> OpenOptions {
    OpenOptions::OUTPUT
        | OpenOptions::FAIL_IF_QUIESCING
        | OpenOptions::ALTERNATE_USER_AUTHORITY
        | OpenOptions::PASS_IDENTITY_CONTEXT
        | OpenOptions::PASS_ALL_CONTEXT
        | OpenOptions::SET_IDENTITY_CONTEXT
        | OpenOptions::SET_ALL_CONTEXT
}

/// One copy, checked and ready to put.
struct PlannedCopy {
    queue: QueueId,
    md: MessageDescriptor,
    body: Bytes,
    properties: Bytes,
    /// A persistent publication's copy stored non-persistent on a temporary queue.
    delivered_persistent: bool,
    /// Its body is the publication's (not a dead-letter copy's, which has an MQDLH).
    shares_body: bool,
    sub: SubKey,
}

impl QueueManager {
    /// MQOPEN of a topic (MQOT_TOPIC) for publishing: `object_name` is a topic object
    /// (blank: none) and `object_string` a topic string, combined as MQ combines them.
    /// Only MQOO_OUTPUT (with its context and quiescing companions) is allowed: 2045
    /// MQRC_OPTION_NOT_VALID_FOR_TYPE otherwise. The returned `resolved_q_name` is
    /// blank and `object_name` the resolved topic string (MQOD ResObjectString).
    pub fn open_topic(
        &mut self,
        conn: ConnId,
        object_name: &str,
        object_string: &str,
        options: OpenOptions,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<Opened, MqError> {
            self.check_running(options.contains(OpenOptions::FAIL_IF_QUIESCING))?;
            self.open_topic_inner(conn, object_name, object_string, options, false, fx)
        })();
        self.mqi_stats
            .note_result(&result, |m| &mut m.opens, |m| &mut m.opens_failed);
        self.debug_check();
        result
    }

    pub(crate) fn open_topic_inner(
        &mut self,
        conn: ConnId,
        object_name: &str,
        object_string: &str,
        options: OpenOptions,
        for_put1: bool,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        if !options.contains(OpenOptions::OUTPUT) || !topic_options().contains(options) {
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        let topic = self.resolve_topic_string(object_name, object_string)?;
        self.check_topic_authority(conn, &topic, Authority::Pub, fx)?;
        let max_handles = self.qmgr.max_handles.max(0) as usize;
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        if !c.system && super::topic_attributes::is_admin_topic(&topic) {
            // MQ: only the queue manager publishes on $SYS/MQ.
            return Err(ReasonCode::AdminTopicStringError.into());
        }
        if !for_put1 && c.open_count >= max_handles {
            return Err(ReasonCode::HandleNotAvailable.into());
        }
        let hobj = c.add_handle(Handle {
            target: HandleTarget::Topic,
            options,
            input: InputMode::None,
            name: topic.clone(),
            cursor: None,
            lock: None,
            owns_temp_queue: false,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        Ok(Opened {
            hobj,
            object_name: topic,
            resolved_q_name: String::new(),
            resolved_qmgr_name: self.name.clone(),
        })
    }

    /// MQPUT on a topic handle: publishes (see the module comment). Returns 2550
    /// MQRC_NO_SUBS_MATCHED as a warning when MQPMO_WARN_IF_NO_SUBS_MATCHED asks and no
    /// subscription received a copy.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn publish(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        properties: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        let o = pmo.options;
        self.check_running(o.contains(PutOptionFlags::FAIL_IF_QUIESCING))?;
        self.end_expired_subscriptions(now, fx);
        let max_uncommitted = self.qmgr.max_uncommitted_msgs.max(0) as usize;
        let qm_max_len = self.qmgr.max_msg_length.max(0) as usize;
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
        if !h.options.contains(OpenOptions::OUTPUT) {
            return Err(ReasonCode::NotOpenForOutput.into());
        }
        if o.contains(PutOptionFlags::SYNCPOINT | PutOptionFlags::NO_SYNCPOINT) {
            return Err(ReasonCode::OptionsError.into());
        }
        check_put_context(o, h.options)?;
        let passed = passed_context(c, pmo)?;
        // The remembered path holds the topic string too: no copy of it per publication.
        let path = self.cached_topic_path(&h.name);
        let topic: &str = &path.topic;
        let attrs = &path.attributes;
        if !attrs.publish {
            return Err(ReasonCode::PutInhibited.into());
        }
        let msg_len = body.len().saturating_add(properties.len());
        if msg_len > qm_max_len {
            return Err(ReasonCode::MsgTooBigForQMgr.into());
        }
        check_descriptor(md)?;
        let (prio, pers, mut warning) =
            stored_priority_persistence(md, attrs.default_priority, attrs.default_persistent);
        md.priority = prio;
        md.persistence = pers;
        let persistent = md.persistence == persistence::PERSISTENT;
        let policy = if persistent {
            attrs.persistent_delivery
        } else {
            attrs.non_persistent_delivery
        };
        let use_dlq = attrs.use_dlq;
        let sync = o.contains(PutOptionFlags::SYNCPOINT);
        md.backout_count = 0;
        // MQ: when the publisher gives no MsgId (or asks for a new one) every copy gets a
        // MsgId of its own, and a publisher that gave MQMI_NONE gets it back unchanged;
        // a MsgId the publisher gives is every copy's.
        let unique_ids = md.msg_id == NONE_ID || o.contains(PutOptionFlags::NEW_MSG_ID);
        if o.contains(PutOptionFlags::NEW_MSG_ID) {
            md.msg_id = self.ids.next_id();
        }
        if o.contains(PutOptionFlags::NEW_CORREL_ID) {
            md.correl_id = self.ids.next_id();
        }
        if let Some((q, qm)) = self.reply_to_resolution(md) {
            md.reply_to_q = q;
            md.reply_to_qmgr = qm;
        }
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        complete_put_context(
            md,
            o,
            passed.as_ref(),
            &GeneratedContext {
                user_id: &c.info.user_id,
                appl_name: &c.info.application_name,
                put_date_time: self.put_stamp.of(now),
            },
        );
        let uow_len = c.uow.len();
        let retain = o.contains(PutOptionFlags::RETAIN);
        let retained_queue = if retain {
            Some(self.check_retainable(md, msg_len, now, fx)?)
        } else {
            None
        };

        let reached =
            self.subscriptions_reached(now, conn, topic, path.blocked_above, md, &properties, o);
        let mut copies = self.plan_copies(
            &path,
            &reached,
            md,
            &body,
            &properties,
            o,
            policy,
            use_dlq,
            now,
        )?;
        if unique_ids {
            for c in &mut copies {
                c.md.msg_id = self.ids.next_id();
            }
        }
        if sync && uow_len + copies.len() > max_uncommitted {
            return Err(ReasonCode::SyncpointLimitReached.into());
        }
        // Persistent copies sharing the publication's body are logged in one record,
        // the body once, when there are several (`crate::journal`'s Publish).
        let sharing = copies
            .iter()
            .filter(|c| c.shares_body && c.md.is_persistent())
            .count();
        let share_log = self.logging && sharing > 1;
        let others = copies.iter().filter(|c| c.md.is_persistent()).count()
            - if share_log { sharing } else { 0 };
        let mut records = others + usize::from(share_log);
        if retain && persistent {
            // The retained publication it replaces is got, this one put.
            records += 2;
        }
        let uow = if sync {
            ReportUow::Syncpoint(conn)
        } else if self.logging && records > 1 {
            ReportUow::Own(Self::own_uow_id(&mut self.next_uow))
        } else {
            ReportUow::Outside
        };
        let delivered = copies.len();
        let body_len = body.len();
        let (shared, rest): (Vec<PlannedCopy>, Vec<PlannedCopy>) = copies
            .into_iter()
            .partition(|c| share_log && c.shares_body && c.md.is_persistent());
        if !shared.is_empty() {
            self.put_sharing_body(shared, &body, uow, now, fx)?;
        }
        for copy in rest {
            let sub = copy.sub;
            let put = self.put_internal(
                copy.queue,
                copy.md,
                copy.body,
                copy.properties,
                copy.delivered_persistent,
                uow,
                now,
                fx,
            );
            debug_assert!(
                put.is_ok(),
                "every copy was checked before any was put: {put:?}"
            );
            self.subscriptions.delivered(sub, now);
        }
        if let Some(rq) = retained_queue {
            let mut kept = MessageProperties::decode(&properties).map_err(|e| e.reason())?;
            kept.set_reserved(
                TOPIC_STRING_PROPERTY,
                PropertyValue::String(topic.to_string()),
            )
            .map_err(|e| e.reason())?;
            let retained = self.retain(rq, topic, md, body, kept.encode(), uow, now, fx);
            debug_assert!(
                retained.is_ok(),
                "checked before anything was put: {retained:?}"
            );
        }
        if let ReportUow::Own(id) = uow {
            fx.log(LogRecord::end_uow(id, true));
            fx.reply_waits();
        }
        if delivered == 0 && o.contains(PutOptionFlags::WARN_IF_NO_SUBS_MATCHED) {
            warning = Some(ReasonCode::NoSubsMatched);
        }
        self.mqi_stats.published_messages += delivered as u64;
        self.mqi_stats.published_bytes += (delivered as u64).saturating_mul(body_len as u64);
        Ok(warning)
    }

    /// Puts persistent copies that share the publication's `body`, logged as one
    /// Publish record (the body once) before any becomes visible.
    fn put_sharing_body(
        &mut self,
        copies: Vec<PlannedCopy>,
        body: &Bytes,
        uow: ReportUow,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        let mut prepared = Vec::with_capacity(copies.len());
        for c in copies {
            debug_assert!(c.shares_body && c.md.is_persistent());
            let (msg, queue) = self.prepare_internal(
                c.queue,
                c.md,
                c.body,
                c.properties,
                c.delivered_persistent,
                uow,
                now,
            )?;
            prepared.push((c.queue, msg, queue, c.sub));
        }
        let logged = prepared
            .iter()
            .map(|(_, msg, queue, _)| Ok((queue.as_str(), msg.logged()?)))
            .collect::<Result<Vec<_>, ReasonCode>>()?;
        let refs: Vec<(&str, &crate::LoggedMessage)> =
            logged.iter().map(|(q, m)| (*q, m)).collect();
        let log_id = self.internal_log_id(uow);
        fx.log(LogRecord::publish(log_id, &refs, body));
        if uow == ReportUow::Outside {
            fx.reply_waits();
        }
        drop(refs);
        drop(logged);
        for (qid, msg, _, sub) in prepared {
            self.commit_internal(qid, msg, uow, now, fx);
            self.subscriptions.delivered(sub, now);
        }
        Ok(())
    }

    /// The subscriptions a publication on `topic` with descriptor `md` reaches, in the
    /// index's order (step 2 of the module comment).
    #[allow(clippy::too_many_arguments)]
    fn subscriptions_reached(
        &self,
        now: Timestamp,
        conn: ConnId,
        topic: &str,
        blocked_above: Option<usize>,
        md: &MessageDescriptor,
        properties: &[u8],
        o: PutOptionFlags,
    ) -> Vec<SubKey> {
        let mut matches = Vec::new();
        self.subscriptions.index.matching(topic, &mut matches);
        let not_own = o.contains(PutOptionFlags::NOT_OWN_SUBS);
        let mut reached: Vec<(SubKey, i32)> = matches
            .into_iter()
            .filter(|m| match (m.wildcard_depth, blocked_above) {
                (Some(depth), Some(block)) => depth >= block,
                _ => true,
            })
            .filter_map(|m| {
                let sub = self.subscriptions.get(m.key)?;
                if sub.on_request || sub.sub_level > PUB_LEVEL || sub.expired(now) {
                    return None;
                }
                let own = || sub.open_by.iter().any(|(c, _)| *c == conn);
                if (not_own || sub.no_local) && own() {
                    return None;
                }
                if let Some((_, filter)) = &sub.selector {
                    if !filter.0.matches(md, properties) {
                        return None;
                    }
                }
                Some((m.key, sub.sub_level))
            })
            .collect();
        // Only the highest SubLevel in reach receives the publication.
        if let Some(top) = reached.iter().map(|(_, level)| *level).max() {
            reached.retain(|(_, level)| *level == top);
        }
        reached.into_iter().map(|(k, _)| k).collect()
    }

    /// Every copy's descriptor, properties and checked destination (step 3 of the module
    /// comment): 2502 MQRC_PUBLICATION_FAILURE when the delivery policy says a refused
    /// copy fails the publish.
    #[allow(clippy::too_many_arguments)]
    fn plan_copies(
        &self,
        path: &TopicPath,
        reached: &[SubKey],
        md: &MessageDescriptor,
        body: &Bytes,
        properties: &Bytes,
        o: PutOptionFlags,
        policy: DeliveryPolicy,
        use_dlq: bool,
        now: Timestamp,
    ) -> Result<Vec<PlannedCopy>, MqError> {
        let mut copies = Vec::with_capacity(reached.len());
        if reached.is_empty() {
            return Ok(copies);
        }
        let topic: &str = &path.topic;
        // A publication without properties of its own (most native ones) reuses the
        // topic's encoding of the properties every copy carries.
        let published = if properties.is_empty() {
            None
        } else {
            Some(publication_properties(topic, properties).map_err(|e| e.reason())?)
        };
        let shared_properties = match &published {
            None => path.copy_properties.clone(),
            Some(p) => p.encode(),
        };
        // Copies already planned per queue, for MAXDEPTH.
        let mut planned: HashMap<QueueId, usize> = HashMap::new();
        let dlq = self.qmgr.dead_letter_q.trim();
        for &key in reached {
            let Some(sub) = self.subscriptions.get(key) else {
                continue;
            };
            let copy_properties = if sub.user_data.is_empty() {
                shared_properties.clone()
            } else {
                let mut p = match &published {
                    Some(p) => p.clone(),
                    None => publication_properties(topic, &[]).map_err(|e| e.reason())?,
                };
                p.set_reserved(
                    SUB_USER_DATA_PROPERTY,
                    PropertyValue::String(sub.user_data.clone()),
                )
                .map_err(|e| e.reason())?;
                p.encode()
            };
            let mut copy = *md;
            copy.correl_id = sub.copy_correl_id(&md.correl_id);
            copy.user_identifier = FixedStr::truncating(&sub.user_id);
            if o.contains(PutOptionFlags::SUPPRESS_REPLYTO) {
                copy.reply_to_q = FixedStr::BLANK;
                copy.reply_to_qmgr = FixedStr::BLANK;
            }
            let target = self.queues.lookup(&sub.destination);
            let checked = target.ok_or(ReasonCode::UnknownObjectName).and_then(|qid| {
                self.check_copy(
                    qid,
                    &mut copy,
                    sub.pub_priority,
                    body.len() + copy_properties.len(),
                    &planned,
                )
                .map(|()| qid)
            });
            match checked {
                Ok(qid) => {
                    *planned.entry(qid).or_default() += 1;
                    copies.push(PlannedCopy {
                        queue: qid,
                        delivered_persistent: md.is_persistent() && !copy.is_persistent(),
                        shares_body: true,
                        md: copy,
                        body: body.clone(),
                        properties: copy_properties,
                        sub: key,
                    });
                }
                Err(reason) => {
                    let dead_lettered = use_dlq
                        && !dlq.is_empty()
                        && self
                            .dead_letter_copy(
                                dlq,
                                &copy,
                                body,
                                reason,
                                &sub.destination,
                                now,
                                &planned,
                            )
                            .map(|dl| {
                                *planned.entry(dl.queue).or_default() += 1;
                                copies.push(PlannedCopy { sub: key, ..dl });
                            })
                            .is_ok();
                    if dead_lettered {
                        continue;
                    }
                    let fails = match policy {
                        DeliveryPolicy::All => true,
                        DeliveryPolicy::AllDurable => sub.durable,
                        DeliveryPolicy::AllAvailable => false,
                    };
                    if fails {
                        return Err(ReasonCode::PublicationFailure.into());
                    }
                }
            }
        }
        Ok(copies)
    }

    /// Whether local queue `qid` takes a copy of `len` bytes after the `planned` ones,
    /// completing the copy's priority (PubPriority) and persistence (none on a temporary
    /// dynamic queue) for it.
    fn check_copy(
        &self,
        qid: QueueId,
        copy: &mut MessageDescriptor,
        pub_priority: i32,
        len: usize,
        planned: &HashMap<QueueId, usize>,
    ) -> Result<(), ReasonCode> {
        let entry = self.queues.get(qid).ok_or(ReasonCode::UnknownObjectName)?;
        let attrs = &entry.def.attributes;
        copy.priority = match pub_priority {
            PRIORITY_AS_PUBLISHED => copy.priority,
            PRIORITY_AS_QUEUE_DEFAULT => attrs.def_priority.clamp(0, priority::MAX),
            n => n.clamp(0, priority::MAX),
        };
        if entry.is_temporary() {
            copy.persistence = persistence::NOT_PERSISTENT;
        }
        check_put_allowed(attrs, len)?;
        let lq = entry.local.as_ref().ok_or(ReasonCode::QTypeError)?;
        place_for(attrs, &lq.store, copy.is_persistent(), copy.priority, len)?;
        let already = planned.get(&qid).copied().unwrap_or(0);
        if lq.store.depth() + already >= attrs.max_depth.max(0) as usize {
            return Err(ReasonCode::QFull);
        }
        Ok(())
    }

    /// A refused copy as a message for the dead-letter queue `dlq`, headed by an MQDLH
    /// with the reason, if that queue takes it.
    #[allow(clippy::too_many_arguments)]
    fn dead_letter_copy(
        &self,
        dlq: &str,
        copy: &MessageDescriptor,
        body: &Bytes,
        reason: ReasonCode,
        destination: &str,
        now: Timestamp,
        planned: &HashMap<QueueId, usize>,
    ) -> Result<PlannedCopy, ReasonCode> {
        let qid = self
            .queues
            .lookup(dlq)
            .ok_or(ReasonCode::UnknownObjectName)?;
        let header = DeadLetterHeader::for_message(
            copy,
            reason,
            destination,
            &self.name,
            (APPL_TYPE_QMGR, &self.name),
            crate::clock::put_date_time(now),
        );
        let mut dl_body = Vec::with_capacity(DEAD_LETTER_HEADER_LEN + body.len());
        header.encode(copy.encoding, &mut dl_body);
        dl_body.extend_from_slice(body);
        let mut md = *copy;
        md.format = FORMAT_DEAD_LETTER_HEADER;
        self.check_copy(qid, &mut md, PRIORITY_AS_PUBLISHED, dl_body.len(), planned)?;
        Ok(PlannedCopy {
            queue: qid,
            md,
            body: Bytes::from(dl_body),
            properties: Bytes::new(),
            delivered_persistent: false,
            shares_body: false,
            sub: SubKey(0),
        })
    }
}
