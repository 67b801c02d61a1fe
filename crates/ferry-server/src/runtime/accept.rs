//! Accepting sockets, shared by every protocol's listeners: the accept loop, the accept
//! task that a STOP ends at once, the MaxConnections admission of each socket accepted,
//! and what a failed accept does (FRY9782E, a pause that grows, never a busy loop). A
//! protocol only says what to do with a socket admitted ([`accept_tcp`]).

use super::admission::Permit;
use super::server::Server;
use crate::messages;
use ferry_objects::AdminError;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpStream};

/// A listening socket's accept task, and the way to stop it at once.
///
/// Aborting the task closes its socket only when the runtime next drops the task, so a
/// START that follows a STOP in the same batch of commands (`ferry mqsc` sends several
/// ahead) found the port still bound. Stopping shuts the listening socket down first,
/// through a duplicate of its descriptor: it stops listening at once, and as every
/// listening socket Ferry makes has SO_REUSEADDR, the port can be bound again straight
/// away.
pub struct AcceptTask {
    abort: tokio::task::AbortHandle,
    socket: Option<std::os::fd::OwnedFd>,
}

impl AcceptTask {
    /// Runs the accept loop `accept` makes of `listener` as a task.
    pub fn spawn<L, F>(listener: L, accept: impl FnOnce(L) -> F) -> Self
    where
        L: std::os::fd::AsFd,
        F: std::future::Future<Output = ()> + 'static,
    {
        // Without the duplicate (out of descriptors), a stop falls back to the abort.
        let socket = listener.as_fd().try_clone_to_owned().ok();
        let task = tokio::task::spawn_local(accept(listener));
        AcceptTask {
            abort: task.abort_handle(),
            socket,
        }
    }

    /// Stops accepting now and ends the task.
    pub fn stop(self) {
        if let Some(socket) = &self.socket {
            use std::os::fd::AsRawFd;
            // SAFETY: shutdown on a socket descriptor we own (a duplicate of the
            // listener's); it only changes the socket's state.
            unsafe {
                libc::shutdown(socket.as_raw_fd(), libc::SHUT_RDWR);
            }
        }
        self.abort.abort();
    }
}

/// The line `ferry start` shows for a listener or channel that could not start: the
/// FRY message the error log has, without the reason code's prefix.
pub(crate) fn start_failure_line(e: AdminError) -> String {
    match e {
        AdminError::Failed { text, .. } => text,
        other => other.to_string(),
    }
}

/// A permit for a socket just accepted from `peer` on `port`, or `None` (the socket is
/// dropped, so closed) when its address is in CHLAUTH's BLOCKADDR list (FRY9778E) or
/// Limits/MaxConnections are open (FRY9780W).
fn admit(server: &Server, peer: &SocketAddr, port: u16) -> Option<Permit> {
    if super::channel_auth::address_blocked(server, peer.ip(), port) {
        return None;
    }
    let permit = server.admission.admit();
    if permit.is_none() {
        server.error_log.borrow_mut().write(
            &messages::MAX_CONNECTIONS,
            &[&peer.ip(), &port, &server.admission.open()],
        );
    }
    permit
}

/// Accepts TCP sockets on `listener` until the task is stopped: each one admitted (see
/// [`admit`]) is set TCP_NODELAY (replies are small and latency-bound: never wait for
/// Nagle) and handed to `serve` with the peer's address and its admission permit, which
/// the connection holds until it ends. `what` names the listener in FRY9782E.
pub async fn accept_tcp(
    server: std::rc::Rc<Server>,
    listener: TcpListener,
    what: &str,
    mut serve: impl FnMut(TcpStream, SocketAddr, Permit),
) {
    let port = listener.local_addr().map_or(0, |a| a.port());
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                let Some(permit) = admit(&server, &peer, port) else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                serve(stream, peer, permit);
            }
            Err(e) => accept_failed(&server, &listener, &format!("{what} (port {port})"), &e).await,
        }
    }
}

/// After a failed accept on `what`: FRY9782E, a socket shed when out of descriptors, and
/// a pause that grows while accepts keep failing (never a busy loop).
pub async fn accept_failed(
    server: &Server,
    listener: &impl std::os::fd::AsRawFd,
    what: &str,
    error: &std::io::Error,
) {
    let failure = server.admission.accept_failed(listener, error);
    server
        .error_log
        .borrow_mut()
        .write(&messages::ACCEPT_FAILED, &[&what, error]);
    tokio::time::sleep(failure.pause).await;
}
