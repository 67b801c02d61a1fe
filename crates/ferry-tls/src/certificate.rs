//! What Ferry reads from a partner's certificate: its subject and issuer names, as
//! SSLPEER filters, CHLAUTH SSLPEERMAP records and DISPLAY CHSTATUS see them.

use ferry_security::peer_name::{DistinguishedName, DnAttribute};
use rustls_pki_types::CertificateDer;
use x509_parser::x509::X509Name;

/// A partner's certificate, as far as channel security looks at it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PeerCertificate {
    /// Subject distinguished name (SSLPEER).
    pub subject: DistinguishedName,
    /// Issuer distinguished name (SSLCERTI).
    pub issuer: DistinguishedName,
}

impl PeerCertificate {
    /// Reads the names of a DER certificate; `None` when it does not parse (it passed the
    /// handshake's verification, so this does not happen for verified certificates).
    pub fn from_der(der: &CertificateDer<'_>) -> Option<Self> {
        let (_, cert) = x509_parser::parse_x509_certificate(der.as_ref()).ok()?;
        Some(PeerCertificate {
            subject: names(cert.subject()),
            issuer: names(cert.issuer()),
        })
    }
}

/// The attributes of `name` that filters can name, in certificate order.
fn names(name: &X509Name<'_>) -> DistinguishedName {
    let mut dn = DistinguishedName::default();
    for rdn in name.iter() {
        for attr in rdn.iter() {
            let oid = attr.attr_type().to_id_string();
            let (Some(kind), Ok(value)) = (DnAttribute::from_oid(&oid), attr.as_str()) else {
                continue;
            };
            dn.attributes.push((kind, value.to_string()));
        }
    }
    dn
}
