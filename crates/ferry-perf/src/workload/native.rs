//! The native implementation of the workloads' applications ([`super::app`]) over
//! ferry-client: MQI calls on a Ferry queue manager, as the reports' applications make
//! them. SR-CC's senders put datagrams to their own queue, its receivers get-wait on
//! it; both stop at a stop message.
//!
//! A requester puts a request (MsgType REQUEST, ReplyToQ set; in a unit of work
//! committed at once under `--syncpoint`), keeps the MsgId the queue manager
//! generated, then gets with WAIT, matching CorrelId = that MsgId, on the shared reply
//! queue. A responder get-waits on its request queue and puts a same-size reply (the
//! request's body, zero-copy) with CorrelId = the request's MsgId to its ReplyToQ;
//! responders stop at a stop message put behind the requests.

use std::time::Instant;

use bytes::Bytes;
use ferry_client::{ConnectOptions, Connection, Queue};
use ferry_mqi::descriptor::{msg_type, persistence, NONE_ID};
use ferry_mqi::{
    FixedStr, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
    PutOptions, ReasonCode,
};

use super::app::{
    Answer, Protocol, Received, Receiver, Reply, Requester, Responder, Sender, Streams,
};
use super::rr::{
    get_wait, put_options, queue_for, queue_names, request_queue_name, Fault, RrConfig,
    MISSING_QUEUE, REPLY_QUEUE, STOP_BODY,
};
use super::sr::{self, SrConfig};
use super::step::{connect, mq, open, queue_od};
use super::verify::{check_reply, TAG_LEN};
use crate::target::QueueManager;
use crate::PerfError;

/// Request/reply over the native protocol against one queue manager.
pub struct Native<'a> {
    /// The requesters' queue manager's administration connection.
    admin: &'a Connection,
    /// The responders' queue managers' (the requesters' one, except for RR-DQ, whose
    /// responders are on the other queue manager, and RR-CLUSTER-BB, on two); responder
    /// `id` is on host `id mod` their number.
    responder_admins: Vec<&'a Connection>,
    /// Requesters and responders are on two queue managers linked by channels: the
    /// requesters' queue manager's name.
    distributed: Option<String>,
    cfg: RrConfig,
    requester_opts: ConnectOptions,
    /// How responders connect, per host.
    responder_opts: Vec<ConnectOptions>,
}

impl<'a> Native<'a> {
    /// Applications of `qm` connecting as `cfg` says (client or bindings, SHARECNV);
    /// `admin` drains the queues and stops the responders.
    pub fn new(
        qm: &QueueManager,
        admin: &'a Connection,
        cfg: &RrConfig,
    ) -> Result<Native<'a>, PerfError> {
        Ok(Native {
            admin,
            responder_admins: vec![admin],
            distributed: None,
            cfg: cfg.clone(),
            requester_opts: qm.options_for(cfg.requester_mode)?.sharecnv(cfg.sharecnv),
            responder_opts: vec![qm.options_for(cfg.responder_mode)?.sharecnv(cfg.sharecnv)],
        })
    }

    /// RR-DQ-BB and RR-CLUSTER-BB: requesters on `requesters` (administered through
    /// `admin`), responders on the `hosts` (through `host_admins`, in the same order);
    /// requests and replies cross the channels between them ([`super::distributed`],
    /// [`super::cluster`]).
    pub fn distributed(
        requesters: &QueueManager,
        hosts: &[QueueManager],
        admin: &'a Connection,
        host_admins: &'a [Connection],
        cfg: &RrConfig,
    ) -> Result<Native<'a>, PerfError> {
        debug_assert_eq!(hosts.len(), host_admins.len());
        debug_assert_eq!(hosts.len(), cfg.responder_hosts.max(1));
        let responder_opts = hosts
            .iter()
            .map(|h| Ok(h.options_for(cfg.responder_mode)?.sharecnv(cfg.sharecnv)))
            .collect::<Result<Vec<_>, PerfError>>()?;
        Ok(Native {
            admin,
            responder_admins: host_admins.iter().collect(),
            distributed: Some(requesters.name().to_string()),
            cfg: cfg.clone(),
            requester_opts: requesters
                .options_for(cfg.requester_mode)?
                .sharecnv(cfg.sharecnv),
            responder_opts,
        })
    }

    /// Responder `id`'s host (an index into the responders' queue managers) and
    /// request queue.
    fn responder_place(&self, id: usize) -> (usize, usize) {
        let hosts = self.responder_admins.len().max(1);
        (id % hosts, queue_for(id / hosts, self.cfg.queues))
    }
}

/// A native requester: its connection, request queue and the reply queue.
pub struct NativeRequester {
    id: usize,
    conn: Connection,
    request_q: Queue,
    reply_q: Queue,
    reply_to: FixedStr<48>,
    /// ReplyToQMgr of the requests (blank: the queue manager fills in its own name).
    reply_to_qmgr: FixedStr<48>,
    persistent: bool,
    syncpoint: bool,
    size: usize,
    reply_timeout_secs: f64,
    pmo: PutOptions,
    gmo: GetOptions,
}

/// A native responder: its connection, request queue and the reply queues it opened.
pub struct NativeResponder {
    conn: Connection,
    request_q: Queue,
    /// Reply queues opened so far, by ReplyToQ and ReplyToQMgr.
    reply_queues: Vec<((FixedStr<48>, FixedStr<48>), Queue)>,
    size: usize,
    syncpoint: bool,
    fault: Fault,
    pmo: PutOptions,
    gmo: GetOptions,
}

impl Protocol for Native<'_> {
    type Requester = NativeRequester;
    type Responder = NativeResponder;

    async fn drain(&mut self) -> Result<u64, PerfError> {
        if self.distributed.is_none() {
            return drain(self.admin, &queue_names(&self.cfg)).await;
        }
        let requests: Vec<String> = (0..self.cfg.queues).map(request_queue_name).collect();
        let mut left = 0;
        for admin in &self.responder_admins {
            left += drain(admin, &requests).await?;
        }
        Ok(left + drain(self.admin, &[REPLY_QUEUE.to_string()]).await?)
    }

    async fn open_requester(&mut self, id: usize) -> Result<NativeRequester, PerfError> {
        let cfg = &self.cfg;
        let conn = connect(&self.requester_opts).await?;
        let queue = queue_for(id, cfg.queues);
        let name = request_queue_name(queue);
        let reply_to_qmgr = match &self.distributed {
            Some(qmgr) => super::distributed::reply_to_qmgr(qmgr, queue, cfg.channel_pairs),
            None => String::new(),
        };
        let reply_to_qmgr = FixedStr::new(&reply_to_qmgr)
            .map_err(|e| PerfError::Setup(format!("reply-to queue manager: {e}")))?;
        let request_q = conn
            .open(&queue_od(&name)?, OpenOptions::OUTPUT | cfg.bind)
            .await
            .map_err(|e| mq(&format!("open {name} for output"), e))?;
        let reply_q = conn
            .open(&queue_od(REPLY_QUEUE)?, OpenOptions::INPUT_SHARED)
            .await
            .map_err(|e| mq(&format!("open {REPLY_QUEUE} for input"), e))?;
        let reply_name = if cfg.fault == Fault::MissingReplyQueue {
            MISSING_QUEUE
        } else {
            REPLY_QUEUE
        };
        let reply_to = FixedStr::new(reply_name)
            .map_err(|e| PerfError::Setup(format!("reply queue name: {e}")))?;
        Ok(NativeRequester {
            id,
            conn,
            request_q,
            reply_q,
            reply_to,
            reply_to_qmgr,
            persistent: cfg.persistent,
            syncpoint: cfg.syncpoint,
            size: cfg.size,
            reply_timeout_secs: cfg.reply_timeout.as_secs_f64(),
            pmo: put_options(cfg.syncpoint),
            gmo: get_wait(
                MatchOptions::CORREL_ID,
                cfg.syncpoint,
                Some(cfg.reply_timeout),
            ),
        })
    }

    async fn open_responder(&mut self, id: usize) -> Result<NativeResponder, PerfError> {
        let cfg = &self.cfg;
        let (host, queue) = self.responder_place(id);
        let conn = connect(&self.responder_opts[host]).await?;
        let name = request_queue_name(queue);
        let request_q = conn
            .open(&queue_od(&name)?, OpenOptions::INPUT_SHARED)
            .await
            .map_err(|e| mq(&format!("open {name} for input"), e))?;
        Ok(NativeResponder {
            conn,
            request_q,
            reply_queues: Vec::new(),
            size: cfg.size,
            syncpoint: cfg.syncpoint,
            fault: cfg.fault,
            pmo: put_options(cfg.syncpoint),
            gmo: get_wait(MatchOptions::empty(), cfg.syncpoint, None),
        })
    }

    /// Puts one stop message per responder on each request queue of each host.
    async fn stop_responders(&mut self, responders: usize) -> Result<(), PerfError> {
        let hosts = self.responder_admins.len();
        for host in 0..hosts {
            for q in 0..self.cfg.queues {
                let on_this = (0..responders)
                    .filter(|&r| self.responder_place(r) == (host, q))
                    .count();
                if on_this == 0 {
                    continue;
                }
                let name = request_queue_name(q);
                put_stop_messages(self.responder_admins[host], &name, on_this).await?;
            }
        }
        Ok(())
    }
}

impl Requester for NativeRequester {
    async fn round_trip(&mut self, body: Bytes, tag: &[u8; TAG_LEN]) -> Result<Reply, String> {
        let id = self.id;
        let sent = body.clone();
        let mut md = MessageDescriptor {
            msg_type: msg_type::REQUEST,
            persistence: if self.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            reply_to_q: self.reply_to,
            reply_to_qmgr: self.reply_to_qmgr,
            ..MessageDescriptor::default()
        };
        self.request_q
            .put(&mut md, &self.pmo, body)
            .await
            .map_err(|e| format!("requester {id}: put request: {}", e.reason))?;
        if self.syncpoint {
            self.conn
                .commit()
                .await
                .map_err(|e| format!("requester {id}: commit request: {}", e.reason))?;
        }
        let msg_id = md.msg_id;
        if msg_id == NONE_ID {
            return Err(format!(
                "requester {id}: the queue manager generated no MsgId"
            ));
        }
        let mut reply_md = MessageDescriptor {
            correl_id: msg_id,
            ..MessageDescriptor::default()
        };
        match self.reply_q.get(&mut reply_md, &self.gmo, self.size).await {
            Ok(got) => {
                if self.syncpoint {
                    self.conn
                        .commit()
                        .await
                        .map_err(|e| format!("requester {id}: commit reply: {}", e.reason))?;
                }
                let at = Instant::now();
                let check = check_reply(
                    &msg_id,
                    &reply_md,
                    &got.data,
                    got.data_length,
                    self.size,
                    tag,
                );
                Ok(Reply {
                    check,
                    at,
                    buffer: Some(sent),
                })
            }
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => Err(format!(
                "requester {id}: no reply within {:.0} s (2033 MQRC_NO_MSG_AVAILABLE)",
                self.reply_timeout_secs
            )),
            Err(e) => Err(format!("requester {id}: get reply: {}", e.reason)),
        }
    }

    async fn close(self) {
        let _ = self.request_q.close(Default::default()).await;
        let _ = self.reply_q.close(Default::default()).await;
        let _ = self.conn.disconnect().await;
    }
}

impl Responder for NativeResponder {
    async fn answer(&mut self) -> Result<Answer, String> {
        let mut md = MessageDescriptor::default();
        let got = self
            .request_q
            .get(&mut md, &self.gmo, self.size)
            .await
            .map_err(|e| format!("responder: get request: {}", e.reason))?;
        if md.msg_type == msg_type::DATAGRAM && got.data.as_ref() == STOP_BODY {
            if self.syncpoint {
                let _ = self.conn.commit().await;
            }
            return Ok(Answer::Stopped);
        }
        if md.msg_type != msg_type::REQUEST {
            return Ok(Answer::NotARequest(format!(
                "responder: got MsgType {} instead of a request",
                md.msg_type
            )));
        }
        // Replies go to ReplyToQ at ReplyToQMgr, as MQ applications send them: on another
        // queue manager (RR-DQ-BB) they cross a channel.
        let to = (md.reply_to_q, md.reply_to_qmgr);
        let idx = match self.reply_queues.iter().position(|(n, _)| *n == to) {
            Some(i) => i,
            None => {
                let od = ObjectDescriptor {
                    object_name: md.reply_to_q,
                    object_qmgr_name: md.reply_to_qmgr,
                    ..ObjectDescriptor::default()
                };
                let q = self
                    .conn
                    .open(&od, OpenOptions::OUTPUT)
                    .await
                    .map_err(|e| {
                        format!(
                            "responder: open ReplyToQ '{}': {}",
                            md.reply_to_q.as_str().trim_end(),
                            e.reason
                        )
                    })?;
                self.reply_queues.push((to, q));
                self.reply_queues.len() - 1
            }
        };
        let mut reply = MessageDescriptor {
            msg_type: msg_type::REPLY,
            correl_id: md.msg_id,
            persistence: md.persistence,
            ..MessageDescriptor::default()
        };
        let mut data = got.data;
        match self.fault {
            Fault::WrongCorrelId => reply.correl_id[0] ^= 0xFF,
            Fault::CorruptBody if !data.is_empty() => {
                let mut v = data.to_vec();
                v[0] ^= 0xFF;
                data = Bytes::from(v);
            }
            _ => {}
        }
        self.reply_queues[idx]
            .1
            .put(&mut reply, &self.pmo, data)
            .await
            .map_err(|e| format!("responder: put reply: {}", e.reason))?;
        if self.syncpoint {
            self.conn
                .commit()
                .await
                .map_err(|e| format!("responder: commit: {}", e.reason))?;
        }
        Ok(Answer::Replied)
    }

    async fn close(self) {
        for (_, q) in self.reply_queues {
            let _ = q.close(Default::default()).await;
        }
        let _ = self.request_q.close(Default::default()).await;
        let _ = self.conn.disconnect().await;
    }
}

/// Removes whatever messages are left on `queues` through `admin`; returns how many.
pub async fn drain(admin: &Connection, queues: &[String]) -> Result<u64, PerfError> {
    let gmo = GetOptions {
        options: ferry_mqi::GetOptionFlags::NO_SYNCPOINT
            | ferry_mqi::GetOptionFlags::ACCEPT_TRUNCATED_MSG,
        wait_interval: 0,
        match_options: MatchOptions::empty(),
    };
    let mut drained = 0;
    for name in queues {
        let q = admin
            .open(&queue_od(name)?, OpenOptions::INPUT_SHARED)
            .await
            .map_err(|e| mq(&format!("open {name} to drain it"), e))?;
        loop {
            let mut md = MessageDescriptor::default();
            match q.get(&mut md, &gmo, 0).await {
                Ok(_) => drained += 1,
                Err(e) if e.reason == ReasonCode::NoMsgAvailable => break,
                Err(e) => return Err(mq(&format!("drain {name}"), e)),
            }
        }
        q.close(Default::default())
            .await
            .map_err(|e| mq(&format!("close {name}"), e))?;
    }
    Ok(drained)
}

/// Puts `n` stop messages (non-persistent datagrams, [`STOP_BODY`]) on queue `name`.
pub async fn put_stop_messages(admin: &Connection, name: &str, n: usize) -> Result<(), PerfError> {
    let queue = admin
        .open(&queue_od(name)?, OpenOptions::OUTPUT)
        .await
        .map_err(|e| mq(&format!("open {name} to stop its getters"), e))?;
    for _ in 0..n {
        let mut md = MessageDescriptor {
            msg_type: msg_type::DATAGRAM,
            persistence: persistence::NOT_PERSISTENT,
            ..MessageDescriptor::default()
        };
        queue
            .put(&mut md, &put_options(false), Bytes::from_static(STOP_BODY))
            .await
            .map_err(|e| mq(&format!("put stop message to {name}"), e))?;
    }
    queue
        .close(Default::default())
        .await
        .map(drop)
        .map_err(|e| mq(&format!("close {name}"), e))
}

/// SR-CC over the native protocol against one queue manager: senders and receivers of
/// one step.
pub struct NativeStreams<'a> {
    admin: &'a Connection,
    opts: ConnectOptions,
    cfg: SrConfig,
    queues: Vec<String>,
}

impl<'a> NativeStreams<'a> {
    /// The applications of a step with `senders` senders on `qm`, as `cfg` says
    /// (client connections, SHARECNV); `admin` drains, inquires and stops.
    pub fn new(
        qm: &QueueManager,
        admin: &'a Connection,
        cfg: &SrConfig,
        senders: usize,
    ) -> NativeStreams<'a> {
        NativeStreams {
            admin,
            opts: qm.connect_options().sharecnv(cfg.sharecnv),
            cfg: cfg.clone(),
            queues: (0..senders).map(sr::queue_name).collect(),
        }
    }

    fn queue(&self, id: usize) -> Result<&str, PerfError> {
        self.queues
            .get(id)
            .map(String::as_str)
            .ok_or_else(|| PerfError::Setup(format!("no queue for sender {}", id + 1)))
    }
}

/// A native SR-CC sender: its connection and its queue.
pub struct NativeSender {
    id: usize,
    conn: Connection,
    q: Queue,
    persistent: bool,
    syncpoint: bool,
    pmo: PutOptions,
}

/// A native SR-CC receiver: its connection and the queue it gets from.
pub struct NativeReceiver {
    conn: Connection,
    q: Queue,
    size: usize,
    syncpoint: bool,
    gmo: GetOptions,
}

impl Streams for NativeStreams<'_> {
    type Sender = NativeSender;
    type Receiver = NativeReceiver;
    const DEPTH_IS: &'static str = "on the queues (CURDEPTH)";

    async fn drain(&mut self) -> Result<u64, PerfError> {
        drain(self.admin, &self.queues).await
    }

    async fn open_sender(&mut self, id: usize) -> Result<NativeSender, PerfError> {
        let (conn, q) = open(&self.opts, self.queue(id)?, OpenOptions::OUTPUT).await?;
        Ok(NativeSender {
            id,
            conn,
            q,
            persistent: self.cfg.persistent,
            syncpoint: self.cfg.syncpoint,
            pmo: put_options(self.cfg.syncpoint),
        })
    }

    async fn open_receiver(&mut self, id: usize, _n: usize) -> Result<NativeReceiver, PerfError> {
        let (conn, q) = open(&self.opts, self.queue(id)?, OpenOptions::INPUT_SHARED).await?;
        Ok(NativeReceiver {
            conn,
            q,
            size: self.cfg.size,
            syncpoint: self.cfg.syncpoint,
            gmo: get_wait(MatchOptions::empty(), self.cfg.syncpoint, None),
        })
    }

    async fn depth(&mut self, _sent: u64, _got: u64) -> Result<u64, PerfError> {
        sr::total_depth(self.admin, &self.queues).await
    }

    /// One stop message per receiver, behind whatever is still queued.
    async fn stop_receivers(&mut self, per_queue: usize) -> Result<(), PerfError> {
        for name in &self.queues {
            put_stop_messages(self.admin, name, per_queue).await?;
        }
        Ok(())
    }
}

impl Sender for NativeSender {
    async fn send(&mut self, body: Bytes) -> Result<Option<Bytes>, String> {
        let kept = body.clone();
        let mut md = MessageDescriptor {
            msg_type: msg_type::DATAGRAM,
            persistence: if self.persistent {
                persistence::PERSISTENT
            } else {
                persistence::NOT_PERSISTENT
            },
            ..MessageDescriptor::default()
        };
        let id = self.id;
        self.q
            .put(&mut md, &self.pmo, body)
            .await
            .map_err(|e| format!("sender {id}: put: {}", e.reason))?;
        if self.syncpoint {
            self.conn
                .commit()
                .await
                .map_err(|e| format!("sender {id}: commit: {}", e.reason))?;
        }
        Ok(Some(kept))
    }

    async fn close(self) {
        let _ = self.q.close(Default::default()).await;
        let _ = self.conn.disconnect().await;
    }
}

/// One receive of an SR-CC receiver or PS-CC subscriber (`who`, for errors): a get from
/// `q` (committed at once under syncpoint), the step's stop message recognised.
pub(crate) async fn receive_one(
    who: &str,
    conn: &Connection,
    q: &Queue,
    gmo: &GetOptions,
    size: usize,
    syncpoint: bool,
) -> Result<Received, String> {
    let mut md = MessageDescriptor::default();
    let got = q
        .get(&mut md, gmo, size)
        .await
        .map_err(|e| format!("{who}: get: {}", e.reason))?;
    if syncpoint {
        conn.commit()
            .await
            .map_err(|e| format!("{who}: commit: {}", e.reason))?;
    }
    if got.data.as_ref() == STOP_BODY {
        return Ok(Received::Stopped);
    }
    Ok(Received::Message {
        length: got.data_length,
        body: got.data,
    })
}

impl Receiver for NativeReceiver {
    async fn receive(&mut self) -> Result<Received, String> {
        receive_one(
            "receiver",
            &self.conn,
            &self.q,
            &self.gmo,
            self.size,
            self.syncpoint,
        )
        .await
    }

    async fn close(self) {
        let _ = self.q.close(Default::default()).await;
        let _ = self.conn.disconnect().await;
    }
}
