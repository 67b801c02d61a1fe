//! The console's first page: the queue manager (state, description, uptime, connections,
//! the recovery log, messages put and got since the start) with live charts; and the
//! JSON the charts poll, `GET /ibmmq/console/api/stats`: each visible queue's depth and
//! put and get counters (the monitoring counters, so nothing is scanned), from which the
//! page's script works out rates between two polls.

use super::super::auth::Authenticated;
use super::super::errors::{self, RestError};
use super::super::WebContext;
use super::{display, layout, queues, Visitor};
use crate::lifecycle::QmgrState;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use maud::html;
use serde_json::json;

/// What the overview shows of the queue manager.
struct Status {
    state: &'static str,
    uptime_secs: u64,
    connections: u64,
    log: &'static str,
    puts: u64,
    gets: u64,
}

async fn status(ctx: &WebContext) -> Result<Status, RestError> {
    ctx.bridge()
        .run(|server| async move {
            let now = crate::runtime::clock::now();
            let mqi = server.engine.borrow().mqi_counters();
            Status {
                state: match server.state.get() {
                    QmgrState::Starting => "starting",
                    QmgrState::Running => "running",
                    QmgrState::Quiescing => "quiescing",
                    QmgrState::Ending => "ending",
                },
                uptime_secs: now.0.saturating_sub(server.started_ms) / 1000,
                connections: server.conversations.get(),
                log: match &server.log {
                    None => "none (no persistent messages)",
                    Some(l) if l.has_failed() => "failed: it cannot be written",
                    Some(_) => "writable",
                },
                puts: mqi.put_count(),
                gets: mqi.get_count(),
            }
        })
        .await
        .map_err(|e| errors::unavailable(2162, e.to_string()))
}

/// A duration as days, hours, minutes and seconds.
fn uptime(secs: u64) -> String {
    let (d, h, m, s) = (secs / 86_400, secs / 3600 % 24, secs / 60 % 60, secs % 60);
    if d > 0 {
        format!("{d} d {h} h {m} min")
    } else if h > 0 {
        format!("{h} h {m} min")
    } else {
        format!("{m} min {s} s")
    }
}

/// `GET /ibmmq/console/`.
pub(crate) async fn page(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    // The user's authority to display the queue manager decides whether it is shown.
    let shown = display(&ctx, &who, "DISPLAY QMGR DESCR").await;
    let content = match (shown, status(&ctx).await) {
        (Ok(q), Ok(s)) => {
            let descr = q
                .objects
                .first()
                .and_then(|o| o.get("descr"))
                .map(layout::value_text)
                .unwrap_or_default();
            html! {
                dl.status {
                    dt { "Queue manager" } dd { (ctx.qmgr()) }
                    dt { "Description" } dd { (descr) }
                    dt { "State" } dd #state { (s.state) }
                    dt { "Up for" } dd { (uptime(s.uptime_secs)) }
                    dt { "Connections" } dd { (s.connections) }
                    dt { "Recovery log" } dd { (s.log) }
                    dt { "Messages put / got" } dd { (s.puts) " / " (s.gets) }
                }
                section {
                    h2 { "Rates and depths of all queues" }
                    div.chart data-queue="" {}
                }
            }
        }
        (Err(e), _) | (_, Err(e)) => layout::error_note(&e),
    };
    layout::page(&ctx, &who, "/ibmmq/console/", "Queue manager", content)
}

/// `GET /ibmmq/console/api/stats`: `{"time":seconds,"queues":[{"name","depth","puts",
/// "gets"}]}`, the queues the user may display.
pub(crate) async fn stats(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    stats_json(&ctx, &who)
        .await
        .map_or_else(IntoResponse::into_response, |v| {
            axum::Json(v).into_response()
        })
}

async fn stats_json(ctx: &WebContext, who: &Authenticated) -> Result<serde_json::Value, RestError> {
    let queues = queues::visible_queues(ctx, who).await?;
    // The charts' polls keep the queue list's rates fresh too.
    queues::note_counters(ctx, &queues);
    let time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let list: Vec<_> = queues
        .iter()
        .map(|q| {
            json!({
                "name": q.name,
                "depth": q.sample.depth,
                "puts": q.sample.counters.put_count(),
                "gets": q.sample.counters.get_count(),
            })
        })
        .collect();
    Ok(json!({"time": time, "queues": list}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptimes_read_well() {
        assert_eq!(uptime(75), "1 min 15 s");
        assert_eq!(uptime(3 * 3600 + 120), "3 h 2 min");
        assert_eq!(uptime(2 * 86_400 + 3600), "2 d 1 h 0 min");
    }
}
