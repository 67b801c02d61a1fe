//! The files a run leaves: a [`Document`] (every series of the run plus the machine's
//! facts) written as JSON ([`json`]), CSV ([`csv`]), a Markdown report ([`markdown`])
//! and charts in SVG and PNG ([`chart`]) like the reports' figures.

pub mod chart;
pub mod csv;
pub mod json;
pub mod markdown;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::machine::Machine;
use crate::report::RunReport;

/// Version of the JSON layout [`Document`] is written in.
pub const FORMAT: u32 = 1;

/// One chart: which series it draws, its title and the file name it gets (without
/// extension; an `.svg` and a `.png` are written).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChartSpec {
    /// File name without extension, e.g. `rr-cc-np`.
    pub file: String,
    /// Title drawn above the chart.
    pub title: String,
    /// Indexes into [`Document::series`].
    pub series: Vec<usize>,
}

/// Everything one invocation measured (or several runs merged by `ferry perf report`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Document {
    /// Layout version ([`FORMAT`]).
    pub format: u32,
    /// What this is, e.g. `RR-CC` or `suite standard`.
    pub title: String,
    /// When the run started (RFC 3339, UTC).
    pub created: String,
    /// The command line.
    pub command: String,
    /// The machine and build.
    pub machine: Machine,
    /// Every series, in the order run.
    pub series: Vec<RunReport>,
    /// The charts to draw (empty: one per rate unit, every series of that unit).
    #[serde(default)]
    pub charts: Vec<ChartSpec>,
}

/// Where results go without `--out`: `./perf-results/<name>`, in the directory the user
/// ran `ferry perf` from (ignored by the repository's .gitignore), as a benchmark tool's
/// output usually lands where it was run; the paths written are printed at the end.
pub fn default_dir(name: &str) -> PathBuf {
    PathBuf::from("perf-results").join(name)
}

/// The command line a result file records: `ferry perf` and the user's arguments as
/// given, whatever the harness's executable is called or where it is installed (so no
/// machine's path lands in a result file).
pub fn recorded_command() -> String {
    command_line(
        std::env::args_os()
            .skip(1)
            .map(|a| a.to_string_lossy().into_owned()),
    )
}

/// `ferry perf ARGS`, each argument quoted for a POSIX shell when it needs to be.
pub fn command_line(args: impl IntoIterator<Item = String>) -> String {
    let mut line = String::from("ferry perf");
    for a in args {
        line.push(' ');
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.,:/=@%+".contains(c));
        if plain {
            line.push_str(&a);
        } else {
            line.push('\'');
            line.push_str(&a.replace('\'', "'\\''"));
            line.push('\'');
        }
    }
    line
}

/// Now in RFC 3339, UTC.
pub fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}

/// Now as `YYYYMMDD-HHMMSS` (UTC), for default output directories.
pub fn now_stamp() -> String {
    let f = time::macros::format_description!("[year][month][day]-[hour][minute][second]");
    time::OffsetDateTime::now_utc()
        .format(&f)
        .unwrap_or_else(|_| "run".into())
}

/// A file-name-safe slug: `Round trips/s` -> `round-trips-s`.
pub fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_string()
}

impl Document {
    /// A new document for this machine, now, with the process's command line.
    pub fn new(title: &str, series: Vec<RunReport>) -> Document {
        Document {
            format: FORMAT,
            title: title.to_string(),
            created: now_rfc3339(),
            command: recorded_command(),
            machine: Machine::current(),
            series,
            charts: Vec::new(),
        }
    }

    /// The charts to draw: the document's own, or one per rate unit.
    pub fn chart_specs(&self, stem: &str) -> Vec<ChartSpec> {
        if !self.charts.is_empty() {
            return self.charts.clone();
        }
        let mut units: Vec<&str> = Vec::new();
        for s in &self.series {
            if !units.contains(&s.rate_unit.as_str()) {
                units.push(&s.rate_unit);
            }
        }
        units
            .iter()
            .map(|unit| {
                let series: Vec<usize> = (0..self.series.len())
                    .filter(|&i| self.series[i].rate_unit == *unit)
                    .collect();
                let workloads = {
                    let mut w: Vec<&str> = series
                        .iter()
                        .map(|&i| self.series[i].workload.as_str())
                        .collect();
                    w.dedup();
                    w.join(", ")
                };
                ChartSpec {
                    file: if units.len() == 1 {
                        stem.to_string()
                    } else {
                        format!("{stem}-{}", slug(unit))
                    },
                    title: format!("{workloads}: {unit} and queue manager CPU"),
                    series,
                }
            })
            .collect()
    }
}

/// Writes `doc` into `dir` (created if missing) as `<stem>.json`, `<stem>.csv`,
/// `<stem>.md` and the charts' `.svg` and `.png`; returns the files written.
pub fn write_all(doc: &Document, dir: &Path, stem: &str) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut written = Vec::new();
    let path = dir.join(format!("{stem}.json"));
    json::write(doc, &path)?;
    written.push(path);
    let path = dir.join(format!("{stem}.csv"));
    csv::write(doc, &path)?;
    written.push(path);
    let specs = doc.chart_specs(stem);
    for spec in &specs {
        let series: Vec<&RunReport> = spec
            .series
            .iter()
            .filter_map(|&i| doc.series.get(i))
            .collect();
        let svg = dir.join(format!("{}.svg", spec.file));
        let png = dir.join(format!("{}.png", spec.file));
        chart::render(&series, &spec.title, &svg, &png)?;
        written.push(svg);
        written.push(png);
    }
    let path = dir.join(format!("{stem}.md"));
    std::fs::write(&path, markdown::render(doc, &specs))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    written.push(path);
    Ok(written)
}

#[cfg(test)]
pub(crate) mod testdata {
    //! A small document for the renderers' tests.
    use super::*;
    use crate::measure::{Latency, WindowFigures};
    use crate::report::{summarize, StepReport};
    use crate::workload::step::StepOutcome;

    /// A step with `rate` operations per second.
    pub fn step(clients: usize, rate: f64, valid: bool) -> StepReport {
        StepReport::new(
            StepOutcome {
                clients,
                responders: clients.max(10),
                window: WindowFigures {
                    elapsed_secs: 5.0,
                    round_trips: (rate * 5.0) as u64,
                    rate,
                    server_cpu_pct: Some(clients as f64 / 2.0),
                    server_cores: Some(0.5),
                    server_us_per_rt: Some(20.0),
                    harness_us_per_rt: Some(9.5),
                    harness_cpu_pct: Some(30.0),
                    steal_pct: Some(0.5),
                    requesters_qmgr_us_per_rt: None,
                    responders_qmgr_us_per_rt: None,
                },
                latency: Latency {
                    count: 100,
                    p50_us: 150.0,
                    p95_us: 200.0,
                    p99_us: 300.0,
                    p999_us: 900.0,
                    max_us: 1000.0,
                },
                errors: 0,
                mismatches: u64::from(!valid),
                queue_depth_end: None,
                sent: None,
                log: None,
                compression: None,
                lost: None,
                messages_per_batch: None,
                instances: None,
                problems: if valid {
                    vec![]
                } else {
                    vec!["CorruptBody".into()]
                },
                valid,
            },
            Ok(None),
        )
    }

    /// A series of `workload` with the given steps.
    pub fn series(
        workload: &str,
        size: usize,
        persistent: bool,
        steps: Vec<StepReport>,
    ) -> RunReport {
        let test = format!(
            "{workload} ({} {})",
            crate::args::format_size(size),
            if persistent {
                "Persistent"
            } else {
                "Non-persistent"
            }
        );
        RunReport {
            workload: workload.into(),
            summary: summarize(&test, &steps),
            test,
            rate_unit: "Round trips/s".into(),
            size,
            persistent,
            syncpoint: false,
            rate_per_requester: None,
            tuning: vec!["MaxChannels=5000".into()],
            secs: 5.0,
            warmup: 1.0,
            queues: 10,
            sharecnv: 10,
            amqp_sessions: 0,
            responders: "auto".into(),
            target: "embedded".into(),
            cpus: 2,
            ticks_per_sec: 100,
            steps,
        }
    }

    /// Two series, the second with an invalid step.
    pub fn document() -> Document {
        let a = series(
            "RR-CC",
            2048,
            false,
            vec![
                step(1, 8_000.0, true),
                step(4, 26_000.0, true),
                step(16, 70_000.0, true),
            ],
        );
        let b = series(
            "RR-CC",
            2048,
            true,
            vec![
                step(1, 3_000.0, true),
                step(4, 9_000.0, true),
                step(16, 20_000.0, false),
            ],
        );
        Document::new("RR-CC", vec![a, b])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_command_is_ferry_perf_with_the_arguments_as_given() {
        let args = [
            "rr-cc",
            "--clients",
            "1,16",
            "--title",
            "it's a run",
            "--out",
            "r/x",
        ];
        assert_eq!(
            command_line(args.iter().map(|a| a.to_string())),
            "ferry perf rr-cc --clients 1,16 --title 'it'\\''s a run' --out r/x"
        );
        assert_eq!(command_line(["".to_string()]), "ferry perf ''");
        assert!(default_dir("20260101-000000").starts_with("perf-results"));
        assert!(default_dir("x").is_relative());
    }

    #[test]
    fn slugs_and_default_charts() {
        assert_eq!(slug("Round trips/s"), "round-trips-s");
        assert_eq!(slug("RR-CC (2KB)"), "rr-cc-2kb");
        let mut doc = testdata::document();
        let specs = doc.chart_specs("run");
        assert_eq!(specs.len(), 1);
        assert_eq!(specs[0].file, "run");
        assert_eq!(specs[0].series, vec![0, 1]);
        doc.series[1].rate_unit = "Messages/s".into();
        let specs = doc.chart_specs("run");
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].file, "run-messages-s");
        assert!(now_stamp().len() >= 15);
    }

    #[test]
    fn every_file_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files = write_all(&testdata::document(), dir.path(), "run").expect("written");
        let names: Vec<String> = files
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            names,
            ["run.json", "run.csv", "run.svg", "run.png", "run.md"]
        );
        for f in &files {
            assert!(
                std::fs::metadata(f).map(|m| m.len() > 100).unwrap_or(false),
                "{f:?}"
            );
        }
    }
}
