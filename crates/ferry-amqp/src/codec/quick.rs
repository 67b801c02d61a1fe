//! A reader and a writer for composites in the compact encoding (a `smallulong` descriptor, a
//! `list0` or `list8`, and each field as one of a few common constructors), for the fast
//! paths of the types every message costs (the transfer, disposition and flow
//! performatives, the header and properties sections).
//!
//! The writer ([`Writer`]) produces exactly the bytes [`super::CompositeWriter`] does
//! for the values it takes (a caller checks they fit) without its generality: no
//! list32 header written then shrunk, no growth checks per byte.
//!
//! Every reader method answers `None` for anything outside that set: not an error, but "let
//! the general decoder read this", so a fast path can only ever accept what the general
//! decoder accepts. Each fast path must read what it accepts exactly as the general
//! decoder does; [`crate::fuzzing`] checks that on every input it is given.

use std::ops::Range;

use super::format_code as fc;
use crate::descriptor;
use crate::performative::DeliveryState;
use crate::value::Timestamp;

/// The fields of one `list0` or `list8`: `left` of them still to read before `end`;
/// fields past the count read as null, as in the general decoder.
pub(crate) struct List<'a> {
    b: &'a [u8],
    pos: usize,
    end: usize,
    left: u8,
}

impl<'a> List<'a> {
    /// Opens the list of a composite whose `0x53 <descriptor>` starts at `b[at]`; the
    /// descriptor is `b[at + 1]` and left for the caller to check.
    #[inline]
    pub(crate) fn open(b: &'a [u8], at: usize) -> Option<Self> {
        match *b.get(at + 2)? {
            fc::LIST0 => Some(List {
                b,
                pos: at + 3,
                end: at + 3,
                left: 0,
            }),
            fc::LIST8 => {
                let size = usize::from(*b.get(at + 3)?);
                // The size counts the bytes after itself (the count and the fields).
                let end = at + 4 + size;
                if size == 0 || end > b.len() {
                    return None;
                }
                Some(List {
                    b,
                    pos: at + 5,
                    end,
                    left: b[at + 4],
                })
            }
            _ => None,
        }
    }

    /// Opens the list of a section or composite whose constructor `code` was just read,
    /// `b` being what follows it: `None` unless `code` is `described` and `b` starts with
    /// `descriptor` as a `smallulong`.
    #[inline]
    pub(crate) fn described(b: &'a [u8], code: u8, descriptor: u64) -> Option<Self> {
        let matches = code == fc::DESCRIBED
            && b.first() == Some(&fc::SMALL_ULONG)
            && b.get(1).map(|&d| u64::from(d)) == Some(descriptor);
        if matches {
            List::open(b, 0)
        } else {
            None
        }
    }

    /// Ends the list: where it ends in `b`, unless it has fields beyond those read or a
    /// size that does not match (the general decoder's business).
    #[inline]
    pub(crate) fn finish(self) -> Option<usize> {
        (self.left == 0 && self.pos == self.end).then_some(self.end)
    }

    /// The next field's constructor (null once the list has no more fields).
    #[inline]
    pub(crate) fn code(&mut self) -> Option<u8> {
        if self.left == 0 {
            return Some(fc::NULL);
        }
        self.left -= 1;
        let c = *self.b.get(self.pos).filter(|_| self.pos < self.end)?;
        self.pos += 1;
        Some(c)
    }

    /// `n` bytes of data, within the list.
    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Option<&[u8]> {
        let data = self
            .b
            .get(self.pos..self.pos + n)
            .filter(|_| self.pos + n <= self.end)?;
        self.pos += n;
        Some(data)
    }

    #[inline]
    pub(crate) fn uint_with(&mut self, code: u8) -> Option<u32> {
        match code {
            fc::UINT0 => Some(0),
            fc::SMALL_UINT => self.take(1).map(|d| u32::from(d[0])),
            fc::UINT => self
                .take(4)
                .map(|d| u32::from_be_bytes([d[0], d[1], d[2], d[3]])),
            _ => None,
        }
    }

    /// A required uint.
    #[inline]
    pub(crate) fn uint(&mut self) -> Option<u32> {
        let code = self.code()?;
        self.uint_with(code)
    }

    /// An optional uint: `Some(None)` for null.
    #[inline]
    pub(crate) fn optional_uint(&mut self) -> Option<Option<u32>> {
        match self.code()? {
            fc::NULL => Some(None),
            code => self.uint_with(code).map(Some),
        }
    }

    /// A required boolean.
    #[inline]
    pub(crate) fn bool(&mut self) -> Option<bool> {
        match self.code()? {
            fc::TRUE => Some(true),
            fc::FALSE => Some(false),
            _ => None,
        }
    }

    /// An optional boolean: `Some(None)` for null.
    #[inline]
    pub(crate) fn optional_bool(&mut self) -> Option<Option<bool>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::TRUE => Some(Some(true)),
            fc::FALSE => Some(Some(false)),
            _ => None,
        }
    }

    /// A boolean whose default is false.
    #[inline]
    pub(crate) fn bool_or_false(&mut self) -> Option<bool> {
        self.optional_bool().map(|b| b.unwrap_or(false))
    }

    /// The span of a `str8`/`sym8`/`vbin8` field's data (after its `code`), in `b`.
    #[inline]
    fn span8(&mut self) -> Option<Range<usize>> {
        let len = usize::from(*self.take(1)?.first()?);
        let start = self.pos;
        self.take(len)?;
        Some(start..start + len)
    }

    /// An optional field of constructor `want` (one of the 8-bit sized ones): its
    /// data's span in `b`.
    #[inline]
    pub(crate) fn optional_sized(&mut self, want: u8) -> Option<Option<Range<usize>>> {
        match self.code()? {
            fc::NULL => Some(None),
            c if c == want => self.span8().map(Some),
            _ => None,
        }
    }

    /// An optional `vbin8`: its data's span in `b`.
    #[inline]
    pub(crate) fn optional_binary(&mut self) -> Option<Option<Range<usize>>> {
        self.optional_sized(fc::VBIN8)
    }

    /// An optional message-id or correlation-id: `str8`, `vbin8`, `smallulong` or
    /// `ulong` (the constructor and the data's span or value).
    #[inline]
    pub(crate) fn optional_id(&mut self) -> Option<Option<QuickId>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::STR8 => self.span8().map(|s| Some(QuickId::String(s))),
            fc::VBIN8 => self.span8().map(|s| Some(QuickId::Binary(s))),
            fc::SMALL_ULONG => self.take(1).map(|d| Some(QuickId::Ulong(u64::from(d[0])))),
            fc::ULONG0 => Some(Some(QuickId::Ulong(0))),
            _ => None,
        }
    }

    /// An optional timestamp.
    #[inline]
    pub(crate) fn optional_timestamp(&mut self) -> Option<Option<Timestamp>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::TIMESTAMP => self.take(8).map(|d| {
                let mut a = [0u8; 8];
                a.copy_from_slice(d);
                Some(Timestamp(i64::from_be_bytes(a)))
            }),
            _ => None,
        }
    }

    /// A `ubyte` with a default for null.
    #[inline]
    pub(crate) fn ubyte_or(&mut self, default: u8) -> Option<u8> {
        match self.code()? {
            fc::NULL => Some(default),
            fc::UBYTE => self.take(1).map(|d| d[0]),
            _ => None,
        }
    }

    /// A uint with a default for null.
    #[inline]
    pub(crate) fn uint_or(&mut self, default: u32) -> Option<u32> {
        self.optional_uint().map(|v| v.unwrap_or(default))
    }

    /// A field this reader only knows as null (read as the type's absent value).
    #[inline]
    pub(crate) fn null<T>(&mut self) -> Option<T>
    where
        T: Absent,
    {
        (self.code()? == fc::NULL).then(T::absent)
    }

    /// An optional delivery state that, when present, is `accepted` as a `list0`.
    #[inline]
    pub(crate) fn optional_accepted(&mut self) -> Option<Option<DeliveryState>> {
        match self.code()? {
            fc::NULL => Some(None),
            fc::DESCRIBED => {
                let d = self.take(3)?;
                (d[0] == fc::SMALL_ULONG
                    && u64::from(d[1]) == descriptor::ACCEPTED
                    && d[2] == fc::LIST0)
                    .then_some(Some(DeliveryState::Accepted))
            }
            _ => None,
        }
    }
}

/// A message-id or correlation-id as the quick reader found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QuickId {
    Ulong(u64),
    Binary(Range<usize>),
    String(Range<usize>),
}

/// What a field read as null stands for.
pub(crate) trait Absent {
    fn absent() -> Self;
}

impl<T> Absent for Option<T> {
    fn absent() -> Self {
        None
    }
}

impl Absent for () {
    fn absent() -> Self {}
}

/// Writes a composite's fields into a fixed buffer of `N` bytes, dropping trailing
/// nulls as [`super::CompositeWriter`] does. Fields that do not fit, or more than a
/// list8 holds, make [`Writer::finish`] write nothing and say so: the caller then uses
/// the general writer.
pub(crate) struct Writer<const N: usize> {
    buf: [u8; N],
    len: usize,
    count: u8,
    kept_len: usize,
    kept_count: u8,
    overflow: bool,
}

impl<const N: usize> Writer<N> {
    #[inline]
    pub(crate) fn new() -> Self {
        Writer {
            buf: [0; N],
            len: 0,
            count: 0,
            kept_len: 0,
            kept_count: 0,
            overflow: false,
        }
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        match self.buf.get_mut(self.len..self.len + bytes.len()) {
            Some(room) => {
                room.copy_from_slice(bytes);
                self.len += bytes.len();
            }
            None => self.overflow = true,
        }
    }

    #[inline]
    fn keep(&mut self) {
        self.count += 1;
        self.kept_len = self.len;
        self.kept_count = self.count;
    }

    /// A null field.
    #[inline]
    pub(crate) fn null(&mut self) -> &mut Self {
        self.put(&[fc::NULL]);
        self.count += 1;
        self
    }

    /// A uint, in its smallest encoding.
    #[inline]
    pub(crate) fn uint(&mut self, v: u32) -> &mut Self {
        match v {
            0 => self.put(&[fc::UINT0]),
            1..=255 => self.put(&[fc::SMALL_UINT, v as u8]),
            _ => {
                let b = v.to_be_bytes();
                self.put(&[fc::UINT, b[0], b[1], b[2], b[3]]);
            }
        }
        self.keep();
        self
    }

    /// An optional uint.
    #[inline]
    pub(crate) fn optional_uint(&mut self, v: Option<u32>) -> &mut Self {
        match v {
            Some(v) => self.uint(v),
            None => self.null(),
        }
    }

    /// A boolean.
    #[inline]
    pub(crate) fn bool(&mut self, v: bool) -> &mut Self {
        self.put(&[if v { fc::TRUE } else { fc::FALSE }]);
        self.keep();
        self
    }

    /// An optional boolean.
    #[inline]
    pub(crate) fn optional_bool(&mut self, v: Option<bool>) -> &mut Self {
        match v {
            Some(v) => self.bool(v),
            None => self.null(),
        }
    }

    /// A boolean whose default is false (written as null when false).
    #[inline]
    pub(crate) fn bool_or_false(&mut self, v: bool) -> &mut Self {
        if v {
            self.bool(true)
        } else {
            self.null()
        }
    }

    /// Data with an 8-bit size and constructor `code8` (vbin8, str8, sym8), or an
    /// overflow when longer than 255 bytes.
    #[inline]
    pub(crate) fn sized8(&mut self, code8: u8, data: &[u8]) -> &mut Self {
        match u8::try_from(data.len()) {
            Ok(n) => {
                self.put(&[code8, n]);
                self.put(data);
            }
            Err(_) => self.overflow = true,
        }
        self.keep();
        self
    }

    /// Optional data with an 8-bit size (see [`Self::sized8`]).
    #[inline]
    pub(crate) fn optional_sized8(&mut self, code8: u8, data: Option<&[u8]>) -> &mut Self {
        match data {
            Some(data) => self.sized8(code8, data),
            None => self.null(),
        }
    }

    /// An optional `vbin8`.
    #[inline]
    pub(crate) fn optional_binary8(&mut self, v: Option<&[u8]>) -> &mut Self {
        self.optional_sized8(fc::VBIN8, v)
    }

    /// A ulong, in its smallest encoding.
    #[inline]
    pub(crate) fn ulong(&mut self, v: u64) -> &mut Self {
        match v {
            0 => self.put(&[fc::ULONG0]),
            1..=255 => self.put(&[fc::SMALL_ULONG, v as u8]),
            _ => {
                self.put(&[fc::ULONG]);
                self.put(&v.to_be_bytes());
            }
        }
        self.keep();
        self
    }

    /// A value of a fixed-size type: its constructor and data.
    #[inline]
    pub(crate) fn fixed(&mut self, code: u8, data: &[u8]) -> &mut Self {
        self.put(&[code]);
        self.put(data);
        self.keep();
        self
    }

    /// An optional timestamp.
    #[inline]
    pub(crate) fn optional_timestamp(&mut self, v: Option<Timestamp>) -> &mut Self {
        match v {
            Some(t) => self.fixed(fc::TIMESTAMP, &t.0.to_be_bytes()),
            None => self.null(),
        }
    }

    /// A ubyte, null when it is `default`.
    #[inline]
    pub(crate) fn ubyte_or(&mut self, v: u8, default: u8) -> &mut Self {
        if v == default {
            self.null()
        } else {
            self.fixed(fc::UBYTE, &[v])
        }
    }

    /// A uint, null when it is `default`.
    #[inline]
    pub(crate) fn uint_or(&mut self, v: u32, default: u32) -> &mut Self {
        if v == default {
            self.null()
        } else {
            self.uint(v)
        }
    }

    /// The `accepted` outcome (an empty described list).
    #[inline]
    pub(crate) fn accepted(&mut self) -> &mut Self {
        self.put(&[
            fc::DESCRIBED,
            fc::SMALL_ULONG,
            descriptor::ACCEPTED as u8,
            fc::LIST0,
        ]);
        self.keep();
        self
    }

    /// Appends the composite with `descriptor` (a small code) and the fields kept; false,
    /// with nothing written, when they did not fit (or need a list32).
    #[inline]
    #[must_use]
    pub(crate) fn finish(&self, descriptor: u8, out: &mut bytes::BytesMut) -> bool {
        use bytes::BufMut;
        // The general writer uses a list8 while the fields take fewer than 255 bytes.
        if self.overflow || self.kept_len >= 255 {
            return false;
        }
        if self.kept_count == 0 {
            out.put_slice(&[fc::DESCRIBED, fc::SMALL_ULONG, descriptor, fc::LIST0]);
            return true;
        }
        out.reserve(6 + self.kept_len);
        out.put_slice(&[
            fc::DESCRIBED,
            fc::SMALL_ULONG,
            descriptor,
            fc::LIST8,
            (self.kept_len + 1) as u8,
            self.kept_count,
        ]);
        out.put_slice(&self.buf[..self.kept_len]);
        true
    }
}
