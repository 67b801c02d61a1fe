//! Link performatives: attach, flow, transfer, disposition, detach.

use bytes::{Bytes, BytesMut};

use crate::codec::{CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;
use crate::performative::{
    DeliveryState, ErrorCondition, LinkTarget, ReceiverSettleMode, Role, SenderSettleMode, Source,
};
use crate::value::{Str, Symbol, Value};

/// `attach`: opens a link (a JMS producer or consumer) on a session.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attach {
    /// The link's name (its identity, e.g. a durable subscription name).
    pub name: Str,
    /// The handle later frames use for this link.
    pub handle: u32,
    /// The sender's role on the link.
    pub role: Role,
    /// How the sender settles.
    pub snd_settle_mode: SenderSettleMode,
    /// How the receiver settles.
    pub rcv_settle_mode: ReceiverSettleMode,
    /// Where messages come from (null on a refused receiver attach).
    pub source: Option<Source>,
    /// Where messages go (null on a refused sender attach).
    pub target: Option<LinkTarget>,
    /// Unsettled delivery state, by delivery tag (link recovery).
    pub unsettled: Vec<(Value, Value)>,
    /// True if `unsettled` is incomplete.
    pub incomplete_unsettled: bool,
    /// The sender's delivery-count (required from senders).
    pub initial_delivery_count: Option<u32>,
    /// Largest message the sender accepts (none: no limit).
    pub max_message_size: Option<u64>,
    /// Extensions the sender supports.
    pub offered_capabilities: Vec<Symbol>,
    /// Extensions the sender would use.
    pub desired_capabilities: Vec<Symbol>,
    /// Link properties.
    pub properties: Vec<(Symbol, Value)>,
}

impl Encode for Attach {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::ATTACH);
        w.value(&self.name)
            .value(&self.handle)
            .value(&self.role)
            .or_default(&self.snd_settle_mode, SenderSettleMode::Mixed)
            .or_default(&self.rcv_settle_mode, ReceiverSettleMode::First)
            .field(self.source.as_ref())
            .field(self.target.as_ref())
            .non_empty(&self.unsettled)
            .or_default(&self.incomplete_unsettled, false)
            .field(self.initial_delivery_count.as_ref())
            .field(self.max_message_size.as_ref())
            .non_empty(&self.offered_capabilities)
            .non_empty(&self.desired_capabilities)
            .non_empty(&self.properties);
        w.finish();
    }
}

impl Decode for Attach {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::ATTACH, "attach")?;
        let a = Attach {
            name: f.required("name")?,
            handle: f.required("handle")?,
            role: f.required("role")?,
            snd_settle_mode: f.or_default("snd-settle-mode", SenderSettleMode::Mixed)?,
            rcv_settle_mode: f.or_default("rcv-settle-mode", ReceiverSettleMode::First)?,
            source: f.optional("source")?,
            target: f.optional("target")?,
            unsettled: f.or_empty("unsettled")?,
            incomplete_unsettled: f.or_default("incomplete-unsettled", false)?,
            initial_delivery_count: f.optional("initial-delivery-count")?,
            max_message_size: f.optional("max-message-size")?,
            offered_capabilities: f.or_empty("offered-capabilities")?,
            desired_capabilities: f.or_empty("desired-capabilities")?,
            properties: f.or_empty("properties")?,
        };
        f.finish()?;
        Ok(a)
    }
}

/// `flow`: session window and link credit updates (how a consumer asks for messages).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Flow {
    /// Next transfer id expected (absent before the peer's begin is known).
    pub next_incoming_id: Option<u32>,
    /// Session incoming window.
    pub incoming_window: u32,
    /// Next transfer id the sender will use.
    pub next_outgoing_id: u32,
    /// Session outgoing window.
    pub outgoing_window: u32,
    /// The link, for link flow state (absent: session only).
    pub handle: Option<u32>,
    /// The link's delivery-count.
    pub delivery_count: Option<u32>,
    /// Credit granted.
    pub link_credit: Option<u32>,
    /// Messages available at the sender.
    pub available: Option<u32>,
    /// Use up all credit, then report.
    pub drain: bool,
    /// Ask the peer to answer with its flow state.
    pub echo: bool,
    /// Link state properties.
    pub properties: Vec<(Symbol, Value)>,
}

impl Encode for Flow {
    fn encode(&self, out: &mut BytesMut) {
        if !super::quick::encode_flow(self, out) {
            self.encode_general(out);
        }
    }
}

impl Flow {
    /// The general encoder (every field, any size).
    pub(crate) fn encode_general(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::FLOW);
        w.field(self.next_incoming_id.as_ref())
            .value(&self.incoming_window)
            .value(&self.next_outgoing_id)
            .value(&self.outgoing_window)
            .field(self.handle.as_ref())
            .field(self.delivery_count.as_ref())
            .field(self.link_credit.as_ref())
            .field(self.available.as_ref())
            .or_default(&self.drain, false)
            .or_default(&self.echo, false)
            .non_empty(&self.properties);
        w.finish();
    }
}

impl Decode for Flow {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::FLOW, "flow")?;
        let v = Flow {
            next_incoming_id: f.optional("next-incoming-id")?,
            incoming_window: f.required("incoming-window")?,
            next_outgoing_id: f.required("next-outgoing-id")?,
            outgoing_window: f.required("outgoing-window")?,
            handle: f.optional("handle")?,
            delivery_count: f.optional("delivery-count")?,
            link_credit: f.optional("link-credit")?,
            available: f.optional("available")?,
            drain: f.or_default("drain", false)?,
            echo: f.or_default("echo", false)?,
            properties: f.or_empty("properties")?,
        };
        f.finish()?;
        Ok(v)
    }
}

/// `transfer`: one frame of a delivery (the message bytes follow as frame payload).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Transfer {
    /// The link.
    pub handle: u32,
    /// The delivery id (required on a delivery's first transfer).
    pub delivery_id: Option<u32>,
    /// The delivery tag (required on a delivery's first transfer).
    pub delivery_tag: Option<Bytes>,
    /// Message format (0 = AMQP message).
    pub message_format: Option<u32>,
    /// The delivery is settled by the sender (absent: false).
    pub settled: Option<bool>,
    /// More transfers of this delivery follow.
    pub more: bool,
    /// Receiver settle mode for this delivery.
    pub rcv_settle_mode: Option<ReceiverSettleMode>,
    /// Delivery state (e.g. transactional-state for a transacted send).
    pub state: Option<DeliveryState>,
    /// A resumed delivery.
    pub resume: bool,
    /// The delivery is aborted.
    pub aborted: bool,
    /// The peer may delay its disposition.
    pub batchable: bool,
}

impl Encode for Transfer {
    fn encode(&self, out: &mut BytesMut) {
        if !super::quick::encode_transfer(self, out) {
            self.encode_general(out);
        }
    }
}

impl Transfer {
    /// The general encoder (every field, any size).
    pub(crate) fn encode_general(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::TRANSFER);
        w.value(&self.handle)
            .field(self.delivery_id.as_ref())
            .field(self.delivery_tag.as_ref())
            .field(self.message_format.as_ref())
            .field(self.settled.as_ref())
            .or_default(&self.more, false)
            .field(self.rcv_settle_mode.as_ref())
            .field(self.state.as_ref())
            .or_default(&self.resume, false)
            .or_default(&self.aborted, false)
            .or_default(&self.batchable, false);
        w.finish();
    }
}

impl Decode for Transfer {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::TRANSFER, "transfer")?;
        let t = Transfer {
            handle: f.required("handle")?,
            delivery_id: f.optional("delivery-id")?,
            delivery_tag: f.optional("delivery-tag")?,
            message_format: f.optional("message-format")?,
            settled: f.optional("settled")?,
            more: f.or_default("more", false)?,
            rcv_settle_mode: f.optional("rcv-settle-mode")?,
            state: f.optional("state")?,
            resume: f.or_default("resume", false)?,
            aborted: f.or_default("aborted", false)?,
            batchable: f.or_default("batchable", false)?,
        };
        f.finish()?;
        Ok(t)
    }
}

/// `disposition`: settles or updates the state of a range of deliveries.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Disposition {
    /// Role of the sender of this frame (receiver for consumer acks).
    pub role: Role,
    /// First delivery id of the range.
    pub first: u32,
    /// Last delivery id (absent: same as first).
    pub last: Option<u32>,
    /// The deliveries are settled.
    pub settled: bool,
    /// Their new state or outcome.
    pub state: Option<DeliveryState>,
    /// The peer may delay its answer.
    pub batchable: bool,
}

impl Encode for Disposition {
    fn encode(&self, out: &mut BytesMut) {
        if !super::quick::encode_disposition(self, out) {
            self.encode_general(out);
        }
    }
}

impl Disposition {
    /// The general encoder (every field, any size).
    pub(crate) fn encode_general(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::DISPOSITION);
        w.value(&self.role)
            .value(&self.first)
            .field(self.last.as_ref())
            .or_default(&self.settled, false)
            .field(self.state.as_ref())
            .or_default(&self.batchable, false);
        w.finish();
    }
}

impl Decode for Disposition {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::DISPOSITION, "disposition")?;
        let d = Disposition {
            role: f.required("role")?,
            first: f.required("first")?,
            last: f.optional("last")?,
            settled: f.or_default("settled", false)?,
            state: f.optional("state")?,
            batchable: f.or_default("batchable", false)?,
        };
        f.finish()?;
        Ok(d)
    }
}

/// `detach`: detaches a link; `closed` also ends it (vs. suspending a durable one).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Detach {
    /// The link.
    pub handle: u32,
    /// Close the link, not just detach it.
    pub closed: bool,
    /// Why, when it ends because of an error.
    pub error: Option<ErrorCondition>,
}

impl Encode for Detach {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::DETACH);
        w.value(&self.handle)
            .or_default(&self.closed, false)
            .field(self.error.as_ref());
        w.finish();
    }
}

impl Decode for Detach {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::DETACH, "detach")?;
        let d = Detach {
            handle: f.required("handle")?,
            closed: f.or_default("closed", false)?,
            error: f.optional("error")?,
        };
        f.finish()?;
        Ok(d)
    }
}
