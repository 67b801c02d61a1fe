#!/usr/bin/env bash
# One queue manager, two values of one qm.ini key, in alternating rounds: the A/B test of a
# tuning setting (e.g. TuningParameters RuntimeScheduling BATCH against NORMAL).
#
#   bench/ini-ab.sh KEY A B [--jms] [-- MORE OPTIONS]
#   bench/ini-ab.sh RuntimeScheduling BATCH NORMAL --jms                  # Qpid JMS, REPLY + selector
#   bench/ini-ab.sh RuntimeScheduling BATCH NORMAL --jms -- --reply-queues per-requester
#   bench/ini-ab.sh RuntimeScheduling BATCH NORMAL -- --protocol amqp \
#       --sessions-per-connection 1 --reply-queues per-requester      # ferry perf, AMQP
#   CLIENTS="1 16 64" ROUNDS=4 bench/ini-ab.sh ...
#
# Each round restarts the queue manager with KEY=A, then with KEY=B (B first in even rounds,
# so neither value always runs on a warmer machine), warms it up with 8 s of RR at 16
# clients, and measures RR 2 KB at each of CLIENTS (default "16 64"): with --jms the JMS
# load generator (bench/jms-load; the options after -- go to it), else `ferry perf rr-cc`
# over the native protocol (the options after -- go to it; `--protocol amqp` for AMQP).
# SECS (6) measured seconds per point after 2 s of warm-up, ROUNDS (4). Prints one line per
# point (`AB round=... KEY=... clients=... rate=... server_us_per_rt=... p50_us=...
# p99_us=...`) and at the end each value's median CPU per round trip and rate by clients.
# KEY must be a key of the queue manager's qm.ini (a line `KEY=...` in it). FERRY=path
# uses that ferry binary instead of building a release one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -ge 3 ] || { sed -n 2,21p "$0" >&2; exit 2; }
key=$1 a=$2 b=$3; shift 3
jms=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --jms) jms=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
rounds="${ROUNDS:-4}"
clients="${CLIENTS:-16 64}"
secs="${SECS:-6}"
if [ -n "${FERRY:-}" ]; then ferry=$FERRY; else
  (cd "$root" && cargo build --release --bins -q)
  ferry="$root/target/release/ferry"
fi
[ "$jms" = 1 ] && "$root/bench/jms-load/build.sh"
. "$root/bench/lib/private-qm.sh"
qm=QMAB
work=""
trap 'remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
ini="$FERRY_HOME/qmgrs/$qm/qm.ini"
grep -q "^ *$key=" "$ini" || { echo "$key is not in qm.ini" >&2; exit 2; }
maxn=$(echo "$clients" | tr ' ' '\n' | sort -n | tail -1)
results="$work/results.txt"
: > "$results"

# measure N: one point against the running queue manager; prints its fields
measure() {
  local n=$1
  if [ "$jms" = 1 ]; then
    "$root/bench/jms-load/run.sh" rr --url "amqp://localhost:$aport" --clients "$n" --secs "$secs" \
      --warmup 2 --broker ferry --broker-pid "$pid" ${extra[@]+"${extra[@]}"} 2>/dev/null \
      | python3 "$root/bench/lib/point.py" jms
  else
    if [[ " ${extra[*]-} " == *" amqp "* ]]; then
      target=(--url "amqp://localhost:$aport")
    else
      target=(--connect "localhost($port)" --qmgr "$qm")
    fi
    "$ferry" perf rr-cc "${target[@]}" ${extra[@]+"${extra[@]}"} --server-pid "$pid" --sizes 2KB \
      --clients "$n" --secs "$secs" --warmup 2 --json "$work/perf.json" --out "$work/perf" >/dev/null 2>&1
    python3 "$root/bench/lib/point.py" perf "$work/perf.json"
  fi
}

for r in $(seq 1 "$rounds"); do
  order=("$a" "$b"); [ $((r % 2)) = 0 ] && order=("$b" "$a")
  for value in "${order[@]}"; do  # an empty value (a key left blank) is a value too
    # awk, not sed: a value may hold slashes (an URL) or other sed metacharacters.
    awk -v key="$key" -v value="$value" '
      { if (match($0, "^ *" key "=")) print substr($0, 1, RLENGTH) value; else print }
    ' "$ini" > "$ini.ab" && mv "$ini.ab" "$ini"
    "$ferry" start "$qm" >/dev/null
    pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/qm.pid")
    if [ "$r" = 1 ] && [ "$value" = "$a" ]; then
      { for i in $(seq 1 10); do echo "DEFINE QLOCAL(REQUEST.$i) REPLACE"; done
        echo "DEFINE QLOCAL(REPLY) REPLACE"
        for i in $(seq 1 "$maxn"); do echo "DEFINE QLOCAL(REPLY.$i) REPLACE"; done; } \
        | "$ferry" mqsc "$qm" >/dev/null
    fi
    SECS=8 secs=8 measure 16 >/dev/null || true
    for n in $clients; do
      line="AB round=$r $key=$value clients=$n $(measure "$n" || echo failed=1)"
      echo "$line"
      echo "$line" >> "$results"
    done
    "$ferry" stop -i "$qm" >/dev/null
  done
done

python3 - "$results" "$key" "$a" "$b" <<'PY'
import statistics, sys
path, key, a, b = sys.argv[1:]
rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(path) if "failed" not in l]
print("\nmedians over the rounds (%s):" % key)
print("| clients | %s: µs/rt | %s: µs/rt | %s/%s | %s: rt/s | %s: rt/s |" % (a, b, a, b, a, b))
print("|---:|---:|---:|---:|---:|---:|")
for n in sorted({int(r["clients"]) for r in rows}):
    def med(value, field):
        xs = [float(r[field]) for r in rows if r[key] == value and int(r["clients"]) == n
              and r.get(field) not in (None, "NA", "None")]
        return statistics.median(xs) if xs else float("nan")
    ca, cb = med(a, "server_us_per_rt"), med(b, "server_us_per_rt")
    print("| %d | %.1f | %.1f | %.2f | %.0f | %.0f |" % (n, ca, cb, ca / cb, med(a, "rate"), med(b, "rate")))
PY
