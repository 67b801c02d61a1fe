//! What the fuzz target and the property tests drive: every text input this crate
//! decodes (SSLPEER filters, SNI host names, SSLCIPH values), with the invariants that
//! must hold whatever the input.

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
    if let Ok(Some(choice)) = CipherSpecChoice::parse(text) {
        assert!(
            choice.suites().count() > 0,
            "an accepted SSLCIPH offers a suite"
        );
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
        fn sni_like_text_keeps_the_invariants(text in "[0-9a-f-]{0,12}\\.chl\\.mq\\.ibm\\.com") {
            super::check_text(&text);
        }
    }
}
