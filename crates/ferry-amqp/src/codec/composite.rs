//! Composite types (performatives, termini, delivery states, sections) are described
//! lists. [`CompositeWriter`] writes one field by field and drops trailing nulls;
//! [`Fields`] reads one field by field, treating missing trailing fields as null.

use bytes::BytesMut;

use super::encode::{begin_compound, finish_compound, put_described_code, put_null};
use super::format_code as fc;
use super::{Decode, Decoder, Encode};
use crate::descriptor;
use crate::error::DecodeError;

/// Writes a described list: `0x00 <descriptor> list(fields)`, omitting trailing nulls and
/// choosing list0/list8/list32 by size.
pub struct CompositeWriter<'a> {
    out: &'a mut BytesMut,
    start: usize,
    count: u32,
    kept_len: usize,
    kept_count: u32,
}

impl<'a> CompositeWriter<'a> {
    /// Starts the composite with numeric descriptor `code`.
    pub fn begin(out: &'a mut BytesMut, code: u64) -> Self {
        put_described_code(out, code);
        let start = begin_compound(out, fc::LIST32);
        let kept_len = out.len();
        CompositeWriter {
            out,
            start,
            count: 0,
            kept_len,
            kept_count: 0,
        }
    }

    fn keep(&mut self) {
        self.count += 1;
        self.kept_len = self.out.len();
        self.kept_count = self.count;
    }

    fn null(&mut self) {
        put_null(self.out);
        self.count += 1;
    }

    /// A field that is always present.
    pub fn value<T: Encode + ?Sized>(&mut self, v: &T) -> &mut Self {
        v.encode(self.out);
        self.keep();
        self
    }

    /// An optional field: `None` is null.
    pub fn field<T: Encode>(&mut self, v: Option<&T>) -> &mut Self {
        match v {
            Some(v) => self.value(v),
            None => {
                self.null();
                self
            }
        }
    }

    /// A field with a default: written as null when it equals the default.
    pub fn or_default<T: Encode + PartialEq>(&mut self, v: &T, default: T) -> &mut Self {
        self.field((*v != default).then_some(v))
    }

    /// A multiple-valued or map field: written as null when empty.
    pub fn non_empty<T>(&mut self, v: &Vec<T>) -> &mut Self
    where
        Vec<T>: Encode,
    {
        self.field((!v.is_empty()).then_some(v))
    }

    /// Ends the composite (dropping trailing nulls).
    pub fn finish(self) {
        self.out.truncate(self.kept_len);
        finish_compound(self.out, self.start, self.kept_count);
    }
}

/// Reads the fields of a described list in order. Missing trailing fields read as null;
/// fields beyond those the type defines are skipped.
pub struct Fields<'a> {
    dec: &'a mut Decoder,
    left: u32,
    end: usize,
    saved: usize,
    opened: bool,
    type_name: &'static str,
}

impl<'a> Fields<'a> {
    /// Reads the descriptor of a composite whose constructor `code` was just read, checks
    /// it is `expected` (numeric or symbolic form), and opens its list.
    pub fn described(
        dec: &'a mut Decoder,
        code: u8,
        expected: u64,
        type_name: &'static str,
    ) -> Result<Self, DecodeError> {
        if code != fc::DESCRIBED {
            return Err(DecodeError::UnexpectedType {
                field: type_name,
                expected: "described list",
                found: code,
            });
        }
        let found = descriptor::read_code(dec)?;
        if found != expected {
            return Err(DecodeError::UnexpectedDescriptor {
                expected: type_name,
                found: format!("0x{found:x}"),
            });
        }
        let list_code = dec.read_code()?;
        Fields::list(dec, list_code, type_name)
    }

    /// Opens the list whose constructor `code` was just read (after the descriptor).
    pub fn list(
        dec: &'a mut Decoder,
        code: u8,
        type_name: &'static str,
    ) -> Result<Self, DecodeError> {
        match code {
            fc::LIST0 => Ok(Fields {
                dec,
                left: 0,
                end: 0,
                saved: 0,
                opened: false,
                type_name,
            }),
            fc::LIST8 | fc::LIST32 => {
                let (left, end, saved) = dec.open_compound(code)?;
                Ok(Fields {
                    dec,
                    left,
                    end,
                    saved,
                    opened: true,
                    type_name,
                })
            }
            other => Err(DecodeError::UnexpectedType {
                field: type_name,
                expected: "list",
                found: other,
            }),
        }
    }

    /// The next field's constructor, or `None` if the field is null or absent.
    #[inline]
    fn next_code(&mut self) -> Result<Option<u8>, DecodeError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        match self.dec.read_code()? {
            fc::NULL => Ok(None),
            code => Ok(Some(code)),
        }
    }

    /// The next field, `None` when null or absent.
    #[inline]
    pub fn optional<T: Decode>(&mut self, name: &'static str) -> Result<Option<T>, DecodeError> {
        match self.next_code()? {
            None => Ok(None),
            Some(code) => T::decode_with(self.dec, code)
                .map(Some)
                .map_err(|e| in_field(e, name)),
        }
    }

    /// The next field, which must be present.
    #[inline]
    pub fn required<T: Decode>(&mut self, name: &'static str) -> Result<T, DecodeError> {
        self.optional(name)?.ok_or(DecodeError::MissingField {
            type_name: self.type_name,
            field: name,
        })
    }

    /// The next field, or `default` when null or absent.
    #[inline]
    pub fn or_default<T: Decode>(
        &mut self,
        name: &'static str,
        default: T,
    ) -> Result<T, DecodeError> {
        Ok(self.optional(name)?.unwrap_or(default))
    }

    /// The next multiple-valued or map field, empty when null or absent.
    #[inline]
    pub fn or_empty<T>(&mut self, name: &'static str) -> Result<Vec<T>, DecodeError>
    where
        Vec<T>: Decode,
    {
        Ok(self.optional(name)?.unwrap_or_default())
    }

    /// Ends the composite: skips fields this codec does not know, checks the list size.
    pub fn finish(self) -> Result<(), DecodeError> {
        if !self.opened {
            return Ok(());
        }
        for _ in 0..self.left {
            self.dec.skip_value()?;
        }
        self.dec.close_compound(self.end, self.saved)
    }
}

fn in_field(e: DecodeError, name: &'static str) -> DecodeError {
    match e {
        DecodeError::UnexpectedType {
            expected, found, ..
        } => DecodeError::UnexpectedType {
            field: name,
            expected,
            found,
        },
        DecodeError::InvalidValue { value, .. } => DecodeError::InvalidValue { field: name, value },
        other => other,
    }
}
