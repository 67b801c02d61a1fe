//! Who sends a REST request: HTTP basic credentials checked by the queue manager's
//! connection authentication (its user repository, then the host's users through PAM,
//! or the LDAP directory of an IDPWLDAP AUTHINFO; `runtime::connauth::verify`), or with
//! WebServer SSL=YES a client certificate its key repository trusts, whose common name
//! is the user id, or the `LtpaToken2` cookie of a login session ([`super::session`]).
//! And IBM MQ's CSRF rule: a request that changes something (POST, PUT,
//! PATCH, DELETE) must carry the `ibm-mq-rest-csrf-token` header.
//!
//! A wrong password is answered 401 after the AUTHINFO's FAILDLAY (one second without
//! CONNAUTH) and logged (FRY5534E) as any connection's; checks run one at a time, off
//! the queue manager's thread.

use super::super::connauth;
use super::super::server::Server;
use super::errors::{self, RestError};
use super::listener::Peer;
use super::WebContext;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{header, Method};
use base64::Engine as _;
use std::rc::Rc;
use std::time::Duration;

/// The channel name FRY5534E shows for the web server's refusals.
const CHANNEL: &str = "(REST API)";

/// The header IBM MQ's REST API demands on requests that change something.
pub(crate) const CSRF_HEADER: &str = "ibm-mq-rest-csrf-token";

/// An authenticated request's user: extract it to demand authentication (401 without).
#[derive(Clone, Debug)]
pub(crate) struct Authenticated {
    /// The user id the credentials proved.
    pub user: String,
    /// Whether the user administers the queue manager.
    pub administrator: bool,
    /// The client's address.
    pub address: String,
}

/// HTTP basic credentials: `Basic base64(user:password)`; `None` when malformed.
pub(crate) fn basic_credentials(value: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(value).ok()?.trim();
    let (scheme, encoded) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") || encoded.len() > 4096 {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    if user.is_empty() || user.len() > 1024 || user.chars().any(char::is_control) {
        return None;
    }
    Some((user.to_string(), password.to_string()))
}

impl FromRequestParts<WebContext> for Authenticated {
    type Rejection = RestError;

    async fn from_request_parts(
        parts: &mut Parts,
        ctx: &WebContext,
    ) -> Result<Self, Self::Rejection> {
        let changes = matches!(
            parts.method,
            Method::POST | Method::PUT | Method::PATCH | Method::DELETE
        );
        if changes && !parts.headers.contains_key(CSRF_HEADER) {
            return Err(errors::csrf_missing());
        }
        let peer = parts.extensions.get::<Peer>().cloned();
        let address = peer
            .as_ref()
            .map(|p| p.address.ip().to_string())
            .unwrap_or_default();
        let who = match parts.headers.get(header::AUTHORIZATION) {
            Some(value) => {
                let (user, password) =
                    basic_credentials(value.as_bytes()).ok_or_else(errors::unauthenticated)?;
                let address = address.clone();
                ctx.bridge()
                    .run(move |server| async move {
                        check_password(&server, user, password, address).await
                    })
                    .await
                    .map_err(|e| errors::unavailable(2162, e.to_string()))?
            }
            None if super::session::token_of(&parts.headers).is_some() => {
                super::session::token_of(&parts.headers).and_then(|t| ctx.sessions().user(t))
            }
            None => match peer.and_then(|p| p.certificate_user) {
                Some(user) => ctx
                    .bridge()
                    .run(move |server| async move { known_user(&server, user) })
                    .await
                    .map_err(|e| errors::unavailable(2162, e.to_string()))?,
                None => None,
            },
        };
        let (user, administrator) = who.ok_or_else(errors::unauthenticated)?;
        Ok(Authenticated {
            user,
            administrator,
            address,
        })
    }
}

/// Checks `user`'s `password` as connection authentication does, reading the user's
/// LDAP groups when authorities need them. The proved user id and whether it is an
/// administrator; `None` after FAILDLAY when refused.
pub(crate) async fn check_password(
    server: &Rc<Server>,
    user: String,
    password: String,
    address: String,
) -> Option<(String, bool)> {
    let fail_delay = server
        .connauth
        .borrow()
        .config
        .as_ref()
        .map_or(Duration::from_secs(1), |c| c.fail_delay);
    let proved = connauth::verify(server, CHANNEL, &address, user, password, fail_delay).await?;
    if let Some(directory) = connauth::groups_to_read(server, &proved) {
        if !connauth::read_groups(server, directory, &proved, CHANNEL, &address).await {
            return None;
        }
    }
    let administrator = server.administrators.is_administrator(&proved);
    Some((proved, administrator))
}

/// A client certificate's user: one the queue manager knows (its repository, the host,
/// or an administrator).
fn known_user(server: &Server, user: String) -> Option<(String, bool)> {
    let administrator = server.administrators.is_administrator(&user);
    (administrator || server.principals.user_exists(&user)).then_some((user, administrator))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_credentials_are_decoded_and_checked() {
        assert_eq!(
            basic_credentials(b"Basic YXBwOnBhc3M6d29yZA=="),
            Some(("app".into(), "pass:word".into()))
        );
        assert_eq!(basic_credentials(b"Bearer abc"), None);
        assert_eq!(basic_credentials(b"Basic !!!"), None);
        assert_eq!(basic_credentials(b"Basic OnBhc3M="), None); // ":pass": no user
        assert_eq!(basic_credentials(b"Basic"), None);
        assert_eq!(basic_credentials(&[0xff, 0xfe]), None);
    }
}
