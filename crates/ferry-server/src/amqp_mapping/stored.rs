//! What a stored MQ message still carries of its AMQP origin, read straight from its
//! encoded properties, and which message-id / correlation-id it has *now*.
//!
//! The exact AMQP ids are kept beside MsgId/CorrelId (reserved properties
//! [`PROP_MESSAGE_ID`], [`PROP_CORRELATION_ID`]). They stay authoritative only while the
//! MQMD id is still the one derived from them: a native application that re-puts the
//! message with its properties but a new MsgId or CorrelId (MQPMO_NEW_MSG_ID, a reply
//! that copies MsgId into CorrelId) makes the MQMD id win, shown as a binary id. The
//! delivery mapping and the selector both use this one rule ([`message_id`],
//! [`correlation_id`]), so what a selector matches is what the consumer then sees.

use std::ops::Range;

use bytes::Bytes;
use ferry_amqp::{codec, Properties, RawSections, SectionKind};
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{MessageDescriptor, MessageProperties, PropertyRef};

use super::ids::IdRef;
use super::{PROP_CORRELATION_ID, PROP_FOOTER, PROP_MESSAGE_ID, PROP_SECTIONS};

/// A message's current id, as the AMQP side should see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdView<'a> {
    /// The exact id the AMQP producer sent (still matching the MQMD id).
    Amqp(IdRef<'a>),
    /// The MQMD id of a native message (or one changed by a native application).
    Native(&'a [u8; 24]),
}

/// A current id, and whether the stored AMQP properties section disagrees with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CurrentId<'a> {
    /// The id to show; `None` when the message has none.
    pub view: Option<IdView<'a>>,
    /// True when a message from AMQP must have its properties section's id replaced.
    pub stale: bool,
}

/// A ByteString property's bytes, borrowed from the encoding.
pub(crate) fn byte_string<'a>(properties: &'a [u8], name: &str) -> Option<&'a [u8]> {
    as_byte_string(MessageProperties::find(properties, name))
}

fn as_byte_string(p: Option<PropertyRef<'_>>) -> Option<&[u8]> {
    match p? {
        PropertyRef::ByteString(b) => Some(b),
        _ => None,
    }
}

/// The reserved properties that carry what a message kept of its AMQP origin, read in
/// one pass over its encoded properties (a delivery needs all of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Origin<'a> {
    /// The raw message-annotations/properties/application-properties; `None` for a
    /// native message.
    pub sections: Option<&'a [u8]>,
    /// The exact AMQP message-id, encoded.
    pub message_id: Option<&'a [u8]>,
    /// The exact AMQP correlation-id, encoded.
    pub correlation_id: Option<&'a [u8]>,
    /// The raw footer.
    pub footer: Option<&'a [u8]>,
}

impl<'a> Origin<'a> {
    /// Reads them from a message's encoded properties.
    pub fn read(properties: &'a [u8]) -> Origin<'a> {
        let [sections, message_id, correlation_id, footer] = MessageProperties::find_each(
            properties,
            [
                PROP_SECTIONS,
                PROP_MESSAGE_ID,
                PROP_CORRELATION_ID,
                PROP_FOOTER,
            ],
        )
        .map(as_byte_string);
        Origin {
            sections,
            message_id,
            correlation_id,
            footer,
        }
    }

    /// The message-id the message has now. A message from AMQP whose producer sent none
    /// has none (its MsgId is the queue manager's own), so the bare message stays as
    /// sent.
    pub fn message_id(&self, md: &'a MessageDescriptor) -> CurrentId<'a> {
        let from_amqp = self.message_id.is_some() || self.sections.is_some();
        current(&md.msg_id, self.message_id, !from_amqp)
    }

    /// The correlation-id the message has now.
    pub fn correlation_id(&self, md: &'a MessageDescriptor) -> CurrentId<'a> {
        current(&md.correl_id, self.correlation_id, true)
    }
}

/// The message-id a message has now (see [`Origin::message_id`]).
pub(crate) fn message_id<'a>(md: &'a MessageDescriptor, properties: &'a [u8]) -> CurrentId<'a> {
    Origin::read(properties).message_id(md)
}

/// The correlation-id a message has now.
pub(crate) fn correlation_id<'a>(md: &'a MessageDescriptor, properties: &'a [u8]) -> CurrentId<'a> {
    current(
        &md.correl_id,
        byte_string(properties, PROP_CORRELATION_ID),
        true,
    )
}

/// The exact AMQP correlation-id stored with a message, if any, current or not (no
/// digest taken: for comparing with an id already known to match the CorrelId).
pub(crate) fn stored_correlation_id(properties: &[u8]) -> Option<IdRef<'_>> {
    byte_string(properties, PROP_CORRELATION_ID).and_then(IdRef::decode)
}

fn current<'a>(mq: &'a [u8; 24], stored: Option<&'a [u8]>, show_mq: bool) -> CurrentId<'a> {
    let exact = stored.and_then(IdRef::decode);
    let view = match exact {
        Some(id) if id.mq_id() == *mq => Some(IdView::Amqp(id)),
        _ if *mq == NONE_ID => None,
        None if !show_mq => None,
        _ => Some(IdView::Native(mq)),
    };
    let stale = !matches!(
        (stored, view),
        (Some(_), Some(IdView::Amqp(_))) | (None, None)
    );
    CurrentId { view, stale }
}

/// The stored sections' properties section decoded (default when there is none), and
/// the byte range it fills in `sections` (an empty range where it belongs when there is
/// none): for the rare reads and rewrites that need more than the ids. Copies the
/// sections once; `None` when they do not scan or decode.
pub(crate) fn decode_properties(sections: &[u8]) -> Option<(Properties, Range<usize>)> {
    let raw = RawSections::scan(Bytes::copy_from_slice(sections)).ok()?;
    match (
        raw.section(SectionKind::Properties),
        raw.span(SectionKind::Properties),
    ) {
        (Some(p), Some(span)) => Some((codec::from_bytes::<Properties>(p).ok()?, span)),
        _ => {
            let at = raw
                .span(SectionKind::MessageAnnotations)
                .map_or(0, |s| s.end);
            Some((Properties::default(), at..at))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferry_mqi::PropertyValue;

    fn props(mid: Option<IdRef<'_>>, cid: Option<IdRef<'_>>, amqp: bool) -> Bytes {
        let mut p = MessageProperties::new();
        for (name, id) in [(PROP_MESSAGE_ID, mid), (PROP_CORRELATION_ID, cid)] {
            if let Some(id) = id {
                p.set_reserved(name, PropertyValue::ByteString(id.encode()))
                    .unwrap();
            }
        }
        if amqp {
            p.set_reserved(PROP_SECTIONS, PropertyValue::ByteString(Bytes::new()))
                .unwrap();
        }
        p.encode()
    }

    #[test]
    fn stored_ids_win_while_the_mqmd_id_derives_from_them() {
        let id = IdRef::String("ID:abc:1");
        let md = MessageDescriptor {
            msg_id: id.mq_id(),
            correl_id: id.mq_id(),
            ..Default::default()
        };
        let p = props(Some(id), Some(id), true);
        let fresh = CurrentId {
            view: Some(IdView::Amqp(id)),
            stale: false,
        };
        assert_eq!(message_id(&md, &p), fresh);
        assert_eq!(correlation_id(&md, &p), fresh);

        let changed = MessageDescriptor {
            msg_id: [7; 24],
            correl_id: NONE_ID,
            ..md
        };
        let m = message_id(&changed, &p);
        assert_eq!(m.view, Some(IdView::Native(&[7; 24])));
        assert!(m.stale);
        let c = correlation_id(&changed, &p);
        assert_eq!(c.view, None);
        assert!(c.stale);
    }

    #[test]
    fn amqp_messages_without_ids_keep_none_native_ones_show_mqmd() {
        let md = MessageDescriptor {
            msg_id: [1; 24],
            ..Default::default()
        };
        let amqp = props(None, None, true);
        assert_eq!(
            message_id(&md, &amqp),
            CurrentId {
                view: None,
                stale: false
            }
        );
        assert_eq!(correlation_id(&md, &amqp).view, None);
        let native = message_id(&md, &[]);
        assert_eq!(native.view, Some(IdView::Native(&[1; 24])));
        // A CorrelId set on an AMQP message by someone else must be written in.
        let md = MessageDescriptor {
            correl_id: [2; 24],
            ..md
        };
        assert!(correlation_id(&md, &amqp).stale);
    }
}
