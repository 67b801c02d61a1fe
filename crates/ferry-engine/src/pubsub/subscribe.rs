//! MQSUB (create, resume, alter) and the end of a subscription (MQCLOSE of its handle
//! with KEEP_SUB or REMOVE_SUB, or its connection ending).
//!
//! A managed subscription's queue is a dynamic queue made from the topic's model queue:
//! MNDURMDL (a temporary dynamic queue, gone with the subscription) for non-durable
//! subscriptions, MDURMDL (a permanent dynamic queue, kept with the subscription) for
//! durable ones. MQSUB opens it for the application (input, browse, inquire) and returns
//! that handle with the subscription's own.

use crate::clock::Timestamp;
use crate::connection::{ConnId, Handle, HandleTarget, Hobj, InputMode};
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::pubsub::subscription::{SubKey, Subscription, SubscriptionId, SubscriptionType};
use crate::qmgr::QueueManager;
use crate::selection::{MessageFilter, SharedFilter};
use ferry_mqi::subscription::{
    SubscribeOptions, SubscriptionDescriptor, MAX_SUB_STRING_LENGTH, PRIORITY_AS_PUBLISHED,
    PRIORITY_AS_QUEUE_DEFAULT,
};
use ferry_mqi::{FixedStr, MqError, ObjectDescriptor, OpenOptions, ReasonCode};
use ferry_objects::queue::DefinitionType;
use ferry_objects::QueueType;
use ferry_pubsub::WildcardScheme;
use ferry_security::oam::Authority;
use std::rc::Rc;

/// What MQSUB returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subscribed {
    /// The subscription's handle (MQ's Hsub): for MQSUBRQ and MQCLOSE.
    pub hsub: Hobj,
    /// For a managed subscription, the handle of its queue, opened for input, browse
    /// and inquire (MQ's Hobj output).
    pub hobj: Option<Hobj>,
    /// SubId.
    pub sub_id: SubscriptionId,
    /// The resolved topic string (MQSD ResObjectString).
    pub topic_string: String,
    /// The queue the copies go to.
    pub destination: String,
}

/// What JMS asks of a subscription beyond MQ's MQSD (IBM MQ's JMS keeps these inside its
/// own client; Ferry's AMQP channel asks the queue manager for them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubscribeExtras {
    /// JMS 2.0 shared subscription: every consumer resumes it at once and each copy goes
    /// to one of them (the copies wait on one managed queue they all read).
    pub shared: bool,
    /// JMS noLocal: no copies of publications made on a connection that has the
    /// subscription open.
    pub no_local: bool,
}

/// Prefix of the names of managed durable subscriptions' queues.
pub(crate) const MANAGED_DURABLE_PREFIX: &str = "SYSTEM.MANAGED.DURABLE.*";
/// Prefix of the names of managed non-durable subscriptions' queues.
const MANAGED_NON_DURABLE_PREFIX: &str = "SYSTEM.MANAGED.NDURABLE.*";

/// The options a managed queue is opened with for the subscriber.
fn managed_queue_options() -> OpenOptions {
    OpenOptions::INPUT_AS_Q_DEF | OpenOptions::BROWSE | OpenOptions::INQUIRE
}

/// The MQSD's own checks, before anything is looked up.
fn check_descriptor(sd: &SubscriptionDescriptor) -> Result<(), ReasonCode> {
    let o = sd.options;
    let verbs = SubscribeOptions::CREATE | SubscribeOptions::RESUME | SubscribeOptions::ALTER;
    if !o.intersects(verbs) {
        return Err(ReasonCode::OptionsError);
    }
    let both = |a, b| o.contains(a) && o.contains(b);
    if both(
        SubscribeOptions::WILDCARD_CHAR,
        SubscribeOptions::WILDCARD_TOPIC,
    ) || both(SubscribeOptions::ANY_USERID, SubscribeOptions::FIXED_USERID)
    {
        return Err(ReasonCode::OptionsError);
    }
    if o.contains(SubscribeOptions::DURABLE) && sd.sub_name.trim().is_empty() {
        return Err(ReasonCode::SubNameError);
    }
    if sd.sub_name.len() > MAX_SUB_STRING_LENGTH {
        return Err(ReasonCode::SubNameError);
    }
    if sd.sub_user_data.len() > MAX_SUB_STRING_LENGTH {
        return Err(ReasonCode::SubUserDataError);
    }
    if sd.object_string.len() > MAX_SUB_STRING_LENGTH {
        return Err(ReasonCode::ObjectStringError);
    }
    if sd.selection_string.len() > MAX_SUB_STRING_LENGTH {
        return Err(ReasonCode::SelectionStringError);
    }
    if !(0..=9).contains(&sd.sub_level) {
        return Err(ReasonCode::SdError);
    }
    let priority_ok = sd.pub_priority == PRIORITY_AS_PUBLISHED
        || sd.pub_priority == PRIORITY_AS_QUEUE_DEFAULT
        || (0..=9).contains(&sd.pub_priority);
    if !priority_ok {
        return Err(ReasonCode::PriorityError);
    }
    Ok(())
}

impl QueueManager {
    /// MQSUB. `hobj` is the queue the application provides for the copies (None with
    /// MQSO_MANAGED, or to resume with the destination kept); `selection` is the
    /// compiled SelectionString (the server compiles it, as for MQOPEN).
    pub fn subscribe(
        &mut self,
        conn: ConnId,
        sd: &SubscriptionDescriptor,
        hobj: Option<Hobj>,
        selection: Option<Rc<dyn MessageFilter>>,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Subscribed, MqError> {
        let extras = SubscribeExtras::default();
        self.subscribe_with(conn, sd, hobj, selection, extras, now, fx)
    }

    /// MQSUB with JMS's [`SubscribeExtras`]. Resuming a shared subscription another
    /// consumer has open is allowed only with `extras.shared`; a shared and an unshared
    /// subscription never resume each other (2523 MQRC_INVALID_SUBSCRIPTION).
    #[allow(clippy::too_many_arguments)]
    pub fn subscribe_with(
        &mut self,
        conn: ConnId,
        sd: &SubscriptionDescriptor,
        hobj: Option<Hobj>,
        selection: Option<Rc<dyn MessageFilter>>,
        extras: SubscribeExtras,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Subscribed, MqError> {
        self.debug_check();
        // For the statistics: a durable subscription of this name there already is
        // resumed or altered, not created.
        let durable = sd.options.contains(SubscribeOptions::DURABLE);
        let existed = durable && {
            let name = sd.sub_name.trim_end();
            !name.is_empty() && self.subscriptions.by_name(name).is_some()
        };
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<Subscribed, MqError> {
            let o = sd.options;
            self.check_running(o.contains(SubscribeOptions::FAIL_IF_QUIESCING))?;
            let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
            // The subscription's handle, and a managed queue's, count toward MAXHANDS.
            let needed = if o.contains(SubscribeOptions::MANAGED) {
                2
            } else {
                1
            };
            if c.open_count + needed > self.qmgr.max_handles.max(0) as usize {
                return Err(ReasonCode::HandleNotAvailable.into());
            }
            check_descriptor(sd)?;
            self.end_expired_subscriptions(now, fx);
            let name = sd.sub_name.trim_end();
            let existing = (!name.is_empty())
                .then(|| self.subscriptions.by_name(name))
                .flatten();
            match existing {
                Some(_) if !o.intersects(SubscribeOptions::RESUME | SubscribeOptions::ALTER) => {
                    Err(ReasonCode::SubAlreadyExists.into())
                }
                Some(key) => self.resume_subscription(conn, key, sd, hobj, extras, now, fx),
                None if o.contains(SubscribeOptions::CREATE) => {
                    self.create_subscription(conn, sd, hobj, selection, extras, now, fx)
                }
                None => Err(ReasonCode::NoSubscription.into()),
            }
        })();
        let m = &mut self.mqi_stats;
        match (&result, durable, existed) {
            (Err(_), _, _) => m.subs_failed += 1,
            (Ok(_), false, _) => m.subs_created_non_durable += 1,
            (Ok(_), true, false) => m.subs_created_durable += 1,
            (Ok(_), true, true) if sd.options.contains(SubscribeOptions::ALTER) => {
                m.subs_altered_durable += 1
            }
            (Ok(_), true, true) => m.subs_resumed_durable += 1,
        }
        self.debug_check();
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn create_subscription(
        &mut self,
        conn: ConnId,
        sd: &SubscriptionDescriptor,
        hobj: Option<Hobj>,
        selection: Option<Rc<dyn MessageFilter>>,
        extras: SubscribeExtras,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Subscribed, MqError> {
        let o = sd.options;
        let durable = o.contains(SubscribeOptions::DURABLE);
        let managed = o.contains(SubscribeOptions::MANAGED);
        let topic_string = self.resolve_topic_string(&sd.object_name, &sd.object_string)?;
        self.check_topic_authority(conn, &topic_string, Authority::Sub, fx)?;
        let attrs = self.topic_attributes(&topic_string);
        if !attrs.subscribe {
            return Err(ReasonCode::SubInhibited.into());
        }
        if durable && !attrs.durable_subscriptions {
            return Err(ReasonCode::DurabilityNotAllowed.into());
        }
        let user_id = self.conn_user(conn)?;
        let (destination, queue_hobj) = match (managed, hobj) {
            (true, Some(_)) => return Err(ReasonCode::HobjError.into()),
            (false, None) => return Err(ReasonCode::HobjError.into()),
            (false, Some(h)) => (self.provided_destination(conn, h, durable)?, None),
            (true, None) => {
                let model = if durable {
                    attrs.durable_model_q.clone()
                } else {
                    attrs.non_durable_model_q.clone()
                };
                let (name, h) = self.make_managed_queue(conn, &model, durable, now, fx)?;
                (name, Some(h))
            }
        };
        let scheme = if o.contains(SubscribeOptions::WILDCARD_CHAR) {
            WildcardScheme::Character
        } else {
            WildcardScheme::Topic
        };
        let selector = selection.map(|f| (sd.selection_string.clone(), SharedFilter(f)));
        let sub = Subscription {
            id: SubscriptionId(self.ids.next_id()),
            name: sd.sub_name.trim_end().to_string(),
            topic_string: topic_string.clone(),
            scheme,
            durable,
            destination: destination.clone(),
            managed,
            selector,
            user_data: sd.sub_user_data.clone(),
            correl_id: o
                .contains(SubscribeOptions::SET_CORREL_ID)
                .then_some(sd.sub_correl_id),
            pub_priority: sd.pub_priority,
            sub_level: sd.sub_level,
            on_request: o.contains(SubscribeOptions::PUBLICATIONS_ON_REQUEST),
            any_user: o.contains(SubscribeOptions::ANY_USERID),
            user_id,
            kind: SubscriptionType::Api,
            open_by: Vec::new(),
            shared: extras.shared,
            no_local: extras.no_local,
            created: now,
            resumed: now,
            last_message: None,
            messages: 0,
            details: ferry_objects::SubscriptionDetails {
                // MQSD SubExpiry (tenths of a second from now), or unlimited.
                expiry: if sd.sub_expiry > 0 {
                    sd.sub_expiry
                } else {
                    ferry_objects::attribute::WORD_VALUE
                },
                ..Default::default()
            },
        };
        let sub_id = sub.id;
        let on_request = sub.on_request;
        let key = self.subscriptions.insert(sub);
        let hsub = self.add_subscription_handle(conn, key)?;
        let wants_retained = !on_request && !o.contains(SubscribeOptions::NEW_PUBLICATIONS_ONLY);
        if wants_retained {
            if let Err(e) = self.send_retained(key, now, fx) {
                // MQ: the subscription is not made.
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.take_handle(hsub);
                }
                if let Some(sub) = self.subscriptions.get_mut(key) {
                    sub.open_by.clear();
                }
                if let Some(h) = queue_hobj {
                    self.close_handle(conn, h, now, fx);
                }
                self.end_subscription(key, now, fx);
                return Err(e);
            }
        }
        if durable {
            self.durable_subscription_changed(key, fx);
        }
        Ok(Subscribed {
            hsub,
            hobj: queue_hobj,
            sub_id,
            topic_string,
            destination,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn resume_subscription(
        &mut self,
        conn: ConnId,
        key: SubKey,
        sd: &SubscriptionDescriptor,
        hobj: Option<Hobj>,
        extras: SubscribeExtras,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Subscribed, MqError> {
        let o = sd.options;
        let user_id = self.conn_user(conn)?;
        let sub = self
            .subscriptions
            .get(key)
            .ok_or(ReasonCode::NoSubscription)?;
        if sub.shared != extras.shared {
            return Err(ReasonCode::InvalidSubscription.into());
        }
        if !sub.shared && !sub.open_by.is_empty() {
            return Err(ReasonCode::SubscriptionInUse.into());
        }
        if !sub.any_user && sub.user_id != user_id {
            return Err(ReasonCode::IdentityMismatch.into());
        }
        if sub.durable != o.contains(SubscribeOptions::DURABLE) {
            return Err(if o.contains(SubscribeOptions::ALTER) {
                ReasonCode::DurabilityNotAlterable
            } else {
                ReasonCode::InvalidSubscription
            }
            .into());
        }
        if sub.managed != o.contains(SubscribeOptions::MANAGED) {
            return Err(ReasonCode::DestClassNotAlterable.into());
        }
        let topic = sub.topic_string.clone();
        self.check_topic_authority(conn, &topic, Authority::Sub, fx)?;
        let Some(sub) = self.subscriptions.get(key) else {
            return Err(ReasonCode::NoSubscription.into());
        };
        let alter = o.contains(SubscribeOptions::ALTER);
        if alter {
            let named = !sd.object_name.trim().is_empty() || !sd.object_string.is_empty();
            if named
                && self.resolve_topic_string(&sd.object_name, &sd.object_string)?
                    != sub.topic_string
            {
                return Err(ReasonCode::TopicNotAlterable.into());
            }
            if sd.sub_level != sub.sub_level {
                return Err(ReasonCode::SublevelNotAlterable.into());
            }
            let selector = sub.selector.as_ref().map_or("", |(text, _)| text.as_str());
            if sd.selection_string != selector {
                return Err(ReasonCode::SelectorNotAlterable.into());
            }
        }
        let managed = sub.managed;
        let durable = sub.durable;
        let mut destination = sub.destination.clone();
        let queue_hobj = match (managed, hobj) {
            (true, Some(_)) => return Err(ReasonCode::HobjError.into()),
            (true, None) => Some(self.open_managed_queue(conn, &destination, now, fx)?),
            (false, Some(h)) => {
                destination = self.provided_destination(conn, h, durable)?;
                None
            }
            (false, None) => None,
        };
        let Some(sub) = self.subscriptions.get_mut(key) else {
            return Err(ReasonCode::NoSubscription.into());
        };
        sub.destination = destination.clone();
        sub.resumed = now;
        if sub.any_user {
            sub.user_id = user_id;
        }
        if alter {
            sub.user_data = sd.sub_user_data.clone();
            sub.pub_priority = sd.pub_priority;
            sub.correl_id = o
                .contains(SubscribeOptions::SET_CORREL_ID)
                .then_some(sd.sub_correl_id);
            sub.on_request = o.contains(SubscribeOptions::PUBLICATIONS_ON_REQUEST);
            sub.details.altered_ms = now.0;
        }
        let (sub_id, topic_string) = (sub.id, sub.topic_string.clone());
        let hsub = self.add_subscription_handle(conn, key)?;
        if durable && alter {
            self.durable_subscription_changed(key, fx);
        }
        Ok(Subscribed {
            hsub,
            hobj: queue_hobj,
            sub_id,
            topic_string,
            destination,
        })
    }

    /// The topic string an MQSD or MQOD names: the topic object's TOPICSTR and the
    /// object string, combined as MQ combines them.
    pub(crate) fn resolve_topic_string(
        &self,
        object_name: &str,
        object_string: &str,
    ) -> Result<String, MqError> {
        let object_name = object_name.trim_end_matches([' ', '\0']);
        let object_topic = if object_name.is_empty() {
            None
        } else {
            let def = self
                .topics
                .get(object_name)
                .ok_or(ReasonCode::UnknownObjectName)?;
            Some(def.attributes.topic_string.as_str())
        };
        match ferry_pubsub::combine(object_topic, object_string) {
            Ok(t) => Ok(t.as_str().to_string()),
            Err(ferry_pubsub::TopicStringError::Missing) => {
                Err(ReasonCode::UnknownObjectName.into())
            }
            Err(_) => Err(ReasonCode::TopicStringError.into()),
        }
    }

    /// The user a connection's subscriptions belong to.
    fn conn_user(&self, conn: ConnId) -> Result<String, MqError> {
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        Ok(c.info.user_id.trim_end().to_string())
    }

    /// The local queue behind a handle the application gave as a destination.
    fn provided_destination(
        &self,
        conn: ConnId,
        hobj: Hobj,
        durable: bool,
    ) -> Result<String, MqError> {
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
        let HandleTarget::Queue { local, .. } = h.target else {
            return Err(ReasonCode::HobjError.into());
        };
        let entry = self.queues.get(local).ok_or(ReasonCode::QDeleted)?;
        if durable && entry.is_temporary() {
            // A temporary dynamic queue dies with its handle; the subscription would not.
            return Err(ReasonCode::InvalidDestination.into());
        }
        Ok(entry.def.name.clone())
    }

    /// Makes a managed subscription's queue from `model` and opens it for the
    /// subscriber: its name and handle.
    fn make_managed_queue(
        &mut self,
        conn: ConnId,
        model: &str,
        durable: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(String, Hobj), MqError> {
        let id = self
            .queues
            .lookup(model)
            .ok_or(ReasonCode::InvalidDestination)?;
        let entry = self.queues.get(id).ok_or(ReasonCode::InvalidDestination)?;
        if entry.def.queue_type != QueueType::Model {
            return Err(ReasonCode::InvalidDestination.into());
        }
        let temporary = entry.def.attributes.definition_type != DefinitionType::PermanentDynamic;
        if durable == temporary {
            // MDURMDL must make permanent queues, MNDURMDL temporary ones.
            return Err(ReasonCode::InvalidDestination.into());
        }
        let prefix = if durable {
            MANAGED_DURABLE_PREFIX
        } else {
            MANAGED_NON_DURABLE_PREFIX
        };
        let od = ObjectDescriptor {
            object_name: FixedStr::truncating(model),
            dynamic_q_name: FixedStr::truncating(prefix),
            ..ObjectDescriptor::default()
        };
        let opened = self.open_queue(conn, &od, managed_queue_options(), now, fx)?;
        // The subscription, not this handle, decides when the queue goes.
        if let Some(h) = self
            .conns
            .get_mut(&conn)
            .and_then(|c| c.handle_mut(opened.hobj))
        {
            h.owns_temp_queue = false;
        }
        Ok((opened.resolved_q_name, opened.hobj))
    }

    /// Opens an existing managed queue for the subscriber resuming its subscription.
    fn open_managed_queue(
        &mut self,
        conn: ConnId,
        name: &str,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Hobj, MqError> {
        let od = ObjectDescriptor::queue(name).map_err(|_| ReasonCode::InvalidDestination)?;
        Ok(self
            .open_queue(conn, &od, managed_queue_options(), now, fx)?
            .hobj)
    }

    fn add_subscription_handle(&mut self, conn: ConnId, key: SubKey) -> Result<Hobj, MqError> {
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let name = self
            .subscriptions
            .get(key)
            .map(|s| s.name.clone())
            .unwrap_or_default();
        let hsub = c.add_handle(Handle {
            target: HandleTarget::Subscription(key),
            options: OpenOptions::empty(),
            input: InputMode::None,
            name,
            cursor: None,
            lock: None,
            owns_temp_queue: false,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        if let Some(sub) = self.subscriptions.get_mut(key) {
            debug_assert!(sub.shared || sub.open_by.is_empty());
            sub.open_by.push((conn, hsub));
        }
        Ok(hsub)
    }

    /// The subscription handle `hsub` of `conn` closes: a non-durable subscription ends
    /// (a shared one with its last handle); a durable one ends when `remove`
    /// (MQCO_REMOVE_SUB) and no other consumer shares it, else it stays for a later
    /// RESUME. The handle itself is already gone.
    pub(crate) fn subscription_closed(
        &mut self,
        key: SubKey,
        handle: (ConnId, Hobj),
        remove: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let Some(sub) = self.subscriptions.get_mut(key) else {
            return;
        };
        sub.open_by.retain(|h| *h != handle);
        let expired = sub.expired(now);
        if !sub.open_by.is_empty() || (sub.durable && !remove && !expired) {
            return;
        }
        self.end_subscription(key, now, fx);
    }

    /// Removes the subscription named `name` and its managed queue, as DELETE SUB and
    /// JMS unsubscribe do: 2428 MQRC_NO_SUBSCRIPTION when there is none, 2429
    /// MQRC_SUBSCRIPTION_IN_USE while a handle has it open.
    pub fn delete_subscription(
        &mut self,
        name: &str,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), MqError> {
        self.debug_check();
        let key = self
            .subscriptions
            .by_name(name)
            .ok_or(ReasonCode::NoSubscription)?;
        if self
            .subscriptions
            .get(key)
            .is_some_and(|s| !s.open_by.is_empty())
        {
            return Err(ReasonCode::SubscriptionInUse.into());
        }
        self.end_subscription(key, now, fx);
        self.debug_check();
        Ok(())
    }

    /// True when `hsub` is a handle of `conn` on a durable subscription (whose MQCLOSE
    /// may keep or remove it).
    pub fn subscription_is_durable(&self, conn: ConnId, hsub: Hobj) -> bool {
        let target = self
            .conns
            .get(&conn)
            .and_then(|c| c.handle(hsub))
            .map(|h| h.target);
        match target {
            Some(HandleTarget::Subscription(key)) => {
                self.subscriptions.get(key).is_some_and(|s| s.durable)
            }
            _ => false,
        }
    }

    /// The status of the subscription named `name`.
    pub fn subscription_status(&self, name: &str) -> Option<crate::SubscriptionStatus> {
        let key = self.subscriptions.by_name(name)?;
        self.subscriptions.get(key).map(|s| s.status())
    }

    /// Removes subscription `key` and, for a managed one, its queue: at once when no
    /// handle has it open, else when the last does (a temporary queue), or at once with
    /// its messages (a durable one's permanent queue, as DELETE SUB does).
    pub(crate) fn end_subscription(&mut self, key: SubKey, now: Timestamp, fx: &mut Effects) {
        let Some(sub) = self.subscriptions.remove(key) else {
            return;
        };
        if sub.durable {
            fx.push(Effect::CatalogueChanged(CatalogueChange::Subscription(
                sub.name.clone(),
            )));
        }
        if !sub.managed {
            return;
        }
        let Some(qid) = self.queues.lookup(&sub.destination) else {
            return;
        };
        let temporary = self.queues.get(qid).is_some_and(|e| e.is_temporary());
        if temporary {
            let holder = self.conns.values_mut().find_map(|c| {
                c.handles
                    .iter_mut()
                    .flatten()
                    .find(|h| matches!(h.target, HandleTarget::Queue { local, .. } if local == qid))
            });
            if let Some(h) = holder {
                h.owns_temp_queue = true;
                return;
            }
        }
        self.delete_queue_now(qid, now, fx);
    }

    /// Removes the subscriptions past their SubExpiry that no handle has open (an open
    /// one goes when its last handle closes); called as publications and MQSUBs come, so
    /// an expiry costs nothing until then.
    pub(crate) fn end_expired_subscriptions(&mut self, now: Timestamp, fx: &mut Effects) {
        if !self.subscriptions.any_expire() {
            return;
        }
        for key in self.subscriptions.expired(now) {
            self.end_subscription(key, now, fx);
        }
    }

    /// A durable subscription was made or changed: the catalogue must keep it.
    pub(crate) fn durable_subscription_changed(&mut self, key: SubKey, fx: &mut Effects) {
        if let Some(sub) = self.subscriptions.get(key) {
            fx.push(Effect::CatalogueChanged(CatalogueChange::Subscription(
                sub.name.clone(),
            )));
        }
    }
}
