//! The web server's thread: accepts HTTP(S) connections and serves them with hyper,
//! within the bounds of qm.ini WebServer, on a tokio runtime of its own.
//!
//! Nothing here touches the queue manager: a slow or hostile HTTP client costs this
//! thread a task and a connection slot, never the queue manager's thread. At most
//! MaxConnections are served at once (the rest wait in the backlog); a client has
//! HeaderReadTimeout to complete its TLS handshake and each request's headers; a
//! keep-alive connection without a request for IdleTimeout is closed; a request that
//! takes longer than RequestTimeout is answered 503 and its connection closed.

use super::super::server::Server;
use super::bridge::EngineBridge;
use super::WebLimits;
use axum::body::Body;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Semaphore};
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

/// Who is at the other end of a connection: put into every request's extensions.
#[derive(Clone, Debug)]
pub(crate) struct Peer {
    /// The client's address.
    pub address: SocketAddr,
    /// With SSL=YES, the common name of the client certificate the key repository's
    /// trust verified, when one was presented.
    pub certificate_user: Option<String>,
}

/// The queue manager's own TLS configuration (as its channels' handshakes get it): its
/// certificate (CERTLABL) from its key repository, client certificates verified by its
/// trust when presented.
fn base_tls_config(server: &Server) -> Result<Arc<rustls::ServerConfig>, String> {
    let label = server
        .engine
        .borrow()
        .qmgr()
        .certificate_label(&server.name);
    let settings = ferry_tls::ChannelTls {
        cipher: None,
        client_auth_required: false,
        label,
    };
    server
        .tls
        .borrow()
        .config(&settings)
        .map_err(|e| e.to_string())
}

/// Checks at start that HTTPS can be served (the certificate is there).
pub(super) fn check_tls(server: &Server) -> Result<(), String> {
    base_tls_config(server).map(|_| ())
}

/// Where HTTPS handshakes take their configuration: the queue manager's key repository as
/// it is now, asked of the queue manager's thread for each connection (REFRESH SECURITY
/// TYPE(SSL) applies to the next handshake), with HTTP/1.1 as its protocol. The last good
/// one serves when the repository has become unusable.
#[derive(Clone)]
pub(super) struct TlsSource {
    bridge: EngineBridge,
    /// The queue manager's configuration last seen, and the same with ALPN set.
    last: Arc<Mutex<Option<SeenConfig>>>,
}

/// The queue manager's TLS configuration as last seen, and what HTTPS serves from it.
type SeenConfig = (Arc<rustls::ServerConfig>, Arc<rustls::ServerConfig>);

impl TlsSource {
    /// A source asking through `bridge`.
    pub(super) fn new(bridge: EngineBridge) -> Self {
        TlsSource {
            bridge,
            last: Arc::new(Mutex::new(None)),
        }
    }

    /// The configuration for the next handshake; `None` when there has never been one.
    async fn config(&self) -> Option<Arc<rustls::ServerConfig>> {
        let asked = self
            .bridge
            .run(|server| async move { base_tls_config(&server) })
            .await;
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Ok(Ok(base)) = asked {
            match last.as_ref() {
                Some((seen, served)) if Arc::ptr_eq(seen, &base) => return Some(served.clone()),
                _ => {
                    let mut config = (*base).clone();
                    config.alpn_protocols = vec![b"http/1.1".to_vec()];
                    let served = Arc::new(config);
                    *last = Some((base, served.clone()));
                    return Some(served);
                }
            }
        }
        last.as_ref().map(|(_, served)| served.clone())
    }
}

/// The thread's body: binds `address`, says whether it could on `bound`, then serves
/// until `stop` says true (or the queue manager's process ends).
pub(super) fn run(
    address: &str,
    tls: Option<TlsSource>,
    app: axum::Router,
    limits: WebLimits,
    mut stop: watch::Receiver<bool>,
    bound: std::sync::mpsc::Sender<Result<(), String>>,
) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let _ = bound.send(Err(e.to_string()));
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::bind(address).await {
            Ok(l) => l,
            Err(e) => {
                let _ = bound.send(Err(e.to_string()));
                return;
            }
        };
        let _ = bound.send(Ok(()));
        let acceptor = tls;
        let slots = Arc::new(Semaphore::new(limits.max_connections));
        loop {
            let slot = tokio::select! {
                s = slots.clone().acquire_owned() => match s {
                    Ok(s) => s,
                    Err(_) => break,
                },
                _ = stop.changed() => break,
            };
            let accepted = tokio::select! {
                a = listener.accept() => a,
                _ = stop.changed() => break,
            };
            let (stream, address) = match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of descriptors, or the peer went before accept: pause, go on.
                    tracing::debug!("web server accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let _ = stream.set_nodelay(true);
            let app = app.clone();
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                connection(stream, address, acceptor, app, limits).await;
                drop(slot);
            });
        }
    });
}

/// One connection: the TLS handshake (bounded by HeaderReadTimeout), then HTTP/1.1.
async fn connection(
    stream: TcpStream,
    address: SocketAddr,
    acceptor: Option<TlsSource>,
    app: axum::Router,
    limits: WebLimits,
) {
    let Some(acceptor) = acceptor else {
        let peer = Peer {
            address,
            certificate_user: None,
        };
        return serve(stream, peer, app, limits).await;
    };
    let handshake = async {
        let config = acceptor
            .config()
            .await
            .ok_or_else(|| std::io::Error::other("the key repository has no usable certificate"))?;
        TlsAcceptor::from(config).accept(stream).await
    };
    let tls = match tokio::time::timeout(limits.header_read_timeout, handshake).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(e)) => {
            tracing::debug!("web server TLS handshake with {address} failed: {e}");
            return;
        }
        Err(_) => return,
    };
    let certificate_user = tls
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|chain| chain.first())
        .and_then(ferry_tls::PeerCertificate::from_der)
        .and_then(|c| {
            c.subject
                .attributes
                .iter()
                .find(|(a, _)| *a == ferry_security::peer_name::DnAttribute::CommonName)
                .map(|(_, v)| v.clone())
        });
    let peer = Peer {
        address,
        certificate_user,
    };
    serve(tls, peer, app, limits).await;
}

/// Serves HTTP/1.1 on `io` until the client closes, stays idle for IdleTimeout, or a
/// request overruns RequestTimeout.
async fn serve<IO>(io: IO, peer: Peer, app: axum::Router, limits: WebLimits)
where
    IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let started = Instant::now();
    let activity = Arc::new(Activity {
        in_flight: AtomicUsize::new(0),
        last_ms: AtomicU64::new(0),
    });
    let seen = activity.clone();
    let request_timeout = limits.request_timeout;
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(peer.clone());
        let app = app.clone();
        let seen = seen.clone();
        seen.in_flight.fetch_add(1, Ordering::Relaxed);
        async move {
            let answer =
                tokio::time::timeout(request_timeout, app.oneshot(request.map(Body::new))).await;
            seen.last_ms.store(elapsed_ms(started), Ordering::Relaxed);
            seen.in_flight.fetch_sub(1, Ordering::Relaxed);
            match answer {
                Ok(Ok(response)) => Ok::<_, std::convert::Infallible>(response),
                Ok(Err(never)) => match never {},
                Err(_) => Ok(super::errors::timed_out()),
            }
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(64 * 1024)
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(connection);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let idle_ms = u64::try_from(limits.idle_timeout.as_millis()).unwrap_or(u64::MAX);
    let mut closing = false;
    loop {
        tokio::select! {
            _ = connection.as_mut() => break,
            _ = tick.tick() => {
                let idle = activity.in_flight.load(Ordering::Relaxed) == 0
                    && elapsed_ms(started)
                        .saturating_sub(activity.last_ms.load(Ordering::Relaxed))
                        >= idle_ms;
                if idle && !closing {
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                } else if closing {
                    // A client that does not close after the shutdown is dropped.
                    break;
                }
            }
        }
    }
}

/// What the idle check of one connection sees.
struct Activity {
    /// Requests being answered.
    in_flight: AtomicUsize,
    /// When the last request ended (ms since the connection began).
    last_ms: AtomicU64,
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
