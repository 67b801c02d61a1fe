//! SASL frames: the server's mechanisms, the client's init and responses, the server's
//! challenges and outcome.

use bytes::{Bytes, BytesMut};

use crate::codec::{CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;
use crate::value::{Str, Symbol};

/// `sasl-mechanisms`: the mechanisms the server offers (e.g. PLAIN, ANONYMOUS).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslMechanisms {
    /// Offered mechanisms.
    pub mechanisms: Vec<Symbol>,
}

impl Encode for SaslMechanisms {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::SASL_MECHANISMS);
        w.value(&self.mechanisms);
        w.finish();
    }
}

impl Decode for SaslMechanisms {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::SASL_MECHANISMS, "sasl-mechanisms")?;
        let m = SaslMechanisms {
            mechanisms: f.required("sasl-server-mechanisms")?,
        };
        f.finish()?;
        Ok(m)
    }
}

/// `sasl-init`: the client's chosen mechanism and first response (PLAIN: `\0user\0pw`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslInit {
    /// The chosen mechanism.
    pub mechanism: Symbol,
    /// The initial response.
    pub initial_response: Option<Bytes>,
    /// The host the client wants (virtual hosting).
    pub hostname: Option<Str>,
}

impl Encode for SaslInit {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::SASL_INIT);
        w.value(&self.mechanism)
            .field(self.initial_response.as_ref())
            .field(self.hostname.as_ref());
        w.finish();
    }
}

impl Decode for SaslInit {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::SASL_INIT, "sasl-init")?;
        let i = SaslInit {
            mechanism: f.required("mechanism")?,
            initial_response: f.optional("initial-response")?,
            hostname: f.optional("hostname")?,
        };
        f.finish()?;
        Ok(i)
    }
}

macro_rules! sasl_bytes {
    ($(#[$doc:meta])* $name:ident, $field:ident, $wire:literal, $code:expr, $type_name:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $name {
            /// The mechanism's data.
            pub $field: Bytes,
        }

        impl Encode for $name {
            fn encode(&self, out: &mut BytesMut) {
                let mut w = CompositeWriter::begin(out, $code);
                w.value(&self.$field);
                w.finish();
            }
        }

        impl Decode for $name {
            fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
                let mut f = Fields::described(dec, code, $code, $type_name)?;
                let v = $name {
                    $field: f.required($wire)?,
                };
                f.finish()?;
                Ok(v)
            }
        }
    };
}

sasl_bytes!(
    /// `sasl-challenge`: the server's challenge.
    SaslChallenge,
    challenge,
    "challenge",
    descriptor::SASL_CHALLENGE,
    "sasl-challenge"
);
sasl_bytes!(
    /// `sasl-response`: the client's answer to a challenge.
    SaslResponse,
    response,
    "response",
    descriptor::SASL_RESPONSE,
    "sasl-response"
);

/// The result of authentication.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SaslCode {
    /// Authenticated.
    #[default]
    Ok,
    /// Bad credentials.
    Auth,
    /// System error.
    Sys,
    /// Permanent system error.
    SysPerm,
    /// Transient system error.
    SysTemp,
}

impl Encode for SaslCode {
    fn encode(&self, out: &mut BytesMut) {
        (*self as u8).encode(out);
    }
}

impl Decode for SaslCode {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        Ok(match u8::decode_with(dec, code)? {
            0 => SaslCode::Ok,
            1 => SaslCode::Auth,
            2 => SaslCode::Sys,
            3 => SaslCode::SysPerm,
            4 => SaslCode::SysTemp,
            other => {
                return Err(DecodeError::InvalidValue {
                    field: "code",
                    value: other.to_string(),
                })
            }
        })
    }
}

/// `sasl-outcome`: ends the SASL exchange.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SaslOutcome {
    /// The result.
    pub code: SaslCode,
    /// Mechanism data for the client.
    pub additional_data: Option<Bytes>,
}

impl Encode for SaslOutcome {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::SASL_OUTCOME);
        w.value(&self.code).field(self.additional_data.as_ref());
        w.finish();
    }
}

impl Decode for SaslOutcome {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::SASL_OUTCOME, "sasl-outcome")?;
        let o = SaslOutcome {
            code: f.required("code")?,
            additional_data: f.optional("additional-data")?,
        };
        f.finish()?;
        Ok(o)
    }
}
