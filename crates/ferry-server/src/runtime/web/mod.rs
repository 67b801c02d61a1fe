//! The queue manager's HTTP(S) server: health endpoints, the administrative and
//! messaging REST API shaped like IBM MQ's, and whatever other modules plug in.
//!
//! qm.ini `WebServer:` configures it ([`crate::qm_ini::WebServerStanza`]); Port 0 (the
//! default of `ferry create`) means none. The server runs on a thread of its own with its
//! own tokio runtime ([`listener`]): parsing HTTP, TLS handshakes and slow or hostile
//! clients never take the queue manager's thread. Connections are bounded
//! (MaxConnections), bodies (MaxRequestBody), header reads (HeaderReadTimeout), idle
//! keep-alive (IdleTimeout) and whole requests (RequestTimeout) are too.
//!
//! Handlers reach the queue manager only through the [`bridge::EngineBridge`]: a closure
//! sent to the queue manager's thread, run there as one task among its connections, its
//! answer sent back. Authentication ([`auth`]) checks HTTP basic credentials with
//! the queue manager's connection authentication (user repository, PAM or LDAP), or a
//! client certificate when SSL=YES.
//!
//! Routes are pluggable: each [`RouteProvider`] gives an axum router over
//! [`WebContext`]; the runtime lists them where it starts the server (runtime/mod.rs,
//! next to the protocols' endpoints) and [`start`] merges them. A new set of routes
//! (Prometheus `/metrics`, the console) is a module with a provider and one line there.
//! Login sessions ([`session`]) serve the web console ([`console`]) and REST clients
//! that prefer a cookie to sending credentials with every request.

pub(crate) mod admin;
pub(crate) mod auth;
pub(crate) mod bridge;
pub(crate) mod browse;
pub(crate) mod console;
pub(crate) mod errors;
pub(crate) mod health;
pub(crate) mod listener;
pub(crate) mod message_headers;
pub(crate) mod messaging;
pub(crate) mod metrics;
pub(crate) mod session;

use super::server::Server;
use crate::messages;
use bridge::EngineBridge;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

/// Routes over the web server's shared context.
pub(crate) type WebRouter = axum::Router<WebContext>;

/// A set of routes the web server serves: health, the REST API, and later ones such as
/// Prometheus `/metrics`. Providers are listed where the runtime starts the server; each
/// decides its own authentication (the [`auth::Authenticated`] extractor, or none).
pub(crate) trait RouteProvider: Send + Sync {
    /// What the routes are, for logs and conflicts.
    fn name(&self) -> &'static str;
    /// The routes, merged with every other provider's (paths must not overlap).
    fn routes(&self) -> WebRouter;
}

/// What every handler shares: the queue manager's name, the bridge to its thread and
/// the server's limits. Cheap to clone.
#[derive(Clone)]
pub(crate) struct WebContext {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    qmgr: String,
    bridge: EngineBridge,
    limits: WebLimits,
    sessions: session::Sessions,
    secure: bool,
    console: console::ConsoleState,
}

impl WebContext {
    /// The queue manager's name.
    pub(crate) fn qmgr(&self) -> &str {
        &self.inner.qmgr
    }

    /// Runs closures on the queue manager's thread.
    pub(crate) fn bridge(&self) -> &EngineBridge {
        &self.inner.bridge
    }

    /// The server's limits.
    pub(crate) fn limits(&self) -> &WebLimits {
        &self.inner.limits
    }

    /// The live login sessions.
    pub(crate) fn sessions(&self) -> &session::Sessions {
        &self.inner.sessions
    }

    /// Whether the server runs HTTPS (cookies are then Secure).
    pub(crate) fn secure(&self) -> bool {
        self.inner.secure
    }

    /// What the web console keeps between requests.
    pub(crate) fn console(&self) -> &console::ConsoleState {
        &self.inner.console
    }
}

/// The bounds of qm.ini WebServer, as the server applies them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WebLimits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Bytes of a request body.
    pub max_request_body: usize,
    /// Time to send a request's headers (and complete a TLS handshake).
    pub header_read_timeout: Duration,
    /// Time an idle keep-alive connection stays open.
    pub idle_timeout: Duration,
    /// Time one request may take.
    pub request_timeout: Duration,
}

impl WebLimits {
    fn from_ini(web: &crate::qm_ini::WebServerStanza) -> Self {
        WebLimits {
            max_connections: usize::try_from(web.max_connections).unwrap_or(32).max(1),
            max_request_body: usize::try_from(web.max_request_body).unwrap_or(4 << 20),
            header_read_timeout: Duration::from_secs(web.header_read_timeout.max(1)),
            idle_timeout: Duration::from_secs(web.idle_timeout.max(1)),
            request_timeout: Duration::from_secs(web.request_timeout.max(1)),
        }
    }
}

/// The running web server: dropping it stops accepting and ends the bridge.
pub(crate) struct WebServer {
    stop: Option<tokio::sync::watch::Sender<bool>>,
    bridge_task: tokio::task::JoinHandle<()>,
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(true);
        }
        self.bridge_task.abort();
    }
}

/// The route providers Ferry has, in the order they are merged. A new set of routes
/// (e.g. Prometheus `/metrics`) adds its provider to this list.
pub(crate) fn providers() -> Vec<Box<dyn RouteProvider>> {
    vec![
        Box::new(health::Health),
        Box::new(admin::AdminApi),
        Box::new(messaging::MessagingApi),
        Box::new(metrics::Metrics),
        Box::new(session::LoginApi),
        Box::new(console::Console),
    ]
}

/// Starts the web server qm.ini WebServer asks for, with `providers`' routes: `Ok(None)`
/// when Port is 0. A port that cannot be bound, or SSL=YES without a usable certificate,
/// is logged (FRY9783E) and returned as that line for `ferry start` to show; the queue
/// manager runs on. Runs on the queue manager's thread (inside its `LocalSet`).
pub(crate) fn start(
    server: &Rc<Server>,
    providers: Vec<Box<dyn RouteProvider>>,
) -> Result<Option<WebServer>, String> {
    let web = &server.ini.web;
    if web.port == 0 {
        return Ok(None);
    }
    let host = web.bind_address.trim();
    // An IPv6 address is bracketed before its port ("[::]:9443").
    let address = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{}", web.port)
    } else {
        format!("{host}:{}", web.port)
    };
    let fail = |why: &dyn std::fmt::Display| {
        server
            .error_log
            .borrow_mut()
            .write(&messages::WEB_SERVER_FAILED, &[&server.name, &address, why])
    };
    if web.ssl {
        if let Err(why) = listener::check_tls(server) {
            return Err(fail(&why));
        }
    }
    let limits = WebLimits::from_ini(web);
    let (bridge, jobs) = EngineBridge::new(limits.max_connections * 2);
    let tls = web.ssl.then(|| listener::TlsSource::new(bridge.clone()));
    let bridge_task = tokio::task::spawn_local(bridge::serve_jobs(server.clone(), jobs));
    let context = WebContext {
        inner: Arc::new(ContextInner {
            qmgr: server.name.clone(),
            bridge,
            limits,
            sessions: session::Sessions::new(Duration::from_secs(web.session_timeout.max(1))),
            secure: web.ssl,
            console: console::ConsoleState::default(),
        }),
    };
    let router = match merged(&providers) {
        Ok(r) => r,
        Err(why) => {
            bridge_task.abort();
            return Err(fail(&why));
        }
    };
    let app = router
        .fallback(errors::not_found)
        .layer(axum::extract::DefaultBodyLimit::max(
            limits.max_request_body,
        ))
        .with_state(context);
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let scheme = if tls.is_some() { "HTTPS" } else { "HTTP" };
    // The web thread binds (tokio's listener: SO_REUSEADDR, as the other listeners) and
    // says whether it could before it serves; start waits for that moment only.
    let (bound_tx, bound_rx) = std::sync::mpsc::channel();
    let bind_to = address.clone();
    let spawned = std::thread::Builder::new()
        .name("ferry-web".into())
        .spawn(move || listener::run(&bind_to, tls, app, limits, stopped, bound_tx));
    let bound = match spawned {
        Err(e) => Err(e.to_string()),
        Ok(_) => bound_rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|e| Err(format!("the web server thread did not start: {e}"))),
    };
    if let Err(why) = bound {
        bridge_task.abort();
        return Err(fail(&why));
    }
    server.error_log.borrow_mut().write(
        &messages::WEB_SERVER_STARTED,
        &[&server.name, &scheme, &address],
    );
    Ok(Some(WebServer {
        stop: Some(stop),
        bridge_task,
    }))
}

/// Every provider's routes in one router. Two providers that claim the same path are a
/// programming error axum reports by panicking: it is caught and returned (the web server
/// then does not start, FRY9783E) rather than taking the queue manager down.
fn merged(providers: &[Box<dyn RouteProvider>]) -> Result<WebRouter, String> {
    let mut router = WebRouter::new();
    for provider in providers {
        let routes = provider.routes();
        let name = provider.name();
        router =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || router.merge(routes)))
                .map_err(|_| format!("the routes of '{name}' overlap routes already served"))?;
    }
    Ok(router)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_provider_merges_and_overlaps_are_refused() {
        let providers = providers();
        let mut names: Vec<&str> = providers.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), providers.len(), "provider names are unique");
        assert!(merged(&providers).is_ok());
        let twice: Vec<Box<dyn RouteProvider>> =
            vec![Box::new(health::Health), Box::new(health::Health)];
        let Err(err) = merged(&twice) else {
            panic!("an overlap is refused")
        };
        assert!(err.contains("health"), "{err}");
    }
}
