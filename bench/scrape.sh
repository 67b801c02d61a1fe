#!/usr/bin/env bash
# What a Prometheus scrape costs the queue manager (issue 24: under 50 ms of server CPU with
# 10,000 queues defined): a private queue manager with QUEUES local queues named APP.Qnnnnn
# (all exported; SYSTEM.* left out as by default), its web server on a free port, then
# SCRAPES scrapes of GET /metrics one after another, the queue manager's CPU (every thread:
# rendering on its own thread, writing on the web server's) read from /proc before and after.
#
#   bench/scrape.sh                       # 10,000 queues, 20 scrapes
#   QUEUES=100000 SCRAPES=5 bench/scrape.sh
#   EXPORT='APP.Q0000*' bench/scrape.sh   # Monitoring:PrometheusQueues: 10 of them exported
#
# Prints the exposition's size and the CPU per scrape. FERRY=path uses that ferry binary
# instead of building a release one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 0 ] || { sed -n 2,12p "$0" >&2; exit 2; }
queues="${QUEUES:-10000}"
scrapes="${SCRAPES:-20}"
if [ -n "${FERRY:-}" ]; then ferry=$(realpath "$FERRY"); else
  (cd "$root" && cargo build --release --bins -q)
  ferry="$root/target/release/ferry"
fi
. "$root/bench/lib/private-qm.sh"
qm=SCRAPE
trap 'remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
web=$(free_port)
ini="$FERRY_HOME/qmgrs/$qm/qm.ini"
printf 'WebServer:\n   Port=%s\n   BindAddress=127.0.0.1\n' "$web" >> "$ini"
if [ -n "${EXPORT:-}" ]; then printf 'Monitoring:\n   PrometheusQueues=%s\n' "$EXPORT" >> "$ini"; fi
"$ferry" start "$qm" >/dev/null
python3 -c "
for i in range($queues): print(f'DEFINE QLOCAL(APP.Q{i:05d})')" | MQSNOAUT=yes "$ferry" mqsc "$qm" >/dev/null
pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/"*.pid 2>/dev/null | head -1)
[ -n "$pid" ] || pid=$(pgrep -f "ferry.*start.*$qm" | head -1)
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
bytes=$(curl -sf "http://127.0.0.1:$web/metrics" | wc -c)
lines=$(curl -sf "http://127.0.0.1:$web/metrics" | wc -l)
before=$(ticks)
start=$(date +%s.%N)
for _ in $(seq "$scrapes"); do curl -sf -o /dev/null "http://127.0.0.1:$web/metrics"; done
end=$(date +%s.%N)
after=$(ticks)
hz=$(getconf CLK_TCK)
python3 - "$queues" "$scrapes" "$bytes" "$lines" "$before" "$after" "$hz" "$start" "$end" <<'PY'
import sys
queues, scrapes, size, lines, before, after, hz = map(int, sys.argv[1:8])
start, end = map(float, sys.argv[8:10])
cpu_ms = (after - before) * 1000 / hz / scrapes
wall_ms = (end - start) * 1000 / scrapes
print(f"SCRAPE queues={queues} scrapes={scrapes} exposition_bytes={size} lines={lines} "
      f"server_cpu_ms_per_scrape={cpu_ms:.1f} wall_ms_per_scrape={wall_ms:.1f}")
PY
