//! TLS for client connections, as an MQ client channel with SSLCIPH makes them.
//!
//! [`TlsOptions`] is the client channel's TLS: its CipherSpec (SSLCIPH), the key
//! repository (MQSSLKEYR: `trust.pem`, and the client's certificate when the channel
//! demands one), the certificate label and an optional SSLPEER filter for the queue
//! manager's certificate. The rustls configuration is made once per options value and
//! shared by every connection made with it. The channel's name travels in SNI as MQ's
//! clients send it, so the queue manager offers that channel's CipherSpec and certificate.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use ferry_mqi::{MqError, ReasonCode};
use ferry_security::PeerNameFilter;
use ferry_tls::tokio_rustls::{client::TlsStream, rustls, TlsConnector};
use ferry_tls::ClientTlsOptions;
use tokio::net::TcpStream;

/// What the client puts in the TLS server-name extension (mqclient.ini's OutboundSNI).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum OutboundSni {
    /// The channel's name, as MQ encodes it: the queue manager offers that channel's
    /// CipherSpecs and certificate (MQ's default).
    #[default]
    Channel,
    /// The host name of the connection name (none for an IP address), for a proxy that
    /// routes on it; the queue manager then checks the channel's settings after the
    /// handshake.
    HostName,
}

/// The TLS a client connection uses.
#[derive(Clone, Debug)]
pub struct TlsOptions {
    options: ClientTlsOptions,
    sni: OutboundSni,
    config: Arc<OnceLock<Result<Arc<rustls::ClientConfig>, String>>>,
}

impl PartialEq for TlsOptions {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for TlsOptions {}

impl std::hash::Hash for TlsOptions {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl TlsOptions {
    /// TLS with `cipher_spec` (a CipherSpec name or alias, as SSLCIPH takes) and the key
    /// repository directory `key_repository`.
    pub fn new(cipher_spec: &str, key_repository: impl Into<PathBuf>) -> Self {
        TlsOptions {
            options: ClientTlsOptions {
                cipher_spec: cipher_spec.to_string(),
                key_repository: key_repository.into(),
                certificate_label: None,
                peer_name: None,
            },
            sni: OutboundSni::Channel,
            config: Arc::new(OnceLock::new()),
        }
    }

    /// What goes in the TLS server-name extension (default: the channel, as MQ).
    pub fn outbound_sni(mut self, sni: OutboundSni) -> Self {
        self.sni = sni;
        self
    }

    /// The label of the client's certificate in the key repository (CERTLABL); by
    /// default MQ's `ibmwebspheremq<user>`, used when the repository has it.
    pub fn certificate_label(mut self, label: &str) -> Self {
        self.options.certificate_label = Some(label.to_string());
        self.config = Arc::new(OnceLock::new());
        self
    }

    /// SSLPEER: a distinguished-name filter the queue manager's certificate must match
    /// (2398 MQRC_SSL_PEER_NAME_MISMATCH otherwise; 2399 when it does not parse).
    pub fn peer_name(mut self, filter: &str) -> Self {
        self.options.peer_name = Some(filter.to_string());
        self.config = Arc::new(OnceLock::new());
        self
    }

    fn key(
        &self,
    ) -> (
        &str,
        &PathBuf,
        &Option<String>,
        &Option<String>,
        OutboundSni,
    ) {
        let o = &self.options;
        (
            &o.cipher_spec,
            &o.key_repository,
            &o.certificate_label,
            &o.peer_name,
            self.sni,
        )
    }

    /// The rustls configuration, made on first use.
    fn config(&self, user: &str) -> Result<Arc<rustls::ClientConfig>, MqError> {
        let made = self.config.get_or_init(|| {
            ferry_tls::client_config(&self.options, user).map_err(|e| e.to_string())
        });
        made.clone().map_err(|why| {
            tracing::warn!(error = %why, "TLS cannot be set up");
            let reason = if why.contains("CipherSpec") {
                ReasonCode::SslInitializationError
            } else {
                ReasonCode::KeyRepositoryError
            };
            MqError::from(reason)
        })
    }

    /// Makes the TLS handshake on `stream` to `host` for `channel`, then checks SSLPEER.
    pub(crate) async fn connect(
        &self,
        stream: TcpStream,
        host: &str,
        channel: &str,
        user: &str,
    ) -> Result<TlsStream<TcpStream>, MqError> {
        let filter = match &self.options.peer_name {
            Some(f) => {
                PeerNameFilter::parse(f).map_err(|_| MqError::from(ReasonCode::SslPeerNameError))?
            }
            None => None,
        };
        let config = self.config(user)?;
        let sni = match self.sni {
            OutboundSni::Channel => ferry_security::sni::host_for_channel(channel),
            OutboundSni::HostName => host.to_string(),
        };
        // An IP address goes as itself, and rustls then sends no server name.
        let name = rustls::pki_types::ServerName::try_from(sni)
            .map_err(|_| MqError::from(ReasonCode::UnknownChannelName))?;
        let tls = TlsConnector::from(config)
            .connect(name, stream)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "TLS handshake failed");
                MqError::from(ReasonCode::SslInitializationError)
            })?;
        if let Some(filter) = filter {
            let subject = ferry_tls::negotiated(tls.get_ref().1)
                .and_then(|n| n.peer)
                .map(|p| p.subject)
                .unwrap_or_default();
            if !filter.matches(&subject) {
                tracing::warn!(subject = %subject, "the queue manager's certificate does not match SSLPEER");
                return Err(MqError::from(ReasonCode::SslPeerNameMismatch));
            }
        }
        Ok(tls)
    }
}
