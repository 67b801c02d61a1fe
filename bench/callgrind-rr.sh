#!/usr/bin/env bash
# Server instructions per RR-CC round trip, counted by callgrind: the measure of CPU per
# round trip that the machine's noise does not move (docs/performance.md).
#
#   bench/callgrind-rr.sh [--ferry PATH] [--protocol native|amqp] [--persistent] [--clients N]
#                         [--rate R] [--jms] [--authorities on|off]
#                         [-- MORE ferry perf rr-cc OPTIONS]
#
# --authorities off makes the queue manager as MQSNOAUT=yes does (no object authority
# checks); on makes the requesters run as a user that is not an administrator ('perfapp',
# MCAUSER of the default channels) with the authority records it needs, so every connect
# and open is checked. Without the option the requesters run as the user running the
# script (an administrator: checked, and holding everything).
#
# --jms drives it with the JMS load generator instead (bench/jms-load, Qpid JMS, RR with a
# connection per application and the shared REPLY queue read by selector, the shape
# bench/jms-peers.sh measures); --rate does not apply then, and the options after -- go to
# the generator (e.g. `--jms -- --reply-queues per-requester`).
#
# The queue manager runs under `valgrind --tool=callgrind --instr-atstart=no`; `ferry perf
# rr-cc` (2 KB, N requesters, 20 s measured after 2 s of warm-up) drives it over TCP
# (native: --connect; AMQP: --url, REQUEST.1-10, REPLY and REPLY.1-N defined first). Instrumentation is
# switched on 10 s into the measured step and off 8 s later; round trips = the engine's
# `put_with_properties` calls in that window / 2 (a request and a reply each). Unrated, the
# queue manager (slowed ~50x by callgrind) runs flat out and batches more frames per read
# the slower it is, which moves instructions per round trip by a few per cent from run to
# run; `--rate R` (round trips per second per requester) fixes the load, so two builds
# batch alike and their counts compare closely (pick a total below what the slower build
# sustains under callgrind: e.g. 64 x 20/s). Prints one
# line: `CALLGRIND ferry=... protocol=... persistent=... clients=... round_trips=...
# instructions=... instructions_per_rt=...`. Needs valgrind (apt) and a ferry built with
# symbols (the release profile keeps them). KEEP=FILE keeps callgrind's output there (for
# callgrind_annotate).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
ferry="$root/target/release/ferry"
protocol=native
persistent=()
clients=64
rate=()
extra=()
jms=0
authorities=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ferry) ferry=$2; shift 2 ;;
    --protocol) protocol=$2; shift 2 ;;
    --persistent) persistent=(--persistent); shift ;;
    --clients) clients=$2; shift 2 ;;
    --rate) rate=(--rate "$2"); shift 2 ;;
    --jms) jms=1; protocol=amqp; shift ;;
    --authorities) authorities=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 2; }
. "$root/bench/lib/private-qm.sh"
qm=QMCG
work=""
cleanup() {
  "$ferry" stop -i "$qm" >/dev/null 2>&1 || true
  if [ -n "${KEEP:-}" ] && [ -n "$work" ] && [ -f "$work/callgrind.out" ]; then
    cp "$work/callgrind.out" "$KEEP"
  fi
  remove_private_qm "$ferry" "$qm"
}
trap cleanup EXIT
case "$authorities" in
  off) export MQSNOAUT=yes ;;
  on|"") ;;
  *) echo "--authorities on|off" >&2; exit 2 ;;
esac
create_private_qm "$ferry" "$qm"
unset MQSNOAUT
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/callgrind.out" \
  "$ferry" start "$qm" --foreground >"$work/console.txt" 2>&1 &
for _ in $(seq 1 180); do
  "$ferry" status "$qm" 2>/dev/null | grep -q Running && break
  sleep 1
done
pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/qm.pid")
{ for i in $(seq 1 10); do echo "DEFINE QLOCAL(REQUEST.$i)"; done; echo "DEFINE QLOCAL(REPLY)"
  for i in $(seq 1 "$clients"); do echo "DEFINE QLOCAL(REPLY.$i)"; done; } \
  | "$ferry" mqsc "$qm" >/dev/null
if [ "$authorities" = on ]; then
  printf 'perf-%s\n' "$RANDOM" | "$ferry" user add "$qm" perfapp >/dev/null
  "$ferry" mqsc "$qm" >/dev/null <<GRANTS
SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('perfapp') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE('**') OBJTYPE(QUEUE) PRINCIPAL('perfapp') AUTHADD(ALLMQI)
ALTER CHANNEL(SYSTEM.DEF.SVRCONN) CHLTYPE(SVRCONN) MCAUSER('perfapp')
ALTER CHANNEL(SYSTEM.DEF.AMQP) CHLTYPE(AMQP) MCAUSER('perfapp')
GRANTS
fi
if [ "$protocol" = amqp ]; then
  target=(--protocol amqp --url "amqp://localhost:$aport")
else
  target=(--connect "localhost($port)" --qmgr "$qm")
fi
if [ "$jms" = 1 ]; then
  "$root/bench/jms-load/run.sh" rr --url "amqp://localhost:$aport" "${persistent[@]}" --clients "$clients" \
    --secs 20 --warmup 2 "${extra[@]}" >"$work/perf.txt" 2>&1 &
else
  "$ferry" perf rr-cc "${target[@]}" "${persistent[@]}" "${rate[@]}" "${extra[@]}" --sizes 2KB --clients "$clients" \
    --secs 20 --warmup 2 --out "$work/perf" >"$work/perf.txt" 2>&1 &
fi
perf_pid=$!
sleep 12
callgrind_control -i on "$pid" >/dev/null
sleep 8
callgrind_control -i off "$pid" >/dev/null
wait "$perf_pid" || true
"$ferry" stop -i "$qm" >/dev/null 2>&1 || true
for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
python3 - "$work/callgrind.out" "$ferry" "$protocol" "${#persistent[@]}" "$clients" "${rate[1]:-0}" "$jms" "$authorities" <<'EOF'
import re, sys
path, ferry, protocol, persistent, clients, rate, jms, authorities = sys.argv[1:]
driver = " driver=jms" if jms == "1" else ""
names, calls, total = {}, 0, 0
pending = None
with open(path, errors="replace") as f:
    for line in f:
        if line.startswith("summary:") or line.startswith("totals:"):
            total = max(total, int(line.split()[1]))
            continue
        m = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
        if m:
            if m.group(2):
                names[m.group(1)] = m.group(2).strip()
            pending = line.startswith("cfn=") and re.search(r"::put_with_properties(<.*>)?$", names.get(m.group(1), "")) is not None
            continue
        if pending and line.startswith("calls="):
            calls += int(line.split()[0].split("=")[1])
            pending = None
rts = calls // 2
per = round(total / rts) if rts else 0
print(f"CALLGRIND ferry={ferry} protocol={protocol}{driver} persistent={persistent} clients={clients} rate={rate} authorities={authorities or 'default'} "
      f"round_trips={rts} instructions={total} instructions_per_rt={per}")
EOF
