//! What the fuzz target and the property tests drive: every text input this crate
//! decodes (SSLPEER filters, SNI host names, SSLCIPH values, CHLAUTH profiles, address
//! patterns and records, authority profiles, the user repository's lines), with the invariants that must hold whatever the input.

use crate::chlauth::{
    AddressPattern, ChlauthRecord, ChlauthRules, ChlauthType, GenericName, Partner, SetAction,
    UserSource,
};
use crate::peer_name::{DistinguishedName, DnAttribute};
use crate::{sni, CipherSpecChoice, PeerNameFilter};

/// Decodes `text` every way; panics only when an invariant breaks.
pub fn check_text(text: &str) {
    if let Ok(Some(filter)) = PeerNameFilter::parse(text) {
        // Matching is total: any DN, including one made of the text itself.
        let dn = DistinguishedName {
            attributes: vec![
                (DnAttribute::CommonName, text.to_string()),
                (DnAttribute::OrganizationalUnit, text.to_string()),
            ],
        };
        let _ = filter.matches(&dn);
        let _ = filter.matches(&DistinguishedName::default());
        let _ = dn.to_string();
    }
    if let Some(channel) = sni::channel_for_host(text) {
        assert_eq!(
            sni::channel_for_host(&sni::host_for_channel(&channel)).as_deref(),
            Some(channel.as_str()),
            "an SNI channel name encodes back to itself"
        );
    }
    check_chlauth(text);
    check_authority_profile(text);
    if let Ok(file) = crate::connauth::UserFile::parse(text) {
        assert_eq!(
            crate::connauth::UserFile::parse(&file.render()).as_ref(),
            Ok(&file),
            "a user file that parses renders back to itself"
        );
    }
    if let Ok(Some(choice)) = CipherSpecChoice::parse(text) {
        assert!(
            choice.suites().count() > 0,
            "an accepted SSLCIPH offers a suite"
        );
    }
}

/// SET AUTHREC: `text` as a profile, matched against itself and its halves, and as an
/// authority name.
fn check_authority_profile(text: &str) {
    use crate::oam::{AuthorityName, Profile};
    if let Ok(p) = Profile::parse(text) {
        assert!(
            p.is_generic() || p.matches(text),
            "a profile without wildcards covers its own name"
        );
        let half = text.len() / 2;
        if let (Some(a), Some(b)) = (text.get(..half), text.get(half..)) {
            let _ = p.matches(a);
            let _ = p.matches(b);
        }
        let other = Profile::parse("**").expect("literal");
        assert_ne!(
            Profile::most_specific_first(&p, &other),
            std::cmp::Ordering::Greater,
            "nothing is less specific than **"
        );
    }
    let _ = AuthorityName::parse(text);
}

/// CHLAUTH: `text` as an address pattern, a profile and each field of a record; a
/// record SET accepts must decide any connection without panicking.
fn check_chlauth(text: &str) {
    if let Ok(p) = AddressPattern::parse(text) {
        let _ = p.matches("10.0.0.1".parse().expect("literal"));
        let _ = p.matches("::1".parse().expect("literal"));
    }
    let g = GenericName::new(text);
    assert!(
        g.matches(text) || text.contains('*'),
        "a name without * matches itself"
    );
    for kind in ChlauthType::ALL {
        let mut r = ChlauthRecord::new(
            if kind == ChlauthType::BlockAddr {
                "*"
            } else {
                "A*"
            },
            kind,
        );
        r.address = text.to_string();
        r.client_user = text.to_string();
        r.ssl_peer = text.to_string();
        r.qmgr_name = text.to_string();
        r.mca_user = text.to_string();
        r.user_list = vec![text.to_string()];
        r.address_list = vec![text.to_string()];
        r.user_source = UserSource::Map;
        let mut rules = ChlauthRules::default();
        if rules.set(r, SetAction::Add).is_ok() {
            let dn = DistinguishedName {
                attributes: vec![(DnAttribute::CommonName, text.to_string())],
            };
            let partner = Partner {
                channel: "A.B",
                address: "10.0.0.1".parse().expect("literal"),
                client_user: text,
                peer: Some(&dn),
                issuer: None,
                remote_qmgr: Some(text),
                channel_mca_user: "",
            };
            let _ = rules.check(&partner, &|u| u == text);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn any_text_keeps_the_invariants(text in ".{0,64}") {
            super::check_text(&text);
        }

        #[test]
        fn filter_like_text_keeps_the_invariants(text in "([A-Za-z]{1,3}=[\"*a-z ,;\\\\]{0,8}[,;]?){0,5}") {
            super::check_text(&text);
        }

        #[test]
        fn address_like_text_keeps_the_invariants(text in "[0-9a-f.:*-]{0,24}") {
            super::check_text(&text);
        }

        #[test]
        fn sni_like_text_keeps_the_invariants(text in "[0-9a-f-]{0,12}\\.chl\\.mq\\.ibm\\.com") {
            super::check_text(&text);
        }
    }
}
