//! The compact in-memory form of a message whose body is in its queue file.
//!
//! A deep queue is mostly messages that nobody will get for a while. Once such a message's
//! body has left memory (`crate::body`), what stays is what the queue needs without a read:
//! its place in the get order, its MsgId and CorrelId for the indexes, its expiry, and its
//! descriptor and properties for selectors and browsing. A [`StoredMsg`] keeps the
//! descriptor as MQ lays it out, 356 bytes of mostly blanks and defaults; a
//! [`FiledMessage`] keeps only the fields that differ from MQMD_DEFAULT, so a queue of
//! millions of messages costs a few hundred bytes each instead of about a kilobyte.
//!
//! A filed message is always available (a delivery that may bring it back takes its body
//! into memory first, and a message that changes is a [`StoredMsg`] again), so it needs no
//! state. [`FiledMessage::thaw`] gives the full [`StoredMsg`] back (its body still in the
//! queue file); [`FiledMessage::freeze`] makes the compact form. The two round-trip exactly.
//!
//! The packed descriptor: a 32-bit map of the fields that differ from the default (bit `i`
//! for the `i`th field of [`each_field`]'s list), then those fields in that order: an `i32`
//! as 4 bytes little-endian, a blank-padded string as a length byte and the bytes before
//! its trailing blanks, a byte array as a length byte and the bytes before its trailing
//! zeros. MsgId and CorrelId come first, so the indexes read them without unpacking the
//! rest. The message's properties follow the descriptor. This form never leaves memory:
//! the queue file and the log keep their own encoding (`crate::journal`).

use crate::body::{Body, FiledRecord};
use crate::queue::{MsgKey, MsgState, StoredMsg};
use bytes::Bytes;
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{CorrelId, FixedStr, MessageDescriptor, MsgId};
use std::rc::Rc;

/// A message whose body is in its queue file, kept in compact form (see the module
/// comment). Always available.
#[derive(Debug)]
pub(crate) struct FiledMessage {
    key: MsgKey,
    put_ms: u64,
    expires_at: Option<u64>,
    /// Where the body is.
    record: Rc<dyn FiledRecord>,
    /// The packed descriptor, then the properties.
    packed: Box<[u8]>,
    /// Where the properties start in `packed`.
    properties_at: u32,
    /// The body's length.
    body_len: u32,
    persistent: bool,
}

impl FiledMessage {
    /// The compact form of `m`, or `m` itself back when it cannot take it: it is not
    /// available, its body is in memory, or the body is too long to count in 32 bits.
    pub fn freeze(m: Box<StoredMsg>) -> Result<Box<FiledMessage>, Box<StoredMsg>> {
        let (len, record) = match &m.body {
            Body::Filed { len, record } if m.state == MsgState::Available => (*len, record),
            _ => return Err(m),
        };
        let Ok(body_len) = u32::try_from(len) else {
            return Err(m);
        };
        let mut packed = Vec::with_capacity(160 + m.properties.len());
        pack(&m.md, &mut packed);
        let Ok(properties_at) = u32::try_from(packed.len()) else {
            return Err(m);
        };
        packed.extend_from_slice(&m.properties);
        Ok(Box::new(FiledMessage {
            key: m.key,
            put_ms: m.put_ms,
            expires_at: m.expires_at,
            record: record.clone(),
            packed: packed.into_boxed_slice(),
            properties_at,
            body_len,
            persistent: m.md.is_persistent(),
        }))
    }

    /// The message in full, its body still in the queue file.
    pub fn thaw(&self) -> StoredMsg {
        let props = &self.packed[self.properties_at as usize..];
        StoredMsg {
            key: self.key,
            md: unpack(&self.packed[..self.properties_at as usize]),
            body: Body::Filed {
                len: self.body_len as usize,
                record: self.record.clone(),
            },
            properties: if props.is_empty() {
                Bytes::new()
            } else {
                Bytes::copy_from_slice(props)
            },
            put_ms: self.put_ms,
            expires_at: self.expires_at,
            state: MsgState::Available,
            // Only permanent queues' messages are filed (`crate::spill`, checkpoints).
            delivered_persistent: false,
        }
    }

    /// Where the message sits in the get order.
    pub fn key(&self) -> MsgKey {
        self.key
    }

    /// When it was put, ms.
    pub fn put_ms(&self) -> u64 {
        self.put_ms
    }

    /// When it expires, if it does.
    pub fn expires_at(&self) -> Option<u64> {
        self.expires_at
    }

    /// True for a persistent message.
    pub fn is_persistent(&self) -> bool {
        self.persistent
    }

    /// The body's length.
    pub fn body_len(&self) -> usize {
        self.body_len as usize
    }

    /// The encoded properties' length.
    pub fn properties_len(&self) -> usize {
        self.packed.len() - self.properties_at as usize
    }

    /// Its MsgId.
    pub fn msg_id(&self) -> MsgId {
        self.leading_id(0)
    }

    /// Its CorrelId.
    pub fn correl_id(&self) -> CorrelId {
        self.leading_id(1)
    }

    /// Points the body at `record` (its queue file was compacted).
    pub fn relocate(&mut self, record: &Rc<dyn FiledRecord>) {
        self.record = record.clone();
    }

    /// MsgId (`bit` 0) or CorrelId (1): the first fields after the map, when present.
    fn leading_id(&self, bit: u32) -> [u8; 24] {
        let mut input = &self.packed[..];
        let present = take_u32(&mut input);
        if present & (1 << bit) == 0 {
            return NONE_ID;
        }
        if bit == 1 && present & 1 != 0 {
            <[u8; 24]>::take(&mut input);
        }
        <[u8; 24]>::take(&mut input)
    }
}

/// One descriptor field as the packed form writes it.
trait PackedField: Sized + Copy + PartialEq {
    fn put(&self, out: &mut Vec<u8>);
    /// Reads the field back; the default's value if the input is short (it never is:
    /// only [`pack`] writes it).
    fn take(input: &mut &[u8]) -> Self;
}

impl PackedField for i32 {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn take(input: &mut &[u8]) -> Self {
        let Some((head, rest)) = input.split_first_chunk::<4>() else {
            debug_assert!(false, "packed descriptor cut short");
            return 0;
        };
        *input = rest;
        i32::from_le_bytes(*head)
    }
}

/// Writes `bytes` without the trailing `pad` bytes, after a length byte.
fn put_trimmed(bytes: &[u8], pad: u8, out: &mut Vec<u8>) {
    let kept = bytes.iter().rposition(|&b| b != pad).map_or(0, |i| i + 1);
    out.push(kept as u8);
    out.extend_from_slice(&bytes[..kept]);
}

/// Reads what [`put_trimmed`] wrote into `N` bytes padded with `pad`.
fn take_trimmed<const N: usize>(input: &mut &[u8], pad: u8) -> [u8; N] {
    let mut out = [pad; N];
    let Some((&len, rest)) = input.split_first() else {
        debug_assert!(false, "packed descriptor cut short");
        return out;
    };
    let len = usize::from(len).min(N).min(rest.len());
    out[..len].copy_from_slice(&rest[..len]);
    *input = &rest[len..];
    out
}

impl<const N: usize> PackedField for FixedStr<N> {
    fn put(&self, out: &mut Vec<u8>) {
        put_trimmed(self.as_bytes(), b' ', out);
    }
    fn take(input: &mut &[u8]) -> Self {
        FixedStr::from_bytes(take_trimmed(input, b' '))
    }
}

impl<const N: usize> PackedField for [u8; N] {
    fn put(&self, out: &mut Vec<u8>) {
        put_trimmed(self, 0, out);
    }
    fn take(input: &mut &[u8]) -> Self {
        take_trimmed(input, 0)
    }
}

fn take_u32(input: &mut &[u8]) -> u32 {
    i32::take(input) as u32
}

/// Calls `$apply!` with every MQMD field, MsgId and CorrelId first: the one list the
/// packed form's field numbers come from.
macro_rules! each_field {
    ($apply:ident, $($arg:tt)*) => {
        $apply!($($arg)*; msg_id, correl_id, report, msg_type, expiry, feedback, encoding,
            ccsid, format, priority, persistence, backout_count, reply_to_q, reply_to_qmgr,
            user_identifier, accounting_token, appl_identity_data, put_appl_type,
            put_appl_name, put_date, put_time, appl_origin_data, group_id, msg_seq_number,
            offset, msg_flags, original_length)
    };
}

macro_rules! pack_fields {
    ($md:ident, $default:ident, $out:ident, $present:ident; $($field:ident),*) => {{
        let mut bit = 0u32;
        $(
            if $md.$field != $default.$field {
                $present |= 1 << bit;
                $md.$field.put($out);
            }
            bit += 1;
        )*
        debug_assert!(bit <= 32);
    }};
}

macro_rules! unpack_fields {
    ($md:ident, $input:ident, $present:ident; $($field:ident),*) => {{
        let mut bit = 0u32;
        $(
            if $present & (1 << bit) != 0 {
                $md.$field = PackedField::take(&mut $input);
            }
            bit += 1;
        )*
        let _ = bit;
    }};
}

/// Appends `md` in packed form to `out`.
fn pack(md: &MessageDescriptor, out: &mut Vec<u8>) {
    let default = MessageDescriptor::default();
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut present = 0u32;
    each_field!(pack_fields, md, default, out, present);
    out[start..start + 4].copy_from_slice(&present.to_le_bytes());
}

/// The descriptor [`pack`] wrote.
fn unpack(mut input: &[u8]) -> MessageDescriptor {
    let present = take_u32(&mut input);
    let mut md = MessageDescriptor::default();
    each_field!(unpack_fields, md, input, present);
    debug_assert!(input.is_empty(), "packed descriptor longer than its fields");
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::ReasonCode;
    use proptest::prelude::*;

    #[derive(Debug)]
    struct NoRecord;
    impl FiledRecord for NoRecord {
        fn read_body(&self) -> Result<Bytes, ReasonCode> {
            Err(ReasonCode::ResourceProblem)
        }
    }

    fn filed(md: MessageDescriptor, properties: &[u8]) -> Box<StoredMsg> {
        Box::new(StoredMsg {
            key: MsgKey { rank: 4, seq: 77 },
            md,
            body: Body::Filed {
                len: 2048,
                record: Rc::new(NoRecord),
            },
            properties: Bytes::copy_from_slice(properties),
            put_ms: 1_700_000_000_000,
            expires_at: Some(1_700_000_060_000),
            state: MsgState::Available,
            delivered_persistent: false,
        })
    }

    fn same(a: &StoredMsg, b: &StoredMsg) {
        assert_eq!(a.key, b.key);
        assert_eq!(a.md, b.md);
        assert_eq!(a.properties, b.properties);
        assert_eq!(a.put_ms, b.put_ms);
        assert_eq!(a.expires_at, b.expires_at);
        assert_eq!(a.state, b.state);
        assert_eq!(a.body.len(), b.body.len());
        assert!(!b.body.is_resident());
    }

    /// A descriptor as a client's persistent put leaves it on a queue.
    fn typical() -> MessageDescriptor {
        MessageDescriptor {
            msg_id: *b"AMQ QM1         \x01\x02\x03\x04\x05\x06\x07\x08",
            persistence: 1,
            priority: 0,
            format: FixedStr::truncating("MQSTR"),
            user_identifier: FixedStr::truncating("app"),
            put_appl_name: FixedStr::truncating("ferry perf"),
            put_appl_type: 6,
            put_date: FixedStr::truncating("20261127"),
            put_time: FixedStr::truncating("15360212"),
            ..MessageDescriptor::default()
        }
    }

    #[test]
    fn a_typical_message_round_trips_in_a_fraction_of_the_descriptor() {
        let m = filed(typical(), b"props");
        let copy = m.clone();
        let f = FiledMessage::freeze(m).expect("available and filed");
        same(&copy, &f.thaw());
        assert_eq!(f.msg_id(), copy.md.msg_id);
        assert_eq!(f.correl_id(), NONE_ID);
        assert!(f.is_persistent());
        assert_eq!((f.body_len(), f.properties_len()), (2048, 5));
        let descriptor = f.properties_at as usize;
        assert!(descriptor < 100, "packed descriptor is {descriptor} bytes");
    }

    #[test]
    fn only_available_messages_with_bodies_on_disk_freeze() {
        let mut held = filed(typical(), b"");
        held.state = MsgState::UncommittedGet(crate::connection::ConnId(3));
        assert!(FiledMessage::freeze(held).is_err());
        let mut resident = filed(typical(), b"");
        resident.body = Body::Resident(Bytes::from_static(b"x"));
        assert!(FiledMessage::freeze(resident).is_err());
    }

    fn fixed<const N: usize>() -> impl Strategy<Value = FixedStr<N>> {
        prop::collection::vec(prop::sample::select(vec![b' ', b'A', 0u8, 0xFF]), N).prop_map(|v| {
            let mut a = [b' '; N];
            a.copy_from_slice(&v);
            FixedStr::from_bytes(a)
        })
    }

    fn bytes<const N: usize>() -> impl Strategy<Value = [u8; N]> {
        prop::collection::vec(prop::sample::select(vec![0u8, b' ', 7, 0xFF]), N).prop_map(|v| {
            let mut a = [0; N];
            a.copy_from_slice(&v);
            a
        })
    }

    fn int() -> impl Strategy<Value = i32> {
        prop_oneof![Just(0), Just(-1), Just(1), any::<i32>()]
    }

    prop_compose! {
        fn descriptor()(
            ids in (bytes::<24>(), bytes::<24>(), bytes::<32>(), bytes::<24>()),
            ints in prop::collection::vec(int(), 14),
            names in (fixed::<8>(), fixed::<48>(), fixed::<48>(), fixed::<12>(), fixed::<32>()),
            origin in (fixed::<28>(), fixed::<8>(), fixed::<8>(), fixed::<4>()),
        ) -> MessageDescriptor {
            MessageDescriptor {
                msg_id: ids.0, correl_id: ids.1, accounting_token: ids.2, group_id: ids.3,
                report: ints[0], msg_type: ints[1], expiry: ints[2], feedback: ints[3],
                encoding: ints[4], ccsid: ints[5], priority: ints[6], persistence: ints[7],
                backout_count: ints[8], put_appl_type: ints[9], msg_seq_number: ints[10],
                offset: ints[11], msg_flags: ints[12], original_length: ints[13],
                format: names.0, reply_to_q: names.1, reply_to_qmgr: names.2,
                user_identifier: names.3, appl_identity_data: names.4,
                put_appl_name: origin.0, put_date: origin.1, put_time: origin.2,
                appl_origin_data: origin.3,
            }
        }
    }

    proptest! {
        #[test]
        fn every_descriptor_round_trips(
            md in descriptor(),
            props in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let m = filed(md, &props);
            let copy = m.clone();
            let f = FiledMessage::freeze(m).expect("available and filed");
            same(&copy, &f.thaw());
            prop_assert_eq!(f.msg_id(), md.msg_id);
            prop_assert_eq!(f.correl_id(), md.correl_id);
            prop_assert_eq!(f.is_persistent(), md.is_persistent());
        }
    }
}
