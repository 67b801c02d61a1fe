//! [`Selector`]: a JMS message selector compiled once and evaluated per message.

use std::fmt;
use std::str::FromStr;

use crate::ast::Expr;
use crate::{eval, lookup, parser, Header, PropertySource, SelectorError};

/// A compiled JMS 2.0 message selector.
///
/// Parse once with [`Selector::parse`]; [`Selector::matches`] is then cheap and allocates
/// nothing for the common comparisons. `Display` gives normalised text that parses back to
/// an equal selector.
#[derive(Clone, PartialEq)]
pub struct Selector {
    expr: Expr,
}

impl Selector {
    /// Compiles selector text. An empty or blank selector is an error
    /// ([`crate::ErrorKind::Empty`]): JMS treats it as "no selector", so callers should
    /// check for that first.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        parser::parse(text).map(|expr| Selector { expr })
    }

    /// Whether the message is selected: the selector is TRUE for it (FALSE and UNKNOWN
    /// both mean no).
    pub fn matches<S: PropertySource + ?Sized>(&self, message: &S) -> bool {
        self.evaluate(message) == Some(true)
    }

    /// The selector's three-valued result for the message: `None` is SQL UNKNOWN.
    pub fn evaluate<S: PropertySource + ?Sized>(&self, message: &S) -> Option<bool> {
        eval::truth(&self.expr, message)
    }

    /// The correlation id a message must have to match, when the selector is
    /// `JMSCorrelationID = 'x'` or an AND with that term: an index key for request/reply.
    /// Candidates found by it must still be checked with [`Selector::matches`].
    pub fn correlation_id_lookup(&self) -> Option<&str> {
        lookup::required_literal(&self.expr, Header::CorrelationId)
    }

    /// The correlation id, when the whole selector is `JMSCorrelationID = 'x'`: a
    /// message matches exactly when its JMSCorrelationID reads `'x'`, so a server that
    /// knows the header equals the literal need not evaluate the selector.
    pub fn only_correlation_id(&self) -> Option<&str> {
        lookup::sole_literal(&self.expr, Header::CorrelationId)
    }

    /// The message id a message must have to match, like
    /// [`Selector::correlation_id_lookup`] for `JMSMessageID = 'x'`.
    pub fn message_id_lookup(&self) -> Option<&str> {
        lookup::required_literal(&self.expr, Header::MessageId)
    }

    #[cfg(test)]
    pub(crate) fn from_expr(expr: Expr) -> Selector {
        Selector { expr }
    }
}

impl FromStr for Selector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Selector::parse(s)
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.expr.fmt(f)
    }
}

impl fmt::Debug for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Selector").field(&self.to_string()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sel(text: &str) -> Selector {
        Selector::parse(text).expect("parses")
    }

    #[test]
    fn is_send_sync_and_debug_shows_text() {
        fn assert_send_sync<T: Send + Sync + 'static>() {}
        assert_send_sync::<Selector>();
        assert_eq!(format!("{:?}", sel("a=1")), "Selector(\"a = 1\")");
    }

    #[test]
    fn correlation_id_lookup_finds_required_equalities() {
        for text in [
            "JMSCorrelationID = 'ID:42'",
            "'ID:42' = JMSCorrelationID",
            "((JMSCorrelationID = 'ID:42'))",
            "JMSCorrelationID = 'ID:42' AND color = 'red'",
            "color = 'red' and (JMSCorrelationID = 'ID:42' AND x > 1)",
            "(JMSCorrelationID = 'ID:42') AND NOT x IS NULL",
        ] {
            assert_eq!(sel(text).correlation_id_lookup(), Some("ID:42"), "{text}");
            assert_eq!(sel(text).message_id_lookup(), None, "{text}");
        }
        for text in [
            "JMSCorrelationID = 'ID:42'",
            "'ID:42' = JMSCorrelationID",
            "((JMSCorrelationID = 'ID:42'))",
        ] {
            assert_eq!(sel(text).only_correlation_id(), Some("ID:42"), "{text}");
        }
        for text in [
            "JMSCorrelationID = 'ID:42' AND color = 'red'",
            "JMSCorrelationID = 'ID:42' OR color = 'red'",
            "JMSMessageID = 'ID:42'",
            "NOT JMSCorrelationID = 'ID:42'",
        ] {
            assert_eq!(sel(text).only_correlation_id(), None, "{text}");
        }
    }

    #[test]
    fn correlation_id_lookup_refuses_what_does_not_pin_the_id() {
        for text in [
            "JMSCorrelationID = 'ID:42' OR color = 'red'",
            "NOT JMSCorrelationID = 'ID:42'",
            "JMSCorrelationID <> 'ID:42'",
            "JMSCorrelationID LIKE 'ID:42'",
            "JMSCorrelationID = correlation",
            "JMSMessageID = 'ID:42'",
            "jmscorrelationid = 'ID:42'",
        ] {
            assert_eq!(sel(text).correlation_id_lookup(), None, "{text}");
        }
    }

    #[test]
    fn message_id_lookup() {
        assert_eq!(
            sel("JMSMessageID = 'ID:7' AND JMSPriority > 4").message_id_lookup(),
            Some("ID:7")
        );
    }

    #[test]
    fn from_str_and_equality() {
        assert_eq!("A = 1 or b".parse::<Selector>(), Ok(sel("(A = 1) OR b")));
        assert_ne!(sel("a = 1"), sel("a = 2"));
        assert_ne!(sel("a = 1"), sel("A = 1"));
    }
}
