//! The command server: runs MQSC commands against the running queue manager.
//!
//! `ferry mqsc` sends each command over the bindings socket; it is parsed and executed
//! here by `ferry-mqsc` against [`Target`], which hands definitions and status to the
//! engine, and listener and channel starts, stops and status to the protocols' endpoints
//! ([`super::endpoints`]): it imports no protocol.

use super::clock;
use super::reply_wait::ReplyWait;
use super::server::Server;
use ferry_mqsc::command::{Command, NamePattern, SecurityRefresh};
use ferry_mqsc::AdminTarget;
use ferry_objects::channel::{ChannelOperation, ChannelType};
use ferry_objects::status::{
    ChannelStatus, ConnectionStatus, HandleStatus, ListenerStatus, QmgrStatus, QueueStatus,
    RecoveryLogStatus,
};
use ferry_objects::{
    AdminError, ChannelDefinition, ListenerDefinition, QmgrAttributes, QueueDefinition, StopMode,
};
use ferry_wire::MqscOutput;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

/// The answer to one MQSC command.
pub(crate) enum Answer {
    /// Done: the output to send (once what `wait` names is durable).
    Now(MqscOutput),
    /// PING, RESET or RESOLVE CHANNEL: the output once the work is done. The work is a
    /// conversation with the partner queue manager or engine calls that wait for the
    /// recovery log, so it runs as a task on the queue manager's thread instead of
    /// blocking it; the caller spawns it and sends the output when it ends (RESOLVE's
    /// changes are durable by then).
    Later(Pin<Box<dyn Future<Output = MqscOutput>>>),
}

/// Parses and runs one MQSC command for `issuer` (`None`: the queue manager itself, or
/// a connection whose authorities are not checked), returning its output lines; what they
/// must wait for before they are sent (definitions saved, log records durable) is added
/// to `wait`. A command the issuer lacks the authority for is refused (FRY8135E) and
/// logged (FRY8077W).
pub(crate) fn run(
    server: &Rc<Server>,
    command: &str,
    issuer: Option<&ferry_security::oam::Principal>,
    wait: &mut ReplyWait,
) -> Answer {
    let user = issuer
        .map(|p| p.user.clone())
        .unwrap_or_else(|| server.administrators.process_user().to_string());
    let mut target = Target { server, wait, user };
    let result = match ferry_mqsc::parse_command(command) {
        Ok(cmd) => match issuer.and_then(|p| lacking(server, &cmd, p)) {
            Some(refused) => refused,
            None => match cmd {
                Command::OperateChannel { name, operation } => {
                    return operate_channel(&target, name, operation)
                }
                cmd => ferry_mqsc::execute(&cmd, &mut target),
            },
        },
        Err(e) => ferry_mqsc::CommandResult::syntax_error(&e),
    };
    Answer::Now(output(result))
}

fn output(result: ferry_mqsc::CommandResult) -> MqscOutput {
    MqscOutput {
        lines: result.lines,
        failed: !result.ok,
    }
}

/// PING, RESET or RESOLVE CHANNEL: checked as the executor checks it, then handed to the
/// protocol that serves the channel; the answer comes when its work ends.
fn operate_channel(target: &Target<'_>, name: String, operation: ChannelOperation) -> Answer {
    if let Err(refused) = ferry_mqsc::check_channel_operation(target, &name, operation) {
        return Answer::Now(output(refused));
    }
    let kind = match target.channel_type(&name) {
        Ok(kind) => kind,
        Err(e) => {
            return Answer::Now(output(ferry_mqsc::channel_operation_result(
                &name,
                operation,
                Err(e),
            )))
        }
    };
    let work = target
        .server
        .endpoints
        .operate_channel(&name, kind, operation);
    Answer::Later(Box::pin(async move {
        output(ferry_mqsc::channel_operation_result(
            &name,
            operation,
            work.await,
        ))
    }))
}

/// The refusal of `cmd` when `issuer` lacks an authority it needs.
fn lacking(
    server: &Server,
    cmd: &ferry_mqsc::command::Command,
    issuer: &ferry_security::oam::Principal,
) -> Option<ferry_mqsc::CommandResult> {
    if issuer.administrator {
        return None;
    }
    let engine = server.engine.borrow();
    let missing = ferry_mqsc::command_authority::needed(cmd, &server.name)
        .into_iter()
        .find(|n| {
            !engine
                .authority_of(n.object_type, &n.name, issuer)
                .contains(n.authority)
        })?;
    drop(engine);
    server.error_log.borrow_mut().write(
        &ferry_messages::NOT_AUTHORIZED_OBJECT,
        &[
            &issuer.user,
            &missing.name,
            &missing.object_type,
            &missing.authority,
        ],
    );
    Some(ferry_mqsc::CommandResult {
        ok: false,
        lines: vec![ferry_messages::NOT_AUTHORIZED_COMMAND.line()],
    })
}

/// The running queue manager seen through [`AdminTarget`].
struct Target<'a> {
    server: &'a Rc<Server>,
    /// What the output waits for: every engine call of the command adds to it.
    wait: &'a mut ReplyWait,
    /// Who issued the command (the queue manager's own user for AutoConfig scripts):
    /// DEFINE SUB's SUBUSER when it names none.
    user: String,
}

/// SELECTOR compiled as the queue manager compiles JMS and MQSUB selectors: 2459
/// MQRC_SELECTOR_SYNTAX_ERROR when it does not parse.
fn compile_selector(text: &str) -> Result<Option<Rc<dyn ferry_engine::MessageFilter>>, AdminError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    match crate::amqp_mapping::JmsSelection::parse(text) {
        Ok(Some(selection)) => Ok(Some(Rc::new(selection))),
        Ok(None) => Ok(None),
        Err(e) => Err(AdminError::Failed {
            reason: ferry_mqi::ReasonCode::SelectorSyntaxError,
            text: format!("SELECTOR('{text}') is not a valid selector: {e}"),
        }),
    }
}

impl Target<'_> {
    fn admin<T>(
        &mut self,
        f: impl FnOnce(
            &mut ferry_engine::QueueManager,
            ferry_engine::Timestamp,
            &mut ferry_engine::Effects,
        ) -> T,
    ) -> T {
        self.server.call(self.wait, f)
    }
}

impl Target<'_> {
    /// The type of channel `name`, which must be defined.
    fn channel_type(&self, name: &str) -> Result<ChannelType, AdminError> {
        self.server
            .engine
            .borrow()
            .channel(name)
            .map(|c| c.channel_type)
            .ok_or_else(|| AdminError::NotFound {
                name: name.to_string(),
            })
    }
}

impl AdminTarget for Target<'_> {
    fn refresh_security(&mut self, what: SecurityRefresh) -> Result<String, AdminError> {
        let mut done = Vec::new();
        if matches!(what, SecurityRefresh::AuthServ | SecurityRefresh::All) {
            self.server.administrators.refresh();
            self.server.principals.refresh(None);
            done.push("group memberships forgotten".to_string());
        }
        if matches!(what, SecurityRefresh::ConnAuth | SecurityRefresh::All) {
            done.push(super::connauth::refresh(self.server).map_err(|text| {
                AdminError::Failed {
                    reason: ferry_mqi::ReasonCode::SecurityError,
                    text,
                }
            })?);
        }
        if matches!(what, SecurityRefresh::Ssl | SecurityRefresh::All) {
            done.push(
                super::tls::refresh(self.server).map_err(|text| AdminError::Failed {
                    reason: ferry_mqi::ReasonCode::KeyRepositoryError,
                    text,
                })?,
            );
        }
        Ok(done.join("; "))
    }
    fn process(&self, name: &str) -> Option<ferry_objects::ProcessDefinition> {
        self.server.engine.borrow().process(name)
    }
    fn processes(&self) -> Vec<ferry_objects::ProcessDefinition> {
        self.server.engine.borrow().processes()
    }
    fn define_process(
        &mut self,
        def: ferry_objects::ProcessDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.define_process(def, replace, fx))
    }
    fn alter_process(&mut self, def: ferry_objects::ProcessDefinition) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_process(def, fx))
    }
    fn delete_process(&mut self, name: &str) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.delete_process(name, fx))
    }
    fn namelist(&self, name: &str) -> Option<ferry_objects::NamelistDefinition> {
        self.server.engine.borrow().namelist(name)
    }
    fn namelists(&self) -> Vec<ferry_objects::NamelistDefinition> {
        self.server.engine.borrow().namelists()
    }
    fn define_namelist(
        &mut self,
        def: ferry_objects::NamelistDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.define_namelist(def, replace, fx))
    }
    fn alter_namelist(&mut self, def: ferry_objects::NamelistDefinition) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_namelist(def, fx))
    }
    fn delete_namelist(&mut self, name: &str) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.delete_namelist(name, fx))
    }
    fn authinfo(&self, name: &str) -> Option<ferry_objects::AuthInfoDefinition> {
        self.server.engine.borrow().authinfo(name)
    }
    fn authinfos(&self) -> Vec<ferry_objects::AuthInfoDefinition> {
        self.server.engine.borrow().authinfos()
    }
    fn define_authinfo(
        &mut self,
        def: ferry_objects::AuthInfoDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.define_authinfo(def, replace, fx))
    }
    fn alter_authinfo(&mut self, def: ferry_objects::AuthInfoDefinition) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_authinfo(def, fx))
    }
    fn delete_authinfo(&mut self, name: &str) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.delete_authinfo(name, fx))
    }
    fn topic(&self, name: &str) -> Option<ferry_objects::TopicDefinition> {
        self.server.engine.borrow().topic(name)
    }
    fn topics(&self) -> Vec<ferry_objects::TopicDefinition> {
        self.server.engine.borrow().topics()
    }
    fn define_topic(
        &mut self,
        def: ferry_objects::TopicDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.define_topic(def, replace, fx))
    }
    fn alter_topic(&mut self, def: ferry_objects::TopicDefinition) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_topic(def, fx))
    }
    fn delete_topic(&mut self, name: &str) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.delete_topic(name, fx))
    }
    fn subscription(&self, name: &str) -> Option<ferry_objects::SubscriptionDefinition> {
        self.server.engine.borrow().subscription_definition(name)
    }
    fn subscriptions(&self) -> Vec<ferry_objects::SubscriptionDefinition> {
        self.server.engine.borrow().subscription_definitions()
    }
    fn define_subscription(
        &mut self,
        mut def: ferry_objects::SubscriptionDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        let selection = compile_selector(&def.attributes.selector)?;
        if def.attributes.sub_user.trim().is_empty() {
            def.attributes.sub_user = self.user.clone();
        }
        self.admin(|e, now, fx| e.define_subscription(def, replace, selection, now, fx))
            .map(|_| ())
    }
    fn alter_subscription(
        &mut self,
        def: ferry_objects::SubscriptionDefinition,
    ) -> Result<(), AdminError> {
        self.admin(|e, now, fx| e.alter_subscription(def, now, fx))
    }
    fn delete_subscription(&mut self, sub_id: &str) -> Result<(), AdminError> {
        let not_found = || AdminError::NotFound {
            name: sub_id.to_string(),
        };
        let id = ferry_engine::QueueManager::parse_subscription_id(sub_id).ok_or_else(not_found)?;
        self.admin(|e, now, fx| e.delete_subscription_by_id(&id, now, fx))
            .map_err(|err| match err.reason {
                ferry_mqi::ReasonCode::NoSubscription => not_found(),
                ferry_mqi::ReasonCode::SubscriptionInUse => AdminError::InUse {
                    name: sub_id.to_string(),
                },
                reason => AdminError::Failed {
                    reason,
                    text: "the subscription could not be deleted".into(),
                },
            })
    }
    fn subscription_statuses(&self) -> Vec<ferry_objects::status::SubscriptionStatusRecord> {
        self.server.engine.borrow().subscription_status_records()
    }
    fn topic_statuses(&self, pattern: &str) -> Vec<ferry_objects::status::TopicNodeStatus> {
        self.server.engine.borrow().topic_node_statuses(pattern)
    }
    fn publisher_statuses(&self, pattern: &str) -> Vec<ferry_objects::status::PublisherStatus> {
        self.server.engine.borrow().publisher_statuses(pattern)
    }
    fn pubsub_status(&self) -> ferry_objects::status::PubSubStatus {
        let engine = self.server.engine.borrow();
        ferry_objects::status::PubSubStatus {
            sub_count: engine.subscription_status_records().len() as u64,
            topic_count: engine.topic_nodes().len() as u64,
        }
    }
    fn clear_retained(&mut self, topic: &str) -> Result<bool, AdminError> {
        Ok(self.admin(|e, _, fx| e.clear_retained(topic, fx)))
    }
    fn chlauth(&self) -> ferry_security::chlauth::ChlauthRules {
        self.server.engine.borrow().chlauth().clone()
    }
    fn set_chlauth(
        &mut self,
        record: ferry_security::chlauth::ChlauthRecord,
        action: ferry_security::chlauth::SetAction,
    ) -> Result<(), AdminError> {
        self.admin(|e, now, fx| e.set_chlauth(record, action, now, fx))
    }
    fn authority_records(&self) -> ferry_security::oam::AuthorityRecords {
        self.server.engine.borrow().authority_records().clone()
    }
    fn set_authority_record(
        &mut self,
        key: ferry_security::oam::RecordKey,
        add: ferry_security::oam::Authorities,
        remove: ferry_security::oam::Authorities,
    ) -> Result<ferry_security::oam::Authorities, AdminError> {
        let (known, kind) = match key.entity_type {
            ferry_security::oam::EntityType::Principal => {
                (self.server.principals.user_exists(&key.entity), "user")
            }
            ferry_security::oam::EntityType::Group => {
                (self.server.principals.group_exists(&key.entity), "group")
            }
        };
        if !known {
            return Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::UnknownEntity,
                text: ferry_messages::UNKNOWN_ENTITY.format(&[&key.entity, &kind]),
            });
        }
        Ok(self.admin(|e, _, fx| e.set_authority_record(key, add, remove, fx)))
    }
    fn delete_authority_record(
        &mut self,
        key: ferry_security::oam::RecordKey,
    ) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.delete_authority_record(key, fx))
            .map_err(|_| AdminError::Failed {
                reason: ferry_mqi::ReasonCode::UnknownObjectName,
                text: String::new(),
            })
    }
    fn principal(&self, user: &str) -> ferry_security::oam::Principal {
        use ferry_engine::PrincipalDirectory;
        self.server.principals.principal(user)
    }
    fn authority_of(
        &self,
        object_type: ferry_security::oam::ProfileObjectType,
        name: &str,
        principal: &ferry_security::oam::Principal,
    ) -> ferry_security::oam::Authorities {
        self.server
            .engine
            .borrow()
            .authority_of(object_type, name, principal)
    }
    fn is_privileged(&self, user: &str) -> bool {
        self.server.administrators.is_administrator(user)
    }
    fn qmgr_name(&self) -> String {
        self.server.name.clone()
    }
    fn now_ms(&self) -> u64 {
        clock::now().0
    }
    fn queue(&self, name: &str) -> Option<QueueDefinition> {
        self.server.engine.borrow().queue(name)
    }
    fn queues(&self) -> Vec<QueueDefinition> {
        self.server.engine.borrow().queues()
    }
    fn define_queue(&mut self, def: QueueDefinition, replace: bool) -> Result<(), AdminError> {
        self.admin(|e, now, fx| e.define_queue(def, replace, now, fx))
    }
    fn alter_queue(&mut self, def: QueueDefinition, force: bool) -> Result<(), AdminError> {
        self.admin(|e, now, fx| e.alter_queue(def, force, now, fx))
    }
    fn delete_queue(&mut self, name: &str, purge: bool) -> Result<(), AdminError> {
        self.admin(|e, now, fx| e.delete_queue(name, purge, now, fx))
    }
    fn clear_queue(&mut self, name: &str) -> Result<u64, AdminError> {
        // With logging on this pushes a clear record; the reply waits for it.
        self.admin(|e, _, fx| e.clear_queue_logged(name, fx))
    }
    fn queue_status(&self, name: &str) -> Option<QueueStatus> {
        let mut s = self
            .server
            .engine
            .borrow()
            .queue_status(name, clock::now())?;
        if let Some(log) = self.server.log.as_ref() {
            s.queue_file_bytes = log.queue_file_bytes(&s.name);
        }
        Some(s)
    }
    fn handle_status(&self, name: &str) -> Vec<HandleStatus> {
        self.server.engine.borrow().handle_status(name)
    }
    fn channel(&self, name: &str) -> Option<ChannelDefinition> {
        self.server.engine.borrow().channel(name)
    }
    fn channels(&self) -> Vec<ChannelDefinition> {
        self.server.engine.borrow().channels()
    }
    fn define_channel(&mut self, def: ChannelDefinition, replace: bool) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.define_channel(def, replace, fx))
    }
    fn alter_channel(&mut self, def: ChannelDefinition) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_channel(def, fx))
    }
    fn delete_channel(&mut self, name: &str) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.delete_channel(name, fx))
    }
    fn start_channel(&mut self, name: &str) -> Result<(), AdminError> {
        let kind = self.channel_type(name)?;
        self.server.endpoints.start_channel(name, kind)
    }
    fn stop_channel(&mut self, name: &str, mode: StopMode) -> Result<(), AdminError> {
        let kind = self.channel_type(name)?;
        self.server.endpoints.stop_channel(name, kind, mode)
    }
    fn channel_status(&self, name: &NamePattern) -> Vec<ChannelStatus> {
        let mut statuses = self
            .server
            .endpoints
            .channel_status(&|n: &str| name.matches(n));
        // MONCHL decides whether NETTIME and XQTIME show (blank otherwise, as MQ).
        let engine = self.server.engine.borrow();
        let qmgr = engine.qmgr().monitoring_chl;
        for s in &mut statuses {
            let Some(m) = s.message.as_mut() else {
                continue;
            };
            let monitored = engine
                .channel(&s.name)
                .is_some_and(|def| def.attributes.monitoring.collects(qmgr));
            if !monitored {
                m.network_time_us = None;
                m.xmitq_time_us = None;
            }
        }
        statuses
    }
    fn listener(&self, name: &str) -> Option<ListenerDefinition> {
        self.server.engine.borrow().listener(name)
    }
    fn listeners(&self) -> Vec<ListenerDefinition> {
        self.server.engine.borrow().listeners()
    }
    fn define_listener(
        &mut self,
        def: ListenerDefinition,
        replace: bool,
    ) -> Result<(), AdminError> {
        if replace && self.server.endpoints.listeners().is_running(&def.name) {
            return Err(AdminError::InUse { name: def.name });
        }
        self.admin(|e, _, fx| e.define_listener(def, replace, fx))
    }
    fn alter_listener(&mut self, def: ListenerDefinition) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_listener(def, fx))
    }
    fn delete_listener(&mut self, name: &str) -> Result<(), AdminError> {
        if self.server.endpoints.listeners().is_running(name) {
            return Err(AdminError::InUse {
                name: name.to_string(),
            });
        }
        self.admin(|e, _, fx| e.delete_listener(name, fx))
    }
    fn start_listener(&mut self, name: &str) -> Result<(), AdminError> {
        self.server.endpoints.listeners().start(name)
    }
    fn stop_listener(&mut self, name: &str) -> Result<(), AdminError> {
        self.server.endpoints.listeners().stop(name)
    }
    fn listener_status(&self, name: &str) -> Option<ListenerStatus> {
        self.server.endpoints.listeners().status(name)
    }
    fn cluster_qmgrs(&self) -> Vec<ferry_objects::status::ClusterQmgrStatus> {
        crate::runtime::message_channel::cluster_qmgrs(self.server)
    }
    fn cluster_queues(&self) -> Vec<ferry_objects::status::ClusterQueueStatus> {
        crate::runtime::message_channel::cluster_queues(self.server)
    }
    fn refresh_cluster(&mut self, cluster: &str) -> Result<(), AdminError> {
        self.server.engine.borrow_mut().cluster_refresh(cluster)
    }
    fn reset_statistics(&mut self) -> Result<(), AdminError> {
        self.server.statistics_reset.set(true);
        Ok(())
    }
    fn reset_cluster(&mut self, cluster: &str, qmgr: &str) -> Result<(), AdminError> {
        self.server
            .engine
            .borrow_mut()
            .cluster_force_remove(cluster, qmgr)
    }
    fn suspend_cluster(&mut self, cluster: &str, suspend: bool) -> Result<(), AdminError> {
        let now = crate::runtime::clock::now().0;
        let changed = self
            .server
            .engine
            .borrow_mut()
            .cluster_suspend(cluster, suspend, now);
        changed.map(|_| ()).ok_or_else(|| {
            AdminError::Invalid(format!(
                "this queue manager has no cluster-receiver channel in cluster {cluster}"
            ))
        })
    }
    fn qmgr(&self) -> QmgrAttributes {
        self.server.engine.borrow().qmgr()
    }
    fn alter_qmgr(&mut self, attrs: QmgrAttributes) -> Result<(), AdminError> {
        self.admin(|e, _, fx| e.alter_qmgr(attrs, fx))
    }
    fn connections(&self) -> Vec<ConnectionStatus> {
        self.server.engine.borrow().connections()
    }
    fn qmgr_status(&self) -> QmgrStatus {
        let stanza = &self.server.ini.log;
        QmgrStatus {
            connections: self.server.conversations.get(),
            started_ms: self.server.started_ms,
            log: self.server.log.as_ref().map(|log| {
                let s = log.summary();
                RecoveryLogStatus {
                    log_type: stanza.log_type.to_uppercase(),
                    path: stanza.path.clone(),
                    in_use_percent: s.in_use_percent(),
                    current_extent: s.current_extent,
                    restart_extent: s.restart_extent,
                    checkpoint_lsn: s.checkpoint_lsn,
                    restart_lsn: s.restart_lsn,
                    durable_lsn: s.durable_lsn,
                    bytes_written: s.bytes_written,
                    records: s.records,
                    flushes: s.flushes,
                    checkpoints: s.checkpoints,
                    slow_writes: s.slow_writes,
                    last_slow_write: s.last_slow_write.unwrap_or_default(),
                }
            }),
        }
    }
}
