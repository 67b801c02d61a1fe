//! Recovery-log records: what the engine asks the server to append to the recovery log,
//! and the pure, versioned codec that turns them into bytes and back.
//!
//! The engine never talks to the log itself (it does no I/O and does not depend on
//! `ferry-store`). A state change of a persistent message becomes a [`LogRecord`] in the
//! caller's [`crate::Effects`]: a record *kind* (16..=24, in the caller-defined range of
//! the log) and its payload bytes. At restart the server hands every payload back to
//! [`crate::Recovery::apply`].
//!
//! # Format (version 2; version 1 still read)
//!
//! Every payload starts with the format version byte (`2` written; `1` and `2` read);
//! everything after it is little-endian, with no padding. `name` is a queue name: one length byte (1..=48) and
//! that many UTF-8 bytes. `uow` is a unit-of-work id (`u64`); `opt uow` is a flag byte
//! (0 = none, 1 = present) followed by the `u64` when present.
//!
//! | kind | record | payload after the version byte |
//! |---|---|---|
//! | 16 | [`Record::Put`] | opt uow, name, message (below) |
//! | 17 | [`Record::Get`] | opt uow, name, seq `u64` |
//! | 18 | [`Record::Commit`] | uow |
//! | 19 | [`Record::Backout`] | uow |
//! | 20 | [`Record::ClearQueue`] | name |
//! | 21 | [`Record::DeleteQueue`] | name |
//! | 22 | [`Record::DefineQueue`] | name |
//! | 23 | [`Record::BackoutCount`] (version 2 only) | name, seq `u64`, count `i32` |
//! | 24 | [`Record::Publish`] (version 2 only) | opt uow, copies `u32`, per copy: name, message head, then body length `u32`, body |
//!
//! A message is: rank `u8` (0..=9), seq `u64` (arrival number on its queue), put time
//! `u64` (ms), expiry time `u64` (ms, `u64::MAX` = never), the full MQMD (every field of
//! [`MessageDescriptor`] in declaration order: `i32`s as 4 bytes, character and byte
//! fields at their fixed MQMD lengths; 356 bytes), then (version 2 only) properties
//! length `u32` and the encoded message properties ([`ferry_mqi::MessageProperties`],
//! 0 bytes for none), then body length `u32`, body.
//!
//! | version | what changed |
//! |---|---|
//! | 1 | the first format: messages without properties (read as having none) |
//! | 2 | messages carry their properties; kind 23 (BackoutCount) added; kind 24 (Publish) added later in version 2 (an older Ferry refuses it as an unknown kind, naming it) |
//!
//! A message head is a message without its body length and body. A publication's
//! persistent copies share one body: [`Record::Publish`] logs it once, after every
//! copy's head, however many subscriptions it reached.
//!
//! The properties sit *before* the body so that the body stays the record's last,
//! uncopied part ([`LogRecord::body`]; the server appends `head` then `body`): the
//! properties are small and copied into `head`.
//!
//! Decoding refuses (with a [`DecodeError`], never a panic) an unknown kind or version, a
//! short or overlong payload, a bad flag byte, a bad queue name, a rank above 9.

use bytes::Bytes;
use ferry_mqi::{FixedStr, MessageDescriptor};
use std::fmt;

/// The record format version written by this engine (first payload byte).
pub const FORMAT_VERSION: u8 = 2;
/// The oldest record format version this engine still reads.
pub const OLDEST_FORMAT_VERSION: u8 = 1;

/// Record kinds, in the log's caller-defined range (16..=255).
pub mod kind {
    /// A persistent message put (under syncpoint when it names a unit of work).
    pub const PUT: u8 = 16;
    /// A destructive get of a persistent message.
    pub const GET: u8 = 17;
    /// A unit of work committed.
    pub const COMMIT: u8 = 18;
    /// A unit of work backed out.
    pub const BACKOUT: u8 = 19;
    /// CLEAR QLOCAL: every committed message of the queue is gone.
    pub const CLEAR_QUEUE: u8 = 20;
    /// A local queue deleted with its messages.
    pub const DELETE_QUEUE: u8 = 21;
    /// A local queue created (empty).
    pub const DEFINE_QUEUE: u8 = 22;
    /// A held message returned to its queue with a new BackoutCount (a settlement
    /// `Modified { delivery_failed: true }`).
    pub const BACKOUT_COUNT: u8 = 23;
    /// A publication's persistent copies, one per subscription queue, sharing one body.
    pub const PUBLISH: u8 = 24;
}

/// Longest queue name MQ allows (MQ_Q_NAME_LENGTH).
const MAX_NAME: usize = 48;
/// Encoded MQMD length.
pub(crate) const MD_LEN: usize = 356;

/// One record for the server to append to the recovery log, in the order the engine
/// produced it. The payload is split in two so a message body (a shared
/// [`Bytes`]) is never copied by the engine: the log payload is `head` followed by
/// `body` (empty for records without a message).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// The record kind ([`kind`]), for the log's record header.
    pub kind: u8,
    /// The encoded fields.
    pub head: Vec<u8>,
    /// The message body of a put record, appended after `head`.
    pub body: Bytes,
}

impl LogRecord {
    /// The payload length (`head` + `body`).
    pub fn len(&self) -> usize {
        self.head.len() + self.body.len()
    }

    /// True for an empty payload (never produced by the engine).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The payload as one contiguous buffer (copies the body).
    pub fn payload(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len());
        v.extend_from_slice(&self.head);
        v.extend_from_slice(&self.body);
        v
    }

    /// Decodes this record (what recovery would read back).
    pub fn decode(&self) -> Result<Record, DecodeError> {
        Record::decode(self.kind, &self.payload())
    }
}

/// A persistent message as logged: its place on the queue and its full descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggedMessage {
    /// `9 - priority` (or `9 - DEFPRTY` under FIFO delivery): the get order's first key.
    pub rank: u8,
    /// The arrival number on its queue: the get order's second key and the message's
    /// name in later records.
    pub seq: u64,
    /// When it was put, ms since the epoch.
    pub put_ms: u64,
    /// When it expires, ms since the epoch.
    pub expires_at: Option<u64>,
    /// The descriptor as completed by the put (BackoutCount current).
    pub md: MessageDescriptor,
    /// The body.
    pub body: Bytes,
    /// The encoded message properties; empty for none (and for every version 1 record).
    pub properties: Bytes,
}

/// A decoded log record. A put carries its descriptor inline: records are decoded
/// once each at restart and moved once, so boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// A persistent message put: committed at once (`uow == None`, MQ's implicit
    /// syncpoint) or part of unit of work `uow`.
    Put {
        /// The unit of work, when under syncpoint.
        uow: Option<u64>,
        /// The local queue.
        queue: String,
        /// The message.
        msg: LoggedMessage,
    },
    /// A destructive get of the persistent message `seq` of `queue`: final at once
    /// (`uow == None`) or part of unit of work `uow`.
    Get {
        /// The unit of work, when under syncpoint.
        uow: Option<u64>,
        /// The local queue.
        queue: String,
        /// The message's arrival number.
        seq: u64,
    },
    /// Unit of work `uow` committed: its puts appear, its gets are final.
    Commit {
        /// The unit of work.
        uow: u64,
    },
    /// Unit of work `uow` backed out: its puts vanish, its got messages return to their
    /// places with BackoutCount + 1.
    Backout {
        /// The unit of work.
        uow: u64,
    },
    /// Every committed message of `queue` removed (CLEAR QLOCAL).
    ClearQueue {
        /// The local queue.
        queue: String,
    },
    /// `queue` deleted with its messages (and the uncommitted work on it).
    DeleteQueue {
        /// The local queue.
        queue: String,
    },
    /// `queue` created, empty.
    DefineQueue {
        /// The local queue.
        queue: String,
    },
    /// A publication's persistent copies, each put on its queue as [`Record::Put`]
    /// would, in unit of work `uow` when under syncpoint; the copies' bodies are one.
    Publish {
        /// The unit of work, when under syncpoint.
        uow: Option<u64>,
        /// Each copy's local queue and message (every `msg.body` the same bytes).
        copies: Vec<(String, LoggedMessage)>,
    },
    /// Message `seq` of `queue` now has BackoutCount `count` (a delivery failed).
    BackoutCount {
        /// The local queue.
        queue: String,
        /// The message's arrival number.
        seq: u64,
        /// The new BackoutCount.
        count: i32,
    },
}

/// Why a payload could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The kind is not one of [`kind`].
    #[error("unknown log record kind {0}")]
    UnknownKind(u8),
    /// The payload's format version is not one this engine reads
    /// ([`OLDEST_FORMAT_VERSION`]..=[`FORMAT_VERSION`]).
    #[error("log record format version {found}; this Ferry reads versions {OLDEST_FORMAT_VERSION} to {FORMAT_VERSION}")]
    UnsupportedVersion {
        /// The version found.
        found: u8,
    },
    /// The payload ends inside a field.
    #[error("log record truncated")]
    Truncated,
    /// Bytes follow the last field.
    #[error("{0} unexpected bytes after a log record")]
    TrailingBytes(usize),
    /// A field holds an impossible value.
    #[error("invalid log record field: {0}")]
    Invalid(&'static str),
}

// ---------------------------------------------------------------------------------------
// Encoding

struct Writer(Vec<u8>);

impl Writer {
    fn new(kind_hint: usize) -> Self {
        let mut v = Vec::with_capacity(kind_hint);
        v.push(FORMAT_VERSION);
        Writer(v)
    }
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.extend_from_slice(b);
    }
    fn opt_uow(&mut self, uow: Option<u64>) {
        match uow {
            None => self.u8(0),
            Some(u) => {
                self.u8(1);
                self.u64(u);
            }
        }
    }
    /// Queue names are at most 48 bytes (checked when defined); a longer one is cut,
    /// which decoding then reports as a different name rather than panicking here.
    fn name(&mut self, n: &str) {
        let mut end = n.len().min(MAX_NAME);
        while !n.is_char_boundary(end) {
            end -= 1;
        }
        self.u8(end as u8);
        self.bytes(&n.as_bytes()[..end]);
    }
    /// A message without its body: rank, seq, put time, expiry, MQMD, properties.
    fn message_head(&mut self, msg: &LoggedMessage) {
        self.u8(msg.rank);
        self.u64(msg.seq);
        self.u64(msg.put_ms);
        self.u64(msg.expires_at.unwrap_or(u64::MAX));
        self.md(&msg.md);
        self.u32(u32::try_from(msg.properties.len()).unwrap_or(u32::MAX));
        self.bytes(&msg.properties);
    }
    fn md(&mut self, md: &MessageDescriptor) {
        let start = self.0.len();
        self.i32(md.report);
        self.i32(md.msg_type);
        self.i32(md.expiry);
        self.i32(md.feedback);
        self.i32(md.encoding);
        self.i32(md.ccsid);
        self.bytes(md.format.as_bytes());
        self.i32(md.priority);
        self.i32(md.persistence);
        self.bytes(&md.msg_id);
        self.bytes(&md.correl_id);
        self.i32(md.backout_count);
        self.bytes(md.reply_to_q.as_bytes());
        self.bytes(md.reply_to_qmgr.as_bytes());
        self.bytes(md.user_identifier.as_bytes());
        self.bytes(&md.accounting_token);
        self.bytes(md.appl_identity_data.as_bytes());
        self.i32(md.put_appl_type);
        self.bytes(md.put_appl_name.as_bytes());
        self.bytes(md.put_date.as_bytes());
        self.bytes(md.put_time.as_bytes());
        self.bytes(md.appl_origin_data.as_bytes());
        self.bytes(&md.group_id);
        self.i32(md.msg_seq_number);
        self.i32(md.offset);
        self.i32(md.msg_flags);
        self.i32(md.original_length);
        debug_assert_eq!(self.0.len() - start, MD_LEN);
    }
}

impl LogRecord {
    /// A put record for `msg` on `queue`.
    pub(crate) fn put(uow: Option<u64>, queue: &str, msg: &LoggedMessage) -> Self {
        let props = &msg.properties;
        let mut w = Writer::new(1 + 9 + 49 + 1 + 24 + MD_LEN + 8 + props.len());
        w.opt_uow(uow);
        w.name(queue);
        w.message_head(msg);
        w.u32(u32::try_from(msg.body.len()).unwrap_or(u32::MAX));
        LogRecord {
            kind: kind::PUT,
            head: w.0,
            body: msg.body.clone(),
        }
    }

    /// A publish record: `copies` (queue, message) share `body`, written once.
    pub(crate) fn publish(
        uow: Option<u64>,
        copies: &[(&str, &LoggedMessage)],
        body: &Bytes,
    ) -> Self {
        let heads: usize = copies
            .iter()
            .map(|(_, m)| 49 + 1 + 24 + MD_LEN + 4 + m.properties.len())
            .sum();
        let mut w = Writer::new(1 + 9 + 4 + heads + 4);
        w.opt_uow(uow);
        w.u32(u32::try_from(copies.len()).unwrap_or(u32::MAX));
        for (queue, msg) in copies {
            debug_assert_eq!(msg.body, *body, "the copies share the publication's body");
            w.name(queue);
            w.message_head(msg);
        }
        w.u32(u32::try_from(body.len()).unwrap_or(u32::MAX));
        LogRecord {
            kind: kind::PUBLISH,
            head: w.0,
            body: body.clone(),
        }
    }

    /// A get record for message `seq` of `queue`.
    pub(crate) fn get(uow: Option<u64>, queue: &str, seq: u64) -> Self {
        let mut w = Writer::new(1 + 9 + 49 + 8);
        w.opt_uow(uow);
        w.name(queue);
        w.u64(seq);
        Self::small(kind::GET, w)
    }

    /// A BackoutCount record: message `seq` of `queue` now has BackoutCount `count`.
    pub(crate) fn backout_count(queue: &str, seq: u64, count: i32) -> Self {
        let mut w = Writer::new(1 + 49 + 8 + 4);
        w.name(queue);
        w.u64(seq);
        w.i32(count);
        Self::small(kind::BACKOUT_COUNT, w)
    }

    /// A commit (`commit == true`) or backout record of `uow`.
    pub(crate) fn end_uow(uow: u64, commit: bool) -> Self {
        let mut w = Writer::new(9);
        w.u64(uow);
        Self::small(if commit { kind::COMMIT } else { kind::BACKOUT }, w)
    }

    /// A queue record (clear, delete, define).
    pub(crate) fn queue(kind: u8, queue: &str) -> Self {
        let mut w = Writer::new(50);
        w.name(queue);
        Self::small(kind, w)
    }

    fn small(kind: u8, w: Writer) -> Self {
        LogRecord {
            kind,
            head: w.0,
            body: Bytes::new(),
        }
    }
}

impl Record {
    /// The record as the engine would emit it.
    pub fn encode(&self) -> LogRecord {
        match self {
            Record::Put { uow, queue, msg } => LogRecord::put(*uow, queue, msg),
            Record::Get { uow, queue, seq } => LogRecord::get(*uow, queue, *seq),
            Record::Commit { uow } => LogRecord::end_uow(*uow, true),
            Record::Backout { uow } => LogRecord::end_uow(*uow, false),
            Record::ClearQueue { queue } => LogRecord::queue(kind::CLEAR_QUEUE, queue),
            Record::DeleteQueue { queue } => LogRecord::queue(kind::DELETE_QUEUE, queue),
            Record::DefineQueue { queue } => LogRecord::queue(kind::DEFINE_QUEUE, queue),
            Record::BackoutCount { queue, seq, count } => {
                LogRecord::backout_count(queue, *seq, *count)
            }
            Record::Publish { uow, copies } => {
                let body = copies
                    .first()
                    .map(|(_, m)| m.body.clone())
                    .unwrap_or_default();
                let copies: Vec<(&str, &LoggedMessage)> =
                    copies.iter().map(|(q, m)| (q.as_str(), m)).collect();
                LogRecord::publish(*uow, &copies, &body)
            }
        }
    }

    /// Decodes a payload of record kind `kind`. Never panics, whatever the bytes.
    pub fn decode(kind: u8, payload: &[u8]) -> Result<Record, DecodeError> {
        if !(kind::PUT..=kind::PUBLISH).contains(&kind) {
            return Err(DecodeError::UnknownKind(kind));
        }
        let mut r = Reader(payload);
        let version = r.u8()?;
        if !(OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&version)
            || (kind >= kind::BACKOUT_COUNT && version < 2)
        {
            return Err(DecodeError::UnsupportedVersion { found: version });
        }
        let rec = match kind {
            kind::PUT => {
                let uow = r.opt_uow()?;
                let queue = r.name()?;
                let (rank, seq, put_ms, expires_at, md, properties) = r.message_head(version)?;
                let len = r.u32()? as usize;
                let body = Bytes::copy_from_slice(r.take(len)?);
                Record::Put {
                    uow,
                    queue,
                    msg: LoggedMessage {
                        rank,
                        seq,
                        put_ms,
                        expires_at,
                        md,
                        body,
                        properties,
                    },
                }
            }
            kind::GET => Record::Get {
                uow: r.opt_uow()?,
                queue: r.name()?,
                seq: r.u64()?,
            },
            kind::COMMIT => Record::Commit { uow: r.u64()? },
            kind::BACKOUT => Record::Backout { uow: r.u64()? },
            kind::CLEAR_QUEUE => Record::ClearQueue { queue: r.name()? },
            kind::DELETE_QUEUE => Record::DeleteQueue { queue: r.name()? },
            kind::DEFINE_QUEUE => Record::DefineQueue { queue: r.name()? },
            kind::PUBLISH => {
                let uow = r.opt_uow()?;
                let count = r.u32()? as usize;
                // Each copy takes at least a name byte and a message head: a count the
                // payload cannot hold is refused before anything is allocated for it.
                let least = 1 + 1 + 24 + MD_LEN + 4;
                if count == 0 || count > r.0.len() / least {
                    return Err(DecodeError::Invalid("publish copy count"));
                }
                let mut heads = Vec::with_capacity(count);
                for _ in 0..count {
                    let queue = r.name()?;
                    heads.push((queue, r.message_head(version)?));
                }
                let len = r.u32()? as usize;
                let body = Bytes::copy_from_slice(r.take(len)?);
                let copies = heads
                    .into_iter()
                    .map(|(queue, (rank, seq, put_ms, expires_at, md, properties))| {
                        let msg = LoggedMessage {
                            rank,
                            seq,
                            put_ms,
                            expires_at,
                            md,
                            body: body.clone(),
                            properties,
                        };
                        (queue, msg)
                    })
                    .collect();
                Record::Publish { uow, copies }
            }
            _ => Record::BackoutCount {
                queue: r.name()?,
                seq: r.u64()?,
                count: r.i32()?,
            },
        };
        if !r.0.is_empty() {
            return Err(DecodeError::TrailingBytes(r.0.len()));
        }
        Ok(rec)
    }
}

// ---------------------------------------------------------------------------------------
// Decoding

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }
    /// A message head (see the module comment): rank, seq, put time, expiry, MQMD and
    /// (version 2) properties.
    #[allow(clippy::type_complexity)]
    fn message_head(
        &mut self,
        version: u8,
    ) -> Result<(u8, u64, u64, Option<u64>, MessageDescriptor, Bytes), DecodeError> {
        let rank = self.u8()?;
        if rank > 9 {
            return Err(DecodeError::Invalid("rank above 9"));
        }
        let seq = self.u64()?;
        let put_ms = self.u64()?;
        let expires_at = Some(self.u64()?).filter(|e| *e != u64::MAX);
        let md = self.md()?;
        let properties = if version >= 2 {
            let len = self.u32()? as usize;
            Bytes::copy_from_slice(self.take(len)?)
        } else {
            Bytes::new()
        };
        Ok((rank, seq, put_ms, expires_at, md, properties))
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.arr::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    fn fixed<const N: usize>(&mut self) -> Result<FixedStr<N>, DecodeError> {
        Ok(FixedStr::from_bytes(self.arr()?))
    }
    fn opt_uow(&mut self) -> Result<Option<u64>, DecodeError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.u64()?)),
            _ => Err(DecodeError::Invalid("unit-of-work flag")),
        }
    }
    fn name(&mut self) -> Result<String, DecodeError> {
        let len = self.u8()? as usize;
        if len == 0 || len > MAX_NAME {
            return Err(DecodeError::Invalid("queue name length"));
        }
        let b = self.take(len)?;
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| DecodeError::Invalid("queue name is not UTF-8"))
    }
    fn md(&mut self) -> Result<MessageDescriptor, DecodeError> {
        Ok(MessageDescriptor {
            report: self.i32()?,
            msg_type: self.i32()?,
            expiry: self.i32()?,
            feedback: self.i32()?,
            encoding: self.i32()?,
            ccsid: self.i32()?,
            format: self.fixed()?,
            priority: self.i32()?,
            persistence: self.i32()?,
            msg_id: self.arr()?,
            correl_id: self.arr()?,
            backout_count: self.i32()?,
            reply_to_q: self.fixed()?,
            reply_to_qmgr: self.fixed()?,
            user_identifier: self.fixed()?,
            accounting_token: self.arr()?,
            appl_identity_data: self.fixed()?,
            put_appl_type: self.i32()?,
            put_appl_name: self.fixed()?,
            put_date: self.fixed()?,
            put_time: self.fixed()?,
            appl_origin_data: self.fixed()?,
            group_id: self.arr()?,
            msg_seq_number: self.i32()?,
            offset: self.i32()?,
            msg_flags: self.i32()?,
            original_length: self.i32()?,
        })
    }
}

impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Record::Put { uow, queue, msg } => {
                write!(f, "PUT {queue}#{} uow={uow:?}", msg.seq)
            }
            Record::Get { uow, queue, seq } => write!(f, "GET {queue}#{seq} uow={uow:?}"),
            Record::Commit { uow } => write!(f, "COMMIT {uow}"),
            Record::Backout { uow } => write!(f, "BACKOUT {uow}"),
            Record::ClearQueue { queue } => write!(f, "CLEAR {queue}"),
            Record::DeleteQueue { queue } => write!(f, "DELETE {queue}"),
            Record::DefineQueue { queue } => write!(f, "DEFINE {queue}"),
            Record::BackoutCount { queue, seq, count } => {
                write!(f, "BACKOUT_COUNT {queue}#{seq} count={count}")
            }
            Record::Publish { uow, copies } => {
                write!(f, "PUBLISH uow={uow:?}")?;
                copies
                    .iter()
                    .try_for_each(|(queue, msg)| write!(f, " {queue}#{}", msg.seq))
            }
        }
    }
}
