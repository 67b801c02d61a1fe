//! JMS selectors from AMQP source filters (`jms-selector` / `selector`), evaluated over
//! stored MQ messages: the engine's [`MessageFilter`] for an AMQP consumer.
//!
//! [`JmsSelection`] compiles the selector once; per message it reads JMS headers the way
//! a Qpid JMS consumer would see them after delivery (`to_amqp`):
//! - JMSMessageID / JMSCorrelationID: the exact AMQP id in Qpid's spelling (`ID:...`,
//!   `ID:AMQP_UUID:...`, `ID:AMQP_ULONG:...`, `ID:AMQP_BINARY:<HEX>`,
//!   `ID:AMQP_NO_PREFIX:...` for message ids; a correlation id string without `ID:` as
//!   it is), or for a native id `ID:` + 48 hex digits as IBM MQ JMS shows it;
//! - JMSPriority, JMSDeliveryMode (`'PERSISTENT'` / `'NON_PERSISTENT'`), JMSRedelivered
//!   (BackoutCount > 0) and JMSXDeliveryCount (BackoutCount + 1) from the MQMD;
//! - JMSType from the `JMSType` property (AMQP subject);
//! - JMSTimestamp, JMSExpiration, JMSXUserID, JMSXGroupID, JMSXGroupSeq from the stored
//!   AMQP properties section (decoded only when a selector names them), else from the
//!   MQMD (PutDate/PutTime, Expiry, UserIdentifier) and the JMSX properties;
//! - anything else: the MQ message property of that name (application properties).
//!
//! Request/reply: for `JMSCorrelationID = 'x'` (alone or ANDed),
//! [`JmsSelection::correlation_lookup`] gives the CorrelId the engine should look up:
//! `'x'` read back into the typed AMQP id Qpid would send ([`parse_jms_id`]) and mapped
//! by [`mq_id`], the same derivation a put uses. The filter then confirms the exact id on
//! each candidate. One id has several JMS spellings (a native reply's CorrelId is
//! `ID:<48 hex>` to MQ JMS but `ID:AMQP_BINARY:<HEX>` to Qpid, and a native responder
//! copies a digest MsgId into CorrelId); so when the message's current id is the very
//! id the pinned literal denotes (the same AMQP id, or for a native id the same 24
//! bytes), the header reads as that literal and the comparison holds. `JMSMessageID =
//! 'x'` works the same with [`JmsSelection::message_lookup`].

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;

use ferry_amqp::{MessageId, Properties};
use ferry_engine::MessageFilter;
use ferry_mqi::descriptor::NONE_ID;
use ferry_mqi::{MessageDescriptor, MessageProperties, PropertyRef};
use ferry_selector::{ErrorKind, Header, PropertySource, Selector, SelectorError, Value};

use super::ids::{jms_correlation_id, jms_message_id, mq_id, native_jms_id, parse_jms_id, IdRef};
use super::put_time::put_ms;
use super::stored::{self, IdView};
use super::{PROP_JMS_TYPE, PROP_SECTIONS};

/// A compiled JMS selector over MQ messages, with the id lookups its text pins.
pub struct JmsSelection {
    selector: Selector,
    message_pin: Option<Pin>,
    correlation_pin: Option<Pin>,
    /// The selector is `JMSCorrelationID = 'x'` and nothing else (request/reply's
    /// reply consumer): a message whose id the pin denotes matches without evaluating.
    correlation_only: bool,
}

/// An id a selector requires (`JMSCorrelationID = 'literal'`).
#[derive(Debug, Clone)]
struct Pin {
    literal: String,
    id: MessageId,
    mq: [u8; 24],
}

impl Pin {
    fn new(literal: &str) -> Self {
        let id = parse_jms_id(literal);
        Pin {
            mq: mq_id(&id),
            id,
            literal: literal.to_owned(),
        }
    }

    /// True when the CorrelId and the stored AMQP correlation-id show the message's
    /// current correlation id to be the one this literal denotes, decided without a
    /// digest: the CorrelId must be this id's, and then either the stored id is this very
    /// id (current, since it maps to the CorrelId) or there is none that decodes (the
    /// CorrelId is shown as its 24 bytes). False means "not sure", never "no".
    fn surely_denotes(&self, md: &MessageDescriptor, properties: &[u8]) -> bool {
        if md.correl_id != self.mq || self.mq == NONE_ID {
            return false;
        }
        match stored::stored_correlation_id(properties) {
            Some(id) => id == IdRef::of(&self.id),
            None => true,
        }
    }

    /// True when the message's current id is the id this literal denotes.
    fn denotes(&self, view: IdView<'_>) -> bool {
        match view {
            IdView::Amqp(id) => id == IdRef::of(&self.id),
            IdView::Native(bytes) => *bytes == self.mq,
        }
    }
}

impl JmsSelection {
    /// Compiles the selector text of an AMQP source filter. An empty or blank selector
    /// is no selector (`Ok(None)`), as JMS says; a bad one is the error to refuse the
    /// link with (`amqp:invalid-field`).
    pub fn parse(text: &str) -> Result<Option<Self>, SelectorError> {
        let selector = match Selector::parse(text) {
            Ok(s) => s,
            Err(e) if e.kind == ErrorKind::Empty => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(Some(JmsSelection {
            message_pin: selector.message_id_lookup().map(Pin::new),
            correlation_pin: selector.correlation_id_lookup().map(Pin::new),
            correlation_only: selector.only_correlation_id().is_some(),
            selector,
        }))
    }

    /// The compiled selector (its `Display` is the normalised text).
    pub fn selector(&self) -> &Selector {
        &self.selector
    }

    /// The CorrelId every selected message has (candidates for the engine's CorrelId
    /// index), when the selector pins `JMSCorrelationID`.
    pub fn correlation_lookup(&self) -> Option<[u8; 24]> {
        self.correlation_pin.as_ref().map(|p| p.mq)
    }

    /// The MsgId every selected message has, when the selector pins `JMSMessageID`.
    pub fn message_lookup(&self) -> Option<[u8; 24]> {
        self.message_pin.as_ref().map(|p| p.mq)
    }
}

impl MessageFilter for JmsSelection {
    fn matches(&self, md: &MessageDescriptor, properties: &[u8]) -> bool {
        // The selector compares nothing but JMSCorrelationID with the pinned literal:
        // when the message's current id is the one the literal denotes, the header reads
        // as the literal (see `MqSource::id`) and it matches without evaluating. Every
        // other case is evaluated in full (an id may still be spelt as the literal).
        if self.correlation_only {
            if let Some(pin) = &self.correlation_pin {
                if pin.surely_denotes(md, properties) {
                    return true;
                }
            }
        }
        self.selector.matches(&MqSource {
            selection: self,
            md,
            properties,
            amqp: OnceCell::new(),
        })
    }
}

impl fmt::Debug for JmsSelection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("JmsSelection")
            .field(&self.selector.to_string())
            .finish()
    }
}

/// One stored message as a selector sees it.
struct MqSource<'a> {
    selection: &'a JmsSelection,
    md: &'a MessageDescriptor,
    properties: &'a [u8],
    /// The stored AMQP properties section, decoded on first need.
    amqp: OnceCell<Option<Properties>>,
}

impl MqSource<'_> {
    fn amqp(&self) -> Option<&Properties> {
        self.amqp
            .get_or_init(|| {
                stored::byte_string(self.properties, PROP_SECTIONS)
                    .and_then(stored::decode_properties)
                    .map(|(p, _)| p)
            })
            .as_ref()
    }

    /// An id header: the pinned literal when the message has the id it denotes, else
    /// the id's JMS spelling (borrowed for string ids: no allocation).
    fn id<'s>(
        &'s self,
        view: Option<IdView<'s>>,
        pin: Option<&'s Pin>,
        show: fn(IdRef<'s>) -> Cow<'s, str>,
    ) -> Option<Value<'s>> {
        let view = view?;
        if let Some(pin) = pin.filter(|p| p.denotes(view)) {
            return Some(Value::str(&pin.literal));
        }
        Some(Value::String(match view {
            IdView::Amqp(id) => show(id),
            IdView::Native(bytes) => Cow::Owned(native_jms_id(bytes)),
        }))
    }

    fn mq_property(&self, name: &str) -> Option<PropertyRef<'_>> {
        MessageProperties::find(self.properties, name)
    }

    fn expiration(&self) -> i64 {
        if let Some(at) = self.amqp().and_then(|p| p.absolute_expiry_time) {
            if at.0 > 0 {
                return at.0;
            }
        }
        match (self.md.expiry > 0, put_ms(self.md)) {
            (true, Some(put)) => put + i64::from(self.md.expiry) * 100,
            _ => 0,
        }
    }
}

impl PropertySource for MqSource<'_> {
    fn header(&self, header: Header) -> Option<Value<'_>> {
        let md = self.md;
        match header {
            Header::DeliveryMode => Some(Value::str(if md.is_persistent() {
                "PERSISTENT"
            } else {
                "NON_PERSISTENT"
            })),
            Header::Priority => Some(Value::Long(md.priority.into())),
            Header::MessageId => self.id(
                stored::message_id(md, self.properties).view,
                self.selection.message_pin.as_ref(),
                jms_message_id,
            ),
            Header::CorrelationId => self.id(
                stored::correlation_id(md, self.properties).view,
                self.selection.correlation_pin.as_ref(),
                jms_correlation_id,
            ),
            Header::Type => match self.mq_property(PROP_JMS_TYPE)? {
                PropertyRef::String(s) => Some(Value::str(s)),
                _ => None,
            },
            Header::Timestamp => self
                .amqp()
                .and_then(|p| p.creation_time)
                .map(|t| t.0)
                .or_else(|| put_ms(md))
                .map(Value::Long),
            Header::Expiration => Some(Value::Long(self.expiration())),
            Header::Redelivered => Some(Value::Bool(md.backout_count > 0)),
            Header::DeliveryCount => Some(Value::Long(i64::from(md.backout_count) + 1)),
            Header::UserId => match self.amqp().and_then(|p| p.user_id.as_ref()) {
                Some(u) => std::str::from_utf8(u).ok().map(Value::str),
                None => {
                    let u = md.user_identifier.as_str();
                    (!u.is_empty()).then(|| Value::str(u))
                }
            },
            Header::GroupId => match self.amqp().and_then(|p| p.group_id.as_ref()) {
                Some(g) => Some(Value::str(g.as_str())),
                None => self.property("JMSXGroupID"),
            },
            Header::GroupSeq => match self.amqp().and_then(|p| p.group_sequence) {
                Some(n) => Some(Value::Long(n.into())),
                None => self.property("JMSXGroupSeq"),
            },
        }
    }

    fn property(&self, name: &str) -> Option<Value<'_>> {
        if name
            .as_bytes()
            .get(..2)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"mq"))
        {
            return None; // the queue manager's own properties are not selectable
        }
        Some(match self.mq_property(name)? {
            PropertyRef::Boolean(b) => Value::Bool(b),
            PropertyRef::Int8(n) => Value::Long(n.into()),
            PropertyRef::Int16(n) => Value::Long(n.into()),
            PropertyRef::Int32(n) => Value::Long(n.into()),
            PropertyRef::Int64(n) => Value::Long(n),
            PropertyRef::Float32(x) => Value::Double(x.into()),
            PropertyRef::Float64(x) => Value::Double(x),
            PropertyRef::String(s) => Value::str(s),
            PropertyRef::ByteString(_) | PropertyRef::Null => return None,
        })
    }
}
