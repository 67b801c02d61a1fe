//! A TLS stream split into a reader and a writer that share it, counting the bytes that
//! cross it and resetting the secret key every SSLRKEYC bytes.
//!
//! Ferry's connections run on one thread (tokio's LocalSet), with a reader task and a
//! writer task per socket. The two halves share the stream through an `Rc<RefCell<_>>`
//! that is borrowed only inside a poll, never across an await, so no lock is taken.
//!
//! SSLRKEYC counts plaintext sent and received; when the count passes it on a TLS 1.3
//! conversation, the half that passed it asks rustls for a key update (a KeyUpdate that
//! also asks the partner to update), and [`TlsCounters::key_resets`] (DISPLAY CHSTATUS
//! SSLRKEYS) grows. TLS 1.2 has no key update without renegotiation, which Ferry does not
//! do: there SSLRKEYC has no effect.

use std::cell::{Cell, RefCell};
use std::io;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// What the split needs of a TLS stream, client or server.
pub trait TlsConnection: AsyncRead + AsyncWrite + Unpin {
    /// The connection's state (negotiated suite, peer certificates).
    fn state(&self) -> &rustls::CommonState;
    /// Queues a key update for the next write.
    fn refresh_traffic_keys(&mut self) -> Result<(), rustls::Error>;
}

impl<IO: AsyncRead + AsyncWrite + Unpin> TlsConnection for tokio_rustls::server::TlsStream<IO> {
    fn state(&self) -> &rustls::CommonState {
        self.get_ref().1
    }
    fn refresh_traffic_keys(&mut self) -> Result<(), rustls::Error> {
        self.get_mut().1.refresh_traffic_keys()
    }
}

impl<IO: AsyncRead + AsyncWrite + Unpin> TlsConnection for tokio_rustls::client::TlsStream<IO> {
    fn state(&self) -> &rustls::CommonState {
        self.get_ref().1
    }
    fn refresh_traffic_keys(&mut self) -> Result<(), rustls::Error> {
        self.get_mut().1.refresh_traffic_keys()
    }
}

/// MQ's rule for SSLRKEYC: 0 never, 1 to 32,767 mean 32 KB, larger values as given.
pub fn key_reset_bytes(sslrkeyc: i64) -> u64 {
    match sslrkeyc {
        i64::MIN..=0 => 0,
        1..=32_767 => 32 * 1024,
        n => n as u64,
    }
}

/// Bytes and key resets of one TLS conversation.
#[derive(Debug, Default)]
pub struct TlsCounters {
    reset_every: u64,
    since_reset: Cell<u64>,
    resets: Cell<u64>,
}

impl TlsCounters {
    /// Secret-key resets done so far (SSLRKEYS).
    pub fn key_resets(&self) -> u64 {
        self.resets.get()
    }

    /// Counts `n` bytes; true when a key reset is due.
    fn count(&self, n: usize) -> bool {
        if self.reset_every == 0 {
            return false;
        }
        let since = self.since_reset.get() + n as u64;
        self.since_reset.set(since);
        since >= self.reset_every
    }
}

struct Shared<S> {
    stream: RefCell<S>,
    counters: Rc<TlsCounters>,
}

impl<S: TlsConnection> Shared<S> {
    fn counted(&self, stream: &mut S, n: usize) {
        if !self.counters.count(n) {
            return;
        }
        self.counters.since_reset.set(0);
        let tls13 = stream.state().protocol_version() == Some(rustls::ProtocolVersion::TLSv1_3);
        if tls13 && stream.refresh_traffic_keys().is_ok() {
            self.counters.resets.set(self.counters.resets.get() + 1);
        }
    }
}

/// The reading half.
pub struct TlsReader<S>(Rc<Shared<S>>);

/// The writing half.
pub struct TlsWriter<S>(Rc<Shared<S>>);

/// Splits `stream`, resetting its key every `reset_every` bytes (0: never; see
/// [`key_reset_bytes`]).
pub fn split<S: TlsConnection>(
    stream: S,
    reset_every: u64,
) -> (TlsReader<S>, TlsWriter<S>, Rc<TlsCounters>) {
    let counters = Rc::new(TlsCounters {
        reset_every,
        ..TlsCounters::default()
    });
    let shared = Rc::new(Shared {
        stream: RefCell::new(stream),
        counters: counters.clone(),
    });
    (TlsReader(shared.clone()), TlsWriter(shared), counters)
}

impl<S: TlsConnection> AsyncRead for TlsReader<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let shared = &self.0;
        let mut stream = shared.stream.borrow_mut();
        let before = buf.filled().len();
        let polled = Pin::new(&mut *stream).poll_read(cx, buf);
        let n = buf.filled().len() - before;
        if n > 0 {
            shared.counted(&mut stream, n);
        }
        polled
    }
}

impl<S: TlsConnection> AsyncWrite for TlsWriter<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let shared = &self.0;
        let mut stream = shared.stream.borrow_mut();
        let polled = Pin::new(&mut *stream).poll_write(cx, buf);
        if let Poll::Ready(Ok(n)) = polled {
            shared.counted(&mut stream, n);
        }
        polled
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let shared = &self.0;
        let mut stream = shared.stream.borrow_mut();
        let polled = Pin::new(&mut *stream).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            shared.counted(&mut stream, n);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.0.stream.borrow().is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.stream.borrow_mut()).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.0.stream.borrow_mut()).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sslrkeyc_follows_mqs_rule() {
        assert_eq!(key_reset_bytes(0), 0);
        assert_eq!(key_reset_bytes(1), 32 * 1024);
        assert_eq!(key_reset_bytes(32_767), 32 * 1024);
        assert_eq!(key_reset_bytes(32_768), 32_768);
        assert_eq!(key_reset_bytes(1_048_576), 1_048_576);
    }

    #[test]
    fn counters_say_when_a_reset_is_due() {
        let c = TlsCounters {
            reset_every: 100,
            ..TlsCounters::default()
        };
        assert!(!c.count(60));
        assert!(c.count(40));
        let never = TlsCounters::default();
        assert!(!never.count(usize::MAX / 2));
    }
}
