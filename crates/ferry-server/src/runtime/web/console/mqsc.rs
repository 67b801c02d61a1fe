//! The MQSC console: a text box whose command runs as the REST API's runCommand runs it
//! (one command on one line, checked by [`crate::rest_mqsc::single_command`], run by the
//! command server as the user with its authority checks), the response shown as text.

use super::super::errors;
use super::super::WebContext;
use super::{layout, run_lines, Visitor};
use axum::extract::{Form, State};
use axum::response::Response;
use maud::html;
use serde::Deserialize;

/// `GET /ibmmq/console/mqsc`.
pub(crate) async fn page(State(ctx): State<WebContext>, Visitor(who): Visitor) -> Response {
    let content = html! {
        form.mqsc hx-post="/ibmmq/console/mqsc" hx-target="#mqsc-output" {
            label for="command" { "Command" }
            div.row {
                input #command name="command" autocomplete="off" spellcheck="false"
                    placeholder="DISPLAY QLOCAL(*) CURDEPTH" required;
                button type="submit" { "Run" }
            }
            p.hint { "One MQSC command, run as " (who.user) " with the queue manager's authority checks." }
        }
        div #mqsc-output {}
    };
    layout::page(&ctx, &who, "/ibmmq/console/mqsc", "MQSC console", content)
}

/// The console's form.
#[derive(Deserialize)]
pub(crate) struct CommandForm {
    command: String,
}

/// `POST /ibmmq/console/mqsc`: the command's response.
pub(crate) async fn run(
    State(ctx): State<WebContext>,
    Visitor(who): Visitor,
    Form(form): Form<CommandForm>,
) -> Response {
    let command = match crate::rest_mqsc::single_command(&form.command) {
        Ok(c) => c.to_string(),
        Err(e) => return layout::error_fragment(errors::bad_request(3008, e.to_string())),
    };
    match run_lines(&ctx, &who, &command).await {
        Ok((failed, lines)) => layout::fragment(html! {
            div.response {
                p.command { code { (command) } }
                pre class=(if failed { "error" } else { "ok" }) { @for l in &lines { (l) "\n" } }
            }
        }),
        Err(e) => layout::error_fragment(e),
    }
}
