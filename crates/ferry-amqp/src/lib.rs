//! AMQP 1.0 codec for Ferry: the type system, performatives, frames and messages, so
//! Apache Qpid JMS and proton clients can talk to a Ferry queue manager. Pure: no I/O,
//! no async, no engine.
//!
//! Layers, bottom up:
//! - [`value`] / [`codec`]: the AMQP type system ([`Value`]) and its encoder/decoder;
//!   typed fields go through the [`Encode`]/[`Decode`] traits without building `Value`s.
//! - [`performative`]: open, begin, attach, flow, transfer, disposition, detach, end,
//!   close, the SASL frames, termini, delivery states and transaction types.
//! - [`frame`]: protocol headers, the frame header, [`FrameDecoder`] and frame encoders.
//! - [`message`]: message sections, with each section's raw bytes available.
//! - [`condition`]: error-condition symbols and the JMS vocabulary (capabilities,
//!   filters, annotations).
//! - [`connection`]: the sans-I/O connection state machine (SASL, open/close, sessions,
//!   links, credit, transfers, dispositions, heartbeats), server and client role.
//!
//! ```
//! use bytes::BytesMut;
//! use ferry_amqp::{encode_frame, FrameDecoder, Open, Performative};
//!
//! let mut wire = BytesMut::new();
//! encode_frame(0, &Performative::Open(Open::new("broker")), &[], &mut wire);
//! let frame = FrameDecoder::new(1 << 20).decode(&mut wire).unwrap().unwrap();
//! let Some(Performative::Open(open)) = frame.performative else { panic!() };
//! assert_eq!(open.container_id, "broker");
//! assert_eq!(open.max_frame_size, u32::MAX); // absent: the spec default
//! ```
//!
//! Every decoder returns a [`DecodeError`] or [`FrameError`] for malformed input, never
//! panics; each error names the AMQP condition to close the connection with.

#![warn(missing_docs)]

pub mod codec;
pub mod condition;
pub mod connection;
pub mod descriptor;
pub mod error;
pub mod frame;
pub mod fuzzing;
pub mod message;
pub mod performative;
pub mod value;

pub use codec::{Decode, Decoder, Encode};
pub use error::{DecodeError, FrameError};
pub use frame::{
    encode_frame, encode_heartbeat, encode_transfer, encode_transfer_with, Frame, FrameDecoder,
    FrameType, ProtocolHeader,
};
pub use message::{
    Annotations, Body, DataSections, Header, Message, MessageId, MessageIdRef, Properties,
    PropertiesRef, RawSections, SectionKind,
};
pub use performative::*;
pub use value::{Array, Described, Descriptor, ElementType, Str, Symbol, Timestamp, Value};
