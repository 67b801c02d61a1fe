#!/bin/sh
# RR-CC (issue 2's benchmark) against an embedded Ferry queue manager, with the
# loopback relay yardstick from tools/limits measured in the same run.
#
#   bench/rr-cc.sh                       # 1,4,16,64 requesters, 2KB, 10 s each
#   bench/rr-cc.sh --clients 16 --secs 5 --json /tmp/rr.json
#
# LIMITS points at the limits crate (default: ../shared/tools/limits beside the repository); it is built
# into target/limits so nothing is written next to its sources.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
limits=${LIMITS:-$root/../shared/tools/limits}
cargo build --release -p ferry --manifest-path "$root/Cargo.toml"
cargo build --release --manifest-path "$limits/Cargo.toml" --target-dir "$root/target/limits"
exec "$root/target/release/ferry" perf rr-cc \
    --relay-baseline "$root/target/limits/release/rr_load" "$@"
