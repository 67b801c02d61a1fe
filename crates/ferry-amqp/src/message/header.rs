//! The `header` section (0x70): transport headers a broker may change in transit
//! (durability, priority, time to live, delivery count).

use bytes::BytesMut;

use crate::codec::quick::{List, Writer};
use crate::codec::{CompositeWriter, Decode, Decoder, Encode, Fields};
use crate::descriptor;
use crate::error::DecodeError;

/// Spec default priority.
pub const DEFAULT_PRIORITY: u8 = 4;

/// The message header: JMSDeliveryMode, JMSPriority, TTL and redelivery count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Persistent (JMS PERSISTENT).
    pub durable: bool,
    /// Priority 0..=9 (default 4).
    pub priority: u8,
    /// Time to live in ms.
    pub ttl: Option<u32>,
    /// No earlier acquirer has seen this message.
    pub first_acquirer: bool,
    /// Failed delivery attempts so far (MQ BackoutCount).
    pub delivery_count: u32,
}

impl Default for Header {
    fn default() -> Self {
        Header {
            durable: false,
            priority: DEFAULT_PRIORITY,
            ttl: None,
            first_acquirer: false,
            delivery_count: 0,
        }
    }
}

impl Encode for Header {
    fn encode(&self, out: &mut BytesMut) {
        let mut w = Writer::<32>::new();
        w.bool_or_false(self.durable)
            .ubyte_or(self.priority, DEFAULT_PRIORITY)
            .optional_uint(self.ttl)
            .bool_or_false(self.first_acquirer)
            .uint_or(self.delivery_count, 0);
        if !w.finish(descriptor::HEADER as u8, out) {
            self.encode_general(out);
        }
    }
}

impl Header {
    /// The general encoder ([`Encode`] writes the same bytes through `codec::quick`).
    pub(crate) fn encode_general(&self, out: &mut BytesMut) {
        let mut w = CompositeWriter::begin(out, descriptor::HEADER);
        w.or_default(&self.durable, false)
            .or_default(&self.priority, DEFAULT_PRIORITY)
            .field(self.ttl.as_ref())
            .or_default(&self.first_acquirer, false)
            .or_default(&self.delivery_count, 0);
        w.finish();
    }
}

impl Decode for Header {
    fn decode_with(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        match Header::quick(dec, code) {
            Some(h) => Ok(h),
            None => Header::general(dec, code),
        }
    }
}

impl Header {
    /// The fast path (see [`crate::codec::quick`]) for a header in the compact encoding;
    /// `None`, with `dec` untouched, for anything else.
    pub(crate) fn quick(dec: &mut Decoder, code: u8) -> Option<Header> {
        let mut r = List::described(dec.rest().0, code, descriptor::HEADER)?;
        let h = Header {
            durable: r.bool_or_false()?,
            priority: r.ubyte_or(DEFAULT_PRIORITY)?,
            ttl: r.optional_uint()?,
            first_acquirer: r.bool_or_false()?,
            delivery_count: r.uint_or(0)?,
        };
        let used = r.finish()?;
        dec.skip(used);
        Some(h)
    }

    /// The general decoder.
    pub(crate) fn general(dec: &mut Decoder, code: u8) -> Result<Self, DecodeError> {
        let mut f = Fields::described(dec, code, descriptor::HEADER, "header")?;
        let h = Header {
            durable: f.or_default("durable", false)?,
            priority: f.or_default("priority", DEFAULT_PRIORITY)?,
            ttl: f.optional("ttl")?,
            first_acquirer: f.or_default("first-acquirer", false)?,
            delivery_count: f.or_default("delivery-count", 0)?,
        };
        f.finish()?;
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn the_compact_writer_writes_the_general_writers_bytes(
            durable in any::<bool>(),
            priority in prop_oneof![Just(DEFAULT_PRIORITY), any::<u8>()],
            ttl in any::<Option<u32>>(),
            first_acquirer in any::<bool>(),
            delivery_count in prop_oneof![Just(0u32), any::<u32>()],
        ) {
            let h = Header { durable, priority, ttl, first_acquirer, delivery_count };
            let mut general = BytesMut::new();
            h.encode_general(&mut general);
            let mut compact = BytesMut::new();
            h.encode(&mut compact);
            prop_assert_eq!(compact, general);
        }
    }
}
