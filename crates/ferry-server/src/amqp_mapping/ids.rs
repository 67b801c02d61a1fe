//! Message ids and correlation ids: the AMQP id ⇄ 24-byte MQ id ⇄ JMS string rules that
//! the put mapping, the delivery mapping and the selector lookup must all agree on.
//!
//! An AMQP id is a ulong, uuid, binary or string; MQ's MsgId/CorrelId is 24 bytes.
//! [`mq_id`] derives the MQ id:
//! - a binary of at most 24 bytes is those bytes, zero-padded (an MQ id read back by an
//!   AMQP consumer as binary comes home unchanged);
//! - a string `ID:` + 48 hex digits is those 24 bytes (IBM MQ JMS's spelling of an MQ
//!   id, e.g. `ID:414d5120...`);
//! - anything else (Qpid's `ID:<uuid>:1:1:1-1` strings, uuids, ulongs, longer binaries)
//!   is a 24-byte digest of the id's AMQP type code and value bytes: three 64-bit FNV-1a
//!   hashes with different seeds, each finished with the SplitMix64 mixer. The digest
//!   covers the value, not the sender's choice of encoding (str8 or str32), so a selector
//!   literal derives the same id. It is not cryptographic: two ids may share a digest,
//!   which only costs the engine an extra candidate, since the filter then checks the
//!   exact id. MsgIds are persisted, so the digest must never change (a test pins it).
//!
//! JMS strings follow Qpid JMS's `AmqpMessageIdHelper`: [`jms_message_id`] and
//! [`jms_correlation_id`] spell an AMQP id (`ID:AMQP_UUID:...`, `ID:AMQP_ULONG:...`,
//! `ID:AMQP_BINARY:<HEX>`, `ID:AMQP_NO_PREFIX:...`, `ID:AMQP_STRING:...`), and
//! [`parse_jms_id`] reads such a string back into the typed id Qpid would send.
//! [`native_jms_id`] spells an MQ id as IBM MQ JMS does (`ID:` + 48 lowercase hex).

use std::borrow::Cow;
use std::fmt::Write as _;

use bytes::{Bytes, BytesMut};
use ferry_amqp::codec::{format_code as fc, put_binary, put_string, put_value, Encode};
use ferry_amqp::{MessageId, MessageIdRef, Str, Value};

const JMS_ID_PREFIX: &str = "ID:";
const AMQP_UUID: &str = "AMQP_UUID:";
const AMQP_ULONG: &str = "AMQP_ULONG:";
const AMQP_BINARY: &str = "AMQP_BINARY:";
const AMQP_STRING: &str = "AMQP_STRING:";
const AMQP_NO_PREFIX: &str = "AMQP_NO_PREFIX:";
const TYPE_PREFIXES: [&str; 5] = [
    AMQP_UUID,
    AMQP_ULONG,
    AMQP_BINARY,
    AMQP_STRING,
    AMQP_NO_PREFIX,
];

/// An AMQP message-id or correlation-id, borrowed (from a decoded message or straight
/// from a stored encoding), so selectors compare ids without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdRef<'a> {
    /// `ulong`.
    Ulong(u64),
    /// `uuid`.
    Uuid([u8; 16]),
    /// `binary`.
    Binary(&'a [u8]),
    /// `string`.
    String(&'a str),
}

impl<'a> From<MessageIdRef<'a>> for IdRef<'a> {
    fn from(id: MessageIdRef<'a>) -> Self {
        match id {
            MessageIdRef::Ulong(v) => IdRef::Ulong(v),
            MessageIdRef::Uuid(u) => IdRef::Uuid(u),
            MessageIdRef::Binary(b) => IdRef::Binary(b),
            MessageIdRef::String(s) => IdRef::String(s),
        }
    }
}

impl<'a> IdRef<'a> {
    /// Borrows a decoded id.
    pub fn of(id: &'a MessageId) -> Self {
        match id {
            MessageId::Ulong(v) => IdRef::Ulong(*v),
            MessageId::Uuid(u) => IdRef::Uuid(*u),
            MessageId::Binary(b) => IdRef::Binary(b),
            MessageId::String(s) => IdRef::String(s.as_str()),
        }
    }

    /// Reads an id from its AMQP encoding (which must fill `encoded`); `None` when it is
    /// not one of the four id types.
    pub fn decode(encoded: &'a [u8]) -> Option<Self> {
        let (&code, rest) = encoded.split_first()?;
        let sized = |len_bytes: usize| -> Option<&'a [u8]> {
            let (len, data) = rest.split_at_checked(len_bytes)?;
            let len = len.iter().fold(0usize, |n, &b| n << 8 | b as usize);
            (data.len() == len).then_some(data)
        };
        Some(match code {
            fc::ULONG0 if rest.is_empty() => IdRef::Ulong(0),
            fc::SMALL_ULONG => IdRef::Ulong(u8::from_be_bytes(rest.try_into().ok()?).into()),
            fc::ULONG => IdRef::Ulong(u64::from_be_bytes(rest.try_into().ok()?)),
            fc::UUID => IdRef::Uuid(rest.try_into().ok()?),
            fc::VBIN8 => IdRef::Binary(sized(1)?),
            fc::VBIN32 => IdRef::Binary(sized(4)?),
            fc::STR8 => IdRef::String(std::str::from_utf8(sized(1)?).ok()?),
            fc::STR32 => IdRef::String(std::str::from_utf8(sized(4)?).ok()?),
            _ => return None,
        })
    }

    /// The id's AMQP encoding (most compact form), as stored in the reserved properties.
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(self.encoded_len());
        self.encode_into(&mut out);
        out.freeze()
    }

    /// Appends the AMQP encoding to `out` (several ids can share one buffer).
    pub fn encode_into(&self, out: &mut BytesMut) {
        match *self {
            IdRef::Ulong(v) => v.encode(out),
            IdRef::Uuid(u) => put_value(out, &Value::Uuid(u)),
            IdRef::Binary(b) => put_binary(out, b),
            IdRef::String(s) => put_string(out, s),
        }
    }

    /// At least the length of the AMQP encoding (for sizing a buffer).
    pub fn encoded_len(&self) -> usize {
        self.value_bytes().len() + 17
    }

    /// The owned id.
    pub fn to_message_id(&self) -> MessageId {
        match *self {
            IdRef::Ulong(v) => MessageId::Ulong(v),
            IdRef::Uuid(u) => MessageId::Uuid(u),
            IdRef::Binary(b) => MessageId::Binary(Bytes::copy_from_slice(b)),
            IdRef::String(s) => MessageId::String(Str::from(s)),
        }
    }

    /// The 24-byte MQ id this AMQP id maps to (module documentation).
    pub fn mq_id(&self) -> [u8; 24] {
        match *self {
            IdRef::Binary(b) if b.len() <= 24 => {
                let mut id = [0u8; 24];
                id[..b.len()].copy_from_slice(b);
                id
            }
            IdRef::String(s) => mq_hex_id(s).unwrap_or_else(|| digest(fc::STR8, s.as_bytes())),
            IdRef::Binary(b) => digest(fc::VBIN8, b),
            IdRef::Ulong(v) => digest(fc::ULONG, &v.to_be_bytes()),
            IdRef::Uuid(u) => digest(fc::UUID, &u),
        }
    }

    fn value_bytes(&self) -> &[u8] {
        match self {
            IdRef::Binary(b) => b,
            IdRef::String(s) => s.as_bytes(),
            _ => &[],
        }
    }
}

/// The 24-byte MQ id (MsgId or CorrelId) an AMQP message-id or correlation-id maps to.
pub fn mq_id(id: &MessageId) -> [u8; 24] {
    IdRef::of(id).mq_id()
}

/// `ID:` + 48 hex digits → the 24 bytes.
fn mq_hex_id(s: &str) -> Option<[u8; 24]> {
    let hex = s.strip_prefix(JMS_ID_PREFIX)?;
    if hex.len() != 48 {
        return None;
    }
    parse_hex(hex)?.try_into().ok()
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
/// FNV-1a's offset basis and two further seeds (the fractional bits of the golden ratio
/// and of √2, each XORed into the basis).
const SEEDS: [u64; 3] = [
    0xcbf2_9ce4_8422_2325,
    0xcbf2_9ce4_8422_2325 ^ 0x9e37_79b9_7f4a_7c15,
    0xcbf2_9ce4_8422_2325 ^ 0x6a09_e667_f3bc_c908,
];

/// The 24-byte digest of an id with AMQP type code `code` and value bytes `data`. The
/// three hashes run in one pass over the bytes (three independent multiply chains, not
/// three passes: ids are digested on every AMQP put and delivery). A request's message-id
/// is digested again at its delivery, as its reply's correlation-id, at that reply's
/// delivery and for a selector on it: [`DigestMemo`] keeps the recent ones.
fn digest(code: u8, data: &[u8]) -> [u8; 24] {
    DigestMemo::get_or(code, data, fnv_digest)
}

/// The digest itself (module documentation).
fn fnv_digest(code: u8, data: &[u8]) -> [u8; 24] {
    let step = |h: u64, b: u8| (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
    let [mut a, mut b, mut c] = SEEDS.map(|seed| step(seed, code));
    for &byte in data {
        a = step(a, byte);
        b = step(b, byte);
        c = step(c, byte);
    }
    let mut id = [0u8; 24];
    for (chunk, x) in id.chunks_exact_mut(8).zip([a, b, c]) {
        chunk.copy_from_slice(&mix(x ^ data.len() as u64).to_be_bytes());
    }
    id
}

/// Recently digested ids, by type code and value bytes (a direct-mapped table per
/// thread: the queue manager maps messages on one thread). A hit costs a short compare
/// instead of three multiplies per byte; ids longer than [`MEMO_KEY`] bytes are not kept.
struct DigestMemo {
    slots: Box<[MemoSlot; MEMO_SLOTS]>,
}

/// Slots of the memo (a power of two): twice the ids of 256 round trips in flight.
const MEMO_SLOTS: usize = 512;
/// The longest id value the memo keeps (Qpid JMS's message-ids are about 50 bytes).
const MEMO_KEY: usize = 64;

#[derive(Clone, Copy)]
struct MemoSlot {
    /// The type code, and the value's length + 1 (0: empty slot).
    code: u8,
    len: u8,
    key: [u8; MEMO_KEY],
    id: [u8; 24],
}

const EMPTY_SLOT: MemoSlot = MemoSlot {
    code: 0,
    len: 0,
    key: [0; MEMO_KEY],
    id: [0; 24],
};

thread_local! {
    static MEMO: std::cell::RefCell<DigestMemo> = std::cell::RefCell::new(DigestMemo {
        slots: Box::new([EMPTY_SLOT; MEMO_SLOTS]),
    });
}

impl DigestMemo {
    /// The digest of (`code`, `data`), from the memo or computed by `compute` (and kept).
    fn get_or(code: u8, data: &[u8], compute: fn(u8, &[u8]) -> [u8; 24]) -> [u8; 24] {
        if data.len() > MEMO_KEY {
            return compute(code, data);
        }
        let slot = Self::slot_of(code, data);
        MEMO.with(|memo| {
            let Ok(mut memo) = memo.try_borrow_mut() else {
                return compute(code, data);
            };
            let s = &mut memo.slots[slot];
            if s.code == code
                && usize::from(s.len) == data.len() + 1
                && &s.key[..data.len()] == data
            {
                debug_assert_eq!(s.id, compute(code, data));
                return s.id;
            }
            let id = compute(code, data);
            s.code = code;
            s.len = (data.len() + 1) as u8;
            s.key[..data.len()].copy_from_slice(data);
            s.id = id;
            id
        })
    }

    /// Where (`code`, `data`) lives: its length and last (and first) eight bytes mixed,
    /// since ids of one sender differ in their trailing counter.
    fn slot_of(code: u8, data: &[u8]) -> usize {
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let n = data.len();
        let tail = word(&data[n.saturating_sub(8)..]);
        let head = word(&data[..n.min(8)]);
        let h = (tail ^ head.rotate_left(29) ^ ((n as u64) << 56) ^ u64::from(code))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - MEMO_SLOTS.trailing_zeros())) as usize
    }
}

/// SplitMix64's finaliser: spreads every input bit over the output.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// True when `s` is `ID:` followed by one of Qpid's type-encoding prefixes.
fn has_type_prefix(s: &str) -> bool {
    s.strip_prefix(JMS_ID_PREFIX)
        .is_some_and(|rest| TYPE_PREFIXES.iter().any(|p| rest.starts_with(p)))
}

/// How Qpid JMS shows an AMQP message-id as JMSMessageID.
pub fn jms_message_id(id: IdRef<'_>) -> Cow<'_, str> {
    match id {
        IdRef::String(s) if !s.starts_with(JMS_ID_PREFIX) => {
            Cow::Owned(format!("{JMS_ID_PREFIX}{AMQP_NO_PREFIX}{s}"))
        }
        other => jms_correlation_id(other),
    }
}

/// How Qpid JMS shows an AMQP correlation-id as JMSCorrelationID: like
/// [`jms_message_id`], except that a string without `ID:` (an application-specific
/// correlation id) is shown as it is.
pub fn jms_correlation_id(id: IdRef<'_>) -> Cow<'_, str> {
    match id {
        IdRef::String(s) if has_type_prefix(s) => {
            Cow::Owned(format!("{JMS_ID_PREFIX}{AMQP_STRING}{s}"))
        }
        IdRef::String(s) => Cow::Borrowed(s),
        IdRef::Ulong(v) => Cow::Owned(format!("{JMS_ID_PREFIX}{AMQP_ULONG}{v}")),
        IdRef::Uuid(u) => {
            let mut s = format!("{JMS_ID_PREFIX}{AMQP_UUID}");
            for (i, b) in u.iter().enumerate() {
                if matches!(i, 4 | 6 | 8 | 10) {
                    s.push('-');
                }
                let _ = write!(s, "{b:02x}");
            }
            Cow::Owned(s)
        }
        IdRef::Binary(b) => {
            let mut s = String::with_capacity(15 + 2 * b.len());
            s.push_str(JMS_ID_PREFIX);
            s.push_str(AMQP_BINARY);
            for byte in b {
                let _ = write!(s, "{byte:02X}");
            }
            Cow::Owned(s)
        }
    }
}

/// How IBM MQ JMS shows a native MsgId or CorrelId: `ID:` + 48 lowercase hex digits.
pub fn native_jms_id(id: &[u8; 24]) -> String {
    let mut s = String::with_capacity(51);
    s.push_str(JMS_ID_PREFIX);
    for b in id {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The typed AMQP id Qpid JMS sends for a JMS id string (its `toIdObject`):
/// `ID:AMQP_UUID:<uuid>` → uuid, `ID:AMQP_ULONG:<n>` → ulong, `ID:AMQP_BINARY:<hex>` →
/// binary, `ID:AMQP_STRING:<s>` and `ID:AMQP_NO_PREFIX:<s>` → the string `<s>`, anything
/// else → the string as given. Where Qpid would refuse the string (a bad uuid, number or
/// hex), it is taken as a plain string id: never an error.
pub fn parse_jms_id(s: &str) -> MessageId {
    let typed = s.strip_prefix(JMS_ID_PREFIX).and_then(|rest| {
        if let Some(u) = rest.strip_prefix(AMQP_UUID) {
            parse_uuid(u).map(MessageId::Uuid)
        } else if let Some(n) = rest.strip_prefix(AMQP_ULONG) {
            n.parse().ok().map(MessageId::Ulong)
        } else if let Some(h) = rest.strip_prefix(AMQP_BINARY) {
            parse_hex(h).map(|b| MessageId::Binary(Bytes::from(b)))
        } else if let Some(t) = rest.strip_prefix(AMQP_STRING) {
            Some(MessageId::String(Str::from(t)))
        } else {
            rest.strip_prefix(AMQP_NO_PREFIX)
                .map(|t| MessageId::String(Str::from(t)))
        }
    });
    typed.unwrap_or_else(|| MessageId::String(Str::from(s)))
}

/// A uuid in its 36-character text form (any case).
fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let b = s.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let hex: String = s.chars().filter(|&c| c != '-').collect();
    parse_hex(&hex)?.try_into().ok()
}

/// Hex digits (any case, even count) → bytes.
fn parse_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    b.chunks_exact(2)
        .map(|p| Some(digit(p[0])? << 4 | digit(p[1])?))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const UUID: [u8; 16] = [
        0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd,
        0xef,
    ];

    fn ids() -> Vec<MessageId> {
        vec![
            MessageId::String(Str::from("ID:5f0c1e2a-0b8e-4a5e-9c2d-1f2e3d4c5b6a:1:1:1-1")),
            MessageId::String(Str::from("order-42")),
            MessageId::String(Str::from("ID:AMQP_ULONG:7")),
            MessageId::Uuid(UUID),
            MessageId::Ulong(0),
            MessageId::Ulong(u64::MAX),
            MessageId::Binary(Bytes::from_static(b"short")),
            MessageId::Binary(Bytes::from(vec![0xab; 24])),
            MessageId::Binary(Bytes::from(vec![0xcd; 40])),
        ]
    }

    #[test]
    fn binary_ids_up_to_24_bytes_are_padded() {
        let id = mq_id(&MessageId::Binary(Bytes::from_static(b"abc")));
        assert_eq!(&id[..3], b"abc");
        assert_eq!(id[3..], [0; 21]);
    }

    #[test]
    fn mq_jms_strings_are_the_24_bytes() {
        let bytes: [u8; 24] = std::array::from_fn(|i| i as u8 * 7);
        let s = native_jms_id(&bytes);
        assert_eq!(s.len(), 51);
        assert!(s.starts_with("ID:00070e"));
        assert_eq!(mq_id(&MessageId::String(Str::from(s.as_str()))), bytes);
        let upper = s.to_uppercase(); // "ID:" stays, the hex digits go upper case
        assert_eq!(mq_id(&MessageId::String(Str::from(upper))), bytes);
    }

    /// The digest as the module documentation states it, written plainly.
    fn reference_digest(code: u8, data: &[u8]) -> [u8; 24] {
        let mut id = [0u8; 24];
        for (i, seed) in SEEDS.into_iter().enumerate() {
            let mut h = seed;
            for &b in std::iter::once(&code).chain(data) {
                h = (h ^ u64::from(b)).wrapping_mul(FNV_PRIME);
            }
            id[i * 8..][..8].copy_from_slice(&mix(h ^ data.len() as u64).to_be_bytes());
        }
        id
    }

    #[test]
    fn digests_match_the_reference_whether_memoised_or_not() {
        let long = "ID:1b0f7e2c-5d4a-4b7e-9f3a-0c2d1e4f5a6b:1:1:1-".repeat(3);
        for n in 0..2000u32 {
            // Qpid-style ids (many share a prefix), some longer than the memo keeps.
            let s = if n % 7 == 0 {
                format!("{long}{n}")
            } else {
                format!("ID:1b0f7e2c-5d4a-4b7e-9f3a-0c2d1e4f5a6b:1:1:1-{n}")
            };
            for code in [fc::STR8, fc::VBIN8] {
                let want = reference_digest(code, s.as_bytes());
                assert_eq!(digest(code, s.as_bytes()), want, "{s}");
                assert_eq!(digest(code, s.as_bytes()), want, "{s}, again");
            }
        }
        assert_eq!(digest(fc::STR8, b""), reference_digest(fc::STR8, b""));
    }

    #[test]
    fn digest_is_pinned_and_depends_on_type_and_value() {
        // MsgIds are persisted: this value must never change (checked against an
        // independent implementation of the algorithm in the module documentation).
        let d = mq_id(&MessageId::String(Str::from("ID:x")));
        assert_eq!(native_jms_id(&d), native_jms_id(&digest(fc::STR8, b"ID:x")));
        assert_eq!(
            native_jms_id(&d),
            "ID:c16a2f83a74e46e7589f6f6de0489f4846595fbf775bf3a1"
        );
        assert_ne!(
            mq_id(&MessageId::Ulong(1)),
            mq_id(&MessageId::String(Str::from("1")))
        );
        let long = MessageId::Binary(Bytes::from(vec![1u8; 25]));
        assert_ne!(
            mq_id(&long),
            mq_id(&MessageId::Binary(Bytes::from(vec![1u8; 26])))
        );
    }

    #[test]
    fn jms_strings_follow_qpid() {
        let show = |id: &MessageId| jms_message_id(IdRef::of(id)).into_owned();
        assert_eq!(
            show(&MessageId::Uuid(UUID)),
            "ID:AMQP_UUID:12345678-9abc-def0-0123-456789abcdef"
        );
        assert_eq!(show(&MessageId::Ulong(42)), "ID:AMQP_ULONG:42");
        assert_eq!(
            show(&MessageId::Binary(Bytes::from_static(&[0x0a, 0xff]))),
            "ID:AMQP_BINARY:0AFF"
        );
        assert_eq!(
            show(&MessageId::String(Str::from("abc"))),
            "ID:AMQP_NO_PREFIX:abc"
        );
        assert_eq!(show(&MessageId::String(Str::from("ID:abc"))), "ID:abc");
        assert_eq!(
            show(&MessageId::String(Str::from("ID:AMQP_ULONG:1"))),
            "ID:AMQP_STRING:ID:AMQP_ULONG:1"
        );
        let corr = MessageId::String(Str::from("abc"));
        assert_eq!(jms_correlation_id(IdRef::of(&corr)), "abc");
    }

    #[test]
    fn jms_strings_parse_back_to_the_same_id() {
        for id in ids() {
            let as_message = jms_message_id(IdRef::of(&id)).into_owned();
            assert_eq!(parse_jms_id(&as_message), id, "{as_message}");
            let as_correlation = jms_correlation_id(IdRef::of(&id)).into_owned();
            assert_eq!(parse_jms_id(&as_correlation), id, "{as_correlation}");
        }
        assert_eq!(
            parse_jms_id("ID:AMQP_UUID:12345678-9ABC-DEF0-0123-456789ABCDEF"),
            MessageId::Uuid(UUID)
        );
        // What Qpid would refuse is a plain string id.
        for odd in ["ID:AMQP_ULONG:x", "ID:AMQP_BINARY:ABC", "ID:AMQP_UUID:1-2"] {
            assert_eq!(parse_jms_id(odd), MessageId::String(Str::from(odd)));
        }
    }

    #[test]
    fn encodings_decode_to_the_same_id() {
        for id in ids() {
            let r = IdRef::of(&id);
            assert_eq!(IdRef::decode(&r.encode()), Some(r));
            assert_eq!(r.to_message_id(), id);
        }
        // Wide encodings a sender may choose read the same.
        assert_eq!(
            IdRef::decode(&[fc::STR32, 0, 0, 0, 1, b'a']),
            Some(IdRef::String("a"))
        );
        assert_eq!(
            IdRef::decode(&[fc::ULONG, 0, 0, 0, 0, 0, 0, 0, 9]),
            Some(IdRef::Ulong(9))
        );
        for bad in [
            &[][..],
            &[fc::STR8, 2, b'a'],
            &[fc::STR8, 1, 0xff],
            &[0x71, 0, 0, 0, 1],
        ] {
            assert_eq!(IdRef::decode(bad), None, "{bad:?}");
        }
    }
}
