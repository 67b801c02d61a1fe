//! Runs a parsed [`Command`] against an [`AdminTarget`] and words the answer.
//!
//! DEFINE builds the whole definition here, as MQ does: from LIKE(name) or from the
//! target's SYSTEM.DEFAULT.* object of that type (falling back to the table defaults),
//! then the named attributes, then CRDATE/CRTIME and ALTDATE/ALTTIME from
//! `target.now_ms()`. REPLACE resets unnamed attributes from that base (keeping the
//! original creation date). ALTER starts from the object as it is and changes only what
//! the command names. The target stores, enforces in-use rules and reports status.

use crate::command::{
    Command, ConnType, Filter, FilterValue, NamePattern, Op, QueueStatusType, Selection, Setting,
};
use crate::display::{
    attr_field, date_time, render_block, ConnHandle, Field, FieldValue, CHSTATUS_CLIENT_FIELDS,
    CHSTATUS_FIELDS, CHSTATUS_MESSAGE_FIELDS, CHSTATUS_SVRCONN_FIELDS, CONN_FIELDS,
    CONN_HANDLE_FIELDS, LSSTATUS_FIELDS, QMSTATUS_FIELDS, QSTATUS_HANDLE_FIELDS,
    QSTATUS_QUEUE_FIELDS, QUEUE_LIVE_FIELDS,
};
use crate::error::ParseError;
use crate::plain_object;
use crate::target::AdminTarget;
use ferry_messages::{self as messages, Message};
use ferry_objects::channel::{ChannelOperation, ChannelType, StopMode};
use ferry_objects::queue::{DefinitionType, QueueType};
use ferry_objects::{
    AdminError, AttrError, AttributeSet, ChannelAttributes, ChannelDefinition, ListenerAttributes,
    ListenerDefinition, QmgrAttributes, QueueAttributes, QueueDefinition,
};
use std::cmp::Ordering;

/// What a command printed and whether it was processed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandResult {
    /// True when the command did what it asked.
    pub ok: bool,
    /// The response lines, in MQ's layout.
    pub lines: Vec<String>,
}

impl CommandResult {
    fn done(id: &'static Message) -> Self {
        CommandResult {
            ok: true,
            lines: vec![id.line()],
        }
    }

    pub(crate) fn failed(id: &'static Message, args: &[&str]) -> Self {
        let inserts: Vec<&dyn std::fmt::Display> =
            args.iter().map(|a| a as &dyn std::fmt::Display).collect();
        CommandResult {
            ok: false,
            lines: vec![id.format(&inserts)],
        }
    }

    /// The response to a syntax error: FRY8405I, the command segment, the reason.
    pub fn syntax_error(err: &ParseError) -> Self {
        CommandResult {
            ok: false,
            lines: vec![
                messages::SYNTAX_ERROR.line(),
                err.segment().to_string(),
                messages::SYNTAX_DETAIL.format(&[&err.kind.to_string()]),
            ],
        }
    }
}

/// The object DEFINE of a queue type starts from, as in MQ.
pub fn default_queue_name(qt: QueueType) -> &'static str {
    match qt {
        QueueType::Local => "SYSTEM.DEFAULT.LOCAL.QUEUE",
        QueueType::Model => "SYSTEM.DEFAULT.MODEL.QUEUE",
        QueueType::Alias => "SYSTEM.DEFAULT.ALIAS.QUEUE",
        QueueType::Remote => "SYSTEM.DEFAULT.REMOTE.QUEUE",
    }
}

/// The object DEFINE CHANNEL of a type starts from.
pub fn default_channel_name(ct: ChannelType) -> &'static str {
    match ct {
        ChannelType::Svrconn => "SYSTEM.DEF.SVRCONN",
        ChannelType::Amqp => "SYSTEM.DEF.AMQP",
        ChannelType::Sender => "SYSTEM.DEF.SENDER",
        ChannelType::Receiver => "SYSTEM.DEF.RECEIVER",
        ChannelType::Server => "SYSTEM.DEF.SERVER",
        ChannelType::Requester => "SYSTEM.DEF.REQUESTER",
        ChannelType::ClusterSender => "SYSTEM.DEF.CLUSSDR",
        ChannelType::ClusterReceiver => "SYSTEM.DEF.CLUSRCVR",
    }
}

/// The object DEFINE LISTENER starts from.
pub const DEFAULT_LISTENER: &str = "SYSTEM.DEFAULT.LISTENER.TCP";

/// Runs one command.
pub fn execute(cmd: &Command, target: &mut dyn AdminTarget) -> CommandResult {
    match cmd {
        Command::DefineQueue {
            queue_type,
            name,
            like,
            replace,
            settings,
        } => define_queue(
            target,
            *queue_type,
            name,
            like.as_deref(),
            *replace,
            settings,
        ),
        Command::AlterQueue {
            queue_type,
            name,
            force,
            settings,
        } => alter_queue(target, *queue_type, name, *force, settings),
        Command::DeleteQueue {
            queue_type,
            name,
            purge,
        } => match target.queue(name).filter(|q| q.queue_type == *queue_type) {
            None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
            Some(_) => outcome(
                target.delete_queue(name, *purge),
                &messages::QUEUE_DELETED,
                false,
            ),
        },
        Command::ClearQueue { name } => {
            match target
                .queue(name)
                .filter(|q| q.queue_type == QueueType::Local)
            {
                None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
                Some(_) => match target.clear_queue(name) {
                    Ok(_) => CommandResult::done(&messages::QUEUE_CLEARED),
                    Err(e) => admin_failure(e, false),
                },
            }
        }
        Command::DisplayQueue {
            queue_type,
            type_filter,
            selection,
        } => display_queue(target, *queue_type, *type_filter, selection),
        Command::DisplayQueueStatus {
            status_type,
            selection,
        } => display_qstatus(target, *status_type, selection),
        Command::DefineChannel {
            channel_type,
            name,
            like,
            replace,
            settings,
        } => define_channel(
            target,
            *channel_type,
            name,
            like.as_deref(),
            *replace,
            settings,
        ),
        Command::AlterChannel {
            channel_type,
            name,
            settings,
        } => match target
            .channel(name)
            .filter(|c| channel_type.is_none_or(|t| t == c.channel_type))
        {
            None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
            Some(mut def) => {
                if let Some(refused) = not_for_type(def.channel_type, settings) {
                    return refused;
                }
                apply(&mut def.attributes, settings);
                let (d, t) = date_time(target.now_ms());
                def.attributes.alteration_date = d;
                def.attributes.alteration_time = t;
                outcome(target.alter_channel(def), &messages::CHANNEL_CHANGED, false)
            }
        },
        Command::DeleteChannel { name } => match target.channel(name) {
            None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
            Some(_) => outcome(
                target.delete_channel(name),
                &messages::CHANNEL_DELETED,
                false,
            ),
        },
        Command::DisplayChannel {
            channel_type,
            selection,
        } => {
            let blocks = target
                .channels()
                .into_iter()
                .filter(|c| selection.name.matches(&c.name))
                .filter(|c| channel_type.is_none_or(|t| t == c.channel_type))
                .map(|c| {
                    let mut fields = vec![
                        Field::new("CHANNEL", FieldValue::Text(c.name.clone())),
                        Field::new("CHLTYPE", FieldValue::Keyword(c.channel_type.keyword())),
                    ];
                    fields.extend(table_fields(&c.attributes, c.channel_type.mask()));
                    fields
                })
                .collect();
            display(
                blocks,
                selection,
                &["CHANNEL", "CHLTYPE"],
                &messages::DISPLAY_CHANNEL,
            )
        }
        Command::StartChannel { name } => start_channel(target, name),
        Command::StopChannel { name, mode } => stop_channel(target, name, *mode),
        Command::OperateChannel { name, operation } => {
            match check_channel_operation(&*target, name, *operation) {
                Err(refused) => refused,
                Ok(()) => channel_operation_result(
                    name,
                    *operation,
                    target.operate_channel(name, *operation),
                ),
            }
        }
        Command::DisplayChannelStatus {
            channel_type,
            client_id,
            selection,
        } => display_chstatus(target, *channel_type, client_id.as_ref(), selection),
        Command::DefineListener {
            name,
            like,
            replace,
            settings,
        } => define_listener(target, name, like.as_deref(), *replace, settings),
        Command::AlterListener { name, settings } => match target.listener(name) {
            None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
            Some(mut def) => {
                apply(&mut def.attributes, settings);
                let (d, t) = date_time(target.now_ms());
                def.attributes.alteration_date = d;
                def.attributes.alteration_time = t;
                outcome(
                    target.alter_listener(def),
                    &messages::LISTENER_CHANGED,
                    false,
                )
            }
        },
        Command::DeleteListener { name } => match target.listener(name) {
            None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
            Some(_) => outcome(
                target.delete_listener(name),
                &messages::LISTENER_DELETED,
                false,
            ),
        },
        Command::DisplayListener { selection } => {
            let blocks = target
                .listeners()
                .into_iter()
                .filter(|l| selection.name.matches(&l.name))
                .map(|l| {
                    let mut fields = vec![Field::new("LISTENER", FieldValue::Text(l.name.clone()))];
                    fields.extend(table_fields(&l.attributes, u32::MAX));
                    fields
                })
                .collect();
            display(
                blocks,
                selection,
                &["LISTENER"],
                &messages::DISPLAY_LISTENER,
            )
        }
        Command::StartListener { name } => match target.listener(name) {
            None => CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]),
            Some(_) => outcome(
                target.start_listener(name),
                &messages::START_LISTENER_ACCEPTED,
                false,
            ),
        },
        Command::StopListener { name } => {
            if target.listener(name).is_none() {
                return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
            }
            if !target.listener_status(name).is_some_and(|s| s.running) {
                return CommandResult::failed(&messages::LISTENER_NOT_ACTIVE, &[name]);
            }
            outcome(
                target.stop_listener(name),
                &messages::STOP_LISTENER_ACCEPTED,
                false,
            )
        }
        Command::DisplayListenerStatus { selection } => display_lsstatus(target, selection),
        Command::DisplayClusterQmgr { selection, cluster } => {
            display_clusqmgr(target, selection, cluster.as_deref())
        }
        Command::DisplayQueueCluster { selection } => display_qcluster(target, selection),
        Command::RefreshCluster { cluster } => outcome(
            target.refresh_cluster(cluster),
            &messages::CLUSTER_REFRESHED,
            false,
        ),
        Command::ResetQmgrStatistics => outcome(
            target.reset_statistics(),
            &messages::STATISTICS_RESET,
            false,
        ),
        Command::ResetCluster { cluster, qmgr } => outcome(
            target.reset_cluster(cluster, qmgr),
            &messages::CLUSTER_RESET,
            false,
        ),
        Command::SuspendQmgr {
            cluster,
            namelist,
            suspend,
        } => {
            let clusters = if *namelist {
                match target.namelist(cluster) {
                    Some(nl) => nl.attributes.names,
                    None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[cluster]),
                }
            } else {
                vec![cluster.clone()]
            };
            let result = clusters
                .iter()
                .try_for_each(|c| target.suspend_cluster(c, *suspend));
            outcome(
                result,
                if *suspend {
                    &messages::CLUSTER_SUSPENDED
                } else {
                    &messages::CLUSTER_RESUMED
                },
                false,
            )
        }
        Command::AlterQmgr { settings, .. } => {
            let mut attrs = target.qmgr();
            apply(&mut attrs, settings);
            let (d, t) = date_time(target.now_ms());
            attrs.alteration_date = d;
            attrs.alteration_time = t;
            outcome(target.alter_qmgr(attrs), &messages::QMGR_CHANGED, false)
        }
        Command::DisplayQmgrStatus { request } => {
            let status = target.qmgr_status();
            let mut fields = vec![Field::new("QMNAME", FieldValue::Text(target.qmgr_name()))];
            fields.extend(QMSTATUS_FIELDS.iter().map(|f| f.field(&status)));
            let shown: Vec<Field> = fields
                .into_iter()
                .filter(|f| f.keyword == "QMNAME" || request.wants(f.keyword))
                .collect();
            CommandResult {
                ok: true,
                lines: render_block(&messages::DISPLAY_QMGR_STATUS, &shown),
            }
        }
        Command::DisplayQmgr { request } => {
            let attrs = target.qmgr();
            let mut fields = vec![Field::new("QMNAME", FieldValue::Text(target.qmgr_name()))];
            fields.extend(table_fields::<QmgrAttributes>(&attrs, u32::MAX));
            let shown: Vec<Field> = fields
                .into_iter()
                .filter(|f| f.keyword == "QMNAME" || request.wants(f.keyword))
                .collect();
            CommandResult {
                ok: true,
                lines: render_block(&messages::DISPLAY_QMGR, &shown),
            }
        }
        Command::DisplayConnection {
            conn_type,
            selection,
        } => display_conn(target, *conn_type, selection),
        Command::Unsupported { what } => CommandResult::failed(&messages::NOT_SUPPORTED, &[what]),
        Command::PingQmgr => CommandResult::done(&messages::PING_COMPLETE),
        Command::DefineAuthInfo {
            auth_type,
            name,
            like,
            replace,
            settings,
        } => crate::authinfo::define(
            target,
            *auth_type,
            name,
            like.as_deref(),
            *replace,
            settings,
        ),
        Command::AlterAuthInfo {
            auth_type,
            name,
            settings,
        } => crate::authinfo::alter(target, *auth_type, name, settings),
        Command::DeleteAuthInfo { name } => crate::authinfo::delete(target, name),
        Command::DefineProcess {
            name,
            like,
            replace,
            settings,
        } => plain_object::define::<ferry_objects::ProcessDefinition>(
            target,
            name,
            like.as_deref(),
            *replace,
            settings,
        ),
        Command::AlterProcess { name, settings } => {
            plain_object::alter::<ferry_objects::ProcessDefinition>(target, name, settings)
        }
        Command::DeleteProcess { name } => {
            plain_object::delete::<ferry_objects::ProcessDefinition>(target, name)
        }
        Command::DisplayProcess { selection } => crate::process::display(target, selection),
        Command::DefineNamelist {
            name,
            like,
            replace,
            settings,
        } => plain_object::define::<ferry_objects::NamelistDefinition>(
            target,
            name,
            like.as_deref(),
            *replace,
            settings,
        ),
        Command::AlterNamelist { name, settings } => {
            plain_object::alter::<ferry_objects::NamelistDefinition>(target, name, settings)
        }
        Command::DeleteNamelist { name } => {
            plain_object::delete::<ferry_objects::NamelistDefinition>(target, name)
        }
        Command::DisplayNamelist { selection } => crate::namelist::display(target, selection),
        Command::DisplayAuthInfo {
            auth_type,
            selection,
        } => crate::authinfo::display(target, *auth_type, selection),
        Command::DefineTopic {
            name,
            like,
            replace,
            settings,
        } => plain_object::define::<ferry_objects::TopicDefinition>(
            target,
            name,
            like.as_deref(),
            *replace,
            settings,
        ),
        Command::AlterTopic { name, settings } => {
            plain_object::alter::<ferry_objects::TopicDefinition>(target, name, settings)
        }
        Command::DeleteTopic { name } => {
            plain_object::delete::<ferry_objects::TopicDefinition>(target, name)
        }
        Command::DisplayTopic { selection } => crate::topic::display(target, selection),
        Command::DefineSubscription {
            name,
            like,
            replace,
            settings,
        } => crate::subscription::define(target, name, like.as_deref(), *replace, settings),
        Command::AlterSubscription { sub, settings } => {
            crate::subscription::alter(target, sub, settings)
        }
        Command::DeleteSubscription { sub } => crate::subscription::delete(target, sub),
        Command::DisplaySubscription { selection, filter } => {
            crate::subscription::display(target, selection, filter)
        }
        Command::DisplaySubscriptionStatus { selection, filter } => {
            crate::subscription::display_status(target, selection, filter)
        }
        Command::DisplayTopicStatus {
            topic,
            status_type,
            selection,
        } => crate::subscription::display_topic_status(target, topic, *status_type, selection),
        Command::DisplayPubSub { request } => crate::subscription::display_pubsub(target, request),
        Command::ClearTopicString { topic } => {
            crate::subscription::clear_topic_string(target, topic)
        }
        Command::RefreshSecurity(what) => match target.refresh_security(*what) {
            Ok(what) => CommandResult {
                ok: true,
                lines: vec![messages::SECURITY_REFRESHED.format(&[&what])],
            },
            Err(e) => admin_failure(e, false),
        },
        Command::SetChlauth { record, action } => crate::chlauth::set(target, record, *action),
        Command::SetAuthRec { key, add, remove } => crate::authrec::set(target, key, add, remove),
        Command::DeleteAuthRec { key } => crate::authrec::delete(target, key),
        Command::DisplayAuthRec {
            profile,
            object_type,
            entity,
            matching,
        } => crate::authrec::display(
            target,
            profile.as_deref(),
            *object_type,
            entity.as_ref(),
            *matching,
        ),
        Command::DisplayEntAuth {
            entity,
            object_name,
            object_type,
        } => crate::authrec::display_entity(target, entity, object_name, *object_type),
        Command::DisplayChlauth {
            profile,
            kind,
            matching,
            query,
            all,
            fields,
        } => crate::chlauth::display(target, profile, *kind, *matching, query, *all, fields),
        Command::End => CommandResult {
            ok: true,
            lines: Vec::new(),
        },
    }
}

/// Sets each named attribute (values were checked by the parser against the same table).
pub(crate) fn apply<D: AttributeSet>(attrs: &mut D, settings: &[Setting]) {
    for s in settings {
        if let Some((row, _)) = D::lookup(s.keyword) {
            (row.set)(attrs, s.value.clone());
        }
    }
}

pub(crate) fn outcome(
    result: Result<(), AdminError>,
    done: &'static Message,
    define: bool,
) -> CommandResult {
    match result {
        Ok(()) => CommandResult::done(done),
        Err(e) => admin_failure(e, define),
    }
}

/// The FRY message for a refused operation.
pub fn admin_failure(err: AdminError, define: bool) -> CommandResult {
    match err {
        AdminError::NotFound { name } => {
            CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&name])
        }
        AdminError::AlreadyExists { name } => {
            CommandResult::failed(&messages::OBJECT_EXISTS, &[&name])
        }
        AdminError::TypeMismatch { name } if define => {
            CommandResult::failed(&messages::OBJECT_EXISTS, &[&name])
        }
        AdminError::TypeMismatch { name } => {
            CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&name])
        }
        AdminError::InUse { name } => CommandResult::failed(&messages::OBJECT_IN_USE, &[&name]),
        AdminError::NotEmpty { name } => {
            CommandResult::failed(&messages::QUEUE_NOT_EMPTY, &[&name])
        }
        AdminError::Invalid(text) => CommandResult::failed(&messages::REQUEST_REFUSED, &[&text]),
        AdminError::Failed { reason, text } => {
            CommandResult::failed(&messages::GENERAL_ERROR, &[&reason.to_string(), &text])
        }
    }
}

fn define_queue(
    target: &mut dyn AdminTarget,
    qt: QueueType,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    let existing = target.queue(name);
    if let Some(e) = &existing {
        if !replace || e.queue_type != qt {
            return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
        }
    }
    let base = match like {
        Some(l) => match target.queue(l).filter(|q| q.queue_type == qt) {
            Some(q) => q.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .queue(default_queue_name(qt))
            .filter(|q| q.queue_type == qt)
            .map(|q| q.attributes)
            .unwrap_or_else(|| QueueDefinition::new(name, qt).attributes),
    };
    let mut def = QueueDefinition {
        name: name.to_string(),
        queue_type: qt,
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    if qt != QueueType::Model {
        def.attributes.definition_type = DefinitionType::Predefined;
    }
    let (d, t) = date_time(target.now_ms());
    let a = &mut def.attributes;
    match existing.filter(|e| !e.attributes.creation_date.is_empty()) {
        Some(e) => {
            a.creation_date = e.attributes.creation_date;
            a.creation_time = e.attributes.creation_time;
        }
        None => {
            a.creation_date = d.clone();
            a.creation_time = t.clone();
        }
    }
    a.alteration_date = d;
    a.alteration_time = t;
    outcome(
        target.define_queue(def, replace),
        &messages::QUEUE_CREATED,
        true,
    )
}

fn alter_queue(
    target: &mut dyn AdminTarget,
    qt: QueueType,
    name: &str,
    force: bool,
    settings: &[Setting],
) -> CommandResult {
    let Some(mut def) = target.queue(name).filter(|q| q.queue_type == qt) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    apply(&mut def.attributes, settings);
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
    outcome(
        target.alter_queue(def, force),
        &messages::QUEUE_CHANGED,
        false,
    )
}

fn define_channel(
    target: &mut dyn AdminTarget,
    ct: ChannelType,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.channel(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base: ChannelAttributes = match like {
        Some(l) => match target.channel(l).filter(|c| c.channel_type == ct) {
            Some(c) => c.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .channel(default_channel_name(ct))
            .filter(|c| c.channel_type == ct)
            .map(|c| c.attributes)
            .unwrap_or_else(|| ChannelDefinition::new(name, ct).attributes),
    };
    let mut def = ChannelDefinition {
        name: name.to_string(),
        channel_type: ct,
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
    outcome(
        target.define_channel(def, replace),
        &messages::CHANNEL_CREATED,
        true,
    )
}

/// ALTER CHANNEL without CHLTYPE: the parser accepted every channel attribute, so refuse
/// those the channel's type does not take, with the parser's wording.
fn not_for_type(ct: ChannelType, settings: &[Setting]) -> Option<CommandResult> {
    let row = settings.iter().find_map(|s| {
        ChannelAttributes::lookup(s.keyword).filter(|(row, _)| !row.applies_to(ct.mask()))
    })?;
    let refusal = AttrError::NotApplicable {
        keyword: row.0.keyword,
        object: ct.object(),
    };
    Some(CommandResult::failed(
        &messages::SYNTAX_DETAIL,
        &[&refusal.to_string()],
    ))
}

/// START CHANNEL: only types that start by command.
fn start_channel(target: &mut dyn AdminTarget, name: &str) -> CommandResult {
    let Some(def) = target.channel(name) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    if !def.channel_type.can_start() {
        return CommandResult::failed(
            &messages::CHANNEL_NOT_STARTABLE,
            &[name, def.channel_type.keyword()],
        );
    }
    outcome(
        target.start_channel(name),
        &messages::START_CHANNEL_ACCEPTED,
        false,
    )
}

/// STOP CHANNEL: only a running channel of a type that starts by command.
fn stop_channel(target: &mut dyn AdminTarget, name: &str, mode: StopMode) -> CommandResult {
    let Some(def) = target.channel(name) else {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]);
    };
    if !def.channel_type.can_start() {
        return CommandResult::failed(
            &messages::CHANNEL_NOT_STARTABLE,
            &[name, def.channel_type.keyword()],
        );
    }
    let running = target
        .channel_status(&NamePattern::Exact(name.to_string()))
        .iter()
        .any(|s| s.name == name && s.running);
    if !running {
        return CommandResult::failed(&messages::CHANNEL_NOT_ACTIVE, &[name]);
    }
    outcome(
        target.stop_channel(name, mode),
        &messages::STOP_CHANNEL_ACCEPTED,
        false,
    )
}

/// PING, RESET and RESOLVE CHANNEL: what is checked before the work starts. The channel
/// must exist and be a sending channel (SDR, or SVR): only the sending end pings, keeps
/// the in-doubt batch and tells the partner a new sequence number. A target that answers
/// later (the queue manager's command server) calls this, runs the operation, and
/// answers with [`channel_operation_result`].
pub fn check_channel_operation(
    target: &dyn AdminTarget,
    name: &str,
    operation: ChannelOperation,
) -> Result<(), CommandResult> {
    let Some(def) = target.channel(name) else {
        return Err(CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[name]));
    };
    if !def.channel_type.sends_messages() {
        let why = format!(
            "{} CHANNEL applies to sending channels (SDR, SVR), and {name} is a {} channel",
            operation.verb(),
            def.channel_type.keyword()
        );
        return Err(channel_operation_result(
            name,
            operation,
            Err(AdminError::Invalid(why)),
        ));
    }
    if operation.verb() == "PING"
        && def.channel_type == ChannelType::Server
        && def.attributes.connection_name.trim().is_empty()
    {
        let why = format!("server channel {name} has no CONNAME, so it cannot call its partner");
        return Err(channel_operation_result(
            name,
            operation,
            Err(AdminError::Invalid(why)),
        ));
    }
    Ok(())
}

/// The answer to PING, RESET or RESOLVE CHANNEL once its work is done: MQ's success
/// message, or the operation's failure with the reason.
pub fn channel_operation_result(
    name: &str,
    operation: ChannelOperation,
    result: Result<(), AdminError>,
) -> CommandResult {
    let (done, refused) = match operation {
        ChannelOperation::Ping { .. } => (
            &messages::PING_CHANNEL_COMPLETE,
            &messages::CHANNEL_PING_FAILED,
        ),
        ChannelOperation::Reset { .. } => {
            (&messages::CHANNEL_RESET, &messages::CHANNEL_RESET_REFUSED)
        }
        ChannelOperation::Resolve { .. } => (
            &messages::CHANNEL_RESOLVED,
            &messages::CHANNEL_RESOLVE_REFUSED,
        ),
    };
    match result {
        Ok(()) => CommandResult::done(done),
        Err(AdminError::NotFound { name }) => {
            CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&name])
        }
        Err(AdminError::InUse { .. }) => {
            CommandResult::failed(refused, &[name, "the channel is running; stop it first"])
        }
        Err(AdminError::Invalid(text) | AdminError::Failed { text, .. }) => {
            CommandResult::failed(refused, &[name, &text])
        }
        Err(other) => CommandResult::failed(refused, &[name, &other.to_string()]),
    }
}

/// DISPLAY CHSTATUS: one summary per started channel, or with CLIENTID one record per
/// matching client; none at all is FRY8420I.
fn display_chstatus(
    target: &dyn AdminTarget,
    channel_type: Option<ChannelType>,
    client_id: Option<&NamePattern>,
    selection: &Selection,
) -> CommandResult {
    let mut blocks = Vec::new();
    for s in target
        .channel_status(&selection.name)
        .into_iter()
        .filter(|s| selection.name.matches(&s.name))
        .filter(|s| channel_type.is_none_or(|t| t == s.channel_type))
    {
        let head = || {
            vec![
                Field::new("CHANNEL", FieldValue::Text(s.name.clone())),
                Field::new("CHLTYPE", FieldValue::Keyword(s.channel_type.keyword())),
            ]
        };
        match client_id {
            // A SVRCONN channel: one record per instance (client socket), as MQ shows
            // server-connection channels.
            None if s.channel_type == ChannelType::Svrconn => {
                for i in &s.instances {
                    let mut fields = head();
                    fields.extend(CHSTATUS_SVRCONN_FIELDS.iter().map(|f| f.field(i)));
                    blocks.push(fields);
                }
            }
            None => match &s.message {
                Some(m) => {
                    let mut fields = head();
                    fields.extend(CHSTATUS_MESSAGE_FIELDS.iter().map(|f| f.field(m)));
                    blocks.push(fields);
                }
                None => {
                    let mut fields = head();
                    fields.extend(CHSTATUS_FIELDS.iter().map(|f| f.field(&s)));
                    blocks.push(fields);
                }
            },
            Some(pattern) => {
                for c in s.clients.iter().filter(|c| pattern.matches(&c.client_id)) {
                    let mut fields = head();
                    fields.extend(CHSTATUS_CLIENT_FIELDS.iter().map(|f| f.field(c)));
                    blocks.push(fields);
                }
            }
        }
    }
    if blocks.is_empty() {
        return CommandResult::failed(&messages::STATUS_NOT_FOUND, &["Channel"]);
    }
    // SVRCONN instances show their address, as MQ's do; AMQP client records only when
    // asked (their summaries have none).
    let always: &[&str] = if client_id.is_none() {
        &["CHANNEL", "CHLTYPE", "CLIENTID", "CONNAME", "STATUS"]
    } else {
        &["CHANNEL", "CHLTYPE", "CLIENTID", "STATUS"]
    };
    display(blocks, selection, always, &messages::DISPLAY_CHANNEL_STATUS)
}

fn define_listener(
    target: &mut dyn AdminTarget,
    name: &str,
    like: Option<&str>,
    replace: bool,
    settings: &[Setting],
) -> CommandResult {
    if target.listener(name).is_some() && !replace {
        return CommandResult::failed(&messages::OBJECT_EXISTS, &[name]);
    }
    let base: ListenerAttributes = match like {
        Some(l) => match target.listener(l) {
            Some(x) => x.attributes,
            None => return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[l]),
        },
        None => target
            .listener(DEFAULT_LISTENER)
            .map(|x| x.attributes)
            .unwrap_or_default(),
    };
    let mut def = ListenerDefinition {
        name: name.to_string(),
        attributes: base,
    };
    apply(&mut def.attributes, settings);
    let (d, t) = date_time(target.now_ms());
    def.attributes.alteration_date = d;
    def.attributes.alteration_time = t;
    outcome(
        target.define_listener(def, replace),
        &messages::LISTENER_CREATED,
        true,
    )
}

/// Every table attribute of `attrs` that applies to subtype `mask`, in table order.
pub(crate) fn table_fields<D: AttributeSet>(attrs: &D, mask: u32) -> Vec<Field> {
    D::table()
        .iter()
        .filter(|row| row.applies_to(mask))
        .map(|row| attr_field(row.keyword, row.kind, (row.get)(attrs)))
        .collect()
}

fn queue_fields(q: &QueueDefinition, target: &dyn AdminTarget) -> Vec<Field> {
    let mut fields = vec![
        Field::new("QUEUE", FieldValue::Text(q.name.clone())),
        Field::new("TYPE", FieldValue::Keyword(q.queue_type.keyword())),
    ];
    if q.queue_type == QueueType::Local {
        let status = target.queue_status(&q.name).unwrap_or_default();
        fields.extend(QUEUE_LIVE_FIELDS.iter().map(|f| f.field(&status)));
    }
    fields.extend(table_fields::<QueueAttributes>(
        &q.attributes,
        q.queue_type.mask(),
    ));
    fields
}

fn display_queue(
    target: &dyn AdminTarget,
    qt: Option<QueueType>,
    type_filter: Option<QueueType>,
    selection: &Selection,
) -> CommandResult {
    let blocks = queues_matching(target, &selection.name)
        .into_iter()
        .filter(|q| qt.is_none_or(|t| t == q.queue_type))
        .filter(|q| type_filter.is_none_or(|t| t == q.queue_type))
        .map(|q| queue_fields(&q, target))
        .collect();
    display(
        blocks,
        selection,
        &["QUEUE", "TYPE"],
        &messages::DISPLAY_QUEUE,
    )
}

/// The most bytes of output one command answers: a DISPLAY of every queue of a queue
/// manager with 100,000 must neither hold the queue manager's thread for seconds nor make
/// an answer larger than a frame (the connection would break). MQ sends such answers in
/// many messages; Ferry's command server answers in one, cut here with FRY9006E.
pub const MAX_COMMAND_OUTPUT: usize = 1 << 20;

/// Filters and prints objects (each a field list); none at all is "not found". Stops at
/// [`MAX_COMMAND_OUTPUT`], saying how many objects were shown.
pub(crate) fn display(
    blocks: Vec<Vec<Field>>,
    selection: &Selection,
    always: &[&str],
    header: &'static Message,
) -> CommandResult {
    if blocks.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&selection.name.text()]);
    }
    let total = blocks.len();
    let mut lines = Vec::new();
    let mut bytes = 0usize;
    for (shown_so_far, fields) in blocks.into_iter().enumerate() {
        if !selection.filter.as_ref().is_none_or(|f| passes(&fields, f)) {
            continue;
        }
        if bytes > MAX_COMMAND_OUTPUT {
            lines.push(messages::OUTPUT_CUT.format(&[
                &shown_so_far.to_string(),
                &total.to_string(),
                &MAX_COMMAND_OUTPUT.to_string(),
            ]));
            return CommandResult { ok: false, lines };
        }
        let shown: Vec<Field> = fields
            .into_iter()
            .filter(|f| always.contains(&f.keyword) || selection.shows(f.keyword))
            .collect();
        let block = render_block(header, &shown);
        bytes += block.iter().map(|l| l.len() + 1).sum::<usize>();
        lines.extend(block);
    }
    CommandResult { ok: true, lines }
}

/// The queues `name` selects, sorted by name. A single name is one lookup: DISPLAY of one
/// queue must not copy every definition when there are 100,000 of them.
fn queues_matching(target: &dyn AdminTarget, name: &NamePattern) -> Vec<QueueDefinition> {
    match name {
        NamePattern::Exact(n) => target.queue(n).into_iter().collect(),
        NamePattern::Prefix(_) => target
            .queues()
            .into_iter()
            .filter(|q| name.matches(&q.name))
            .collect(),
    }
}

fn display_qstatus(
    target: &dyn AdminTarget,
    status_type: QueueStatusType,
    selection: &Selection,
) -> CommandResult {
    let queues = queues_matching(target, &selection.name);
    if queues.is_empty() && !selection.name.is_generic() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&selection.name.text()]);
    }
    let mut blocks = Vec::new();
    for q in queues.iter().filter(|q| q.queue_type == QueueType::Local) {
        let head = |ty: &'static str| {
            vec![
                Field::new("QUEUE", FieldValue::Text(q.name.clone())),
                Field::new("TYPE", FieldValue::Keyword(ty)),
            ]
        };
        match status_type {
            QueueStatusType::Queue => {
                if let Some(s) = target.queue_status(&q.name) {
                    let mut fields = head("QUEUE");
                    fields.extend(QSTATUS_QUEUE_FIELDS.iter().map(|f| f.field(&s)));
                    blocks.push(fields);
                }
            }
            QueueStatusType::Handle => {
                for h in target.handle_status(&q.name) {
                    let mut fields = head("HANDLE");
                    fields.extend(QSTATUS_HANDLE_FIELDS.iter().map(|f| f.field(&h)));
                    blocks.push(fields);
                }
            }
        }
    }
    // No handles open on a queue that exists is an empty answer, not a failure: runmqsc
    // prints nothing for it and counts the command as processed (scripts that list
    // handles before deleting a queue depend on that exit code).
    if blocks.is_empty() && status_type == QueueStatusType::Handle {
        return CommandResult {
            ok: true,
            lines: Vec::new(),
        };
    }
    if blocks.is_empty() {
        return CommandResult::failed(&messages::STATUS_NOT_FOUND, &["Queue"]);
    }
    display(
        blocks,
        selection,
        &["QUEUE", "TYPE"],
        &messages::DISPLAY_QUEUE_STATUS,
    )
}

/// DISPLAY CLUSQMGR: CLUSQMGR and CLUSTER head each block, as in MQ.
fn display_clusqmgr(
    target: &dyn AdminTarget,
    selection: &Selection,
    cluster: Option<&str>,
) -> CommandResult {
    let blocks: Vec<Vec<Field>> = target
        .cluster_qmgrs()
        .into_iter()
        .filter(|c| selection.name.matches(&c.name))
        .filter(|c| cluster.is_none_or(|want| want == c.cluster))
        .map(|c| {
            let mut fields = vec![
                Field::new("CLUSQMGR", FieldValue::Text(c.name.clone())),
                Field::new("CLUSTER", FieldValue::Text(c.cluster.clone())),
            ];
            fields.extend(crate::display::CLUSQMGR_FIELDS.iter().map(|f| f.field(&c)));
            fields
        })
        .collect();
    if blocks.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&selection.name.text()]);
    }
    display(
        blocks,
        selection,
        &["CLUSQMGR", "CLUSTER"],
        &messages::DISPLAY_CLUSTER_QMGR,
    )
}

/// DISPLAY QCLUSTER: one block per instance, QUEUE first.
fn display_qcluster(target: &dyn AdminTarget, selection: &Selection) -> CommandResult {
    let blocks: Vec<Vec<Field>> = target
        .cluster_queues()
        .into_iter()
        .filter(|q| selection.name.matches(&q.queue))
        .map(|q| {
            let mut fields = vec![Field::new("QUEUE", FieldValue::Text(q.queue.clone()))];
            fields.extend(crate::display::QCLUSTER_FIELDS.iter().map(|f| f.field(&q)));
            fields
        })
        .collect();
    if blocks.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&selection.name.text()]);
    }
    display(blocks, selection, &["QUEUE"], &messages::DISPLAY_QUEUE)
}

fn display_lsstatus(target: &dyn AdminTarget, selection: &Selection) -> CommandResult {
    let listeners: Vec<ListenerDefinition> = target
        .listeners()
        .into_iter()
        .filter(|l| selection.name.matches(&l.name))
        .collect();
    if listeners.is_empty() && !selection.name.is_generic() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&selection.name.text()]);
    }
    let blocks: Vec<Vec<Field>> = listeners
        .iter()
        .filter_map(|l| {
            let s = target.listener_status(&l.name).filter(|s| s.running)?;
            let mut fields = vec![Field::new("LISTENER", FieldValue::Text(l.name.clone()))];
            fields.extend(LSSTATUS_FIELDS.iter().map(|f| f.field(&s)));
            Some(fields)
        })
        .collect();
    if blocks.is_empty() {
        return CommandResult::failed(&messages::LISTENER_NOT_ACTIVE, &[&selection.name.text()]);
    }
    display(
        blocks,
        selection,
        &["LISTENER"],
        &messages::DISPLAY_LISTENER_STATUS,
    )
}

fn display_conn(
    target: &dyn AdminTarget,
    conn_type: ConnType,
    selection: &Selection,
) -> CommandResult {
    let conns: Vec<_> = target
        .connections()
        .into_iter()
        .filter(|c| selection.name.matches(&c.connection_id))
        .collect();
    if conns.is_empty() {
        return CommandResult::failed(&messages::OBJECT_NOT_FOUND, &[&selection.name.text()]);
    }
    let mut lines = Vec::new();
    for c in &conns {
        let head = |ty: &'static str| {
            vec![
                Field::new("CONN", FieldValue::Text(c.connection_id.clone())),
                Field::new("TYPE", FieldValue::Keyword(ty)),
            ]
        };
        let conn_fields: Vec<Field> = CONN_FIELDS.iter().map(|f| f.field(c)).collect();
        let keep = |fields: &[Field]| selection.filter.as_ref().is_none_or(|f| passes(fields, f));
        let show = |mut fields: Vec<Field>, extra: Vec<Field>| {
            fields.extend(extra.into_iter().filter(|f| selection.shows(f.keyword)));
            render_block(&messages::DISPLAY_CONNECTION, &fields)
        };
        if matches!(conn_type, ConnType::Conn | ConnType::All) && keep(&conn_fields) {
            lines.extend(show(head("CONN"), conn_fields.clone()));
        }
        if matches!(conn_type, ConnType::Handle | ConnType::All) {
            for object in &c.open_objects {
                let h = ConnHandle {
                    connection_id: c.connection_id.clone(),
                    object: object.clone(),
                };
                let handle_fields: Vec<Field> =
                    CONN_HANDLE_FIELDS.iter().map(|f| f.field(&h)).collect();
                let mut context = conn_fields.clone();
                context.extend(handle_fields.iter().cloned());
                if keep(&context) {
                    lines.extend(show(head("HANDLE"), handle_fields));
                }
            }
        }
    }
    CommandResult { ok: true, lines }
}

/// Whether an object's fields pass a WHERE; an object without the field does not.
pub fn passes(fields: &[Field], filter: &Filter) -> bool {
    let Some(field) = fields.iter().find(|f| f.keyword == filter.keyword) else {
        return false;
    };
    let op = filter.op;
    match (&field.value, &filter.value) {
        (FieldValue::Int(a) | FieldValue::NoOrCount(a), FilterValue::Int(b)) => {
            ordered(a.cmp(b), op)
        }
        (FieldValue::Flag { on, .. }, FilterValue::Flag(b)) => equality(on == b, op),
        (FieldValue::Keyword(k), FilterValue::Text(t)) => text_matches(k, t, op),
        (FieldValue::Text(s), FilterValue::Text(t)) => text_matches(s, t, op),
        _ => false,
    }
}

fn ordered(ord: Ordering, op: Op) -> bool {
    match op {
        Op::Lt => ord == Ordering::Less,
        Op::Gt => ord == Ordering::Greater,
        Op::Le => ord != Ordering::Greater,
        Op::Ge => ord != Ordering::Less,
        Op::Eq | Op::Lk | Op::Ct => ord == Ordering::Equal,
        Op::Ne | Op::Nl | Op::Ex => ord != Ordering::Equal,
    }
}

fn equality(equal: bool, op: Op) -> bool {
    match op {
        Op::Ne | Op::Nl | Op::Ex => !equal,
        _ => equal,
    }
}

fn text_matches(value: &str, wanted: &str, op: Op) -> bool {
    let value = value.trim_end();
    let wanted_trim = wanted.trim_end();
    let like = || match wanted_trim.strip_suffix('*') {
        Some(prefix) => value.starts_with(prefix),
        None => value == wanted_trim,
    };
    match op {
        Op::Lk => like(),
        Op::Nl => !like(),
        Op::Ct => value.contains(wanted),
        Op::Ex => !value.contains(wanted),
        _ => ordered(value.cmp(wanted_trim), op),
    }
}
