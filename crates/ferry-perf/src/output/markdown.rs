//! The Markdown report of a run: the reports' summary table ("Test | Max Rate | CPU% |
//! Clients"), the charts, one per-step table per series with its setup and notes, and
//! the machine's facts.

use super::{ChartSpec, Document};
use crate::args::format_size;
use crate::report::{self, RunReport};

/// Escapes `|` so a cell does not split a Markdown table.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
}

/// A Markdown table from a header and rows; columns after the first are right-aligned.
pub fn table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "| {} |\n",
        header
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let rule: Vec<&str> = (0..header.len())
        .map(|i| if i == 0 { "---" } else { "---:" })
        .collect();
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for r in rows {
        out.push_str(&format!(
            "| {} |\n",
            r.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | ")
        ));
    }
    out
}

/// One line describing how a series was run.
pub fn setup_line(run: &RunReport) -> String {
    let mut parts = vec![
        format!("{} messages", format_size(run.size)),
        if run.persistent {
            "persistent".into()
        } else {
            "non-persistent".into()
        },
        if run.syncpoint {
            "in syncpoint".into()
        } else {
            "outside syncpoint".into()
        },
    ];
    let pubsub = report::is_pubsub(run);
    let per = if pubsub { "publisher" } else { "requester" };
    match run.rate_per_requester {
        Some(r) => parts.push(format!("rated at {r} msg/s per {per}")),
        None => parts.push("unrated".into()),
    }
    if pubsub {
        // `responders` holds the shape: `1 publisher on 1 topic`.
        parts.push(format!(
            "{}, subscribers spread over the topics",
            run.responders
        ));
    } else {
        if run.workload != "SR-CC" {
            parts.push(format!("{} request queues", run.queues));
        }
        parts.push(format!("responders {}", run.responders));
    }
    if run.sharecnv != 0 {
        // 0: AMQP runs, which have no shared conversations.
        parts.push(format!("SHARECNV {}", run.sharecnv));
    }
    if run.amqp_sessions != 0 {
        parts.push(format!(
            "AMQP sessions per connection: {}",
            run.amqp_sessions
        ));
    }
    parts.push(format!(
        "{} s warm-up + {} s per step",
        run.warmup, run.secs
    ));
    parts.push(run.target.clone());
    parts.join(", ")
}

/// The whole report.
pub fn render(doc: &Document, charts: &[ChartSpec]) -> String {
    let mut out = format!("# Ferry performance: {}\n\n", doc.title);
    if !doc.created.is_empty() {
        out.push_str(&format!("Run {}", doc.created));
        if !doc.command.is_empty() {
            out.push_str(&format!(" with `{}`", doc.command));
        }
        out.push_str(".\n\n");
    }
    if doc.machine.nproc > 0 {
        out.push_str(&format!("Machine: {}.\n\n", doc.machine.one_line()));
    }
    out.push_str("## Summary\n\n");
    let rows: Vec<Vec<String>> = report::summary_rows(&doc.series)
        .into_iter()
        .map(|r| r.to_vec())
        .collect();
    let header: Vec<String> = ["Test", "Max Rate*", "CPU%", "Clients"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    out.push_str(&table(&header, &rows));
    out.push_str(&format!("\n{}\n\n", report::summary_footnote(&doc.series)));
    if !charts.is_empty() {
        out.push_str("## Charts\n\n");
        for c in charts {
            out.push_str(&format!(
                "![{}]({}.png)\n\n([SVG]({}.svg))\n\n",
                c.title, c.file, c.file
            ));
        }
    }
    for run in &doc.series {
        out.push_str(&format!("## {}\n\n{}.\n\n", run.test, setup_line(run)));
        let cols = report::columns(run);
        let header: Vec<String> = cols.iter().map(|(h, _)| h.clone()).collect();
        let rows: Vec<Vec<String>> = run
            .steps
            .iter()
            .map(|s| cols.iter().map(|(_, f)| f(s)).collect())
            .collect();
        out.push_str(&table(&header, &rows));
        let notes = report::step_notes(run);
        if !notes.is_empty() {
            out.push('\n');
            for n in notes {
                out.push_str(&format!("- {}\n", cell(&n)));
            }
        }
        if !run.tuning.is_empty() {
            out.push_str(&format!(
                "\nqm.ini of the embedded queue manager: {}.\n",
                run.tuning.join(", ")
            ));
        }
        out.push('\n');
    }
    out.push_str(
        "How to read these figures: see \"Reading and reproducing the harness's output\" in \
         docs/performance.md.\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testdata;

    #[test]
    fn report_has_summary_tables_charts_and_notes() {
        let doc = testdata::document();
        let md = render(&doc, &doc.chart_specs("run"));
        assert!(md.starts_with("# Ferry performance: RR-CC\n"), "{md}");
        assert!(
            md.contains("| Test | Max Rate* | CPU% | Clients |\n|---|---:|---:|---:|\n"),
            "{md}"
        );
        assert!(
            md.contains("| RR-CC (2KB Non-persistent) | 70,000 | 8.00 | 16 |"),
            "{md}"
        );
        assert!(
            md.contains("| RR-CC (2KB Persistent) | 9,000 | 2.00 | 4 |"),
            "{md}"
        );
        assert!(
            md.contains("![RR-CC: Round trips/s and queue manager CPU](run.png)"),
            "{md}"
        );
        assert!(
            md.contains("## RR-CC (2KB Persistent)\n\n2KB messages, persistent,"),
            "{md}"
        );
        assert!(
            md.contains("| Clients | Round trips/s | Server CPU% | Server µs/RT |"),
            "{md}"
        );
        assert!(
            md.contains("- step 16 clients INVALID: 0 errors, 1 mismatches"),
            "{md}"
        );
        assert!(
            md.contains("qm.ini of the embedded queue manager: MaxChannels=5000."),
            "{md}"
        );
        assert_eq!(cell("a|b"), "a\\|b");
    }
}
