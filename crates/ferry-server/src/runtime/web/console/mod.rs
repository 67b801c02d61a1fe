//! The web console at `/ibmmq/console/` (IBM MQ's path): pages rendered by the server
//! ([`maud`] templates, which escape everything they show) and made live with htmx,
//! charts drawn by uPlot; every file the browser loads is served by this binary
//! ([`assets`]), none from another host.
//!
//! A visitor logs in ([`login`]: a session cookie, [`super::session`]); a page visited
//! without one is redirected to the login page. Every page and action runs as the
//! logged-in user through the same paths as the REST API, so the queue manager's
//! authority checks apply: lists and the MQSC console through the command server
//! ([`super::admin::run_as`]), browsing, putting and clearing as MQI calls or commands
//! of that user. Requests that change something need the CSRF header, which the pages
//! send (htmx `hx-headers`) and a cross-site form cannot.
//!
//! Pages: the queue manager ([`overview`]), queues and a queue's messages ([`queues`]),
//! channels, connections, topics and subscriptions, CHLAUTH and AUTHREC records
//! ([`objects`]), the MQSC console ([`mqsc`]); charts poll [`overview::stats`].

pub(crate) mod assets;
pub(crate) mod layout;
pub(crate) mod login;
pub(crate) mod mqsc;
pub(crate) mod objects;
pub(crate) mod overview;
pub(crate) mod queues;

use super::admin::run_as;
use super::auth::Authenticated;
use super::errors::{self, RestError};
use super::{RouteProvider, WebContext, WebRouter};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

/// Where the console lives.
pub(crate) const ROOT: &str = "/ibmmq/console";

/// The Content-Security-Policy of every console response: scripts, styles and requests
/// from this server only, no inline script, no framing.
pub(crate) const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; \
form-action 'self'";

/// The console's routes.
pub(crate) struct Console;

impl RouteProvider for Console {
    fn name(&self) -> &'static str {
        "web console"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new()
            .route(ROOT, get(|| async { Redirect::to("/ibmmq/console/") }))
            .route("/ibmmq/console/", get(overview::page))
            .route("/ibmmq/console/login", get(login::page).post(login::submit))
            .route("/ibmmq/console/logout", post(login::logout))
            .route("/ibmmq/console/queues", get(queues::list_page))
            .route("/ibmmq/console/queues/rows", get(queues::list_rows))
            .route("/ibmmq/console/queue/{queue}", get(queues::queue_page))
            .route(
                "/ibmmq/console/queue/{queue}/messages",
                get(queues::messages),
            )
            .route("/ibmmq/console/queue/{queue}/put", post(queues::put))
            .route("/ibmmq/console/queue/{queue}/clear", post(queues::clear))
            .route("/ibmmq/console/channels", get(objects::channels))
            .route("/ibmmq/console/connections", get(objects::connections))
            .route("/ibmmq/console/topics", get(objects::topics))
            .route("/ibmmq/console/security", get(objects::security))
            .route("/ibmmq/console/mqsc", get(mqsc::page).post(mqsc::run))
            .route("/ibmmq/console/api/stats", get(overview::stats))
            .route("/ibmmq/console/assets/{file}", get(assets::serve))
            .layer(axum::middleware::map_response(protect))
    }
}

/// Adds the console's security headers to every response it gives.
async fn protect(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// The console's visitor: a logged-in (or otherwise authenticated) user. A page asked
/// for without authentication is redirected to the login page; anything else gets the
/// REST API's 401 or 403.
pub(crate) struct Visitor(pub Authenticated);

/// Why a console request was refused.
pub(crate) enum Refused {
    /// A page visit without a session: to the login page.
    Login,
    /// The REST API's answer.
    Rest(RestError),
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::Login => Redirect::to("/ibmmq/console/login").into_response(),
            Refused::Rest(e) => e.into_response(),
        }
    }
}

impl FromRequestParts<WebContext> for Visitor {
    type Rejection = Refused;

    async fn from_request_parts(
        parts: &mut Parts,
        ctx: &WebContext,
    ) -> Result<Self, Self::Rejection> {
        // A page the browser navigates to; not htmx's requests nor the charts' JSON.
        let page_visit = parts.method == Method::GET
            && !parts.headers.contains_key("hx-request")
            && !parts.uri.path().starts_with("/ibmmq/console/api/");
        match Authenticated::from_request_parts(parts, ctx).await {
            Ok(who) => Ok(Visitor(who)),
            Err(e) if page_visit && e.status == StatusCode::UNAUTHORIZED => Err(Refused::Login),
            Err(e) => Err(Refused::Rest(e)),
        }
    }
}

/// One object a DISPLAY command showed: its attributes, lower-case keys.
pub(crate) type Shown = Map<String, Value>;

/// What a DISPLAY command run for the console gave: the objects, and the message lines
/// of responses without attributes (e.g. "not found").
#[derive(Debug, Default)]
pub(crate) struct Display {
    /// The objects shown.
    pub objects: Vec<Shown>,
    /// Message lines that came with no attributes.
    pub notes: Vec<String>,
}

/// Runs `command` (a DISPLAY the console builds) as `who` through the command server,
/// with the authority checks the REST API applies.
pub(crate) async fn display(
    ctx: &WebContext,
    who: &Authenticated,
    command: &str,
) -> Result<Display, RestError> {
    let lines = run_lines(ctx, who, command).await?.1;
    let mut shown = Display::default();
    for response in crate::rest_mqsc::responses(&lines) {
        let parameters = crate::rest_mqsc::parameters(&response);
        if parameters.is_empty() {
            shown.notes.extend(response);
        } else {
            shown.objects.push(parameters);
        }
    }
    Ok(shown)
}

/// Runs one MQSC `command` as `who`: whether it failed, and its output lines.
pub(crate) async fn run_lines(
    ctx: &WebContext,
    who: &Authenticated,
    command: &str,
) -> Result<(bool, Vec<String>), RestError> {
    let who = who.clone();
    let command = command.to_string();
    let output = ctx
        .bridge()
        .run(move |server| async move { run_as(&server, &who, &command).await })
        .await
        .map_err(|e| errors::unavailable(2162, e.to_string()))??;
    Ok((output.failed, output.lines))
}

/// What the console keeps between requests: the last counters seen, for rates.
#[derive(Default)]
pub(crate) struct ConsoleState {
    rates: Mutex<RateBook>,
}

/// Put and get counters of each queue at one moment, and the rates last worked out.
#[derive(Default)]
struct RateBook {
    at: Option<Instant>,
    counts: HashMap<String, (u64, u64)>,
    rates: HashMap<String, (f64, f64)>,
}

impl ConsoleState {
    /// Messages put and got per second of each queue, from `counts` (the queues' put and
    /// get counters now) and those seen at least a second earlier.
    pub(crate) fn rates(&self, counts: HashMap<String, (u64, u64)>) -> HashMap<String, (f64, f64)> {
        let now = Instant::now();
        let mut book = self.rates.lock().unwrap_or_else(|p| p.into_inner());
        let elapsed = book.at.map(|at| now.duration_since(at).as_secs_f64());
        match elapsed {
            Some(secs) if secs < 1.0 => {}
            _ => {
                if let Some(secs) = elapsed {
                    let per_second =
                        |now: u64, before: u64| now.saturating_sub(before) as f64 / secs;
                    book.rates = counts
                        .iter()
                        .filter_map(|(name, (puts, gets))| {
                            let (p0, g0) = book.counts.get(name)?;
                            Some((
                                name.clone(),
                                (per_second(*puts, *p0), per_second(*gets, *g0)),
                            ))
                        })
                        .collect();
                }
                book.at = Some(now);
                book.counts = counts;
            }
        }
        book.rates.clone()
    }
}

/// A queue (or other object) name as one path segment: `/` and `%` (which MQ names may
/// hold) percent-encoded.
pub(crate) fn path_segment(name: &str) -> String {
    const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
        .add(b'/')
        .add(b'%')
        .add(b' ')
        .add(b'?')
        .add(b'#');
    percent_encoding::utf8_percent_encode(name, SEGMENT).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_become_one_path_segment() {
        assert_eq!(path_segment("APP.Q"), "APP.Q");
        assert_eq!(path_segment("a/b%c"), "a%2Fb%25c");
    }

    #[test]
    fn rates_come_from_counters_a_second_apart() {
        let state = ConsoleState::default();
        let first = state.rates(HashMap::from([("Q".to_string(), (10, 5))]));
        assert!(first.is_empty(), "one sample gives no rate");
        std::thread::sleep(std::time::Duration::from_millis(1100));
        let second = state.rates(HashMap::from([("Q".to_string(), (20, 5))]));
        let (puts, gets) = second["Q"];
        assert!(puts > 0.0 && puts < 10.0, "{puts}");
        assert_eq!(gets, 0.0);
    }
}
