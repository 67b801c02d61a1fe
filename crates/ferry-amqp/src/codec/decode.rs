//! Reading values: a cursor over a `Bytes` buffer that decodes one value at a time.
//!
//! Every read checks the bytes it needs against the current limit (the end of the input,
//! or of the compound being read), so no input can make it read out of bounds, allocate
//! more than the input's size in elements, or recurse deeper than [`MAX_DEPTH`].

use bytes::Bytes;

use super::format_code as fc;
use super::{Decode, MAX_DEPTH};
use crate::error::DecodeError;
use crate::value::{Array, Described, Descriptor, ElementType, Str, Symbol, Timestamp, Value};

/// A decoding cursor over one buffer. Strings, symbols and binaries come out as slices
/// of that buffer (no copy).
#[derive(Debug, Clone)]
pub struct Decoder {
    buf: Bytes,
    pos: usize,
    limit: usize,
    depth: usize,
}

impl Decoder {
    /// A decoder over all of `buf`.
    pub fn new(buf: Bytes) -> Self {
        let limit = buf.len();
        Decoder {
            buf,
            pos: 0,
            limit,
            depth: 0,
        }
    }

    /// Bytes left before the current limit.
    pub fn remaining(&self) -> usize {
        self.limit - self.pos
    }

    /// Offset of the cursor from the start of the buffer.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Moves the cursor back to `pos` (a position this decoder reported earlier).
    pub(crate) fn rewind(&mut self, pos: usize) {
        self.pos = pos.min(self.pos);
    }

    /// Fails with [`DecodeError::TrailingBytes`] if anything is left before the limit.
    pub fn finish(&self) -> Result<(), DecodeError> {
        match self.remaining() {
            0 => Ok(()),
            n => Err(DecodeError::TrailingBytes(n)),
        }
    }

    /// The bytes from `start` to the cursor, shared (no copy).
    pub fn slice_from(&self, start: usize) -> Bytes {
        self.buf.slice(start.min(self.pos)..self.pos)
    }

    /// The rest of the buffer up to the limit, consumed.
    pub fn take_rest(&mut self) -> Bytes {
        let rest = self.buf.slice(self.pos..self.limit);
        self.pos = self.limit;
        rest
    }

    #[inline]
    fn need(&self, n: usize) -> Result<(), DecodeError> {
        if n > self.remaining() {
            Err(DecodeError::Truncated {
                needed: n,
                remaining: self.remaining(),
            })
        } else {
            Ok(())
        }
    }

    #[inline]
    fn fixed<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        self.need(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.pos..self.pos + N]);
        self.pos += N;
        Ok(a)
    }

    #[inline]
    pub(crate) fn u8(&mut self) -> Result<u8, DecodeError> {
        self.need(1)?;
        let b = self.buf[self.pos];
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    pub(crate) fn u16(&mut self) -> Result<u16, DecodeError> {
        self.fixed().map(u16::from_be_bytes)
    }

    #[inline]
    pub(crate) fn u32(&mut self) -> Result<u32, DecodeError> {
        self.fixed().map(u32::from_be_bytes)
    }

    #[inline]
    pub(crate) fn u64(&mut self) -> Result<u64, DecodeError> {
        self.fixed().map(u64::from_be_bytes)
    }

    /// Reads a 1-byte (`small`) or 4-byte length and checks it against what remains.
    #[inline]
    pub(crate) fn length(&mut self, small: bool) -> Result<usize, DecodeError> {
        let len = if small {
            self.u8()? as usize
        } else {
            self.u32()? as usize
        };
        if len > self.remaining() {
            return Err(DecodeError::LengthOverRemaining {
                declared: len,
                remaining: self.remaining(),
            });
        }
        Ok(len)
    }

    /// Takes `n` bytes as a shared slice.
    #[inline]
    pub(crate) fn bytes(&mut self, n: usize) -> Result<Bytes, DecodeError> {
        self.need(n)?;
        let b = self.buf.slice(self.pos..self.pos + n);
        self.pos += n;
        Ok(b)
    }

    /// Reads the data of a vbin/str/sym whose format code `code` was read.
    #[inline]
    pub(crate) fn sized_data(&mut self, code: u8) -> Result<Bytes, DecodeError> {
        let len = self.length(code & 0xf0 == 0xa0)?;
        self.bytes(len)
    }

    /// Like [`Self::sized_data`], but only says where the data lies in the buffer (no
    /// reference count taken): for decoders that borrow or slice later.
    #[inline]
    pub(crate) fn sized_span(&mut self, code: u8) -> Result<std::ops::Range<usize>, DecodeError> {
        let len = self.length(code & 0xf0 == 0xa0)?;
        self.need(len)?;
        let start = self.pos;
        self.pos += len;
        Ok(start..self.pos)
    }

    /// The bytes at `span` (as given by [`Self::sized_span`]), shared (no copy).
    pub(crate) fn slice(&self, span: std::ops::Range<usize>) -> Bytes {
        self.buf.slice(span)
    }

    /// The bytes from the cursor to the limit (for a fast path to look at), and the
    /// cursor's position in the buffer.
    #[inline]
    pub(crate) fn rest(&self) -> (&[u8], usize) {
        (&self.buf[self.pos..self.limit], self.pos)
    }

    /// The whole buffer this decoder reads.
    pub(crate) fn buffer(&self) -> &[u8] {
        &self.buf
    }

    /// Moves the cursor forward `n` bytes (at most [`Self::remaining`], which a fast path
    /// read in [`Self::rest`]).
    #[inline]
    pub(crate) fn skip(&mut self, n: usize) {
        self.pos += n.min(self.remaining());
    }

    /// Reads 16 raw bytes (a uuid's data).
    #[inline]
    pub(crate) fn uuid(&mut self) -> Result<[u8; 16], DecodeError> {
        self.fixed()
    }

    /// Reads a format code.
    #[inline]
    pub fn read_code(&mut self) -> Result<u8, DecodeError> {
        self.u8()
    }

    /// Reads one value of type `T` (constructor and data).
    #[inline]
    pub fn read<T: Decode>(&mut self) -> Result<T, DecodeError> {
        let code = self.read_code()?;
        T::decode_with(self, code)
    }

    /// Reads one value of type `T`, or `None` for `null`.
    #[inline]
    pub fn read_optional<T: Decode>(&mut self) -> Result<Option<T>, DecodeError> {
        match self.read_code()? {
            fc::NULL => Ok(None),
            code => T::decode_with(self, code).map(Some),
        }
    }

    /// Reads any value.
    pub fn read_value(&mut self) -> Result<Value, DecodeError> {
        let code = self.read_code()?;
        self.value_with(code)
    }

    /// Enters a compound or described value, enforcing [`MAX_DEPTH`].
    #[inline]
    pub(crate) fn enter(&mut self) -> Result<(), DecodeError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(DecodeError::TooDeep { limit: MAX_DEPTH });
        }
        Ok(())
    }

    #[inline]
    pub(crate) fn leave(&mut self) {
        self.depth -= 1;
    }

    /// Reads a list/map/array header for `code`: returns (count, end offset, saved limit)
    /// and narrows the limit to the compound. Every element takes at least one byte
    /// (arrays: their zero-width elements are re-encoded wider), so a count above the
    /// bytes left is refused before anything is allocated.
    pub(crate) fn open_compound(&mut self, code: u8) -> Result<(u32, usize, usize), DecodeError> {
        self.enter()?;
        let small = matches!(code, fc::LIST8 | fc::MAP8 | fc::ARRAY8);
        let size = self.length(small)?;
        let end = self.pos + size;
        let saved = self.limit;
        self.limit = end;
        let count = if small {
            self.u8()? as u32
        } else {
            self.u32()?
        };
        if count as usize > self.remaining() {
            return Err(DecodeError::LengthOverRemaining {
                declared: count as usize,
                remaining: self.remaining(),
            });
        }
        Ok((count, end, saved))
    }

    /// Leaves a compound opened by [`Self::open_compound`], checking it was used exactly.
    pub(crate) fn close_compound(&mut self, end: usize, saved: usize) -> Result<(), DecodeError> {
        if self.pos != end {
            return Err(DecodeError::SizeMismatch {
                declared: end,
                used: self.pos,
            });
        }
        self.limit = saved;
        self.leave();
        Ok(())
    }

    /// Reads a descriptor (after the 0x00 constructor): a ulong or a symbol.
    pub fn read_descriptor(&mut self) -> Result<Descriptor, DecodeError> {
        match self.read_code()? {
            fc::SMALL_ULONG => Ok(Descriptor::Code(self.u8()? as u64)),
            fc::ULONG => Ok(Descriptor::Code(self.u64()?)),
            fc::ULONG0 => Ok(Descriptor::Code(0)),
            code @ (fc::SYM8 | fc::SYM32) => {
                let data = self.sized_data(code)?;
                Ok(Descriptor::Symbol(Symbol(Str::from_utf8(data)?)))
            }
            other => Err(DecodeError::BadDescriptor(other)),
        }
    }

    /// Reads the data of a value whose format code `code` was just read.
    pub(crate) fn value_with(&mut self, code: u8) -> Result<Value, DecodeError> {
        Ok(match code {
            fc::DESCRIBED => {
                self.enter()?;
                let descriptor = self.read_descriptor()?;
                let value = self.read_value()?;
                self.leave();
                Value::Described(Box::new(Described { descriptor, value }))
            }
            fc::NULL => Value::Null,
            fc::TRUE => Value::Bool(true),
            fc::FALSE => Value::Bool(false),
            fc::BOOLEAN => match self.u8()? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => {
                    return Err(DecodeError::InvalidValue {
                        field: "boolean",
                        value: b.to_string(),
                    })
                }
            },
            fc::UBYTE => Value::Ubyte(self.u8()?),
            fc::USHORT => Value::Ushort(self.u16()?),
            fc::UINT => Value::Uint(self.u32()?),
            fc::SMALL_UINT => Value::Uint(self.u8()? as u32),
            fc::UINT0 => Value::Uint(0),
            fc::ULONG => Value::Ulong(self.u64()?),
            fc::SMALL_ULONG => Value::Ulong(self.u8()? as u64),
            fc::ULONG0 => Value::Ulong(0),
            fc::BYTE => Value::Byte(self.u8()? as i8),
            fc::SHORT => Value::Short(self.u16()? as i16),
            fc::INT => Value::Int(self.u32()? as i32),
            fc::SMALL_INT => Value::Int(self.u8()? as i8 as i32),
            fc::LONG => Value::Long(self.u64()? as i64),
            fc::SMALL_LONG => Value::Long(self.u8()? as i8 as i64),
            fc::FLOAT => Value::Float(f32::from_bits(self.u32()?)),
            fc::DOUBLE => Value::Double(f64::from_bits(self.u64()?)),
            fc::DECIMAL32 => Value::Decimal32(self.fixed()?),
            fc::DECIMAL64 => Value::Decimal64(self.fixed()?),
            fc::DECIMAL128 => Value::Decimal128(self.fixed()?),
            fc::CHAR => {
                let c = self.u32()?;
                Value::Char(char::from_u32(c).ok_or(DecodeError::InvalidChar(c))?)
            }
            fc::TIMESTAMP => Value::Timestamp(Timestamp(self.u64()? as i64)),
            fc::UUID => Value::Uuid(self.fixed()?),
            fc::VBIN8 | fc::VBIN32 => Value::Binary(self.sized_data(code)?),
            fc::STR8 | fc::STR32 => Value::String(Str::from_utf8(self.sized_data(code)?)?),
            fc::SYM8 | fc::SYM32 => Value::Symbol(Symbol(Str::from_utf8(self.sized_data(code)?)?)),
            fc::LIST0 => Value::List(Vec::new()),
            fc::LIST8 | fc::LIST32 => {
                let (count, end, saved) = self.open_compound(code)?;
                let mut items = Vec::with_capacity(count as usize);
                for _ in 0..count {
                    items.push(self.read_value()?);
                }
                self.close_compound(end, saved)?;
                Value::List(items)
            }
            fc::MAP8 | fc::MAP32 => {
                let (count, end, saved) = self.open_compound(code)?;
                if count % 2 != 0 {
                    return Err(DecodeError::OddMapCount(count));
                }
                let mut pairs = Vec::with_capacity(count as usize / 2);
                for _ in 0..count / 2 {
                    let k = self.read_value()?;
                    let v = self.read_value()?;
                    pairs.push((k, v));
                }
                self.close_compound(end, saved)?;
                Value::Map(pairs)
            }
            fc::ARRAY8 | fc::ARRAY32 => Value::Array(self.array_with(code)?),
            other => return Err(DecodeError::UnknownFormatCode(other)),
        })
    }

    fn array_with(&mut self, code: u8) -> Result<Array, DecodeError> {
        let (count, end, saved) = self.open_compound(code)?;
        let mut element_code = self.read_code()?;
        let descriptor = if element_code == fc::DESCRIBED {
            let d = self.read_descriptor()?;
            element_code = self.read_code()?;
            Some(d)
        } else {
            None
        };
        let element = element_type(element_code)?;
        if element == ElementType::Null && count > 0 {
            return Err(DecodeError::InvalidValue {
                field: "array",
                value: "array of nulls".into(),
            });
        }
        let mut items = Vec::with_capacity(count as usize);
        for _ in 0..count {
            items.push(self.value_with(element_code)?);
        }
        self.close_compound(end, saved)?;
        Array::new(descriptor, element, items).ok_or(DecodeError::InvalidValue {
            field: "array",
            value: "mixed element types".into(),
        })
    }

    /// Skips one value without building it (bounded by declared sizes, so it is cheap).
    pub fn skip_value(&mut self) -> Result<(), DecodeError> {
        let code = self.read_code()?;
        self.skip_with(code)
    }

    pub(crate) fn skip_with(&mut self, code: u8) -> Result<(), DecodeError> {
        let width = match code {
            fc::DESCRIBED => {
                self.enter()?;
                self.read_descriptor()?;
                self.skip_value()?;
                self.leave();
                return Ok(());
            }
            fc::NULL | fc::TRUE | fc::FALSE | fc::UINT0 | fc::ULONG0 | fc::LIST0 => 0,
            fc::BOOLEAN
            | fc::UBYTE
            | fc::SMALL_UINT
            | fc::SMALL_ULONG
            | fc::BYTE
            | fc::SMALL_INT
            | fc::SMALL_LONG => 1,
            fc::USHORT | fc::SHORT => 2,
            fc::UINT | fc::INT | fc::FLOAT | fc::DECIMAL32 | fc::CHAR => 4,
            fc::ULONG | fc::LONG | fc::DOUBLE | fc::DECIMAL64 | fc::TIMESTAMP => 8,
            fc::DECIMAL128 | fc::UUID => 16,
            fc::VBIN8 | fc::STR8 | fc::SYM8 | fc::LIST8 | fc::MAP8 | fc::ARRAY8 => {
                self.length(true)?
            }
            fc::VBIN32 | fc::STR32 | fc::SYM32 | fc::LIST32 | fc::MAP32 | fc::ARRAY32 => {
                self.length(false)?
            }
            other => return Err(DecodeError::UnknownFormatCode(other)),
        };
        self.need(width)?;
        self.pos += width;
        Ok(())
    }
}

/// The element type an array constructor names.
fn element_type(code: u8) -> Result<ElementType, DecodeError> {
    Ok(match code {
        fc::NULL => ElementType::Null,
        fc::TRUE | fc::FALSE | fc::BOOLEAN => ElementType::Bool,
        fc::UBYTE => ElementType::Ubyte,
        fc::USHORT => ElementType::Ushort,
        fc::UINT | fc::SMALL_UINT | fc::UINT0 => ElementType::Uint,
        fc::ULONG | fc::SMALL_ULONG | fc::ULONG0 => ElementType::Ulong,
        fc::BYTE => ElementType::Byte,
        fc::SHORT => ElementType::Short,
        fc::INT | fc::SMALL_INT => ElementType::Int,
        fc::LONG | fc::SMALL_LONG => ElementType::Long,
        fc::FLOAT => ElementType::Float,
        fc::DOUBLE => ElementType::Double,
        fc::DECIMAL32 => ElementType::Decimal32,
        fc::DECIMAL64 => ElementType::Decimal64,
        fc::DECIMAL128 => ElementType::Decimal128,
        fc::CHAR => ElementType::Char,
        fc::TIMESTAMP => ElementType::Timestamp,
        fc::UUID => ElementType::Uuid,
        fc::VBIN8 | fc::VBIN32 => ElementType::Binary,
        fc::STR8 | fc::STR32 => ElementType::String,
        fc::SYM8 | fc::SYM32 => ElementType::Symbol,
        fc::LIST0 | fc::LIST8 | fc::LIST32 => ElementType::List,
        fc::MAP8 | fc::MAP32 => ElementType::Map,
        fc::ARRAY8 | fc::ARRAY32 => ElementType::Array,
        other => return Err(DecodeError::UnknownFormatCode(other)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(bytes: &'static [u8]) -> Result<Value, DecodeError> {
        let mut d = Decoder::new(Bytes::from_static(bytes));
        let v = d.read_value()?;
        d.finish()?;
        Ok(v)
    }

    #[test]
    fn reads_compact_and_wide_forms_alike() {
        assert_eq!(dec(&[0x43]), Ok(Value::Uint(0)));
        assert_eq!(dec(&[0x52, 9]), Ok(Value::Uint(9)));
        assert_eq!(dec(&[0x70, 0, 0, 0, 9]), Ok(Value::Uint(9)));
        assert_eq!(dec(&[0x54, 0xfe]), Ok(Value::Int(-2)));
        assert_eq!(
            dec(&[0xd0, 0, 0, 0, 6, 0, 0, 0, 2, 0x41, 0x40]),
            Ok(Value::List(vec![Value::Bool(true), Value::Null]))
        );
    }

    #[test]
    fn strings_are_slices_of_the_input() {
        let input = Bytes::from_static(&[0xa1, 3, b'a', b'b', b'c']);
        let mut d = Decoder::new(input.clone());
        let Value::String(s) = d.read_value().unwrap() else {
            panic!("not a string")
        };
        assert_eq!(s, "abc");
        assert_eq!(s.as_bytes().as_ptr(), input[2..].as_ptr());
    }

    #[test]
    fn truncated_input_is_an_error() {
        assert!(matches!(
            dec(&[0x70, 0, 0]),
            Err(DecodeError::Truncated { .. })
        ));
        assert!(matches!(
            dec(&[0xa1, 5, b'a']),
            Err(DecodeError::LengthOverRemaining { .. })
        ));
        assert!(matches!(dec(&[]), Err(DecodeError::Truncated { .. })));
    }

    #[test]
    fn unknown_constructor_is_an_error() {
        assert_eq!(dec(&[0x01]), Err(DecodeError::UnknownFormatCode(0x01)));
        assert_eq!(dec(&[0xa2, 0]), Err(DecodeError::UnknownFormatCode(0xa2)));
    }

    #[test]
    fn huge_counts_fail_before_allocating() {
        // list32 claiming 4 billion elements in 4 bytes.
        assert!(matches!(
            dec(&[0xd0, 0, 0, 0, 4, 0xff, 0xff, 0xff, 0xff]),
            Err(DecodeError::LengthOverRemaining { .. })
        ));
        // array32 of `true` elements (zero width) with a huge count.
        assert!(matches!(
            dec(&[0xf0, 0, 0, 0, 5, 0xff, 0xff, 0xff, 0xff, 0x41]),
            Err(DecodeError::LengthOverRemaining { .. })
        ));
    }

    #[test]
    fn deep_nesting_is_refused() {
        let mut bomb = Vec::new();
        for _ in 0..10_000 {
            bomb.extend_from_slice(&[0x00, 0x53, 0x01]);
        }
        bomb.push(0x40);
        let mut d = Decoder::new(Bytes::from(bomb.clone()));
        assert_eq!(
            d.read_value(),
            Err(DecodeError::TooDeep { limit: MAX_DEPTH })
        );
        let mut d = Decoder::new(Bytes::from(bomb));
        assert_eq!(
            d.skip_value(),
            Err(DecodeError::TooDeep { limit: MAX_DEPTH })
        );
        // Lists nested 100 deep, each exactly sized.
        let mut lists = vec![0x40u8];
        for _ in 0..100 {
            let mut outer = vec![0xd0];
            outer.extend_from_slice(&(lists.len() as u32 + 4).to_be_bytes());
            outer.extend_from_slice(&1u32.to_be_bytes());
            outer.extend_from_slice(&lists);
            lists = outer;
        }
        let mut d = Decoder::new(Bytes::from(lists));
        assert_eq!(
            d.read_value(),
            Err(DecodeError::TooDeep { limit: MAX_DEPTH })
        );
    }

    #[test]
    fn list_elements_must_fill_the_declared_size() {
        assert!(matches!(
            dec(&[0xc0, 3, 1, 0x41, 0x41]),
            Err(DecodeError::SizeMismatch { .. })
        ));
    }

    #[test]
    fn maps_need_an_even_count() {
        assert_eq!(dec(&[0xc1, 2, 1, 0x40]), Err(DecodeError::OddMapCount(1)));
    }

    #[test]
    fn skip_passes_over_a_value() {
        let mut d = Decoder::new(Bytes::from_static(&[0xc0, 3, 2, 0x41, 0x40, 0x52, 7]));
        d.skip_value().unwrap();
        assert_eq!(d.read_value(), Ok(Value::Uint(7)));
    }
}
