//! AMQP channels (CHLTYPE(AMQP)): AMQP 1.0 clients — Qpid JMS, proton, any AMQP 1.0
//! client — on the queue manager's own queues.
//!
//! A channel is a listener bound to its PORT (and LOCLADDR); each accepted socket runs
//! one connection task ([`connection::serve`]) that drives the sans-I/O
//! [`ferry_amqp::connection::Connection`] and maps what the client does onto the engine:
//! the AMQP connection is one engine connection, a link the client sends on is an output
//! handle (each message an MQPUT), a link the client receives on is an input (or browse)
//! handle with an async consumer fed by the link's credit. Messages are converted by
//! [`crate::amqp_mapping`], so native and AMQP applications share queues.
//!
//! Every AMQP channel starts with the queue manager (as MQ's AMQP service does with the
//! queue manager); START/STOP CHANNEL start and stop one, and DISPLAY CHSTATUS shows the
//! channels started since the queue manager started, with their clients. A channel that
//! cannot bind its port at start is reported (FRY9213E) and the queue manager runs on.
//! Stopping a channel, or the queue manager, closes its connections with
//! `amqp:connection:forced`: a client's unsettled messages then go back to their queues
//! with its links' default outcome (Qpid JMS: BackoutCount + 1).

mod connection;
mod outcome;
mod transaction;

pub use connection::AmqpShared;

use super::accept::{accept_tcp, start_failure_line, AcceptTask};
use super::clock;
use super::endpoints::ChannelEndpoints;
use super::server::Server;
use super::tls::{self, Accepted};
use crate::messages;
use ferry_amqp::condition;
use ferry_objects::channel::ChannelType;
use ferry_objects::status::{ChannelClientStatus, ChannelStatus};
use ferry_objects::{AdminError, ChannelDefinition, StopMode};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};
use tokio::sync::Notify;

/// Message and byte totals of a channel or of one of its connections.
#[derive(Debug, Default)]
pub struct Counters {
    /// Messages sent to clients (deliveries).
    pub messages_sent: Cell<u64>,
    /// Messages received from clients (transfers put).
    pub messages_received: Cell<u64>,
    /// Bytes sent to clients (frames).
    pub bytes_sent: Cell<u64>,
    /// Bytes received from clients (frames).
    pub bytes_received: Cell<u64>,
    /// When the last message went either way, ms since epoch.
    pub last_message_ms: Cell<Option<u64>>,
    /// Pre-settled messages from clients that could not be put and went to the
    /// dead-letter queue.
    pub dead_lettered: Cell<u64>,
    /// Pre-settled messages from clients that could not be put, nor dead-lettered.
    pub discarded: Cell<u64>,
}

impl Counters {
    fn add(cell: &Cell<u64>, n: u64) {
        cell.set(cell.get().saturating_add(n));
    }
}

/// What a connection needs of its channel's definition, read when it connects.
#[derive(Clone, Debug)]
pub struct ChannelSettings {
    /// The channel's name.
    pub name: String,
    /// MAXMSGL: the largest message a client may send or be sent.
    pub max_message_length: u64,
    /// HBINT in seconds: the idle timeout announced to clients (0: none).
    pub heartbeat_secs: u32,
    /// BATCHSZ: accepted deliveries are removed in batches of this many.
    pub batch_size: usize,
    /// BATCHINT in ms: ... or after this long, whichever comes first.
    pub batch_interval_ms: u64,
    /// MAXINST: connections the channel takes at once.
    pub max_instances: usize,
    /// MAXINSTC: connections from one address at once.
    pub max_instances_per_client: usize,
}

impl ChannelSettings {
    fn of(def: &ChannelDefinition) -> Self {
        let a = &def.attributes;
        let count = |n: i32| usize::try_from(n).unwrap_or(0);
        ChannelSettings {
            name: def.name.clone(),
            max_message_length: u64::try_from(a.max_msg_length).unwrap_or(0),
            heartbeat_secs: u32::try_from(a.heartbeat_interval).unwrap_or(0),
            batch_size: count(a.batch_size).max(1),
            batch_interval_ms: u64::try_from(a.batch_interval).unwrap_or(0),
            max_instances: count(a.max_instances),
            max_instances_per_client: count(a.max_instances_per_client),
        }
    }
}

/// A channel started since the queue manager started (DISPLAY CHSTATUS).
pub struct AmqpChannel {
    /// The port it listens (or listened) on.
    pub port: u16,
    /// When it started, ms since epoch.
    pub started_ms: u64,
    /// Listening now (false after STOP CHANNEL).
    pub running: bool,
    /// Stops the accept loop (and listening, at once).
    accept: Option<AcceptTask>,
    /// The task that wakes connections whose acceptances are overdue.
    overdue: Option<tokio::task::AbortHandle>,
    /// Totals of the channel's connections.
    pub counters: Rc<Counters>,
    /// Its connections (closed ones drop out).
    pub connections: Rc<RefCell<Vec<Weak<AmqpShared>>>>,
}

impl AmqpChannel {
    fn live(&self) -> Vec<Rc<AmqpShared>> {
        let mut conns = self.connections.borrow_mut();
        conns.retain(|w| w.strong_count() > 0);
        conns.iter().filter_map(Weak::upgrade).collect()
    }

    /// Stops listening; returns the connections still open, for [`close_ended`].
    fn end(&mut self) -> Vec<Rc<AmqpShared>> {
        self.running = false;
        if let Some(a) = self.accept.take() {
            a.stop();
        }
        if let Some(o) = self.overdue.take() {
            o.abort();
        }
        self.live()
    }
}

/// Closes an ended channel's connections (`amqp:connection:forced`, saying `why`) and
/// writes that the channel ended.
fn close_ended(server: &Server, name: &str, conns: Vec<Rc<AmqpShared>>, why: &str) {
    for c in conns {
        c.force_close(why);
    }
    server
        .error_log
        .borrow_mut()
        .write(&messages::AMQP_CHANNEL_ENDED, &[&name]);
}

fn definition(server: &Server, name: &str) -> Result<ChannelDefinition, AdminError> {
    let def = server
        .engine
        .borrow()
        .channel(name)
        .ok_or_else(|| AdminError::NotFound {
            name: name.to_string(),
        })?;
    if def.channel_type != ChannelType::Amqp {
        return Err(AdminError::Invalid(format!(
            "channel {name} is not an AMQP channel: only AMQP channels are started and stopped"
        )));
    }
    Ok(def)
}

/// The AMQP channels started since the queue manager started (running or stopped), and
/// how START/STOP CHANNEL and DISPLAY CHSTATUS reach them ([`ChannelEndpoints`]).
pub struct AmqpChannels {
    server: Weak<Server>,
    channels: RefCell<BTreeMap<String, AmqpChannel>>,
}

impl AmqpChannels {
    /// No channel started yet, for the server `server` will point at.
    pub fn new(server: &Weak<Server>) -> Self {
        AmqpChannels {
            server: server.clone(),
            channels: RefCell::new(BTreeMap::new()),
        }
    }

    fn server(&self) -> Result<Rc<Server>, AdminError> {
        self.server.upgrade().ok_or_else(|| AdminError::Failed {
            reason: ferry_mqi::ReasonCode::QMgrStopping,
            text: "the queue manager is ending".to_string(),
        })
    }
}

impl ChannelEndpoints for AmqpChannels {
    fn serves(&self, kind: ChannelType) -> bool {
        kind == ChannelType::Amqp
    }

    fn listening_ports(&self) -> Vec<u16> {
        self.channels
            .borrow()
            .values()
            .filter(|c| c.running)
            .map(|c| c.port)
            .collect()
    }

    /// START CHANNEL: binds the channel's port and accepts AMQP connections on it.
    fn start(&self, name: &str) -> Result<(), AdminError> {
        let server = &self.server()?;
        let def = definition(server, name)?;
        if self.channels.borrow().get(name).is_some_and(|c| c.running) {
            return Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::ObjectInUse,
                text: format!("channel {name} is already running"),
            });
        }
        let fail = |why: String| {
            let line = server
                .error_log
                .borrow_mut()
                .write(&messages::AMQP_CHANNEL_FAILED, &[&name, &why]);
            AdminError::Failed {
                reason: ferry_mqi::ReasonCode::ResourceProblem,
                text: line,
            }
        };
        let port = def.attributes.listen_port();
        let ip = def.attributes.local_address.trim().to_string();
        let host = if ip.is_empty() { "0.0.0.0" } else { &ip };
        let std_listener = std::net::TcpListener::bind((host, port))
            .map_err(|e| fail(format!("port {port}: {e}")))?;
        let bound = std_listener.local_addr().map_or(port, |a| a.port());
        std_listener
            .set_nonblocking(true)
            .map_err(|e| fail(e.to_string()))?;
        let listener =
            tokio::net::TcpListener::from_std(std_listener).map_err(|e| fail(e.to_string()))?;
        let counters = Rc::new(Counters::default());
        let connections = Rc::new(RefCell::new(Vec::new()));
        let accepts_waiting = Rc::new(Notify::new());
        let task = AcceptTask::spawn(listener, |l| {
            accept(
                server.clone(),
                l,
                name.to_string(),
                counters.clone(),
                connections.clone(),
                accepts_waiting.clone(),
            )
        });
        let delay_ms = server.ini.limits.amqp_accept_delay_ms;
        let overdue = (delay_ms > 0).then(|| {
            tokio::task::spawn_local(wake_overdue_accepts(
                Rc::downgrade(&connections),
                accepts_waiting,
                delay_ms,
            ))
            .abort_handle()
        });
        self.channels.borrow_mut().insert(
            name.to_string(),
            AmqpChannel {
                port: bound,
                started_ms: clock::now().0,
                running: true,
                accept: Some(task),
                overdue,
                counters,
                connections,
            },
        );
        server
            .error_log
            .borrow_mut()
            .write(&messages::AMQP_CHANNEL_STARTED, &[&name, &bound]);
        server.publish_status();
        Ok(())
    }

    /// STOP CHANNEL: stops listening and closes the channel's connections
    /// (`amqp:connection:forced`; QUIESCE and FORCE both close at once: an AMQP client has
    /// no MQGET to finish, and its unsettled deliveries return to their queues).
    fn stop(&self, name: &str, mode: StopMode) -> Result<(), AdminError> {
        let server = &self.server()?;
        definition(server, name)?;
        let conns = {
            let mut channels = self.channels.borrow_mut();
            let Some(c) = channels.get_mut(name).filter(|c| c.running) else {
                return Err(AdminError::Failed {
                    reason: ferry_mqi::ReasonCode::ObjectInUse,
                    text: format!("channel {name} is not running"),
                });
            };
            c.end()
        };
        let why = match mode {
            StopMode::Quiesce => "the channel was stopped (STOP CHANNEL MODE(QUIESCE))",
            StopMode::Force => "the channel was stopped (STOP CHANNEL MODE(FORCE))",
            StopMode::Terminate => "the channel was stopped (STOP CHANNEL MODE(TERMINATE))",
        };
        close_ended(server, name, conns, why);
        server.publish_status();
        Ok(())
    }

    /// Starts every AMQP channel (queue manager start); one that fails is in the error log,
    /// and its FRY9213E line is returned.
    fn start_all(&self) -> Vec<String> {
        let Some(server) = self.server.upgrade() else {
            return Vec::new();
        };
        let names: Vec<String> = server
            .engine
            .borrow()
            .channels()
            .into_iter()
            .filter(|c| c.channel_type == ChannelType::Amqp)
            .map(|c| c.name)
            .collect();
        names
            .iter()
            .filter_map(|n| self.start(n).err())
            .map(start_failure_line)
            .collect()
    }

    /// Stops every running AMQP channel and closes its connections (queue manager stop).
    fn stop_all(&self, why: &str) {
        let Some(server) = self.server.upgrade() else {
            return;
        };
        let running: Vec<(String, Vec<Rc<AmqpShared>>)> = {
            let mut channels = self.channels.borrow_mut();
            channels
                .iter_mut()
                .filter(|(_, c)| c.running)
                .map(|(n, c)| (n.clone(), c.end()))
                .collect()
        };
        for (name, conns) in running {
            close_ended(&server, &name, conns, why);
        }
    }

    /// DISPLAY CHSTATUS: the channels started since the queue manager started.
    fn status(&self, matches: &dyn Fn(&str) -> bool) -> Vec<ChannelStatus> {
        self.channels
            .borrow()
            .iter()
            .filter(|(n, _)| matches(n))
            .map(|(name, c)| {
                let clients: Vec<ChannelClientStatus> =
                    c.live().iter().filter_map(|s| s.client_status()).collect();
                let mut st = ChannelStatus::new(name, ChannelType::Amqp, c.running, c.port);
                st.started_ms = Some(c.started_ms);
                st.messages_sent = c.counters.messages_sent.get();
                st.messages_received = c.counters.messages_received.get();
                st.bytes_sent = c.counters.bytes_sent.get();
                st.bytes_received = c.counters.bytes_received.get();
                st.last_message_ms = c.counters.last_message_ms.get();
                st.clients = clients;
                st
            })
            .collect()
    }
}

/// Wakes each of the channel's connections whose acceptances have waited AmqpAcceptDelay
/// (`delay_ms`) for a frame to ride on, so they go alone (see `Session::accepts_may_wait`):
/// one task per channel, looking five times per delay, instead of a timer per connection
/// moved for every message. When no connection has acceptances waiting it sleeps until one
/// has (`accepts_waiting`, notified by the connection), so an idle channel costs no
/// wake-ups. Ends with the channel's list of connections.
async fn wake_overdue_accepts(
    connections: Weak<RefCell<Vec<Weak<AmqpShared>>>>,
    accepts_waiting: Rc<Notify>,
    delay_ms: u64,
) {
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis((delay_ms / 5).max(1)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(list) = connections.upgrade() else {
            return;
        };
        let now = clock::now().0;
        let mut waiting = false;
        for c in list.borrow().iter().filter_map(Weak::upgrade) {
            if c.accepts_overdue(now) {
                c.wake_task();
            }
            waiting |= c.accepts_wait();
        }
        drop(list);
        if !waiting {
            // A connection that starts deferring acceptances notifies; a notification
            // given since the loop looked is kept, so none is missed.
            accepts_waiting.notified().await;
            ticks.reset();
        }
    }
}

/// Serves AMQP on every socket the channel's `listener` accepts: the channel's definition
/// as it is at that moment, MAXINST and MAXINSTC (a connection over either is refused at
/// its open), and the connection in the channel's list for DISPLAY CHSTATUS.
async fn accept(
    server: Rc<Server>,
    listener: tokio::net::TcpListener,
    channel: String,
    counters: Rc<Counters>,
    connections: Rc<RefCell<Vec<Weak<AmqpShared>>>>,
    accepts_waiting: Rc<Notify>,
) {
    let what = format!("AMQP channel {channel}");
    accept_tcp(server.clone(), listener, &what, |stream, peer, permit| {
        // The definition as it is now: ALTER CHANNEL applies to new connections.
        let Ok(def) = definition(&server, &channel) else {
            return;
        };
        let settings = ChannelSettings::of(&def);
        let live = {
            let mut c = connections.borrow_mut();
            c.retain(|w| w.strong_count() > 0);
            c.iter().filter_map(Weak::upgrade).collect::<Vec<_>>()
        };
        let ip = peer.ip().to_string();
        let limited = |why: String| Some((condition::RESOURCE_LIMIT_EXCEEDED, why));
        let refuse = if live.len() >= settings.max_instances {
            limited(format!(
                "channel {channel} has MAXINST({}) connections",
                settings.max_instances
            ))
        } else if live.iter().filter(|c| c.peer_ip() == ip).count()
            >= settings.max_instances_per_client
        {
            limited(format!(
                "channel {channel} has MAXINSTC({}) connections from {ip}",
                settings.max_instances_per_client
            ))
        } else {
            None
        };
        let shared = Rc::new(AmqpShared::new(
            settings,
            ip,
            counters.clone(),
            accepts_waiting.clone(),
            clock::now().0,
        ));
        connections.borrow_mut().push(Rc::downgrade(&shared));
        let server = server.clone();
        tokio::task::spawn_local(async move {
            let _permit = permit;
            let ip = shared.peer_ip().to_string();
            let stream = if def.attributes.tls_requested() {
                // The handshake has the time a silent client has to open (HBINT at most).
                let limit = connection::handshake_limit(&server, &shared);
                match tls::accept_amqp(&server, stream, &def, &ip, limit).await {
                    Some(s) => s,
                    None => return,
                }
            } else {
                Accepted::Plain(stream)
            };
            let session = match &stream {
                Accepted::Tls(_, session) => Some(session),
                Accepted::Plain(_) => None,
            };
            // The channel's TLS checks come first: a refused client is told why at its
            // open, whatever the instance limits say.
            let refuse = match tls::check(&server, &def, session, &ip) {
                Err(refusal) => Some((condition::UNAUTHORIZED_ACCESS, refusal.text)),
                Ok(()) => refuse,
            };
            connection::serve(server, shared, stream, refuse).await;
        });
    })
    .await;
}
