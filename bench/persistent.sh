#!/usr/bin/env bash
# Persistent messaging against this machine's ceilings, in one session (issue 3):
#   - group-commit (bench/yardsticks): 2 KiB records made durable by one writer thread
#     with P producers (the disk and fdatasync ceiling for the same record size);
#   - ferry perf rr-cc, 2 KB, non-persistent and persistent, 1/16/64/256 requesters, with the
#     recovery log's flushes per message and records per flush;
#   - ferry perf sr-cc persistent: put+get messages/s.
# Results in bench/results/<date>/persistent (or OUT=dir).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
clients="${CLIENTS:-1,16,64,256}"
secs="${SECS:-5}"
out="${OUT:-bench/results/$(date -u +%Y-%m-%d)/persistent}"
mkdir -p "$out"
# ferry, the yardsticks, and the harness wherever it lives.
cargo build --release --bins >/dev/null
ferry="$root/target/release/ferry"
echo "== group-commit (2 KiB records, fdatasync, one writer)"
mkdir -p target/benchdir
"$root/target/release/group-commit" --dir target/benchdir --producers "$clients" \
  --record 2048 --secs 4 | tee "$out/group_commit.txt" | grep -v '^RESULT'
echo "== rr-cc non-persistent"
"$ferry" perf rr-cc --clients "$clients" --secs "$secs" --warmup 1 --out "$out/rr-cc" \
  | tee "$out/rr-cc.txt" | grep -E '^ +[0-9]+ \|'
echo "== rr-cc persistent"
"$ferry" perf rr-cc --persistent --clients "$clients" --secs "$secs" --warmup 1 \
  --out "$out/rr-cc-persistent" | tee "$out/rr-cc-persistent.txt" | grep -E '^ +[0-9]+ \|'
echo "== sr-cc persistent (put + get)"
"$ferry" perf sr-cc --persistent --clients 1,16,64 --secs "$secs" --warmup 1 \
  --out "$out/sr-cc-persistent" | tee "$out/sr-cc-persistent.txt" | grep -E '^ +[0-9]+ \|'
echo "== results in $out"
