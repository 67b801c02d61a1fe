//! [`Encode`] and [`Decode`] for the Rust types that stand for AMQP primitives in typed
//! fields: integers, booleans, strings, symbols, binaries, timestamps, and the
//! collections the performatives use (multiple symbols, fields maps, generic maps).
//!
//! Integer fields accept any narrower unsigned (or signed) encoding of the same sign, so
//! a lax peer that sends a `ubyte` where a `uint` belongs still decodes.

use bytes::{BufMut, Bytes, BytesMut};

use super::encode::{self, put_binary, put_string, put_symbol, put_value};
use super::format_code as fc;
use super::{Decode, Decoder, Encode};
use crate::error::DecodeError;
use crate::value::{Array, ElementType, Str, Symbol, Timestamp, Value};

/// The error for a value of the wrong type (`found` where `expected` was wanted).
pub(crate) fn unexpected(expected: &'static str, found: u8) -> DecodeError {
    DecodeError::UnexpectedType {
        field: "value",
        expected,
        found,
    }
}

/// Reads any unsigned integer encoding as a u64.
fn unsigned(dec: &mut Decoder, code: u8, expected: &'static str) -> Result<u64, DecodeError> {
    Ok(match code {
        fc::UINT0 | fc::ULONG0 => 0,
        fc::SMALL_UINT | fc::SMALL_ULONG | fc::UBYTE => dec.u8()? as u64,
        fc::USHORT => dec.u16()? as u64,
        fc::UINT => dec.u32()? as u64,
        fc::ULONG => dec.u64()?,
        other => return Err(unexpected(expected, other)),
    })
}

/// Reads any signed integer encoding as an i64.
fn signed(dec: &mut Decoder, code: u8, expected: &'static str) -> Result<i64, DecodeError> {
    Ok(match code {
        fc::BYTE | fc::SMALL_INT | fc::SMALL_LONG => dec.u8()? as i8 as i64,
        fc::SHORT => dec.u16()? as i16 as i64,
        fc::INT => dec.u32()? as i32 as i64,
        fc::LONG => dec.u64()? as i64,
        other => return Err(unexpected(expected, other)),
    })
}

macro_rules! integer {
    ($t:ty, $read:ident, $name:literal, |$out:ident, $v:ident| $put:expr) => {
        impl Decode for $t {
            #[inline]
            fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
                let wide = $read(dec, code, $name)?;
                <$t>::try_from(wide).map_err(|_| DecodeError::InvalidValue {
                    field: $name,
                    value: wide.to_string(),
                })
            }
        }
        impl Encode for $t {
            #[inline]
            fn encode(&self, $out: &mut BytesMut) {
                let $v = *self;
                $put
            }
        }
    };
}

integer!(u8, unsigned, "ubyte", |out, v| out
    .put_slice(&[fc::UBYTE, v]));
integer!(u16, unsigned, "ushort", |out, v| {
    out.put_u8(fc::USHORT);
    out.put_u16(v)
});
integer!(u32, unsigned, "uint", |out, v| encode::put_uint(out, v));
integer!(u64, unsigned, "ulong", |out, v| encode::put_ulong(out, v));
integer!(i8, signed, "byte", |out, v| out
    .put_slice(&[fc::BYTE, v as u8]));
integer!(i16, signed, "short", |out, v| {
    out.put_u8(fc::SHORT);
    out.put_i16(v)
});
integer!(i32, signed, "int", |out, v| encode::put_int(out, v));
integer!(i64, signed, "long", |out, v| encode::put_long(out, v));

impl Decode for bool {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::TRUE => Ok(true),
            fc::FALSE => Ok(false),
            fc::BOOLEAN => match dec.u8()? {
                0 => Ok(false),
                1 => Ok(true),
                b => Err(DecodeError::InvalidValue {
                    field: "boolean",
                    value: b.to_string(),
                }),
            },
            other => Err(unexpected("boolean", other)),
        }
    }
}

impl Encode for bool {
    #[inline]
    fn encode(&self, out: &mut BytesMut) {
        encode::put_bool(out, *self);
    }
}

impl Decode for Timestamp {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::TIMESTAMP => Ok(Timestamp(dec.u64()? as i64)),
            other => Err(unexpected("timestamp", other)),
        }
    }
}

impl Encode for Timestamp {
    fn encode(&self, out: &mut BytesMut) {
        out.put_u8(fc::TIMESTAMP);
        out.put_i64(self.0);
    }
}

impl Decode for Str {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::STR8 | fc::STR32 => Str::from_utf8(dec.sized_data(code)?),
            other => Err(unexpected("string", other)),
        }
    }
}

impl Encode for Str {
    #[inline]
    fn encode(&self, out: &mut BytesMut) {
        put_string(out, self.as_str());
    }
}

impl Decode for Symbol {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::SYM8 | fc::SYM32 => Str::from_utf8(dec.sized_data(code)?).map(Symbol),
            other => Err(unexpected("symbol", other)),
        }
    }
}

impl Encode for Symbol {
    #[inline]
    fn encode(&self, out: &mut BytesMut) {
        put_symbol(out, self.as_str());
    }
}

impl Decode for Bytes {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::VBIN8 | fc::VBIN32 => dec.sized_data(code),
            other => Err(unexpected("binary", other)),
        }
    }
}

impl Encode for Bytes {
    #[inline]
    fn encode(&self, out: &mut BytesMut) {
        put_binary(out, self);
    }
}

impl Decode for Value {
    #[inline]
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        dec.value_with(code)
    }
}

impl Encode for Value {
    #[inline]
    fn encode(&self, out: &mut BytesMut) {
        put_value(out, self);
    }
}

/// A multiple-valued symbol field (capabilities, locales, outcomes, mechanisms): decodes
/// from a single symbol or an array of symbols; encodes as an array.
impl Decode for Vec<Symbol> {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::SYM8 | fc::SYM32 => Ok(vec![Symbol::decode_with(dec, code)?]),
            fc::ARRAY8 | fc::ARRAY32 => {
                let Value::Array(a) = dec.value_with(code)? else {
                    return Err(unexpected("symbol array", code));
                };
                if a.element() != ElementType::Symbol || a.descriptor().is_some() {
                    return Err(unexpected("symbol array", code));
                }
                Ok(a.into_items()
                    .into_iter()
                    .filter_map(|v| match v {
                        Value::Symbol(s) => Some(s),
                        _ => None,
                    })
                    .collect())
            }
            other => Err(unexpected("symbol or symbol array", other)),
        }
    }
}

impl Encode for Vec<Symbol> {
    fn encode(&self, out: &mut BytesMut) {
        put_value(out, &Value::Array(Array::of_symbols(self.iter().cloned())));
    }
}

macro_rules! keyed_map {
    ($(#[$doc:meta])* $key:ty, $put_key:expr) => {
        $(#[$doc])*
        impl Decode for Vec<($key, Value)> {
            fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
                if !matches!(code, fc::MAP8 | fc::MAP32) {
                    return Err(unexpected("map", code));
                }
                let (count, end, saved) = dec.open_compound(code)?;
                if count % 2 != 0 {
                    return Err(DecodeError::OddMapCount(count));
                }
                let mut pairs = Vec::with_capacity(count as usize / 2);
                for _ in 0..count / 2 {
                    let k = dec.read::<$key>()?;
                    let v = dec.read_value()?;
                    pairs.push((k, v));
                }
                dec.close_compound(end, saved)?;
                Ok(pairs)
            }
        }

        impl Encode for Vec<($key, Value)> {
            fn encode(&self, out: &mut BytesMut) {
                let start = encode::begin_compound(out, fc::MAP32);
                for (k, v) in self {
                    $put_key(out, k.as_str());
                    put_value(out, v);
                }
                encode::finish_compound(out, start, self.len() as u32 * 2);
            }
        }
    };
}

keyed_map!(
    /// A `fields` map (symbol keys, any values): link and connection properties, filters.
    Symbol,
    put_symbol
);
keyed_map!(
    /// A map with string keys: a message's application-properties.
    Str,
    put_string
);

/// A generic map with keys of any type (annotations, unsettled maps).
impl Decode for Vec<(Value, Value)> {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match code {
            fc::MAP8 | fc::MAP32 => match dec.value_with(code)? {
                Value::Map(pairs) => Ok(pairs),
                _ => Err(unexpected("map", code)),
            },
            other => Err(unexpected("map", other)),
        }
    }
}

impl Encode for Vec<(Value, Value)> {
    fn encode(&self, out: &mut BytesMut) {
        let start = encode::begin_compound(out, fc::MAP32);
        for (k, v) in self {
            put_value(out, k);
            put_value(out, v);
        }
        encode::finish_compound(out, start, self.len() as u32 * 2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{from_bytes, to_bytes};

    #[test]
    fn uint_fields_accept_narrower_encodings() {
        assert_eq!(from_bytes::<u32>(Bytes::from_static(&[0x50, 7])), Ok(7));
        assert_eq!(from_bytes::<u64>(Bytes::from_static(&[0x52, 7])), Ok(7));
        assert!(from_bytes::<u8>(Bytes::from_static(&[0x70, 0, 0, 1, 0])).is_err());
        assert!(from_bytes::<u32>(Bytes::from_static(&[0xa1, 0])).is_err());
    }

    #[test]
    fn multiple_symbols_accept_one_symbol_or_an_array() {
        let one = from_bytes::<Vec<Symbol>>(Bytes::from_static(&[0xa3, 1, b'x'])).unwrap();
        assert_eq!(one, vec![Symbol::from("x")]);
        let many = vec![Symbol::from("a"), Symbol::from("bc")];
        assert_eq!(from_bytes::<Vec<Symbol>>(to_bytes(&many)), Ok(many));
    }

    #[test]
    fn fields_maps_round_trip_and_need_symbol_keys() {
        let f = vec![(Symbol::from("product"), Value::from("QpidJMS"))];
        assert_eq!(from_bytes::<Vec<(Symbol, Value)>>(to_bytes(&f)), Ok(f));
        assert!(
            from_bytes::<Vec<(Symbol, Value)>>(Bytes::from_static(&[0xc1, 3, 2, 0x43, 0x40]))
                .is_err()
        );
    }
}
