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

use super::channels::{Registered, Svrconns};
use super::{dispatch, reply};
use crate::messages;
use crate::runtime::log_driver::{DurableHold, LogUse};
use crate::runtime::reply_wait::ReplyHold;
use crate::runtime::server::Connection;
use crate::runtime::server::Server;
use crate::runtime::tls::{self, TlsSession};
use bytes::BytesMut;
use ferry_engine::{ConnId, ConsumerId, DeliveryToken, GetResult, GotMessage};
use ferry_mqi::ReasonCode;
use ferry_wire::{
    max_frame_len, negotiate, ClientHello, CloseNotice, CompressionMeter, FlowSize, Frame,
    FrameCompressor, FrameExpander, HelloFlags, Inbound, Negotiated, Received, Reply, ServerHello,
    ServerLimits, Status, Verb, WireError, HEADER_LEN,
};
use foldhash::{HashMap, HashMapExt};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::Notify;

/// How a socket reached the queue manager.
#[derive(Clone, Debug)]
pub enum Transport {
    /// A client over TCP from this address.
    Tcp {
        /// Peer address, as CONNAME shows it.
        peer: String,
        /// What TLS agreed, when the conversation uses it.
        tls: Option<Rc<TlsSession>>,
    },
    /// A local application over the bindings Unix socket.
    Bindings {
        /// Its process id, when the kernel told us.
        pid: Option<u32>,
        /// The user it runs as, from the kernel (SO_PEERCRED): what a bindings
        /// connection is known as, whatever user id its MQCONN names.
        user: Option<String>,
    },
}

/// A GET waiting in the engine: where its reply goes.
struct WaitingGet {
    conn: ConnId,
    conversation: u32,
    request_id: u32,
    /// The handle and options of the get (what its trace span names).
    hobj: i32,
    options: ferry_mqi::GetOptionFlags,
}

/// A call set aside until the log has room for it ([`SocketShared::park_for_log_room`]).
pub(super) struct ParkedCall {
    /// The request, handled again when the server asks.
    pub frame: Frame,
    /// What it will log.
    pub usage: LogUse,
    /// When it first found the log full.
    pub since: Instant,
    /// Checkpoints completed then (`Server::checkpoints_completed`).
    pub base: u64,
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

/// Channel compression of one socket (COMPHDR/COMPMSG agreed in its hello): the codecs'
/// state and what DISPLAY CHSTATUS shows.
pub(super) struct SocketCompression {
    compressor: FrameCompressor,
    expander: FrameExpander,
    /// COMPRATE and COMPTIME.
    pub(super) meter: CompressionMeter,
    /// The techniques the last message sent travelled with (COMPHDR/COMPMSG's second value).
    pub(super) last_sent: (ferry_mqi::HeaderCompression, ferry_mqi::MessageCompression),
}

impl SocketCompression {
    fn new(negotiated: &Negotiated) -> Option<RefCell<Self>> {
        let t = negotiated.compression;
        t.any().then(|| {
            RefCell::new(SocketCompression {
                compressor: FrameCompressor::new(t),
                expander: FrameExpander::new(t),
                meter: CompressionMeter::default(),
                last_sent: (
                    ferry_mqi::HeaderCompression::None,
                    ferry_mqi::MessageCompression::None,
                ),
            })
        })
    }

    fn record(&mut self, flow: &FlowSize, started: Instant) {
        let micros = started.elapsed().as_secs_f64() * 1e6;
        self.meter.record(flow, micros);
    }
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
    pub(super) connected: Cell<bool>,
    /// MQI calls handled (DISPLAY CHSTATUS MSGS).
    pub(super) calls: Cell<u64>,
    /// Bytes read from the socket (BYTSRCVD).
    pub(super) bytes_received: Cell<u64>,
    /// Bytes written to the socket (BYTSSENT).
    pub(super) bytes_sent: Cell<u64>,
    /// When the last MQI call came, ms since epoch (LSTMSGDA/LSTMSGTI).
    pub(super) last_call_ms: Cell<Option<u64>>,
    /// Conversations: id → engine connection.
    pub conversations: RefCell<HashMap<u32, ConnId>>,
    /// Conversations whose MQCONN waits for a password check: they count against
    /// SHARECNV, and a second MQCONN on one is refused.
    pub(super) authenticating: RefCell<Vec<u32>>,
    /// GETs that wait in the engine: where each one's reply goes when it completes.
    waiting_gets: RefCell<Vec<WaitingGet>>,
    /// Calls waiting for log space, at most one per conversation.
    parked: RefCell<Vec<ParkedCall>>,
    /// How the socket came.
    pub transport: Transport,
    /// Channel name (blank for bindings).
    pub channel: String,
    /// Negotiated limits.
    pub negotiated: Negotiated,
    /// Channel compression, when the hello agreed on a technique.
    pub(super) compression: Option<RefCell<SocketCompression>>,
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
            self.encode(&mut out, conversation, request_id, reply);
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
        self.encode(&mut held, conversation, request_id, reply);
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
            Transport::Tcp { peer, .. } => peer.clone(),
            Transport::Bindings { .. } => String::new(),
        }
    }

    /// Process id DISPLAY CONN shows: a bindings application's own; for a client, the
    /// process that serves its channel, this one (MQ shows its channel process there).
    pub fn pid(&self) -> Option<u32> {
        match &self.transport {
            Transport::Bindings { pid, .. } => *pid,
            Transport::Tcp { .. } => Some(std::process::id()),
        }
    }

    /// Whether the socket is closing.
    pub fn is_closing(&self) -> bool {
        self.closing.get()
    }

    /// The GET of engine connection `conn`, request `request_id` on `conversation`, waits
    /// in the engine: its reply goes there when the engine completes it.
    pub(super) fn get_waits(
        &self,
        conn: ConnId,
        conversation: u32,
        request_id: u32,
        hobj: i32,
        options: ferry_mqi::GetOptionFlags,
    ) {
        let mut waiting = self.waiting_gets.borrow_mut();
        debug_assert!(
            waiting.iter().all(|w| w.conn != conn),
            "{conn:?} waits twice"
        );
        waiting.push(WaitingGet {
            conn,
            conversation,
            request_id,
            hobj,
            options,
        });
    }

    /// Forgets the waiting GET of `conn`, if any (its conversation ended).
    pub(super) fn forget_waiting_get(&self, conn: ConnId) {
        self.waiting_gets.borrow_mut().retain(|w| w.conn != conn);
    }

    /// Sets a call of conversation `call.frame.conversation` aside until the log has room
    /// ([`crate::runtime::server::LogRoom::Wait`]): the server asks this socket to try it
    /// again, in the order calls of every connection began to wait.
    pub(super) fn park_for_log_room(self: &Rc<Self>, server: &Server, call: ParkedCall) {
        let conversation = call.frame.conversation;
        let usage = call.usage;
        let mut parked = self.parked.borrow_mut();
        debug_assert!(parked.iter().all(|p| p.frame.conversation != conversation));
        parked.push(call);
        drop(parked);
        server.wait_for_log_room(self.clone(), conversation, usage);
    }

    /// Whether a call of `conversation` waits for log space (a conversation has one call
    /// at a time: another is answered 2219 MQRC_CALL_IN_PROGRESS).
    pub(super) fn waits_for_log_room(&self, conversation: u32) -> bool {
        let parked = self.parked.borrow();
        !parked.is_empty() && parked.iter().any(|p| p.frame.conversation == conversation)
    }

    /// Drops the call of `conversation` that waits for log space (its MQDISC came: the
    /// call is never made).
    pub(super) fn forget_log_room_call(&self, server: &Server, conversation: u32) {
        self.parked
            .borrow_mut()
            .retain(|p| p.frame.conversation != conversation);
        server.stop_waiting_for_log_room(self, conversation);
    }

    /// Encodes `reply` for request `request_id` of `conversation` onto `out`, laid out for
    /// the socket's protocol minor, compressed when it carries a message and the hello
    /// agreed on compression.
    fn encode(&self, out: &mut BytesMut, conversation: u32, request_id: u32, reply: &Reply) {
        let start = out.len();
        let minor = self.negotiated.minor;
        if let Err(e) = ferry_wire::encode_reply_at(conversation, request_id, reply, minor, out) {
            tracing::error!("cannot encode reply: {e}");
            return;
        }
        if let (Some(c), Some(data)) = (&self.compression, reply.message_data()) {
            let started = Instant::now();
            let mut c = c.borrow_mut();
            let flow = c.compressor.compress_frame(out, start, data.len());
            c.last_sent = (flow.header, flow.message);
            c.record(&flow, started);
        }
    }

    /// Expands a compressed frame (a PUT or PUT1 whose client compressed it); any other
    /// frame comes back as it is (a message frame counted in COMPRATE). A frame compressed
    /// without an agreement, with a technique not agreed, expanding past MAXMSGL plus
    /// headers, or damaged, breaks the protocol.
    fn expand(&self, frame: Frame) -> Result<Frame, WireError> {
        if !frame.flags.contains(ferry_wire::FrameFlags::COMPRESSED) {
            // A message the client sent as it was (too short, or it did not shrink)
            // counts in COMPRATE as nothing saved, as one the queue manager sends does.
            if let Some(c) = &self.compression {
                if ferry_wire::carries_message(frame.verb, frame.is_reply()) {
                    let n = frame.payload.len();
                    let flow = FlowSize {
                        before: n,
                        after: n,
                        ..FlowSize::default()
                    };
                    c.borrow_mut().meter.record(&flow, 0.0);
                }
            }
            return Ok(frame);
        }
        let Some(c) = &self.compression else {
            return Err(WireError::ReservedBits {
                field: "frame flags (COMPRESSED, but the hello agreed on no compression)",
                bits: u32::from(ferry_wire::FrameFlags::COMPRESSED.bits()),
            });
        };
        let started = Instant::now();
        let max_payload = max_frame_len(self.negotiated.max_msg_length) as usize - HEADER_LEN;
        let mut c = c.borrow_mut();
        let (frame, flow) = c.expander.expand(frame, max_payload)?;
        if let Some(flow) = flow {
            c.record(&flow, started);
        }
        Ok(frame)
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
    let write = async {
        writer.write_all(&out).await?;
        // A TLS writer holds records until flushed; a TCP flush does nothing.
        writer.flush().await
    };
    matches!(
        tokio::time::timeout(ANSWER_WRITE_TIMEOUT, write).await,
        Ok(Ok(()))
    )
}

/// Serves one socket until it closes; it has until `handshake_deadline` (HandshakeTimeout
/// from its accept) for its first MQCONN.
pub async fn serve<R, W>(
    server: Rc<Server>,
    svrconns: Rc<Svrconns>,
    mut reader: R,
    mut writer: W,
    transport: Transport,
    handshake_deadline: tokio::time::Instant,
) where
    R: AsyncRead + Unpin + 'static,
    W: AsyncWrite + Unpin + 'static,
{
    let peer_text = match &transport {
        Transport::Tcp { peer, .. } => peer.clone(),
        Transport::Bindings { pid, .. } => {
            format!("bindings pid {}", pid.map_or("?".into(), |p| p.to_string()))
        }
    };
    let registered = match &transport {
        Transport::Tcp { peer, .. } => Some(Registered::new(&svrconns, peer)),
        Transport::Bindings { .. } => None,
    };
    // The read buffer grows with what arrives, never with what a header claims.
    let mut inbound = Inbound::new();
    let mut hello_bytes = 0u64;
    let hello = match tokio::time::timeout_at(
        handshake_deadline,
        read_hello(&mut reader, &mut inbound, &mut hello_bytes),
    )
    .await
    {
        Ok(Ok(Some(Opening::Client(h)))) => h,
        Ok(Ok(Some(Opening::Channel(hello)))) => {
            // Another queue manager's message channel: not a client instance.
            drop(registered);
            match (svrconns.partners(), transport) {
                (Some(partners), Transport::Tcp { peer, tls }) => {
                    crate::runtime::message_channel::serve_partner(
                        partners,
                        server.clone(),
                        *hello,
                        reader,
                        writer,
                        inbound.into_buffer(),
                        crate::runtime::message_channel::Caller { peer, tls },
                    )
                    .await;
                }
                _ => {
                    server.error_log.borrow_mut().write(
                        &messages::PROTOCOL_ERROR,
                        &[&peer_text, &"a channel hello on the bindings socket"],
                    );
                }
            }
            server.lifecycle_wake.notify_one();
            return;
        }
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
    let (answer, negotiated) = admit(&server, &svrconns, &hello, &transport, &peer_text);
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
        authenticating: RefCell::new(Vec::new()),
        waiting_gets: RefCell::new(Vec::new()),
        parked: RefCell::new(Vec::new()),
        transport,
        channel: hello.channel.as_str().to_string(),
        compression: SocketCompression::new(&negotiated),
        negotiated,
    });
    svrconns.register_socket(&shared);
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
        let _ = dispatch::end_conversation(&server, &shared, conn, false);
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

/// What a connection opens with.
enum Opening {
    /// An application's client hello.
    Client(ClientHello),
    /// Another queue manager's message channel.
    Channel(Box<ferry_wire::channel::ChannelHello>),
}

/// Reads the client hello, or a channel hello (at most
/// [`ferry_wire::handshake::MAX_HELLO_LEN`] bytes are buffered for it); `None` when the
/// peer goes before sending it. Counts the bytes read.
async fn read_hello<R: AsyncRead + Unpin>(
    reader: &mut R,
    inbound: &mut Inbound,
    bytes_read: &mut u64,
) -> Result<Option<Opening>, WireError> {
    loop {
        match inbound.take()? {
            Some(Received::Hello(h)) => return Ok(Some(Opening::Client(h))),
            Some(Received::ChannelHello(h)) => return Ok(Some(Opening::Channel(h))),
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
    svrconns: &Svrconns,
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
            compress_header: Vec::new(),
            compress_message: Vec::new(),
        },
        Transport::Tcp { tls: session, .. } => {
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
            if let Err(refusal) = tls::check(server, &channel, session.as_deref(), peer) {
                return refuse(refusal.reason, refusal.text);
            }
            if svrconns.admitted() >= server.ini.channels.max_channels {
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
            if let Some((message, keyword, limit)) = svrconns.instances_exceeded(name, peer, a) {
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
                flags: HelloFlags::COMPRESSION,
                compress_header: a.header_compression.clone(),
                compress_message: a.message_compression.clone(),
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
        compression: n.compression,
    };
    (answer, Some(n))
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
/// first MQCONN (or until one waits for its password check), PartialFrameTimeout while part of a frame waits for the rest (the
/// earlier of the two when both apply); none for a connected socket between frames
/// (heartbeats watch that).
fn read_deadline(
    server: &Server,
    shared: &SocketShared,
    partial: bool,
    handshake_deadline: tokio::time::Instant,
) -> Option<(tokio::time::Instant, Stall)> {
    // A socket whose MQCONN waits for a password check has done its part.
    let waiting = shared.connected.get() || !shared.authenticating.borrow().is_empty();
    let handshake = (!waiting).then_some((handshake_deadline, Stall::Handshake));
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
    // Its part in the count of active connections (`runtime::wake_coalescing`).
    let activity = crate::runtime::wake_coalescing::Activity::default();
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
                activity.note(n);
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
            Ok(Some(Received::Hello(_) | Received::ChannelHello(_))) => {
                return Some(ReadEnd::Protocol(WireError::UnexpectedVerb {
                    verb: 0,
                    expected: "a frame after the hello",
                }))
            }
            Ok(Some(Received::Frame(frame))) => {
                let frame = match shared.expand(frame) {
                    Ok(f) => f,
                    Err(e) => return Some(ReadEnd::Protocol(e)),
                };
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
                let written = match writer.write_all(&buf).await {
                    // A TLS writer holds records until flushed; a TCP flush does nothing.
                    Ok(()) => writer.flush().await,
                    Err(e) => Err(e),
                };
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

impl Connection for SocketShared {
    fn get_completed(
        self: Rc<Self>,
        server: &Server,
        conn: ConnId,
        result: GetResult,
        hold: ReplyHold,
    ) {
        let waiting = {
            let mut waiting = self.waiting_gets.borrow_mut();
            let at = waiting.iter().position(|w| w.conn == conn);
            at.map(|at| waiting.swap_remove(at))
        };
        if let Some(w) = waiting {
            if server.telemetry.is_on() {
                let gmo = ferry_mqi::GetOptions {
                    options: w.options,
                    ..Default::default()
                };
                super::traced::got(server, conn, ferry_engine::Hobj(w.hobj), &gmo, &result);
            }
            let reply = reply::get_reply(result);
            reply::send_held(server, &self, hold, w.conversation, w.request_id, &reply);
        }
    }

    fn message_delivered(
        self: Rc<Self>,
        _server: &Server,
        conn: ConnId,
        _consumer: ConsumerId,
        _token: Option<DeliveryToken>,
        _message: Box<GotMessage>,
        _hold: ReplyHold,
    ) {
        // No native call registers an asynchronous consumer (MQCB is not served).
        tracing::error!("{conn:?}: a delivery to a native conversation; dropped");
    }

    fn consumer_ended(&self, conn: ConnId, _consumer: ConsumerId, _reason: ReasonCode) {
        tracing::error!("{conn:?}: a consumer of a native conversation cancelled; ignored");
    }

    fn retry_log_room(self: Rc<Self>, server: &Rc<Server>, call: u32) {
        let parked = {
            let mut parked = self.parked.borrow_mut();
            let at = parked.iter().position(|p| p.frame.conversation == call);
            at.map(|at| parked.swap_remove(at))
        };
        if let Some(parked) = parked {
            dispatch::retry_parked(server, &self, parked);
        }
    }

    fn is_closing(&self) -> bool {
        self.closing.get()
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
