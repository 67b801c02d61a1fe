//! The console's pages of objects shown by DISPLAY commands: channels and their status,
//! connections, topics and subscriptions, CHLAUTH and AUTHREC records. Each table is one
//! DISPLAY run as the user through the command server (its authority checks decide what
//! is shown), with the attributes a glance needs as columns.

use super::super::WebContext;
use super::{display, layout, Visitor};
use axum::extract::State;
use axum::response::Response;
use maud::{html, Markup};

/// One table of a page: a heading, the DISPLAY that fills it and the columns it shows.
struct Table {
    heading: &'static str,
    command: &'static str,
    columns: &'static [&'static str],
}

async fn tables(ctx: &WebContext, who: &super::Authenticated, tables: &[Table]) -> Markup {
    let mut parts = Vec::new();
    for t in tables {
        let body = match display(ctx, who, t.command).await {
            // Nothing to show: the command's own words ("not found") say so.
            Ok(shown) if shown.objects.is_empty() && !shown.notes.is_empty() => html! {
                @for n in &shown.notes { p.note { (n) } }
            },
            Ok(shown) => layout::object_table(&shown.objects, t.columns),
            Err(e) => layout::error_note(&e),
        };
        parts.push(html! {
            section {
                h2 { (t.heading) }
                p.command { code { (t.command) } }
                (body)
            }
        });
    }
    html! { @for p in &parts { (p) } }
}

/// `GET /ibmmq/console/channels`.
pub(crate) async fn channels(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    let content = tables(
        &ctx,
        &who,
        &[
            Table {
                heading: "Channels",
                command: "DISPLAY CHANNEL(*) CHLTYPE TRPTYPE CONNAME XMITQ SSLCIPH DESCR",
                columns: &[
                    "channel", "chltype", "trptype", "conname", "xmitq", "sslciph", "descr",
                ],
            },
            Table {
                heading: "Channel status",
                command: "DISPLAY CHSTATUS(*) ALL",
                columns: &[
                    "channel", "chltype", "conname", "status", "conns", "msgs", "rqmname",
                    "chstada", "chstati",
                ],
            },
        ],
    )
    .await;
    layout::page(&ctx, &who, "/ibmmq/console/channels", "Channels", content)
}

/// `GET /ibmmq/console/connections`.
pub(crate) async fn connections(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    let content = tables(
        &ctx,
        &who,
        &[Table {
            heading: "Connections",
            command: "DISPLAY CONN(*) TYPE(CONN) ALL",
            columns: &[
                "conn", "appltag", "appltype", "channel", "conname", "userid", "connopts",
            ],
        }],
    )
    .await;
    layout::page(
        &ctx,
        &who,
        "/ibmmq/console/connections",
        "Connections",
        content,
    )
}

/// `GET /ibmmq/console/topics`.
pub(crate) async fn topics(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    let content = tables(
        &ctx,
        &who,
        &[
            Table {
                heading: "Topics",
                command: "DISPLAY TOPIC(*) TOPICSTR DESCR",
                columns: &["topic", "topicstr", "descr"],
            },
            Table {
                heading: "Subscriptions",
                command: "DISPLAY SUB(*) TOPICSTR DEST DESTQMGR SUBTYPE DURABLE",
                columns: &["sub", "topicstr", "dest", "destqmgr", "subtype", "durable"],
            },
        ],
    )
    .await;
    layout::page(
        &ctx,
        &who,
        "/ibmmq/console/topics",
        "Topics and subscriptions",
        content,
    )
}

/// `GET /ibmmq/console/security`.
pub(crate) async fn security(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    let content = tables(
        &ctx,
        &who,
        &[
            Table {
                heading: "Channel authentication records",
                command: "DISPLAY CHLAUTH(*) ALL",
                columns: &[
                    "chlauth", "type", "address", "usersrc", "mcauser", "clntuser", "sslpeer",
                    "warn",
                ],
            },
            Table {
                heading: "Authority records",
                command: "DISPLAY AUTHREC",
                columns: &["profile", "objtype", "entity", "enttype", "authlist"],
            },
        ],
    )
    .await;
    layout::page(
        &ctx,
        &who,
        "/ibmmq/console/security",
        "CHLAUTH and AUTHREC records",
        content,
    )
}
