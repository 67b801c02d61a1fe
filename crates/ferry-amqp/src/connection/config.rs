//! What a [`Connection`](super::Connection) announces and enforces: frame and channel
//! limits, idle timeout, session window, handle-max, message-size limit, and how each
//! role authenticates.
//!
//! The defaults suit a broker: 1 MiB frames, a 60 s idle timeout, a session window of
//! 65536 transfer frames (replenished as it drains, so it is never the bottleneck), 1024
//! links and 16 MiB of incomplete multi-frame messages per connection.

use crate::value::Symbol;

/// Limits a connection announces in its open, begin and attach frames.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Our max-frame-size (at least 512): the largest frame we accept.
    pub max_frame_size: u32,
    /// Our channel-max: the highest session channel we accept.
    pub channel_max: u16,
    /// Our idle-time-out in ms (`None`: the peer need not send heartbeats).
    pub idle_time_out: Option<u32>,
    /// Our handle-max for each session.
    pub handle_max: u32,
    /// Each session's incoming window (transfer frames); replenished at half.
    pub incoming_window: u32,
    /// Largest message we accept on a link (`None`: no limit); a link may override it.
    pub max_message_size: Option<u64>,
    /// Links the peer may have attached at once, across all sessions: an attach beyond
    /// them is refused (`amqp:resource-limit-exceeded`); twice as many held (refused ones
    /// the peer has not detached yet) ends the session.
    pub max_links: usize,
    /// Bytes of multi-frame deliveries being reassembled, on all links together. One
    /// delivery alone may still reach its link's max-message-size; a frame that would
    /// pass this while other links hold incomplete deliveries detaches its link with
    /// `amqp:resource-limit-exceeded`.
    pub max_incomplete_bytes: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_frame_size: 1 << 20,
            channel_max: 255,
            idle_time_out: Some(60_000),
            handle_max: 1023,
            incoming_window: 1 << 16,
            max_message_size: None,
            max_links: 1024,
            max_incomplete_bytes: 16 << 20,
        }
    }
}

/// How a server-role connection authenticates its peer.
#[derive(Debug, Clone, PartialEq)]
pub struct SaslServer {
    /// Mechanisms offered in `sasl-mechanisms`, e.g. `PLAIN`, `ANONYMOUS`.
    pub mechanisms: Vec<Symbol>,
    /// Accept a client that skips SASL and sends the AMQP header straight away.
    pub allow_no_sasl: bool,
}

impl SaslServer {
    /// Offers PLAIN and ANONYMOUS and requires SASL.
    pub fn plain_and_anonymous() -> Self {
        SaslServer {
            mechanisms: vec![
                Symbol::from_static("PLAIN"),
                Symbol::from_static("ANONYMOUS"),
            ],
            allow_no_sasl: false,
        }
    }

    /// No SASL layer: only the AMQP header is accepted.
    pub fn none() -> Self {
        SaslServer {
            mechanisms: Vec::new(),
            allow_no_sasl: true,
        }
    }
}

/// How a client-role connection authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientSasl {
    /// Skip SASL: send the AMQP header first.
    None,
    /// SASL ANONYMOUS.
    Anonymous,
    /// SASL PLAIN with a user and password.
    Plain {
        /// The user name (authcid).
        user: String,
        /// The password.
        password: String,
    },
}
