//! Cluster channels and the cluster repository task.
//!
//! **Cluster-senders.** A CLUSSDR sends from SYSTEM.CLUSTER.TRANSMIT.QUEUE only the
//! messages whose CorrelId names it (the engine puts the channel's name there, as MQ
//! does), so it opens the queue shared and gets by CorrelId. A CLUSSDR defined by hand
//! (to a full repository) is used as defined; one to any other member is auto-defined
//! from the member's CLUSRCVR record (CONNAME, workload values), as MQ's CLUSSDRA. Cluster
//! channels are not started by the administrator: every one known waits, INACTIVE, for
//! its first message, like a triggered sender ([`ensure_senders`]).
//!
//! **Cluster-receivers.** A CLUSRCVR is served as a RCVR, but every member of the cluster
//! calls it by the same name, so each partner is an instance of its own: the agent and
//! the synchronisation record are keyed by channel and partner queue manager
//! ([`receiver_instance`]).
//!
//! **The repository task** ([`run_repository`]) moves records between members: records
//! arrive as messages on SYSTEM.CLUSTER.COMMAND.QUEUE (JSON,
//! `ferry_engine::cluster::repository::RepositoryMessage`, docs/protocol.md "Cluster
//! repository messages") and leave through the cluster transmission queue, so they use
//! the channels' assured delivery. This queue manager's own records are published when
//! its definitions change: a partial repository sends them to the full repositories (the
//! ones it knows, and those its manual CLUSSDRs point at); a full repository sends them,
//! and every newer record it hears, to every member it knows, and tells a member it
//! hears of for the first time everything it knows of the cluster. (MQ's partial
//! repositories subscribe to only what they use; this first version has full
//! repositories push every record to every member.) What the queue manager knows is
//! kept as one message on SYSTEM.CLUSTER.REPOSITORY.QUEUE, replaced in the same unit of
//! work as the command messages that changed it, and loaded at start.

use super::engine_session::EngineSession;
use super::{Agent, MessageChannels};
use crate::runtime::clock;
use crate::runtime::server::Server;
use bytes::Bytes;
use ferry_engine::cluster::channel_correl_id;
use ferry_engine::cluster::repository::{ClusterQuery, ClusterRecord, RepositoryMessage};
use ferry_engine::cluster::workload::ChannelPreference;
use ferry_engine::{ConnectionInfo, Hobj};
use ferry_mqi::descriptor::persistence;
use ferry_mqi::options::{GetOptionFlags, MatchOptions, OpenOptions, PutOptionFlags};
use ferry_mqi::transmission::{TransmissionHeader, FORMAT_XMIT_Q_HEADER};
use ferry_mqi::{
    CorrelId, FixedStr, GetOptions, MessageDescriptor, MqError, ObjectDescriptor, PutOptions,
    ReasonCode,
};
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::{
    CLUSTER_COMMAND_QUEUE, CLUSTER_REPOSITORY_QUEUE, CLUSTER_TRANSMIT_QUEUE,
};
use ferry_objects::status::{ClusterQmgrStatus, ClusterQueueStatus, MessageChannelState};
use ferry_objects::ChannelDefinition;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::time::Duration;

/// How often the repository task looks for records and changed definitions.
const TICK: Duration = Duration::from_millis(250);
/// How often messages waiting for a channel that cannot run are looked at.
const REALLOCATION_INTERVAL: Duration = Duration::from_secs(1);
/// The longest repository message read.
const MAX_RECORD_MESSAGE: usize = 16 << 20;

/// The definition a sending agent named `name` runs with: the channel as defined (a
/// CLUSSDR's transmission queue being the cluster's), or a cluster-sender
/// auto-defined from another member's CLUSRCVR record.
pub(super) fn sending_definition(server: &Server, name: &str) -> Option<ChannelDefinition> {
    let engine = server.engine.borrow();
    if let Some(mut def) = engine.channel(name) {
        if def.channel_type == ChannelType::ClusterSender {
            def.attributes.xmit_q = engine.cluster_xmit_q_name(name);
        }
        return Some(def);
    }
    let record = engine
        .cluster_repository()
        .qmgrs()
        .find(|r| r.channel == name && r.qmgr != server.name)?;
    let mut def = ChannelDefinition::new(name, ChannelType::ClusterSender);
    let a = &mut def.attributes;
    a.cluster = record.cluster.clone();
    a.connection_name = record.conname.clone();
    a.xmit_q = engine.cluster_xmit_q_name(name);
    a.cluster_workload_rank = record.rank;
    a.cluster_workload_priority = record.priority;
    a.cluster_workload_weight = record.weight;
    if let Some(v) = &record.channel_values {
        a.short_retry_count = v.short_retry_count;
        a.short_retry_interval = v.short_retry_interval;
        a.long_retry_count = v.long_retry_count;
        a.long_retry_interval = v.long_retry_interval;
        a.heartbeat_interval = v.heartbeat_interval;
        a.disconnect_interval = v.disconnect_interval;
        a.batch_size = v.batch_size;
    }
    a.descr = format!("Auto-defined for cluster {}", record.cluster);
    Some(def)
}

/// The CorrelId a sending agent gets by: its name, for a cluster-sender.
pub(super) fn correl_match(def: &ChannelDefinition) -> Option<CorrelId> {
    (def.channel_type == ChannelType::ClusterSender).then(|| channel_correl_id(&def.name))
}

/// How a sending agent opens its transmission queue: shared for a cluster-sender (every
/// one gets from the cluster transmission queue), exclusive otherwise.
pub(super) fn xmit_q_input(def: &ChannelDefinition) -> OpenOptions {
    if def.channel_type == ChannelType::ClusterSender {
        OpenOptions::INPUT_SHARED
    } else {
        OpenOptions::INPUT_EXCLUSIVE
    }
}

/// The get descriptor and match options of a sending agent's gets.
pub(super) fn get_match(def: &ChannelDefinition) -> (MessageDescriptor, MatchOptions) {
    match correl_match(def) {
        Some(correl_id) => (
            MessageDescriptor {
                correl_id,
                ..MessageDescriptor::default()
            },
            MatchOptions::CORREL_ID,
        ),
        None => (MessageDescriptor::default(), MatchOptions::empty()),
    }
}

/// A receiving conversation's instance: the key of its agent and the name its
/// synchronisation record is kept under. A RCVR has one partner, so both are the
/// channel's name; a CLUSRCVR is called by every member, so each partner queue manager
/// is an instance, its record named by a digest of channel and partner (23 characters,
/// the room a record's key has).
pub(super) fn receiver_instance(name: &str, channel_type: ChannelType, partner: &str) -> String {
    if channel_type != ChannelType::ClusterReceiver {
        return name.to_string();
    }
    let digest = |seed: u64| {
        let mut h = seed;
        for b in name.bytes().chain([0]).chain(partner.trim().bytes()) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        h
    };
    let text = format!(
        "{:016X}{:016X}",
        digest(0xCBF2_9CE4_8422_2325),
        digest(0x84222325_CBF29CE4)
    );
    format!("C{}", &text[..22])
}

/// The state DISPLAY CLUSQMGR shows for cluster channel `channel`.
fn channel_state(server: &Server, channel: &str) -> String {
    server
        .endpoints
        .channel_status(&|n: &str| n == channel)
        .into_iter()
        .find_map(|s| s.message.map(|m| m.state))
        .unwrap_or(MessageChannelState::Inactive)
        .keyword()
        .to_string()
}

/// DISPLAY CLUSQMGR: this queue manager (its CLUSRCVRs), the members it knows, and its
/// manual CLUSSDRs whose partner has not answered yet.
pub(crate) fn cluster_qmgrs(server: &Server) -> Vec<ClusterQmgrStatus> {
    let engine = server.engine.borrow();
    let manual: BTreeMap<String, (ChannelDefinition, Vec<String>)> = engine
        .channels()
        .into_iter()
        .filter(|d| d.channel_type == ChannelType::ClusterSender)
        .filter(|d| !d.attributes.connection_name.trim().is_empty())
        .filter_map(|d| {
            let clusters =
                engine.clusters_named(&d.attributes.cluster, &d.attributes.cluster_namelist);
            (!clusters.is_empty()).then(|| (d.name.clone(), (d, clusters)))
        })
        .collect();
    let mut out: Vec<ClusterQmgrStatus> = Vec::new();
    let mut confirmed: BTreeSet<String> = BTreeSet::new();
    for r in engine.cluster_repository().qmgrs() {
        let own = r.qmgr == server.name;
        let definition_type = if own {
            "CLUSRCVR"
        } else if manual.contains_key(&r.channel) {
            confirmed.insert(r.channel.clone());
            "CLUSSDRB"
        } else {
            "CLUSSDRA"
        };
        out.push(ClusterQmgrStatus {
            name: r.qmgr.clone(),
            cluster: r.cluster.clone(),
            channel: r.channel.clone(),
            full_repository: r.full_repository,
            status: if own {
                MessageChannelState::Running.keyword().to_string()
            } else {
                channel_state(server, &r.channel)
            },
            definition_type,
            connection_name: r.conname.clone(),
            qmid: r.qmid.clone(),
            suspended: r.suspended,
            rank: r.rank,
            priority: r.priority,
            weight: r.weight,
            network_priority: r.network_priority,
            xmit_q: if own {
                String::new()
            } else {
                engine.cluster_xmit_q_name(&r.channel)
            },
        });
    }
    for (name, (d, clusters)) in manual {
        if confirmed.contains(&name) {
            continue;
        }
        let a = &d.attributes;
        for cluster in clusters {
            out.push(ClusterQmgrStatus {
                name: format!("SYSTEM.TEMPQMGR.{}", a.connection_name.trim()),
                cluster,
                channel: name.clone(),
                full_repository: true,
                status: channel_state(server, &name),
                definition_type: "CLUSSDR",
                connection_name: a.connection_name.trim().to_string(),
                qmid: String::new(),
                suspended: false,
                rank: a.cluster_workload_rank,
                priority: a.cluster_workload_priority,
                weight: a.cluster_workload_weight,
                network_priority: 0,
                xmit_q: engine.cluster_xmit_q_name(&name),
            });
        }
    }
    out
}

/// DISPLAY QCLUSTER: every cluster queue instance known.
pub(crate) fn cluster_queues(server: &Server) -> Vec<ClusterQueueStatus> {
    server
        .engine
        .borrow()
        .cluster_repository()
        .queues()
        .map(|q| ClusterQueueStatus {
            queue: q.queue.clone(),
            qmgr: q.qmgr.clone(),
            cluster: q.cluster.clone(),
            qmid: q.qmid.clone(),
            default_bind: q.default_bind.keyword(),
            put_enabled: q.put_enabled,
            rank: q.rank,
            priority: q.priority,
        })
        .collect()
}

/// The workload algorithm's view of a channel state.
fn preference(state: MessageChannelState) -> ChannelPreference {
    match state {
        MessageChannelState::Inactive | MessageChannelState::Running => ChannelPreference::Ready,
        MessageChannelState::Binding
        | MessageChannelState::Starting
        | MessageChannelState::Stopping => ChannelPreference::Starting,
        MessageChannelState::Retrying => ChannelPreference::Retrying,
        MessageChannelState::Stopped
        | MessageChannelState::Requesting
        | MessageChannelState::Paused => ChannelPreference::Stopped,
    }
}

/// The cluster-senders that should have an agent: every manual CLUSSDR with a CONNAME,
/// and one to every other member known.
fn wanted_senders(server: &Server) -> BTreeSet<String> {
    let engine = server.engine.borrow();
    let manual = engine
        .channels()
        .into_iter()
        .filter(|d| d.channel_type == ChannelType::ClusterSender)
        .filter(|d| !d.attributes.connection_name.trim().is_empty())
        .map(|d| d.name);
    let auto = engine
        .cluster_repository()
        .qmgrs()
        .filter(|r| r.qmgr != server.name && !r.conname.trim().is_empty())
        .map(|r| r.channel.clone());
    manual.chain(auto).collect()
}

/// Gives every cluster-sender that should run an agent waiting for its first message,
/// and tells the engine each member's channel state.
fn ensure_senders(server: &Rc<Server>, channels: &MessageChannels) {
    for name in wanted_senders(server) {
        let Some(def) = sending_definition(server, &name) else {
            continue;
        };
        let agent = channels.agent(&name, ChannelType::ClusterSender);
        let running = agent
            .task
            .borrow()
            .as_ref()
            .is_some_and(|t| !t.is_finished());
        if !running && agent.state() != MessageChannelState::Stopped {
            channels.spawn_agent(server, &def, true);
        }
    }
    let states: Vec<(String, ChannelPreference)> = {
        let engine = server.engine.borrow();
        engine
            .cluster_repository()
            .qmgrs()
            .filter(|r| r.qmgr != server.name)
            .map(|r| {
                let state = channels
                    .existing(&r.channel)
                    .map_or(MessageChannelState::Inactive, |a: Rc<Agent>| a.state());
                (r.qmgr.clone(), preference(state))
            })
            .collect()
    };
    let mut engine = server.engine.borrow_mut();
    for (qmgr, state) in states {
        engine.set_cluster_channel_state(&qmgr, state);
    }
}

/// Where records go: the channel to each destination.
type Destinations = BTreeSet<String>;

/// The channels to the members a record of `cluster` goes to: as a full repository,
/// every member known but `except`; otherwise the full repositories (known ones, and
/// those the manual CLUSSDRs of the cluster point at).
fn destinations(server: &Server, cluster: &str, except: &[&str]) -> Destinations {
    let engine = server.engine.borrow();
    let me = server.name.as_str();
    let full = engine.is_full_repository(cluster);
    let mut out: Destinations = engine
        .cluster_repository()
        .qmgrs()
        .filter(|r| r.cluster == cluster && r.qmgr != me && !except.contains(&r.qmgr.as_str()))
        .filter(|r| full || r.full_repository)
        .map(|r| r.channel.clone())
        .collect();
    let known_channels: BTreeMap<String, String> = engine
        .cluster_repository()
        .qmgrs()
        .map(|r| (r.channel.clone(), r.qmgr.clone()))
        .collect();
    for d in engine.channels() {
        if d.channel_type == ChannelType::ClusterSender
            && !d.attributes.connection_name.trim().is_empty()
            && engine
                .clusters_named(&d.attributes.cluster, &d.attributes.cluster_namelist)
                .iter()
                .any(|c| c == cluster)
        {
            // A manual CLUSSDR to a member already known and excluded stays out.
            let excluded = known_channels
                .get(&d.name)
                .is_some_and(|q| except.contains(&q.as_str()) || q == me);
            if !excluded {
                out.insert(d.name);
            }
        }
    }
    out
}

/// What one round of the repository task sends, by channel.
#[derive(Default)]
struct Outgoing {
    /// Records.
    records: BTreeMap<String, Vec<ClusterRecord>>,
    /// REFRESH CLUSTER requests.
    refresh: BTreeMap<String, Vec<String>>,
    /// Questions about queues, to full repositories.
    queries: BTreeMap<String, Vec<ClusterQuery>>,
    /// Answers to questions, to partial repositories.
    answers: BTreeMap<String, Vec<ClusterQuery>>,
}

/// The repository task's engine connection and open handles.
struct Repository {
    server: Rc<Server>,
    session: EngineSession,
    command_q: Hobj,
    repository_q: Hobj,
    xmit_q: Hobj,
    /// SYSTEM.CLUSTER.TRANSMIT.QUEUE opened to browse and get, for reallocation.
    xmit_q_in: Hobj,
    /// Channels of queue managers whose records expired, to the queue manager: their
    /// reallocatable messages go elsewhere (`cluster_reallocation`).
    departed: BTreeMap<String, String>,
    /// When messages were last looked at for reallocation.
    reallocated_at: std::time::Instant,
    /// The definitions' generation (the catalogue's last ticket) own records were last
    /// published for: they are only looked at again when a definition changed.
    published_for: Option<u64>,
    /// The clusters this queue manager was a full repository of at the last round: one
    /// it has become a full repository of since tells the members it knows what they
    /// are to know, as it tells a member it hears of for the first time.
    full_of: BTreeSet<String>,
}

/// Runs the repository task for as long as the queue manager runs.
pub(super) async fn run_repository(server: Rc<Server>, channels: Rc<MessageChannels>) {
    let mut repository = match Repository::open(&server) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!("the cluster repository task cannot start: {}", e.reason);
            return;
        }
    };
    if let Err(e) = repository.restore().await {
        tracing::warn!("the cluster repository could not be read: {}", e.reason);
    }
    loop {
        let saved = server.engine.borrow().cluster_checkpoint();
        if let Err(e) = repository.tick().await {
            // The round's gets and puts are backed out: so are its changes, and the
            // next round reads the records and publishes the changes again.
            tracing::warn!("cluster repository: {}", e.reason);
            let _ = repository.session.backout().await;
            server.engine.borrow_mut().cluster_roll_back(saved);
            repository.published_for = None;
        }
        ensure_senders(&server, &channels);
        if repository.reallocated_at.elapsed() >= REALLOCATION_INTERVAL {
            repository.reallocated_at = std::time::Instant::now();
            let handles = (repository.xmit_q_in, repository.xmit_q);
            match super::cluster_reallocation::reallocate(
                &server,
                &repository.session,
                handles,
                &channels,
                &repository.departed,
            )
            .await
            {
                Ok(0) => {}
                Ok(n) => tracing::info!("{n} cluster messages reallocated to other instances"),
                Err(e) => {
                    tracing::warn!("cluster reallocation: {}", e.reason);
                    let _ = repository.session.backout().await;
                }
            }
        }
        tokio::time::sleep(TICK).await;
    }
}

impl Repository {
    fn open(server: &Rc<Server>) -> Result<Repository, MqError> {
        let info = ConnectionInfo {
            application_name: "cluster repository".to_string(),
            channel: String::new(),
            connection_name: String::new(),
            user_id: server.administrators.process_user().to_string(),
            pid: Some(std::process::id()),
        };
        let session = EngineSession::connect(server, info)?;
        let queue = |name: &str| {
            ObjectDescriptor::queue(name).map_err(|_| MqError::from(ReasonCode::ObjectNameError))
        };
        let command_q = session.open(
            &queue(CLUSTER_COMMAND_QUEUE)?,
            OpenOptions::INPUT_SHARED | OpenOptions::FAIL_IF_QUIESCING,
        )?;
        let repository_q = session.open(
            &queue(CLUSTER_REPOSITORY_QUEUE)?,
            OpenOptions::INPUT_SHARED
                | OpenOptions::BROWSE
                | OpenOptions::OUTPUT
                | OpenOptions::FAIL_IF_QUIESCING,
        )?;
        let xmit_q = session.open(
            &queue(CLUSTER_TRANSMIT_QUEUE)?,
            OpenOptions::OUTPUT | OpenOptions::FAIL_IF_QUIESCING,
        )?;
        let xmit_q_in = session.open(
            &queue(CLUSTER_TRANSMIT_QUEUE)?,
            OpenOptions::INPUT_SHARED | OpenOptions::BROWSE | OpenOptions::FAIL_IF_QUIESCING,
        )?;
        Ok(Repository {
            server: server.clone(),
            session,
            command_q,
            repository_q,
            xmit_q,
            xmit_q_in,
            departed: BTreeMap::new(),
            reallocated_at: std::time::Instant::now(),
            published_for: None,
            full_of: BTreeSet::new(),
        })
    }

    /// Loads the saved repository (the newest message on the repository queue).
    async fn restore(&mut self) -> Result<(), MqError> {
        let gmo = GetOptions {
            options: GetOptionFlags::BROWSE_FIRST | GetOptionFlags::NO_SYNCPOINT,
            wait_interval: 0,
            match_options: MatchOptions::empty(),
        };
        let mut newest: Option<RepositoryMessage> = None;
        let mut options = gmo;
        loop {
            match self
                .session
                .get(
                    self.repository_q,
                    &MessageDescriptor::default(),
                    &options,
                    MAX_RECORD_MESSAGE,
                )
                .await
            {
                Ok(got) => {
                    if let Ok(m) = RepositoryMessage::decode(&got.data) {
                        newest = Some(m);
                    }
                }
                Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(e.error),
            }
            options.options = GetOptionFlags::BROWSE_NEXT | GetOptionFlags::NO_SYNCPOINT;
        }
        if let Some(m) = newest {
            let mut engine = self.server.engine.borrow_mut();
            engine.cluster_restore(m.records);
            engine.cluster_restore_subscriptions(m.subscriptions);
        }
        // What it was a full repository of when it stopped: no news to its members.
        self.full_of = self
            .server
            .engine
            .borrow()
            .full_repository_clusters()
            .into_iter()
            .collect();
        Ok(())
    }

    /// One round: what arrived, what changed here, saved and sent in one unit of work.
    async fn tick(&mut self) -> Result<(), MqError> {
        let mut dirty = false;
        let mut out = Outgoing::default();
        let me = self.server.name.clone();
        loop {
            let gmo = GetOptions {
                options: GetOptionFlags::SYNCPOINT | GetOptionFlags::FAIL_IF_QUIESCING,
                wait_interval: 0,
                match_options: MatchOptions::empty(),
            };
            let got = match self
                .session
                .get(
                    self.command_q,
                    &MessageDescriptor::default(),
                    &gmo,
                    MAX_RECORD_MESSAGE,
                )
                .await
            {
                Ok(got) => got,
                Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(e.error),
            };
            dirty = true;
            let message = match RepositoryMessage::decode(&got.data) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!("a message on {CLUSTER_COMMAND_QUEUE} was discarded: {e}");
                    continue;
                }
            };
            self.received(message, &mut out);
        }
        let now_ms = clock::now().0;
        // Records not renewed for 30 days are forgotten.
        let expired = self.server.engine.borrow_mut().cluster_expire(now_ms);
        for r in &expired {
            dirty = true;
            if let ClusterRecord::QueueManager(q) = r {
                self.departed.insert(q.channel.clone(), q.qmgr.clone());
            }
            tracing::info!(
                "cluster {}: the record of {} expired (not renewed for 30 days)",
                r.cluster(),
                r.owner()
            );
        }
        let generation = self.server.catalogue.last_ticket();
        let (pending, renew) = {
            let engine = self.server.engine.borrow();
            (
                engine.cluster_repository().has_pending(),
                engine.cluster_republish_due(now_ms),
            )
        };
        let own = if pending || renew || self.published_for != Some(generation) {
            self.published_for = Some(generation);
            self.server.engine.borrow_mut().cluster_publish(now_ms)
        } else {
            Vec::new()
        };
        for record in own {
            dirty = true;
            for channel in self.audience(&record, &[]) {
                out.records.entry(channel).or_default().push(record.clone());
            }
        }
        let refresh = self.server.engine.borrow_mut().cluster_take_refresh();
        for cluster in refresh {
            dirty = true;
            let own: Vec<ClusterRecord> = self
                .server
                .engine
                .borrow()
                .cluster_repository()
                .records_of(&me)
                .into_iter()
                .filter(|r| r.cluster() == cluster)
                .collect();
            for channel in destinations(&self.server, &cluster, &[]) {
                out.records
                    .entry(channel.clone())
                    .or_default()
                    .extend(own.clone());
                out.refresh
                    .entry(channel)
                    .or_default()
                    .push(cluster.clone());
            }
        }
        // Newly a full repository (REPOS, REPOSNL): the members known are told.
        let full_now: BTreeSet<String> = self
            .server
            .engine
            .borrow()
            .full_repository_clusters()
            .into_iter()
            .collect();
        for cluster in full_now.difference(&self.full_of) {
            let members: Vec<(String, String)> = self
                .server
                .engine
                .borrow()
                .cluster_repository()
                .qmgrs()
                .filter(|r| r.cluster == *cluster && r.qmgr != me)
                .map(|r| (r.qmgr.clone(), r.channel.clone()))
                .collect();
            for (qmgr, channel) in members {
                dirty = true;
                let records = self
                    .server
                    .engine
                    .borrow()
                    .cluster_join_records(cluster, &qmgr);
                out.records.entry(channel).or_default().extend(records);
            }
        }
        self.full_of = full_now;
        // Questions from MQOPEN go to the full repositories of their cluster.
        let queries = self.server.engine.borrow_mut().cluster_take_queries();
        for q in queries {
            dirty = true;
            for channel in destinations(&self.server, &q.cluster, &[]) {
                out.queries.entry(channel).or_default().push(q.clone());
            }
        }
        if !dirty {
            return Ok(());
        }
        let channels: BTreeSet<String> = out
            .records
            .keys()
            .chain(out.refresh.keys())
            .chain(out.queries.keys())
            .chain(out.answers.keys())
            .cloned()
            .collect();
        for channel in channels {
            let mut message =
                RepositoryMessage::new(&me, out.records.remove(&channel).unwrap_or_default());
            message.refresh = out.refresh.remove(&channel).unwrap_or_default();
            message.queries = out.queries.remove(&channel).unwrap_or_default();
            message.answers = out.answers.remove(&channel).unwrap_or_default();
            self.send(&channel, message).await?;
        }
        self.save().await?;
        self.session.commit().await
    }

    /// A repository message from another member: its records merged, its questions
    /// answered, and on a full repository what changed passed on.
    fn received(&self, message: RepositoryMessage, out: &mut Outgoing) {
        let known_before: BTreeSet<(String, String)> = {
            let engine = self.server.engine.borrow();
            engine
                .cluster_repository()
                .qmgrs()
                .map(|r| (r.cluster.clone(), r.qmgr.clone()))
                .collect()
        };
        let changed = self
            .server
            .engine
            .borrow_mut()
            .cluster_apply(message.records);
        if !message.answers.is_empty() {
            self.server
                .engine
                .borrow_mut()
                .cluster_answered(&message.answers);
        }
        let full_of = self.server.engine.borrow().full_repository_clusters();
        // The channel back to the sender, in each cluster.
        let back = |cluster: &str| -> Option<String> {
            self.server
                .engine
                .borrow()
                .cluster_repository()
                .qmgr(cluster, &message.sender)
                .map(|r| r.channel.clone())
        };
        // REFRESH CLUSTER at the sender: tell it again what it is to know.
        for cluster in message.refresh.iter().filter(|c| full_of.contains(c)) {
            let Some(channel) = back(cluster) else {
                continue;
            };
            let records = self
                .server
                .engine
                .borrow()
                .cluster_join_records(cluster, &message.sender);
            out.records.entry(channel).or_default().extend(records);
        }
        // Questions of a partial repository: subscribe it and answer.
        if !message.queries.is_empty() {
            let (records, answers) = self
                .server
                .engine
                .borrow_mut()
                .cluster_answer(&message.sender, &message.queries);
            for a in answers {
                let Some(channel) = back(&a.cluster) else {
                    continue;
                };
                let theirs: Vec<ClusterRecord> = records
                    .iter()
                    .filter(|r| r.cluster() == a.cluster)
                    .cloned()
                    .collect();
                let entry = out.records.entry(channel.clone()).or_default();
                for r in theirs {
                    if !entry.contains(&r) {
                        entry.push(r);
                    }
                }
                out.answers.entry(channel).or_default().push(a);
            }
        }
        for record in &changed {
            if !full_of.iter().any(|c| c == record.cluster()) {
                continue;
            }
            // A full repository passes a newer record on to who is to know it.
            let except = [record.owner(), message.sender.as_str()];
            for channel in self.audience(record, &except) {
                out.records.entry(channel).or_default().push(record.clone());
            }
            // And tells a member it hears of for the first time what it is to know.
            if let ClusterRecord::QueueManager(q) = record {
                if !q.removed && !known_before.contains(&(q.cluster.clone(), q.qmgr.clone())) {
                    let records = self
                        .server
                        .engine
                        .borrow()
                        .cluster_join_records(&q.cluster, &q.qmgr);
                    out.records
                        .entry(q.channel.clone())
                        .or_default()
                        .extend(records);
                }
            }
        }
    }

    /// The channels `record` goes out on: on a full repository of its cluster, to the
    /// members that are to know it (`ferry_engine`'s `cluster_audience`) but `except`;
    /// on a partial repository, to the full repositories.
    fn audience(&self, record: &ClusterRecord, except: &[&str]) -> Destinations {
        let engine = self.server.engine.borrow();
        let cluster = record.cluster();
        if !engine.is_full_repository(cluster) {
            drop(engine);
            return destinations(&self.server, cluster, except);
        }
        let repository = engine.cluster_repository();
        let mut out: Destinations = engine
            .cluster_audience(record)
            .into_iter()
            .filter(|q| !except.contains(&q.as_str()))
            .filter_map(|q| repository.qmgr(cluster, &q).map(|r| r.channel.clone()))
            .collect();
        drop(engine);
        // The manual CLUSSDRs to full repositories not heard from yet.
        for channel in destinations(&self.server, cluster, except) {
            let known = self
                .server
                .engine
                .borrow()
                .cluster_repository()
                .qmgrs()
                .any(|r| r.channel == channel);
            if !known {
                out.insert(channel);
            }
        }
        out
    }

    /// Puts `message` on the cluster transmission queue for `channel`, in the unit of
    /// work: to the partner's SYSTEM.CLUSTER.COMMAND.QUEUE (the header names no queue
    /// manager: a cluster channel ends at the queue manager it serves).
    async fn send(&self, channel: &str, message: RepositoryMessage) -> Result<(), MqError> {
        let inner = MessageDescriptor {
            persistence: persistence::PERSISTENT,
            msg_id: super::new_luwid()
                .to_le_bytes()
                .repeat(3)
                .try_into()
                .unwrap_or([0; 24]),
            ..MessageDescriptor::default()
        };
        let header = TransmissionHeader {
            remote_q_name: FixedStr::truncating(CLUSTER_COMMAND_QUEUE),
            remote_qmgr_name: FixedStr::truncating(""),
            md: inner,
        };
        let body = message.encode();
        let mut data = Vec::with_capacity(header.encoded_len() + body.len());
        header.encode(&mut data);
        data.extend_from_slice(&body);
        let mut md = MessageDescriptor {
            format: FORMAT_XMIT_Q_HEADER,
            persistence: persistence::PERSISTENT,
            correl_id: channel_correl_id(channel),
            ..MessageDescriptor::default()
        };
        let pmo = PutOptions::new(PutOptionFlags::SYNCPOINT | PutOptionFlags::NEW_MSG_ID);
        // The channel's transmission queue: SYSTEM.CLUSTER.TRANSMIT.QUEUE, or its own
        // with DEFCLXQ(CHANNEL) once it switched.
        let xmit_q = self.server.engine.borrow().cluster_xmit_q_name(channel);
        if xmit_q == CLUSTER_TRANSMIT_QUEUE {
            return self
                .session
                .put(self.xmit_q, &mut md, &pmo, Bytes::from(data), Bytes::new())
                .await
                .map(|_| ());
        }
        let od = ObjectDescriptor::queue(&xmit_q)
            .map_err(|_| MqError::from(ReasonCode::ObjectNameError))?;
        self.session
            .put1(&od, &mut md, &pmo, Bytes::from(data), Bytes::new())
            .await
            .map(|_| ())
    }

    /// Replaces the saved repository with what the engine knows now, in the unit of work.
    async fn save(&self) -> Result<(), MqError> {
        let gmo = GetOptions {
            options: GetOptionFlags::SYNCPOINT | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
            wait_interval: 0,
            match_options: MatchOptions::empty(),
        };
        loop {
            match self
                .session
                .get(self.repository_q, &MessageDescriptor::default(), &gmo, 0)
                .await
            {
                Ok(_) => {}
                Err(e) if e.error.reason == ReasonCode::TruncatedMsgAccepted => {}
                Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(e.error),
            }
        }
        let (records, subscriptions) = {
            let engine = self.server.engine.borrow();
            let repository = engine.cluster_repository();
            (repository.records(), repository.subscriptions())
        };
        let mut message = RepositoryMessage::new(&self.server.name, records);
        message.subscriptions = subscriptions;
        let body = message.encode();
        let mut md = MessageDescriptor {
            persistence: persistence::PERSISTENT,
            ..MessageDescriptor::default()
        };
        let pmo = PutOptions::new(PutOptionFlags::SYNCPOINT | PutOptionFlags::NEW_MSG_ID);
        self.session
            .put(
                self.repository_q,
                &mut md,
                &pmo,
                Bytes::from(body),
                Bytes::new(),
            )
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receiver_instances_are_per_partner_for_clusrcvr_only() {
        let a = receiver_instance("TO.QM1", ChannelType::ClusterReceiver, "QM2");
        let b = receiver_instance("TO.QM1", ChannelType::ClusterReceiver, "QM3");
        assert_ne!(a, b);
        assert_eq!(a.len(), 23);
        assert_eq!(
            a,
            receiver_instance("TO.QM1", ChannelType::ClusterReceiver, "QM2")
        );
        assert_eq!(
            receiver_instance("QM2.TO.QM1", ChannelType::Receiver, "QM2"),
            "QM2.TO.QM1"
        );
    }
}
