//! Where each section of an encoded message lies, so a broker can store and re-send
//! sections verbatim (e.g. keep the bare message's bytes and write only a new header).
//!
//! [`RawSections::scan`] finds the sections without decoding their contents (it skips
//! by declared sizes); [`Message::decode_with_sections`](super::Message::decode_with_sections)
//! records the same spans while it decodes.

use std::ops::Range;

use bytes::Bytes;

use crate::codec::{format_code as fc, Decoder};
use crate::descriptor;
use crate::error::DecodeError;

/// The kinds of message section, in the order the spec requires them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SectionKind {
    /// `header` (0x70).
    Header,
    /// `delivery-annotations` (0x71).
    DeliveryAnnotations,
    /// `message-annotations` (0x72).
    MessageAnnotations,
    /// `properties` (0x73).
    Properties,
    /// `application-properties` (0x74).
    ApplicationProperties,
    /// The body: one or more `data` (0x75) or `amqp-sequence` (0x76) sections, or one
    /// `amqp-value` (0x77).
    Body,
    /// `footer` (0x78).
    Footer,
}

impl SectionKind {
    /// The kind of section a descriptor code names.
    pub fn from_descriptor(code: u64) -> Option<Self> {
        Some(match code {
            descriptor::HEADER => SectionKind::Header,
            descriptor::DELIVERY_ANNOTATIONS => SectionKind::DeliveryAnnotations,
            descriptor::MESSAGE_ANNOTATIONS => SectionKind::MessageAnnotations,
            descriptor::PROPERTIES => SectionKind::Properties,
            descriptor::APPLICATION_PROPERTIES => SectionKind::ApplicationProperties,
            descriptor::DATA | descriptor::AMQP_SEQUENCE | descriptor::AMQP_VALUE => {
                SectionKind::Body
            }
            descriptor::FOOTER => SectionKind::Footer,
            _ => return None,
        })
    }
}

/// The encoded message and the byte range of each section in it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RawSections {
    payload: Bytes,
    spans: [Option<Range<usize>>; 7],
}

impl RawSections {
    /// Finds the sections of an encoded message without decoding their contents. Checks
    /// the order and that each section is well framed; not that its fields are valid.
    pub fn scan(payload: Bytes) -> Result<Self, DecodeError> {
        let mut dec = Decoder::new(payload.clone());
        let mut raw = RawSections::new(payload);
        let mut order = SectionOrder::default();
        while dec.remaining() > 0 {
            let start = dec.position();
            let code = dec.read_code()?;
            if code != fc::DESCRIBED {
                return Err(DecodeError::UnexpectedType {
                    field: "section",
                    expected: "described section",
                    found: code,
                });
            }
            let d = descriptor::read_code(&mut dec)?;
            let kind = order.next(d)?;
            dec.skip_value()?;
            raw.record(kind, start..dec.position());
        }
        Ok(raw)
    }

    pub(crate) fn new(payload: Bytes) -> Self {
        RawSections {
            payload,
            spans: Default::default(),
        }
    }

    /// Records that a section of `kind` spans `range` (body sections extend the body).
    pub(crate) fn record(&mut self, kind: SectionKind, range: Range<usize>) {
        let slot = &mut self.spans[kind as usize];
        *slot = Some(match slot.take() {
            Some(prev) => prev.start..range.end,
            None => range,
        });
    }

    /// The whole encoded message.
    pub fn payload(&self) -> &Bytes {
        &self.payload
    }

    /// The byte range of a section (all body sections together for `Body`).
    pub fn span(&self, kind: SectionKind) -> Option<Range<usize>> {
        self.spans[kind as usize].clone()
    }

    /// The encoded bytes of a section, shared with the payload (no copy).
    pub fn section(&self, kind: SectionKind) -> Option<Bytes> {
        self.span(kind).map(|r| self.payload.slice(r))
    }

    /// The bare message (properties, application-properties and body): the part a
    /// broker must pass on unchanged.
    pub fn bare_message(&self) -> Bytes {
        let bare = [
            SectionKind::Properties,
            SectionKind::ApplicationProperties,
            SectionKind::Body,
        ];
        let spans: Vec<_> = bare.iter().filter_map(|k| self.span(*k)).collect();
        match (spans.first(), spans.last()) {
            (Some(first), Some(last)) => self.payload.slice(first.start..last.end),
            _ => Bytes::new(),
        }
    }
}

/// Checks sections come in the spec's order: each kind once, except body sections of
/// one kind (data or amqp-sequence) that may repeat.
#[derive(Debug, Default)]
pub(crate) struct SectionOrder {
    last: Option<SectionKind>,
    body_descriptor: Option<u64>,
}

impl SectionOrder {
    /// Accepts the next section's descriptor, returning its kind.
    pub(crate) fn next(&mut self, d: u64) -> Result<SectionKind, DecodeError> {
        let kind =
            SectionKind::from_descriptor(d).ok_or_else(|| DecodeError::UnexpectedDescriptor {
                expected: "message section",
                found: format!("0x{d:x}"),
            })?;
        let repeat_ok = kind == SectionKind::Body
            && self.body_descriptor == Some(d)
            && d != descriptor::AMQP_VALUE;
        match self.last {
            Some(last) if last > kind || (last == kind && !repeat_ok) => {
                return Err(DecodeError::SectionOrder(format!("{kind:?}")))
            }
            _ => {}
        }
        if kind == SectionKind::Body {
            self.body_descriptor = Some(d);
        }
        self.last = Some(kind);
        Ok(kind)
    }
}
