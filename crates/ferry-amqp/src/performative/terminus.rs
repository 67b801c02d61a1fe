//! Link termini: [`Source`] and [`Target`] (the nodes a link connects, with their
//! capabilities, filters and lifetime rules) and the transaction [`Coordinator`].
//! An attach's target is either a node target or a coordinator: [`LinkTarget`].

use bytes::BytesMut;

use crate::codec::{format_code as fc, CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;
use crate::performative::DeliveryState;
use crate::value::{Str, Symbol, Value};

/// What of a terminus survives (the `durable` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TerminusDurability {
    /// Nothing is durable (the default).
    #[default]
    None,
    /// The terminus's configuration is durable.
    Configuration,
    /// Configuration and unsettled state are durable (durable subscriptions).
    UnsettledState,
}

impl Encode for TerminusDurability {
    fn encode(&self, out: &mut BytesMut) {
        (*self as u32).encode(out);
    }
}

impl Decode for TerminusDurability {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match u32::decode_with(dec, code)? {
            0 => Ok(TerminusDurability::None),
            1 => Ok(TerminusDurability::Configuration),
            2 => Ok(TerminusDurability::UnsettledState),
            other => Err(DecodeError::InvalidValue {
                field: "durable",
                value: other.to_string(),
            }),
        }
    }
}

/// When the expiry timer of a terminus starts (the `expiry-policy` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ExpiryPolicy {
    /// When the link detaches.
    LinkDetach,
    /// When the session ends (the default).
    #[default]
    SessionEnd,
    /// When the connection closes.
    ConnectionClose,
    /// Never.
    Never,
}

impl ExpiryPolicy {
    /// The wire symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            ExpiryPolicy::LinkDetach => "link-detach",
            ExpiryPolicy::SessionEnd => "session-end",
            ExpiryPolicy::ConnectionClose => "connection-close",
            ExpiryPolicy::Never => "never",
        }
    }
}

impl Encode for ExpiryPolicy {
    fn encode(&self, out: &mut BytesMut) {
        crate::codec::put_symbol(out, self.symbol());
    }
}

impl Decode for ExpiryPolicy {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let s = Symbol::decode_with(dec, code)?;
        Ok(match s.as_str() {
            "link-detach" => ExpiryPolicy::LinkDetach,
            "session-end" => ExpiryPolicy::SessionEnd,
            "connection-close" => ExpiryPolicy::ConnectionClose,
            "never" => ExpiryPolicy::Never,
            other => {
                return Err(DecodeError::InvalidValue {
                    field: "expiry-policy",
                    value: other.to_string(),
                })
            }
        })
    }
}

/// The source of a link: where messages come from (for a JMS consumer, the queue or
/// topic, with its selector in `filter`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Source {
    /// The node's address.
    pub address: Option<Str>,
    /// What survives.
    pub durable: TerminusDurability,
    /// When the expiry timer starts.
    pub expiry_policy: ExpiryPolicy,
    /// Seconds the terminus survives after expiry starts.
    pub timeout: u32,
    /// Ask the peer to create the node (temporary destinations).
    pub dynamic: bool,
    /// Properties of a dynamic node (e.g. lifetime-policy).
    pub dynamic_node_properties: Vec<(Symbol, Value)>,
    /// `move` (consume) or `copy` (browse).
    pub distribution_mode: Option<Symbol>,
    /// Filters by name: values are described (selector, no-local...).
    pub filter: Vec<(Symbol, Value)>,
    /// Outcome for deliveries unsettled when the link ends.
    pub default_outcome: Option<DeliveryState>,
    /// Outcomes the source supports.
    pub outcomes: Vec<Symbol>,
    /// Capabilities (`queue`, `topic`, `shared`...).
    pub capabilities: Vec<Symbol>,
}

impl Encode for Source {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::SOURCE);
        w.field(self.address.as_ref())
            .or_default(&self.durable, TerminusDurability::None)
            .or_default(&self.expiry_policy, ExpiryPolicy::SessionEnd)
            .or_default(&self.timeout, 0)
            .or_default(&self.dynamic, false)
            .non_empty(&self.dynamic_node_properties)
            .field(self.distribution_mode.as_ref())
            .non_empty(&self.filter)
            .field(self.default_outcome.as_ref())
            .non_empty(&self.outcomes)
            .non_empty(&self.capabilities);
        w.finish();
    }
}

impl Decode for Source {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::SOURCE, "source")?;
        let s = Source {
            address: f.optional("address")?,
            durable: f.or_default("durable", TerminusDurability::None)?,
            expiry_policy: f.or_default("expiry-policy", ExpiryPolicy::SessionEnd)?,
            timeout: f.or_default("timeout", 0)?,
            dynamic: f.or_default("dynamic", false)?,
            dynamic_node_properties: f.or_empty("dynamic-node-properties")?,
            distribution_mode: f.optional("distribution-mode")?,
            filter: f.or_empty("filter")?,
            default_outcome: f.optional("default-outcome")?,
            outcomes: f.or_empty("outcomes")?,
            capabilities: f.or_empty("capabilities")?,
        };
        f.finish()?;
        Ok(s)
    }
}

/// The target of a link: where messages go (for a JMS producer, its destination).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Target {
    /// The node's address (none for an anonymous-relay sender).
    pub address: Option<Str>,
    /// What survives.
    pub durable: TerminusDurability,
    /// When the expiry timer starts.
    pub expiry_policy: ExpiryPolicy,
    /// Seconds the terminus survives after expiry starts.
    pub timeout: u32,
    /// Ask the peer to create the node (temporary destinations).
    pub dynamic: bool,
    /// Properties of a dynamic node (e.g. lifetime-policy).
    pub dynamic_node_properties: Vec<(Symbol, Value)>,
    /// Capabilities (`queue`, `temporary-queue`...).
    pub capabilities: Vec<Symbol>,
}

impl Encode for Target {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::TARGET);
        w.field(self.address.as_ref())
            .or_default(&self.durable, TerminusDurability::None)
            .or_default(&self.expiry_policy, ExpiryPolicy::SessionEnd)
            .or_default(&self.timeout, 0)
            .or_default(&self.dynamic, false)
            .non_empty(&self.dynamic_node_properties)
            .non_empty(&self.capabilities);
        w.finish();
    }
}

impl Target {
    fn decode_fields(mut f: Fields<'_>) -> Result<Self, DecodeError> {
        let t = Target {
            address: f.optional("address")?,
            durable: f.or_default("durable", TerminusDurability::None)?,
            expiry_policy: f.or_default("expiry-policy", ExpiryPolicy::SessionEnd)?,
            timeout: f.or_default("timeout", 0)?,
            dynamic: f.or_default("dynamic", false)?,
            dynamic_node_properties: f.or_empty("dynamic-node-properties")?,
            capabilities: f.or_empty("capabilities")?,
        };
        f.finish()?;
        Ok(t)
    }
}

impl Decode for Target {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        Target::decode_fields(Fields::described(dec, code, descriptor::TARGET, "target")?)
    }
}

/// The target of a transaction controller link.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Coordinator {
    /// Transaction capabilities (e.g. `amqp:local-transactions`).
    pub capabilities: Vec<Symbol>,
}

impl Encode for Coordinator {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::COORDINATOR);
        w.non_empty(&self.capabilities);
        w.finish();
    }
}

impl Coordinator {
    fn decode_fields(mut f: Fields<'_>) -> Result<Self, DecodeError> {
        let c = Coordinator {
            capabilities: f.or_empty("capabilities")?,
        };
        f.finish()?;
        Ok(c)
    }
}

impl Decode for Coordinator {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        Coordinator::decode_fields(Fields::described(
            dec,
            code,
            descriptor::COORDINATOR,
            "coordinator",
        )?)
    }
}

/// An attach's target: a node, or the transaction coordinator.
#[derive(Debug, Clone, PartialEq)]
pub enum LinkTarget {
    /// A node (queue, topic, ...).
    Node(Target),
    /// The transaction coordinator.
    Coordinator(Coordinator),
}

impl Encode for LinkTarget {
    fn encode(&self, out: &mut BytesMut) {
        match self {
            LinkTarget::Node(t) => t.encode(out),
            LinkTarget::Coordinator(c) => c.encode(out),
        }
    }
}

impl Decode for LinkTarget {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        if code != fc::DESCRIBED {
            return Err(DecodeError::UnexpectedType {
                field: "target",
                expected: "described list",
                found: code,
            });
        }
        let d = descriptor::read_code(dec)?;
        let list_code = dec.read_code()?;
        match d {
            descriptor::TARGET => {
                Target::decode_fields(Fields::list(dec, list_code, "target")?).map(LinkTarget::Node)
            }
            descriptor::COORDINATOR => {
                Coordinator::decode_fields(Fields::list(dec, list_code, "coordinator")?)
                    .map(LinkTarget::Coordinator)
            }
            other => Err(DecodeError::UnexpectedDescriptor {
                expected: "target",
                found: format!("0x{other:x}"),
            }),
        }
    }
}
