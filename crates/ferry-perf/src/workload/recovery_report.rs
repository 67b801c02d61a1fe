//! What `ferry perf recovery` measured ([`RecoveryReport`]) and how it is shown: the
//! plain-text tables printed at the end of a run, the Markdown report and the JSON file
//! written into `--out`. The run itself is [`super::recovery`].

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::args::format_size;
use crate::machine::Machine;
use crate::output::markdown;
use crate::report::group_thousands;

/// Version of the JSON layout of [`RecoveryReport`].
pub const FORMAT: u32 = 1;

/// The recovery log's counters at one moment (`DISPLAY QMSTATUS ALL`), cumulative since
/// the queue manager started.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LogStatus {
    /// Bytes written to the log (LOGBYTES).
    pub bytes: u64,
    /// Log records made durable (LOGRECS).
    pub records: u64,
    /// Log flushes (LOGFLUSH).
    pub flushes: u64,
    /// Checkpoints taken (LOGCHKPT), when shown.
    pub checkpoints: Option<u64>,
    /// Percentage of the log ring in use (LOGINUSE), when shown.
    pub in_use_pct: Option<f64>,
}

/// One slice of a fill or a drain (by default a tenth of the messages).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    /// Messages on the queues when the slice began.
    pub depth_from: u64,
    /// Messages on the queues when it ended.
    pub depth_to: u64,
    /// Seconds it took.
    pub elapsed_secs: f64,
    /// Messages per second over the slice.
    pub rate: f64,
    /// The queue manager's CPU over the slice, % of the whole machine.
    pub server_cpu_pct: Option<f64>,
    /// Log MB (10^6 bytes) written per second over the slice.
    pub log_mb_per_sec: Option<f64>,
    /// Log flushes per message over the slice.
    pub flushes_per_msg: Option<f64>,
    /// Checkpoints taken during the slice.
    pub checkpoints: Option<u64>,
    /// LOGINUSE at the end of the slice.
    pub log_in_use_pct: Option<f64>,
}

/// A fill or a drain.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// Messages moved (acknowledged puts, or messages got).
    pub messages: u64,
    /// Failed calls.
    pub errors: u64,
    /// Seconds from the first call to the last.
    pub elapsed_secs: f64,
    /// Messages per second over the whole phase.
    pub rate: f64,
    /// The phase in slices, as the queues deepen (fill) or empty (drain).
    pub slices: Vec<Slice>,
    /// The first few problems.
    pub problems: Vec<String>,
}

/// Bytes on disk of the queue manager's persistent state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskUsage {
    /// Blocks allocated to `qmgrs/<QM>/queues/` (all queue files), in bytes.
    pub queue_files_bytes: u64,
    /// The files' lengths added up (segments are preallocated, so close to the above).
    pub queue_files_apparent_bytes: u64,
    /// Files under `queues/`.
    pub queue_files: u64,
    /// Blocks allocated to the recovery log directory (LogPath), in bytes.
    pub log_bytes: u64,
}

/// The process's memory from `/proc/<pid>/status`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Memory {
    /// VmRSS: resident now, bytes.
    pub rss_bytes: u64,
    /// VmHWM: the most it was resident, bytes.
    pub peak_rss_bytes: u64,
}

/// One restart, timed from the spawn of the new process to the first successful MQGET.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Restart {
    /// `kill -9` or `controlled stop`.
    pub how: String,
    /// How long `ferry stop` took until the process had ended (controlled stop only).
    pub stop_secs: Option<f64>,
    /// Disk usage between the stop and the restart.
    pub disk: DiskUsage,
    /// The queue manager's files were evicted from the page cache before the restart.
    pub cold: bool,
    /// Seconds from spawn until a client connection was accepted.
    pub listening_secs: f64,
    /// Seconds from spawn until the first MQGET returned a message.
    pub first_get_secs: f64,
    /// The restarted process's memory right after the first GET.
    pub memory: Option<Memory>,
    /// Messages on the queues after the restart (the probe's GET taken off).
    pub depth: Option<u64>,
    /// The start's recovery lines from the error log (FRY7234I, FRY7233I...).
    pub error_log: Vec<String>,
}

/// Every message accounted for: put once, got once, intact, from the queue it was put to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verification {
    /// Puts acknowledged.
    pub put: u64,
    /// Messages got, the restart probes' included.
    pub got: u64,
    /// Of those, got by the restart probes.
    pub got_by_probes: u64,
    /// Messages got more than once.
    pub duplicates: u64,
    /// Acknowledged puts never got.
    pub missing: u64,
    /// Bodies of the wrong length or with damaged sequence numbers.
    pub corrupt: u64,
    /// Messages got from a queue they were not put to.
    pub wrong_queue: u64,
    /// Messages whose put was never acknowledged.
    pub unexpected: u64,
    /// Messages still on the queues after the drain (CURDEPTH).
    pub left_on_queues: Option<u64>,
}

impl Verification {
    /// Nothing lost, duplicated, damaged or misplaced.
    pub fn ok(&self) -> bool {
        self.got == self.put
            && self.duplicates == 0
            && self.missing == 0
            && self.corrupt == 0
            && self.wrong_queue == 0
            && self.unexpected == 0
            && self.left_on_queues.unwrap_or(0) == 0
    }
}

/// Everything one `ferry perf recovery` run measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RecoveryReport {
    /// Layout version ([`FORMAT`]).
    pub format: u32,
    /// `Recovery (1,000,000 x 2KB Persistent, 4 queues)`.
    pub title: String,
    /// When the run started (RFC 3339, UTC).
    pub created: String,
    /// The command line.
    pub command: String,
    /// The machine and build.
    pub machine: Machine,
    /// Messages asked for.
    pub messages: u64,
    /// Body size in bytes.
    pub size: usize,
    /// Queues (RECOVERY.1..N).
    pub queues: usize,
    /// Concurrent putters.
    pub putters: usize,
    /// Concurrent getters of the drain.
    pub getters: usize,
    /// Conversations per socket.
    pub sharecnv: u32,
    /// The order of the restarts: `kill-first` or `stop-first`.
    pub order: String,
    /// The queue manager's qm.ini tuning.
    pub tuning: Vec<String>,
    /// What was measured.
    pub target: String,
    /// The fill.
    pub fill: Phase,
    /// The log's counters at the end of the fill.
    pub fill_log: Option<LogStatus>,
    /// The server's memory at the end of the fill.
    pub fill_memory: Option<Memory>,
    /// The restarts, in the order run.
    pub restarts: Vec<Restart>,
    /// The drain.
    pub drain: Phase,
    /// The message accounting.
    pub verification: Verification,
    /// Problems found (also in the phases).
    pub problems: Vec<String>,
    /// No errors and every message accounted for.
    pub valid: bool,
}

fn secs(v: f64) -> String {
    format!("{v:.2}")
}

fn opt1(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.1}"))
}

fn opt2(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:.2}"))
}

/// Bytes as MB (10^6) with one decimal.
pub fn mb(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1e6)
}

fn thousands(v: u64) -> String {
    group_thousands(v as f64)
}

/// A plain-text table: right-aligned columns, a rule under the header.
pub fn text_table(header: &[String], rows: &[Vec<String>]) -> String {
    let mut all = vec![header.to_vec()];
    all.extend(rows.iter().cloned());
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            all.iter()
                .map(|r| r.get(c).map_or(0, |s| s.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in all.iter().enumerate() {
        let cells: Vec<String> = widths
            .iter()
            .enumerate()
            .map(|(c, w)| format!("{:>w$}", row.get(c).map_or("", String::as_str)))
            .collect();
        out.push_str(cells.join(" | ").trim_end());
        out.push('\n');
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
            out.push_str(&rule.join("-|-"));
            out.push('\n');
        }
    }
    out
}

/// The header and rows of a phase's slice table.
pub fn slice_rows(phase: &Phase, fill: bool) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        if fill {
            "Depth from..to"
        } else {
            "Depth from..to (emptying)"
        },
        "Messages/s",
        "Seconds",
        "Server CPU%",
        "Log MB/s",
        "Flushes/msg",
        "Checkpoints",
        "LOGINUSE%",
    ]
    .map(String::from)
    .to_vec();
    let mut rows: Vec<Vec<String>> = phase
        .slices
        .iter()
        .map(|s| {
            vec![
                format!("{}..{}", thousands(s.depth_from), thousands(s.depth_to)),
                group_thousands(s.rate),
                secs(s.elapsed_secs),
                opt1(s.server_cpu_pct),
                opt1(s.log_mb_per_sec),
                opt2(s.flushes_per_msg),
                s.checkpoints.map_or("-".into(), |c| c.to_string()),
                opt1(s.log_in_use_pct),
            ]
        })
        .collect();
    rows.push(vec![
        "all".into(),
        group_thousands(phase.rate),
        secs(phase.elapsed_secs),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    ]);
    (header, rows)
}

/// The header and rows of the restart table.
pub fn restart_rows(r: &RecoveryReport) -> (Vec<String>, Vec<Vec<String>>) {
    let header = [
        "Restart after",
        "Stop s",
        "Spawn->listening s",
        "Spawn->first GET s",
        "RSS MB",
        "Peak RSS MB",
        "Depth after",
        "Queue files MB",
        "Log MB",
    ]
    .map(String::from)
    .to_vec();
    let rows = r
        .restarts
        .iter()
        .map(|x| {
            vec![
                format!("{}{}", x.how, if x.cold { " (cold cache)" } else { "" }),
                x.stop_secs.map_or("-".into(), secs),
                secs(x.listening_secs),
                secs(x.first_get_secs),
                x.memory.map_or("-".into(), |m| mb(m.rss_bytes)),
                x.memory.map_or("-".into(), |m| mb(m.peak_rss_bytes)),
                x.depth.map_or("-".into(), thousands),
                mb(x.disk.queue_files_bytes),
                mb(x.disk.log_bytes),
            ]
        })
        .collect();
    (header, rows)
}

/// The opening line: what was run against what.
pub fn plan_line(r: &RecoveryReport) -> String {
    format!(
        "{}: {} putters, {} getters, SHARECNV {}, restarts {}; {}",
        r.title, r.putters, r.getters, r.sharecnv, r.order, r.target
    )
}

/// The run's title.
pub fn title(messages: u64, size: usize, queues: usize) -> String {
    format!(
        "Recovery ({} x {} Persistent, {queues} queues)",
        thousands(messages),
        format_size(size)
    )
}

/// One line on the accounting.
pub fn verification_line(v: &Verification) -> String {
    format!(
        "{} put, {} got ({} by the restart probes), {} duplicates, {} missing, {} corrupt, \
         {} on the wrong queue, {} unexpected, {} left on the queues: {}",
        thousands(v.put),
        thousands(v.got),
        v.got_by_probes,
        v.duplicates,
        v.missing,
        v.corrupt,
        v.wrong_queue,
        v.unexpected,
        v.left_on_queues.map_or("?".into(), thousands),
        if v.ok() {
            "all accounted for"
        } else {
            "INVALID"
        }
    )
}

/// The tables printed at the end of a run.
pub fn render_text(r: &RecoveryReport) -> String {
    let mut out = format!("{}\n\n", r.title);
    let (h, rows) = slice_rows(&r.fill, true);
    out.push_str(&format!(
        "Fill: {} persistent puts out of syncpoint by {} putters\n",
        thousands(r.fill.messages),
        r.putters
    ));
    out.push_str(&text_table(&h, &rows));
    if let Some(m) = r.fill_memory {
        out.push_str(&format!(
            "Server memory at the end of the fill: RSS {} MB (peak {} MB)\n",
            mb(m.rss_bytes),
            mb(m.peak_rss_bytes)
        ));
    }
    if let Some(l) = &r.fill_log {
        out.push_str(&format!(
            "Log since start: {} MB, {} records, {} flushes, {} checkpoints\n",
            mb(l.bytes),
            thousands(l.records),
            thousands(l.flushes),
            l.checkpoints.map_or("-".into(), |c| c.to_string())
        ));
    }
    out.push('\n');
    let (h, rows) = restart_rows(r);
    out.push_str("Restarts (timed from the spawn of the new process)\n");
    out.push_str(&text_table(&h, &rows));
    for x in &r.restarts {
        for l in &x.error_log {
            out.push_str(&format!("  {}: {l}\n", x.how));
        }
    }
    out.push('\n');
    let (h, rows) = slice_rows(&r.drain, false);
    out.push_str(&format!(
        "Drain: {} persistent gets out of syncpoint by {} getters\n",
        thousands(r.drain.messages),
        r.getters
    ));
    out.push_str(&text_table(&h, &rows));
    out.push_str(&format!(
        "\nVerification: {}\n",
        verification_line(&r.verification)
    ));
    for p in &r.problems {
        out.push_str(&format!("problem: {p}\n"));
    }
    out
}

/// The Markdown report.
pub fn render_markdown(r: &RecoveryReport) -> String {
    let mut out = format!("# {}\n\n", r.title);
    out.push_str(&format!("`{}`\n\n", r.command));
    out.push_str(&format!(
        "{} putters, {} getters, SHARECNV {}, restarts {}; {}. Tuning: {}.\n\n",
        r.putters,
        r.getters,
        r.sharecnv,
        r.order,
        r.target,
        if r.tuning.is_empty() {
            "none".to_string()
        } else {
            r.tuning.join(", ")
        }
    ));
    out.push_str("## Fill\n\n");
    let (h, rows) = slice_rows(&r.fill, true);
    out.push_str(&markdown::table(&h, &rows));
    if let Some(m) = r.fill_memory {
        out.push_str(&format!(
            "\nServer RSS at the end of the fill: {} MB (peak {} MB).\n",
            mb(m.rss_bytes),
            mb(m.peak_rss_bytes)
        ));
    }
    out.push_str("\n## Restarts\n\n");
    let (h, rows) = restart_rows(r);
    out.push_str(&markdown::table(&h, &rows));
    for x in &r.restarts {
        for l in &x.error_log {
            out.push_str(&format!("\n- {}: `{l}`", x.how));
        }
    }
    out.push_str("\n\n## Drain\n\n");
    let (h, rows) = slice_rows(&r.drain, false);
    out.push_str(&markdown::table(&h, &rows));
    out.push_str(&format!(
        "\n**Verification**: {}\n",
        verification_line(&r.verification)
    ));
    for p in &r.problems {
        out.push_str(&format!("\n- problem: {p}"));
    }
    out.push_str(&format!("\n\nMachine: {}\n", r.machine.one_line()));
    out
}

/// Writes `recovery.json` and `recovery.md` into `dir` (created) and the JSON to `json`
/// too when given; returns the files written.
pub fn write_files(
    r: &RecoveryReport,
    dir: &Path,
    json: Option<&Path>,
) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let text = serde_json::to_string_pretty(r)
        .map(|t| t + "\n")
        .map_err(|e| format!("cannot encode the results: {e}"))?;
    let mut written = Vec::new();
    let mut write = |path: PathBuf, body: &str| -> Result<(), String> {
        std::fs::write(&path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        written.push(path);
        Ok(())
    };
    write(dir.join("recovery.json"), &text)?;
    write(dir.join("recovery.md"), &render_markdown(r))?;
    if let Some(p) = json {
        write(p.to_path_buf(), &text)?;
    }
    Ok(written)
}

/// Reads a run's JSON back.
pub fn read(path: &Path) -> Result<RecoveryReport, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a recovery run's JSON: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RecoveryReport {
        let slice = Slice {
            depth_from: 0,
            depth_to: 100_000,
            elapsed_secs: 4.0,
            rate: 25_000.0,
            server_cpu_pct: Some(90.0),
            log_mb_per_sec: Some(60.0),
            flushes_per_msg: Some(0.1),
            checkpoints: Some(10),
            log_in_use_pct: Some(12.5),
        };
        RecoveryReport {
            format: FORMAT,
            title: title(1_000_000, 2048, 4),
            created: String::new(),
            command: "ferry perf recovery".into(),
            machine: Machine::default(),
            messages: 1_000_000,
            size: 2048,
            queues: 4,
            putters: 16,
            getters: 16,
            sharecnv: 10,
            order: "kill-first".into(),
            tuning: vec!["LogBufferPages=4096".into()],
            target: "embedded".into(),
            fill: Phase {
                messages: 100_000,
                elapsed_secs: 4.0,
                rate: 25_000.0,
                slices: vec![slice],
                ..Phase::default()
            },
            fill_log: None,
            fill_memory: Some(Memory {
                rss_bytes: 3_000_000_000,
                peak_rss_bytes: 3_100_000_000,
            }),
            restarts: vec![Restart {
                how: "kill -9".into(),
                first_get_secs: 7.25,
                error_log: vec!["FRY7234I: loaded".into()],
                ..Restart::default()
            }],
            drain: Phase::default(),
            verification: Verification {
                put: 10,
                got: 10,
                left_on_queues: Some(0),
                ..Verification::default()
            },
            problems: Vec::new(),
            valid: true,
        }
    }

    #[test]
    fn tables_show_slices_restarts_and_the_verdict() {
        let r = sample();
        assert_eq!(r.title, "Recovery (1,000,000 x 2KB Persistent, 4 queues)");
        let text = render_text(&r);
        assert!(text.contains("0..100,000 |     25,000"), "{text}");
        assert!(text.contains("7.25"), "{text}");
        assert!(text.contains("kill -9: FRY7234I: loaded"), "{text}");
        assert!(text.contains("all accounted for"), "{text}");
        let md = render_markdown(&r);
        assert!(md.contains("| 0..100,000 | 25,000 |"), "{md}");
    }

    #[test]
    fn verification_catches_every_kind_of_loss() {
        let ok = sample().verification;
        assert!(ok.ok());
        for bad in [
            Verification {
                got: 9,
                ..ok.clone()
            },
            Verification {
                duplicates: 1,
                ..ok.clone()
            },
            Verification {
                missing: 1,
                ..ok.clone()
            },
            Verification {
                corrupt: 1,
                ..ok.clone()
            },
            Verification {
                wrong_queue: 1,
                ..ok.clone()
            },
            Verification {
                unexpected: 1,
                ..ok.clone()
            },
            Verification {
                left_on_queues: Some(1),
                ..ok.clone()
            },
        ] {
            assert!(!bad.ok(), "{bad:?}");
            assert!(verification_line(&bad).ends_with("INVALID"));
        }
    }

    #[test]
    fn files_round_trip() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = sample();
        let files = write_files(&r, dir.path(), None).expect("written");
        assert_eq!(files.len(), 2);
        let back = read(&dir.path().join("recovery.json")).expect("reads");
        assert_eq!(back.restarts, r.restarts);
        assert_eq!(back.fill, r.fill);
    }
}
