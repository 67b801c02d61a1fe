//! The whole-queue-manager simulation as a test: a short run of many seeds in the test
//! command, and a long run (`--ignored`, or `scripts/simulate.sh`) under a time budget.
//!
//! - `FERRY_SIM_SEED=<n>`: run that one seed (replays a failure exactly);
//! - `FERRY_SIM_SEEDS=<n>`: how many seeds the short run takes (default 200);
//! - `FERRY_SIM_STEPS=<n>`: steps per seed (default 300);
//! - `FERRY_SIM_SECONDS=<n>`, `FERRY_SIM_FROM=<n>`: the long run's time budget (default
//!   60) and first seed (default 1000000).

use std::time::{Duration, Instant};

fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// Runs `seeds` (until `budget` is spent, if given); returns how many ran and the
/// failures, each printed as it happens with the command that replays it.
fn run_seeds(
    seeds: impl Iterator<Item = u64>,
    steps: u64,
    budget: Option<Duration>,
) -> (u64, Vec<u64>) {
    let start = Instant::now();
    let mut total = ferry_simulation::Summary::default();
    let (mut ran, mut failed) = (0, Vec::new());
    for seed in seeds {
        if budget.is_some_and(|b| start.elapsed() >= b) {
            break;
        }
        match ferry_simulation::run(seed, steps) {
            Ok(s) => {
                total.steps += s.steps;
                total.calls += s.calls;
                total.held_replies += s.held_replies;
                total.restarts += s.restarts;
                total.faults += s.faults;
                total.checkpoints += s.checkpoints;
                total.replies_found += s.replies_found;
                total.refused += s.refused;
            }
            Err(f) => {
                eprintln!("{f}");
                failed.push(seed);
            }
        }
        ran += 1;
    }
    eprintln!(
        "simulated {ran} seeds in {:.1?}, {} failed: {total:?}",
        start.elapsed(),
        failed.len()
    );
    (ran, failed)
}

#[test]
fn short_run() {
    let steps = env("FERRY_SIM_STEPS").unwrap_or(300);
    let (_, failed) = match env("FERRY_SIM_SEED") {
        Some(seed) => run_seeds(std::iter::once(seed), steps, None),
        None => run_seeds(0..env("FERRY_SIM_SEEDS").unwrap_or(200), steps, None),
    };
    assert!(failed.is_empty(), "failing seeds: {failed:?}");
}

#[test]
#[ignore = "long run: scripts/simulate.sh"]
fn long_run() {
    let steps = env("FERRY_SIM_STEPS").unwrap_or(1000);
    let from = env("FERRY_SIM_FROM").unwrap_or(1_000_000);
    let budget = Duration::from_secs(env("FERRY_SIM_SECONDS").unwrap_or(60));
    let (ran, failed) = run_seeds(from.., steps, Some(budget));
    eprintln!(
        "long run: seeds {from}..{} ran, failing: {failed:?}",
        from + ran
    );
    assert!(failed.is_empty(), "failing seeds: {failed:?}");
}
