//! The dead-letter header (MQ's MQDLH, version 1) that heads a message on the
//! dead-letter queue, so an administrator (or a dead-letter handler) sees why it is
//! there, where it was going and what its format was.
//!
//! Written by the AMQP channel for pre-settled transfers it could not put (the client was
//! promised nothing and can be told nothing, so, as MQ's channel agents do, the message
//! goes to the queue manager's DEADQ instead of vanishing), and by the engine for a
//! message backed out BOTHRESH times with no usable BOQNAME. The layout is MQ's, 172
//! bytes, integers in the byte order the message descriptor's Encoding names (Ferry
//! writes native, little-endian, 546).

use crate::{FixedStr, MessageDescriptor, ReasonCode};

/// MQFMT_DEAD_LETTER_HEADER: the MQMD Format of a message that starts with an MQDLH.
pub const FORMAT_DEAD_LETTER_HEADER: FixedStr<8> = FixedStr::from_bytes(*b"MQDEAD  ");
/// MQDLH_STRUC_ID.
const STRUC_ID: &[u8; 4] = b"DLH ";
/// MQDLH_VERSION_1.
const VERSION_1: i32 = 1;
/// Length of an MQDLH version 1.
pub const DEAD_LETTER_HEADER_LEN: usize = 172;
/// MQAT_AMQP: the PutApplType of a message an AMQP channel put.
pub const APPL_TYPE_AMQP: i32 = 37;
/// MQAT_QMGR: the PutApplType of a message the queue manager itself put.
pub const APPL_TYPE_QMGR: i32 = 7;
/// The bit of MQENC_INTEGER_REVERSED in an Encoding: integers little-endian.
const INTEGER_REVERSED: i32 = 2;

/// An MQDLH for a message that could not reach `dest_q`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetterHeader {
    /// Why the message is on the dead-letter queue.
    pub reason: ReasonCode,
    /// The queue it was going to.
    pub dest_q: FixedStr<48>,
    /// The queue manager it was going to.
    pub dest_qmgr: FixedStr<48>,
    /// Encoding, CodedCharSetId and Format of what follows the header (the message's own).
    pub encoding: i32,
    /// See `encoding`.
    pub ccsid: i32,
    /// See `encoding`.
    pub format: FixedStr<8>,
    /// Who put it on the dead-letter queue: the kind (MQAT_*).
    pub put_appl_type: i32,
    /// Who put it on the dead-letter queue: the AMQP channel or the queue manager.
    pub put_appl_name: FixedStr<28>,
    /// When, `YYYYMMDD`.
    pub put_date: FixedStr<8>,
    /// When, `HHMMSSTH`.
    pub put_time: FixedStr<8>,
}

impl DeadLetterHeader {
    /// The header for `md`'s message, which could not be put to `dest_q` for `reason`,
    /// written by `putter` (an MQAT_* kind and a name, such as the AMQP channel's) at
    /// `put_date`/`put_time`.
    pub fn for_message(
        md: &MessageDescriptor,
        reason: ReasonCode,
        dest_q: &str,
        dest_qmgr: &str,
        (put_appl_type, putter): (i32, &str),
        (put_date, put_time): (FixedStr<8>, FixedStr<8>),
    ) -> Self {
        DeadLetterHeader {
            reason,
            dest_q: FixedStr::truncating(dest_q),
            dest_qmgr: FixedStr::truncating(dest_qmgr),
            encoding: md.encoding,
            ccsid: md.ccsid,
            format: md.format,
            put_appl_type,
            put_appl_name: FixedStr::truncating(putter),
            put_date,
            put_time,
        }
    }

    /// Appends the header, its integers in the byte order of `encoding` (the MQMD's).
    pub fn encode(&self, encoding: i32, out: &mut Vec<u8>) {
        let int = |out: &mut Vec<u8>, v: i32| {
            if encoding & INTEGER_REVERSED != 0 {
                out.extend_from_slice(&v.to_le_bytes());
            } else {
                out.extend_from_slice(&v.to_be_bytes());
            }
        };
        let start = out.len();
        out.extend_from_slice(STRUC_ID);
        int(out, VERSION_1);
        int(out, self.reason.number());
        out.extend_from_slice(self.dest_q.as_bytes());
        out.extend_from_slice(self.dest_qmgr.as_bytes());
        int(out, self.encoding);
        int(out, self.ccsid);
        out.extend_from_slice(self.format.as_bytes());
        int(out, self.put_appl_type);
        out.extend_from_slice(self.put_appl_name.as_bytes());
        out.extend_from_slice(self.put_date.as_bytes());
        out.extend_from_slice(self.put_time.as_bytes());
        debug_assert_eq!(out.len() - start, DEAD_LETTER_HEADER_LEN);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_has_mqs_layout() {
        let md = MessageDescriptor {
            format: FixedStr::truncating("MQSTR"),
            ..MessageDescriptor::default()
        };
        let h = DeadLetterHeader::for_message(
            &md,
            ReasonCode::QFull,
            "APP.Q",
            "QM1",
            (APPL_TYPE_AMQP, "SYSTEM.DEF.AMQP"),
            (
                FixedStr::truncating("20250101"),
                FixedStr::truncating("12000000"),
            ),
        );
        let mut out = Vec::new();
        h.encode(crate::descriptor::ENCODING_NATIVE, &mut out);
        assert_eq!(out.len(), DEAD_LETTER_HEADER_LEN);
        assert_eq!(&out[..4], b"DLH ");
        assert_eq!(i32::from_le_bytes([out[4], out[5], out[6], out[7]]), 1);
        assert_eq!(i32::from_le_bytes([out[8], out[9], out[10], out[11]]), 2053);
        assert_eq!(&out[12..17], b"APP.Q");
        assert_eq!(&out[60..63], b"QM1");
        assert_eq!(&out[116..124], b"MQSTR   ");
        assert_eq!(
            i32::from_le_bytes([out[124], out[125], out[126], out[127]]),
            37
        );
        assert_eq!(&out[128..143], b"SYSTEM.DEF.AMQP");
        assert_eq!(&out[156..164], b"20250101");
        let mut big = Vec::new();
        h.encode(0x111, &mut big);
        assert_eq!(i32::from_be_bytes([big[8], big[9], big[10], big[11]]), 2053);
    }
}
