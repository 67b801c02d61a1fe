//! One client socket: handshake, then many conversations multiplexed over it.
//!
//! A reader task decodes every complete frame in what one read returned, dispatches each
//! to the engine, and appends the replies to the socket's output buffer; the writer task
//! sends everything queued in one write. Replies that other sockets' puts complete (a
//! waiting GET) land in the same buffer. A protocol violation sends a close notice and
//! ends this socket only; its conversations are backed out as broken connections.
//!
//! A client cannot stall the socket in any stage: from accept to its first MQCONN it has
//! HandshakeTimeout (qm.ini `Limits:`), and once it has started a frame, PartialFrameTimeout
//! between two reads of it; past either the socket is closed with FRY9271E. Once
//! connected, heartbeats (the channel's HBINT, docs/protocol.md §7) find a silent peer.
//!
//! A reply that must wait for the recovery log (a persistent put or get outside
//! syncpoint, a commit of persistent work) is encoded into the socket's *held* buffer
//! with the LSN it waits for; when a flush makes the log durable past that LSN the held
//! prefix moves into the output buffer, in order, and the writer wakes (see
//! `log_driver::durable_task`). Non-persistent replies never touch the held buffer.

use super::dispatch;
use super::endpoints::{self, ChannelEndpoints};
use super::log_driver::DurableHold;
use super::server::Server;
use crate::messages;
use bytes::BytesMut;
use ferry_engine::ConnId;
use ferry_mqi::ReasonCode;
use ferry_objects::channel::ChannelType;
use ferry_objects::status::{ChannelInstanceStatus, ChannelStatus};
use ferry_wire::{
    max_frame_len, negotiate, ClientHello, CloseNotice, HelloFlags, Inbound, Negotiated, Received,
    Reply, ServerHello, ServerLimits, Status, Verb, WireError,
};
use foldhash::{HashMap, HashMapExt};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

/// How a socket reached the queue manager.
#[derive(Clone, Debug)]
pub enum Transport {
    /// A client over TCP from this address.
    Tcp {
        /// Peer address, as CONNAME shows it.
        peer: String,
    },
    /// A local application over the bindings Unix socket.
    Bindings {
        /// Its process id, when the kernel told us.
        pid: Option<u32>,
    },
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
    pub socket: RefCell<std::rc::Weak<SocketShared>>,
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
        }
        st
    }
}

/// DISPLAY CHSTATUS of SVRCONN channels whose name `matches`: one record per channel,
/// holding one instance per socket, in accept order. Sockets that have not sent their
/// hello yet belong to no channel: they show under a blank name (matched by `*`).
fn channel_status(server: &Server, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
    let mut by_channel: std::collections::BTreeMap<String, ChannelStatus> = Default::default();
    for i in server.channel_instances.borrow().values() {
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
    server: Weak<Server>,
}

impl SvrconnChannels {
    /// The SVRCONN channels of the server `server` will point at.
    pub fn new(server: &Weak<Server>) -> Self {
        SvrconnChannels {
            server: server.clone(),
        }
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
        self.server
            .upgrade()
            .map(|server| channel_status(&server, matches))
            .unwrap_or_default()
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

/// Keeps a [`ChannelInstance`] in the server's registry while its socket is served, and
/// counts it in MaxChannels once admitted; the drop undoes both, however the task ends.
struct Registered {
    server: Rc<Server>,
    id: u64,
    instance: Rc<ChannelInstance>,
    /// Counted in `Server::client_sockets` (MaxChannels).
    admitted: Cell<bool>,
}

impl Registered {
    fn new(server: &Rc<Server>, peer: &str) -> Self {
        let id = server.next_channel_instance.get();
        server.next_channel_instance.set(id + 1);
        let instance = Rc::new(ChannelInstance {
            peer: peer.to_string(),
            started_ms: super::clock::now().0,
            channel: RefCell::new(String::new()),
            appl_name: RefCell::new(String::new()),
            socket: RefCell::new(std::rc::Weak::new()),
        });
        server
            .channel_instances
            .borrow_mut()
            .insert(id, instance.clone());
        Registered {
            server: server.clone(),
            id,
            instance,
            admitted: Cell::new(false),
        }
    }

    /// The hello was admitted on `channel`: the instance counts in MAXINST, MAXINSTC and
    /// MaxChannels from now, before anything else can be admitted.
    fn admit(&self, channel: &str) {
        *self.instance.channel.borrow_mut() = channel.to_string();
        if !self.admitted.replace(true) {
            let sockets = &self.server.client_sockets;
            sockets.set(sockets.get() + 1);
        }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if self.admitted.get() {
            let sockets = &self.server.client_sockets;
            sockets.set(sockets.get().saturating_sub(1));
        }
        if let Ok(mut instances) = self.server.channel_instances.try_borrow_mut() {
            instances.remove(&self.id);
        }
    }
}

/// One reply in the held buffer.
struct HeldMark {
    /// Released when the durable LSN reaches this.
    until: u64,
    /// Its end in the held buffer.
    end: usize,
    conversation: u32,
    request_id: u32,
    verb: Verb,
}

/// What the reader, the writer and other sockets share about one socket.
pub struct SocketShared {
    /// Replies waiting to be written.
    out: RefCell<BytesMut>,
    /// Encoded replies waiting for the recovery log, oldest first.
    held: RefCell<BytesMut>,
    /// Where each held reply ends and what it waits for.
    held_marks: RefCell<VecDeque<HeldMark>>,
    /// Wakes the writer.
    wake_writer: Notify,
    /// Bytes the writer is writing now (split off `out`).
    in_flight: Cell<usize>,
    /// Set while the reader waits for the unsent replies to drain (MaxUnsentBytes).
    reader_paused: Cell<bool>,
    /// Wakes a paused reader: a write finished, or the socket is closing.
    drained: Notify,
    /// Set when the socket is closing: no more replies are queued.
    closing: Cell<bool>,
    /// Wakes the reader when the socket starts closing (heartbeat timeout, immediate
    /// stop, a failed write): a silent peer must not keep it waiting on its read.
    closed: Notify,
    /// Frames received (for the heartbeat check).
    received: Cell<u64>,
    /// Set by the first MQCONN accepted on the socket: the handshake is over
    /// (HandshakeTimeout no longer applies).
    connected: Cell<bool>,
    /// MQI calls handled (DISPLAY CHSTATUS MSGS).
    calls: Cell<u64>,
    /// Bytes read from the socket (BYTSRCVD).
    bytes_received: Cell<u64>,
    /// Bytes written to the socket (BYTSSENT).
    bytes_sent: Cell<u64>,
    /// When the last MQI call came, ms since epoch (LSTMSGDA/LSTMSGTI).
    last_call_ms: Cell<Option<u64>>,
    /// Conversations: id → engine connection.
    pub conversations: RefCell<HashMap<u32, ConnId>>,
    /// How the socket came.
    pub transport: Transport,
    /// Channel name (blank for bindings).
    pub channel: String,
    /// Negotiated limits.
    pub negotiated: Negotiated,
}

impl SocketShared {
    /// Queues a reply and wakes the writer.
    pub fn send_reply(&self, conversation: u32, request_id: u32, reply: &Reply) {
        if self.closing.get() {
            return;
        }
        let was_empty = {
            let mut out = self.out.borrow_mut();
            let was_empty = out.is_empty();
            if out.capacity() - out.len() < OUT_CHUNK / 4 {
                out.reserve(OUT_CHUNK);
            }
            Server::encode(&mut out, conversation, request_id, reply);
            was_empty
        };
        // The writer drains the whole buffer each time it runs, so it needs waking only
        // when the buffer goes from empty to not empty.
        if was_empty {
            self.wake_writer.notify_one();
        }
    }

    /// Holds a reply until the log is durable up to `until`. Returns true when this is the
    /// socket's first held reply (the caller registers the socket for release).
    pub fn hold_reply(
        &self,
        until: u64,
        conversation: u32,
        request_id: u32,
        reply: &Reply,
    ) -> bool {
        if self.closing.get() {
            return false;
        }
        let mut held = self.held.borrow_mut();
        Server::encode(&mut held, conversation, request_id, reply);
        let mut marks = self.held_marks.borrow_mut();
        let first = marks.is_empty();
        marks.push_back(HeldMark {
            until,
            end: held.len(),
            conversation,
            request_id,
            verb: reply.verb(),
        });
        first
    }

    /// Moves every held reply whose LSN the log is now durable past into the output
    /// buffer, in order. Returns true while replies remain held.
    pub fn release_held(&self, durable: u64) -> bool {
        let mut marks = self.held_marks.borrow_mut();
        let mut cut = 0;
        while let Some(m) = marks.front() {
            if m.until > durable {
                break;
            }
            cut = m.end;
            marks.pop_front();
        }
        if cut > 0 {
            for m in marks.iter_mut() {
                m.end -= cut;
            }
            let ready = self.held.borrow_mut().split_to(cut);
            if !self.closing.get() {
                let was_empty = {
                    let mut out = self.out.borrow_mut();
                    let was_empty = out.is_empty();
                    out.extend_from_slice(&ready);
                    was_empty
                };
                if was_empty {
                    self.wake_writer.notify_one();
                }
            }
        }
        !marks.is_empty()
    }

    /// The log failed: every held reply becomes a 2102 MQRC_RESOURCE_PROBLEM failure.
    pub fn fail_held(&self) {
        let marks: Vec<HeldMark> = self.held_marks.borrow_mut().drain(..).collect();
        self.held.borrow_mut().clear();
        for m in marks {
            let reply = Reply::failure(m.verb, Status::from_reason(ReasonCode::ResourceProblem))
                .unwrap_or(Reply::Heartbeat);
            self.send_reply(m.conversation, m.request_id, &reply);
        }
    }

    /// Queues a close notice and marks the socket closing.
    pub fn close_with(&self, reason: ReasonCode, text: &str) {
        if self.closing.get() {
            return;
        }
        let notice = CloseNotice {
            reason,
            text: text.to_string(),
        };
        let _ = notice.encode(&mut self.out.borrow_mut());
        self.closing.set(true);
        self.wake_writer.notify_one();
        self.drained.notify_one();
        self.closed.notify_one();
    }

    /// Bytes of replies not yet sent: queued, held for the log, or being written. The
    /// reader stops reading requests while this is above MaxUnsentBytes.
    pub fn unsent(&self) -> usize {
        self.out.borrow().len() + self.held.borrow().len() + self.in_flight.get()
    }

    /// The CONNAME DISPLAY CONN shows.
    pub fn connection_name(&self) -> String {
        match &self.transport {
            Transport::Tcp { peer } => peer.clone(),
            Transport::Bindings { .. } => String::new(),
        }
    }

    /// Process id DISPLAY CONN shows: a bindings application's own; for a client, the
    /// process that serves its channel, this one (MQ shows its channel process there).
    pub fn pid(&self) -> Option<u32> {
        match &self.transport {
            Transport::Bindings { pid } => *pid,
            Transport::Tcp { .. } => Some(std::process::id()),
        }
    }

    /// Whether the socket is closing.
    pub fn is_closing(&self) -> bool {
        self.closing.get()
    }

    /// Records that a conversation connected: the socket's handshake is complete.
    pub fn mark_connected(&self) {
        self.connected.set(true);
    }
}

/// Room reserved in an empty output buffer for the replies to come: an idle socket
/// holds no more (the buffer is allocated on the first reply, kept while the socket is
/// busy and given back when it has grown past [`ferry_wire::inbound::READ_MAX`]).
const OUT_CHUNK: usize = 4 * 1024;

/// How long a refusal or a hello answer may take to write: a peer that does not read
/// cannot hold the task.
const ANSWER_WRITE_TIMEOUT: Duration = Duration::from_secs(1);

/// A stage a client stalled in ([`ReadEnd::TimedOut`]).
#[derive(Clone, Copy, Debug)]
enum Stall {
    /// No hello or no MQCONN within HandshakeTimeout of the accept.
    Handshake,
    /// Nothing more of a frame it started within PartialFrameTimeout.
    PartialFrame,
}

impl Stall {
    /// What happened, for the error log and the close notice.
    fn describe(self, server: &Server, hello_done: bool) -> String {
        let limits = &server.ini.limits;
        match self {
            Stall::Handshake => format!(
                "no {} within HandshakeTimeout ({} s) of the connection",
                if hello_done { "MQCONN" } else { "hello" },
                limits.handshake_timeout_secs
            ),
            Stall::PartialFrame => format!(
                "nothing more of a frame it started for PartialFrameTimeout ({} s)",
                limits.partial_frame_timeout_secs
            ),
        }
    }
}

/// Writes a hello answer (or refusal), giving up on a peer that does not read.
async fn answer_hello<W: AsyncWrite + Unpin>(writer: &mut W, hello: &ServerHello) -> bool {
    let mut out = BytesMut::new();
    if hello.encode(&mut out).is_err() {
        return false;
    }
    matches!(
        tokio::time::timeout(ANSWER_WRITE_TIMEOUT, writer.write_all(&out)).await,
        Ok(Ok(()))
    )
}

/// Serves one socket until it closes.
pub async fn serve<R, W>(server: Rc<Server>, mut reader: R, mut writer: W, transport: Transport)
where
    R: AsyncRead + Unpin + 'static,
    W: AsyncWrite + Unpin + 'static,
{
    let peer_text = match &transport {
        Transport::Tcp { peer } => peer.clone(),
        Transport::Bindings { pid } => {
            format!("bindings pid {}", pid.map_or("?".into(), |p| p.to_string()))
        }
    };
    let registered = match &transport {
        Transport::Tcp { peer } => Some(Registered::new(&server, peer)),
        Transport::Bindings { .. } => None,
    };
    // HandshakeTimeout runs from the accept to the first MQCONN.
    let handshake_deadline = tokio::time::Instant::now() + server.ini.limits.handshake_timeout();
    // The read buffer grows with what arrives, never with what a header claims.
    let mut inbound = Inbound::new();
    let mut hello_bytes = 0u64;
    let hello = match tokio::time::timeout_at(
        handshake_deadline,
        read_hello(&mut reader, &mut inbound, &mut hello_bytes),
    )
    .await
    {
        Ok(Ok(Some(h))) => h,
        Ok(Ok(None)) => return,
        Ok(Err(e)) => {
            server
                .error_log
                .borrow_mut()
                .write(&messages::PROTOCOL_ERROR, &[&peer_text, &e]);
            answer_hello(&mut writer, &ServerHello::refuse(e.reason(), e.to_string())).await;
            return;
        }
        Err(_) => {
            let why = Stall::Handshake.describe(&server, false);
            server
                .error_log
                .borrow_mut()
                .write(&messages::CHANNEL_TIMED_OUT, &[&peer_text, &why]);
            answer_hello(
                &mut writer,
                &ServerHello::refuse(ReasonCode::ConnectionBroken, why),
            )
            .await;
            return;
        }
    };
    let (answer, negotiated) = admit(&server, &hello, &transport, &peer_text);
    if let Some(r) = &registered {
        *r.instance.appl_name.borrow_mut() = hello.appl_name.as_str().to_string();
        if negotiated.is_some() {
            r.admit(hello.channel.as_str());
        }
    }
    if !answer_hello(&mut writer, &answer).await {
        return;
    }
    let Some(negotiated) = negotiated else { return };

    let shared = Rc::new(SocketShared {
        out: RefCell::new(BytesMut::new()),
        held: RefCell::new(BytesMut::new()),
        held_marks: RefCell::new(VecDeque::new()),
        wake_writer: Notify::new(),
        closed: Notify::new(),
        in_flight: Cell::new(0),
        reader_paused: Cell::new(false),
        drained: Notify::new(),
        closing: Cell::new(false),
        received: Cell::new(0),
        connected: Cell::new(false),
        calls: Cell::new(0),
        bytes_received: Cell::new(hello_bytes),
        bytes_sent: Cell::new(0),
        last_call_ms: Cell::new(None),
        conversations: RefCell::new(HashMap::new()),
        transport,
        channel: hello.channel.as_str().to_string(),
        negotiated,
    });
    server.register_socket(&shared);
    if let Some(r) = &registered {
        *r.instance.socket.borrow_mut() = Rc::downgrade(&shared);
    }

    let writer_task = tokio::task::spawn_local(write_loop(shared.clone(), writer));
    let heartbeat_task = (negotiated.heartbeat_interval > 0).then(|| {
        tokio::task::spawn_local(heartbeat_loop(
            server.clone(),
            shared.clone(),
            peer_text.clone(),
        ))
    });

    inbound.set_max_frame(max_frame_len(negotiated.max_msg_length));
    let end = read_loop(
        &server,
        &shared,
        &mut reader,
        &mut inbound,
        handshake_deadline,
    )
    .await;
    match end {
        ReadEnd::Eof => {}
        ReadEnd::Io(e) => {
            if !shared.conversations.borrow().is_empty() {
                server
                    .error_log
                    .borrow_mut()
                    .write(&messages::CONNECTION_LOST, &[&peer_text, &e]);
            }
        }
        ReadEnd::Protocol(e) => {
            server
                .error_log
                .borrow_mut()
                .write(&messages::PROTOCOL_ERROR, &[&peer_text, &e]);
            shared.close_with(e.reason(), &e.to_string());
        }
        ReadEnd::TimedOut(stall) => {
            let why = stall.describe(&server, true);
            server
                .error_log
                .borrow_mut()
                .write(&messages::CHANNEL_TIMED_OUT, &[&peer_text, &why]);
            shared.close_with(ReasonCode::ConnectionBroken, &why);
        }
        ReadEnd::Closing => {}
    }
    // Conversations still open end as broken connections: their work is backed out.
    let convs: Vec<ConnId> = shared
        .conversations
        .borrow_mut()
        .drain()
        .map(|(_, c)| c)
        .collect();
    for conn in convs {
        dispatch::end_conversation(&server, conn, false);
    }
    shared.closing.set(true);
    shared.wake_writer.notify_one();
    if let Some(h) = heartbeat_task {
        h.abort();
    }
    // A peer that does not read cannot keep the writer (and the socket) for ever.
    let writer_abort = writer_task.abort_handle();
    if tokio::time::timeout(Duration::from_secs(5), writer_task)
        .await
        .is_err()
    {
        writer_abort.abort();
    }
    // The instance leaves the registry and MaxChannels when `registered` drops, now.
    drop(registered);
    server.lifecycle_wake.notify_one();
}

/// Reads the client hello (at most [`ferry_wire::handshake::MAX_HELLO_LEN`] bytes are
/// buffered for it); `None` when the peer goes before sending it. Counts the bytes read.
async fn read_hello<R: AsyncRead + Unpin>(
    reader: &mut R,
    inbound: &mut Inbound,
    bytes_read: &mut u64,
) -> Result<Option<ClientHello>, WireError> {
    loop {
        match inbound.take()? {
            Some(Received::Hello(h)) => return Ok(Some(h)),
            Some(Received::Frame(f)) => {
                return Err(WireError::UnexpectedVerb {
                    verb: f.verb.code(),
                    expected: "ClientHello",
                })
            }
            None => {}
        }
        match reader.read_buf(inbound.read_buffer()).await {
            Ok(0) | Err(_) => return Ok(None),
            Ok(n) => {
                inbound.filled(n);
                *bytes_read += n as u64;
            }
        }
    }
}

/// Decides whether a hello is admitted and with which limits.
fn admit(
    server: &Server,
    hello: &ClientHello,
    transport: &Transport,
    peer: &str,
) -> (ServerHello, Option<Negotiated>) {
    let refuse = |reason, text: String| (ServerHello::refuse(reason, text), None);
    if hello.major != ferry_wire::PROTOCOL_MAJOR {
        return refuse(
            ReasonCode::ChannelConfigError,
            format!(
                "protocol version {} is not supported; this queue manager speaks {}",
                hello.major,
                ferry_wire::PROTOCOL_MAJOR
            ),
        );
    }
    let wanted_qm = hello.qmgr_name.as_str();
    if !wanted_qm.is_empty() && wanted_qm != server.name {
        return refuse(
            ReasonCode::QMgrNameError,
            format!("this is queue manager '{}', not '{wanted_qm}'", server.name),
        );
    }
    let qmgr_max = server.engine.borrow().qmgr().max_msg_length;
    let limits = match transport {
        Transport::Bindings { .. } => ServerLimits {
            max_msg_length: u32::try_from(qmgr_max).unwrap_or(0),
            heartbeat_interval: 0,
            sharecnv: hello.sharecnv.clamp(1, 1000),
            flags: HelloFlags::empty(),
        },
        Transport::Tcp { .. } => {
            let name = hello.channel.as_str();
            let Some(channel) = server.engine.borrow().channel(name) else {
                server
                    .error_log
                    .borrow_mut()
                    .write(&messages::CHANNEL_UNKNOWN, &[&name, &peer]);
                return refuse(
                    ReasonCode::UnknownChannelName,
                    format!(
                        "channel '{name}' is not defined on queue manager '{}'",
                        server.name
                    ),
                );
            };
            if server.client_sockets.get() >= server.ini.channels.max_channels {
                server.error_log.borrow_mut().write(
                    &messages::MAX_CHANNELS,
                    &[&peer, &server.ini.channels.max_channels],
                );
                return refuse(
                    ReasonCode::ChannelNotAvailable,
                    format!("MaxChannels ({}) reached", server.ini.channels.max_channels),
                );
            }
            let a = &channel.attributes;
            if let Some((message, keyword, limit)) = instances_exceeded(server, name, peer, a) {
                server
                    .error_log
                    .borrow_mut()
                    .write(message, &[&peer, &name, &limit]);
                return refuse(
                    ReasonCode::ChannelNotAvailable,
                    format!("channel '{name}' has reached {keyword}({limit}) instances"),
                );
            }
            ServerLimits {
                max_msg_length: u32::try_from(a.max_msg_length.min(qmgr_max)).unwrap_or(0),
                heartbeat_interval: u32::try_from(a.heartbeat_interval).unwrap_or(0),
                sharecnv: u32::try_from(a.share_conversations).unwrap_or(1).max(1),
                flags: HelloFlags::empty(),
            }
        }
    };
    let n = negotiate(hello, &limits);
    let n = Negotiated {
        sharecnv: n.sharecnv.max(1),
        ..n
    };
    let answer = ServerHello {
        status: Status::OK,
        major: ferry_wire::PROTOCOL_MAJOR,
        minor: n.minor,
        flags: n.flags,
        max_msg_length: n.max_msg_length,
        heartbeat_interval: n.heartbeat_interval,
        sharecnv: n.sharecnv,
        qmgr_name: ferry_mqi::FixedStr::truncating(&server.name),
        server_version: format!("Ferry {}", env!("CARGO_PKG_VERSION")),
        message: String::new(),
    };
    (answer, Some(n))
}

/// Whether admitting one more instance of channel `name` from `peer` would pass its
/// MAXINST or MAXINSTC: the message to log, the attribute and its value, if so.
/// Instances are the sockets whose hello this channel admitted, handshaking or running.
fn instances_exceeded(
    server: &Server,
    name: &str,
    peer: &str,
    a: &ferry_objects::ChannelAttributes,
) -> Option<(&'static messages::Message, &'static str, i32)> {
    let (mut on_channel, mut from_peer) = (0i64, 0i64);
    for i in server.channel_instances.borrow().values() {
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

enum ReadEnd {
    Eof,
    Io(std::io::Error),
    Protocol(WireError),
    /// The client stalled in a stage past its time limit.
    TimedOut(Stall),
    Closing,
}

/// The deadline of the next read, and the stall it would be: HandshakeTimeout until the
/// first MQCONN, PartialFrameTimeout while part of a frame waits for the rest (the
/// earlier of the two when both apply); none for a connected socket between frames
/// (heartbeats watch that).
fn read_deadline(
    server: &Server,
    shared: &SocketShared,
    partial: bool,
    handshake_deadline: tokio::time::Instant,
) -> Option<(tokio::time::Instant, Stall)> {
    let handshake = (!shared.connected.get()).then_some((handshake_deadline, Stall::Handshake));
    let partial = partial.then(|| {
        (
            tokio::time::Instant::now() + server.ini.limits.partial_frame_timeout(),
            Stall::PartialFrame,
        )
    });
    match (handshake, partial) {
        (Some(h), Some(p)) => Some(if h.0 <= p.0 { h } else { p }),
        (h, p) => h.or(p),
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    server: &Rc<Server>,
    shared: &Rc<SocketShared>,
    reader: &mut R,
    inbound: &mut Inbound,
    handshake_deadline: tokio::time::Instant,
) -> ReadEnd {
    let max_unsent = server.ini.limits.max_unsent();
    loop {
        // A large read buffer given back at the last read: see memory::trim_task.
        server.memory.note_freed(inbound.take_released() as u64);
        let now = server.begin_batch();
        let calls = shared.calls.get();
        let end = decode_batch(server, shared, inbound, max_unsent);
        server.end_batch();
        if shared.calls.get() != calls {
            shared.last_call_ms.set(Some(now.0));
        }
        if let Some(end) = end {
            return end;
        }
        if shared.is_closing() {
            return ReadEnd::Closing;
        }
        // Back-pressure: a client that does not read its replies is not read either.
        if shared.unsent() > max_unsent {
            if let Some(stall) = wait_drained(shared, max_unsent, handshake_deadline).await {
                return ReadEnd::TimedOut(stall);
            }
            // Frames already read come first.
            continue;
        }
        // Every complete frame was handled: what is left is part of one.
        let deadline = read_deadline(server, shared, inbound.pending() > 0, handshake_deadline);
        let buf = inbound.read_buffer();
        let read = tokio::select! {
            read = async {
                match deadline {
                    None => Ok(reader.read_buf(buf).await),
                    Some((at, stall)) => tokio::time::timeout_at(at, reader.read_buf(buf))
                        .await
                        .map_err(|_| stall),
                }
            } => match read {
                Ok(read) => read,
                Err(stall) => return ReadEnd::TimedOut(stall),
            },
            // Closing while the peer is silent: stop waiting for it.
            _ = shared.closed.notified() => return ReadEnd::Closing,
        };
        match read {
            Ok(0) => return ReadEnd::Eof,
            Ok(n) => {
                inbound.filled(n);
                shared
                    .bytes_received
                    .set(shared.bytes_received.get() + n as u64);
            }
            Err(e) => return ReadEnd::Io(e),
        }
    }
}

/// Waits until the socket's unsent replies are down to `max_unsent` (or it closes);
/// a socket still handshaking waits no longer than its HandshakeTimeout.
async fn wait_drained(
    shared: &SocketShared,
    max_unsent: usize,
    handshake_deadline: tokio::time::Instant,
) -> Option<Stall> {
    while shared.unsent() > max_unsent && !shared.is_closing() {
        shared.reader_paused.set(true);
        let drained = shared.drained.notified();
        let timed_out = if shared.connected.get() {
            drained.await;
            false
        } else {
            tokio::time::timeout_at(handshake_deadline, drained)
                .await
                .is_err()
        };
        shared.reader_paused.set(false);
        if timed_out {
            return Some(Stall::Handshake);
        }
    }
    None
}

/// Handles the complete frames in `inbound`, until the unsent replies pass `max_unsent`
/// (the rest wait for them to drain); `Some` ends the socket.
fn decode_batch(
    server: &Rc<Server>,
    shared: &Rc<SocketShared>,
    inbound: &mut Inbound,
    max_unsent: usize,
) -> Option<ReadEnd> {
    loop {
        match inbound.take() {
            Ok(Some(Received::Hello(_))) => {
                return Some(ReadEnd::Protocol(WireError::UnexpectedVerb {
                    verb: 0,
                    expected: "a frame after the hello",
                }))
            }
            Ok(Some(Received::Frame(frame))) => {
                shared.received.set(shared.received.get() + 1);
                if frame.verb != Verb::Heartbeat {
                    shared.calls.set(shared.calls.get() + 1);
                }
                if let Err(e) = dispatch::handle_frame(server, shared, frame) {
                    return Some(ReadEnd::Protocol(e));
                }
                if shared.is_closing() {
                    return Some(ReadEnd::Closing);
                }
                if shared.unsent() > max_unsent {
                    return None;
                }
            }
            Ok(None) => return None,
            Err(e) => return Some(ReadEnd::Protocol(e)),
        }
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(shared: Rc<SocketShared>, mut writer: W) {
    loop {
        let chunk = {
            let mut out = shared.out.borrow_mut();
            if out.is_empty() {
                None
            } else {
                Some(out.split())
            }
        };
        match chunk {
            Some(buf) => {
                shared.in_flight.set(buf.len());
                let written = writer.write_all(&buf).await;
                shared.in_flight.set(0);
                if shared.reader_paused.get() {
                    shared.drained.notify_one();
                }
                if written.is_err() {
                    shared.closing.set(true);
                    shared.drained.notify_one();
                    shared.closed.notify_one();
                    return;
                }
                shared
                    .bytes_sent
                    .set(shared.bytes_sent.get() + buf.len() as u64);
                let big = buf.len() > ferry_wire::inbound::READ_MAX;
                drop(buf);
                // A large reply grew the buffer: give it back rather than keep it for
                // the socket's lifetime.
                let mut out = shared.out.borrow_mut();
                if big && out.is_empty() {
                    *out = BytesMut::new();
                }
            }
            None => {
                if shared.closing.get() {
                    let _ = writer.shutdown().await;
                    return;
                }
                shared.wake_writer.notified().await;
            }
        }
    }
}

/// Slack beyond twice the heartbeat interval before a silent peer counts as gone
/// (docs/protocol.md §7; the client library uses the same).
const HEARTBEAT_SLACK: Duration = Duration::from_secs(5);

/// docs/protocol.md §7: after an interval with nothing received, sends a heartbeat; after
/// twice the interval plus slack with nothing received, ends the socket as broken.
async fn heartbeat_loop(server: Rc<Server>, shared: Rc<SocketShared>, peer: String) {
    let secs = u64::from(shared.negotiated.heartbeat_interval);
    let mut tick = tokio::time::interval(Duration::from_secs(secs));
    tick.tick().await;
    let mut last_received = shared.received.get();
    let mut silent_intervals = 0u32;
    loop {
        tick.tick().await;
        if shared.received.get() != last_received {
            last_received = shared.received.get();
            silent_intervals = 0;
            continue;
        }
        silent_intervals += 1;
        if silent_intervals == 1 {
            let mut out = shared.out.borrow_mut();
            let _ = ferry_wire::encode_request(
                ferry_wire::SOCKET_CONVERSATION,
                0,
                &ferry_wire::Request::Heartbeat,
                &mut out,
            );
            drop(out);
            shared.wake_writer.notify_one();
            continue;
        }
        tokio::time::sleep(HEARTBEAT_SLACK).await;
        if shared.received.get() != last_received {
            last_received = shared.received.get();
            silent_intervals = 0;
            continue;
        }
        server.error_log.borrow_mut().write(
            &messages::HEARTBEAT_TIMEOUT,
            &[&peer, &(secs * 2 + HEARTBEAT_SLACK.as_secs())],
        );
        shared.close_with(ReasonCode::ConnectionBroken, "heartbeat timeout");
        return;
    }
}

impl DurableHold for SocketShared {
    fn release_held(&self, durable: u64) -> bool {
        SocketShared::release_held(self, durable)
    }
    fn fail_held(&self) {
        SocketShared::fail_held(self)
    }
}
