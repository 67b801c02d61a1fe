//! The running queue manager's shared state, owned by the one runtime thread.
//!
//! All connections, listeners and timers run as tasks on one thread (a tokio
//! current-thread runtime with a `LocalSet`), so the engine is reached through a
//! `RefCell`, never a lock, and a put that completes another connection's waiting get
//! only appends to that connection's output buffer and wakes its writer task: no
//! cross-thread wake-up per message. On this machine's two cores that is the fastest
//! arrangement (see docs/architecture.md); the client load uses the other core.

use super::clock;
use super::socket::SocketShared;
use crate::catalogue_store;
use crate::error_log::ErrorLog;
use crate::home::QmgrPaths;
use crate::lifecycle::{PublishedListener, QmgrState, RunStatus};
use crate::messages;
use crate::qm_ini::QmIni;
use ferry_engine::{ConnId, Effect, Effects, GetResult, QueueManager, Timestamp};
use ferry_wire::{encode_reply, Reply, Status};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use tokio::sync::Notify;

/// Where the reply of a waiting GET must go when the engine completes it.
pub struct Route {
    /// The socket of the conversation.
    pub socket: Rc<SocketShared>,
    /// Conversation id on that socket.
    pub conversation: u32,
    /// The GET's request id.
    pub request_id: u32,
}

/// A listener that is running.
pub struct RunningListener {
    /// Port bound.
    pub port: u16,
    /// Address bound.
    pub ip_address: String,
    /// When it started, ms since epoch.
    pub started_ms: u64,
    /// Stops its accept loop.
    pub abort: tokio::task::AbortHandle,
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
    /// Waiting GETs by engine connection.
    routes: RefCell<HashMap<ConnId, Route>>,
    /// The error log.
    pub error_log: RefCell<ErrorLog>,
    /// Listeners running, by name.
    pub listeners: RefCell<BTreeMap<String, RunningListener>>,
    /// Lifecycle state.
    pub state: Cell<QmgrState>,
    /// Open client sockets (TCP), for MaxChannels.
    pub client_sockets: Cell<u32>,
    /// Open conversations (connections), for status and controlled stop.
    pub conversations: Cell<u64>,
    /// Sockets, for closing them all at an immediate stop.
    pub sockets: RefCell<Vec<std::rc::Weak<SocketShared>>>,
    /// Wakes the wait-expiry timer when an earlier deadline appears.
    pub timer_wake: Notify,
    /// The deadline the timer sleeps until.
    pub timer_armed: Cell<Option<Timestamp>>,
    /// Wakes the main task when the state or conversations change.
    pub lifecycle_wake: Notify,
    /// When the queue manager started.
    pub started_ms: u64,
    /// The time of the read batch being processed: one clock read serves every frame
    /// of one read (PutTime has hundredths of a second; a batch takes microseconds).
    batch_now: Cell<Option<Timestamp>>,
}

impl Server {
    /// A server around an engine restored from disk.
    pub fn new(
        paths: QmgrPaths,
        ini: QmIni,
        engine: QueueManager,
        error_log: ErrorLog,
    ) -> Rc<Self> {
        Rc::new(Server {
            name: paths.name.clone(),
            paths,
            ini,
            engine: RefCell::new(engine),
            effects: RefCell::new(Effects::default()),
            routes: RefCell::new(HashMap::new()),
            error_log: RefCell::new(error_log),
            listeners: RefCell::new(BTreeMap::new()),
            state: Cell::new(QmgrState::Starting),
            client_sockets: Cell::new(0),
            conversations: Cell::new(0),
            sockets: RefCell::new(Vec::new()),
            timer_wake: Notify::new(),
            timer_armed: Cell::new(None),
            lifecycle_wake: Notify::new(),
            started_ms: clock::now().0,
            batch_now: Cell::new(None),
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

    /// Starts processing the frames of one read: they share one clock reading.
    pub fn begin_batch(&self) {
        self.batch_now.set(Some(clock::now()));
    }

    /// Ends the batch: later calls read the clock again.
    pub fn end_batch(&self) {
        self.batch_now.set(None);
    }

    /// Records where a waiting GET's reply goes, and re-arms the timer when needed.
    pub fn park_get(&self, conn: ConnId, route: Route) {
        self.routes.borrow_mut().insert(conn, route);
        let next = self.engine.borrow().next_deadline();
        if let Some(next) = next {
            if self.timer_armed.get().is_none_or(|armed| next < armed) {
                self.timer_wake.notify_one();
            }
        }
    }

    /// Forgets a waiting GET (its conversation ended).
    pub fn forget_route(&self, conn: ConnId) {
        self.routes.borrow_mut().remove(&conn);
    }

    /// Delivers completed gets to their sockets and saves changed definitions.
    pub fn perform_effects(&self) {
        let mut catalogue_changed = false;
        let mut fx = self.effects.borrow_mut();
        for effect in fx.drain() {
            match effect {
                Effect::GetCompleted { conn, result, .. } => {
                    let Some(route) = self.routes.borrow_mut().remove(&conn) else {
                        continue;
                    };
                    let reply = get_reply(result);
                    route
                        .socket
                        .send_reply(route.conversation, route.request_id, &reply);
                }
                Effect::CatalogueChanged => catalogue_changed = true,
            }
        }
        drop(fx);
        if catalogue_changed {
            self.save_catalogue();
        }
    }

    /// Writes objects.json; a failure is logged and retried at the next change.
    pub fn save_catalogue(&self) {
        let catalogue = self.engine.borrow().catalogue();
        if let Err(e) = catalogue_store::save(&self.paths.objects(), &catalogue) {
            self.error_log
                .borrow_mut()
                .write(&messages::OBJECTS_SAVE_FAILED, &[&e]);
        }
    }

    /// Writes run/status.json for `ferry status` and `ferry start`.
    pub fn publish_status(&self) {
        let status = RunStatus {
            pid: std::process::id(),
            state: self.state.get(),
            started_ms: self.started_ms,
            listeners: self
                .listeners
                .borrow()
                .iter()
                .map(|(name, l)| PublishedListener {
                    name: name.clone(),
                    port: l.port,
                })
                .collect(),
            bindings: self.paths.bindings_socket().display().to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            connections: self.conversations.get(),
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
