//! The descriptor codes of AMQP 1.0's composite types, and their symbolic names.
//!
//! Peers may describe a composite by its numeric code (domain 0, e.g. `0x10`) or by its
//! symbolic name (`amqp:open:list`); [`read_code`] maps both to the code, so every typed
//! decoder matches on numbers only.

use crate::codec::{format_code as fc, Decoder};
use crate::error::DecodeError;

macro_rules! descriptors {
    ($($(#[$doc:meta])* $name:ident = $code:literal, $symbol:literal;)*) => {
        $($(#[$doc])* pub const $name: u64 = $code;)*
        /// Every composite descriptor: (code, symbolic name).
        pub const DESCRIPTORS: &[(u64, &str)] = &[$(($code, $symbol)),*];
    };
}

descriptors! {
    /// `open` performative.
    OPEN = 0x10, "amqp:open:list";
    /// `begin` performative.
    BEGIN = 0x11, "amqp:begin:list";
    /// `attach` performative.
    ATTACH = 0x12, "amqp:attach:list";
    /// `flow` performative.
    FLOW = 0x13, "amqp:flow:list";
    /// `transfer` performative.
    TRANSFER = 0x14, "amqp:transfer:list";
    /// `disposition` performative.
    DISPOSITION = 0x15, "amqp:disposition:list";
    /// `detach` performative.
    DETACH = 0x16, "amqp:detach:list";
    /// `end` performative.
    END = 0x17, "amqp:end:list";
    /// `close` performative.
    CLOSE = 0x18, "amqp:close:list";
    /// `error` (error condition).
    ERROR = 0x1d, "amqp:error:list";
    /// `received` delivery state.
    RECEIVED = 0x23, "amqp:received:list";
    /// `accepted` outcome.
    ACCEPTED = 0x24, "amqp:accepted:list";
    /// `rejected` outcome.
    REJECTED = 0x25, "amqp:rejected:list";
    /// `released` outcome.
    RELEASED = 0x26, "amqp:released:list";
    /// `modified` outcome.
    MODIFIED = 0x27, "amqp:modified:list";
    /// `source` terminus.
    SOURCE = 0x28, "amqp:source:list";
    /// `target` terminus.
    TARGET = 0x29, "amqp:target:list";
    /// `delete-on-close` lifetime policy.
    DELETE_ON_CLOSE = 0x2b, "amqp:delete-on-close:list";
    /// `delete-on-no-links` lifetime policy.
    DELETE_ON_NO_LINKS = 0x2c, "amqp:delete-on-no-links:list";
    /// `delete-on-no-messages` lifetime policy.
    DELETE_ON_NO_MESSAGES = 0x2d, "amqp:delete-on-no-messages:list";
    /// `delete-on-no-links-or-messages` lifetime policy.
    DELETE_ON_NO_LINKS_OR_MESSAGES = 0x2e, "amqp:delete-on-no-links-or-messages:list";
    /// Transaction `coordinator` target.
    COORDINATOR = 0x30, "amqp:coordinator:list";
    /// Transaction `declare` body.
    DECLARE = 0x31, "amqp:declare:list";
    /// Transaction `discharge` body.
    DISCHARGE = 0x32, "amqp:discharge:list";
    /// `declared` outcome.
    DECLARED = 0x33, "amqp:declared:list";
    /// `transactional-state` delivery state.
    TRANSACTIONAL_STATE = 0x34, "amqp:transactional-state:list";
    /// `sasl-mechanisms` frame.
    SASL_MECHANISMS = 0x40, "amqp:sasl-mechanisms:list";
    /// `sasl-init` frame.
    SASL_INIT = 0x41, "amqp:sasl-init:list";
    /// `sasl-challenge` frame.
    SASL_CHALLENGE = 0x42, "amqp:sasl-challenge:list";
    /// `sasl-response` frame.
    SASL_RESPONSE = 0x43, "amqp:sasl-response:list";
    /// `sasl-outcome` frame.
    SASL_OUTCOME = 0x44, "amqp:sasl-outcome:list";
    /// Message `header` section.
    HEADER = 0x70, "amqp:header:list";
    /// Message `delivery-annotations` section.
    DELIVERY_ANNOTATIONS = 0x71, "amqp:delivery-annotations:map";
    /// Message `message-annotations` section.
    MESSAGE_ANNOTATIONS = 0x72, "amqp:message-annotations:map";
    /// Message `properties` section.
    PROPERTIES = 0x73, "amqp:properties:list";
    /// Message `application-properties` section.
    APPLICATION_PROPERTIES = 0x74, "amqp:application-properties:map";
    /// Message `data` body section.
    DATA = 0x75, "amqp:data:binary";
    /// Message `amqp-sequence` body section.
    AMQP_SEQUENCE = 0x76, "amqp:amqp-sequence:list";
    /// Message `amqp-value` body section.
    AMQP_VALUE = 0x77, "amqp:amqp-value:*";
    /// Message `footer` section.
    FOOTER = 0x78, "amqp:footer:map";
}

/// The code for a symbolic descriptor name, if it is one of [`DESCRIPTORS`].
pub fn code_for_symbol(symbol: &[u8]) -> Option<u64> {
    DESCRIPTORS
        .iter()
        .find(|(_, s)| s.as_bytes() == symbol)
        .map(|(c, _)| *c)
}

/// Reads a descriptor (after the 0x00 constructor) as a numeric code, mapping known
/// symbolic names to their codes. An unknown symbol is an error here: only typed
/// decoders call this.
pub fn read_code(dec: &mut Decoder) -> Result<u64, DecodeError> {
    match dec.read_code()? {
        fc::SMALL_ULONG => Ok(dec.u8()? as u64),
        fc::ULONG => dec.u64(),
        fc::ULONG0 => Ok(0),
        code @ (fc::SYM8 | fc::SYM32) => {
            let name = dec.sized_data(code)?;
            code_for_symbol(&name).ok_or_else(|| DecodeError::UnexpectedDescriptor {
                expected: "a known composite",
                found: String::from_utf8_lossy(&name).into_owned(),
            })
        }
        other => Err(DecodeError::BadDescriptor(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn symbolic_and_numeric_descriptors_read_the_same() {
        let mut d = Decoder::new(Bytes::from_static(b"\xa3\x0eamqp:open:list"));
        assert_eq!(read_code(&mut d), Ok(OPEN));
        let mut d = Decoder::new(Bytes::from_static(&[0x53, 0x10]));
        assert_eq!(read_code(&mut d), Ok(OPEN));
        let mut d = Decoder::new(Bytes::from_static(b"\xa3\x03x:y"));
        assert!(read_code(&mut d).is_err());
    }
}
