//! Generates the reference part of docs/mqsc.md from the tables themselves.
//!
//! [`render_generated`] renders the message table ([`crate::messages::MESSAGES`]), the
//! attribute tables of ferry-objects and the status field tables of [`crate::display`] as
//! Markdown. A test compares it with the generated section of docs/mqsc.md (between
//! [`BEGIN_MARKER`] and [`END_MARKER`]); `FERRY_BLESS=1 cargo test -p ferry-mqsc docs`
//! rewrites that section.

use crate::display::{
    StatusField, CHSTATUS_CLIENT_FIELDS, CHSTATUS_FIELDS, CHSTATUS_SVRCONN_FIELDS, CONN_FIELDS,
    CONN_HANDLE_FIELDS, LSSTATUS_FIELDS, QMSTATUS_FIELDS, QSTATUS_HANDLE_FIELDS,
    QSTATUS_QUEUE_FIELDS, QUEUE_LIVE_FIELDS,
};
use crate::messages::MESSAGES;
use ferry_objects::channel::ChannelType;
use ferry_objects::queue::QueueType;
use ferry_objects::{
    AttrKind, AttrValue, AttributeSet, ChannelAttributes, ListenerAttributes, QmgrAttributes,
    QueueAttributes,
};
use std::fmt::Write;

/// Line opening the generated section of docs/mqsc.md.
pub const BEGIN_MARKER: &str =
    "<!-- BEGIN GENERATED: do not edit; FERRY_BLESS=1 cargo test -p ferry-mqsc docs rewrites it -->";
/// Line closing the generated section.
pub const END_MARKER: &str = "<!-- END GENERATED -->";

fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The message table as Markdown.
pub fn render_messages() -> String {
    let mut out = String::from("| Id | Severity | Text |\n|---|---|---|\n");
    for m in MESSAGES {
        let id = match m.number {
            Some(_) => format!("`{}`", m.code()),
            None => "(summary)".to_string(),
        };
        let _ = writeln!(out, "| {id} | {:?} | {} |", m.severity, cell(m.text));
    }
    out
}

fn default_text(kind: AttrKind, value: AttrValue) -> String {
    match (kind, value) {
        (AttrKind::Flag { on, off }, AttrValue::Flag(b)) => if b { on } else { off }.to_string(),
        (
            AttrKind::IntOrDefault { .. },
            AttrValue::Int(ferry_objects::attribute::DEFAULT_VALUE),
        ) => ferry_objects::attribute::DEFAULT_KEYWORD.to_string(),
        (_, AttrValue::Text(s)) if s.is_empty() => "' '".to_string(),
        (_, v) => v.to_string(),
    }
}

fn attribute_table<D: AttributeSet>(applies: &dyn Fn(u32) -> String) -> String {
    let mut out = String::from(
        "| Keyword | Applies to | Values | Default | Meaning |\n|---|---|---|---|---|\n",
    );
    for row in D::table() {
        let keyword = match row.kind {
            AttrKind::Flag { on, off } => format!("`{on}` / `{off}`"),
            _ => format!("`{}`", row.keyword),
        };
        let values = if row.read_only {
            format!("read-only; {}", row.kind.describe())
        } else {
            row.kind.describe()
        };
        let _ = writeln!(
            out,
            "| {keyword} | {} | {} | {} | {} |",
            applies(row.applies),
            cell(&values),
            cell(&default_text(row.kind, (row.default)())),
            cell(row.doc)
        );
    }
    out
}

fn status_table<S>(fields: &[StatusField<S>]) -> String {
    let mut out = String::from("| Keyword | Values | Meaning |\n|---|---|---|\n");
    for f in fields {
        let _ = writeln!(
            out,
            "| `{}` | {} | {} |",
            f.keyword,
            cell(&f.kind.describe()),
            cell(f.doc)
        );
    }
    out
}

/// The attribute reference: one table per object type, then the status fields.
pub fn render_attributes() -> String {
    let queue_types = |mask: u32| {
        QueueType::KEYWORDS
            .iter()
            .filter_map(|k| QueueType::from_keyword(k))
            .filter(|t| mask & t.mask() != 0)
            .map(|t| t.keyword())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let channel_types = |mask: u32| {
        ChannelType::KEYWORDS
            .iter()
            .filter_map(|k| ChannelType::from_keyword(k))
            .filter(|t| mask & t.mask() != 0)
            .map(|t| t.keyword())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = String::new();
    let sections: [(&str, String); 4] = [
        (
            "Queue attributes (DEFINE/ALTER/DISPLAY QLOCAL, QMODEL, QALIAS)",
            attribute_table::<QueueAttributes>(&queue_types),
        ),
        (
            "Channel attributes (DEFINE/ALTER/DISPLAY CHANNEL)",
            attribute_table::<ChannelAttributes>(&channel_types),
        ),
        (
            "Listener attributes (DEFINE/ALTER/DISPLAY LISTENER)",
            attribute_table::<ListenerAttributes>(&|_| "LISTENER".to_string()),
        ),
        (
            "Queue manager attributes (ALTER/DISPLAY QMGR)",
            attribute_table::<QmgrAttributes>(&|_| "QMGR".to_string()),
        ),
    ];
    for (title, table) in sections {
        let _ = write!(out, "### {title}\n\n{table}\n");
    }
    let status: [(&str, String); 10] = [
        (
            "Live fields of DISPLAY QLOCAL / QUEUE",
            status_table(QUEUE_LIVE_FIELDS),
        ),
        (
            "DISPLAY QSTATUS TYPE(QUEUE)",
            status_table(QSTATUS_QUEUE_FIELDS),
        ),
        (
            "DISPLAY QSTATUS TYPE(HANDLE)",
            status_table(QSTATUS_HANDLE_FIELDS),
        ),
        ("DISPLAY CONN TYPE(CONN)", status_table(CONN_FIELDS)),
        (
            "DISPLAY CONN TYPE(HANDLE)",
            status_table(CONN_HANDLE_FIELDS),
        ),
        ("DISPLAY LSSTATUS", status_table(LSSTATUS_FIELDS)),
        ("DISPLAY QMSTATUS", status_table(QMSTATUS_FIELDS)),
        (
            "DISPLAY CHSTATUS CHLTYPE(AMQP): channel summary",
            status_table(CHSTATUS_FIELDS),
        ),
        (
            "DISPLAY CHSTATUS CHLTYPE(AMQP) CLIENTID(...): one record per client",
            status_table(CHSTATUS_CLIENT_FIELDS),
        ),
        (
            "DISPLAY CHSTATUS CHLTYPE(SVRCONN): one record per client socket",
            status_table(CHSTATUS_SVRCONN_FIELDS),
        ),
    ];
    for (title, table) in status {
        let _ = write!(out, "### {title}\n\n{table}\n");
    }
    out
}

/// The whole generated section, markers included.
pub fn render_generated() -> String {
    format!(
        "{BEGIN_MARKER}\n\n## Messages\n\n{}\n## Attribute reference\n\n{}{END_MARKER}\n",
        render_messages(),
        render_attributes()
    )
}

/// Replaces the generated section of a document (or appends one) with `generated`.
pub fn splice(doc: &str, generated: &str) -> String {
    splice_section(doc, BEGIN_MARKER, END_MARKER, generated)
}

/// Replaces the section of `doc` from the line `begin` to the line `end` (markers
/// included; `generated` carries its own) with `generated`, or appends it when the
/// document has none: how every generated part of the docs is kept current.
pub fn splice_section(doc: &str, begin: &str, end: &str, generated: &str) -> String {
    match (doc.find(begin), doc.find(end)) {
        (Some(b), Some(e)) if e > b => {
            let after = &doc[e + end.len()..];
            let after = after.strip_prefix('\n').unwrap_or(after);
            format!("{}{generated}{after}", &doc[..b])
        }
        _ => format!("{}\n\n{generated}", doc.trim_end()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_are_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/mqsc.md");
        let doc = std::fs::read_to_string(path).unwrap_or_default();
        let wanted = splice(&doc, &render_generated());
        if std::env::var("FERRY_BLESS").is_ok_and(|v| v == "1") {
            std::fs::write(path, &wanted).expect("docs/mqsc.md is writable");
            return;
        }
        assert!(
            doc == wanted,
            "docs/mqsc.md's generated section is out of date: run FERRY_BLESS=1 cargo test -p ferry-mqsc docs"
        );
    }

    #[test]
    fn tables_mention_every_keyword() {
        let text = render_attributes();
        for row in QueueAttributes::table() {
            assert!(text.contains(row.keyword), "{}", row.keyword);
        }
        assert!(text.contains("`SHARE` / `NOSHARE`"));
        assert!(
            text.contains("| `MAXDEPTH` | QLOCAL QMODEL | a number from 0 to 999999999 | 5000 |")
        );
        assert!(render_messages().contains("| `FRY8006I` | Info | Ferry queue created. |"));
    }

    #[test]
    fn splice_replaces_only_the_section() {
        let doc = format!("intro\n{BEGIN_MARKER}\nold\n{END_MARKER}\noutro\n");
        let out = splice(&doc, &format!("{BEGIN_MARKER}\nnew\n{END_MARKER}\n"));
        assert_eq!(
            out,
            format!("intro\n{BEGIN_MARKER}\nnew\n{END_MARKER}\noutro\n")
        );
    }
}
