//! The console's queues: the list (depth, MAXDEPTH, put and get rates from the
//! monitoring counters, the oldest message's age), and a queue's page: its messages
//! browsed with their descriptors and a preview of each body, a form that puts a test
//! message, and CLEAR QLOCAL after a confirmation.
//!
//! The list shows the local queues `DISPLAY QLOCAL(*)` shows the user (so its authority
//! checks decide), with their figures from the engine's counters. Browsing is an MQI
//! application of the user (MQCONN, MQOPEN for browse, MQGET with BROWSE_FIRST and
//! BROWSE_NEXT): the queue's BROWSE authority is checked and nothing is taken.

use super::super::auth::Authenticated;
use super::super::errors::{self, RestError};
use super::super::message_headers::id_to_hex;
use super::super::messaging::{connect, put_message, queue_name};
use super::super::WebContext;
use super::{layout, path_segment, run_lines, Visitor};
use crate::runtime::reply_wait::ReplyWait;
use crate::runtime::server::Server;
use axum::body::Bytes;
use axum::extract::{Form, Path, State};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use ferry_engine::{GetOutcome, GotMessage};
use ferry_mqi::descriptor::{format, persistence, EXPIRY_UNLIMITED};
use ferry_mqi::{
    GetOptionFlags, GetOptions, MatchOptions, MessageDescriptor, ObjectDescriptor, OpenOptions,
};
use maud::{html, Markup};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Messages a browse shows at most.
const BROWSE_LIMIT: usize = 50;

/// Bytes of each body a browse reads (the preview).
const PREVIEW_BYTES: usize = 1024;

/// Characters of a text preview shown.
const PREVIEW_CHARS: usize = 200;

/// One row of the queue list.
#[derive(Debug, Clone)]
struct QueueRow {
    name: String,
    depth: u64,
    max_depth: i64,
    /// Puts and gets per second; none until two samples a second apart were seen.
    rates: Option<(f64, f64)>,
    oldest_age: Option<u64>,
    open_input: u32,
    open_output: u32,
}

/// The local queues the user may display (as `DISPLAY QLOCAL(*)` run as the user shows
/// them), with the engine's figures for each; no `SYSTEM.*` queues.
pub(crate) async fn visible_queues(
    ctx: &WebContext,
    who: &Authenticated,
) -> Result<Vec<ferry_monitoring::prometheus::QueueMetrics>, RestError> {
    let shown = super::display(ctx, who, "DISPLAY QLOCAL(*) CURDEPTH").await?;
    let names: HashSet<String> = shown
        .objects
        .iter()
        .filter_map(|o| o.get("queue").and_then(|v| v.as_str()).map(String::from))
        .collect();
    let metrics = ctx
        .bridge()
        .run(|server| async move {
            let now = crate::runtime::clock::now();
            server
                .engine
                .borrow()
                .queue_metrics(&ferry_monitoring::NameFilter::default(), now)
        })
        .await
        .map_err(|e| errors::unavailable(2162, e.to_string()))?;
    Ok(metrics
        .into_iter()
        .filter(|m| names.contains(&m.name))
        .collect())
}

/// Gives the console's rate book the queues' counters as they are now: each queue's
/// puts and gets per second since the book's last sample.
pub(crate) fn note_counters(
    ctx: &WebContext,
    queues: &[ferry_monitoring::prometheus::QueueMetrics],
) -> HashMap<String, (f64, f64)> {
    let counts: HashMap<String, (u64, u64)> = queues
        .iter()
        .map(|m| {
            let c = &m.sample.counters;
            (m.name.clone(), (c.put_count(), c.get_count()))
        })
        .collect();
    ctx.console().rates(counts)
}

/// The rows of the queue list.
async fn rows(ctx: &WebContext, who: &Authenticated) -> Result<Vec<QueueRow>, RestError> {
    let visible = visible_queues(ctx, who).await?;
    let rates = note_counters(ctx, &visible);
    Ok(visible
        .into_iter()
        .map(|m| QueueRow {
            depth: m.sample.depth,
            max_depth: m.max_depth,
            open_input: m.sample.open_input,
            open_output: m.sample.open_output,
            oldest_age: m.oldest_message_age,
            rates: rates.get(&m.name).copied(),
            name: m.name,
        })
        .collect())
}

fn rows_markup(rows: &[QueueRow]) -> Markup {
    html! {
        @for r in rows {
            tr {
                td { a href={ "/ibmmq/console/queue/" (path_segment(&r.name)) } { (r.name) } }
                td.num.depth { (r.depth) }
                td.num { (r.max_depth) }
                td.num { (r.rates.map_or("-".into(), |(p, _)| format!("{p:.1}"))) }
                td.num { (r.rates.map_or("-".into(), |(_, g)| format!("{g:.1}"))) }
                td.num { (r.oldest_age.map(|s| format!("{s} s")).unwrap_or_else(|| "-".into())) }
                td.num { (r.open_input) " / " (r.open_output) }
            }
        }
    }
}

/// `GET /ibmmq/console/queues`.
pub(crate) async fn list_page(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    let content = match rows(&ctx, &who).await {
        Ok(rows) => html! {
            p.hint { "Local queues (SYSTEM.* left out); rates are messages per second, refreshed every 5 seconds; the oldest message's age shows where MONQ collects it (ALTER QMGR MONQ(MEDIUM))." }
            table #queues {
                thead { tr {
                    th { "Queue" } th { "Depth" } th { "MAXDEPTH" } th { "Puts/s" }
                    th { "Gets/s" } th { "Oldest message" } th { "Open in / out" }
                } }
                tbody hx-get="/ibmmq/console/queues/rows" hx-trigger="every 5s" { (rows_markup(&rows)) }
            }
            div.chart data-queue="" {}
        },
        Err(e) => layout::error_note(&e),
    };
    layout::page(&ctx, &who, "/ibmmq/console/queues", "Queues", content)
}

/// `GET /ibmmq/console/queues/rows`: the list's rows (htmx refreshes them).
pub(crate) async fn list_rows(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    match rows(&ctx, &who).await {
        Ok(rows) => layout::fragment(rows_markup(&rows)),
        Err(e) => layout::error_fragment(e),
    }
}

/// The queue of a console path, or 400.
fn checked(queue: &str) -> Result<ObjectDescriptor, RestError> {
    queue_name(queue)
}

/// `GET /ibmmq/console/queue/{queue}`.
pub(crate) async fn queue_page(
    State(ctx): State<WebContext>,
    Path(queue): Path<String>,
    Visitor(who): Visitor,
) -> Response {
    if let Err(e) = checked(&queue) {
        return e.into_response();
    }
    let base = format!("/ibmmq/console/queue/{}", path_segment(&queue));
    let listing = messages_markup(&ctx, &who, &queue).await;
    let confirm = format!("Clear all messages from {queue}? This cannot be undone.");
    let content = html! {
        section {
            h2 { "Messages" }
            div #messages hx-get={ (base) "/messages" } hx-trigger="queue-changed from:body" {
                (listing)
            }
        }
        section.actions {
            form.put hx-post={ (base) "/put" } hx-target="#put-result" {
                h2 { "Put a test message" }
                textarea name="body" rows="3" placeholder="Message text" required {}
                label.inline { input type="checkbox" name="persistent" value="yes"; " Persistent" }
                button type="submit" { "Put" }
                div #put-result {}
            }
            form.clear hx-post={ (base) "/clear" } hx-target="#clear-result" hx-confirm=(confirm) {
                h2 { "Clear the queue" }
                p { "Removes every message (CLEAR QLOCAL)." }
                button.danger type="submit" { "Clear" }
                div #clear-result {}
            }
        }
        section {
            h2 { "Rates and depth" }
            div.chart data-queue=(queue) {}
        }
    };
    layout::page(
        &ctx,
        &who,
        "/ibmmq/console/queues",
        &format!("Queue {queue}"),
        content,
    )
}

/// `GET /ibmmq/console/queue/{queue}/messages`: the browse listing (htmx refreshes it).
pub(crate) async fn messages(
    State(ctx): State<WebContext>,
    Path(queue): Path<String>,
    Visitor(who): Visitor,
) -> Response {
    if let Err(e) = checked(&queue) {
        return layout::error_fragment(e);
    }
    layout::fragment(messages_markup(&ctx, &who, &queue).await)
}

async fn messages_markup(ctx: &WebContext, who: &Authenticated, queue: &str) -> Markup {
    let od = match checked(queue) {
        Ok(od) => od,
        Err(e) => return layout::error_note(&e),
    };
    let who2 = who.clone();
    let browsed = ctx
        .bridge()
        .run(move |server| async move { browse(&server, &who2, &od) })
        .await
        .map_err(|e| errors::unavailable(2162, e.to_string()))
        .and_then(|r| r);
    let (depth, messages) = match browsed {
        Ok(b) => b,
        Err(e) => return layout::error_note(&e),
    };
    html! {
        p.depth { "Depth " strong #depth { (depth) }
            @if depth > messages.len() as u64 { " (the first " (messages.len()) " are shown)" } }
        @if messages.is_empty() {
            p.empty { "The queue is empty." }
        } @else {
            table.messages {
                thead { tr {
                    th { "#" } th { "Message id" } th { "Correlation id" } th { "Put" }
                    th { "Format" } th { "Persistence" } th { "Priority" } th { "Put by" }
                    th { "Reply to" } th { "Length" } th { "Body" }
                } }
                tbody {
                    @for (i, m) in messages.iter().enumerate() {
                        (message_row(i + 1, m))
                    }
                }
            }
        }
    }
}

fn message_row(n: usize, m: &GotMessage) -> Markup {
    let md = &m.md;
    let put = put_time(md.put_date.as_str(), md.put_time.as_str());
    let reply = md.reply_to_q.as_str().trim();
    html! {
        tr {
            td.num { (n) }
            td.id { (id_to_hex(&md.msg_id)) }
            td.id { (if md.correl_id == [0u8; 24] { String::new() } else { id_to_hex(&md.correl_id) }) }
            td { (put) }
            td { (md.format.as_str().trim()) }
            td { (if md.persistence == persistence::PERSISTENT { "persistent" } else { "not persistent" }) }
            td.num { (md.priority) }
            td { (md.user_identifier.as_str().trim()) " " span.appl { (md.put_appl_name.as_str().trim()) } }
            td { (reply) }
            td.num { (m.data_length) }
            td.body { (preview(md, &m.data, m.data_length)) }
        }
    }
}

/// PutDate (YYYYMMDD) and PutTime (HHMMSSTH) as `YYYY-MM-DD HH:MM:SS.TH` (as they are
/// when they are not digits).
fn put_time(date: &str, time: &str) -> String {
    let (d, t) = (date.trim(), time.trim());
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    if digits(d, 8) && digits(t, 8) {
        format!(
            "{}-{}-{} {}:{}:{}.{}",
            &d[..4],
            &d[4..6],
            &d[6..],
            &t[..2],
            &t[2..4],
            &t[4..6],
            &t[6..]
        )
    } else {
        format!("{d} {t}")
    }
}

/// A body's preview: text (when the format is MQSTR or the bytes are UTF-8) cut to
/// [`PREVIEW_CHARS`], else the first bytes in hex.
fn preview(md: &MessageDescriptor, data: &[u8], full_length: usize) -> Markup {
    let text = std::str::from_utf8(data).ok().or_else(|| {
        // A preview cut inside a character: the text up to it.
        let valid = std::str::from_utf8(data).err()?.valid_up_to();
        (md.format == format::STRING && valid + 4 >= data.len())
            .then(|| std::str::from_utf8(&data[..valid]).ok())
            .flatten()
    });
    match text {
        Some(t) if !t.chars().any(|c| c.is_control() && !c.is_whitespace()) => {
            let shown: String = t.chars().take(PREVIEW_CHARS).collect();
            let more = shown.len() < full_length;
            html! { span.text { (shown) } @if more { span.more { "…" } } }
        }
        _ => {
            let shown = &data[..data.len().min(PREVIEW_CHARS / 2)];
            let hex: Vec<String> = shown.iter().map(|b| format!("{b:02X}")).collect();
            html! { span.hex { (hex.join(" ")) } @if shown.len() < full_length { span.more { "…" } } }
        }
    }
}

/// Browses `od` as `who`: the queue's depth and its first [`BROWSE_LIMIT`] messages,
/// bodies cut to [`PREVIEW_BYTES`]. Takes nothing.
fn browse(
    server: &Rc<Server>,
    who: &Authenticated,
    od: &ObjectDescriptor,
) -> Result<(u64, Vec<GotMessage>), RestError> {
    let (conn, _carrier) = connect(server, who)?;
    let mut wait = ReplyWait::default();
    let browsed = browse_on(server, conn, od, &mut wait);
    let _ = server.end_conversation(conn, true);
    let messages = browsed?;
    let depth = server
        .engine
        .borrow()
        .queue_sample(od.object_name.as_str().trim())
        .map_or(messages.len() as u64, |s| s.depth);
    Ok((depth, messages))
}

fn browse_on(
    server: &Rc<Server>,
    conn: ferry_engine::ConnId,
    od: &ObjectDescriptor,
    wait: &mut ReplyWait,
) -> Result<Vec<GotMessage>, RestError> {
    let opened = server
        .call(wait, |e, now, fx| {
            e.open(
                conn,
                od,
                OpenOptions::BROWSE | OpenOptions::FAIL_IF_QUIESCING,
                now,
                fx,
            )
        })
        .map_err(|e| errors::mqi_failed(e.reason, "MQOPEN"))?;
    let mut messages = Vec::new();
    let mut next = GetOptionFlags::BROWSE_FIRST;
    while messages.len() < BROWSE_LIMIT {
        let gmo = GetOptions {
            options: next
                | GetOptionFlags::NO_SYNCPOINT
                | GetOptionFlags::ACCEPT_TRUNCATED_MSG
                | GetOptionFlags::FAIL_IF_QUIESCING,
            wait_interval: 0,
            match_options: MatchOptions::empty(),
        };
        let md = MessageDescriptor::default();
        let outcome = server.call(wait, |e, now, fx| {
            e.get(conn, opened.hobj, &md, &gmo, PREVIEW_BYTES, now, fx)
        });
        let GetOutcome::Done(result) = outcome else {
            // Without MQGMO_WAIT a get never waits.
            debug_assert!(false, "a browse without WAIT waited");
            break;
        };
        match result {
            Ok(got) => messages.push(got),
            Err(e) if e.error.reason == ferry_mqi::ReasonCode::NoMsgAvailable => break,
            Err(e) => return Err(errors::mqi_failed(e.error.reason, "MQGET (browse)")),
        }
        next = GetOptionFlags::BROWSE_NEXT;
    }
    Ok(messages)
}

/// The put form's fields.
#[derive(Deserialize)]
pub(crate) struct PutForm {
    body: String,
    #[serde(default)]
    persistent: Option<String>,
}

/// `POST /ibmmq/console/queue/{queue}/put`: MQPUT1 of the text as the user.
pub(crate) async fn put(
    State(ctx): State<WebContext>,
    Path(queue): Path<String>,
    Visitor(who): Visitor,
    Form(form): Form<PutForm>,
) -> Response {
    let od = match checked(&queue) {
        Ok(od) => od,
        Err(e) => return layout::error_fragment(e),
    };
    let md = MessageDescriptor {
        format: format::STRING,
        ccsid: 1208,
        expiry: EXPIRY_UNLIMITED,
        persistence: if form.persistent.is_some() {
            persistence::PERSISTENT
        } else {
            persistence::NOT_PERSISTENT
        },
        ..MessageDescriptor::default()
    };
    let body = Bytes::from(form.body.into_bytes());
    let put =
        ctx.bridge()
            .run(move |server| async move {
                put_message(&server, &who, &od, md, body, Bytes::new()).await
            })
            .await
            .map_err(|e| errors::unavailable(2162, e.to_string()))
            .and_then(|r| r);
    match put {
        Ok(id) => {
            let mut r = layout::fragment(html! {
                p.ok { "Put message " span.id { (id_to_hex(&id)) } }
            });
            r.headers_mut()
                .insert("hx-trigger", HeaderValue::from_static("queue-changed"));
            r
        }
        Err(e) => layout::error_fragment(e),
    }
}

/// `POST /ibmmq/console/queue/{queue}/clear`: CLEAR QLOCAL as the user (the page asks
/// for a confirmation first).
pub(crate) async fn clear(
    State(ctx): State<WebContext>,
    Path(queue): Path<String>,
    Visitor(who): Visitor,
) -> Response {
    if let Err(e) = checked(&queue) {
        return layout::error_fragment(e);
    }
    // A checked name has no quote: it cannot end the quoted string.
    debug_assert!(!queue.contains('\''));
    match run_lines(&ctx, &who, &format!("CLEAR QLOCAL('{queue}')")).await {
        Ok((failed, lines)) => {
            let mut r = layout::fragment(html! {
                pre class=(if failed { "error" } else { "ok" }) { @for l in &lines { (l) "\n" } }
            });
            if !failed {
                r.headers_mut()
                    .insert("hx-trigger", HeaderValue::from_static("queue-changed"));
            }
            r
        }
        Err(e) => layout::error_fragment(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_times_read_well() {
        assert_eq!(put_time("20261129", "14562955"), "2026-11-29 14:56:29.55");
        assert_eq!(put_time("2026", "x"), "2026 x");
    }

    #[test]
    fn previews_are_text_or_hex_and_cut() {
        let md = MessageDescriptor {
            format: format::STRING,
            ..MessageDescriptor::default()
        };
        let text = preview(&md, b"<b>hello</b>", 12).into_string();
        assert_eq!(text, "<span class=\"text\">&lt;b&gt;hello&lt;/b&gt;</span>");
        let long = "é".repeat(600);
        let cut = preview(&md, &long.as_bytes()[..PREVIEW_BYTES - 1], long.len()).into_string();
        assert!(cut.contains("…") && cut.contains("ééé"), "{cut}");
        let binary = preview(&MessageDescriptor::default(), &[0, 1, 0xff], 3).into_string();
        assert_eq!(binary, "<span class=\"hex\">00 01 FF</span>");
    }
}
