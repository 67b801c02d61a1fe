//! The small enumerations of link settlement: role, sender and receiver settle modes.
//! On the wire they are a boolean and ubytes; here they are named.

use bytes::BytesMut;

use crate::codec::{Decode, Decoder, Encode};
use crate::error::DecodeError;

/// Which end of a link: `false` on the wire is the sender, `true` the receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Role {
    /// The sending end.
    #[default]
    Sender,
    /// The receiving end.
    Receiver,
}

impl Encode for Role {
    fn encode(&self, out: &mut BytesMut) {
        (*self == Role::Receiver).encode(out);
    }
}

impl Decode for Role {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        Ok(if bool::decode_with(dec, code)? {
            Role::Receiver
        } else {
            Role::Sender
        })
    }
}

macro_rules! ubyte_enum {
    ($(#[$doc:meta])* $name:ident, $field:literal, { $($(#[$vdoc:meta])* $variant:ident = $n:literal),* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// The wire value.
            pub fn code(self) -> u8 {
                match self { $($name::$variant => $n,)* }
            }
        }

        impl Encode for $name {
            fn encode(&self, out: &mut BytesMut) {
                self.code().encode(out);
            }
        }

        impl Decode for $name {
            fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
                match u8::decode_with(dec, code)? {
                    $($n => Ok($name::$variant),)*
                    other => Err(DecodeError::InvalidValue { field: $field, value: other.to_string() }),
                }
            }
        }
    };
}

ubyte_enum!(
    /// How the sender settles deliveries (attach field snd-settle-mode).
    SenderSettleMode, "snd-settle-mode", {
    /// Sender sends unsettled; the receiver's disposition settles.
    Unsettled = 0,
    /// Sender sends settled (at most once).
    Settled = 1,
    /// Sender chooses per delivery (the spec default).
    #[default]
    Mixed = 2
});

ubyte_enum!(
    /// When the receiver settles (attach field rcv-settle-mode).
    ReceiverSettleMode, "rcv-settle-mode", {
    /// Receiver settles as soon as it has an outcome (the spec default).
    #[default]
    First = 0,
    /// Receiver settles only after the sender settles.
    Second = 1
});
