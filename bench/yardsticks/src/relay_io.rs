//! Which I/O the relay does, and a relay of either kind behind one type, so that the
//! `relay` binary, `relay-load --spawn-relay` and the tests choose it by name.

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;

use crate::relay::Relay;
use crate::relay_uring::UringRelay;
use crate::YardstickError;

/// The relay's socket I/O: epoll through `mio` (two ways of reading), or io_uring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelayIo {
    /// Edge-triggered epoll and `recv`/`send` ([`crate::relay`]), reading each readable
    /// connection until `WouldBlock`.
    Mio,
    /// The same, reading only until a short read, as tokio does: the queue manager's
    /// reads ([`Relay::stop_at_short_reads`]).
    MioShortReads,
    /// One io_uring, one `io_uring_enter` per loop turn ([`crate::relay_uring`]).
    Uring,
}

impl RelayIo {
    /// Every kind, in the order the benches alternate them.
    pub const ALL: [RelayIo; 3] = [RelayIo::Mio, RelayIo::MioShortReads, RelayIo::Uring];

    /// The kind's name on command lines and in RESULT lines.
    pub fn name(self) -> &'static str {
        match self {
            RelayIo::Mio => "mio",
            RelayIo::MioShortReads => "mio-short-reads",
            RelayIo::Uring => "uring",
        }
    }
}

impl fmt::Display for RelayIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for RelayIo {
    type Err = YardstickError;

    fn from_str(s: &str) -> Result<RelayIo, YardstickError> {
        RelayIo::ALL
            .into_iter()
            .find(|io| io.name() == s)
            .ok_or_else(|| {
                YardstickError::Usage(format!(
                    "relay I/O '{s}': use mio, mio-short-reads or uring"
                ))
            })
    }
}

/// A bound relay of either kind.
pub enum BoundRelay {
    /// The epoll relay (either way of reading).
    Mio(Box<Relay>),
    /// The io_uring relay.
    Uring(UringRelay),
}

impl BoundRelay {
    /// Binds a relay of kind `io` on `addr` (`127.0.0.1:0` picks a free port).
    pub fn bind(io: RelayIo, addr: SocketAddr) -> Result<BoundRelay, YardstickError> {
        Ok(match io {
            RelayIo::Mio => BoundRelay::Mio(Box::new(Relay::bind(addr)?)),
            RelayIo::MioShortReads => {
                BoundRelay::Mio(Box::new(Relay::bind(addr)?.stop_at_short_reads()))
            }
            RelayIo::Uring => BoundRelay::Uring(UringRelay::bind(addr)?),
        })
    }

    /// The address the relay listens on.
    pub fn local_addr(&self) -> Result<SocketAddr, YardstickError> {
        match self {
            BoundRelay::Mio(r) => r.local_addr(),
            BoundRelay::Uring(r) => r.local_addr(),
        }
    }

    /// Serves until `stop` is set (checked at least every 100 ms).
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), YardstickError> {
        match self {
            BoundRelay::Mio(r) => r.run(stop),
            BoundRelay::Uring(r) => r.run(stop),
        }
    }
}
