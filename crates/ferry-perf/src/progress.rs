//! The live progress display: one indicatif bar per step while it warms up and
//! measures, showing the current rate, when stderr is a terminal; plain lines (one when
//! a step starts, one when it ends) when it is not, so logs and CI output stay readable.
//! Tables and summaries go to stdout either way.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Where a run reports its progress.
pub struct Progress {
    live: bool,
    bar: std::cell::RefCell<Option<ProgressBar>>,
}

impl Progress {
    /// A display that is live when stderr is a terminal, plain lines otherwise.
    pub fn new() -> Progress {
        Progress::with_live(std::io::stderr().is_terminal())
    }

    /// A display that is live or plain as asked (tests use plain).
    pub fn with_live(live: bool) -> Progress {
        Progress {
            live,
            bar: std::cell::RefCell::new(None),
        }
    }

    /// True when the display draws a live bar.
    pub fn is_live(&self) -> bool {
        self.live
    }

    /// A step begins: `label` names it (workload, size, clients).
    pub fn step_start(&self, label: &str) {
        if self.live {
            let bar = ProgressBar::new(1000);
            let style = ProgressStyle::with_template(
                "{prefix:.bold} [{bar:24.cyan/blue}] {elapsed:>3} {wide_msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(200));
            *self.bar.borrow_mut() = Some(bar);
        } else {
            eprintln!("{label}: starting");
        }
    }

    /// Waits `secs` seconds of phase `phase` (e.g. `warm-up`, `measuring`), refreshing
    /// the bar four times a second with `status()` (e.g. the current rate).
    pub async fn wait(&self, phase: &str, secs: f64, status: impl Fn(f64) -> String) {
        let start = Instant::now();
        let total = Duration::from_secs_f64(secs.max(0.0));
        if !self.live {
            tokio::time::sleep(total).await;
            return;
        }
        loop {
            let elapsed = start.elapsed();
            if elapsed >= total {
                break;
            }
            if let Some(bar) = self.bar.borrow().as_ref() {
                let frac = elapsed.as_secs_f64() / total.as_secs_f64().max(1e-9);
                bar.set_position((frac * 1000.0) as u64);
                bar.set_message(format!("{phase} {}", status(elapsed.as_secs_f64())));
            }
            let left = total - elapsed;
            tokio::time::sleep(left.min(Duration::from_millis(250))).await;
        }
    }

    /// Shows `msg` on the bar (live) and nowhere else.
    pub fn status(&self, msg: &str) {
        if let Some(bar) = self.bar.borrow().as_ref() {
            bar.set_message(msg.to_string());
        }
    }

    /// A step ended: clears the bar and prints `line` (its result).
    pub fn step_done(&self, line: &str) {
        if let Some(bar) = self.bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
        eprintln!("{line}");
    }

    /// Prints a line above the bar (or plainly).
    pub fn line(&self, line: &str) {
        match self.bar.borrow().as_ref() {
            Some(bar) => bar.println(line),
            None => eprintln!("{line}"),
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Progress::new()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = self.bar.borrow_mut().take() {
            bar.finish_and_clear();
        }
    }
}
