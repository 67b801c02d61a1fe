//! Why bytes from the wire were refused.
//!
//! Every decoder returns [`WireError`] instead of panicking. A peer that sends bytes the
//! codec refuses has broken the protocol: the server answers with a close notice carrying
//! [`WireError::reason`] and drops the socket; the client fails its calls with
//! 2009 MQRC_CONNECTION_BROKEN.

use ferry_mqi::ReasonCode;

/// A protocol violation found while decoding (or a value too large to encode).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The bytes end before the structure does.
    #[error("truncated: the payload ends before the structure it should hold")]
    Truncated,
    /// The payload holds bytes after the last field of its layout.
    #[error("{extra} unexpected bytes after the end of the payload")]
    TrailingBytes {
        /// How many bytes were left over.
        extra: usize,
    },
    /// A frame (or hello) announces more bytes than the negotiated maximum.
    #[error("frame of {len} bytes exceeds the limit of {max} bytes")]
    FrameTooLarge {
        /// The announced length.
        len: u64,
        /// The limit in force.
        max: u64,
    },
    /// A frame announces fewer bytes than its own header.
    #[error("frame length {len} is shorter than the frame header")]
    FrameTooSmall {
        /// The announced length.
        len: u32,
    },
    /// The connection did not start with the Ferry magic bytes.
    #[error("bad magic bytes {0:02x?}: not a Ferry client or server")]
    BadMagic([u8; 4]),
    /// The verb byte names no verb of this protocol version.
    #[error("unknown verb 0x{0:02x}")]
    UnknownVerb(u8),
    /// A request verb arrived where a reply was expected, or the other way round.
    #[error("verb 0x{verb:02x} is not valid here: {expected} expected")]
    UnexpectedVerb {
        /// The verb byte received.
        verb: u8,
        /// What the decoder wanted.
        expected: &'static str,
    },
    /// A reserved flag bit or reserved field is not zero.
    #[error("reserved bits 0x{bits:x} set in {field}")]
    ReservedBits {
        /// Where.
        field: &'static str,
        /// The offending bits.
        bits: u32,
    },
    /// The verb byte's reply bit disagrees with the REPLY flag.
    #[error("the verb's reply bit and the REPLY flag disagree")]
    FlagMismatch,
    /// A name or text is longer than its field allows.
    #[error("{field} is {len} bytes long; at most {max} are allowed")]
    NameTooLong {
        /// Which field.
        field: &'static str,
        /// The length received.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A name or text is not UTF-8.
    #[error("{field} is not valid UTF-8")]
    InvalidUtf8 {
        /// Which field.
        field: &'static str,
    },
    /// A numeric field holds a value outside its range.
    #[error("{field} holds the invalid value {value}")]
    InvalidValue {
        /// Which field.
        field: &'static str,
        /// The value received.
        value: i64,
    },
    /// A compressed frame announces more data than the connection's limit (MAXMSGL plus
    /// the frame overhead): refused before anything is allocated for it.
    #[error("a compressed frame would expand to {len} bytes; the limit is {max} bytes (MAXMSGL plus headers)")]
    ExpandsTooLarge {
        /// The expanded length announced.
        len: u64,
        /// The limit in force.
        max: u64,
    },
    /// A compressed frame uses a technique the hello did not agree on (or the connection
    /// agreed on none).
    #[error("a compressed frame uses {technique} ({value}), which this connection did not agree on in its hello")]
    TechniqueNotAgreed {
        /// The technique's MQSC name.
        technique: &'static str,
        /// Its MQCOMPRESS value.
        value: u32,
    },
    /// Compressed data that does not decompress to what its frame announced.
    #[error("compressed {technique} data is damaged: {detail}")]
    CorruptCompressedData {
        /// The technique's MQSC name.
        technique: &'static str,
        /// What is wrong.
        detail: &'static str,
    },
    /// A request verb that the connection's negotiated protocol minor does not have
    /// (e.g. SUB on a connection that agreed minor 4). The frame itself is well formed:
    /// the server answers the call with 2298 MQRC_FUNCTION_NOT_SUPPORTED.
    #[error(
        "verb 0x{verb:02x} needs protocol minor {needs}; this connection negotiated minor {minor}"
    )]
    VerbNotNegotiated {
        /// The verb byte received.
        verb: u8,
        /// The first minor that has the verb.
        needs: u16,
        /// The minor the connection negotiated.
        minor: u16,
    },
    /// Something the negotiated minor does not carry was asked to be encoded.
    #[error("{what} needs protocol minor {needs}; this connection negotiated minor {minor}")]
    NotNegotiated {
        /// What could not be carried.
        what: &'static str,
        /// The first minor that carries it.
        needs: u16,
        /// The minor the connection negotiated.
        minor: u16,
    },
    /// A compressed frame reached a payload decoder without being expanded.
    #[error("a compressed frame must be expanded before it is decoded")]
    NotExpanded,
    /// The type byte of a message channel frame names no frame of the channel protocol
    /// ([`crate::channel`]).
    #[error("unknown message channel frame type 0x{0:02x}")]
    UnknownChannelFrame(u8),
    /// Message properties whose encoding (`ferry_mqi::MessageProperties`) is malformed.
    #[error("message properties: {0}")]
    MalformedProperties(ferry_mqi::PropertyError),
}

impl WireError {
    /// The MQ reason code that best describes the violation, as sent in a close notice.
    ///
    /// Oversized frames (and compressed frames that would expand past the limit) map to
    /// 2218 MQRC_MSG_TOO_BIG_FOR_CHANNEL, bad names and texts to
    /// 2152 MQRC_OBJECT_NAME_ERROR, a foreign peer (bad magic) to 2539
    /// MQRC_CHANNEL_CONFIG_ERROR, a verb the negotiated minor lacks to 2298
    /// MQRC_FUNCTION_NOT_SUPPORTED; every other framing error to 2009
    /// MQRC_CONNECTION_BROKEN, which is what the application sees anyway.
    pub fn reason(&self) -> ReasonCode {
        match self {
            WireError::FrameTooLarge { .. } | WireError::ExpandsTooLarge { .. } => {
                ReasonCode::MsgTooBigForChannel
            }
            WireError::NameTooLong { .. } | WireError::InvalidUtf8 { .. } => {
                ReasonCode::ObjectNameError
            }
            WireError::BadMagic(_) => ReasonCode::ChannelConfigError,
            WireError::VerbNotNegotiated { .. } => ReasonCode::FunctionNotSupported,
            _ => ReasonCode::ConnectionBroken,
        }
    }
}
