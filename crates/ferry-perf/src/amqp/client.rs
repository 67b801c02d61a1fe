//! One AMQP connection with one session, driven over a tokio TCP socket: what a JMS
//! `Connection` with one `Session` is to the broker.
//!
//! The protocol state is a sans-I/O [`ferry_amqp::connection::Connection`] shared (one
//! thread, so `Rc<RefCell>`) by two tasks and the links' callers:
//! - the reader reads into one reused buffer, feeds [`Connection::receive`] and files
//!   each event where a caller waits for it (link credit, incoming messages, outcomes
//!   of sent messages by delivery id, detaches, the connection's end);
//! - the writer waits to be woken, runs [`Connection::tick`] (heartbeats, idle
//!   timeout) and writes out everything queued since it last ran in one write, so many
//!   applications' frames go out in few syscalls; no task is spawned per message.
//!
//! Callers never hold a borrow across an await; each link waits on its own `Notify`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use ferry_amqp::connection::{ClientSasl, Config, Connection, Event, LinkId, SessionId};
use ferry_amqp::{Attach, DeliveryState, Open, Role, SaslCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::error::{AmqpError, Condition};
use super::url::AmqpUrl;

/// How long connecting (TCP, SASL, open, begin) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long an attach may take to be answered.
pub const ATTACH_TIMEOUT: Duration = Duration::from_secs(15);
/// Bytes the reader asks the socket for at a time (the buffer is reused).
const READ_CHUNK: usize = 64 * 1024;

/// A message that arrived on a receiver link, waiting for its caller.
#[derive(Debug, Clone)]
pub(super) struct Incoming {
    pub delivery_id: u32,
    pub settled: bool,
    pub message: bytes::Bytes,
}

/// What the reader files for one link.
#[derive(Default)]
pub(super) struct LinkState {
    /// Wakes the one caller using the link.
    pub notify: Rc<Notify>,
    /// The node (for messages).
    pub address: String,
    /// The broker answered the attach with a terminus.
    pub attached: bool,
    /// The broker detached the link (or refused it): why.
    pub detached: Option<Condition>,
    /// Outcomes of sent deliveries, by delivery id.
    pub outcomes: HashMap<u32, Option<DeliveryState>>,
    /// Messages received and not yet taken.
    pub inbox: std::collections::VecDeque<Incoming>,
}

/// The state the tasks and the links share.
pub(super) struct State {
    pub opened: bool,
    pub session_ready: bool,
    pub session: SessionId,
    /// Why the connection is gone, once it is.
    pub dead: Option<AmqpError>,
    pub links: HashMap<LinkId, LinkState>,
    /// Sent unsettled deliveries: delivery id to link.
    pub unsettled: HashMap<u32, LinkId>,
    /// SASL failed with this code.
    pub auth_failed: Option<SaslCode>,
}

/// Everything of one connection, shared by its tasks and links.
pub(super) struct Shared {
    pub conn: RefCell<Connection>,
    pub state: RefCell<State>,
    /// Wakes the writer.
    pub wake_writer: Notify,
    /// Wakes whoever waits for the connection itself (open, begin, close).
    pub wake_conn: Notify,
    epoch: Instant,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The error callers get once the connection is gone.
    pub fn dead_error(&self) -> Option<AmqpError> {
        self.state.borrow().dead.as_ref().map(copy_error)
    }

    /// Marks the connection gone (first reason wins) and wakes every waiter.
    fn kill(&self, why: AmqpError) {
        let mut st = self.state.borrow_mut();
        if st.dead.is_none() {
            st.dead = Some(why);
        }
        for l in st.links.values() {
            l.notify.notify_one();
        }
        drop(st);
        self.wake_conn.notify_one();
        self.wake_writer.notify_one();
    }

    /// Files the events the connection reported.
    fn dispatch(&self, events: &mut Vec<Event>) {
        for e in events.drain(..) {
            self.dispatch_one(e);
        }
    }

    fn dispatch_one(&self, e: Event) {
        let mut st = self.state.borrow_mut();
        match e {
            Event::SaslOutcome(code) if code != SaslCode::Ok => st.auth_failed = Some(code),
            Event::Open(_) => {
                st.opened = true;
                self.wake_conn.notify_one();
            }
            Event::Begin { .. } => {
                st.session_ready = true;
                self.wake_conn.notify_one();
            }
            Event::Attached { link, attach } => {
                if let Some(l) = st.links.get_mut(&link) {
                    // A refusal carries a null terminus; its detach follows.
                    l.attached = answered(&attach);
                    l.notify.notify_one();
                }
            }
            Event::Flow { link, drain, .. } => {
                if drain {
                    // We never hold messages back: give the credit back at once.
                    let _ = self.conn.borrow_mut().drained(link);
                    self.wake_writer.notify_one();
                }
                if let Some(l) = st.links.get(&link) {
                    l.notify.notify_one();
                }
            }
            Event::Message {
                link,
                delivery_id,
                settled,
                message,
                ..
            } => {
                if let Some(l) = st.links.get_mut(&link) {
                    l.inbox.push_back(Incoming {
                        delivery_id,
                        settled,
                        message,
                    });
                    l.notify.notify_one();
                }
            }
            Event::Disposition {
                role: Role::Receiver,
                first,
                last,
                settled,
                state,
                ..
            } => {
                let mut id = first;
                loop {
                    if let Some(link) = st.unsettled.remove(&id) {
                        if let Some(l) = st.links.get_mut(&link) {
                            l.outcomes.insert(id, state.clone());
                            l.notify.notify_one();
                        }
                    }
                    if id == last || id.wrapping_sub(first) > 1 << 20 {
                        break;
                    }
                    id = id.wrapping_add(1);
                }
                if !settled {
                    let session = st.session;
                    let _ = self.conn.borrow_mut().disposition(
                        session,
                        Role::Sender,
                        first,
                        last,
                        true,
                        None,
                    );
                    self.wake_writer.notify_one();
                }
            }
            Event::Detach { link, error, .. } => {
                if let Some(l) = st.links.get_mut(&link) {
                    l.detached = Some(Condition::from_error(error.as_ref()));
                    l.notify.notify_one();
                }
            }
            Event::End { error, .. } => {
                drop(st);
                self.kill(AmqpError::Closed(Condition::from_error(error.as_ref())));
            }
            Event::Closed { error, .. } => {
                let auth = st.auth_failed;
                drop(st);
                match auth {
                    Some(code) => self.kill(AmqpError::Auth(format!("{code:?}"))),
                    None => self.kill(AmqpError::Closed(Condition::from_error(error.as_ref()))),
                }
            }
            Event::Attach { link, .. } => {
                // A client takes no links the broker starts.
                let _ = self.conn.borrow_mut().refuse_attach(
                    link,
                    ferry_amqp::ErrorCondition::new(
                        ferry_amqp::condition::NOT_IMPLEMENTED,
                        "ferry perf takes no incoming links",
                    ),
                );
                self.wake_writer.notify_one();
            }
            _ => {}
        }
    }
}

/// True when the broker's answer to our attach carries the terminus it serves.
fn answered(attach: &Attach) -> bool {
    match attach.role {
        // The broker receives: our sender link; it names a target.
        Role::Receiver => attach.target.is_some(),
        Role::Sender => attach.source.is_some(),
    }
}

/// A copy of an error for another waiter (io errors keep their kind and text).
pub(super) fn copy_error(e: &AmqpError) -> AmqpError {
    match e {
        AmqpError::Io(what, io) => {
            AmqpError::Io(what.clone(), std::io::Error::new(io.kind(), io.to_string()))
        }
        AmqpError::Url(s) => AmqpError::Url(s.clone()),
        AmqpError::Auth(s) => AmqpError::Auth(s.clone()),
        AmqpError::Closed(c) => AmqpError::Closed(c.clone()),
        AmqpError::Refused { address, condition } => AmqpError::Refused {
            address: address.clone(),
            condition: condition.clone(),
        },
        AmqpError::Detached { address, condition } => AmqpError::Detached {
            address: address.clone(),
            condition: condition.clone(),
        },
        AmqpError::NotAccepted { address, outcome } => AmqpError::NotAccepted {
            address: address.clone(),
            outcome: outcome.clone(),
        },
        AmqpError::Protocol(p) => AmqpError::Closed(Condition {
            condition: "protocol".into(),
            description: p.to_string(),
        }),
        AmqpError::Timeout(s) => AmqpError::Timeout(s.clone()),
    }
}

/// One connection with one session. Must be used inside a tokio `LocalSet`.
pub struct Client {
    pub(super) shared: Rc<Shared>,
    tasks: Vec<JoinHandle<()>>,
    /// Names links uniquely on this connection.
    next_link: std::cell::Cell<u32>,
    container_id: String,
}

impl Client {
    /// Connects to `url`: TCP (no Nagle), SASL (PLAIN with the URL's user, else
    /// ANONYMOUS), open and begin, within [`CONNECT_TIMEOUT`].
    pub async fn connect(url: &AmqpUrl, container_id: &str) -> Result<Client, AmqpError> {
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(url.authority()))
            .await
            .map_err(|_| AmqpError::Timeout(format!("connecting to {url}")))?
            .map_err(|e| AmqpError::Io(format!("connect to {url}"), e))?;
        let _ = stream.set_nodelay(true);
        let sasl = match &url.user {
            Some(user) => ClientSasl::Plain {
                user: user.clone(),
                password: url.password.clone().unwrap_or_default(),
            },
            None => ClientSasl::Anonymous,
        };
        let mut conn = Connection::client(Config::default(), sasl);
        let mut open = Open::new(container_id);
        open.hostname = Some(url.host.as_str().into());
        conn.open(open)?;
        let session = conn.begin()?;
        let shared = Rc::new(Shared {
            conn: RefCell::new(conn),
            state: RefCell::new(State {
                opened: false,
                session_ready: false,
                session,
                dead: None,
                links: HashMap::new(),
                unsettled: HashMap::new(),
                auth_failed: None,
            }),
            wake_writer: Notify::new(),
            wake_conn: Notify::new(),
            epoch: Instant::now(),
        });
        let (rd, wr) = stream.into_split();
        let tasks = vec![
            tokio::task::spawn_local(read_loop(shared.clone(), rd)),
            tokio::task::spawn_local(write_loop(shared.clone(), wr)),
        ];
        let client = Client {
            shared,
            tasks,
            next_link: std::cell::Cell::new(0),
            container_id: container_id.to_string(),
        };
        let ready = async {
            loop {
                if let Some(e) = client.shared.dead_error() {
                    return Err(e);
                }
                {
                    let st = client.shared.state.borrow();
                    if st.opened && st.session_ready {
                        return Ok(());
                    }
                }
                client.shared.wake_conn.notified().await;
            }
        };
        tokio::time::timeout(CONNECT_TIMEOUT, ready)
            .await
            .map_err(|_| {
                AmqpError::Timeout(format!("waiting for {url} to open the connection"))
            })??;
        Ok(client)
    }

    /// A fresh link name: `<container-id>-<role>-<n>`.
    pub(super) fn link_name(&self, role: &str) -> String {
        let n = self.next_link.get();
        self.next_link.set(n + 1);
        format!("{}-{role}-{n}", self.container_id)
    }

    /// The connection's error, if it is gone.
    pub fn error(&self) -> Option<AmqpError> {
        self.shared.dead_error()
    }

    /// Closes the connection (the broker releases what was delivered and not
    /// accepted) and waits up to 2 s for the broker's close.
    pub async fn close(self) {
        let closed = self.shared.conn.borrow_mut().close(None).is_ok();
        self.shared.wake_writer.notify_one();
        if closed {
            let wait = async {
                while self.shared.state.borrow().dead.is_none() {
                    self.shared.wake_conn.notified().await;
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), wait).await;
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.shared.kill(AmqpError::Closed(Condition {
            condition: String::new(),
            description: "closed by the harness".into(),
        }));
        for t in &self.tasks {
            // The writer ends by itself once the close is written; the reader may sit
            // in a read of a socket the broker keeps open.
            if !t.is_finished() {
                t.abort();
            }
        }
    }
}

async fn read_loop(shared: Rc<Shared>, mut rd: OwnedReadHalf) {
    let mut buf = BytesMut::with_capacity(READ_CHUNK);
    let mut events = Vec::new();
    loop {
        buf.reserve(READ_CHUNK);
        match rd.read_buf(&mut buf).await {
            Ok(0) => {
                shared.kill(AmqpError::Closed(Condition {
                    condition: String::new(),
                    description: "the broker closed the socket".into(),
                }));
                return;
            }
            Err(e) => return shared.kill(AmqpError::Io("read".into(), e)),
            Ok(_) => {}
        }
        let now = shared.now_ms();
        let finished = {
            let mut c = shared.conn.borrow_mut();
            c.receive(&mut buf, now, &mut events);
            c.is_finished()
        };
        shared.dispatch(&mut events);
        shared.wake_writer.notify_one();
        if finished {
            return;
        }
    }
}

async fn write_loop(shared: Rc<Shared>, mut wr: OwnedWriteHalf) {
    let mut events = Vec::new();
    loop {
        let now = shared.now_ms();
        let (out, next, finished) = {
            let mut c = shared.conn.borrow_mut();
            let next = c.tick(now, &mut events);
            let out = c.wants_write().then(|| c.take_output());
            (out, next, c.is_finished())
        };
        shared.dispatch(&mut events);
        if let Some(out) = out {
            if let Err(e) = wr.write_all(&out).await {
                return shared.kill(AmqpError::Io("write".into(), e));
            }
            continue;
        }
        if finished || shared.state.borrow().dead.is_some() {
            let _ = wr.shutdown().await;
            return;
        }
        let deadline = next.map_or(Duration::from_secs(3600), |t| {
            Duration::from_millis(t.saturating_sub(now))
        });
        tokio::select! {
            _ = shared.wake_writer.notified() => {}
            _ = tokio::time::sleep(deadline) => {}
        }
    }
}
