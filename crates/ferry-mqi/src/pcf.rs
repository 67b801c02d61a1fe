//! Programmable Command Format (PCF) messages: MQ's self-describing administrative
//! message layout, here for the resource-monitoring publications on `$SYS` topics
//! (`ferry-monitoring` builds them, `ferry monitor` reads them).
//!
//! A PCF message is an MQCFH header (36 bytes: Type, StrucLength, Version, Command,
//! MsgSeqNumber, Control, CompCode, Reason, ParameterCount) followed by ParameterCount
//! parameter structures, each starting with its Type and StrucLength:
//!
//! | structure | Type | layout after Type, StrucLength |
//! |---|---|---|
//! | MQCFIN | 3 | Parameter, Value (32-bit) |
//! | MQCFST | 4 | Parameter, CodedCharSetId, StringLength, String padded to 4 bytes |
//! | MQCFIL | 5 | Parameter, Count, Values (32-bit each) |
//! | MQCFBS | 9 | Parameter, StringLength, String padded to 4 bytes |
//! | MQCFGR | 20 | Parameter, ParameterCount (the group's parameters follow it) |
//! | MQCFIN64 | 23 | Parameter, Reserved, Value (64-bit) |
//! | MQCFIL64 | 25 | Parameter, Count, Values (64-bit each) |
//!
//! Integers are in the message's encoding: [`Encoding::Native`] (MQENC_NATIVE on
//! x86-64 and ARM Linux, 546: little-endian) or [`Encoding::Normal`] (big-endian).
//! Decoding is total: any input either decodes or gives a [`PcfError`] naming the
//! offset; nothing is trusted (lengths, counts, nesting depth are all checked).

use thiserror::Error;

/// MQCFT_INTEGER: an MQCFIN parameter.
pub const MQCFT_INTEGER: i32 = 3;
/// MQCFT_STRING: an MQCFST parameter.
pub const MQCFT_STRING: i32 = 4;
/// MQCFT_INTEGER_LIST: an MQCFIL parameter.
pub const MQCFT_INTEGER_LIST: i32 = 5;
/// MQCFT_BYTE_STRING: an MQCFBS parameter.
pub const MQCFT_BYTE_STRING: i32 = 9;
/// MQCFT_GROUP: an MQCFGR parameter.
pub const MQCFT_GROUP: i32 = 20;
/// MQCFT_STATISTICS: the MQCFH Type of statistics messages and monitoring publications.
pub const MQCFT_STATISTICS: i32 = 21;
/// MQCFT_INTEGER64: an MQCFIN64 parameter.
pub const MQCFT_INTEGER64: i32 = 23;
/// MQCFT_INTEGER64_LIST: an MQCFIL64 parameter.
pub const MQCFT_INTEGER64_LIST: i32 = 25;
/// MQCFC_LAST: the last (here: only) message of a PCF reply set.
pub const MQCFC_LAST: i32 = 1;
/// MQFMT_ADMIN: the MQMD Format of a PCF message.
pub const FORMAT_ADMIN: &str = "MQADMIN ";
/// The CCSID the strings Ferry writes are in (UTF-8).
pub const CCSID_UTF8: i32 = 1208;

/// Length of the MQCFH.
pub const MQCFH_LENGTH: usize = 36;
/// How deep groups may nest in a decoded message (MQ's own messages nest one level).
pub const MAX_GROUP_DEPTH: usize = 8;

/// Byte order of a PCF message's integers (from the MQMD Encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// Little-endian (MQENC_NATIVE on Linux x86-64 and ARM, 546).
    Native,
    /// Big-endian (MQENC_INTEGER_NORMAL).
    Normal,
}

impl Encoding {
    /// The byte order an MQMD Encoding value names (its integer bits: 2 = reversed).
    pub fn from_mqmd(encoding: i32) -> Self {
        if encoding & 0x0f == 2 {
            Encoding::Native
        } else {
            Encoding::Normal
        }
    }

    /// The MQMD Encoding value to put beside a message encoded this way.
    pub fn mqmd_value(self) -> i32 {
        match self {
            Encoding::Native => 546,
            Encoding::Normal => 273,
        }
    }
}

/// The MQCFH header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcfHeader {
    /// Type (MQCFT_STATISTICS for monitoring publications).
    pub kind: i32,
    /// Version (1).
    pub version: i32,
    /// Command (MQCMD_*; 0 for monitoring publications).
    pub command: i32,
    /// MsgSeqNumber.
    pub msg_seq_number: i32,
    /// Control (MQCFC_LAST).
    pub control: i32,
    /// CompCode.
    pub comp_code: i32,
    /// Reason.
    pub reason: i32,
}

impl PcfHeader {
    /// A header of `kind` and `command`, first and last of its set, OK.
    pub fn new(kind: i32, command: i32) -> Self {
        PcfHeader {
            kind,
            version: 1,
            command,
            msg_seq_number: 1,
            control: MQCFC_LAST,
            comp_code: 0,
            reason: 0,
        }
    }
}

/// One PCF parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PcfParameter {
    /// MQCFIN.
    Integer {
        /// Parameter id.
        parameter: i32,
        /// Value.
        value: i32,
    },
    /// MQCFIN64.
    Integer64 {
        /// Parameter id.
        parameter: i32,
        /// Value.
        value: i64,
    },
    /// MQCFST.
    String {
        /// Parameter id.
        parameter: i32,
        /// CodedCharSetId of the string.
        ccsid: i32,
        /// The string as carried (read as UTF-8, invalid bytes replaced).
        value: String,
    },
    /// MQCFIL.
    IntegerList {
        /// Parameter id.
        parameter: i32,
        /// Values.
        values: Vec<i32>,
    },
    /// MQCFIL64.
    Integer64List {
        /// Parameter id.
        parameter: i32,
        /// Values.
        values: Vec<i64>,
    },
    /// MQCFBS.
    ByteString {
        /// Parameter id.
        parameter: i32,
        /// Bytes.
        value: Vec<u8>,
    },
    /// MQCFGR and the parameters it groups.
    Group {
        /// Parameter id (MQGACF_*).
        parameter: i32,
        /// The grouped parameters.
        parameters: Vec<PcfParameter>,
    },
}

impl PcfParameter {
    /// The parameter id.
    pub fn parameter(&self) -> i32 {
        match self {
            PcfParameter::Integer { parameter, .. }
            | PcfParameter::Integer64 { parameter, .. }
            | PcfParameter::String { parameter, .. }
            | PcfParameter::IntegerList { parameter, .. }
            | PcfParameter::Integer64List { parameter, .. }
            | PcfParameter::ByteString { parameter, .. }
            | PcfParameter::Group { parameter, .. } => *parameter,
        }
    }

    /// A UTF-8 MQCFST.
    pub fn string(parameter: i32, value: impl Into<String>) -> Self {
        PcfParameter::String {
            parameter,
            ccsid: CCSID_UTF8,
            value: value.into(),
        }
    }

    /// The value of an MQCFIN or MQCFIN64, widened.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            PcfParameter::Integer { value, .. } => Some(i64::from(*value)),
            PcfParameter::Integer64 { value, .. } => Some(*value),
            _ => None,
        }
    }

    /// The value of an MQCFST without MQ's trailing blanks or NULs.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PcfParameter::String { value, .. } => Some(value.trim_end_matches([' ', '\0'])),
            _ => None,
        }
    }

    /// The parameters of an MQCFGR.
    pub fn group(&self) -> Option<&[PcfParameter]> {
        match self {
            PcfParameter::Group { parameters, .. } => Some(parameters),
            _ => None,
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            PcfParameter::Integer { .. } => 16,
            PcfParameter::Integer64 { .. } => 24,
            PcfParameter::String { value, .. } => 20 + padded(value.len()),
            PcfParameter::IntegerList { values, .. } => 16 + 4 * values.len(),
            PcfParameter::Integer64List { values, .. } => 16 + 8 * values.len(),
            PcfParameter::ByteString { value, .. } => 16 + padded(value.len()),
            PcfParameter::Group { .. } => 16,
        }
    }
}

/// A PCF message: header and parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PcfMessage {
    /// The MQCFH.
    pub header: PcfHeader,
    /// Its parameters, groups holding their own.
    pub parameters: Vec<PcfParameter>,
}

/// Why bytes are not a PCF message.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum PcfError {
    /// The data ends inside a structure.
    #[error("PCF data ends at byte {at}: {needed} more bytes needed")]
    Truncated {
        /// Offset of the structure.
        at: usize,
        /// Bytes it needs beyond the end.
        needed: usize,
    },
    /// An MQCFH whose StrucLength is not 36.
    #[error("MQCFH StrucLength {0} is not 36")]
    BadHeaderLength(i32),
    /// A negative ParameterCount.
    #[error("negative parameter count {count} at byte {at}")]
    BadCount {
        /// Offset of the structure.
        at: usize,
        /// The count.
        count: i32,
    },
    /// A parameter structure whose StrucLength does not fit its type and content.
    #[error("parameter of type {kind} at byte {at} has StrucLength {length}")]
    BadLength {
        /// Offset of the structure.
        at: usize,
        /// Its Type.
        kind: i32,
        /// Its StrucLength.
        length: i32,
    },
    /// A parameter Type this decoder does not know.
    #[error("unknown PCF parameter type {kind} at byte {at}")]
    UnknownType {
        /// Offset of the structure.
        at: usize,
        /// Its Type.
        kind: i32,
    },
    /// Groups nested deeper than [`MAX_GROUP_DEPTH`].
    #[error("PCF groups nested deeper than {MAX_GROUP_DEPTH} at byte {0}")]
    TooDeep(usize),
    /// Bytes left after the last parameter.
    #[error("{0} bytes after the last PCF parameter")]
    TrailingBytes(usize),
}

fn padded(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// Writes integers in one byte order.
struct Writer<'a> {
    out: &'a mut Vec<u8>,
    enc: Encoding,
}

impl Writer<'_> {
    fn i32(&mut self, v: i32) {
        match self.enc {
            Encoding::Native => self.out.extend_from_slice(&v.to_le_bytes()),
            Encoding::Normal => self.out.extend_from_slice(&v.to_be_bytes()),
        }
    }
    fn i64(&mut self, v: i64) {
        match self.enc {
            Encoding::Native => self.out.extend_from_slice(&v.to_le_bytes()),
            Encoding::Normal => self.out.extend_from_slice(&v.to_be_bytes()),
        }
    }
    fn len(&mut self, n: usize) {
        self.i32(i32::try_from(n).unwrap_or(i32::MAX));
    }
    fn padded_bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
        let pad = padded(b.len()) - b.len();
        self.out.extend(std::iter::repeat_n(0u8, pad));
    }
    fn parameter(&mut self, p: &PcfParameter) {
        let len = p.encoded_len();
        match p {
            PcfParameter::Integer { parameter, value } => {
                self.i32(MQCFT_INTEGER);
                self.len(len);
                self.i32(*parameter);
                self.i32(*value);
            }
            PcfParameter::Integer64 { parameter, value } => {
                self.i32(MQCFT_INTEGER64);
                self.len(len);
                self.i32(*parameter);
                self.i32(0);
                self.i64(*value);
            }
            PcfParameter::String {
                parameter,
                ccsid,
                value,
            } => {
                self.i32(MQCFT_STRING);
                self.len(len);
                self.i32(*parameter);
                self.i32(*ccsid);
                self.len(value.len());
                self.padded_bytes(value.as_bytes());
            }
            PcfParameter::IntegerList { parameter, values } => {
                self.i32(MQCFT_INTEGER_LIST);
                self.len(len);
                self.i32(*parameter);
                self.len(values.len());
                values.iter().for_each(|v| self.i32(*v));
            }
            PcfParameter::Integer64List { parameter, values } => {
                self.i32(MQCFT_INTEGER64_LIST);
                self.len(len);
                self.i32(*parameter);
                self.len(values.len());
                values.iter().for_each(|v| self.i64(*v));
            }
            PcfParameter::ByteString { parameter, value } => {
                self.i32(MQCFT_BYTE_STRING);
                self.len(len);
                self.i32(*parameter);
                self.len(value.len());
                self.padded_bytes(value);
            }
            PcfParameter::Group {
                parameter,
                parameters,
            } => {
                self.i32(MQCFT_GROUP);
                self.len(len);
                self.i32(*parameter);
                self.len(parameters.len());
                parameters.iter().for_each(|g| self.parameter(g));
            }
        }
    }
}

impl PcfMessage {
    /// A message with `header` and no parameters yet.
    pub fn new(header: PcfHeader) -> Self {
        PcfMessage {
            header,
            parameters: Vec::new(),
        }
    }

    /// Appends `parameter`.
    pub fn push(&mut self, parameter: PcfParameter) -> &mut Self {
        self.parameters.push(parameter);
        self
    }

    /// The first top-level parameter with id `parameter`.
    pub fn find(&self, parameter: i32) -> Option<&PcfParameter> {
        self.parameters.iter().find(|p| p.parameter() == parameter)
    }

    /// Encodes the message in `enc` byte order.
    pub fn encode(&self, enc: Encoding) -> Vec<u8> {
        let mut out = Vec::with_capacity(MQCFH_LENGTH + 24 * self.parameters.len());
        let mut w = Writer { out: &mut out, enc };
        let h = &self.header;
        w.i32(h.kind);
        w.len(MQCFH_LENGTH);
        w.i32(h.version);
        w.i32(h.command);
        w.i32(h.msg_seq_number);
        w.i32(h.control);
        w.i32(h.comp_code);
        w.i32(h.reason);
        w.len(self.parameters.len());
        self.parameters.iter().for_each(|p| w.parameter(p));
        out
    }

    /// Decodes a whole message in `enc` byte order: every byte must belong to it.
    pub fn decode(data: &[u8], enc: Encoding) -> Result<Self, PcfError> {
        let r = Reader { data, enc };
        let field = |i: usize| r.i32(i * 4, 0);
        if data.len() < MQCFH_LENGTH {
            return Err(PcfError::Truncated {
                at: 0,
                needed: MQCFH_LENGTH - data.len(),
            });
        }
        let length = field(1)?;
        if length != MQCFH_LENGTH as i32 {
            return Err(PcfError::BadHeaderLength(length));
        }
        let header = PcfHeader {
            kind: field(0)?,
            version: field(2)?,
            command: field(3)?,
            msg_seq_number: field(4)?,
            control: field(5)?,
            comp_code: field(6)?,
            reason: field(7)?,
        };
        let count = field(8)?;
        let mut at = MQCFH_LENGTH;
        let parameters = r.parameters(&mut at, count, 0)?;
        if at != data.len() {
            return Err(PcfError::TrailingBytes(data.len() - at));
        }
        Ok(PcfMessage { header, parameters })
    }
}

/// Reads integers in one byte order, checking every access.
struct Reader<'a> {
    data: &'a [u8],
    enc: Encoding,
}

impl Reader<'_> {
    fn bytes(&self, at: usize, n: usize, owner: usize) -> Result<&[u8], PcfError> {
        let end = at.checked_add(n).ok_or(PcfError::Truncated {
            at: owner,
            needed: n,
        })?;
        self.data.get(at..end).ok_or(PcfError::Truncated {
            at: owner,
            needed: end - self.data.len().min(end),
        })
    }
    fn i32(&self, at: usize, owner: usize) -> Result<i32, PcfError> {
        let b: [u8; 4] = self.bytes(at, 4, owner)?.try_into().unwrap_or([0; 4]);
        Ok(match self.enc {
            Encoding::Native => i32::from_le_bytes(b),
            Encoding::Normal => i32::from_be_bytes(b),
        })
    }
    fn i64(&self, at: usize, owner: usize) -> Result<i64, PcfError> {
        let b: [u8; 8] = self.bytes(at, 8, owner)?.try_into().unwrap_or([0; 8]);
        Ok(match self.enc {
            Encoding::Native => i64::from_le_bytes(b),
            Encoding::Normal => i64::from_be_bytes(b),
        })
    }
    fn count(&self, at: usize, owner: usize) -> Result<usize, PcfError> {
        let n = self.i32(at, owner)?;
        usize::try_from(n).map_err(|_| PcfError::BadCount {
            at: owner,
            count: n,
        })
    }

    /// `count` parameters from `*at` on, at group depth `depth`.
    fn parameters(
        &self,
        at: &mut usize,
        count: i32,
        depth: usize,
    ) -> Result<Vec<PcfParameter>, PcfError> {
        let count = usize::try_from(count).map_err(|_| PcfError::BadCount { at: *at, count })?;
        // Every parameter takes at least 16 bytes: a count beyond what is left is
        // caught by the first read past the end, and the vector grows only as
        // parameters really decode.
        let mut out = Vec::with_capacity(count.min(self.data.len().saturating_sub(*at) / 16));
        for _ in 0..count {
            out.push(self.parameter(at, depth)?);
        }
        Ok(out)
    }

    fn parameter(&self, at: &mut usize, depth: usize) -> Result<PcfParameter, PcfError> {
        let start = *at;
        let kind = self.i32(start, start)?;
        let length = self.i32(start + 4, start)?;
        let bad = || PcfError::BadLength {
            at: start,
            kind,
            length,
        };
        let len = usize::try_from(length).map_err(|_| bad())?;
        let parameter = self.i32(start + 8, start)?;
        let p = match kind {
            MQCFT_INTEGER => {
                if len != 16 {
                    return Err(bad());
                }
                PcfParameter::Integer {
                    parameter,
                    value: self.i32(start + 12, start)?,
                }
            }
            MQCFT_INTEGER64 => {
                if len != 24 {
                    return Err(bad());
                }
                PcfParameter::Integer64 {
                    parameter,
                    value: self.i64(start + 16, start)?,
                }
            }
            MQCFT_STRING => {
                let ccsid = self.i32(start + 12, start)?;
                let n = self.count(start + 16, start)?;
                if len < 20 || n > len - 20 || len % 4 != 0 {
                    return Err(bad());
                }
                let b = self.bytes(start + 20, n, start)?;
                PcfParameter::String {
                    parameter,
                    ccsid,
                    value: String::from_utf8_lossy(b).into_owned(),
                }
            }
            MQCFT_BYTE_STRING => {
                let n = self.count(start + 12, start)?;
                if len < 16 || n > len - 16 || len % 4 != 0 {
                    return Err(bad());
                }
                PcfParameter::ByteString {
                    parameter,
                    value: self.bytes(start + 16, n, start)?.to_vec(),
                }
            }
            MQCFT_INTEGER_LIST | MQCFT_INTEGER64_LIST => {
                let n = self.count(start + 12, start)?;
                let width = if kind == MQCFT_INTEGER_LIST { 4 } else { 8 };
                if n.checked_mul(width).and_then(|b| b.checked_add(16)) != Some(len) {
                    return Err(bad());
                }
                self.bytes(start, len, start)?;
                if kind == MQCFT_INTEGER_LIST {
                    let values = (0..n)
                        .map(|i| self.i32(start + 16 + 4 * i, start))
                        .collect::<Result<_, _>>()?;
                    PcfParameter::IntegerList { parameter, values }
                } else {
                    let values = (0..n)
                        .map(|i| self.i64(start + 16 + 8 * i, start))
                        .collect::<Result<_, _>>()?;
                    PcfParameter::Integer64List { parameter, values }
                }
            }
            MQCFT_GROUP => {
                if len != 16 {
                    return Err(bad());
                }
                if depth >= MAX_GROUP_DEPTH {
                    return Err(PcfError::TooDeep(start));
                }
                let count = self.i32(start + 12, start)?;
                *at = start + 16;
                let parameters = self.parameters(at, count, depth + 1)?;
                return Ok(PcfParameter::Group {
                    parameter,
                    parameters,
                });
            }
            kind => return Err(PcfError::UnknownType { at: start, kind }),
        };
        self.bytes(start, len, start)?;
        *at = start + len;
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PcfMessage {
        let mut m = PcfMessage::new(PcfHeader::new(MQCFT_STATISTICS, 0));
        m.push(PcfParameter::string(2015, "QM1"))
            .push(PcfParameter::Integer {
                parameter: 839,
                value: 2,
            })
            .push(PcfParameter::Integer64 {
                parameter: 845,
                value: 10_000_123,
            })
            .push(PcfParameter::Group {
                parameter: 8017,
                parameters: vec![
                    PcfParameter::Integer {
                        parameter: 841,
                        value: 0,
                    },
                    PcfParameter::string(2715, "MQCONN/MQCONNX count"),
                ],
            })
            .push(PcfParameter::IntegerList {
                parameter: 7,
                values: vec![1, -2, 3],
            })
            .push(PcfParameter::Integer64List {
                parameter: 8,
                values: vec![i64::MAX, -1],
            })
            .push(PcfParameter::ByteString {
                parameter: 9,
                value: vec![1, 2, 3, 4, 5],
            });
        m
    }

    #[test]
    fn round_trips_in_both_byte_orders() {
        let m = sample();
        for enc in [Encoding::Native, Encoding::Normal] {
            let bytes = m.encode(enc);
            assert_eq!(bytes.len() % 4, 0);
            assert_eq!(PcfMessage::decode(&bytes, enc).unwrap(), m);
        }
    }

    #[test]
    fn layout_is_mqs() {
        let mut m = PcfMessage::new(PcfHeader::new(MQCFT_STATISTICS, 0));
        m.push(PcfParameter::Integer {
            parameter: 839,
            value: 3,
        });
        let b = m.encode(Encoding::Native);
        assert_eq!(b.len(), 36 + 16);
        assert_eq!(&b[0..4], &21i32.to_le_bytes());
        assert_eq!(&b[4..8], &36i32.to_le_bytes());
        assert_eq!(&b[32..36], &1i32.to_le_bytes(), "ParameterCount");
        assert_eq!(&b[36..40], &3i32.to_le_bytes(), "MQCFT_INTEGER");
        assert_eq!(&b[40..44], &16i32.to_le_bytes());
        assert_eq!(&b[44..48], &839i32.to_le_bytes());
        assert_eq!(&b[48..52], &3i32.to_le_bytes());
        // An MQCFST of 3 characters: 20 + 4 bytes.
        let s = PcfParameter::string(2015, "QM1");
        assert_eq!(s.encoded_len(), 24);
        assert_eq!(s.as_str(), Some("QM1"));
    }

    #[test]
    fn malformed_input_gives_typed_errors() {
        let good = sample().encode(Encoding::Native);
        assert!(matches!(
            PcfMessage::decode(&good[..10], Encoding::Native),
            Err(PcfError::Truncated { at: 0, .. })
        ));
        for cut in 37..good.len() {
            assert!(PcfMessage::decode(&good[..cut], Encoding::Native).is_err());
        }
        let mut bad = good.clone();
        bad[4..8].copy_from_slice(&40i32.to_le_bytes());
        assert_eq!(
            PcfMessage::decode(&bad, Encoding::Native),
            Err(PcfError::BadHeaderLength(40))
        );
        let mut bad = good.clone();
        bad[36..40].copy_from_slice(&99i32.to_le_bytes());
        assert_eq!(
            PcfMessage::decode(&bad, Encoding::Native),
            Err(PcfError::UnknownType { at: 36, kind: 99 })
        );
        let mut bad = good.clone();
        bad[32..36].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(matches!(
            PcfMessage::decode(&bad, Encoding::Native),
            Err(PcfError::BadCount { .. })
        ));
        let mut extra = good.clone();
        extra.extend_from_slice(&[0; 4]);
        assert_eq!(
            PcfMessage::decode(&extra, Encoding::Native),
            Err(PcfError::TrailingBytes(4))
        );
        // A huge parameter count allocates nothing up front and fails at the end.
        let mut bad = good;
        bad[32..36].copy_from_slice(&i32::MAX.to_le_bytes());
        assert!(PcfMessage::decode(&bad, Encoding::Native).is_err());
    }

    #[test]
    fn nesting_is_bounded() {
        let mut p = PcfParameter::Integer {
            parameter: 1,
            value: 1,
        };
        for _ in 0..=MAX_GROUP_DEPTH {
            p = PcfParameter::Group {
                parameter: 2,
                parameters: vec![p],
            };
        }
        let mut m = PcfMessage::new(PcfHeader::new(MQCFT_STATISTICS, 0));
        m.push(p);
        let b = m.encode(Encoding::Normal);
        assert!(matches!(
            PcfMessage::decode(&b, Encoding::Normal),
            Err(PcfError::TooDeep(_))
        ));
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600), header in proptest::prelude::any::<bool>()) {
            let mut data = bytes;
            // Give some inputs a valid MQCFH so the parameter decoding runs.
            if header && data.len() >= 36 {
                data[4..8].copy_from_slice(&36i32.to_le_bytes());
                let count = (data.len() as i32 - 36) / 16;
                data[32..36].copy_from_slice(&count.to_le_bytes());
            }
            crate::fuzzing::decode_pcf(&data);
        }
    }
}
