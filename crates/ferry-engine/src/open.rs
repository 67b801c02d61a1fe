//! MQOPEN and MQCLOSE: name resolution (local, alias → target, model → new dynamic
//! queue), open-option rules (input sharing, 2042), MAXHANDS, and the life of dynamic
//! queues (temporary ones die with the handle that made them).

use crate::clock::Timestamp;
use crate::cluster::ClusterBinding;
use crate::connection::{ConnId, Handle, HandleTarget, Hobj, InputMode, RemoteTarget};
use crate::effects::{CatalogueChange, Effect, Effects};
use crate::journal::{kind, LogRecord};
use crate::name_resolution::{NameResolver, RemoteRoute, Resolved};
use crate::objects::QueueId;
use crate::qmgr::QueueManager;
use crate::selection::{MessageFilter, SharedFilter};
use crate::settle::Settlement;
use ferry_mqi::{
    validate_object_name, CloseOptions, FixedStr, MqError, ObjectDescriptor, ObjectType,
    OpenOptions, ReasonCode,
};
use ferry_objects::queue::{DefaultShareOption, DefinitionType};
use ferry_objects::{QueueDefinition, QueueType};
use ferry_security::oam::ProfileObjectType;
use std::rc::Rc;

/// What MQOPEN returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opened {
    /// The new handle.
    pub hobj: Hobj,
    /// The name opened: for a model queue, the dynamic queue's name (MQOD ObjectName).
    pub object_name: String,
    /// The queue the name resolved to (MQOD ResolvedQName): a local queue, or for a
    /// remote destination the queue's name on its queue manager; blank for the QM.
    pub resolved_q_name: String,
    /// The queue manager owning it (MQOD ResolvedQMgrName): this one, or the remote
    /// queue manager the transmission queue header names.
    pub resolved_qmgr_name: String,
}

/// The input, browse, output, inquire and set options: at least one is needed.
fn access_options() -> OpenOptions {
    OpenOptions::INPUT_AS_Q_DEF
        | OpenOptions::INPUT_SHARED
        | OpenOptions::INPUT_EXCLUSIVE
        | OpenOptions::BROWSE
        | OpenOptions::OUTPUT
        | OpenOptions::INQUIRE
        | OpenOptions::SET
}

impl QueueManager {
    /// MQOPEN.
    pub fn open(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        let r = self.open_inner(conn, od, options, false, now, fx);
        self.mqi_stats
            .note_result(&r, |m| &mut m.opens, |m| &mut m.opens_failed);
        r
    }

    /// MQOPEN with a selection string (MQOD SelectionString), already compiled by the
    /// server into `selection`: gets, waits, browses and consumers on the handle only
    /// see the messages it selects.
    pub fn open_with_selection(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
        selection: Rc<dyn MessageFilter>,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<Opened, MqError> {
            let opened = self.open_inner(conn, od, options, false, now, fx)?;
            if let Some(h) = self
                .conns
                .get_mut(&conn)
                .and_then(|c| c.handle_mut(opened.hobj))
            {
                h.selection = Some(SharedFilter(selection));
            }
            Ok(opened)
        })();
        self.mqi_stats
            .note_result(&result, |m| &mut m.opens, |m| &mut m.opens_failed);
        self.debug_check();
        result
    }

    pub(crate) fn open_inner(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
        for_put1: bool,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        self.check_running(options.contains(OpenOptions::FAIL_IF_QUIESCING))?;
        let max_handles = self.qmgr.max_handles.max(0) as usize;
        let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
        if !options.intersects(access_options()) {
            return Err(ReasonCode::OptionsError.into());
        }
        let inputs = [
            OpenOptions::INPUT_AS_Q_DEF,
            OpenOptions::INPUT_SHARED,
            OpenOptions::INPUT_EXCLUSIVE,
        ]
        .iter()
        .filter(|f| options.contains(**f))
        .count();
        if inputs > 1 {
            return Err(ReasonCode::OptionsError.into());
        }
        if options.contains(OpenOptions::CO_OP) && !options.contains(OpenOptions::BROWSE) {
            // A cooperating handle browses (`crate::browse_marks`): 2046 otherwise, as MQ.
            return Err(ReasonCode::OptionsError.into());
        }
        if !for_put1 && c.open_count >= max_handles {
            return Err(ReasonCode::HandleNotAvailable.into());
        }
        // A queue on another queue manager is checked once resolved (`open_queue`).
        let qmgr_named = self.names_other_qmgr(od);
        let checked = match od.object_type {
            ObjectType::QMgr => Some((ProfileObjectType::Qmgr, self.name.as_str())),
            ObjectType::Process => Some((ProfileObjectType::Process, od.object_name.as_str())),
            ObjectType::Namelist => Some((ProfileObjectType::Namelist, od.object_name.as_str())),
            ObjectType::Queue if !qmgr_named => {
                Some((ProfileObjectType::Queue, od.object_name.as_str()))
            }
            _ => None,
        };
        if let Some((object_type, name)) = checked {
            let alternate = od.alternate_user_id.as_str();
            self.check_open(conn, object_type, name, options, alternate, fx)?;
        }
        match od.object_type {
            ObjectType::QMgr => self.open_qmgr(conn, od, options),
            ObjectType::Process => self.open_process(conn, od, options),
            ObjectType::Namelist => self.open_namelist(conn, od, options),
            ObjectType::Queue => self.open_queue(conn, od, options, now, fx),
            ObjectType::Topic => {
                self.open_topic_inner(conn, od.object_name.as_str(), "", options, for_put1, fx)
            }
            _ => Err(ReasonCode::ObjectTypeError.into()),
        }
    }

    /// MQOPEN of a process definition: MQOO_INQUIRE only (2045 otherwise), 2085 for a
    /// name no process has.
    fn open_process(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
    ) -> Result<Opened, MqError> {
        let name = od.object_name.as_str().to_string();
        if !self.processes.contains_key(&name) {
            return Err(ReasonCode::UnknownObjectName.into());
        }
        if options.intersects(access_options() - OpenOptions::INQUIRE) {
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let hobj = c.add_handle(Handle {
            target: HandleTarget::Process,
            options,
            input: InputMode::None,
            name: name.clone(),
            cursor: None,
            lock: None,
            owns_temp_queue: false,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        Ok(Opened {
            hobj,
            object_name: name,
            resolved_q_name: String::new(),
            resolved_qmgr_name: self.name.clone(),
        })
    }

    fn open_qmgr(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
    ) -> Result<Opened, MqError> {
        let name = od.object_name.as_str();
        if !name.is_empty() && name != self.name {
            return Err(ReasonCode::UnknownObjectName.into());
        }
        if options.intersects(access_options() - OpenOptions::INQUIRE) {
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        let qm = self.name.clone();
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let hobj = c.add_handle(Handle {
            target: HandleTarget::QMgr,
            options,
            input: InputMode::None,
            name: qm.clone(),
            cursor: None,
            lock: None,
            owns_temp_queue: false,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        Ok(Opened {
            hobj,
            object_name: qm.clone(),
            resolved_q_name: String::new(),
            resolved_qmgr_name: qm,
        })
    }

    pub(crate) fn open_queue(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        let name = od.object_name.as_str();
        validate_object_name(name).map_err(|_| MqError::from(ReasonCode::ObjectNameError))?;
        let qmgr_named = self.names_other_qmgr(od);
        let not_output = access_options() - OpenOptions::OUTPUT;
        if qmgr_named && options.intersects(not_output) {
            // MQ: only output reaches a queue named with another queue manager's name
            // (even an alias of this one).
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        if !qmgr_named && self.resolves_in_cluster(name) {
            if let Some(opened) = self.open_cluster(conn, od, options, fx)? {
                return Ok(opened);
            }
        }
        let resolved = NameResolver {
            local_qmgr: &self.name,
            default_xmit_q: &self.qmgr.default_xmit_q,
            lookup: |n: &str| {
                let id = self.queues.lookup(n)?;
                self.queues.get(id).map(|e| &e.def)
            },
            cluster_channel: &|qm: &str| self.cluster_channel_to(qm),
        }
        .resolve(od.object_qmgr_name.as_str(), name);
        let resolved = match resolved {
            Ok(r) => r,
            Err(reason) if qmgr_named => return Err(self.cluster_resolution_reason(reason).into()),
            Err(reason) => return Err(self.cluster_unknown_queue(name, reason, now.0).into()),
        };
        let (local_name, via) = match resolved {
            Resolved::Local { name, via } => (name, via),
            Resolved::Remote(route) => {
                let binding = route.cluster_channel.as_deref().map(|c| ClusterBinding {
                    channel: FixedStr::truncating(c),
                    mode: crate::cluster::BindMode::OnOpen,
                });
                return self.open_remote(conn, od, options, route, binding, fx);
            }
        };
        let input_like = OpenOptions::INPUT_AS_Q_DEF
            | OpenOptions::INPUT_SHARED
            | OpenOptions::INPUT_EXCLUSIVE
            | OpenOptions::BROWSE
            | OpenOptions::SET;
        if via.is_some() && options.intersects(input_like) {
            // A remote definition is opened for output or inquire only, even when it
            // names a queue of this queue manager.
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        if qmgr_named {
            // A queue-manager alias of this queue manager: the queue it leads to.
            let alternate = od.alternate_user_id.as_str();
            self.check_open(
                conn,
                ProfileObjectType::Queue,
                &local_name,
                options,
                alternate,
                fx,
            )?;
        }
        let id = self
            .queues
            .lookup(&local_name)
            .ok_or(ReasonCode::UnknownObjectName)?;
        let via_id = via.as_deref().and_then(|v| self.queues.lookup(v));
        let entry = self.queues.get(id).ok_or(ReasonCode::UnknownObjectName)?;
        let (opened, local, created) = match entry.def.queue_type {
            QueueType::Local => (via_id.unwrap_or(id), id, false),
            QueueType::Alias if via_id.is_some() => {
                (via_id.unwrap_or(id), self.queues.alias_base(entry)?, false)
            }
            QueueType::Alias => (id, self.queues.alias_base(entry)?, false),
            QueueType::Model => {
                let model = entry.def.clone();
                let def = self.dynamic_definition(&model, od, now)?;
                let permanent = def.attributes.definition_type == DefinitionType::PermanentDynamic;
                if permanent && self.logging {
                    fx.log(LogRecord::queue(kind::DEFINE_QUEUE, &def.name));
                }
                let change = CatalogueChange::Queue(def.name.clone());
                let created_name = def.name.clone();
                let nid = self.queues.insert(def);
                if permanent {
                    fx.push(Effect::CatalogueChanged(change));
                }
                self.grant_creator(conn, &created_name, permanent, fx);
                (nid, nid, true)
            }
            // `crate::name_resolution` never leaves a remote definition here.
            QueueType::Remote => return Err(ReasonCode::UnexpectedError.into()),
        };
        let entry = self
            .queues
            .get_mut(local)
            .ok_or(ReasonCode::UnexpectedError)?;
        let exclusive_default =
            entry.def.attributes.def_share_option == DefaultShareOption::Exclusive;
        let shareable = entry.def.attributes.shareable;
        let temporary = entry.is_temporary();
        let resolved = entry.def.name.clone();
        let lq = entry.local.as_mut().ok_or(ReasonCode::UnexpectedError)?;
        let input = if !options.wants_input() {
            InputMode::None
        } else if options.contains(OpenOptions::INPUT_EXCLUSIVE)
            || (options.contains(OpenOptions::INPUT_AS_Q_DEF) && exclusive_default)
            || !shareable
        {
            InputMode::Exclusive
        } else {
            InputMode::Shared
        };
        match input {
            InputMode::Exclusive if lq.open_input() > 0 => {
                return Err(ReasonCode::ObjectInUse.into())
            }
            InputMode::Shared if lq.open_exclusive() => return Err(ReasonCode::ObjectInUse.into()),
            _ => {}
        }
        lq.handle_opened(input, options);
        let first_input = input != InputMode::None && lq.open_input() == 1;
        let object_name = if created {
            resolved.clone()
        } else {
            name.to_string()
        };
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let hobj = c.add_handle(Handle {
            target: HandleTarget::Queue { opened, local },
            options,
            input,
            name: object_name.clone(),
            cursor: None,
            lock: None,
            owns_temp_queue: created && temporary,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        if first_input {
            // A trigger monitor (or the channel initiator) opening its initiation queue:
            // the queues it serves that hold messages trigger now.
            self.trigger_initiation_queue_opened(local, now, fx);
        }
        Ok(Opened {
            hobj,
            object_name,
            resolved_q_name: resolved,
            resolved_qmgr_name: self.name.clone(),
        })
    }

    /// True when `od` names a queue manager other than this one (ObjectQMgrName not
    /// blank and not this queue manager's name).
    fn names_other_qmgr(&self, od: &ObjectDescriptor) -> bool {
        let qm = od.object_qmgr_name.as_str().trim();
        od.object_type == ObjectType::Queue && !qm.is_empty() && qm != self.name
    }

    /// Opens a handle to a queue on another queue manager, reached through `route`'s
    /// transmission queue. Only output (and inquire, on a remote definition named by
    /// ObjectName) is allowed: 2045 otherwise. Authority: the remote definition was
    /// checked as named, before resolution; a queue named with another queue manager's
    /// name needs the authorities on the transmission queue (as MQ's OAM checks it).
    fn open_remote(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
        route: RemoteRoute,
        cluster: Option<ClusterBinding>,
        fx: &mut Effects,
    ) -> Result<Opened, MqError> {
        let mut allowed = OpenOptions::OUTPUT;
        if !route.qmgr_named {
            allowed |= OpenOptions::INQUIRE;
        }
        if options.intersects(access_options() - allowed) {
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        if route.qmgr_named {
            let alternate = od.alternate_user_id.as_str();
            self.check_open(
                conn,
                ProfileObjectType::Queue,
                &route.xmit_q,
                options,
                alternate,
                fx,
            )?;
        }
        let xmit_q = self
            .queues
            .lookup(&route.xmit_q)
            .ok_or(ReasonCode::UnknownXmitQ)?;
        let definition = route
            .definition
            .as_deref()
            .and_then(|d| self.queues.lookup(d));
        debug_assert!(
            self.queues.local_mut(xmit_q).is_some(),
            "resolved to a local queue"
        );
        let target = RemoteTarget {
            definition,
            xmit_q,
            remote_q_name: FixedStr::truncating(&route.remote_q_name),
            remote_qmgr_name: FixedStr::truncating(&route.remote_qmgr_name),
            cluster,
        };
        let object_name = od.object_name.as_str().to_string();
        let c = self.conns.get_mut(&conn).ok_or(ReasonCode::HconnError)?;
        let hobj = c.add_handle(Handle {
            target: HandleTarget::Remote(target),
            options,
            input: InputMode::None,
            name: object_name.clone(),
            cursor: None,
            lock: None,
            owns_temp_queue: false,
            selection: None,
            saved_context: None,
            groups: Default::default(),
        });
        Ok(Opened {
            hobj,
            object_name,
            resolved_q_name: route.remote_q_name,
            resolved_qmgr_name: route.remote_qmgr_name,
        })
    }

    /// MQOPEN of a cluster queue with an instance on another queue manager: the
    /// instance is chosen now ([`QueueManager::cluster_choose`]); BIND_NOT_FIXED (or
    /// DEFBIND(NOTFIXED) with BIND_AS_Q_DEF) makes each put choose again. `None` when
    /// the choice is the local instance: the caller opens it as any local queue. Only
    /// output and inquire reach a cluster queue elsewhere (2045 otherwise); authority is
    /// checked on SYSTEM.CLUSTER.TRANSMIT.QUEUE, as MQ's default
    /// ClusterQueueAccessControl=Xmitq does.
    fn open_cluster(
        &mut self,
        conn: ConnId,
        od: &ObjectDescriptor,
        options: OpenOptions,
        fx: &mut Effects,
    ) -> Result<Option<Opened>, MqError> {
        let name = od.object_name.as_str().trim().to_string();
        let local_exists = self.queues.lookup(&name).is_some();
        if options.intersects(access_options() - (OpenOptions::OUTPUT | OpenOptions::INQUIRE)) {
            if local_exists {
                return Ok(None);
            }
            return Err(ReasonCode::OptionNotValidForType.into());
        }
        let mode = crate::cluster::BindMode::of_options(options, self.cluster_default_bind(&name))?;
        let choice = self.cluster_choose(&name, true)?;
        if choice.channel.is_some() {
            // MQ's default ClusterQueueAccessControl=Xmitq: the authority to put to a
            // cluster queue elsewhere is that on the cluster transmission queue.
            let alternate = od.alternate_user_id.as_str();
            let xmit_q = self.cluster_xmit_q();
            self.check_open(
                conn,
                ProfileObjectType::Queue,
                xmit_q,
                options,
                alternate,
                fx,
            )?;
        }
        let Some(channel) = choice.channel else {
            // Puts to the local instance are not seen here: count the handle.
            self.cluster.note_chosen("");
            return Ok(None);
        };
        if mode == crate::cluster::BindMode::OnOpen {
            // A handle bound at open uses its instance from now on: counted now, so
            // successive opens spread over the instances, as MQ spreads them.
            self.cluster.note_chosen(&choice.qmgr);
        }
        let route = RemoteRoute {
            remote_q_name: name,
            remote_qmgr_name: choice.qmgr,
            xmit_q: self.cluster_xmit_q().to_string(),
            definition: None,
            qmgr_named: false,
            cluster_channel: Some(channel.clone()),
        };
        let binding = ClusterBinding {
            channel: FixedStr::truncating(&channel),
            mode,
        };
        self.open_remote(conn, od, options, route, Some(binding), fx)
            .map(Some)
    }

    /// The definition of a dynamic queue made from `model` as `od` names it.
    pub(crate) fn dynamic_definition(
        &mut self,
        model: &QueueDefinition,
        od: &ObjectDescriptor,
        now: Timestamp,
    ) -> Result<QueueDefinition, MqError> {
        let mut pattern = od.dynamic_q_name.as_str().to_string();
        if pattern.is_empty() {
            pattern = "AMQ.*".to_string();
        }
        let name = match pattern.find('*') {
            Some(pos) if pos + 1 == pattern.len() => {
                let prefix = &pattern[..pos];
                if prefix.len() > 32 {
                    return Err(ReasonCode::ObjectNameError.into());
                }
                loop {
                    self.dyn_seed = self.dyn_seed.wrapping_add(1);
                    let candidate = format!("{prefix}{:016X}", self.dyn_seed);
                    if self.queues.lookup(&candidate).is_none() {
                        break candidate;
                    }
                }
            }
            Some(_) => return Err(ReasonCode::ObjectNameError.into()),
            None => pattern,
        };
        validate_object_name(&name).map_err(|_| MqError::from(ReasonCode::ObjectNameError))?;
        if self.queues.lookup(&name).is_some() {
            return Err(ReasonCode::ObjectAlreadyExists.into());
        }
        let mut def = model.clone();
        def.name = name;
        def.queue_type = QueueType::Local;
        if def.attributes.definition_type == DefinitionType::Predefined {
            def.attributes.definition_type = DefinitionType::TemporaryDynamic;
        }
        let (date, time) = crate::clock::admin_date_time(now);
        def.attributes.creation_date = date.clone();
        def.attributes.creation_time = time.clone();
        def.attributes.alteration_date = date;
        def.attributes.alteration_time = time;
        Ok(def)
    }

    /// MQCLOSE. DELETE / DELETE_PURGE delete a permanent dynamic queue (2045 on other
    /// queues; 2055 when messages or uncommitted work remain without PURGE; 2042 when
    /// other handles are open); a temporary dynamic queue is deleted when the handle
    /// that created it closes. Returns the warning MQ closes with when the handle was in
    /// the middle of a group it put or got in logical order: 2242 MQRC_INCOMPLETE_MSG
    /// for a segmented message under way, else 2241 MQRC_INCOMPLETE_GROUP (the handle
    /// closes all the same).
    pub fn close(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        options: CloseOptions,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        let r = self.close_uncounted(conn, hobj, options, now, fx);
        self.mqi_stats
            .note_result(&r, |m| &mut m.closes, |m| &mut m.closes_failed);
        r
    }

    /// [`QueueManager::close`] without counting an MQCLOSE (MQPUT1's own close).
    pub(crate) fn close_uncounted(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        options: CloseOptions,
        now: Timestamp,
        fx: &mut Effects,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.debug_check();
        #[allow(clippy::redundant_closure_call)]
        let result = (|| -> Result<Option<ReasonCode>, MqError> {
            let c = self.conns.get(&conn).ok_or(ReasonCode::HconnError)?;
            let h = c.handle(hobj).ok_or(ReasonCode::HobjError)?;
            let warning = crate::group::incomplete_on_close(&h.groups);
            if let HandleTarget::Subscription(key) = h.target {
                let keep = options.contains(CloseOptions::KEEP_SUB);
                let remove = options.contains(CloseOptions::REMOVE_SUB);
                let others =
                    CloseOptions::KEEP_SUB | CloseOptions::REMOVE_SUB | CloseOptions::QUIESCE;
                if (keep && remove) || !others.contains(options) {
                    return Err(ReasonCode::OptionsError.into());
                }
                let durable = self.subscriptions.get(key).is_some_and(|s| s.durable);
                if keep && !durable {
                    // MQ: a non-durable subscription cannot be kept.
                    return Err(ReasonCode::OptionsError.into());
                }
                if let Some(c) = self.conns.get_mut(&conn) {
                    c.take_handle(hobj);
                }
                self.subscription_closed(key, (conn, hobj), remove, now, fx);
                return Ok(None);
            }
            let delete = options.intersects(CloseOptions::DELETE | CloseOptions::DELETE_PURGE);
            if delete {
                let HandleTarget::Queue { local, .. } = h.target else {
                    return Err(ReasonCode::OptionNotValidForType.into());
                };
                if let Some(entry) = self.queues.get(local) {
                    match entry.def.attributes.definition_type {
                        DefinitionType::Predefined => {
                            return Err(ReasonCode::OptionNotValidForType.into())
                        }
                        DefinitionType::PermanentDynamic => {
                            if let Some(lq) = &entry.local {
                                if lq.open_handles() > 1 {
                                    return Err(ReasonCode::ObjectInUse.into());
                                }
                                let purge = options.contains(CloseOptions::DELETE_PURGE);
                                if lq.uncommitted() > 0 || (!purge && lq.store.depth() > 0) {
                                    return Err(ReasonCode::QNotEmpty.into());
                                }
                            }
                        }
                        DefinitionType::TemporaryDynamic => {}
                    }
                }
            }
            let target = h.target;
            self.close_handle(conn, hobj, now, fx);
            if let HandleTarget::Remote(r) = target {
                if r.cluster.is_some() {
                    self.cluster_handle_closed(conn, hobj);
                }
            }
            if delete {
                if let HandleTarget::Queue { local, .. } = target {
                    if self.queues.get(local).is_some() {
                        self.delete_queue_now(local, now, fx);
                    }
                }
            }
            Ok(warning)
        })();
        self.debug_check();
        result
    }

    /// Closes a handle: cancels its wait and its consumers (their held messages return
    /// with [`Settlement::DEFAULT_OUTCOME`]), lets go of its locked message and its
    /// browse marks, updates counters, deletes a temporary dynamic queue it created.
    pub(crate) fn close_handle(
        &mut self,
        conn: ConnId,
        hobj: Hobj,
        now: Timestamp,
        fx: &mut Effects,
    ) {
        let waiting_here = self
            .conns
            .get(&conn)
            .and_then(|c| c.pending)
            .is_some_and(|p| p.hobj == hobj);
        if waiting_here {
            self.cancel_wait(conn);
        }
        let consumers = self.consumers_of(conn, Some(hobj));
        if !consumers.is_empty() {
            self.end_consumers(&consumers, Settlement::DEFAULT_OUTCOME, now, fx);
        }
        let Some(h) = self.conns.get_mut(&conn).and_then(|c| c.take_handle(hobj)) else {
            return;
        };
        if let HandleTarget::Subscription(key) = h.target {
            // A connection ending keeps its durable subscriptions (MQCO_KEEP_SUB).
            self.subscription_closed(key, (conn, hobj), false, now, fx);
            return;
        }
        let HandleTarget::Queue { local, .. } = h.target else {
            return;
        };
        let mut last_input = false;
        if let Some(lq) = self.queues.local_mut(local) {
            lq.handle_closed(h.input, h.options);
            last_input = h.input != InputMode::None && lq.open_input() == 0;
            let last_co_op = crate::browse_marks::cooperates(&h) && lq.open_co_op() == 0;
            crate::browse_marks::handle_closed(&mut lq.marks, conn, hobj, last_co_op);
        }
        if last_input && !h.owns_temp_queue {
            // The server found the queue empty and went: a message since triggers.
            self.trigger_reevaluate(local, true, now, fx);
        }
        if let Some(k) = h.lock {
            self.unlock_message(local, k, now, fx);
        }
        if h.owns_temp_queue && self.queues.get(local).is_some() {
            self.delete_queue_now(local, now, fx);
        }
    }

    /// Deletes a queue whatever its state: waiters end 2052, uncommitted work on it is
    /// dropped from every unit of work, other handles become stale (2052 on use).
    pub(crate) fn delete_queue_now(&mut self, id: QueueId, _now: Timestamp, fx: &mut Effects) {
        let waiters: Vec<ConnId> = self
            .queues
            .local_mut(id)
            .map(|lq| {
                let plain = lq.waiters.snapshot().into_iter().map(|w| w.conn);
                plain.chain(lq.group_waiters.conns()).collect()
            })
            .unwrap_or_default();
        for conn in waiters {
            self.fail_wait(conn, ReasonCode::QDeleted, fx);
        }
        self.drop_queue_consumers(id, fx);
        if self.logging {
            if let Some(e) = self.queues.get(id) {
                if e.local.is_some() && !e.is_temporary() {
                    fx.log(LogRecord::queue(kind::DELETE_QUEUE, &e.def.name));
                    fx.reply_waits();
                }
            }
        }
        for c in self.conns.values_mut() {
            c.uow.forget_queue(id);
        }
        self.triggers.forget(id);
        if let Some(e) = self.queues.remove(id) {
            self.forget_dynamic_creator(&e.def.name);
            if e.def.attributes.definition_type != DefinitionType::TemporaryDynamic
                || e.def.queue_type != QueueType::Local
            {
                fx.push(Effect::CatalogueChanged(CatalogueChange::Queue(e.def.name)));
            }
        }
    }
}
