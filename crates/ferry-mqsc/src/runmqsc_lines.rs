//! The lines runmqsc prints without a message number: the banner and the summary at the
//! end of input. Every numbered response comes from the ferry-messages table; these few
//! are MQ's unnumbered lines, kept word for word so scripts that read them carry over.
//! docs/mqsc.md lists them, generated from [`LINES`].

use std::fmt::Display;

/// One unnumbered line: a name for the docs and its text with `{0}` inserts.
#[derive(Debug)]
pub struct Line {
    /// When runmqsc prints it.
    pub when: &'static str,
    /// The text, with `{0}` for its insert.
    pub text: &'static str,
}

impl Line {
    /// The line with its inserts filled in.
    pub fn format(&self, inserts: &[&dyn Display]) -> String {
        ferry_messages::fill(self.text, inserts)
    }
}

/// The banner: `{0}` is the queue manager's name.
pub const STARTING: Line = Line {
    when: "banner",
    text: "Starting MQSC for queue manager {0}.",
};
/// Summary: commands read.
pub const COMMANDS_READ: Line = Line {
    when: "summary: commands read",
    text: "{0} MQSC commands read.",
};
/// Summary: no syntax errors.
pub const NO_SYNTAX_ERRORS: Line = Line {
    when: "summary: no syntax error",
    text: "No commands have a syntax error.",
};
/// Summary: one syntax error.
pub const ONE_SYNTAX_ERROR: Line = Line {
    when: "summary: one syntax error",
    text: "One command has a syntax error.",
};
/// Summary: several syntax errors.
pub const SYNTAX_ERRORS: Line = Line {
    when: "summary: syntax errors",
    text: "{0} commands have a syntax error.",
};
/// Summary: everything processed.
pub const ALL_PROCESSED: Line = Line {
    when: "summary: all processed",
    text: "All valid MQSC commands were processed.",
};
/// Summary: one failure.
pub const ONE_NOT_PROCESSED: Line = Line {
    when: "summary: one failure",
    text: "One valid MQSC command could not be processed.",
};
/// Summary: several failures.
pub const NOT_PROCESSED: Line = Line {
    when: "summary: failures",
    text: "{0} valid MQSC commands could not be processed.",
};

/// Every unnumbered line, for the docs.
pub const LINES: &[&Line] = &[
    &STARTING,
    &COMMANDS_READ,
    &NO_SYNTAX_ERRORS,
    &ONE_SYNTAX_ERROR,
    &SYNTAX_ERRORS,
    &ALL_PROCESSED,
    &ONE_NOT_PROCESSED,
    &NOT_PROCESSED,
];
