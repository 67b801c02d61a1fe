//! One application's AMQP session: what a JMS `Session` is to the broker. Its links
//! ([`super::link`]) are attached on it; several applications' sessions may share one
//! [`Connection`] (see [`super::pool`]), as Qpid JMS carries the sessions of one JMS
//! connection over its socket.
//!
//! Closing a session ends it; the last session of a connection to close closes the
//! connection too (the broker releases what was delivered and not accepted either way).

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use ferry_amqp::connection::SessionId;

use super::connection::{Connection, CONNECT_TIMEOUT};
use super::demux::Shared;
use super::error::AmqpError;
use super::url::AmqpUrl;

/// How long an attach may take to be answered.
pub const ATTACH_TIMEOUT: Duration = Duration::from_secs(15);

/// One session on a (possibly shared) connection. Must be used inside a tokio
/// `LocalSet`.
pub struct Client {
    conn: Rc<Connection>,
    pub(super) shared: Rc<Shared>,
    pub(super) session: SessionId,
    /// Names this session's links uniquely: `<name>-<role>-<n>`.
    next_link: Cell<u32>,
    name: String,
    ended: Cell<bool>,
}

impl Client {
    /// Connects to `url` with a connection of its own (container id `name`) and
    /// begins one session on it.
    pub async fn connect(url: &AmqpUrl, name: &str) -> Result<Client, AmqpError> {
        let conn = Rc::new(Connection::connect(url, name).await?);
        Client::begin(&conn, name).await
    }

    /// Begins a session on `conn` for the application `name` (which prefixes its link
    /// names) and waits for the broker's answer, within the connect timeout.
    pub async fn begin(conn: &Rc<Connection>, name: &str) -> Result<Client, AmqpError> {
        let shared = conn.shared.clone();
        if let Some(e) = shared.dead_error() {
            return Err(e);
        }
        let session = shared.conn.borrow_mut().begin()?;
        let notify = {
            let mut st = shared.state.borrow_mut();
            let s = st.sessions.entry(session).or_default();
            s.notify.clone()
        };
        shared.wake_writer.notify_one();
        let client = Client {
            conn: conn.clone(),
            shared,
            session,
            next_link: Cell::new(0),
            name: name.to_string(),
            ended: Cell::new(false),
        };
        let ready = async {
            loop {
                if let Some(e) = client.error() {
                    return Err(e);
                }
                if client.shared.state.borrow().sessions[&session].ready {
                    return Ok(());
                }
                notify.notified().await;
            }
        };
        tokio::time::timeout(CONNECT_TIMEOUT, ready)
            .await
            .map_err(|_| AmqpError::Timeout(format!("waiting for the broker to begin {name}")))??;
        Ok(client)
    }

    /// A fresh link name: `<name>-<role>-<n>`.
    pub(super) fn link_name(&self, role: &str) -> String {
        let n = self.next_link.get();
        self.next_link.set(n + 1);
        format!("{}-{role}-{n}", self.name)
    }

    /// Why the session cannot be used: the broker ended it, or the connection is gone.
    pub fn error(&self) -> Option<AmqpError> {
        let st = self.shared.state.borrow();
        if let Some(c) = st
            .sessions
            .get(&self.session)
            .and_then(|s| s.ended.as_ref())
        {
            return Some(AmqpError::Closed(c.clone()));
        }
        st.dead.as_ref().map(super::demux::copy_error)
    }

    /// Ends the session; the last session of its connection closes the connection and
    /// waits up to 2 s for the broker's close.
    pub async fn close(self) {
        if Rc::strong_count(&self.conn) == 1 {
            self.ended.set(true);
            self.conn.close().await;
        } else {
            self.end();
        }
    }

    /// Ends the session unless it was already (no waiting for the broker's end).
    fn end(&self) {
        if self.ended.replace(true) {
            return;
        }
        if self
            .shared
            .conn
            .borrow_mut()
            .end(self.session, None)
            .is_ok()
        {
            self.shared.wake_writer.notify_one();
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // A session dropped without close (an error path) leaves its connection's
        // other sessions alone; the connection itself goes with its last session.
        if Rc::strong_count(&self.conn) > 1 {
            self.end();
        }
    }
}
