//! TCP listeners (LISTENER objects) and the bindings Unix socket.
//!
//! START LISTENER binds at once, so a port in use is reported to the administrator by
//! the command itself; the accept loop then runs as a task until STOP LISTENER or the
//! end of the queue manager. Connections already accepted are not affected by a stop.

use super::socket::{self, Transport};
use super::Svrconns;
use crate::lifecycle::PublishedListener;
use crate::messages;
use crate::runtime::accept::{accept_failed, accept_tcp, start_failure_line, AcceptTask};
use crate::runtime::clock;
use crate::runtime::endpoints::ListenerEndpoints;
use crate::runtime::server::Server;
use crate::runtime::tls::{self, Accepted};
use ferry_objects::listener::ListenerControl;
use ferry_objects::status::ListenerStatus;
use ferry_objects::AdminError;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::{Rc, Weak};

/// A listener that is running.
struct RunningListener {
    /// Port bound.
    port: u16,
    /// Address bound.
    ip_address: String,
    /// When it started, ms since epoch.
    started_ms: u64,
    /// Stops its accept loop.
    accept: AcceptTask,
}

/// The native protocol's LISTENER objects: the ones running, by name, and how to start
/// and stop them (the command server reaches them through [`ListenerEndpoints`]).
pub struct NativeListeners {
    server: Weak<Server>,
    svrconns: Rc<Svrconns>,
    running: RefCell<BTreeMap<String, RunningListener>>,
}

impl NativeListeners {
    /// No listener running yet, for the server `server` will point at; the sockets they
    /// accept are kept in `svrconns`.
    pub fn new(server: &Weak<Server>, svrconns: Rc<Svrconns>) -> Self {
        NativeListeners {
            server: server.clone(),
            svrconns,
            running: RefCell::new(BTreeMap::new()),
        }
    }

    fn server(&self) -> Result<Rc<Server>, AdminError> {
        self.server.upgrade().ok_or_else(|| AdminError::Failed {
            reason: ferry_mqi::ReasonCode::QMgrStopping,
            text: "the queue manager is ending".to_string(),
        })
    }
}

impl ListenerEndpoints for NativeListeners {
    fn start(&self, name: &str) -> Result<(), AdminError> {
        let server = self.server()?;
        let def = server
            .engine
            .borrow()
            .listener(name)
            .ok_or_else(|| AdminError::NotFound {
                name: name.to_string(),
            })?;
        if self.is_running(name) {
            return Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::ObjectInUse,
                text: format!("listener {name} is already running"),
            });
        }
        let port = def.effective_port();
        let ip = def.attributes.ip_address.trim().to_string();
        let host = if ip.is_empty() {
            "0.0.0.0".to_string()
        } else {
            ip.clone()
        };
        let std_listener = std::net::TcpListener::bind((host.as_str(), port)).map_err(|e| {
            let line = server
                .error_log
                .borrow_mut()
                .write(&messages::LISTENER_FAILED, &[&name, &port, &e]);
            AdminError::Failed {
                reason: ferry_mqi::ReasonCode::ResourceProblem,
                text: line,
            }
        })?;
        let bound_port = std_listener.local_addr().map(|a| a.port()).unwrap_or(port);
        std_listener
            .set_nonblocking(true)
            .map_err(|e| AdminError::Invalid(e.to_string()))?;
        let listener = tokio::net::TcpListener::from_std(std_listener)
            .map_err(|e| AdminError::Invalid(e.to_string()))?;
        let keep_alive = server.ini.tcp.keep_alive;
        let svrconns = self.svrconns.clone();
        let what = format!("listener {name}");
        let accept = AcceptTask::spawn(listener, |l| {
            serve_tcp(server.clone(), svrconns, l, what, keep_alive)
        });
        self.running.borrow_mut().insert(
            name.to_string(),
            RunningListener {
                port: bound_port,
                ip_address: ip,
                started_ms: clock::now().0,
                accept,
            },
        );
        server
            .error_log
            .borrow_mut()
            .write(&messages::LISTENER_STARTED, &[&name, &bound_port]);
        server.publish_status();
        Ok(())
    }

    fn stop(&self, name: &str) -> Result<(), AdminError> {
        let server = self.server()?;
        if server.engine.borrow().listener(name).is_none() {
            return Err(AdminError::NotFound {
                name: name.to_string(),
            });
        }
        let running = self.running.borrow_mut().remove(name);
        match running {
            Some(l) => {
                l.accept.stop();
                server
                    .error_log
                    .borrow_mut()
                    .write(&messages::LISTENER_ENDED, &[&name]);
                server.publish_status();
                Ok(())
            }
            None => Err(AdminError::Failed {
                reason: ferry_mqi::ReasonCode::ObjectInUse,
                text: format!("listener {name} is not running"),
            }),
        }
    }

    fn is_running(&self, name: &str) -> bool {
        self.running.borrow().contains_key(name)
    }

    fn status(&self, name: &str) -> Option<ListenerStatus> {
        let def = self.server.upgrade()?.engine.borrow().listener(name)?;
        let running = self.running.borrow();
        Some(match running.get(name) {
            Some(l) => ListenerStatus {
                name: name.to_string(),
                running: true,
                port: l.port,
                ip_address: l.ip_address.clone(),
                started_ms: Some(l.started_ms),
            },
            None => ListenerStatus {
                name: name.to_string(),
                running: false,
                port: def.effective_port(),
                ip_address: def.attributes.ip_address.clone(),
                started_ms: None,
            },
        })
    }

    fn published(&self) -> Vec<PublishedListener> {
        self.running
            .borrow()
            .iter()
            .map(|(name, l)| PublishedListener {
                name: name.clone(),
                port: l.port,
            })
            .collect()
    }

    fn start_all(&self) -> Vec<String> {
        let Some(server) = self.server.upgrade() else {
            return Vec::new();
        };
        let auto_start: Vec<String> = server
            .engine
            .borrow()
            .listeners()
            .into_iter()
            .filter(|l| l.attributes.control != ListenerControl::Manual)
            .map(|l| l.name)
            .collect();
        // A listener that cannot bind is in the error log (FRY9212E); the queue manager
        // runs on, as MQ's does, and START LISTENER can retry. `ferry start` shows the
        // failure on the terminal and exits non-zero.
        auto_start
            .iter()
            .filter_map(|l| self.start(l).err())
            .map(start_failure_line)
            .collect()
    }

    fn stop_all(&self) {
        for (_, l) in std::mem::take(&mut *self.running.borrow_mut()) {
            l.accept.stop();
        }
    }
}

/// Serves the native protocol on every socket `listener` (named `what` in errors)
/// accepts, with SO_KEEPALIVE when `keep_alive`.
async fn serve_tcp(
    server: Rc<Server>,
    svrconns: Rc<Svrconns>,
    listener: tokio::net::TcpListener,
    what: String,
    keep_alive: bool,
) {
    accept_tcp(server.clone(), listener, &what, |stream, peer, permit| {
        if keep_alive {
            if let Err(e) = socket2_keepalive(&stream) {
                tracing::debug!("SO_KEEPALIVE: {e}");
            }
        }
        let server = server.clone();
        let svrconns = svrconns.clone();
        tokio::task::spawn_local(async move {
            let _permit = permit;
            let peer = peer.ip().to_string();
            // HandshakeTimeout runs from the accept, the TLS handshake included.
            let deadline = tokio::time::Instant::now() + server.ini.limits.handshake_timeout();
            match tls::accept_native(&server, stream, &peer, deadline).await {
                Some(Accepted::Plain(stream)) => {
                    let (r, w) = stream.into_split();
                    let transport = Transport::Tcp { peer, tls: None };
                    socket::serve(server, svrconns, r, w, transport, deadline).await;
                }
                Some(Accepted::Tls(stream, mut session)) => {
                    let (r, w) = tls::split(&server, *stream, &mut session);
                    let tls = Some(Rc::new(session));
                    let transport = Transport::Tcp { peer, tls };
                    socket::serve(server, svrconns, r, w, transport, deadline).await;
                }
                None => {}
            }
        });
    })
    .await;
}

fn socket2_keepalive(stream: &tokio::net::TcpStream) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: setsockopt on a valid socket fd with a correctly sized int option.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_KEEPALIVE,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Accepts bindings connections on the queue manager's Unix socket.
pub async fn accept_bindings(
    server: Rc<Server>,
    svrconns: Rc<Svrconns>,
    listener: tokio::net::UnixListener,
) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let credentials = stream.peer_cred().ok();
                let pid = credentials
                    .and_then(|c| c.pid())
                    .and_then(|p| u32::try_from(p).ok());
                let user = credentials
                    .and_then(|c| nix::unistd::User::from_uid(c.uid().into()).ok().flatten())
                    .map(|u| u.name);
                let (r, w) = stream.into_split();
                let deadline = tokio::time::Instant::now() + server.ini.limits.handshake_timeout();
                tokio::task::spawn_local(socket::serve(
                    server.clone(),
                    svrconns.clone(),
                    r,
                    w,
                    Transport::Bindings { pid, user },
                    deadline,
                ));
            }
            Err(e) => accept_failed(&server, &listener, "the bindings socket", &e).await,
        }
    }
}
