//! The two I/O tasks of a socket: a reader that routes replies and a writer that
//! batches frames.
//!
//! The reader reads as much as the kernel has (many frames per read), decodes every
//! complete frame and routes it; it also keeps the heartbeat: after the negotiated
//! interval of silence it sends a heartbeat, and after about twice the interval plus
//! slack without any byte from the server it declares the connection broken. The
//! writer sleeps until callers queue frames, then writes everything queued in one go.
//! Either task ending for any reason (EOF, error, protocol violation, runtime shutdown)
//! fails the socket, so no caller waits forever.

use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use ferry_wire::{decode_frame, max_frame_len, pending_frame_len, FrameExpander, HEADER_LEN};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::time::Instant;

use crate::socket::{Routed, Socket};

/// Read-buffer growth step.
const READ_CHUNK: usize = 64 * 1024;
/// Extra silence tolerated beyond two heartbeat intervals.
const HEARTBEAT_SLACK: Duration = Duration::from_secs(5);

/// Fails the socket when a driver task ends, however it ends.
struct FailOnDrop(Arc<Socket>);

impl Drop for FailOnDrop {
    fn drop(&mut self) {
        self.0.fail();
    }
}

/// Spawns the reader and writer of `socket`. `rbuf` holds bytes read past the hello.
pub(crate) fn spawn<R, W>(socket: Arc<Socket>, reader: R, writer: W, rbuf: BytesMut)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    tokio::spawn(read_loop(socket.clone(), reader, rbuf));
    tokio::spawn(write_loop(socket, writer));
}

async fn write_loop<W: AsyncWrite + Unpin>(socket: Arc<Socket>, mut w: W) {
    let guard = FailOnDrop(socket);
    let socket = &guard.0;
    let mut buf = BytesMut::with_capacity(16 * 1024);
    loop {
        match socket.take_output(&mut buf) {
            None => break,
            Some(false) => socket.wake_writer.notified().await,
            Some(true) => {
                // A TLS stream holds records until flushed; a TCP flush does nothing.
                if let Err(e) = w.write_all(&buf).await {
                    tracing::debug!(error = %e, "socket write failed");
                    break;
                }
                if let Err(e) = w.flush().await {
                    tracing::debug!(error = %e, "socket flush failed");
                    break;
                }
            }
        }
    }
    let _ = w.shutdown().await;
}

async fn read_loop<R: AsyncRead + Unpin>(socket: Arc<Socket>, mut r: R, mut rbuf: BytesMut) {
    let guard = FailOnDrop(socket);
    let socket = &guard.0;
    let max_frame = max_frame_len(socket.negotiated.max_msg_length);
    // GET replies may come compressed: never expanded past the negotiated limit.
    let mut expander = FrameExpander::new(socket.negotiated.compression);
    let hb = Duration::from_secs(u64::from(socket.negotiated.heartbeat_interval));
    let mut last_rx = Instant::now();
    let mut heartbeat_sent = false;
    let timer = tokio::time::sleep(hb);
    tokio::pin!(timer);
    loop {
        // Route whatever is complete first (the hello may have brought frames along).
        loop {
            match decode_frame(&mut rbuf, max_frame) {
                Ok(Some(frame)) => {
                    let frame = match expander.expand(frame, max_frame as usize - HEADER_LEN) {
                        Ok((frame, _)) => frame,
                        Err(e) => {
                            tracing::warn!(error = %e, "protocol violation from the queue manager");
                            return;
                        }
                    };
                    if let Routed::Violation = socket.route(frame) {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "protocol violation from the queue manager");
                    return;
                }
            }
        }
        let want = pending_frame_len(&rbuf).map_or(0, |l| l as usize);
        if want > rbuf.len() {
            rbuf.reserve(want - rbuf.len());
        } else if rbuf.capacity() - rbuf.len() < READ_CHUNK / 4 {
            rbuf.reserve(READ_CHUNK);
        }
        tokio::select! {
            biased;
            read = r.read_buf(&mut rbuf) => match read {
                Ok(0) => {
                    tracing::debug!("queue manager closed the socket");
                    return;
                }
                Ok(_) => {
                    last_rx = Instant::now();
                    heartbeat_sent = false;
                }
                Err(e) => {
                    tracing::debug!(error = %e, "socket read failed");
                    return;
                }
            },
            () = socket.shutdown.notified() => {
                if socket.is_closing() {
                    return;
                }
            }
            () = &mut timer, if !hb.is_zero() => {
                let idle = last_rx.elapsed();
                if idle < hb {
                    timer.as_mut().reset(last_rx + hb);
                } else if !heartbeat_sent {
                    socket.send_heartbeat();
                    heartbeat_sent = true;
                    timer.as_mut().reset(last_rx + hb * 2 + HEARTBEAT_SLACK);
                } else if idle >= hb * 2 + HEARTBEAT_SLACK {
                    tracing::warn!(?idle, "no heartbeat from the queue manager");
                    return;
                } else {
                    timer.as_mut().reset(last_rx + hb * 2 + HEARTBEAT_SLACK);
                }
            }
        }
    }
}
