#!/usr/bin/env bash
# Ferry's AMQP 1.0 channel against its native protocol, RR-CC 2KB non-persistent: ROUNDS
# alternating pairs of `ferry perf rr-cc` (native, then --protocol amqp) against fresh
# embedded queue managers, then a table of AMQP / native per round and step with the share
# of CPU time the hypervisor stole during each step (`Steal%`), and the median ratio over
# the steps where both runs were undisturbed (steal under 3%) and over all of them.
#
#   bench/amqp-vs-native.sh                      # 5 rounds, 16 and 64 requesters, 5 s steps
#   ROUNDS=8 CLIENTS=64 SECS=4 bench/amqp-vs-native.sh
#   FERRY=/path/to/ferry bench/amqp-vs-native.sh # a given build (default: cargo's release build)
#
# Why rounds: on this 2-vCPU nested VM one pair of runs can differ by a third from the
# next (steal, vCPU placement, wake-ups; docs/performance.md), so a single ratio is not a
# result. Results (each run's JSON, a summary) go to bench/results/<date>/amqp-vs-native
# (or OUT=dir).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
rounds="${ROUNDS:-5}"
clients="${CLIENTS:-16,64}"
secs="${SECS:-5}"
warmup="${WARMUP:-1}"
out="${OUT:-bench/results/$(date -u +%Y-%m-%d)/amqp-vs-native}"
if [ -z "${FERRY:-}" ]; then
  cargo build --release --bins >/dev/null
  FERRY="$root/target/release/ferry"
fi
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for proto in native amqp; do
    echo "== round $r $proto"
    "$FERRY" perf rr-cc --protocol "$proto" --sizes 2KB --clients "$clients" --secs "$secs" \
      --warmup "$warmup" --out "$out/$r-$proto" --json "$out/$r-$proto.json" \
      | grep -E '^ +[0-9]+ \|' || true
  done
done
python3 - "$out" "$rounds" <<'EOF' | tee "$out/summary.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
CLEAN = 3.0  # % steal under which a step counts as undisturbed (ferry perf's own note)

def steps(path):
    with open(path) as f:
        series = json.load(f)["series"][0]
    return {s["clients"]: s["window"] for s in series["steps"]}

rows, clean, every = [], {}, {}
for r in range(1, rounds + 1):
    native, amqp = steps(f"{out}/{r}-native.json"), steps(f"{out}/{r}-amqp.json")
    for n in sorted(native):
        a, b = native[n], amqp.get(n)
        if not b or not a["rate"]:
            continue
        ratio = 100 * b["rate"] / a["rate"]
        steal = max(a.get("steal_pct", 0.0), b.get("steal_pct", 0.0))
        every.setdefault(n, []).append(ratio)
        if steal < CLEAN:
            clean.setdefault(n, []).append(ratio)
        rows.append((r, n, a, b, ratio, steal))

print("| Round | Requesters | Native RT/s | AMQP RT/s | AMQP / native | Server µs/RT native / AMQP | Steal% (worse run) |")
print("|---|---|---|---|---|---|---|")
for r, n, a, b, ratio, steal in rows:
    print(f"| {r} | {n} | {a['rate']:,.0f} | {b['rate']:,.0f} | {ratio:.0f}% | "
          f"{a['server_us_per_rt']:.1f} / {b['server_us_per_rt']:.1f} | {steal:.1f} |")
print()
for n in sorted(every):
    c = clean.get(n, [])
    line = f"{n} requesters: median AMQP / native {statistics.median(every[n]):.0f}% over {len(every[n])} rounds"
    if c:
        line += (f"; {statistics.median(c):.0f}% over the {len(c)} undisturbed ones "
                 f"(range {min(c):.0f}-{max(c):.0f}%)")
    else:
        line += "; no round was undisturbed (steal under 3% in both runs)"
    print(line)
EOF
