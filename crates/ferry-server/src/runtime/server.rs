//! The running queue manager's shared state, owned by the one runtime thread.
//!
//! All connections, listeners and timers run as tasks on one thread (a tokio
//! current-thread runtime with a `LocalSet`), so the engine is reached through a
//! `RefCell`, never a lock, and a put that completes another connection's waiting get
//! only appends to that connection's output buffer and wakes its writer task: no
//! cross-thread wake-up per message. On this machine's two cores that is the fastest
//! arrangement (see docs/architecture.md); the client load uses the other core.
//!
//! With the recovery log ([`RecoveryLog`]), `perform_effects` appends each call's log
//! records right after the call; a reply that needs them durable is held (see
//! [`Server::send`]) and released by one wake-up per flush.
//!
//! A call that changed a definition hands the new definition to the definitions writer
//! thread ([`CatalogueWriter`]); its reply waits aside until the writer says the change
//! is durable ([`catalogue_task`]), so the runtime thread never waits for that disk
//! either, and other connections carry on.

use super::admission::{Admission, Budget};
use super::clock;
use super::endpoints::Endpoints;
use super::log_driver::{LogUse, RecoveryLog};
use super::memory::MemoryTrim;
use super::socket::{ChannelInstance, SocketShared};
use crate::catalogue_store::{CatalogueWriter, JournalRecord, Outcome};
use crate::error_log::ErrorLog;
use crate::home::QmgrPaths;
use crate::lifecycle::{QmgrState, RunStatus, SocketSummary};
use crate::messages;
use crate::qm_ini::QmIni;
use ferry_durability::{Hold, Room};
use ferry_engine::{CatalogueChange, ConnId, Effect, Effects, GetResult, QueueManager, Timestamp};
use ferry_mqi::ReasonCode;
use ferry_wire::{encode_reply, Reply, Status};
use foldhash::{HashMap, HashMapExt};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// Whether a call that logs can run now ([`Server::log_room`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum LogRoom {
    /// There is room: run it.
    Ready,
    /// The log is full and a checkpoint under way will free space: wait for it.
    Wait,
    /// No checkpoint can free enough: answer 2102 MQRC_RESOURCE_PROBLEM.
    Refused,
}

/// A request frame waiting for log space, on the queue manager's thread but without
/// blocking it (other conversations, non-persistent work above all, carry on).
pub(crate) struct LogRoomWaiter {
    /// The socket it came on.
    pub socket: Rc<SocketShared>,
    /// The frame, handled again once a checkpoint finishes.
    pub frame: ferry_wire::Frame,
    /// What it will log.
    pub usage: LogUse,
    /// When it first found the log full.
    pub since: Instant,
    /// Checkpoints completed when it first found the log full
    /// ([`Server::checkpoints_completed`]).
    pub base: u64,
}

/// Where what the engine completes for a connection goes: one map, from engine
/// connection to its route, for every protocol.
pub enum Route {
    /// A native conversation whose GET waits: the reply goes back on its socket.
    WaitingGet(WaitingGet),
    /// An AMQP connection: its consumers' deliveries and cancellations.
    Amqp(Rc<super::amqp::AmqpShared>),
}

/// Where the reply of a waiting GET must go when the engine completes it.
pub struct WaitingGet {
    /// The socket of the conversation.
    pub socket: Rc<SocketShared>,
    /// Conversation id on that socket.
    pub conversation: u32,
    /// The GET's request id.
    pub request_id: u32,
}

/// What must happen to the reply of the request being handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyHold {
    /// Send it at once.
    Now,
    /// Hold it until the log is durable up to this LSN.
    Until(u64),
    /// Its log records could not be appended: answer 2102 MQRC_RESOURCE_PROBLEM.
    Fail,
}

/// A reply waiting until the definitions its request changed are durable.
struct CatalogueWaiter {
    /// The writer's ticket for the change.
    ticket: u64,
    socket: Rc<SocketShared>,
    conversation: u32,
    request_id: u32,
    reply: Reply,
    /// What the reply must wait for in the recovery log after that.
    hold: ReplyHold,
}

/// Everything the tasks of one running queue manager share.
pub struct Server {
    /// Queue manager name.
    pub name: String,
    /// Its files.
    pub paths: QmgrPaths,
    /// qm.ini as read at start.
    pub ini: QmIni,
    /// The engine.
    pub engine: RefCell<QueueManager>,
    /// Effects buffer reused by every engine call.
    effects: RefCell<Effects>,
    /// Where completions go, by engine connection: native conversations while a GET
    /// waits, AMQP connections while they are open.
    routes: RefCell<HashMap<ConnId, Route>>,
    /// The error log.
    pub error_log: RefCell<ErrorLog>,
    /// The listeners and channels of every protocol (START/STOP, status, start and end).
    pub endpoints: Endpoints,
    /// Lifecycle state.
    pub state: Cell<QmgrState>,
    /// Open client sockets (TCP), for MaxChannels.
    pub client_sockets: Cell<u32>,
    /// Every TCP socket accepted and not yet closed, for Limits/MaxConnections.
    pub admission: Rc<Admission>,
    /// Large buffers let go of since memory was last handed back to the system.
    pub memory: Rc<MemoryTrim>,
    /// Open conversations (connections), for status and controlled stop.
    pub conversations: Cell<u64>,
    /// Sockets, for closing them all at an immediate stop.
    pub sockets: RefCell<Vec<std::rc::Weak<SocketShared>>>,
    /// SVRCONN channel instances (client sockets over TCP) from accept to close, in
    /// accept order: MAXINST and MAXINSTC count them.
    pub channel_instances: RefCell<BTreeMap<u64, Rc<ChannelInstance>>>,
    /// The id of the next channel instance.
    pub next_channel_instance: Cell<u64>,
    /// Wakes the wait-expiry timer when an earlier deadline appears.
    pub timer_wake: Notify,
    /// The deadline the timer sleeps until.
    pub timer_armed: Cell<Option<Timestamp>>,
    /// Wakes the main task when the state or conversations change.
    pub lifecycle_wake: Notify,
    /// When the queue manager started.
    pub started_ms: u64,
    /// Listeners and AMQP channels that could not start with the queue manager (their
    /// FRY9212E/FRY9213E lines), published for `ferry start` to show.
    pub start_failures: RefCell<Vec<String>>,
    /// The time of the read batch being processed: one clock read serves every frame
    /// of one read (PutTime has hundredths of a second; a batch takes microseconds).
    batch_now: Cell<Option<Timestamp>>,
    /// The recovery log (None only for tests that run without one).
    pub log: Option<RecoveryLog>,
    /// What happens to the current request's reply (set by `perform_effects`).
    reply_hold: Cell<ReplyHold>,
    /// Requests waiting for log space, oldest first.
    log_room_waiters: RefCell<VecDeque<LogRoomWaiter>>,
    /// AMQP connections whose next transfer waits for log space.
    amqp_log_waiters: RefCell<Vec<Rc<super::amqp::AmqpShared>>>,
    /// The definitions writer (objects.journal, objects.json).
    pub catalogue: CatalogueWriter,
    /// The writer ticket the current request's reply waits for, if it changed definitions.
    catalogue_hold: Cell<Option<u64>>,
    /// Replies waiting for definitions to be durable, in ticket order.
    catalogue_waiters: RefCell<VecDeque<CatalogueWaiter>>,
}

impl Server {
    /// A server around an engine restored from disk.
    pub fn new(
        paths: QmgrPaths,
        ini: QmIni,
        engine: QueueManager,
        error_log: ErrorLog,
        log: Option<RecoveryLog>,
        catalogue: CatalogueWriter,
        endpoints: impl FnOnce(&Weak<Server>) -> Endpoints,
    ) -> Rc<Self> {
        let admission = Admission::new(Budget::of_this_process(&ini.limits));
        Rc::new_cyclic(|weak| Server {
            name: paths.name.clone(),
            paths,
            ini,
            engine: RefCell::new(engine),
            effects: RefCell::new(Effects::default()),
            routes: RefCell::new(HashMap::new()),
            error_log: RefCell::new(error_log),
            endpoints: endpoints(weak),
            state: Cell::new(QmgrState::Starting),
            client_sockets: Cell::new(0),
            admission,
            memory: Rc::new(MemoryTrim::default()),
            conversations: Cell::new(0),
            sockets: RefCell::new(Vec::new()),
            channel_instances: RefCell::new(BTreeMap::new()),
            next_channel_instance: Cell::new(0),
            timer_wake: Notify::new(),
            timer_armed: Cell::new(None),
            lifecycle_wake: Notify::new(),
            started_ms: clock::now().0,
            start_failures: RefCell::new(Vec::new()),
            batch_now: Cell::new(None),
            log,
            reply_hold: Cell::new(ReplyHold::Now),
            log_room_waiters: RefCell::new(VecDeque::new()),
            amqp_log_waiters: RefCell::new(Vec::new()),
            catalogue,
            catalogue_hold: Cell::new(None),
            catalogue_waiters: RefCell::new(VecDeque::new()),
        })
    }

    /// Runs `f` against the engine with the shared effects buffer, then performs the effects.
    pub fn with_engine<T>(
        &self,
        f: impl FnOnce(&mut QueueManager, Timestamp, &mut Effects) -> T,
    ) -> T {
        let now = self.batch_now.get().unwrap_or_else(clock::now);
        let out = {
            let mut engine = self.engine.borrow_mut();
            let mut fx = self.effects.borrow_mut();
            f(&mut engine, now, &mut fx)
        };
        self.perform_effects();
        out
    }

    /// Starts processing the frames of one read: they share one clock reading, which is
    /// returned.
    pub fn begin_batch(&self) -> Timestamp {
        let now = clock::now();
        self.batch_now.set(Some(now));
        now
    }

    /// Ends the batch: later calls read the clock again.
    pub fn end_batch(&self) {
        self.batch_now.set(None);
    }

    /// Records where a waiting GET's reply goes, and re-arms the timer when needed.
    pub fn park_get(&self, conn: ConnId, get: WaitingGet) {
        self.routes
            .borrow_mut()
            .insert(conn, Route::WaitingGet(get));
        let next = self.engine.borrow().next_deadline();
        if let Some(next) = next {
            if self.timer_armed.get().is_none_or(|armed| next < armed) {
                self.timer_wake.notify_one();
            }
        }
    }

    /// Routes an AMQP connection's deliveries and cancellations to it while it is open.
    pub fn route_amqp(&self, conn: ConnId, connection: Rc<super::amqp::AmqpShared>) {
        self.routes
            .borrow_mut()
            .insert(conn, Route::Amqp(connection));
    }

    /// Forgets a connection's route (its conversation ended, or its GET was answered).
    pub fn forget_route(&self, conn: ConnId) {
        self.routes.borrow_mut().remove(&conn);
    }

    /// The AMQP connection `conn` routes to, if it is one.
    fn amqp_route(&self, conn: ConnId) -> Option<Rc<super::amqp::AmqpShared>> {
        match self.routes.borrow().get(&conn) {
            Some(Route::Amqp(a)) => Some(a.clone()),
            _ => None,
        }
    }

    /// Starts handling one request: its reply is sent at once unless an engine call for
    /// it logs records that the reply must wait for.
    pub fn begin_request(&self) {
        self.reply_hold.set(ReplyHold::Now);
        self.catalogue_hold.set(None);
    }

    /// Sends the current request's reply: at once, held until the definitions it changed
    /// and its log records are durable, or as a failure when they could not be written.
    pub fn send(
        &self,
        socket: &Rc<SocketShared>,
        conversation: u32,
        request_id: u32,
        reply: &Reply,
    ) {
        let hold = self.reply_hold.replace(ReplyHold::Now);
        if let Some(ticket) = self.catalogue_hold.take() {
            match self.catalogue.outcome(ticket) {
                Outcome::Durable => {}
                Outcome::Failed => {
                    let failed = definitions_not_saved(reply);
                    return self.send_with(hold, socket, conversation, request_id, &failed);
                }
                Outcome::Pending => {
                    let mut waiters = self.catalogue_waiters.borrow_mut();
                    // Released front to back: tickets only grow.
                    debug_assert!(waiters.back().is_none_or(|w| w.ticket <= ticket));
                    waiters.push_back(CatalogueWaiter {
                        ticket,
                        socket: socket.clone(),
                        conversation,
                        request_id,
                        reply: reply.clone(),
                        hold,
                    });
                    return;
                }
            }
        }
        self.send_with(hold, socket, conversation, request_id, reply);
    }

    /// Sends a reply as `hold` says.
    fn send_with(
        &self,
        hold: ReplyHold,
        socket: &Rc<SocketShared>,
        conversation: u32,
        request_id: u32,
        reply: &Reply,
    ) {
        match hold {
            ReplyHold::Now => socket.send_reply(conversation, request_id, reply),
            ReplyHold::Until(lsn) => self.hold(socket, lsn, conversation, request_id, reply),
            ReplyHold::Fail => {
                socket.send_reply(conversation, request_id, &resource_problem(reply.verb()))
            }
        }
    }

    /// How the output of the engine call just made must wait for the log (and resets
    /// it): used by protocol adapters that answer outside `send` (AMQP dispositions).
    pub(crate) fn take_reply_hold(&self) -> ReplyHold {
        self.reply_hold.replace(ReplyHold::Now)
    }

    fn hold(
        &self,
        socket: &Rc<SocketShared>,
        lsn: u64,
        conversation: u32,
        request_id: u32,
        reply: &Reply,
    ) {
        let Some(log) = self.log.as_ref() else {
            socket.send_reply(conversation, request_id, reply);
            return;
        };
        match log.hold(lsn) {
            Hold::Now => socket.send_reply(conversation, request_id, reply),
            Hold::Fail => {
                socket.send_reply(conversation, request_id, &resource_problem(reply.verb()))
            }
            Hold::Until(lsn) => {
                if socket.hold_reply(lsn, conversation, request_id, reply) {
                    // The decisions release it at the first flush they hear of that
                    // passes `lsn`: none has yet (they said to hold).
                    log.note_held(socket.clone());
                }
            }
        }
    }

    /// Appends the last engine call's log records, delivers completed gets (held when
    /// they depend on those records) and saves changed definitions.
    pub fn perform_effects(&self) {
        let mut catalogue_changes: Vec<CatalogueChange> = Vec::new();
        let mut fx = self.effects.borrow_mut();
        // None: no records (the non-persistent path: nothing else happens).
        let mut logged: Option<Result<u64, ()>> = None;
        if !fx.log_records().is_empty() {
            let needs_durable = fx.reply_needs_durable();
            let r = match self.log.as_ref() {
                Some(log) => log.append_records(fx.drain_log()).map(|l| l.0),
                None => {
                    fx.drain_log();
                    Ok(0)
                }
            };
            // A call whose records could not be logged fails 2102 even when its reply
            // would not wait (a put under syncpoint): its later MQCMIT must not be
            // acknowledged as if the put were logged.
            let next = match (self.reply_hold.get(), r) {
                (ReplyHold::Fail, _) | (_, Err(())) => ReplyHold::Fail,
                (ReplyHold::Until(a), Ok(b)) if needs_durable => ReplyHold::Until(a.max(b)),
                (ReplyHold::Now, Ok(b)) if needs_durable => ReplyHold::Until(b),
                (keep, Ok(_)) => keep,
            };
            self.reply_hold.set(next);
            logged = Some(r);
        }
        for effect in fx.drain() {
            match effect {
                Effect::GetCompleted {
                    conn,
                    result,
                    needs_durable,
                    ..
                } => {
                    let route = {
                        let mut routes = self.routes.borrow_mut();
                        match routes.remove(&conn) {
                            Some(Route::WaitingGet(route)) => route,
                            // An AMQP connection makes no GET that waits (its consumers are
                            // fed deliveries): it stays routed.
                            Some(other) => {
                                routes.insert(conn, other);
                                continue;
                            }
                            None => continue,
                        }
                    };
                    let reply = get_reply(result);
                    match (needs_durable, logged) {
                        (true, Some(Ok(lsn))) => self.hold(
                            &route.socket,
                            lsn,
                            route.conversation,
                            route.request_id,
                            &reply,
                        ),
                        (true, Some(Err(()))) => route.socket.send_reply(
                            route.conversation,
                            route.request_id,
                            &resource_problem(ferry_wire::Verb::Get),
                        ),
                        _ => route
                            .socket
                            .send_reply(route.conversation, route.request_id, &reply),
                    }
                }
                Effect::CatalogueChanged(change) => catalogue_changes.push(change),
                // Async consumers belong to AMQP connections (no native call makes one).
                Effect::Delivered {
                    conn,
                    consumer,
                    delivery,
                    message,
                    needs_durable,
                } => {
                    let hold = match (needs_durable, logged) {
                        (true, Some(Ok(lsn))) => ReplyHold::Until(lsn),
                        (true, Some(Err(()))) => ReplyHold::Fail,
                        _ => ReplyHold::Now,
                    };
                    if let Some(a) = self.amqp_route(conn) {
                        a.deliver(self, consumer, delivery, message, hold);
                    }
                }
                Effect::ConsumerCancelled {
                    conn,
                    consumer,
                    reason,
                } => {
                    if let Some(a) = self.amqp_route(conn) {
                        a.consumer_cancelled(consumer, reason);
                    }
                }
            }
        }
        drop(fx);
        if !catalogue_changes.is_empty() {
            self.save_definitions(catalogue_changes);
        }
        if let Some(log) = self.log.as_ref() {
            // Between engine calls: a checkpoint the appended records made due, a
            // spill; whatever needs the engine while it is in use waits for the next.
            let spill = self.engine.try_borrow().is_ok_and(|e| e.spill_wanted());
            if spill {
                log.spill_wanted(self);
            } else if logged.is_some() {
                log.perform(self);
            }
            log.report_read_failures(&self.error_log);
        }
    }

    /// Whether a call that would log `usage` can run now, after `checkpoints` waits for
    /// a checkpoint. Called before the engine runs the call, so nothing changes in memory
    /// that the log could not record. A full log starts a checkpoint (a checkpoint frees
    /// the space before its image once its queue files are synced and its record is
    /// durable): the call waits for it, up to `Policy::log_full_checkpoints` times (ferry-durability). Refused, the
    /// log full is reported (FRY7463W) and a long unit of work pinning the log backed out;
    /// a failed log (FRY7466E) refuses at once, as no checkpoint can come.
    pub(crate) fn log_room(&self, usage: LogUse, checkpoints: u64) -> LogRoom {
        let Some(log) = self.log.as_ref() else {
            return LogRoom::Ready;
        };
        match log.room(self, usage, checkpoints) {
            Room::Ready => LogRoom::Ready,
            Room::Wait => LogRoom::Wait,
            Room::Refused | Room::CheckpointFirst => LogRoom::Refused,
        }
    }

    /// Gives up on a call that waited too long for log space: the log full is reported
    /// (FRY7463W) and a long unit of work pinning the log backed out.
    pub(crate) fn refuse_log_room(&self, usage: LogUse) {
        if let Some(log) = self.log.as_ref() {
            log.give_up_waiting(self, usage);
        }
    }

    /// Whether a call that first found the log full at `since` has waited long enough to
    /// be refused.
    pub(crate) fn waited_too_long_for_log_room(&self, since: Instant) -> bool {
        self.log
            .as_ref()
            .is_none_or(|log| log.waited_too_long(since))
    }

    /// Checkpoints completed since the start: a call waiting for log space counts the
    /// checkpoints it has waited for from it.
    pub(crate) fn checkpoints_completed(&self) -> u64 {
        self.log
            .as_ref()
            .map_or(0, RecoveryLog::checkpoints_completed)
    }

    /// Whether a put waits for log space already (MQI or AMQP): a new put waits behind
    /// it, first come, first served, rather than take the space a checkpoint frees.
    pub(crate) fn has_put_waiters(&self) -> bool {
        !self.amqp_log_waiters.borrow().is_empty()
            || self
                .log_room_waiters
                .borrow()
                .iter()
                .any(|w| matches!(w.usage, LogUse::Put(_)))
    }

    /// An AMQP connection whose transfer no longer waits for log space (it ran, or was
    /// refused): new puts need not wait behind it.
    pub(crate) fn stop_waiting_log_room_amqp(&self, connection: &Rc<super::amqp::AmqpShared>) {
        let mut waiting = self.amqp_log_waiters.borrow_mut();
        if !waiting.is_empty() {
            waiting.retain(|w| !Rc::ptr_eq(w, connection));
        }
    }

    /// An AMQP connection whose transfer waits for log space: woken by
    /// [`Server::retry_log_room_waiters`] to try again.
    pub(crate) fn wait_log_room_amqp(&self, connection: &Rc<super::amqp::AmqpShared>) {
        let mut waiting = self.amqp_log_waiters.borrow_mut();
        if !waiting.iter().any(|w| Rc::ptr_eq(w, connection)) {
            waiting.push(connection.clone());
        }
    }

    /// Sets a request aside until a checkpoint frees log space ([`LogRoom::Wait`]); it is
    /// handled again by [`Server::retry_log_room_waiters`].
    pub(crate) fn park_for_log_room(&self, waiter: LogRoomWaiter) {
        self.log_room_waiters.borrow_mut().push_back(waiter);
    }

    /// Drops the request of this conversation that waits for log space (its MQDISC came:
    /// the call is never made).
    pub(crate) fn forget_log_room_waiter(&self, socket: &Rc<SocketShared>, conversation: u32) {
        self.log_room_waiters
            .borrow_mut()
            .retain(|w| !(w.frame.conversation == conversation && Rc::ptr_eq(&w.socket, socket)));
    }

    /// Whether a request of this conversation waits for log space (a conversation has
    /// one call at a time: another is answered 2219 MQRC_CALL_IN_PROGRESS).
    pub(crate) fn waits_for_log_room(&self, socket: &Rc<SocketShared>, conversation: u32) -> bool {
        self.log_room_waiters
            .borrow()
            .iter()
            .any(|w| w.frame.conversation == conversation && Rc::ptr_eq(&w.socket, socket))
    }

    /// Handles again the requests waiting for log space, oldest first (after a flush, a
    /// checkpoint's end, and once a second): each runs if there is room now, waits on
    /// otherwise, and gets 2102 once it has waited `Policy::log_full_patience`. AMQP
    /// connections with a transfer waiting are woken to do the same.
    pub fn retry_log_room_waiters(self: &Rc<Self>) {
        if self.log.is_none() {
            return;
        }
        if !self.amqp_log_waiters.borrow().is_empty() {
            let waiting = std::mem::take(&mut *self.amqp_log_waiters.borrow_mut());
            for connection in waiting {
                connection.wake_for_log_room();
            }
        }
        if self.log_room_waiters.borrow().is_empty() {
            return;
        }
        let waiters = std::mem::take(&mut *self.log_room_waiters.borrow_mut());
        for w in waiters {
            if w.socket.is_closing() {
                // Nobody to answer: a call whose reply cannot arrive is not made.
                continue;
            }
            if self.waited_too_long_for_log_room(w.since)
                && self.log_room(w.usage, u64::MAX) != LogRoom::Ready
            {
                super::dispatch::refuse_frame(
                    self,
                    &w.socket,
                    &w.frame,
                    ReasonCode::ResourceProblem,
                );
                continue;
            }
            super::dispatch::handle_waiting_frame(self, w);
        }
    }

    /// The log is full: when the oldest unit of work in flight holds a large part of it
    /// (every checkpoint must carry its records, so only ending it frees them), it is
    /// backed out, as MQ does rather than run out of log (FRY7471W; its application's
    /// next MQCMIT gets 2003 MQRC_BACKED_OUT), and a checkpoint frees the space.
    pub(crate) fn back_out_long_unit_of_work(&self, log: &RecoveryLog) {
        let oldest = self.engine.borrow().oldest_logged_unit_of_work();
        let Some((conn, bytes)) = oldest else {
            return;
        };
        if !log.policy().is_long_unit_of_work(bytes) {
            return;
        }
        if self.with_engine(|e, now, fx| e.back_out_for_log_space(conn, now, fx)) {
            self.error_log.borrow_mut().write(
                &messages::UOW_BACKED_OUT_FOR_LOG_SPACE,
                &[&self.name, &conn.0, &bytes],
            );
            self.checkpoint();
        }
    }

    /// Asks for a checkpoint (between engine calls): started unless one is under way; a
    /// failure is in the error log and the next trigger retries.
    pub fn checkpoint(&self) {
        if let Some(log) = self.log.as_ref() {
            log.request_checkpoint(self);
        }
    }

    /// Hands the changed definitions, as they now are, to the definitions writer: the
    /// current request's reply waits for them (see [`Server::send`]). Costs the size of
    /// the change, never of the catalogue.
    fn save_definitions(&self, changes: Vec<CatalogueChange>) {
        let records: Vec<JournalRecord> = {
            let engine = self.engine.borrow();
            changes
                .into_iter()
                .map(|c| journal_record(&engine, c))
                .collect()
        };
        let ticket = self.catalogue.submit(records);
        self.catalogue_hold.set(Some(ticket));
    }

    /// Sends the replies whose definitions are now durable (or failed), in order, and
    /// reports a failed write.
    fn release_catalogue_waiters(&self) {
        if let Some(why) = self.catalogue.take_error() {
            self.error_log
                .borrow_mut()
                .write(&messages::OBJECTS_SAVE_FAILED, &[&why]);
        }
        loop {
            let w = {
                let mut waiters = self.catalogue_waiters.borrow_mut();
                let Some(front) = waiters.front() else {
                    return;
                };
                let outcome = self.catalogue.outcome(front.ticket);
                if outcome == Outcome::Pending {
                    return;
                }
                waiters.pop_front().map(|w| (w, outcome))
            };
            let Some((w, outcome)) = w else {
                return;
            };
            let reply = match outcome {
                Outcome::Failed => definitions_not_saved(&w.reply),
                _ => w.reply,
            };
            // A log position it waits for that became durable meanwhile sends it at once
            // (`Server::hold` asks the durability decisions).
            self.send_with(w.hold, &w.socket, w.conversation, w.request_id, &reply);
        }
    }

    /// Writes run/status.json for `ferry status` and `ferry start`.
    pub fn publish_status(&self) {
        let status = RunStatus {
            pid: std::process::id(),
            state: self.state.get(),
            started_ms: self.started_ms,
            listeners: self.endpoints.listeners().published(),
            bindings: self.paths.bindings_socket().display().to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            connections: self.conversations.get(),
            log: self.log.as_ref().map(RecoveryLog::summary),
            amqp_ports: self.endpoints.channel_ports(),
            sockets: Some(SocketSummary {
                open: self.admission.open(),
                max: self.admission.max(),
                refused: self.admission.refused(),
            }),
            start_failures: self.start_failures.borrow().clone(),
        };
        if let Err(e) = status.publish(&self.paths) {
            tracing::warn!("cannot write {}: {e}", self.paths.status_file().display());
        }
    }

    /// Registers a socket for an immediate stop.
    pub fn register_socket(&self, s: &Rc<SocketShared>) {
        let mut sockets = self.sockets.borrow_mut();
        sockets.retain(|w| w.strong_count() > 0);
        sockets.push(Rc::downgrade(s));
    }

    /// Encodes `reply` for a conversation directly (used by the dispatcher).
    pub fn encode(out: &mut bytes::BytesMut, conversation: u32, request_id: u32, reply: &Reply) {
        if let Err(e) = encode_reply(conversation, request_id, reply, out) {
            tracing::error!("cannot encode reply: {e}");
        }
    }
}

/// What the definitions writer records for `change`: the definition as it now is, or
/// its deletion (a name the engine no longer has, or a temporary dynamic queue, which is
/// never saved).
fn journal_record(engine: &QueueManager, change: CatalogueChange) -> JournalRecord {
    match change {
        CatalogueChange::Queue(name) => match engine.queue(&name) {
            Some(q) if !is_temporary(&q) => JournalRecord::Queue(q),
            _ => JournalRecord::DeleteQueue(name),
        },
        CatalogueChange::Channel(name) => match engine.channel(&name) {
            Some(c) => JournalRecord::Channel(c),
            None => JournalRecord::DeleteChannel(name),
        },
        CatalogueChange::Listener(name) => match engine.listener(&name) {
            Some(l) => JournalRecord::Listener(l),
            None => JournalRecord::DeleteListener(name),
        },
        CatalogueChange::Qmgr => JournalRecord::Qmgr(engine.qmgr()),
    }
}

fn is_temporary(q: &ferry_objects::QueueDefinition) -> bool {
    q.queue_type == ferry_objects::QueueType::Local
        && q.attributes.definition_type == ferry_objects::queue::DefinitionType::TemporaryDynamic
}

/// `reply` for a request whose definition change could not be written: MQSC output gets
/// the failure line (FRY8101S with 2102) and counts as failed; any other call fails
/// with 2102 MQRC_RESOURCE_PROBLEM.
fn definitions_not_saved(reply: &Reply) -> Reply {
    match reply {
        Reply::Mqsc { status, output } => {
            let mut output = output.clone();
            output.failed = true;
            output.lines.extend(
                ferry_mqsc::executor::admin_failure(
                    ferry_objects::AdminError::Failed {
                        reason: ReasonCode::ResourceProblem,
                        text: "the change is in effect but could not be saved to disk (see the error log, FRY7075E)".into(),
                    },
                    false,
                )
                .lines,
            );
            Reply::Mqsc {
                status: *status,
                output,
            }
        }
        other => resource_problem(other.verb()),
    }
}

/// Releases the replies waiting for definitions, once per write of the definitions
/// writer, for as long as the queue manager runs.
pub async fn catalogue_task(server: Rc<Server>) {
    let wake = server.catalogue.wake();
    loop {
        wake.notified().await;
        server.release_catalogue_waiters();
    }
}

/// At shutdown: waits (at most 5 s) for every definition change to be written and sends
/// the replies that waited for them.
pub async fn settle_catalogue(server: &Rc<Server>) {
    let last = server.catalogue.last_ticket();
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.catalogue.outcome(last) == Outcome::Pending && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    server.release_catalogue_waiters();
}

/// The failure reply of `verb` with 2102 MQRC_RESOURCE_PROBLEM.
fn resource_problem(verb: ferry_wire::Verb) -> Reply {
    Reply::failure(verb, Status::from_reason(ReasonCode::ResourceProblem))
        .unwrap_or(Reply::Heartbeat)
}

/// The wire reply of a finished GET: the message, 2079 with truncated data, or a failure
/// (2080 carries the descriptor, the part that fits and the real length, as MQ does).
pub fn get_reply(result: GetResult) -> Reply {
    let (status, got) = match result {
        Ok(got) => (
            got.warning.map_or(Status::OK, Status::from_reason),
            Some(got),
        ),
        Err(e) => (Status::from(e.error), e.truncated.map(|b| *b)),
    };
    match got {
        Some(got) => Reply::Get {
            status,
            md: got.md,
            data_length: u32::try_from(got.data_length).unwrap_or(u32::MAX),
            body: got.data,
        },
        None => Reply::failure(ferry_wire::Verb::Get, status).unwrap_or(Reply::Heartbeat),
    }
}
