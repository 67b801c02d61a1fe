//! `GET /metrics`: the Prometheus exposition (text format 0.0.4) with the names
//! ibm-messaging/mq-metric-samples gives MQ's metrics ([`Server::prometheus_text`]), so
//! the Grafana dashboards MQ users have work unchanged. A Prometheus agent on this host
//! scrapes without credentials; from elsewhere a scrape authenticates as the REST API
//! does (basic authentication or a client certificate), since queue and channel names
//! are the installation's business, unless qm.ini `Monitoring:PrometheusAuthentication`
//! is NONE (Prometheus finding pods by annotation, with no credentials to give).
//!
//! [`Server::prometheus_text`]: crate::runtime::server::Server

use super::auth::Authenticated;
use super::listener::Peer;
use super::{errors, RouteProvider, WebContext, WebRouter};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// The metrics route.
pub(crate) struct Metrics;

impl RouteProvider for Metrics {
    fn name(&self) -> &'static str {
        "metrics"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new().route("/metrics", get(scrape))
    }
}

/// Whether the request comes from this host.
fn from_this_host(request: &Request) -> bool {
    request
        .extensions()
        .get::<Peer>()
        .is_some_and(|p| p.address.ip().is_loopback())
}

async fn scrape(State(ctx): State<WebContext>, request: Request) -> Response {
    let open_to_all = ctx
        .bridge()
        .run(|server| async move {
            server
                .ini
                .monitoring
                .authentication
                .eq_ignore_ascii_case("NONE")
        })
        .await
        .unwrap_or(false);
    if !open_to_all && !from_this_host(&request) {
        let (mut parts, _) = request.into_parts();
        if let Err(refused) = Authenticated::from_request_parts(&mut parts, &ctx).await {
            return refused.into_response();
        }
    }
    match ctx
        .bridge()
        .run(|server| async move { server.prometheus_text() })
        .await
    {
        Ok(text) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                ferry_monitoring::prometheus::CONTENT_TYPE,
            )],
            text,
        )
            .into_response(),
        Err(e) => errors::unavailable(2162, e.to_string()).into_response(),
    }
}
