#!/usr/bin/env bash
# The longer runs of the object definitions store (issue 18 point 8), on a release build
# (crates/ferry/tests/catalogue.rs says what each checks):
#
#  1. 100,000 DEFINE QLOCAL through one `ferry mqsc` session while another application's
#     put+get round trips are timed; all of them there after a kill -9 and restart.
#     (`cargo test` runs the same test with 20,000 on a debug build.)
#  2. What a DEFINE costs with 10,000 and 50,000 queues already defined, and another
#     application's round trip meanwhile; FERRY_CATALOGUE_BIN measures another `ferry`
#     binary instead (an earlier build, for a before/after figure).
#
#   scripts/catalogue-scale.sh
#   QUEUES=200000 SIZES=10000,100000 DEFINES=500 scripts/catalogue-scale.sh
#   FERRY_CATALOGUE_BIN=/path/to/older/ferry scripts/catalogue-scale.sh   # part 2 only
#
# Output is kept in target/catalogue-scale.log.
set -euo pipefail
cd "$(dirname "$0")/.."
export FERRY_CATALOGUE_QUEUES="${QUEUES:-100000}"
export FERRY_CATALOGUE_SIZES="${SIZES:-10000,50000}"
export FERRY_CATALOGUE_DEFINES="${DEFINES:-200}"
log=target/catalogue-scale.log
mkdir -p target
: > "$log"
echo "==> cargo build --release"
cargo build --release -p ferry
if [[ -z "${FERRY_CATALOGUE_BIN:-}" ]]; then
  echo "==> $FERRY_CATALOGUE_QUEUES DEFINEs through one session (release build)"
  cargo test --release -p ferry --test catalogue -- --nocapture many_defines 2>&1 | tee -a "$log"
fi
echo "==> a DEFINE at $FERRY_CATALOGUE_SIZES queues (${FERRY_CATALOGUE_BIN:-this build})"
cargo test --release -p ferry --test catalogue -- --nocapture --ignored define_cost_at_catalogue_sizes 2>&1 | tee -a "$log"
grep -E "DEFINE|queues:" "$log" || true
