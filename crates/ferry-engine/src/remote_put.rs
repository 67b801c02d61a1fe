//! MQPUT and MQPUT1 to a queue on another queue manager: the message goes onto the
//! transmission queue name resolution chose (`crate::name_resolution`), as IBM MQ puts
//! it there.
//!
//! The application's descriptor is completed exactly as for a local put (MsgId,
//! context, PutDate/PutTime, ReplyToQMgr, AS_Q_DEF values resolved against the *first
//! definition in the resolution path*: the remote definition or queue-manager alias,
//! else the transmission queue) and travels, whole, in the transmission queue header
//! ([`ferry_mqi::TransmissionHeader`], plus an MQMDE for group and segment fields)
//! ahead of the application's data. The message on the transmission queue has a
//! descriptor of its own: Format MQXMIT, the queue manager's Encoding and CCSID, a
//! MsgId of its own, the application's Persistence, Priority and Expiry (so the
//! transmission queue orders, keeps and expires it as the message asks), the
//! application's context, and no report options or reply-to queue (a confirm-on-arrival
//! is for the destination queue, not the transmission queue). Message properties stay
//! the message's. The MsgId returned to the application is the one in the header.
//!
//! The checks are a local put's, made on the transmission queue (PUT, MAXMSGL with the
//! header counted, MAXDEPTH, MAXFSIZE) after the first definition's PUT; a persistent
//! message is logged as a put to the transmission queue, and under syncpoint it joins
//! the unit of work like any other put.

use crate::clock::Timestamp;
use crate::connection::{ConnId, Hobj, RemoteTarget};
use crate::context::{check_put_context, passed_context};
use crate::effects::Effects;
use crate::journal::LogRecord;
use crate::put_checks::{
    check_descriptor, complete_descriptor, place_for, stored_priority_persistence, Settled,
};
use crate::qmgr::QueueManager;
use crate::queue::{MsgState, StoredMsg};
use crate::uow::UowEntry;
use bytes::Bytes;
use ferry_mqi::descriptor::{msg_flags, msg_type, persistence, ENCODING_NATIVE};
use ferry_mqi::{
    FixedStr, MessageDescriptor, MqError, OpenOptions, PutOptionFlags, PutOptions, ReasonCode,
    TransmissionHeader, FORMAT_XMIT_Q_HEADER,
};
use ferry_objects::queue::{Enablement, YesNo};
use ferry_objects::QueueType;

impl QueueManager {
    /// What the queue manager fills in for a message with ReplyToQ set and ReplyToQMgr
    /// blank, as MQ does: a remote definition named like ReplyToQ is a reply-to queue
    /// alias (ReplyToQ := its RNAME when set, ReplyToQMgr := its RQMNAME); otherwise
    /// ReplyToQMgr := this queue manager. `None` when there is nothing to fill.
    pub(crate) fn reply_to_resolution(
        &self,
        md: &MessageDescriptor,
    ) -> Option<(FixedStr<48>, FixedStr<48>)> {
        if md.reply_to_q.is_blank() || !md.reply_to_qmgr.is_blank() {
            return None;
        }
        let alias = self
            .queues
            .lookup(md.reply_to_q.as_str())
            .and_then(|id| self.queues.get(id))
            .filter(|e| e.def.queue_type == QueueType::Remote);
        Some(match alias {
            Some(e) => {
                let a = &e.def.attributes;
                let q = if a.remote_name.trim().is_empty() {
                    md.reply_to_q
                } else {
                    FixedStr::truncating(a.remote_name.trim())
                };
                let qm = a.remote_qmgr_name.trim();
                let qm = if qm.is_empty() {
                    self.name.as_str()
                } else {
                    qm
                };
                (q, FixedStr::truncating(qm))
            }
            None => (md.reply_to_q, FixedStr::truncating(&self.name)),
        })
    }

    /// MQPUT on a handle to a remote destination (see the module comment). `md` is
    /// completed in place as for a local put.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn put_remote(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        target: RemoteTarget,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: Bytes,
        properties: Bytes,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        let o = pmo.options;
        // A cluster queue: the instance (fixed at open, for the group, or chosen now),
        // its channel, and the channel's transmission queue (DEFCLXQ).
        let (remote_qmgr_name, correl_id, xmit_q) = match target.cluster {
            Some(b) => {
                let choice = self.cluster_put_choice(conn, hobj, b, &target, md)?;
                let channel = choice.channel.unwrap_or_default();
                let xmit_q = self.cluster_xmit_q_for(&channel).unwrap_or(target.xmit_q);
                (
                    FixedStr::truncating(&choice.qmgr),
                    Some(crate::cluster::channel_correl_id(&channel)),
                    xmit_q,
                )
            }
            None => (target.remote_qmgr_name, None, target.xmit_q),
        };
        let reallocatable = target.cluster.is_some_and(|b| {
            b.mode.reallocatable()
                || (b.mode == crate::cluster::BindMode::OnGroup
                    && md.msg_flags & (msg_flags::MSG_IN_GROUP | msg_flags::LAST_MSG_IN_GROUP) == 0)
        });
        let max_uncommitted = self.qmgr.max_uncommitted_msgs.max(0) as usize;
        let qm_max_len = self.qmgr.max_msg_length.max(0) as usize;
        let qm_ccsid = self.qmgr.ccsid;
        let reply_to = self.reply_to_resolution(md);
        let first = match target.definition {
            Some(d) => {
                let a = &self
                    .queues
                    .get(d)
                    .ok_or(ReasonCode::QDeleted)?
                    .def
                    .attributes;
                Some((a.put, a.def_priority, a.def_persistence))
            }
            None => None,
        };
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
        if !h.options.contains(OpenOptions::OUTPUT) {
            return Err(ReasonCode::NotOpenForOutput.into());
        }
        if o.contains(PutOptionFlags::SYNCPOINT | PutOptionFlags::NO_SYNCPOINT) {
            return Err(ReasonCode::OptionsError.into());
        }
        check_put_context(o, h.options)?;
        let passed = passed_context(c, pmo)?;

        let xq = self.queues.get_mut(xmit_q).ok_or(ReasonCode::QDeleted)?;
        let xmit_q_name = xq.def.name.clone();
        let attrs = &xq.def.attributes;
        let (first_put, def_priority, def_persistence) =
            first.unwrap_or((attrs.put, attrs.def_priority, attrs.def_persistence));
        if first_put == Enablement::Disabled || attrs.put == Enablement::Disabled {
            return Err(ReasonCode::PutInhibited.into());
        }
        let header_len = TransmissionHeader {
            remote_q_name: target.remote_q_name,
            remote_qmgr_name,
            md: *md,
        }
        .encoded_len();
        let msg_len = body
            .len()
            .saturating_add(header_len)
            .saturating_add(properties.len());
        if msg_len > qm_max_len {
            return Err(ReasonCode::MsgTooBigForQMgr.into());
        }
        if msg_len > attrs.max_msg_length.max(0) as usize {
            return Err(ReasonCode::MsgTooBigForQ.into());
        }
        check_descriptor(md)?;
        let (prio, pers, mut warning) =
            stored_priority_persistence(md, def_priority, def_persistence == YesNo::Yes);
        let lq = xq.local.as_mut().ok_or(ReasonCode::XmitQTypeError)?;
        let persistent = pers == persistence::PERSISTENT;
        let rank = place_for(attrs, &lq.store, persistent, prio, msg_len)?;
        let sync = o.contains(PutOptionFlags::SYNCPOINT);
        if sync && c.uow.len() >= max_uncommitted {
            return Err(ReasonCode::SyncpointLimitReached.into());
        }
        let group_plan = crate::group::plan_put(h.groups.put.as_ref(), md, o, sync, body.len())?;
        if let Some(w) = group_plan.and_then(|p| p.warning) {
            warning = Some(w);
        }

        // All checks passed: complete the application's descriptor as a local put does.
        let settled = Settled {
            priority_persistence: (prio, pers),
            group_plan,
            reply_to,
            passed: passed.as_ref(),
            put_date_time: self.put_stamp.of(now),
        };
        complete_descriptor(md, o, settled, &mut self.ids, c, hobj);

        let header = TransmissionHeader {
            remote_q_name: target.remote_q_name,
            remote_qmgr_name,
            md: *md,
        };
        let mut data = Vec::with_capacity(header.encoded_len() + body.len());
        header.encode(&mut data);
        data.extend_from_slice(&body);
        debug_assert_eq!(
            TransmissionHeader::decode(&data),
            Ok((header, header.encoded_len())),
            "the header written decodes to itself"
        );
        let mut outer = transmission_descriptor(md, qm_ccsid, self.ids.next_id());
        if let Some(id) = correl_id {
            outer.correl_id = id;
        }
        if reallocatable {
            outer.feedback = crate::cluster::REALLOCATABLE_FEEDBACK;
        }
        let key = lq.store.next_key(rank);
        let expires_at = (md.expiry > 0).then(|| now.0.saturating_add(md.expiry as u64 * 100));
        let mut msg = StoredMsg {
            key,
            md: outer,
            body: Bytes::from(data).into(),
            properties,
            put_ms: now.0,
            expires_at,
            state: MsgState::Available,
            delivered_persistent: false,
        };
        lq.last_put_ms = Some(now.0);
        if self.logging && persistent {
            let uow = sync.then(|| c.uow.log_id(&mut self.next_uow));
            fx.log(LogRecord::put(uow, &xmit_q_name, &msg.logged()?));
            if !sync {
                fx.reply_waits();
            }
        }
        // A triggered transmission queue starts its channel (`crate::trigger`): the queue
        // the message went to, which for a cluster queue may be a channel's own (DEFCLXQ).
        let trigger = crate::trigger::on_arrival(
            attrs,
            lq,
            outer.priority,
            self.triggers.last_made(xmit_q),
            self.qmgr.trigger_interval,
            now,
        );
        if sync {
            msg.state = MsgState::UncommittedPut(conn);
            lq.store.insert(msg);
            lq.joined_uow();
            c.uow.entries.push(UowEntry::Put {
                queue: xmit_q,
                seq: key.seq,
            });
        } else {
            self.place(xmit_q, msg, now, fx);
        }
        if let Some(kind) = trigger {
            self.fire_trigger(xmit_q, kind, sync.then_some(conn), now, fx);
        }
        if target.cluster.is_some() {
            self.cluster.note_chosen(remote_qmgr_name.as_str());
            if md.msg_flags & msg_flags::LAST_MSG_IN_GROUP != 0 {
                // The group is complete: the handle's next group chooses again.
                self.cluster_groups.remove(&(conn, hobj));
            }
        }
        Ok(warning)
    }
}

/// The descriptor of the message on the transmission queue for an application message
/// with (completed) descriptor `app`: Format MQXMIT, Encoding native, the queue
/// manager's CCSID, `msg_id` (the queue manager's own), the application's Priority,
/// Persistence, Expiry and context; no reports, no reply-to queue, a datagram.
fn transmission_descriptor(
    app: &MessageDescriptor,
    qm_ccsid: i32,
    msg_id: ferry_mqi::MsgId,
) -> MessageDescriptor {
    MessageDescriptor {
        msg_type: msg_type::DATAGRAM,
        expiry: app.expiry,
        encoding: ENCODING_NATIVE,
        ccsid: qm_ccsid,
        format: FORMAT_XMIT_Q_HEADER,
        priority: app.priority,
        persistence: app.persistence,
        msg_id,
        user_identifier: app.user_identifier,
        accounting_token: app.accounting_token,
        appl_identity_data: app.appl_identity_data,
        put_appl_type: app.put_appl_type,
        put_appl_name: app.put_appl_name,
        put_date: app.put_date,
        put_time: app.put_time,
        appl_origin_data: app.appl_origin_data,
        ..MessageDescriptor::default()
    }
}
