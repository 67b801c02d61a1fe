//! What one AMQP connection's reader files for the applications sharing it: the
//! connection's state (opened, gone), each application's session (begun, ended) and
//! each link's (attached, credit changes, incoming messages, outcomes of sent messages,
//! detached), with the [`Signal`] its one waiter sleeps on.
//!
//! [`Shared`] is what the connection's tasks and its applications share (one thread, so
//! `RefCell`s); [`Shared::dispatch`] turns the events of the sans-I/O
//! [`ferry_amqp::connection::Connection`] into state and wakes exactly the waiters an
//! event concerns, so many sessions on one socket do not wake each other. Nothing here
//! does I/O, which keeps the demultiplexing testable without a broker.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::time::Instant;

use ferry_amqp::connection::{Connection, Event, LinkId, SessionId};
use ferry_amqp::{Attach, DeliveryState, Role, SaslCode};
use foldhash::HashMap;

use super::error::{AmqpError, Condition};
use super::signal::Signal;

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
    pub notify: Rc<Signal>,
    /// The node (for messages).
    pub address: String,
    /// The broker answered the attach with a terminus.
    pub attached: bool,
    /// The broker detached the link (or refused it): why.
    pub detached: Option<Condition>,
    /// Outcomes of sent deliveries, by delivery id.
    pub outcomes: HashMap<u32, Option<DeliveryState>>,
    /// Messages received and not yet taken.
    pub inbox: VecDeque<Incoming>,
}

/// What the reader files for one session (one application).
#[derive(Default)]
pub(super) struct SessionState {
    /// Wakes whoever waits for the session's begin.
    pub notify: Rc<Signal>,
    /// The broker answered our begin.
    pub ready: bool,
    /// The broker ended the session: why.
    pub ended: Option<Condition>,
    /// Sent unsettled deliveries: delivery id (ids are per session) to link.
    pub unsettled: HashMap<u32, LinkId>,
}

/// The state the tasks and the applications share.
#[derive(Default)]
pub(super) struct State {
    /// The broker's open arrived.
    pub opened: bool,
    /// Why the connection is gone, once it is.
    pub dead: Option<AmqpError>,
    /// Sessions begun by the applications.
    pub sessions: HashMap<SessionId, SessionState>,
    /// Links attached by the applications.
    pub links: HashMap<LinkId, LinkState>,
    /// SASL failed with this code.
    pub auth_failed: Option<SaslCode>,
}

/// Everything of one connection, shared by its tasks and applications.
pub(super) struct Shared {
    pub conn: RefCell<Connection>,
    pub state: RefCell<State>,
    /// Wakes the writer.
    pub wake_writer: Signal,
    /// Wakes whoever waits for the connection itself (open, close).
    pub wake_conn: Signal,
    epoch: Instant,
}

impl Shared {
    /// Shares `conn` (nothing filed yet).
    pub fn new(conn: Connection) -> Shared {
        Shared {
            conn: RefCell::new(conn),
            state: RefCell::new(State::default()),
            wake_writer: Signal::new(),
            wake_conn: Signal::new(),
            epoch: Instant::now(),
        }
    }

    /// Milliseconds since the connection was made (the sans-I/O clock).
    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The tokio instant `ms` milliseconds after the connection was made.
    pub fn instant_at(&self, ms: u64) -> tokio::time::Instant {
        tokio::time::Instant::from_std(self.epoch) + std::time::Duration::from_millis(ms)
    }

    /// The error callers get once the connection is gone.
    pub fn dead_error(&self) -> Option<AmqpError> {
        self.state.borrow().dead.as_ref().map(copy_error)
    }

    /// Why `link` cannot be used any more: detached, its session ended, or the
    /// connection gone. `address` names the link's node in the error.
    pub fn link_gone(&self, link: LinkId, address: &str) -> Option<AmqpError> {
        let st = self.state.borrow();
        if let Some(c) = st.links.get(&link).and_then(|l| l.detached.as_ref()) {
            return Some(AmqpError::Detached {
                address: address.to_string(),
                condition: c.clone(),
            });
        }
        if let Some(c) = st
            .sessions
            .get(&link.session())
            .and_then(|s| s.ended.as_ref())
        {
            return Some(AmqpError::Closed(c.clone()));
        }
        st.dead.as_ref().map(copy_error)
    }

    /// Marks the connection gone (first reason wins) and wakes every waiter.
    pub fn kill(&self, why: AmqpError) {
        let mut st = self.state.borrow_mut();
        if st.dead.is_none() {
            st.dead = Some(why);
        }
        for l in st.links.values() {
            l.notify.notify_one();
        }
        for s in st.sessions.values() {
            s.notify.notify_one();
        }
        drop(st);
        self.wake_conn.notify_one();
        self.wake_writer.notify_one();
    }

    /// Files the events the connection reported.
    pub fn dispatch(&self, events: &mut Vec<Event>) {
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
            Event::Begin { session, .. } => {
                if let Some(s) = st.sessions.get_mut(&session) {
                    s.ready = true;
                    s.notify.notify_one();
                }
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
                session,
                role: Role::Receiver,
                first,
                last,
                settled,
                state,
            } => {
                let State {
                    sessions, links, ..
                } = &mut *st;
                if let Some(s) = sessions.get_mut(&session) {
                    file_outcomes(s, links, first, last, &state);
                }
                if !settled {
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
            Event::End { session, error } => {
                // The links of the session had their own detach first.
                if let Some(s) = st.sessions.get_mut(&session) {
                    s.ended = Some(Condition::from_error(error.as_ref()));
                    s.notify.notify_one();
                }
                for (_, l) in st.links.iter().filter(|(id, _)| id.session() == session) {
                    l.notify.notify_one();
                }
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

/// Files the broker's outcome of our deliveries `first..=last` of session `s` with the
/// links that sent them and wakes those links.
fn file_outcomes(
    s: &mut SessionState,
    links: &mut HashMap<LinkId, LinkState>,
    first: u32,
    last: u32,
    state: &Option<DeliveryState>,
) {
    let mut id = first;
    loop {
        if let Some(link) = s.unsettled.remove(&id) {
            if let Some(l) = links.get_mut(&link) {
                l.outcomes.insert(id, state.clone());
                l.notify.notify_one();
            }
        }
        // A peer's huge range must not spin: at most 2^20 ids per disposition.
        if id == last || id.wrapping_sub(first) > 1 << 20 {
            break;
        }
        id = id.wrapping_add(1);
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

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use ferry_amqp::connection::{ClientSasl, Config};

    fn link(channel: u16, handle: u32) -> LinkId {
        LinkId { channel, handle }
    }

    /// Two applications' sessions (channels 0 and 1) on one connection, each with a
    /// link of handle 0.
    fn two_sessions() -> Shared {
        let shared = Shared::new(Connection::client(Config::default(), ClientSasl::Anonymous));
        {
            let mut st = shared.state.borrow_mut();
            for ch in 0..2 {
                st.sessions.insert(SessionId(ch), SessionState::default());
                st.links.insert(link(ch, 0), LinkState::default());
            }
        }
        shared
    }

    fn message(l: LinkId, delivery_id: u32) -> Event {
        Event::Message {
            link: l,
            delivery_id,
            delivery_tag: Bytes::new(),
            settled: false,
            message_format: 0,
            state: None,
            message: Bytes::from(vec![delivery_id as u8]),
        }
    }

    #[test]
    fn messages_go_to_their_own_sessions_link() {
        let shared = two_sessions();
        let mut events = vec![message(link(1, 0), 7), message(link(0, 0), 7)];
        events.push(message(link(1, 0), 8));
        shared.dispatch(&mut events);
        assert!(events.is_empty());
        let st = shared.state.borrow();
        let ids = |l| {
            st.links[&l]
                .inbox
                .iter()
                .map(|m| m.delivery_id)
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(link(0, 0)), [7]);
        assert_eq!(ids(link(1, 0)), [7, 8]);
    }

    #[test]
    fn outcomes_are_filed_by_session_and_delivery_id() {
        let shared = two_sessions();
        {
            let mut st = shared.state.borrow_mut();
            // Both sessions sent their delivery 0 (ids are per session).
            for ch in 0..2 {
                let s = st.sessions.get_mut(&SessionId(ch)).expect("session");
                s.unsettled.insert(0, link(ch, 0));
                s.unsettled.insert(1, link(ch, 0));
            }
        }
        let mut events = vec![Event::Disposition {
            session: SessionId(1),
            role: Role::Receiver,
            first: 0,
            last: 1,
            settled: true,
            state: Some(DeliveryState::Accepted),
        }];
        shared.dispatch(&mut events);
        let st = shared.state.borrow();
        assert!(st.links[&link(0, 0)].outcomes.is_empty());
        assert_eq!(st.sessions[&SessionId(0)].unsettled.len(), 2);
        let got = &st.links[&link(1, 0)].outcomes;
        assert_eq!(got.len(), 2);
        assert_eq!(got[&1], Some(DeliveryState::Accepted));
        assert!(st.sessions[&SessionId(1)].unsettled.is_empty());
    }

    #[test]
    fn a_sessions_end_reaches_only_its_links() {
        let shared = two_sessions();
        let mut events = vec![
            Event::Begin {
                session: SessionId(0),
                begin: ferry_amqp::Begin {
                    remote_channel: Some(0),
                    next_outgoing_id: 0,
                    incoming_window: 1,
                    outgoing_window: 1,
                    handle_max: 7,
                    offered_capabilities: Vec::new(),
                    desired_capabilities: Vec::new(),
                    properties: Vec::new(),
                },
            },
            Event::End {
                session: SessionId(1),
                error: None,
            },
        ];
        shared.dispatch(&mut events);
        assert!(shared.state.borrow().sessions[&SessionId(0)].ready);
        assert!(shared.link_gone(link(0, 0), "Q").is_none());
        assert!(matches!(
            shared.link_gone(link(1, 0), "Q"),
            Some(AmqpError::Closed(_))
        ));
        // Events for unknown sessions and links (a peer's mistake) are dropped.
        let mut stray = vec![
            message(link(9, 9), 1),
            Event::Disposition {
                session: SessionId(9),
                role: Role::Receiver,
                first: 0,
                last: u32::MAX,
                settled: false,
                state: None,
            },
        ];
        shared.dispatch(&mut stray);
        assert!(shared.dead_error().is_none());
    }

    #[test]
    fn the_connections_end_reaches_everyone() {
        let shared = two_sessions();
        let mut events = vec![Event::Closed {
            remote: true,
            error: None,
        }];
        shared.dispatch(&mut events);
        for ch in 0..2 {
            assert!(matches!(
                shared.link_gone(link(ch, 0), "Q"),
                Some(AmqpError::Closed(_))
            ));
        }
    }
}
