#!/usr/bin/env bash
# System calls, context switches and CPU of the queue manager per RR-CC round trip, in
# the one-connection-per-application shape of JMS and AMQP applications (issue: the cost
# of a connection). Counts are what the machine's noise does not move; CPU is quoted too.
#
#   bench/syscalls-rr.sh [--ferry PATH] [--protocol amqp|native] [--clients N]
#                        [--persistent] [--shared] [--jms] [-- MORE ferry perf OPTIONS]
#
# --jms drives it with the JMS load generator instead (bench/jms-load, Qpid JMS: a
# connection per application, replies read from the shared REPLY queue by a selector, as
# bench/jms-peers.sh measures; the options after -- go to the generator then, e.g.
# `--jms -- --reply-queues per-requester`); the rate is its RESULT line's.
#
# The queue manager runs from PATH (default target/release/ferry); `ferry perf rr-cc`
# (2 KB, N requesters, 25 s after 3 s of warm-up) drives it over TCP: AMQP with one
# connection per application (--sessions-per-connection 1) and a reply queue per requester,
# native with SHARECNV 1 (--shared: 10 applications per connection, the default shape).
# `perf stat` counts the server's system calls (by kind), context switches and task clock
# for 15 s in the middle of the step; round trips in that window = the step's rate x 15.
# Prints one line:
#   SYSCALLS ferry=... protocol=... clients=... rate=... syscalls_per_rt=...
#            recv_per_rt=... send_per_rt=... epoll_per_rt=... cs_per_rt=... cpu_us_per_rt=...
# Needs perf (linux-tools) with tracepoints readable (perf_event_paranoid <= 2 as root).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ferry="$root/target/release/ferry"
protocol=amqp
persistent=()
clients=64
shared=0
jms=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ferry) ferry=$2; shift 2 ;;
    --protocol) protocol=$2; shift 2 ;;
    --persistent) persistent=(--persistent); shift ;;
    --clients) clients=$2; shift 2 ;;
    --shared) shared=1; shift ;;
    --jms) jms=1; protocol=amqp; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-tools-generic)" >&2; exit 2; }
. "$root/bench/lib/private-qm.sh"
qm=QMSC
work=""
trap 'remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
"$ferry" start "$qm" >/dev/null
pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/qm.pid")
{ for i in $(seq 1 10); do echo "DEFINE QLOCAL(REQUEST.$i)"; done
  echo "DEFINE QLOCAL(REPLY)"
  for i in $(seq 1 "$clients"); do echo "DEFINE QLOCAL(REPLY.$i)"; done; } \
  | "$ferry" mqsc "$qm" >/dev/null
if [ "$protocol" = amqp ]; then
  target=(--protocol amqp --url "amqp://localhost:$aport" --server-pid "$pid")
  if [ "$shared" = 1 ]; then
    target+=(--sessions-per-connection 10)
  else
    target+=(--sessions-per-connection 1 --reply-queues per-requester)
  fi
else
  target=(--connect "localhost($port)" --qmgr "$qm")
  [ "$shared" = 1 ] || target+=(--sharecnv 1)
fi
window=15
if [ "$jms" = 1 ]; then
  "$root/bench/jms-load/run.sh" rr --url "amqp://localhost:$aport" "${persistent[@]}" --clients "$clients" \
    --secs 25 --warmup 3 --broker ferry --broker-pid "$pid" "${extra[@]}" >"$work/perf.txt" 2>&1 &
else
  "$ferry" perf rr-cc "${target[@]}" "${persistent[@]}" "${extra[@]}" --sizes 2KB --clients "$clients" \
    --secs 25 --warmup 3 --json "$work/perf.json" --out "$work/perf" >"$work/perf.txt" 2>&1 &
fi
perf_pid=$!
sleep 8
perf stat -x, -o "$work/stat.csv" -p "$pid" \
  -e raw_syscalls:sys_enter,syscalls:sys_enter_recvfrom,syscalls:sys_enter_read \
  -e syscalls:sys_enter_sendto,syscalls:sys_enter_write,syscalls:sys_enter_writev \
  -e syscalls:sys_enter_epoll_wait,syscalls:sys_enter_io_uring_enter \
  -e context-switches,task-clock -- sleep "$window" >/dev/null 2>&1
wait "$perf_pid" || { cat "$work/perf.txt" >&2; exit 1; }
result="$work/perf.json"; [ "$jms" = 1 ] && result="$work/perf.txt"
shape=one-per-app
[ "$shared" = 1 ] && shape=shared
if [ "$jms" = 1 ]; then
  shape=jms-selector
  case " ${extra[*]} " in *" per-requester "*) shape=jms-private ;; esac
fi
PYTHONPATH="$root/bench/lib" python3 - "$work/stat.csv" "$result" "$ferry" "$protocol" "$clients" "$window" "${#persistent[@]}" "$shape" "$jms" <<'PY'
import json, sys
from perf_stat import counts as read_counts, receives, result_fields, sends
stat, perf, ferry, protocol, clients, window, persistent, shape, jms = sys.argv[1:]
counts = read_counts(stat)
def find_rate(o):
    if isinstance(o, dict):
        for k in ("round_trips_per_sec", "rate", "msgs_per_sec"):
            if k in o and isinstance(o[k], (int, float)):
                return o[k]
        for v in o.values():
            r = find_rate(v)
            if r:
                return r
    if isinstance(o, list):
        for v in o:
            r = find_rate(v)
            if r:
                return r
    return None
if jms == "1":
    fields = result_fields(perf)
    if not fields or "rate" not in fields:
        sys.exit("the JMS generator printed no RESULT line: " + perf)
    rate = float(fields["rate"])
else:
    rate = find_rate(json.load(open(perf)))
rts = rate * float(window)
c = lambda k: counts.get(k, 0.0)
recv = receives(counts)
send = sends(counts)
print("SYSCALLS ferry=%s protocol=%s shape=%s persistent=%s clients=%s rate=%.0f syscalls_per_rt=%.2f "
      "recv_per_rt=%.2f send_per_rt=%.2f epoll_per_rt=%.2f uring_per_rt=%.2f cs_per_rt=%.2f cpu_us_per_rt=%.1f" % (
    ferry, protocol, shape, persistent, clients, rate,
    c("raw_syscalls:sys_enter") / rts, recv / rts, send / rts,
    c("syscalls:sys_enter_epoll_wait") / rts, c("syscalls:sys_enter_io_uring_enter") / rts,
    c("context-switches") / rts, c("task-clock") * 1000.0 / rts))
PY
