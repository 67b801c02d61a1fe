//! The running queue manager's shared state, owned by the one runtime thread.
//!
//! All connections, listeners and timers run as tasks on one thread (a tokio
//! current-thread runtime with a `LocalSet`), so the engine is reached through a
//! `RefCell`, never a lock, and a put that completes another connection's waiting get
//! only appends to that connection's output buffer and wakes its writer task: no
//! cross-thread wake-up per message. On this machine's two cores that is the fastest
//! arrangement (see docs/architecture.md); the client load uses the other core.
//!
//! The server knows no protocol: connections of every kind reach it through
//! [`Connection`] (one map of routes, one queue of calls waiting for log room). With the
//! recovery log ([`RecoveryLog`]), `perform_effects` appends each call's log records
//! right after the call and returns how its reply must wait ([`ReplyWait`]); the
//! connection holds the reply and the log driver releases it by one wake-up per flush.
//!
//! A call that changed a definition hands the new definition to the definitions writer
//! thread ([`CatalogueWriter`]); its reply waits aside until the writer says the change
//! is durable ([`catalogue_task`]), so the runtime thread never waits for that disk
//! either, and other connections carry on.

use super::admission::{Admission, Budget};
use super::clock;
use super::endpoints::Endpoints;
use super::log_driver::DurableHold;
use super::log_driver::{LogUse, RecoveryLog};
use super::memory::MemoryTrim;
use super::reply_wait::{ReplyHold, ReplyWait};
use crate::catalogue_store::{CatalogueWriter, JournalRecord, Outcome};
use crate::error_log::ErrorLog;
use crate::home::QmgrPaths;
use crate::lifecycle::{QmgrState, RunStatus, SocketSummary};
use crate::messages;
use crate::qm_ini::QmIni;
use ferry_durability::{Hold, Room};
use ferry_engine::{
    CatalogueChange, ConnId, ConsumerId, DeliveryToken, Effect, Effects, GetResult, GotMessage,
    QueueManager, Timestamp,
};
use ferry_mqi::ReasonCode;
use foldhash::{HashMap, HashMapExt};
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::{Rc, Weak};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

/// What the server knows of a connection, whatever its protocol: a native conversation,
/// an AMQP connection, and the kinds still to come (a message channel agent, an IBM MQ
/// client conversation) all carry MQI work into the engine. The server keeps one map
/// from engine connection to `Connection` and one queue of calls waiting for log room;
/// it completes a waiting get, delivers to a consumer or retries a call through this
/// trait, and never names a protocol. Each protocol's module implements it and registers
/// its connections ([`Server::begin_conversation`]).
pub(crate) trait Connection {
    /// The engine answered a GET of `conn` that waited; the answer waits as `hold` says.
    fn get_completed(
        self: Rc<Self>,
        server: &Server,
        conn: ConnId,
        result: GetResult,
        hold: ReplyHold,
    );

    /// The engine gave consumer `consumer` of `conn` a message; it waits as `hold` says.
    fn message_delivered(
        self: Rc<Self>,
        server: &Server,
        conn: ConnId,
        consumer: ConsumerId,
        token: Option<DeliveryToken>,
        message: Box<GotMessage>,
        hold: ReplyHold,
    );

    /// The engine ended consumer `consumer` of `conn` (its queue went), with `reason`.
    fn consumer_ended(&self, conn: ConnId, consumer: ConsumerId, reason: ReasonCode);

    /// The log may have room now: the call of `call` (the connection's own tag, given
    /// to `Server::wait_for_log_room`) that waited for it is tried again, or refused
    /// once it has waited long enough.
    fn retry_log_room(self: Rc<Self>, server: &Rc<Server>, call: u32);

    /// True once the connection is going: a call it waits on is not made.
    fn is_closing(&self) -> bool;
}

/// Whether `a` and `b` are the same connection.
fn same_connection(a: &Rc<dyn Connection>, b: &dyn Connection) -> bool {
    std::ptr::addr_eq(Rc::as_ptr(a), b as *const dyn Connection)
}

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

/// A call waiting for log space, on the queue manager's thread but without blocking it
/// (other connections, non-persistent work above all, carry on). The connection keeps
/// the call itself; the server keeps the order.
struct LogRoomWaiter {
    /// Whose call it is.
    connection: Rc<dyn Connection>,
    /// The connection's tag for the call (a native conversation id).
    call: u32,
    /// What it will log.
    usage: LogUse,
}

/// What runs once definitions are saved: given whether they were.
type AfterDefinitions = Box<dyn FnOnce(&Server, bool)>;

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
    /// Where what the engine completes for a connection goes: one map, from engine
    /// connection to the connection that carries it, for every protocol, while it is
    /// connected.
    routes: RefCell<HashMap<ConnId, Rc<dyn Connection>>>,
    /// The error log.
    pub error_log: RefCell<ErrorLog>,
    /// The listeners and channels of every protocol (START/STOP, status, start and end).
    pub endpoints: Endpoints,
    /// Lifecycle state.
    pub state: Cell<QmgrState>,
    /// Every TCP socket accepted and not yet closed, for Limits/MaxConnections.
    pub admission: Rc<Admission>,
    /// Large buffers let go of since memory was last handed back to the system.
    pub memory: Rc<MemoryTrim>,
    /// Open conversations (connections), for status and controlled stop.
    pub conversations: Cell<u64>,
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
    /// Calls waiting for log space, oldest first, whatever their protocol.
    log_room_waiters: RefCell<VecDeque<LogRoomWaiter>>,
    /// The definitions writer (objects.journal, objects.json).
    pub catalogue: CatalogueWriter,
    /// TLS: the key repository and the configurations made from it (replaced by
    /// REFRESH SECURITY TYPE(SSL); a handshake keeps the one it started with).
    pub tls: RefCell<Rc<ferry_tls::ServerTls>>,
    /// Who administers the queue manager (CHLAUTH's `*MQADMIN`).
    pub administrators: Rc<crate::administrators::Administrators>,
    /// Users' groups for object authorities (installed in the engine when qm.ini names
    /// the AuthorizationService).
    pub principals: Rc<crate::principals::Principals>,
    /// Connection authentication: the AUTHINFO object in use and the user repository.
    pub(crate) connauth: RefCell<crate::authentication::ConnAuth>,
    /// CPU times at the last Prometheus scrape (its CPU percentages cover the time
    /// since: `super::monitoring`).
    pub(crate) scrape_cpu: Cell<ferry_monitoring::table::CpuTimes>,
    /// RESET QMGR TYPE(STATISTICS) asked to end the statistics interval now
    /// (`super::statistics_messages` writes at its next tick).
    pub(crate) statistics_reset: Cell<bool>,
    /// Tracing: OpenTelemetry spans of message operations (off unless configured).
    pub(crate) telemetry: super::telemetry::Telemetry,
    /// What waits for definitions to be durable, in ticket order.
    catalogue_waiters: RefCell<VecDeque<(u64, AfterDefinitions)>>,
    /// The runtime thread's scheduling policy, following the running message channels.
    pub(crate) scheduling: super::scheduling::ThreadScheduling,
}

impl Server {
    /// A server around an engine restored from disk, with TLS over the key repository as
    /// it is at start (FRY9660E when a file in it cannot be used).
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
        let mut error_log = error_log;
        let key_repository = engine.qmgr().key_repository_dir(&paths.dir);
        let (tls, loaded) = ferry_tls::ServerTls::load(&key_repository);
        // qm.ini's SSL stanza was checked when it was read.
        let tls = tls.with_policy(ini.ssl.policy().unwrap_or_default());
        if let Err(why) = loaded {
            error_log.write(
                &messages::KEY_REPOSITORY_ERROR,
                &[&key_repository.display(), &why],
            );
        }
        let administrators = Rc::new(crate::administrators::Administrators::of_queue_manager(
            &paths.dir,
        ));
        let (connauth, problems) = crate::authentication::ConnAuth::load(&engine, &paths.dir);
        let principals = Rc::new(crate::principals::Principals::new(
            administrators.clone(),
            connauth.users.clone(),
        ));
        principals.use_directory(connauth.group_directory().is_some());
        let mut engine = engine;
        if ini.service.checks_authority() {
            engine.set_principal_directory(Some(principals.clone()));
        } else {
            error_log.write(&messages::AUTHORITY_CHECKS_OFF, &[&paths.name]);
        }
        for (message, args) in &problems {
            let inserts: Vec<&dyn std::fmt::Display> =
                args.iter().map(|a| a as &dyn std::fmt::Display).collect();
            error_log.write(message, &inserts);
        }
        let ini_scheduling = ini.tuning.runtime_scheduling.clone();
        let telemetry =
            super::telemetry::Telemetry::start(&ini.tracing, &paths.name, &mut error_log);
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
            admission,
            memory: Rc::new(MemoryTrim::default()),
            conversations: Cell::new(0),
            timer_wake: Notify::new(),
            timer_armed: Cell::new(None),
            lifecycle_wake: Notify::new(),
            started_ms: clock::now().0,
            start_failures: RefCell::new(Vec::new()),
            batch_now: Cell::new(None),
            log,
            log_room_waiters: RefCell::new(VecDeque::new()),
            catalogue,
            catalogue_waiters: RefCell::new(VecDeque::new()),
            scheduling: super::scheduling::ThreadScheduling::new(
                super::scheduling::RuntimeScheduling::from_ini(&ini_scheduling),
            ),
            tls: RefCell::new(Rc::new(tls)),
            administrators,
            principals,
            connauth: RefCell::new(connauth),
            scrape_cpu: Cell::new(Default::default()),
            statistics_reset: Cell::new(false),
            telemetry,
        })
    }

    /// Runs `f` against the engine with the shared effects buffer, performs the effects,
    /// adds what a reply depending on the call must wait for to `wait` (a reply may depend
    /// on several calls), and returns `f`'s result. `wait` is an out parameter rather than
    /// part of a returned tuple so that large results (a got message) are not moved again
    /// on the message path.
    #[inline]
    pub(crate) fn call<T>(
        &self,
        wait: &mut ReplyWait,
        f: impl FnOnce(&mut QueueManager, Timestamp, &mut Effects) -> T,
    ) -> T {
        let now = self.batch_now.get().unwrap_or_else(clock::now);
        let out = {
            let mut engine = self.engine.borrow_mut();
            let mut fx = self.effects.borrow_mut();
            f(&mut engine, now, &mut fx)
        };
        let this = self.perform_effects();
        if this != ReplyWait::default() {
            *wait = wait.and(this);
        }
        out
    }

    /// [`Server::call`] for a call no reply waits on (settlements, drains, timers, the
    /// queue manager's own work).
    #[inline]
    pub fn with_engine<T>(
        &self,
        f: impl FnOnce(&mut QueueManager, Timestamp, &mut Effects) -> T,
    ) -> T {
        let mut unused = ReplyWait::default();
        self.call(&mut unused, f)
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

    /// Engine connection `conn` (just connected) is carried by `connection`: what the
    /// engine completes for it (waiting gets, deliveries, cancellations) goes there until
    /// [`Server::end_conversation`], and it counts as an open conversation.
    pub(crate) fn begin_conversation(&self, conn: ConnId, connection: Rc<dyn Connection>) {
        let old = self.routes.borrow_mut().insert(conn, connection);
        debug_assert!(old.is_none(), "{conn:?} routed twice");
        self.conversations.set(self.conversations.get() + 1);
    }

    /// The connection `conn` is routed to.
    fn connection(&self, conn: ConnId) -> Option<Rc<dyn Connection>> {
        self.routes.borrow().get(&conn).cloned()
    }

    /// A GET now waits in the engine: the wait-expiry timer is re-armed when its deadline
    /// comes before the one the timer sleeps until.
    pub(crate) fn get_waits(&self) {
        let next = self.engine.borrow().next_deadline();
        if let Some(next) = next {
            self.deadline_at(next);
        }
    }

    /// The engine waits for `at` (a get's wait interval, a redelivery delay): the timer
    /// is woken to re-arm when it sleeps until later, or not at all.
    fn deadline_at(&self, at: Timestamp) {
        if self.timer_armed.get().is_none_or(|armed| at < armed) {
            self.timer_wake.notify_one();
        }
    }

    /// Ends engine connection `conn`: `normal` commits its unit of work, otherwise it is
    /// backed out (a broken connection). Returns what a reply saying so waits for.
    pub(crate) fn end_conversation(&self, conn: ConnId, normal: bool) -> ReplyWait {
        let routed = self.routes.borrow_mut().remove(&conn);
        debug_assert!(routed.is_some(), "{conn:?} ends without having begun");
        let mut wait = ReplyWait::default();
        self.call(&mut wait, |e, now, fx| e.disconnect(conn, normal, now, fx));
        let open = self.conversations.get();
        debug_assert!(open > 0, "a conversation ends that never began");
        self.conversations.set(open.saturating_sub(1));
        self.lifecycle_wake.notify_one();
        wait
    }

    /// Whether output held until `lsn` must wait: the durability decisions say (and
    /// hear of the position). Without a recovery log, nothing waits.
    pub(crate) fn log_hold(&self, lsn: u64) -> Hold {
        self.log.as_ref().map_or(Hold::Now, |log| log.hold(lsn))
    }

    /// Registers a connection that holds output for the log: released or failed by log
    /// position ([`DurableHold`]).
    pub(crate) fn note_held(&self, holder: Rc<dyn DurableHold>) {
        if let Some(log) = self.log.as_ref() {
            log.note_held(holder);
        }
    }

    /// Runs `then` once the definitions change of `ticket` is saved (`true`) or failed
    /// to be (`false`): at once when the writer has decided, otherwise after it has, in
    /// ticket order.
    pub(crate) fn after_definitions(
        &self,
        ticket: u64,
        then: impl FnOnce(&Server, bool) + 'static,
    ) {
        match self.catalogue.outcome(ticket) {
            Outcome::Durable => then(self, true),
            Outcome::Failed => then(self, false),
            Outcome::Pending => {
                let mut waiters = self.catalogue_waiters.borrow_mut();
                // Released front to back: tickets only grow.
                debug_assert!(waiters.back().is_none_or(|(t, _)| *t <= ticket));
                waiters.push_back((ticket, Box::new(then)));
            }
        }
    }

    /// Appends the last engine call's log records, hands completed gets, deliveries and
    /// cancellations to their connections (held when they depend on those records),
    /// saves changed definitions, and returns what the call's own reply waits for.
    pub fn perform_effects(&self) -> ReplyWait {
        let mut catalogue_changes: Vec<CatalogueChange> = Vec::new();
        let mut wait = ReplyWait::default();
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
            wait.log = match r {
                Err(()) => ReplyHold::Fail,
                Ok(lsn) if needs_durable => ReplyHold::Until(lsn),
                Ok(_) => ReplyHold::Now,
            };
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
                    if let Some(c) = self.connection(conn) {
                        c.get_completed(self, conn, result, hold_of(needs_durable, logged));
                    }
                }
                Effect::CatalogueChanged(change) => catalogue_changes.push(change),
                Effect::NotAuthorized {
                    user,
                    object_type,
                    object,
                    missing,
                } => {
                    let missing = missing.mqsc_names().join(",");
                    self.error_log.borrow_mut().write(
                        &messages::NOT_AUTHORIZED_OBJECT,
                        &[&user, &object, &object_type, &missing],
                    );
                }
                Effect::BackoutRequeueFailed { queue, reason } => {
                    self.error_log
                        .borrow_mut()
                        .write(&messages::BACKOUT_REQUEUE_FAILED, &[&queue, &reason]);
                }
                Effect::ReportDiscarded {
                    reply_to_q,
                    reply_to_qmgr,
                    feedback,
                    reason,
                } => {
                    self.error_log.borrow_mut().write(
                        &messages::REPORT_DISCARDED,
                        &[&reply_to_q, &reply_to_qmgr, &feedback, &reason],
                    );
                }
                Effect::TriggerMessageDiscarded {
                    queue,
                    initiation_q,
                    reason,
                } => {
                    self.error_log.borrow_mut().write(
                        &messages::TRIGGER_MESSAGE_DISCARDED,
                        &[&queue, &initiation_q, &reason],
                    );
                }
                Effect::Delivered {
                    conn,
                    consumer,
                    delivery,
                    message,
                    needs_durable,
                } => {
                    if let Some(c) = self.connection(conn) {
                        let hold = hold_of(needs_durable, logged);
                        c.message_delivered(self, conn, consumer, delivery, message, hold);
                    }
                }
                Effect::ConsumerCancelled {
                    conn,
                    consumer,
                    reason,
                } => {
                    if let Some(c) = self.connection(conn) {
                        c.consumer_ended(conn, consumer, reason);
                    }
                }
                Effect::RedeliveryScheduled { at } => self.deadline_at(at),
            }
        }
        drop(fx);
        if !catalogue_changes.is_empty() {
            wait.definitions = Some(self.save_definitions(catalogue_changes));
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
        wait
    }

    /// Whether a call that would log `usage` can run now, after `checkpoints` waits for
    /// a checkpoint. Called before the engine runs the call, so nothing changes in memory
    /// that the log could not record. A full log starts a checkpoint (a checkpoint frees
    /// the space before its image once its queue files are synced and its record is
    /// durable): the call waits for it, up to `Policy::log_full_checkpoints` times
    /// (ferry-durability). Refused, the log full is reported (FRY7463W) and a long unit
    /// of work pinning the log backed out; a failed log (FRY7466E) refuses at once, as no
    /// checkpoint can come.
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

    /// Whether a put waits for log space already (any protocol): a new put waits behind
    /// it, first come, first served, rather than take the space a checkpoint frees.
    pub(crate) fn has_put_waiters(&self) -> bool {
        self.log_room_waiters
            .borrow()
            .iter()
            .any(|w| matches!(w.usage, LogUse::Put(_)))
    }

    /// Call `call` of `connection` waits for log space ([`LogRoom::Wait`]): the
    /// connection keeps it and is asked to try it again
    /// ([`Connection::retry_log_room`]) after a flush, a checkpoint's end, and once a
    /// second, in the order calls began to wait.
    pub(crate) fn wait_for_log_room(
        &self,
        connection: Rc<dyn Connection>,
        call: u32,
        usage: LogUse,
    ) {
        let mut waiters = self.log_room_waiters.borrow_mut();
        if !waiters
            .iter()
            .any(|w| w.call == call && same_connection(&w.connection, &*connection))
        {
            waiters.push_back(LogRoomWaiter {
                connection,
                call,
                usage,
            });
        }
    }

    /// Call `call` of `connection` no longer waits for log space (it ran, was refused,
    /// or its connection dropped it).
    pub(crate) fn stop_waiting_for_log_room(&self, connection: &dyn Connection, call: u32) {
        let mut waiters = self.log_room_waiters.borrow_mut();
        if !waiters.is_empty() {
            waiters.retain(|w| !(w.call == call && same_connection(&w.connection, connection)));
        }
    }

    /// Asks every connection with a call waiting for log space to try it again, oldest
    /// first (after a flush, a checkpoint's end, and once a second): each runs if there
    /// is room now, waits on otherwise (it waits again, in the same order), and is
    /// refused once it has waited `Policy::log_full_patience`.
    pub fn retry_log_room_waiters(self: &Rc<Self>) {
        if self.log.is_none() || self.log_room_waiters.borrow().is_empty() {
            return;
        }
        let waiters = std::mem::take(&mut *self.log_room_waiters.borrow_mut());
        for w in waiters {
            if w.connection.is_closing() {
                // Nobody to answer: a call whose reply cannot arrive is not made.
                continue;
            }
            w.connection.retry_log_room(self, w.call);
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

    /// Hands the changed definitions, as they now are, to the definitions writer and
    /// returns its ticket, which the call's reply waits for ([`ReplyWait::definitions`],
    /// [`Server::after_definitions`]). Costs the size of the change, never of the catalogue.
    fn save_definitions(&self, changes: Vec<CatalogueChange>) -> u64 {
        let records: Vec<JournalRecord> = {
            let engine = self.engine.borrow();
            changes
                .into_iter()
                .map(|c| journal_record(&engine, c))
                .collect()
        };
        self.catalogue.submit(records)
    }

    /// Runs what waited for definitions now durable (or failed), in order, and reports a
    /// failed write.
    fn release_catalogue_waiters(&self) {
        if let Some(why) = self.catalogue.take_error() {
            self.error_log
                .borrow_mut()
                .write(&messages::OBJECTS_SAVE_FAILED, &[&why]);
        }
        loop {
            let (then, saved) = {
                let mut waiters = self.catalogue_waiters.borrow_mut();
                let Some((ticket, _)) = waiters.front() else {
                    return;
                };
                let saved = match self.catalogue.outcome(*ticket) {
                    Outcome::Pending => return,
                    Outcome::Durable => true,
                    Outcome::Failed => false,
                };
                match waiters.pop_front() {
                    Some((_, then)) => (then, saved),
                    None => return,
                }
            };
            then(self, saved);
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
        CatalogueChange::AuthInfo(name) => match engine.authinfo(&name) {
            Some(a) => JournalRecord::AuthInfo(a),
            None => JournalRecord::DeleteAuthInfo(name),
        },
        CatalogueChange::Process(name) => match engine.process(&name) {
            Some(p) => JournalRecord::Process(p),
            None => JournalRecord::DeleteProcess(name),
        },
        CatalogueChange::Namelist(name) => match engine.namelist(&name) {
            Some(n) => JournalRecord::Namelist(n),
            None => JournalRecord::DeleteNamelist(name),
        },
        CatalogueChange::Topic(name) => match engine.topic(&name) {
            Some(t) => JournalRecord::Topic(t),
            None => JournalRecord::DeleteTopic(name),
        },
        CatalogueChange::Subscription(name) => match engine.durable_subscription(&name) {
            Some(d) => JournalRecord::Subscription(d),
            None => JournalRecord::DeleteSubscription(name),
        },
        CatalogueChange::AuthorityRecord(key) => JournalRecord::AuthorityRecord(
            ferry_security::oam::SavedAuthorityRecord::of(engine.authority_records(), &key),
        ),
        CatalogueChange::Chlauth(profile) => JournalRecord::Chlauth {
            records: engine.chlauth().profile(&profile),
            profile,
        },
    }
}

fn is_temporary(q: &ferry_objects::QueueDefinition) -> bool {
    q.queue_type == ferry_objects::QueueType::Local
        && q.attributes.definition_type == ferry_objects::queue::DefinitionType::TemporaryDynamic
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

/// How output that depends on a call's log records waits: until their position when
/// `needs_durable`, failed when they could not be appended.
fn hold_of(needs_durable: bool, logged: Option<Result<u64, ()>>) -> ReplyHold {
    match (needs_durable, logged) {
        (true, Some(Ok(lsn))) => ReplyHold::Until(lsn),
        (true, Some(Err(()))) => ReplyHold::Fail,
        _ => ReplyHold::Now,
    }
}
