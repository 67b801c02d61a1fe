//! Health endpoints for probes (Kubernetes liveness and readiness), without
//! authentication: `GET /healthz` answers 200 while the web server runs; `GET /readyz`
//! answers 200 only when the queue manager accepts connections (running, not quiescing,
//! a TCP listener listening) and its recovery log is writable, else 503 with
//! the reasons as JSON. Readiness is asked of the queue manager's own thread, so a
//! queue manager too busy to answer within two seconds is not ready either.

use super::super::server::Server;
use super::{RouteProvider, WebContext, WebRouter};
use crate::lifecycle::QmgrState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use std::rc::Rc;
use std::time::Duration;

/// How long readiness waits for the queue manager's thread.
const READY_WAIT: Duration = Duration::from_secs(2);

/// The health routes.
pub(crate) struct Health;

impl RouteProvider for Health {
    fn name(&self) -> &'static str {
        "health"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new()
            .route("/healthz", get(alive))
            .route("/readyz", get(ready))
    }
}

async fn alive() -> Response {
    (StatusCode::OK, axum::Json(json!({"status": "alive"}))).into_response()
}

async fn ready(State(ctx): State<WebContext>) -> Response {
    let asked = ctx
        .bridge()
        .run(|server| async move { not_ready_because(&server) });
    let reasons = match tokio::time::timeout(READY_WAIT, asked).await {
        Ok(Ok(reasons)) => reasons,
        Ok(Err(e)) => vec![e.to_string()],
        Err(_) => vec!["the queue manager did not answer within 2 seconds".to_string()],
    };
    if reasons.is_empty() {
        (
            StatusCode::OK,
            axum::Json(json!({"status": "ready", "qmgr": ctx.qmgr()})),
        )
            .into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            axum::Json(json!({"status": "not ready", "qmgr": ctx.qmgr(), "reasons": reasons})),
        )
            .into_response()
    }
}

/// Why the queue manager is not ready (empty: it is).
fn not_ready_because(server: &Rc<Server>) -> Vec<String> {
    let mut reasons = Vec::new();
    match server.state.get() {
        QmgrState::Running => {}
        QmgrState::Quiescing => reasons.push("the queue manager is quiescing".to_string()),
        other => reasons.push(format!("the queue manager is {other:?}")),
    }
    if server.log.as_ref().is_some_and(|l| l.has_failed()) {
        reasons.push("the recovery log cannot be written".to_string());
    }
    // Clients reach it through its TCP listeners: with none listening (all failed or
    // stopped), only local bindings applications could connect.
    if server.endpoints.listeners().published().is_empty() {
        let mut why = "no TCP listener is listening".to_string();
        if let Some(first) = server.start_failures.borrow().first() {
            why.push_str(&format!(" ({first})"));
        }
        reasons.push(why);
    }
    reasons
}
