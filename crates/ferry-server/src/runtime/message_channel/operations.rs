//! PING, RESET and RESOLVE CHANNEL at the sending end of a message channel.
//!
//! Each runs as a task on the queue manager's thread, and the command server answers
//! the MQSC command when it ends (`command_server::Answer::Later`):
//!
//! - **PING** opens a conversation of its own with the partner (over TLS when the
//!   channel has SSLCIPH) whose hello has the purpose Ping, sends DATALEN bytes, checks
//!   that the same bytes come back, and closes. It neither reads nor changes the
//!   synchronisation records, and the partner answers it beside any conversation the
//!   channel has running.
//! - **RESET** refuses a running channel and one whose record names a batch in doubt
//!   (that batch must be resolved first, or its messages could be lost or sent twice);
//!   otherwise the agent keeps SEQNUM, and its next start tells the partner, both ends
//!   taking it as the last committed sequence number.
//! - **RESOLVE** refuses a running channel and one with nothing in doubt; otherwise
//!   COMMIT removes the batch's messages (by MsgId) from the transmission queue, BACKOUT
//!   leaves them to be sent again, and the record no longer names the batch. It holds the
//!   transmission queue exclusively while it works, so the channel cannot start under
//!   it; the command answers once the change is durable.
//!
//! The sending agent leaves its record naming the last batch it sent until its next
//! start, confirmed or not; both commands first look whether that batch's messages are
//! still on the transmission queue (an unconfirmed batch's gets are backed out, a
//! confirmed one's committed), and bring a record whose batch was confirmed up to date.

use super::engine_session::EngineSession;
use super::sender::{self, Opened};
use super::sync_record::{msg_id_from_hex, End, SyncState, SyncStore};
use super::{definition, Agent, MessageChannels};
use crate::messages;
use crate::runtime::endpoints::ChannelWork;
use crate::runtime::server::Server;
use bytes::Bytes;
use ferry_engine::Hobj;
use ferry_mqi::options::{GetOptionFlags, MatchOptions, OpenOptions};
use ferry_mqi::{GetOptions, MessageDescriptor, MqError, MsgId, ObjectDescriptor, ReasonCode};
use ferry_objects::channel::{ChannelOperation, ResolveAction};
use ferry_objects::{AdminError, ChannelDefinition};
use ferry_wire::channel::{ChannelFrame, ChannelPurpose, CloseMode, InDoubtOutcome};
use std::rc::Rc;
use std::time::Duration;

/// How long the partner may take to echo a ping.
const PING_ECHO_TIMEOUT: Duration = Duration::from_secs(30);

/// The work of `operation` on channel `name`.
pub(super) fn run(
    channels: &MessageChannels,
    name: &str,
    operation: ChannelOperation,
) -> ChannelWork {
    let prepared = channels.server().and_then(|server| {
        let def = definition(&server, name)?;
        if !def.channel_type.sends_messages() {
            return Err(AdminError::Invalid(format!(
                "{} CHANNEL applies to sending channels, and {name} is a {} channel",
                operation.verb(),
                def.channel_type.keyword()
            )));
        }
        let agent = channels.agent(name, def.channel_type);
        Ok((server, def, agent))
    });
    let (server, def, agent) = match prepared {
        Ok(p) => p,
        Err(e) => return Box::pin(std::future::ready(Err(e))),
    };
    match operation {
        ChannelOperation::Ping { data_length } => Box::pin(ping(server, def, data_length)),
        ChannelOperation::Reset { seqnum } => Box::pin(reset(server, def, agent, seqnum)),
        ChannelOperation::Resolve { action } => Box::pin(resolve(server, def, agent, action)),
    }
}

/// Whether the channel's agent is running a conversation, connecting or retrying.
fn refuse_if_running(agent: &Agent) -> Result<(), AdminError> {
    if agent.state().is_active() {
        return Err(AdminError::InUse {
            name: agent.name.clone(),
        });
    }
    Ok(())
}

/// An engine failure as the command shows it.
fn engine_failure(what: &str, e: MqError) -> AdminError {
    AdminError::Failed {
        reason: e.reason,
        text: format!("{what}: {}", e.reason),
    }
}

/// PING CHANNEL: a conversation with purpose Ping that echoes `data_length` bytes.
async fn ping(
    server: Rc<Server>,
    def: ChannelDefinition,
    data_length: u32,
) -> Result<(), AdminError> {
    // The ping's bytes count on an agent of its own, not on the channel's status.
    let scratch = Agent::new(&def.name, def.channel_type);
    let hello = sender::hello(&server, &def, ChannelPurpose::Ping);
    let Opened { mut io, .. } = sender::open(&server, &scratch, &def, &hello)
        .await
        .map_err(|f| AdminError::Invalid(f.text()))?;
    let data: Bytes = (0..data_length).map(|i| (i % 251) as u8).collect();
    let broken = |e: &dyn std::fmt::Display| {
        AdminError::Invalid(format!("the conversation with the partner failed: {e}"))
    };
    io.send(&ChannelFrame::Ping { data: data.clone() })
        .await
        .map_err(|e| broken(&e))?;
    let echo = loop {
        let frame = tokio::time::timeout(PING_ECHO_TIMEOUT, io.recv())
            .await
            .map_err(|_| {
                AdminError::Invalid(format!(
                    "the partner did not echo the data within {} seconds",
                    PING_ECHO_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|e| broken(&e))?;
        match frame {
            ChannelFrame::PingReply { data } => break data,
            ChannelFrame::HeartbeatReply { .. } => continue,
            ChannelFrame::Status { text, .. } => {
                return Err(AdminError::Invalid(format!("the partner reported: {text}")))
            }
            other => {
                return Err(AdminError::Invalid(format!(
                    "the partner answered frame type {} instead of the echo",
                    other.type_code()
                )))
            }
        }
    };
    let _ = io
        .send(&ChannelFrame::Close {
            mode: CloseMode::Quiesce,
        })
        .await;
    if echo != data {
        return Err(AdminError::Invalid(format!(
            "the partner echoed {} bytes that differ from the {} sent",
            echo.len(),
            data.len()
        )));
    }
    Ok(())
}

/// The sending end's record, read with the transmission queue held exclusively (as the
/// sending agent holds it, so the channel cannot start meanwhile).
struct SendingEnd {
    session: EngineSession,
    xq: Hobj,
    sync: SyncStore,
}

/// Opens `def`'s transmission queue and synchronisation record. A batch the record
/// names whose messages are all gone from the transmission queue was confirmed: the
/// sending agent commits its gets only once the partner confirms, and leaves the record
/// naming the batch until its next start. The record is brought up to date then, so
/// only a batch really in doubt remains.
async fn open_sending_end(
    server: &Rc<Server>,
    def: &ChannelDefinition,
) -> Result<SendingEnd, AdminError> {
    let xmitq = def.attributes.xmit_q.trim().to_string();
    let session = EngineSession::connect(server, sender::connection_info(server, def))
        .map_err(|e| engine_failure("connect", e))?;
    let od = ObjectDescriptor::queue(&xmitq)
        .map_err(|_| engine_failure("XMITQ", ReasonCode::ObjectNameError.into()))?;
    let xq = session
        .open(
            &od,
            OpenOptions::INPUT_EXCLUSIVE | OpenOptions::BROWSE | OpenOptions::FAIL_IF_QUIESCING,
        )
        .map_err(|e| match e.reason {
            ReasonCode::ObjectInUse => AdminError::InUse {
                name: def.name.clone(),
            },
            _ => engine_failure(&format!("open {xmitq}"), e),
        })?;
    let mut sync = SyncStore::open(&session, &def.name, End::Sending)
        .await
        .map_err(|e| engine_failure("read the synchronisation record", e))?;
    if let Some(batch) = sync.state.in_doubt.clone() {
        let mut queued = false;
        for id in batch.msg_ids.iter().filter_map(|h| msg_id_from_hex(h)) {
            if is_queued(&session, xq, id)
                .await
                .map_err(|e| engine_failure(&format!("browse {xmitq}"), e))?
            {
                queued = true;
                break;
            }
        }
        if !queued {
            let state = SyncState {
                in_doubt: None,
                committed_seq: batch.last_seq,
                committed_luwid: batch.luwid,
                ..sync.state.clone()
            };
            sync.replace(&session, state, false)
                .await
                .map_err(|e| engine_failure("write the synchronisation record", e))?;
        }
    }
    Ok(SendingEnd { session, xq, sync })
}

/// Whether message `msg_id` is on `xq`'s queue.
async fn is_queued(session: &EngineSession, xq: Hobj, msg_id: MsgId) -> Result<bool, MqError> {
    let md = MessageDescriptor {
        msg_id,
        ..MessageDescriptor::default()
    };
    let gmo = GetOptions {
        options: GetOptionFlags::BROWSE_FIRST | GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: 0,
        match_options: MatchOptions::MSG_ID,
    };
    match session.get(xq, &md, &gmo, 0).await {
        Ok(_) => Ok(true),
        Err(e) if e.error.reason == ReasonCode::TruncatedMsgAccepted => Ok(true),
        Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => Ok(false),
        Err(e) => Err(e.error),
    }
}

/// RESET CHANNEL: the next start tells the partner `seqnum`.
async fn reset(
    server: Rc<Server>,
    def: ChannelDefinition,
    agent: Rc<Agent>,
    seqnum: u32,
) -> Result<(), AdminError> {
    refuse_if_running(&agent)?;
    let end = open_sending_end(&server, &def).await?;
    if let Some(batch) = &end.sync.state.in_doubt {
        return Err(AdminError::Invalid(format!(
            "batch {:016X} ({} persistent messages, sequence numbers {} to {}) is in doubt: RESOLVE CHANNEL({}) ACTION(COMMIT or BACKOUT) first",
            batch.luwid,
            batch.msg_ids.len(),
            batch.first_seq,
            batch.last_seq,
            def.name
        )));
    }
    end.session.end(true);
    // Checked again: the channel may have started while the record was read.
    refuse_if_running(&agent)?;
    agent.reset_seq.set(Some(seqnum));
    Ok(())
}

/// RESOLVE CHANNEL: settles the in-doubt batch as `action` says.
async fn resolve(
    server: Rc<Server>,
    def: ChannelDefinition,
    agent: Rc<Agent>,
    action: ResolveAction,
) -> Result<(), AdminError> {
    refuse_if_running(&agent)?;
    let SendingEnd {
        session,
        xq,
        mut sync,
    } = open_sending_end(&server, &def).await?;
    let Some(batch) = sync.state.in_doubt.clone() else {
        return Err(AdminError::Invalid(
            "no batch is in doubt; START CHANNEL resynchronises with the partner by itself".into(),
        ));
    };
    let (outcome, last_committed_seq) = match action {
        ResolveAction::Commit => (InDoubtOutcome::Commit, batch.last_seq),
        ResolveAction::Backout => (InDoubtOutcome::BackOut, sync.state.committed_seq),
    };
    sender::resolve(&session, xq, &mut sync, &batch, outcome, last_committed_seq)
        .await
        .map_err(|e| engine_failure("resolve the in-doubt batch", e))?;
    session.end(true);
    agent.status.borrow_mut().in_doubt = false;
    let how = match action {
        ResolveAction::Commit => "commit",
        ResolveAction::Backout => "back out",
    };
    server.error_log.borrow_mut().write(
        &messages::CHANNEL_INDOUBT_RESOLVED,
        &[
            &def.name,
            &format!("{:016X}", batch.luwid),
            &batch.msg_ids.len(),
            &how,
            &format!("RESOLVE CHANNEL ACTION({})", action.keyword()),
        ],
    );
    Ok(())
}
