//! The AMQP 1.0 type encoding: format codes, an encoder into `BytesMut` and a decoder
//! over `Bytes`.
//!
//! The encoder always picks the most compact encoding (`uint0`, `smalluint`, `list0`,
//! `list8`, `str8`, ...). The decoder is total: truncated, malformed or oversized input is
//! a [`DecodeError`], never a panic; declared sizes and counts are
//! checked against the remaining input before anything is allocated, and nesting is
//! limited to [`MAX_DEPTH`]. Typed fields go through [`Encode`] / [`Decode`], so the
//! performatives and message sections read and write their fields without building
//! [`Value`](crate::Value)s.

mod composite;
mod decode;
mod encode;
pub mod format_code;
mod primitive;
pub(crate) mod quick;

pub use composite::{CompositeWriter, Fields};
pub use decode::Decoder;
pub use encode::{
    put_binary, put_described_code, put_list, put_null, put_string, put_symbol, put_value,
};
pub(crate) use primitive::unexpected;

use bytes::BytesMut;

use crate::error::DecodeError;

/// How deep compounds and described values may nest before decoding fails.
pub const MAX_DEPTH: usize = 32;

/// A type with an AMQP encoding of its own (a primitive, a section, a composite).
pub trait Encode {
    /// Appends this value's encoding (constructor and data) to `out`.
    fn encode(&self, out: &mut BytesMut);
}

/// An optional value encodes as itself, or `null` when absent.
impl<T: Encode> Encode for Option<T> {
    fn encode(&self, out: &mut BytesMut) {
        match self {
            Some(v) => v.encode(out),
            None => put_null(out),
        }
    }
}

/// A type that can be read from the decoder once its constructor byte has been read.
pub trait Decode: Sized {
    /// Decodes the value whose (non-null) format code `code` was just read.
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError>;
}

/// Encodes any [`Encode`] value into a fresh buffer (handy for tests and conversions).
pub fn to_bytes<T: Encode + ?Sized>(value: &T) -> bytes::Bytes {
    let mut out = BytesMut::new();
    value.encode(&mut out);
    out.freeze()
}

/// Decodes one value of type `T` that must fill `bytes` exactly.
pub fn from_bytes<T: Decode>(bytes: bytes::Bytes) -> Result<T, DecodeError> {
    let mut dec = Decoder::new(bytes);
    let value = dec.read::<T>()?;
    dec.finish()?;
    Ok(value)
}

/// Converts a [`Value`](crate::Value) (e.g. an amqp-value body) into a typed composite such
/// as [`Declare`](crate::Declare), by encoding and decoding it.
pub fn from_value<T: Decode>(value: &crate::Value) -> Result<T, DecodeError> {
    from_bytes(to_bytes(value))
}

/// Converts a typed composite into a generic [`Value`](crate::Value).
pub fn to_value<T: Encode + ?Sized>(value: &T) -> Result<crate::Value, DecodeError> {
    from_bytes(to_bytes(value))
}
