//! Bounds-checked little-endian primitives: the only place that touches raw offsets.
//!
//! [`Reader`] walks a frozen payload and hands out sub-slices as `Bytes` (zero-copy);
//! every read checks the remaining length first, so no input can make it panic. The
//! `put_*` functions append the same encodings to a `BytesMut`.

use bytes::{BufMut, Bytes, BytesMut};
use ferry_mqi::FixedStr;

use crate::WireError;

/// A cursor over one payload.
pub(crate) struct Reader<'a> {
    buf: &'a Bytes,
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts at the beginning of `buf`.
    pub(crate) fn new(buf: &'a Bytes) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.remaining() < n {
            return Err(WireError::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// An array of `N` raw bytes.
    pub(crate) fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    /// One byte.
    pub(crate) fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }

    /// A little-endian u16.
    pub(crate) fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(self.array()?))
    }

    /// A little-endian u32.
    pub(crate) fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    /// A little-endian u64.
    pub(crate) fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A little-endian i32.
    pub(crate) fn i32(&mut self) -> Result<i32, WireError> {
        Ok(i32::from_le_bytes(self.array()?))
    }

    /// A boolean byte: 0 or 1, anything else refused.
    pub(crate) fn bool(&mut self, field: &'static str) -> Result<bool, WireError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(WireError::InvalidValue {
                field,
                value: i64::from(v),
            }),
        }
    }

    /// A fixed-width MQ character field: u8 length + bytes, padded back with blanks.
    /// Never allocates.
    pub(crate) fn fixed<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<FixedStr<N>, WireError> {
        let len = usize::from(self.u8()?);
        if len > N {
            return Err(WireError::NameTooLong { field, len, max: N });
        }
        let raw = self.take(len)?;
        if std::str::from_utf8(raw).is_err() {
            return Err(WireError::InvalidUtf8 { field });
        }
        let mut b = [b' '; N];
        b[..len].copy_from_slice(raw);
        Ok(FixedStr::from_bytes(b))
    }

    /// A UTF-8 text: u32 length + bytes. The length is checked against the bytes present
    /// before anything is allocated.
    pub(crate) fn string(&mut self, field: &'static str) -> Result<String, WireError> {
        let len = self.u32()? as usize;
        let raw = self.take(len)?;
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(WireError::InvalidUtf8 { field }),
        }
    }

    /// A UTF-8 text of at most `max` bytes: u32 length + bytes. A longer length is
    /// refused ([`WireError::NameTooLong`]) before its bytes are looked at.
    pub(crate) fn bounded_string(
        &mut self,
        field: &'static str,
        max: usize,
    ) -> Result<String, WireError> {
        let len = self.u32()? as usize;
        if len > max {
            return Err(WireError::NameTooLong { field, len, max });
        }
        let raw = self.take(len)?;
        match std::str::from_utf8(raw) {
            Ok(s) => Ok(s.to_owned()),
            Err(_) => Err(WireError::InvalidUtf8 { field }),
        }
    }

    /// Opaque bytes: u32 length + bytes, as a zero-copy slice of the payload.
    pub(crate) fn bytes(&mut self) -> Result<Bytes, WireError> {
        let len = self.u32()? as usize;
        if self.remaining() < len {
            return Err(WireError::Truncated);
        }
        let b = self.buf.slice(self.pos..self.pos + len);
        self.pos += len;
        Ok(b)
    }

    /// An element count, with a capacity safe to pre-allocate: never more than the bytes
    /// left could hold at `min_size` bytes per element.
    pub(crate) fn count(&mut self, min_size: usize) -> Result<(usize, usize), WireError> {
        let n = self.u32()? as usize;
        let cap = n.min(self.remaining() / min_size.max(1));
        Ok((n, cap))
    }

    /// Everything left, as a zero-copy slice of the payload.
    pub(crate) fn rest(&mut self) -> Bytes {
        let b = self.buf.slice(self.pos..);
        self.pos = self.buf.len();
        b
    }

    /// Checks that the whole payload was consumed.
    pub(crate) fn finish(self) -> Result<(), WireError> {
        match self.remaining() {
            0 => Ok(()),
            extra => Err(WireError::TrailingBytes { extra }),
        }
    }
}

/// Appends a fixed-width field as u8 length + bytes without trailing blanks (lossless:
/// decoding pads with blanks again).
pub(crate) fn put_fixed<const N: usize>(out: &mut BytesMut, s: &FixedStr<N>) {
    let b = s.as_bytes();
    let len = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
    // N <= 255 for every MQ field; a longer field would be a programming error caught in
    // tests, so clamp rather than panic.
    let len = len.min(usize::from(u8::MAX));
    out.put_u8(len as u8);
    out.put_slice(&b[..len]);
}

/// Appends a text as u32 length + UTF-8 bytes.
pub(crate) fn put_string(out: &mut BytesMut, s: &str) -> Result<(), WireError> {
    let len = u32::try_from(s.len()).map_err(|_| WireError::FrameTooLarge {
        len: s.len() as u64,
        max: u64::from(u32::MAX),
    })?;
    out.put_u32_le(len);
    out.put_slice(s.as_bytes());
    Ok(())
}

/// Appends a text of at most `max` bytes as u32 length + UTF-8 bytes; a longer one is
/// refused as the decoder refuses it ([`Reader::bounded_string`]).
pub(crate) fn put_bounded_string(
    out: &mut BytesMut,
    s: &str,
    field: &'static str,
    max: usize,
) -> Result<(), WireError> {
    if s.len() > max {
        return Err(WireError::NameTooLong {
            field,
            len: s.len(),
            max,
        });
    }
    put_string(out, s)
}

/// Appends opaque bytes as u32 length + bytes.
pub(crate) fn put_bytes(out: &mut BytesMut, b: &[u8]) -> Result<(), WireError> {
    let len = u32::try_from(b.len()).map_err(|_| WireError::FrameTooLarge {
        len: b.len() as u64,
        max: u64::from(u32::MAX),
    })?;
    out.put_u32_le(len);
    out.put_slice(b);
    Ok(())
}

/// Appends an element count.
pub(crate) fn put_count(out: &mut BytesMut, n: usize) -> Result<(), WireError> {
    let n32 = u32::try_from(n).map_err(|_| WireError::FrameTooLarge {
        len: n as u64,
        max: u64::from(u32::MAX),
    })?;
    out.put_u32_le(n32);
    Ok(())
}
