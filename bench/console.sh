#!/usr/bin/env bash
# Whether the web console and the REST API respond under load (issue 24): a private queue
# manager with its web server, RR-CC (2 KB, REQUESTERS requesters, SECS seconds) run
# against it twice, alone and while two pollers load the web server one request after
# another, pausing INTERVAL seconds between requests (0.2: five a second each, more than a
# browser's console asks; 0: back to back, a stress): the console's queue list
# (GET /ibmmq/console/queues, a page rendered from DISPLAY QLOCAL and the monitoring
# counters) and an MQSC command over the REST API
# (runCommand DISPLAY QLOCAL(REQUEST.1) CURDEPTH). Both authenticate with one login
# session's cookie, as the console does (a password check per request would measure the
# Argon2 hash instead). Also measured idle: the same requests with no messaging load.
#
#   bench/console.sh                     # 64 requesters, 20 s per run
#   REQUESTERS=16 SECS=10 bench/console.sh
#   INTERVAL=0 bench/console.sh          # the pollers back to back
#
# Prints the RR-CC rate with and without the pollers, and each request's median and p99
# latency (curl's time_total) idle and under load. FERRY=path uses that ferry binary
# instead of building a release one (ferry-perf must be beside it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[ $# -eq 0 ] || { sed -n 2,19p "$0" >&2; exit 2; }
requesters="${REQUESTERS:-64}"
secs="${SECS:-20}"
interval="${INTERVAL:-0.2}"
if [ -n "${FERRY:-}" ]; then ferry=$(realpath "$FERRY"); else
  (cd "$root" && cargo build --release --bins -q)
  ferry="$root/target/release/ferry"
fi
command -v curl >/dev/null || { echo "bench/console.sh needs curl" >&2; exit 2; }
. "$root/bench/lib/private-qm.sh"
qm=CONSOLE.BENCH
trap 'kill $(jobs -p) 2>/dev/null || true; remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
web=$(free_port)
printf 'WebServer:\n   Port=%s\n   BindAddress=127.0.0.1\n' "$web" >> "$FERRY_HOME/qmgrs/$qm/qm.ini"
"$ferry" start "$qm" >/dev/null
user=bench
password="bench passw0rd $$"
printf '%s\n' "$password" | "$ferry" user add "$qm" "$user" --group mqm >/dev/null 2>&1 ||
  printf '%s\n' "$password" | "$ferry" user add "$qm" "$user" >/dev/null
url="http://127.0.0.1:$web"
cookie=$(curl -sf -D - -o /dev/null -H 'ibm-mq-rest-csrf-token: bench' \
  -H 'content-type: application/json' \
  -d "{\"username\":\"$user\",\"password\":\"$password\"}" "$url/ibmmq/rest/v2/login" |
  tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: \(LtpaToken2=[^;]*\).*/\1/p')
[ -n "$cookie" ] || { echo "bench/console.sh: could not log in" >&2; exit 1; }

# The queues RR-CC uses, so the page and the command show them.
run_rr() { "$ferry" perf rr-cc --connect "localhost($port)" --qmgr "$qm" --clients "$requesters" \
  --secs "$secs" --size 2KB --out "${1%.json}" --json "$1" >>"$work_dir/perf.log" 2>&1; }
rate_of() { python3 -c "import json,sys; print(round(json.load(open(sys.argv[1]))['series'][0]['steps'][0]['window']['rate']))" "$1"; }

page() { curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "cookie: $cookie" "$url/ibmmq/console/queues"; }
run_command() { curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "cookie: $cookie" \
  -H 'ibm-mq-rest-csrf-token: bench' -H 'content-type: application/json' \
  -d '{"type":"runCommand","parameters":{"command":"DISPLAY QLOCAL(REQUEST.1) CURDEPTH"}}' \
  "$url/ibmmq/rest/v2/admin/action/qmgr/$qm/mqsc"; }
poll() { while :; do "$1"; sleep "$interval"; done; }
summary() { python3 - "$@" <<'PY'
import sys
label, path = sys.argv[1], sys.argv[2]
rows = [l.split() for l in open(path) if l.strip()]
bad = [r for r in rows if r[0] != "200"]
t = sorted(float(r[1]) * 1000 for r in rows if r[0] == "200")
if not t:
    print(f"{label}: no answer"); sys.exit()
pick = lambda q: t[min(len(t) - 1, int(q * len(t)))]
print(f"{label}: requests={len(rows)} errors={len(bad)} median_ms={pick(0.5):.1f} p99_ms={pick(0.99):.1f}")
PY
}
work_dir=$(mktemp -d)
run_rr "$work_dir/warm.json"   # defines the queues, warms the queue manager
for i in $(seq 200); do page; done >"$work_dir/page-idle"
for i in $(seq 200); do run_command; done >"$work_dir/command-idle"
run_rr "$work_dir/alone.json"
poll page >"$work_dir/page-load" & pp=$!
poll run_command >"$work_dir/command-load" & pc=$!
run_rr "$work_dir/polled.json"
kill "$pp" "$pc"; wait "$pp" "$pc" 2>/dev/null || true
echo "CONSOLE requesters=$requesters size=2048 secs=$secs poll_interval_s=$interval"
echo "RR-CC alone: $(rate_of "$work_dir/alone.json") round trips/s"
echo "RR-CC while the console and REST API are polled: $(rate_of "$work_dir/polled.json") round trips/s"
summary "console queue list, idle" "$work_dir/page-idle"
summary "REST runCommand, idle" "$work_dir/command-idle"
summary "console queue list, under RR-CC" "$work_dir/page-load"
summary "REST runCommand, under RR-CC" "$work_dir/command-load"
rm -rf "$work_dir"
