//! Packs a step's applications (requesters, responders, senders, receivers) onto
//! shared AMQP connections, `--sessions-per-connection` sessions to a socket: AMQP's
//! counterpart of the native harness's SHARECNV, and what Qpid JMS does with the
//! sessions of one JMS connection. Applications are packed in the order they are
//! opened, filling one connection before the next is made, as MQ clients fill one
//! socket's conversations before opening another.
//!
//! [`Packer`] is the pure decision (testable alone); [`Pool`] makes the connections
//! and begins the sessions.

use std::rc::Rc;

use super::client::Client;
use super::connection::Connection;
use super::error::AmqpError;
use super::url::AmqpUrl;

/// Sessions per connection unless `--sessions-per-connection` says otherwise: the
/// native default SHARECNV (10), so both protocols share sockets alike.
pub const DEFAULT_SESSIONS_PER_CONNECTION: u32 = 10;

/// Where the next application's session goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    /// On a new connection, the n-th (0-based) made.
    New(usize),
    /// On the newest connection, which has room.
    Join(usize),
}

/// Decides which connection each application gets, `per_connection` to a socket.
#[derive(Debug, Clone)]
pub struct Packer {
    per_connection: usize,
    on_current: usize,
    connections: usize,
}

impl Packer {
    /// Packs `per_connection` sessions per connection (0 counts as 1).
    pub fn new(per_connection: u32) -> Packer {
        Packer {
            per_connection: usize::try_from(per_connection.max(1)).unwrap_or(usize::MAX),
            on_current: 0,
            connections: 0,
        }
    }

    /// The next application's slot.
    pub fn place(&mut self) -> Slot {
        if self.connections == 0 || self.on_current >= self.per_connection {
            self.connections += 1;
            self.on_current = 1;
            Slot::New(self.connections - 1)
        } else {
            self.on_current += 1;
            Slot::Join(self.connections - 1)
        }
    }

    /// Connections made so far.
    pub fn connections(&self) -> usize {
        self.connections
    }
}

/// Opens the applications' sessions on shared connections. Drop it once a step's
/// applications are open, so that the last session to close closes its connection.
pub struct Pool {
    url: AmqpUrl,
    packer: Packer,
    current: Option<Rc<Connection>>,
}

impl Pool {
    /// A pool of connections to `url`, `per_connection` sessions to each.
    pub fn new(url: &AmqpUrl, per_connection: u32) -> Pool {
        Pool {
            url: url.clone(),
            packer: Packer::new(per_connection),
            current: None,
        }
    }

    /// Begins the session of application `name` on the newest connection with room,
    /// or on a new one. A connection of its own takes `name` as its container id;
    /// shared ones are `ferry-perf-conn-<n>`.
    pub async fn session(&mut self, name: &str) -> Result<Client, AmqpError> {
        let slot = self.packer.place();
        let conn = match (slot, &self.current) {
            (Slot::Join(_), Some(c)) => c.clone(),
            (Slot::New(n), _) | (Slot::Join(n), None) => {
                let container = if self.packer.per_connection == 1 {
                    name.to_string()
                } else {
                    format!("ferry-perf-conn-{}", n + 1)
                };
                let c = Rc::new(Connection::connect(&self.url, &container).await?);
                self.current = Some(c.clone());
                c
            }
        };
        Client::begin(&conn, name).await
    }

    /// Connections made so far.
    pub fn connections(&self) -> usize {
        self.packer.connections()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(per_connection: u32, apps: usize) -> Vec<Slot> {
        let mut p = Packer::new(per_connection);
        (0..apps).map(|_| p.place()).collect()
    }

    #[test]
    fn applications_fill_one_connection_before_the_next() {
        assert_eq!(
            slots(3, 7),
            [
                Slot::New(0),
                Slot::Join(0),
                Slot::Join(0),
                Slot::New(1),
                Slot::Join(1),
                Slot::Join(1),
                Slot::New(2),
            ]
        );
        let mut p = Packer::new(10);
        for _ in 0..81 {
            p.place();
        }
        // 81 applications: ceil(81 / 10) sockets.
        assert_eq!(p.connections(), 9);
    }

    #[test]
    fn one_per_connection_gives_each_application_its_socket() {
        assert_eq!(slots(1, 3), [Slot::New(0), Slot::New(1), Slot::New(2)]);
        assert_eq!(slots(0, 2), [Slot::New(0), Slot::New(1)]);
    }
}
