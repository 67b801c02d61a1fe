//! The relay on epoll: forwards each request to a responder and each reply back to its
//! requester ([`crate::routing`]), and does nothing else (no queue, no persistence, no
//! protocol beyond [`crate::frame`]).
//!
//! One thread, one `mio` event loop, edge-triggered: every connection is read until the
//! kernel has nothing more, the frames found are routed, and every connection that got
//! output is written once the loop has handled the poll's events, so frames for one
//! destination that arrive together leave in one write. [`crate::relay_uring`] is the same
//! relay doing its I/O through io_uring.

use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::routing::Router;
use crate::YardstickError;

const LISTENER: Token = Token(usize::MAX);
const READ_CHUNK: usize = 64 * 1024;

/// One client connection's socket and buffers (its routing is in the [`Router`]).
struct Connection {
    socket: TcpStream,
    input: Vec<u8>,
    input_len: usize,
    /// Output taken from the router and not yet written, from `output_pos`.
    output: Vec<u8>,
    output_pos: usize,
}

/// A relay bound to its address, ready to [`run`](Relay::run).
pub struct Relay {
    poll: Poll,
    listener: TcpListener,
    connections: Vec<Option<Connection>>,
    router: Router,
    /// Connections to write after this poll's events: the router's, and writable ones.
    dirty: Vec<usize>,
    /// Stop reading a connection at a short read instead of at `WouldBlock`.
    short_reads: bool,
}

impl Relay {
    /// Binds the relay's listener (`127.0.0.1:0` picks a free port, see [`Relay::local_addr`]).
    pub fn bind(addr: SocketAddr) -> Result<Relay, YardstickError> {
        let poll = Poll::new().map_err(|e| YardstickError::io("create the relay's poll", e))?;
        let mut listener = TcpListener::bind(addr)
            .map_err(|e| YardstickError::io(format!("listen on {addr}"), e))?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .map_err(|e| YardstickError::io("register the listener", e))?;
        Ok(Relay {
            poll,
            listener,
            connections: Vec::new(),
            router: Router::new(),
            dirty: Vec::new(),
            short_reads: false,
        })
    }

    /// Makes the relay stop reading a connection once a read returns less than it asked
    /// for (the socket was emptied; data arriving later is a new edge), rather than read
    /// again until `WouldBlock`, except from a peer that closed (read to the end, or its
    /// close would go unseen). Tokio, the queue manager's runtime, reads this way: it
    /// spares a `recv` per readable event.
    pub fn stop_at_short_reads(mut self) -> Relay {
        self.short_reads = true;
        self
    }

    /// The address the relay listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, YardstickError> {
        self.listener
            .local_addr()
            .map_err(|e| YardstickError::io("read the listener's address", e))
    }

    /// Serves until `stop` is set (checked at least every 100 ms).
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), YardstickError> {
        let mut events = Events::with_capacity(1024);
        let mut routed = Vec::new();
        while !stop.load(Ordering::Relaxed) {
            match self
                .poll
                .poll(&mut events, Some(Duration::from_millis(100)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(YardstickError::io("poll", e)),
            }
            for event in events.iter() {
                if event.token() == LISTENER {
                    self.accept()?;
                    continue;
                }
                let slot = event.token().0;
                let closed = event.is_read_closed() || event.is_error();
                if event.is_readable() || closed {
                    // A peer that closed is read to the end, short reads or not.
                    self.read(slot, !closed && self.short_reads);
                }
                if event.is_writable() && !self.dirty.contains(&slot) {
                    self.dirty.push(slot);
                }
            }
            self.router.take_dirty(&mut routed);
            for &slot in &routed {
                if !self.dirty.contains(&slot) {
                    self.dirty.push(slot);
                }
            }
            self.write_dirty();
        }
        Ok(())
    }

    fn accept(&mut self) -> Result<(), YardstickError> {
        loop {
            match self.listener.accept() {
                Ok((mut socket, _)) => {
                    let slot = self.router.open()?;
                    debug_assert_eq!(slot, self.connections.len());
                    // Nagle would hold small replies back for the previous one's ACK.
                    socket
                        .set_nodelay(true)
                        .map_err(|e| YardstickError::io("set TCP_NODELAY", e))?;
                    self.poll
                        .registry()
                        .register(
                            &mut socket,
                            Token(slot),
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .map_err(|e| YardstickError::io("register a connection", e))?;
                    self.connections.push(Some(Connection {
                        socket,
                        input: vec![0; READ_CHUNK],
                        input_len: 0,
                        output: Vec::new(),
                        output_pos: 0,
                    }));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(YardstickError::io("accept", e)),
            }
        }
    }

    /// Reads what `slot` has (until `WouldBlock`, or until a short read if `short_read_ends`),
    /// then routes every whole frame in its input.
    fn read(&mut self, slot: usize, short_read_ends: bool) {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return;
        };
        let mut closed = false;
        loop {
            if conn.input_len == conn.input.len() {
                let grown = conn.input.len() + READ_CHUNK;
                conn.input.resize(grown, 0);
            }
            let asked = conn.input.len() - conn.input_len;
            match conn.socket.read(&mut conn.input[conn.input_len..]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    conn.input_len += n;
                    if short_read_ends && n < asked {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        let len = conn.input_len;
        match self.router.route(slot, &conn.input[..len]) {
            Some(used) => {
                conn.input.copy_within(used..len, 0);
                conn.input_len = len - used;
            }
            None => closed = true,
        }
        if closed {
            self.close(slot);
        }
    }

    fn write_dirty(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        for &slot in &dirty {
            let Some(Some(conn)) = self.connections.get_mut(slot) else {
                continue;
            };
            if conn.output_pos == conn.output.len() {
                conn.output.clear();
                conn.output_pos = 0;
            }
            self.router.take_output(slot, &mut conn.output);
            let mut broken = false;
            while conn.output_pos < conn.output.len() {
                match conn.socket.write(&conn.output[conn.output_pos..]) {
                    Ok(n) => conn.output_pos += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => {
                        broken = true;
                        break;
                    }
                }
            }
            // The rest is written on the next writable event.
            let written = conn.output_pos == conn.output.len();
            if broken || (written && self.router.close_when_written(slot)) {
                self.close(slot);
            }
        }
        self.dirty = dirty;
        self.dirty.clear();
    }

    fn close(&mut self, slot: usize) {
        if let Some(mut conn) = self.connections.get_mut(slot).and_then(Option::take) {
            // Deregistering a socket that is about to be dropped cannot matter if it fails.
            let _ = self.poll.registry().deregister(&mut conn.socket);
        }
        self.router.close(slot);
        debug_assert!(self.connections.get(slot).is_some_and(Option::is_none));
    }
}
