//! The `error` composite that detach, end, close, rejected and sasl carry: a condition
//! symbol (see [`crate::condition`]), a description for humans, and an info map.

use bytes::BytesMut;

use crate::codec::{CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;
use crate::value::{Str, Symbol, Value};

/// An AMQP error: why a link, session or connection ended, or a message was rejected.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ErrorCondition {
    /// The condition symbol, e.g. `amqp:not-found`.
    pub condition: Symbol,
    /// Text for humans.
    pub description: Option<Str>,
    /// Extra detail, e.g. `{invalid-field: container-id}`.
    pub info: Vec<(Symbol, Value)>,
}

impl ErrorCondition {
    /// An error with a condition and description and no info.
    pub fn new(condition: &'static str, description: impl Into<Str>) -> Self {
        ErrorCondition {
            condition: Symbol::from_static(condition),
            description: Some(description.into()),
            info: Vec::new(),
        }
    }
}

impl Encode for ErrorCondition {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::ERROR);
        w.value(&self.condition)
            .field(self.description.as_ref())
            .non_empty(&self.info);
        w.finish();
    }
}

impl Decode for ErrorCondition {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::ERROR, "error")?;
        let e = ErrorCondition {
            condition: f.required("condition")?,
            description: f.optional("description")?,
            info: f.or_empty("info")?,
        };
        f.finish()?;
        Ok(e)
    }
}
