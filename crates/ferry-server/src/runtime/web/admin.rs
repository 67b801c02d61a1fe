//! The administrative REST API, shaped like IBM MQ's v2:
//!
//! - `POST /ibmmq/rest/v2/admin/action/qmgr/{qmgr}/mqsc`: one MQSC command, as text
//!   (`{"type":"runCommand","parameters":{"command":"DISPLAY QLOCAL(*)"}}`) or as JSON
//!   (`{"type":"runCommandJSON","command":"display","qualifier":"qlocal","name":"*"}`),
//!   run by the command server as the authenticated user, so its authority checks apply;
//!   the answer is IBM's `commandResponse` list with `overallCompletionCode` and
//!   `overallReasonCode`;
//! - `GET /ibmmq/rest/v2/admin/qmgr` and `/admin/qmgr/{qmgr}`: the queue manager and its
//!   state.
//!
//! The text of a command and the words of a JSON request are checked by
//! [`crate::rest_mqsc`]: one command on one line, nothing that could add a second.

use super::super::command_server::{self, Answer};
use super::super::server::Server;
use super::auth::Authenticated;
use super::bridge::settled;
use super::errors::{self, RestError};
use super::{RouteProvider, WebContext, WebRouter};
use crate::lifecycle::QmgrState;
use crate::rest_mqsc;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use ferry_engine::PrincipalDirectory;
use ferry_wire::MqscOutput;
use serde_json::{json, Value};
use std::rc::Rc;

/// MQRCCF_COMMAND_FAILED: the reason code of a command that failed.
const COMMAND_FAILED: i32 = 3008;

/// The administrative routes.
pub(crate) struct AdminApi;

impl RouteProvider for AdminApi {
    fn name(&self) -> &'static str {
        "admin REST API"
    }

    fn routes(&self) -> WebRouter {
        WebRouter::new()
            .route("/ibmmq/rest/v2/admin/qmgr", get(list_qmgrs))
            .route("/ibmmq/rest/v2/admin/qmgr/{qmgr}", get(one_qmgr))
            .route("/ibmmq/rest/v2/admin/action/qmgr/{qmgr}/mqsc", post(mqsc))
    }
}

/// The queue manager as IBM's `GET /admin/qmgr` lists it.
async fn qmgr_json(ctx: &WebContext) -> Result<Value, RestError> {
    let state = ctx
        .bridge()
        .run(|server| async move { server.state.get() })
        .await
        .map_err(|e| errors::unavailable(2162, e.to_string()))?;
    let word = match state {
        QmgrState::Starting => "starting",
        QmgrState::Running => "running",
        QmgrState::Quiescing => "quiescing",
        QmgrState::Ending => "ending",
    };
    Ok(json!({"name": ctx.qmgr(), "state": word}))
}

async fn list_qmgrs(State(ctx): State<WebContext>, _who: Authenticated) -> Response {
    match qmgr_json(&ctx).await {
        Ok(q) => axum::Json(json!({"qmgr": [q]})).into_response(),
        Err(e) => e.into_response(),
    }
}

async fn one_qmgr(
    State(ctx): State<WebContext>,
    Path(qmgr): Path<String>,
    _who: Authenticated,
) -> Response {
    if qmgr != ctx.qmgr() {
        return errors::unknown_qmgr(&qmgr).into_response();
    }
    match qmgr_json(&ctx).await {
        Ok(q) => axum::Json(json!({"qmgr": [q]})).into_response(),
        Err(e) => e.into_response(),
    }
}

/// What a request asks for.
enum Request {
    /// runCommand: the text is shown as the command server answers it.
    Text(String),
    /// runCommandJSON: DISPLAY attributes become `parameters` objects.
    Json(String),
}

fn parse_request(body: &[u8]) -> Result<Request, RestError> {
    let bad = |m: String| errors::bad_request(COMMAND_FAILED, m);
    let value: Value =
        serde_json::from_slice(body).map_err(|e| bad(format!("the body is not JSON: {e}")))?;
    match value.get("type").and_then(Value::as_str) {
        Some("runCommand") => {
            let text = value
                .get("parameters")
                .and_then(|p| p.get("command"))
                .and_then(Value::as_str)
                .ok_or_else(|| bad("runCommand needs parameters.command (text)".into()))?;
            rest_mqsc::single_command(text)
                .map(|t| Request::Text(t.to_string()))
                .map_err(|e| bad(e.to_string()))
        }
        Some("runCommandJSON") => rest_mqsc::command_from_json(&value)
            .map(Request::Json)
            .map_err(|e| bad(e.to_string())),
        _ => Err(bad(
            "'type' must be \"runCommand\" or \"runCommandJSON\"".into()
        )),
    }
}

async fn mqsc(
    State(ctx): State<WebContext>,
    Path(qmgr): Path<String>,
    who: Authenticated,
    body: Bytes,
) -> Response {
    if qmgr != ctx.qmgr() {
        return errors::unknown_qmgr(&qmgr).into_response();
    }
    let request = match parse_request(&body) {
        Ok(r) => r,
        Err(e) => return e.into_response(),
    };
    let (command, as_json) = match request {
        Request::Text(c) => (c, false),
        Request::Json(c) => (c, true),
    };
    let ran = ctx
        .bridge()
        .run(move |server| async move { run_as(&server, &who, &command).await })
        .await;
    let output = match ran {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => return e.into_response(),
        Err(e) => return errors::unavailable(2162, e.to_string()).into_response(),
    };
    (
        StatusCode::OK,
        axum::Json(command_response(&output, as_json)),
    )
        .into_response()
}

/// Runs `command` for `who` through the command server: an administrator's unchecked,
/// another user's with the authorities its command needs when the queue manager checks
/// them, refused when it does not (any repository user would otherwise administer).
pub(crate) async fn run_as(
    server: &Rc<Server>,
    who: &Authenticated,
    command: &str,
) -> Result<MqscOutput, RestError> {
    let checks = server.engine.borrow().checks_authority();
    if !who.administrator && !checks {
        return Err(errors::not_authorized("run MQSC commands"));
    }
    let principal = server.principals.principal(&who.user);
    let mut wait = Default::default();
    let output = match command_server::run(server, command, Some(&principal), &mut wait) {
        Answer::Now(o) => o,
        Answer::Later(work) => work.await,
    };
    if !settled(server, wait).await {
        return Err(errors::mqi_failed(
            ferry_mqi::ReasonCode::ResourceProblem,
            "saving the change",
        ));
    }
    Ok(output)
}

/// IBM's answer to an MQSC request: one `commandResponse` item per response message.
fn command_response(output: &MqscOutput, as_json: bool) -> Value {
    let (cc, rc) = if output.failed {
        (2, COMMAND_FAILED)
    } else {
        (0, 0)
    };
    let items: Vec<Value> = rest_mqsc::responses(&output.lines)
        .into_iter()
        .map(|lines| {
            if !as_json {
                return json!({"completionCode": cc, "reasonCode": rc, "text": lines});
            }
            let parameters = rest_mqsc::parameters(&lines);
            if parameters.is_empty() || output.failed {
                json!({"completionCode": cc, "reasonCode": rc, "message": lines})
            } else {
                json!({"completionCode": cc, "reasonCode": rc, "parameters": parameters})
            }
        })
        .collect();
    json!({
        "commandResponse": items,
        "overallCompletionCode": cc,
        "overallReasonCode": rc,
    })
}
