#!/bin/sh
# RR-CC (issue 2's benchmark) against an embedded Ferry queue manager, with the relay
# yardstick (bench/yardsticks: relay-load and the relay it starts) measured for every step
# in the same run.
#
#   bench/rr-cc.sh                                  # 1,4,16,64 requesters, 2KB, 10 s each
#   bench/rr-cc.sh --clients 16 --secs 5 --json /tmp/rr.json
#
# Builds every binary of the workspace in release mode first (ferry, the yardsticks, and
# the harness wherever it lives).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cargo build --release --bins
exec target/release/ferry perf rr-cc --relay-baseline target/release/relay-load "$@"
