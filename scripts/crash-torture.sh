#!/usr/bin/env bash
# Long crash torture of persistent messaging (issue 3): concurrent putters and getters, in
# and out of syncpoint, against a release `ferry` server killed with SIGKILL at random
# moments, restarted and audited every round (crates/ferry/tests/crash_torture.rs says
# what the audit checks).
#
#   ROUNDS=200 scripts/crash-torture.sh            # default 200 rounds
#   SEED=123 ROUNDS=50 scripts/crash-torture.sh    # replay a seed's random choices
#
# Prints the seed, every round, the time taken and the summary; the whole output is kept
# in target/crash-torture.log. Exits non-zero on any violation.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-200}"
if [[ -n "${SEED:-}" ]]; then
  export FERRY_TORTURE_SEED="$SEED"
fi
export FERRY_TORTURE_ROUNDS="$ROUNDS"
log=target/crash-torture.log
mkdir -p target

echo "==> cargo build --release"
cargo build --release -p ferry
# `cargo test --release` builds the test against target/release/ferry
# (CARGO_BIN_EXE_ferry of the release profile).
echo "==> crash torture: $ROUNDS rounds (release build)"
start=$(date +%s)
set +e
cargo test --release -p ferry --test crash_torture -- --nocapture 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))

echo
echo "==> result"
grep -m1 '^crash torture: seed' "$log" || true
grep '^crash torture summary' "$log" || true
grep -A3 'crash torture FAILED' "$log" || true
printf 'time: %dm%02ds, exit %d (log: %s)\n' $((elapsed / 60)) $((elapsed % 60)) "$status" "$log"
exit "$status"
