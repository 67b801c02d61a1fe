#!/usr/bin/env bash
# RR-DQ-BB against RR-BB in alternating rounds: what crossing two queue managers and their
# channels costs (issue 23: RR-DQ-BB at 60% of RR-BB's rate), with one or more channel
# pairs per direction, as the IBM MQ report spreads its remote queues (seed 000 §3.2).
#
#   bench/rr-dq.sh                       # 2 KB non-persistent, 16 and 64 requesters, pairs 1 and 4
#   PERSISTENT=1 bench/rr-dq.sh          # persistent messages
#   PAIRS="1 2 4" CLIENTS="16" ROUNDS=4 SECS=6 bench/rr-dq.sh
#   CLUSTER=1 bench/rr-dq.sh             # adds rr-cluster-bb (bind not fixed) to every round
#
# Every point is a fresh `ferry perf` run (embedded queue managers, 3 s of warm-up). Each
# round measures RR-BB then RR-DQ-BB with each pair count (the order reversed in even
# rounds). Prints one line per point (`DQ round=... run=rr-bb|dq-pN|cluster clients=...
# rate=... server_us_per_rt=... a_us=... b_us=... batch=...`) and the medians with each
# run's rate as a share of RR-BB's. FERRY=path uses that ferry binary instead of building a
# release one; OUT=dir sets where the points and the table go.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 0 ] || { sed -n 2,17p "$0" >&2; exit 2; }
rounds="${ROUNDS:-3}"
clients="${CLIENTS:-16 64}"
pairs="${PAIRS:-1 4}"
secs="${SECS:-6}"
out="${OUT:-$root/bench/results/$(date -u +%F)/rr-dq}"
persistent=()
[ "${PERSISTENT:-0}" = 1 ] && persistent=(--persistent)
if [ -n "${FERRY:-}" ]; then ferry=$(realpath "$FERRY"); else
  (cd "$root" && cargo build --release --bins -q)
  ferry="$root/target/release/ferry"
fi
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$out/points.txt"
: > "$results"
runs="rr-bb"
for p in $pairs; do runs="$runs dq-p$p"; done
[ "${CLUSTER:-0}" = 1 ] && runs="$runs cluster"

measure() {
  local run=$1 n=$2 args=()
  case "$run" in
    rr-bb) args=(rr-bb) ;;
    dq-p*) args=(rr-dq-bb --channel-pairs "${run#dq-p}") ;;
    cluster) args=(rr-cluster-bb --bind not-fixed) ;;
  esac
  (cd "$work" && "$ferry" perf "${args[@]}" ${persistent[@]+"${persistent[@]}"} --sizes 2KB \
    --clients "$n" --secs "$secs" --warmup 3 --json "$work/perf.json" --out "$work/perf" \
    >/dev/null 2>&1)
  python3 - "$work/perf.json" <<'PY'
import json, sys
step = json.load(open(sys.argv[1]))["series"][0]["steps"][0]
w = step["window"]
f = lambda v: "%.1f" % v if v is not None else "nan"
print("rate=%.0f server_us_per_rt=%s a_us=%s b_us=%s batch=%s%s" % (
    w["rate"], f(w.get("server_us_per_rt")), f(w.get("requesters_qmgr_us_per_rt")),
    f(w.get("responders_qmgr_us_per_rt")), f(step.get("messages_per_batch")),
    "" if step.get("valid", True) else " failed=invalid"))
PY
}

for r in $(seq 1 "$rounds"); do
  order="$runs"
  [ $((r % 2)) = 0 ] && order=$(echo "$runs" | tr ' ' '\n' | tac | tr '\n' ' ')
  for n in $clients; do
    for run in $order; do
      line="DQ round=$r run=$run clients=$n $(measure "$run" "$n" || echo failed=1)"
      echo "$line"
      echo "$line" >> "$results"
    done
  done
done

python3 - "$results" "$clients" "$runs" "${PERSISTENT:-0}" <<'PY' | tee "$out/table.md"
import statistics, sys
path, clients, runs, persistent = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4]
rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(path) if "failed" not in l]
def med(run, n, field):
    xs = [float(r[field]) for r in rows if r["run"] == run and r["clients"] == n]
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")
kind = "persistent" if persistent == "1" else "non-persistent"
print("\nmedians over the rounds (2 KB %s):" % kind)
print("| requesters | run | rt/s | vs RR-BB | server µs/rt | A + B µs/rt | msgs/batch |")
print("|---:|---|---:|---:|---:|---:|---:|")
for n in clients:
    base = med("rr-bb", n, "rate")
    for run in runs:
        rate = med(run, n, "rate")
        print("| %s | %s | %.0f | %.2f | %.1f | %.1f + %.1f | %.1f |" % (
            n, run, rate, rate / base, med(run, n, "server_us_per_rt"),
            med(run, n, "a_us"), med(run, n, "b_us"), med(run, n, "batch")))
PY
