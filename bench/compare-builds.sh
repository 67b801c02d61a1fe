#!/usr/bin/env bash
# Two builds of Ferry against each other: RR-CC 2KB, native and AMQP, non-persistent at 16
# and 64 requesters and persistent at 64, in ROUNDS alternating rounds (the order of the
# two builds swaps every round), then the median rate of each build and the median of the
# per-round ratios, with the steal each step saw.
#
#   BEFORE=/path/to/old/ferry bench/compare-builds.sh        # AFTER: cargo's release build
#   BEFORE=old/ferry AFTER=new/ferry ROUNDS=6 SECS=5 bench/compare-builds.sh
#
# Why rounds and ratios: on a 2-vCPU VM one run can differ by a third from the next
# (steal, vCPU placement; docs/performance.md), so only ratios of runs made in the same
# minutes say anything. Each build's own `ferry perf` drives it (the harness of that
# build), against a fresh embedded queue manager. Results (each run's JSON, summary.md)
# go to bench/results/<date>/compare-builds (or OUT=dir).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
: "${BEFORE:?set BEFORE to the ferry binary of the build to compare against}"
rounds="${ROUNDS:-5}"
secs="${SECS:-5}"
warmup="${WARMUP:-1}"
out="${OUT:-bench/results/$(date -u +%Y-%m-%d)/compare-builds}"
if [ -z "${AFTER:-}" ]; then
  cargo build --release --bins >/dev/null
  AFTER="$root/target/release/ferry"
fi
mkdir -p "$out"
# name|flags
workloads=(
  "native-np|--protocol native --clients 16,64"
  "amqp-np|--protocol amqp --clients 16,64"
  "native-p|--protocol native --clients 64 --persistent"
  "amqp-p|--protocol amqp --clients 64 --persistent"
)
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="before after"; else order="after before"; fi
  for w in "${workloads[@]}"; do
    name="${w%%|*}"
    flags="${w#*|}"
    for build in $order; do
      if [ "$build" = before ]; then bin="$BEFORE"; else bin="$AFTER"; fi
      echo "== round $r $name $build"
      # shellcheck disable=SC2086
      "$bin" perf rr-cc $flags --sizes 2KB --secs "$secs" --warmup "$warmup" \
        --out "$out/$r-$name-$build" --json "$out/$r-$name-$build.json" \
        | grep -E '^ +[0-9]+ \|' || true
    done
  done
done
python3 - "$out" "$rounds" "${workloads[@]}" <<'EOF' | tee "$out/summary.md"
import json, statistics, sys
out, rounds, workloads = sys.argv[1], int(sys.argv[2]), [w.split("|")[0] for w in sys.argv[3:]]

def steps(path):
    with open(path) as f:
        series = json.load(f)["series"][0]
    return {s["clients"]: s["window"] for s in series["steps"]}

print("| Workload | Requesters | before: median rate (server µs/RT) | after: median rate (server µs/RT) | after / before, median of rounds (range) | worst steal% |")
print("|---|---|---|---|---|---|")
for name in workloads:
    per = {}
    for r in range(1, rounds + 1):
        try:
            b = steps(f"{out}/{r}-{name}-before.json")
            a = steps(f"{out}/{r}-{name}-after.json")
        except (OSError, KeyError, ValueError):
            continue
        for n in b:
            if n in a and b[n]["rate"]:
                per.setdefault(n, []).append((b[n], a[n]))
    for n in sorted(per):
        pairs = per[n]
        med = lambda xs: statistics.median(xs)
        ratios = [100 * a["rate"] / b["rate"] for b, a in pairs]
        steal = max(max(b.get("steal_pct", 0.0), a.get("steal_pct", 0.0)) for b, a in pairs)
        print(f"| {name} | {n} | {med([b['rate'] for b, _ in pairs]):,.0f} "
              f"({med([b['server_us_per_rt'] for b, _ in pairs]):.1f}) | "
              f"{med([a['rate'] for _, a in pairs]):,.0f} "
              f"({med([a['server_us_per_rt'] for _, a in pairs]):.1f}) | "
              f"{med(ratios):.1f}% ({min(ratios):.0f}-{max(ratios):.0f}%, {len(pairs)} rounds) | {steal:.1f} |")
EOF
