#!/usr/bin/env bash
# io_uring against epoll, on this machine: the relay yardstick (bench/yardsticks, the same
# routing in each) with its socket I/O on epoll + recv/send (`relay --io mio`, reading until
# WouldBlock; `--io mio-short-reads`, reading until a short read as tokio and so the queue
# manager do) and on io_uring (`relay --io uring`), under the same load, in rounds.
#
#   ROUNDS=3 N=1,16,64 SIZE=2KB SECS=10 WARMUP=2 [COUNT_SECS=4] [RELAYS="mio uring"] \
#     bench/relay-io.sh
#
# Each round runs every N for every relay, their order rotated every round so that a
# drift of the machine's load favours none. Each point starts a fresh relay,
# drives it with `relay-load --addr ... --n N` (N requesters, N responders, TCP loopback)
# for WARMUP + SECS with nothing attached (rate, and the relay's CPU per round trip from its
# getrusage), then for COUNT_SECS (4) more under `perf stat -p`, which counts the relay's
# system calls (by kind) and context switches, per round trip of that run (the relay's
# frame count / 2). One line per point:
#   RELAYIO round=R relay=mio|uring n=N rate=... relay_cpu_us_per_rt=... syscalls_per_rt=...
#           send_per_rt=... recv_per_rt=... epoll_per_rt=... uring_per_rt=... cs_per_rt=...
#           steal_pct=...
# then, per N, the medians over the rounds and the rounds' uring/epoll ratios with their
# median (quote those: the machine's load drifts between rounds). Results in bench/results/<UTC date>/relay-io/
# (or OUT=dir). Needs perf (linux-tools) with tracepoints readable (perf_event_paranoid
# <= 2 as root) and a kernel with io_uring enabled (sysctl kernel.io_uring_disabled = 0).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
rounds=${ROUNDS:-3}
ns=${N:-1,16,64}
size=${SIZE:-2KB}
secs=${SECS:-10}
warmup=${WARMUP:-2}
out=${OUT:-"$root/bench/results/$(date -u +%F)/relay-io"}
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-tools-generic)" >&2; exit 2; }
(cd "$root" && cargo build --release -p ferry-yardsticks --bins)
bin="$root/target/release"
mkdir -p "$out"
lines="$out/relay-io.txt"
: >"$lines"
work=$(mktemp -d)
relay_pid=
cleanup() {
  [ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
. "$root/bench/lib/private-qm.sh"   # free_port
steal() { awk '/^cpu /{t=0; for(i=2;i<=NF;i++) t+=$i; print $9, t}' /proc/stat; }
count_secs=${COUNT_SECS:-4}
relays=${RELAYS:-mio mio-short-reads uring}

# Prints the frames the relay has forwarded so far, from its stats frame (argument: port).
cat >"$work/frames.py" <<'PY'
import socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"S")
buf = b""
while len(buf) < 32:
    chunk = s.recv(32 - len(buf))
    if not chunk:
        break
    buf += chunk
print(struct.unpack_from("<Q", buf, 24)[0])
PY
stats_frames() { python3 "$work/frames.py" "$1"; }

point() { # round relay n
  local round=$1 io=$2 n=$3 port
  port=$(free_port)
  "$bin/relay" --addr "127.0.0.1:$port" --io "$io" 2>/dev/null &
  relay_pid=$!
  for _ in $(seq 1 100); do
    stats_frames "$port" >/dev/null 2>&1 && break
    sleep 0.05
  done
  # CPU and rate with nothing attached to the relay.
  local before after
  before=$(steal)
  "$bin/relay-load" --addr "127.0.0.1:$port" --n "$n" --size "$size" --secs "$secs" \
    --warmup "$warmup" --label "$io" >"$work/load.txt" 2>&1 || { cat "$work/load.txt" >&2; exit 1; }
  after=$(steal)
  # System calls under perf (whose tracepoints slow the relay: counted per round trip of
  # that run, from the relay's own frame count, and never used for CPU). perf counts the
  # relay for the whole of a second relay-load run; its connections' setup is negligible.
  local f0 f1
  f0=$(stats_frames "$port")
  perf stat -x, -o "$work/stat.csv" -p "$relay_pid" \
    -e raw_syscalls:sys_enter,syscalls:sys_enter_recvfrom,syscalls:sys_enter_read \
    -e syscalls:sys_enter_sendto,syscalls:sys_enter_write,syscalls:sys_enter_writev \
    -e syscalls:sys_enter_epoll_wait,syscalls:sys_enter_io_uring_enter \
    -e context-switches -- "$bin/relay-load" --addr "127.0.0.1:$port" --n "$n" \
    --size "$size" --secs "$count_secs" --warmup 0 --label "$io" >"$work/count.txt" 2>&1 \
    || { cat "$work/count.txt" >&2; exit 1; }
  f1=$(stats_frames "$port")
  kill "$relay_pid"
  wait "$relay_pid" 2>/dev/null || true
  relay_pid=
  PYTHONPATH="$root/bench/lib" python3 - "$work/stat.csv" "$work/load.txt" "$round" "$io" "$n" "$f0" "$f1" "$before" "$after" <<'PY' | tee -a "$lines"
import sys
from perf_stat import counts as read_counts, receives, result_fields, sends
stat, load, round_, io, n, f0, f1, before, after = sys.argv[1:]
counts = read_counts(stat)
result = next(l for l in open(load) if l.startswith("RESULT "))
fields = result_fields(load)
# A round trip is two frames through the relay (the stats connections' own are negligible).
rts = max((int(f1) - int(f0)) / 2.0, 1.0)
c = lambda k: counts.get(k, 0.0)
(s0, t0), (s1, t1) = (map(float, before.split()), map(float, after.split()))
steal = 100.0 * (s1 - s0) / max(t1 - t0, 1.0)
print("RELAYIO round=%s relay=%s n=%s rate=%s relay_cpu_us_per_rt=%s syscalls_per_rt=%.2f "
      "send_per_rt=%.2f recv_per_rt=%.2f epoll_per_rt=%.2f uring_per_rt=%.2f cs_per_rt=%.2f "
      "steal_pct=%.1f%s" % (
    round_, io, n, fields["rate"], fields["relay_cpu_us_per_rt"], c("raw_syscalls:sys_enter") / rts,
    sends(counts) / rts, receives(counts) / rts,
    c("syscalls:sys_enter_epoll_wait") / rts, c("syscalls:sys_enter_io_uring_enter") / rts,
    c("context-switches") / rts, steal,
    " BAD_FRAMES" if "BAD_FRAMES" in result else ""))
PY
}

read -r -a kinds <<<"$relays"
for round in $(seq 1 "$rounds"); do
  # Rotate the order of the relays every round.
  shift_by=$(( (round - 1) % ${#kinds[@]} ))
  order=("${kinds[@]:shift_by}" "${kinds[@]:0:shift_by}")
  for n in ${ns//,/ }; do
    for io in "${order[@]}"; do point "$round" "$io" "$n"; done
  done
done

python3 - "$lines" "$relays" <<'PY' | tee "$out/summary.txt"
import statistics, sys
rows = [dict(kv.split("=", 1) for kv in l.split()[1:] if "=" in kv) for l in open(sys.argv[1])]
kinds = sys.argv[2].split()
keys = ["rate", "relay_cpu_us_per_rt", "syscalls_per_rt", "send_per_rt", "recv_per_rt",
        "epoll_per_rt", "uring_per_rt", "cs_per_rt", "steal_pct"]
print("medians over the rounds")
print("%-4s %-16s " % ("n", "relay") + " ".join("%9s" % k.replace("_per_rt", "/rt").replace("relay_cpu_us", "cpu_us")[:9] for k in keys))
for n in sorted({r["n"] for r in rows}, key=int):
    for io in kinds:
        pts = [r for r in rows if r["n"] == n and r["relay"] == io]
        print("%-4s %-16s " % (n, io) + " ".join("%9.2f" % statistics.median(float(p[k]) for p in pts) for k in keys))
print("uring / epoll within each round (cpu per round trip; rate)")
for n in sorted({r["n"] for r in rows}, key=int):
    for base in [k for k in kinds if k != "uring"]:
        for k in ("relay_cpu_us_per_rt", "rate"):
            per_round = []
            for rnd in sorted({r["round"] for r in rows}, key=int):
                pair = {r["relay"]: float(r[k]) for r in rows if r["n"] == n and r["round"] == rnd}
                if base in pair and "uring" in pair and pair[base] > 0:
                    per_round.append(pair["uring"] / pair[base])
            if per_round:
                print("n=%s uring/%s %s: %s (median %.2f)" % (n, base, "cpu/rt" if k != "rate" else "rate",
                      " ".join("%.2f" % x for x in per_round), statistics.median(per_round)))
PY
