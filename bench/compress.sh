#!/usr/bin/env bash
# Channel compression on a native client channel, every COMPMSG technique against none, in
# alternating rounds: the IBM MQ report's compression table (seed 000 Table 1: COMPRATE for
# JSON at 2 KB and 20 KB) with the rate and CPU each technique costs here.
#
#   bench/compress.sh                  # RR-CC non-persistent, 16 requesters, 2KB and 20KB
#   TECHNIQUES="NONE LZ4FAST ZLIBFAST" SIZES="2KB" CLIENTS=64 ROUNDS=3 SECS=6 bench/compress.sh
#
# One queue manager with channel COMP.SVRCONN COMPMSG(ANY); every point is `ferry perf rr-cc
# --connect ... --channel COMP.SVRCONN --body json [--compress T]` (JSON-like order records,
# the same bytes each run; NONE sends them uncompressed). Each round measures every technique
# and size once, the order reversed in even rounds. Prints one line per point (`CP round=...
# technique=... size=... rate=... server_us_per_rt=... client_us_per_rt=... comprate=...`,
# COMPRATE the long-term value DISPLAY CHSTATUS showed at the end of the window, averaged
# over the channel instances) and the medians. Results go to OUT (default
# bench/results/<UTC date>/compress). FERRY=path uses that ferry binary instead of building.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 0 ] || { sed -n 2,16p "$0" >&2; exit 2; }
rounds="${ROUNDS:-3}"
clients="${CLIENTS:-16}"
secs="${SECS:-6}"
sizes="${SIZES:-2KB 20KB}"
techniques="${TECHNIQUES:-NONE RLE ZLIBFAST ZLIBHIGH LZ4FAST LZ4HIGH}"
out="${OUT:-$root/bench/results/$(date -u +%F)/compress}"
if [ -n "${FERRY:-}" ]; then ferry=$FERRY; else
  (cd "$root" && cargo build --release --bins -q)
  ferry="$root/target/release/ferry"
fi
. "$root/bench/lib/private-qm.sh"
qm=QMCOMP
work=""
trap 'remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
mkdir -p "$out"
results="$out/points.txt"
: > "$results"
"$ferry" start "$qm" >/dev/null
pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/qm.pid")
{ for i in $(seq 1 10); do echo "DEFINE QLOCAL(REQUEST.$i) REPLACE"; done
  echo "DEFINE QLOCAL(REPLY) REPLACE"
  echo "DEFINE CHANNEL(COMP.SVRCONN) CHLTYPE(SVRCONN) COMPMSG(ANY) MAXINST(999999999) MAXINSTC(999999999) REPLACE"
} | "$ferry" mqsc "$qm" >/dev/null

# measure TECHNIQUE SIZE: one point; prints its fields
measure() {
  local technique=$1 size=$2 compress=()
  [ "$technique" = NONE ] || compress=(--compress "$technique")
  "$ferry" perf rr-cc --connect "localhost($port)" --qmgr "$qm" --server-pid "$pid" \
    --channel COMP.SVRCONN --body json ${compress[@]+"${compress[@]}"} --sizes "$size" \
    --clients "$clients" --secs "$secs" --warmup 2 --json "$work/perf.json" --out "$work/perf" \
    >/dev/null 2>&1
  python3 - "$work/perf.json" <<'PY'
import json, sys
step = json.load(open(sys.argv[1]))["series"][0]["steps"][0]
w, c = step["window"], step.get("compression") or {}
print("rate=%.0f server_us_per_rt=%.1f client_us_per_rt=%.1f comprate=%s comptime_us=%s%s" % (
    w["rate"], w["server_us_per_rt"], w.get("harness_us_per_rt") or float("nan"),
    "%.0f" % c["rate_long_pct"] if c else "0", "%.0f" % c["time_long_us"] if c else "0",
    "" if step.get("valid", True) else " failed=invalid"))
PY
}

# Warm the queue manager and the page cache once.
measure NONE 2KB >/dev/null || true
for r in $(seq 1 "$rounds"); do
  order="$techniques"
  [ $((r % 2)) = 0 ] && order=$(echo "$techniques" | tr ' ' '\n' | tac | tr '\n' ' ')
  for t in $order; do
    for size in $sizes; do
      line="CP round=$r technique=$t size=$size clients=$clients $(measure "$t" "$size" || echo failed=1)"
      echo "$line"
      echo "$line" >> "$results"
    done
  done
done

python3 - "$results" "$clients" "$techniques" "$sizes" <<'PY' | tee "$out/table.md"
import statistics, sys
path, clients, techniques, sizes = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()
rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(path) if "failed" not in l]
def med(t, size, field):
    xs = [float(r[field]) for r in rows if r["technique"] == t and r["size"] == size]
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")
print("\nmedians over the rounds (RR-CC non-persistent, %s requesters, JSON-like bodies):" % clients)
print("| COMPMSG | size | rt/s | vs NONE | server µs/rt | client µs/rt | COMPRATE | COMPTIME µs |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for size in sizes:
    base = med("NONE", size, "rate")
    for t in techniques:
        rate = med(t, size, "rate")
        print("| %s | %s | %.0f | %.2f | %.1f | %.1f | %.0f%% | %.0f |" % (
            t, size, rate, rate / base, med(t, size, "server_us_per_rt"),
            med(t, size, "client_us_per_rt"), med(t, size, "comprate"), med(t, size, "comptime_us")))
PY
