//! The AMQP 1.0 type system as one Rust enum, [`Value`], for the places where the type of
//! a field is open (application properties, annotations, amqp-value bodies, filters).
//!
//! Strings, symbols and binaries hold `bytes::Bytes` slices of the decoded input, so
//! decoding a message copies none of its text or data. [`Str`] and [`Symbol`] keep the
//! UTF-8 check done once at decode time, so reading them later costs nothing.

use std::fmt;

use bytes::Bytes;

use crate::error::DecodeError;

/// An AMQP `string`: UTF-8 text held in shared bytes (a slice of the input when decoded).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Str(Bytes);

impl Str {
    /// A string over static text (no allocation).
    pub const fn from_static(s: &'static str) -> Self {
        Str(Bytes::from_static(s.as_bytes()))
    }

    /// Takes bytes that must be UTF-8; the check happens here, once.
    pub fn from_utf8(bytes: Bytes) -> Result<Self, DecodeError> {
        // Addresses, ids and symbols are ASCII: checking that first is several times
        // cheaper than the full UTF-8 check on short strings (callgrind, Nov 27).
        if !bytes.is_ascii() {
            std::str::from_utf8(&bytes).map_err(|_| DecodeError::InvalidUtf8)?;
        }
        Ok(Str(bytes))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // SAFETY: every constructor checks (or is given) valid UTF-8 and the bytes are
        // immutable afterwards.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }

    /// The UTF-8 bytes, shared (no copy).
    pub fn as_bytes(&self) -> &Bytes {
        &self.0
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True for the empty string.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Self {
        Str(Bytes::copy_from_slice(s.as_bytes()))
    }
}

impl From<String> for Str {
    fn from(s: String) -> Self {
        Str(Bytes::from(s))
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An AMQP `symbol`: a name from a constrained domain (capabilities, conditions, keys).
/// The spec says ASCII; decoding accepts any UTF-8 so a lax peer's symbol still reads.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Symbol(pub Str);

impl Symbol {
    /// A symbol over static text (no allocation).
    pub const fn from_static(s: &'static str) -> Self {
        Symbol(Str::from_static(s))
    }

    /// The symbol's text.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }
}

impl From<&str> for Symbol {
    fn from(s: &str) -> Self {
        Symbol(Str::from(s))
    }
}

impl PartialEq<str> for Symbol {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Symbol {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl fmt::Debug for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, ":{}", self.as_str())
    }
}

impl fmt::Display for Symbol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An AMQP `timestamp`: milliseconds since the Unix epoch (its own type on the wire, 0x83).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Timestamp(pub i64);

/// What a described type is described by: a numeric code (domain in the high 32 bits)
/// or a symbolic name. Performative decoders accept either form for the same type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Descriptor {
    /// Numeric descriptor, e.g. 0x10 for `open`.
    Code(u64),
    /// Symbolic descriptor, e.g. `amqp:open:list`.
    Symbol(Symbol),
}

impl fmt::Display for Descriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Descriptor::Code(c) => write!(f, "0x{c:016x}"),
            Descriptor::Symbol(s) => write!(f, "{s}"),
        }
    }
}

/// A described value: a descriptor naming the type and the value that carries it.
#[derive(Debug, Clone, PartialEq)]
pub struct Described {
    /// The descriptor.
    pub descriptor: Descriptor,
    /// The described value (for composites, a list).
    pub value: Value,
}

/// The type of an array's elements: arrays carry one constructor for all elements, and
/// the encoder picks the narrow or wide format code from the elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ElementType {
    /// `null` (every element null).
    Null,
    /// `boolean`.
    Bool,
    /// `ubyte`.
    Ubyte,
    /// `ushort`.
    Ushort,
    /// `uint`.
    Uint,
    /// `ulong`.
    Ulong,
    /// `byte`.
    Byte,
    /// `short`.
    Short,
    /// `int`.
    Int,
    /// `long`.
    Long,
    /// `float`.
    Float,
    /// `double`.
    Double,
    /// `decimal32`.
    Decimal32,
    /// `decimal64`.
    Decimal64,
    /// `decimal128`.
    Decimal128,
    /// `char`.
    Char,
    /// `timestamp`.
    Timestamp,
    /// `uuid`.
    Uuid,
    /// `binary`.
    Binary,
    /// `string`.
    String,
    /// `symbol`.
    Symbol,
    /// `list`.
    List,
    /// `map`.
    Map,
    /// `array`.
    Array,
}

/// An AMQP array: elements of one type, optionally all described by one descriptor.
/// The items are the undescribed element values; [`Array::new`] checks they all have
/// the element type, so every `Array` can be encoded.
#[derive(Debug, Clone, PartialEq)]
pub struct Array {
    descriptor: Option<Descriptor>,
    element: ElementType,
    items: Vec<Value>,
}

impl Array {
    /// An array of `element`s; `None` if an item is of another type (or described).
    pub fn new(
        descriptor: Option<Descriptor>,
        element: ElementType,
        items: Vec<Value>,
    ) -> Option<Self> {
        items
            .iter()
            .all(|v| v.element_type() == Some(element))
            .then_some(Array {
                descriptor,
                element,
                items,
            })
    }

    /// An array of symbols (the usual encoding of capabilities and locales).
    pub fn of_symbols(symbols: impl IntoIterator<Item = Symbol>) -> Self {
        Array {
            descriptor: None,
            element: ElementType::Symbol,
            items: symbols.into_iter().map(Value::Symbol).collect(),
        }
    }

    /// The descriptor shared by every element, for arrays of a described type.
    pub fn descriptor(&self) -> Option<&Descriptor> {
        self.descriptor.as_ref()
    }

    /// The elements' type.
    pub fn element(&self) -> ElementType {
        self.element
    }

    /// The elements.
    pub fn items(&self) -> &[Value] {
        &self.items
    }

    /// Takes the elements.
    pub fn into_items(self) -> Vec<Value> {
        self.items
    }
}

/// Any AMQP 1.0 value.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// `null`.
    #[default]
    Null,
    /// `boolean`.
    Bool(bool),
    /// `ubyte`.
    Ubyte(u8),
    /// `ushort`.
    Ushort(u16),
    /// `uint`.
    Uint(u32),
    /// `ulong`.
    Ulong(u64),
    /// `byte`.
    Byte(i8),
    /// `short`.
    Short(i16),
    /// `int`.
    Int(i32),
    /// `long`.
    Long(i64),
    /// `float` (IEEE 754 binary32).
    Float(f32),
    /// `double` (IEEE 754 binary64).
    Double(f64),
    /// `decimal32`, IEEE 754 decimal32 kept as its raw bytes.
    Decimal32([u8; 4]),
    /// `decimal64`, raw bytes.
    Decimal64([u8; 8]),
    /// `decimal128`, raw bytes.
    Decimal128([u8; 16]),
    /// `char` (a UTF-32 code point).
    Char(char),
    /// `timestamp`.
    Timestamp(Timestamp),
    /// `uuid` (RFC 4122 byte order).
    Uuid([u8; 16]),
    /// `binary`.
    Binary(Bytes),
    /// `string`.
    String(Str),
    /// `symbol`.
    Symbol(Symbol),
    /// `list`.
    List(Vec<Value>),
    /// `map`, as ordered pairs (AMQP maps keep their order and may use any key type).
    Map(Vec<(Value, Value)>),
    /// `array`.
    Array(Array),
    /// A described value.
    Described(Box<Described>),
}

impl Value {
    /// The element type of this value when placed in an array (`None` for described).
    pub fn element_type(&self) -> Option<ElementType> {
        Some(match self {
            Value::Null => ElementType::Null,
            Value::Bool(_) => ElementType::Bool,
            Value::Ubyte(_) => ElementType::Ubyte,
            Value::Ushort(_) => ElementType::Ushort,
            Value::Uint(_) => ElementType::Uint,
            Value::Ulong(_) => ElementType::Ulong,
            Value::Byte(_) => ElementType::Byte,
            Value::Short(_) => ElementType::Short,
            Value::Int(_) => ElementType::Int,
            Value::Long(_) => ElementType::Long,
            Value::Float(_) => ElementType::Float,
            Value::Double(_) => ElementType::Double,
            Value::Decimal32(_) => ElementType::Decimal32,
            Value::Decimal64(_) => ElementType::Decimal64,
            Value::Decimal128(_) => ElementType::Decimal128,
            Value::Char(_) => ElementType::Char,
            Value::Timestamp(_) => ElementType::Timestamp,
            Value::Uuid(_) => ElementType::Uuid,
            Value::Binary(_) => ElementType::Binary,
            Value::String(_) => ElementType::String,
            Value::Symbol(_) => ElementType::Symbol,
            Value::List(_) => ElementType::List,
            Value::Map(_) => ElementType::Map,
            Value::Array(_) => ElementType::Array,
            Value::Described(_) => return None,
        })
    }

    /// A described value.
    pub fn described(descriptor: Descriptor, value: Value) -> Value {
        Value::Described(Box::new(Described { descriptor, value }))
    }

    /// The text of a `string` or `symbol`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s.as_str()),
            Value::Symbol(s) => Some(s.as_str()),
            _ => None,
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(Str::from(s))
    }
}

impl From<Symbol> for Value {
    fn from(s: Symbol) -> Self {
        Value::Symbol(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn str_checks_utf8_once_and_reads_back() {
        assert_eq!(
            Str::from_utf8(Bytes::from_static(b"caf\xc3\xa9"))
                .unwrap()
                .as_str(),
            "café"
        );
        assert_eq!(
            Str::from_utf8(Bytes::from_static(b"\xff")),
            Err(DecodeError::InvalidUtf8)
        );
    }

    #[test]
    fn element_type_follows_the_variant() {
        assert_eq!(
            Value::Symbol(Symbol::from("a")).element_type(),
            Some(ElementType::Symbol)
        );
        let d = Value::described(Descriptor::Code(1), Value::Null);
        assert_eq!(d.element_type(), None);
    }
}
