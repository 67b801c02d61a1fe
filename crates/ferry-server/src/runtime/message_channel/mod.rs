//! Message channels: the agents that move messages between queue managers.
//!
//! A message channel has two ends with one name. The **sending** end (SDR, or SVR with a
//! CONNAME) drains its transmission queue: it connects to the partner's listener, agrees
//! on the channel's values, and sends each message in batches that the receiving end
//! confirms ([`sender`]). The **receiving** end (RCVR) is a conversation the native
//! listener hands over when a channel hello arrives: it puts each message where its
//! transmission header says, and commits each batch before confirming it
//! ([`receiver`]). A **requester** (RQSTR) calls a **server** (SVR) instead, which then
//! sends over that connection ([`requester`]). Assured delivery rests on the synchronisation records both ends keep
//! on SYSTEM.CHANNEL.SYNCQ ([`sync_record`]); each agent reaches the engine through a
//! connection of its own ([`engine_session`]). PING, RESET and RESOLVE CHANNEL are
//! [`operations`]. The channel initiator ([`initiator`]) starts sending channels from the
//! trigger messages their transmission queues put on SYSTEM.CHANNEL.INITQ.
//!
//! [`MessageChannels`] is what START, STOP, RESET and RESOLVE CHANNEL and DISPLAY
//! CHSTATUS reach (through `endpoints`): one [`Agent`] per channel that has run, holding
//! the status MQ shows. The wire protocol is `ferry_wire::channel` (docs/protocol.md).

mod cluster;
mod cluster_reallocation;
mod cluster_xmit_switch;
mod dead_letter;
mod engine_session;
mod initiator;
mod io;
mod operations;
mod receiver;
mod requester;
mod sender;
mod sync_record;

pub(crate) use cluster::{cluster_qmgrs, cluster_queues};
pub(crate) use receiver::{serve_partner, Caller};

use crate::messages;
use crate::runtime::clock;
use crate::runtime::endpoints::{ChannelEndpoints, ChannelWork};
use crate::runtime::server::Server;
use engine_session::EngineSession;
use ferry_objects::channel::{ChannelOperation, ChannelType};
use ferry_objects::status::{ChannelStatus, MessageChannelState, MessageChannelStatus};
use ferry_objects::{AdminError, ChannelDefinition, StopMode};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};
use tokio::sync::Notify;
use tokio::task::AbortHandle;

/// The agent of one message channel: its status, and how a stop reaches it.
pub(crate) struct Agent {
    /// The channel's name.
    pub name: String,
    /// Its type.
    pub channel_type: ChannelType,
    /// What DISPLAY CHSTATUS shows.
    pub status: RefCell<MessageChannelStatus>,
    /// STOP CHANNEL asked for this, and the agent has not ended yet.
    stop: Cell<Option<StopMode>>,
    /// Wakes the agent when a stop is asked.
    pub stop_wake: Notify,
    /// The agent's task, while it runs.
    task: RefCell<Option<AbortHandle>>,
    /// The agent's engine connection, while it has one: ended at once by a forced stop
    /// or an adopting conversation, so its unit of work is backed out before anything
    /// else reads the synchronisation record.
    session: RefCell<Option<Rc<EngineSession>>>,
    /// RESET CHANNEL asked the next start to tell the partner this sequence number.
    pub reset_seq: Cell<Option<u32>>,
    /// Counts the receiving conversations: only the latest may change the status.
    generation: Cell<u64>,
}

impl Agent {
    fn new(name: &str, channel_type: ChannelType) -> Rc<Agent> {
        Rc::new(Agent {
            name: name.to_string(),
            channel_type,
            status: RefCell::new(MessageChannelStatus::new(MessageChannelState::Inactive)),
            stop: Cell::new(None),
            stop_wake: Notify::new(),
            task: RefCell::new(None),
            session: RefCell::new(None),
            reset_seq: Cell::new(None),
            generation: Cell::new(0),
        })
    }

    /// A receiving conversation takes the channel over: the one before it (if still
    /// running) is ended at once, its batch backed out, and told it is superseded.
    /// Returns the new conversation's generation.
    pub fn adopt(&self) -> u64 {
        self.end_now();
        let g = self.generation.get() + 1;
        self.generation.set(g);
        self.stop_wake.notify_one();
        g
    }

    /// The generation of the channel's current conversation.
    pub fn generation(&self) -> u64 {
        self.generation.get()
    }

    /// Whether the conversation of generation `g` is still the channel's.
    pub fn is_current(&self, g: u64) -> bool {
        self.generation.get() == g
    }

    /// The channel's state now.
    pub fn state(&self) -> MessageChannelState {
        self.status.borrow().state
    }

    /// Moves to `state` (a substate belongs to the state it was set in).
    pub fn set_state(&self, state: MessageChannelState) {
        let mut s = self.status.borrow_mut();
        s.state = state;
        s.substate.clear();
        if !state.is_active() {
            s.stop_requested = false;
            s.in_doubt = false;
            s.current_messages = 0;
        }
    }

    /// What the agent does now (SUBSTATE).
    pub fn set_substate(&self, substate: &str) {
        let mut s = self.status.borrow_mut();
        s.substate.clear();
        s.substate.push_str(substate);
    }

    /// The stop asked for, if any.
    pub fn stop_requested(&self) -> Option<StopMode> {
        self.stop.get()
    }

    /// COMPHDR/COMPMSG's second values, COMPRATE and COMPTIME after one message was
    /// compressed or expanded (`flow`), `meter` having recorded it.
    pub fn show_compression(
        &self,
        flow: &ferry_wire::FlowSize,
        meter: &ferry_wire::CompressionMeter,
    ) {
        let mut s = self.status.borrow_mut();
        s.compression.header.1 = flow.header;
        s.compression.message.1 = flow.message;
        s.compression.rate = meter.rate();
        s.compression.time = meter.time();
    }

    /// The agent's engine connection is `session` (or none).
    pub fn hold_session(&self, session: Option<Rc<EngineSession>>) {
        *self.session.borrow_mut() = session;
    }

    /// Ends the agent now: its engine connection first (backing out a batch in
    /// progress), then its task.
    fn end_now(&self) {
        if let Some(session) = self.session.borrow_mut().take() {
            session.end(false);
        }
        if let Some(task) = self.task.borrow_mut().take() {
            task.abort();
        }
    }

    /// The record DISPLAY CHSTATUS shows.
    fn channel_status(&self) -> ChannelStatus {
        let status = self.status.borrow().clone();
        let mut c = ChannelStatus::new(
            self.name.clone(),
            self.channel_type,
            status.state.is_active(),
            0,
        );
        c.started_ms = status.started_ms;
        c.messages_sent = status.messages;
        c.bytes_sent = status.bytes_sent;
        c.bytes_received = status.bytes_received;
        c.last_message_ms = status.last_message_ms;
        c.message = Some(status);
        c
    }
}

/// Every message channel's agent, and how START and STOP CHANNEL reach them.
pub struct MessageChannels {
    server: Weak<Server>,
    /// Itself, for the tasks it starts.
    me: Weak<MessageChannels>,
    agents: RefCell<BTreeMap<String, Rc<Agent>>>,
    /// The cluster repository task, while it runs ([`cluster`]).
    repository: RefCell<Option<AbortHandle>>,
    /// The channel initiator, while it runs ([`initiator`]).
    initiator: RefCell<Option<AbortHandle>>,
}

impl MessageChannels {
    /// No agent yet, for the server `server` will point at.
    pub fn new(server: &Weak<Server>) -> Rc<Self> {
        Rc::new_cyclic(|me| MessageChannels {
            server: server.clone(),
            me: me.clone(),
            agents: RefCell::new(BTreeMap::new()),
            repository: RefCell::new(None),
            initiator: RefCell::new(None),
        })
    }

    fn server(&self) -> Result<Rc<Server>, AdminError> {
        self.server.upgrade().ok_or_else(|| AdminError::Failed {
            reason: ferry_mqi::ReasonCode::QMgrStopping,
            text: "the queue manager is ending".to_string(),
        })
    }

    /// The agent of channel `name` (made on first use).
    pub(crate) fn agent(&self, name: &str, channel_type: ChannelType) -> Rc<Agent> {
        let mut agents = self.agents.borrow_mut();
        let agent = agents
            .entry(name.to_string())
            .or_insert_with(|| Agent::new(name, channel_type));
        if agent.channel_type != channel_type {
            // Redefined with another type: a fresh agent.
            *agent = Agent::new(name, channel_type);
        }
        agent.clone()
    }

    /// The agent of channel `name`, if it has one.
    pub(crate) fn existing(&self, name: &str) -> Option<Rc<Agent>> {
        self.agents.borrow().get(name).cloned()
    }

    /// The agent of one instance of receiving channel `name`: the channel itself, or for
    /// a cluster-receiver one partner's conversations (`cluster::receiver_instance`).
    pub(crate) fn instance_agent(
        &self,
        instance: &str,
        name: &str,
        channel_type: ChannelType,
    ) -> Rc<Agent> {
        if instance == name {
            return self.agent(name, channel_type);
        }
        let mut agents = self.agents.borrow_mut();
        let agent = agents
            .entry(instance.to_string())
            .or_insert_with(|| Agent::new(name, channel_type));
        agent.clone()
    }

    /// Starts the sending agent of `def` now (START CHANNEL, the channel initiator).
    fn spawn_sender(&self, server: &Rc<Server>, def: &ChannelDefinition) {
        self.spawn_agent(server, def, false);
    }

    /// Starts the sending agent of `def`; `armed`: it first waits, INACTIVE, for a
    /// message on its transmission queue (a cluster-sender, `cluster`).
    fn spawn_agent(&self, server: &Rc<Server>, def: &ChannelDefinition, armed: bool) {
        let agent = self.agent(&def.name, def.channel_type);
        agent.stop.set(None);
        agent.set_state(if armed {
            MessageChannelState::Inactive
        } else {
            MessageChannelState::Starting
        });
        let task = tokio::task::spawn_local(sender::run(server.clone(), agent.clone(), armed));
        let old = agent.task.borrow_mut().replace(task.abort_handle());
        if let Some(old) = old {
            old.abort();
        }
    }
}

/// The definition of channel `name`, if it is a message channel.
fn definition(server: &Server, name: &str) -> Result<ChannelDefinition, AdminError> {
    server
        .engine
        .borrow()
        .channel(name)
        .filter(|d| d.channel_type.is_message_channel())
        .ok_or_else(|| AdminError::NotFound {
            name: name.to_string(),
        })
}

/// Whether the sending channel `def` waits, INACTIVE, for a message on its
/// transmission queue after DISCINT ended it: cluster-senders, which share
/// SYSTEM.CLUSTER.TRANSMIT.QUEUE and start on their own messages there (`cluster`).
/// Other channels end INACTIVE, and the channel initiator starts them again on the
/// next trigger message ([`initiator`]).
fn waits_for_messages(def: &ChannelDefinition) -> bool {
    def.channel_type == ChannelType::ClusterSender
}

impl ChannelEndpoints for MessageChannels {
    fn serves(&self, kind: ChannelType) -> bool {
        kind.is_message_channel()
    }

    /// START CHANNEL: a sending channel connects to its partner now; a receiving channel
    /// that was stopped lets its partner in again.
    fn start(&self, name: &str) -> Result<(), AdminError> {
        let server = self.server()?;
        let def = definition(&server, name)?;
        match def.channel_type {
            ChannelType::Server if def.attributes.connection_name.trim().is_empty() => {
                // Started by its requester's call: START only lets the call in again.
                let agent = self.agent(name, def.channel_type);
                agent.stop.set(None);
                if agent.state() == MessageChannelState::Stopped {
                    agent.set_state(MessageChannelState::Inactive);
                }
                Ok(())
            }
            ChannelType::Sender
            | ChannelType::Server
            | ChannelType::ClusterSender
            | ChannelType::Requester => {
                let agent = self.agent(name, def.channel_type);
                if agent.state().is_active() && agent.task.borrow().is_some() {
                    return Err(AdminError::Failed {
                        reason: ferry_mqi::ReasonCode::ObjectInUse,
                        text: format!("channel {name} is in use ({})", agent.state().keyword()),
                    });
                }
                let def = cluster::sending_definition(&server, name).unwrap_or(def);
                self.spawn_sender(&server, &def);
                Ok(())
            }
            ChannelType::Receiver | ChannelType::ClusterReceiver => {
                let agent = self.agent(name, def.channel_type);
                agent.stop.set(None);
                if agent.state() == MessageChannelState::Stopped {
                    agent.set_state(MessageChannelState::Inactive);
                }
                Ok(())
            }
            ChannelType::Svrconn | ChannelType::Amqp => Err(AdminError::NotFound {
                name: name.to_string(),
            }),
        }
    }

    /// STOP CHANNEL: QUIESCE ends after the batch in progress; FORCE and TERMINATE end
    /// at once, backing the batch out (the sending end resolves it at its next start).
    fn stop(&self, name: &str, mode: StopMode) -> Result<(), AdminError> {
        let agent =
            self.agents
                .borrow()
                .get(name)
                .cloned()
                .ok_or_else(|| AdminError::NotFound {
                    name: name.to_string(),
                })?;
        agent.stop.set(Some(mode));
        agent.status.borrow_mut().stop_requested = true;
        match mode {
            StopMode::Quiesce => agent.stop_wake.notify_one(),
            StopMode::Force | StopMode::Terminate => {
                agent.end_now();
                agent.stop_wake.notify_one();
                agent.set_state(MessageChannelState::Stopped);
                if let Ok(server) = self.server() {
                    server
                        .error_log
                        .borrow_mut()
                        .write(&messages::CHANNEL_ENDED, &[&name, &"STOP CHANNEL"]);
                }
            }
        }
        Ok(())
    }

    fn status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
        self.agents
            .borrow()
            .values()
            .filter(|a| matches(&a.name))
            .filter(|a| {
                a.state() != MessageChannelState::Inactive || a.status.borrow().started_ms.is_some()
            })
            .map(|a| a.channel_status())
            .collect()
    }

    fn listening_ports(&self) -> Vec<u16> {
        Vec::new()
    }

    /// PING, RESET and RESOLVE CHANNEL ([`operations`]).
    fn operate(&self, name: &str, operation: ChannelOperation) -> ChannelWork {
        operations::run(self, name, operation)
    }

    /// Starts the channel initiator (which, opening SYSTEM.CHANNEL.INITQ, makes every
    /// triggered transmission queue holding messages trigger: their channels start) and
    /// the cluster repository task (which arms the cluster-senders).
    fn start_all(&self) -> Vec<String> {
        let Ok(server) = self.server() else {
            return Vec::new();
        };
        if let Some(me) = self.me.upgrade() {
            let task = tokio::task::spawn_local(initiator::run(server.clone(), me));
            if let Some(old) = self.initiator.borrow_mut().replace(task.abort_handle()) {
                old.abort();
            }
        }
        if let Some(me) = self.me.upgrade() {
            let task = tokio::task::spawn_local(cluster::run_repository(server.clone(), me));
            if let Some(old) = self.repository.borrow_mut().replace(task.abort_handle()) {
                old.abort();
            }
        }
        Vec::new()
    }

    fn stop_all(&self, why: &str) {
        if let Some(task) = self.repository.borrow_mut().take() {
            task.abort();
        }
        if let Some(task) = self.initiator.borrow_mut().take() {
            task.abort();
        }
        let agents: Vec<Rc<Agent>> = self.agents.borrow().values().cloned().collect();
        for agent in agents {
            if agent.state().is_active() || agent.task.borrow().is_some() {
                agent.end_now();
                if agent.state().is_active() {
                    if let Ok(server) = self.server() {
                        server
                            .error_log
                            .borrow_mut()
                            .write(&messages::CHANNEL_ENDED, &[&agent.name, &why]);
                    }
                }
                agent.set_state(MessageChannelState::Inactive);
            }
        }
    }
}

/// A fresh logical unit of work id: unique for the life of the channel (time and a
/// counter, mixed with randomness so two queue managers never collide).
pub(crate) fn new_luwid() -> u64 {
    thread_local! {
        static NEXT: Cell<u64> = const { Cell::new(0) };
    }
    let salt = NEXT.with(|n| {
        if n.get() == 0 {
            let mut b = [0u8; 8];
            // Without randomness the clock alone still orders the batches.
            let _ = getrandom::fill(&mut b);
            n.set(u64::from_le_bytes(b) | 1);
        }
        let v = n.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        n.set(v);
        v
    });
    match (clock::now().0 << 20) ^ salt {
        0 => 1,
        id => id,
    }
}
