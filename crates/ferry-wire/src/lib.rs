//! Ferry's native binary protocol: a pure codec (no I/O, no async).
//!
//! A connection starts with a handshake ([`ClientHello`] → [`ServerHello`]) that
//! negotiates the protocol version, maximum message length, heartbeat interval and
//! SHARECNV (how many conversations, i.e. hconns, may share the socket). Then both sides
//! exchange length-prefixed [`Frame`]s; each carries a conversation id and a request id
//! so replies find their call while many conversations share one socket.
//!
//! Reading: call [`decode_frame`] on the socket's read buffer until it returns `Ok(None)`,
//! then [`Request::decode`] / [`Reply::decode`] each frame. Message bodies come out as
//! `bytes::Bytes` slices of the read buffer (no copy). Writing: [`encode_request`] /
//! [`encode_reply`] append to one output `BytesMut`, so many frames go out in one write.
//!
//! ```
//! use bytes::BytesMut;
//! use ferry_wire::{decode_frame, encode_request, max_frame_len, Request};
//!
//! let mut out = BytesMut::new();
//! encode_request(1, 1, &Request::Cmit, &mut out).unwrap();
//! encode_request(2, 1, &Request::Back, &mut out).unwrap();
//! // The peer reads both frames from one buffer.
//! let first = decode_frame(&mut out, max_frame_len(4096)).unwrap().unwrap();
//! assert_eq!(Request::decode(&first).unwrap(), Request::Cmit);
//! let second = decode_frame(&mut out, max_frame_len(4096)).unwrap().unwrap();
//! assert_eq!((second.conversation, Request::decode(&second).unwrap()), (2, Request::Back));
//! assert!(decode_frame(&mut out, 4096).unwrap().is_none());
//! ```
//!
//! The protocol is specified in `docs/protocol.md`.

#![deny(missing_docs)]

pub mod channel;
pub mod compression;
mod cursor;
pub mod error;
pub mod frame;
pub mod fuzzing;
pub mod handshake;
pub mod inbound;
pub mod notice;
pub mod reply;
pub mod request;
pub mod structs;

pub use compression::{CompressionMeter, FlowSize, FrameCompressor, FrameExpander, Techniques};
pub use error::WireError;
pub use frame::{
    carries_message, decode_frame, max_frame_len, pending_frame_len, Frame, FrameFlags, Verb,
    FRAME_OVERHEAD, HEADER_LEN, SOCKET_CONVERSATION,
};
pub use handshake::{
    negotiate, negotiate_heartbeat, peek_hello_kind, ClientHello, HelloFlags, HelloKind,
    Negotiated, ServerHello, ServerLimits, MAGIC, MINOR_WITH_COMPRESSION, MINOR_WITH_CONTEXT,
    MINOR_WITH_CREDENTIALS, MINOR_WITH_PUBSUB, MINOR_WITH_PUT_PROPERTIES, MINOR_WITH_SET,
    PROTOCOL_MAJOR, PROTOCOL_MINOR,
};
pub use inbound::{Inbound, Received};
pub use notice::CloseNotice;
pub use reply::{encode_reply, encode_reply_at, MqscOutput, Reply};
pub use request::{
    encode_request, encode_request_at, ConnRequest, Credentials, Request, MAX_OBJECT_STRING_LEN,
};
pub use structs::{reason_from_wire, Status};
