//! The relay on io_uring: the same routing as [`crate::relay`] ([`crate::routing`]), its
//! socket I/O submitted to an io_uring instead of epoll + `recv`/`send`, to measure what a
//! queue manager would save in system calls and CPU per round trip.
//!
//! One thread and one ring (no SQPOLL: a polling kernel thread would take a second core and
//! hide CPU outside the process; single issuer with deferred task work, so the kernel runs
//! completion work when the loop enters the ring rather than interrupting it). Every
//! connection keeps one `recv` armed; the accept is armed on the listener too. A loop turn
//! is one `io_uring_enter` that submits what the previous turn queued (re-armed receives,
//! every send of the turn) and waits for one completion more than the sends it submits
//! (a send usually completes during the submission, so the turn wakes for something
//! received, as an epoll loop would; the wait is bounded by 100 ms); the turn then handles
//! every completion there is, routes what arrived, and queues one send per connection that
//! got output. A connection has at most one send in flight: output routed meanwhile waits
//! for its completion; a partial send is resubmitted for the rest. A closed connection is shut down and its buffers are kept
//! until the kernel has completed every operation that points into them.

use std::io::ErrorKind;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use io_uring::{opcode, squeue, types, IoUring};

use crate::routing::Router;
use crate::YardstickError;

const READ_CHUNK: usize = 64 * 1024;
/// Submission queue entries: at most a recv and a send per connection plus the accept.
const RING_ENTRIES: u32 = 1024;
/// Completion queue entries, larger than the most operations ever in flight here.
const COMPLETION_ENTRIES: u32 = 8192;
/// How long a turn waits for a completion before it looks at the stop flag.
const TURN_TIMEOUT: Duration = Duration::from_millis(100);
/// How long a stopping relay waits for the kernel to finish its operations.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// What a completion is for: the low bits of its `user_data`, above them the slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Accept = 0,
    Recv = 1,
    Send = 2,
}

impl Op {
    fn user_data(self, slot: usize) -> u64 {
        ((slot as u64) << 2) | self as u64
    }

    fn decode(user_data: u64) -> (Op, usize) {
        let op = match user_data & 3 {
            0 => Op::Accept,
            1 => Op::Recv,
            _ => Op::Send,
        };
        (op, (user_data >> 2) as usize)
    }
}

/// A relay bound to its address, ready to [`run`](UringRelay::run); the ring is made by
/// the thread that runs it (the ring is set up for a single issuer).
pub struct UringRelay {
    listener: TcpListener,
}

impl UringRelay {
    /// Binds the relay's listener (`127.0.0.1:0` picks a free port).
    pub fn bind(addr: SocketAddr) -> Result<UringRelay, YardstickError> {
        let listener = TcpListener::bind(addr)
            .map_err(|e| YardstickError::io(format!("listen on {addr}"), e))?;
        Ok(UringRelay { listener })
    }

    /// The address the relay listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, YardstickError> {
        self.listener
            .local_addr()
            .map_err(|e| YardstickError::io("read the listener's address", e))
    }

    /// Serves until `stop` is set (checked at least every 100 ms).
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), YardstickError> {
        let mut relay = RingLoop::new(&self.listener)?;
        let served = relay.serve(stop);
        relay.drain();
        served
    }
}

/// One client connection's socket and buffers (its routing is in the [`Router`]).
struct Connection {
    socket: TcpStream,
    input: Vec<u8>,
    input_len: usize,
    /// Output being sent, from `output_pos`; not touched while a send is in flight.
    output: Vec<u8>,
    output_pos: usize,
    recv_in_flight: bool,
    send_in_flight: bool,
    /// Closed for the router; kept until no operation points into the buffers.
    closing: bool,
}

/// The running relay: its ring, connections and routing.
struct RingLoop<'a> {
    ring: IoUring,
    listener: &'a TcpListener,
    connections: Vec<Option<Connection>>,
    router: Router,
    /// Connections whose send completed with more output routed meanwhile.
    send_ready: Vec<usize>,
    routed: Vec<usize>,
    completions: Vec<(u64, i32)>,
    in_flight: usize,
    accept_in_flight: bool,
    /// Sends queued since the last enter.
    sends_queued: usize,
}

impl<'a> RingLoop<'a> {
    fn new(listener: &'a TcpListener) -> Result<RingLoop<'a>, YardstickError> {
        // One thread submits and reaps: the kernel then runs completion work only when the
        // loop enters the ring, instead of interrupting it.
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(COMPLETION_ENTRIES)
            .build(RING_ENTRIES)
            .map_err(|e| YardstickError::io("create the relay's io_uring", e))?;
        Ok(RingLoop {
            ring,
            listener,
            connections: Vec::new(),
            router: Router::new(),
            send_ready: Vec::new(),
            routed: Vec::new(),
            completions: Vec::new(),
            in_flight: 0,
            accept_in_flight: false,
            sends_queued: 0,
        })
    }

    fn serve(&mut self, stop: &AtomicBool) -> Result<(), YardstickError> {
        self.arm_accept()?;
        while !stop.load(Ordering::Relaxed) {
            // Sends to loopback peers with room complete during the submission: waiting for
            // one completion more than the sends queued spares a turn (and an enter) that
            // would find only send completions.
            let want = 1 + self.sends_queued;
            self.sends_queued = 0;
            self.enter(want, TURN_TIMEOUT)?;
            self.completions
                .extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
            let mut completions = std::mem::take(&mut self.completions);
            for &(user_data, result) in &completions {
                self.in_flight -= 1;
                let (op, slot) = Op::decode(user_data);
                match op {
                    Op::Accept => self.accepted(result)?,
                    Op::Recv => self.received(slot, result)?,
                    Op::Send => self.sent(slot, result)?,
                }
            }
            completions.clear();
            self.completions = completions;
            self.send_routed()?;
        }
        Ok(())
    }

    /// Submits what is queued and waits up to `timeout` for a completion.
    fn enter(&mut self, want: usize, timeout: Duration) -> Result<(), YardstickError> {
        let ts = types::Timespec::from(timeout);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(want, &args) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EBUSY)
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(YardstickError::io("io_uring_enter", e)),
        }
    }

    /// Queues an operation, submitting first if the submission queue is full.
    fn push(&mut self, entry: squeue::Entry) -> Result<(), YardstickError> {
        loop {
            // SAFETY: every buffer an entry points into belongs to a connection that is
            // kept (with its buffers untouched) until the entry's completion is reaped.
            if unsafe { self.ring.submission().push(&entry) }.is_ok() {
                self.in_flight += 1;
                return Ok(());
            }
            self.ring
                .submit()
                .map_err(|e| YardstickError::io("io_uring_enter", e))?;
        }
    }

    fn arm_accept(&mut self) -> Result<(), YardstickError> {
        let fd = types::Fd(self.listener.as_raw_fd());
        let entry = opcode::Accept::new(fd, std::ptr::null_mut(), std::ptr::null_mut())
            .build()
            .user_data(Op::Accept.user_data(0));
        self.push(entry)?;
        self.accept_in_flight = true;
        Ok(())
    }

    fn accepted(&mut self, result: i32) -> Result<(), YardstickError> {
        self.accept_in_flight = false;
        if result < 0 {
            let e = std::io::Error::from_raw_os_error(-result);
            return match e.kind() {
                ErrorKind::Interrupted | ErrorKind::ConnectionAborted | ErrorKind::WouldBlock => {
                    self.arm_accept()
                }
                _ => Err(YardstickError::io("accept", e)),
            };
        }
        // SAFETY: a successful accept's result is a new descriptor that nothing else owns.
        let socket = unsafe { TcpStream::from_raw_fd(result) };
        // Nagle would hold small replies back for the previous one's ACK.
        socket
            .set_nodelay(true)
            .map_err(|e| YardstickError::io("set TCP_NODELAY", e))?;
        let slot = self.router.open()?;
        debug_assert_eq!(slot, self.connections.len());
        self.connections.push(Some(Connection {
            socket,
            input: vec![0; READ_CHUNK],
            input_len: 0,
            output: Vec::new(),
            output_pos: 0,
            recv_in_flight: false,
            send_in_flight: false,
            closing: false,
        }));
        self.arm_recv(slot)?;
        self.arm_accept()
    }

    fn arm_recv(&mut self, slot: usize) -> Result<(), YardstickError> {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return Ok(());
        };
        debug_assert!(!conn.recv_in_flight && !conn.closing);
        if conn.input_len == conn.input.len() {
            let grown = conn.input.len() + READ_CHUNK;
            conn.input.resize(grown, 0);
        }
        let free = &mut conn.input[conn.input_len..];
        let len = u32::try_from(free.len()).unwrap_or(u32::MAX);
        let entry = opcode::Recv::new(types::Fd(conn.socket.as_raw_fd()), free.as_mut_ptr(), len)
            .build()
            .user_data(Op::Recv.user_data(slot));
        conn.recv_in_flight = true;
        self.push(entry)
    }

    fn received(&mut self, slot: usize, result: i32) -> Result<(), YardstickError> {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return Ok(());
        };
        conn.recv_in_flight = false;
        if conn.closing {
            self.release_if_idle(slot);
            return Ok(());
        }
        if result == -libc::EINTR || result == -libc::EAGAIN {
            return self.arm_recv(slot);
        }
        if result <= 0 {
            self.close(slot);
            return Ok(());
        }
        conn.input_len += result as usize;
        let len = conn.input_len;
        match self.router.route(slot, &conn.input[..len]) {
            Some(used) => {
                conn.input.copy_within(used..len, 0);
                conn.input_len = len - used;
                self.arm_recv(slot)
            }
            None => {
                self.close(slot);
                Ok(())
            }
        }
    }

    /// Queues one send per connection that got output this turn (or whose previous send
    /// completed with more output waiting).
    fn send_routed(&mut self) -> Result<(), YardstickError> {
        let mut routed = std::mem::take(&mut self.routed);
        self.router.take_dirty(&mut routed);
        routed.append(&mut self.send_ready);
        for &slot in &routed {
            let Some(Some(conn)) = self.connections.get_mut(slot) else {
                continue;
            };
            if conn.closing || conn.send_in_flight {
                continue;
            }
            debug_assert_eq!(conn.output_pos, conn.output.len());
            conn.output.clear();
            conn.output_pos = 0;
            self.router.take_output(slot, &mut conn.output);
            if !conn.output.is_empty() {
                self.arm_send(slot)?;
            }
        }
        self.routed = routed;
        Ok(())
    }

    fn arm_send(&mut self, slot: usize) -> Result<(), YardstickError> {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return Ok(());
        };
        debug_assert!(!conn.send_in_flight && conn.output_pos < conn.output.len());
        let rest = &conn.output[conn.output_pos..];
        let len = u32::try_from(rest.len()).unwrap_or(u32::MAX);
        let entry = opcode::Send::new(types::Fd(conn.socket.as_raw_fd()), rest.as_ptr(), len)
            .build()
            .user_data(Op::Send.user_data(slot));
        conn.send_in_flight = true;
        self.sends_queued += 1;
        self.push(entry)
    }

    fn sent(&mut self, slot: usize, result: i32) -> Result<(), YardstickError> {
        let Some(Some(conn)) = self.connections.get_mut(slot) else {
            return Ok(());
        };
        conn.send_in_flight = false;
        if conn.closing {
            self.release_if_idle(slot);
            return Ok(());
        }
        if result == -libc::EINTR || result == -libc::EAGAIN {
            return self.arm_send(slot);
        }
        if result < 0 {
            self.close(slot);
            return Ok(());
        }
        conn.output_pos += result as usize;
        if conn.output_pos < conn.output.len() {
            return self.arm_send(slot);
        }
        if self.router.close_when_written(slot) {
            self.close(slot);
        } else if self.router.has_output(slot) {
            self.send_ready.push(slot);
        }
        Ok(())
    }

    /// Closes `slot` for the router; the socket is shut down so that operations still in
    /// flight complete, and dropped once none is.
    fn close(&mut self, slot: usize) {
        self.router.close(slot);
        if let Some(Some(conn)) = self.connections.get_mut(slot) {
            conn.closing = true;
            if conn.recv_in_flight || conn.send_in_flight {
                // Already shut down by the peer or broken: nothing to do if this fails.
                let _ = conn.socket.shutdown(Shutdown::Both);
            }
        }
        self.release_if_idle(slot);
    }

    fn release_if_idle(&mut self, slot: usize) {
        if let Some(Some(conn)) = self.connections.get(slot) {
            if conn.closing && !conn.recv_in_flight && !conn.send_in_flight {
                self.connections[slot] = None;
            }
        }
    }

    /// Closes every connection and waits for the kernel to complete what points into their
    /// buffers; buffers still in use after [`DRAIN_TIMEOUT`] are leaked rather than freed.
    fn drain(&mut self) {
        for slot in 0..self.connections.len() {
            if self.connections[slot].as_ref().is_some_and(|c| !c.closing) {
                self.close(slot);
            }
        }
        if self.accept_in_flight {
            let cancel = opcode::AsyncCancel::new(Op::Accept.user_data(0))
                .build()
                .user_data(u64::MAX);
            // Without the cancel the accept stays in flight and the wait below times out.
            let _ = self.push(cancel);
        }
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while self.in_flight > 0 && Instant::now() < deadline {
            if self.enter(1, Duration::from_millis(20)).is_err() {
                break;
            }
            let done: Vec<(u64, i32)> = self
                .ring
                .completion()
                .map(|c| (c.user_data(), c.result()))
                .collect();
            for (user_data, result) in done {
                self.in_flight -= 1;
                if user_data == u64::MAX {
                    continue;
                }
                let (op, slot) = Op::decode(user_data);
                if op == Op::Accept && result >= 0 {
                    // SAFETY: a connection accepted while stopping: its descriptor is ours.
                    drop(unsafe { TcpStream::from_raw_fd(result) });
                }
                if let Some(Some(conn)) = self.connections.get_mut(slot) {
                    match op {
                        Op::Recv => conn.recv_in_flight = false,
                        Op::Send => conn.send_in_flight = false,
                        Op::Accept => {}
                    }
                }
                if op == Op::Accept {
                    self.accept_in_flight = false;
                }
                self.release_if_idle(slot);
            }
        }
        if self.in_flight > 0 {
            for conn in self.connections.drain(..).flatten() {
                std::mem::forget(conn);
            }
        }
    }
}
