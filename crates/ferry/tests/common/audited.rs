//! Messages a crash audit can recognise and check wherever they turn up: a key (round,
//! putter, sequence number) and a checksum of the body and the descriptor fields that must
//! survive carried in the CorrelId, a body regenerated from the key, and the states a put
//! and a get go through in the audit's ledger, and what both audits do alike: reading a
//! queue back, pausing at random, the applications' connect options. Shared by the crash
//! torture of one queue manager (crash_torture.rs) and the crash audit across two
//! (channel_crash_audit.rs).

use super::{gmo, within, Rng, TestQueueManager};
use ferry_client::{ConnectOptions, Queue};
use ferry_mqi::{FixedStr, GetOptionFlags, GetOptions, MessageDescriptor, ReasonCode};
use std::fmt;
use std::time::Duration;

/// A message's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key {
    /// The round it was put in.
    pub round: u32,
    /// Its putter.
    pub putter: u16,
    /// Its number in the putter's sequence.
    pub seq: u64,
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}-p{}-{}", self.round, self.putter, self.seq)
    }
}

/// FNV-1a, 64 bits.
pub fn fnv(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for &b in *part {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// The key's 16 bytes at the start of the CorrelId.
pub fn key_bytes(key: Key) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..2].copy_from_slice(b"FT");
    b[2..6].copy_from_slice(&key.round.to_le_bytes());
    b[6..8].copy_from_slice(&key.putter.to_le_bytes());
    b[8..16].copy_from_slice(&key.seq.to_le_bytes());
    b
}

/// The checksum of a message's key, body and chosen descriptor fields.
pub fn checksum(key: Key, body: &[u8], priority: i32, persistence: i32, fmt: &FixedStr<8>) -> u64 {
    fnv(&[
        &key_bytes(key),
        &priority.to_le_bytes(),
        &persistence.to_le_bytes(),
        fmt.as_bytes(),
        &(body.len() as u64).to_le_bytes(),
        body,
    ])
}

/// The CorrelId carrying `key` and `sum`.
pub fn correl(key: Key, sum: u64) -> [u8; 24] {
    let mut c = [0u8; 24];
    c[..16].copy_from_slice(&key_bytes(key));
    c[16..].copy_from_slice(&sum.to_le_bytes());
    c
}

/// The key and checksum in a CorrelId, if it has the audit's layout.
pub fn parse_correl(c: &[u8; 24]) -> Option<(Key, u64)> {
    if &c[..2] != b"FT" {
        return None;
    }
    let u32_at = |i: usize| u32::from_le_bytes([c[i], c[i + 1], c[i + 2], c[i + 3]]);
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&c[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let key = Key {
        round: u32_at(2),
        putter: u16::from_le_bytes([c[6], c[7]]),
        seq: u64_at(8),
    };
    Some((key, u64_at(16)))
}

/// The body of `key` with `len` bytes: empty, or the key's text, `:` and filler.
pub fn make_body(key: Key, len: usize) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    let mut body = format!("{key}:").into_bytes();
    let mut x = fnv(&[&key_bytes(key)]) | 1;
    while body.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        body.push(b'a' + (x % 26) as u8);
    }
    body
}

/// Checks a received message against its own checksum and regenerated body; its key.
pub fn verify(md: &MessageDescriptor, body: &[u8]) -> Result<Key, String> {
    let (key, sum) = parse_correl(&md.correl_id)
        .ok_or_else(|| format!("foreign CorrelId {:02x?}", md.correl_id))?;
    let want = checksum(key, body, md.priority, md.persistence, &md.format);
    if want != sum {
        return Err(format!(
            "{key}: checksum mismatch (descriptor or body corrupt): priority {} persistence {} \
             format {:?} length {}",
            md.priority,
            md.persistence,
            md.format,
            body.len()
        ));
    }
    if body != make_body(key, body.len()).as_slice() {
        return Err(format!(
            "{key}: body differs from what was put (length {})",
            body.len()
        ));
    }
    Ok(key)
}

/// Where a put stands, from the putter's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutState {
    /// MQPUT outside syncpoint sent, not answered: in doubt.
    Sending,
    /// Put under syncpoint in unit of work `u`, commit not sent: invisible.
    InUow(u64),
    /// MQCMIT of unit of work `u` sent, not answered: in doubt.
    Committing(u64),
    /// Backed out (MQBACK, or uncommitted at a kill): must never be seen.
    BackedOut,
    /// Acknowledged, or proven by a get or an audit.
    Present,
    /// In doubt and not found by the audit: must never be seen.
    Gone,
}

/// How a get under syncpoint holds a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hold {
    /// Got, commit or backout not sent.
    Open,
    /// MQCMIT sent, not answered.
    Committing,
    /// MQBACK sent, not answered.
    BackingOut,
}

/// Where a message stands with the getters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GetState {
    /// Not got (available, or still on its way).
    Free,
    /// Got under syncpoint in unit of work `u`.
    Held(u64, Hold),
    /// Acknowledged as got: must never be seen again.
    Consumed,
}

/// Messages read off a queue by an audit: descriptor, body, length.
pub type Found = Vec<(MessageDescriptor, bytes::Bytes, usize)>;

/// The largest body an audit reads back.
const AUDIT_MAX_BODY: usize = 256 * 1024;

/// Every message on `q` in order, by browsing (`browse`) or by destructive gets.
pub async fn read_all(q: &Queue, browse: bool) -> Found {
    let mut out = Vec::new();
    let mut flags = if browse {
        GetOptionFlags::BROWSE_FIRST
    } else {
        GetOptionFlags::empty()
    };
    loop {
        let mut md = MessageDescriptor::default();
        let opts = gmo(flags | GetOptionFlags::NO_SYNCPOINT, 0);
        match within("audit get", q.get(&mut md, &opts, AUDIT_MAX_BODY)).await {
            Ok(got) => out.push((md, got.data, got.data_length)),
            Err(e) if e.reason == ReasonCode::NoMsgAvailable => return out,
            Err(e) => panic!(
                "audit {} of {}: {e}",
                if browse { "browse" } else { "get" },
                q.name()
            ),
        }
        if browse {
            flags = GetOptionFlags::BROWSE_NEXT;
        }
    }
}

/// The keys (or `?` for foreign messages) of a list of messages.
pub fn keys_of(list: &Found) -> Vec<String> {
    list.iter()
        .map(|(md, _, _)| {
            parse_correl(&md.correl_id).map_or_else(|| "?".to_string(), |(k, _)| k.to_string())
        })
        .collect()
}

/// A random pause of 1-10 ms, sometimes: lets the kill find units of work open.
pub async fn maybe_pause(rng: &mut Rng) {
    match rng.below(100) {
        0..=14 => tokio::time::sleep(Duration::from_millis(1 + rng.below(10) as u64)).await,
        15..=16 => tokio::time::sleep(Duration::from_millis(50 + rng.below(150) as u64)).await,
        _ => {}
    }
}

/// Get options: WAIT up to `wait_ms`, under syncpoint or not.
pub fn wait_gmo(sync: bool, wait_ms: i32) -> GetOptions {
    let sp = if sync {
        GetOptionFlags::SYNCPOINT
    } else {
        GetOptionFlags::NO_SYNCPOINT
    };
    GetOptions {
        options: GetOptionFlags::WAIT | sp,
        wait_interval: wait_ms,
        ..Default::default()
    }
}

/// Connect options for client `n`: TCP or bindings, own socket or shared.
pub fn client_opts(qm: &TestQueueManager, n: usize) -> ConnectOptions {
    let opts = if n.is_multiple_of(2) {
        qm.client()
    } else {
        qm.bindings()
    };
    let opts = if n.is_multiple_of(3) {
        opts
    } else {
        opts.sharecnv(1)
    };
    opts.connect_timeout(Duration::from_secs(5))
}
