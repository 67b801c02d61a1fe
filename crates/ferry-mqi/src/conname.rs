//! CONNAME parsing: where a client connection goes, in MQ's `host(port)` syntax.
//!
//! MQ writes a connection name as `host(port)`, a bare `host` meaning port 1414, and a
//! comma-separated list of those meaning "try each in turn" (multi-instance queue
//! managers). IPv6 addresses work unbracketed because the port is in parentheses:
//! `::1(1414)`.

use crate::{MqError, ReasonCode};

/// The default MQ listener port.
pub const DEFAULT_PORT: u16 = 1414;

/// One address of a connection name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPort {
    /// Host name or IP address.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// Parses a CONNAME such as `localhost(1414)`, `mq.example.com`, or
/// `qm-a(1414),qm-b(1415)`.
///
/// A malformed name (empty host, bad or missing port number, unbalanced parentheses)
/// fails with 2539 MQRC_CHANNEL_CONFIG_ERROR, as MQ reports a bad channel definition.
///
/// ```
/// use ferry_mqi::conname::{parse_conname, HostPort};
/// let hosts = parse_conname("localhost(1414), backup").unwrap();
/// assert_eq!(hosts[0], HostPort { host: "localhost".into(), port: 1414 });
/// assert_eq!(hosts[1].port, 1414);
/// ```
pub fn parse_conname(conname: &str) -> Result<Vec<HostPort>, MqError> {
    let bad = || MqError::from(ReasonCode::ChannelConfigError);
    let mut out = Vec::new();
    for part in conname.split(',') {
        let part = part.trim();
        let (host, port) = match part.find('(') {
            Some(open) => {
                let rest = &part[open + 1..];
                let port = rest.strip_suffix(')').ok_or_else(bad)?;
                let port: u16 = port.trim().parse().map_err(|_| bad())?;
                if port == 0 {
                    return Err(bad());
                }
                (part[..open].trim(), port)
            }
            None => (part, DEFAULT_PORT),
        };
        if host.is_empty() || host.contains(|c: char| c.is_whitespace() || c == ')') {
            return Err(bad());
        }
        out.push(HostPort {
            host: host.to_owned(),
            port,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hp(host: &str, port: u16) -> HostPort {
        HostPort {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn host_and_port() {
        assert_eq!(
            parse_conname("localhost(1414)"),
            Ok(vec![hp("localhost", 1414)])
        );
        assert_eq!(
            parse_conname("10.0.0.1(1415)"),
            Ok(vec![hp("10.0.0.1", 1415)])
        );
        assert_eq!(parse_conname(" mq ( 42 ) "), Ok(vec![hp("mq", 42)]));
    }

    #[test]
    fn bare_host_means_1414() {
        assert_eq!(parse_conname("mqhost"), Ok(vec![hp("mqhost", 1414)]));
    }

    #[test]
    fn ipv6_and_lists() {
        assert_eq!(parse_conname("::1(1414)"), Ok(vec![hp("::1", 1414)]));
        assert_eq!(parse_conname("a(1),b"), Ok(vec![hp("a", 1), hp("b", 1414)]));
    }

    #[test]
    fn malformed_names_are_config_errors() {
        for bad in [
            "",
            "(1414)",
            "host(",
            "host(x)",
            "host(1414",
            "host(0)",
            "host(70000)",
            "a,,b",
            "h h",
        ] {
            assert_eq!(
                parse_conname(bad).map_err(|e| e.reason),
                Err(ReasonCode::ChannelConfigError),
                "{bad:?}"
            );
        }
    }
}
