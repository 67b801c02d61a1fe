//! Trigger messages: MQ's MQTM (what the queue manager puts on an initiation queue when
//! a trigger event happens) and MQTMC2 (the character form a trigger monitor passes to
//! the application it starts).
//!
//! Both layouts are MQ's. MQTM version 1 is 684 bytes, its two integers (Version,
//! ApplType) in the byte order the message descriptor's Encoding names; MQTMC2 version 2
//! is 732 bytes of characters, MQTM's fields with ApplType as four blanks (as MQ's
//! trigger monitors write it) and the queue manager's name at the end. Decoding takes
//! outside input (a message anyone may put on an initiation queue, an argument anyone
//! may pass): it checks length and StrucId and never panics.

use crate::FixedStr;

/// MQFMT_TRIGGER: the MQMD Format of a trigger message.
pub const FORMAT_TRIGGER: FixedStr<8> = FixedStr::from_bytes(*b"MQTRIG  ");
/// MQTM_STRUC_ID.
const TM_STRUC_ID: &[u8; 4] = b"TM  ";
/// MQTM_VERSION_1.
const TM_VERSION_1: i32 = 1;
/// Length of an MQTM (MQTM_LENGTH).
pub const TRIGGER_MESSAGE_LEN: usize = 684;
/// MQTMC_STRUC_ID.
const TMC_STRUC_ID: &[u8; 4] = b"TMC ";
/// MQTMC_VERSION_2.
const TMC_VERSION_2: &[u8; 4] = b"   2";
/// Length of an MQTMC2.
pub const TRIGGER_MESSAGE_CHARS_LEN: usize = 732;
/// The bit of MQENC_INTEGER_REVERSED in an Encoding: integers little-endian.
const INTEGER_REVERSED: i32 = 2;

/// MQFB_APPL_CANNOT_BE_STARTED: a trigger monitor could not start ApplId.
pub const FEEDBACK_APPL_CANNOT_BE_STARTED: i32 = 265;
/// MQFB_TM_ERROR: a message on an initiation queue is not a trigger message.
pub const FEEDBACK_TM_ERROR: i32 = 266;
/// MQFB_APPL_TYPE_ERROR: a trigger monitor cannot start applications of ApplType.
pub const FEEDBACK_APPL_TYPE_ERROR: i32 = 267;

/// Why bytes are not a trigger message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TriggerMessageError {
    /// Shorter than the structure.
    #[error("{what} needs {need} bytes, {got} given")]
    TooShort {
        /// MQTM or MQTMC2.
        what: &'static str,
        /// Its length.
        need: usize,
        /// What there was.
        got: usize,
    },
    /// The StrucId or Version is not the structure's.
    #[error("{what} has StrucId/Version {found:?}")]
    NotTheStructure {
        /// MQTM or MQTMC2.
        what: &'static str,
        /// The first eight bytes, as text.
        found: String,
    },
}

/// An MQTM: what a trigger event puts on the initiation queue.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriggerMessage {
    /// The application queue that triggered.
    pub q_name: FixedStr<48>,
    /// Its PROCESS.
    pub process_name: FixedStr<48>,
    /// Its TRIGDATA.
    pub trigger_data: FixedStr<64>,
    /// The process's APPLTYPE (MQAT_*; 0 when the queue names no process).
    pub appl_type: i32,
    /// The process's APPLICID.
    pub appl_id: FixedStr<256>,
    /// The process's ENVRDATA.
    pub env_data: FixedStr<128>,
    /// The process's USERDATA.
    pub user_data: FixedStr<128>,
}

fn field<const N: usize>(b: &[u8], at: usize) -> FixedStr<N> {
    let mut a = [b' '; N];
    a.copy_from_slice(&b[at..at + N]);
    FixedStr::from_bytes(a)
}

fn int_at(b: &[u8], at: usize, encoding: i32) -> i32 {
    let a = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if encoding & INTEGER_REVERSED != 0 {
        i32::from_le_bytes(a)
    } else {
        i32::from_be_bytes(a)
    }
}

impl TriggerMessage {
    /// Appends the MQTM, its integers in the byte order of `encoding` (the MQMD's).
    pub fn encode(&self, encoding: i32, out: &mut Vec<u8>) {
        let int = |out: &mut Vec<u8>, v: i32| {
            if encoding & INTEGER_REVERSED != 0 {
                out.extend_from_slice(&v.to_le_bytes());
            } else {
                out.extend_from_slice(&v.to_be_bytes());
            }
        };
        let start = out.len();
        out.extend_from_slice(TM_STRUC_ID);
        int(out, TM_VERSION_1);
        out.extend_from_slice(self.q_name.as_bytes());
        out.extend_from_slice(self.process_name.as_bytes());
        out.extend_from_slice(self.trigger_data.as_bytes());
        int(out, self.appl_type);
        out.extend_from_slice(self.appl_id.as_bytes());
        out.extend_from_slice(self.env_data.as_bytes());
        out.extend_from_slice(self.user_data.as_bytes());
        debug_assert_eq!(out.len() - start, TRIGGER_MESSAGE_LEN);
    }

    /// Reads an MQTM from the start of `b`, integers in the byte order of `encoding`.
    pub fn decode(b: &[u8], encoding: i32) -> Result<Self, TriggerMessageError> {
        if b.len() < TRIGGER_MESSAGE_LEN {
            return Err(TriggerMessageError::TooShort {
                what: "MQTM",
                need: TRIGGER_MESSAGE_LEN,
                got: b.len(),
            });
        }
        if &b[..4] != TM_STRUC_ID || int_at(b, 4, encoding) < TM_VERSION_1 {
            return Err(TriggerMessageError::NotTheStructure {
                what: "MQTM",
                found: String::from_utf8_lossy(&b[..8]).into_owned(),
            });
        }
        Ok(TriggerMessage {
            q_name: field(b, 8),
            process_name: field(b, 56),
            trigger_data: field(b, 104),
            appl_type: int_at(b, 168, encoding),
            appl_id: field(b, 172),
            env_data: field(b, 428),
            user_data: field(b, 556),
        })
    }
}

/// An MQTMC2: the trigger message in characters, with the queue manager's name, as a
/// trigger monitor hands it to the application it starts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TriggerMessageChars {
    /// The trigger message's fields (its ApplType is written as blanks).
    pub message: TriggerMessage,
    /// The queue manager the trigger monitor is connected to.
    pub qmgr_name: FixedStr<48>,
}

impl TriggerMessageChars {
    /// The MQTMC2 bytes.
    pub fn encode(&self) -> Vec<u8> {
        let m = &self.message;
        let mut out = Vec::with_capacity(TRIGGER_MESSAGE_CHARS_LEN);
        out.extend_from_slice(TMC_STRUC_ID);
        out.extend_from_slice(TMC_VERSION_2);
        out.extend_from_slice(m.q_name.as_bytes());
        out.extend_from_slice(m.process_name.as_bytes());
        out.extend_from_slice(m.trigger_data.as_bytes());
        out.extend_from_slice(b"    ");
        out.extend_from_slice(m.appl_id.as_bytes());
        out.extend_from_slice(m.env_data.as_bytes());
        out.extend_from_slice(m.user_data.as_bytes());
        out.extend_from_slice(self.qmgr_name.as_bytes());
        debug_assert_eq!(out.len(), TRIGGER_MESSAGE_CHARS_LEN);
        out
    }

    /// Reads an MQTMC2 from the start of `b` (its ApplType, blanks, reads as 0).
    pub fn decode(b: &[u8]) -> Result<Self, TriggerMessageError> {
        if b.len() < TRIGGER_MESSAGE_CHARS_LEN {
            return Err(TriggerMessageError::TooShort {
                what: "MQTMC2",
                need: TRIGGER_MESSAGE_CHARS_LEN,
                got: b.len(),
            });
        }
        if &b[..4] != TMC_STRUC_ID || &b[4..8] != TMC_VERSION_2 {
            return Err(TriggerMessageError::NotTheStructure {
                what: "MQTMC2",
                found: String::from_utf8_lossy(&b[..8]).into_owned(),
            });
        }
        Ok(TriggerMessageChars {
            message: TriggerMessage {
                q_name: field(b, 8),
                process_name: field(b, 56),
                trigger_data: field(b, 104),
                appl_type: 0,
                appl_id: field(b, 172),
                env_data: field(b, 428),
                user_data: field(b, 556),
            },
            qmgr_name: field(b, 684),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::ENCODING_NATIVE;

    fn sample() -> TriggerMessage {
        TriggerMessage {
            q_name: FixedStr::truncating("APP.Q"),
            process_name: FixedStr::truncating("APP.PROC"),
            trigger_data: FixedStr::truncating("data"),
            appl_type: 6,
            appl_id: FixedStr::truncating("/usr/bin/app"),
            env_data: FixedStr::truncating("&"),
            user_data: FixedStr::truncating("user"),
        }
    }

    #[test]
    fn mqtm_has_mqs_layout() {
        let mut out = Vec::new();
        sample().encode(ENCODING_NATIVE, &mut out);
        assert_eq!(out.len(), TRIGGER_MESSAGE_LEN);
        assert_eq!(&out[..4], b"TM  ");
        assert_eq!(&out[4..8], &1i32.to_le_bytes());
        assert_eq!(&out[8..13], b"APP.Q");
        assert_eq!(&out[56..64], b"APP.PROC");
        assert_eq!(&out[104..108], b"data");
        assert_eq!(&out[168..172], &6i32.to_le_bytes());
        assert_eq!(&out[172..184], b"/usr/bin/app");
        assert_eq!(out[428], b'&');
        assert_eq!(&out[556..560], b"user");
        assert_eq!(TriggerMessage::decode(&out, ENCODING_NATIVE), Ok(sample()));
    }

    #[test]
    fn mqtm_in_big_endian() {
        let mut out = Vec::new();
        sample().encode(0x111, &mut out);
        assert_eq!(&out[168..172], &6i32.to_be_bytes());
        assert_eq!(TriggerMessage::decode(&out, 0x111), Ok(sample()));
    }

    #[test]
    fn mqtmc2_has_mqs_layout() {
        let c = TriggerMessageChars {
            message: sample(),
            qmgr_name: FixedStr::truncating("QM1"),
        };
        let out = c.encode();
        assert_eq!(out.len(), TRIGGER_MESSAGE_CHARS_LEN);
        assert_eq!(&out[..8], b"TMC    2");
        assert_eq!(&out[8..13], b"APP.Q");
        assert_eq!(&out[168..172], b"    ");
        assert_eq!(&out[684..687], b"QM1");
        let back = TriggerMessageChars::decode(&out).unwrap();
        assert_eq!(back.message.appl_type, 0);
        assert_eq!(back.message.q_name.as_str(), "APP.Q");
        assert_eq!(back.qmgr_name.as_str(), "QM1");
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..800), prefix in 0usize..3) {
            let mut data = bytes;
            // Give some inputs the right StrucId so the field decoding runs.
            match prefix {
                0 if data.len() >= 8 => data[..8].copy_from_slice(b"TM  \x01\0\0\0"),
                1 if data.len() >= 8 => data[..8].copy_from_slice(b"TMC    2"),
                _ => {}
            }
            crate::fuzzing::decode_trigger_messages(&data);
        }
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(matches!(
            TriggerMessage::decode(b"TM  ", ENCODING_NATIVE),
            Err(TriggerMessageError::TooShort { .. })
        ));
        let mut out = Vec::new();
        sample().encode(ENCODING_NATIVE, &mut out);
        out[0] = b'X';
        assert!(matches!(
            TriggerMessage::decode(&out, ENCODING_NATIVE),
            Err(TriggerMessageError::NotTheStructure { .. })
        ));
        assert!(TriggerMessageChars::decode(&[b' '; 732]).is_err());
    }
}
