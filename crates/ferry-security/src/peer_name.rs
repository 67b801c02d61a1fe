//! SSLPEER: filters on the distinguished name of the certificate a partner presents.
//!
//! A filter is a list of `ATTRIBUTE=value` pairs separated by commas (or semicolons),
//! e.g. `CN=pay-*, OU=Payments, O=Example, C=GB`, as MQ writes them:
//!
//! - Attribute names are MQ's (CN, T, OU, O, L, ST or SP or S, C, SERIALNUMBER, MAIL or E,
//!   UID or USERID, DC, DNQ, PC, STREET), in any case.
//! - A value may be in double quotes (to hold commas, semicolons or `=`); `*` at its
//!   start, its end or both matches any text there. Matching ignores case.
//! - Every attribute the filter names must be in the certificate's subject with a
//!   matching value; attributes it does not name are not looked at.
//! - OU and DC may repeat: the filter's values must match the certificate's values of
//!   that attribute in order, from the first, and the certificate may have more after.
//!
//! A filter that does not parse is refused where it is set (DEFINE CHANNEL, SET CHLAUTH),
//! with the reason; at connect a mismatch refuses the partner (MQ's 2398 / AMQ9636).

use std::fmt;

/// A distinguished-name attribute that SSLPEER filters can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DnAttribute {
    /// Common name (2.5.4.3).
    CommonName,
    /// Title (2.5.4.12).
    Title,
    /// Organizational unit (2.5.4.11); may repeat.
    OrganizationalUnit,
    /// Organization (2.5.4.10).
    Organization,
    /// Locality (2.5.4.7).
    Locality,
    /// State or province (2.5.4.8).
    State,
    /// Country (2.5.4.6).
    Country,
    /// Serial number attribute of the subject (2.5.4.5), not the certificate's serial.
    SerialNumber,
    /// E-mail address (1.2.840.113549.1.9.1).
    Mail,
    /// User id (0.9.2342.19200300.100.1.1).
    UserId,
    /// Domain component (0.9.2342.19200300.100.1.25); may repeat.
    DomainComponent,
    /// Distinguished-name qualifier (2.5.4.46).
    DnQualifier,
    /// Postal code (2.5.4.17).
    PostalCode,
    /// Street (2.5.4.9).
    Street,
}

/// Every attribute: its display keyword, the names a filter may use, and its OID.
const ATTRIBUTES: &[(DnAttribute, &str, &[&str], &str)] = &[
    (DnAttribute::CommonName, "CN", &["CN"], "2.5.4.3"),
    (DnAttribute::Title, "T", &["T", "TITLE"], "2.5.4.12"),
    (DnAttribute::OrganizationalUnit, "OU", &["OU"], "2.5.4.11"),
    (DnAttribute::Organization, "O", &["O"], "2.5.4.10"),
    (DnAttribute::Locality, "L", &["L"], "2.5.4.7"),
    (DnAttribute::State, "ST", &["ST", "SP", "S"], "2.5.4.8"),
    (DnAttribute::Country, "C", &["C"], "2.5.4.6"),
    (
        DnAttribute::SerialNumber,
        "SERIALNUMBER",
        &["SERIALNUMBER"],
        "2.5.4.5",
    ),
    (
        DnAttribute::Mail,
        "MAIL",
        &["MAIL", "E", "EMAIL"],
        "1.2.840.113549.1.9.1",
    ),
    (
        DnAttribute::UserId,
        "UID",
        &["UID", "USERID"],
        "0.9.2342.19200300.100.1.1",
    ),
    (
        DnAttribute::DomainComponent,
        "DC",
        &["DC"],
        "0.9.2342.19200300.100.1.25",
    ),
    (DnAttribute::DnQualifier, "DNQ", &["DNQ"], "2.5.4.46"),
    (
        DnAttribute::PostalCode,
        "PC",
        &["PC", "POSTALCODE"],
        "2.5.4.17",
    ),
    (DnAttribute::Street, "STREET", &["STREET"], "2.5.4.9"),
];

impl DnAttribute {
    /// The attribute a filter names `keyword` (any case, MQ's synonyms included).
    pub fn from_keyword(keyword: &str) -> Option<Self> {
        ATTRIBUTES
            .iter()
            .find(|(_, _, names, _)| names.iter().any(|n| n.eq_ignore_ascii_case(keyword)))
            .map(|(a, ..)| *a)
    }

    /// The attribute with object identifier `oid` (dotted), if filters can name it.
    pub fn from_oid(oid: &str) -> Option<Self> {
        ATTRIBUTES
            .iter()
            .find(|(.., o)| *o == oid)
            .map(|(a, ..)| *a)
    }

    /// The keyword DISPLAY shows, e.g. `CN`.
    pub fn keyword(self) -> &'static str {
        ATTRIBUTES
            .iter()
            .find(|(a, ..)| *a == self)
            .map_or("?", |(_, k, ..)| k)
    }

    /// True for attributes a DN may hold several of, matched in order.
    fn repeats(self) -> bool {
        matches!(
            self,
            DnAttribute::OrganizationalUnit | DnAttribute::DomainComponent
        )
    }
}

/// A certificate's subject (or issuer): its attributes in the certificate's order, most
/// general first (C, O, OU, ..., CN as DER usually holds them). Attributes filters cannot
/// name are left out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistinguishedName {
    /// The attributes, in certificate order.
    pub attributes: Vec<(DnAttribute, String)>,
}

impl DistinguishedName {
    /// Reads a DN written most specific first (`CN=app1,OU=Payments,O=Example`), as an
    /// administrator types one for DISPLAY CHLAUTH MATCH(RUNCHECK) SSLPEER(..). Values
    /// may be quoted; wildcards are taken literally.
    pub fn parse(text: &str) -> Result<Self, PeerNameError> {
        let mut attributes = Vec::new();
        for (attr, value) in pairs(text)? {
            let value = match value.strip_prefix('"') {
                Some(rest) => {
                    let end = closing_quote(rest).ok_or(PeerNameError::UnclosedQuote)?;
                    rest[..end].replace("\\\"", "\"")
                }
                None => value.to_string(),
            };
            attributes.push((attr, value));
        }
        attributes.reverse();
        Ok(DistinguishedName { attributes })
    }

    /// The values of `attr`, in certificate order.
    fn values(&self, attr: DnAttribute) -> impl Iterator<Item = &str> {
        self.attributes
            .iter()
            .filter(move |(a, _)| *a == attr)
            .map(|(_, v)| v.as_str())
    }
}

impl fmt::Display for DistinguishedName {
    /// Most specific first, as MQ's DISPLAY CHSTATUS SSLPEER and RFC 4514 write it:
    /// `CN=app1,OU=Payments,O=Example,C=GB`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (a, v)) in self.attributes.iter().rev().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if v.contains([',', ';', '=', '"']) {
                write!(f, "{}=\"{}\"", a.keyword(), v.replace('"', "\\\""))?;
            } else {
                write!(f, "{}={v}", a.keyword())?;
            }
        }
        Ok(())
    }
}

/// One value in a filter, with its wildcards.
#[derive(Clone, Debug, PartialEq, Eq)]
struct ValuePattern {
    /// The text between the wildcards, upper case.
    text: String,
    /// `*` before the text.
    any_prefix: bool,
    /// `*` after the text.
    any_suffix: bool,
}

impl ValuePattern {
    fn matches(&self, value: &str) -> bool {
        let value = value.to_uppercase();
        match (self.any_prefix, self.any_suffix) {
            (false, false) => value == self.text,
            (true, false) => value.ends_with(&self.text),
            (false, true) => value.starts_with(&self.text),
            (true, true) => value.contains(&self.text),
        }
    }
}

/// A parsed SSLPEER filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerNameFilter {
    terms: Vec<(DnAttribute, ValuePattern)>,
}

/// Why an SSLPEER filter does not parse (MQ's 2399 MQRC_SSL_PEER_NAME_ERROR).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PeerNameError {
    /// A part without `=`.
    #[error("'{0}' is not ATTRIBUTE=value")]
    NotAPair(String),
    /// An attribute name MQ's filters do not have.
    #[error("'{0}' is not a distinguished-name attribute (use CN, T, OU, O, L, ST, C, SERIALNUMBER, MAIL, UID, DC, DNQ, PC or STREET)")]
    UnknownAttribute(String),
    /// An attribute other than OU and DC given twice.
    #[error("{0} appears twice; only OU and DC may repeat")]
    Repeated(&'static str),
    /// A `*` inside a value.
    #[error("'{0}': a wildcard * may only begin or end a value")]
    InnerWildcard(String),
    /// A double quote opened and not closed.
    #[error("a quoted value is not closed")]
    UnclosedQuote,
    /// Text after a closing quote.
    #[error("text follows a quoted value: '{0}'")]
    AfterQuote(String),
}

impl PeerNameFilter {
    /// Parses a filter; blank gives `Ok(None)` (no filter: any partner).
    pub fn parse(text: &str) -> Result<Option<PeerNameFilter>, PeerNameError> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        let mut terms: Vec<(DnAttribute, ValuePattern)> = Vec::new();
        for (attr, value) in pairs(text)? {
            if !attr.repeats() && terms.iter().any(|(a, _)| *a == attr) {
                return Err(PeerNameError::Repeated(attr.keyword()));
            }
            terms.push((attr, value_pattern(value)?));
        }
        if terms.is_empty() {
            return Ok(None);
        }
        Ok(Some(PeerNameFilter { terms }))
    }

    /// True when `dn` satisfies every term of the filter.
    pub fn matches(&self, dn: &DistinguishedName) -> bool {
        let mut repeated_seen: Vec<(DnAttribute, usize)> = Vec::new();
        for (attr, pattern) in &self.terms {
            if attr.repeats() {
                // The n-th OU of the filter matches the n-th OU of the certificate.
                let n = match repeated_seen.iter_mut().find(|(a, _)| a == attr) {
                    Some((_, n)) => {
                        *n += 1;
                        *n
                    }
                    None => {
                        repeated_seen.push((*attr, 0));
                        0
                    }
                };
                if !dn.values(*attr).nth(n).is_some_and(|v| pattern.matches(v)) {
                    return false;
                }
            } else if !dn.values(*attr).any(|v| pattern.matches(v)) {
                return false;
            }
        }
        true
    }
}

/// The `ATTRIBUTE=value` parts of a filter or DN, attribute names read, values trimmed
/// (quotes kept); empty parts skipped.
fn pairs(text: &str) -> Result<Vec<(DnAttribute, &str)>, PeerNameError> {
    let mut out = Vec::new();
    for part in split_outside_quotes(text)? {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let (name, value) = part
            .split_once('=')
            .ok_or_else(|| PeerNameError::NotAPair(part.to_string()))?;
        let name = name.trim();
        let attr = DnAttribute::from_keyword(name)
            .ok_or_else(|| PeerNameError::UnknownAttribute(name.to_string()))?;
        out.push((attr, value.trim()));
    }
    Ok(out)
}

/// Splits on commas and semicolons that are not inside double quotes.
fn split_outside_quotes(text: &str) -> Result<Vec<&str>, PeerNameError> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut quoted = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            ',' | ';' if !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if quoted {
        return Err(PeerNameError::UnclosedQuote);
    }
    parts.push(&text[start..]);
    Ok(parts)
}

/// A value as a pattern: quotes removed, wildcards at its ends noted.
fn value_pattern(raw: &str) -> Result<ValuePattern, PeerNameError> {
    let body = if let Some(rest) = raw.strip_prefix('"') {
        let end = closing_quote(rest).ok_or(PeerNameError::UnclosedQuote)?;
        let after = rest[end + 1..].trim();
        if !after.is_empty() {
            return Err(PeerNameError::AfterQuote(after.to_string()));
        }
        rest[..end].replace("\\\"", "\"")
    } else {
        raw.to_string()
    };
    let any_prefix = body.starts_with('*');
    let inner = body.strip_prefix('*').unwrap_or(&body);
    let any_suffix = inner.ends_with('*');
    let inner = inner.strip_suffix('*').unwrap_or(inner);
    if inner.contains('*') {
        return Err(PeerNameError::InnerWildcard(raw.to_string()));
    }
    Ok(ValuePattern {
        text: inner.to_uppercase(),
        any_prefix,
        any_suffix,
    })
}

/// Where the closing double quote of a quoted value is (after `\"` escapes).
fn closing_quote(rest: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return Some(i),
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn dn(pairs: &[(&str, &str)]) -> DistinguishedName {
        DistinguishedName {
            attributes: pairs
                .iter()
                .map(|(k, v)| (DnAttribute::from_keyword(k).expect("attr"), v.to_string()))
                .collect(),
        }
    }

    fn filter(text: &str) -> PeerNameFilter {
        PeerNameFilter::parse(text)
            .expect("parses")
            .expect("not blank")
    }

    #[test]
    fn named_attributes_must_match_and_others_are_ignored() {
        let cert = dn(&[
            ("C", "GB"),
            ("O", "Example"),
            ("OU", "Payments"),
            ("CN", "pay-01"),
        ]);
        assert!(filter("CN=pay-01").matches(&cert));
        assert!(filter("cn=PAY-01, o=example").matches(&cert));
        assert!(filter("CN=pay-*;O=Example").matches(&cert));
        assert!(filter("CN=*-01").matches(&cert));
        assert!(filter("CN=*ay-0*").matches(&cert));
        assert!(!filter("CN=pay-02").matches(&cert));
        assert!(!filter("CN=pay-01,L=London").matches(&cert), "L absent");
        assert_eq!(cert.to_string(), "CN=pay-01,OU=Payments,O=Example,C=GB");
    }

    #[test]
    fn repeated_ous_match_in_order_from_the_first() {
        let cert = dn(&[
            ("O", "Example"),
            ("OU", "Europe"),
            ("OU", "Payments"),
            ("CN", "a"),
        ]);
        assert!(filter("OU=Europe").matches(&cert));
        assert!(filter("OU=Europe,OU=Payments").matches(&cert));
        assert!(!filter("OU=Payments").matches(&cert), "first OU is Europe");
        assert!(!filter("OU=Payments,OU=Europe").matches(&cert));
        assert!(!filter("OU=Europe,OU=Payments,OU=More").matches(&cert));
    }

    #[test]
    fn quoted_values_hold_separators() {
        let cert = dn(&[("O", "Example, Inc."), ("CN", "x")]);
        assert!(filter("O=\"Example, Inc.\"").matches(&cert));
        assert!(filter("O=\"Example, *\",CN=x").matches(&cert));
        assert_eq!(cert.to_string(), "CN=x,O=\"Example, Inc.\"");
    }

    #[test]
    fn bad_filters_are_refused_with_the_reason() {
        assert_eq!(PeerNameFilter::parse(""), Ok(None));
        assert!(matches!(
            PeerNameFilter::parse("CN"),
            Err(PeerNameError::NotAPair(_))
        ));
        assert!(matches!(
            PeerNameFilter::parse("XX=1"),
            Err(PeerNameError::UnknownAttribute(_))
        ));
        assert!(matches!(
            PeerNameFilter::parse("CN=a,CN=b"),
            Err(PeerNameError::Repeated("CN"))
        ));
        assert!(matches!(
            PeerNameFilter::parse("CN=a*b"),
            Err(PeerNameError::InnerWildcard(_))
        ));
        assert!(matches!(
            PeerNameFilter::parse("CN=\"abc"),
            Err(PeerNameError::UnclosedQuote)
        ));
        assert!(matches!(
            PeerNameFilter::parse("CN=\"abc\" d"),
            Err(PeerNameError::AfterQuote(_))
        ));
    }

    proptest! {
        /// Any text parses or is refused; nothing panics.
        #[test]
        fn any_text_parses_or_is_refused(text in ".{0,80}") {
            let _ = PeerNameFilter::parse(&text);
        }

        /// A filter made from a DN's own CN, exact or with a wildcard end, matches it.
        #[test]
        fn a_dns_own_values_match(cn in "[A-Za-z0-9 .-]{1,20}", cut in 0usize..20) {
            let cert = dn(&[("O", "Org"), ("CN", &cn)]);
            let exact = ["CN=\"", &cn, "\""].concat();
            prop_assert!(filter(&exact).matches(&cert));
            let cut = cut.min(cn.len());
            let head = ["CN=\"", &cn[..cut], "*\""].concat();
            let tail = ["CN=\"*", &cn[cut..], "\""].concat();
            prop_assert!(filter(&head).matches(&cert));
            prop_assert!(filter(&tail).matches(&cert));
        }
    }
}
