//! Errors of the REST API in IBM MQ's shape: an HTTP status and a JSON body
//! `{"error":[{"type":"rest","msgId":...,"message":...,"explanation":...,"action":...,
//! "completionCode":2,"reasonCode":...}]}`, with the MQ reason code that fits.
//!
//! Message ids are Ferry's `FRYWnnnnE` (IBM's mqweb uses `MQWBnnnnE`); the table of
//! them is in docs/operations.md.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// One REST error, turned into its response by [`IntoResponse`].
#[derive(Debug, Clone, thiserror::Error)]
#[error("{msg_id}: {message} (HTTP {status}, reason {reason})")]
pub(crate) struct RestError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The message id (`FRYW0009E`).
    pub msg_id: &'static str,
    /// The MQ reason code (0 when none fits).
    pub reason: i32,
    /// What happened.
    pub message: String,
    /// Why.
    pub explanation: &'static str,
    /// What to do.
    pub action: &'static str,
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        let body = json!({"error": [{
            "type": "rest",
            "msgId": self.msg_id,
            "message": format!("{}: {}", self.msg_id, self.message),
            "explanation": self.explanation,
            "action": self.action,
            "completionCode": 2,
            "reasonCode": self.reason,
        }]});
        let mut response = (self.status, axum::Json(body)).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"ferry\""),
            );
        }
        response
    }
}

/// 401: no credentials, or wrong ones.
pub(crate) fn unauthenticated() -> RestError {
    RestError {
        status: StatusCode::UNAUTHORIZED,
        msg_id: "FRYW0001E",
        reason: 2035,
        message: "The request is not authenticated.".into(),
        explanation: "The REST API needs a user id and password (HTTP basic authentication) that the queue manager's connection authentication accepts, or a client certificate its key repository trusts.",
        action: "Send the credentials of a user of the queue manager (ferry user add) with the request.",
    }
}

/// 403: the CSRF header is missing from a request that changes something.
pub(crate) fn csrf_missing() -> RestError {
    RestError {
        status: StatusCode::FORBIDDEN,
        msg_id: "FRYW0002E",
        reason: 2035,
        message: "The request has no ibm-mq-rest-csrf-token header.".into(),
        explanation: "POST, PUT, PATCH and DELETE requests must carry the ibm-mq-rest-csrf-token header (any value), as IBM MQ's REST API requires, so that a web page cannot make a browser send them.",
        action: "Add the header ibm-mq-rest-csrf-token with any value.",
    }
}

/// 403: authenticated but not allowed.
pub(crate) fn not_authorized(what: &str) -> RestError {
    RestError {
        status: StatusCode::FORBIDDEN,
        msg_id: "FRYW0003E",
        reason: 2035,
        message: format!("The user is not authorized to {what}."),
        explanation: "Administrative REST requests run as the authenticated user: an administrator of the queue manager, or, when object authorities are checked, a user with the authorities the command needs.",
        action: "Use an administrator's credentials, or grant the authority with SET AUTHREC.",
    }
}

/// 404: the path names another queue manager.
pub(crate) fn unknown_qmgr(name: &str) -> RestError {
    RestError {
        status: StatusCode::NOT_FOUND,
        msg_id: "FRYW0009E",
        reason: 2058,
        message: format!("Could not find the queue manager '{name}'."),
        explanation: "This web server serves one queue manager, whose name (case-sensitive) the path must give.",
        action: "Correct the queue manager name in the URL.",
    }
}

/// 400: a bad request, with why.
pub(crate) fn bad_request(reason: i32, message: String) -> RestError {
    RestError {
        status: StatusCode::BAD_REQUEST,
        msg_id: "FRYW0004E",
        reason,
        message,
        explanation:
            "The request's path, query, headers or body are not what the resource accepts.",
        action: "Correct the request as the message says.",
    }
}

/// 503: the queue manager cannot answer now.
pub(crate) fn unavailable(reason: i32, message: String) -> RestError {
    RestError {
        status: StatusCode::SERVICE_UNAVAILABLE,
        msg_id: "FRYW0005E",
        reason,
        message,
        explanation: "The queue manager is stopping, or could not answer within the web server's RequestTimeout.",
        action: "Try again once the queue manager runs.",
    }
}

/// An MQI call failed with `reason`: the status IBM's messaging REST API gives it.
pub(crate) fn mqi_failed(reason: ferry_mqi::ReasonCode, what: &str) -> RestError {
    let status = match reason.number() {
        2035 => StatusCode::FORBIDDEN,
        2085 | 2082 | 2001 => StatusCode::NOT_FOUND,
        2161 | 2162 | 2059 => StatusCode::SERVICE_UNAVAILABLE,
        2030 | 2031 => StatusCode::PAYLOAD_TOO_LARGE,
        2053 | 2056 | 2051 | 2016 => StatusCode::CONFLICT,
        2102 => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_REQUEST,
    };
    RestError {
        status,
        msg_id: "FRYW0007E",
        reason: reason.number(),
        message: format!("{what} failed: {} ({}).", reason.name(), reason.number()),
        explanation: "The queue manager refused the MQI call the request made; the reason code says why.",
        action: "See the reason code: e.g. 2085 (no such queue), 2035 (no authority), 2053 (queue full).",
    }
}

/// 404 for a path no route serves.
pub(crate) async fn not_found() -> RestError {
    RestError {
        status: StatusCode::NOT_FOUND,
        msg_id: "FRYW0006E",
        reason: 0,
        message: "No resource has this path.".into(),
        explanation: "The web server serves /healthz, /readyz, /metrics, /ibmmq/rest/v2/... and the console at /ibmmq/console/; paths are case-sensitive.",
        action: "Correct the URL.",
    }
}

/// 503 for a request that overran RequestTimeout.
pub(crate) fn timed_out() -> Response {
    let mut r = unavailable(
        0,
        "The request did not complete within RequestTimeout.".into(),
    )
    .into_response();
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}
