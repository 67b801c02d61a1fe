//! A message channel agent's own connection to the engine: MQI calls made by the queue
//! manager itself, awaited as an application awaits them.
//!
//! A channel agent is one more kind of connection (`server::Connection`): the engine
//! completes its waiting gets through the server's routes, and the log driver releases
//! what waits for the recovery log through [`DurableHold`]. The agent runs one call at a
//! time, so one slot for a completed get and one wake-up suffice. Calls that log first
//! wait for log room (polling: an agent is not an application waiting on a socket, and
//! a checkpoint frees the room within a second).

use crate::runtime::log_driver::{DurableHold, LogUse};
use crate::runtime::reply_wait::{ReplyHold, ReplyWait};
use crate::runtime::server::{Connection, LogRoom, Server};
use ferry_durability::Hold;
use ferry_engine::{
    ConnId, ConnectionInfo, ConsumerId, DeliveryToken, GetError, GetOutcome, GetResult, GotMessage,
    Hobj,
};
use ferry_mqi::{
    GetOptions, MessageDescriptor, MqError, ObjectDescriptor, OpenOptions, PutOptions, ReasonCode,
};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// How often a call waiting for log room looks again.
const LOG_ROOM_POLL: Duration = Duration::from_millis(10);

/// What the server and the log driver hand to a session.
#[derive(Default)]
struct SessionShared {
    /// A waiting get's answer, once the engine gave it.
    got: RefCell<Option<(GetResult, ReplyHold)>>,
    /// Log positions awaited, oldest first.
    held: RefCell<VecDeque<u64>>,
    /// The highest durable position heard of.
    durable: Cell<u64>,
    /// The log failed.
    log_failed: Cell<bool>,
    /// Wakes the agent: a get completed, the log moved.
    wake: Notify,
    /// The session is ending.
    closing: Cell<bool>,
}

impl Connection for SessionShared {
    fn get_completed(
        self: Rc<Self>,
        _server: &Server,
        _conn: ConnId,
        result: GetResult,
        hold: ReplyHold,
    ) {
        *self.got.borrow_mut() = Some((result, hold));
        self.wake.notify_one();
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
        // A channel agent gets; it never registers a consumer.
        tracing::error!("{conn:?}: a delivery reached a channel agent; dropped");
    }

    fn consumer_ended(&self, _conn: ConnId, _consumer: ConsumerId, _reason: ReasonCode) {}

    fn retry_log_room(self: Rc<Self>, _server: &Rc<Server>, _call: u32) {
        // The agent polls for log room itself.
    }

    fn is_closing(&self) -> bool {
        self.closing.get()
    }
}

impl DurableHold for SessionShared {
    fn release_held(&self, durable: u64) -> bool {
        self.durable.set(self.durable.get().max(durable));
        let mut held = self.held.borrow_mut();
        let before = held.len();
        while held.front().is_some_and(|l| *l <= durable) {
            held.pop_front();
        }
        if held.len() != before {
            self.wake.notify_one();
        }
        !held.is_empty()
    }

    fn fail_held(&self) {
        self.log_failed.set(true);
        self.held.borrow_mut().clear();
        self.wake.notify_one();
    }
}

/// One engine connection of a channel agent.
pub(crate) struct EngineSession {
    server: Rc<Server>,
    conn: ConnId,
    shared: Rc<SessionShared>,
    ended: Cell<bool>,
}

impl EngineSession {
    /// Connects to the engine as `info` says (the agent's channel, partner and user).
    pub(crate) fn connect(server: &Rc<Server>, info: ConnectionInfo) -> Result<Self, MqError> {
        let conn = server.with_engine(|e, now, fx| e.connect(info, now, fx))?;
        let shared = Rc::new(SessionShared::default());
        server.begin_conversation(conn, shared.clone());
        Ok(EngineSession {
            server: server.clone(),
            conn,
            shared,
            ended: Cell::new(false),
        })
    }

    /// The server this session runs on.
    pub(crate) fn server(&self) -> &Rc<Server> {
        &self.server
    }

    /// MQOPEN.
    pub(crate) fn open(
        &self,
        od: &ObjectDescriptor,
        options: OpenOptions,
    ) -> Result<Hobj, MqError> {
        let conn = self.conn;
        self.server
            .with_engine(|e, now, fx| e.open(conn, od, options, now, fx))
            .map(|o| o.hobj)
    }

    /// MQCLOSE of `hobj` (a handle that is gone already is fine).
    pub(crate) fn close(&self, hobj: Hobj) {
        let conn = self.conn;
        let _ = self.server.with_engine(|e, now, fx| {
            e.close(conn, hobj, ferry_mqi::CloseOptions::empty(), now, fx)
        });
    }

    /// MQGET, waiting as `gmo` says; a stop cancels the wait by ending the session.
    pub(crate) async fn get(
        &self,
        hobj: Hobj,
        md: &MessageDescriptor,
        gmo: &GetOptions,
        max_len: usize,
    ) -> GetResult {
        let conn = self.conn;
        let mut wait = ReplyWait::default();
        let outcome = self.server.call(&mut wait, |e, now, fx| {
            e.get(conn, hobj, md, gmo, max_len, now, fx)
        });
        let (result, hold) = match outcome {
            GetOutcome::Done(r) => (r, wait.log),
            GetOutcome::Waiting => {
                self.server.get_waits();
                loop {
                    if let Some(done) = self.shared.got.borrow_mut().take() {
                        break done;
                    }
                    if self.shared.closing.get() {
                        return Err(MqError::from(ReasonCode::ConnectionBroken).into());
                    }
                    self.shared.wake.notified().await;
                }
            }
        };
        self.hold(hold).await.map_err(GetError::from).and(result)
    }

    /// MQPUT on an open handle of `body` and `properties` (logged first when there is
    /// room for it).
    pub(crate) async fn put(
        &self,
        hobj: Hobj,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: bytes::Bytes,
        properties: bytes::Bytes,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.log_room(LogUse::Put(body.len() + properties.len()))
            .await?;
        let conn = self.conn;
        let mut wait = ReplyWait::default();
        let r = self.server.call(&mut wait, |e, now, fx| {
            e.put_with_properties(conn, hobj, md, pmo, body, properties, now, fx)
        });
        self.hold(wait.log).await?;
        r
    }

    /// MQPUT1 of `body` and `properties` (logged first when there is room for it).
    pub(crate) async fn put1(
        &self,
        od: &ObjectDescriptor,
        md: &mut MessageDescriptor,
        pmo: &PutOptions,
        body: bytes::Bytes,
        properties: bytes::Bytes,
    ) -> Result<Option<ReasonCode>, MqError> {
        self.log_room(LogUse::Put(body.len() + properties.len()))
            .await?;
        let conn = self.conn;
        let mut wait = ReplyWait::default();
        let r = self.server.call(&mut wait, |e, now, fx| {
            e.put1_with_properties(conn, od, md, pmo, body, properties, now, fx)
        });
        self.hold(wait.log).await?;
        r
    }

    /// MQCMIT, returning once the unit of work is durable.
    pub(crate) async fn commit(&self) -> Result<(), MqError> {
        self.log_room(LogUse::Small).await?;
        let conn = self.conn;
        let mut wait = ReplyWait::default();
        let r = self
            .server
            .call(&mut wait, |e, now, fx| e.commit(conn, now, fx));
        self.hold(wait.log).await?;
        r
    }

    /// MQCMIT, returning once the engine has applied it, before it is durable (for a
    /// caller whose own durable record covers a failure in between); fails only when its
    /// records could not be logged.
    pub(crate) async fn commit_without_waiting(&self) -> Result<(), MqError> {
        self.log_room(LogUse::Small).await?;
        let conn = self.conn;
        let mut wait = ReplyWait::default();
        let r = self
            .server
            .call(&mut wait, |e, now, fx| e.commit(conn, now, fx));
        if wait.log == ReplyHold::Fail {
            return Err(ReasonCode::ResourceProblem.into());
        }
        r
    }

    /// MQBACK.
    pub(crate) async fn backout(&self) -> Result<(), MqError> {
        let conn = self.conn;
        let mut wait = ReplyWait::default();
        let r = self
            .server
            .call(&mut wait, |e, now, fx| e.backout(conn, now, fx));
        self.hold(wait.log).await?;
        r
    }

    /// Waits for log room for a call that logs `usage`: 2102 MQRC_RESOURCE_PROBLEM when
    /// none comes.
    async fn log_room(&self, usage: LogUse) -> Result<(), MqError> {
        // Almost always there is room: answered without reading the clock or the log's
        // checkpoint count.
        if self.server.log_room(usage, 0) == LogRoom::Ready {
            return Ok(());
        }
        let since = Instant::now();
        let start = self.server.checkpoints_completed();
        loop {
            let waited = self.server.checkpoints_completed().saturating_sub(start);
            match self.server.log_room(usage, waited) {
                LogRoom::Ready => return Ok(()),
                LogRoom::Refused => return Err(ReasonCode::ResourceProblem.into()),
                LogRoom::Wait if self.server.waited_too_long_for_log_room(since) => {
                    self.server.refuse_log_room(usage);
                    return Err(ReasonCode::ResourceProblem.into());
                }
                LogRoom::Wait => tokio::time::sleep(LOG_ROOM_POLL).await,
            }
        }
    }

    /// Waits until what `hold` names is durable: 2102 when the log failed.
    async fn hold(&self, hold: ReplyHold) -> Result<(), MqError> {
        let lsn = match hold {
            ReplyHold::Now => return Ok(()),
            ReplyHold::Fail => return Err(ReasonCode::ResourceProblem.into()),
            ReplyHold::Until(lsn) => lsn,
        };
        match self.server.log_hold(lsn) {
            Hold::Now => return Ok(()),
            Hold::Fail => return Err(ReasonCode::ResourceProblem.into()),
            Hold::Until(_) => {}
        }
        let first = {
            let mut held = self.shared.held.borrow_mut();
            held.push_back(lsn);
            held.len() == 1
        };
        if first {
            self.server.note_held(self.shared.clone());
        }
        loop {
            if self.shared.log_failed.get() {
                return Err(ReasonCode::ResourceProblem.into());
            }
            if self.shared.durable.get() >= lsn {
                return Ok(());
            }
            self.shared.wake.notified().await;
        }
    }

    /// Ends the session: `normal` commits what is in flight, otherwise it is backed out.
    pub(crate) fn end(&self, normal: bool) {
        if self.ended.replace(true) {
            return;
        }
        self.shared.closing.set(true);
        let _ = self.server.end_conversation(self.conn, normal);
        // A task waiting on the session is woken to see it ended.
        self.shared.wake.notify_one();
    }
}

impl Drop for EngineSession {
    fn drop(&mut self) {
        // An agent that goes without ending its session (a broken partner, a stop) backs
        // its unit of work out, as a broken client connection does.
        self.end(false);
    }
}
