//! The server side: a rustls configuration for each channel's TLS settings, built from
//! the key repository and cached until the repository is reloaded.
//!
//! A channel's SSLCIPH decides the suites and protocols offered, its SSLCAUTH whether a
//! client certificate is demanded (checked against `trust.pem`), and its CERTLABL (or the
//! queue manager's) which certificate is presented. When the channel is not known at the
//! handshake (a client that sends no MQ-style SNI), the queue manager's certificate and
//! every offered suite are used with an optional client certificate, and the channel's
//! settings are checked once its name arrives.

use crate::key_repository::KeyRepository;
use crate::TlsSetupError;
use ferry_security::{CipherSpecChoice, CipherSpecPolicy};
use rustls::crypto::CryptoProvider;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::ServerConfig;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

/// The TLS settings a channel asks for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ChannelTls {
    /// SSLCIPH; `None` when the channel is not known yet (every offered suite).
    pub cipher: Option<&'static str>,
    /// SSLCAUTH(REQUIRED): a client certificate must be presented.
    pub client_auth_required: bool,
    /// The certificate label to present.
    pub label: String,
}

/// The queue manager's TLS: its key repository and the configurations made from it.
pub struct ServerTls {
    repository: Arc<KeyRepository>,
    provider: Arc<CryptoProvider>,
    configs: RefCell<HashMap<ChannelTls, Arc<ServerConfig>>>,
}

impl ServerTls {
    /// TLS over `repository`.
    pub fn new(repository: KeyRepository) -> Self {
        ServerTls {
            repository: Arc::new(repository),
            provider: Arc::new(crate::provider()),
            configs: RefCell::new(HashMap::new()),
        }
    }

    /// Offers only the CipherSpecs `policy` permits (qm.ini SSL AllowedCipherSpecs and
    /// AllowTLSV13), to every channel.
    pub fn with_policy(mut self, policy: CipherSpecPolicy) -> Self {
        let mut provider = crate::provider();
        provider.cipher_suites.retain(|s| {
            ferry_security::cipherspec::by_iana(u16::from(s.suite()))
                .is_some_and(|spec| policy.permits(spec))
        });
        self.provider = Arc::new(provider);
        self.configs.borrow_mut().clear();
        self
    }

    /// Reads the key repository in `dir`. A directory that does not exist is an empty
    /// repository (no TLS until one is made); a file that cannot be used gives an empty
    /// repository and the reason, as `Err`. `Ok` counts the certificates read.
    pub fn load(dir: &std::path::Path) -> (ServerTls, Result<usize, String>) {
        if !dir.exists() {
            return (ServerTls::new(KeyRepository::empty(dir)), Ok(0));
        }
        match KeyRepository::load(dir, &crate::provider()) {
            Ok(repo) => {
                let n = repo.labels().count();
                (ServerTls::new(repo), Ok(n))
            }
            Err(e) => (
                ServerTls::new(KeyRepository::empty(dir)),
                Err(e.to_string()),
            ),
        }
    }

    /// The key repository in use.
    pub fn repository(&self) -> &KeyRepository {
        &self.repository
    }

    /// The configuration for a channel's settings (made once, then cached).
    pub fn config(&self, channel: &ChannelTls) -> Result<Arc<ServerConfig>, TlsSetupError> {
        if let Some(c) = self.configs.borrow().get(channel) {
            return Ok(c.clone());
        }
        let config = Arc::new(self.build(channel)?);
        self.configs
            .borrow_mut()
            .insert(channel.clone(), config.clone());
        Ok(config)
    }

    fn build(&self, channel: &ChannelTls) -> Result<ServerConfig, TlsSetupError> {
        let choice = match channel.cipher {
            Some(name) => CipherSpecChoice::parse(name)
                .map_err(|e| TlsSetupError::CipherSpec(e.to_string()))?,
            None => None,
        };
        let provider = crate::provider_for(&self.provider, choice.as_ref());
        // Only the protocols that still have a suite once the policy has spoken.
        let versions: Vec<_> = crate::versions_for(choice.as_ref())
            .into_iter()
            .filter(|v| {
                provider
                    .cipher_suites
                    .iter()
                    .any(|s| s.version().version == v.version)
            })
            .collect();
        if versions.is_empty() {
            return Err(TlsSetupError::CipherSpec(format!(
                "no CipherSpec of SSLCIPH({}) is allowed by qm.ini SSL AllowedCipherSpecs and AllowTLSV13",
                channel.cipher.unwrap_or("ANY")
            )));
        }
        let certificate = self.repository.certificate(&channel.label).ok_or_else(|| {
            TlsSetupError::NoCertificate {
                label: channel.label.clone(),
                dir: self.repository.dir().display().to_string(),
            }
        })?;
        let builder = ServerConfig::builder_with_provider(Arc::new(provider.clone()))
            .with_protocol_versions(&versions)
            .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
        let builder = match self.repository.trust() {
            Some(roots) => {
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(roots, Arc::new(provider));
                let verifier = if channel.client_auth_required {
                    verifier
                } else {
                    verifier.allow_unauthenticated()
                };
                let verifier = verifier
                    .build()
                    .map_err(|e| TlsSetupError::Rustls(e.to_string()))?;
                builder.with_client_cert_verifier(verifier)
            }
            None if channel.client_auth_required => {
                return Err(TlsSetupError::NoTrust {
                    dir: self.repository.dir().display().to_string(),
                })
            }
            None => builder.with_no_client_auth(),
        };
        let mut config = builder.with_cert_resolver(Arc::new(OneCertificate(certificate)));
        // MQ's preference order (the table's), not the client's.
        config.ignore_client_order = true;
        Ok(config)
    }
}

/// Presents one certificate whatever the client asks for.
#[derive(Debug)]
struct OneCertificate(Arc<CertifiedKey>);

impl ResolvesServerCert for OneCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.0.clone())
    }
}
