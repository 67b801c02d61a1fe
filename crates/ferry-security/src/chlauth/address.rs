//! Generic IP addresses, as CHLAUTH's ADDRESS and ADDRLIST take them.
//!
//! IPv4: four parts, each a number, a range `n-m` or `*`; a `*` as the last part stands
//! for every remaining part (`10.1.*` is `10.1.*.*`), and `*` alone is any address.
//! IPv6: the same with hexadecimal parts separated by `:`, or one exact address in any
//! form `std` reads (`::1`). Ferry matches partners by IP address only: host names would
//! need a reverse DNS lookup on every connection, so a pattern with letters other than
//! hexadecimal digits is refused with the reason.

use std::net::{IpAddr, Ipv6Addr};

/// Why an address pattern is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Empty.
    #[error("the address pattern is empty")]
    Empty,
    /// Not an IPv4 or IPv6 pattern (a host name, a typo).
    #[error("'{0}' is not an IP address pattern: use parts such as 192.168.0.*, 10.1.2.1-20 or 2001:db8:*; Ferry matches partners by IP address, not host name")]
    NotAnAddress(String),
    /// A part out of range or a range whose ends are the wrong way round.
    #[error("'{0}' has a part that is out of range or a range that runs backwards")]
    BadPart(String),
}

/// One part: a fixed value, a range, or any value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Exact(u16),
    Range(u16, u16),
    Any,
}

impl Part {
    fn matches(self, v: u16) -> bool {
        match self {
            Part::Exact(x) => v == x,
            Part::Range(lo, hi) => (lo..=hi).contains(&v),
            Part::Any => true,
        }
    }

    fn weight(self) -> u32 {
        match self {
            Part::Exact(_) => 2,
            Part::Range(..) => 1,
            Part::Any => 0,
        }
    }
}

/// A parsed generic address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AddressPattern {
    family: Family,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Family {
    /// `*`: any address of either family.
    Anything,
    /// Four parts (trailing `*` already expanded).
    V4([Part; 4]),
    /// Eight parts.
    V6([Part; 8]),
}

impl AddressPattern {
    /// Parses a pattern.
    pub fn parse(text: &str) -> Result<Self, AddressError> {
        let t = text.trim();
        if t.is_empty() {
            return Err(AddressError::Empty);
        }
        if t == "*" {
            return Ok(AddressPattern {
                family: Family::Anything,
            });
        }
        let not_address = || AddressError::NotAnAddress(t.to_string());
        if t.contains(':') {
            if !t.contains(['*', '-']) {
                let a: Ipv6Addr = t.parse().map_err(|_| not_address())?;
                let mut parts = [Part::Any; 8];
                for (p, s) in parts.iter_mut().zip(a.segments()) {
                    *p = Part::Exact(s);
                }
                return Ok(AddressPattern {
                    family: Family::V6(parts),
                });
            }
            let parts = parts_of::<8>(t, ':', 16, 0xffff).ok_or_else(not_address)??;
            return Ok(AddressPattern {
                family: Family::V6(parts),
            });
        }
        let parts = parts_of::<4>(t, '.', 10, 255).ok_or_else(not_address)??;
        Ok(AddressPattern {
            family: Family::V4(parts),
        })
    }

    /// True when `addr` is one of the addresses the pattern stands for. An IPv4 address
    /// mapped into IPv6 (`::ffff:10.0.0.1`, as a dual-stack listener sees IPv4 partners)
    /// is matched as the IPv4 address.
    pub fn matches(&self, addr: IpAddr) -> bool {
        let addr = match addr {
            IpAddr::V6(v6) => v6
                .to_ipv4_mapped()
                .map(IpAddr::V4)
                .unwrap_or(IpAddr::V6(v6)),
            v4 => v4,
        };
        match (&self.family, addr) {
            (Family::Anything, _) => true,
            (Family::V4(parts), IpAddr::V4(a)) => parts
                .iter()
                .zip(a.octets())
                .all(|(p, o)| p.matches(u16::from(o))),
            (Family::V6(parts), IpAddr::V6(a)) => {
                parts.iter().zip(a.segments()).all(|(p, s)| p.matches(s))
            }
            _ => false,
        }
    }

    /// How much of an address the pattern fixes; greater is more specific.
    pub fn specificity(&self) -> u32 {
        match &self.family {
            Family::Anything => 0,
            Family::V4(p) => p.iter().map(|p| p.weight()).sum(),
            Family::V6(p) => p.iter().map(|p| p.weight()).sum(),
        }
    }
}

/// Splits `t` into `N` parts separated by `sep`; a trailing `*` fills the parts left.
/// `None`: not this family's shape; `Some(Err)`: the shape but a bad value.
fn parts_of<const N: usize>(
    t: &str,
    sep: char,
    radix: u32,
    max: u32,
) -> Option<Result<[Part; N], AddressError>> {
    let pieces: Vec<&str> = t.split(sep).collect();
    let trailing_star = pieces.last() == Some(&"*");
    if pieces.len() > N || (pieces.len() < N && !trailing_star) {
        return None;
    }
    let mut parts = [Part::Any; N];
    for (slot, piece) in parts.iter_mut().zip(&pieces) {
        *slot = match *piece {
            "*" => Part::Any,
            p => match p.split_once('-') {
                Some((lo, hi)) => {
                    let (lo, hi) = (number(lo, radix)?, number(hi, radix)?);
                    if lo > hi || hi > max {
                        return Some(Err(AddressError::BadPart(t.to_string())));
                    }
                    Part::Range(lo as u16, hi as u16)
                }
                None => {
                    let v = number(p, radix)?;
                    if v > max {
                        return Some(Err(AddressError::BadPart(t.to_string())));
                    }
                    Part::Exact(v as u16)
                }
            },
        };
    }
    Some(Ok(parts))
}

fn number(s: &str, radix: u32) -> Option<u32> {
    if s.is_empty() || s.len() > 5 || !s.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u32::from_str_radix(s, radix).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("address")
    }

    #[test]
    fn ipv4_patterns() {
        let p = AddressPattern::parse("192.168.0.1-20").expect("parses");
        assert!(p.matches(ip("192.168.0.20")));
        assert!(!p.matches(ip("192.168.0.21")));
        let p = AddressPattern::parse("10.1.*").expect("parses");
        assert!(p.matches(ip("10.1.200.3")));
        assert!(!p.matches(ip("10.2.0.1")));
        assert!(p.matches(ip("::ffff:10.1.0.9")), "mapped IPv4 matches");
        assert!(AddressPattern::parse("*").expect("any").matches(ip("::1")));
        let p = AddressPattern::parse("127.0.0.1").expect("exact");
        assert!(p.matches(ip("127.0.0.1")) && !p.matches(ip("127.0.0.2")));
    }

    #[test]
    fn ipv6_patterns() {
        let p = AddressPattern::parse("::1").expect("exact");
        assert!(p.matches(ip("::1")) && !p.matches(ip("127.0.0.1")));
        let p = AddressPattern::parse("2001:db8:*").expect("generic");
        assert!(p.matches(ip("2001:db8::5")));
        assert!(!p.matches(ip("2001:db9::5")));
    }

    #[test]
    fn refusals_say_why() {
        assert_eq!(AddressPattern::parse(" "), Err(AddressError::Empty));
        assert!(matches!(
            AddressPattern::parse("host.example.com"),
            Err(AddressError::NotAnAddress(_))
        ));
        assert!(matches!(
            AddressPattern::parse("10.0.0.256"),
            Err(AddressError::BadPart(_))
        ));
        assert!(matches!(
            AddressPattern::parse("10.0.0.9-3"),
            Err(AddressError::BadPart(_))
        ));
        assert!(matches!(
            AddressPattern::parse("10.0.0"),
            Err(AddressError::NotAnAddress(_))
        ));
    }

    #[test]
    fn fixed_parts_are_more_specific() {
        let s = |t| AddressPattern::parse(t).expect("parses").specificity();
        assert!(s("10.1.2.3") > s("10.1.2.*"));
        assert!(s("10.1.2.1-9") > s("10.1.2.*"));
        assert!(s("10.1.*") > s("*"));
    }
}
