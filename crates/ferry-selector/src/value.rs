//! What a selector reads from a message: typed values, and the trait a message implements.
//!
//! JMS property types collapse to four: every integral type is a `Long`, `float` and
//! `double` are a `Double`. Strings are `Cow` so a message can lend its own text and the
//! common comparison (`JMSCorrelationID = 'x'`) allocates nothing. A missing header or
//! property is `None`, which the selector treats as SQL NULL.

use std::borrow::Cow;

use crate::Header;

/// A header or property value as a selector sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// A JMS boolean.
    Bool(bool),
    /// Any JMS integral type (byte, short, int, long).
    Long(i64),
    /// A JMS float or double.
    Double(f64),
    /// A JMS string, borrowed from the message where possible.
    String(Cow<'a, str>),
}

impl<'a> Value<'a> {
    /// A string value that borrows `s`.
    pub fn str(s: &'a str) -> Self {
        Value::String(Cow::Borrowed(s))
    }
}

/// The message a selector is evaluated against. The caller implements it over its own
/// message representation; lookups should be cheap and allocation-free where possible.
pub trait PropertySource {
    /// The value of a header field, `None` when the message has none (SQL NULL).
    ///
    /// For [`Header::DeliveryMode`] return `Value::String("PERSISTENT" | "NON_PERSISTENT")`;
    /// the JMS constants `Long(2)` / `Long(1)` are accepted too and mapped to those strings.
    fn header(&self, header: Header) -> Option<Value<'_>>;

    /// The value of an application (or JMSX / JMS_vendor) property, `None` when absent.
    fn property(&self, name: &str) -> Option<Value<'_>>;
}

/// A message with no headers and no properties: every identifier is NULL.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProperties;

impl PropertySource for NoProperties {
    fn header(&self, _header: Header) -> Option<Value<'_>> {
        None
    }

    fn property(&self, _name: &str) -> Option<Value<'_>> {
        None
    }
}
