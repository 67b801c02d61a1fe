//! Every numbered message Ferry prints, in one table: the error log, MQSC responses and
//! the `ferry` command all take their text from here.
//!
//! Ids follow IBM MQ's AMQ numbers with a FRY prefix (AMQ8003I "queue manager started" is
//! FRY8003I here, AMQ8006I "queue created" is FRY8006I), so administrators find their way
//! and grep logs the way they do today; messages MQ has no counterpart for take free
//! numbers in the family they belong to. Each row has what IBM documents for an AMQ
//! message: the id with its severity letter, the text with positional inserts `{0}`,
//! `{1}`..., an explanation and a user response (which may use the same inserts).
//!
//! - [`catalogue`] holds the rows; [`ALL`] lists them in number order, and a compile-time
//!   check refuses a number used twice.
//! - [`docs`] renders docs/messages.md from the table; a test keeps the file current
//!   (`FERRY_BLESS=1 cargo test -p ferry-messages` rewrites it).
//!
//! The crate depends on nothing and does no I/O, so every crate that prints a message can
//! depend on it.

pub mod catalogue;
pub mod docs;

pub use catalogue::*;

use std::fmt::{self, Display};

/// How serious a message is: the letter after the number, as in MQ's AMQnnnnX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// I: information; nothing is wrong.
    Info,
    /// W: a warning; something to look at.
    Warning,
    /// E: an error; a request failed or a part of the queue manager stopped.
    Error,
    /// S: a severe error; an unexpected failure.
    Severe,
}

impl Severity {
    /// The letter printed after the number.
    pub const fn letter(self) -> char {
        match self {
            Severity::Info => 'I',
            Severity::Warning => 'W',
            Severity::Error => 'E',
            Severity::Severe => 'S',
        }
    }

    /// The severity a letter stands for, if it is one of I, W, E, S.
    pub fn from_letter(letter: char) -> Option<Severity> {
        match letter {
            'I' => Some(Severity::Info),
            'W' => Some(Severity::Warning),
            'E' => Some(Severity::Error),
            'S' => Some(Severity::Severe),
            _ => None,
        }
    }

    /// The word IBM's documentation uses for it.
    pub const fn word(self) -> &'static str {
        match self {
            Severity::Info => "Information",
            Severity::Warning => "Warning",
            Severity::Error => "Error",
            Severity::Severe => "Severe error",
        }
    }
}

/// One row of the table: a numbered message.
#[derive(Debug, PartialEq, Eq)]
pub struct Message {
    /// The number, e.g. 8003 (MQ's AMQ number where MQ has the message).
    pub number: u32,
    /// How serious it is.
    pub severity: Severity,
    /// The text, with `{n}` inserts.
    pub text: &'static str,
    /// What happened (the error log's EXPLANATION), with the same inserts.
    pub explanation: &'static str,
    /// What to do about it (the error log's ACTION), with the same inserts.
    pub response: &'static str,
}

impl Message {
    /// The id, e.g. `FRY8003I`.
    pub fn id(&self) -> String {
        format!("FRY{:04}{}", self.number, self.severity.letter())
    }

    /// The printed line, `FRY8003I: Ferry queue manager 'QM1' started using Ferry 0.1.0.`,
    /// with the inserts filled in.
    pub fn format(&self, inserts: &[&dyn Display]) -> String {
        format!("{}: {}", self.id(), fill(self.text, inserts))
    }

    /// The printed line of a message that takes no inserts.
    pub fn line(&self) -> String {
        self.format(&[])
    }

    /// The explanation and user response with inserts filled, for the error log.
    pub fn detail(&self, inserts: &[&dyn Display]) -> (String, String) {
        (
            fill(self.explanation, inserts),
            fill(self.response, inserts),
        )
    }
}

impl Display for Message {
    /// The id, as MQSC responses and logs quote it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FRY{:04}{}", self.number, self.severity.letter())
    }
}

/// The row for message `number`, if the table has one.
pub fn by_number(number: u32) -> Option<&'static Message> {
    ALL.iter().copied().find(|m| m.number == number)
}

/// `template` with each `{n}` replaced by `inserts[n]`.
pub fn fill(template: &str, inserts: &[&dyn Display]) -> String {
    let mut out = template.to_string();
    for (i, v) in inserts.iter().enumerate() {
        out = out.replace(&format!("{{{i}}}"), &v.to_string());
    }
    out
}

/// Whether `all` is in strictly increasing number order (so no number is used twice):
/// checked at compile time on [`ALL`].
pub const fn strictly_increasing(all: &[&Message]) -> bool {
    let mut i = 1;
    while i < all.len() {
        if all[i - 1].number >= all[i].number {
            return false;
        }
        i += 1;
    }
    true
}

const _: () = assert!(
    strictly_increasing(ALL),
    "catalogue.rs: message numbers must be unique and listed in increasing order"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_lines_are_formatted_as_mq_does() {
        assert_eq!(
            QMGR_STARTED.format(&[&"QM1", &"0.1.0"]),
            "FRY8003I: Ferry queue manager 'QM1' started using Ferry 0.1.0."
        );
        assert_eq!(QMGR_UNKNOWN.id(), "FRY8118E");
        assert_eq!(QUEUE_CREATED.line(), "FRY8006I: Ferry queue created.");
        assert_eq!(GENERAL_ERROR.to_string(), "FRY8101S");
        assert_eq!(
            OBJECT_NOT_FOUND.format(&[&"APP.Q"]),
            "FRY8147E: Ferry object APP.Q not found."
        );
    }

    #[test]
    fn numbers_are_unique_and_in_order() {
        assert!(strictly_increasing(ALL));
        let mut seen = std::collections::HashSet::new();
        for m in ALL {
            assert!(seen.insert(m.number), "FRY{} twice", m.number);
            assert!(
                (1000..=9999).contains(&m.number),
                "{} has not 4 digits",
                m.id()
            );
        }
        let twice = [&QUEUE_CREATED, &QUEUE_CREATED];
        assert!(!strictly_increasing(&twice));
    }

    #[test]
    fn every_row_is_documented() {
        for m in ALL {
            assert!(!m.text.is_empty(), "{} has no text", m.id());
            assert!(!m.explanation.is_empty(), "{} has no explanation", m.id());
            assert!(!m.response.is_empty(), "{} has no user response", m.id());
            assert_eq!(by_number(m.number), Some(*m));
        }
    }

    #[test]
    fn inserts_fill_explanation_and_response() {
        let (expl, resp) = QMGR_UNKNOWN.detail(&[&"QM9", &"/var/ferry/qmgrs"]);
        assert!(expl.contains("/var/ferry/qmgrs"), "{expl}");
        assert!(resp.contains("ferry create QM9"), "{resp}");
        assert_eq!(Severity::from_letter('S'), Some(Severity::Severe));
        assert_eq!(Severity::from_letter('X'), None);
    }
}
