//! A message property's value as one line of text: what the messaging REST API's
//! `ibm-mq-usr-<name>` headers carry, in both directions.
//!
//! Two forms:
//!
//! - plain text, not starting with `"`: an MQTYPE_STRING property with exactly that text;
//! - `"<text>"` optionally followed by `;type=<type>`: the quoted text (escapes `\"`,
//!   `\\`, `\n`, `\r`, `\t` and `\uXXXX`) read as a value of `<type>`, one of `string`
//!   (the default), `boolean` (`true`/`false`), `int8`, `int16`, `int32`, `int64`,
//!   `float32`, `float64`, `byteString` (hex digits) or `null` (empty text). Type names
//!   are MQ's MQTYPE_* names without the prefix, compared without regard to case.
//!
//! [`format_property`] writes a value so that [`parse_property`] reads it back: strings
//! that read the same plain stay plain, everything else is quoted and typed. The text is
//! bounded ([`MAX_PROPERTY_TEXT`] bytes) because it arrives in an HTTP header.

use crate::{PropertyValue, ReasonCode};
use bytes::Bytes;
use std::fmt::Write as _;

/// Longest property value text, in bytes.
pub const MAX_PROPERTY_TEXT: usize = 8192;

/// Why a property value's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PropertyTextError {
    /// Longer than [`MAX_PROPERTY_TEXT`] bytes.
    #[error("the value is {0} bytes long; at most 8192 are accepted")]
    TooLong(usize),
    /// A quoted value that is not well formed (no closing quote, a bad escape, text after
    /// the closing quote that is not `;type=...`).
    #[error("the quoted value is not well formed: {0}")]
    BadQuoting(&'static str),
    /// `;type=` names no MQ property type.
    #[error("'{0}' is not a property type (string, boolean, int8, int16, int32, int64, float32, float64, byteString, null)")]
    UnknownType(String),
    /// The text is not a value of its type.
    #[error("'{text}' is not a {kind} value")]
    BadValue {
        /// The type asked for.
        kind: &'static str,
        /// The text given (cut to 64 characters).
        text: String,
    },
}

impl PropertyTextError {
    /// The MQ reason code for the failure.
    pub fn reason(&self) -> ReasonCode {
        match self {
            PropertyTextError::TooLong(_) => ReasonCode::PropertyValueTooBig,
            PropertyTextError::UnknownType(_) => ReasonCode::PropertyTypeError,
            PropertyTextError::BadQuoting(_) | PropertyTextError::BadValue { .. } => {
                ReasonCode::PropNumberFormatError
            }
        }
    }
}

/// The type names of the quoted form, with how each reads its text.
const TYPES: [&str; 10] = [
    "string",
    "boolean",
    "int8",
    "int16",
    "int32",
    "int64",
    "float32",
    "float64",
    "byteString",
    "null",
];

/// Reads a property value from `text` (either form, see the module comment).
pub fn parse_property(text: &str) -> Result<PropertyValue, PropertyTextError> {
    if text.len() > MAX_PROPERTY_TEXT {
        return Err(PropertyTextError::TooLong(text.len()));
    }
    let Some(quoted) = text.strip_prefix('"') else {
        return Ok(PropertyValue::String(text.to_string()));
    };
    let (inner, rest) = unquote(quoted)?;
    let kind = match rest.trim() {
        "" => "string",
        typed => {
            let name = typed
                .strip_prefix(';')
                .map(str::trim_start)
                .and_then(|t| t.strip_prefix("type="))
                .ok_or(PropertyTextError::BadQuoting(
                    "only ;type=<type> may follow the closing quote",
                ))?
                .trim();
            TYPES
                .iter()
                .find(|t| t.eq_ignore_ascii_case(name))
                .copied()
                .ok_or_else(|| PropertyTextError::UnknownType(cut(name)))?
        }
    };
    typed_value(kind, &inner)
}

/// `text` (after the opening quote) up to the closing quote, unescaped, and what follows.
fn unquote(text: &str) -> Result<(String, &str), PropertyTextError> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, &text[i + 1..])),
            '\\' => {
                let escaped = match chars.next().map(|(_, e)| e) {
                    Some('"') => '"',
                    Some('\\') => '\\',
                    Some('n') => '\n',
                    Some('r') => '\r',
                    Some('t') => '\t',
                    Some('u') => {
                        let mut code = 0u32;
                        for _ in 0..4 {
                            let digit = chars
                                .next()
                                .and_then(|(_, h)| h.to_digit(16))
                                .ok_or(PropertyTextError::BadQuoting("\\u needs 4 hex digits"))?;
                            code = code * 16 + digit;
                        }
                        char::from_u32(code)
                            .ok_or(PropertyTextError::BadQuoting("\\u names no character"))?
                    }
                    _ => return Err(PropertyTextError::BadQuoting("unknown escape")),
                };
                out.push(escaped);
            }
            c => out.push(c),
        }
    }
    Err(PropertyTextError::BadQuoting("no closing quote"))
}

/// `text` read as a value of type `kind` (one of [`TYPES`]).
fn typed_value(kind: &'static str, text: &str) -> Result<PropertyValue, PropertyTextError> {
    let bad = || PropertyTextError::BadValue {
        kind,
        text: cut(text),
    };
    let t = text.trim();
    Ok(match kind {
        "string" => PropertyValue::String(text.to_string()),
        "boolean" => match t.to_ascii_lowercase().as_str() {
            "true" => PropertyValue::Boolean(true),
            "false" => PropertyValue::Boolean(false),
            _ => return Err(bad()),
        },
        "int8" => PropertyValue::Int8(t.parse().map_err(|_| bad())?),
        "int16" => PropertyValue::Int16(t.parse().map_err(|_| bad())?),
        "int32" => PropertyValue::Int32(t.parse().map_err(|_| bad())?),
        "int64" => PropertyValue::Int64(t.parse().map_err(|_| bad())?),
        "float32" => PropertyValue::Float32(t.parse().map_err(|_| bad())?),
        "float64" => PropertyValue::Float64(t.parse().map_err(|_| bad())?),
        "byteString" => {
            if !t.len().is_multiple_of(2) {
                return Err(bad());
            }
            let bytes: Option<Vec<u8>> = t
                .as_bytes()
                .chunks(2)
                .map(|pair| {
                    let hi = (pair[0] as char).to_digit(16)?;
                    let lo = (pair[1] as char).to_digit(16)?;
                    u8::try_from(hi * 16 + lo).ok()
                })
                .collect();
            PropertyValue::ByteString(Bytes::from(bytes.ok_or_else(bad)?))
        }
        "null" if t.is_empty() => PropertyValue::Null,
        _ => return Err(bad()),
    })
}

/// `value` as text [`parse_property`] reads back to the same value.
pub fn format_property(value: &PropertyValue) -> String {
    let (kind, text) = match value {
        PropertyValue::String(s) if reads_plain(s) => return s.clone(),
        PropertyValue::String(s) => ("string", s.clone()),
        PropertyValue::Boolean(b) => ("boolean", b.to_string()),
        PropertyValue::Int8(v) => ("int8", v.to_string()),
        PropertyValue::Int16(v) => ("int16", v.to_string()),
        PropertyValue::Int32(v) => ("int32", v.to_string()),
        PropertyValue::Int64(v) => ("int64", v.to_string()),
        PropertyValue::Float32(v) => ("float32", v.to_string()),
        PropertyValue::Float64(v) => ("float64", v.to_string()),
        PropertyValue::ByteString(b) => (
            "byteString",
            b.iter()
                .fold(String::with_capacity(b.len() * 2), |mut s, b| {
                    let _ = write!(s, "{b:02X}");
                    s
                }),
        ),
        PropertyValue::Null => ("null", String::new()),
    };
    let mut out = String::with_capacity(text.len() + kind.len() + 8);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push_str("\";type=");
    out.push_str(kind);
    out
}

/// Whether `s` can travel plain: an HTTP header value keeps it exactly (no control
/// characters, no surrounding blanks) and it does not start with a quote.
fn reads_plain(s: &str) -> bool {
    !s.is_empty() && !s.starts_with('"') && s.trim() == s && !s.chars().any(char::is_control)
}

/// `text` cut to 64 characters, for messages.
fn cut(text: &str) -> String {
    text.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_a_string() {
        assert_eq!(
            parse_property("hello world"),
            Ok(PropertyValue::String("hello world".into()))
        );
        assert_eq!(format_property(&PropertyValue::String("a b".into())), "a b");
    }

    #[test]
    fn quoted_values_have_types() {
        let cases = [
            ("\"42\";type=int32", PropertyValue::Int32(42)),
            ("\"-7\";type=INT8", PropertyValue::Int8(-7)),
            (
                "\"9000000000\"; type=int64",
                PropertyValue::Int64(9_000_000_000),
            ),
            ("\"true\";type=boolean", PropertyValue::Boolean(true)),
            ("\"1.5\";type=float64", PropertyValue::Float64(1.5)),
            (
                "\"00FF\";type=byteString",
                PropertyValue::ByteString(Bytes::from_static(&[0, 255])),
            ),
            ("\"\";type=null", PropertyValue::Null),
            (
                "\"a \\\"q\\\" \\u00e9\"",
                PropertyValue::String("a \"q\" \u{e9}".into()),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(parse_property(text).as_ref(), Ok(&want), "{text}");
            assert_eq!(parse_property(&format_property(&want)), Ok(want), "{text}");
        }
    }

    #[test]
    fn bad_values_say_why_with_mqs_reasons() {
        let cases = [
            ("\"x\";type=int32", ReasonCode::PropNumberFormatError),
            ("\"300\";type=int8", ReasonCode::PropNumberFormatError),
            ("\"1\";type=decimal", ReasonCode::PropertyTypeError),
            ("\"open", ReasonCode::PropNumberFormatError),
            ("\"a\" trailing", ReasonCode::PropNumberFormatError),
            ("\"\\q\"", ReasonCode::PropNumberFormatError),
            ("\"0F0\";type=byteString", ReasonCode::PropNumberFormatError),
            ("\"x\";type=null", ReasonCode::PropNumberFormatError),
        ];
        for (text, want) in cases {
            let err = parse_property(text).expect_err(text);
            assert_eq!(err.reason(), want, "{text}: {err}");
        }
        let long = "x".repeat(MAX_PROPERTY_TEXT + 1);
        assert_eq!(
            parse_property(&long).map_err(|e| e.reason()),
            Err(ReasonCode::PropertyValueTooBig)
        );
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics_and_round_trips(text in "\\PC{0,40}", quoted in proptest::prelude::any::<bool>()) {
            let text = if quoted { format!("\"{text}") } else { text };
            crate::fuzzing::parse_property_text(text.as_bytes());
        }
    }

    #[test]
    fn escapes_may_format_past_the_limit_and_are_then_refused() {
        let text = format!("\"{}\"", "\u{1}".repeat(2000));
        assert!(text.len() <= MAX_PROPERTY_TEXT);
        let value = parse_property(&text).expect("within the limit");
        crate::fuzzing::parse_property_text(text.as_bytes());
        assert!(format_property(&value).len() > MAX_PROPERTY_TEXT);
    }

    #[test]
    fn strings_that_cannot_travel_plain_are_quoted() {
        for s in ["", " padded ", "\"starts quoted", "two\nlines", "bell\u{7}"] {
            let text = format_property(&PropertyValue::String(s.into()));
            assert!(text.starts_with('"'), "{text}");
            assert!(!text.chars().any(char::is_control), "{text}");
            assert_eq!(parse_property(&text), Ok(PropertyValue::String(s.into())));
        }
    }
}
