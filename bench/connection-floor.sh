#!/usr/bin/env bash
# What one connection per application costs on this machine before any messaging: the queue
# manager over AMQP with a connection per requester and per responder (each requester with a
# reply queue of its own, as Qpid JMS applications with private reply queues) against the
# relay yardstick (bench/yardsticks: the same N requesters and N responders, 2 sends and 2
# receives per round trip, no protocol, no queues), in alternating rounds.
#
#   bench/connection-floor.sh                      # 64 requesters, 4 rounds
#   ROUNDS=6 CLIENTS=16 SECS=10 bench/connection-floor.sh
#
# Each round measures the queue manager (`ferry perf rr-cc --protocol amqp
# --sessions-per-connection 1 --reply-queues per-requester`, 2 KB) and then the relay
# (`relay-load --spawn-relay mio-short-reads`: epoll, reading until a short read as tokio
# and so the queue manager do), SECS (8) measured seconds after 2 s of warm-up each, and
# prints one line per run:
#   FLOOR round=R who=ferry|relay clients=N rate=... cpu_us_per_rt=...
# then the medians and the median of the rounds' ferry/relay ratios. The relay's CPU per
# round trip is the kernel's TCP cost of this shape (93-97% of it is system time): what is
# left above it is the queue manager's own work. Results in
# bench/results/<UTC date>/connection-floor/ (or OUT=dir). FERRY=path uses that ferry binary.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds="${ROUNDS:-4}"
clients="${CLIENTS:-64}"
secs="${SECS:-8}"
out=${OUT:-"$root/bench/results/$(date -u +%F)/connection-floor"}
(cd "$root" && cargo build --release --bins -q && cargo build --release -q -p ferry-yardsticks --bins)
ferry="${FERRY:-$root/target/release/ferry}"
relay_load="$root/target/release/relay-load"
. "$root/bench/lib/private-qm.sh"
qm=QMFLOOR
work=""
trap 'remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
# A connection per application: 2 x CLIENTS channels, more than the default MaxChannels.
sed -i "s/^\( *MaxChannels=\).*/\1$((2 * clients + 50))/" "$FERRY_HOME/qmgrs/$qm/qm.ini"
"$ferry" start "$qm" >/dev/null
pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/qm.pid")
{ for i in $(seq 1 10); do echo "DEFINE QLOCAL(REQUEST.$i) REPLACE"; done
  for i in $(seq 1 "$clients"); do echo "DEFINE QLOCAL(REPLY.$i) REPLACE"; done
  echo "DEFINE QLOCAL(REPLY) REPLACE"; } | "$ferry" mqsc "$qm" >/dev/null
mkdir -p "$out"
lines="$out/connection-floor.txt"
: >"$lines"

ferry_point() { # round
  "$ferry" perf rr-cc --url "amqp://localhost:$aport" --protocol amqp \
    --sessions-per-connection 1 --reply-queues per-requester --server-pid "$pid" --sizes 2KB \
    --clients "$clients" --secs "$secs" --warmup 2 --json "$work/perf.json" --out "$work/perf" \
    >"$work/perf.log" 2>&1 || { tail -5 "$work/perf.log" >&2; exit 1; }
  python3 - "$work/perf.json" "$1" "$clients" <<'PY'
import json, sys
step = json.load(open(sys.argv[1]))["series"][0]["steps"][0]
w = step["window"]
print("FLOOR round=%s who=ferry clients=%s rate=%.0f cpu_us_per_rt=%.1f" % (
    sys.argv[2], sys.argv[3], w["rate"], w["server_us_per_rt"]))
PY
}

relay_point() { # round
  "$relay_load" --spawn-relay mio-short-reads --addr "127.0.0.1:$(free_port)" --n "$clients" \
    --size 2KB --secs "$secs" --warmup 2 2>/dev/null | python3 -c '
import sys
for line in sys.stdin:
    if line.startswith("RESULT "):
        f = dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
        print("FLOOR round=%s who=relay clients=%s rate=%s cpu_us_per_rt=%s" % (
            sys.argv[1], sys.argv[2], f.get("rate"), f.get("relay_cpu_us_per_rt")))' "$1" "$clients"
}

for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) = 1 ]; then ferry_point "$r"; relay_point "$r"; else relay_point "$r"; ferry_point "$r"; fi
done | tee "$lines"

python3 - "$lines" <<'PY'
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(sys.argv[1])]
def med(who, field):
    return statistics.median(float(r[field]) for r in rows if r["who"] == who)
ratios = []
for rnd in sorted({r["round"] for r in rows}):
    c = {r["who"]: float(r["cpu_us_per_rt"]) for r in rows if r["round"] == rnd}
    if "ferry" in c and "relay" in c:
        ratios.append(c["ferry"] / c["relay"])
print("\nmedians: ferry %.1f us/rt (%.0f rt/s), relay %.1f us/rt (%.0f rt/s); ferry/relay by round %s, median %.2f" % (
    med("ferry", "cpu_us_per_rt"), med("ferry", "rate"), med("relay", "cpu_us_per_rt"),
    med("relay", "rate"), " ".join("%.2f" % x for x in ratios), statistics.median(ratios)))
PY
