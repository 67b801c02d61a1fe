//! Typed errors of the codec, each knowing the AMQP error condition a connection closes with.
//!
//! [`DecodeError`] covers the type system and everything built on it (performatives,
//! message sections); it always maps to `amqp:decode-error`. [`FrameError`] adds the
//! framing layer's faults, which map to `amqp:connection:framing-error`.

use crate::condition;

/// A malformed, truncated or oversized encoding. Decoders return it for any bad input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ends before the value does.
    #[error("input ends early: {needed} more bytes needed, {remaining} remain")]
    Truncated {
        /// Bytes the value still needs.
        needed: usize,
        /// Bytes left in the input (or the enclosing compound).
        remaining: usize,
    },
    /// A format code the AMQP type system does not define.
    #[error("unknown format code 0x{0:02x}")]
    UnknownFormatCode(u8),
    /// A value of another type than the field allows.
    #[error("{field}: expected {expected}, found format code 0x{found:02x}")]
    UnexpectedType {
        /// The field (or type) being read.
        field: &'static str,
        /// What the field allows.
        expected: &'static str,
        /// The format code found.
        found: u8,
    },
    /// A declared size or count larger than the bytes that follow it.
    #[error("declared length {declared} exceeds the {remaining} bytes that remain")]
    LengthOverRemaining {
        /// The declared size or element count.
        declared: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// A compound's elements did not fill exactly its declared size.
    #[error("compound declares {declared} bytes but its elements take {used}")]
    SizeMismatch {
        /// Declared size in bytes.
        declared: usize,
        /// Bytes the elements used.
        used: usize,
    },
    /// Compounds or described values nested deeper than [`crate::codec::MAX_DEPTH`].
    #[error("values nested deeper than {limit} levels")]
    TooDeep {
        /// The nesting limit.
        limit: usize,
    },
    /// A map with an odd number of elements (keys without values).
    #[error("map has an odd element count {0}")]
    OddMapCount(u32),
    /// A string or symbol that is not valid UTF-8.
    #[error("string or symbol is not valid UTF-8")]
    InvalidUtf8,
    /// A char that is not a Unicode scalar value.
    #[error("char 0x{0:x} is not a Unicode scalar value")]
    InvalidChar(u32),
    /// A descriptor that is neither a ulong nor a symbol.
    #[error("descriptor must be a ulong or symbol, found format code 0x{0:02x}")]
    BadDescriptor(u8),
    /// A described type this decoder does not know in that position.
    #[error("unexpected descriptor {found} for {expected}")]
    UnexpectedDescriptor {
        /// What was being decoded.
        expected: &'static str,
        /// The descriptor found.
        found: String,
    },
    /// A mandatory field is null or absent.
    #[error("{type_name}: mandatory field {field} is missing")]
    MissingField {
        /// The composite type.
        type_name: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field holds a value outside its restricted set (e.g. an unknown expiry-policy).
    #[error("{field}: invalid value {value}")]
    InvalidValue {
        /// The field.
        field: &'static str,
        /// The value, printed.
        value: String,
    },
    /// Message sections out of the order the spec fixes, or repeated.
    #[error("message section {0} out of order or repeated")]
    SectionOrder(String),
    /// Bytes left over after a value that must fill its buffer.
    #[error("{0} unexpected bytes after the value")]
    TrailingBytes(usize),
}

impl DecodeError {
    /// The AMQP error condition to close the connection with: `amqp:decode-error`.
    pub fn condition(&self) -> &'static str {
        condition::DECODE_ERROR
    }
}

/// A fault in the frame layer, or a frame whose performative does not decode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A frame larger than the negotiated max-frame-size.
    #[error("frame of {size} bytes exceeds the max-frame-size of {max} bytes")]
    TooLarge {
        /// The frame's declared size.
        size: u32,
        /// The limit in force.
        max: u32,
    },
    /// A frame header that breaks the framing rules (size below 8, doff below 2, ...).
    #[error("malformed frame: {0}")]
    Malformed(&'static str),
    /// Eight bytes that are not an AMQP protocol header this codec speaks.
    #[error("unsupported protocol header {0:02x?}")]
    ProtocolHeader([u8; 8]),
    /// The frame body does not decode.
    #[error("frame body: {0}")]
    Decode(#[from] DecodeError),
}

impl FrameError {
    /// The AMQP error condition to close the connection with.
    pub fn condition(&self) -> &'static str {
        match self {
            FrameError::Decode(e) => e.condition(),
            _ => condition::FRAMING_ERROR,
        }
    }
}
