//! The console's login page: a form whose user id and password open a session as
//! `POST /ibmmq/rest/v2/login` does (the same connection authentication), and logging
//! out. The form is sent by htmx with the CSRF header; on success the answer's
//! `HX-Redirect` takes the browser to the console.

use super::super::auth::CSRF_HEADER;
use super::super::errors;
use super::super::listener::Peer;
use super::super::session::{cookie, log_in, token_of};
use super::super::WebContext;
use super::layout;
use axum::extract::{Form, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use maud::html;
use serde::Deserialize;

/// `GET /ibmmq/console/login`.
pub(crate) async fn page(State(ctx): State<WebContext>) -> Response {
    layout::bare(
        "Log in",
        html! {
            form.login hx-post="/ibmmq/console/login" hx-target="#login-result" {
                h1 { "Ferry" }
                p.qmgr { "Queue manager " strong { (ctx.qmgr()) } }
                label { "User id" input name="username" autocomplete="username" required; }
                label { "Password" input name="password" type="password" autocomplete="current-password" required; }
                button type="submit" { "Log in" }
                div #login-result {}
            }
        },
    )
}

/// The login form's fields.
#[derive(Deserialize)]
pub(crate) struct Credentials {
    username: String,
    password: String,
}

/// `POST /ibmmq/console/login`: opens a session, or says why not.
pub(crate) async fn submit(
    State(ctx): State<WebContext>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    Form(form): Form<Credentials>,
) -> Response {
    if !headers.contains_key(CSRF_HEADER) {
        return errors::csrf_missing().into_response();
    }
    let peer = peer.map(|Extension(p)| p);
    match log_in(&ctx, peer.as_ref(), form.username, form.password).await {
        Ok(token) => {
            let mut r = StatusCode::NO_CONTENT.into_response();
            let h = r.headers_mut();
            h.insert(header::SET_COOKIE, cookie(Some(&token), ctx.secure()));
            h.insert("hx-redirect", HeaderValue::from_static("/ibmmq/console/"));
            r
        }
        Err(e) => {
            let mut r = layout::error_fragment(e);
            // The form shows the refusal in place (and the browser offers no basic
            // authentication dialog).
            r.headers_mut().remove(header::WWW_AUTHENTICATE);
            r
        }
    }
}

/// `POST /ibmmq/console/logout`: ends the session, back to the login page.
pub(crate) async fn logout(State(ctx): State<WebContext>, headers: HeaderMap) -> Response {
    if !headers.contains_key(CSRF_HEADER) {
        return errors::csrf_missing().into_response();
    }
    if let Some(token) = token_of(&headers) {
        ctx.sessions().close(token);
    }
    let mut r = StatusCode::NO_CONTENT.into_response();
    let h = r.headers_mut();
    h.insert(header::SET_COOKIE, cookie(None, ctx.secure()));
    h.insert(
        "hx-redirect",
        HeaderValue::from_static("/ibmmq/console/login"),
    );
    r
}
