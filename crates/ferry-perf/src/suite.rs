//! Suites: defined sets of runs, each an ordinary `ferry perf` command line, and the
//! charts drawn from them. `standard` is the one `bench/` commits results of: the
//! reports' workloads and sizes, ramps and durations trimmed so the whole suite takes
//! about 10-15 minutes on a 2-CPU machine. This file is its one definition.

use clap::Parser;

use crate::cli::{self, Plan, SuiteArgs, Workload};
use crate::output::{self, ChartSpec, Document};
use crate::progress::Progress;
use crate::report::RunReport;
use crate::workload::Kind;
use crate::PerfError;

/// One run of a suite: a name and the arguments after `ferry perf`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteRun {
    /// Short name, e.g. `rr-cc-np`.
    pub name: &'static str,
    /// The command line after `ferry perf`.
    pub args: &'static str,
}

/// One chart of a suite: which runs' series it draws (optionally only one size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteChart {
    /// File name without extension.
    pub file: &'static str,
    /// Title.
    pub title: &'static str,
    /// `(run name, size in bytes or None for all)`.
    pub series: &'static [(&'static str, Option<usize>)],
}

/// A suite: its runs and charts.
#[derive(Clone, Debug)]
pub struct Suite {
    /// The runs, in order.
    pub runs: Vec<SuiteRun>,
    /// The charts.
    pub charts: Vec<SuiteChart>,
}

const KB: usize = 1024;

/// The standard suite (see bench/README.md): 72 steps of 2 s warm-up + 5 s measured.
pub fn standard() -> Suite {
    Suite {
        runs: vec![
            SuiteRun {
                name: "rr-cc-np",
                args: "rr-cc --sizes 256B,2KB,20KB,200KB --clients 1,4,16,64,128 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "rr-cc-2mb",
                args: "rr-cc --sizes 2MB --clients 1,4,16 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "rr-cc-p",
                args: "rr-cc --sizes 2KB,20KB --persistent --clients 1,4,16,64,128 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "rr-cc-sharecnv1",
                args: "rr-cc --sizes 2KB --sharecnv 1 --clients 1,4,16,64,128 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "rr-bb",
                args: "rr-bb --sizes 2KB,20KB --clients 1,4,16,64,128 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "rr-cb",
                args: "rr-cb --sizes 2KB --clients 1,4,16,64,128 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "sr-cc",
                args: "sr-cc --sizes 2KB,20KB --clients 1,2,4,8,16 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "ps-cc",
                args: "ps-cc --sizes 2KB --clients 1,4,16,64 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "rr-cc-rated",
                args: "rr-cc --sizes 2KB --rate 100 --clients 1,16,64 --secs 5 --warmup 2",
            },
            SuiteRun {
                name: "connect",
                args: "connect --clients 1000,4000 --secs 5",
            },
        ],
        charts: vec![
            SuiteChart {
                file: "rr-cc-np",
                title: "RR-CC non-persistent, by message size",
                series: &[("rr-cc-np", None), ("rr-cc-2mb", None)],
            },
            SuiteChart {
                file: "rr-cc-np-vs-p",
                title: "RR-CC 2KB and 20KB, non-persistent vs persistent",
                series: &[
                    ("rr-cc-np", Some(2 * KB)),
                    ("rr-cc-np", Some(20 * KB)),
                    ("rr-cc-p", None),
                ],
            },
            SuiteChart {
                file: "rr-2kb-modes",
                title: "Request/reply 2KB non-persistent: client, bindings, SHARECNV",
                series: &[
                    ("rr-cc-np", Some(2 * KB)),
                    ("rr-cc-sharecnv1", None),
                    ("rr-bb", Some(2 * KB)),
                    ("rr-cb", None),
                ],
            },
            SuiteChart {
                file: "sr-cc",
                title: "SR-CC non-persistent (2 receivers per queue)",
                series: &[("sr-cc", None)],
            },
            SuiteChart {
                file: "ps-cc",
                title: "PS-CC non-persistent: 1 publisher, 1 topic, subscribers added",
                series: &[("ps-cc", None)],
            },
            SuiteChart {
                file: "connect",
                title: "Connection test: clients connecting as fast as they can",
                series: &[("connect", None)],
            },
        ],
    }
}

/// The suite called `name`.
pub fn by_name(name: &str) -> Result<Suite, PerfError> {
    match name {
        "standard" => Ok(standard()),
        _ => Err(PerfError::Usage(format!(
            "unknown suite '{name}': the suites are: standard"
        ))),
    }
}

#[derive(Parser)]
#[command(name = "ferry perf", no_binary_name = true)]
struct Line {
    #[command(subcommand)]
    workload: Workload,
}

/// Parses a suite run's arguments into a plan, with `secs`/`warmup` overridden.
pub fn plan(run: &SuiteRun, secs: Option<f64>, warmup: Option<f64>) -> Result<Plan, PerfError> {
    let line = Line::try_parse_from(run.args.split_whitespace())
        .map_err(|e| PerfError::Setup(format!("suite run {}: {e}", run.name)))?;
    let mut plan = match line.workload {
        Workload::RrCc(a) => Plan::Workload(Kind::RrCc, *a),
        Workload::RrBb(a) => Plan::Workload(Kind::RrBb, *a),
        Workload::RrCb(a) => Plan::Workload(Kind::RrCb, *a),
        Workload::SrCc(a) => Plan::Workload(Kind::SrCc, *a),
        Workload::Connect(a) => Plan::Connect(*a),
        Workload::PsCc(a) => Plan::PubSub(*a),
        _ => {
            return Err(PerfError::Setup(format!(
                "suite run {}: not a workload",
                run.name
            )))
        }
    };
    let steps = match &mut plan {
        Plan::Workload(_, a) => &mut a.steps,
        Plan::Connect(a) => &mut a.steps,
        Plan::PubSub(a) => &mut a.steps,
    };
    if let Some(s) = secs {
        steps.secs = s;
    }
    if let Some(w) = warmup {
        steps.warmup = w;
    }
    Ok(plan)
}

/// The chart specs of a suite, given which series each run produced.
pub fn chart_specs(
    suite: &Suite,
    produced: &[(&str, usize)],
    series: &[RunReport],
) -> Vec<ChartSpec> {
    suite
        .charts
        .iter()
        .map(|c| ChartSpec {
            file: c.file.to_string(),
            title: c.title.to_string(),
            series: produced
                .iter()
                .enumerate()
                .filter(|(_, (run, idx))| {
                    c.series.iter().any(|(name, size)| {
                        name == run && size.is_none_or(|sz| series[*idx].size == sz)
                    })
                })
                .map(|(_, (_, idx))| *idx)
                .collect(),
        })
        .filter(|c| !c.series.is_empty())
        .collect()
}

/// Runs `ferry perf suite NAME`.
pub fn run(a: SuiteArgs) -> Result<bool, PerfError> {
    let suite = by_name(&a.name)?;
    if a.list {
        println!("suite {}:", a.name);
        for r in &suite.runs {
            println!("  {:<16} ferry perf {}", r.name, r.args);
        }
        for c in &suite.charts {
            let runs: Vec<&str> = c.series.iter().map(|(n, _)| *n).collect();
            println!("  chart {:<12} {} ({})", c.file, c.title, runs.join(", "));
        }
        return Ok(true);
    }
    let plans = suite
        .runs
        .iter()
        .map(|r| plan(r, a.secs, a.warmup))
        .collect::<Result<Vec<_>, _>>()?;
    let progress = Progress::new();
    let mut series: Vec<RunReport> = Vec::new();
    let mut produced: Vec<(&str, usize)> = Vec::new();
    let mut outcome = Ok(());
    for (r, p) in suite.runs.iter().zip(&plans) {
        progress.line(&format!(
            "suite {}: run {} (ferry perf {})",
            a.name, r.name, r.args
        ));
        let m = cli::measure_run(p, &progress)?;
        for s in m.series {
            produced.push((r.name, series.len()));
            series.push(s);
        }
        if m.outcome.is_err() {
            outcome = m.outcome;
            break;
        }
    }
    drop(progress);
    cli::print_tables(&series);
    let all_valid = series
        .iter()
        .all(|s| s.steps.iter().all(|st| st.ferry.valid));
    let mut doc = Document::new(&format!("suite {}", a.name), series);
    doc.charts = chart_specs(&suite, &produced, &doc.series);
    let dir = a
        .out
        .unwrap_or_else(|| output::default_dir(&format!("suite-{}", output::now_stamp())));
    cli::write_files(&doc, Some(&dir), "", "suite", None)?;
    outcome.map(|()| all_valid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_standard_run_parses_and_fits_the_budget() {
        let s = standard();
        let mut steps = 0usize;
        let mut secs = 0.0;
        for r in &s.runs {
            let p = plan(r, None, None).expect(r.name);
            let st = match &p {
                Plan::Workload(_, a) => &a.steps,
                Plan::Connect(a) => &a.steps,
                Plan::PubSub(a) => &a.steps,
            };
            let n = st.sizes.0.len() * st.clients.0.len();
            steps += n;
            secs += n as f64 * (st.secs + st.warmup + 1.0);
        }
        assert_eq!(steps, 72);
        assert!(secs < 12.0 * 60.0, "{secs} s");
        let p = plan(&s.runs[0], Some(1.0), Some(0.5)).expect("override");
        match p {
            Plan::Workload(Kind::RrCc, a) => assert_eq!((a.steps.secs, a.steps.warmup), (1.0, 0.5)),
            other => panic!("{other:?}"),
        }
        assert!(by_name("huge").is_err());
    }

    #[test]
    fn charts_pick_their_series() {
        let s = standard();
        let mk = |size| crate::output::testdata::series("RR-CC", size, false, vec![]);
        let series = vec![mk(256), mk(2048), mk(20480), mk(2048)];
        let produced = vec![
            ("rr-cc-np", 0),
            ("rr-cc-np", 1),
            ("rr-cc-np", 2),
            ("rr-cc-p", 3),
        ];
        let specs = chart_specs(&s, &produced, &series);
        assert_eq!(specs[0].file, "rr-cc-np");
        assert_eq!(specs[0].series, vec![0, 1, 2]);
        assert_eq!(specs[1].file, "rr-cc-np-vs-p");
        assert_eq!(specs[1].series, vec![1, 2, 3]);
        assert_eq!(
            specs.len(),
            3,
            "charts without series are dropped: {specs:?}"
        );
    }
}
