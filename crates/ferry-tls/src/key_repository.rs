//! A key repository: a directory of PEM files, read once and held in memory.
//!
//! MQ keeps certificates in a CMS or PKCS#12 key store named by SSLKEYR and picks one by
//! label (CERTLABL). Ferry keeps the same two ideas with plain PEM files, which every
//! certificate tool writes and Kubernetes secrets hold:
//!
//! - `<label>.crt`: a certificate chain (the entity's certificate first), and
//!   `<label>.key`: its private key (PKCS#8, PKCS#1 or SEC1). Each pair is one label.
//! - `trust.pem`: the CA certificates partners' certificates are checked against.
//!
//! The same layout serves the queue manager (SSLKEYR) and clients (MQSSLKEYR). Reading
//! happens here, at load; handshakes only use what was read, so a REFRESH SECURITY
//! TYPE(SSL) is a new load swapped in for new handshakes while live ones carry on.

use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The file of CA certificates in a key repository.
pub const TRUST_FILE: &str = "trust.pem";

/// Why a key repository, or a file in it, cannot be used (MQ's 2381
/// MQRC_KEY_REPOSITORY_ERROR).
#[derive(Debug, thiserror::Error)]
pub enum KeyRepositoryError {
    /// The directory cannot be read.
    #[error("the key repository {dir} cannot be read: {source}")]
    Unreadable {
        /// The directory.
        dir: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// A file in it is not what its name says.
    #[error("{file}: {why}")]
    BadFile {
        /// The file.
        file: PathBuf,
        /// What is wrong with it.
        why: String,
    },
}

/// The certificates and trust of one key repository.
#[derive(Debug)]
pub struct KeyRepository {
    dir: PathBuf,
    certificates: BTreeMap<String, Arc<CertifiedKey>>,
    trust: Option<Arc<RootCertStore>>,
}

impl KeyRepository {
    /// An empty repository (no certificates, no trust): what a queue manager has when
    /// SSLKEYR names a directory that does not exist. Handshakes then fail with the reason.
    pub fn empty(dir: &Path) -> Self {
        KeyRepository {
            dir: dir.to_path_buf(),
            certificates: BTreeMap::new(),
            trust: None,
        }
    }

    /// Reads every `<label>.crt` with its `<label>.key`, and `trust.pem`, from `dir`.
    /// A `.crt` without a `.key` is skipped (it may be a CA kept beside the others); a
    /// file that does not parse, or a key that does not match its certificate, is an
    /// error naming the file.
    pub fn load(dir: &Path, provider: &CryptoProvider) -> Result<Self, KeyRepositoryError> {
        let unreadable = |source| KeyRepositoryError::Unreadable {
            dir: dir.to_path_buf(),
            source,
        };
        let mut certificates = BTreeMap::new();
        let mut trust = None;
        for entry in std::fs::read_dir(dir).map_err(unreadable)? {
            let path = entry.map_err(unreadable)?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == TRUST_FILE {
                trust = Some(Arc::new(load_trust(&path)?));
                continue;
            }
            let Some(label) = name.strip_suffix(".crt") else {
                continue;
            };
            let key_path = path.with_extension("key");
            if !key_path.exists() {
                continue;
            }
            let chain = load_chain(&path)?;
            let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| bad(&key_path, e))?;
            let certified = CertifiedKey::from_der(chain, key, provider).map_err(|e| match e {
                rustls::Error::InconsistentKeys(_) => {
                    bad(&key_path, format!("does not match the certificate in {name}"))
                }
                rustls::Error::InvalidCertificate(why) => bad(
                    &path,
                    format!("the certificate cannot be used ({why:?}; an X.509 v3 certificate is needed)"),
                ),
                other => bad(&key_path, format!("cannot be used with {name}: {other}")),
            })?;
            certificates.insert(label.to_string(), Arc::new(certified));
        }
        Ok(KeyRepository {
            dir: dir.to_path_buf(),
            certificates,
            trust,
        })
    }

    /// The directory it was read from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The certificate and key with `label`, if the repository has it.
    pub fn certificate(&self, label: &str) -> Option<Arc<CertifiedKey>> {
        self.certificates.get(label).cloned()
    }

    /// The labels it holds, sorted.
    pub fn labels(&self) -> impl Iterator<Item = &str> {
        self.certificates.keys().map(String::as_str)
    }

    /// The CA certificates of `trust.pem`, if there is one.
    pub fn trust(&self) -> Option<Arc<RootCertStore>> {
        self.trust.clone()
    }
}

fn bad(file: &Path, why: impl std::fmt::Display) -> KeyRepositoryError {
    KeyRepositoryError::BadFile {
        file: file.to_path_buf(),
        why: why.to_string(),
    }
}

/// The certificates of a PEM file, at least one.
fn load_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, KeyRepositoryError> {
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(|e| bad(path, e))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(path, e))?;
    if chain.is_empty() {
        return Err(bad(path, "holds no PEM certificate"));
    }
    Ok(chain)
}

/// The CA certificates of a PEM bundle; every one must be usable as a trust anchor.
fn load_trust(path: &Path) -> Result<RootCertStore, KeyRepositoryError> {
    let mut roots = RootCertStore::empty();
    for cert in load_chain(path)? {
        roots
            .add(cert)
            .map_err(|e| bad(path, format!("a certificate cannot be a trust anchor: {e}")))?;
    }
    Ok(roots)
}
