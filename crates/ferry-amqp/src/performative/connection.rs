//! Connection and session performatives: open, begin, end, close.

use bytes::BytesMut;

use crate::codec::{CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;
use crate::performative::ErrorCondition;
use crate::value::{Str, Symbol, Value};

/// Spec default of open's max-frame-size (no limit).
pub const DEFAULT_MAX_FRAME_SIZE: u32 = u32::MAX;
/// Spec default of open's channel-max.
pub const DEFAULT_CHANNEL_MAX: u16 = u16::MAX;
/// Spec default of begin's handle-max.
pub const DEFAULT_HANDLE_MAX: u32 = u32::MAX;

/// `open`: the first frame each side sends on a connection, negotiating its limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Open {
    /// The sender's container id (JMS ClientID when set).
    pub container_id: Str,
    /// The virtual host the client wants.
    pub hostname: Option<Str>,
    /// Largest frame the sender accepts.
    pub max_frame_size: u32,
    /// Highest channel number the sender accepts.
    pub channel_max: u16,
    /// Idle timeout in ms (the peer must send something more often than half of it).
    pub idle_time_out: Option<u32>,
    /// Locales the sender may write in.
    pub outgoing_locales: Vec<Symbol>,
    /// Locales the sender reads.
    pub incoming_locales: Vec<Symbol>,
    /// Extensions the sender supports (e.g. `ANONYMOUS-RELAY`).
    pub offered_capabilities: Vec<Symbol>,
    /// Extensions the sender would use.
    pub desired_capabilities: Vec<Symbol>,
    /// Connection properties (product, version...).
    pub properties: Vec<(Symbol, Value)>,
}

impl Open {
    /// An open with the spec defaults for everything but the container id.
    pub fn new(container_id: impl Into<Str>) -> Self {
        Open {
            container_id: container_id.into(),
            hostname: None,
            max_frame_size: DEFAULT_MAX_FRAME_SIZE,
            channel_max: DEFAULT_CHANNEL_MAX,
            idle_time_out: None,
            outgoing_locales: Vec::new(),
            incoming_locales: Vec::new(),
            offered_capabilities: Vec::new(),
            desired_capabilities: Vec::new(),
            properties: Vec::new(),
        }
    }
}

impl Encode for Open {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::OPEN);
        w.value(&self.container_id)
            .field(self.hostname.as_ref())
            .or_default(&self.max_frame_size, DEFAULT_MAX_FRAME_SIZE)
            .or_default(&self.channel_max, DEFAULT_CHANNEL_MAX)
            .field(self.idle_time_out.as_ref())
            .non_empty(&self.outgoing_locales)
            .non_empty(&self.incoming_locales)
            .non_empty(&self.offered_capabilities)
            .non_empty(&self.desired_capabilities)
            .non_empty(&self.properties);
        w.finish();
    }
}

impl Decode for Open {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::OPEN, "open")?;
        let o = Open {
            container_id: f.required("container-id")?,
            hostname: f.optional("hostname")?,
            max_frame_size: f.or_default("max-frame-size", DEFAULT_MAX_FRAME_SIZE)?,
            channel_max: f.or_default("channel-max", DEFAULT_CHANNEL_MAX)?,
            idle_time_out: f.optional("idle-time-out")?,
            outgoing_locales: f.or_empty("outgoing-locales")?,
            incoming_locales: f.or_empty("incoming-locales")?,
            offered_capabilities: f.or_empty("offered-capabilities")?,
            desired_capabilities: f.or_empty("desired-capabilities")?,
            properties: f.or_empty("properties")?,
        };
        f.finish()?;
        Ok(o)
    }
}

/// `begin`: starts a session on a channel, with its transfer windows.
#[derive(Debug, Clone, PartialEq)]
pub struct Begin {
    /// The peer's channel when answering its begin.
    pub remote_channel: Option<u16>,
    /// Transfer id of the sender's next outgoing transfer.
    pub next_outgoing_id: u32,
    /// How many transfers the sender will accept.
    pub incoming_window: u32,
    /// How many transfers the sender may send.
    pub outgoing_window: u32,
    /// Highest link handle the sender accepts.
    pub handle_max: u32,
    /// Extensions the sender supports.
    pub offered_capabilities: Vec<Symbol>,
    /// Extensions the sender would use.
    pub desired_capabilities: Vec<Symbol>,
    /// Session properties.
    pub properties: Vec<(Symbol, Value)>,
}

impl Encode for Begin {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::BEGIN);
        w.field(self.remote_channel.as_ref())
            .value(&self.next_outgoing_id)
            .value(&self.incoming_window)
            .value(&self.outgoing_window)
            .or_default(&self.handle_max, DEFAULT_HANDLE_MAX)
            .non_empty(&self.offered_capabilities)
            .non_empty(&self.desired_capabilities)
            .non_empty(&self.properties);
        w.finish();
    }
}

impl Decode for Begin {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::BEGIN, "begin")?;
        let b = Begin {
            remote_channel: f.optional("remote-channel")?,
            next_outgoing_id: f.required("next-outgoing-id")?,
            incoming_window: f.required("incoming-window")?,
            outgoing_window: f.required("outgoing-window")?,
            handle_max: f.or_default("handle-max", DEFAULT_HANDLE_MAX)?,
            offered_capabilities: f.or_empty("offered-capabilities")?,
            desired_capabilities: f.or_empty("desired-capabilities")?,
            properties: f.or_empty("properties")?,
        };
        f.finish()?;
        Ok(b)
    }
}

macro_rules! error_only {
    ($(#[$doc:meta])* $name:ident, $code:expr, $type_name:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            /// Why, when it ends because of an error.
            pub error: Option<ErrorCondition>,
        }

        impl Encode for $name {
            fn encode(&self, out: &mut BytesMut) {
                let mut w = CompositeWriter::begin(out, $code);
                w.field(self.error.as_ref());
                w.finish();
            }
        }

        impl Decode for $name {
            fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
                let mut f = Fields::described(dec, code, $code, $type_name)?;
                let v = $name {
                    error: f.optional("error")?,
                };
                f.finish()?;
                Ok(v)
            }
        }
    };
}

error_only!(
    /// `end`: ends a session.
    End,
    descriptor::END,
    "end"
);
error_only!(
    /// `close`: closes the connection.
    Close,
    descriptor::CLOSE,
    "close"
);
