//! Reallocation of cluster messages, as MQ does it: a message on
//! SYSTEM.CLUSTER.TRANSMIT.QUEUE put with MQOO_BIND_NOT_FIXED (marked by
//! `ferry_engine::cluster::REALLOCATABLE_FEEDBACK`) whose cluster-sender cannot run
//! (RETRYING or STOPPED), or whose queue manager left the cluster (RESET CLUSTER
//! FORCEREMOVE, or its record expired), is moved to another instance the workload
//! algorithm chooses: its MQXQH names the new queue manager and its CorrelId the new
//! channel. A message bound to its instance (BIND_ON_OPEN, a group) waits for it.
//!
//! Each pass browses the messages of the channels concerned, then gets and puts again
//! those that have somewhere better to go, in one unit of work.

use super::engine_session::EngineSession;
use super::MessageChannels;
use crate::runtime::server::Server;
use bytes::Bytes;
use ferry_engine::cluster::{channel_correl_id, REALLOCATABLE_FEEDBACK};
use ferry_engine::Hobj;
use ferry_mqi::options::{GetOptionFlags, MatchOptions, OpenOptions, PutOptionFlags};
use ferry_mqi::transmission::TransmissionHeader;
use ferry_mqi::{
    FixedStr, GetOptions, MessageDescriptor, MqError, ObjectDescriptor, PutOptions, ReasonCode,
};
use ferry_objects::queue::CLUSTER_TRANSMIT_QUEUE;
use ferry_objects::status::MessageChannelState;
use std::collections::BTreeMap;

/// The most messages one pass moves.
const MOST_PER_PASS: usize = 500;

/// The channels whose reallocatable messages should move, with the queue manager each
/// leads to: those RETRYING or STOPPED, and `departed` (queue managers that left).
fn stuck_channels(
    server: &Server,
    channels: &MessageChannels,
    departed: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    let engine = server.engine.borrow();
    let repository = engine.cluster_repository();
    // A departed queue manager that is back has its channel again.
    let mut out: BTreeMap<String, String> = departed
        .iter()
        .filter(|(_, qmgr)| repository.any_qmgr(qmgr).is_none())
        .map(|(c, q)| (c.clone(), q.clone()))
        .collect();
    for r in repository.qmgrs().filter(|r| r.qmgr != server.name) {
        let state = channels.existing(&r.channel).map(|a| a.state());
        if matches!(
            state,
            Some(MessageChannelState::Retrying | MessageChannelState::Stopped)
        ) {
            out.insert(r.channel.clone(), r.qmgr.clone());
        }
    }
    for r in repository.records() {
        if let ferry_engine::cluster::repository::ClusterRecord::QueueManager(q) = r {
            if q.removed && repository.any_qmgr(&q.qmgr).is_none() {
                out.insert(q.channel.clone(), q.qmgr.clone());
            }
        }
    }
    out
}

/// One move: the message's id, its new header and channel.
struct Move {
    msg_id: [u8; 24],
    correl_id: [u8; 24],
    data: Vec<u8>,
    channel: String,
    /// The queue it waits on, when not SYSTEM.CLUSTER.TRANSMIT.QUEUE (DEFCLXQ(CHANNEL)).
    own_queue: Option<Hobj>,
}

/// One pass: moves the reallocatable messages of stuck channels to other instances.
/// Returns how many moved. `sctq_in` is the cluster transmission queue opened to browse
/// and get, `sctq_out` to put.
pub(super) async fn reallocate(
    server: &Server,
    session: &EngineSession,
    (sctq_in, sctq_out): (Hobj, Hobj),
    channels: &MessageChannels,
    departed: &BTreeMap<String, String>,
) -> Result<usize, MqError> {
    let stuck = stuck_channels(server, channels, departed);
    if stuck.is_empty() {
        return Ok(0);
    }
    let max_len = usize::try_from(server.engine.borrow().qmgr().max_msg_length).unwrap_or(0);
    let mut moves: Vec<Move> = Vec::new();
    let mut own_queues: Vec<Hobj> = Vec::new();
    for (channel, from) in &stuck {
        let correl_id = channel_correl_id(channel);
        // The queue the channel's messages wait on.
        let queue = server.engine.borrow().cluster_xmit_q_name(channel);
        let (source, own_queue) = if queue == CLUSTER_TRANSMIT_QUEUE {
            (sctq_in, None)
        } else {
            let od = ObjectDescriptor::queue(&queue)
                .map_err(|_| MqError::from(ReasonCode::ObjectNameError))?;
            let h = session.open(&od, OpenOptions::INPUT_SHARED | OpenOptions::BROWSE)?;
            own_queues.push(h);
            (h, Some(h))
        };
        let md = MessageDescriptor {
            correl_id,
            ..MessageDescriptor::default()
        };
        let mut options = GetOptionFlags::BROWSE_FIRST | GetOptionFlags::NO_SYNCPOINT;
        while moves.len() < MOST_PER_PASS {
            let gmo = GetOptions {
                options,
                wait_interval: 0,
                match_options: MatchOptions::CORREL_ID,
            };
            options = GetOptionFlags::BROWSE_NEXT | GetOptionFlags::NO_SYNCPOINT;
            let got = match session.get(source, &md, &gmo, max_len).await {
                Ok(got) => got,
                Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(e.error),
            };
            if got.md.feedback != REALLOCATABLE_FEEDBACK {
                continue;
            }
            let Ok((mut header, at)) = TransmissionHeader::decode(&got.data) else {
                continue;
            };
            let choice = server
                .engine
                .borrow_mut()
                .cluster_reallocate(header.remote_q_name.as_str(), from);
            let Some(choice) = choice else { continue };
            let Some(to) = choice.channel else { continue };
            header.remote_qmgr_name = FixedStr::truncating(&choice.qmgr);
            let mut data = Vec::with_capacity(got.data.len());
            header.encode(&mut data);
            data.extend_from_slice(&got.data[at..]);
            moves.push(Move {
                msg_id: got.md.msg_id,
                correl_id,
                data,
                channel: to,
                own_queue,
            });
        }
    }
    let result = move_all(server, session, (sctq_in, sctq_out), moves, max_len).await;
    for h in own_queues {
        session.close(h);
    }
    result
}

/// Gets each message of `moves` and puts it again for its new channel, in one unit of
/// work (on SYSTEM.CLUSTER.TRANSMIT.QUEUE, or the channel's own with DEFCLXQ(CHANNEL)).
async fn move_all(
    server: &Server,
    session: &EngineSession,
    (sctq_in, sctq_out): (Hobj, Hobj),
    moves: Vec<Move>,
    max_len: usize,
) -> Result<usize, MqError> {
    if moves.is_empty() {
        return Ok(0);
    }
    let mut moved = 0;
    for m in moves {
        let md = MessageDescriptor {
            msg_id: m.msg_id,
            correl_id: m.correl_id,
            ..MessageDescriptor::default()
        };
        let gmo = GetOptions {
            options: GetOptionFlags::SYNCPOINT,
            wait_interval: 0,
            match_options: MatchOptions::MSG_ID | MatchOptions::CORREL_ID,
        };
        let source = m.own_queue.unwrap_or(sctq_in);
        let mut got = match session.get(source, &md, &gmo, max_len).await {
            Ok(got) => got,
            // The channel took it meanwhile (it started again): nothing to move.
            Err(e) if e.error.reason == ReasonCode::NoMsgAvailable => continue,
            Err(e) => return Err(e.error),
        };
        got.md.correl_id = channel_correl_id(&m.channel);
        let pmo = PutOptions::new(PutOptionFlags::SYNCPOINT);
        let to = server.engine.borrow().cluster_xmit_q_name(&m.channel);
        let data = Bytes::from(m.data);
        if to == CLUSTER_TRANSMIT_QUEUE {
            session
                .put(sctq_out, &mut got.md, &pmo, data, got.properties)
                .await?;
        } else {
            let od = ObjectDescriptor::queue(&to)
                .map_err(|_| MqError::from(ReasonCode::ObjectNameError))?;
            session
                .put1(&od, &mut got.md, &pmo, data, got.properties)
                .await?;
        }
        moved += 1;
    }
    session.commit().await?;
    Ok(moved)
}
