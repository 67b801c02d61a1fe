//! What a connection's writer needs of its socket, plain or TLS: a write that takes what
//! the socket takes now without waiting (so the common case arms no timer), and whether
//! written bytes may still sit in the writer until a flush (TLS records do).

use ferry_tls::{TlsConnection, TlsWriter};
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::io::AsyncWrite;
use tokio::net::tcp::OwnedWriteHalf;

/// A socket's writing half.
pub trait SocketWriter: AsyncWrite + Unpin {
    /// Writes what the socket takes now; `WouldBlock` when it takes nothing.
    fn try_write_now(&mut self, buf: &[u8]) -> io::Result<usize>;

    /// True when written bytes may wait in the writer until it is flushed.
    fn buffers(&self) -> bool;
}

impl SocketWriter for OwnedWriteHalf {
    fn try_write_now(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.try_write(buf)
    }

    fn buffers(&self) -> bool {
        false
    }
}

impl<S: TlsConnection> SocketWriter for TlsWriter<S> {
    fn try_write_now(&mut self, buf: &[u8]) -> io::Result<usize> {
        // One poll without a waker: the caller's own write registers one when it waits.
        let mut cx = Context::from_waker(Waker::noop());
        match Pin::new(self).poll_write(&mut cx, buf) {
            Poll::Ready(r) => r,
            Poll::Pending => Err(io::ErrorKind::WouldBlock.into()),
        }
    }

    fn buffers(&self) -> bool {
        true
    }
}
