//! Administration: the operations MQSC's `AdminTarget` maps onto, one to one (the
//! server adds `now` and an [`Effects`] buffer), plus the queue manager's system objects.
//!
//! Status answers come from counters kept as the engine works; nothing here scans a
//! queue's messages (MSGAGE looks at the head of each priority only).

use crate::clock::{admin_date_time, Timestamp};
use crate::connection::{ConnId, HandleTarget, Hobj, InputMode};
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::journal::{kind, LogRecord};
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use ferry_mqi::{validate_channel_name, validate_object_name, ReasonCode};
use ferry_objects::authinfo::{AuthInfoType, DEFAULT_IDPWOS};
use ferry_objects::queue::{
    shipped_channel_queues, shipped_cluster_queues, shipped_trigger_queues,
};
use ferry_objects::queue::{DefinitionType, Enablement};
use ferry_objects::status::{ConnectionStatus, HandleStatus, QueueStatus};
use ferry_objects::topic::shipped_model_queues;
use ferry_objects::{
    AdminError, ChannelDefinition, ChannelType, ListenerDefinition, QmgrAttributes,
    QueueDefinition, QueueType,
};
use ferry_objects::{AuthInfoDefinition, TopicDefinition};
use ferry_security::chlauth::{ChlauthRecord, ChlauthRules, SetAction};

/// The dead-letter queue every queue manager gets.
pub const DEAD_LETTER_QUEUE: &str = "SYSTEM.DEAD.LETTER.QUEUE";
/// The queue statistics messages are put to (STATMQI, STATQ).
pub const STATISTICS_QUEUE: &str = "SYSTEM.ADMIN.STATISTICS.QUEUE";

fn not_found(name: &str) -> AdminError {
    AdminError::NotFound {
        name: name.to_string(),
    }
}

fn in_use(name: &str) -> AdminError {
    AdminError::InUse {
        name: name.to_string(),
    }
}

impl QueueManager {
    /// A queue definition of any type, by exact name.
    pub fn queue(&self, name: &str) -> Option<QueueDefinition> {
        let id = self.queues.lookup(name)?;
        self.queues.get(id).map(|e| e.def.clone())
    }

    /// Every queue definition, sorted by name (temporary dynamic queues included).
    pub fn queues(&self) -> Vec<QueueDefinition> {
        self.queues.iter().map(|(_, e)| e.def.clone()).collect()
    }

    /// DEFINE Qxxx: creates a queue, or with `replace` replaces one of the same type
    /// (with ALTER's in-use rules, without FORCE).
    pub fn define_queue(
        &mut self,
        def: QueueDefinition,
        replace: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), AdminError> {
            validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
            self.check_cluster_attributes(
                &def.attributes.cluster,
                &def.attributes.cluster_namelist,
            )?;
            if let Some(id) = self.queues.lookup(&def.name) {
                let existing = self.queues.get(id).map(|e| e.def.queue_type);
                if existing != Some(def.queue_type) {
                    return Err(if replace {
                        AdminError::TypeMismatch { name: def.name }
                    } else {
                        AdminError::AlreadyExists { name: def.name }
                    });
                }
                if !replace {
                    return Err(AdminError::AlreadyExists { name: def.name });
                }
                return self.alter_queue(def, false, now, fx);
            }
            let temporary = def.queue_type == QueueType::Local
                && def.attributes.definition_type == DefinitionType::TemporaryDynamic;
            if self.logging && !temporary && def.queue_type == QueueType::Local {
                fx.log(LogRecord::queue(kind::DEFINE_QUEUE, &def.name));
            }
            let change = CatalogueChange::Queue(def.name.clone());
            self.queues.insert(def);
            if !temporary {
                fx.push(Effect::CatalogueChanged(change));
            }
            Ok(())
        })();
        self.debug_check();
        result
    }

    /// Handles open on the definition `id` itself (e.g. through an alias).
    fn handles_on(&self, id: QueueId) -> usize {
        self.conns
            .values()
            .flat_map(|c| c.handles.iter().flatten())
            .filter(|h| matches!(h.target, HandleTarget::Queue { opened, local } if opened == id || local == id))
            .count()
    }

    /// ALTER Qxxx: replaces an existing queue's attributes. While open, changing
    /// SHARE to NOSHARE with several input handles, or changing USAGE, needs `force`;
    /// USAGE never changes on a queue holding messages (NotEmpty).
    /// Disabling GET ends waiting gets with 2016.
    pub fn alter_queue(
        &mut self,
        def: QueueDefinition,
        force: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), AdminError> {
            self.check_cluster_attributes(
                &def.attributes.cluster,
                &def.attributes.cluster_namelist,
            )?;
            let id = self
                .queues
                .lookup(&def.name)
                .ok_or_else(|| not_found(&def.name))?;
            let open = self.handles_on(id);
            let entry = self
                .queues
                .get_mut(id)
                .ok_or_else(|| not_found(&def.name))?;
            if entry.def.queue_type != def.queue_type {
                return Err(AdminError::TypeMismatch { name: def.name });
            }
            let old = &entry.def.attributes;
            let new = &def.attributes;
            let holds_messages = entry
                .local
                .as_ref()
                .is_some_and(|q| q.store.depth() > 0 || q.uncommitted() > 0);
            if old.usage != new.usage && holds_messages {
                // MQ: a queue's messages were put for its usage (a transmission queue's
                // carry an MQXQH), so USAGE changes only on an empty queue, FORCE or not.
                return Err(AdminError::NotEmpty { name: def.name });
            }
            if !force {
                let input_handles = entry.local.as_ref().map_or(0, |q| q.open_input());
                if old.shareable && !new.shareable && input_handles > 1 {
                    return Err(in_use(&def.name));
                }
                if old.usage != new.usage && open > 0 {
                    return Err(in_use(&def.name));
                }
            }
            let get_disabled = old.get == Enablement::Enabled && new.get == Enablement::Disabled;
            // TRIGGER turned on, or GET enabled again, on a queue holding messages: MQ
            // looks at the trigger conditions again (`crate::trigger`).
            let rearmed = (!old.trigger && new.trigger)
                || (old.get == Enablement::Disabled && new.get == Enablement::Enabled);
            let temporary = entry.is_temporary();
            entry.def.attributes = def.attributes;
            if get_disabled {
                // Waiters on this queue, or on a local queue this alias resolves to.
                let affected: Vec<_> = self
                    .conns
                    .iter()
                    .filter_map(|(cid, c)| {
                        let p = c.pending?;
                        let h = c.handle(p.hobj)?;
                        match h.target {
                            HandleTarget::Queue { opened, local }
                                if opened == id || local == id =>
                            {
                                Some(*cid)
                            }
                            _ => None,
                        }
                    })
                    .collect();
                for c in affected {
                    self.fail_wait(c, ReasonCode::GetInhibited, fx);
                }
            }
            if !temporary {
                fx.push(Effect::CatalogueChanged(CatalogueChange::Queue(def.name)));
            }
            if rearmed {
                self.trigger_reevaluate(id, false, now, fx);
            }
            Ok(())
        })();
        self.debug_check();
        result
    }

    /// DELETE Qxxx: refused while open or with uncommitted work (InUse), and for a
    /// local queue holding messages without `purge` (NotEmpty).
    pub fn delete_queue(
        &mut self,
        name: &str,
        purge: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<(), AdminError> {
            let id = self.queues.lookup(name).ok_or_else(|| not_found(name))?;
            if self.handles_on(id) > 0 {
                return Err(in_use(name));
            }
            let entry = self.queues.get(id).ok_or_else(|| not_found(name))?;
            if let Some(lq) = &entry.local {
                if lq.open_handles() > 0 || lq.uncommitted() > 0 {
                    return Err(in_use(name));
                }
                if lq.store.depth() > 0 && !purge {
                    return Err(AdminError::NotEmpty {
                        name: name.to_string(),
                    });
                }
            }
            self.delete_queue_now(id, now, fx);
            fx.push(Effect::CatalogueChanged(CatalogueChange::Queue(
                name.to_string(),
            )));
            Ok(())
        })();
        self.debug_check();
        result
    }

    /// CLEAR QLOCAL: removes every message; refused (InUse) while the queue is open for
    /// input or holds uncommitted work. Returns how many messages went.
    ///
    /// This form has no effects buffer, so it logs nothing: with logging on
    /// ([`QueueManager::set_logging`]) use [`QueueManager::clear_queue_logged`], or the
    /// cleared persistent messages come back at restart.
    pub fn clear_queue(&mut self, name: &str) -> Result<u64, AdminError> {
        self.clear_queue_logged(name, &mut Effects::new())
    }

    /// CLEAR QLOCAL with its log record: as [`QueueManager::clear_queue`], and with
    /// logging on a clear that removed messages pushes a clear record (the reply waits
    /// for it, see [`Effects::reply_needs_durable`]).
    pub fn clear_queue_logged(&mut self, name: &str, fx: &mut Effects) -> Result<u64, AdminError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<u64, AdminError> {
            let logging = self.logging;
            let id = self.queues.lookup(name).ok_or_else(|| not_found(name))?;
            let entry = self.queues.get_mut(id).ok_or_else(|| not_found(name))?;
            let Some(lq) = entry.local.as_mut() else {
                return Err(AdminError::TypeMismatch {
                    name: name.to_string(),
                });
            };
            // MQ refuses CLEAR while any application has the queue open, whatever the
            // options, or while it holds uncommitted messages.
            if lq.open_handles() > 0 || lq.uncommitted() > 0 {
                return Err(in_use(name));
            }
            // Messages waiting out a redelivery delay are cleared with the rest.
            self.end_redelivery_delays(id);
            let entry = self.queues.get_mut(id).ok_or_else(|| not_found(name))?;
            let Some(lq) = entry.local.as_mut() else {
                return Err(in_use(name));
            };
            let n = lq.store.clear_available();
            if logging && n > 0 && !entry.is_temporary() {
                fx.log(LogRecord::queue(kind::CLEAR_QUEUE, &entry.def.name));
                fx.reply_waits();
            }
            Ok(n)
        })();
        self.debug_check();
        result
    }

    /// DISPLAY QSTATUS TYPE(QUEUE) of a local queue.
    pub fn queue_status(&self, name: &str, now: Timestamp) -> Option<QueueStatus> {
        let e = self.queues.get(self.queues.lookup(name)?)?;
        let lq = e.local.as_ref()?;
        // MONQ decides whether the monitoring values show (blank otherwise, as MQ).
        let monitored = e.def.attributes.monitoring.collects(self.qmgr.monitoring_q);
        Some(QueueStatus {
            name: e.def.name.clone(),
            current_depth: lq.store.depth() as u64,
            open_input_count: lq.open_input(),
            open_output_count: lq.open_output(),
            uncommitted: lq.uncommitted().into(),
            last_put_ms: lq.last_put_ms.filter(|_| monitored),
            last_get_ms: lq.last_get_ms.filter(|_| monitored),
            oldest_msg_age_secs: lq
                .store
                .oldest_put_ms()
                .filter(|_| monitored)
                .map(|t| now.0.saturating_sub(t) / 1000),
            // The queue file belongs to the server: it fills this in.
            queue_file_bytes: 0,
            max_file_size_mb: e.def.attributes.max_file_size_mb(),
        })
    }

    /// The name handle `hobj` of `conn` opened (after model resolution): what the
    /// runtime's trace spans call the destination.
    pub fn handle_name(&self, conn: ConnId, hobj: Hobj) -> Option<&str> {
        self.conns.get(&conn)?.handle(hobj).map(|h| h.name.as_str())
    }

    /// DISPLAY QSTATUS TYPE(HANDLE): handles open on a queue (directly, or resolving
    /// to it through an alias).
    pub fn handle_status(&self, name: &str) -> Vec<HandleStatus> {
        let Some(id) = self.queues.lookup(name) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (cid, c) in &self.conns {
            for h in c.handles.iter().flatten() {
                let HandleTarget::Queue { opened, local } = h.target else {
                    continue;
                };
                if opened != id && local != id {
                    continue;
                }
                out.push(HandleStatus {
                    queue: name.to_string(),
                    connection_id: cid.to_string(),
                    application_tag: c.info.application_name.clone(),
                    channel: c.info.channel.clone(),
                    connection_name: c.info.connection_name.clone(),
                    user_id: c.info.user_id.clone(),
                    pid: c.info.pid,
                    open_options: h.options.bits(),
                    input: match h.input {
                        InputMode::None => "NO",
                        InputMode::Shared => "SHARED",
                        InputMode::Exclusive => "EXCL",
                    }
                    .to_string(),
                    output: h.options.contains(ferry_mqi::OpenOptions::OUTPUT),
                    browse: h.options.contains(ferry_mqi::OpenOptions::BROWSE),
                    inquire: h.options.contains(ferry_mqi::OpenOptions::INQUIRE),
                    set: h.options.contains(ferry_mqi::OpenOptions::SET),
                });
            }
        }
        out
    }

    /// A channel by exact name.
    pub fn channel(&self, name: &str) -> Option<ChannelDefinition> {
        self.channels.get(name).cloned()
    }

    /// Every channel, sorted by name.
    pub fn channels(&self) -> Vec<ChannelDefinition> {
        self.channels.values().cloned().collect()
    }

    /// DEFINE CHANNEL, or with `replace` replaces one of the same type.
    pub fn define_channel(
        &mut self,
        def: ChannelDefinition,
        replace: bool,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        validate_channel_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        self.check_cluster_attributes(&def.attributes.cluster, &def.attributes.cluster_namelist)?;
        if let Some(old) = self.channels.get(&def.name) {
            if !replace {
                return Err(AdminError::AlreadyExists { name: def.name });
            }
            if old.channel_type != def.channel_type {
                return Err(AdminError::TypeMismatch { name: def.name });
            }
        }
        let change = CatalogueChange::Channel(def.name.clone());
        self.channels.insert(def.name.clone(), def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// ALTER CHANNEL.
    pub fn alter_channel(
        &mut self,
        def: ChannelDefinition,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        self.check_cluster_attributes(&def.attributes.cluster, &def.attributes.cluster_namelist)?;
        let old = self
            .channels
            .get_mut(&def.name)
            .ok_or_else(|| not_found(&def.name))?;
        if old.channel_type != def.channel_type {
            return Err(AdminError::TypeMismatch { name: def.name });
        }
        let change = CatalogueChange::Channel(def.name.clone());
        *old = def;
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// DELETE CHANNEL: refused (InUse) while connections use it.
    pub fn delete_channel(&mut self, name: &str, fx: &mut Effects) -> Result<(), AdminError> {
        if !self.channels.contains_key(name) {
            return Err(not_found(name));
        }
        if self.conns.values().any(|c| c.info.channel == name) {
            return Err(in_use(name));
        }
        self.channels.remove(name);
        fx.push(Effect::CatalogueChanged(CatalogueChange::Channel(
            name.to_string(),
        )));
        Ok(())
    }

    /// A listener by exact name.
    pub fn listener(&self, name: &str) -> Option<ListenerDefinition> {
        self.listeners.get(name).cloned()
    }

    /// Every listener, sorted by name.
    pub fn listeners(&self) -> Vec<ListenerDefinition> {
        self.listeners.values().cloned().collect()
    }

    /// DEFINE LISTENER, or with `replace` replaces one.
    pub fn define_listener(
        &mut self,
        def: ListenerDefinition,
        replace: bool,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        if self.listeners.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        let change = CatalogueChange::Listener(def.name.clone());
        self.listeners.insert(def.name.clone(), def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// ALTER LISTENER.
    pub fn alter_listener(
        &mut self,
        def: ListenerDefinition,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        let old = self
            .listeners
            .get_mut(&def.name)
            .ok_or_else(|| not_found(&def.name))?;
        let change = CatalogueChange::Listener(def.name.clone());
        *old = def;
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// DELETE LISTENER (the server checks that it is stopped first).
    pub fn delete_listener(&mut self, name: &str, fx: &mut Effects) -> Result<(), AdminError> {
        self.listeners.remove(name).ok_or_else(|| not_found(name))?;
        fx.push(Effect::CatalogueChanged(CatalogueChange::Listener(
            name.to_string(),
        )));
        Ok(())
    }

    /// An authentication information object by exact name.
    pub fn authinfo(&self, name: &str) -> Option<AuthInfoDefinition> {
        self.authinfos.get(name).cloned()
    }

    /// Every authentication information object, sorted by name.
    pub fn authinfos(&self) -> Vec<AuthInfoDefinition> {
        self.authinfos.values().cloned().collect()
    }

    /// DEFINE AUTHINFO, or with `replace` replaces one of the same AUTHTYPE.
    pub fn define_authinfo(
        &mut self,
        def: AuthInfoDefinition,
        replace: bool,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        check_authinfo(&def)?;
        if let Some(old) = self.authinfos.get(&def.name) {
            if !replace {
                return Err(AdminError::AlreadyExists { name: def.name });
            }
            if old.auth_type != def.auth_type {
                return Err(AdminError::TypeMismatch { name: def.name });
            }
        }
        let change = CatalogueChange::AuthInfo(def.name.clone());
        self.authinfos.insert(def.name.clone(), def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// ALTER AUTHINFO.
    pub fn alter_authinfo(
        &mut self,
        def: AuthInfoDefinition,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        let old = self
            .authinfos
            .get_mut(&def.name)
            .ok_or_else(|| not_found(&def.name))?;
        if old.auth_type != def.auth_type {
            return Err(AdminError::TypeMismatch { name: def.name });
        }
        check_authinfo(&def)?;
        let change = CatalogueChange::AuthInfo(def.name.clone());
        *old = def;
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// DELETE AUTHINFO: refused (in use) while QMGR CONNAUTH names it.
    pub fn delete_authinfo(&mut self, name: &str, fx: &mut Effects) -> Result<(), AdminError> {
        if !self.authinfos.contains_key(name) {
            return Err(not_found(name));
        }
        if self.qmgr.connection_auth == name {
            return Err(in_use(name));
        }
        self.authinfos.remove(name);
        fx.push(Effect::CatalogueChanged(CatalogueChange::AuthInfo(
            name.to_string(),
        )));
        Ok(())
    }

    /// A topic object by exact name.
    pub fn topic(&self, name: &str) -> Option<TopicDefinition> {
        self.topics.get(name).cloned()
    }

    /// Every topic object, sorted by name (SYSTEM.DEFAULT.TOPIC included).
    pub fn topics(&self) -> Vec<TopicDefinition> {
        self.topics.values().cloned().collect()
    }

    /// The topic object administering `topic_string` (exact, case-sensitive match; ''
    /// is the root, SYSTEM.BASE.TOPIC's), if the node has one: what pub/sub walks to
    /// resolve ASPARENT ([`ferry_objects::ResolvedTopicAttributes::resolve`]). An index
    /// lookup, O(log n). SYSTEM.DEFAULT.TOPIC, the template, is never answered.
    pub fn topic_object_for_string(&self, topic_string: &str) -> Option<&TopicDefinition> {
        self.topics.get(self.topic_strings.get(topic_string)?)
    }

    /// Adds or replaces a topic object, keeping the topic-string index in step.
    pub(crate) fn insert_topic(&mut self, def: TopicDefinition) {
        self.topic_paths.borrow_mut().clear();
        self.remove_topic(&def.name);
        if def.in_tree() {
            self.topic_strings
                .insert(def.attributes.topic_string.clone(), def.name.clone());
        }
        self.topics.insert(def.name.clone(), def);
    }

    /// Removes a topic object and its index entry.
    fn remove_topic(&mut self, name: &str) -> Option<TopicDefinition> {
        self.topic_paths.borrow_mut().clear();
        let old = self.topics.remove(name)?;
        if self
            .topic_strings
            .get(old.topic_string())
            .map(String::as_str)
            == Some(name)
        {
            self.topic_strings.remove(old.topic_string());
        }
        Some(old)
    }

    /// What a topic object may not be: TOPICSTR blank (but for the shipped objects, whose
    /// TOPICSTR is always blank), changed from the existing object's, or another object's;
    /// CLUSTER other than blank (clusters come later).
    fn check_topic(&self, def: &TopicDefinition) -> Result<(), AdminError> {
        validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        let ts = def.topic_string();
        if TopicDefinition::may_have_blank_topic_string(&def.name) {
            if !ts.is_empty() {
                return Err(AdminError::Invalid(format!(
                    "{} is {}: its TOPICSTR is '' and cannot be '{ts}'",
                    def.name,
                    if def.in_tree() {
                        "the object of the root of the topic tree"
                    } else {
                        "the template of DEFINE TOPIC, outside the topic tree"
                    }
                )));
            }
        } else if ts.trim().is_empty() {
            return Err(AdminError::Invalid(format!(
                "TOPICSTR of topic object {} is blank: give the topic string the object administers",
                def.name
            )));
        }
        if let Some(old) = self.topics.get(&def.name) {
            if old.topic_string() != ts {
                return Err(AdminError::Invalid(format!(
                    "the TOPICSTR of topic object {} is '{}' and cannot be changed; DELETE the object and DEFINE it again to give it another",
                    def.name,
                    old.topic_string()
                )));
            }
        }
        if def.in_tree() {
            if let Some(other) = self.topic_strings.get(ts).filter(|o| **o != def.name) {
                return Err(AdminError::Invalid(format!(
                    "topic string '{ts}' already belongs to topic object {other}; two topic objects cannot share a topic string"
                )));
            }
        }
        if !def.attributes.cluster.trim().is_empty() {
            return Err(AdminError::Invalid(format!(
                "CLUSTER({}): clusters are not available yet, so topic objects cannot be shared in one",
                def.attributes.cluster.trim()
            )));
        }
        Ok(())
    }

    /// DEFINE TOPIC, or with `replace` replaces one (its TOPICSTR must stay the same).
    /// Refused when TOPICSTR is blank (but for SYSTEM.BASE.TOPIC and
    /// SYSTEM.DEFAULT.TOPIC), belongs to another topic object, or CLUSTER is not blank.
    pub fn define_topic(
        &mut self,
        def: TopicDefinition,
        replace: bool,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        validate_object_name(&def.name).map_err(|e| AdminError::Invalid(e.to_string()))?;
        if self.topics.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        self.check_topic(&def)?;
        let change = CatalogueChange::Topic(def.name.clone());
        self.insert_topic(def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// ALTER TOPIC: replaces an existing topic object's attributes (TOPICSTR unchanged).
    pub fn alter_topic(
        &mut self,
        def: TopicDefinition,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        if !self.topics.contains_key(&def.name) {
            return Err(not_found(&def.name));
        }
        self.check_topic(&def)?;
        let change = CatalogueChange::Topic(def.name.clone());
        self.insert_topic(def);
        fx.push(Effect::CatalogueChanged(change));
        Ok(())
    }

    /// DELETE TOPIC. SYSTEM.BASE.TOPIC may go too: its shipped values still apply
    /// ([`ferry_objects::ResolvedTopicAttributes::shipped`]).
    pub fn delete_topic(&mut self, name: &str, fx: &mut Effects) -> Result<(), AdminError> {
        self.remove_topic(name).ok_or_else(|| not_found(name))?;
        fx.push(Effect::CatalogueChanged(CatalogueChange::Topic(
            name.to_string(),
        )));
        Ok(())
    }

    /// The queue manager's attributes.
    pub fn qmgr(&self) -> QmgrAttributes {
        self.qmgr.clone()
    }

    /// ALTER QMGR: replaces the queue manager's attributes.
    pub fn alter_qmgr(
        &mut self,
        attrs: QmgrAttributes,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        self.check_namelist_named(&attrs.repository_namelist)?;
        self.qmgr = attrs;
        fx.push(Effect::CatalogueChanged(CatalogueChange::Qmgr));
        Ok(())
    }

    /// DISPLAY CONN: every connection, in connection order.
    pub fn connections(&self) -> Vec<ConnectionStatus> {
        self.conns
            .iter()
            .map(|(id, c)| ConnectionStatus {
                connection_id: id.to_string(),
                application_tag: c.info.application_name.clone(),
                channel: c.info.channel.clone(),
                connection_name: c.info.connection_name.clone(),
                user_id: c.info.user_id.clone(),
                pid: c.info.pid,
                uow_active: !c.uow.is_empty(),
                uow_messages: c.uow.len() as u64,
                open_objects: c.handles.iter().flatten().map(|h| h.name.clone()).collect(),
                connected_ms: c.connected_ms,
            })
            .collect()
    }

    /// The channel authentication records.
    pub fn chlauth(&self) -> &ChlauthRules {
        &self.chlauth
    }

    /// SET CHLAUTH: adds, replaces or removes records (`record.altered_ms` is set to
    /// `now`). The catalogue saves the records of the record's profile.
    pub fn set_chlauth(
        &mut self,
        mut record: ChlauthRecord,
        action: SetAction,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<(), AdminError> {
        record.altered_ms = now.0;
        let profile = record.profile.clone();
        self.chlauth.set(record, action).map_err(AdminError::from)?;
        fx.push(Effect::CatalogueChanged(CatalogueChange::Chlauth(profile)));
        Ok(())
    }

    /// Creates the objects `crtmqm` makes, where missing: SYSTEM.DEFAULT.LOCAL.QUEUE,
    /// SYSTEM.DEFAULT.MODEL.QUEUE, SYSTEM.DEFAULT.ALIAS.QUEUE,
    /// SYSTEM.DEFAULT.REMOTE.QUEUE, SYSTEM.DEAD.LETTER.QUEUE, SYSTEM.ADMIN.COMMAND.QUEUE,
    /// SYSTEM.ADMIN.STATISTICS.QUEUE (statistics messages),
    /// SYSTEM.RETAINED.PUB.QUEUE (retained publications), the channel queues
    /// SYSTEM.CHANNEL.SYNCQ and SYSTEM.CHANNEL.INITQ, SYSTEM.DEFAULT.INITIATION.QUEUE and
    /// process SYSTEM.DEFAULT.PROCESS (triggering),
    /// the model queues of managed subscriptions SYSTEM.DURABLE.MODEL.QUEUE (PERMDYN) and
    /// SYSTEM.NDURABLE.MODEL.QUEUE (TEMPDYN), topic objects SYSTEM.BASE.TOPIC (the root,
    /// with MQ's shipped values) and SYSTEM.DEFAULT.TOPIC (the DEFINE template), channels SYSTEM.DEF.SVRCONN, SYSTEM.DEF.AMQP (PORT(5672): the AMQP channel a new
    /// queue manager starts with), SYSTEM.DEF.SENDER, .RECEIVER, .SERVER and .REQUESTER (the
    /// templates of DEFINE CHANNEL CHLTYPE(SDR|RCVR|SVR|RQSTR)), and listener SYSTEM.DEFAULT.LISTENER.TCP (PORT(0)); sets
    /// DEADQ when blank. The server saves [`QueueManager::catalogue`] afterwards.
    pub fn define_system_objects(&mut self, now: Timestamp) {
        let (date, time) = admin_date_time(now);
        let queues = [
            ("SYSTEM.DEFAULT.LOCAL.QUEUE", QueueType::Local),
            ("SYSTEM.DEFAULT.MODEL.QUEUE", QueueType::Model),
            ("SYSTEM.DEFAULT.ALIAS.QUEUE", QueueType::Alias),
            ("SYSTEM.DEFAULT.REMOTE.QUEUE", QueueType::Remote),
            (DEAD_LETTER_QUEUE, QueueType::Local),
            ("SYSTEM.ADMIN.COMMAND.QUEUE", QueueType::Local),
            (STATISTICS_QUEUE, QueueType::Local),
            (crate::pubsub::retained::RETAINED_QUEUE, QueueType::Local),
        ];
        let queues = queues
            .into_iter()
            .map(|(name, qt)| QueueDefinition::new(name, qt))
            .chain(shipped_model_queues())
            .chain(shipped_channel_queues())
            .chain(shipped_cluster_queues())
            .chain(shipped_trigger_queues());
        for mut def in queues {
            if self.queues.lookup(&def.name).is_none() {
                def.attributes.creation_date = date.clone();
                def.attributes.creation_time = time.clone();
                def.attributes.alteration_date = date.clone();
                def.attributes.alteration_time = time.clone();
                self.queues.insert(def);
            }
        }
        let channels = [
            ("SYSTEM.DEF.SVRCONN", ChannelType::Svrconn),
            ("SYSTEM.DEF.AMQP", ChannelType::Amqp),
            ("SYSTEM.DEF.SENDER", ChannelType::Sender),
            ("SYSTEM.DEF.RECEIVER", ChannelType::Receiver),
            ("SYSTEM.DEF.SERVER", ChannelType::Server),
            ("SYSTEM.DEF.REQUESTER", ChannelType::Requester),
            ("SYSTEM.DEF.CLUSSDR", ChannelType::ClusterSender),
            ("SYSTEM.DEF.CLUSRCVR", ChannelType::ClusterReceiver),
        ];
        for (name, ct) in channels {
            if !self.channels.contains_key(name) {
                // Table defaults: SYSTEM.DEF.AMQP gets PORT(5672), as MQ ships it.
                let mut ch = ChannelDefinition::new(name, ct);
                ch.attributes.alteration_date = date.clone();
                ch.attributes.alteration_time = time.clone();
                self.channels.insert(ch.name.clone(), ch);
            }
        }
        if !self.listeners.contains_key("SYSTEM.DEFAULT.LISTENER.TCP") {
            let mut l = ListenerDefinition::new("SYSTEM.DEFAULT.LISTENER.TCP");
            l.attributes.port = 0;
            l.attributes.alteration_date = date.clone();
            l.attributes.alteration_time = time.clone();
            self.listeners.insert(l.name.clone(), l);
        }
        self.define_default_process(now);
        if !self.authinfos.contains_key(DEFAULT_IDPWOS) {
            let mut a = AuthInfoDefinition::new(DEFAULT_IDPWOS, AuthInfoType::IdPwOs);
            a.attributes.alteration_date = date.clone();
            a.attributes.alteration_time = time.clone();
            self.authinfos.insert(a.name.clone(), a);
        }
        for mut n in ferry_objects::NamelistDefinition::shipped() {
            if !self.namelists.contains_key(&n.name) {
                n.attributes.alteration_date = date.clone();
                n.attributes.alteration_time = time.clone();
                self.namelists.insert(n.name.clone(), n);
            }
        }
        for mut t in TopicDefinition::shipped() {
            if !self.topics.contains_key(&t.name) {
                t.attributes.alteration_date = date.clone();
                t.attributes.alteration_time = time.clone();
                self.insert_topic(t);
            }
        }
        if self.chlauth.is_empty() {
            let defaults = ChlauthRules::mq_defaults(now.0);
            self.chlauth = ChlauthRules::from_records(defaults).unwrap_or_default();
            debug_assert_eq!(self.chlauth.len(), 3, "MQ's default records compile");
        }
        if self.qmgr.dead_letter_q.trim().is_empty() {
            self.qmgr.dead_letter_q = DEAD_LETTER_QUEUE.to_string();
        }
        if self.qmgr.creation_date.is_empty() {
            self.qmgr.creation_date = date;
            self.qmgr.creation_time = time;
        }
    }
}

impl QueueManager {
    /// Defines the channel, cluster and triggering objects ([`shipped_channel_queues`],
    /// [`shipped_cluster_queues`], [`shipped_trigger_queues`], SYSTEM.DEFAULT.PROCESS) a
    /// queue manager made by a Ferry from before distributed queuing (or clusters, or
    /// triggering) lacks, once: recovery calls it at every
    /// start, and it adds only what is missing from a queue manager that has the
    /// shipped objects (SYSTEM.DEFAULT.LOCAL.QUEUE; an engine made bare, as tests make
    /// them, gets nothing). Each addition is a [`CatalogueChange`], so the server saves
    /// the definitions. Returns the names added.
    pub fn define_missing_channel_queues(
        &mut self,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Vec<String> {
        if self.queues.lookup("SYSTEM.DEFAULT.LOCAL.QUEUE").is_none() {
            return Vec::new();
        }
        let (date, time) = admin_date_time(now);
        let mut added = Vec::new();
        for mut def in shipped_channel_queues()
            .into_iter()
            .chain(shipped_cluster_queues())
            .chain(shipped_trigger_queues())
        {
            if self.queues.lookup(&def.name).is_some() {
                continue;
            }
            def.attributes.creation_date = date.clone();
            def.attributes.creation_time = time.clone();
            def.attributes.alteration_date = date.clone();
            def.attributes.alteration_time = time.clone();
            let name = def.name.clone();
            self.queues.insert(def);
            fx.push(Effect::CatalogueChanged(CatalogueChange::Queue(
                name.clone(),
            )));
            added.push(name);
        }
        debug_assert!(added.iter().all(|n| self.queues.lookup(n).is_some()));
        if self.define_default_process(now) {
            let name = ferry_objects::process::DEFAULT_PROCESS.to_string();
            fx.push(Effect::CatalogueChanged(CatalogueChange::Process(
                name.clone(),
            )));
            added.push(name);
        }
        added
    }
}

/// What an AUTHINFO object may not hold: group searches without BASEDNG; FINDGRP and GRPFIELD that are not attribute names
/// (they go into search filters as they are).
fn check_authinfo(def: &AuthInfoDefinition) -> Result<(), AdminError> {
    use ferry_objects::authinfo::AuthorizationMethod;
    if def.auth_type != AuthInfoType::IdPwLdap {
        return Ok(());
    }
    let a = &def.attributes;
    for (keyword, value) in [("FINDGRP", &a.find_group), ("GRPFIELD", &a.group_field)] {
        if !is_ldap_attribute_name(value.trim()) {
            return Err(AdminError::Invalid(format!(
                "{keyword}('{value}') is not an LDAP attribute name (letters, digits, '-', or an OID)"
            )));
        }
    }
    if matches!(
        a.authorization_method,
        AuthorizationMethod::SearchGroup | AuthorizationMethod::SearchGroupShortName
    ) && a.base_dn_group.trim().is_empty()
    {
        return Err(AdminError::Invalid(format!(
            "AUTHORMD({}) searches for group entries: BASEDNG must say where",
            a.authorization_method.keyword()
        )));
    }
    Ok(())
}

/// True for a blank value or an LDAP attribute description: a name (a letter, then
/// letters, digits and '-') or a numeric OID, with options after ';'.
fn is_ldap_attribute_name(value: &str) -> bool {
    if value.is_empty() {
        return true;
    }
    value.split(';').enumerate().all(|(i, part)| {
        let name = !part.is_empty()
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && (i > 0 || part.starts_with(|c: char| c.is_ascii_alphabetic()));
        let oid = i == 0
            && !part.is_empty()
            && part
                .split('.')
                .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
        name || oid
    })
}

#[cfg(test)]
mod system_channel_tests {
    use super::*;

    #[test]
    fn group_attributes_must_be_attribute_names() {
        for ok in [
            "",
            "cn",
            "member",
            "memberOf",
            "uniqueMember",
            "cn;lang-en",
            "2.5.4.3",
        ] {
            assert!(is_ldap_attribute_name(ok), "{ok}");
        }
        for bad in ["cn)(uid=*", "member=x", "1cn", "cn;", "2.5..3", "a b", "*"] {
            assert!(!is_ldap_attribute_name(bad), "{bad}");
        }
    }

    #[test]
    fn group_searches_need_a_base_dn() {
        use ferry_objects::authinfo::AuthorizationMethod;
        let mut def = AuthInfoDefinition::new("L", AuthInfoType::IdPwLdap);
        assert!(check_authinfo(&def).is_ok(), "AUTHORMD(OS) needs nothing");
        def.attributes.authorization_method = AuthorizationMethod::SearchGroup;
        assert!(check_authinfo(&def).is_err());
        def.attributes.authorization_method = AuthorizationMethod::SearchUser;
        assert!(
            check_authinfo(&def).is_ok(),
            "SEARCHUSR reads the user entry"
        );
        def.attributes.authorization_method = AuthorizationMethod::SearchGroupShortName;
        def.attributes.base_dn_group = "ou=groups,dc=example,dc=com".into();
        assert!(check_authinfo(&def).is_ok());
        def.attributes.find_group = "memberUid)(x=*".into();
        assert!(check_authinfo(&def).is_err());
    }

    #[test]
    fn a_new_queue_manager_has_the_default_amqp_channel_on_5672() {
        let mut qm = QueueManager::new("QM1", QmgrAttributes::default(), Timestamp(0));
        qm.define_system_objects(Timestamp(0));
        let amqp = qm.channel("SYSTEM.DEF.AMQP").expect("SYSTEM.DEF.AMQP");
        assert_eq!(amqp.channel_type, ChannelType::Amqp);
        assert_eq!(amqp.attributes.port, 5672);
        let svrconn = qm
            .channel("SYSTEM.DEF.SVRCONN")
            .expect("SYSTEM.DEF.SVRCONN");
        assert_eq!(svrconn.channel_type, ChannelType::Svrconn);
    }
}
