//! Requester channels: a RQSTR calls its partner and asks it to send; the SVR that
//! answers drains its transmission queue over that same connection.
//!
//! Both halves reuse the ends of a sender/receiver pair with the roles of the call
//! swapped. The requester ([`call`]) is the initiating end and the receiving one: its
//! hello carries its receiver state (last committed sequence number and LUWID, from its
//! record on SYSTEM.CHANNEL.SYNCQ) and it then puts batches as a receiver does
//! (`receiver::Receiving`). The server ([`answer`]) is the responding end and the
//! sending one: it resolves a batch it left in doubt against the requester's last LUWID
//! *before* it answers, answers the resulting sequence number, and then sends batches
//! as a sender does (`sender::Sending`). The agreement and the resynchronisation rule
//! are `ferry_wire::channel`'s (docs/protocol.md §10).
//!
//! The requester retries (SHORTRTY/LONGRTY) like a sender; it ends INACTIVE when the
//! server ends the conversation for DISCINT. A server without CONNAME is started only by
//! its requester; a server runs one conversation at a time (a second call is refused as
//! in use). MQ's callback (a requester calling a *sender*, which calls back) is not
//! supported: the sender refuses the call.

use super::engine_session::EngineSession;
use super::receiver::{Caller, ConversationEnd, Receiving};
use super::sender::{self, Ended, Failure, Opened, Sending};
use super::sync_record::{End, SyncState, SyncStore};
use super::Agent;
use crate::messages;
use crate::runtime::server::Server;
use bytes::BytesMut;
use ferry_engine::ConnectionInfo;
use ferry_mqi::options::OpenOptions;
use ferry_mqi::{FixedStr, MqError, ObjectDescriptor, ReasonCode};
use ferry_objects::status::MessageChannelState;
use ferry_objects::ChannelDefinition;
use ferry_wire::channel::{
    max_channel_frame_len, resynchronise, ChannelAccepted, ChannelAgreement, ChannelHello,
    ChannelHelloReply, ChannelPurpose, ChannelRefused, ChannelStatusCode,
};
use std::rc::Rc;

/// Who the requester is to the engine: the channel, its partner, and MCAUSER (else the
/// queue manager's own user) as the identity that puts, as for a receiver.
fn requester_info(server: &Server, def: &ChannelDefinition) -> ConnectionInfo {
    let a = &def.attributes;
    ConnectionInfo {
        application_name: format!("{} (requester channel)", def.name),
        channel: def.name.clone(),
        connection_name: a.connection_name.clone(),
        user_id: match a.mca_user.trim() {
            "" => server.administrators.process_user().to_string(),
            user => user.to_string(),
        },
        pid: Some(std::process::id()),
    }
}

/// One conversation of requester `def`: calls the partner server, then puts the
/// batches it sends until it ends the conversation (`Ended::Disconnected`, its DISCINT)
/// or this end is stopped.
pub(super) async fn call(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: &ChannelDefinition,
) -> Result<Ended, Failure> {
    let session = Rc::new(
        EngineSession::connect(server, requester_info(server, def))
            .map_err(|e| Failure::engine(agent, "connect", e))?,
    );
    agent.hold_session(Some(session.clone()));
    let mut sync = SyncStore::open(&session, &def.name, End::Receiving)
        .await
        .map_err(|e| Failure::engine(agent, "read the synchronisation record", e))?;
    // The state the hello tells must be durable: the server removes a batch it left in
    // doubt on the strength of it (see the receiver's answer, which does the same).
    let current = sync.state.clone();
    sync.replace(&session, current, false)
        .await
        .map_err(|e| Failure::engine(agent, "write the synchronisation record", e))?;
    {
        let mut s = agent.status.borrow_mut();
        s.connection_name = def.attributes.connection_name.trim().to_string();
        s.substate = "NETCONNECT".into();
    }
    let hello = ChannelHello {
        last_committed_seq: sync.state.committed_seq,
        last_luwid: sync.state.committed_luwid,
        in_doubt: None,
        reset_seq: agent.reset_seq.get(),
        ..sender::hello(server, def, ChannelPurpose::Run)
    };
    let Opened {
        mut io,
        accepted,
        partner,
        tls,
    } = sender::open(server, agent, def, &hello).await?;
    agent.reset_seq.set(None);
    let agreement = accepted.agreement;
    io.set_max_frame(max_channel_frame_len(agreement.max_msg_length));
    if accepted.last_committed_seq != sync.state.committed_seq {
        if hello.reset_seq != Some(accepted.last_committed_seq) {
            // The server compared the numbers and accepted: only a RESET explains another.
            return Err(Failure {
                message: &messages::CHANNEL_SEQUENCE_ERROR,
                inserts: vec![
                    agent.name.clone(),
                    partner,
                    accepted.last_committed_seq.to_string(),
                    sync.state.committed_seq.to_string(),
                ],
                retry: false,
            });
        }
        // RESET CHANNEL: this end takes the number too.
        let state = SyncState {
            committed_seq: accepted.last_committed_seq,
            ..sync.state.clone()
        };
        sync.replace(&session, state, false)
            .await
            .map_err(|e| Failure::engine(agent, "write the synchronisation record", e))?;
    }
    server.error_log.borrow_mut().write(
        &messages::CHANNEL_RUNNING,
        &[
            &agent.name,
            &accepted.qmgr_name.as_str(),
            &partner,
            &agreement.batch_size,
            &if agreement.npm_speed == ferry_wire::channel::NpmSpeed::Fast {
                "FAST"
            } else {
                "NORMAL"
            },
        ],
    );
    let receiving = Receiving {
        server,
        agent,
        generation: agent.generation(),
        session: &session,
        channel: &def.name,
        peer: &partner,
        partner_qmgr: accepted.qmgr_name.as_str(),
        tls,
    };
    let result = receiving
        .batches(&mut sync, &mut io, &agreement, accepted.last_committed_seq)
        .await;
    agent.hold_session(None);
    session.end(result.is_ok());
    match result {
        Ok(()) => Ok(Ended::Disconnected),
        Err(ConversationEnd::Stopped) => Ok(Ended::Stopped),
        Err(why) => Err(Failure::abnormal(agent, &partner, why)),
    }
}

/// Answers requester `hello` at server `def` (the hello negotiated to `agreement`):
/// settles the server's synchronisation with the requester's, answers, and sends
/// batches until the conversation ends. Refusals are logged and answered.
pub(super) async fn answer(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: &ChannelDefinition,
    hello: &ChannelHello,
    mut io: super::io::ChannelIo,
    caller: Caller,
    agreement: ChannelAgreement,
) {
    let Caller { peer, tls } = caller;
    let partner = format!("{} at {peer}", hello.qmgr_name.as_str());
    let refusal = |code: ChannelStatusCode, text: String| {
        server.error_log.borrow_mut().write(
            &messages::CHANNEL_NEGOTIATION_FAILED,
            &[&def.name, &partner, &text],
        );
        let mut out = BytesMut::new();
        let _ = ChannelHelloReply::Refused(ChannelRefused::new(code, text)).encode(&mut out);
        out
    };
    if agent.state().is_active() {
        let out = refusal(
            ChannelStatusCode::InUse,
            format!(
                "channel {} is in use at {} ({})",
                def.name,
                server.name,
                agent.state().keyword()
            ),
        );
        let _ = io.send_raw(&out).await;
        return;
    }
    agent.set_state(MessageChannelState::Starting);
    {
        let mut s = agent.status.borrow_mut();
        s.connection_name = peer.clone();
        s.xmit_q = def.attributes.xmit_q.trim().to_string();
        s.tls = tls.as_ref().map(|t| t.status()).unwrap_or_default();
    }
    let prepared = match prepare(server, agent, def).await {
        Ok(p) => p,
        Err(e) => {
            agent.set_state(MessageChannelState::Inactive);
            let out = refusal(
                ChannelStatusCode::QmUnavailable,
                format!(
                    "queue manager {} cannot serve the channel: {e}",
                    server.name
                ),
            );
            let _ = io.send_raw(&out).await;
            return;
        }
    };
    let (session, xq, mut sync) = prepared;
    let resync = match resynchronise(
        sync.state.sender_sync(),
        hello.receiver_sync(),
        hello.reset_seq,
    ) {
        Ok(r) => r,
        Err(code) => {
            server.error_log.borrow_mut().write(
                &messages::CHANNEL_SEQUENCE_ERROR,
                &[
                    &def.name,
                    &partner,
                    &sync.state.committed_seq,
                    &hello.last_committed_seq,
                ],
            );
            let mut out = BytesMut::new();
            let text = format!(
                "message sequence error: the server's last committed batch ends at {}, the requester's at {}",
                sync.state.committed_seq, hello.last_committed_seq
            );
            let _ = ChannelHelloReply::Refused(ChannelRefused::new(code, text)).encode(&mut out);
            let _ = io.send_raw(&out).await;
            agent.hold_session(None);
            session.end(false);
            agent.set_state(MessageChannelState::Inactive);
            return;
        }
    };
    let sending = Sending {
        server,
        agent,
        def,
        session: &session,
        xq,
        partner: &partner,
        partner_qmgr: hello.qmgr_name.as_str(),
    };
    // Resolved before the answer, so the number answered is the one both ends go on
    // from.
    let settled = sending.settle(&mut sync, resync).await;
    let accepted = ChannelAccepted {
        qmgr_name: FixedStr::truncating(&server.name),
        qmid: FixedStr::BLANK,
        agreement,
        last_committed_seq: resync.last_committed_seq,
        last_luwid: 0,
    };
    let mut out = BytesMut::new();
    let answered = settled.is_ok()
        && ChannelHelloReply::Accepted(accepted)
            .encode(&mut out)
            .is_ok()
        && io.send_raw(&out).await.is_ok();
    let ended = if answered {
        io.set_max_frame(max_channel_frame_len(agreement.max_msg_length));
        sending
            .batches(&mut sync, &mut io, &agreement, resync.last_committed_seq)
            .await
    } else {
        Err(match settled {
            Err(failure) => failure,
            Ok(()) => Failure::abnormal(agent, &partner, "the answer could not be sent"),
        })
    };
    agent.hold_session(None);
    session.end(ended.is_ok());
    match ended {
        Ok(Ended::Disconnected) => {
            server.error_log.borrow_mut().write(
                &messages::CHANNEL_DISCONNECTED,
                &[&def.name, &def.attributes.disconnect_interval],
            );
            agent.set_state(MessageChannelState::Inactive);
        }
        Ok(Ended::Stopped) => {
            agent.set_state(MessageChannelState::Stopped);
            server
                .error_log
                .borrow_mut()
                .write(&messages::CHANNEL_ENDED, &[&def.name, &"STOP CHANNEL"]);
        }
        Err(failure) => {
            let stopped = agent.stop_requested().is_some();
            agent.set_state(if stopped {
                MessageChannelState::Stopped
            } else {
                MessageChannelState::Inactive
            });
            if !stopped {
                let text = failure.text();
                server.error_log.borrow_mut().write(
                    &messages::CHANNEL_ENDED_ABNORMALLY,
                    &[&def.name, &partner, &text],
                );
            }
        }
    }
}

/// The server's engine connection, its transmission queue open for input and its
/// synchronisation record.
async fn prepare(
    server: &Rc<Server>,
    agent: &Rc<Agent>,
    def: &ChannelDefinition,
) -> Result<(Rc<EngineSession>, ferry_engine::Hobj, SyncStore), MqError> {
    let xmitq = def.attributes.xmit_q.trim();
    if xmitq.is_empty() {
        return Err(ReasonCode::XmitQUsageError.into());
    }
    let session = Rc::new(EngineSession::connect(
        server,
        sender::connection_info(server, def),
    )?);
    agent.hold_session(Some(session.clone()));
    let od = ObjectDescriptor::queue(xmitq).map_err(|_| ReasonCode::ObjectNameError)?;
    let xq = session.open(
        &od,
        OpenOptions::INPUT_EXCLUSIVE | OpenOptions::FAIL_IF_QUIESCING,
    )?;
    let sync = SyncStore::open(&session, &def.name, End::Sending).await?;
    Ok((session, xq, sync))
}
