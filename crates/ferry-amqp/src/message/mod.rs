//! The AMQP message format: a sequence of sections (header, delivery-annotations,
//! message-annotations, properties, application-properties, body, footer), decoded from
//! and encoded to a transfer's payload.
//!
//! Decoding copies no text or data: strings and binaries are slices of the payload. A
//! broker that stores messages verbatim can use [`Message::decode_with_sections`] (or
//! [`RawSections::scan`], which decodes nothing) to get each section's bytes.

mod header;
mod properties;
mod sections;

pub use header::{Header, DEFAULT_PRIORITY};
pub(crate) use properties::PropertiesSpans;
pub use properties::{MessageId, MessageIdRef, Properties, PropertiesRef};
pub use sections::{RawSections, SectionKind};

use bytes::{Bytes, BytesMut};

use smallvec::SmallVec;

use crate::codec::{format_code as fc, put_described_code, Decode, Decoder, Encode};
use crate::descriptor;
use crate::error::DecodeError;
use crate::value::{Str, Value};
use sections::SectionOrder;

/// An annotations map (delivery-annotations, message-annotations, footer): keys are
/// symbols (or ulongs), values any type.
pub type Annotations = Vec<(Value, Value)>;

/// A body's `data` sections: almost always one, kept inline (no allocation per message).
pub type DataSections = SmallVec<[Bytes; 1]>;

/// The message body.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    /// One or more `data` sections (opaque bytes: JMS BytesMessage, ObjectMessage).
    Data(DataSections),
    /// One or more `amqp-sequence` sections, each a list (JMS StreamMessage).
    Sequence(Vec<Vec<Value>>),
    /// One `amqp-value` section (JMS TextMessage string, MapMessage map).
    Value(Value),
}

impl Body {
    /// A body of one `data` section.
    pub fn data(bytes: Bytes) -> Self {
        Body::Data(smallvec::smallvec![bytes])
    }
}

/// An AMQP message: the annotated message (header, annotations, footer) around the bare
/// message (properties, application-properties, body). Absent sections are `None`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message {
    /// Transport header.
    pub header: Option<Header>,
    /// Annotations for the next hop only.
    pub delivery_annotations: Option<Annotations>,
    /// Annotations that travel with the message (e.g. `x-opt-jms-msg-type`).
    pub message_annotations: Option<Annotations>,
    /// Immutable standard properties.
    pub properties: Option<Properties>,
    /// Application properties (JMS user properties): string keys, simple values.
    pub application_properties: Option<Vec<(Str, Value)>>,
    /// The body.
    pub body: Option<Body>,
    /// Footer (hashes, signatures).
    pub footer: Option<Annotations>,
}

impl Message {
    /// Decodes a message from a transfer payload (whole delivery).
    pub fn decode(payload: Bytes) -> Result<Self, DecodeError> {
        let mut m = Message::default();
        m.decode_sections(payload, None, None)?;
        Ok(m)
    }

    /// Decodes a message and reports where each section lies in `payload`.
    pub fn decode_with_sections(payload: Bytes) -> Result<(Self, RawSections), DecodeError> {
        let mut m = Message::default();
        let mut raw = RawSections::new(payload.clone());
        m.decode_sections(payload, Some(&mut raw), None)?;
        Ok((m, raw))
    }

    /// As [`Self::decode_with_sections`], for a broker that maps the message and stores it
    /// verbatim: the properties section is checked exactly as there but borrowed from
    /// `payload` ([`PropertiesRef`]) rather than built, so the returned message's
    /// `properties` is `None`.
    pub fn decode_borrowing_properties(
        payload: &Bytes,
    ) -> Result<(Self, Option<PropertiesRef<'_>>, RawSections), DecodeError> {
        let mut m = Message::default();
        let mut raw = RawSections::new(payload.clone());
        let mut properties = None;
        m.decode_sections(
            payload.clone(),
            Some(&mut raw),
            Some((payload.as_ref(), &mut properties)),
        )?;
        Ok((m, properties, raw))
    }

    /// Decodes `payload`'s sections into `self`, recording their spans in `raw` if given,
    /// and borrowing the properties section into the given slot (from `payload`'s own
    /// bytes) instead of building [`Properties`], if given.
    fn decode_sections<'a>(
        &mut self,
        payload: Bytes,
        mut raw: Option<&mut RawSections>,
        mut borrowed: Option<(&'a [u8], &mut Option<PropertiesRef<'a>>)>,
    ) -> Result<(), DecodeError> {
        let m = self;
        let mut dec = Decoder::new(payload);
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
            match d {
                descriptor::HEADER | descriptor::PROPERTIES => {
                    // These decoders read their own descriptor: step back to it.
                    dec.rewind(start + 1);
                    if d == descriptor::HEADER {
                        m.header = Some(Header::decode_with(&mut dec, code)?);
                    } else if let Some((buf, slot)) = borrowed.as_mut() {
                        **slot = Some(PropertiesRef::decode_with(&mut dec, code, buf)?);
                    } else {
                        m.properties = Some(Properties::decode_with(&mut dec, code)?);
                    }
                }
                descriptor::DELIVERY_ANNOTATIONS => {
                    m.delivery_annotations = Some(read_map(&mut dec)?)
                }
                descriptor::MESSAGE_ANNOTATIONS => {
                    m.message_annotations = Some(read_map(&mut dec)?)
                }
                descriptor::APPLICATION_PROPERTIES => {
                    m.application_properties = Some(dec.read_optional()?.unwrap_or_default())
                }
                descriptor::FOOTER => m.footer = Some(read_map(&mut dec)?),
                descriptor::DATA => {
                    let data: Bytes = dec.read()?;
                    match &mut m.body {
                        Some(Body::Data(sections)) => sections.push(data),
                        _ => m.body = Some(Body::data(data)),
                    }
                }
                descriptor::AMQP_SEQUENCE => {
                    let items = match dec.read_value()? {
                        Value::List(items) => items,
                        _ => {
                            return Err(DecodeError::InvalidValue {
                                field: "amqp-sequence",
                                value: "not a list".into(),
                            })
                        }
                    };
                    match &mut m.body {
                        Some(Body::Sequence(sections)) => sections.push(items),
                        _ => m.body = Some(Body::Sequence(vec![items])),
                    }
                }
                _ => m.body = Some(Body::Value(dec.read_value()?)),
            }
            if let Some(raw) = raw.as_deref_mut() {
                raw.record(kind, start..dec.position());
            }
        }
        Ok(())
    }

    /// Appends the message's sections to `out` (typically a transfer frame being built,
    /// see [`encode_transfer_with`](crate::encode_transfer_with)).
    pub fn encode(&self, out: &mut BytesMut) {
        if let Some(h) = &self.header {
            h.encode(out);
        }
        put_map_section(
            out,
            descriptor::DELIVERY_ANNOTATIONS,
            &self.delivery_annotations,
        );
        put_map_section(
            out,
            descriptor::MESSAGE_ANNOTATIONS,
            &self.message_annotations,
        );
        if let Some(p) = &self.properties {
            p.encode(out);
        }
        if let Some(ap) = &self.application_properties {
            put_described_code(out, descriptor::APPLICATION_PROPERTIES);
            ap.encode(out);
        }
        match &self.body {
            Some(Body::Data(sections)) => {
                for data in sections {
                    put_described_code(out, descriptor::DATA);
                    data.encode(out);
                }
            }
            Some(Body::Sequence(sections)) => {
                for items in sections {
                    put_described_code(out, descriptor::AMQP_SEQUENCE);
                    crate::codec::put_list(out, items);
                }
            }
            Some(Body::Value(v)) => {
                put_described_code(out, descriptor::AMQP_VALUE);
                v.encode(out);
            }
            None => {}
        }
        put_map_section(out, descriptor::FOOTER, &self.footer);
    }

    /// The value of a message annotation with a symbol key (e.g. `x-opt-jms-msg-type`).
    pub fn message_annotation(&self, key: &str) -> Option<&Value> {
        self.message_annotations
            .as_ref()?
            .iter()
            .find(|(k, _)| matches!(k, Value::Symbol(s) if s == key))
            .map(|(_, v)| v)
    }
}

fn read_map(dec: &mut Decoder) -> Result<Annotations, DecodeError> {
    Ok(dec.read_optional()?.unwrap_or_default())
}

fn put_map_section(out: &mut BytesMut, code: u64, map: &Option<Annotations>) {
    if let Some(map) = map {
        put_described_code(out, code);
        map.encode(out);
    }
}
