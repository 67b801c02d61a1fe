//! The one error a selector can fail with: where in the text, and what was wrong there.
//!
//! Its `Display` is the message a JMS client sees (Qpid turns the server's
//! `amqp:invalid-field` into an `InvalidSelectorException` carrying it), so it always names
//! a 1-based character column and says what was expected, e.g.
//! `invalid selector at column 7: expected a value after '=', found the end of the selector`.

use thiserror::Error;

/// A selector that cannot be compiled: the 1-based character column and the reason.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid selector at column {column}: {kind}")]
pub struct SelectorError {
    /// 1-based column (in characters, not bytes) where the problem was found.
    pub column: usize,
    /// What was wrong there.
    pub kind: ErrorKind,
}

impl SelectorError {
    pub(crate) fn new(column: usize, kind: ErrorKind) -> Self {
        SelectorError { column, kind }
    }
}

/// Why a selector was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ErrorKind {
    /// The selector is empty or only whitespace (JMS treats that as "no selector": callers
    /// should not compile it at all).
    #[error("the selector is empty")]
    Empty,
    /// A character that starts no token.
    #[error("unexpected character '{0}'")]
    UnexpectedChar(char),
    /// A string literal without its closing quote.
    #[error("string literal is not closed with '")]
    UnterminatedString,
    /// A malformed numeric literal (e.g. `0x`, `1e`, `09`, `12abc`, `1.5L`).
    #[error("invalid number '{0}'")]
    InvalidNumber(String),
    /// A numeric literal outside the range of a Java long or a finite double.
    #[error("number '{0}' is out of range")]
    NumberOutOfRange(String),
    /// The grammar wanted something else here.
    #[error("expected {expected}{}, found {found}", after.as_ref().map(|a| format!(" after '{a}'")).unwrap_or_default())]
    Expected {
        /// What the parser was looking for, in words ("a value", "')'").
        expected: &'static str,
        /// The token just before, when there is one.
        after: Option<String>,
        /// What was there instead, in words ("'b'", "the end of the selector").
        found: String,
    },
    /// An operand whose type is known from the text and is wrong for its operator, e.g.
    /// `'a' + 1` or `NOT 5` (the JMS spec leaves these undefined; Ferry rejects them).
    #[error("expected {expected}, found {found}")]
    WrongType {
        /// What the operator needs ("a number", "a string", "a condition").
        expected: &'static str,
        /// What the operand is.
        found: &'static str,
    },
    /// A LIKE ... ESCAPE literal that is not exactly one character.
    #[error("the ESCAPE literal must be exactly one character")]
    EscapeLength,
    /// A LIKE pattern that ends with its escape character.
    #[error("the LIKE pattern ends with its escape character")]
    DanglingEscape,
    /// Parentheses, NOT, signs or operator chains nested deeper than the parser allows.
    #[error("the selector is nested more than {0} levels deep")]
    TooDeep(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_column_and_expectation() {
        let e = SelectorError::new(
            7,
            ErrorKind::Expected {
                expected: "a value",
                after: Some("=".into()),
                found: "the end of the selector".into(),
            },
        );
        assert_eq!(
            e.to_string(),
            "invalid selector at column 7: expected a value after '=', found the end of the selector"
        );
    }

    #[test]
    fn message_without_previous_token() {
        let e = SelectorError::new(
            1,
            ErrorKind::Expected {
                expected: "a condition",
                after: None,
                found: "')'".into(),
            },
        );
        assert_eq!(
            e.to_string(),
            "invalid selector at column 1: expected a condition, found ')'"
        );
    }
}
