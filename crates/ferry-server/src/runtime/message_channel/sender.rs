//! The sending end of a message channel (SDR, or SVR with a CONNAME): drains the
//! transmission queue to the partner queue manager in confirmed batches.
//!
//! One conversation: connect to the first CONNAME address that answers, send the channel
//! hello with this end's synchronisation state, resolve a batch left in doubt by the
//! last conversation (the partner's last LUWID says whether it committed it), then loop:
//! wait for a message, gather a batch (up to BATCHSZ messages and BATCHLIM KB, while the
//! transmission queue has them, or BATCHINT ms), send it, and end it with a confirmation
//! request. A batch with persistent messages is first recorded as in doubt (durably, on
//! SYSTEM.CHANNEL.SYNCQ); its gets are committed once the partner confirms. Fast
//! non-persistent messages are got outside the unit of work and may be lost if the
//! channel fails while they are in flight, as MQ documents for NPMSPEED(FAST).
//!
//! Around conversations: a failure is retried SHORTRTY times every SHORTTMR seconds,
//! then LONGRTY times every LONGTMR seconds, then the channel is STOPPED; DISCINT seconds
//! with nothing to send end the conversation normally (INACTIVE): the channel initiator
//! starts it again when its transmission queue triggers (`initiator`), except a
//! cluster-sender, which waits for its next message on SYSTEM.CLUSTER.TRANSMIT.QUEUE
//! itself.

use super::dead_letter::{self, Undelivered};
use super::engine_session::EngineSession;
use super::io::{ChannelIo, ConversationError};
use super::sync_record::{
    msg_id_from_hex, msg_id_hex, remove_message, End, InDoubtBatch, SyncState, SyncStore,
};
use super::{new_luwid, waits_for_messages, Agent};
use crate::messages;
use crate::runtime::clock;
use crate::runtime::server::Server;
use crate::runtime::telemetry::MessageFacts;
use bytes::BytesMut;
use ferry_engine::ConnectionInfo;
use ferry_mqi::conname::parse_conname;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::options::{GetOptionFlags, MatchOptions, OpenOptions};
use ferry_mqi::transmission::TransmissionHeader;
use ferry_mqi::FixedStr;
use ferry_mqi::{GetOptions, MessageDescriptor, MqError, ObjectDescriptor, ReasonCode};
use ferry_objects::channel::{ChannelType, NonPersistentSpeed};
use ferry_objects::status::{CompressionStatus, MessageChannelState, TlsStatus};
use ferry_objects::{ChannelDefinition, StopMode};
use ferry_security::PeerNameFilter;
use ferry_tls::tokio_rustls::rustls::pki_types::ServerName;
use ferry_wire::channel::{
    max_channel_frame_len, next_seq, resynchronise, ChannelAccepted, ChannelAgreement,
    ChannelFrame, ChannelHello, ChannelHelloReply, ChannelPurpose, ChannelStatusCode, CloseMode,
    InDoubtOutcome, InitiatorType, MessageFlags, NpmSpeed, Resynchronisation,
};
use ferry_wire::compression::{CompressionMeter, FrameCompressor, Techniques};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// How long a TCP connect or the hello's answer may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest one get waits before the agent looks at its stop flag and timers again.
const WAIT_SLICE_MS: i32 = 1000;
/// How long a confirmation may take when HBINT does not say (HBINT 0).
const CONFIRM_TIMEOUT_DEFAULT: Duration = Duration::from_secs(60);

/// Why a conversation ended.
pub(super) enum Ended {
    /// DISCINT passed with nothing to send.
    Disconnected,
    /// STOP CHANNEL MODE(QUIESCE).
    Stopped,
}

/// Why a conversation failed: what the error log says, and whether retrying may help.
pub(super) struct Failure {
    /// The error-log message.
    pub message: &'static ferry_messages::Message,
    /// Its inserts.
    pub inserts: Vec<String>,
    /// Whether retrying may help.
    pub retry: bool,
}

impl Failure {
    /// The error-log line.
    pub(super) fn text(&self) -> String {
        let inserts: Vec<&dyn std::fmt::Display> = self
            .inserts
            .iter()
            .map(|s| s as &dyn std::fmt::Display)
            .collect();
        self.message.format(&inserts)
    }

    pub(super) fn abnormal(agent: &Agent, partner: &str, why: impl std::fmt::Display) -> Failure {
        Failure {
            message: &messages::CHANNEL_ENDED_ABNORMALLY,
            inserts: vec![agent.name.clone(), partner.to_string(), why.to_string()],
            retry: true,
        }
    }

    pub(super) fn engine(agent: &Agent, what: &str, e: MqError) -> Failure {
        Failure {
            message: &messages::CHANNEL_ENDED_ABNORMALLY,
            inserts: vec![
                agent.name.clone(),
                "the local queue manager".into(),
                format!("{what}: {}", e.reason),
            ],
            retry: true,
        }
    }
}

/// Retries left after failures, MQ's short then long.
struct Retries {
    short_left: u64,
    long_left: u64,
    short_secs: u64,
    long_secs: u64,
}

impl Retries {
    fn of(def: &ChannelDefinition) -> Retries {
        let a = &def.attributes;
        Retries {
            short_left: a.short_retry_count.max(0) as u64,
            long_left: a.long_retry_count.max(0) as u64,
            short_secs: a.short_retry_interval.max(0) as u64,
            long_secs: a.long_retry_interval.max(0) as u64,
        }
    }

    /// The next wait and its kind, or `None` when the retries are exhausted.
    fn next(&mut self) -> Option<(u64, &'static str, u64)> {
        if self.short_left > 0 {
            self.short_left -= 1;
            Some((self.short_secs, "short", self.short_left))
        } else if self.long_left > 0 {
            self.long_left -= 1;
            Some((self.long_secs, "long", self.long_left))
        } else {
            None
        }
    }
}

/// Runs the initiating agent of `agent`'s channel (a sender, a server with a CONNAME, a
/// cluster-sender, or a requester, whose conversation is [`super::requester::call`])
/// until it stops (STOP CHANNEL, retries exhausted, or DISCINT). `waiting_for_trigger`:
/// wait first for a message (a cluster-sender armed by the repository task).
pub(crate) async fn run(server: Rc<Server>, agent: Rc<Agent>, mut waiting_for_trigger: bool) {
    loop {
        let Some(def) = super::cluster::sending_definition(&server, &agent.name) else {
            agent.set_state(MessageChannelState::Inactive);
            return;
        };
        let def = if waiting_for_trigger {
            agent.set_state(MessageChannelState::Inactive);
            // Messages of a switch not made before a restart go where it waits first.
            let Some(def) = on_cluster_xmit_q(&server, &agent, def).await else {
                return;
            };
            if !wait_for_message(&server, &agent, &def).await {
                return;
            }
            def
        } else {
            def
        };
        // A cluster-sender starting: on the transmission queue DEFCLXQ asks for.
        let Some(def) = on_cluster_xmit_q(&server, &agent, def).await else {
            return;
        };
        let mut retries = Retries::of(&def);
        {
            let mut s = agent.status.borrow_mut();
            s.short_retries_left = retries.short_left;
            s.long_retries_left = retries.long_left;
        }
        let ended = loop {
            if agent.stop_requested().is_some() {
                break None;
            }
            agent.set_state(MessageChannelState::Binding);
            let conversation = if def.channel_type == ChannelType::Requester {
                super::requester::call(&server, &agent, &def).await
            } else {
                conversation(&server, &agent, &def).await
            };
            match conversation {
                Ok(ended) => break Some(ended),
                Err(failure) => {
                    agent.hold_session(None);
                    let inserts: Vec<&dyn std::fmt::Display> = failure
                        .inserts
                        .iter()
                        .map(|s| s as &dyn std::fmt::Display)
                        .collect();
                    server
                        .error_log
                        .borrow_mut()
                        .write(failure.message, &inserts);
                    let next = if failure.retry { retries.next() } else { None };
                    {
                        let mut s = agent.status.borrow_mut();
                        s.short_retries_left = retries.short_left;
                        s.long_retries_left = retries.long_left;
                    }
                    let Some((secs, kind, left)) = next else {
                        server
                            .error_log
                            .borrow_mut()
                            .write(&messages::CHANNEL_RETRIES_EXHAUSTED, &[&agent.name]);
                        agent.set_state(MessageChannelState::Stopped);
                        return;
                    };
                    agent.set_state(MessageChannelState::Retrying);
                    server.error_log.borrow_mut().write(
                        &messages::CHANNEL_RETRYING,
                        &[&agent.name, &secs, &left, &kind],
                    );
                    let sleep = tokio::time::sleep(Duration::from_secs(secs));
                    tokio::select! {
                        _ = sleep => {}
                        _ = agent.stop_wake.notified() => {}
                    }
                }
            }
        };
        agent.hold_session(None);
        match ended {
            None | Some(Ended::Stopped) => {
                agent.set_state(MessageChannelState::Stopped);
                server
                    .error_log
                    .borrow_mut()
                    .write(&messages::CHANNEL_ENDED, &[&agent.name, &"STOP CHANNEL"]);
                return;
            }
            Some(Ended::Disconnected) => {
                server.error_log.borrow_mut().write(
                    &messages::CHANNEL_DISCONNECTED,
                    &[&agent.name, &def.attributes.disconnect_interval],
                );
                agent.set_state(MessageChannelState::Inactive);
                if !waits_for_messages(&def) {
                    return;
                }
                waiting_for_trigger = true;
            }
        }
    }
}

/// `def` of a cluster-sender on the transmission queue QMGR DEFCLXQ asks for, after a
/// switch when it was on another (`cluster_xmit_switch`); `def` itself for other
/// channels. `None` when the channel is gone.
async fn on_cluster_xmit_q(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: ChannelDefinition,
) -> Option<ChannelDefinition> {
    if def.channel_type != ChannelType::ClusterSender
        || !super::cluster_xmit_switch::switch(server, &agent.name).await
    {
        return Some(def);
    }
    let def = super::cluster::sending_definition(server, &agent.name);
    if def.is_none() {
        agent.set_state(MessageChannelState::Inactive);
    }
    def
}

/// Waits, INACTIVE, until the transmission queue has a message for the channel (true)
/// or the channel is stopped or gone (false): how a cluster-sender starts.
async fn wait_for_message(server: &Rc<Server>, agent: &Rc<Agent>, def: &ChannelDefinition) -> bool {
    let info = connection_info(server, def);
    let Ok(session) = EngineSession::connect(server, info) else {
        return false;
    };
    let Ok(od) = ObjectDescriptor::queue(def.attributes.xmit_q.trim()) else {
        return false;
    };
    let Ok(hobj) = session.open(&od, OpenOptions::BROWSE | OpenOptions::FAIL_IF_QUIESCING) else {
        return false;
    };
    let session = Rc::new(session);
    agent.hold_session(Some(session.clone()));
    loop {
        if agent.stop_requested().is_some() {
            return false;
        }
        let gmo = GetOptions {
            options: GetOptionFlags::BROWSE_FIRST
                | GetOptionFlags::WAIT
                | GetOptionFlags::ACCEPT_TRUNCATED_MSG
                | GetOptionFlags::FAIL_IF_QUIESCING,
            wait_interval: WAIT_SLICE_MS,
            match_options: super::cluster::get_match(def).1,
        };
        match session
            .get(hobj, &super::cluster::get_match(def).0, &gmo, 0)
            .await
        {
            Ok(_) => break,
            Err(e) if e.error.reason == ReasonCode::TruncatedMsgAccepted => break,
            Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => continue,
            Err(_) => return false,
        }
    }
    agent.hold_session(None);
    session.end(true);
    true
}

/// Who the agent is to the engine: the channel, its partner, the queue manager's own
/// user.
pub(super) fn connection_info(server: &Server, def: &ChannelDefinition) -> ConnectionInfo {
    ConnectionInfo {
        application_name: format!("{} (sending channel)", def.name),
        channel: def.name.clone(),
        connection_name: def.attributes.connection_name.clone(),
        user_id: server.administrators.process_user().to_string(),
        pid: Some(std::process::id()),
    }
}

/// One conversation with the partner, from connect to its end.
async fn conversation(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: &ChannelDefinition,
) -> Result<Ended, Failure> {
    let a = &def.attributes;
    let conname = a.connection_name.trim().to_string();
    let xmitq = a.xmit_q.trim().to_string();
    if xmitq.is_empty() {
        return Err(Failure {
            message: &messages::CHANNEL_NEGOTIATION_FAILED,
            inserts: vec![
                agent.name.clone(),
                conname,
                "the channel has no XMITQ".into(),
            ],
            retry: false,
        });
    }
    let session = Rc::new(
        EngineSession::connect(server, connection_info(server, def))
            .map_err(|e| Failure::engine(agent, "connect", e))?,
    );
    agent.hold_session(Some(session.clone()));
    let od = ObjectDescriptor::queue(&xmitq)
        .map_err(|_| Failure::engine(agent, "XMITQ", ReasonCode::ObjectNameError.into()))?;
    let xq = session
        .open(
            &od,
            super::cluster::xmit_q_input(def) | OpenOptions::FAIL_IF_QUIESCING,
        )
        .map_err(|e| Failure::engine(agent, &format!("open {xmitq}"), e))?;
    let mut sync = SyncStore::open(&session, &def.name, End::Sending)
        .await
        .map_err(|e| Failure::engine(agent, "read the synchronisation record", e))?;
    {
        let mut s = agent.status.borrow_mut();
        s.connection_name = conname.clone();
        s.xmit_q = xmitq.clone();
        s.substate = "NETCONNECT".into();
    }
    let hello = ChannelHello {
        last_committed_seq: sync.state.committed_seq,
        last_luwid: sync.state.committed_luwid,
        in_doubt: sync.state.sender_sync().in_doubt,
        reset_seq: agent.reset_seq.get(),
        ..hello(server, def, ChannelPurpose::Run)
    };
    let Opened {
        mut io,
        accepted,
        partner,
        tls,
    } = open(server, agent, def, &hello).await?;
    agent.status.borrow_mut().tls = tls;
    agent.reset_seq.set(None);
    let agreement = accepted.agreement;
    io.set_max_frame(max_channel_frame_len(agreement.max_msg_length));
    // The in-doubt batch, as the partner's last committed batch says.
    let resync = resynchronise(
        hello.sender_sync(),
        accepted.receiver_sync(),
        hello.reset_seq,
    )
    .map_err(|_| Failure {
        message: &messages::CHANNEL_SEQUENCE_ERROR,
        inserts: vec![
            agent.name.clone(),
            partner.clone(),
            sync.state.committed_seq.to_string(),
            accepted.last_committed_seq.to_string(),
        ],
        retry: false,
    })?;
    let sending = Sending {
        server,
        agent,
        def,
        session: &session,
        xq,
        partner: &partner,
        partner_qmgr: accepted.qmgr_name.as_str(),
    };
    sending.settle(&mut sync, resync).await?;
    let ended = sending
        .batches(&mut sync, &mut io, &agreement, resync.last_committed_seq)
        .await;
    agent.hold_session(None);
    match &ended {
        Ok(_) => session.end(true),
        Err(_) => session.end(false),
    }
    ended
}

/// The sending end of one conversation once the hello is answered: what settling the
/// synchronisation and the batches need, whichever end initiated (a sender, or a
/// server answering its requester).
pub(super) struct Sending<'a> {
    /// The queue manager.
    pub server: &'a Rc<Server>,
    /// The channel's agent.
    pub agent: &'a Rc<Agent>,
    /// The channel.
    pub def: &'a ChannelDefinition,
    /// The agent's engine connection.
    pub session: &'a EngineSession,
    /// The transmission queue, open for input.
    pub xq: ferry_engine::Hobj,
    /// The partner's address, for messages.
    pub partner: &'a str,
    /// The partner queue manager's name.
    pub partner_qmgr: &'a str,
}

impl Sending<'_> {
    /// Acts on the agreed resynchronisation: the in-doubt batch committed or backed
    /// out (FRY9548I), or the sequence number RESET CHANNEL gave written to the record.
    pub(super) async fn settle(
        &self,
        sync: &mut SyncStore,
        resync: Resynchronisation,
    ) -> Result<(), Failure> {
        let (server, agent, partner) = (self.server, self.agent, self.partner);
        if let (Some(outcome), Some(batch)) = (resync.in_doubt, sync.state.in_doubt.clone()) {
            agent.set_substate("RESYNCH");
            resolve(
                self.session,
                self.xq,
                sync,
                &batch,
                outcome,
                resync.last_committed_seq,
            )
            .await
            .map_err(|e| Failure::engine(agent, "resolve the in-doubt batch", e))?;
            let how = match outcome {
                InDoubtOutcome::Commit => "commit",
                InDoubtOutcome::BackOut => "back out",
            };
            let why = match outcome {
                InDoubtOutcome::Commit => format!("{partner} had committed it"),
                InDoubtOutcome::BackOut => format!("{partner} had not committed it"),
            };
            server.error_log.borrow_mut().write(
                &messages::CHANNEL_INDOUBT_RESOLVED,
                &[
                    &agent.name,
                    &format!("{:016X}", batch.luwid),
                    &batch.msg_ids.len(),
                    &how,
                    &why,
                ],
            );
        } else if sync.state.committed_seq != resync.last_committed_seq {
            // RESET CHANNEL: both ends take the number given.
            let state = SyncState {
                committed_seq: resync.last_committed_seq,
                in_doubt: None,
                ..sync.state.clone()
            };
            sync.replace(self.session, state, false)
                .await
                .map_err(|e| Failure::engine(agent, "write the synchronisation record", e))?;
        }
        debug_assert!(sync.state.in_doubt.is_none());
        debug_assert_eq!(sync.state.committed_seq, resync.last_committed_seq);
        Ok(())
    }

    /// RUNNING: sends batches over `io` with the `agreement`, numbering from
    /// `last_committed_seq`, until the conversation ends.
    pub(super) async fn batches(
        &self,
        sync: &mut SyncStore,
        io: &mut ChannelIo,
        agreement: &ChannelAgreement,
        last_committed_seq: u32,
    ) -> Result<Ended, Failure> {
        let (server, agent) = (self.server, self.agent);
        let fast = agreement.npm_speed == NpmSpeed::Fast;
        {
            let mut s = agent.status.borrow_mut();
            s.remote_qmgr = self.partner_qmgr.to_string();
            s.batch_size = agreement.batch_size;
            s.heartbeat_interval = agreement.heartbeat_interval;
            s.max_msg_length = agreement.max_msg_length;
            s.np_speed_fast = fast;
            s.current_seq = last_committed_seq;
            s.last_seq = last_committed_seq;
            s.last_luwid = sync.state.committed_luwid;
            s.started_ms = Some(clock::now().0);
            s.messages = 0;
            s.batches = 0;
            // A batch the last conversation left in doubt (INDOUBT YES while RETRYING) is
            // resolved by now: the record no longer names it.
            s.in_doubt = false;
            s.current_messages = 0;
            s.compression = agreed_compression(&agreement.compression);
        }
        agent.set_state(MessageChannelState::Running);
        // The thread's policy follows running channels (qm.ini RuntimeScheduling AUTO).
        let _running = server.scheduling.message_channel_running();
        server.error_log.borrow_mut().write(
            &messages::CHANNEL_RUNNING,
            &[
                &agent.name,
                &self.partner_qmgr,
                &self.partner,
                &agreement.batch_size,
                &if fast { "FAST" } else { "NORMAL" },
            ],
        );
        let mut batches = BatchLoop {
            server,
            agent,
            def: self.def,
            session: self.session,
            xq: self.xq,
            sync,
            io,
            partner: self.partner,
            fast,
            seq: last_committed_seq,
            seq_wrap: agreement.seq_wrap,
            batch_size: agreement.batch_size.max(1),
            max_msg_length: agreement.max_msg_length,
            heartbeat: Duration::from_secs(u64::from(agreement.heartbeat_interval)),
            compressor: agreement
                .compression
                .any()
                .then(|| FrameCompressor::new(agreement.compression)),
            meter: CompressionMeter::default(),
            get_match: super::cluster::get_match(self.def),
        };
        batches.run().await
    }
}

/// The hello of `def`'s sending end for `purpose`: the channel's values, and no
/// synchronisation state (a start adds its own).
pub(super) fn hello(
    server: &Server,
    def: &ChannelDefinition,
    purpose: ChannelPurpose,
) -> ChannelHello {
    let a = &def.attributes;
    ChannelHello {
        channel: FixedStr::truncating(&def.name),
        channel_type: match def.channel_type {
            ChannelType::Server => InitiatorType::Server,
            ChannelType::ClusterSender => InitiatorType::ClusterSender,
            ChannelType::Requester => InitiatorType::Requester,
            _ => InitiatorType::Sender,
        },
        purpose,
        qmgr_name: FixedStr::truncating(&server.name),
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
        ..ChannelHello::default()
    }
}

/// A conversation with the partner, opened: connected (over TLS when the channel has
/// SSLCIPH), the hello sent and accepted.
pub(super) struct Opened {
    /// The conversation's socket.
    pub io: ChannelIo,
    /// The partner's answer.
    pub accepted: ChannelAccepted,
    /// The partner's address, for messages.
    pub partner: String,
    /// What TLS agreed (blank without TLS), for DISPLAY CHSTATUS.
    pub tls: TlsStatus,
}

/// Connects to `def`'s partner, with TLS when the channel has SSLCIPH, and sends
/// `hello` (a start or a ping); `agent` counts the bytes. A refusal is a failure
/// with the partner's reason.
pub(super) async fn open(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: &ChannelDefinition,
    hello: &ChannelHello,
) -> Result<Opened, Failure> {
    let a = &def.attributes;
    let conname = a.connection_name.trim().to_string();
    let (stream, partner) = connect(&conname).await.map_err(|why| Failure {
        message: &messages::CHANNEL_CONNECT_FAILED,
        inserts: vec![agent.name.clone(), conname.clone(), why],
        retry: true,
    })?;
    let _ = stream.set_nodelay(true);
    let max_frame = max_channel_frame_len(a.max_msg_length.max(0) as u32);
    let (mut io, tls) = if a.tls_requested() {
        let (tls, status) = tls_handshake(server, agent, def, stream, &partner).await?;
        let every =
            ferry_tls::key_reset_bytes(i64::from(server.engine.borrow().qmgr().ssl_reset_count));
        let (r, w, _counters) = ferry_tls::split(tls, every);
        let io = ChannelIo::new(
            Box::new(r),
            Box::new(w),
            BytesMut::new(),
            max_frame,
            agent.clone(),
        );
        (io, status)
    } else {
        let (r, w) = stream.into_split();
        let io = ChannelIo::new(
            Box::new(r),
            Box::new(w),
            BytesMut::new(),
            max_frame,
            agent.clone(),
        );
        (io, TlsStatus::default())
    };
    let mut out = BytesMut::new();
    hello
        .encode(&mut out)
        .map_err(|e| Failure::abnormal(agent, &partner, e))?;
    io.send_raw(&out)
        .await
        .map_err(|e| Failure::abnormal(agent, &partner, e))?;
    let reply = tokio::time::timeout(CONNECT_TIMEOUT, read_reply(&mut io))
        .await
        .map_err(|_| Failure::abnormal(agent, &partner, "no answer to the channel hello"))?
        .map_err(|e| Failure::abnormal(agent, &partner, e))?;
    match reply {
        ChannelHelloReply::Accepted(accepted) => Ok(Opened {
            io,
            accepted,
            partner,
            tls,
        }),
        ChannelHelloReply::Refused(r) => {
            let retry = !matches!(
                r.code,
                ChannelStatusCode::SequenceError | ChannelStatusCode::WrapValueError
            );
            let (message, inserts) = if r.code == ChannelStatusCode::SequenceError {
                (
                    &messages::CHANNEL_SEQUENCE_ERROR,
                    vec![
                        agent.name.clone(),
                        partner.clone(),
                        hello.last_committed_seq.to_string(),
                        r.text.clone(),
                    ],
                )
            } else {
                (
                    &messages::CHANNEL_NEGOTIATION_FAILED,
                    vec![agent.name.clone(), partner.clone(), r.text.clone()],
                )
            };
            Err(Failure {
                message,
                inserts,
                retry,
            })
        }
    }
}

/// The TLS handshake of a sending channel with SSLCIPH, as an MQ sender makes it: the
/// channel's CipherSpec, its certificate (CERTLABL, else the queue manager's) from the
/// key repository, the partner's chain checked against trust.pem, the channel named in
/// SNI so the partner presents that channel's certificate, then SSLPEER on the partner's
/// certificate.
async fn tls_handshake(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: &ChannelDefinition,
    stream: tokio::net::TcpStream,
    partner: &str,
) -> Result<
    (
        ferry_tls::tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
        TlsStatus,
    ),
    Failure,
> {
    let a = &def.attributes;
    let refused = |message: &'static ferry_messages::Message, inserts: Vec<String>| Failure {
        message,
        inserts,
        retry: true,
    };
    let qmgr = server.engine.borrow().qmgr();
    let label = match a.cert_label.trim() {
        "" => qmgr.certificate_label(&server.name),
        l => l.to_string(),
    };
    let has_certificate = server
        .tls
        .borrow()
        .repository()
        .certificate(&label)
        .is_some();
    let options = ferry_tls::ClientTlsOptions {
        cipher_spec: a.ssl_cipher.trim().to_string(),
        key_repository: qmgr.key_repository_dir(&server.paths.dir),
        // Without its certificate the channel still offers TLS: a partner with
        // SSLCAUTH(OPTIONAL) accepts it.
        certificate_label: has_certificate.then_some(label),
        peer_name: None,
    };
    let filter = PeerNameFilter::parse(&a.ssl_peer).map_err(|e| Failure {
        message: &messages::CHANNEL_NEGOTIATION_FAILED,
        inserts: vec![
            agent.name.clone(),
            partner.to_string(),
            format!("SSLPEER('{}') is not valid: {e}", a.ssl_peer.trim()),
        ],
        retry: false,
    })?;
    // The user part of MQ's default label is not used: the label is given or absent.
    let config = ferry_tls::client_config(&options, "").map_err(|e| {
        refused(
            &messages::TLS_SETUP_FAILED,
            vec![format!("channel '{}'", agent.name), e.to_string()],
        )
    })?;
    let name = ServerName::try_from(ferry_security::sni::host_for_channel(&def.name))
        .map_err(|e| Failure::abnormal(agent, partner, format!("SNI: {e}")))?;
    let tls = tokio::time::timeout(
        CONNECT_TIMEOUT,
        ferry_tls::tokio_rustls::TlsConnector::from(config).connect(name, stream),
    )
    .await
    .map_err(|_| {
        refused(
            &messages::TLS_HANDSHAKE_FAILED,
            vec![
                format!("{partner} (channel '{}')", agent.name),
                "it did not complete within 30 seconds".into(),
            ],
        )
    })?
    .map_err(|e| {
        refused(
            &messages::TLS_HANDSHAKE_FAILED,
            vec![
                format!("{partner} (channel '{}')", agent.name),
                e.to_string(),
            ],
        )
    })?;
    let negotiated = ferry_tls::negotiated(tls.get_ref().1);
    let peer = negotiated.as_ref().and_then(|n| n.peer.clone());
    if let Some(filter) = filter {
        let subject = peer.as_ref().map(|p| p.subject.clone()).unwrap_or_default();
        if !filter.matches(&subject) {
            return Err(refused(
                &messages::TLS_PEER_NAME_MISMATCH,
                vec![
                    partner.to_string(),
                    subject.to_string(),
                    a.ssl_peer.trim().to_string(),
                    agent.name.clone(),
                ],
            ));
        }
    }
    let status = TlsStatus {
        cipher_spec: negotiated
            .as_ref()
            .map(|n| n.cipher_spec.name.to_string())
            .unwrap_or_default(),
        peer: peer
            .as_ref()
            .map(|p| p.subject.to_string())
            .unwrap_or_default(),
        cert_issuer: peer
            .as_ref()
            .map(|p| p.issuer.to_string())
            .unwrap_or_default(),
        key_resets: 0,
    };
    Ok((tls, status))
}

/// Connects to the first address of `conname` that answers: the stream and the address.
async fn connect(conname: &str) -> Result<(tokio::net::TcpStream, String), String> {
    let addresses =
        parse_conname(conname).map_err(|_| format!("CONNAME('{conname}') is not valid"))?;
    let mut last = String::from("no address");
    for a in addresses {
        let text = format!("{}({})", a.host, a.port);
        match tokio::time::timeout(
            CONNECT_TIMEOUT,
            tokio::net::TcpStream::connect((a.host.as_str(), a.port)),
        )
        .await
        {
            Ok(Ok(s)) => return Ok((s, text)),
            Ok(Err(e)) => last = format!("{text}: {e}"),
            Err(_) => last = format!("{text}: timed out"),
        }
    }
    Err(last)
}

/// Reads the partner's answer to the hello.
async fn read_reply(io: &mut ChannelIo) -> Result<ChannelHelloReply, ConversationError> {
    loop {
        if let Some(reply) = ChannelHelloReply::decode(io.inbound())? {
            return Ok(reply);
        }
        io.read_more().await?;
    }
}

/// Resolves the in-doubt `batch`: committed at the partner, its messages leave the
/// transmission queue; backed out, they stay to be sent again. Either way the record no
/// longer names it.
pub(super) async fn resolve(
    session: &EngineSession,
    xq: ferry_engine::Hobj,
    sync: &mut SyncStore,
    batch: &InDoubtBatch,
    outcome: InDoubtOutcome,
    last_committed_seq: u32,
) -> Result<(), MqError> {
    let mut state = sync.state.clone();
    state.in_doubt = None;
    state.committed_seq = last_committed_seq;
    if outcome == InDoubtOutcome::Commit {
        for hex in &batch.msg_ids {
            if let Some(id) = msg_id_from_hex(hex) {
                remove_message(session, xq, id, true).await?;
            }
        }
        session.commit().await?;
        state.committed_luwid = batch.luwid;
    }
    sync.replace(session, state, false).await
}

/// The batches of one conversation.
struct BatchLoop<'a> {
    server: &'a Rc<Server>,
    agent: &'a Rc<Agent>,
    def: &'a ChannelDefinition,
    session: &'a EngineSession,
    xq: ferry_engine::Hobj,
    sync: &'a mut SyncStore,
    io: &'a mut ChannelIo,
    partner: &'a str,
    fast: bool,
    /// The last sequence number sent.
    seq: u32,
    seq_wrap: u32,
    batch_size: u32,
    max_msg_length: u32,
    heartbeat: Duration,
    /// COMPHDR/COMPMSG agreed other than NONE: compresses each message's payload.
    compressor: Option<FrameCompressor>,
    /// COMPRATE and COMPTIME of the messages sent.
    meter: CompressionMeter,
    /// What gets from the transmission queue match (a CLUSSDR's partner's correlation
    /// id), worked out once per conversation.
    get_match: (MessageDescriptor, MatchOptions),
}

/// DISPLAY CHSTATUS's COMPHDR and COMPMSG at the start of a conversation: the agreed
/// techniques, twice (no message has travelled yet).
pub(super) fn agreed_compression(t: &Techniques) -> CompressionStatus {
    CompressionStatus {
        header: (t.header, t.header),
        message: (t.message, t.message),
        ..CompressionStatus::default()
    }
}

/// A message got for the batch.
struct Got {
    md: MessageDescriptor,
    data: bytes::Bytes,
    properties: bytes::Bytes,
}

impl BatchLoop<'_> {
    async fn run(&mut self) -> Result<Ended, Failure> {
        let discint = Duration::from_secs(self.def.attributes.disconnect_interval.max(0) as u64);
        let mut idle_since = Instant::now();
        let mut last_sent = Instant::now();
        loop {
            if self.agent.stop_requested() == Some(StopMode::Quiesce) {
                let _ = self
                    .io
                    .send(&ChannelFrame::Close {
                        mode: CloseMode::Quiesce,
                    })
                    .await;
                return Ok(Ended::Stopped);
            }
            self.agent.set_substate("MQGET");
            let first = self.get(true).await?;
            let Some(first) = first else {
                let now = Instant::now();
                if !discint.is_zero() && now.duration_since(idle_since) >= discint {
                    let _ = self
                        .io
                        .send(&ChannelFrame::Close {
                            mode: CloseMode::Quiesce,
                        })
                        .await;
                    return Ok(Ended::Disconnected);
                }
                if !self.heartbeat.is_zero() && now.duration_since(last_sent) >= self.heartbeat {
                    self.heartbeat_exchange().await?;
                    last_sent = Instant::now();
                }
                continue;
            };
            self.batch(first).await?;
            idle_since = Instant::now();
            last_sent = idle_since;
        }
    }

    /// One get from the transmission queue: `wait` waits up to a slice for the first
    /// message of a batch; otherwise only what is there now (or within BATCHINT).
    async fn get(&mut self, wait: bool) -> Result<Option<Got>, Failure> {
        let syncpoint = if self.fast {
            GetOptionFlags::SYNCPOINT_IF_PERSISTENT
        } else {
            GetOptionFlags::SYNCPOINT
        };
        let batch_interval = self.def.attributes.batch_interval.max(0);
        let (flags, interval) = if wait {
            (GetOptionFlags::WAIT, WAIT_SLICE_MS)
        } else if batch_interval > 0 {
            (GetOptionFlags::WAIT, batch_interval)
        } else {
            (GetOptionFlags::empty(), 0)
        };
        let gmo = GetOptions {
            options: flags | syncpoint | GetOptionFlags::FAIL_IF_QUIESCING,
            wait_interval: interval,
            match_options: self.get_match.1,
        };
        match self
            .session
            .get(self.xq, &self.get_match.0, &gmo, usize::MAX)
            .await
        {
            Ok(got) => Ok(Some(Got {
                md: got.md,
                data: got.data,
                properties: got.properties,
            })),
            Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => Ok(None),
            Err(e) => Err(Failure::engine(
                self.agent,
                "get from the transmission queue",
                e.error,
            )),
        }
    }

    /// The payload as it travels: compressed with the agreed techniques when they
    /// shrink it (the head being the transmission header), marked COMPRESSED then.
    fn compress(
        &mut self,
        payload: bytes::Bytes,
        flags: MessageFlags,
    ) -> (bytes::Bytes, MessageFlags) {
        let Some(compressor) = self.compressor.as_mut() else {
            return (payload, flags);
        };
        // `sendable` checked the header; a message without one goes as it is.
        let Ok((_, head_len)) = TransmissionHeader::decode(&payload) else {
            return (payload, flags);
        };
        let started = Instant::now();
        let mut buf = BytesMut::from(&payload[..]);
        let (flow, compressed) = compressor.compress_payload(&mut buf, payload.len() - head_len);
        self.meter
            .record(&flow, started.elapsed().as_secs_f64() * 1e6);
        self.agent.show_compression(&flow, &self.meter);
        if compressed {
            (buf.freeze(), flags | MessageFlags::COMPRESSED)
        } else {
            (payload, flags)
        }
    }

    /// Sends one batch, starting with `first`, and commits it once confirmed.
    async fn batch(&mut self, first: Got) -> Result<(), Failure> {
        let luwid = new_luwid();
        let first_seq = next_seq(self.seq, self.seq_wrap);
        let batch_limit = (self.def.attributes.batch_limit.max(0) as usize) * 1024;
        let mut in_unit_ids: Vec<String> = Vec::new();
        let mut count: u32 = 0;
        let mut bytes = 0usize;
        let mut next = Some(first);
        self.agent.set_substate("SEND");
        {
            let mut s = self.agent.status.borrow_mut();
            s.current_luwid = luwid;
        }
        while let Some(got) = next.take() {
            let in_unit = got.md.persistence == persistence::PERSISTENT || !self.fast;
            bytes += got.data.len();
            if !self.sendable(&got).await? {
                // Dead-lettered at this end; nothing crosses for it.
            } else {
                self.seq = next_seq(self.seq, self.seq_wrap);
                count += 1;
                if in_unit {
                    in_unit_ids.push(msg_id_hex(&got.md.msg_id));
                }
                let flags = if in_unit {
                    MessageFlags::IN_BATCH_UNIT
                } else {
                    MessageFlags::empty()
                };
                // XQTIME from the batch's first message: reading PutDate and PutTime of
                // each would cost more than the rest of its trip through this end.
                let xq_time = if count == 1 {
                    xq_time_us(&got.md)
                } else {
                    None
                };
                let span = if self.server.telemetry.is_on() {
                    self.server.telemetry.start_channel_send(&got.properties)
                } else {
                    None
                };
                let body_len = got.data.len();
                let (payload, flags) = self.compress(got.data, flags);
                let queued = self
                    .io
                    .queue_message(self.seq, flags, &got.properties, payload);
                if let Some(span) = span {
                    let facts = MessageFacts {
                        destination: self.def.attributes.xmit_q.trim(),
                        md: &got.md,
                        body_len,
                        conn: None,
                        channel: Some(&self.def.name),
                    };
                    let outcome = queued
                        .as_ref()
                        .map(drop)
                        .map_err(|_| ReasonCode::ConnectionBroken);
                    span.end(&self.server.telemetry, &facts, outcome, false);
                }
                queued.map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
                let mut s = self.agent.status.borrow_mut();
                s.current_seq = self.seq;
                s.current_messages = count;
                s.xmitq_time_us = xq_time.or(s.xmitq_time_us);
            }
            if self.io.queued() >= 256 * 1024 {
                self.io
                    .flush()
                    .await
                    .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
            }
            let full = count >= self.batch_size || (batch_limit > 0 && bytes >= batch_limit);
            if !full {
                next = self.get(false).await?;
            }
        }
        if count == 0 {
            // Every message went to the dead-letter queue.
            self.session
                .commit()
                .await
                .map_err(|e| Failure::engine(self.agent, "commit", e))?;
            return Ok(());
        }
        let last_seq = self.seq;
        if !in_unit_ids.is_empty() {
            self.agent.set_substate("ENDBATCH");
            let state = SyncState {
                in_doubt: Some(InDoubtBatch {
                    luwid,
                    first_seq,
                    last_seq,
                    msg_ids: in_unit_ids.clone(),
                }),
                partner_qmgr: self.agent.status.borrow().remote_qmgr.clone(),
                ..self.sync.state.clone()
            };
            self.sync
                .replace(self.session, state, false)
                .await
                .map_err(|e| Failure::engine(self.agent, "record the batch in doubt", e))?;
            self.agent.status.borrow_mut().in_doubt = true;
        }
        self.io
            .queue(&ChannelFrame::ConfirmRequest {
                luwid,
                first_seq,
                last_seq,
                messages: count,
            })
            .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
        let sent_at = Instant::now();
        self.io
            .flush()
            .await
            .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
        if in_unit_ids.is_empty() {
            // Only fast non-persistent messages: nothing to commit at either end, so the
            // receiver does not confirm and the next batch goes at once.
            let mut s = self.agent.status.borrow_mut();
            s.messages += u64::from(count);
            s.batches += 1;
            s.current_messages = 0;
            s.last_message_ms = Some(clock::now().0);
            return Ok(());
        }
        self.agent.set_substate("RECEIVE");
        let timeout = if self.heartbeat.is_zero() {
            CONFIRM_TIMEOUT_DEFAULT
        } else {
            (self.heartbeat * 2).max(CONFIRM_TIMEOUT_DEFAULT)
        };
        loop {
            let frame = tokio::time::timeout(timeout, self.io.recv())
                .await
                .map_err(|_| {
                    Failure::abnormal(self.agent, self.partner, "no confirmation of the batch")
                })?
                .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
            match frame {
                ChannelFrame::Confirm { luwid: l, .. } if l == luwid => break,
                ChannelFrame::HeartbeatReply { .. } => continue,
                ChannelFrame::Heartbeat { token } => {
                    self.io
                        .send(&ChannelFrame::HeartbeatReply { token })
                        .await
                        .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
                }
                ChannelFrame::BatchFailed { text, .. } | ChannelFrame::Status { text, .. } => {
                    let _ = self.session.backout().await;
                    return Err(Failure::abnormal(self.agent, self.partner, text));
                }
                other => {
                    return Err(Failure::abnormal(
                        self.agent,
                        self.partner,
                        format!(
                            "unexpected frame type {} instead of a confirmation",
                            other.type_code()
                        ),
                    ))
                }
            }
        }
        let network_us = sent_at.elapsed().as_micros() as u64;
        self.agent.set_substate("ENDBATCH");
        // The gets' commit is not waited for: until it is durable, the durable record
        // naming the batch says what to do with it after a failure (the partner has its
        // LUWID, so it resolves as committed), and the next batch's record, written after
        // it, cannot be durable before it.
        self.session
            .commit_without_waiting()
            .await
            .map_err(|e| Failure::engine(self.agent, "commit the batch", e))?;
        // The record still names the batch as in doubt: resolved as committed at the next
        // start (the partner's last LUWID is the batch's), which then removes nothing
        // more. The next batch's record carries these values.
        self.sync.state.committed_seq = last_seq;
        self.sync.state.committed_luwid = luwid;
        let mut s = self.agent.status.borrow_mut();
        s.messages += u64::from(count);
        s.batches += 1;
        s.last_seq = last_seq;
        s.last_luwid = luwid;
        s.in_doubt = false;
        s.current_messages = 0;
        s.network_time_us = Some(network_us);
        s.last_message_ms = Some(clock::now().0);
        Ok(())
    }

    /// Whether `got` can cross: a message longer than the agreed MAXMSGL, or without a
    /// valid transmission header, goes to the dead-letter queue here (2218, 2142).
    async fn sendable(&mut self, got: &Got) -> Result<bool, Failure> {
        let in_unit = got.md.persistence == persistence::PERSISTENT || !self.fast;
        let header = TransmissionHeader::decode(&got.data);
        let reason = match &header {
            Err(e) => Some(e.reason()),
            Ok(_) if got.data.len() + got.properties.len() > self.max_msg_length as usize => {
                Some(ReasonCode::MsgTooBigForChannel)
            }
            Ok(_) => None,
        };
        let Some(reason) = reason else {
            return Ok(true);
        };
        let (queue, qmgr) = match &header {
            Ok((h, _)) => (
                h.remote_q_name.as_str().to_string(),
                h.remote_qmgr_name.as_str().to_string(),
            ),
            Err(_) => (String::new(), String::new()),
        };
        let undelivered = Undelivered {
            md: &got.md,
            data: &got.data,
            properties: got.properties.clone(),
            reason,
            queue: &queue,
            qmgr: &qmgr,
            in_unit,
        };
        let put = dead_letter::put(self.session, &self.agent.name, undelivered).await;
        match put {
            Ok(dlq) => {
                self.server.error_log.borrow_mut().write(
                    &messages::MESSAGE_DEAD_LETTERED,
                    &[&queue, &qmgr, &self.agent.name, &reason, &dlq],
                );
                Ok(false)
            }
            Err(e) => {
                let _ = self.session.backout().await;
                Err(Failure {
                    message: &messages::NO_DEAD_LETTER_QUEUE,
                    inserts: vec![
                        queue,
                        qmgr,
                        self.agent.name.clone(),
                        reason.to_string(),
                        e.reason.to_string(),
                    ],
                    retry: false,
                })
            }
        }
    }

    /// A heartbeat while the transmission queue is empty; the partner must answer.
    async fn heartbeat_exchange(&mut self) -> Result<(), Failure> {
        self.agent.set_substate("HEARTBEAT");
        let token = new_luwid();
        self.io
            .send(&ChannelFrame::Heartbeat { token })
            .await
            .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
        let timeout = (self.heartbeat * 2).max(CONFIRM_TIMEOUT_DEFAULT);
        loop {
            let frame = tokio::time::timeout(timeout, self.io.recv())
                .await
                .map_err(|_| {
                    Failure::abnormal(self.agent, self.partner, "no answer to a heartbeat")
                })?
                .map_err(|e| Failure::abnormal(self.agent, self.partner, e))?;
            match frame {
                ChannelFrame::HeartbeatReply { token: t } if t == token => return Ok(()),
                ChannelFrame::HeartbeatReply { .. } => continue,
                ChannelFrame::Status { text, .. } => {
                    return Err(Failure::abnormal(self.agent, self.partner, text))
                }
                other => {
                    return Err(Failure::abnormal(
                        self.agent,
                        self.partner,
                        format!(
                            "unexpected frame type {} instead of a heartbeat reply",
                            other.type_code()
                        ),
                    ))
                }
            }
        }
    }
}

/// Microseconds the message waited on the transmission queue, from its PutTime
/// (hundredths of a second, UTC time of day): `None` when it does not read.
fn xq_time_us(md: &MessageDescriptor) -> Option<u64> {
    let t = md.put_time.as_str();
    let digits = |r: std::ops::Range<usize>| t.get(r)?.parse::<u64>().ok();
    let put = ((digits(0..2)? * 60 + digits(2..4)?) * 60 + digits(4..6)?) * 100 + digits(6..8)?;
    let now_ms = clock::now().0 % 86_400_000;
    let now = now_ms / 10;
    let day = 8_640_000;
    Some(((now + day - put) % day) * 10_000)
}
