//! The transmission queue header (MQ's MQXQH, version 1) that heads every message on a
//! transmission queue, and the message descriptor extension (MQMDE, version 2) that
//! follows it when the message's version-2 descriptor fields are not their defaults.
//!
//! A message for a queue on another queue manager waits on a transmission queue
//! (USAGE(XMITQ)) until a sender channel takes it. The queue manager puts it there with a
//! descriptor of its own (Format [`FORMAT_XMIT_Q_HEADER`]) and a body that starts with
//! this header: where the message is going (RemoteQName, RemoteQMgrName) and the
//! application's descriptor, context included, as an MQMD version 1. The group and
//! segment fields of MQMD version 2 travel in an MQMDE after the header (the embedded
//! MD's Format then says [`FORMAT_MD_EXTENSION`], and the MQMDE's Encoding,
//! CodedCharSetId and Format describe the application's data). The receiving channel
//! strips both and puts the message with the descriptor they carry.
//!
//! The layout is MQ's: 428 bytes of MQXQH (104 of its own, then the 324-byte MQMD
//! version 1), 72 of MQMDE. Integers are in the byte order the message's Encoding names:
//! Ferry writes native, little-endian (546), as [`crate::dead_letter`] does; the decoder
//! reads either order, telling them apart by the header's Version field (as MQ's own
//! tools do), and the MQMDE's by the embedded MD's Encoding, which describes it.

use crate::descriptor::ENCODING_NATIVE;
use crate::{FixedStr, MessageDescriptor, ReasonCode};

/// MQFMT_XMIT_Q_HEADER: the MQMD Format of a message that starts with an MQXQH.
pub const FORMAT_XMIT_Q_HEADER: FixedStr<8> = FixedStr::from_bytes(*b"MQXMIT  ");
/// MQFMT_MD_EXTENSION: the Format of data that starts with an MQMDE.
pub const FORMAT_MD_EXTENSION: FixedStr<8> = FixedStr::from_bytes(*b"MQHMDE  ");
/// Length of an MQXQH version 1 (its embedded MQMD version 1 included).
pub const TRANSMISSION_HEADER_LEN: usize = 428;
/// Length of an MQMD version 1.
pub const MD_V1_LEN: usize = 324;
/// Length of an MQMDE version 2.
pub const MD_EXTENSION_LEN: usize = 72;
/// MQXQH_STRUC_ID.
const XQH_STRUC_ID: &[u8; 4] = b"XQH ";
/// MQXQH_VERSION_1.
const XQH_VERSION_1: i32 = 1;
/// MQMD_STRUC_ID.
const MD_STRUC_ID: &[u8; 4] = b"MD  ";
/// MQMD_VERSION_1: the embedded descriptor is always version 1.
const MD_VERSION_1: i32 = 1;
/// MQMDE_STRUC_ID.
const MDE_STRUC_ID: &[u8; 4] = b"MDE ";
/// MQMDE_VERSION_2 (the only version there is).
const MDE_VERSION_2: i32 = 2;
/// MQMEF_NONE: the MQMDE's Flags.
const MDE_FLAGS_NONE: i32 = 0;
/// The bit of MQENC_INTEGER_REVERSED in an Encoding: integers little-endian.
const INTEGER_REVERSED: i32 = 2;

/// Why bytes are not a transmission queue header. The receiving side of a channel treats
/// any of them as MQ does a damaged header: 2110 MQRC_FORMAT_ERROR ([`Self::reason`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TransmissionHeaderError {
    /// Fewer bytes than the structure needs.
    #[error("{structure} needs {needed} bytes, {available} are there")]
    Short {
        /// "MQXQH" or "MQMDE".
        structure: &'static str,
        /// Bytes the structure takes.
        needed: usize,
        /// Bytes there were.
        available: usize,
    },
    /// The StrucId is not the structure's.
    #[error("{structure} StrucId is {found:?}, not {expected:?}")]
    StrucId {
        /// "MQXQH", "MQMD" or "MQMDE".
        structure: &'static str,
        /// What was found.
        found: [u8; 4],
        /// What was expected.
        expected: [u8; 4],
    },
    /// The Version is not one the structure has (in either byte order).
    #[error("{structure} Version {found} is not {expected}")]
    Version {
        /// "MQXQH", "MQMD" or "MQMDE".
        structure: &'static str,
        /// What was found, read in the byte order used.
        found: i32,
        /// The version this structure must have.
        expected: i32,
    },
    /// The MQMDE's StrucLength is not 72.
    #[error("MQMDE StrucLength {0} is not 72")]
    ExtensionLength(i32),
}

impl TransmissionHeaderError {
    /// The reason code MQ gives a message whose header is damaged: 2110 MQRC_FORMAT_ERROR.
    pub fn reason(&self) -> ReasonCode {
        ReasonCode::FormatError
    }
}

/// An MQXQH: the remote queue and queue manager a message on a transmission queue is
/// going to, and the application's message descriptor (context and all, MQMD version 2
/// fields included: [`TransmissionHeader::encode`] writes those in an MQMDE).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransmissionHeader {
    /// RemoteQName: the queue on the destination queue manager.
    pub remote_q_name: FixedStr<48>,
    /// RemoteQMgrName: the destination queue manager.
    pub remote_qmgr_name: FixedStr<48>,
    /// The application's message descriptor, as the destination will store it.
    pub md: MessageDescriptor,
}

/// Writes integers in one byte order.
#[derive(Clone, Copy)]
struct Order {
    little: bool,
}

impl Order {
    fn of_encoding(encoding: i32) -> Self {
        Order {
            little: encoding & INTEGER_REVERSED != 0,
        }
    }

    fn put(self, out: &mut Vec<u8>, v: i32) {
        if self.little {
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.extend_from_slice(&v.to_be_bytes());
        }
    }

    fn get(self, b: [u8; 4]) -> i32 {
        if self.little {
            i32::from_le_bytes(b)
        } else {
            i32::from_be_bytes(b)
        }
    }
}

/// Reads fixed-size fields from a slice whose length was checked beforehand.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    order: Order,
}

impl<'a> Reader<'a> {
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut b = [0u8; N];
        // The callers checked the length; a short slice leaves zeros rather than panic.
        if let Some(s) = self.bytes.get(self.at..self.at + N) {
            b.copy_from_slice(s);
        }
        self.at += N;
        b
    }

    fn int(&mut self) -> i32 {
        let b = self.bytes::<4>();
        self.order.get(b)
    }

    fn text<const N: usize>(&mut self) -> FixedStr<N> {
        FixedStr::from_bytes(self.bytes::<N>())
    }
}

impl TransmissionHeader {
    /// True when the descriptor's version-2 fields (GroupId, MsgSeqNumber, Offset,
    /// MsgFlags, OriginalLength) are not MQMD_DEFAULT's, so an MQMDE must follow the
    /// header. Also when the application's own Format is MQHMDE: the MQMDE written then
    /// keeps it apart from the one the header chains to.
    pub fn needs_extension(&self) -> bool {
        let d = MessageDescriptor::default();
        let md = &self.md;
        md.group_id != d.group_id
            || md.msg_seq_number != d.msg_seq_number
            || md.offset != d.offset
            || md.msg_flags != d.msg_flags
            || md.original_length != d.original_length
            || md.format == FORMAT_MD_EXTENSION
    }

    /// How many bytes [`Self::encode`] writes: 428, or 500 with an MQMDE.
    pub fn encoded_len(&self) -> usize {
        if self.needs_extension() {
            TRANSMISSION_HEADER_LEN + MD_EXTENSION_LEN
        } else {
            TRANSMISSION_HEADER_LEN
        }
    }

    /// Appends the MQXQH and, when [`Self::needs_extension`], the MQMDE, integers
    /// little-endian (MQENC_NATIVE, 546). With an MQMDE, the embedded MD's Encoding is
    /// 546 and its Format MQHMDE (they describe the MQMDE); the MQMDE carries the
    /// application's Encoding, CodedCharSetId and Format.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let order = Order::of_encoding(ENCODING_NATIVE);
        let start = out.len();
        let extension = self.needs_extension();
        let md = &self.md;
        out.extend_from_slice(XQH_STRUC_ID);
        order.put(out, XQH_VERSION_1);
        out.extend_from_slice(self.remote_q_name.as_bytes());
        out.extend_from_slice(self.remote_qmgr_name.as_bytes());
        // The embedded MQMD version 1.
        out.extend_from_slice(MD_STRUC_ID);
        order.put(out, MD_VERSION_1);
        order.put(out, md.report);
        order.put(out, md.msg_type);
        order.put(out, md.expiry);
        order.put(out, md.feedback);
        if extension {
            order.put(out, ENCODING_NATIVE);
            order.put(out, md.ccsid);
            out.extend_from_slice(FORMAT_MD_EXTENSION.as_bytes());
        } else {
            order.put(out, md.encoding);
            order.put(out, md.ccsid);
            out.extend_from_slice(md.format.as_bytes());
        }
        order.put(out, md.priority);
        order.put(out, md.persistence);
        out.extend_from_slice(&md.msg_id);
        out.extend_from_slice(&md.correl_id);
        order.put(out, md.backout_count);
        out.extend_from_slice(md.reply_to_q.as_bytes());
        out.extend_from_slice(md.reply_to_qmgr.as_bytes());
        out.extend_from_slice(md.user_identifier.as_bytes());
        out.extend_from_slice(&md.accounting_token);
        out.extend_from_slice(md.appl_identity_data.as_bytes());
        order.put(out, md.put_appl_type);
        out.extend_from_slice(md.put_appl_name.as_bytes());
        out.extend_from_slice(md.put_date.as_bytes());
        out.extend_from_slice(md.put_time.as_bytes());
        out.extend_from_slice(md.appl_origin_data.as_bytes());
        debug_assert_eq!(out.len() - start, TRANSMISSION_HEADER_LEN);
        if extension {
            out.extend_from_slice(MDE_STRUC_ID);
            order.put(out, MDE_VERSION_2);
            order.put(out, MD_EXTENSION_LEN as i32);
            order.put(out, md.encoding);
            order.put(out, md.ccsid);
            out.extend_from_slice(md.format.as_bytes());
            order.put(out, MDE_FLAGS_NONE);
            out.extend_from_slice(&md.group_id);
            order.put(out, md.msg_seq_number);
            order.put(out, md.offset);
            order.put(out, md.msg_flags);
            order.put(out, md.original_length);
        }
        debug_assert_eq!(out.len() - start, self.encoded_len());
    }

    /// Reads the MQXQH at the start of `bytes` and the MQMDE after it, if the embedded
    /// MD's Format says one follows. Returns the header (the MQMDE's fields folded into
    /// its descriptor) and how many bytes the two took: the application's data starts
    /// there. Never panics, whatever `bytes` hold.
    pub fn decode(bytes: &[u8]) -> Result<(TransmissionHeader, usize), TransmissionHeaderError> {
        if bytes.len() < TRANSMISSION_HEADER_LEN {
            return Err(TransmissionHeaderError::Short {
                structure: "MQXQH",
                needed: TRANSMISSION_HEADER_LEN,
                available: bytes.len(),
            });
        }
        let order = header_order(bytes)?;
        let mut r = Reader {
            bytes,
            at: 8,
            order,
        };
        let remote_q_name = r.text::<48>();
        let remote_qmgr_name = r.text::<48>();
        let md_id = r.bytes::<4>();
        if &md_id != MD_STRUC_ID {
            return Err(TransmissionHeaderError::StrucId {
                structure: "MQMD",
                found: md_id,
                expected: *MD_STRUC_ID,
            });
        }
        let md_version = r.int();
        if md_version != MD_VERSION_1 {
            return Err(TransmissionHeaderError::Version {
                structure: "MQMD",
                found: md_version,
                expected: MD_VERSION_1,
            });
        }
        let mut md = MessageDescriptor {
            report: r.int(),
            msg_type: r.int(),
            expiry: r.int(),
            feedback: r.int(),
            encoding: r.int(),
            ccsid: r.int(),
            format: r.text(),
            priority: r.int(),
            persistence: r.int(),
            msg_id: r.bytes(),
            correl_id: r.bytes(),
            backout_count: r.int(),
            reply_to_q: r.text(),
            reply_to_qmgr: r.text(),
            user_identifier: r.text(),
            accounting_token: r.bytes(),
            appl_identity_data: r.text(),
            put_appl_type: r.int(),
            put_appl_name: r.text(),
            put_date: r.text(),
            put_time: r.text(),
            appl_origin_data: r.text(),
            ..MessageDescriptor::default()
        };
        debug_assert_eq!(r.at, TRANSMISSION_HEADER_LEN);
        let mut consumed = TRANSMISSION_HEADER_LEN;
        if md.format == FORMAT_MD_EXTENSION {
            let rest = &bytes[TRANSMISSION_HEADER_LEN..];
            decode_extension(rest, &mut md)?;
            consumed += MD_EXTENSION_LEN;
        }
        let header = TransmissionHeader {
            remote_q_name,
            remote_qmgr_name,
            md,
        };
        Ok((header, consumed))
    }
}

/// The byte order of the MQXQH at the start of `bytes` (at least 8 long): its StrucId
/// checked, then its Version read both ways.
fn header_order(bytes: &[u8]) -> Result<Order, TransmissionHeaderError> {
    let mut id = [0u8; 4];
    id.copy_from_slice(&bytes[..4]);
    if &id != XQH_STRUC_ID {
        return Err(TransmissionHeaderError::StrucId {
            structure: "MQXQH",
            found: id,
            expected: *XQH_STRUC_ID,
        });
    }
    let mut v = [0u8; 4];
    v.copy_from_slice(&bytes[4..8]);
    if i32::from_le_bytes(v) == XQH_VERSION_1 {
        Ok(Order { little: true })
    } else if i32::from_be_bytes(v) == XQH_VERSION_1 {
        Ok(Order { little: false })
    } else {
        Err(TransmissionHeaderError::Version {
            structure: "MQXQH",
            found: i32::from_le_bytes(v),
            expected: XQH_VERSION_1,
        })
    }
}

/// Reads the MQMDE at the start of `bytes`, in the byte order `md`'s Encoding (which
/// describes it) names, and folds it into `md`.
fn decode_extension(
    bytes: &[u8],
    md: &mut MessageDescriptor,
) -> Result<(), TransmissionHeaderError> {
    if bytes.len() < MD_EXTENSION_LEN {
        return Err(TransmissionHeaderError::Short {
            structure: "MQMDE",
            needed: MD_EXTENSION_LEN,
            available: bytes.len(),
        });
    }
    let mut r = Reader {
        bytes,
        at: 0,
        order: Order::of_encoding(md.encoding),
    };
    let id = r.bytes::<4>();
    if &id != MDE_STRUC_ID {
        return Err(TransmissionHeaderError::StrucId {
            structure: "MQMDE",
            found: id,
            expected: *MDE_STRUC_ID,
        });
    }
    let version = r.int();
    if version != MDE_VERSION_2 {
        return Err(TransmissionHeaderError::Version {
            structure: "MQMDE",
            found: version,
            expected: MDE_VERSION_2,
        });
    }
    let length = r.int();
    if length != MD_EXTENSION_LEN as i32 {
        return Err(TransmissionHeaderError::ExtensionLength(length));
    }
    md.encoding = r.int();
    md.ccsid = r.int();
    md.format = r.text();
    let _flags = r.int();
    md.group_id = r.bytes();
    md.msg_seq_number = r.int();
    md.offset = r.int();
    md.msg_flags = r.int();
    md.original_length = r.int();
    debug_assert_eq!(r.at, MD_EXTENSION_LEN);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::descriptor::msg_flags;
    use proptest::prelude::*;

    fn header() -> TransmissionHeader {
        TransmissionHeader {
            remote_q_name: FixedStr::truncating("APP.IN"),
            remote_qmgr_name: FixedStr::truncating("QM2"),
            md: MessageDescriptor {
                format: FixedStr::truncating("MQSTR"),
                msg_id: [7; 24],
                reply_to_q: FixedStr::truncating("REPLY"),
                reply_to_qmgr: FixedStr::truncating("QM1"),
                user_identifier: FixedStr::truncating("alice"),
                put_date: FixedStr::truncating("20250101"),
                put_time: FixedStr::truncating("12000000"),
                ..MessageDescriptor::default()
            },
        }
    }

    fn int_le(b: &[u8], at: usize) -> i32 {
        i32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
    }

    #[test]
    fn the_header_has_mqs_layout() {
        let h = header();
        let mut out = Vec::new();
        h.encode(&mut out);
        assert_eq!(out.len(), TRANSMISSION_HEADER_LEN);
        assert_eq!(&out[..4], b"XQH ");
        assert_eq!(int_le(&out, 4), 1);
        assert_eq!(&out[8..14], b"APP.IN");
        assert_eq!(&out[56..59], b"QM2");
        // The embedded MQMD at 104: MQ's offsets plus 104.
        assert_eq!(&out[104..108], b"MD  ");
        assert_eq!(int_le(&out, 108), 1);
        assert_eq!(int_le(&out, 104 + 12), 8, "MsgType DATAGRAM");
        assert_eq!(int_le(&out, 104 + 24), 546, "Encoding");
        assert_eq!(&out[104 + 32..104 + 40], b"MQSTR   ");
        assert_eq!(&out[104 + 48..104 + 72], &[7; 24]);
        assert_eq!(&out[104 + 100..104 + 105], b"REPLY");
        assert_eq!(&out[104 + 148..104 + 151], b"QM1");
        assert_eq!(&out[104 + 196..104 + 201], b"alice");
        assert_eq!(&out[104 + 304..104 + 312], b"20250101");
        assert_eq!(&out[104 + 312..104 + 320], b"12000000");
        let (back, used) = TransmissionHeader::decode(&out).unwrap();
        assert_eq!(back, h);
        assert_eq!(used, TRANSMISSION_HEADER_LEN);
    }

    #[test]
    fn grouped_messages_carry_an_extension() {
        let mut h = header();
        h.md.group_id = [3; 24];
        h.md.msg_seq_number = 2;
        h.md.msg_flags = msg_flags::MSG_IN_GROUP;
        let mut out = Vec::new();
        h.encode(&mut out);
        out.extend_from_slice(b"data");
        assert_eq!(out.len(), TRANSMISSION_HEADER_LEN + MD_EXTENSION_LEN + 4);
        assert_eq!(&out[104 + 32..104 + 40], b"MQHMDE  ");
        let mde = &out[TRANSMISSION_HEADER_LEN..];
        assert_eq!(&mde[..4], b"MDE ");
        assert_eq!(int_le(mde, 4), 2);
        assert_eq!(int_le(mde, 8), 72);
        assert_eq!(&mde[20..28], b"MQSTR   ", "the application's Format");
        assert_eq!(&mde[32..56], &[3; 24]);
        assert_eq!(int_le(mde, 56), 2);
        assert_eq!(int_le(mde, 64), msg_flags::MSG_IN_GROUP);
        let (back, used) = TransmissionHeader::decode(&out).unwrap();
        assert_eq!(back, h);
        assert_eq!(&out[used..], b"data");
    }

    /// Re-encodes `out` (written little-endian) with every integer field big-endian, as
    /// a big-endian queue manager (MQENC 273) would write it.
    fn to_big_endian(out: &[u8], extension: bool) -> Vec<u8> {
        let xqh_ints = [4usize];
        let md_ints = [4, 8, 12, 16, 20, 24, 28, 40, 44, 96, 272];
        let mde_ints = [4, 8, 12, 16, 28, 56, 60, 64, 68];
        let mut b = out.to_vec();
        let mut flip = |at: usize| b[at..at + 4].reverse();
        xqh_ints.iter().for_each(|&o| flip(o));
        md_ints.iter().for_each(|&o| flip(104 + o));
        if extension {
            mde_ints
                .iter()
                .for_each(|&o| flip(TRANSMISSION_HEADER_LEN + o));
        }
        b
    }

    #[test]
    fn big_endian_headers_decode() {
        let mut h = header();
        h.md.msg_seq_number = 5;
        h.md.msg_flags = msg_flags::LAST_MSG_IN_GROUP;
        h.md.expiry = 600;
        let mut out = Vec::new();
        h.encode(&mut out);
        let mut big = to_big_endian(&out, true);
        // The embedded MD's Encoding describes the MQMDE: big-endian now.
        big[104 + 24..104 + 28].copy_from_slice(&273i32.to_be_bytes());
        let (back, used) = TransmissionHeader::decode(&big).unwrap();
        assert_eq!(back, h);
        assert_eq!(used, TRANSMISSION_HEADER_LEN + MD_EXTENSION_LEN);
    }

    #[test]
    fn damaged_headers_are_refused() {
        let mut out = Vec::new();
        let mut h = header();
        h.md.offset = 10;
        h.encode(&mut out);
        let short = TransmissionHeader::decode(&out[..100]).unwrap_err();
        assert!(matches!(short, TransmissionHeaderError::Short { .. }));
        assert_eq!(short.reason(), ReasonCode::FormatError);
        let no_mde = TransmissionHeader::decode(&out[..TRANSMISSION_HEADER_LEN + 10]);
        assert!(matches!(
            no_mde,
            Err(TransmissionHeaderError::Short {
                structure: "MQMDE",
                ..
            })
        ));
        let mut bad = out.clone();
        bad[0] = b'Y';
        assert!(matches!(
            TransmissionHeader::decode(&bad),
            Err(TransmissionHeaderError::StrucId { .. })
        ));
        let mut bad = out.clone();
        bad[4] = 2;
        assert!(matches!(
            TransmissionHeader::decode(&bad),
            Err(TransmissionHeaderError::Version { .. })
        ));
        let mut bad = out.clone();
        bad[108] = 2;
        assert!(matches!(
            TransmissionHeader::decode(&bad),
            Err(TransmissionHeaderError::Version {
                structure: "MQMD",
                ..
            })
        ));
        let mut bad = out.clone();
        bad[TRANSMISSION_HEADER_LEN + 8] = 80;
        assert_eq!(
            TransmissionHeader::decode(&bad),
            Err(TransmissionHeaderError::ExtensionLength(80))
        );
    }

    fn fixed<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
        proptest::collection::vec(any::<u8>(), N).prop_map(|v| {
            let mut b = [b' '; N];
            b.copy_from_slice(&v);
            FixedStr::from_bytes(b)
        })
    }

    fn id24() -> impl Strategy<Value = [u8; 24]> {
        prop_oneof![Just([0u8; 24]), any::<[u8; 24]>()]
    }

    fn descriptor() -> impl Strategy<Value = MessageDescriptor> {
        let context = (
            fixed::<12>(),
            any::<[u8; 32]>(),
            fixed::<32>(),
            any::<i32>(),
            fixed::<28>(),
            fixed::<8>(),
            fixed::<8>(),
            fixed::<4>(),
        );
        let main = (
            any::<[i32; 6]>(),
            prop_oneof![Just(crate::descriptor::format::STRING), fixed::<8>()],
            any::<[i32; 3]>(),
            id24(),
            id24(),
            fixed::<48>(),
            fixed::<48>(),
        );
        let v2 = prop_oneof![
            Just(([0u8; 24], 1, 0, 0, -1)),
            (
                id24(),
                any::<i32>(),
                any::<i32>(),
                any::<i32>(),
                any::<i32>()
            ),
        ];
        (main, context, v2).prop_map(|(m, c, v)| {
            let (ints, format, more, msg_id, correl_id, reply_to_q, reply_to_qmgr) = m;
            MessageDescriptor {
                report: ints[0],
                msg_type: ints[1],
                expiry: ints[2],
                feedback: ints[3],
                encoding: ints[4],
                ccsid: ints[5],
                format,
                priority: more[0],
                persistence: more[1],
                msg_id,
                correl_id,
                backout_count: more[2],
                reply_to_q,
                reply_to_qmgr,
                user_identifier: c.0,
                accounting_token: c.1,
                appl_identity_data: c.2,
                put_appl_type: c.3,
                put_appl_name: c.4,
                put_date: c.5,
                put_time: c.6,
                appl_origin_data: c.7,
                group_id: v.0,
                msg_seq_number: v.1,
                offset: v.2,
                msg_flags: v.3,
                original_length: v.4,
            }
        })
    }

    proptest! {
        #[test]
        fn round_trip(
            q in fixed::<48>(),
            qm in fixed::<48>(),
            md in descriptor(),
            data in proptest::collection::vec(any::<u8>(), 0..16),
        ) {
            let h = TransmissionHeader { remote_q_name: q, remote_qmgr_name: qm, md };
            let mut out = Vec::new();
            h.encode(&mut out);
            prop_assert_eq!(out.len(), h.encoded_len());
            out.extend_from_slice(&data);
            let (back, used) = TransmissionHeader::decode(&out).unwrap();
            prop_assert_eq!(back, h);
            prop_assert_eq!(&out[used..], &data[..]);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            crate::fuzzing::decode_transmission_header(&bytes);
        }

        #[test]
        fn damaged_headers_never_panic(
            md in descriptor(),
            at in 0usize..500,
            byte in any::<u8>(),
            cut in 0usize..520,
        ) {
            let h = TransmissionHeader {
                remote_q_name: FixedStr::BLANK,
                remote_qmgr_name: FixedStr::BLANK,
                md,
            };
            let mut out = Vec::new();
            h.encode(&mut out);
            if let Some(b) = out.get_mut(at) {
                *b = byte;
            }
            out.truncate(cut);
            crate::fuzzing::decode_transmission_header(&out);
        }
    }
}
