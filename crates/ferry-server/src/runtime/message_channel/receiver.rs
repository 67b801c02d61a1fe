//! The receiving end of a message channel (RCVR): a conversation the native listener
//! hands over when a channel hello arrives.
//!
//! The hello is checked against the channel of that name (it must exist, be a receiver,
//! not be stopped, and pair with the caller's type; SEQWRAP must agree), then the
//! synchronisation states are compared ([`resynchronise`]): the answer tells the sender
//! the last batch committed here, from which it resolves a batch it left in doubt.
//!
//! Each message is put where its transmission header says (MQPUT1 of RemoteQName at
//! RemoteQMgrName, with all its context), inside the batch's unit of work when it
//! travelled in it, at once otherwise (fast non-persistent). What cannot be put goes to
//! the dead-letter queue; with none, a batch's message backs the batch out and the
//! channel stops, so the message stays on the sender's transmission queue. At the batch
//! end this end's record moves to the batch (in the same unit of work, when the batch had
//! persistent messages), the unit of work is committed and durable, and only then is the
//! batch confirmed.
//!
//! TLS is checked as for a client channel (`runtime::tls::check`: SSLCIPH, SSLCAUTH,
//! SSLPEER) and refused with the CipherSpec or PeerName status code. A hello with the
//! purpose Ping (PING CHANNEL at the sender) is answered by a short conversation of its
//! own that only echoes: it neither adopts the channel nor reads its record.
//!
//! A second conversation for a channel whose first one still runs adopts the channel:
//! the first is ended, its batch backed out, before the second reads the record (MQ's
//! AdoptNewMCA, which a sender restarting after a failure needs).

use super::dead_letter::{self, Undelivered};
use super::engine_session::EngineSession;
use super::io::{ChannelIo, ConversationError};
use super::sync_record::{End, SyncState, SyncStore};
use super::{Agent, MessageChannels};
use crate::messages;
use crate::runtime::clock;
use crate::runtime::server::Server;
use crate::runtime::telemetry::MessageFacts;
use crate::runtime::tls::{self, TlsSession};
use bytes::BytesMut;
use ferry_engine::ConnectionInfo;
use ferry_mqi::options::OpenOptions;
use ferry_mqi::options::PutOptionFlags;
use ferry_mqi::transmission::TransmissionHeader;
use ferry_mqi::{FixedStr, ObjectDescriptor, PutOptions, ReasonCode};
use ferry_objects::channel::{ChannelType, NonPersistentSpeed};
use ferry_objects::status::MessageChannelState;
use ferry_objects::StopMode;
use ferry_wire::channel::{
    max_channel_frame_len, negotiate_channel, resynchronise, ChannelAccepted, ChannelAgreement,
    ChannelFrame, ChannelHello, ChannelHelloReply, ChannelLimits, ChannelPurpose, ChannelRefused,
    ChannelStatusCode, InitiatorType, MessageFlags, NpmSpeed, ResponderType,
};
use ferry_wire::compression::{CompressionMeter, FrameExpander};
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};

/// How long the receiving end waits for anything when HBINT is 0.
const SILENCE_LIMIT_DEFAULT: Duration = Duration::from_secs(600);

/// Who opened a channel conversation.
pub(crate) struct Caller {
    /// The partner's address, as CONNAME shows it.
    pub peer: String,
    /// What TLS agreed, when the conversation uses it.
    pub tls: Option<Rc<TlsSession>>,
}

/// Serves a channel conversation that began with `hello` from `caller`.
pub(crate) async fn serve_partner<R, W>(
    partners: Rc<MessageChannels>,
    server: Rc<Server>,
    hello: ChannelHello,
    reader: R,
    writer: W,
    inbound: BytesMut,
    caller: Caller,
) where
    R: AsyncRead + Unpin + 'static,
    W: AsyncWrite + Unpin + 'static,
{
    let Caller { peer, tls } = caller;
    let name = hello.channel.as_str().to_string();
    // The channel types that answer a caller: a receiver (or cluster-receiver) a sending
    // caller, a server (or sender) a requester.
    let def = server.engine.borrow().channel(&name).filter(|d| {
        matches!(
            d.channel_type,
            ChannelType::Receiver
                | ChannelType::ClusterReceiver
                | ChannelType::Server
                | ChannelType::Sender
        )
    });
    let channel_type = def
        .as_ref()
        .map_or(ChannelType::Receiver, |d| d.channel_type);
    let instance = super::cluster::receiver_instance(&name, channel_type, hello.qmgr_name.as_str());
    let scratch = partners.instance_agent(&instance, &name, channel_type);
    let mut io = ChannelIo::new(
        Box::new(reader),
        Box::new(writer),
        inbound,
        max_channel_frame_len(hello.max_msg_length),
        scratch.clone(),
    );
    let refuse = |code: ChannelStatusCode, text: String| {
        server.error_log.borrow_mut().write(
            &messages::CHANNEL_NEGOTIATION_FAILED,
            &[
                &name,
                &format!("{} at {peer}", hello.qmgr_name.as_str()),
                &text,
            ],
        );
        let mut out = BytesMut::new();
        let _ = ChannelHelloReply::Refused(ChannelRefused::new(code, text)).encode(&mut out);
        out
    };
    let Some(def) = def else {
        let out = refuse(
            ChannelStatusCode::NoChannel,
            format!(
                "queue manager {} has no channel named {name} that answers a {}",
                server.name,
                initiator_keyword(hello.channel_type)
            ),
        );
        let _ = io.send_raw(&out).await;
        return;
    };
    // SSLCIPH, SSLCAUTH and SSLPEER as for a client channel (the refusal is logged).
    if let Err(refusal) = tls::check(&server, &def, tls.as_deref(), &peer) {
        let code = if refusal.reason == ReasonCode::SslPeerNameMismatch {
            ChannelStatusCode::PeerName
        } else {
            ChannelStatusCode::CipherSpec
        };
        let mut out = BytesMut::new();
        let _ =
            ChannelHelloReply::Refused(ChannelRefused::new(code, refusal.text)).encode(&mut out);
        let _ = io.send_raw(&out).await;
        return;
    }
    let agent = scratch;
    if agent.stop_requested().is_some() || agent.state() == MessageChannelState::Stopped {
        let out = refuse(
            ChannelStatusCode::Stopped,
            format!("channel {name} is stopped at {}", server.name),
        );
        let _ = io.send_raw(&out).await;
        return;
    }
    let a = &def.attributes;
    let limits = ChannelLimits {
        channel_type: match channel_type {
            ChannelType::ClusterReceiver => ResponderType::ClusterReceiver,
            ChannelType::Server => ResponderType::Server,
            ChannelType::Sender => ResponderType::Sender,
            _ => ResponderType::Receiver,
        },
        batch_size: a.batch_size.max(1) as u32,
        max_msg_length: a.max_msg_length.max(0) as u32,
        seq_wrap: a.sequence_wrap.max(1) as u32,
        heartbeat_interval: a.heartbeat_interval.max(0) as u32,
        npm_speed: match a.np_speed {
            NonPersistentSpeed::Fast => NpmSpeed::Fast,
            NonPersistentSpeed::Normal => NpmSpeed::Normal,
        },
        batch_heartbeat: a.batch_heartbeat.max(0) as u32,
        compress_header: a.header_compression.clone(),
        compress_message: a.message_compression.clone(),
    };
    let agreement = match negotiate_channel(&hello, &limits) {
        Ok(a) => a,
        Err(code) => {
            let text = match code {
                ChannelStatusCode::WrapValueError => format!(
                    "SEQWRAP differs: {} here, {} at the sender",
                    limits.seq_wrap, hello.seq_wrap
                ),
                ChannelStatusCode::ChannelType => format!(
                    "channel {name} at {} is a {} channel, which does not answer a {}",
                    server.name,
                    channel_type.keyword(),
                    initiator_keyword(hello.channel_type)
                ),
                _ => format!("the channel hello was refused ({code:?})"),
            };
            let out = refuse(code, text);
            let _ = io.send_raw(&out).await;
            return;
        }
    };
    if hello.purpose == ChannelPurpose::Ping {
        // PING CHANNEL: a conversation of its own that echoes; a running conversation
        // of the channel, its status and its synchronisation record are not touched.
        io.count_for(Agent::new(&name, ChannelType::Receiver));
        answer_ping(&server, &mut io, agreement).await;
        return;
    }
    match channel_type {
        ChannelType::Server => {
            let caller = Caller { peer, tls };
            super::requester::answer(&server, &agent, &def, &hello, io, caller, agreement).await;
            return;
        }
        ChannelType::Sender => {
            // MQ's callback: the sender ends this call and calls the requester back.
            let out = refuse(
                ChannelStatusCode::ChannelType,
                format!(
                    "channel {name} at {} is a sender: a requester calling a sender (callback) is not supported, define the sending end as a server (CHLTYPE(SVR))",
                    server.name
                ),
            );
            let _ = io.send_raw(&out).await;
            return;
        }
        _ => {}
    }
    // Adopt: a conversation still running for this channel ends first, its batch
    // backed out, so the record read below is the committed one.
    let generation = agent.adopt();
    let user = if a.mca_user.trim().is_empty() {
        server.administrators.process_user().to_string()
    } else {
        a.mca_user.trim().to_string()
    };
    let info = ConnectionInfo {
        application_name: format!("{name} (receiving channel)"),
        channel: name.clone(),
        connection_name: peer.clone(),
        user_id: user,
        pid: Some(std::process::id()),
    };
    let session = match EngineSession::connect(&server, info) {
        Ok(s) => Rc::new(s),
        Err(e) => {
            let out = refuse(
                ChannelStatusCode::QmUnavailable,
                format!(
                    "queue manager {} cannot serve the channel: {}",
                    server.name, e.reason
                ),
            );
            let _ = io.send_raw(&out).await;
            return;
        }
    };
    agent.hold_session(Some(session.clone()));
    let mut sync = match SyncStore::open(&session, &instance, End::Receiving).await {
        Ok(s) => s,
        Err(e) => {
            let out = refuse(
                ChannelStatusCode::QmUnavailable,
                format!("the synchronisation record cannot be read: {}", e.reason),
            );
            let _ = io.send_raw(&out).await;
            return;
        }
    };
    // What this end answers must be durable: the conversation adopted above may have
    // committed its batch in the engine and still be waiting for the log (a change is
    // applied at once; only its caller waits for the log), and the sender removes an
    // in-doubt batch from its transmission queue on the strength of this answer. If the
    // queue manager then ended before the log write, the batch would be lost on both
    // sides. The log is written in order, so rewriting the record (a put that returns
    // once durable) makes every commit before it durable too.
    let current = sync.state.clone();
    if let Err(e) = sync.replace(&session, current, false).await {
        let out = refuse(
            ChannelStatusCode::QmUnavailable,
            format!("the synchronisation record cannot be written: {}", e.reason),
        );
        let _ = io.send_raw(&out).await;
        return;
    }
    let ours = ferry_wire::channel::ReceiverSync {
        last_committed_seq: sync.state.committed_seq,
        last_luwid: sync.state.committed_luwid,
    };
    let resync = match resynchronise(hello.sender_sync(), ours, hello.reset_seq) {
        Ok(r) => r,
        Err(code) => {
            server.error_log.borrow_mut().write(
                &messages::CHANNEL_SEQUENCE_ERROR,
                &[
                    &name,
                    &format!("{} at {peer}", hello.qmgr_name.as_str()),
                    &hello.last_committed_seq,
                    &sync.state.committed_seq,
                ],
            );
            let mut out = BytesMut::new();
            let text = format!(
                "message sequence error: the receiver's last committed batch ends at {}, the sender's at {}",
                sync.state.committed_seq, hello.last_committed_seq
            );
            let _ = ChannelHelloReply::Refused(ChannelRefused::new(code, text)).encode(&mut out);
            let _ = io.send_raw(&out).await;
            return;
        }
    };
    if hello.reset_seq.is_some() && resync.last_committed_seq != sync.state.committed_seq {
        // RESET CHANNEL at the sender: this end takes the number too.
        let state = SyncState {
            committed_seq: resync.last_committed_seq,
            ..sync.state.clone()
        };
        if sync.replace(&session, state, true).await.is_err() || session.commit().await.is_err() {
            return;
        }
    }
    let accepted = ChannelAccepted {
        qmgr_name: FixedStr::truncating(&server.name),
        qmid: FixedStr::BLANK,
        agreement,
        last_committed_seq: sync.state.committed_seq,
        last_luwid: sync.state.committed_luwid,
    };
    let mut out = BytesMut::new();
    if ChannelHelloReply::Accepted(accepted)
        .encode(&mut out)
        .is_err()
    {
        return;
    }
    if io.send_raw(&out).await.is_err() {
        return;
    }
    io.set_max_frame(max_channel_frame_len(agreement.max_msg_length));
    let partner = format!("{} at {peer}", hello.qmgr_name.as_str());
    let receiving = Receiving {
        server: &server,
        agent: &agent,
        generation,
        session: &session,
        channel: &name,
        peer: &peer,
        partner_qmgr: hello.qmgr_name.as_str(),
        tls: tls.as_ref().map(|t| t.status()).unwrap_or_default(),
    };
    let result = receiving
        .batches(&mut sync, &mut io, &agreement, resync.last_committed_seq)
        .await;
    session.end(result.is_ok());
    if !agent.is_current(generation) {
        // Superseded by a newer conversation, which owns the status now.
        return;
    }
    agent.hold_session(None);
    match result {
        Ok(()) => agent.set_state(MessageChannelState::Inactive),
        Err(ConversationEnd::Stopped) => {
            if agent.stop_requested().is_some() {
                agent.set_state(MessageChannelState::Stopped);
            }
        }
        Err(why) => {
            agent.set_state(MessageChannelState::Inactive);
            server.error_log.borrow_mut().write(
                &messages::CHANNEL_ENDED_ABNORMALLY,
                &[&name, &partner, &why],
            );
        }
    }
}

/// The receiving end of one conversation once the hello is answered, whichever end
/// initiated (a sender calling this receiver, or this requester calling its server).
pub(super) struct Receiving<'a> {
    /// The queue manager.
    pub server: &'a Rc<Server>,
    /// The channel's agent.
    pub agent: &'a Rc<Agent>,
    /// This conversation's generation ([`Agent::adopt`]).
    pub generation: u64,
    /// The agent's engine connection.
    pub session: &'a EngineSession,
    /// The channel's name.
    pub channel: &'a str,
    /// The partner's address.
    pub peer: &'a str,
    /// The partner queue manager's name.
    pub partner_qmgr: &'a str,
    /// What TLS agreed (blank without TLS).
    pub tls: ferry_objects::status::TlsStatus,
}

impl Receiving<'_> {
    /// RUNNING: puts the batches that arrive over `io` with the `agreement`, the last
    /// committed sequence number being `last_committed_seq`, until the sending end
    /// closes (`Ok`) or the conversation fails or is stopped.
    pub(super) async fn batches(
        &self,
        sync: &mut SyncStore,
        io: &mut ChannelIo,
        agreement: &ChannelAgreement,
        last_committed_seq: u32,
    ) -> Result<(), ConversationEnd> {
        let agent = self.agent;
        // The thread's policy follows running channels (qm.ini RuntimeScheduling AUTO).
        let _running = self.server.scheduling.message_channel_running();
        {
            let mut s = agent.status.borrow_mut();
            *s = ferry_objects::status::MessageChannelStatus::new(MessageChannelState::Running);
            s.connection_name = self.peer.to_string();
            s.remote_qmgr = self.partner_qmgr.to_string();
            s.batch_size = agreement.batch_size;
            s.heartbeat_interval = agreement.heartbeat_interval;
            s.max_msg_length = agreement.max_msg_length;
            s.np_speed_fast = agreement.npm_speed == NpmSpeed::Fast;
            s.current_seq = last_committed_seq;
            s.last_seq = sync.state.committed_seq;
            s.last_luwid = sync.state.committed_luwid;
            s.started_ms = Some(clock::now().0);
            s.tls = self.tls.clone();
            s.compression = super::sender::agreed_compression(&agreement.compression);
        }
        let silence = if agreement.heartbeat_interval == 0 {
            SILENCE_LIMIT_DEFAULT
        } else {
            Duration::from_secs(u64::from(agreement.heartbeat_interval) * 2 + 60)
        };
        let mut conversation = Conversation {
            server: self.server,
            agent,
            generation: self.generation,
            session: self.session,
            sync,
            io,
            channel: self.channel.to_string(),
            batch_in_unit: 0,
            handles: HashMap::new(),
            expander: FrameExpander::new(agreement.compression),
            meter: CompressionMeter::default(),
            max_payload: max_channel_frame_len(agreement.max_msg_length),
        };
        conversation.run(silence).await
    }
}

/// The MQSC keyword of a caller's channel type, for messages.
fn initiator_keyword(t: InitiatorType) -> &'static str {
    match t {
        InitiatorType::Sender => "SDR",
        InitiatorType::Server => "SVR",
        InitiatorType::Requester => "RQSTR",
        InitiatorType::ClusterSender => "CLUSSDR",
    }
}

/// How long a ping conversation may stay silent.
const PING_SILENCE_LIMIT: Duration = Duration::from_secs(60);

/// Answers a ping hello: accepted with the agreed values and no synchronisation state,
/// then each Ping is echoed until the pinging end closes.
async fn answer_ping(server: &Server, io: &mut ChannelIo, agreement: ChannelAgreement) {
    let accepted = ChannelAccepted {
        qmgr_name: FixedStr::truncating(&server.name),
        qmid: FixedStr::BLANK,
        agreement,
        last_committed_seq: 0,
        last_luwid: 0,
    };
    let mut out = BytesMut::new();
    if ChannelHelloReply::Accepted(accepted)
        .encode(&mut out)
        .is_err()
        || io.send_raw(&out).await.is_err()
    {
        return;
    }
    loop {
        match tokio::time::timeout(PING_SILENCE_LIMIT, io.recv()).await {
            Ok(Ok(ChannelFrame::Ping { data })) => {
                if io.send(&ChannelFrame::PingReply { data }).await.is_err() {
                    return;
                }
            }
            Ok(Ok(ChannelFrame::Heartbeat { token })) => {
                if io
                    .send(&ChannelFrame::HeartbeatReply { token })
                    .await
                    .is_err()
                {
                    return;
                }
            }
            // A close, anything else, a broken or silent socket: the ping is over.
            _ => return,
        }
    }
}

/// Why a receiving conversation ended other than by the sender's close.
#[derive(Debug, thiserror::Error)]
pub(super) enum ConversationEnd {
    #[error("{0}")]
    Io(#[from] ConversationError),
    #[error("{0}")]
    Failed(String),
    #[error("stopped")]
    Stopped,
}

/// One receiving conversation after its hello.
struct Conversation<'a> {
    server: &'a Rc<Server>,
    agent: &'a Rc<Agent>,
    /// This conversation's generation ([`Agent::adopt`]).
    generation: u64,
    session: &'a EngineSession,
    sync: &'a mut SyncStore,
    io: &'a mut ChannelIo,
    channel: String,
    /// Messages of the batch in progress that travelled in its unit of work.
    batch_in_unit: u32,
    /// Handles opened for the destinations met so far ([`Conversation::put_to`]).
    handles: HashMap<(FixedStr<48>, FixedStr<48>), ferry_engine::Hobj>,
    /// Expands compressed messages (only with the agreed techniques).
    expander: FrameExpander,
    /// COMPRATE and COMPTIME of the messages received compressed.
    meter: CompressionMeter,
    /// The largest payload a message may expand to.
    max_payload: usize,
}

/// Destinations a receiving conversation keeps handles open for; beyond it they are
/// all closed and opened again as messages need them.
const MAX_OPEN_DESTINATIONS: usize = 64;

impl Conversation<'_> {
    async fn run(&mut self, silence: Duration) -> Result<(), ConversationEnd> {
        loop {
            if !self.agent.is_current(self.generation) {
                return Err(ConversationEnd::Stopped);
            }
            self.agent.set_substate("RECEIVE");
            // A frame read already goes at once; otherwise a stop or a newer conversation
            // wakes the wait (reading is cancel-safe).
            let frame = match self.io.try_recv()? {
                Some(f) => Some(f),
                None => tokio::select! {
                    f = tokio::time::timeout(silence, self.io.recv()) => match f {
                        Ok(f) => Some(f?),
                        Err(_) => return Err(ConversationError::Silent(silence.as_secs()).into()),
                    },
                    _ = self.agent.stop_wake.notified() => None,
                },
            };
            if !self.agent.is_current(self.generation) {
                return Err(ConversationEnd::Stopped);
            }
            let mid_batch = self.agent.status.borrow().current_messages > 0;
            let stop = match self.agent.stop_requested() {
                // QUIESCE lets the batch in progress end first.
                Some(StopMode::Quiesce) => !mid_batch,
                Some(_) => true,
                None => false,
            };
            if stop {
                let _ = self.session.backout().await;
                let _ = self
                    .io
                    .send(&ChannelFrame::status(
                        ChannelStatusCode::Stopped,
                        0,
                        "the channel was stopped at the receiving end",
                    ))
                    .await;
                return Err(ConversationEnd::Stopped);
            }
            let Some(frame) = frame else {
                continue;
            };
            match frame {
                ChannelFrame::Message {
                    seq,
                    flags,
                    properties,
                    payload,
                } => self.message(seq, flags, properties, payload).await?,
                ChannelFrame::ConfirmRequest {
                    luwid, last_seq, ..
                } => self.end_batch(luwid, last_seq).await?,
                ChannelFrame::Heartbeat { token } => {
                    self.agent.set_substate("HEARTBEAT");
                    self.io
                        .send(&ChannelFrame::HeartbeatReply { token })
                        .await?;
                }
                ChannelFrame::HeartbeatReply { .. } => {}
                ChannelFrame::Ping { data } => {
                    self.io.send(&ChannelFrame::PingReply { data }).await?;
                }
                ChannelFrame::Close { .. } => {
                    if self.batch_in_unit > 0 {
                        let _ = self.session.backout().await;
                    }
                    return Ok(());
                }
                ChannelFrame::Status { text, .. } => {
                    return Err(ConversationEnd::Failed(format!(
                        "the sender reported: {text}"
                    )))
                }
                other => {
                    let text = format!(
                        "unexpected frame type {} from the sender",
                        other.type_code()
                    );
                    let _ = self
                        .io
                        .send(&ChannelFrame::status(
                            ChannelStatusCode::ProtocolError,
                            0,
                            text.clone(),
                        ))
                        .await;
                    return Err(ConversationEnd::Failed(text));
                }
            }
        }
    }

    /// Puts one arriving message where its transmission header says.
    /// A compressed payload expanded; a technique not agreed or damaged data ends the
    /// conversation (a protocol error: the batch backs out and is sent again).
    fn expand(&mut self, payload: &[u8]) -> Result<bytes::Bytes, ConversationEnd> {
        let started = std::time::Instant::now();
        let (expanded, flow) = self
            .expander
            .expand_payload(payload, self.max_payload)
            .map_err(|e| ConversationEnd::Failed(format!("a compressed message: {e}")))?;
        self.meter
            .record(&flow, started.elapsed().as_secs_f64() * 1e6);
        self.agent.show_compression(&flow, &self.meter);
        Ok(expanded.freeze())
    }

    async fn message(
        &mut self,
        seq: u32,
        flags: MessageFlags,
        properties: bytes::Bytes,
        payload: bytes::Bytes,
    ) -> Result<(), ConversationEnd> {
        self.agent.set_substate("MQPUT");
        let in_unit = flags.contains(MessageFlags::IN_BATCH_UNIT);
        let payload = if flags.contains(MessageFlags::COMPRESSED) {
            self.expand(&payload)?
        } else {
            payload
        };
        {
            let mut s = self.agent.status.borrow_mut();
            s.current_seq = seq;
            s.messages += 1;
            s.current_messages += 1;
        }
        if in_unit {
            self.batch_in_unit += 1;
        }
        let syncpoint = if in_unit {
            PutOptionFlags::SYNCPOINT
        } else {
            PutOptionFlags::NO_SYNCPOINT
        };
        let (header, header_len) = match TransmissionHeader::decode(&payload) {
            Ok(h) => h,
            Err(e) => {
                let md = ferry_mqi::MessageDescriptor::default();
                return self
                    .undeliverable(Undelivered {
                        md: &md,
                        data: &payload,
                        properties,
                        reason: e.reason(),
                        queue: "",
                        qmgr: "",
                        in_unit,
                    })
                    .await;
            }
        };
        let data = payload.slice(header_len..);
        let mut md = header.md;
        let queue = header.remote_q_name.as_str().to_string();
        let qmgr = header.remote_qmgr_name.as_str().to_string();
        let od = ObjectDescriptor {
            object_name: header.remote_q_name,
            object_qmgr_name: header.remote_qmgr_name,
            ..ObjectDescriptor::default()
        };
        let pmo = PutOptions::new(
            syncpoint | PutOptionFlags::SET_ALL_CONTEXT | PutOptionFlags::FAIL_IF_QUIESCING,
        );
        let span = if self.server.telemetry.is_on() {
            self.server.telemetry.start_process(&properties)
        } else {
            None
        };
        let put = self
            .put_to(&od, &mut md, &pmo, data.clone(), properties.clone())
            .await;
        if let Some(span) = span {
            let facts = MessageFacts {
                destination: &queue,
                md: &md,
                body_len: data.len(),
                conn: None,
                channel: Some(&self.channel),
            };
            let outcome = put.as_ref().map(drop).map_err(|e| e.reason);
            span.end(&self.server.telemetry, &facts, outcome, false);
        }
        match put {
            Ok(_) => Ok(()),
            Err(e) => {
                self.undeliverable(Undelivered {
                    md: &header.md,
                    data: &data,
                    properties,
                    reason: e.reason,
                    queue: &queue,
                    qmgr: &qmgr,
                    in_unit,
                })
                .await
            }
        }
    }

    /// Puts to `od`'s destination through a handle kept open for it, as MQ's channel
    /// agents keep theirs: a stream of messages for a few queues costs one MQOPEN each,
    /// not one per message. A handle whose queue went (2052, 2019) is opened again once.
    async fn put_to(
        &mut self,
        od: &ObjectDescriptor,
        md: &mut ferry_mqi::MessageDescriptor,
        pmo: &PutOptions,
        data: bytes::Bytes,
        properties: bytes::Bytes,
    ) -> Result<(), ferry_mqi::MqError> {
        let key = (od.object_name, od.object_qmgr_name);
        for attempt in 0..2 {
            let hobj = match self.handles.get(&key) {
                Some(h) => *h,
                None => {
                    let h = self.session.open(
                        od,
                        OpenOptions::OUTPUT
                            | OpenOptions::SET_ALL_CONTEXT
                            | OpenOptions::FAIL_IF_QUIESCING,
                    )?;
                    if self.handles.len() >= MAX_OPEN_DESTINATIONS {
                        for (_, old) in self.handles.drain() {
                            self.session.close(old);
                        }
                    }
                    self.handles.insert(key, h);
                    h
                }
            };
            match self
                .session
                .put(hobj, md, pmo, data.clone(), properties.clone())
                .await
            {
                Ok(_) => return Ok(()),
                Err(e)
                    if attempt == 0
                        && matches!(e.reason, ReasonCode::QDeleted | ReasonCode::HobjError) =>
                {
                    self.handles.remove(&key);
                    self.session.close(hobj);
                }
                Err(e) => return Err(e),
            }
        }
        Err(ReasonCode::QDeleted.into())
    }

    /// A message that cannot be put: to the dead-letter queue, else the batch fails.
    async fn undeliverable(&mut self, message: Undelivered<'_>) -> Result<(), ConversationEnd> {
        let (queue, qmgr, reason, in_unit) =
            (message.queue, message.qmgr, message.reason, message.in_unit);
        let use_dlq = self
            .server
            .engine
            .borrow()
            .channel(&self.channel)
            .is_none_or(|d| {
                d.attributes.use_dlq == ferry_objects::channel::UseDeadLetterQueue::Yes
            });
        let put = if use_dlq {
            dead_letter::put(self.session, &self.channel, message)
                .await
                .map_err(|e| e.reason.to_string())
        } else {
            Err("USEDLQ(NO)".to_string())
        };
        match put {
            Ok(dlq) => {
                self.server.error_log.borrow_mut().write(
                    &messages::MESSAGE_DEAD_LETTERED,
                    &[&queue, &qmgr, &self.channel, &reason, &dlq],
                );
                Ok(())
            }
            Err(why) if !in_unit => {
                // A fast non-persistent message: discarded, as MQ does.
                self.server.error_log.borrow_mut().write(
                    &messages::NO_DEAD_LETTER_QUEUE,
                    &[&queue, &qmgr, &self.channel, &reason, &why],
                );
                Ok(())
            }
            Err(why) => {
                let _ = self.session.backout().await;
                self.batch_in_unit = 0;
                self.server.error_log.borrow_mut().write(
                    &messages::NO_DEAD_LETTER_QUEUE,
                    &[&queue, &qmgr, &self.channel, &reason, &why],
                );
                let text = format!(
                    "a message for {queue} at {qmgr} could not be put ({reason}) nor dead-lettered ({why})"
                );
                let _ = self
                    .io
                    .send(&ChannelFrame::status(
                        ChannelStatusCode::BatchFailure,
                        reason.number(),
                        text.clone(),
                    ))
                    .await;
                self.agent.set_state(MessageChannelState::Stopped);
                Err(ConversationEnd::Stopped)
            }
        }
    }

    /// The end of a batch: the record moves to it (when it had persistent messages), the
    /// unit of work is committed and durable, then the batch is confirmed.
    async fn end_batch(&mut self, luwid: u64, last_seq: u32) -> Result<(), ConversationEnd> {
        self.agent.set_substate("ENDBATCH");
        if self.batch_in_unit == 0 {
            // Only fast non-persistent messages, put already: nothing to commit, and the
            // sender does not wait for a confirmation (docs/protocol.md).
            let mut s = self.agent.status.borrow_mut();
            s.batches += 1;
            s.current_messages = 0;
            // LSTMSGTI: the batch's end follows its last message at once.
            s.last_message_ms = Some(clock::now().0);
            return Ok(());
        }
        {
            let state = SyncState {
                committed_seq: last_seq,
                committed_luwid: luwid,
                in_doubt: None,
                partner_qmgr: self.agent.status.borrow().remote_qmgr.clone(),
                ..SyncState::default()
            };
            if let Err(e) = self.sync.replace(self.session, state, true).await {
                let _ = self.session.backout().await;
                let _ = self
                    .io
                    .send(&ChannelFrame::batch_failed(
                        luwid,
                        ChannelStatusCode::BatchFailure,
                        e.reason.number(),
                        format!("the receiver could not record the batch: {}", e.reason),
                    ))
                    .await;
                return Err(ConversationEnd::Failed(format!(
                    "the batch could not be recorded: {}",
                    e.reason
                )));
            }
        }
        if let Err(e) = self.session.commit().await {
            let _ = self
                .io
                .send(&ChannelFrame::batch_failed(
                    luwid,
                    ChannelStatusCode::BatchFailure,
                    e.reason.number(),
                    format!("the receiver could not commit the batch: {}", e.reason),
                ))
                .await;
            return Err(ConversationEnd::Failed(format!(
                "the batch could not be committed: {}",
                e.reason
            )));
        }
        self.io
            .send(&ChannelFrame::Confirm { luwid, last_seq })
            .await?;
        let mut s = self.agent.status.borrow_mut();
        s.batches += 1;
        s.current_messages = 0;
        s.last_message_ms = Some(clock::now().0);
        s.last_seq = last_seq;
        s.last_luwid = luwid;
        self.batch_in_unit = 0;
        Ok(())
    }
}
