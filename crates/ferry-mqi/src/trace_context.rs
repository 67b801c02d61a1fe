//! W3C Trace Context carried as message properties.
//!
//! A message joins a distributed trace through two string properties named as the W3C
//! Trace Context headers are: `traceparent` (`version-traceid-parentid-flags`, lowercase
//! hex, e.g. `00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01`) and `tracestate`
//! (vendor data, carried but not read). OpenTelemetry's messaging conventions put them
//! in AMQP application-properties under the same names, so an MQ property, an AMQP
//! application property and an MQ property on the far side of a channel are one value
//! carried unchanged.
//!
//! [`TraceParent::parse`] follows the W3C parsing rules: version `ff` is invalid, a
//! version-00 value is exactly 55 characters, a later version may carry more after a
//! `-`, the trace id and parent id must not be all zeros, and only lowercase hex is
//! accepted. A value that does not parse is still carried as an ordinary property; it
//! is never used as a parent.

use std::fmt;

/// The property holding the W3C `traceparent` value.
pub const TRACEPARENT: &str = "traceparent";
/// The property holding the W3C `tracestate` value.
pub const TRACESTATE: &str = "tracestate";

/// The length of a version-00 `traceparent`.
pub const TRACEPARENT_LEN: usize = 55;

/// The `sampled` bit of the trace flags.
pub const FLAG_SAMPLED: u8 = 0x01;

/// A parsed `traceparent`: the trace, the span that is the parent, and the trace flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace id (16 bytes, not all zeros).
    pub trace_id: [u8; 16],
    /// The parent span's id (8 bytes, not all zeros).
    pub parent_id: [u8; 8],
    /// The trace flags ([`FLAG_SAMPLED`] and bits later versions define).
    pub flags: u8,
}

/// Why a `traceparent` value is not one to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceParentError {
    /// Shorter than 55 characters, or a version-00 value of another length.
    #[error("traceparent is {0} characters long; version 00 has exactly 55")]
    Length(usize),
    /// A field is not lowercase hex.
    #[error("traceparent's {0} is not lowercase hex")]
    NotHex(&'static str),
    /// A separator is not `-`.
    #[error("traceparent's fields are not separated by '-'")]
    Separator,
    /// Version `ff`, which the W3C reserves as invalid.
    #[error("traceparent version ff is invalid")]
    InvalidVersion,
    /// The trace id is all zeros.
    #[error("traceparent's trace id is all zeros")]
    ZeroTraceId,
    /// The parent id is all zeros.
    #[error("traceparent's parent id is all zeros")]
    ZeroParentId,
}

impl TraceParent {
    /// Parses a `traceparent` value by the W3C rules (see the module documentation).
    pub fn parse(value: &str) -> Result<Self, TraceParentError> {
        let b = value.as_bytes();
        if b.len() < TRACEPARENT_LEN {
            return Err(TraceParentError::Length(b.len()));
        }
        let version = hex_byte(&b[0..2]).ok_or(TraceParentError::NotHex("version"))?;
        if version == 0xff {
            return Err(TraceParentError::InvalidVersion);
        }
        if b[2] != b'-' || b[35] != b'-' || b[52] != b'-' {
            return Err(TraceParentError::Separator);
        }
        // Version 00 has nothing after the flags; a later version may, after a '-'.
        if (version == 0 && b.len() != TRACEPARENT_LEN)
            || (b.len() > TRACEPARENT_LEN && b[TRACEPARENT_LEN] != b'-')
        {
            return Err(TraceParentError::Length(b.len()));
        }
        let mut trace_id = [0u8; 16];
        hex_into(&b[3..35], &mut trace_id).ok_or(TraceParentError::NotHex("trace id"))?;
        let mut parent_id = [0u8; 8];
        hex_into(&b[36..52], &mut parent_id).ok_or(TraceParentError::NotHex("parent id"))?;
        let flags = hex_byte(&b[53..55]).ok_or(TraceParentError::NotHex("trace flags"))?;
        if trace_id == [0; 16] {
            return Err(TraceParentError::ZeroTraceId);
        }
        if parent_id == [0; 8] {
            return Err(TraceParentError::ZeroParentId);
        }
        Ok(TraceParent {
            trace_id,
            parent_id,
            flags,
        })
    }

    /// Whether the trace is sampled (the flags' [`FLAG_SAMPLED`] bit).
    pub fn sampled(&self) -> bool {
        self.flags & FLAG_SAMPLED != 0
    }

    /// The version-00 value for this context (what a queue manager writes).
    pub fn to_header(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("00-")?;
        for b in self.trace_id {
            write!(f, "{b:02x}")?;
        }
        f.write_str("-")?;
        for b in self.parent_id {
            write!(f, "{b:02x}")?;
        }
        write!(f, "-{:02x}", self.flags)
    }
}

/// The value of one lowercase hex digit.
fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// Two lowercase hex digits as a byte.
fn hex_byte(pair: &[u8]) -> Option<u8> {
    debug_assert_eq!(pair.len(), 2);
    Some(hex_digit(pair[0])? << 4 | hex_digit(pair[1])?)
}

/// Lowercase hex (twice `out`'s length) into `out`.
fn hex_into(hex: &[u8], out: &mut [u8]) -> Option<()> {
    debug_assert_eq!(hex.len(), out.len() * 2);
    for (o, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        *o = hex_byte(pair)?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const W3C_EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn the_w3c_example_parses_and_formats_back() {
        let tp = TraceParent::parse(W3C_EXAMPLE).expect("valid");
        assert_eq!(tp.trace_id[0], 0x4b);
        assert_eq!(
            tp.parent_id,
            [0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7]
        );
        assert!(tp.sampled());
        assert_eq!(tp.to_header(), W3C_EXAMPLE);
    }

    #[test]
    fn invalid_values_are_refused_with_their_reason() {
        let cases = [
            ("", TraceParentError::Length(0)),
            (
                "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
                TraceParentError::NotHex("trace id"),
            ),
            (
                "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                TraceParentError::ZeroTraceId,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                TraceParentError::ZeroParentId,
            ),
            (
                "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                TraceParentError::InvalidVersion,
            ),
            (
                "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                TraceParentError::Separator,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
                TraceParentError::Length(61),
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
                TraceParentError::NotHex("trace flags"),
            ),
        ];
        for (value, want) in cases {
            assert_eq!(TraceParent::parse(value), Err(want), "{value:?}");
        }
    }

    #[test]
    fn a_later_version_may_carry_more_after_a_dash() {
        let later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-more";
        let tp = TraceParent::parse(later).expect("a later version parses");
        assert!(!tp.sampled());
        assert!(TraceParent::parse(&later.replace("-more", "more")).is_err());
    }

    proptest! {
        #[test]
        fn any_text_is_refused_or_round_trips(text in ".{0,70}") {
            crate::fuzzing::parse_trace_parent(text.as_bytes());
        }

        #[test]
        fn any_context_round_trips(
            trace_id in any::<[u8; 16]>(),
            parent_id in any::<[u8; 8]>(),
            flags in any::<u8>(),
        ) {
            prop_assume!(trace_id != [0; 16] && parent_id != [0; 8]);
            let tp = TraceParent { trace_id, parent_id, flags };
            prop_assert_eq!(TraceParent::parse(&tp.to_header()), Ok(tp));
        }
    }
}
