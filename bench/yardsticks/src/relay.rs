//! The relay: forwards each request to a responder and each reply back to its requester,
//! and does nothing else (no queue, no persistence, no protocol beyond [`crate::frame`]).
//!
//! One thread, one `mio` event loop, edge-triggered: every connection is read until the
//! kernel has nothing more, the frames found are copied to their destination's output, and
//! every connection that got output is written once the loop has handled the poll's events,
//! so frames for one destination that arrive together leave in one write. Requests go to
//! the responders in turn; a request that arrives before any responder waits for the first.
//! Connection slots are never reused, so a late reply can never reach a newer requester.

use std::collections::VecDeque;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

use crate::cpu_time::ProcessCpu;
use crate::frame::{self, Header, RelayStats, Role, HEADER_LEN, MAX_PAYLOAD};
use crate::YardstickError;

const LISTENER: Token = Token(usize::MAX);
const READ_CHUNK: usize = 64 * 1024;

/// One client connection of the relay.
struct Connection {
    socket: TcpStream,
    /// `None` until the role byte has arrived.
    role: Option<Role>,
    input: Vec<u8>,
    input_len: usize,
    output: Vec<u8>,
    output_pos: usize,
    /// Close once the output is written (stats connections).
    close_when_written: bool,
}

/// A relay bound to its address, ready to [`run`](Relay::run).
pub struct Relay {
    poll: Poll,
    listener: TcpListener,
    connections: Vec<Option<Connection>>,
    responders: Vec<usize>,
    next_responder: usize,
    /// Requests that arrived while no responder was connected.
    unrouted: VecDeque<Vec<u8>>,
    /// Connections with output to write after this poll's events.
    dirty: Vec<usize>,
    frames: u64,
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
            responders: Vec::new(),
            next_responder: 0,
            unrouted: VecDeque::new(),
            dirty: Vec::new(),
            frames: 0,
        })
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
                if event.is_readable() || event.is_read_closed() || event.is_error() {
                    self.read(slot);
                }
                if event.is_writable() {
                    self.mark_dirty(slot);
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
                    let slot = self.connections.len();
                    if u32::try_from(slot).is_err() {
                        return Err(YardstickError::Protocol("too many connections".into()));
                    }
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
                        role: None,
                        input: vec![0; READ_CHUNK],
                        input_len: 0,
                        output: Vec::new(),
                        output_pos: 0,
                        close_when_written: false,
                    }));
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(YardstickError::io("accept", e)),
            }
        }
    }

    /// Reads what `slot` has, then routes every whole frame in its input.
    fn read(&mut self, slot: usize) {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return;
        };
        let mut closed = false;
        loop {
            if conn.input_len == conn.input.len() {
                let grown = conn.input.len() + READ_CHUNK;
                conn.input.resize(grown, 0);
            }
            match conn.socket.read(&mut conn.input[conn.input_len..]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => conn.input_len += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        let mut input = std::mem::take(&mut conn.input);
        let len = conn.input_len;
        let consumed = self.route(slot, &input[..len]);
        if let Some(Some(conn)) = self.connections.get_mut(slot) {
            match consumed {
                Some(used) => {
                    input.copy_within(used..len, 0);
                    conn.input_len = len - used;
                    conn.input = input;
                }
                None => closed = true,
            }
        }
        if closed {
            self.close(slot);
        }
    }

    /// Routes the whole frames at the start of `input` (read from `slot`); returns how many
    /// bytes it used, or `None` when the connection broke the protocol and must be closed.
    fn route(&mut self, slot: usize, input: &[u8]) -> Option<usize> {
        let mut pos = 0;
        let role = match self.connections[slot].as_ref()?.role {
            Some(role) => role,
            None => {
                let Some(&first) = input.first() else {
                    return Some(0);
                };
                let role = Role::from_byte(first)?;
                pos = 1;
                self.start_role(slot, role);
                role
            }
        };
        while let Some(header) = Header::read(&input[pos..]) {
            if header.len > MAX_PAYLOAD || role == Role::Stats {
                return None;
            }
            let end = pos + HEADER_LEN + header.len;
            if end > input.len() {
                break;
            }
            let frame = &input[pos..end];
            match role {
                Role::Requester => self.forward_request(slot, frame),
                Role::Responder => self.forward_reply(header.corr as usize, frame),
                Role::Stats => {}
            }
            self.frames += 1;
            pos = end;
        }
        Some(pos)
    }

    fn start_role(&mut self, slot: usize, role: Role) {
        debug_assert!(self.connections[slot]
            .as_ref()
            .is_some_and(|c| c.role.is_none()));
        if let Some(conn) = self.connections[slot].as_mut() {
            conn.role = Some(role);
        }
        match role {
            Role::Responder => {
                self.responders.push(slot);
                while let Some(request) = self.unrouted.pop_front() {
                    self.append_output(slot, &request, None);
                }
            }
            Role::Stats => {
                let cpu = ProcessCpu::now().unwrap_or_default();
                let stats = RelayStats {
                    user_us: cpu.user_us,
                    system_us: cpu.system_us,
                    frames: self.frames,
                };
                self.append_output(slot, &stats.encode(), None);
                if let Some(conn) = self.connections[slot].as_mut() {
                    conn.close_when_written = true;
                }
            }
            Role::Requester => {}
        }
        debug_assert!(self.connections[slot]
            .as_ref()
            .is_some_and(|c| c.role == Some(role)));
    }

    fn forward_request(&mut self, requester: usize, frame: &[u8]) {
        let corr = u32::try_from(requester).unwrap_or(u32::MAX);
        if self.responders.is_empty() {
            let mut held = frame.to_vec();
            frame::set_corr(&mut held, corr);
            self.unrouted.push_back(held);
            return;
        }
        self.next_responder = (self.next_responder + 1) % self.responders.len();
        let responder = self.responders[self.next_responder];
        self.append_output(responder, frame, Some(corr));
    }

    fn forward_reply(&mut self, requester: usize, frame: &[u8]) {
        // A reply for a requester that has gone is dropped.
        let alive = matches!(
            self.connections.get(requester),
            Some(Some(Connection {
                role: Some(Role::Requester),
                ..
            }))
        );
        if alive {
            self.append_output(requester, frame, None);
        }
    }

    /// Appends a frame to `slot`'s output, with its correlation replaced if given.
    fn append_output(&mut self, slot: usize, frame: &[u8], corr: Option<u32>) {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return;
        };
        let start = conn.output.len();
        conn.output.extend_from_slice(frame);
        if let Some(corr) = corr {
            frame::set_corr(&mut conn.output[start..], corr);
        }
        self.mark_dirty(slot);
    }

    fn mark_dirty(&mut self, slot: usize) {
        if !self.dirty.contains(&slot) {
            self.dirty.push(slot);
        }
    }

    fn write_dirty(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        for &slot in &dirty {
            let Some(Some(conn)) = self.connections.get_mut(slot) else {
                continue;
            };
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
            if written {
                conn.output.clear();
                conn.output_pos = 0;
            }
            if broken || (written && conn.close_when_written) {
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
            if conn.role == Some(Role::Responder) {
                self.responders.retain(|&r| r != slot);
                self.next_responder = 0;
            }
        }
        debug_assert!(self.connections.get(slot).is_some_and(Option::is_none));
        debug_assert!(!self.responders.contains(&slot));
    }
}
