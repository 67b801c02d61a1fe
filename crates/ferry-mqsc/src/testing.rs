//! An in-memory [`AdminTarget`]: the test double for the executor, its tests and the fuzzer.
//!
//! It keeps definitions in `BTreeMap`s and applies the rules a queue manager would:
//! AlreadyExists without REPLACE, TypeMismatch across queue types, InUse for open queues
//! and running listeners and channels, NotEmpty for DELETE without PURGE. Depths, open
//! handles, connections and AMQP clients are set by tests through its public fields and
//! helpers.

use crate::command::{NamePattern, SecurityRefresh};
use crate::executor::{default_channel_name, default_queue_name, DEFAULT_LISTENER};
use crate::target::AdminTarget;
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::QueueType;
use ferry_objects::status::{
    ChannelClientStatus, ChannelStatus, ConnectionStatus, HandleStatus, ListenerStatus,
    PubSubStatus, PublisherStatus, QmgrStatus, QueueStatus, SubscriptionStatusRecord,
    TopicNodeStatus,
};
use ferry_objects::subscription::{DestinationClass, SelectorType};
use ferry_objects::{
    AdminError, ChannelDefinition, ListenerDefinition, QmgrAttributes, QueueDefinition, StopMode,
};
use ferry_objects::{AttributeSet, SubscriptionAttributes, SubscriptionDefinition};
use ferry_objects::{AuthInfoDefinition, NamelistDefinition, TopicDefinition};
use std::collections::BTreeMap;

/// A queue manager held in memory.
#[derive(Clone, Debug, Default)]
pub struct MemoryTarget {
    /// Queue manager name.
    pub name: String,
    /// What `now_ms` answers.
    pub now_ms: u64,
    /// Queues by name.
    pub queues: BTreeMap<String, QueueDefinition>,
    /// Live status of local queues (depth, open counts...), by name.
    pub status: BTreeMap<String, QueueStatus>,
    /// Open handles by queue name.
    pub handles: BTreeMap<String, Vec<HandleStatus>>,
    /// Channels by name.
    pub channels: BTreeMap<String, ChannelDefinition>,
    /// Listeners by name.
    pub listeners: BTreeMap<String, ListenerDefinition>,
    /// Running listeners by name.
    pub running: BTreeMap<String, ListenerStatus>,
    /// Status of started channels (running or stopped since) by name.
    pub channel_status: BTreeMap<String, ChannelStatus>,
    /// The mode of the last STOP CHANNEL, for tests.
    pub last_stop_mode: Option<StopMode>,
    /// Queue manager attributes.
    pub qmgr: QmgrAttributes,
    /// Connected applications.
    pub connections: Vec<ConnectionStatus>,
    /// What DISPLAY QMSTATUS answers.
    pub qmgr_status: QmgrStatus,
    /// How many times every queue was listed (`queues`): what one command costs with a
    /// large catalogue, for tests.
    pub queues_listed: std::cell::Cell<usize>,
    /// Channel authentication records.
    pub chlauth: ferry_security::chlauth::ChlauthRules,
    /// The user ids `is_privileged` answers true for.
    pub privileged: Vec<String>,
    /// Authentication information objects by name.
    pub authinfos: BTreeMap<String, AuthInfoDefinition>,
    /// Process definitions by name.
    pub processes: BTreeMap<String, ferry_objects::ProcessDefinition>,
    /// Namelists by name.
    pub namelists: BTreeMap<String, NamelistDefinition>,
    /// Topic objects by name.
    pub topics: BTreeMap<String, TopicDefinition>,
    /// Authority records.
    pub authority_records: ferry_security::oam::AuthorityRecords,
    /// The known users and their groups (a user or group not here is unknown: 2292).
    pub users: BTreeMap<String, Vec<String>>,
    /// Subscriptions, in the order they were made.
    pub subscriptions: Vec<SubscriptionDefinition>,
    /// The SUBIDs of subscriptions a handle has open (DELETE SUB refuses them).
    pub open_subscriptions: Vec<String>,
    /// Topic strings with a retained publication.
    pub retained: std::collections::BTreeSet<String>,
    /// Handles open for publishing.
    pub publishers: Vec<PublisherStatus>,
    /// The user DEFINE SUB gives a blank SUBUSER.
    pub command_user: String,
    /// PING, RESET and RESOLVE CHANNEL asked of the target, in order.
    pub channel_operations: Vec<(String, ferry_objects::ChannelOperation)>,
    /// What the next channel operation answers (done when `None`).
    pub channel_operation_refusal: Option<AdminError>,
}

impl MemoryTarget {
    /// An empty queue manager (no default objects).
    pub fn new(name: &str) -> Self {
        MemoryTarget {
            name: name.to_string(),
            now_ms: 1_700_000_000_000,
            command_user: "admin".to_string(),
            ..Self::default()
        }
    }

    /// A queue manager with MQ's SYSTEM.DEFAULT.* / SYSTEM.DEF.* objects and
    /// SYSTEM.BASE.TOPIC.
    pub fn with_defaults(name: &str) -> Self {
        let mut t = Self::new(name);
        for qt in [
            QueueType::Local,
            QueueType::Model,
            QueueType::Alias,
            QueueType::Remote,
        ] {
            let def = QueueDefinition::new(default_queue_name(qt), qt);
            t.queues.insert(def.name.clone(), def);
        }
        for ct in [
            ChannelType::Svrconn,
            ChannelType::Amqp,
            ChannelType::Sender,
            ChannelType::Receiver,
            ChannelType::Server,
            ChannelType::Requester,
            ChannelType::ClusterSender,
            ChannelType::ClusterReceiver,
        ] {
            let ch = ChannelDefinition::new(default_channel_name(ct), ct);
            t.channels.insert(ch.name.clone(), ch);
        }
        let l = ListenerDefinition::new(DEFAULT_LISTENER);
        t.listeners.insert(l.name.clone(), l);
        for topic in TopicDefinition::shipped() {
            t.topics.insert(topic.name.clone(), topic);
        }
        let p = ferry_objects::ProcessDefinition::new(ferry_objects::process::DEFAULT_PROCESS);
        t.processes.insert(p.name.clone(), p);
        for nl in NamelistDefinition::shipped() {
            t.namelists.insert(nl.name.clone(), nl);
        }
        t
    }

    /// The attributes of the subscription named `name` (panics when there is none).
    pub fn subscription_named(&self, name: &str) -> SubscriptionAttributes {
        self.subscriptions
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.attributes.clone())
            .unwrap_or_else(|| panic!("no subscription {name}"))
    }

    /// Sets a local queue's depth, as if messages had been put.
    pub fn set_depth(&mut self, queue: &str, depth: u64) {
        self.status_mut(queue).current_depth = depth;
    }

    /// Sets a queue's open input and output handle counts.
    pub fn set_open(&mut self, queue: &str, input: u32, output: u32) {
        let s = self.status_mut(queue);
        s.open_input_count = input;
        s.open_output_count = output;
    }

    fn status_mut(&mut self, queue: &str) -> &mut QueueStatus {
        self.status
            .entry(queue.to_string())
            .or_insert_with(|| QueueStatus {
                name: queue.to_string(),
                ..QueueStatus::default()
            })
    }

    /// Adds a client to a running channel, as if an AMQP client had connected, and adds
    /// its traffic to the channel's totals.
    pub fn connect_client(&mut self, channel: &str, client: ChannelClientStatus) {
        if let Some(s) = self.channel_status.get_mut(channel) {
            s.messages_sent += client.messages_sent;
            s.messages_received += client.messages_received;
            s.bytes_sent += client.bytes_sent;
            s.bytes_received += client.bytes_received;
            s.last_message_ms = s.last_message_ms.max(client.last_message_ms);
            s.clients.push(client);
        }
    }

    /// The queue manager's topic rules, in short: TOPICSTR not blank (but for the shipped
    /// objects), not changed, not another object's.
    fn check_topic(&self, def: &TopicDefinition) -> Result<(), AdminError> {
        let ts = def.topic_string();
        if ts.trim().is_empty() && !TopicDefinition::may_have_blank_topic_string(&def.name) {
            return Err(AdminError::Invalid(format!(
                "TOPICSTR of topic object {} is blank",
                def.name
            )));
        }
        if let Some(old) = self.topics.get(&def.name) {
            if old.topic_string() != ts {
                return Err(AdminError::Invalid(format!(
                    "the TOPICSTR of topic object {} cannot be changed",
                    def.name
                )));
            }
        }
        let other = self
            .topics
            .values()
            .find(|t| t.name != def.name && t.in_tree() && def.in_tree() && t.topic_string() == ts);
        if let Some(other) = other {
            return Err(AdminError::Invalid(format!(
                "topic string '{ts}' already belongs to topic object {}",
                other.name
            )));
        }
        Ok(())
    }

    fn channel_running(&self, name: &str) -> bool {
        self.channel_status.get(name).is_some_and(|s| s.running)
    }

    fn is_open(&self, queue: &str) -> bool {
        self.status
            .get(queue)
            .is_some_and(|s| s.open_input_count + s.open_output_count > 0)
    }

    fn depth(&self, queue: &str) -> u64 {
        self.status.get(queue).map_or(0, |s| s.current_depth)
    }
}

/// Whether TPSTATUS's `pattern` selects `node`: topic-level `#` (any number of levels)
/// and `+` (one level); `#` alone is every node, the root included.
pub fn topic_matches(pattern: &str, node: &str) -> bool {
    fn levels(p: &[&str], n: &[&str]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(&"#"), _) => levels(&p[1..], n) || (!n.is_empty() && levels(p, &n[1..])),
            (Some(&"+"), Some(_)) => levels(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => levels(&p[1..], &n[1..]),
            _ => false,
        }
    }
    let p: Vec<&str> = pattern.split('/').collect();
    let n: Vec<&str> = node.split('/').collect();
    pattern == "#" || levels(&p, &n)
}

impl MemoryTarget {
    /// The topic string TOPICOBJ and TOPICSTR make, as MQ combines them.
    fn sub_topic(&self, a: &SubscriptionAttributes) -> Result<String, AdminError> {
        let object = a.topic_object.trim();
        if object.is_empty() {
            return Ok(a.topic_string.clone());
        }
        let t = self.topics.get(object).ok_or_else(|| AdminError::Failed {
            reason: ferry_mqi::ReasonCode::UnknownObjectName,
            text: format!("TOPICOBJ({object}) is not a topic object"),
        })?;
        Ok(if a.topic_string.is_empty() {
            t.topic_string().to_string()
        } else {
            format!("{}/{}", t.topic_string(), a.topic_string)
        })
    }

    /// The local queue a provided DEST names.
    fn sub_destination(&self, dest: &str) -> Result<String, AdminError> {
        let unknown = || AdminError::Failed {
            reason: ferry_mqi::ReasonCode::UnknownObjectName,
            text: format!("DEST({dest}) is not a queue of this queue manager"),
        };
        let q = self.queues.get(dest.trim()).ok_or_else(unknown)?;
        match q.queue_type {
            QueueType::Local => Ok(q.name.clone()),
            QueueType::Alias => self
                .queues
                .get(q.attributes.target.trim())
                .filter(|t| t.queue_type == QueueType::Local)
                .map(|t| t.name.clone())
                .ok_or_else(unknown),
            _ => Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::InvalidDestination,
                text: format!("DEST({dest}) is not a local queue or an alias of one"),
            }),
        }
    }

    fn topic_nodes(&self) -> std::collections::BTreeSet<String> {
        let mut nodes: std::collections::BTreeSet<String> = self
            .topics
            .values()
            .filter(|t| t.in_tree())
            .map(|t| t.topic_string().to_string())
            .collect();
        nodes.extend(
            self.subscriptions
                .iter()
                .map(|s| s.attributes.topic_string.clone()),
        );
        nodes.extend(self.retained.iter().cloned());
        nodes.extend(self.publishers.iter().map(|p| p.topic_string.clone()));
        nodes
    }
}

fn not_found(name: &str) -> AdminError {
    AdminError::NotFound {
        name: name.to_string(),
    }
}

impl AdminTarget for MemoryTarget {
    fn refresh_security(&mut self, what: SecurityRefresh) -> Result<String, AdminError> {
        Ok(format!("{what:?} (nothing to read in memory)"))
    }
    fn authinfo(&self, name: &str) -> Option<AuthInfoDefinition> {
        self.authinfos.get(name).cloned()
    }
    fn authinfos(&self) -> Vec<AuthInfoDefinition> {
        self.authinfos.values().cloned().collect()
    }
    fn define_authinfo(
        &mut self,
        def: AuthInfoDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        if self.authinfos.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        self.authinfos.insert(def.name.clone(), def);
        Ok(())
    }
    fn alter_authinfo(&mut self, def: AuthInfoDefinition) -> Result<(), AdminError> {
        self.authinfos.insert(def.name.clone(), def);
        Ok(())
    }
    fn delete_authinfo(&mut self, name: &str) -> Result<(), AdminError> {
        if self.qmgr.connection_auth == name {
            return Err(AdminError::InUse { name: name.into() });
        }
        self.authinfos.remove(name);
        Ok(())
    }
    fn process(&self, name: &str) -> Option<ferry_objects::ProcessDefinition> {
        self.processes.get(name).cloned()
    }
    fn processes(&self) -> Vec<ferry_objects::ProcessDefinition> {
        self.processes.values().cloned().collect()
    }
    fn define_process(
        &mut self,
        def: ferry_objects::ProcessDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        if self.processes.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        self.processes.insert(def.name.clone(), def);
        Ok(())
    }
    fn alter_process(&mut self, def: ferry_objects::ProcessDefinition) -> Result<(), AdminError> {
        self.processes.insert(def.name.clone(), def);
        Ok(())
    }
    fn delete_process(&mut self, name: &str) -> Result<(), AdminError> {
        self.processes.remove(name);
        Ok(())
    }
    fn namelist(&self, name: &str) -> Option<NamelistDefinition> {
        self.namelists.get(name).cloned()
    }
    fn namelists(&self) -> Vec<NamelistDefinition> {
        self.namelists.values().cloned().collect()
    }
    fn define_namelist(
        &mut self,
        def: NamelistDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        if self.namelists.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        self.namelists.insert(def.name.clone(), def);
        Ok(())
    }
    fn alter_namelist(&mut self, def: NamelistDefinition) -> Result<(), AdminError> {
        self.namelists.insert(def.name.clone(), def);
        Ok(())
    }
    fn delete_namelist(&mut self, name: &str) -> Result<(), AdminError> {
        self.namelists.remove(name);
        Ok(())
    }
    fn topic(&self, name: &str) -> Option<TopicDefinition> {
        self.topics.get(name).cloned()
    }
    fn topics(&self) -> Vec<TopicDefinition> {
        self.topics.values().cloned().collect()
    }
    fn define_topic(&mut self, def: TopicDefinition, replace: bool) -> Result<(), AdminError> {
        if self.topics.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        self.check_topic(&def)?;
        self.topics.insert(def.name.clone(), def);
        Ok(())
    }
    fn alter_topic(&mut self, def: TopicDefinition) -> Result<(), AdminError> {
        if !self.topics.contains_key(&def.name) {
            return Err(not_found(&def.name));
        }
        self.check_topic(&def)?;
        self.topics.insert(def.name.clone(), def);
        Ok(())
    }
    fn delete_topic(&mut self, name: &str) -> Result<(), AdminError> {
        self.topics
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }
    fn subscription(&self, name: &str) -> Option<SubscriptionDefinition> {
        self.subscriptions.iter().find(|s| s.name == name).cloned()
    }
    fn subscriptions(&self) -> Vec<SubscriptionDefinition> {
        let mut all = self.subscriptions.clone();
        all.sort_by(|a, b| (&a.name, &a.attributes.sub_id).cmp(&(&b.name, &b.attributes.sub_id)));
        all
    }
    fn define_subscription(
        &mut self,
        mut def: SubscriptionDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        def.attributes.topic_string = self.sub_topic(&def.attributes)?;
        if let Some(i) = self.subscriptions.iter().position(|s| s.name == def.name) {
            if !replace {
                return Err(AdminError::AlreadyExists { name: def.name });
            }
            let old = &self.subscriptions[i].attributes;
            def.attributes.sub_id = old.sub_id.clone();
            def.attributes.creation_date = old.creation_date.clone();
            def.attributes.creation_time = old.creation_time.clone();
            return self.alter_subscription(def);
        }
        if def.attributes.topic_string.is_empty() {
            return Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::UnknownObjectName,
                text: "give TOPICSTR, TOPICOBJ or both".into(),
            });
        }
        let a = &mut def.attributes;
        a.destination = if a.dest_class == DestinationClass::Managed {
            format!(
                "SYSTEM.MANAGED.DURABLE.{:016X}",
                self.subscriptions.len() + 1
            )
        } else {
            self.sub_destination(&a.destination)?
        };
        a.sub_id = format!("{:048X}", self.subscriptions.len() as u64 + 0xA0);
        if a.sub_user.trim().is_empty() {
            a.sub_user = self.command_user.clone();
        }
        a.selector_type = if a.selector.is_empty() {
            SelectorType::None
        } else {
            SelectorType::Standard
        };
        let (d, t) = crate::display::date_time(self.now_ms);
        a.creation_date = d.clone();
        a.creation_time = t.clone();
        a.alteration_date = d;
        a.alteration_time = t;
        self.subscriptions.push(def);
        Ok(())
    }
    fn alter_subscription(&mut self, mut def: SubscriptionDefinition) -> Result<(), AdminError> {
        let i = self
            .subscriptions
            .iter()
            .position(|s| s.name == def.name)
            .ok_or_else(|| not_found(&def.name))?;
        let old = &self.subscriptions[i].attributes;
        for row in SubscriptionAttributes::table() {
            if row.read_only || ferry_objects::subscription::ALTERABLE.contains(&row.keyword) {
                continue;
            }
            if (row.get)(old) != (row.get)(&def.attributes) {
                return Err(AdminError::Failed {
                    reason: ferry_objects::subscription::not_alterable_reason(row.keyword),
                    text: format!(
                        "{} of subscription {} cannot be changed",
                        row.keyword, def.name
                    ),
                });
            }
        }
        if def.attributes.destination != old.destination {
            def.attributes.destination = self.sub_destination(&def.attributes.destination)?;
        }
        let (d, t) = crate::display::date_time(self.now_ms);
        def.attributes.alteration_date = d;
        def.attributes.alteration_time = t;
        self.subscriptions[i] = def;
        Ok(())
    }
    fn delete_subscription(&mut self, sub_id: &str) -> Result<(), AdminError> {
        let i = self
            .subscriptions
            .iter()
            .position(|s| s.attributes.sub_id == sub_id)
            .ok_or_else(|| not_found(sub_id))?;
        if self.open_subscriptions.iter().any(|o| o == sub_id) {
            return Err(AdminError::InUse {
                name: self.subscriptions[i].name.clone(),
            });
        }
        self.subscriptions.remove(i);
        Ok(())
    }
    fn subscription_statuses(&self) -> Vec<SubscriptionStatusRecord> {
        self.subscriptions()
            .into_iter()
            .map(|s| SubscriptionStatusRecord {
                name: s.name,
                sub_id: s.attributes.sub_id.clone(),
                topic_string: s.attributes.topic_string.clone(),
                sub_type: s.attributes.sub_type.keyword().to_string(),
                durable: s.attributes.durable.keyword() == "YES",
                user_id: s.attributes.sub_user.clone(),
                active_connection: String::new(),
                resumed_ms: self.now_ms,
                last_message_ms: None,
                messages: 0,
            })
            .collect()
    }
    fn topic_statuses(&self, pattern: &str) -> Vec<TopicNodeStatus> {
        self.topic_nodes()
            .into_iter()
            .filter(|n| topic_matches(pattern, n))
            .map(|node| {
                let mut on_path: Vec<&TopicDefinition> = self
                    .topics
                    .values()
                    .filter(|t| t.in_tree())
                    .filter(|t| {
                        let ts = t.topic_string();
                        ts.is_empty() || node == ts || node.starts_with(&format!("{ts}/"))
                    })
                    .collect();
                on_path.sort_by_key(|t| std::cmp::Reverse(t.topic_string().len()));
                TopicNodeStatus {
                    admin: self
                        .topics
                        .values()
                        .find(|t| t.in_tree() && t.topic_string() == node)
                        .map(|t| t.name.clone())
                        .unwrap_or_default(),
                    resolved: ferry_objects::ResolvedTopicAttributes::resolve(
                        on_path.iter().map(|t| &t.attributes),
                    ),
                    pub_scope: "ALL",
                    sub_scope: "ALL",
                    pub_count: self
                        .publishers
                        .iter()
                        .filter(|p| p.topic_string == node)
                        .count() as u64,
                    sub_count: self
                        .subscriptions
                        .iter()
                        .filter(|s| s.attributes.topic_string == node)
                        .count() as u64,
                    retained: self.retained.contains(&node),
                    topic_string: node,
                }
            })
            .collect()
    }
    fn publisher_statuses(&self, pattern: &str) -> Vec<PublisherStatus> {
        self.publishers
            .iter()
            .filter(|p| topic_matches(pattern, &p.topic_string))
            .cloned()
            .collect()
    }
    fn pubsub_status(&self) -> PubSubStatus {
        PubSubStatus {
            sub_count: self.subscriptions.len() as u64,
            topic_count: self.topic_nodes().len() as u64,
        }
    }
    fn clear_retained(&mut self, topic: &str) -> Result<bool, AdminError> {
        Ok(self.retained.remove(topic))
    }
    fn chlauth(&self) -> ferry_security::chlauth::ChlauthRules {
        self.chlauth.clone()
    }
    fn set_chlauth(
        &mut self,
        mut record: ferry_security::chlauth::ChlauthRecord,
        action: ferry_security::chlauth::SetAction,
    ) -> Result<(), AdminError> {
        record.altered_ms = self.now_ms;
        self.chlauth.set(record, action).map_err(AdminError::from)
    }
    fn authority_records(&self) -> ferry_security::oam::AuthorityRecords {
        self.authority_records.clone()
    }
    fn set_authority_record(
        &mut self,
        key: ferry_security::oam::RecordKey,
        add: ferry_security::oam::Authorities,
        remove: ferry_security::oam::Authorities,
    ) -> Result<ferry_security::oam::Authorities, AdminError> {
        let known = match key.entity_type {
            ferry_security::oam::EntityType::Principal => self.users.contains_key(&key.entity),
            ferry_security::oam::EntityType::Group => {
                self.users.values().any(|g| g.contains(&key.entity))
            }
        };
        if !known {
            return Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::UnknownEntity,
                text: ferry_messages::UNKNOWN_ENTITY.format(&[&key.entity, &"user or group"]),
            });
        }
        Ok(self.authority_records.set(key, add, remove))
    }
    fn delete_authority_record(
        &mut self,
        key: ferry_security::oam::RecordKey,
    ) -> Result<(), AdminError> {
        self.authority_records
            .delete(&key)
            .map_err(|_| AdminError::Failed {
                reason: ferry_mqi::ReasonCode::UnknownObjectName,
                text: String::new(),
            })
    }
    fn principal(&self, user: &str) -> ferry_security::oam::Principal {
        ferry_security::oam::Principal {
            user: user.to_string(),
            groups: self.users.get(user).cloned().unwrap_or_default(),
            administrator: self.is_privileged(user),
        }
    }
    fn authority_of(
        &self,
        object_type: ferry_security::oam::ProfileObjectType,
        name: &str,
        principal: &ferry_security::oam::Principal,
    ) -> ferry_security::oam::Authorities {
        self.authority_records
            .authority(object_type, name, principal)
    }
    fn is_privileged(&self, user: &str) -> bool {
        self.privileged.iter().any(|p| p == user)
    }
    fn qmgr_name(&self) -> String {
        self.name.clone()
    }

    fn now_ms(&self) -> u64 {
        self.now_ms
    }

    fn queue(&self, name: &str) -> Option<QueueDefinition> {
        self.queues.get(name).cloned()
    }

    fn queues(&self) -> Vec<QueueDefinition> {
        self.queues_listed.set(self.queues_listed.get() + 1);
        self.queues.values().cloned().collect()
    }

    fn define_queue(&mut self, def: QueueDefinition, replace: bool) -> Result<(), AdminError> {
        if let Some(existing) = self.queues.get(&def.name) {
            if !replace {
                return Err(AdminError::AlreadyExists { name: def.name });
            }
            if existing.queue_type != def.queue_type {
                return Err(AdminError::TypeMismatch { name: def.name });
            }
        }
        self.queues.insert(def.name.clone(), def);
        Ok(())
    }

    fn alter_queue(&mut self, def: QueueDefinition, force: bool) -> Result<(), AdminError> {
        let Some(existing) = self.queues.get(&def.name) else {
            return Err(not_found(&def.name));
        };
        if existing.queue_type != def.queue_type {
            return Err(AdminError::TypeMismatch { name: def.name });
        }
        let sensitive = existing.attributes.usage != def.attributes.usage
            || (existing.attributes.shareable && !def.attributes.shareable);
        if sensitive && !force && self.is_open(&def.name) {
            return Err(AdminError::InUse { name: def.name });
        }
        self.queues.insert(def.name.clone(), def);
        Ok(())
    }

    fn delete_queue(&mut self, name: &str, purge: bool) -> Result<(), AdminError> {
        if !self.queues.contains_key(name) {
            return Err(not_found(name));
        }
        if self.is_open(name) {
            return Err(AdminError::InUse { name: name.into() });
        }
        if self.depth(name) > 0 && !purge {
            return Err(AdminError::NotEmpty { name: name.into() });
        }
        self.queues.remove(name);
        self.status.remove(name);
        Ok(())
    }

    fn clear_queue(&mut self, name: &str) -> Result<u64, AdminError> {
        match self.queues.get(name) {
            None => return Err(not_found(name)),
            Some(q) if q.queue_type != QueueType::Local => {
                return Err(AdminError::TypeMismatch { name: name.into() })
            }
            Some(_) => {}
        }
        if self.is_open(name) {
            return Err(AdminError::InUse { name: name.into() });
        }
        let n = self.depth(name);
        self.set_depth(name, 0);
        Ok(n)
    }

    fn queue_status(&self, name: &str) -> Option<QueueStatus> {
        let q = self.queues.get(name)?;
        (q.queue_type == QueueType::Local).then(|| {
            self.status
                .get(name)
                .cloned()
                .unwrap_or_else(|| QueueStatus {
                    name: name.to_string(),
                    ..QueueStatus::default()
                })
        })
    }

    fn handle_status(&self, name: &str) -> Vec<HandleStatus> {
        self.handles.get(name).cloned().unwrap_or_default()
    }

    fn channel(&self, name: &str) -> Option<ChannelDefinition> {
        self.channels.get(name).cloned()
    }

    fn channels(&self) -> Vec<ChannelDefinition> {
        self.channels.values().cloned().collect()
    }

    fn define_channel(&mut self, def: ChannelDefinition, replace: bool) -> Result<(), AdminError> {
        if let Some(existing) = self.channels.get(&def.name) {
            if !replace {
                return Err(AdminError::AlreadyExists { name: def.name });
            }
            if existing.channel_type != def.channel_type {
                return Err(AdminError::TypeMismatch { name: def.name });
            }
        }
        self.channels.insert(def.name.clone(), def);
        Ok(())
    }

    fn alter_channel(&mut self, def: ChannelDefinition) -> Result<(), AdminError> {
        match self.channels.get(&def.name) {
            None => return Err(not_found(&def.name)),
            Some(old) if old.channel_type != def.channel_type => {
                return Err(AdminError::TypeMismatch { name: def.name })
            }
            Some(_) => {}
        }
        self.channels.insert(def.name.clone(), def);
        Ok(())
    }

    fn delete_channel(&mut self, name: &str) -> Result<(), AdminError> {
        if self.channel_running(name) {
            return Err(AdminError::InUse { name: name.into() });
        }
        self.channel_status.remove(name);
        self.channels
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| not_found(name))
    }

    fn start_channel(&mut self, name: &str) -> Result<(), AdminError> {
        let Some(def) = self.channels.get(name) else {
            return Err(not_found(name));
        };
        if self.channel_running(name) {
            return Err(AdminError::InUse { name: name.into() });
        }
        let mut status =
            ChannelStatus::new(name, def.channel_type, true, def.attributes.listen_port());
        status.started_ms = Some(self.now_ms);
        self.channel_status.insert(name.to_string(), status);
        Ok(())
    }

    fn stop_channel(&mut self, name: &str, mode: StopMode) -> Result<(), AdminError> {
        let Some(s) = self.channel_status.get_mut(name).filter(|s| s.running) else {
            return Err(AdminError::Invalid(format!(
                "channel {name} is not running"
            )));
        };
        s.running = false;
        s.clients.clear();
        self.last_stop_mode = Some(mode);
        Ok(())
    }

    fn operate_channel(
        &mut self,
        name: &str,
        operation: ferry_objects::ChannelOperation,
    ) -> Result<(), AdminError> {
        self.channel_operations.push((name.to_string(), operation));
        match self.channel_operation_refusal.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn channel_status(&self, name: &NamePattern) -> Vec<ChannelStatus> {
        self.channel_status
            .values()
            .filter(|s| name.matches(&s.name))
            .cloned()
            .collect()
    }

    fn listener(&self, name: &str) -> Option<ListenerDefinition> {
        self.listeners.get(name).cloned()
    }

    fn listeners(&self) -> Vec<ListenerDefinition> {
        self.listeners.values().cloned().collect()
    }

    fn define_listener(
        &mut self,
        def: ListenerDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        if self.listeners.contains_key(&def.name) && !replace {
            return Err(AdminError::AlreadyExists { name: def.name });
        }
        if self.running.contains_key(&def.name) {
            return Err(AdminError::InUse { name: def.name });
        }
        self.listeners.insert(def.name.clone(), def);
        Ok(())
    }

    fn alter_listener(&mut self, def: ListenerDefinition) -> Result<(), AdminError> {
        if !self.listeners.contains_key(&def.name) {
            return Err(not_found(&def.name));
        }
        self.listeners.insert(def.name.clone(), def);
        Ok(())
    }

    fn delete_listener(&mut self, name: &str) -> Result<(), AdminError> {
        if !self.listeners.contains_key(name) {
            return Err(not_found(name));
        }
        if self.running.contains_key(name) {
            return Err(AdminError::InUse { name: name.into() });
        }
        self.listeners.remove(name);
        Ok(())
    }

    fn start_listener(&mut self, name: &str) -> Result<(), AdminError> {
        let Some(def) = self.listeners.get(name) else {
            return Err(not_found(name));
        };
        if self.running.contains_key(name) {
            return Err(AdminError::Invalid(format!(
                "listener {name} is already running"
            )));
        }
        let status = ListenerStatus {
            name: name.to_string(),
            running: true,
            port: def.effective_port(),
            ip_address: def.attributes.ip_address.clone(),
            started_ms: Some(self.now_ms),
        };
        self.running.insert(name.to_string(), status);
        Ok(())
    }

    fn stop_listener(&mut self, name: &str) -> Result<(), AdminError> {
        if !self.listeners.contains_key(name) {
            return Err(not_found(name));
        }
        self.running
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| AdminError::Invalid(format!("listener {name} is not running")))
    }

    fn listener_status(&self, name: &str) -> Option<ListenerStatus> {
        self.running.get(name).cloned()
    }

    fn qmgr(&self) -> QmgrAttributes {
        self.qmgr.clone()
    }

    fn alter_qmgr(&mut self, attrs: QmgrAttributes) -> Result<(), AdminError> {
        self.qmgr = attrs;
        Ok(())
    }

    fn connections(&self) -> Vec<ConnectionStatus> {
        self.connections.clone()
    }

    fn qmgr_status(&self) -> QmgrStatus {
        self.qmgr_status.clone()
    }
}
