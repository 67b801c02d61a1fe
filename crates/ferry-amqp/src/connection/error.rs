//! Errors a [`Connection`](super::Connection) returns to its caller for a request that
//! does not fit the connection's state (unknown link, no credit, wrong role...).
//!
//! These are the caller's mistakes, not the peer's: faults in what the peer sends never
//! come back as `Err`; they close the session, link or connection with the AMQP error
//! condition the spec names and are reported as events.

/// A request the connection cannot carry out in its current state.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// The connection is closing or closed.
    #[error("the connection is closed")]
    Closed,
    /// No session with that id is mapped (never begun, or ended).
    #[error("no session on channel {0}")]
    UnknownSession(u16),
    /// No link with that id is attached (never attached, or detached).
    #[error("no link with handle {handle} on channel {channel}")]
    UnknownLink {
        /// The session's channel.
        channel: u16,
        /// Our handle of the link.
        handle: u32,
    },
    /// The operation needs the other link role (e.g. send on a receiving link).
    #[error("the operation needs a {0} link")]
    WrongRole(&'static str),
    /// The link has no credit: check `credit(link)` before sending.
    #[error("no link credit")]
    NoCredit,
    /// Every channel up to channel-max is in use.
    #[error("no free channel (channel-max {0})")]
    NoChannel(u16),
    /// Every handle up to handle-max is in use.
    #[error("no free handle (handle-max {0})")]
    NoHandle(u32),
    /// The attach was already answered, or was ours.
    #[error("the attach was already answered")]
    AlreadyAttached,
    /// The connection is not in a state that allows this (e.g. open twice).
    #[error("not allowed now: {0}")]
    IllegalState(&'static str),
}
