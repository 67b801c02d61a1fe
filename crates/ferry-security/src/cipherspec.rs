//! MQ's CipherSpecs: the names SSLCIPH takes, the TLS suites they stand for, and which
//! of them Ferry offers.
//!
//! [`CIPHER_SPECS`] is the one table: MQSC checks SSLCIPH against it at DEFINE/ALTER,
//! the TLS layer builds its suite lists from it (by IANA code, so no TLS library type
//! appears here), DISPLAY CHSTATUS names the negotiated suite from it, and
//! docs/security.md lists it. Ferry offers what rustls implements: the TLS 1.3 AES-GCM and
//! CHACHA20 suites and the TLS 1.2 ECDHE AES-GCM suites. CBC, RSA key exchange and CCM
//! are refused at DEFINE with the reason, never accepted and then failed at connect.
//!
//! The aliases (ANY, ANY_TLS12, ANY_TLS12_OR_HIGHER, ANY_TLS13, ANY_TLS13_OR_HIGHER)
//! name a protocol range rather than a suite: any offered suite of those protocols.

/// A TLS protocol version Ferry speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}

impl TlsVersion {
    /// As MQ and operators write it: "TLS 1.2".
    pub fn label(self) -> &'static str {
        match self {
            TlsVersion::Tls12 => "TLS 1.2",
            TlsVersion::Tls13 => "TLS 1.3",
        }
    }
}

/// Why Ferry does not offer a CipherSpec MQ knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotOffered {
    /// CBC-mode suites: superseded by AEAD suites and not implemented by rustls.
    Cbc,
    /// Static RSA key exchange (no forward secrecy): not implemented by rustls.
    RsaKeyExchange,
    /// AES-CCM suites: not implemented by rustls.
    Ccm,
    /// SSL 3.0 / TLS 1.0 suites MQ itself deprecated.
    Deprecated,
}

impl NotOffered {
    /// The reason, as the DEFINE refusal gives it.
    pub fn reason(self) -> &'static str {
        match self {
            NotOffered::Cbc => "it uses CBC mode, which Ferry does not offer (use a GCM CipherSpec)",
            NotOffered::RsaKeyExchange => {
                "it uses RSA key exchange without forward secrecy, which Ferry does not offer (use an ECDHE or TLS 1.3 CipherSpec)"
            }
            NotOffered::Ccm => "it uses AES-CCM, which Ferry does not offer (use TLS_AES_128_GCM_SHA256)",
            NotOffered::Deprecated => "MQ deprecated it and Ferry does not offer it",
        }
    }
}

/// One row of the table: an MQ CipherSpec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CipherSpec {
    /// The name SSLCIPH takes, e.g. `TLS_AES_128_GCM_SHA256`.
    pub name: &'static str,
    /// The protocol it belongs to (TLS 1.2 for the deprecated TLS 1.0 rows too: they are
    /// never offered).
    pub version: TlsVersion,
    /// The IANA suite code, e.g. 0x1301.
    pub iana: u16,
    /// The IANA suite name.
    pub iana_name: &'static str,
    /// `None` when Ferry offers it; otherwise why not.
    pub not_offered: Option<NotOffered>,
}

impl CipherSpec {
    /// True when Ferry negotiates this suite.
    pub fn offered(&self) -> bool {
        self.not_offered.is_none()
    }
}

macro_rules! spec {
    ($name:literal, $v:ident, $iana:literal, $iana_name:literal) => {
        CipherSpec {
            name: $name,
            version: TlsVersion::$v,
            iana: $iana,
            iana_name: $iana_name,
            not_offered: None,
        }
    };
    ($name:literal, $v:ident, $iana:literal, $iana_name:literal, $why:ident) => {
        CipherSpec {
            name: $name,
            version: TlsVersion::$v,
            iana: $iana,
            iana_name: $iana_name,
            not_offered: Some(NotOffered::$why),
        }
    };
}

/// Every CipherSpec name Ferry knows, in MQ's handshake preference order (TLS 1.3 first,
/// then TLS 1.2, 256-bit before 128-bit); offered rows are negotiated in this order.
pub static CIPHER_SPECS: &[CipherSpec] = &[
    spec!(
        "TLS_CHACHA20_POLY1305_SHA256",
        Tls13,
        0x1303,
        "TLS_CHACHA20_POLY1305_SHA256"
    ),
    spec!(
        "TLS_AES_256_GCM_SHA384",
        Tls13,
        0x1302,
        "TLS_AES_256_GCM_SHA384"
    ),
    spec!(
        "TLS_AES_128_GCM_SHA256",
        Tls13,
        0x1301,
        "TLS_AES_128_GCM_SHA256"
    ),
    spec!(
        "TLS_AES_128_CCM_SHA256",
        Tls13,
        0x1304,
        "TLS_AES_128_CCM_SHA256",
        Ccm
    ),
    spec!(
        "TLS_AES_128_CCM_8_SHA256",
        Tls13,
        0x1305,
        "TLS_AES_128_CCM_8_SHA256",
        Ccm
    ),
    spec!(
        "ECDHE_ECDSA_AES_256_GCM_SHA384",
        Tls12,
        0xC02C,
        "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
    ),
    spec!(
        "ECDHE_RSA_AES_256_GCM_SHA384",
        Tls12,
        0xC030,
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384"
    ),
    spec!(
        "ECDHE_ECDSA_AES_128_GCM_SHA256",
        Tls12,
        0xC02B,
        "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"
    ),
    spec!(
        "ECDHE_RSA_AES_128_GCM_SHA256",
        Tls12,
        0xC02F,
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
    ),
    spec!(
        "ECDHE_ECDSA_AES_256_CBC_SHA384",
        Tls12,
        0xC024,
        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
        Cbc
    ),
    spec!(
        "ECDHE_RSA_AES_256_CBC_SHA384",
        Tls12,
        0xC028,
        "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
        Cbc
    ),
    spec!(
        "ECDHE_ECDSA_AES_128_CBC_SHA256",
        Tls12,
        0xC023,
        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        Cbc
    ),
    spec!(
        "ECDHE_RSA_AES_128_CBC_SHA256",
        Tls12,
        0xC027,
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        Cbc
    ),
    spec!(
        "TLS_RSA_WITH_AES_256_GCM_SHA384",
        Tls12,
        0x009D,
        "TLS_RSA_WITH_AES_256_GCM_SHA384",
        RsaKeyExchange
    ),
    spec!(
        "TLS_RSA_WITH_AES_128_GCM_SHA256",
        Tls12,
        0x009C,
        "TLS_RSA_WITH_AES_128_GCM_SHA256",
        RsaKeyExchange
    ),
    spec!(
        "TLS_RSA_WITH_AES_256_CBC_SHA256",
        Tls12,
        0x003D,
        "TLS_RSA_WITH_AES_256_CBC_SHA256",
        RsaKeyExchange
    ),
    spec!(
        "TLS_RSA_WITH_AES_128_CBC_SHA256",
        Tls12,
        0x003C,
        "TLS_RSA_WITH_AES_128_CBC_SHA256",
        RsaKeyExchange
    ),
    spec!(
        "TLS_RSA_WITH_AES_256_CBC_SHA",
        Tls12,
        0x0035,
        "TLS_RSA_WITH_AES_256_CBC_SHA",
        Deprecated
    ),
    spec!(
        "TLS_RSA_WITH_AES_128_CBC_SHA",
        Tls12,
        0x002F,
        "TLS_RSA_WITH_AES_128_CBC_SHA",
        Deprecated
    ),
    spec!(
        "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        Tls12,
        0x000A,
        "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        Deprecated
    ),
    spec!(
        "NULL_SHA",
        Tls12,
        0x0002,
        "TLS_RSA_WITH_NULL_SHA",
        Deprecated
    ),
    spec!(
        "NULL_MD5",
        Tls12,
        0x0001,
        "TLS_RSA_WITH_NULL_MD5",
        Deprecated
    ),
];

/// An alias: any offered suite of a range of protocols.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Alias {
    /// The name SSLCIPH takes, e.g. `ANY_TLS12_OR_HIGHER`.
    pub name: &'static str,
    /// Lowest protocol accepted.
    pub min: TlsVersion,
    /// Highest protocol accepted.
    pub max: TlsVersion,
    /// What it means, for docs.
    pub doc: &'static str,
}

/// MQ's alias CipherSpecs. ANY means every protocol Ferry enables, which is TLS 1.2 and
/// 1.3 (MQ disables SSL 3.0 and TLS 1.0 by default as well).
pub static ALIASES: &[Alias] = &[
    Alias {
        name: "ANY",
        min: TlsVersion::Tls12,
        max: TlsVersion::Tls13,
        doc: "any offered CipherSpec of any enabled protocol (TLS 1.2 or 1.3)",
    },
    Alias {
        name: "ANY_TLS12",
        min: TlsVersion::Tls12,
        max: TlsVersion::Tls12,
        doc: "any offered TLS 1.2 CipherSpec, and only TLS 1.2",
    },
    Alias {
        name: "ANY_TLS12_OR_HIGHER",
        min: TlsVersion::Tls12,
        max: TlsVersion::Tls13,
        doc: "any offered CipherSpec of TLS 1.2 or a later protocol (IBM's advice for both ends)",
    },
    Alias {
        name: "ANY_TLS13",
        min: TlsVersion::Tls13,
        max: TlsVersion::Tls13,
        doc: "any offered TLS 1.3 CipherSpec, and only TLS 1.3",
    },
    Alias {
        name: "ANY_TLS13_OR_HIGHER",
        min: TlsVersion::Tls13,
        max: TlsVersion::Tls13,
        doc: "any offered CipherSpec of TLS 1.3 or a later protocol",
    },
];

/// What an SSLCIPH value asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CipherSpecChoice {
    /// One suite: both ends must use exactly it.
    Suite(&'static CipherSpec),
    /// Any offered suite of a protocol range.
    Alias(&'static Alias),
}

/// Why an SSLCIPH value is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CipherSpecError {
    /// Not a CipherSpec name MQ or Ferry knows.
    #[error("'{0}' is not a CipherSpec; use a TLS 1.3 name such as TLS_AES_128_GCM_SHA256, a TLS 1.2 ECDHE GCM name, or an alias such as ANY_TLS12_OR_HIGHER")]
    Unknown(String),
    /// A CipherSpec MQ knows that Ferry does not offer.
    #[error("CipherSpec {name} is not offered: {reason}")]
    NotOffered {
        /// The name given.
        name: &'static str,
        /// Why not.
        reason: &'static str,
    },
}

impl CipherSpecChoice {
    /// Parses an SSLCIPH value: `Ok(None)` for blank (no TLS), the choice for an offered
    /// CipherSpec or an alias, an error naming the reason otherwise. Case-insensitive.
    pub fn parse(value: &str) -> Result<Option<CipherSpecChoice>, CipherSpecError> {
        let name = value.trim();
        if name.is_empty() {
            return Ok(None);
        }
        if let Some(a) = ALIASES.iter().find(|a| a.name.eq_ignore_ascii_case(name)) {
            return Ok(Some(CipherSpecChoice::Alias(a)));
        }
        match CIPHER_SPECS
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(name))
        {
            Some(s) => match s.not_offered {
                None => Ok(Some(CipherSpecChoice::Suite(s))),
                Some(why) => Err(CipherSpecError::NotOffered {
                    name: s.name,
                    reason: why.reason(),
                }),
            },
            None => Err(CipherSpecError::Unknown(name.to_string())),
        }
    }

    /// The name, as SSLCIPH shows it.
    pub fn name(&self) -> &'static str {
        match self {
            CipherSpecChoice::Suite(s) => s.name,
            CipherSpecChoice::Alias(a) => a.name,
        }
    }

    /// The offered suites this choice allows, in preference order.
    pub fn suites(&self) -> impl Iterator<Item = &'static CipherSpec> + '_ {
        CIPHER_SPECS
            .iter()
            .filter(move |s| s.offered() && self.allows(s.iana))
    }

    /// The protocols this choice allows, lowest first.
    pub fn versions(&self) -> Vec<TlsVersion> {
        let mut v: Vec<TlsVersion> = self.suites().map(|s| s.version).collect();
        v.sort();
        v.dedup();
        v
    }

    /// True when a connection that negotiated suite `iana` satisfies this choice: the
    /// check a channel makes of every TLS conversation (MQ's AMQ9631 when it fails).
    pub fn allows(&self, iana: u16) -> bool {
        let Some(spec) = by_iana(iana) else {
            return false;
        };
        if !spec.offered() {
            return false;
        }
        match self {
            CipherSpecChoice::Suite(s) => s.iana == iana,
            CipherSpecChoice::Alias(a) => a.min <= spec.version && spec.version <= a.max,
        }
    }
}

/// Which CipherSpecs the queue manager may use at all (qm.ini SSL stanza:
/// AllowedCipherSpecs and AllowTLSV13), whatever channels ask for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CipherSpecPolicy {
    /// The IANA codes allowed (`None`: ALL).
    allowed: Option<Vec<u16>>,
    /// AllowTLSV13=N: no TLS 1.3 CipherSpec.
    no_tls13: bool,
}

impl CipherSpecPolicy {
    /// The policy of AllowedCipherSpecs (`ALL`, or CipherSpec names separated by commas)
    /// and AllowTLSV13; an unknown or unoffered name is refused, named.
    pub fn parse(allowed: &str, allow_tls13: bool) -> Result<Self, CipherSpecError> {
        let allowed = if allowed.trim().is_empty() || allowed.trim().eq_ignore_ascii_case("ALL") {
            None
        } else {
            let mut codes = Vec::new();
            for name in allowed.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match CipherSpecChoice::parse(name)? {
                    Some(CipherSpecChoice::Suite(s)) => codes.push(s.iana),
                    // An alias stands for a protocol range, not a CipherSpec to allow.
                    _ => return Err(CipherSpecError::Unknown(name.to_string())),
                }
            }
            Some(codes)
        };
        Ok(CipherSpecPolicy {
            allowed,
            no_tls13: !allow_tls13,
        })
    }

    /// True when the queue manager may use `spec`.
    pub fn permits(&self, spec: &CipherSpec) -> bool {
        spec.offered()
            && !(self.no_tls13 && spec.version == TlsVersion::Tls13)
            && self.allowed.as_ref().is_none_or(|a| a.contains(&spec.iana))
    }
}

/// The table row of IANA suite `iana`, if it is an MQ CipherSpec.
pub fn by_iana(iana: u16) -> Option<&'static CipherSpec> {
    CIPHER_SPECS.iter().find(|s| s.iana == iana)
}

#[cfg(test)]
mod policy_tests {
    use super::*;

    #[test]
    fn the_policy_allows_what_qm_ini_lists() {
        let all = CipherSpecPolicy::parse("ALL", true).unwrap();
        assert!(CIPHER_SPECS
            .iter()
            .filter(|s| s.offered())
            .all(|s| all.permits(s)));
        let one = CipherSpecPolicy::parse("TLS_AES_128_GCM_SHA256", true).unwrap();
        let permitted: Vec<&str> = CIPHER_SPECS
            .iter()
            .filter(|s| one.permits(s))
            .map(|s| s.name)
            .collect();
        assert_eq!(permitted, ["TLS_AES_128_GCM_SHA256"]);
        let no13 = CipherSpecPolicy::parse("ALL", false).unwrap();
        assert!(CIPHER_SPECS
            .iter()
            .filter(|s| no13.permits(s))
            .all(|s| s.version == TlsVersion::Tls12));
        assert!(CipherSpecPolicy::parse("NO_SUCH_SPEC", true).is_err());
        assert!(CipherSpecPolicy::parse("ANY_TLS13", true).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_means_no_tls_and_names_are_case_insensitive() {
        assert_eq!(CipherSpecChoice::parse("  "), Ok(None));
        let c = CipherSpecChoice::parse("tls_aes_128_gcm_sha256")
            .expect("valid")
            .expect("tls");
        assert_eq!(c.name(), "TLS_AES_128_GCM_SHA256");
        assert!(c.allows(0x1301));
        assert!(!c.allows(0x1302));
    }

    #[test]
    fn specs_ferry_cannot_offer_are_refused_with_the_reason() {
        for (name, word) in [
            ("ECDHE_RSA_AES_256_CBC_SHA384", "CBC"),
            ("TLS_RSA_WITH_AES_128_CBC_SHA256", "RSA key exchange"),
            ("TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA key exchange"),
            ("TLS_AES_128_CCM_8_SHA256", "AES-CCM"),
            ("NULL_SHA", "deprecated"),
        ] {
            let e = CipherSpecChoice::parse(name).expect_err(name);
            assert!(e.to_string().contains(word), "{name}: {e}");
        }
        let e = CipherSpecChoice::parse("ROT13").expect_err("unknown");
        assert!(matches!(e, CipherSpecError::Unknown(_)));
    }

    #[test]
    fn aliases_allow_their_protocol_range_only() {
        let pick = |n| CipherSpecChoice::parse(n).expect("valid").expect("tls");
        let tls12 = 0xC02F;
        let tls13 = 0x1301;
        assert!(pick("ANY").allows(tls12) && pick("ANY").allows(tls13));
        assert!(pick("ANY_TLS12").allows(tls12) && !pick("ANY_TLS12").allows(tls13));
        assert!(pick("ANY_TLS12_OR_HIGHER").allows(tls12));
        assert!(pick("ANY_TLS12_OR_HIGHER").allows(tls13));
        assert!(!pick("ANY_TLS13").allows(tls12) && pick("ANY_TLS13").allows(tls13));
        assert!(!pick("ANY_TLS13_OR_HIGHER").allows(tls12));
        assert_eq!(pick("ANY_TLS13").versions(), vec![TlsVersion::Tls13]);
        assert_eq!(
            pick("ANY").versions(),
            vec![TlsVersion::Tls12, TlsVersion::Tls13]
        );
        // A suite Ferry does not offer never satisfies an alias.
        assert!(!pick("ANY").allows(0xC028));
        assert!(!pick("ANY").allows(0xFFFF));
    }

    #[test]
    fn every_offered_suite_is_aead_with_forward_secrecy() {
        let offered: Vec<_> = CIPHER_SPECS.iter().filter(|s| s.offered()).collect();
        assert_eq!(offered.len(), 7);
        for s in offered {
            assert!(
                s.iana_name.contains("GCM") || s.iana_name.contains("CHACHA20"),
                "{}",
                s.name
            );
            assert!(
                s.version == TlsVersion::Tls13 || s.iana_name.contains("ECDHE"),
                "{}",
                s.name
            );
        }
        // Names and codes are unique.
        for (i, a) in CIPHER_SPECS.iter().enumerate() {
            for b in &CIPHER_SPECS[i + 1..] {
                assert_ne!(a.name, b.name);
                assert_ne!(a.iana, b.iana);
            }
        }
    }
}
