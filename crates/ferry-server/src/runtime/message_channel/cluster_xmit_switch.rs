//! The switch of a cluster-sender's transmission queue when the channel starts, as MQ
//! does it: QMGR DEFCLXQ(CHANNEL) gives each cluster-sender its own
//! SYSTEM.CLUSTER.TRANSMIT.<channel> (made from SYSTEM.CLUSTER.TRANSMIT.MODEL.QUEUE),
//! DEFCLXQ(SCTQ) the shared SYSTEM.CLUSTER.TRANSMIT.QUEUE. When the queue a starting
//! channel is to use differs from the one its messages wait on, the new queue is made,
//! new messages go to it, and those waiting (on the old queue, with the channel's
//! CorrelId) are moved to it in units of work; FRY7341I says so.

use super::engine_session::EngineSession;
use crate::runtime::server::Server;
use ferry_engine::cluster::channel_correl_id;
use ferry_engine::cluster::xmit_queue::channel_xmit_q;
use ferry_engine::ConnectionInfo;
use ferry_messages as messages;
use ferry_mqi::options::{GetOptionFlags, MatchOptions, OpenOptions, PutOptionFlags};
use ferry_mqi::{GetOptions, MessageDescriptor, MqError, ObjectDescriptor, PutOptions, ReasonCode};
use ferry_objects::queue::CLUSTER_TRANSMIT_QUEUE;
use std::rc::Rc;

/// Messages moved per unit of work.
const BATCH: usize = 100;

/// Switches cluster-sender `channel` to the transmission queue DEFCLXQ asks for, if it
/// is not on it: true when its transmission queue changed (the caller reads the
/// channel's definition again).
pub(super) async fn switch(server: &Rc<Server>, channel: &str) -> bool {
    let (current, wanted) = {
        let engine = server.engine.borrow();
        (
            engine.cluster_xmit_q_name(channel),
            engine.cluster_wanted_xmit_q(channel),
        )
    };
    // Messages may also wait on the queue of a switch not made before a restart.
    let others: Vec<String> = [CLUSTER_TRANSMIT_QUEUE.to_string(), channel_xmit_q(channel)]
        .into_iter()
        .filter(|q| *q != wanted)
        .collect();
    if current == wanted && !has_messages(server, channel, &others) {
        return false;
    }
    if wanted != CLUSTER_TRANSMIT_QUEUE {
        let made =
            server.with_engine(|e, now, fx| e.define_cluster_channel_xmit_q(channel, now, fx));
        if let Err(e) = made {
            tracing::warn!(
                "cluster-sender {channel}: its transmission queue {wanted} cannot be made: {e}"
            );
            return false;
        }
    }
    server
        .engine
        .borrow_mut()
        .set_cluster_xmit_q(channel, &wanted);
    let mut moved = 0;
    for from in &others {
        match move_messages(server, channel, from, &wanted).await {
            Ok(n) => moved += n,
            Err(e) => tracing::warn!(
                "cluster-sender {channel}: messages could not be moved from {from} to {wanted}: {}",
                e.reason
            ),
        }
    }
    server.error_log.borrow_mut().write(
        &messages::CLUSTER_XMITQ_SWITCHED,
        &[&channel, &wanted, &moved, &current],
    );
    current != wanted
}

/// True when one of `queues` holds a message for `channel`.
fn has_messages(server: &Server, channel: &str, queues: &[String]) -> bool {
    let engine = server.engine.borrow();
    let correl = channel_correl_id(channel);
    queues
        .iter()
        .any(|q| engine.has_message_with_correl_id(q, &correl))
}

/// Moves the messages for `channel` from queue `from` to queue `to`: returns how many.
async fn move_messages(
    server: &Rc<Server>,
    channel: &str,
    from: &str,
    to: &str,
) -> Result<usize, MqError> {
    let info = ConnectionInfo {
        application_name: format!("{channel} (transmission queue switch)"),
        channel: String::new(),
        connection_name: String::new(),
        user_id: server.administrators.process_user().to_string(),
        pid: Some(std::process::id()),
    };
    let session = EngineSession::connect(server, info)?;
    let queue = |name: &str| {
        ObjectDescriptor::queue(name).map_err(|_| MqError::from(ReasonCode::ObjectNameError))
    };
    let source = match session.open(&queue(from)?, OpenOptions::INPUT_SHARED) {
        Ok(h) => h,
        Err(e) if e.reason == ReasonCode::UnknownObjectName => return Ok(0),
        Err(e) => return Err(e),
    };
    let target = queue(to)?;
    let max_len = usize::try_from(server.engine.borrow().qmgr().max_msg_length).unwrap_or(0);
    let md = MessageDescriptor {
        correl_id: channel_correl_id(channel),
        ..MessageDescriptor::default()
    };
    let gmo = GetOptions {
        options: GetOptionFlags::SYNCPOINT,
        wait_interval: 0,
        match_options: MatchOptions::CORREL_ID,
    };
    let pmo = PutOptions::new(PutOptionFlags::SYNCPOINT);
    let mut moved = 0;
    let result = async {
        loop {
            let mut in_batch = 0;
            while in_batch < BATCH {
                let mut got = match session.get(source, &md, &gmo, max_len).await {
                    Ok(got) => got,
                    Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => break,
                    Err(e) => return Err(e.error),
                };
                session
                    .put1(&target, &mut got.md, &pmo, got.data, got.properties)
                    .await?;
                in_batch += 1;
            }
            session.commit().await?;
            moved += in_batch;
            if in_batch < BATCH {
                return Ok(moved);
            }
        }
    }
    .await;
    if result.is_err() {
        let _ = session.backout().await;
    }
    session.end(true);
    result
}
