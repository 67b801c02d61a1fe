#!/usr/bin/env bash
# Long crash audit of assured delivery over message channels (issue 23): persistent puts
# on QMA to a remote queue on QMB, getters on QMB, and each round QMA, QMB or both killed
# with SIGKILL, or the channel cut at a TCP proxy, then restarted and audited
# (crates/ferry/tests/channel_crash_audit.rs says what the audit checks).
#
#   ROUNDS=100 scripts/channel-crash-audit.sh            # default 100 rounds
#   SEED=123 ROUNDS=30 scripts/channel-crash-audit.sh    # replay a seed's random choices
#
# Prints the seed, every round, the time taken and the summary; the whole output is kept
# in target/channel-crash-audit.log. Exits non-zero on any violation.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS="${ROUNDS:-100}"
if [[ -n "${SEED:-}" ]]; then
  export FERRY_CHANNEL_AUDIT_SEED="$SEED"
fi
export FERRY_CHANNEL_AUDIT_ROUNDS="$ROUNDS"
log=target/channel-crash-audit.log
mkdir -p target

echo "==> cargo build --release"
cargo build --release -p ferry
# `cargo test --release` builds the test against the release ferry binary
# (CARGO_BIN_EXE_ferry of the release profile).
echo "==> channel crash audit: $ROUNDS rounds (release build)"
start=$(date +%s)
set +e
cargo test --release -p ferry --test channel_crash_audit -- --nocapture 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))

echo
echo "==> result"
grep -m1 '^channel crash audit: seed' "$log" || true
grep '^channel crash audit summary' "$log" || true
grep -A3 'channel crash audit FAILED' "$log" || true
printf 'time: %dm%02ds, exit %d (log: %s)\n' $((elapsed / 60)) $((elapsed % 60)) "$status" "$log"
exit "$status"
