//! The message channel protocol: how two queue managers move messages (MQ's
//! SDR→RCVR, SVR→RCVR, RQSTR→SVR/SDR and CLUSSDR→CLUSRCVR pairs).
//!
//! A message channel is one TCP connection to the partner queue manager's native
//! listener. It starts like a client connection, with the magic `FRY\x01` and a hello
//! (the same framing, capped at [`MAX_HELLO_LEN`](crate::handshake::MAX_HELLO_LEN)), but its kind byte is
//! [`HelloKind::Channel`], so the listener tells a channel from an application by that
//! byte ([`crate::handshake::peek_hello_kind`]). The initiating end sends a
//! [`ChannelHello`] (its channel, type, limits and synchronisation state); the responding
//! end applies [`negotiate_channel`] and [`resynchronise`] and answers with a
//! [`ChannelHelloReply`], accepted with the agreed values and its own synchronisation
//! state, or refused with a [`ChannelStatusCode`].
//!
//! Then both directions carry [`ChannelFrame`]s: `total length u32` (the whole frame) +
//! `type u8` + body. The sending end (the message channel agent that drains the
//! transmission queue) sends [`ChannelFrame::Message`]s and ends each batch with a
//! [`ChannelFrame::ConfirmRequest`]; the receiving end puts the batch's messages in one
//! unit of work, commits it and answers [`ChannelFrame::Confirm`] (or
//! [`ChannelFrame::BatchFailed`]). Heartbeats, PING CHANNEL's echo, error reports and
//! STOP CHANNEL's close have frames of their own.
//!
//! As everywhere in this crate the codec is pure: [`decode_channel_frame`] works on the
//! connection's read buffer, returns `Ok(None)` until a whole frame is there, refuses a
//! length over the caller's limit as soon as its 4 bytes arrive (before anything is
//! buffered for it) and hands out message payloads as zero-copy slices of that buffer;
//! [`encode_channel_frame`] appends to one `BytesMut`, so a batch goes out in one write.
//!
//! ```
//! use bytes::{Bytes, BytesMut};
//! use ferry_wire::channel::{
//!     decode_channel_frame, encode_channel_frame, max_channel_frame_len, ChannelFrame,
//!     MessageFlags,
//! };
//!
//! let mut out = BytesMut::new();
//! for seq in 1..=2 {
//!     let message = ChannelFrame::Message {
//!         seq,
//!         flags: MessageFlags::IN_BATCH_UNIT,
//!         properties: Bytes::new(),
//!         payload: Bytes::from_static(b"xmitq header and data"),
//!     };
//!     encode_channel_frame(&message, &mut out).unwrap();
//! }
//! let end = ChannelFrame::ConfirmRequest { luwid: 7, first_seq: 1, last_seq: 2, messages: 2 };
//! encode_channel_frame(&end, &mut out).unwrap();
//! // The receiver reads the whole batch out of one buffer.
//! let max = max_channel_frame_len(4 * 1024 * 1024);
//! let mut got = Vec::new();
//! while let Some(frame) = decode_channel_frame(&mut out, max).unwrap() {
//!     got.push(frame);
//! }
//! assert_eq!(got.len(), 3);
//! assert_eq!(got[2], end);
//! ```
//!
//! The protocol is specified in `docs/protocol.md`, "Message channels".

use bitflags::bitflags;
use bytes::{BufMut, Bytes, BytesMut};
use ferry_mqi::compression::agree;
use ferry_mqi::compression::{MAX_HEADER_COMPRESSION_LIST, MAX_MESSAGE_COMPRESSION_LIST};
use ferry_mqi::{FixedStr, HeaderCompression, MessageCompression, MessageProperties, Technique};

use crate::compression::Techniques;
use crate::cursor::{put_bounded_string, put_bytes, put_fixed, Reader};
use crate::handshake::{
    begin_hello, finish_hello, get_list, get_technique, put_list, split_hello, HelloKind,
    DEFAULT_MAX_MSG_LENGTH,
};
use crate::WireError;

/// The channel protocol major version this crate speaks. A responder refuses another
/// major with [`ChannelStatusCode::ProtocolError`].
pub const CHANNEL_PROTOCOL_MAJOR: u16 = 1;
/// The channel protocol minor version this crate speaks. The lower of the two ends' wins.
/// Its own numbering, independent of the client protocol's ([`crate::PROTOCOL_MINOR`]).
pub const CHANNEL_PROTOCOL_MINOR: u16 = 1;

/// The longest text of a [`ChannelFrame::BatchFailed`] or [`ChannelFrame::Status`], in
/// bytes.
pub const MAX_CHANNEL_TEXT_LEN: usize = 1024;
/// The longest text of a [`ChannelRefused`], in bytes (it travels in a hello, which is at
/// most [`MAX_HELLO_LEN`](crate::handshake::MAX_HELLO_LEN) bytes).
pub const MAX_REFUSAL_TEXT_LEN: usize = 512;
/// The least data a [`ChannelFrame::Ping`] carries (PING CHANNEL DATALEN's minimum).
pub const MIN_PING_DATA_LEN: usize = 16;
/// The most data a [`ChannelFrame::Ping`] carries (PING CHANNEL DATALEN's maximum).
pub const MAX_PING_DATA_LEN: usize = 32768;

/// The bytes before a channel frame's body: total length `u32` + type `u8`.
pub const CHANNEL_FRAME_HEADER_LEN: usize = 5;
/// Room for a frame's own fields and the transmission header (destination names and the
/// message descriptor) around the message data: a channel frame may be
/// `max_msg_length + CHANNEL_FRAME_OVERHEAD` bytes long ([`max_channel_frame_len`]).
pub const CHANNEL_FRAME_OVERHEAD: usize = 8192;

/// Default BATCHSZ, as MQ's.
pub const DEFAULT_BATCH_SIZE: u32 = 50;
/// Default SEQWRAP, as MQ's.
pub const DEFAULT_SEQ_WRAP: u32 = 999_999_999;
/// Default HBINT of a message channel in seconds, as MQ's.
pub const DEFAULT_CHANNEL_HEARTBEAT_SECS: u32 = 300;

/// The largest channel frame a peer may send once `max_msg_length` (MAXMSGL) was agreed:
/// `max(max_msg_length, MAX_PING_DATA_LEN) + CHANNEL_FRAME_OVERHEAD`. Pass it to
/// [`decode_channel_frame`]. A message's properties count towards MAXMSGL, as in MQ; the
/// sending agent keeps a message larger than the agreed MAXMSGL off the channel.
pub fn max_channel_frame_len(max_msg_length: u32) -> usize {
    (max_msg_length as usize)
        .max(MAX_PING_DATA_LEN)
        .saturating_add(CHANNEL_FRAME_OVERHEAD)
}

/// The channel type of the initiating end (MQCHT numbers): the end that connects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum InitiatorType {
    /// SDR (MQCHT_SENDER): sends messages to a receiver.
    Sender = 1,
    /// SVR (MQCHT_SERVER) with a CONNAME: sends messages to a receiver.
    Server = 2,
    /// RQSTR (MQCHT_REQUESTER): asks a server (or, for callback, a sender) to send.
    Requester = 4,
    /// CLUSSDR (MQCHT_CLUSSDR): sends messages to a cluster receiver.
    ClusterSender = 9,
}

impl InitiatorType {
    /// The type for an MQCHT number, if an initiating end may have it.
    pub fn from_code(code: u8) -> Option<InitiatorType> {
        Some(match code {
            1 => InitiatorType::Sender,
            2 => InitiatorType::Server,
            4 => InitiatorType::Requester,
            9 => InitiatorType::ClusterSender,
            _ => return None,
        })
    }

    /// The MQCHT number.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Whether the initiating end is the one that sends messages (false only for a
    /// requester: its partner sends).
    pub fn initiator_sends(self) -> bool {
        self != InitiatorType::Requester
    }
}

/// The channel type of the responding end (MQCHT numbers): the channel definition the
/// listener's queue manager found under the hello's channel name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ResponderType {
    /// SDR (MQCHT_SENDER): answers a requester (callback).
    Sender = 1,
    /// SVR (MQCHT_SERVER): answers a requester and sends.
    Server = 2,
    /// RCVR (MQCHT_RECEIVER): answers a sender or server and receives.
    Receiver = 3,
    /// CLUSRCVR (MQCHT_CLUSRCVR): answers a cluster sender and receives.
    ClusterReceiver = 8,
}

impl ResponderType {
    /// The type for an MQCHT number, if a responding end may have it.
    pub fn from_code(code: u8) -> Option<ResponderType> {
        Some(match code {
            1 => ResponderType::Sender,
            2 => ResponderType::Server,
            3 => ResponderType::Receiver,
            8 => ResponderType::ClusterReceiver,
            _ => return None,
        })
    }

    /// The MQCHT number.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Whether a channel of this type answers an initiator of `initiator`'s type: sender
    /// or server ↔ receiver, requester ↔ server or sender, cluster sender ↔ cluster
    /// receiver.
    pub fn pairs_with(self, initiator: InitiatorType) -> bool {
        matches!(
            (initiator, self),
            (
                InitiatorType::Sender | InitiatorType::Server,
                ResponderType::Receiver
            ) | (
                InitiatorType::Requester,
                ResponderType::Server | ResponderType::Sender
            ) | (InitiatorType::ClusterSender, ResponderType::ClusterReceiver)
        )
    }
}

/// NPMSPEED: whether fast non-persistent messages travel outside the batch's unit of
/// work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum NpmSpeed {
    /// NPMSPEED(FAST) (MQNPMS_FAST): non-persistent messages are put at once, outside
    /// the batch.
    Fast = 1,
    /// NPMSPEED(NORMAL) (MQNPMS_NORMAL): every message travels inside the batch.
    Normal = 2,
}

impl NpmSpeed {
    fn from_code(code: u8) -> Option<NpmSpeed> {
        match code {
            1 => Some(NpmSpeed::Fast),
            2 => Some(NpmSpeed::Normal),
            _ => None,
        }
    }
}

/// Why the initiating end starts the channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ChannelPurpose {
    /// A normal start: batches of messages follow.
    Run = 0,
    /// PING CHANNEL: only [`ChannelFrame::Ping`]s (echoed) and a close follow; the
    /// synchronisation state is not acted on.
    Ping = 1,
}

/// A batch the sending end sent and asked to confirm, without a confirmation before the
/// connection ended: whether the receiver committed it is found out at the next start
/// ([`resynchronise`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InDoubtBatch {
    /// The batch's logical unit of work id (never 0).
    pub luwid: u64,
    /// The sequence number of its first message.
    pub first_seq: u32,
    /// The sequence number of its last message.
    pub last_seq: u32,
}

/// The initiating end's opening message (hello kind 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelHello {
    /// Channel protocol major version ([`CHANNEL_PROTOCOL_MAJOR`]).
    pub major: u16,
    /// Channel protocol minor version ([`CHANNEL_PROTOCOL_MINOR`]).
    pub minor: u16,
    /// The channel's name (both ends define a channel of this name).
    pub channel: FixedStr<20>,
    /// The initiating end's channel type.
    pub channel_type: InitiatorType,
    /// Why the channel starts.
    pub purpose: ChannelPurpose,
    /// The initiating end's queue manager name.
    pub qmgr_name: FixedStr<48>,
    /// The initiating end's queue manager identifier (QMID; may be blank).
    pub qmid: FixedStr<48>,
    /// BATCHSZ: the most messages per batch (0: the responder's).
    pub batch_size: u32,
    /// MAXMSGL: the largest message (0: the responder's).
    pub max_msg_length: u32,
    /// SEQWRAP: the sequence number after which numbering starts again at 1 (both ends
    /// must have the same).
    pub seq_wrap: u32,
    /// HBINT in seconds (0: no heartbeats).
    pub heartbeat_interval: u32,
    /// NPMSPEED.
    pub npm_speed: NpmSpeed,
    /// BATCHHB in milliseconds (0: none): the sending end checks that the partner is
    /// alive before a batch when it heard nothing for this long.
    pub batch_heartbeat: u32,
    /// The sequence number of the last message of the last batch the initiating end
    /// committed, as sender or receiver (0: none yet).
    pub last_committed_seq: u32,
    /// The LUWID of the last batch the initiating end committed as the receiving end (a
    /// requester; 0 for a sending initiator, or none yet).
    pub last_luwid: u64,
    /// The batch the initiating end sent and has no confirmation of, if any (only a
    /// sending initiator has one).
    pub in_doubt: Option<InDoubtBatch>,
    /// RESET CHANNEL SEQNUM: the last committed sequence number both ends take instead
    /// of comparing theirs.
    pub reset_seq: Option<u32>,
    /// COMPHDR wanted, in order of preference (at most 2); agreed from minor 1.
    pub compress_header: Vec<HeaderCompression>,
    /// COMPMSG wanted, in order of preference (at most 16); agreed from minor 1.
    pub compress_message: Vec<MessageCompression>,
}

impl Default for ChannelHello {
    /// This crate's version, a sender starting normally, blank names, MQ's default
    /// channel attributes and no synchronisation state.
    fn default() -> Self {
        ChannelHello {
            major: CHANNEL_PROTOCOL_MAJOR,
            minor: CHANNEL_PROTOCOL_MINOR,
            channel: FixedStr::BLANK,
            channel_type: InitiatorType::Sender,
            purpose: ChannelPurpose::Run,
            qmgr_name: FixedStr::BLANK,
            qmid: FixedStr::BLANK,
            batch_size: DEFAULT_BATCH_SIZE,
            max_msg_length: DEFAULT_MAX_MSG_LENGTH,
            seq_wrap: DEFAULT_SEQ_WRAP,
            heartbeat_interval: DEFAULT_CHANNEL_HEARTBEAT_SECS,
            npm_speed: NpmSpeed::Fast,
            batch_heartbeat: 0,
            last_committed_seq: 0,
            last_luwid: 0,
            in_doubt: None,
            reset_seq: None,
            compress_header: Vec::new(),
            compress_message: Vec::new(),
        }
    }
}

/// A channel status code (mirroring MQ's channel STATUS codes): why a channel start was
/// refused, a batch failed or a peer is about to close.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ChannelStatusCode {
    /// No channel of that name at the responder, or not one that can respond.
    NoChannel,
    /// The two ends' channel types do not pair (e.g. a sender calling a sender).
    ChannelType,
    /// The queue manager is not available (starting or ending).
    QmUnavailable,
    /// MSG_SEQUENCE_ERROR: the ends disagree about the last committed sequence number
    /// (RESET CHANNEL settles it).
    SequenceError,
    /// The channel is stopped at the responding end.
    Stopped,
    /// The channel is already running at the responding end (a requester calling a
    /// server that runs, started from its own side or by another requester).
    InUse,
    /// A batch could not be committed.
    BatchFailure,
    /// A security exit or check refused the channel.
    SecurityFailure,
    /// The ends' SEQWRAP values differ.
    WrapValueError,
    /// The ends' SSLCIPH values do not agree.
    CipherSpec,
    /// The partner's certificate does not match SSLPEER.
    PeerName,
    /// The peer broke the channel protocol (an unsupported major version, a frame that
    /// does not decode). Ferry's own code.
    ProtocolError,
    /// A code with no name here (kept as received).
    Other(u32),
}

impl ChannelStatusCode {
    /// The code's number on the wire.
    pub fn code(self) -> u32 {
        match self {
            ChannelStatusCode::NoChannel => 0x01,
            ChannelStatusCode::ChannelType => 0x02,
            ChannelStatusCode::QmUnavailable => 0x03,
            ChannelStatusCode::SequenceError => 0x04,
            ChannelStatusCode::Stopped => 0x05,
            ChannelStatusCode::InUse => 0x06,
            ChannelStatusCode::BatchFailure => 0x11,
            ChannelStatusCode::SecurityFailure => 0x14,
            ChannelStatusCode::WrapValueError => 0x15,
            ChannelStatusCode::CipherSpec => 0x18,
            ChannelStatusCode::PeerName => 0x19,
            ChannelStatusCode::ProtocolError => 0x20,
            ChannelStatusCode::Other(n) => n,
        }
    }

    /// The code for a number; a number with no name is `Other(n)` (never an error, so a
    /// newer peer's codes still read).
    pub fn from_code(code: u32) -> ChannelStatusCode {
        match code {
            0x01 => ChannelStatusCode::NoChannel,
            0x02 => ChannelStatusCode::ChannelType,
            0x03 => ChannelStatusCode::QmUnavailable,
            0x04 => ChannelStatusCode::SequenceError,
            0x05 => ChannelStatusCode::Stopped,
            0x06 => ChannelStatusCode::InUse,
            0x11 => ChannelStatusCode::BatchFailure,
            0x14 => ChannelStatusCode::SecurityFailure,
            0x15 => ChannelStatusCode::WrapValueError,
            0x18 => ChannelStatusCode::CipherSpec,
            0x19 => ChannelStatusCode::PeerName,
            0x20 => ChannelStatusCode::ProtocolError,
            n => ChannelStatusCode::Other(n),
        }
    }
}

/// What a responding end offers, from its channel definition, before negotiation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelLimits {
    /// The responding channel's type.
    pub channel_type: ResponderType,
    /// Its BATCHSZ (0: the initiator's).
    pub batch_size: u32,
    /// Its MAXMSGL (0: the initiator's).
    pub max_msg_length: u32,
    /// Its SEQWRAP.
    pub seq_wrap: u32,
    /// Its HBINT in seconds.
    pub heartbeat_interval: u32,
    /// Its NPMSPEED.
    pub npm_speed: NpmSpeed,
    /// Its BATCHHB in milliseconds (used when the responder is the sending end).
    pub batch_heartbeat: u32,
    /// Its COMPHDR list (minor 1 and later).
    pub compress_header: Vec<HeaderCompression>,
    /// Its COMPMSG list (minor 1 and later).
    pub compress_message: Vec<MessageCompression>,
}

/// The values both ends use after the hello.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChannelAgreement {
    /// Channel protocol minor: the lower of the two.
    pub minor: u16,
    /// BATCHSZ: the lower of the two (a 0 stands for the other end's).
    pub batch_size: u32,
    /// MAXMSGL: the lower of the two (a 0 stands for the other end's). Frames are then
    /// at most [`max_channel_frame_len`] of it.
    pub max_msg_length: u32,
    /// SEQWRAP (the same at both ends).
    pub seq_wrap: u32,
    /// HBINT: the higher of the two.
    pub heartbeat_interval: u32,
    /// NPMSPEED: FAST only when both ends have FAST.
    pub npm_speed: NpmSpeed,
    /// BATCHHB: the sending end's.
    pub batch_heartbeat: u32,
    /// The compression techniques agreed (minor 1 and later; NONE with a 1.0 peer): the
    /// first of the initiator's COMPHDR and COMPMSG lists that the responder's has, as
    /// MQ agrees them. The sending end compresses its message frames with them.
    pub compression: Techniques,
}

/// Applies the negotiation rules (docs/protocol.md, "Message channels") to an
/// initiator's hello and the responding channel's limits: the agreed values, or the
/// code to refuse the start with. The responder checks the channel's existence and
/// state (NoChannel, Stopped...) before, and [`resynchronise`] after.
///
/// Refuses another major version ([`ChannelStatusCode::ProtocolError`]), types that do
/// not pair ([`ChannelStatusCode::ChannelType`]) and different SEQWRAP values
/// ([`ChannelStatusCode::WrapValueError`]).
pub fn negotiate_channel(
    initiator: &ChannelHello,
    responder_limits: &ChannelLimits,
) -> Result<ChannelAgreement, ChannelStatusCode> {
    let limits = responder_limits;
    if initiator.major != CHANNEL_PROTOCOL_MAJOR {
        return Err(ChannelStatusCode::ProtocolError);
    }
    if !limits.channel_type.pairs_with(initiator.channel_type) {
        return Err(ChannelStatusCode::ChannelType);
    }
    if initiator.seq_wrap != limits.seq_wrap {
        return Err(ChannelStatusCode::WrapValueError);
    }
    let npm_speed = if initiator.npm_speed == NpmSpeed::Fast && limits.npm_speed == NpmSpeed::Fast {
        NpmSpeed::Fast
    } else {
        NpmSpeed::Normal
    };
    let minor = initiator.minor.min(CHANNEL_PROTOCOL_MINOR);
    Ok(ChannelAgreement {
        minor,
        batch_size: lower_non_zero(initiator.batch_size, limits.batch_size),
        max_msg_length: lower_non_zero(initiator.max_msg_length, limits.max_msg_length),
        seq_wrap: limits.seq_wrap,
        heartbeat_interval: initiator.heartbeat_interval.max(limits.heartbeat_interval),
        npm_speed,
        batch_heartbeat: if initiator.channel_type.initiator_sends() {
            initiator.batch_heartbeat
        } else {
            limits.batch_heartbeat
        },
        compression: if minor >= 1 {
            Techniques {
                header: agree(&initiator.compress_header, &limits.compress_header),
                message: agree(&initiator.compress_message, &limits.compress_message),
            }
        } else {
            Techniques::default()
        },
    })
}

/// The lower of two values where 0 means "the other's".
fn lower_non_zero(a: u32, b: u32) -> u32 {
    match (a, b) {
        (0, v) | (v, 0) => v,
        (a, b) => a.min(b),
    }
}

/// What becomes of the sending end's in-doubt batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InDoubtOutcome {
    /// The receiver committed it (its last LUWID is the batch's): the sender commits
    /// (removes the batch's messages from the transmission queue).
    Commit,
    /// The receiver did not: the sender backs it out and sends its messages again.
    BackOut,
}

/// The synchronisation state of the sending end of a channel at a start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SenderSync {
    /// The last sequence number of the last batch it committed (a confirmed one).
    pub last_committed_seq: u32,
    /// The batch it sent and has no confirmation of, if any.
    pub in_doubt: Option<InDoubtBatch>,
}

/// The synchronisation state of the receiving end of a channel at a start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReceiverSync {
    /// The last sequence number of the last batch it committed.
    pub last_committed_seq: u32,
    /// The LUWID of that batch (0: none).
    pub last_luwid: u64,
}

impl ChannelHello {
    /// The hello's state as the sending end's (an SDR, SVR or CLUSSDR initiator).
    pub fn sender_sync(&self) -> SenderSync {
        SenderSync {
            last_committed_seq: self.last_committed_seq,
            in_doubt: self.in_doubt,
        }
    }

    /// The hello's state as the receiving end's (an RQSTR initiator).
    pub fn receiver_sync(&self) -> ReceiverSync {
        ReceiverSync {
            last_committed_seq: self.last_committed_seq,
            last_luwid: self.last_luwid,
        }
    }
}

impl ChannelAccepted {
    /// The reply's state as the receiving end's (the responder to an SDR, SVR or
    /// CLUSSDR initiator).
    pub fn receiver_sync(&self) -> ReceiverSync {
        ReceiverSync {
            last_committed_seq: self.last_committed_seq,
            last_luwid: self.last_luwid,
        }
    }
}

/// The synchronisation both ends agree on at a start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resynchronisation {
    /// The outcome of the sender's in-doubt batch (None: there was none).
    pub in_doubt: Option<InDoubtOutcome>,
    /// The last committed sequence number both ends continue from: the next message is
    /// numbered [`next_seq`] of it.
    pub last_committed_seq: u32,
}

/// The resynchronisation rule at a start, the same at both ends, given the sending
/// end's and the receiving end's state and the hello's `reset_seq`.
///
/// The sender's in-doubt batch is committed if the receiver's last LUWID is the batch's
/// (the receiver committed it) and backed out otherwise. The sender's last committed
/// sequence number is then the batch's last one when committed, else its own; it must
/// equal the receiver's, else [`ChannelStatusCode::SequenceError`], unless `reset_seq`
/// (RESET CHANNEL SEQNUM) is given, which both ends then take.
///
/// With an SDR, SVR or CLUSSDR initiator the responder runs it with
/// [`ChannelHello::sender_sync`] and its own receiver state (and refuses with the
/// error); the initiator with its own state and [`ChannelAccepted::receiver_sync`], to
/// resolve its batch. With an RQSTR initiator the responder is the sender: it runs it
/// with its own state and [`ChannelHello::receiver_sync`], resolves its batch and answers
/// the resulting `last_committed_seq` (and `last_luwid` 0).
pub fn resynchronise(
    sender: SenderSync,
    receiver: ReceiverSync,
    reset_seq: Option<u32>,
) -> Result<Resynchronisation, ChannelStatusCode> {
    let (in_doubt, sender_seq) = match sender.in_doubt {
        Some(b) if b.luwid != 0 && b.luwid == receiver.last_luwid => {
            (Some(InDoubtOutcome::Commit), b.last_seq)
        }
        Some(_) => (Some(InDoubtOutcome::BackOut), sender.last_committed_seq),
        None => (None, sender.last_committed_seq),
    };
    let last_committed_seq = match reset_seq {
        Some(n) => n,
        None if sender_seq == receiver.last_committed_seq => sender_seq,
        None => return Err(ChannelStatusCode::SequenceError),
    };
    Ok(Resynchronisation {
        in_doubt,
        last_committed_seq,
    })
}

/// The sequence number after `seq`: `seq + 1`, or 1 after `seq_wrap` (SEQWRAP).
pub fn next_seq(seq: u32, seq_wrap: u32) -> u32 {
    if seq >= seq_wrap {
        1
    } else {
        seq + 1
    }
}

/// A start the responding end accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelAccepted {
    /// The responding end's queue manager name.
    pub qmgr_name: FixedStr<48>,
    /// The responding end's queue manager identifier (may be blank).
    pub qmid: FixedStr<48>,
    /// The agreed values ([`negotiate_channel`]).
    pub agreement: ChannelAgreement,
    /// The sequence number of the last message of the last batch the responding end
    /// committed (when it is the sending end: after resolving its in-doubt batch; after a
    /// `reset_seq`: the number taken).
    pub last_committed_seq: u32,
    /// The LUWID of the last batch the responding end committed as the receiving end (0:
    /// none, or it is the sending end).
    pub last_luwid: u64,
}

/// A start the responding end refused; it closes the connection after sending it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChannelRefused {
    /// The responder's channel protocol major version.
    pub major: u16,
    /// The responder's channel protocol minor version.
    pub minor: u16,
    /// Why.
    pub code: ChannelStatusCode,
    /// An explanation for the initiator's log (at most [`MAX_REFUSAL_TEXT_LEN`] bytes).
    pub text: String,
}

impl ChannelRefused {
    /// A refusal from this crate's version, its text cut to [`MAX_REFUSAL_TEXT_LEN`]
    /// bytes (at a character boundary).
    pub fn new(code: ChannelStatusCode, text: impl Into<String>) -> Self {
        ChannelRefused {
            major: CHANNEL_PROTOCOL_MAJOR,
            minor: CHANNEL_PROTOCOL_MINOR,
            code,
            text: cut_text(text.into(), MAX_REFUSAL_TEXT_LEN),
        }
    }
}

/// The responding end's answer to a [`ChannelHello`] (hello kind 4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelHelloReply {
    /// Accepted: frames follow.
    Accepted(ChannelAccepted),
    /// Refused: the connection closes.
    Refused(ChannelRefused),
}

/// Cuts `text` to at most `max` bytes at a character boundary.
fn cut_text(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut end = max;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}

const SYNC_IN_DOUBT: u8 = 0x01;
const SYNC_RESET_SEQ: u8 = 0x02;
const OUTCOME_ACCEPTED: u8 = 0;
const OUTCOME_REFUSED: u8 = 1;

impl ChannelHello {
    /// Appends the encoded hello to `out` (nothing when it fails: a compression list
    /// longer than MQ's, which the decoder would refuse).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), WireError> {
        check_list_len(
            self.compress_header.len(),
            MAX_HEADER_COMPRESSION_LIST,
            "ChannelHello.compress_header",
        )?;
        check_list_len(
            self.compress_message.len(),
            MAX_MESSAGE_COMPRESSION_LIST,
            "ChannelHello.compress_message",
        )?;
        let start = begin_hello(out, HelloKind::Channel);
        out.put_u16_le(self.major);
        out.put_u16_le(self.minor);
        out.put_u8(self.channel_type.code());
        out.put_u8(self.purpose as u8);
        out.put_u8(self.npm_speed as u8);
        let mut sync = 0;
        if self.in_doubt.is_some() {
            sync |= SYNC_IN_DOUBT;
        }
        if self.reset_seq.is_some() {
            sync |= SYNC_RESET_SEQ;
        }
        out.put_u8(sync);
        out.put_u32_le(self.batch_size);
        out.put_u32_le(self.max_msg_length);
        out.put_u32_le(self.seq_wrap);
        out.put_u32_le(self.heartbeat_interval);
        out.put_u32_le(self.batch_heartbeat);
        out.put_u32_le(self.last_committed_seq);
        out.put_u64_le(self.last_luwid);
        let b = self.in_doubt.unwrap_or(InDoubtBatch {
            luwid: 0,
            first_seq: 0,
            last_seq: 0,
        });
        out.put_u64_le(b.luwid);
        out.put_u32_le(b.first_seq);
        out.put_u32_le(b.last_seq);
        out.put_u32_le(self.reset_seq.unwrap_or(0));
        put_fixed(out, &self.channel);
        put_fixed(out, &self.qmgr_name);
        put_fixed(out, &self.qmid);
        put_list(out, &self.compress_header);
        put_list(out, &self.compress_message);
        finish_hello(out, start)
    }

    /// Takes a channel hello off the front of `buf`; `Ok(None)` until it is complete.
    ///
    /// Bytes after the layout are refused, except in a hello of a later minor than
    /// [`CHANNEL_PROTOCOL_MINOR`] (the fields that minor added, which this end ignores).
    pub fn decode(buf: &mut BytesMut) -> Result<Option<ChannelHello>, WireError> {
        let Some(body) = split_hello(buf, HelloKind::Channel)? else {
            return Ok(None);
        };
        let mut r = Reader::new(&body);
        let major = r.u16()?;
        let minor = r.u16()?;
        let type_code = r.u8()?;
        let channel_type = InitiatorType::from_code(type_code)
            .ok_or(invalid("ChannelHello.channel_type", u64::from(type_code)))?;
        let purpose = match r.u8()? {
            0 => ChannelPurpose::Run,
            1 => ChannelPurpose::Ping,
            v => return Err(invalid("ChannelHello.purpose", u64::from(v))),
        };
        let speed = r.u8()?;
        let npm_speed = NpmSpeed::from_code(speed)
            .ok_or(invalid("ChannelHello.npm_speed", u64::from(speed)))?;
        let sync = r.u8()?;
        if sync & !(SYNC_IN_DOUBT | SYNC_RESET_SEQ) != 0 {
            return Err(WireError::ReservedBits {
                field: "ChannelHello synchronisation flags",
                bits: u32::from(sync & !(SYNC_IN_DOUBT | SYNC_RESET_SEQ)),
            });
        }
        let batch_size = r.u32()?;
        let max_msg_length = r.u32()?;
        let seq_wrap = r.u32()?;
        let heartbeat_interval = r.u32()?;
        let batch_heartbeat = r.u32()?;
        let last_committed_seq = r.u32()?;
        let last_luwid = r.u64()?;
        let batch = InDoubtBatch {
            luwid: r.u64()?,
            first_seq: r.u32()?,
            last_seq: r.u32()?,
        };
        let in_doubt = if sync & SYNC_IN_DOUBT != 0 {
            if batch.luwid == 0 {
                return Err(invalid("ChannelHello.in_doubt.luwid", 0));
            }
            Some(batch)
        } else if batch.luwid != 0 || batch.first_seq != 0 || batch.last_seq != 0 {
            return Err(WireError::ReservedBits {
                field: "ChannelHello.in_doubt (absent, must be 0)",
                bits: batch.first_seq | batch.last_seq | (batch.luwid != 0) as u32,
            });
        } else {
            None
        };
        let reset = r.u32()?;
        let reset_seq = if sync & SYNC_RESET_SEQ != 0 {
            Some(reset)
        } else if reset != 0 {
            return Err(WireError::ReservedBits {
                field: "ChannelHello.reset_seq (absent, must be 0)",
                bits: reset,
            });
        } else {
            None
        };
        let hello = ChannelHello {
            major,
            minor,
            channel: r.fixed("ChannelHello.channel")?,
            channel_type,
            purpose,
            qmgr_name: r.fixed("ChannelHello.qmgr_name")?,
            qmid: r.fixed("ChannelHello.qmid")?,
            batch_size,
            max_msg_length,
            seq_wrap,
            heartbeat_interval,
            npm_speed,
            batch_heartbeat,
            last_committed_seq,
            last_luwid,
            in_doubt,
            reset_seq,
            compress_header: get_list(
                &mut r,
                MAX_HEADER_COMPRESSION_LIST,
                "ChannelHello.compress_header",
            )?,
            compress_message: get_list(
                &mut r,
                MAX_MESSAGE_COMPRESSION_LIST,
                "ChannelHello.compress_message",
            )?,
        };
        if !is_later_minor(minor) {
            r.finish()?;
        }
        Ok(Some(hello))
    }
}

impl ChannelHelloReply {
    /// Appends the encoded reply to `out` (nothing when it fails: a refusal text over
    /// [`MAX_REFUSAL_TEXT_LEN`] bytes).
    pub fn encode(&self, out: &mut BytesMut) -> Result<(), WireError> {
        let start = begin_hello(out, HelloKind::ChannelReply);
        let written = match self {
            ChannelHelloReply::Accepted(a) => {
                let g = &a.agreement;
                out.put_u16_le(CHANNEL_PROTOCOL_MAJOR);
                out.put_u16_le(g.minor);
                out.put_u8(OUTCOME_ACCEPTED);
                out.put_u8(g.npm_speed as u8);
                out.put_u16_le(0);
                out.put_u32_le(g.batch_size);
                out.put_u32_le(g.max_msg_length);
                out.put_u32_le(g.seq_wrap);
                out.put_u32_le(g.heartbeat_interval);
                out.put_u32_le(g.batch_heartbeat);
                out.put_u32_le(a.last_committed_seq);
                out.put_u64_le(a.last_luwid);
                out.put_u32_le(g.compression.header.value());
                out.put_u32_le(g.compression.message.value());
                put_fixed(out, &a.qmgr_name);
                put_fixed(out, &a.qmid);
                Ok(())
            }
            ChannelHelloReply::Refused(f) => {
                out.put_u16_le(f.major);
                out.put_u16_le(f.minor);
                out.put_u8(OUTCOME_REFUSED);
                out.put_u32_le(f.code.code());
                put_bounded_string(out, &f.text, "ChannelHelloReply.text", MAX_REFUSAL_TEXT_LEN)
            }
        };
        if let Err(e) = written {
            out.truncate(start);
            return Err(e);
        }
        finish_hello(out, start)
    }

    /// Takes a channel hello reply off the front of `buf`; `Ok(None)` until it is
    /// complete. An accepted reply of another major version is refused
    /// ([`WireError::InvalidValue`]); a refusal of any version reads.
    pub fn decode(buf: &mut BytesMut) -> Result<Option<ChannelHelloReply>, WireError> {
        let Some(body) = split_hello(buf, HelloKind::ChannelReply)? else {
            return Ok(None);
        };
        let mut r = Reader::new(&body);
        let major = r.u16()?;
        let minor = r.u16()?;
        let reply = match r.u8()? {
            OUTCOME_ACCEPTED => {
                if major != CHANNEL_PROTOCOL_MAJOR {
                    return Err(invalid("ChannelHelloReply.major", u64::from(major)));
                }
                let speed = r.u8()?;
                let npm_speed = NpmSpeed::from_code(speed)
                    .ok_or(invalid("ChannelHelloReply.npm_speed", u64::from(speed)))?;
                let reserved = r.u16()?;
                if reserved != 0 {
                    return Err(WireError::ReservedBits {
                        field: "ChannelHelloReply reserved field",
                        bits: u32::from(reserved),
                    });
                }
                let batch_size = r.u32()?;
                let max_msg_length = r.u32()?;
                let seq_wrap = r.u32()?;
                let heartbeat_interval = r.u32()?;
                let batch_heartbeat = r.u32()?;
                let last_committed_seq = r.u32()?;
                let last_luwid = r.u64()?;
                let compression = Techniques {
                    header: get_technique(r.u32()?, "ChannelHelloReply.compress_header")?,
                    message: get_technique(r.u32()?, "ChannelHelloReply.compress_message")?,
                };
                ChannelHelloReply::Accepted(ChannelAccepted {
                    qmgr_name: r.fixed("ChannelHelloReply.qmgr_name")?,
                    qmid: r.fixed("ChannelHelloReply.qmid")?,
                    agreement: ChannelAgreement {
                        minor,
                        batch_size,
                        max_msg_length,
                        seq_wrap,
                        heartbeat_interval,
                        npm_speed,
                        batch_heartbeat,
                        compression,
                    },
                    last_committed_seq,
                    last_luwid,
                })
            }
            OUTCOME_REFUSED => ChannelHelloReply::Refused(ChannelRefused {
                major,
                minor,
                code: ChannelStatusCode::from_code(r.u32()?),
                text: r.bounded_string("ChannelHelloReply.text", MAX_REFUSAL_TEXT_LEN)?,
            }),
            v => return Err(invalid("ChannelHelloReply.outcome", u64::from(v))),
        };
        r.finish()?;
        Ok(Some(reply))
    }
}

/// Whether `minor` is later than this crate's [`CHANNEL_PROTOCOL_MINOR`].
fn is_later_minor(minor: u16) -> bool {
    minor > CHANNEL_PROTOCOL_MINOR
}

fn invalid(field: &'static str, value: u64) -> WireError {
    WireError::InvalidValue {
        field,
        value: i64::try_from(value).unwrap_or(i64::MAX),
    }
}

fn check_list_len(len: usize, max: usize, field: &'static str) -> Result<(), WireError> {
    if len > max {
        return Err(invalid(field, len as u64));
    }
    Ok(())
}

bitflags! {
    /// The flag byte of a [`ChannelFrame::Message`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
    pub struct MessageFlags: u8 {
        /// The message travels inside the batch's unit of work: it is persistent, or the
        /// channel runs NPMSPEED(NORMAL). Without it the message is a fast non-persistent
        /// one, which the receiver puts at once, outside the batch.
        const IN_BATCH_UNIT = 0x01;
        /// The payload is compressed with the agreed techniques (minor 1 and later), in
        /// the layout of `crate::compression` (docs/protocol.md §3): the head is the
        /// transmission header, the data the message data.
        const COMPRESSED = 0x02;
    }
}

/// How STOP CHANNEL ends the channel ([`ChannelFrame::Close`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CloseMode {
    /// MODE(QUIESCE): the current batch completes first.
    Quiesce = 0,
    /// MODE(FORCE): at once; an unconfirmed batch stays in doubt.
    Force = 1,
}

/// A frame of a message channel after the hello, either direction.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChannelFrame {
    /// One message of a batch (sending end → receiving end).
    Message {
        /// Its sequence number ([`next_seq`] of the previous one).
        seq: u32,
        /// Whether it travels inside the batch's unit of work.
        flags: MessageFlags,
        /// Its message properties in the [`ferry_mqi::MessageProperties`] encoding that
        /// GET replies carry (empty: none), passed through as they are stored
        /// ([`encode_message_properties`], [`decode_message_properties`]).
        properties: Bytes,
        /// The transmission queue message's body: transmission header and data. Decoded
        /// as a slice of the read buffer.
        payload: Bytes,
    },
    /// The end of a batch: the sending end asks the receiver to commit it (sending →
    /// receiving).
    ConfirmRequest {
        /// The batch's logical unit of work id (never 0; a new one per batch).
        luwid: u64,
        /// The first message's sequence number.
        first_seq: u32,
        /// The last message's sequence number.
        last_seq: u32,
        /// How many messages the batch had.
        messages: u32,
    },
    /// The receiver committed the batch (receiving → sending).
    Confirm {
        /// The batch's LUWID.
        luwid: u64,
        /// Its last sequence number.
        last_seq: u32,
    },
    /// The receiver could not commit the batch and backed it out (receiving → sending).
    BatchFailed {
        /// The batch's LUWID.
        luwid: u64,
        /// Why (usually [`ChannelStatusCode::BatchFailure`]).
        status: ChannelStatusCode,
        /// The MQRC the receiving queue manager met.
        reason: i32,
        /// An explanation (at most [`MAX_CHANNEL_TEXT_LEN`] bytes).
        text: String,
    },
    /// A heartbeat (either direction, HBINT; also BATCHHB's check before a batch).
    Heartbeat {
        /// Echoed by the reply.
        token: u64,
    },
    /// The answer to a heartbeat.
    HeartbeatReply {
        /// The heartbeat's token.
        token: u64,
    },
    /// PING CHANNEL's data (initiator → responder, after a hello with purpose Ping).
    Ping {
        /// [`MIN_PING_DATA_LEN`] to [`MAX_PING_DATA_LEN`] bytes.
        data: Bytes,
    },
    /// The echo of a ping.
    PingReply {
        /// The ping's data.
        data: Bytes,
    },
    /// An error the peer reports before it closes the connection.
    Status {
        /// The channel status code.
        code: ChannelStatusCode,
        /// An MQRC (0: none).
        reason: i32,
        /// An explanation (at most [`MAX_CHANNEL_TEXT_LEN`] bytes).
        text: String,
    },
    /// The peer closes the channel (STOP CHANNEL, or the end of a ping).
    Close {
        /// How.
        mode: CloseMode,
    },
}

const TYPE_MESSAGE: u8 = 0x01;
const TYPE_CONFIRM_REQUEST: u8 = 0x02;
const TYPE_CONFIRM: u8 = 0x03;
const TYPE_BATCH_FAILED: u8 = 0x04;
const TYPE_HEARTBEAT: u8 = 0x05;
const TYPE_HEARTBEAT_REPLY: u8 = 0x06;
const TYPE_PING: u8 = 0x07;
const TYPE_PING_REPLY: u8 = 0x08;
const TYPE_STATUS: u8 = 0x09;
const TYPE_CLOSE: u8 = 0x0A;

impl ChannelFrame {
    /// The frame's type byte.
    pub fn type_code(&self) -> u8 {
        match self {
            ChannelFrame::Message { .. } => TYPE_MESSAGE,
            ChannelFrame::ConfirmRequest { .. } => TYPE_CONFIRM_REQUEST,
            ChannelFrame::Confirm { .. } => TYPE_CONFIRM,
            ChannelFrame::BatchFailed { .. } => TYPE_BATCH_FAILED,
            ChannelFrame::Heartbeat { .. } => TYPE_HEARTBEAT,
            ChannelFrame::HeartbeatReply { .. } => TYPE_HEARTBEAT_REPLY,
            ChannelFrame::Ping { .. } => TYPE_PING,
            ChannelFrame::PingReply { .. } => TYPE_PING_REPLY,
            ChannelFrame::Status { .. } => TYPE_STATUS,
            ChannelFrame::Close { .. } => TYPE_CLOSE,
        }
    }

    /// A message frame whose properties are `properties` in their wire encoding.
    pub fn message(
        seq: u32,
        flags: MessageFlags,
        properties: &MessageProperties,
        payload: Bytes,
    ) -> ChannelFrame {
        ChannelFrame::Message {
            seq,
            flags,
            properties: encode_message_properties(properties),
            payload,
        }
    }

    /// A status frame, its text cut to [`MAX_CHANNEL_TEXT_LEN`] bytes (at a character
    /// boundary).
    pub fn status(code: ChannelStatusCode, reason: i32, text: impl Into<String>) -> Self {
        ChannelFrame::Status {
            code,
            reason,
            text: cut_text(text.into(), MAX_CHANNEL_TEXT_LEN),
        }
    }

    /// A batch-failed frame, its text cut to [`MAX_CHANNEL_TEXT_LEN`] bytes (at a
    /// character boundary).
    pub fn batch_failed(
        luwid: u64,
        status: ChannelStatusCode,
        reason: i32,
        text: impl Into<String>,
    ) -> Self {
        ChannelFrame::BatchFailed {
            luwid,
            status,
            reason,
            text: cut_text(text.into(), MAX_CHANNEL_TEXT_LEN),
        }
    }
}

/// Message properties in the encoding a [`ChannelFrame::Message`] (and a GET reply)
/// carries: [`MessageProperties::encode`], empty for none. A queue manager that holds a
/// message's properties encoded already passes those bytes as they are.
pub fn encode_message_properties(properties: &MessageProperties) -> Bytes {
    properties.encode()
}

/// The message properties of a [`ChannelFrame::Message`]'s `properties`; malformed bytes
/// give [`WireError::MalformedProperties`].
pub fn decode_message_properties(encoded: &[u8]) -> Result<MessageProperties, WireError> {
    MessageProperties::decode(encoded).map_err(WireError::MalformedProperties)
}

/// Appends `frame` to `out`. Fails, leaving `out` as it was, when a text is over
/// [`MAX_CHANNEL_TEXT_LEN`] bytes, ping data is outside [`MIN_PING_DATA_LEN`] to
/// [`MAX_PING_DATA_LEN`] bytes, or the frame is over 4 GiB: what the decoder would refuse.
pub fn encode_channel_frame(frame: &ChannelFrame, out: &mut BytesMut) -> Result<(), WireError> {
    let start = out.len();
    out.put_u32_le(0);
    out.put_u8(frame.type_code());
    if let Err(e) = put_body(frame, out) {
        out.truncate(start);
        return Err(e);
    }
    let len = out.len() - start;
    match u32::try_from(len) {
        Ok(l) => {
            out[start..start + 4].copy_from_slice(&l.to_le_bytes());
            Ok(())
        }
        Err(_) => {
            out.truncate(start);
            Err(WireError::FrameTooLarge {
                len: len as u64,
                max: u64::from(u32::MAX),
            })
        }
    }
}

fn put_body(frame: &ChannelFrame, out: &mut BytesMut) -> Result<(), WireError> {
    match frame {
        ChannelFrame::Message {
            seq,
            flags,
            properties,
            payload,
        } => {
            out.put_u32_le(*seq);
            out.put_u8(flags.bits());
            put_bytes(out, properties)?;
            out.put_slice(payload);
        }
        ChannelFrame::ConfirmRequest {
            luwid,
            first_seq,
            last_seq,
            messages,
        } => {
            out.put_u64_le(*luwid);
            out.put_u32_le(*first_seq);
            out.put_u32_le(*last_seq);
            out.put_u32_le(*messages);
        }
        ChannelFrame::Confirm { luwid, last_seq } => {
            out.put_u64_le(*luwid);
            out.put_u32_le(*last_seq);
        }
        ChannelFrame::BatchFailed {
            luwid,
            status,
            reason,
            text,
        } => {
            out.put_u64_le(*luwid);
            out.put_u32_le(status.code());
            out.put_i32_le(*reason);
            put_bounded_string(out, text, "BatchFailed.text", MAX_CHANNEL_TEXT_LEN)?;
        }
        ChannelFrame::Heartbeat { token } | ChannelFrame::HeartbeatReply { token } => {
            out.put_u64_le(*token);
        }
        ChannelFrame::Ping { data } | ChannelFrame::PingReply { data } => {
            check_ping_len(data.len())?;
            out.put_slice(data);
        }
        ChannelFrame::Status { code, reason, text } => {
            out.put_u32_le(code.code());
            out.put_i32_le(*reason);
            put_bounded_string(out, text, "Status.text", MAX_CHANNEL_TEXT_LEN)?;
        }
        ChannelFrame::Close { mode } => out.put_u8(*mode as u8),
    }
    Ok(())
}

fn check_ping_len(len: usize) -> Result<(), WireError> {
    if (MIN_PING_DATA_LEN..=MAX_PING_DATA_LEN).contains(&len) {
        Ok(())
    } else {
        Err(invalid("Ping data length", len as u64))
    }
}

/// Splits one channel frame off the front of `buf` and decodes it.
///
/// Returns `Ok(None)` when more bytes are needed (nothing is consumed), the frame when
/// one is complete (consumed from `buf`; its `Bytes` fields are slices of the buffer, not
/// copies), or an error as soon as the bytes present prove a violation: a length over
/// `max_len` ([`max_channel_frame_len`] of the agreed MAXMSGL) or under the 5-byte header
/// is refused when its 4 bytes arrive, an unknown type when its byte arrives, before any
/// body is buffered. A body shorter or longer than its type's layout, bad values, texts
/// over their bound or bad UTF-8 are refused too. On error the channel must be closed
/// (a [`ChannelFrame::Status`] with [`ChannelStatusCode::ProtocolError`] first, if it
/// can); `buf` may have lost the offending frame.
pub fn decode_channel_frame(
    buf: &mut BytesMut,
    max_len: usize,
) -> Result<Option<ChannelFrame>, WireError> {
    let Some(head) = buf.get(..4) else {
        return Ok(None);
    };
    let len = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if len as usize > max_len {
        return Err(WireError::FrameTooLarge {
            len: u64::from(len),
            max: max_len as u64,
        });
    }
    if (len as usize) < CHANNEL_FRAME_HEADER_LEN {
        return Err(WireError::FrameTooSmall { len });
    }
    let Some(&kind) = buf.get(4) else {
        return Ok(None);
    };
    if !(TYPE_MESSAGE..=TYPE_CLOSE).contains(&kind) {
        return Err(WireError::UnknownChannelFrame(kind));
    }
    if buf.len() < len as usize {
        return Ok(None);
    }
    let frame = buf.split_to(len as usize).freeze();
    let body = frame.slice(CHANNEL_FRAME_HEADER_LEN..);
    decode_body(kind, &body).map(Some)
}

fn decode_body(kind: u8, body: &Bytes) -> Result<ChannelFrame, WireError> {
    let mut r = Reader::new(body);
    let frame = match kind {
        TYPE_MESSAGE => {
            let seq = r.u32()?;
            let bits = r.u8()?;
            let flags = MessageFlags::from_bits(bits).ok_or(WireError::ReservedBits {
                field: "Message flags",
                bits: u32::from(bits & !MessageFlags::all().bits()),
            })?;
            ChannelFrame::Message {
                seq,
                flags,
                properties: r.bytes()?,
                payload: r.rest(),
            }
        }
        TYPE_CONFIRM_REQUEST => ChannelFrame::ConfirmRequest {
            luwid: r.u64()?,
            first_seq: r.u32()?,
            last_seq: r.u32()?,
            messages: r.u32()?,
        },
        TYPE_CONFIRM => ChannelFrame::Confirm {
            luwid: r.u64()?,
            last_seq: r.u32()?,
        },
        TYPE_BATCH_FAILED => ChannelFrame::BatchFailed {
            luwid: r.u64()?,
            status: ChannelStatusCode::from_code(r.u32()?),
            reason: r.i32()?,
            text: r.bounded_string("BatchFailed.text", MAX_CHANNEL_TEXT_LEN)?,
        },
        TYPE_HEARTBEAT => ChannelFrame::Heartbeat { token: r.u64()? },
        TYPE_HEARTBEAT_REPLY => ChannelFrame::HeartbeatReply { token: r.u64()? },
        TYPE_PING | TYPE_PING_REPLY => {
            check_ping_len(r.remaining())?;
            let data = r.rest();
            if kind == TYPE_PING {
                ChannelFrame::Ping { data }
            } else {
                ChannelFrame::PingReply { data }
            }
        }
        TYPE_STATUS => ChannelFrame::Status {
            code: ChannelStatusCode::from_code(r.u32()?),
            reason: r.i32()?,
            text: r.bounded_string("Status.text", MAX_CHANNEL_TEXT_LEN)?,
        },
        TYPE_CLOSE => ChannelFrame::Close {
            mode: match r.u8()? {
                0 => CloseMode::Quiesce,
                1 => CloseMode::Force,
                v => return Err(invalid("Close.mode", u64::from(v))),
            },
        },
        other => return Err(WireError::UnknownChannelFrame(other)),
    };
    r.finish()?;
    Ok(frame)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handshake::peek_hello_kind;
    use crate::ClientHello;
    use ferry_mqi::PropertyValue;

    fn hello() -> ChannelHello {
        ChannelHello {
            channel: FixedStr::new("QM1.TO.QM2").unwrap(),
            qmgr_name: FixedStr::new("QM1").unwrap(),
            qmid: FixedStr::new("QM1_2026-11-29_05.36.25").unwrap(),
            last_committed_seq: 41,
            in_doubt: Some(InDoubtBatch {
                luwid: 9,
                first_seq: 42,
                last_seq: 50,
            }),
            reset_seq: Some(7),
            compress_header: vec![HeaderCompression::System],
            compress_message: vec![MessageCompression::Lz4Fast, MessageCompression::None],
            ..ChannelHello::default()
        }
    }

    fn limits() -> ChannelLimits {
        ChannelLimits {
            channel_type: ResponderType::Receiver,
            batch_size: 100,
            max_msg_length: 1 << 20,
            seq_wrap: DEFAULT_SEQ_WRAP,
            heartbeat_interval: 60,
            npm_speed: NpmSpeed::Fast,
            batch_heartbeat: 500,
            compress_header: vec![HeaderCompression::None],
            compress_message: vec![MessageCompression::ZlibFast, MessageCompression::Lz4Fast],
        }
    }

    fn accepted() -> ChannelHelloReply {
        ChannelHelloReply::Accepted(ChannelAccepted {
            qmgr_name: FixedStr::new("QM2").unwrap(),
            qmid: FixedStr::BLANK,
            agreement: negotiate_channel(&hello(), &limits()).unwrap(),
            last_committed_seq: 50,
            last_luwid: 9,
        })
    }

    fn encoded(frame: &ChannelFrame) -> BytesMut {
        let mut b = BytesMut::new();
        encode_channel_frame(frame, &mut b).unwrap();
        b
    }

    fn every_frame() -> Vec<ChannelFrame> {
        vec![
            ChannelFrame::Message {
                seq: 42,
                flags: MessageFlags::IN_BATCH_UNIT,
                properties: Bytes::new(),
                payload: Bytes::from_static(b"header and data"),
            },
            ChannelFrame::Message {
                seq: 43,
                flags: MessageFlags::empty(),
                properties: Bytes::from_static(&[1, 0, 0, 0, 0]),
                payload: Bytes::new(),
            },
            ChannelFrame::ConfirmRequest {
                luwid: u64::MAX,
                first_seq: 42,
                last_seq: 43,
                messages: 2,
            },
            ChannelFrame::Confirm {
                luwid: 10,
                last_seq: 43,
            },
            ChannelFrame::batch_failed(10, ChannelStatusCode::BatchFailure, 2053, "Q full"),
            ChannelFrame::Heartbeat { token: 1 },
            ChannelFrame::HeartbeatReply { token: 1 },
            ChannelFrame::Ping {
                data: Bytes::from(vec![0xA5; MIN_PING_DATA_LEN]),
            },
            ChannelFrame::PingReply {
                data: Bytes::from(vec![0x5A; MAX_PING_DATA_LEN]),
            },
            ChannelFrame::status(ChannelStatusCode::Other(0x77), -1, "ü"),
            ChannelFrame::Close {
                mode: CloseMode::Quiesce,
            },
            ChannelFrame::Close {
                mode: CloseMode::Force,
            },
        ]
    }

    #[test]
    fn channel_hello_round_trips_at_every_split() {
        let mut full = BytesMut::new();
        hello().encode(&mut full).unwrap();
        for cut in 0..full.len() {
            let mut part = BytesMut::from(&full[..cut]);
            assert_eq!(ChannelHello::decode(&mut part), Ok(None), "cut {cut}");
        }
        let mut all = full.clone();
        assert_eq!(ChannelHello::decode(&mut all), Ok(Some(hello())));
        assert!(all.is_empty());
        let plain = ChannelHello::default();
        plain.encode(&mut all).unwrap();
        assert_eq!(ChannelHello::decode(&mut all), Ok(Some(plain)));
    }

    #[test]
    fn a_listener_tells_a_channel_from_a_client() {
        let mut ch = BytesMut::new();
        hello().encode(&mut ch).unwrap();
        let mut cl = BytesMut::new();
        ClientHello::default().encode(&mut cl).unwrap();
        assert_eq!(peek_hello_kind(&ch[..8]), Ok(None));
        assert_eq!(peek_hello_kind(&ch), Ok(Some(HelloKind::Channel)));
        assert_eq!(peek_hello_kind(&cl[..9]), Ok(Some(HelloKind::Client)));
        assert!(matches!(
            peek_hello_kind(b"GET "),
            Err(WireError::BadMagic(_))
        ));
        assert!(matches!(
            peek_hello_kind(b"FRY\x01\x09\x00\x00\x00\x07"),
            Err(WireError::UnexpectedVerb { verb: 7, .. })
        ));
        assert!(matches!(
            ClientHello::decode(&mut ch.clone()),
            Err(WireError::UnexpectedVerb { verb: 3, .. })
        ));
        assert!(matches!(
            ChannelHello::decode(&mut cl),
            Err(WireError::UnexpectedVerb { verb: 1, .. })
        ));
    }

    /// The body of `h` (after the 9-byte prefix), to damage and re-frame.
    fn body_of(h: &ChannelHello) -> Vec<u8> {
        let mut b = BytesMut::new();
        h.encode(&mut b).unwrap();
        b[9..].to_vec()
    }

    fn framed(kind: u8, body: &[u8]) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_slice(&crate::MAGIC);
        b.put_u32_le((body.len() + 9) as u32);
        b.put_u8(kind);
        b.put_slice(body);
        b
    }

    #[test]
    fn damaged_channel_hellos_are_refused() {
        let base = body_of(&ChannelHello::default());
        let with = |at: usize, v: u8| {
            let mut b = base.clone();
            b[at] = v;
            ChannelHello::decode(&mut framed(3, &b))
        };
        assert!(
            matches!(with(4, 3), Err(WireError::InvalidValue { .. })),
            "receiver cannot initiate"
        );
        assert!(matches!(with(5, 2), Err(WireError::InvalidValue { .. })));
        assert!(matches!(with(6, 0), Err(WireError::InvalidValue { .. })));
        assert!(matches!(with(7, 4), Err(WireError::ReservedBits { .. })));
        // In-doubt fields without the flag, or the flag with LUWID 0.
        assert!(matches!(with(40, 1), Err(WireError::ReservedBits { .. })));
        assert!(matches!(with(48, 1), Err(WireError::ReservedBits { .. })));
        assert!(matches!(with(7, 1), Err(WireError::InvalidValue { .. })));
        assert!(matches!(with(56, 1), Err(WireError::ReservedBits { .. })));
        let mut long = base.clone();
        long.push(0);
        assert_eq!(
            ChannelHello::decode(&mut framed(3, &long)),
            Err(WireError::TrailingBytes { extra: 1 })
        );
        // A later minor's added fields are skipped.
        long[2] = 2;
        let later = ChannelHello::decode(&mut framed(3, &long))
            .unwrap()
            .unwrap();
        assert_eq!(later.minor, 2);
        assert_eq!(
            ChannelHello::decode(&mut framed(3, &base[..base.len() - 1])),
            Err(WireError::Truncated)
        );
        let too_many = ChannelHello {
            compress_header: vec![HeaderCompression::None; 3],
            ..ChannelHello::default()
        };
        let mut out = BytesMut::from(&b"kept"[..]);
        assert!(too_many.encode(&mut out).is_err());
        assert_eq!(&out[..], b"kept");
    }

    #[test]
    fn replies_round_trip_accepted_and_refused() {
        let mut b = BytesMut::new();
        accepted().encode(&mut b).unwrap();
        for cut in 0..b.len() {
            let mut part = BytesMut::from(&b[..cut]);
            assert_eq!(ChannelHelloReply::decode(&mut part), Ok(None), "cut {cut}");
        }
        assert_eq!(ChannelHelloReply::decode(&mut b), Ok(Some(accepted())));
        let refusals = [
            ChannelStatusCode::NoChannel,
            ChannelStatusCode::ChannelType,
            ChannelStatusCode::QmUnavailable,
            ChannelStatusCode::SequenceError,
            ChannelStatusCode::Stopped,
            ChannelStatusCode::BatchFailure,
            ChannelStatusCode::SecurityFailure,
            ChannelStatusCode::WrapValueError,
            ChannelStatusCode::CipherSpec,
            ChannelStatusCode::PeerName,
            ChannelStatusCode::ProtocolError,
            ChannelStatusCode::Other(0xABCD),
        ];
        for code in refusals {
            assert_eq!(ChannelStatusCode::from_code(code.code()), code);
            let r = ChannelHelloReply::Refused(ChannelRefused::new(code, "channel QM1.TO.QM2"));
            r.encode(&mut b).unwrap();
            assert_eq!(ChannelHelloReply::decode(&mut b), Ok(Some(r)));
        }
        // A long refusal text is cut (at a character boundary) so that it fits a hello.
        let cut = ChannelRefused::new(ChannelStatusCode::Stopped, "é".repeat(600));
        assert_eq!(cut.text.len(), MAX_REFUSAL_TEXT_LEN);
        let over = ChannelHelloReply::Refused(ChannelRefused {
            text: "x".repeat(MAX_REFUSAL_TEXT_LEN + 1),
            ..cut
        });
        let mut out = BytesMut::new();
        assert!(matches!(
            over.encode(&mut out),
            Err(WireError::NameTooLong { .. })
        ));
        assert!(out.is_empty());
        // A refusal from another major still reads; an acceptance does not.
        let other_major = ChannelRefused {
            major: 2,
            ..ChannelRefused::new(ChannelStatusCode::ProtocolError, "")
        };
        ChannelHelloReply::Refused(other_major.clone())
            .encode(&mut out)
            .unwrap();
        assert_eq!(
            ChannelHelloReply::decode(&mut out),
            Ok(Some(ChannelHelloReply::Refused(other_major)))
        );
        accepted().encode(&mut out).unwrap();
        out[9] = 2;
        assert!(matches!(
            ChannelHelloReply::decode(&mut out),
            Err(WireError::InvalidValue { .. })
        ));
    }

    #[test]
    fn negotiation_rules() {
        let mut h = hello();
        h.batch_size = 500;
        h.max_msg_length = 100;
        h.heartbeat_interval = 300;
        h.batch_heartbeat = 250;
        let g = negotiate_channel(&h, &limits()).unwrap();
        assert_eq!((g.batch_size, g.max_msg_length), (100, 100), "the lower");
        assert_eq!(g.heartbeat_interval, 300, "the higher");
        assert_eq!(g.npm_speed, NpmSpeed::Fast);
        assert_eq!(g.batch_heartbeat, 250, "the sender's (the initiator)");
        assert_eq!(g.minor, CHANNEL_PROTOCOL_MINOR);
        assert_eq!(
            g.compression,
            Techniques {
                header: HeaderCompression::None,
                message: MessageCompression::Lz4Fast,
            },
            "the first of the initiator's list that the responder has"
        );
        let old_peer = ChannelHello {
            minor: 0,
            ..h.clone()
        };
        assert_eq!(
            negotiate_channel(&old_peer, &limits()).unwrap().compression,
            Techniques::default(),
            "a 1.0 peer does not compress"
        );
        h.npm_speed = NpmSpeed::Normal;
        h.batch_size = 0;
        h.max_msg_length = 0;
        let g = negotiate_channel(&h, &limits()).unwrap();
        assert_eq!(g.npm_speed, NpmSpeed::Normal);
        assert_eq!(
            (g.batch_size, g.max_msg_length),
            (100, 1 << 20),
            "0: the other's"
        );
        let normal = ChannelLimits {
            npm_speed: NpmSpeed::Normal,
            ..limits()
        };
        assert_eq!(
            negotiate_channel(&hello(), &normal).unwrap().npm_speed,
            NpmSpeed::Normal
        );
        h.seq_wrap = 999_999;
        assert_eq!(
            negotiate_channel(&h, &limits()),
            Err(ChannelStatusCode::WrapValueError)
        );
        h = hello();
        h.major = 2;
        assert_eq!(
            negotiate_channel(&h, &limits()),
            Err(ChannelStatusCode::ProtocolError)
        );
        h = hello();
        h.minor = 9;
        assert_eq!(
            negotiate_channel(&h, &limits()).unwrap().minor,
            CHANNEL_PROTOCOL_MINOR
        );
    }

    #[test]
    fn channel_types_must_pair() {
        use InitiatorType as I;
        use ResponderType as R;
        let pairs = [
            (I::Sender, R::Receiver),
            (I::Server, R::Receiver),
            (I::Requester, R::Server),
            (I::Requester, R::Sender),
            (I::ClusterSender, R::ClusterReceiver),
        ];
        for i in [I::Sender, I::Server, I::Requester, I::ClusterSender] {
            assert_eq!(I::from_code(i.code()), Some(i));
            for r in [R::Sender, R::Server, R::Receiver, R::ClusterReceiver] {
                assert_eq!(R::from_code(r.code()), Some(r));
                let h = ChannelHello {
                    channel_type: i,
                    ..hello()
                };
                let l = ChannelLimits {
                    channel_type: r,
                    ..limits()
                };
                let got = negotiate_channel(&h, &l);
                if pairs.contains(&(i, r)) {
                    let g = got.unwrap();
                    let sender_hb = if i == I::Requester { 500 } else { 0 };
                    assert_eq!(g.batch_heartbeat, sender_hb, "{i:?} {r:?}");
                } else {
                    assert_eq!(got, Err(ChannelStatusCode::ChannelType), "{i:?} {r:?}");
                }
            }
        }
    }

    #[test]
    fn resynchronisation_rule() {
        let h = ChannelHello {
            reset_seq: None,
            ..hello()
        };
        let receiver = |last_committed_seq, last_luwid| ReceiverSync {
            last_committed_seq,
            last_luwid,
        };
        // The receiver committed the in-doubt batch: the sender commits it too.
        assert_eq!(
            resynchronise(h.sender_sync(), receiver(50, 9), None),
            Ok(Resynchronisation {
                in_doubt: Some(InDoubtOutcome::Commit),
                last_committed_seq: 50
            })
        );
        // It did not: the sender backs it out, and both stand at 41.
        assert_eq!(
            resynchronise(h.sender_sync(), receiver(41, 8), None),
            Ok(Resynchronisation {
                in_doubt: Some(InDoubtOutcome::BackOut),
                last_committed_seq: 41
            })
        );
        assert_eq!(
            resynchronise(h.sender_sync(), receiver(50, 8), None),
            Err(ChannelStatusCode::SequenceError)
        );
        // RESET CHANNEL SEQNUM settles any disagreement.
        let reset = resynchronise(h.sender_sync(), receiver(3, 8), Some(1000));
        assert_eq!(reset.unwrap().last_committed_seq, 1000);
        let no_batch = SenderSync {
            last_committed_seq: 41,
            in_doubt: None,
        };
        assert_eq!(
            resynchronise(no_batch, receiver(41, 0), None),
            Ok(Resynchronisation {
                in_doubt: None,
                last_committed_seq: 41
            })
        );
        // A requester's hello carries its receiver state; the sending responder resolves
        // its own batch with it.
        let rqstr = ChannelHello {
            channel_type: InitiatorType::Requester,
            last_committed_seq: 70,
            last_luwid: 12,
            in_doubt: None,
            reset_seq: None,
            ..hello()
        };
        let server = SenderSync {
            last_committed_seq: 60,
            in_doubt: Some(InDoubtBatch {
                luwid: 12,
                first_seq: 61,
                last_seq: 70,
            }),
        };
        assert_eq!(
            resynchronise(server, rqstr.receiver_sync(), rqstr.reset_seq),
            Ok(Resynchronisation {
                in_doubt: Some(InDoubtOutcome::Commit),
                last_committed_seq: 70
            })
        );
        assert_eq!(next_seq(41, 999), 42);
        assert_eq!(next_seq(999, 999), 1);
    }

    #[test]
    fn every_frame_round_trips_at_every_split() {
        let max = max_channel_frame_len(1 << 20);
        let mut all = BytesMut::new();
        for f in every_frame() {
            let full = encoded(&f);
            assert_eq!(
                full.len(),
                u32::from_le_bytes([full[0], full[1], full[2], full[3]]) as usize
            );
            for cut in 0..full.len() {
                let mut part = BytesMut::from(&full[..cut]);
                assert_eq!(
                    decode_channel_frame(&mut part, max),
                    Ok(None),
                    "type {} cut {cut}",
                    f.type_code()
                );
                assert_eq!(part.len(), cut, "nothing consumed");
            }
            encode_channel_frame(&f, &mut all).unwrap();
        }
        for f in every_frame() {
            assert_eq!(decode_channel_frame(&mut all, max), Ok(Some(f)));
        }
        assert_eq!(decode_channel_frame(&mut all, max), Ok(None));
    }

    #[test]
    fn message_payloads_are_slices_of_the_read_buffer() {
        let mut b = encoded(&every_frame()[0]);
        let start = b.as_ptr() as usize;
        let end = start + b.len();
        let Some(ChannelFrame::Message { payload, .. }) =
            decode_channel_frame(&mut b, max_channel_frame_len(0)).unwrap()
        else {
            panic!("not a message");
        };
        let p = payload.as_ptr() as usize;
        assert!(start <= p && p + payload.len() <= end, "no copy");
    }

    #[test]
    fn lengths_are_checked_before_buffering() {
        let max = max_channel_frame_len(4096);
        assert_eq!(max, MAX_PING_DATA_LEN + CHANNEL_FRAME_OVERHEAD);
        let mut b = BytesMut::new();
        b.put_u32_le(max as u32 + 1);
        assert_eq!(
            decode_channel_frame(&mut b, max),
            Err(WireError::FrameTooLarge {
                len: max as u64 + 1,
                max: max as u64
            })
        );
        assert_eq!(b.len(), 4, "refused on its length alone");
        let mut b = BytesMut::new();
        b.put_u32_le(4);
        assert_eq!(
            decode_channel_frame(&mut b, max),
            Err(WireError::FrameTooSmall { len: 4 })
        );
        let mut b = BytesMut::new();
        b.put_u32_le(1000);
        b.put_u8(0x0B);
        assert_eq!(
            decode_channel_frame(&mut b, max),
            Err(WireError::UnknownChannelFrame(0x0B)),
            "an unknown type is refused before its body arrives"
        );
        assert_eq!(
            decode_channel_frame(&mut framed_frame(0, &[]), max),
            Err(WireError::UnknownChannelFrame(0))
        );
    }

    fn framed_frame(kind: u8, body: &[u8]) -> BytesMut {
        let mut b = BytesMut::new();
        b.put_u32_le((body.len() + CHANNEL_FRAME_HEADER_LEN) as u32);
        b.put_u8(kind);
        b.put_slice(body);
        b
    }

    #[test]
    fn malformed_bodies_are_typed_errors() {
        let max = max_channel_frame_len(1 << 20);
        let dec = |kind: u8, body: &[u8]| decode_channel_frame(&mut framed_frame(kind, body), max);
        for f in every_frame() {
            let full = encoded(&f);
            let body = &full[CHANNEL_FRAME_HEADER_LEN..];
            let mut long = body.to_vec();
            long.push(0);
            match f {
                // Their last field is the rest of the frame: more data, not garbage.
                ChannelFrame::Message { .. } => {}
                ChannelFrame::Ping { .. } => {}
                ChannelFrame::PingReply { .. } => {
                    assert!(matches!(
                        dec(f.type_code(), &long),
                        Err(WireError::InvalidValue { .. })
                    ))
                }
                _ => assert_eq!(
                    dec(f.type_code(), &long),
                    Err(WireError::TrailingBytes { extra: 1 }),
                    "type {}",
                    f.type_code()
                ),
            }
            // One byte short is an error, except where the last field is the rest.
            let rest_is_data = matches!(
                f,
                ChannelFrame::Message { .. } | ChannelFrame::PingReply { .. }
            );
            if !rest_is_data {
                let t = f.type_code();
                assert!(dec(t, &body[..body.len() - 1]).is_err(), "type {t}");
            }
        }
        assert_eq!(dec(TYPE_CONFIRM, &[0; 3]), Err(WireError::Truncated));
        assert_eq!(dec(TYPE_MESSAGE, &[0; 4]), Err(WireError::Truncated));
        assert!(matches!(
            dec(TYPE_MESSAGE, &[0, 0, 0, 0, 4, 0, 0, 0, 0]),
            Err(WireError::ReservedBits { .. })
        ));
        assert_eq!(
            dec(TYPE_MESSAGE, &[0, 0, 0, 0, 1, 9, 0, 0, 0, 1]),
            Err(WireError::Truncated),
            "a properties length past the frame"
        );
        assert!(matches!(
            dec(TYPE_CLOSE, &[2]),
            Err(WireError::InvalidValue { .. })
        ));
        assert!(matches!(
            dec(TYPE_PING, &[0; MIN_PING_DATA_LEN - 1]),
            Err(WireError::InvalidValue { .. })
        ));
        let mut status = vec![1, 0, 0, 0, 0, 0, 0, 0];
        status.extend_from_slice(&(MAX_CHANNEL_TEXT_LEN as u32 + 1).to_le_bytes());
        assert!(matches!(
            dec(TYPE_STATUS, &status),
            Err(WireError::NameTooLong { .. })
        ));
        let mut bad_utf8 = vec![1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0xFF];
        assert!(matches!(
            dec(TYPE_STATUS, &bad_utf8),
            Err(WireError::InvalidUtf8 { .. })
        ));
        bad_utf8[12] = b'x';
        assert!(dec(TYPE_STATUS, &bad_utf8).is_ok());
    }

    #[test]
    fn unencodable_frames_leave_the_buffer_as_it_was() {
        let mut out = BytesMut::from(&b"earlier frames"[..]);
        let too_long = ChannelFrame::Status {
            code: ChannelStatusCode::Stopped,
            reason: 0,
            text: "x".repeat(MAX_CHANNEL_TEXT_LEN + 1),
        };
        assert!(encode_channel_frame(&too_long, &mut out).is_err());
        let short_ping = ChannelFrame::Ping {
            data: Bytes::from_static(b"short"),
        };
        assert!(encode_channel_frame(&short_ping, &mut out).is_err());
        assert_eq!(&out[..], b"earlier frames");
        // The constructors cut a text to fit.
        let ChannelFrame::Status { text, .. } = ChannelFrame::status(
            ChannelStatusCode::Stopped,
            0,
            "é".repeat(MAX_CHANNEL_TEXT_LEN),
        ) else {
            panic!("not a status");
        };
        assert_eq!(text.len(), MAX_CHANNEL_TEXT_LEN);
    }

    #[test]
    fn properties_travel_in_the_get_reply_encoding() {
        let mut props = MessageProperties::new();
        props
            .set("colour", PropertyValue::String("blue".into()))
            .unwrap();
        let f = ChannelFrame::message(1, MessageFlags::IN_BATCH_UNIT, &props, Bytes::new());
        let mut b = encoded(&f);
        let Some(ChannelFrame::Message { properties, .. }) =
            decode_channel_frame(&mut b, max_channel_frame_len(0)).unwrap()
        else {
            panic!("not a message");
        };
        assert_eq!(properties, props.encode());
        assert_eq!(decode_message_properties(&properties), Ok(props));
        assert_eq!(decode_message_properties(&[]), Ok(MessageProperties::new()));
        assert!(matches!(
            decode_message_properties(&[1, 5]),
            Err(WireError::MalformedProperties(_))
        ));
    }
}
