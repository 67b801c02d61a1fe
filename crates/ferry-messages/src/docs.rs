//! Renders docs/messages.md from the table, laid out as IBM documents its AMQ messages:
//! one entry per message with its id, text, severity, explanation and user response,
//! grouped by family.
//!
//! The whole file is generated: a test compares it with [`render`] and
//! `FERRY_BLESS=1 cargo test -p ferry-messages` rewrites it.

use crate::{Message, ALL};
use std::fmt::Write as _;

/// The families of numbers, with the heading each gets in the docs.
pub const FAMILIES: &[(u32, u32, &str)] = &[
    (5000, 5999, "FRY5xxx: listeners and channels"),
    (6000, 7999, "FRY6xxx and FRY7xxx: storage and configuration"),
    (8000, 8999, "FRY8xxx: control commands and MQSC responses"),
    (
        9000,
        9999,
        "FRY9xxx: channels, connections, and MQSC responses MQ has no number for",
    ),
];

/// The command that regenerates docs/messages.md, quoted in its first lines.
pub const BLESS_COMMAND: &str = "FERRY_BLESS=1 cargo test -p ferry-messages";

/// One message's entry.
fn entry(out: &mut String, m: &Message) {
    let _ = writeln!(out, "### {}\n", m.id());
    let _ = writeln!(out, "**{}**\n", escape(m.text));
    let _ = writeln!(
        out,
        "Severity: {} ({})\n",
        m.severity.letter(),
        m.severity.word()
    );
    let _ = writeln!(out, "Explanation: {}\n", escape(m.explanation));
    let _ = writeln!(out, "User response: {}\n", escape(m.response));
}

/// Markdown that would otherwise be read as markup: `*` and `_` inside texts.
fn escape(text: &str) -> String {
    text.replace('*', "\\*").replace('_', "\\_")
}

/// The whole of docs/messages.md.
pub fn render() -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!-- Generated from crates/ferry-messages/src/catalogue.rs: do not edit; {BLESS_COMMAND} rewrites it. -->\n\n\
# Messages\n\n\
Every numbered message Ferry prints: in the error log (`errors/FRYERR01.LOG` in the queue\n\
manager's directory), in answers to MQSC commands, and from the `ferry` command. Numbers\n\
follow IBM MQ's AMQ messages where MQ has the same message (AMQ8006I is FRY8006I), so\n\
searches and scripts carry over. The letter after the number is the severity: I\n\
(information), W (warning), E (error), S (severe error). In a text, `{{0}}`, `{{1}}`...\n\
stand for the inserts (names, numbers, reasons) filled in when the message is written.\n\n\
QMErrorLog/SuppressMessage and ExcludeMessage in qm.ini take these numbers\n\
(docs/operations.md); repeats of the FRY9xxx family are suppressed by default.\n\n"
    );
    for &(low, high, heading) in FAMILIES {
        let rows: Vec<&Message> = ALL
            .iter()
            .copied()
            .filter(|m| (low..=high).contains(&m.number))
            .collect();
        if rows.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {heading}\n");
        for m in rows {
            entry(&mut out, m);
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_is_in_a_family() {
        for m in ALL {
            assert!(
                FAMILIES
                    .iter()
                    .any(|&(lo, hi, _)| (lo..=hi).contains(&m.number)),
                "{} is in no family",
                m.id()
            );
        }
    }

    #[test]
    fn entries_read_as_ibm_documents_them() {
        let doc = render();
        assert!(doc.contains(
            "### FRY8006I\n\n**Ferry queue created.**\n\nSeverity: I (Information)\n\nExplanation: DEFINE"
        ));
        assert!(doc.contains("### FRY8101S\n"));
        for m in ALL {
            assert!(doc.contains(&format!("### {}\n", m.id())), "{}", m.id());
        }
    }

    #[test]
    fn docs_are_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/messages.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let wanted = render();
        if std::env::var("FERRY_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(path, &wanted).expect("docs/messages.md is writable");
            return;
        }
        assert!(
            doc == wanted,
            "docs/messages.md is out of date: run {BLESS_COMMAND}"
        );
    }
}
