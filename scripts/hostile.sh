#!/usr/bin/env bash
# The hostile-client suite in its long form (issue 18, docs/hostile-clients.md): every
# probe of crates/ferry/tests/hostile.rs against a release `ferry` server, with thousands
# of sockets per flood and longer stalls. `cargo test` (scripts/test.sh) runs the same
# probes in a short form against a debug build.
#
#   scripts/hostile.sh                  # every probe, long form
#   scripts/hostile.sh amqp_            # only the probes whose name contains amqp_
#   SCALE=short scripts/hostile.sh      # the short form, against a release build
#
# Prints one summary line per probe (connections, RSS growth and its bound, descriptors
# before/peak/after, log growth, the good clients' slowest round trip); the whole output
# is kept in target/hostile.log. Exits non-zero if any probe fails.
set -euo pipefail
cd "$(dirname "$0")/.."

export FERRY_HOSTILE_SCALE="${SCALE:-long}"
log=target/hostile.log
# The test appends its summary lines here (CARGO_TARGET_TMPDIR/hostile-summary.txt).
summary=target/tmp/hostile-summary.txt
mkdir -p target/tmp
rm -f "$summary"

# The floods hold thousands of sockets on both ends: the test raises its own soft limit
# to the hard one, which must allow them.
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 10000 ]; then
  echo "warning: the hard descriptor limit is $(ulimit -Hn); the long form wants 10000+" >&2
fi

echo "==> cargo build --release"
cargo build --release -p ferry
# `cargo test --release` builds the test against target/release/ferry
# (CARGO_BIN_EXE_ferry of the release profile).
echo "==> hostile-client probes ($FERRY_HOSTILE_SCALE form, release build)"
start=$(date +%s)
set +e
cargo test --release -p ferry --test hostile -- --nocapture --test-threads=1 "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
elapsed=$(($(date +%s) - start))

echo
echo "==> summary"
cat "$summary" 2>/dev/null || grep -E '^hostile:|^    failed:' "$log" || true
printf 'time: %dm%02ds, exit %d (log: %s)\n' $((elapsed / 60)) $((elapsed % 60)) "$status" "$log"
exit "$status"
