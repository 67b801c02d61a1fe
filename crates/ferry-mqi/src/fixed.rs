//! Fixed-width, blank-padded character fields, as MQ stores names in its structures.
//!
//! MQ's character fields (queue names, formats, user ids) have a fixed width and are padded
//! with blanks, never NUL-terminated. Keeping that representation makes a descriptor `Copy`,
//! free of heap allocations on the message hot path, and byte-compatible with MQMD.

use std::fmt;

/// A character field of exactly `N` bytes, padded with blanks (0x20).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FixedStr<const N: usize>([u8; N]);

impl<const N: usize> FixedStr<N> {
    /// The all-blank value, which MQ treats as "not set".
    pub const BLANK: Self = Self([b' '; N]);

    /// Builds a field from `s`; fails when `s` is longer than `N` bytes.
    pub fn new(s: &str) -> Result<Self, crate::NameError> {
        if s.len() > N {
            return Err(crate::NameError::TooLong {
                max: N,
                len: s.len(),
            });
        }
        let mut b = [b' '; N];
        b[..s.len()].copy_from_slice(s.as_bytes());
        Ok(Self(b))
    }

    /// Builds a field from `s`, cutting it at `N` bytes (on a char boundary).
    pub fn truncating(s: &str) -> Self {
        let mut end = s.len().min(N);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        let mut b = [b' '; N];
        b[..end].copy_from_slice(&s.as_bytes()[..end]);
        Self(b)
    }

    /// Wraps raw bytes as found on the wire.
    pub const fn from_bytes(b: [u8; N]) -> Self {
        Self(b)
    }

    /// The raw, padded bytes.
    pub const fn as_bytes(&self) -> &[u8; N] {
        &self.0
    }

    /// The value without trailing blanks (and without trailing NULs, which C programs leave).
    pub fn as_str(&self) -> &str {
        let end = self
            .0
            .iter()
            .rposition(|&c| c != b' ' && c != 0)
            .map_or(0, |p| p + 1);
        std::str::from_utf8(&self.0[..end]).unwrap_or("")
    }

    /// True when the field holds only blanks (or NULs).
    pub fn is_blank(&self) -> bool {
        self.0.iter().all(|&c| c == b' ' || c == 0)
    }
}

impl<const N: usize> Default for FixedStr<N> {
    fn default() -> Self {
        Self::BLANK
    }
}

impl<const N: usize> fmt::Debug for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

impl<const N: usize> fmt::Display for FixedStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<const N: usize> serde::Serialize for FixedStr<N> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de, const N: usize> serde::Deserialize<'de> for FixedStr<N> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_and_trims() {
        let f = FixedStr::<8>::new("MQSTR").unwrap();
        assert_eq!(f.as_bytes(), b"MQSTR   ");
        assert_eq!(f.as_str(), "MQSTR");
        assert!(!f.is_blank());
        assert!(FixedStr::<8>::BLANK.is_blank());
    }

    #[test]
    fn refuses_overlong() {
        assert!(FixedStr::<4>::new("TOOLONG").is_err());
        assert_eq!(FixedStr::<4>::truncating("TOOLONG").as_str(), "TOOL");
    }
}
