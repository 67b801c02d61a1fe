//! The performatives (frame bodies) of AMQP 1.0 and the composites they carry, as typed
//! structs with encode/decode.
//!
//! Encoding drops trailing null fields and writes fields equal to their spec default as
//! null; decoding fills absent fields with the spec defaults (max-frame-size 4294967295,
//! channel-max 65535, snd-settle-mode mixed, ...). Descriptors are accepted in numeric or
//! symbolic form. [`Performative`] is the sum of every frame body, AMQP and SASL.

mod connection;
mod delivery_state;
mod error_condition;
mod link;
mod quick;
mod sasl;
mod settlement;
mod terminus;

pub use connection::{
    Begin, Close, End, Open, DEFAULT_CHANNEL_MAX, DEFAULT_HANDLE_MAX, DEFAULT_MAX_FRAME_SIZE,
};
pub use delivery_state::{Declare, DeliveryState, Discharge, TxnControl};
pub use error_condition::ErrorCondition;
pub use link::{Attach, Detach, Disposition, Flow, Transfer};
pub(crate) use quick::performative as quick_decode;
pub use sasl::{SaslChallenge, SaslCode, SaslInit, SaslMechanisms, SaslOutcome, SaslResponse};
pub use settlement::{ReceiverSettleMode, Role, SenderSettleMode};
pub use terminus::{Coordinator, ExpiryPolicy, LinkTarget, Source, Target, TerminusDurability};

use bytes::BytesMut;

use crate::codec::{format_code as fc, Decode, Decoder, Encode};
use crate::descriptor;
use crate::error::DecodeError;

/// Any frame body: the nine AMQP performatives and the five SASL frames.
#[derive(Debug, Clone, PartialEq)]
pub enum Performative {
    /// `open`.
    Open(Open),
    /// `begin`.
    Begin(Begin),
    /// `attach`.
    Attach(Box<Attach>),
    /// `flow`.
    Flow(Flow),
    /// `transfer`.
    Transfer(Transfer),
    /// `disposition`.
    Disposition(Disposition),
    /// `detach`.
    Detach(Detach),
    /// `end`.
    End(End),
    /// `close`.
    Close(Close),
    /// `sasl-mechanisms`.
    SaslMechanisms(SaslMechanisms),
    /// `sasl-init`.
    SaslInit(SaslInit),
    /// `sasl-challenge`.
    SaslChallenge(SaslChallenge),
    /// `sasl-response`.
    SaslResponse(SaslResponse),
    /// `sasl-outcome`.
    SaslOutcome(SaslOutcome),
}

impl Performative {
    /// True for the SASL frames (sent in frames of type 1).
    pub fn is_sasl(&self) -> bool {
        matches!(
            self,
            Performative::SaslMechanisms(_)
                | Performative::SaslInit(_)
                | Performative::SaslChallenge(_)
                | Performative::SaslResponse(_)
                | Performative::SaslOutcome(_)
        )
    }

    /// The performative's name, as the spec writes it (for logs and errors).
    pub fn name(&self) -> &'static str {
        match self {
            Performative::Open(_) => "open",
            Performative::Begin(_) => "begin",
            Performative::Attach(_) => "attach",
            Performative::Flow(_) => "flow",
            Performative::Transfer(_) => "transfer",
            Performative::Disposition(_) => "disposition",
            Performative::Detach(_) => "detach",
            Performative::End(_) => "end",
            Performative::Close(_) => "close",
            Performative::SaslMechanisms(_) => "sasl-mechanisms",
            Performative::SaslInit(_) => "sasl-init",
            Performative::SaslChallenge(_) => "sasl-challenge",
            Performative::SaslResponse(_) => "sasl-response",
            Performative::SaslOutcome(_) => "sasl-outcome",
        }
    }
}

impl Encode for Performative {
    fn encode(&self, out: &mut BytesMut) {
        match self {
            Performative::Open(p) => p.encode(out),
            Performative::Begin(p) => p.encode(out),
            Performative::Attach(p) => p.encode(out),
            Performative::Flow(p) => p.encode(out),
            Performative::Transfer(p) => p.encode(out),
            Performative::Disposition(p) => p.encode(out),
            Performative::Detach(p) => p.encode(out),
            Performative::End(p) => p.encode(out),
            Performative::Close(p) => p.encode(out),
            Performative::SaslMechanisms(p) => p.encode(out),
            Performative::SaslInit(p) => p.encode(out),
            Performative::SaslChallenge(p) => p.encode(out),
            Performative::SaslResponse(p) => p.encode(out),
            Performative::SaslOutcome(p) => p.encode(out),
        }
    }
}

impl Decode for Performative {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        if code != fc::DESCRIBED {
            return Err(DecodeError::UnexpectedType {
                field: "performative",
                expected: "described list",
                found: code,
            });
        }
        // Peek at the descriptor, then let the type's own decoder read it again.
        let start = dec.position();
        let d = descriptor::read_code(dec)?;
        dec.rewind(start);
        Ok(match d {
            descriptor::OPEN => Performative::Open(Open::decode_with(dec, code)?),
            descriptor::BEGIN => Performative::Begin(Begin::decode_with(dec, code)?),
            descriptor::ATTACH => Performative::Attach(Box::new(Attach::decode_with(dec, code)?)),
            descriptor::FLOW => Performative::Flow(Flow::decode_with(dec, code)?),
            descriptor::TRANSFER => Performative::Transfer(Transfer::decode_with(dec, code)?),
            descriptor::DISPOSITION => {
                Performative::Disposition(Disposition::decode_with(dec, code)?)
            }
            descriptor::DETACH => Performative::Detach(Detach::decode_with(dec, code)?),
            descriptor::END => Performative::End(End::decode_with(dec, code)?),
            descriptor::CLOSE => Performative::Close(Close::decode_with(dec, code)?),
            descriptor::SASL_MECHANISMS => {
                Performative::SaslMechanisms(SaslMechanisms::decode_with(dec, code)?)
            }
            descriptor::SASL_INIT => Performative::SaslInit(SaslInit::decode_with(dec, code)?),
            descriptor::SASL_CHALLENGE => {
                Performative::SaslChallenge(SaslChallenge::decode_with(dec, code)?)
            }
            descriptor::SASL_RESPONSE => {
                Performative::SaslResponse(SaslResponse::decode_with(dec, code)?)
            }
            descriptor::SASL_OUTCOME => {
                Performative::SaslOutcome(SaslOutcome::decode_with(dec, code)?)
            }
            other => {
                return Err(DecodeError::UnexpectedDescriptor {
                    expected: "performative",
                    found: format!("0x{other:x}"),
                })
            }
        })
    }
}
