#!/bin/sh
# The standard suite (crates/ferry-perf/src/suite.rs), results into bench/results/<date>/.
#
#   bench/suite.sh                        # ~12 minutes on a 2-CPU machine
#   bench/suite.sh --secs 1 --warmup 0.5  # a shortened run (say so when you quote it)
#
# Nothing else should be compiling or running meanwhile: the harness and the queue
# manager need the machine's CPUs to themselves.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --bins --manifest-path "$root/Cargo.toml"
out=${OUT:-$root/bench/results/$(date -u +%F)}
cd "$root"
exec "$root/target/release/ferry" perf suite standard --out "$out" "$@"
