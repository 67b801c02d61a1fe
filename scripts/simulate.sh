#!/usr/bin/env bash
# The long run of the whole-queue-manager simulation (crates/ferry-simulation,
# docs/internals/simulation.md) on a release build: seeds one after another from FROM
# until SECONDS_BUDGET seconds have passed, STEPS steps each. Prints each failure with its
# seed and the command that replays it, then how many seeds ran and which failed.
#
#   scripts/simulate.sh
#   SECONDS_BUDGET=3600 FROM=5000000 STEPS=2000 scripts/simulate.sh
#
# (`cargo test` runs the short form: 200 seeds of 300 steps on a debug build.)
set -euo pipefail
cd "$(dirname "$0")/.."
export FERRY_SIM_SECONDS="${SECONDS_BUDGET:-600}"
export FERRY_SIM_FROM="${FROM:-1000000}"
export FERRY_SIM_STEPS="${STEPS:-1000}"
echo "simulating from seed $FERRY_SIM_FROM for $FERRY_SIM_SECONDS s, $FERRY_SIM_STEPS steps a seed"
cargo test --release -p ferry-simulation --test simulation -- --ignored --nocapture long_run
