//! What a [`Connection`](super::Connection) reports to its caller, and the ids naming
//! sessions and links.
//!
//! Events are pushed into a caller-owned `Vec` by `receive` and `tick`; each names the
//! AMQP performative (or condition) behind it. Peer-initiated endings are always
//! reported: a link lost with its session or connection gets its own `Detach` event
//! (with its unsettled outgoing deliveries), so a broker cleans up in one place. Endings
//! the caller asked for are not echoed back.

use bytes::Bytes;

use crate::performative::{Attach, Begin, DeliveryState, ErrorCondition, Open, Role, SaslCode};
use crate::value::{Str, Symbol};

/// A session: our channel number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u16);

/// A link: our session channel and our handle for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkId {
    /// The session's channel.
    pub channel: u16,
    /// Our handle (the one our frames carry).
    pub handle: u32,
}

impl LinkId {
    /// The link's session.
    pub fn session(self) -> SessionId {
        SessionId(self.channel)
    }
}

/// Something the peer did (or a fault that ended part of the connection).
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Server role: the client's `sasl-init`; answer with `sasl_outcome`, then call
    /// `receive` again with the rest of the buffer.
    SaslInit {
        /// The chosen mechanism.
        mechanism: Symbol,
        /// Its initial response (PLAIN: see [`parse_plain`](super::parse_plain)).
        initial_response: Option<Bytes>,
        /// The host the client asked for.
        hostname: Option<Str>,
    },
    /// Client role: the server's `sasl-outcome` (a failure also closes the connection).
    SaslOutcome(SaslCode),
    /// The peer's `open`. Server role: answer with `open`.
    Open(Box<Open>),
    /// The peer began a session (already answered), or answered our `begin`.
    Begin {
        /// The session.
        session: SessionId,
        /// The peer's begin.
        begin: Begin,
    },
    /// The peer wants a link: answer with `attach_reply` or `refuse_attach`.
    Attach {
        /// The link (its handle is ours).
        link: LinkId,
        /// The peer's attach; `role` is the peer's role.
        attach: Box<Attach>,
    },
    /// The peer answered our attach (a null terminus means it refuses; a detach follows).
    Attached {
        /// The link.
        link: LinkId,
        /// The peer's attach.
        attach: Box<Attach>,
    },
    /// The peer's flow for a link: new credit, drain, available.
    Flow {
        /// The link.
        link: LinkId,
        /// Link credit now: the peer's grant (we send), or what is left of ours (we receive).
        credit: u32,
        /// The peer asks us to use up the credit, then call `drained`.
        drain: bool,
        /// Messages the sender says it has.
        available: Option<u32>,
    },
    /// A whole delivery arrived on a link where we receive.
    Message {
        /// The link.
        link: LinkId,
        /// The delivery id (for dispositions).
        delivery_id: u32,
        /// The delivery tag.
        delivery_tag: Bytes,
        /// The sender settled it already (no disposition expected).
        settled: bool,
        /// Message format (0: AMQP message).
        message_format: u32,
        /// Delivery state sent with it (e.g. transactional-state).
        state: Option<DeliveryState>,
        /// The message bytes, reassembled across frames.
        message: Bytes,
    },
    /// The peer's disposition for a range of deliveries on a session.
    Disposition {
        /// The session.
        session: SessionId,
        /// The peer's role: `Receiver` for deliveries we sent.
        role: Role,
        /// First delivery id.
        first: u32,
        /// Last delivery id (inclusive).
        last: u32,
        /// Settled by the peer.
        settled: bool,
        /// The state or outcome.
        state: Option<DeliveryState>,
    },
    /// A link is gone: the peer detached it, or a fault or its session's or connection's
    /// end took it. Not reported for links the caller detached.
    Detach {
        /// The link.
        link: LinkId,
        /// Closed (true) or only detached.
        closed: bool,
        /// Why, if an error.
        error: Option<ErrorCondition>,
        /// Deliveries we sent on it that the peer never settled (ascending ids).
        unsettled: Vec<u32>,
    },
    /// A session is gone (peer's end, a session error, or the connection's end), after
    /// its links' `Detach` events. Not reported for sessions the caller ended.
    End {
        /// The session.
        session: SessionId,
        /// Why, if an error.
        error: Option<ErrorCondition>,
    },
    /// The connection is finished: write out the output, then close the socket.
    Closed {
        /// The peer closed it (or refused it); false when we did.
        remote: bool,
        /// Why, if an error (the peer's, or ours for faults and idle timeout).
        error: Option<ErrorCondition>,
    },
}
