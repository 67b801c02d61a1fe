//! The broker address of `--url`: `amqp://[user[:password]@]host[:port]` (port 5672
//! by default, IPv6 hosts in brackets). `amqps` is refused with a clear message: the
//! harness speaks plain TCP. Credentials may also come from `--user`/`--password`,
//! which win over the URL's.

use super::error::AmqpError;

/// The AMQP port when the URL names none.
pub const DEFAULT_PORT: u16 = 5672;

/// A parsed `amqp://` URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmqpUrl {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// SASL PLAIN user, if any (else SASL ANONYMOUS).
    pub user: Option<String>,
    /// SASL PLAIN password (empty when only a user is given).
    pub password: Option<String>,
}

impl AmqpUrl {
    /// Parses `amqp://[user[:password]@]host[:port][/]`.
    ///
    /// ```
    /// let u = ferry_perf::amqp::AmqpUrl::parse("amqp://localhost:5673").unwrap();
    /// assert_eq!((u.host.as_str(), u.port), ("localhost", 5673));
    /// ```
    pub fn parse(text: &str) -> Result<AmqpUrl, AmqpError> {
        let bad = |why: &str| {
            AmqpError::Url(format!(
                "invalid --url '{text}': {why}; use amqp://host[:port], e.g. amqp://localhost:5672 \
                 (credentials: amqp://user:password@host:port or --user/--password)"
            ))
        };
        let t = text.trim();
        let rest = match t.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("amqp") => rest,
            Some((scheme, _)) if scheme.eq_ignore_ascii_case("amqps") => {
                return Err(bad("TLS (amqps) is not available in the harness"))
            }
            Some((scheme, _)) => return Err(bad(&format!("unknown scheme '{scheme}'"))),
            None => return Err(bad("no scheme")),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.contains('/') || rest.contains('?') {
            return Err(bad("a path or query is not supported"));
        }
        let (user, password, hostport) = match rest.rsplit_once('@') {
            Some((userinfo, hp)) => match userinfo.split_once(':') {
                Some((u, p)) => (Some(u.to_string()), Some(p.to_string()), hp),
                None => (Some(userinfo.to_string()), None, hp),
            },
            None => (None, None, rest),
        };
        if user.as_deref() == Some("") {
            return Err(bad("empty user name"));
        }
        let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
            let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed '['"))?;
            match after {
                "" => (h, None),
                p => (
                    h,
                    Some(p.strip_prefix(':').ok_or_else(|| bad("junk after ']'"))?),
                ),
            }
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (hostport, None),
            }
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(p) => match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => return Err(bad(&format!("bad port '{p}'"))),
            },
        };
        Ok(AmqpUrl {
            host: host.to_string(),
            port,
            user,
            password,
        })
    }

    /// The URL with `--user`/`--password` applied (they win over the URL's).
    pub fn with_credentials(mut self, user: Option<&str>, password: Option<&str>) -> AmqpUrl {
        if let Some(u) = user {
            self.user = Some(u.to_string());
        }
        if let Some(p) = password {
            self.password = Some(p.to_string());
        }
        self
    }

    /// `host:port` for connecting (IPv6 in brackets).
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

impl std::fmt::Display for AmqpUrl {
    /// The URL without its password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.user {
            Some(u) => write!(f, "amqp://{u}@{}", self.authority()),
            None => write!(f, "amqp://{}", self.authority()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_with_defaults_and_credentials() {
        let u = AmqpUrl::parse("amqp://localhost").expect("plain");
        assert_eq!(u.port, DEFAULT_PORT);
        assert_eq!(u.user, None);
        let u = AmqpUrl::parse("AMQP://app:s3:cret@broker.example:5673/").expect("creds");
        assert_eq!(u.host, "broker.example");
        assert_eq!(u.port, 5673);
        assert_eq!(u.user.as_deref(), Some("app"));
        assert_eq!(u.password.as_deref(), Some("s3:cret"));
        assert_eq!(
            u.to_string(),
            "amqp://app@broker.example:5673",
            "no password shown"
        );
        let u = AmqpUrl::parse("amqp://[::1]:5672").expect("v6");
        assert_eq!(u.host, "::1");
        assert_eq!(u.authority(), "[::1]:5672");
        let u = AmqpUrl::parse("amqp://guest@h")
            .expect("user only")
            .with_credentials(None, Some("pw"));
        assert_eq!(
            (u.user.as_deref(), u.password.as_deref()),
            (Some("guest"), Some("pw"))
        );
    }

    #[test]
    fn bad_urls_say_what_is_accepted() {
        for (bad, why) in [
            ("localhost:5672", "no scheme"),
            ("amqps://h:5671", "TLS"),
            ("http://h", "unknown scheme"),
            ("amqp://", "no host"),
            ("amqp://h:0", "bad port"),
            ("amqp://h:99999", "bad port"),
            ("amqp://h/vhost", "path"),
            ("amqp://[::1", "unclosed"),
            ("amqp://@h", "empty user"),
        ] {
            let e = AmqpUrl::parse(bad).expect_err(bad).to_string();
            assert!(
                e.contains(why) && e.contains("amqp://host[:port]"),
                "{bad}: {e}"
            );
        }
    }
}
