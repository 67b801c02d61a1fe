//! SVRCONN channels: the native protocol's client sockets as channel instances.
//!
//! Every client socket over TCP is an instance of the SVRCONN channel its hello names,
//! from accept to close. [`Svrconns`] keeps them for MAXINST, MAXINSTC and MaxChannels,
//! for DISPLAY CHSTATUS (through [`SvrconnChannels`], the command server's handle) and
//! for the queue manager's immediate stop. It belongs to the native protocol; the server
//! holds none of it.

use super::socket::{SocketShared, Transport};
use crate::messages;
use crate::runtime::endpoints::{self, ChannelEndpoints};
use crate::runtime::server::Server;
use ferry_engine::ConnId;
use ferry_mqi::ReasonCode;
use ferry_objects::channel::ChannelType;
use ferry_objects::status::{ChannelInstanceStatus, ChannelStatus};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

/// The native protocol's client sockets and channel instances, shared by its listeners,
/// its sockets and its [`SvrconnChannels`].
#[derive(Default)]
pub struct Svrconns {
    /// SVRCONN channel instances (client sockets over TCP) from accept to close, in
    /// accept order: MAXINST and MAXINSTC count them.
    instances: RefCell<BTreeMap<u64, Rc<ChannelInstance>>>,
    /// The id of the next channel instance.
    next_instance: Cell<u64>,
    /// Client sockets admitted on a channel, for MaxChannels.
    admitted: Cell<u32>,
    /// Every socket, client or bindings, for closing them all at an immediate stop.
    sockets: RefCell<Vec<Weak<SocketShared>>>,
    /// Where a socket that opens with a channel hello (another queue manager's message
    /// channel) is handed.
    partners: std::cell::OnceCell<Rc<crate::runtime::message_channel::MessageChannels>>,
}

impl Svrconns {
    /// Sockets opening with a channel hello go to `channels` from now on.
    pub fn hand_channels_to(&self, channels: Rc<crate::runtime::message_channel::MessageChannels>) {
        let _ = self.partners.set(channels);
    }

    /// Where channel conversations go, once set.
    pub(super) fn partners(&self) -> Option<Rc<crate::runtime::message_channel::MessageChannels>> {
        self.partners.get().cloned()
    }

    /// Client sockets admitted on a channel and not yet closed (MaxChannels counts them).
    pub(super) fn admitted(&self) -> u32 {
        self.admitted.get()
    }

    /// Registers a socket for an immediate stop.
    pub(super) fn register_socket(&self, s: &Rc<SocketShared>) {
        let mut sockets = self.sockets.borrow_mut();
        sockets.retain(|w| w.strong_count() > 0);
        sockets.push(Rc::downgrade(s));
    }

    /// The queue manager stops at once: every conversation is backed out and every
    /// socket told why (2162 MQRC_Q_MGR_STOPPING) and closed.
    pub fn end_immediately(&self, server: &Rc<Server>) {
        let sockets: Vec<_> = self
            .sockets
            .borrow()
            .iter()
            .filter_map(Weak::upgrade)
            .collect();
        for s in &sockets {
            let convs: Vec<ConnId> = s
                .conversations
                .borrow_mut()
                .drain()
                .map(|(_, c)| c)
                .collect();
            for conn in convs {
                // Nobody is told: the socket closes.
                let _ = super::dispatch::end_conversation(server, s, conn, false);
            }
            s.close_with(ReasonCode::QMgrStopping, "the queue manager is stopping");
        }
    }

    /// Whether admitting one more instance of channel `name` from `peer` would pass its
    /// MAXINST or MAXINSTC: the message to log, the attribute and its value, if so.
    /// Instances are the sockets whose hello this channel admitted, handshaking or running.
    pub(super) fn instances_exceeded(
        &self,
        name: &str,
        peer: &str,
        a: &ferry_objects::ChannelAttributes,
    ) -> Option<(&'static messages::Message, &'static str, i32)> {
        let (mut on_channel, mut from_peer) = (0i64, 0i64);
        for i in self.instances.borrow().values() {
            if *i.channel.borrow() == name {
                on_channel += 1;
                if i.peer == peer {
                    from_peer += 1;
                }
            }
        }
        if on_channel >= i64::from(a.max_instances) {
            return Some((&messages::MAX_INSTANCES, "MAXINST", a.max_instances));
        }
        if from_peer >= i64::from(a.max_instances_per_client) {
            return Some((
                &messages::MAX_INSTANCES_PER_CLIENT,
                "MAXINSTC",
                a.max_instances_per_client,
            ));
        }
        None
    }
}

/// A client socket on a SVRCONN channel, from accept to close (bindings sockets are not
/// channel instances): MAXINST and MAXINSTC count the ones whose hello was admitted, and
/// DISPLAY CHSTATUS shows every one (see [`channel_status`]).
#[derive(Debug)]
pub struct ChannelInstance {
    /// The client's address (CONNAME).
    pub peer: String,
    /// When it was accepted, ms since epoch (CHSTADA/CHSTATI).
    pub started_ms: u64,
    /// The channel its hello named, once admitted; empty before.
    pub channel: RefCell<String>,
    /// The application name of its hello (RAPPLTAG).
    pub appl_name: RefCell<String>,
    /// The socket once the hello is admitted: conversations, negotiated values, counters.
    pub socket: RefCell<Weak<SocketShared>>,
}

impl ChannelInstance {
    /// Its DISPLAY CHSTATUS record.
    fn status(&self) -> ChannelInstanceStatus {
        let mut st = ChannelInstanceStatus {
            connection_name: self.peer.clone(),
            remote_application: self.appl_name.borrow().clone(),
            started_ms: self.started_ms,
            ..ChannelInstanceStatus::default()
        };
        if let Some(s) = self.socket.borrow().upgrade() {
            st.running = s.connected.get();
            st.current_conversations =
                u32::try_from(s.conversations.borrow().len()).unwrap_or(u32::MAX);
            st.max_conversations = s.negotiated.sharecnv;
            st.heartbeat_interval = s.negotiated.heartbeat_interval;
            st.max_msg_length = s.negotiated.max_msg_length;
            st.calls = s.calls.get();
            st.bytes_sent = s.bytes_sent.get();
            st.bytes_received = s.bytes_received.get();
            st.last_call_ms = s.last_call_ms.get();
            if let Transport::Tcp { tls: Some(tls), .. } = &s.transport {
                st.tls = tls.status();
            }
            let agreed = s.negotiated.compression;
            st.compression.header = (agreed.header, agreed.header);
            st.compression.message = (agreed.message, agreed.message);
            if let Some(c) = &s.compression {
                let c = c.borrow();
                st.compression.header.1 = c.last_sent.0;
                st.compression.message.1 = c.last_sent.1;
                st.compression.rate = c.meter.rate();
                st.compression.time = c.meter.time();
            }
        }
        st
    }
}

/// DISPLAY CHSTATUS of SVRCONN channels whose name `matches`: one record per channel,
/// holding one instance per socket, in accept order. Sockets that have not sent their
/// hello yet belong to no channel: they show under a blank name (matched by `*`).
fn channel_status(svrconns: &Svrconns, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
    let mut by_channel: BTreeMap<String, ChannelStatus> = BTreeMap::new();
    for i in svrconns.instances.borrow().values() {
        let name = i.channel.borrow().clone();
        if !matches(&name) {
            continue;
        }
        by_channel
            .entry(name.clone())
            .or_insert_with(|| ChannelStatus::new(name, ChannelType::Svrconn, true, 0))
            .instances
            .push(i.status());
    }
    by_channel.into_values().collect()
}

/// The native protocol's SVRCONN channels, as the command server sees them: an instance
/// per client socket, shown by DISPLAY CHSTATUS; they run while their clients are
/// connected, so START/STOP CHANNEL refuse them.
pub struct SvrconnChannels {
    svrconns: Rc<Svrconns>,
}

impl SvrconnChannels {
    /// The SVRCONN channels whose instances `svrconns` keeps.
    pub fn new(svrconns: Rc<Svrconns>) -> Self {
        SvrconnChannels { svrconns }
    }
}

impl ChannelEndpoints for SvrconnChannels {
    fn serves(&self, kind: ChannelType) -> bool {
        kind == ChannelType::Svrconn
    }

    fn start(&self, name: &str) -> Result<(), ferry_objects::AdminError> {
        Err(endpoints::not_served(name, ChannelType::Svrconn))
    }

    fn stop(
        &self,
        name: &str,
        _mode: ferry_objects::StopMode,
    ) -> Result<(), ferry_objects::AdminError> {
        Err(endpoints::not_served(name, ChannelType::Svrconn))
    }

    fn status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
        channel_status(&self.svrconns, matches)
    }

    fn listening_ports(&self) -> Vec<u16> {
        // Client sockets arrive through LISTENER objects, published as listeners.
        Vec::new()
    }

    fn start_all(&self) -> Vec<String> {
        Vec::new()
    }

    fn stop_all(&self, _why: &str) {
        // Client conversations end through the queue manager's quiesce or immediate
        // stop, which lets a native application finish its MQGET.
    }
}

/// Keeps a [`ChannelInstance`] in the registry while its socket is served, and counts
/// it in MaxChannels once admitted; the drop undoes both, however the task ends.
pub(super) struct Registered {
    svrconns: Rc<Svrconns>,
    id: u64,
    /// The instance registered.
    pub instance: Rc<ChannelInstance>,
    /// Counted in `Svrconns::admitted` (MaxChannels).
    admitted: Cell<bool>,
}

impl Registered {
    /// Registers a socket just accepted from `peer`.
    pub(super) fn new(svrconns: &Rc<Svrconns>, peer: &str) -> Self {
        let id = svrconns.next_instance.get();
        svrconns.next_instance.set(id + 1);
        let instance = Rc::new(ChannelInstance {
            peer: peer.to_string(),
            started_ms: crate::runtime::clock::now().0,
            channel: RefCell::new(String::new()),
            appl_name: RefCell::new(String::new()),
            socket: RefCell::new(Weak::new()),
        });
        svrconns.instances.borrow_mut().insert(id, instance.clone());
        Registered {
            svrconns: svrconns.clone(),
            id,
            instance,
            admitted: Cell::new(false),
        }
    }

    /// The hello was admitted on `channel`: the instance counts in MAXINST, MAXINSTC and
    /// MaxChannels from now, before anything else can be admitted.
    pub(super) fn admit(&self, channel: &str) {
        *self.instance.channel.borrow_mut() = channel.to_string();
        if !self.admitted.replace(true) {
            let n = &self.svrconns.admitted;
            n.set(n.get() + 1);
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if self.admitted.get() {
            let n = &self.svrconns.admitted;
            debug_assert!(n.get() > 0, "an admitted socket was not counted");
            n.set(n.get().saturating_sub(1));
        }
        if let Ok(mut instances) = self.svrconns.instances.try_borrow_mut() {
            instances.remove(&self.id);
        }
    }
}
