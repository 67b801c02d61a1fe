//! The queue manager as a TLS client of an LDAP directory (AUTHINFO SECCOMM(YES|ANON)):
//! the directory's certificate must chain to a CA in the key repository's `trust.pem`
//! and name the host CONNAME gives, as for any TLS client; with SECCOMM(YES) the queue
//! manager presents its own certificate when the directory asks for one.

use crate::client::OwnCertificate;
use crate::key_repository::KeyRepository;
use crate::TlsSetupError;
use rustls::client::WebPkiServerVerifier;
use rustls::ClientConfig;
use std::sync::Arc;

/// The client configuration for talking to a directory over TLS; `certificate_label`
/// names the queue manager's certificate to present (SECCOMM(YES)), used when the
/// repository holds it.
pub fn directory_client_config(
    repository: &KeyRepository,
    certificate_label: Option<&str>,
) -> Result<Arc<ClientConfig>, TlsSetupError> {
    let provider = Arc::new(crate::provider());
    let roots = repository.trust().ok_or_else(|| TlsSetupError::NoTrust {
        dir: repository.dir().display().to_string(),
    })?;
    let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
        .build()
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&crate::versions_for(None))
        .map_err(|e| TlsSetupError::Rustls(e.to_string()))?
        .with_webpki_verifier(verifier);
    let config = match certificate_label.and_then(|l| repository.certificate(l)) {
        Some(certified) => builder.with_client_cert_resolver(Arc::new(OwnCertificate(certified))),
        None => builder.with_no_client_auth(),
    };
    Ok(Arc::new(config))
}
