//! Message properties (MQ's MQSETMP/MQINQMP): named, typed values carried beside a
//! message's descriptor and body.
//!
//! AMQP application-properties and the JMS fields that have no MQMD slot map onto them,
//! and message selectors read them. A [`MessageProperties`] is an ordered list of
//! `(name, PropertyValue)` with MQ's property types; setting a name that is already there
//! replaces its value (as MQSETMP does). The queue manager stores a message's properties
//! only in their compact encoded form (a [`Bytes`], empty when there are none, so native
//! messages pay nothing), and a selector reads one property straight from that form with
//! [`MessageProperties::find`], without decoding the rest.
//!
//! # Encoding (version 1)
//!
//! No properties: zero bytes. Otherwise the version byte `1`, the number of properties
//! `u32`, then each property in order: name length `u16`, the name (UTF-8), a type
//! byte, the value. Little-endian, no padding, nothing after the last property. Type bytes and values:
//!
//! | type | value |
//! |---|---|
//! | 0 Null | nothing |
//! | 1 Boolean | one byte, 0 or 1 |
//! | 2 ByteString | length `u32`, bytes |
//! | 3 Int8, 4 Int16, 5 Int32, 6 Int64 | 1, 2, 4, 8 bytes |
//! | 7 Float32, 8 Float64 | IEEE 754 bits, 4 or 8 bytes |
//! | 9 String | length `u32`, UTF-8 |
//!
//! Decoding never panics: malformed bytes give a [`PropertyError`] ([`MessageProperties::find`]
//! treats them as "no such property").
//!
//! # Names
//!
//! MQ's rules, checked by [`MessageProperties::set`]: 1 to 4095 characters; one or more
//! `.`-separated parts, each a Java identifier (a letter, `_` or `$`, then letters, digits,
//! `_` or `$`); not one of the selector keywords (NULL, TRUE, FALSE, NOT, AND, OR,
//! BETWEEN, LIKE, IN, IS, ESCAPE, in any case); not starting with `JMS` (except the
//! application-settable `JMSX…` and vendor `JMS_…` names) nor with `mq` in any case
//! (reserved for the queue manager; the server sets those with
//! [`MessageProperties::set_reserved`]). Names compare exactly (case-sensitive, as in JMS).

use bytes::Bytes;
use std::fmt;

use crate::ReasonCode;

/// The encoding version written (first byte of a non-empty encoding).
pub const PROPERTIES_VERSION: u8 = 1;
/// Longest property name, in characters (MQ's limit).
pub const MAX_PROPERTY_NAME: usize = 4095;

const NULL: u8 = 0;
const BOOLEAN: u8 = 1;
const BYTE_STRING: u8 = 2;
const INT8: u8 = 3;
const INT16: u8 = 4;
const INT32: u8 = 5;
const INT64: u8 = 6;
const FLOAT32: u8 = 7;
const FLOAT64: u8 = 8;
const STRING: u8 = 9;

/// Selector keywords a property may not be named.
const KEYWORDS: [&str; 11] = [
    "NULL", "TRUE", "FALSE", "NOT", "AND", "OR", "BETWEEN", "LIKE", "IN", "IS", "ESCAPE",
];

/// A property value with MQ's property types (MQTYPE_*).
#[derive(Clone, Debug, PartialEq)]
pub enum PropertyValue {
    /// MQTYPE_BOOLEAN.
    Boolean(bool),
    /// MQTYPE_BYTE_STRING.
    ByteString(Bytes),
    /// MQTYPE_INT8.
    Int8(i8),
    /// MQTYPE_INT16.
    Int16(i16),
    /// MQTYPE_INT32.
    Int32(i32),
    /// MQTYPE_INT64.
    Int64(i64),
    /// MQTYPE_FLOAT32.
    Float32(f32),
    /// MQTYPE_FLOAT64.
    Float64(f64),
    /// MQTYPE_STRING.
    String(String),
    /// MQTYPE_NULL: the property exists with no value.
    Null,
}

/// A property value borrowed from an encoding: what [`MessageProperties::find`] returns,
/// so a selector reads a string without allocating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PropertyRef<'a> {
    /// MQTYPE_BOOLEAN.
    Boolean(bool),
    /// MQTYPE_BYTE_STRING.
    ByteString(&'a [u8]),
    /// MQTYPE_INT8.
    Int8(i8),
    /// MQTYPE_INT16.
    Int16(i16),
    /// MQTYPE_INT32.
    Int32(i32),
    /// MQTYPE_INT64.
    Int64(i64),
    /// MQTYPE_FLOAT32.
    Float32(f32),
    /// MQTYPE_FLOAT64.
    Float64(f64),
    /// MQTYPE_STRING.
    String(&'a str),
    /// MQTYPE_NULL.
    Null,
}

impl PropertyRef<'_> {
    /// The owned value.
    pub fn to_value(self) -> PropertyValue {
        match self {
            PropertyRef::Boolean(b) => PropertyValue::Boolean(b),
            PropertyRef::ByteString(b) => PropertyValue::ByteString(Bytes::copy_from_slice(b)),
            PropertyRef::Int8(v) => PropertyValue::Int8(v),
            PropertyRef::Int16(v) => PropertyValue::Int16(v),
            PropertyRef::Int32(v) => PropertyValue::Int32(v),
            PropertyRef::Int64(v) => PropertyValue::Int64(v),
            PropertyRef::Float32(v) => PropertyValue::Float32(v),
            PropertyRef::Float64(v) => PropertyValue::Float64(v),
            PropertyRef::String(s) => PropertyValue::String(s.to_string()),
            PropertyRef::Null => PropertyValue::Null,
        }
    }
}

impl PropertyValue {
    /// The value borrowed.
    pub fn as_ref(&self) -> PropertyRef<'_> {
        match self {
            PropertyValue::Boolean(b) => PropertyRef::Boolean(*b),
            PropertyValue::ByteString(b) => PropertyRef::ByteString(b),
            PropertyValue::Int8(v) => PropertyRef::Int8(*v),
            PropertyValue::Int16(v) => PropertyRef::Int16(*v),
            PropertyValue::Int32(v) => PropertyRef::Int32(*v),
            PropertyValue::Int64(v) => PropertyRef::Int64(*v),
            PropertyValue::Float32(v) => PropertyRef::Float32(*v),
            PropertyValue::Float64(v) => PropertyRef::Float64(*v),
            PropertyValue::String(s) => PropertyRef::String(s),
            PropertyValue::Null => PropertyRef::Null,
        }
    }
}

/// Why a property could not be set or its encoding read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PropertyError {
    /// The name breaks MQ's property-name rules (2442).
    #[error("property name {name:?} is not valid: {why}")]
    InvalidName {
        /// The name given (cut to 64 characters).
        name: String,
        /// Which rule it breaks.
        why: &'static str,
    },
    /// A string or byte-string value longer than 4 GiB - 1 (2469).
    #[error("property value is {0} bytes long; at most 4294967295 can be stored")]
    ValueTooBig(usize),
    /// The encoding's version byte is not [`PROPERTIES_VERSION`].
    #[error("message properties encoding version {0}; this Ferry reads version 1")]
    UnsupportedVersion(u8),
    /// The encoding is malformed (truncated, unknown type, bad UTF-8, bad name).
    #[error("malformed message properties: {0}")]
    Malformed(&'static str),
}

impl PropertyError {
    /// The MQ reason code for the failure.
    pub fn reason(&self) -> ReasonCode {
        match self {
            PropertyError::InvalidName { .. } => ReasonCode::PropertyNameError,
            PropertyError::ValueTooBig(_) => ReasonCode::PropertyValueTooBig,
            PropertyError::UnsupportedVersion(_) | PropertyError::Malformed(_) => {
                ReasonCode::FormatError
            }
        }
    }
}

/// The properties of one message, in the order they were set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MessageProperties {
    items: Vec<(String, PropertyValue)>,
}

/// Checks `name`'s syntax (parts, characters, length, keywords) but not the reserved
/// prefixes.
fn check_syntax(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty");
    }
    if name.is_ascii() {
        // The common case, checked byte by byte (same rules as below).
        if name.len() > MAX_PROPERTY_NAME {
            return Err("longer than 4095 characters");
        }
        for part in name.split('.') {
            let Some((&first, rest)) = part.as_bytes().split_first() else {
                return Err("empty part between dots");
            };
            if !(first.is_ascii_alphabetic() || first == b'_' || first == b'$') {
                return Err("a part does not start with a letter, '_' or '$'");
            }
            if !rest
                .iter()
                .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'$')
            {
                return Err("holds a character other than letters, digits, '_', '$' and '.'");
            }
        }
    } else {
        check_chars(name)?;
    }
    if KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(name)) {
        return Err("a selector keyword");
    }
    Ok(())
}

/// [`check_syntax`]'s length and character rules for a name with non-ASCII characters.
fn check_chars(name: &str) -> Result<(), &'static str> {
    if name.chars().count() > MAX_PROPERTY_NAME {
        return Err("longer than 4095 characters");
    }
    for part in name.split('.') {
        let mut chars = part.chars();
        let Some(first) = chars.next() else {
            return Err("empty part between dots");
        };
        if !(first.is_alphabetic() || first == '_' || first == '$') {
            return Err("a part does not start with a letter, '_' or '$'");
        }
        if !chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            return Err("holds a character other than letters, digits, '_', '$' and '.'");
        }
    }
    Ok(())
}

/// Checks the reserved prefixes (`JMS` except `JMSX`/`JMS_`, `mq` in any case).
fn check_not_reserved(name: &str) -> Result<(), &'static str> {
    if name.starts_with("JMS") && !name.starts_with("JMSX") && !name.starts_with("JMS_") {
        return Err("names starting JMS are reserved");
    }
    if name.len() >= 2 && name.as_bytes()[..2].eq_ignore_ascii_case(b"mq") {
        return Err("names starting mq are reserved for the queue manager");
    }
    Ok(())
}

fn name_error(name: &str, why: &'static str) -> PropertyError {
    PropertyError::InvalidName {
        name: name.chars().take(64).collect(),
        why,
    }
}

/// Checks a property name an application may set (see the module documentation).
pub fn validate_property_name(name: &str) -> Result<(), PropertyError> {
    check_syntax(name)
        .and_then(|()| check_not_reserved(name))
        .map_err(|why| name_error(name, why))
}

impl MessageProperties {
    /// No properties.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets `name` (MQSETMP): replaces its value when present, else appends it. Fails on
    /// a name MQ's rules refuse or a value too long to encode.
    pub fn set(&mut self, name: &str, value: PropertyValue) -> Result<(), PropertyError> {
        validate_property_name(name)?;
        self.set_checked(name, value)
    }

    /// Sets a property in a reserved namespace (`JMS…`, `mq…`): for the queue manager's
    /// own mapping of protocol fields. The name's syntax is still checked.
    pub fn set_reserved(&mut self, name: &str, value: PropertyValue) -> Result<(), PropertyError> {
        check_syntax(name).map_err(|why| name_error(name, why))?;
        self.set_checked(name, value)
    }

    fn set_checked(&mut self, name: &str, value: PropertyValue) -> Result<(), PropertyError> {
        if let PropertyValue::String(s) = &value {
            check_len(s.len())?;
        }
        if let PropertyValue::ByteString(b) = &value {
            check_len(b.len())?;
        }
        match self.items.iter_mut().find(|(n, _)| n == name) {
            Some((_, v)) => *v = value,
            None => self.items.push((name.to_string(), value)),
        }
        Ok(())
    }

    /// The value of `name` (MQINQMP).
    pub fn get(&self, name: &str) -> Option<&PropertyValue> {
        self.items.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Removes `name` (MQDLTMP); returns its value.
    pub fn remove(&mut self, name: &str) -> Option<PropertyValue> {
        let i = self.items.iter().position(|(n, _)| n == name)?;
        Some(self.items.remove(i).1)
    }

    /// Every property, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &PropertyValue)> {
        self.items.iter().map(|(n, v)| (n.as_str(), v))
    }

    /// How many properties there are.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// The compact encoding (module documentation); empty when there are no properties.
    pub fn encode(&self) -> Bytes {
        if self.items.is_empty() {
            return Bytes::new();
        }
        // Sized exactly first: one allocation, no regrowth while appending.
        let len = 5 + self
            .items
            .iter()
            .map(|(name, value)| 2 + name.len() + encoded_value_len(value.as_ref()))
            .sum::<usize>();
        let mut out = Vec::with_capacity(len);
        out.push(PROPERTIES_VERSION);
        // At most one property per name, and a name takes at least 3 bytes in memory
        // and out: the count fits.
        out.extend_from_slice(&(self.items.len() as u32).to_le_bytes());
        for (name, value) in &self.items {
            // Names are at most 4095 characters (16380 bytes) and values at most
            // u32::MAX bytes: checked by `set`.
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            encode_value(&mut out, value.as_ref());
        }
        Bytes::from(out)
    }

    /// The encoding [`MessageProperties::encode`] would give properties set in this
    /// order, from borrowed names and values: for a queue manager mapping another
    /// protocol's message, which would otherwise copy every name and value only to encode
    /// them once. The caller has checked the names (and sets each name once); a value over
    /// u32::MAX bytes is refused as `set` refuses it.
    pub fn encode_borrowed(items: &[(&str, PropertyRef<'_>)]) -> Result<Bytes, PropertyError> {
        let len = Self::borrowed_encoding_len(items)?;
        if len == 0 {
            return Ok(Bytes::new());
        }
        let mut out = Vec::with_capacity(len);
        Self::append_borrowed(items, &mut out);
        Ok(Bytes::from(out))
    }

    /// The length of [`MessageProperties::encode_borrowed`]'s encoding of `items` (0 for
    /// none), after the same checks: for a caller that puts the encoding in a buffer it
    /// shares with other data ([`MessageProperties::append_borrowed`]).
    pub fn borrowed_encoding_len(
        items: &[(&str, PropertyRef<'_>)],
    ) -> Result<usize, PropertyError> {
        if items.is_empty() {
            return Ok(0);
        }
        let mut len = 5;
        for (name, value) in items {
            if name.len() > usize::from(u16::MAX) {
                return Err(name_error(name, "longer than 4095 characters"));
            }
            if let PropertyRef::String(s) = value {
                check_len(s.len())?;
            }
            if let PropertyRef::ByteString(b) = value {
                check_len(b.len())?;
            }
            len += 2 + name.len() + encoded_value_len(*value);
        }
        Ok(len)
    }

    /// Appends [`MessageProperties::encode_borrowed`]'s encoding of `items` (nothing for
    /// none) to `out`. The caller has had the items checked by
    /// [`MessageProperties::borrowed_encoding_len`].
    pub fn append_borrowed(items: &[(&str, PropertyRef<'_>)], out: &mut Vec<u8>) {
        if items.is_empty() {
            return;
        }
        out.push(PROPERTIES_VERSION);
        out.extend_from_slice(&(items.len() as u32).to_le_bytes());
        for (name, value) in items {
            out.extend_from_slice(&(name.len() as u16).to_le_bytes());
            out.extend_from_slice(name.as_bytes());
            encode_value(out, *value);
        }
    }

    /// Decodes an encoding made by [`MessageProperties::encode`]. Never panics.
    pub fn decode(encoded: &[u8]) -> Result<Self, PropertyError> {
        let mut items = Vec::new();
        for entry in Self::entries(encoded) {
            let (name, value) = entry?;
            items.push((name.to_string(), value.to_value()));
        }
        Ok(MessageProperties { items })
    }

    /// Checks an encoding an application sent with a put before it is stored: it
    /// decodes, and every name is one an application may set (no `JMS…` or `mq…` name:
    /// those are the queue manager's own).
    pub fn check_application_encoding(encoded: &[u8]) -> Result<(), PropertyError> {
        for entry in Self::entries(encoded) {
            let (name, _) = entry?;
            validate_property_name(name)?;
        }
        Ok(())
    }

    /// The properties of an encoding, borrowed, in order; a malformed encoding yields
    /// one error and ends.
    pub fn entries(encoded: &[u8]) -> Entries<'_> {
        Entries::new(encoded)
    }

    /// The values of several `names` read straight from an encoding in one pass (each
    /// the first property of that name), for readers that need a few reserved
    /// properties of every message. A malformed encoding counts as "not there" from the
    /// damage on.
    pub fn find_each<'a, const N: usize>(
        encoded: &'a [u8],
        names: [&str; N],
    ) -> [Option<PropertyRef<'a>>; N] {
        let mut found = [None; N];
        let mut seen = [false; N];
        let mut missing = N;
        let mut e = Entries::new(encoded);
        while missing > 0 {
            let Ok(Some(raw)) = e.next_raw() else { break };
            if let Some(i) = names.iter().position(|n| raw.name == n.as_bytes()) {
                if !seen[i] {
                    seen[i] = true;
                    found[i] = raw.value().ok();
                    missing -= 1;
                }
            }
        }
        found
    }

    /// The value of `name` read straight from an encoding, without decoding the other
    /// properties: what a selector uses. A malformed encoding counts as "not there".
    pub fn find<'a>(encoded: &'a [u8], name: &str) -> Option<PropertyRef<'a>> {
        let mut e = Entries::new(encoded);
        while let Ok(Some(raw)) = e.next_raw() {
            if raw.name == name.as_bytes() {
                return raw.value().ok();
            }
        }
        None
    }
}

fn check_len(len: usize) -> Result<(), PropertyError> {
    if u32::try_from(len).is_err() {
        return Err(PropertyError::ValueTooBig(len));
    }
    Ok(())
}

/// The bytes [`encode_value`] writes for `v`.
fn encoded_value_len(v: PropertyRef<'_>) -> usize {
    1 + match v {
        PropertyRef::Null => 0,
        PropertyRef::Boolean(_) | PropertyRef::Int8(_) => 1,
        PropertyRef::Int16(_) => 2,
        PropertyRef::Int32(_) | PropertyRef::Float32(_) => 4,
        PropertyRef::Int64(_) | PropertyRef::Float64(_) => 8,
        PropertyRef::ByteString(b) => 4 + b.len(),
        PropertyRef::String(s) => 4 + s.len(),
    }
}

fn encode_value(out: &mut Vec<u8>, v: PropertyRef<'_>) {
    match v {
        PropertyRef::Null => out.push(NULL),
        PropertyRef::Boolean(b) => out.extend_from_slice(&[BOOLEAN, u8::from(b)]),
        PropertyRef::ByteString(b) => {
            out.push(BYTE_STRING);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        PropertyRef::Int8(x) => out.extend_from_slice(&[INT8, x as u8]),
        PropertyRef::Int16(x) => {
            out.push(INT16);
            out.extend_from_slice(&x.to_le_bytes());
        }
        PropertyRef::Int32(x) => {
            out.push(INT32);
            out.extend_from_slice(&x.to_le_bytes());
        }
        PropertyRef::Int64(x) => {
            out.push(INT64);
            out.extend_from_slice(&x.to_le_bytes());
        }
        PropertyRef::Float32(x) => {
            out.push(FLOAT32);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        PropertyRef::Float64(x) => {
            out.push(FLOAT64);
            out.extend_from_slice(&x.to_bits().to_le_bytes());
        }
        PropertyRef::String(s) => {
            out.push(STRING);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
    }
}

/// One entry as stored: name bytes, type byte, value bytes (not yet checked).
struct RawEntry<'a> {
    name: &'a [u8],
    kind: u8,
    value: &'a [u8],
}

impl<'a> RawEntry<'a> {
    fn value(&self) -> Result<PropertyRef<'a>, PropertyError> {
        let v = self.value;
        Ok(match self.kind {
            NULL => PropertyRef::Null,
            BOOLEAN => match v {
                [0] => PropertyRef::Boolean(false),
                [1] => PropertyRef::Boolean(true),
                _ => return Err(PropertyError::Malformed("boolean is not 0 or 1")),
            },
            BYTE_STRING => PropertyRef::ByteString(v),
            INT8 => PropertyRef::Int8(i8::from_le_bytes(fixed(v)?)),
            INT16 => PropertyRef::Int16(i16::from_le_bytes(fixed(v)?)),
            INT32 => PropertyRef::Int32(i32::from_le_bytes(fixed(v)?)),
            INT64 => PropertyRef::Int64(i64::from_le_bytes(fixed(v)?)),
            FLOAT32 => PropertyRef::Float32(f32::from_bits(u32::from_le_bytes(fixed(v)?))),
            FLOAT64 => PropertyRef::Float64(f64::from_bits(u64::from_le_bytes(fixed(v)?))),
            STRING => PropertyRef::String(
                std::str::from_utf8(v).map_err(|_| PropertyError::Malformed("string not UTF-8"))?,
            ),
            _ => return Err(PropertyError::Malformed("unknown property type")),
        })
    }
}

fn fixed<const N: usize>(v: &[u8]) -> Result<[u8; N], PropertyError> {
    v.try_into()
        .map_err(|_| PropertyError::Malformed("value of the wrong length"))
}

/// Iterator over an encoding's properties, borrowed; see [`MessageProperties::entries`].
pub struct Entries<'a> {
    rest: &'a [u8],
    /// Properties still to read (`None` until the count is read).
    remaining: Option<u32>,
    /// An unsupported version byte, reported by the first `next`.
    version: Option<u8>,
    failed: bool,
}

impl fmt::Debug for Entries<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Entries({} bytes left)", self.rest.len())
    }
}

impl<'a> Entries<'a> {
    fn new(encoded: &'a [u8]) -> Self {
        match encoded.split_first() {
            None => Entries {
                rest: &[],
                remaining: Some(0),
                version: None,
                failed: false,
            },
            Some((&PROPERTIES_VERSION, rest)) => Entries {
                rest,
                remaining: None,
                version: None,
                failed: false,
            },
            Some((&v, _)) => Entries {
                rest: &[],
                remaining: Some(0),
                version: Some(v),
                failed: false,
            },
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], PropertyError> {
        if self.rest.len() < n {
            return Err(PropertyError::Malformed("truncated"));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }

    fn next_raw(&mut self) -> Result<Option<RawEntry<'a>>, PropertyError> {
        let r = self.read_next();
        if r.is_err() {
            self.rest = &[];
            self.remaining = Some(0);
        }
        r
    }

    fn read_next(&mut self) -> Result<Option<RawEntry<'a>>, PropertyError> {
        let remaining = match self.remaining {
            Some(n) => n,
            None => u32::from_le_bytes(fixed(self.take(4)?)?),
        };
        if remaining == 0 {
            self.remaining = Some(0);
            if !self.rest.is_empty() {
                return Err(PropertyError::Malformed("bytes after the last property"));
            }
            return Ok(None);
        }
        let raw = self.read_raw()?;
        self.remaining = Some(remaining - 1);
        Ok(Some(raw))
    }

    fn read_raw(&mut self) -> Result<RawEntry<'a>, PropertyError> {
        let name_len = u16::from_le_bytes(fixed(self.take(2)?)?) as usize;
        let name = self.take(name_len)?;
        let kind = self.take(1)?[0];
        let value_len = match kind {
            NULL => 0,
            BOOLEAN | INT8 => 1,
            INT16 => 2,
            INT32 | FLOAT32 => 4,
            INT64 | FLOAT64 => 8,
            BYTE_STRING | STRING => u32::from_le_bytes(fixed(self.take(4)?)?) as usize,
            _ => return Err(PropertyError::Malformed("unknown property type")),
        };
        let value = self.take(value_len)?;
        Ok(RawEntry { name, kind, value })
    }
}

impl<'a> Iterator for Entries<'a> {
    type Item = Result<(&'a str, PropertyRef<'a>), PropertyError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        if let Some(v) = self.version.take() {
            self.failed = true;
            return Some(Err(PropertyError::UnsupportedVersion(v)));
        }
        let r = (|| {
            let Some(raw) = self.next_raw()? else {
                return Ok(None);
            };
            let name = std::str::from_utf8(raw.name)
                .map_err(|_| PropertyError::Malformed("name not UTF-8"))?;
            check_syntax(name).map_err(|_| PropertyError::Malformed("invalid property name"))?;
            Ok(Some((name, raw.value()?)))
        })();
        match r {
            Ok(Some(x)) => Some(Ok(x)),
            Ok(None) => None,
            Err(e) => {
                self.failed = true;
                self.rest = &[];
                Some(Err(e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrowed_pairs_encode_as_the_same_properties_set_in_order() {
        let mut props = MessageProperties::new();
        props.set("a", PropertyValue::Int32(7)).unwrap();
        props
            .set("b.c", PropertyValue::String("text".into()))
            .unwrap();
        props
            .set_reserved(
                "mq.x",
                PropertyValue::ByteString(Bytes::from_static(b"\0\x01")),
            )
            .unwrap();
        props.set("d", PropertyValue::Null).unwrap();
        let borrowed = [
            ("a", PropertyRef::Int32(7)),
            ("b.c", PropertyRef::String("text")),
            ("mq.x", PropertyRef::ByteString(b"\0\x01")),
            ("d", PropertyRef::Null),
        ];
        assert_eq!(
            MessageProperties::encode_borrowed(&borrowed),
            Ok(props.encode())
        );
        assert_eq!(MessageProperties::encode_borrowed(&[]), Ok(Bytes::new()));
        let long = "n".repeat(70_000);
        assert!(MessageProperties::encode_borrowed(&[(&long, PropertyRef::Null)]).is_err());
    }
    use proptest::prelude::*;

    fn sample() -> MessageProperties {
        let mut p = MessageProperties::new();
        p.set("colour", PropertyValue::String("red".into()))
            .unwrap();
        p.set("usr.size", PropertyValue::Int32(42)).unwrap();
        p.set("JMSXGroupID", PropertyValue::String("g1".into()))
            .unwrap();
        p.set("flag", PropertyValue::Boolean(true)).unwrap();
        p.set("none", PropertyValue::Null).unwrap();
        p.set(
            "raw",
            PropertyValue::ByteString(Bytes::from_static(b"\0\x01")),
        )
        .unwrap();
        p
    }

    #[test]
    fn encode_decode_and_find() {
        let p = sample();
        let enc = p.encode();
        assert_eq!(enc[0], PROPERTIES_VERSION);
        assert_eq!(MessageProperties::decode(&enc).unwrap(), p);
        assert_eq!(
            MessageProperties::find(&enc, "colour"),
            Some(PropertyRef::String("red"))
        );
        assert_eq!(
            MessageProperties::find(&enc, "usr.size"),
            Some(PropertyRef::Int32(42))
        );
        assert_eq!(
            MessageProperties::find(&enc, "none"),
            Some(PropertyRef::Null)
        );
        assert_eq!(MessageProperties::find(&enc, "Colour"), None);
        assert_eq!(MessageProperties::find(&enc, "missing"), None);
    }

    #[test]
    fn no_properties_cost_nothing() {
        let enc = MessageProperties::new().encode();
        assert!(enc.is_empty());
        assert!(MessageProperties::decode(&enc).unwrap().is_empty());
        assert_eq!(MessageProperties::find(&enc, "a"), None);
    }

    #[test]
    fn set_replaces_in_place() {
        let mut p = sample();
        p.set("colour", PropertyValue::String("blue".into()))
            .unwrap();
        assert_eq!(p.len(), 6);
        assert_eq!(p.iter().next().map(|(n, _)| n), Some("colour"));
        assert_eq!(p.get("colour"), Some(&PropertyValue::String("blue".into())));
        assert_eq!(
            p.remove("colour"),
            Some(PropertyValue::String("blue".into()))
        );
        assert_eq!(p.get("colour"), None);
    }

    #[test]
    fn names_follow_mq_rules() {
        for bad in [
            "", "1abc", "a..b", ".a", "a.", "a-b", "a b", "NULL", "and", "JMSType", "mqmd", "MQ_X",
            "é-b", "été.", "1é",
        ] {
            let e = MessageProperties::new()
                .set(bad, PropertyValue::Null)
                .unwrap_err();
            assert_eq!(e.reason(), ReasonCode::PropertyNameError, "{bad:?}");
        }
        for good in ["a", "usr.a_b$1", "JMSXUserID", "JMS_AMQP_TTL", "été", "_x"] {
            assert!(
                MessageProperties::new()
                    .set(good, PropertyValue::Null)
                    .is_ok(),
                "{good:?}"
            );
        }
        assert!(validate_property_name(&"a".repeat(4096)).is_err());
        assert!(validate_property_name(&"a".repeat(4095)).is_ok());
        assert!(validate_property_name(&"é".repeat(4096)).is_err());
        assert!(validate_property_name(&"é".repeat(4095)).is_ok());
        let mut p = MessageProperties::new();
        assert!(p.set_reserved("JMSType", PropertyValue::Null).is_ok());
        assert!(p.set_reserved("mq.x", PropertyValue::Null).is_ok());
        assert!(p.set_reserved("a b", PropertyValue::Null).is_err());
    }

    #[test]
    fn malformed_encodings_are_errors() {
        let enc = sample().encode();
        for cut in 1..enc.len() {
            let r = MessageProperties::decode(&enc[..cut]);
            assert!(r.is_err(), "cut at {cut}");
        }
        assert_eq!(
            MessageProperties::decode(&[2, 0]),
            Err(PropertyError::UnsupportedVersion(2))
        );
        assert_eq!(MessageProperties::find(&[2, 0], "a"), None);
        // Unknown type byte.
        assert!(MessageProperties::decode(&[1, 1, 0, 0, 0, 1, 0, b'a', 77]).is_err());
        // Boolean 2.
        assert!(MessageProperties::decode(&[1, 1, 0, 0, 0, 1, 0, b'a', BOOLEAN, 2]).is_err());
        // Fine, then a byte too many.
        assert!(MessageProperties::decode(&[1, 1, 0, 0, 0, 1, 0, b'a', BOOLEAN, 1]).is_ok());
        assert!(MessageProperties::decode(&[1, 1, 0, 0, 0, 1, 0, b'a', BOOLEAN, 1, 0]).is_err());
    }

    fn value() -> impl Strategy<Value = PropertyValue> {
        prop_oneof![
            Just(PropertyValue::Null),
            any::<bool>().prop_map(PropertyValue::Boolean),
            proptest::collection::vec(any::<u8>(), 0..20)
                .prop_map(|v| PropertyValue::ByteString(Bytes::from(v))),
            any::<i8>().prop_map(PropertyValue::Int8),
            any::<i16>().prop_map(PropertyValue::Int16),
            any::<i32>().prop_map(PropertyValue::Int32),
            any::<i64>().prop_map(PropertyValue::Int64),
            any::<f32>().prop_map(PropertyValue::Float32),
            any::<f64>().prop_map(PropertyValue::Float64),
            ".{0,12}".prop_map(PropertyValue::String),
        ]
    }

    proptest! {
        #[test]
        fn round_trip(entries in proptest::collection::vec(("[a-z_][a-z0-9_]{0,8}", value()), 0..8)) {
            let mut p = MessageProperties::new();
            for (n, v) in &entries {
                if KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(n))
                    || n.to_ascii_lowercase().starts_with("mq")
                {
                    continue;
                }
                p.set(n, v.clone()).unwrap();
            }
            let enc = p.encode();
            let back = MessageProperties::decode(&enc).unwrap();
            // Compare encodings: NaN floats are not equal to themselves.
            prop_assert_eq!(back.encode(), enc.clone());
            for (n, v) in p.iter() {
                let found = MessageProperties::find(&enc, n).map(|r| {
                    let mut one = MessageProperties::new();
                    one.set_reserved("x", r.to_value()).map(|()| one.encode())
                });
                let mut want = MessageProperties::new();
                want.set_reserved("x", v.clone()).unwrap();
                prop_assert_eq!(found, Some(Ok(want.encode())));
            }
        }

        #[test]
        fn find_each_agrees_with_find(
            bytes in proptest::collection::vec(any::<u8>(), 0..64),
            entries in proptest::collection::vec(("[a-c]{1,2}", value()), 0..6),
        ) {
            let mut p = MessageProperties::new();
            for (n, v) in &entries {
                p.set(n, v.clone()).unwrap();
            }
            let mut damaged = vec![PROPERTIES_VERSION];
            damaged.extend_from_slice(&bytes);
            for enc in [p.encode().to_vec(), bytes, damaged] {
                let names = ["a", "b", "ab", "zz"];
                let each = MessageProperties::find_each(&enc, names);
                for (n, got) in names.iter().zip(each) {
                    // Compare encodings: NaN floats are not equal to themselves.
                    let one = |r: Option<PropertyRef<'_>>| r.map(|r| {
                        let mut one = MessageProperties::new();
                        one.set_reserved("x", r.to_value()).map(|()| one.encode())
                    });
                    prop_assert_eq!(one(got), one(MessageProperties::find(&enc, n)));
                }
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64), name in "[a-z]{1,3}") {
            let _ = MessageProperties::decode(&bytes);
            let _ = MessageProperties::find(&bytes, &name);
            let mut with_version = vec![PROPERTIES_VERSION];
            with_version.extend_from_slice(&bytes);
            let _ = MessageProperties::decode(&with_version);
            let _ = MessageProperties::find(&with_version, &name);
        }
    }
}
