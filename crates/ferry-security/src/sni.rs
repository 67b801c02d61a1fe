//! The channel name in TLS SNI, as IBM MQ clients send it.
//!
//! Several channels share one listener port, and the channel name only arrives after the
//! handshake; yet the CipherSpec, the certificate (CERTLABL) and whether a client
//! certificate is demanded (SSLCAUTH) are the channel's. MQ clients therefore name the
//! channel in the TLS server-name extension as `<mapped>.chl.mq.ibm.com`, where the
//! mapping keeps `0-9`, lowers `A-Z`, and writes every other byte (lower-case letters
//! too) as two lower-case hex digits and `-`: `TO.QMGR1` becomes
//! `to2e-qmgr1.chl.mq.ibm.com`. Ferry's client does the same, and the server maps the
//! name back to find the channel before it answers the ClientHello.

/// The domain MQ puts after the mapped channel name.
pub const SNI_SUFFIX: &str = ".chl.mq.ibm.com";

/// The SNI host name for `channel`.
pub fn host_for_channel(channel: &str) -> String {
    let mut host = String::with_capacity(channel.len() * 3 + SNI_SUFFIX.len());
    for b in channel.bytes() {
        match b {
            b'A'..=b'Z' => host.push(char::from(b.to_ascii_lowercase())),
            b'0'..=b'9' => host.push(char::from(b)),
            other => {
                host.push_str(&format!("{other:02x}"));
                host.push('-');
            }
        }
    }
    host.push_str(SNI_SUFFIX);
    host
}

/// The channel an SNI host name names, or `None` when it is not in MQ's form.
pub fn channel_for_host(host: &str) -> Option<String> {
    let lower = host.to_ascii_lowercase();
    let mapped = lower.strip_suffix(SNI_SUFFIX)?.as_bytes();
    let mut channel = Vec::with_capacity(mapped.len());
    let mut i = 0;
    while i < mapped.len() {
        let escape = mapped.get(i + 2) == Some(&b'-')
            && mapped[i].is_ascii_hexdigit()
            && mapped[i + 1].is_ascii_hexdigit();
        if escape {
            let hex = std::str::from_utf8(&mapped[i..i + 2]).ok()?;
            channel.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            match mapped[i] {
                c @ b'a'..=b'z' => channel.push(c.to_ascii_uppercase()),
                c @ b'0'..=b'9' => channel.push(c),
                _ => return None,
            }
            i += 1;
        }
    }
    String::from_utf8(channel).ok().filter(|c| !c.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn maps_as_mq_does() {
        assert_eq!(host_for_channel("TO.QMGR1"), "to2e-qmgr1.chl.mq.ibm.com");
        assert_eq!(host_for_channel("a_B"), "61-5f-b.chl.mq.ibm.com");
        assert_eq!(
            channel_for_host("TO2E-QMGR1.chl.mq.ibm.com").as_deref(),
            Some("TO.QMGR1")
        );
        assert_eq!(channel_for_host("localhost"), None);
        assert_eq!(channel_for_host(".chl.mq.ibm.com"), None);
        assert_eq!(channel_for_host("a!b.chl.mq.ibm.com"), None);
    }

    proptest! {
        /// Every channel name maps to a host name that maps back to it.
        #[test]
        fn round_trips(channel in "[A-Za-z0-9./_%]{1,20}") {
            let host = host_for_channel(&channel);
            prop_assert!(host.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.'));
            prop_assert_eq!(channel_for_host(&host), Some(channel));
        }
    }
}
