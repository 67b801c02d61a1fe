//! Syntax errors: what was wrong and where in the command.
//!
//! A [`ParseError`] keeps the command text and the byte offset just past the offending
//! word, so runmqsc can print MQ's "at or near end of command segment below" with the
//! segment, followed by the reason ([`ParseErrorKind`]'s text).

use ferry_objects::AttrError;

/// What made a command invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    /// A quoted value without its closing quote.
    #[error("a quoted value has no closing quote")]
    UnclosedQuote,
    /// The command is empty.
    #[error("the command is empty")]
    Empty,
    /// Longer than an MQSC command may be ([`crate::parser::MAX_COMMAND_LENGTH`]).
    #[error("the command is longer than {max} bytes, the most an MQSC command may have (MQRCCF_COMMAND_LENGTH_ERROR)")]
    TooLong {
        /// The limit.
        max: usize,
    },
    /// The first word is not an MQSC command.
    #[error("{0} is not an MQSC command")]
    UnknownCommand(String),
    /// The command word is not followed by an object type.
    #[error("{verb} needs an object type, e.g. {verb} QLOCAL(name)")]
    MissingObject {
        /// The command word.
        verb: String,
    },
    /// The object type is not one this command takes.
    #[error("{object} is not an object type {verb} accepts")]
    UnknownObject {
        /// The command word.
        verb: String,
        /// The object type given.
        object: String,
    },
    /// The object type has no name in parentheses.
    #[error("{object} needs a name in parentheses, e.g. {object}(NAME)")]
    MissingName {
        /// The object type.
        object: String,
    },
    /// The object name breaks MQ's name rules.
    #[error("'{name}' is not a valid {object} name: {reason}")]
    BadName {
        /// The object type.
        object: String,
        /// The name given.
        name: String,
        /// The rule broken.
        reason: String,
    },
    /// A keyword that is neither an attribute nor an option of this command.
    #[error("{keyword} is not a valid keyword for {object}")]
    UnknownKeyword {
        /// The keyword given.
        keyword: String,
        /// What the command acts on.
        object: String,
    },
    /// A value the attribute table refuses.
    #[error(transparent)]
    Attr(#[from] AttrError),
    /// A number too large to hold.
    #[error("{keyword}({value}) is not a number in range")]
    NumberTooLarge {
        /// The attribute.
        keyword: String,
        /// The value given.
        value: String,
    },
    /// A keyword that needs `(value)` has none.
    #[error("{keyword} needs a value in parentheses")]
    ValueRequired {
        /// The keyword.
        keyword: String,
    },
    /// A bare keyword was given a value.
    #[error("{keyword} takes no value")]
    ValueNotAllowed {
        /// The keyword.
        keyword: String,
    },
    /// More than one value inside the parentheses.
    #[error("{keyword} takes a single value")]
    SingleValue {
        /// The keyword.
        keyword: String,
    },
    /// The same keyword twice.
    #[error("{keyword} is specified more than once")]
    Duplicate {
        /// The keyword.
        keyword: String,
    },
    /// Two keywords that exclude each other.
    #[error("{first} and {second} cannot both be specified")]
    Conflict {
        /// The one given first.
        first: String,
        /// The one given second.
        second: String,
    },
    /// A token where none was expected (a stray quote or parenthesis).
    #[error("unexpected {0}")]
    Unexpected(String),
    /// `(` without its `)`.
    #[error("a parenthesis is not closed")]
    UnclosedParen,
    /// An attribute set when the object is defined that ALTER cannot change (TOPICSTR).
    #[error("{keyword} is fixed when the {object} is defined and cannot be altered; delete the object and define it again to change it")]
    Fixed {
        /// The attribute.
        keyword: String,
        /// The kind of object.
        object: String,
    },
    /// A required keyword is missing.
    #[error("{command} needs {keyword}")]
    Missing {
        /// The command.
        command: String,
        /// The keyword it needs.
        keyword: String,
    },
    /// A generic name (ending in `*`) where only a full name is allowed, or a `*`
    /// elsewhere than at the end.
    #[error("'{0}' is not allowed here: only DISPLAY takes generic names, with one * at the end")]
    Generic(String),
    /// A malformed WHERE clause.
    #[error("WHERE needs (keyword operator value): {0}")]
    Where(String),
    /// An operator that does not fit the attribute.
    #[error("operator {op} cannot be used with {keyword}; use one of {allowed}")]
    Operator {
        /// The operator given.
        op: String,
        /// The attribute.
        keyword: String,
        /// The operators allowed.
        allowed: String,
    },
    /// A value not in the keyword's list, for options that are not table attributes
    /// (TYPE, CHLTYPE).
    #[error("{keyword}({value}) is not valid; use one of {allowed}")]
    BadOption {
        /// The option.
        keyword: String,
        /// The value given.
        value: String,
        /// The accepted values.
        allowed: String,
    },
}

/// A syntax error in one command.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct ParseError {
    /// What was wrong.
    pub kind: ParseErrorKind,
    /// The command text (one logical command).
    pub command: String,
    /// Byte offset just past the word where the error was noticed.
    pub position: usize,
}

impl ParseError {
    /// The error of a command longer than [`crate::parser::MAX_COMMAND_LENGTH`]: it keeps
    /// only the command's beginning, for runmqsc to show.
    pub fn too_long(command: &str) -> Self {
        const SHOWN: usize = 64;
        let mut end = command.len().min(SHOWN);
        while !command.is_char_boundary(end) {
            end -= 1;
        }
        let shown = format!("{} ...", &command[..end]);
        let position = shown.len();
        ParseError {
            kind: ParseErrorKind::TooLong {
                max: crate::parser::MAX_COMMAND_LENGTH,
            },
            command: shown,
            position,
        }
    }

    /// An error of `kind` noticed at `position` in `command`.
    pub fn new(kind: ParseErrorKind, command: &str, position: usize) -> Self {
        ParseError {
            kind,
            command: command.to_string(),
            position: position.min(command.len()),
        }
    }

    /// The command up to and including the offending word, as runmqsc prints it.
    pub fn segment(&self) -> &str {
        let mut end = self.position.min(self.command.len());
        while !self.command.is_char_boundary(end) {
            end -= 1;
        }
        self.command[..end].trim()
    }
}
