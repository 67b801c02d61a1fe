//! Tracing: OpenTelemetry spans for the queue manager's message operations, exported
//! over OTLP when qm.ini's Tracing stanza (or the OTEL environment) asks for it.
//!
//! The idea: a message carries its trace in its `traceparent` property (W3C Trace
//! Context, `ferry_mqi::trace_context`), whichever protocol put it, so the queue
//! manager's spans join the producer's trace, and the consumer's (native, AMQP, or on
//! the far side of a channel) join it too. The runtime calls [`Telemetry`] around the
//! engine calls it already makes; the engine knows nothing of tracing.
//!
//! Spans follow OpenTelemetry's messaging semantic conventions with `messaging.system`
//! `ferry`:
//! - `send <queue>` (producer): MQPUT, MQPUT1, an AMQP transfer in; a child of the
//!   message's `traceparent` when it has a valid one. A sampled put of a message
//!   without one gets one added, naming this span, so its consumers join the trace.
//! - `receive <queue>` (consumer): MQGET, an AMQP delivery; a child of the message's
//!   context.
//! - `send <xmitq>` (producer) when a sender channel transmits a message, and
//!   `process <queue>` (consumer) when a receiver channel puts it, both children of
//!   the message's context.
//! - `MQCMIT`/`MQBACK` (client, `messaging.operation.type` `settle`): a unit of work
//!   that holds a traced put or get ends, a child of the last traced operation in it.
//!
//! When tracing is off (no endpoint, or `Sampler=off`) [`Telemetry::is_on`] is false and
//! every call site takes one branch on it: no allocation, no lock, no property scan.
//! With `Sampler=parent`, a message without properties costs one more branch.

mod export;
mod settings;

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use ferry_engine::ConnId;
use ferry_mqi::descriptor::persistence;
use ferry_mqi::trace_context::{TraceParent, TRACEPARENT, TRACESTATE};
use ferry_mqi::{MessageDescriptor, MessageProperties, PropertyRef, PropertyValue, ReasonCode};
use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId,
    TraceState, Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};

use crate::qm_ini::TracingStanza;
use export::ExportFailures;
use settings::{SamplerChoice, TracingSettings};

/// `messaging.system` of every span.
pub(crate) const MESSAGING_SYSTEM: &str = "ferry";

/// Units of work remembered at most (connections that end without MQCMIT or MQBACK
/// leave an entry behind; past this the memory is cleared).
const MAX_OPEN_UNITS: usize = 10_000;

/// Which protocol an operation came over (`network.protocol.name`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    /// Ferry's native client protocol.
    Native,
    /// AMQP 1.0.
    Amqp,
    /// A message channel between queue managers.
    Channel,
}

impl Protocol {
    fn name(self) -> &'static str {
        match self {
            Protocol::Native => "ferry",
            Protocol::Amqp => "amqp",
            Protocol::Channel => "ferry-channel",
        }
    }
}

/// What a finished operation says about its message, for the span's attributes.
pub(crate) struct MessageFacts<'a> {
    /// The queue (`messaging.destination.name`).
    pub destination: &'a str,
    /// The message's descriptor (MsgId, CorrelId, persistence), as the operation left it.
    pub md: &'a MessageDescriptor,
    /// The body's length.
    pub body_len: usize,
    /// The engine connection that made the call (`messaging.client.id`).
    pub conn: Option<ConnId>,
    /// The message channel, for channel spans.
    pub channel: Option<&'a str>,
}

/// Tracing for one queue manager: off, or an SDK pipeline and its tracer.
pub(crate) struct Telemetry {
    active: Option<Box<Active>>,
}

struct Active {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
    sampler: SamplerChoice,
    failures: Arc<ExportFailures>,
    destination: String,
    /// Per connection, the last traced operation in its open unit of work.
    units: RefCell<HashMap<ConnId, SpanContext>>,
}

/// A started message span (`send`, `receive`, `process`); [`MessageSpan::end`] finishes
/// it.
pub(crate) struct MessageSpan {
    span: opentelemetry_sdk::trace::Span,
    /// `messaging.operation.type`, the first word of the span's name.
    kind: &'static str,
}

impl Telemetry {
    /// Tracing off.
    pub fn off() -> Self {
        Telemetry { active: None }
    }

    /// Tracing as `stanza` and the environment ask for queue manager `qmgr`; FRY5590I
    /// says where spans go, FRY5592E why tracing could not be set up (messaging carries
    /// on without it).
    pub fn start(stanza: &TracingStanza, qmgr: &str, log: &mut crate::error_log::ErrorLog) -> Self {
        let Some(settings) = TracingSettings::resolve(stanza, qmgr, |n| std::env::var(n).ok())
        else {
            return Telemetry::off();
        };
        let failures = Arc::new(ExportFailures::default());
        let destination = settings.destination();
        match export::pipeline(&settings, failures.clone()) {
            Ok(provider) => {
                log.write(
                    &crate::messages::TRACING_STARTED,
                    &[&qmgr, &destination, &settings.sampler],
                );
                let tracer = provider.tracer("ferry");
                Telemetry {
                    active: Some(Box::new(Active {
                        provider,
                        tracer,
                        sampler: settings.sampler,
                        failures,
                        destination,
                        units: RefCell::new(HashMap::new()),
                    })),
                }
            }
            Err(e) => {
                log.write(&crate::messages::TRACING_NOT_STARTED, &[&qmgr, &e]);
                Telemetry::off()
            }
        }
    }

    /// True when spans may be made: the one branch call sites take when it is off.
    #[inline(always)]
    pub fn is_on(&self) -> bool {
        self.active.is_some()
    }

    /// Failed exports since start and the last one's error, and where spans go; `None`
    /// when tracing is off.
    pub fn export_failures(&self) -> Option<(u64, String, &str)> {
        let a = self.active.as_deref()?;
        let (failed, error) = a.failures.snapshot();
        Some((failed, error, &a.destination))
    }

    /// Starts the `send` span of a put of a message with `properties` (an MQPUT, MQPUT1
    /// or AMQP transfer in: `operation`). When the span is sampled and the message has no
    /// `traceparent`, `properties` gets one naming this span. `None`: not traced.
    pub fn start_send(
        &self,
        operation: &'static str,
        protocol: Protocol,
        properties: &mut Bytes,
    ) -> Option<MessageSpan> {
        let a = self.active.as_deref()?;
        let (span, parent) =
            a.start("send", operation, protocol, SpanKind::Producer, properties)?;
        if parent.is_none() && span.span.span_context().is_sampled() {
            if let Some(with) = with_traceparent(properties, span.span.span_context()) {
                *properties = with;
            }
        }
        Some(span)
    }

    /// Starts the `process` span of a receiver channel putting a message that crossed.
    pub fn start_process(&self, properties: &Bytes) -> Option<MessageSpan> {
        let a = self.active.as_deref()?;
        let (span, _) = a.start(
            "process",
            "receive",
            Protocol::Channel,
            SpanKind::Consumer,
            properties,
        )?;
        Some(span)
    }

    /// Starts the `send` span of a sender channel transmitting a message.
    pub fn start_channel_send(&self, properties: &Bytes) -> Option<MessageSpan> {
        let a = self.active.as_deref()?;
        let (span, _) = a.start(
            "send",
            "send",
            Protocol::Channel,
            SpanKind::Producer,
            properties,
        )?;
        Some(span)
    }

    /// Starts the `receive` span of a message got (MQGET, an AMQP delivery:
    /// `operation`) with `properties`; the caller ends it at once with what it got.
    pub fn start_receive(
        &self,
        operation: &'static str,
        protocol: Protocol,
        properties: &Bytes,
    ) -> Option<MessageSpan> {
        let a = self.active.as_deref()?;
        let (span, _) = a.start(
            "receive",
            operation,
            protocol,
            SpanKind::Consumer,
            properties,
        )?;
        Some(span)
    }

    /// Records the `settle` span of MQCMIT or MQBACK (`operation`) on `conn`, when its
    /// unit of work held a traced operation.
    pub fn settled(&self, operation: &'static str, conn: ConnId, outcome: Result<(), ReasonCode>) {
        let Some(a) = self.active.as_deref() else {
            return;
        };
        let Some(last) = a.units.borrow_mut().remove(&conn) else {
            return;
        };
        let parent = Context::new().with_remote_span_context(last);
        let mut span = a
            .tracer
            .span_builder(operation)
            .with_kind(SpanKind::Client)
            .with_attributes([
                KeyValue::new("messaging.system", MESSAGING_SYSTEM),
                KeyValue::new("messaging.operation.type", "settle"),
                KeyValue::new("messaging.operation.name", operation),
                KeyValue::new("messaging.client.id", conn.to_string()),
            ])
            .start_with_context(&a.tracer, &parent);
        if let Err(reason) = outcome {
            fail(&mut span, reason);
        }
        span.end();
    }

    /// Flushes and stops the exporter (at the end of the queue manager), waiting at most
    /// a few seconds for a collector that does not answer.
    pub fn shutdown(&self) {
        if let Some(a) = self.active.as_deref() {
            let provider = a.provider.clone();
            // Off the runtime thread: the exporter's blocking client must not end inside
            // the tokio runtime.
            let _ = std::thread::spawn(move || {
                provider.shutdown_with_timeout(std::time::Duration::from_secs(3))
            })
            .join();
        }
    }
}

impl Active {
    /// Starts a span of `kind` (`messaging.operation.type`) for a message with
    /// `properties`, a child of its valid `traceparent` (returned too) when it has one;
    /// `None` when the sampler would not record it anyway.
    fn start(
        &self,
        kind: &'static str,
        operation: &'static str,
        protocol: Protocol,
        span_kind: SpanKind,
        properties: &Bytes,
    ) -> Option<(MessageSpan, Option<TraceParent>)> {
        let parent = trace_parent(properties);
        if self.sampler == SamplerChoice::Parent && !parent.is_some_and(|p| p.sampled()) {
            // Nothing to join: no span, no id generated.
            return None;
        }
        let cx = match &parent {
            Some(p) => Context::new().with_remote_span_context(SpanContext::new(
                TraceId::from_bytes(p.trace_id),
                SpanId::from_bytes(p.parent_id),
                TraceFlags::new(p.flags),
                true,
                trace_state(properties),
            )),
            None => Context::new(),
        };
        let span = self
            .tracer
            .span_builder(kind)
            .with_kind(span_kind)
            .with_attributes([
                KeyValue::new("messaging.system", MESSAGING_SYSTEM),
                KeyValue::new("messaging.operation.type", kind),
                KeyValue::new("messaging.operation.name", operation),
                KeyValue::new("network.protocol.name", protocol.name()),
            ])
            .start_with_context(&self.tracer, &cx);
        if !span.is_recording() {
            return None;
        }
        Some((MessageSpan { span, kind }, parent))
    }
}

impl MessageSpan {
    /// Ends the span with what the operation left (`facts`) and its outcome; `in_unit`
    /// when it was under syncpoint (a later MQCMIT/MQBACK is traced as its settle).
    pub fn end(
        mut self,
        telemetry: &Telemetry,
        facts: &MessageFacts<'_>,
        outcome: Result<(), ReasonCode>,
        in_unit: bool,
    ) {
        debug_assert!(
            self.span.is_recording(),
            "only recording spans are handed out"
        );
        let s = &mut self.span;
        s.update_name(format!("{} {}", self.kind, facts.destination));
        s.set_attribute(KeyValue::new(
            "messaging.destination.name",
            facts.destination.to_string(),
        ));
        s.set_attribute(KeyValue::new("messaging.message.id", hex(&facts.md.msg_id)));
        if facts.md.correl_id != [0; 24] {
            s.set_attribute(KeyValue::new(
                "messaging.message.conversation_id",
                hex(&facts.md.correl_id),
            ));
        }
        s.set_attribute(KeyValue::new(
            "messaging.message.body.size",
            i64::try_from(facts.body_len).unwrap_or(i64::MAX),
        ));
        s.set_attribute(KeyValue::new(
            "ferry.persistent",
            facts.md.persistence == persistence::PERSISTENT,
        ));
        if let Some(conn) = facts.conn {
            s.set_attribute(KeyValue::new("messaging.client.id", conn.to_string()));
        }
        if let Some(channel) = facts.channel {
            s.set_attribute(KeyValue::new("ferry.channel.name", channel.to_string()));
        }
        match outcome {
            Err(reason) => fail(s, reason),
            Ok(()) => {
                if let (true, Some(conn), Some(a)) = (in_unit, facts.conn, &telemetry.active) {
                    let mut units = a.units.borrow_mut();
                    if units.len() >= MAX_OPEN_UNITS {
                        units.clear();
                    }
                    units.insert(conn, s.span_context().clone());
                }
            }
        }
        s.end();
    }
}

/// Marks `span` failed with MQ's reason (`error.type`, e.g. `MQRC_Q_FULL`).
fn fail(span: &mut opentelemetry_sdk::trace::Span, reason: ReasonCode) {
    let name = reason.name();
    span.set_attribute(KeyValue::new("error.type", name));
    span.set_status(Status::error(format!("{} {}", reason.number(), name)));
}

/// The message's `traceparent`, when it has a valid one (an invalid value is carried,
/// never followed).
fn trace_parent(properties: &[u8]) -> Option<TraceParent> {
    if properties.is_empty() {
        return None;
    }
    match MessageProperties::find(properties, TRACEPARENT)? {
        PropertyRef::String(s) => TraceParent::parse(s).ok(),
        _ => None,
    }
}

/// The message's `tracestate`, carried into its spans' parent context (empty when it has
/// none or one W3C's rules refuse).
fn trace_state(properties: &[u8]) -> TraceState {
    match MessageProperties::find(properties, TRACESTATE) {
        Some(PropertyRef::String(s)) => s.parse().unwrap_or_default(),
        _ => TraceState::default(),
    }
}

/// `properties` with a `traceparent` naming `span` added; `None` when the encoding
/// cannot be read (the message goes as it came) or already has one.
fn with_traceparent(properties: &[u8], span: &SpanContext) -> Option<Bytes> {
    let mut decoded = MessageProperties::decode(properties).ok()?;
    if decoded.get(TRACEPARENT).is_some() {
        return None;
    }
    let tp = TraceParent {
        trace_id: span.trace_id().to_bytes(),
        parent_id: span.span_id().to_bytes(),
        flags: span.trace_flags().to_u8(),
    };
    decoded
        .set(TRACEPARENT, PropertyValue::String(tp.to_header()))
        .ok()?;
    Some(decoded.encode())
}

/// Lowercase hex of an id.
fn hex(id: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(id.len() * 2);
    for b in id {
        let _ = write!(out, "{b:02x}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn props(items: &[(&str, &str)]) -> Bytes {
        let mut p = MessageProperties::new();
        for (k, v) in items {
            p.set(k, PropertyValue::String((*v).into())).expect("valid");
        }
        p.encode()
    }

    #[test]
    fn only_a_valid_traceparent_is_a_parent() {
        assert_eq!(trace_parent(&Bytes::new()), None);
        assert_eq!(
            trace_parent(&props(&[("traceparent", PARENT)])),
            TraceParent::parse(PARENT).ok()
        );
        assert_eq!(
            trace_parent(&props(&[("traceparent", &PARENT.to_uppercase())])),
            None
        );
    }

    #[test]
    fn a_valid_tracestate_is_carried_and_an_invalid_one_dropped() {
        let state = trace_state(&props(&[("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa")]));
        assert_eq!(state.get("congo"), Some("t61rcWkgMzE"));
        assert_eq!(state.get("rojo"), Some("00f067aa"));
        assert_eq!(
            trace_state(&props(&[("tracestate", "not a list")])).header(),
            ""
        );
        assert_eq!(trace_state(&Bytes::new()).header(), "");
    }

    #[test]
    fn a_traceparent_is_added_after_the_other_properties() {
        let span = SpanContext::new(
            TraceId::from_bytes([7; 16]),
            SpanId::from_bytes([9; 8]),
            TraceFlags::SAMPLED,
            false,
            TraceState::default(),
        );
        let before = props(&[("colour", "blue")]);
        let after = with_traceparent(&before, &span).expect("added");
        let decoded = MessageProperties::decode(&after).expect("decodes");
        assert_eq!(
            decoded.get("colour"),
            Some(&PropertyValue::String("blue".into()))
        );
        assert_eq!(
            decoded.get(TRACEPARENT),
            Some(&PropertyValue::String(
                "00-07070707070707070707070707070707-0909090909090909-01".into()
            ))
        );
        assert_eq!(with_traceparent(&after, &span), None, "one is kept");
    }
}
