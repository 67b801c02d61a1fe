//! Delivery states and outcomes (received, accepted, rejected, released, modified) and
//! the transaction composites (declare, discharge, declared, transactional-state).
//!
//! One enum, [`DeliveryState`], covers every state a transfer or disposition may carry,
//! so a transactional-state can nest an outcome and a terminus's default-outcome can
//! use the same type.

use bytes::{Bytes, BytesMut};

use crate::codec::{format_code as fc, CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;
use crate::performative::ErrorCondition;
use crate::value::{Symbol, Value};

/// The state of a delivery, or its outcome.
#[derive(Debug, Clone, PartialEq)]
pub enum DeliveryState {
    /// Partial receipt (for resuming): how far the receiver got.
    Received {
        /// Section the receiver got to.
        section_number: u32,
        /// Offset within that section.
        section_offset: u64,
    },
    /// The message was processed (MQ: destructive get committed / put done).
    Accepted,
    /// The message is invalid and will not be processed.
    Rejected {
        /// Why.
        error: Option<ErrorCondition>,
    },
    /// Not processed; may be redelivered, delivery-count unchanged.
    Released,
    /// Not processed; may be redelivered, possibly with changes.
    Modified {
        /// Count this as a failed delivery (delivery-count + 1).
        delivery_failed: bool,
        /// Do not redeliver to this link.
        undeliverable_here: bool,
        /// Annotations to merge into the message.
        message_annotations: Vec<(Symbol, Value)>,
    },
    /// A transaction was declared: its id.
    Declared {
        /// The transaction id.
        txn_id: Bytes,
    },
    /// Work done under a transaction, with the outcome it will have on commit.
    Transactional {
        /// The transaction id.
        txn_id: Bytes,
        /// The provisional outcome.
        outcome: Option<Box<DeliveryState>>,
    },
}

impl Encode for DeliveryState {
    fn encode(&self, out: &mut BytesMut) {
        match self {
            DeliveryState::Received {
                section_number,
                section_offset,
            } => {
                let mut w = CompositeWriter::begin(out, descriptor::RECEIVED);
                w.value(section_number).value(section_offset);
                w.finish();
            }
            DeliveryState::Accepted => CompositeWriter::begin(out, descriptor::ACCEPTED).finish(),
            DeliveryState::Rejected { error } => {
                let mut w = CompositeWriter::begin(out, descriptor::REJECTED);
                w.field(error.as_ref());
                w.finish();
            }
            DeliveryState::Released => CompositeWriter::begin(out, descriptor::RELEASED).finish(),
            DeliveryState::Modified {
                delivery_failed,
                undeliverable_here,
                message_annotations,
            } => {
                let mut w = CompositeWriter::begin(out, descriptor::MODIFIED);
                w.or_default(delivery_failed, false)
                    .or_default(undeliverable_here, false)
                    .non_empty(message_annotations);
                w.finish();
            }
            DeliveryState::Declared { txn_id } => {
                let mut w = CompositeWriter::begin(out, descriptor::DECLARED);
                w.value(txn_id);
                w.finish();
            }
            DeliveryState::Transactional { txn_id, outcome } => {
                let mut w = CompositeWriter::begin(out, descriptor::TRANSACTIONAL_STATE);
                w.value(txn_id).field(outcome.as_deref());
                w.finish();
            }
        }
    }
}

impl Decode for DeliveryState {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        if code != fc::DESCRIBED {
            return Err(DecodeError::UnexpectedType {
                field: "delivery-state",
                expected: "described list",
                found: code,
            });
        }
        dec.enter()?;
        let d = descriptor::read_code(dec)?;
        let list_code = dec.read_code()?;
        let state = match d {
            descriptor::RECEIVED => {
                let mut f = Fields::list(dec, list_code, "received")?;
                let s = DeliveryState::Received {
                    section_number: f.required("section-number")?,
                    section_offset: f.required("section-offset")?,
                };
                f.finish()?;
                s
            }
            descriptor::ACCEPTED => {
                Fields::list(dec, list_code, "accepted")?.finish()?;
                DeliveryState::Accepted
            }
            descriptor::REJECTED => {
                let mut f = Fields::list(dec, list_code, "rejected")?;
                let s = DeliveryState::Rejected {
                    error: f.optional("error")?,
                };
                f.finish()?;
                s
            }
            descriptor::RELEASED => {
                Fields::list(dec, list_code, "released")?.finish()?;
                DeliveryState::Released
            }
            descriptor::MODIFIED => {
                let mut f = Fields::list(dec, list_code, "modified")?;
                let s = DeliveryState::Modified {
                    delivery_failed: f.or_default("delivery-failed", false)?,
                    undeliverable_here: f.or_default("undeliverable-here", false)?,
                    message_annotations: f.or_empty("message-annotations")?,
                };
                f.finish()?;
                s
            }
            descriptor::DECLARED => {
                let mut f = Fields::list(dec, list_code, "declared")?;
                let s = DeliveryState::Declared {
                    txn_id: f.required("txn-id")?,
                };
                f.finish()?;
                s
            }
            descriptor::TRANSACTIONAL_STATE => {
                let mut f = Fields::list(dec, list_code, "transactional-state")?;
                let s = DeliveryState::Transactional {
                    txn_id: f.required("txn-id")?,
                    outcome: f.optional::<DeliveryState>("outcome")?.map(Box::new),
                };
                f.finish()?;
                s
            }
            other => {
                return Err(DecodeError::UnexpectedDescriptor {
                    expected: "delivery-state",
                    found: format!("0x{other:x}"),
                })
            }
        };
        dec.leave();
        Ok(state)
    }
}

/// What a message sent to a transaction coordinator asks for: its amqp-value body holds a
/// [`Declare`] or a [`Discharge`].
#[derive(Debug, Clone, PartialEq)]
pub enum TxnControl {
    /// Start a transaction.
    Declare(Declare),
    /// End one.
    Discharge(Discharge),
}

impl TxnControl {
    /// Reads the control in an encoded coordinator message, straight from its amqp-value
    /// section (a transacted JMS session sends two to four per unit of work, so this reads
    /// the bytes once rather than through a generic [`Value`]). Errors say what was found
    /// instead: another body section, or another value.
    pub fn from_message(payload: Bytes) -> Result<TxnControl, DecodeError> {
        let sections = crate::message::RawSections::scan(payload)?;
        let body = sections.section(crate::message::SectionKind::Body).ok_or(
            DecodeError::MissingField {
                type_name: "coordinator message",
                field: "amqp-value",
            },
        )?;
        let mut dec = Decoder::new(body);
        // Framed by the scan: a described section.
        let _ = dec.read_code()?;
        let section = descriptor::read_code(&mut dec)?;
        if section != descriptor::AMQP_VALUE {
            return Err(DecodeError::UnexpectedDescriptor {
                expected: "amqp-value",
                found: format!("0x{section:x}"),
            });
        }
        let value_at = dec.position();
        let kind = match dec.read_code()? {
            fc::DESCRIBED => descriptor::read_code(&mut dec)?,
            other => {
                return Err(DecodeError::UnexpectedType {
                    field: "amqp-value",
                    expected: "declare or discharge",
                    found: other,
                })
            }
        };
        dec.rewind(value_at);
        let control = match kind {
            descriptor::DECLARE => TxnControl::Declare(dec.read()?),
            descriptor::DISCHARGE => TxnControl::Discharge(dec.read()?),
            other => {
                return Err(DecodeError::UnexpectedDescriptor {
                    expected: "declare or discharge",
                    found: format!("0x{other:x}"),
                })
            }
        };
        dec.finish()?;
        Ok(control)
    }
}

/// Transaction controller body: declare a new transaction (the body of an amqp-value
/// section sent to the coordinator).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Declare {
    /// Global transaction id (distributed transactions; unused by Qpid JMS).
    pub global_id: Option<Value>,
}

impl Encode for Declare {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::DECLARE);
        w.field(self.global_id.as_ref());
        w.finish();
    }
}

impl Decode for Declare {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::DECLARE, "declare")?;
        let d = Declare {
            global_id: f.optional("global-id")?,
        };
        f.finish()?;
        Ok(d)
    }
}

/// Transaction controller body: end a transaction, committing unless `fail`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Discharge {
    /// The transaction.
    pub txn_id: Bytes,
    /// True to roll back, false to commit.
    pub fail: bool,
}

impl Encode for Discharge {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::DISCHARGE);
        w.value(&self.txn_id).or_default(&self.fail, false);
        w.finish();
    }
}

impl Decode for Discharge {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::DISCHARGE, "discharge")?;
        let d = Discharge {
            txn_id: f.required("txn-id")?,
            fail: f.or_default("fail", false)?,
        };
        f.finish()?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Body, Message};

    fn message_with(body: Body) -> Bytes {
        let m = Message {
            body: Some(body),
            ..Message::default()
        };
        let mut out = BytesMut::new();
        m.encode(&mut out);
        out.freeze()
    }

    fn as_value(x: &impl Encode) -> Value {
        crate::codec::from_bytes(crate::codec::to_bytes(x)).unwrap()
    }

    #[test]
    fn coordinator_messages_are_read_from_their_amqp_value() {
        let declare = message_with(Body::Value(as_value(&Declare::default())));
        assert_eq!(
            TxnControl::from_message(declare),
            Ok(TxnControl::Declare(Declare::default()))
        );
        let discharge = Discharge {
            txn_id: Bytes::from_static(b"\x00\x01"),
            fail: true,
        };
        let encoded = message_with(Body::Value(as_value(&discharge)));
        assert_eq!(
            TxnControl::from_message(encoded),
            Ok(TxnControl::Discharge(discharge))
        );
        // The descriptor in its symbolic form: amqp-value holding amqp:declare:list.
        let mut symbolic = BytesMut::new();
        crate::codec::put_described_code(&mut symbolic, descriptor::AMQP_VALUE);
        symbolic.extend_from_slice(&[fc::DESCRIBED]);
        crate::codec::put_symbol(&mut symbolic, "amqp:declare:list");
        symbolic.extend_from_slice(&[fc::LIST0]);
        assert_eq!(
            TxnControl::from_message(symbolic.freeze()),
            Ok(TxnControl::Declare(Declare::default()))
        );
    }

    #[test]
    fn other_coordinator_messages_are_errors() {
        for body in [
            Body::Value(Value::from("declare")),
            Body::Value(as_value(&DeliveryState::Declared {
                txn_id: Bytes::from_static(b"\x01"),
            })),
            Body::data(Bytes::from_static(b"declare")),
        ] {
            let text = format!("{body:?}");
            assert!(
                TxnControl::from_message(message_with(body)).is_err(),
                "{text}"
            );
        }
        assert!(TxnControl::from_message(Bytes::new()).is_err(), "no body");
    }
}
