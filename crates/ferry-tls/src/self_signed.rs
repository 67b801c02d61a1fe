//! Certificates made on the fly: a throwaway CA, and certificates it signs written into
//! key repositories in Ferry's layout. For tests, and for the queue manager `ferry perf`
//! embeds when it measures TLS; never for a production queue manager. Built only with the
//! `self-signed` feature; the private keys are made per run and never committed.

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use std::path::Path;

/// A throwaway certificate authority.
pub struct ThrowawayCa {
    cert: Certificate,
    key: KeyPair,
}

/// What went wrong making or writing a certificate.
pub type PkiResult<T> = Result<T, Box<dyn std::error::Error>>;

/// Subject attributes as `("CN", "app1")` pairs, in the order given.
fn params(subject: &[(&str, &str)]) -> PkiResult<CertificateParams> {
    let mut p = CertificateParams::new(vec!["localhost".to_string()])?;
    p.distinguished_name = rcgen::DistinguishedName::new();
    for (attr, value) in subject {
        let ty = match *attr {
            "CN" => DnType::CommonName,
            "O" => DnType::OrganizationName,
            "OU" => DnType::OrganizationalUnitName,
            "C" => DnType::CountryName,
            "L" => DnType::LocalityName,
            "ST" => DnType::StateOrProvinceName,
            other => return Err(format!("test PKI has no attribute {other}").into()),
        };
        p.distinguished_name.push(ty, *value);
    }
    Ok(p)
}

impl ThrowawayCa {
    /// A new CA with subject `CN=<name>,O=Ferry Test`.
    pub fn new(name: &str) -> PkiResult<Self> {
        let mut p = params(&[("O", "Ferry Test"), ("CN", name)])?;
        p.subject_alt_names.clear();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate()?;
        let cert = p.self_signed(&key)?;
        Ok(ThrowawayCa { cert, key })
    }

    /// The CA certificate, PEM.
    pub fn pem(&self) -> String {
        self.cert.pem()
    }

    /// Writes the CA certificate as `dir/trust.pem` (appending when the file exists, so
    /// a repository can trust several CAs).
    pub fn write_trust(&self, dir: &Path) -> PkiResult<()> {
        use std::io::Write;
        std::fs::create_dir_all(dir)?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(crate::key_repository::TRUST_FILE))?;
        f.write_all(self.pem().as_bytes())?;
        Ok(())
    }

    /// Issues a certificate for `subject` and writes it as `dir/<label>.crt` and
    /// `dir/<label>.key`; `expired` makes one that expired in 2001.
    pub fn issue(
        &self,
        dir: &Path,
        label: &str,
        subject: &[(&str, &str)],
        expired: bool,
    ) -> PkiResult<()> {
        let mut p = params(subject)?;
        p.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        if expired {
            p.not_before = rcgen::date_time_ymd(2000, 1, 1);
            p.not_after = rcgen::date_time_ymd(2001, 1, 1);
        }
        let key = KeyPair::generate()?;
        let cert = p.signed_by(&key, &self.cert, &self.key)?;
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{label}.crt")), cert.pem())?;
        std::fs::write(dir.join(format!("{label}.key")), key.serialize_pem())?;
        Ok(())
    }
}
