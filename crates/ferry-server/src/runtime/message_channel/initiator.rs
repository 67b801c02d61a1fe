//! The channel initiator: the queue manager's reader of SYSTEM.CHANNEL.INITQ, which
//! starts sending channels when their transmission queue triggers.
//!
//! A transmission queue defined with `TRIGGER INITQ(SYSTEM.CHANNEL.INITQ)
//! TRIGDATA(channel)` makes a trigger message (MQTM) when a message arrives for a
//! channel that is not running (the engine's trigger conditions, `ferry_engine`'s
//! `trigger` module: TRIGTYPE(FIRST) usually, so once per idle spell). The initiator
//! keeps the initiation queue open for input, as MQ's does, gets each trigger message
//! and starts the channel TriggerData names; blank TriggerData, as on MQ's distributed
//! platforms, means the sender or server channel whose XMITQ is the triggered queue.
//! A channel that is STOPPED stays stopped (START CHANNEL only), and one already
//! running is left alone. Because the initiator opens the initiation queue when the
//! queue manager starts, every triggered transmission queue that holds messages then
//! triggers at once and its channel starts; a channel that ended for DISCINT is
//! INACTIVE until its next trigger message.
//!
//! Cluster-sender channels have their own start path (`cluster`): the repository task
//! arms them on SYSTEM.CLUSTER.TRANSMIT.QUEUE.

use super::engine_session::EngineSession;
use super::{definition, MessageChannels};
use crate::messages;
use crate::runtime::server::Server;
use ferry_engine::ConnectionInfo;
use ferry_mqi::options::{GetOptionFlags, OpenOptions};
use ferry_mqi::trigger::{TriggerMessage, FORMAT_TRIGGER};
use ferry_mqi::{GetOptions, MessageDescriptor, ObjectDescriptor, ReasonCode};
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::CHANNEL_INITIATION_QUEUE;
use ferry_objects::status::MessageChannelState;
use std::rc::Rc;

/// The longest one get waits before the initiator looks again (a quiesce ends a wait
/// at once with 2161 anyway).
const WAIT_SLICE_MS: i32 = 5_000;
/// Trigger messages are 684 bytes; anything much longer is not one.
const MAX_TRIGGER_MESSAGE: usize = 4096;

/// What the initiator did with one trigger message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Initiation {
    /// It started this channel.
    Started(String),
    /// The channel is running (or retrying) already.
    AlreadyRunning(String),
    /// The channel is STOPPED: only START CHANNEL starts it.
    Stopped(String),
    /// No sending channel of that name (or, blank TriggerData, for that queue).
    NoChannel(String),
}

/// Runs the channel initiator until the queue manager quiesces or stops.
pub(crate) async fn run(server: Rc<Server>, channels: Rc<MessageChannels>) {
    let info = ConnectionInfo {
        application_name: "Ferry channel initiator".to_string(),
        channel: String::new(),
        connection_name: String::new(),
        user_id: server.administrators.process_user().to_string(),
        pid: Some(std::process::id()),
    };
    let Ok(session) = EngineSession::connect(&server, info) else {
        return;
    };
    let opened = ObjectDescriptor::queue(CHANNEL_INITIATION_QUEUE)
        .map_err(|_| ReasonCode::ObjectNameError.into())
        .and_then(|od| {
            session.open(
                &od,
                OpenOptions::INPUT_SHARED | OpenOptions::FAIL_IF_QUIESCING,
            )
        });
    let hobj = match opened {
        Ok(h) => h,
        Err(e) => {
            server.error_log.borrow_mut().write(
                &messages::CHANNEL_INITIATOR_FAILED,
                &[&CHANNEL_INITIATION_QUEUE, &e.reason],
            );
            return;
        }
    };
    loop {
        let gmo = GetOptions {
            options: GetOptionFlags::WAIT
                | GetOptionFlags::NO_SYNCPOINT
                | GetOptionFlags::ACCEPT_TRUNCATED_MSG
                | GetOptionFlags::FAIL_IF_QUIESCING,
            wait_interval: WAIT_SLICE_MS,
            ..GetOptions::default()
        };
        let got = session
            .get(
                hobj,
                &MessageDescriptor::default(),
                &gmo,
                MAX_TRIGGER_MESSAGE,
            )
            .await;
        let message = match got {
            Ok(m) => m,
            Err(e) if e.error.reason == ReasonCode::TruncatedMsgAccepted => {
                server.error_log.borrow_mut().write(
                    &messages::TRIGGER_MESSAGE_INVALID,
                    &[
                        &CHANNEL_INITIATION_QUEUE,
                        &"it is longer than a trigger message",
                    ],
                );
                continue;
            }
            Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => continue,
            // Quiescing, stopping, or the session ended.
            Err(_) => return,
        };
        if message.md.format != FORMAT_TRIGGER {
            server.error_log.borrow_mut().write(
                &messages::TRIGGER_MESSAGE_INVALID,
                &[
                    &CHANNEL_INITIATION_QUEUE,
                    &format!("its format is '{}', not MQTRIG", message.md.format.as_str()),
                ],
            );
            continue;
        }
        let tm = match TriggerMessage::decode(&message.data, message.md.encoding) {
            Ok(tm) => tm,
            Err(e) => {
                server.error_log.borrow_mut().write(
                    &messages::TRIGGER_MESSAGE_INVALID,
                    &[&CHANNEL_INITIATION_QUEUE, &e],
                );
                continue;
            }
        };
        match initiate(&server, &channels, &tm) {
            Initiation::Started(name) => tracing::info!("channel initiator started {name}"),
            Initiation::AlreadyRunning(_) | Initiation::Stopped(_) => {}
            Initiation::NoChannel(name) => {
                server.error_log.borrow_mut().write(
                    &messages::TRIGGERED_CHANNEL_UNKNOWN,
                    &[&name, &tm.q_name.as_str()],
                );
            }
        }
    }
}

/// Starts the channel trigger message `tm` is for, unless it is stopped or running.
pub(crate) fn initiate(
    server: &Rc<Server>,
    channels: &MessageChannels,
    tm: &TriggerMessage,
) -> Initiation {
    let named = tm.trigger_data.as_str().trim().to_string();
    let def = if named.is_empty() {
        channel_for_queue(server, tm.q_name.as_str().trim())
    } else {
        definition(server, &named).ok()
    };
    let Some(def) = def.filter(|d| {
        matches!(d.channel_type, ChannelType::Sender | ChannelType::Server)
            && !d.attributes.connection_name.trim().is_empty()
    }) else {
        let what = if named.is_empty() {
            format!("(XMITQ {})", tm.q_name.as_str().trim())
        } else {
            named
        };
        return Initiation::NoChannel(what);
    };
    let agent = channels.agent(&def.name, def.channel_type);
    match agent.state() {
        MessageChannelState::Stopped => Initiation::Stopped(def.name),
        s if s.is_active() && agent.task.borrow().is_some() => Initiation::AlreadyRunning(def.name),
        _ => {
            channels.spawn_sender(server, &def);
            Initiation::Started(def.name)
        }
    }
}

/// The first sender or server channel (by name) whose XMITQ is `queue`.
fn channel_for_queue(server: &Server, queue: &str) -> Option<ferry_objects::ChannelDefinition> {
    server.engine.borrow().channels().into_iter().find(|d| {
        matches!(d.channel_type, ChannelType::Sender | ChannelType::Server)
            && d.attributes.xmit_q.trim() == queue
    })
}
