//! The frame of every console page: head (the console's own files only), the navigation
//! with the queue manager's name and the user, and the page's content. maud escapes
//! every value it inserts; nothing here writes raw HTML from data.

use super::super::auth::Authenticated;
use super::super::errors::RestError;
use super::super::WebContext;
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use maud::{html, Markup, DOCTYPE};

/// The console's sections, as the navigation lists them: (path, title).
const SECTIONS: &[(&str, &str)] = &[
    ("/ibmmq/console/", "Queue manager"),
    ("/ibmmq/console/queues", "Queues"),
    ("/ibmmq/console/channels", "Channels"),
    ("/ibmmq/console/connections", "Connections"),
    ("/ibmmq/console/topics", "Topics"),
    ("/ibmmq/console/security", "CHLAUTH and AUTHREC"),
    ("/ibmmq/console/mqsc", "MQSC console"),
];

/// The `<head>` of every page.
fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            // htmx: no inline indicator styles (the CSP forbids them), no eval.
            meta name="htmx-config"
                content=r#"{"includeIndicatorStyles":false,"allowEval":false,"allowScriptTags":false}"#;
            title { (title) " - Ferry" }
            // No icon: the browser asks for no /favicon.ico.
            link rel="icon" href="data:,";
            link rel="stylesheet" href="/ibmmq/console/assets/uPlot.min.css";
            link rel="stylesheet" href="/ibmmq/console/assets/console.css";
            script src="/ibmmq/console/assets/htmx.min.js" defer {}
            script src="/ibmmq/console/assets/uPlot.iife.min.js" defer {}
            script src="/ibmmq/console/assets/console.js" defer {}
        }
    }
}

/// A whole page: `content` under the navigation, `section` (a [`SECTIONS`] path) marked.
pub(crate) fn page(
    ctx: &WebContext,
    who: &Authenticated,
    section: &str,
    title: &str,
    content: Markup,
) -> Response {
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            // Every htmx request carries IBM MQ's CSRF header.
            body hx-headers=r#"{"ibm-mq-rest-csrf-token":"console"}"# {
                nav {
                    div.brand { "Ferry" span.qmgr { (ctx.qmgr()) } }
                    ul {
                        @for (path, name) in SECTIONS {
                            li { a href=(path) class=[(*path == section).then_some("current")] { (name) } }
                        }
                    }
                    div.user {
                        span { "User " strong { (who.user) } }
                        form hx-post="/ibmmq/console/logout" {
                            button type="submit" { "Log out" }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    (content)
                }
            }
        }
    };
    Html(doc.into_string()).into_response()
}

/// A page on its own (the login page): no navigation.
pub(crate) fn bare(title: &str, content: Markup) -> Response {
    let doc = html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.bare hx-headers=r#"{"ibm-mq-rest-csrf-token":"console"}"# {
                main { (content) }
            }
        }
    };
    Html(doc.into_string()).into_response()
}

/// A fragment (an htmx answer).
pub(crate) fn fragment(content: Markup) -> Response {
    Html(content.into_string()).into_response()
}

/// A REST error shown in a page or fragment, with its status.
pub(crate) fn error_note(e: &RestError) -> Markup {
    html! {
        div.error role="alert" {
            strong { (e.msg_id) } " " (e.message)
        }
    }
}

/// A REST error as a fragment answer: its status, the note as HTML (htmx shows 4xx
/// answers only when told; console.js tells it to).
pub(crate) fn error_fragment(e: RestError) -> Response {
    let status = e.status;
    let mut r = fragment(error_note(&e));
    *r.status_mut() = if status.is_success() {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        status
    };
    r
}

/// A table of displayed objects: `columns` (attribute keys, lower case) as headings in
/// MQSC's upper case.
pub(crate) fn object_table(objects: &[super::Shown], columns: &[&str]) -> Markup {
    html! {
        @if objects.is_empty() {
            p.empty { "None." }
        } @else {
            table {
                thead { tr { @for c in columns { th { (c.to_ascii_uppercase()) } } } }
                tbody {
                    @for o in objects {
                        tr {
                            @for c in columns {
                                td { (o.get(*c).map(value_text).unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A displayed value as text.
pub(crate) fn value_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Bool(true) => "yes".into(),
        other => other.to_string(),
    }
}
