//! Ferry's TLS layer, over rustls with the ring provider.
//!
//! - [`key_repository`]: PEM certificates, keys and CAs, read from a directory (SSLKEYR).
//! - [`server`]: a rustls server configuration per channel's SSLCIPH, SSLCAUTH and
//!   CERTLABL.
//! - [`client`]: the client configuration a Ferry application connects with.
//! - [`certificate`]: the names in a partner's certificate (SSLPEER, SSLCERTI).
//! - [`stream`]: a TLS stream split into reader and writer, with SSLRKEYC key resets.
//!
//! Which suites each SSLCIPH value allows comes from `ferry_security::cipherspec`, the
//! one table of CipherSpecs; this crate only maps its IANA codes to rustls's suites.

pub mod certificate;
pub mod client;
pub mod directory;
pub mod key_repository;
#[cfg(feature = "self-signed")]
pub mod self_signed;
pub mod server;
pub mod stream;

pub use certificate::PeerCertificate;
pub use client::{client_config, ClientTlsOptions};
pub use directory::directory_client_config;
pub use key_repository::{KeyRepository, KeyRepositoryError};
pub use server::{ChannelTls, ServerTls};
pub use stream::{key_reset_bytes, split, TlsConnection, TlsCounters, TlsReader, TlsWriter};
pub use tokio_rustls;

use ferry_security::cipherspec::{by_iana, CipherSpec, TlsVersion, CIPHER_SPECS};
use ferry_security::CipherSpecChoice;
use rustls::crypto::CryptoProvider;

/// Why TLS could not be set up for a connection (the client sees MQ's 2393
/// MQRC_SSL_INITIALIZATION_ERROR or 2381 MQRC_KEY_REPOSITORY_ERROR).
#[derive(Debug, thiserror::Error)]
pub enum TlsSetupError {
    /// The key repository cannot be read.
    #[error(transparent)]
    Repository(#[from] KeyRepositoryError),
    /// No certificate with the label.
    #[error("the key repository {dir} has no certificate labelled '{label}' ({label}.crt and {label}.key)")]
    NoCertificate {
        /// The label looked for.
        label: String,
        /// The repository.
        dir: String,
    },
    /// Certificates must be checked but there are no CAs to check them with.
    #[error(
        "the key repository {dir} has no trust.pem, so partners' certificates cannot be checked"
    )]
    NoTrust {
        /// The repository.
        dir: String,
    },
    /// The CipherSpec is not one Ferry offers.
    #[error("{0}")]
    CipherSpec(String),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Rustls(String),
}

/// The ring provider with its suites in MQ's preference order, limited to the offered
/// CipherSpecs.
pub fn provider() -> CryptoProvider {
    let mut p = rustls::crypto::ring::default_provider();
    let all = std::mem::take(&mut p.cipher_suites);
    p.cipher_suites = CIPHER_SPECS
        .iter()
        .filter(|s| s.offered())
        .filter_map(|s| all.iter().find(|r| u16::from(r.suite()) == s.iana).copied())
        .collect();
    p
}

/// `base` limited to the suites `choice` allows (all of `base` for `None`).
pub fn provider_for(base: &CryptoProvider, choice: Option<&CipherSpecChoice>) -> CryptoProvider {
    let mut p = base.clone();
    if let Some(choice) = choice {
        p.cipher_suites
            .retain(|s| choice.allows(u16::from(s.suite())));
    }
    p
}

/// The rustls protocol versions `choice` allows (TLS 1.2 and 1.3 for `None`).
pub fn versions_for(
    choice: Option<&CipherSpecChoice>,
) -> Vec<&'static rustls::SupportedProtocolVersion> {
    let versions = match choice {
        Some(c) => c.versions(),
        None => vec![TlsVersion::Tls12, TlsVersion::Tls13],
    };
    versions
        .into_iter()
        .map(|v| match v {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        })
        .collect()
}

/// What a completed handshake agreed.
#[derive(Clone, Debug)]
pub struct Negotiated {
    /// The CipherSpec (DISPLAY CHSTATUS SSLCIPH).
    pub cipher_spec: &'static CipherSpec,
    /// The partner's certificate, when it presented one.
    pub peer: Option<PeerCertificate>,
}

/// What the handshake on `state` agreed; `None` before it completes.
pub fn negotiated(state: &rustls::CommonState) -> Option<Negotiated> {
    let suite = state.negotiated_cipher_suite()?;
    let cipher_spec = by_iana(u16::from(suite.suite()))?;
    let peer = state
        .peer_certificates()
        .and_then(|chain| chain.first())
        .and_then(PeerCertificate::from_der);
    Some(Negotiated { cipher_spec, peer })
}

#[cfg(test)]
mod tests;
