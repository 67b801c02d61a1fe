//! TLS for every kind of connection: the queue manager's key repository, the handshake
//! on an accepted socket, and the channel checks made once the channel is known.
//!
//! A native listener port carries plain and TLS conversations side by side, as MQ's
//! does: the first byte tells them apart (22, a TLS handshake record, never begins
//! Ferry's hello). For TLS, the ClientHello's SNI names the channel the way MQ clients
//! send it (`ferry_security::sni`), so the handshake already offers that channel's
//! CipherSpecs, presents its certificate and demands a client certificate when SSLCAUTH
//! says so. A sending queue manager names its message channel the same way; a receiving
//! channel (RCVR) presents its certificate and applies SSLCAUTH in the handshake too, but
//! agrees any offered suite so that [`check`] reports a CipherSpec mismatch by channel
//! name. An AMQP channel with SSLCIPH takes only TLS on its port (AMQPS: TLS before the
//! AMQP header). The sending end of a message channel makes its handshake in
//! `message_channel::sender`.
//!
//! Whatever the handshake did, [`check`] decides once the channel is known: a channel
//! with SSLCIPH refuses plain conversations and suites its SSLCIPH does not allow, a
//! channel without refuses TLS (the ends must agree, as in MQ), SSLCAUTH(REQUIRED) needs a
//! client certificate and SSLPEER must match its subject. Each refusal has its FRY
//! message (MQ's AMQ96xx numbers) and reason code.
//!
//! The key repository is read at start and by REFRESH SECURITY TYPE(SSL); conversations
//! already connected keep the keys they agreed.

use super::server::Server;
use crate::messages;
use ferry_messages::Message;
use ferry_mqi::ReasonCode;
use ferry_objects::channel::{ChannelDefinition, ChannelType, SslClientAuth};
use ferry_objects::status::TlsStatus;
use ferry_security::{DistinguishedName, PeerNameFilter};
use ferry_tls::tokio_rustls::rustls::server::Acceptor;
use ferry_tls::tokio_rustls::{server::TlsStream, LazyConfigAcceptor};
use ferry_tls::{ChannelTls, Negotiated, ServerTls, TlsCounters};
use std::rc::Rc;
use tokio::net::TcpStream;

/// The first byte of a TLS handshake record.
const TLS_HANDSHAKE_RECORD: u8 = 0x16;

/// What one TLS conversation agreed, kept for its channel checks and DISPLAY CHSTATUS.
#[derive(Debug)]
pub struct TlsSession {
    /// The CipherSpec and the partner's certificate.
    pub negotiated: Negotiated,
    /// Key resets (SSLRKEYS).
    pub counters: Rc<TlsCounters>,
}

impl TlsSession {
    /// The client certificate's subject and issuer, when it presented one (SSLPEERMAP
    /// matches on them).
    pub fn peer_names(&self) -> Option<(&DistinguishedName, &DistinguishedName)> {
        self.negotiated
            .peer
            .as_ref()
            .map(|p| (&p.subject, &p.issuer))
    }

    /// DISPLAY CHSTATUS's SSLCIPH, SSLPEER, SSLCERTI and SSLRKEYS.
    pub fn status(&self) -> TlsStatus {
        let peer = self.negotiated.peer.as_ref();
        TlsStatus {
            cipher_spec: self.negotiated.cipher_spec.name.to_string(),
            peer: peer.map(|p| p.subject.to_string()).unwrap_or_default(),
            cert_issuer: peer.map(|p| p.issuer.to_string()).unwrap_or_default(),
            key_resets: self.counters.key_resets(),
        }
    }
}

/// REFRESH SECURITY TYPE(SSL): reads the key repository again and uses it for new
/// handshakes. Returns what was loaded, or the FRY9660E line when a file is unusable
/// (the repository in use then stays as it was).
pub fn refresh(server: &Server) -> Result<String, String> {
    let dir = server
        .engine
        .borrow()
        .qmgr()
        .key_repository_dir(&server.paths.dir);
    let (tls, loaded) = ServerTls::load(&dir);
    match loaded {
        Ok(n) => {
            *server.tls.borrow_mut() =
                Rc::new(tls.with_policy(server.ini.ssl.policy().unwrap_or_default()));
            let trust = if server.tls.borrow().repository().trust().is_some() {
                "with"
            } else {
                "without"
            };
            Ok(format!(
                "key repository {} ({n} certificate{}, {trust} trust.pem)",
                dir.display(),
                if n == 1 { "" } else { "s" }
            ))
        }
        Err(why) => Err(server
            .error_log
            .borrow_mut()
            .write(&messages::KEY_REPOSITORY_ERROR, &[&dir.display(), &why])),
    }
}

/// The rustls settings for `def` (its SSLCIPH, SSLCAUTH and certificate label), or the
/// queue manager's defaults when the channel is not known (or not a TLS channel).
fn channel_tls(server: &Server, def: Option<&ChannelDefinition>) -> ChannelTls {
    let qm_label = server
        .engine
        .borrow()
        .qmgr()
        .certificate_label(&server.name);
    match def.and_then(|d| Some(d).zip(d.attributes.cipher_spec())) {
        Some((d, choice)) => ChannelTls {
            cipher: Some(choice.name()),
            client_auth_required: d.attributes.ssl_client_auth == SslClientAuth::Required,
            label: match d.attributes.cert_label.trim() {
                "" => qm_label,
                l => l.to_string(),
            },
        },
        None => ChannelTls {
            cipher: None,
            client_auth_required: false,
            label: qm_label,
        },
    }
}

/// A socket accepted on a native listener, after the TLS handshake if it began one.
pub enum Accepted {
    /// A plain conversation.
    Plain(TcpStream),
    /// A TLS conversation and what it agreed.
    Tls(Box<TlsStream<TcpStream>>, TlsSession),
}

/// Waits (until `deadline`, the end of the socket's HandshakeTimeout) for the first byte
/// of an accepted native socket and, when it begins a TLS handshake, completes it for the
/// channel its SNI names. `None` when the handshake failed (logged); a peer that went or
/// stayed silent is left to the plain path, which reports it as it always has.
pub async fn accept_native(
    server: &Server,
    stream: TcpStream,
    peer: &str,
    deadline: tokio::time::Instant,
) -> Option<Accepted> {
    let mut first = [0u8; 1];
    match tokio::time::timeout_at(deadline, stream.peek(&mut first)).await {
        Ok(Ok(1)) => {}
        // Gone, failed, or silent: the plain path handles each as it always has.
        _ => return Some(Accepted::Plain(stream)),
    }
    if first[0] != TLS_HANDSHAKE_RECORD {
        return Some(Accepted::Plain(stream));
    }
    let handshake = async {
        let acceptor = LazyConfigAcceptor::new(Acceptor::default(), stream);
        let start = acceptor.await.map_err(|e| e.to_string())?;
        let channel = start
            .client_hello()
            .server_name()
            .and_then(ferry_security::sni::channel_for_host)
            .and_then(|name| server.engine.borrow().channel(&name))
            .filter(|d| matches!(d.channel_type, ChannelType::Svrconn | ChannelType::Receiver));
        let mut settings = channel_tls(server, channel.as_ref());
        if channel
            .as_ref()
            .is_some_and(|d| d.channel_type == ChannelType::Receiver)
        {
            // A receiving channel agrees any offered suite and checks it against its
            // SSLCIPH once the hello arrives ([`check`]): a mismatch is then refused with
            // FRY9631E naming the channel, at both ends, as MQ reports it, rather than a
            // handshake without a shared suite.
            settings.cipher = None;
        }
        let config = server.tls.borrow().config(&settings).map_err(|e| {
            let what = channel
                .as_ref()
                .map_or("the queue manager".to_string(), |d| {
                    format!("channel '{}'", d.name)
                });
            setup_failed(server, &what, &e.to_string());
            String::new()
        })?;
        start.into_stream(config).await.map_err(|e| e.to_string())
    };
    match tokio::time::timeout_at(deadline, handshake).await {
        Ok(Ok(tls)) => {
            let session = session_of(&tls)?;
            Some(Accepted::Tls(Box::new(tls), session))
        }
        Ok(Err(why)) => {
            if !why.is_empty() {
                handshake_failed(server, peer, &why);
            }
            None
        }
        Err(_) => {
            handshake_failed(server, peer, "it did not complete within HandshakeTimeout");
            None
        }
    }
}

/// The TLS handshake for an AMQP channel with SSLCIPH (AMQPS), within `limit`. A client
/// that starts plain AMQP instead is let through: [`check`] refuses it with FRY9639E
/// once its connection speaks, which tells its user more than a reset socket. A client
/// that sends nothing within `limit` is closed.
pub async fn accept_amqp(
    server: &Server,
    stream: TcpStream,
    def: &ChannelDefinition,
    peer: &str,
    limit: std::time::Duration,
) -> Option<Accepted> {
    let deadline = tokio::time::Instant::now() + limit;
    let mut first = [0u8; 1];
    match tokio::time::timeout_at(deadline, stream.peek(&mut first)).await {
        Ok(Ok(1)) if first[0] == TLS_HANDSHAKE_RECORD => {}
        Ok(Ok(1)) => return Some(Accepted::Plain(stream)),
        // Gone, failed, or silent for the whole limit.
        _ => return None,
    }
    let settings = channel_tls(server, Some(def));
    let config = match server.tls.borrow().config(&settings) {
        Ok(c) => c,
        Err(e) => {
            setup_failed(server, &format!("channel '{}'", def.name), &e.to_string());
            return None;
        }
    };
    let acceptor = ferry_tls::tokio_rustls::TlsAcceptor::from(config);
    match tokio::time::timeout_at(deadline, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => {
            let session = session_of(&tls)?;
            Some(Accepted::Tls(Box::new(tls), session))
        }
        Ok(Err(e)) => {
            handshake_failed(server, peer, &e.to_string());
            None
        }
        Err(_) => {
            handshake_failed(server, peer, "it did not complete within HandshakeTimeout");
            None
        }
    }
}

/// The session of a completed handshake (its key-reset counter comes with [`split`]).
fn session_of(tls: &TlsStream<TcpStream>) -> Option<TlsSession> {
    Some(TlsSession {
        negotiated: ferry_tls::negotiated(tls.get_ref().1)?,
        counters: Rc::new(TlsCounters::default()),
    })
}

/// Splits a TLS stream into the reader and writer a connection runs on, with the
/// queue manager's SSLRKEYC.
pub fn split(
    server: &Server,
    tls: TlsStream<TcpStream>,
    session: &mut TlsSession,
) -> (
    ferry_tls::TlsReader<TlsStream<TcpStream>>,
    ferry_tls::TlsWriter<TlsStream<TcpStream>>,
) {
    let every =
        ferry_tls::key_reset_bytes(i64::from(server.engine.borrow().qmgr().ssl_reset_count));
    let (r, w, counters) = ferry_tls::split(tls, every);
    session.counters = counters;
    (r, w)
}

fn handshake_failed(server: &Server, peer: &str, why: &str) {
    server
        .error_log
        .borrow_mut()
        .write(&messages::TLS_HANDSHAKE_FAILED, &[&peer, &why]);
}

fn setup_failed(server: &Server, what: &str, why: &str) {
    server
        .error_log
        .borrow_mut()
        .write(&messages::TLS_SETUP_FAILED, &[&what, &why]);
}

/// Why a conversation was refused by its channel's TLS settings.
#[derive(Debug)]
pub struct Refusal {
    /// The reason code the client gets.
    pub reason: ReasonCode,
    /// The FRY line written to the error log (also the client's text).
    pub text: String,
}

/// The channel's TLS checks for a conversation from `peer` (see the module comment);
/// a refusal is written to the error log.
pub fn check(
    server: &Server,
    def: &ChannelDefinition,
    tls: Option<&TlsSession>,
    peer: &str,
) -> Result<(), Refusal> {
    let a = &def.attributes;
    let name = def.name.as_str();
    let refuse = |reason, message: &Message, args: &[&dyn std::fmt::Display]| Refusal {
        reason,
        text: server.error_log.borrow_mut().write(message, args),
    };
    let choice = a.cipher_spec();
    let (choice, session) = match (choice, tls) {
        (_, None) if server.ini.tcp.secure_comms_only => {
            return Err(refuse(
                ReasonCode::SslInitializationError,
                &messages::PLAIN_REFUSED,
                &[&peer, &name],
            ))
        }
        (None, None) => return Ok(()),
        (Some(_), None) => {
            return Err(refuse(
                ReasonCode::SslInitializationError,
                &messages::TLS_REQUIRED,
                &[&peer, &name, &a.ssl_cipher.trim()],
            ))
        }
        (None, Some(_)) => {
            return Err(refuse(
                ReasonCode::SslInitializationError,
                &messages::TLS_NOT_EXPECTED,
                &[&peer, &name],
            ))
        }
        (Some(c), Some(s)) => (c, s),
    };
    let spec = session.negotiated.cipher_spec;
    if !choice.allows(spec.iana) {
        return Err(refuse(
            ReasonCode::SslInitializationError,
            &messages::TLS_CIPHERSPEC_MISMATCH,
            &[&peer, &spec.name, &choice.name(), &name],
        ));
    }
    let peer_cert = session.negotiated.peer.as_ref();
    if a.ssl_client_auth == SslClientAuth::Required && peer_cert.is_none() {
        return Err(refuse(
            ReasonCode::SslInitializationError,
            &messages::TLS_NO_CERTIFICATE,
            &[&peer, &name],
        ));
    }
    if let Ok(Some(filter)) = PeerNameFilter::parse(&a.ssl_peer) {
        let subject = peer_cert.map(|p| p.subject.clone()).unwrap_or_default();
        if !filter.matches(&subject) {
            return Err(refuse(
                ReasonCode::SslPeerNameMismatch,
                &messages::TLS_PEER_NAME_MISMATCH,
                &[&peer, &subject, &a.ssl_peer.trim(), &name],
            ));
        }
    }
    Ok(())
}
