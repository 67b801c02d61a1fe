//! Login sessions, as IBM MQ's REST API and console have them:
//!
//! - `POST /ibmmq/rest/v2/login` with `{"username":..,"password":..}`: the credentials
//!   are checked by connection authentication as basic credentials are; 204 and an
//!   `LtpaToken2` cookie (HttpOnly, SameSite=Strict, Secure with SSL=YES) naming a
//!   new session;
//! - `GET /ibmmq/rest/v2/login`: the session's user, `{"user":[{"name":..,"role":[..]}]}`;
//! - `DELETE /ibmmq/rest/v2/login`: ends the session and expires the cookie.
//!
//! A session is 32 random bytes (the operating system's generator) held in this
//! process's memory only, with its user; it ends after qm.ini WebServer SessionTimeout
//! without a request, at logout, or when the queue manager stops. Tokens are never
//! logged. A request carrying the cookie is authenticated as its user
//! ([`super::auth::Authenticated`]); one that changes something still needs the CSRF
//! header, which a cross-site form or script cannot send.

use super::auth::{check_password, Authenticated};
use super::errors::{self, RestError};
use super::listener::Peer;
use super::{RouteProvider, WebContext, WebRouter};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The session cookie's name, as IBM MQ's mqweb names it.
pub(crate) const COOKIE: &str = "LtpaToken2";

/// The login path (MQ's).
pub(crate) const LOGIN_PATH: &str = "/ibmmq/rest/v2/login";

/// At most this many sessions live at once; the least recently used goes first.
const MAX_SESSIONS: usize = 10_000;

/// One logged-in user.
#[derive(Clone, Debug)]
struct Session {
    user: String,
    administrator: bool,
    last_used: Instant,
}

/// The live sessions of this web server, keyed by token (cheap to clone, shared).
#[derive(Clone)]
pub(crate) struct Sessions {
    inner: Arc<Mutex<HashMap<String, Session>>>,
    idle: Duration,
}

impl Sessions {
    /// No sessions yet; each ends after `idle` without a request.
    pub(crate) fn new(idle: Duration) -> Self {
        Sessions {
            inner: Arc::new(Mutex::new(HashMap::new())),
            idle,
        }
    }

    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new session for `user`: its token.
    pub(crate) fn open(&self, user: String, administrator: bool) -> Result<String, RestError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes)
            .map_err(|e| errors::unavailable(2195, format!("no random bytes: {e}")))?;
        let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        let now = Instant::now();
        let mut table = self.table();
        table.retain(|_, s| now.duration_since(s.last_used) < self.idle);
        if table.len() >= MAX_SESSIONS {
            if let Some(oldest) = table
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(t, _)| t.clone())
            {
                table.remove(&oldest);
            }
        }
        table.insert(
            token.clone(),
            Session {
                user,
                administrator,
                last_used: now,
            },
        );
        debug_assert!(table.len() <= MAX_SESSIONS);
        Ok(token)
    }

    /// The user of the live session `token` (and whether an administrator); using it
    /// restarts its idle time. An expired session is removed.
    pub(crate) fn user(&self, token: &str) -> Option<(String, bool)> {
        let now = Instant::now();
        let mut table = self.table();
        let session = table.get_mut(token)?;
        if now.duration_since(session.last_used) >= self.idle {
            table.remove(token);
            return None;
        }
        session.last_used = now;
        Some((session.user.clone(), session.administrator))
    }

    /// Ends the session `token`, if it lives.
    pub(crate) fn close(&self, token: &str) {
        self.table().remove(token);
    }
}

/// The session token a request's `Cookie` headers carry, if any.
pub(crate) fn token_of(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|v| !v.is_empty() && v.len() <= 128)
}

/// The `Set-Cookie` value that names `token` (or, with `None`, expires the cookie).
pub(crate) fn cookie(token: Option<&str>, secure: bool) -> HeaderValue {
    let secure = if secure { "; Secure" } else { "" };
    let text = match token {
        Some(t) => format!("{COOKIE}={t}; Path=/; HttpOnly; SameSite=Strict{secure}"),
        None => format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    // The token is URL-safe base64: always a valid header value.
    HeaderValue::from_str(&text).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The login routes.
pub(crate) struct LoginApi;

impl RouteProvider for LoginApi {
    fn name(&self) -> &'static str {
        "login sessions"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new().route(LOGIN_PATH, get(whoami).post(login).delete(logout))
    }
}

/// Checks `user` and `password` as basic credentials are checked and opens a session:
/// its token. 401 when refused.
pub(crate) async fn log_in(
    ctx: &WebContext,
    peer: Option<&Peer>,
    user: String,
    password: String,
) -> Result<String, RestError> {
    if user.is_empty() || user.len() > 1024 || user.chars().any(char::is_control) {
        return Err(errors::unauthenticated());
    }
    let address = peer.map(|p| p.address.ip().to_string()).unwrap_or_default();
    let proved = ctx
        .bridge()
        .run(move |server| async move { check_password(&server, user, password, address).await })
        .await
        .map_err(|e| errors::unavailable(2162, e.to_string()))?;
    let (user, administrator) = proved.ok_or_else(errors::unauthenticated)?;
    ctx.sessions().open(user, administrator)
}

async fn login(
    State(ctx): State<WebContext>,
    headers: HeaderMap,
    request: axum::extract::Request,
) -> Response {
    if !headers.contains_key(super::auth::CSRF_HEADER) {
        return errors::csrf_missing().into_response();
    }
    let peer = request.extensions().get::<Peer>().cloned();
    let limit = ctx.limits().max_request_body;
    let body: Bytes = match axum::body::to_bytes(request.into_body(), limit).await {
        Ok(b) => b,
        Err(_) => {
            return errors::bad_request(0, "the body is too large".into()).into_response();
        }
    };
    let credentials = serde_json::from_slice::<Value>(&body).ok().and_then(|v| {
        let user = v.get("username")?.as_str()?.to_string();
        let password = v.get("password")?.as_str()?.to_string();
        Some((user, password))
    });
    let Some((user, password)) = credentials else {
        return errors::bad_request(
            0,
            "the body must be JSON {\"username\":...,\"password\":...}".into(),
        )
        .into_response();
    };
    match log_in(&ctx, peer.as_ref(), user, password).await {
        Ok(token) => {
            let mut r = StatusCode::NO_CONTENT.into_response();
            r.headers_mut()
                .insert(header::SET_COOKIE, cookie(Some(&token), ctx.secure()));
            r
        }
        Err(e) => e.into_response(),
    }
}

/// The roles MQ's mqweb gives: MQWebAdmin for an administrator, MQWebUser otherwise.
pub(crate) fn roles(who: &Authenticated) -> Vec<&'static str> {
    if who.administrator {
        vec!["MQWebAdmin", "MQWebUser"]
    } else {
        vec!["MQWebUser"]
    }
}

async fn whoami(who: Authenticated) -> Response {
    axum::Json(json!({"user": [{"name": who.user, "role": roles(&who)}]})).into_response()
}

/// Ends the session of an authenticated request (basic credentials end none).
async fn logout(
    State(ctx): State<WebContext>,
    headers: HeaderMap,
    _who: Authenticated,
) -> Response {
    if let Some(token) = token_of(&headers) {
        ctx.sessions().close(token);
    }
    let mut r = StatusCode::NO_CONTENT.into_response();
    r.headers_mut()
        .insert(header::SET_COOKIE, cookie(None, ctx.secure()));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_open_expire_and_close() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let a = sessions.open("app".into(), false).unwrap();
        let b = sessions.open("root".into(), true).unwrap();
        assert_ne!(a, b, "tokens are random");
        assert_eq!(a.len(), 43, "32 bytes of URL-safe base64");
        assert_eq!(sessions.user(&a), Some(("app".into(), false)));
        assert_eq!(sessions.user("forged"), None);
        sessions.close(&a);
        assert_eq!(sessions.user(&a), None);
        let expired = Sessions::new(Duration::ZERO);
        let c = expired.open("app".into(), false).unwrap();
        assert_eq!(expired.user(&c), None, "an idle session ends");
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; LtpaToken2=abc ; b=2"),
        );
        assert_eq!(token_of(&headers), Some("abc"));
        headers.insert(header::COOKIE, HeaderValue::from_static("LtpaToken2="));
        assert_eq!(token_of(&headers), None);
        let set = cookie(Some("abc"), true);
        let set = set.to_str().unwrap();
        assert!(set.contains("HttpOnly") && set.contains("SameSite=Strict"));
        assert!(set.ends_with("Secure"));
    }
}
