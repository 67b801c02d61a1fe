//! Writing values: one function per primitive, each choosing the most compact encoding,
//! and [`put_value`] for the generic [`Value`] (compounds compacted once their size is known).

use bytes::{BufMut, BytesMut};

use super::format_code as fc;
use crate::value::{Array, Descriptor, ElementType, Value};

/// Writes `null`.
pub fn put_null(out: &mut BytesMut) {
    out.put_u8(fc::NULL);
}

pub(crate) fn put_bool(out: &mut BytesMut, v: bool) {
    out.put_u8(if v { fc::TRUE } else { fc::FALSE });
}

pub(crate) fn put_uint(out: &mut BytesMut, v: u32) {
    match v {
        0 => out.put_u8(fc::UINT0),
        1..=255 => out.put_slice(&[fc::SMALL_UINT, v as u8]),
        _ => {
            out.put_u8(fc::UINT);
            out.put_u32(v);
        }
    }
}

pub(crate) fn put_ulong(out: &mut BytesMut, v: u64) {
    match v {
        0 => out.put_u8(fc::ULONG0),
        1..=255 => out.put_slice(&[fc::SMALL_ULONG, v as u8]),
        _ => {
            out.put_u8(fc::ULONG);
            out.put_u64(v);
        }
    }
}

pub(crate) fn put_int(out: &mut BytesMut, v: i32) {
    if let Ok(small) = i8::try_from(v) {
        out.put_slice(&[fc::SMALL_INT, small as u8]);
    } else {
        out.put_u8(fc::INT);
        out.put_i32(v);
    }
}

pub(crate) fn put_long(out: &mut BytesMut, v: i64) {
    if let Ok(small) = i8::try_from(v) {
        out.put_slice(&[fc::SMALL_LONG, small as u8]);
    } else {
        out.put_u8(fc::LONG);
        out.put_i64(v);
    }
}

fn put_sized(out: &mut BytesMut, code8: u8, code32: u8, data: &[u8]) {
    if data.len() <= 255 {
        out.reserve(2 + data.len());
        out.put_u8(code8);
        out.put_u8(data.len() as u8);
    } else {
        out.reserve(5 + data.len());
        out.put_u8(code32);
        out.put_u32(data.len() as u32);
    }
    out.put_slice(data);
}

/// Writes a `binary` (vbin8 or vbin32).
pub fn put_binary(out: &mut BytesMut, data: &[u8]) {
    put_sized(out, fc::VBIN8, fc::VBIN32, data);
}

/// Writes a `string` (str8 or str32).
pub fn put_string(out: &mut BytesMut, s: &str) {
    put_sized(out, fc::STR8, fc::STR32, s.as_bytes());
}

/// Writes a `symbol` (sym8 or sym32).
pub fn put_symbol(out: &mut BytesMut, s: &str) {
    put_sized(out, fc::SYM8, fc::SYM32, s.as_bytes());
}

/// Writes the described-type constructor with a numeric descriptor (`0x00 0x53 code`).
pub fn put_described_code(out: &mut BytesMut, code: u64) {
    out.put_u8(fc::DESCRIBED);
    put_ulong(out, code);
}

pub(crate) fn put_descriptor(out: &mut BytesMut, d: &Descriptor) {
    out.put_u8(fc::DESCRIBED);
    match d {
        Descriptor::Code(c) => put_ulong(out, *c),
        Descriptor::Symbol(s) => put_symbol(out, s.as_str()),
    }
}

/// Starts a list32/map32/array32 header; returns its start for [`finish_compound`].
pub(crate) fn begin_compound(out: &mut BytesMut, code32: u8) -> usize {
    let start = out.len();
    out.put_u8(code32);
    out.put_u64(0); // size and count, patched by finish_compound
    start
}

/// Patches a compound begun at `start` with `count` elements, shrinking it to the
/// 8-bit form (or `list0`) when it fits.
pub(crate) fn finish_compound(out: &mut BytesMut, start: usize, count: u32) {
    let body = out.len() - start - 9;
    let code32 = out[start];
    if code32 == fc::LIST32 && count == 0 {
        out.truncate(start);
        out.put_u8(fc::LIST0);
        return;
    }
    if body < 255 && count <= 255 {
        out[start] = code32 - 0x10; // list32 -> list8, map32 -> map8, array32 -> array8
        out[start + 1] = (body + 1) as u8;
        out[start + 2] = count as u8;
        out.copy_within(start + 9.., start + 3);
        out.truncate(start + 3 + body);
    } else {
        out[start + 1..start + 5].copy_from_slice(&((body + 4) as u32).to_be_bytes());
        out[start + 5..start + 9].copy_from_slice(&count.to_be_bytes());
    }
}

/// Writes a list of values (list0, list8 or list32).
pub fn put_list(out: &mut BytesMut, items: &[Value]) {
    let start = begin_compound(out, fc::LIST32);
    for item in items {
        put_value(out, item);
    }
    finish_compound(out, start, items.len() as u32);
}

/// Writes any [`Value`] in its most compact encoding.
pub fn put_value(out: &mut BytesMut, v: &Value) {
    match v {
        Value::Null => put_null(out),
        Value::Bool(b) => put_bool(out, *b),
        Value::Ubyte(x) => out.put_slice(&[fc::UBYTE, *x]),
        Value::Ushort(x) => {
            out.put_u8(fc::USHORT);
            out.put_u16(*x);
        }
        Value::Uint(x) => put_uint(out, *x),
        Value::Ulong(x) => put_ulong(out, *x),
        Value::Byte(x) => out.put_slice(&[fc::BYTE, *x as u8]),
        Value::Short(x) => {
            out.put_u8(fc::SHORT);
            out.put_i16(*x);
        }
        Value::Int(x) => put_int(out, *x),
        Value::Long(x) => put_long(out, *x),
        Value::List(items) => put_list(out, items),
        Value::Map(pairs) => {
            let start = begin_compound(out, fc::MAP32);
            for (k, val) in pairs {
                put_value(out, k);
                put_value(out, val);
            }
            finish_compound(out, start, pairs.len() as u32 * 2);
        }
        Value::Array(a) => put_array(out, a),
        Value::Described(d) => {
            put_descriptor(out, &d.descriptor);
            put_value(out, &d.value);
        }
        other => {
            // Fixed-width and variable-width primitives: constructor then data.
            let code = element_code(other, false);
            out.put_u8(code);
            put_element_data(out, other, code);
        }
    }
}

/// The format code for `v` as an array element; `wide` forces the 32-bit variable form.
fn element_code(v: &Value, wide: bool) -> u8 {
    let narrow = |len: usize| !wide && len <= 255;
    match v {
        Value::Null => fc::NULL,
        Value::Bool(_) => fc::BOOLEAN,
        Value::Ubyte(_) => fc::UBYTE,
        Value::Ushort(_) => fc::USHORT,
        Value::Uint(_) => fc::UINT,
        Value::Ulong(_) => fc::ULONG,
        Value::Byte(_) => fc::BYTE,
        Value::Short(_) => fc::SHORT,
        Value::Int(_) => fc::INT,
        Value::Long(_) => fc::LONG,
        Value::Float(_) => fc::FLOAT,
        Value::Double(_) => fc::DOUBLE,
        Value::Decimal32(_) => fc::DECIMAL32,
        Value::Decimal64(_) => fc::DECIMAL64,
        Value::Decimal128(_) => fc::DECIMAL128,
        Value::Char(_) => fc::CHAR,
        Value::Timestamp(_) => fc::TIMESTAMP,
        Value::Uuid(_) => fc::UUID,
        Value::Binary(b) if narrow(b.len()) => fc::VBIN8,
        Value::Binary(_) => fc::VBIN32,
        Value::String(s) if narrow(s.len()) => fc::STR8,
        Value::String(_) => fc::STR32,
        Value::Symbol(s) if narrow(s.0.len()) => fc::SYM8,
        Value::Symbol(_) => fc::SYM32,
        Value::List(_) => fc::LIST32,
        Value::Map(_) => fc::MAP32,
        Value::Array(_) | Value::Described(_) => fc::ARRAY32,
    }
}

/// The element code of an array: the first element's, widened if any element needs it.
fn array_code(a: &Array) -> u8 {
    let narrow_ok = a.items().iter().all(|v| {
        let c = element_code(v, false);
        !matches!(c, fc::VBIN32 | fc::STR32 | fc::SYM32)
    });
    match a.items().first() {
        Some(first) => element_code(first, !narrow_ok),
        None => match a.element() {
            ElementType::Binary => fc::VBIN8,
            ElementType::String => fc::STR8,
            ElementType::Symbol => fc::SYM8,
            ElementType::List => fc::LIST32,
            ElementType::Map => fc::MAP32,
            ElementType::Array => fc::ARRAY32,
            other => element_code(&zero_of(other), false),
        },
    }
}

/// A placeholder value of a fixed-width type, used only to find its format code.
fn zero_of(t: ElementType) -> Value {
    match t {
        ElementType::Null => Value::Null,
        ElementType::Bool => Value::Bool(false),
        ElementType::Ubyte => Value::Ubyte(0),
        ElementType::Ushort => Value::Ushort(0),
        ElementType::Uint => Value::Uint(0),
        ElementType::Ulong => Value::Ulong(0),
        ElementType::Byte => Value::Byte(0),
        ElementType::Short => Value::Short(0),
        ElementType::Int => Value::Int(0),
        ElementType::Long => Value::Long(0),
        ElementType::Float => Value::Float(0.0),
        ElementType::Double => Value::Double(0.0),
        ElementType::Decimal32 => Value::Decimal32([0; 4]),
        ElementType::Decimal64 => Value::Decimal64([0; 8]),
        ElementType::Decimal128 => Value::Decimal128([0; 16]),
        ElementType::Char => Value::Char('\0'),
        ElementType::Timestamp => Value::Timestamp(Default::default()),
        ElementType::Uuid => Value::Uuid([0; 16]),
        _ => Value::Null,
    }
}

fn put_array(out: &mut BytesMut, a: &Array) {
    let start = begin_compound(out, fc::ARRAY32);
    if let Some(d) = a.descriptor() {
        put_descriptor(out, d);
    }
    let code = array_code(a);
    out.put_u8(code);
    for item in a.items() {
        put_element_data(out, item, code);
    }
    finish_compound(out, start, a.items().len() as u32);
}

/// Writes the data of `v` (no constructor) in the encoding named by `code`.
fn put_element_data(out: &mut BytesMut, v: &Value, code: u8) {
    let wide = matches!(code, fc::VBIN32 | fc::STR32 | fc::SYM32);
    let sized = |out: &mut BytesMut, data: &[u8]| {
        if wide {
            out.put_u32(data.len() as u32);
        } else {
            out.put_u8(data.len() as u8);
        }
        out.put_slice(data);
    };
    match v {
        Value::Null => {}
        Value::Bool(b) => out.put_u8(u8::from(*b)),
        Value::Ubyte(x) => out.put_u8(*x),
        Value::Ushort(x) => out.put_u16(*x),
        Value::Uint(x) => out.put_u32(*x),
        Value::Ulong(x) => out.put_u64(*x),
        Value::Byte(x) => out.put_i8(*x),
        Value::Short(x) => out.put_i16(*x),
        Value::Int(x) => out.put_i32(*x),
        Value::Long(x) => out.put_i64(*x),
        Value::Float(x) => out.put_f32(*x),
        Value::Double(x) => out.put_f64(*x),
        Value::Decimal32(b) => out.put_slice(b),
        Value::Decimal64(b) => out.put_slice(b),
        Value::Decimal128(b) => out.put_slice(b),
        Value::Char(c) => out.put_u32(*c as u32),
        Value::Timestamp(t) => out.put_i64(t.0),
        Value::Uuid(u) => out.put_slice(u),
        Value::Binary(b) => sized(out, b),
        Value::String(s) => sized(out, s.as_bytes()),
        Value::Symbol(s) => sized(out, s.0.as_bytes()),
        Value::List(items) => {
            // In an array, compound elements keep the 32-bit form the constructor names.
            let start = out.len();
            out.put_u64(0);
            for item in items {
                put_value(out, item);
            }
            patch_wide(out, start, items.len() as u32);
        }
        Value::Map(pairs) => {
            let start = out.len();
            out.put_u64(0);
            for (k, val) in pairs {
                put_value(out, k);
                put_value(out, val);
            }
            patch_wide(out, start, pairs.len() as u32 * 2);
        }
        Value::Array(inner) => {
            let start = out.len();
            out.put_u64(0);
            if let Some(d) = inner.descriptor() {
                put_descriptor(out, d);
            }
            let code = array_code(inner);
            out.put_u8(code);
            for item in inner.items() {
                put_element_data(out, item, code);
            }
            patch_wide(out, start, inner.items().len() as u32);
        }
        Value::Described(_) => {}
    }
}

fn patch_wide(out: &mut BytesMut, start: usize, count: u32) {
    let size = (out.len() - start - 4) as u32;
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
    out[start + 4..start + 8].copy_from_slice(&count.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Str, Symbol};

    fn enc(v: &Value) -> Vec<u8> {
        let mut out = BytesMut::new();
        put_value(&mut out, v);
        out.to_vec()
    }

    #[test]
    fn integers_take_their_smallest_encoding() {
        assert_eq!(enc(&Value::Uint(0)), [0x43]);
        assert_eq!(enc(&Value::Uint(7)), [0x52, 7]);
        assert_eq!(enc(&Value::Uint(256)), [0x70, 0, 0, 1, 0]);
        assert_eq!(enc(&Value::Ulong(0)), [0x44]);
        assert_eq!(enc(&Value::Ulong(0x10)), [0x53, 0x10]);
        assert_eq!(enc(&Value::Int(-1)), [0x54, 0xff]);
        assert_eq!(
            enc(&Value::Long(1000)),
            [0x81, 0, 0, 0, 0, 0, 0, 0x03, 0xe8]
        );
    }

    #[test]
    fn lists_shrink_to_list0_and_list8() {
        assert_eq!(enc(&Value::List(vec![])), [0x45]);
        assert_eq!(
            enc(&Value::List(vec![Value::Bool(true), Value::Null])),
            [0xc0, 3, 2, 0x41, 0x40]
        );
        let big = Value::List(vec![Value::String(Str::from("x".repeat(300)))]);
        let bytes = enc(&big);
        assert_eq!(&bytes[..9], &[0xd0, 0, 0, 1, 0x35, 0, 0, 0, 1]);
    }

    #[test]
    fn strings_and_symbols_use_8_or_32_bit_lengths() {
        assert_eq!(enc(&Value::from("ab")), [0xa1, 2, b'a', b'b']);
        assert_eq!(enc(&Value::Symbol(Symbol::from("q"))), [0xa3, 1, b'q']);
        assert_eq!(
            enc(&Value::from("é".repeat(200).as_str()))[..5],
            [0xb1, 0, 0, 1, 0x90]
        );
    }

    #[test]
    fn symbol_arrays_use_one_constructor() {
        let a = Array::of_symbols([Symbol::from("queue"), Symbol::from("ab")]);
        assert_eq!(
            enc(&Value::Array(a)),
            [0xe0, 11, 2, 0xa3, 5, b'q', b'u', b'e', b'u', b'e', 2, b'a', b'b']
        );
    }
}
