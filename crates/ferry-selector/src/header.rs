//! The JMS header fields (and JMSX properties) a selector may name.
//!
//! Identifiers are case-sensitive, as in Java: only the exact spellings below refer to a
//! header; anything else, `jmspriority` or `JMS_IBM_Format` included, is an application
//! property looked up by name. Resolving the names once at parse time lets evaluation ask
//! the message for a header by enum, with no string comparison.

use std::fmt;

/// A message header field a selector can refer to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Header {
    /// `JMSDeliveryMode`: compares to the strings `'PERSISTENT'` and `'NON_PERSISTENT'`.
    DeliveryMode,
    /// `JMSPriority`: 0-9.
    Priority,
    /// `JMSMessageID`: a string, or NULL when the message has none.
    MessageId,
    /// `JMSTimestamp`: milliseconds since the epoch.
    Timestamp,
    /// `JMSCorrelationID`: a string, or NULL.
    CorrelationId,
    /// `JMSType`: a string, or NULL.
    Type,
    /// `JMSExpiration`: milliseconds since the epoch, 0 for never.
    Expiration,
    /// `JMSRedelivered`: a boolean.
    Redelivered,
    /// `JMSXDeliveryCount`: how many times the message has been delivered.
    DeliveryCount,
    /// `JMSXGroupID`: the message group.
    GroupId,
    /// `JMSXGroupSeq`: the position in the group.
    GroupSeq,
    /// `JMSXUserID`: the sending user.
    UserId,
}

impl Header {
    /// Every header, in declaration order.
    pub const ALL: [Header; 12] = [
        Header::DeliveryMode,
        Header::Priority,
        Header::MessageId,
        Header::Timestamp,
        Header::CorrelationId,
        Header::Type,
        Header::Expiration,
        Header::Redelivered,
        Header::DeliveryCount,
        Header::GroupId,
        Header::GroupSeq,
        Header::UserId,
    ];

    /// The identifier a selector uses for this header.
    pub const fn name(self) -> &'static str {
        match self {
            Header::DeliveryMode => "JMSDeliveryMode",
            Header::Priority => "JMSPriority",
            Header::MessageId => "JMSMessageID",
            Header::Timestamp => "JMSTimestamp",
            Header::CorrelationId => "JMSCorrelationID",
            Header::Type => "JMSType",
            Header::Expiration => "JMSExpiration",
            Header::Redelivered => "JMSRedelivered",
            Header::DeliveryCount => "JMSXDeliveryCount",
            Header::GroupId => "JMSXGroupID",
            Header::GroupSeq => "JMSXGroupSeq",
            Header::UserId => "JMSXUserID",
        }
    }

    /// The header an identifier names (exact, case-sensitive match), if any.
    pub fn from_name(name: &str) -> Option<Header> {
        if !name.starts_with("JMS") {
            return None;
        }
        Header::ALL.into_iter().find(|h| h.name() == name)
    }
}

impl fmt::Display for Header {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for h in Header::ALL {
            assert_eq!(Header::from_name(h.name()), Some(h));
        }
    }

    #[test]
    fn names_are_case_sensitive_and_others_are_properties() {
        assert_eq!(Header::from_name("jmspriority"), None);
        assert_eq!(Header::from_name("JMSPRIORITY"), None);
        assert_eq!(Header::from_name("JMSXFoo"), None);
        assert_eq!(Header::from_name("color"), None);
    }
}
