//! The client side: what a Ferry application (or `ferry perf`) needs to connect over
//! TLS as an MQ client does.
//!
//! The CipherSpec is the client channel's SSLCIPH; the key repository (MQSSLKEYR) gives
//! the CAs the queue manager's certificate must chain to, and, when the channel demands
//! one, the client's own certificate (by CERTLABL). As MQ clients do, the client names the
//! channel in SNI and does not compare the server's certificate with a host name: the
//! chain is verified, and SSLPEER on the client side, when set, says whose certificate it
//! must be.

use crate::key_repository::KeyRepository;
use crate::TlsSetupError;
use ferry_security::CipherSpecChoice;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, Error, SignatureScheme};
use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use std::sync::Arc;

/// How a client connects over TLS.
#[derive(Clone, Debug)]
pub struct ClientTlsOptions {
    /// SSLCIPH of the client channel: a CipherSpec or an alias.
    pub cipher_spec: String,
    /// The key repository directory (MQSSLKEYR): `trust.pem`, and the client's own
    /// certificate as `<label>.crt` / `<label>.key` when it has one.
    pub key_repository: std::path::PathBuf,
    /// The label of the client's certificate; `None`: MQ's default for the user
    /// (`ibmwebspheremq<user>`), used only when the repository has it.
    pub certificate_label: Option<String>,
    /// SSLPEER of the client channel: a filter the queue manager's certificate must match.
    pub peer_name: Option<String>,
}

/// Builds the client configuration for `options`; `user` names the default label.
pub fn client_config(
    options: &ClientTlsOptions,
    user: &str,
) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let choice = CipherSpecChoice::parse(&options.cipher_spec)
        .map_err(|e| TlsSetupError::CipherSpec(e.to_string()))?
        .ok_or_else(|| TlsSetupError::CipherSpec("the CipherSpec is blank".to_string()))?;
    let base = crate::provider();
    let provider = Arc::new(crate::provider_for(&base, Some(&choice)));
    let repository = KeyRepository::load(&options.key_repository, &provider)?;
    let roots = repository.trust().ok_or_else(|| TlsSetupError::NoTrust {
        dir: options.key_repository.display().to_string(),
    })?;
    let chain = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&crate::versions_for(Some(&choice)))
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(ChainOnly(chain)));
    let label = match &options.certificate_label {
        Some(l) => Some(l.clone()),
        None => Some(ferry_security::default_certificate_label(user))
            .filter(|l| repository.certificate(l).is_some()),
    };
    let config = match label {
        Some(label) => {
            let certified =
                repository
                    .certificate(&label)
                    .ok_or_else(|| TlsSetupError::NoCertificate {
                        label: label.clone(),
                        dir: options.key_repository.display().to_string(),
                    })?;
            builder.with_client_cert_resolver(Arc::new(OwnCertificate(certified)))
        }
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}

/// Presents the client's one certificate when the server asks for one.
#[derive(Debug)]
pub(crate) struct OwnCertificate(pub(crate) Arc<rustls::sign::CertifiedKey>);

impl rustls::client::ResolvesClientCert for OwnCertificate {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(self.0.clone())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

/// Verifies the server's chain against the trusted CAs, not its host name (the SNI is the
/// channel's, as MQ sends it; SSLPEER checks whose certificate it is).
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            // The name is checked after the chain: this error means the chain is good.
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
