#!/usr/bin/env bash
# Background control of the Artemis peer, for scripts and for INTEROP_RESTART_CMD:
#
#   bench/peers/artemis/ctl.sh start   PORT DATA_DIR [QUEUES...]   # waits until READY
#   bench/peers/artemis/ctl.sh restart DATA_DIR                    # same port/queues, data kept
#   bench/peers/artemis/ctl.sh stop    DATA_DIR
#
# State (pid, arguments, log) lives in DATA_DIR (artemis.pid, artemis.args, artemis.log).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cmd="${1:-}"; shift || true

start() {
  local port="$1" data="$2"; shift 2
  mkdir -p "$data"
  data="$(cd "$data" && pwd)"
  printf '%s\n' "$port" "$@" > "$data/artemis.args"
  "$here/build.sh"
  nohup "$here/run.sh" "$port" "$data" "$@" > "$data/artemis.log" 2>&1 < /dev/null &
  echo $! > "$data/artemis.pid"
  for _ in $(seq 1 120); do
    if grep -q 'artemis-peer: READY' "$data/artemis.log"; then
      grep 'artemis-peer:' "$data/artemis.log" | sed 's/^/  /'
      return 0
    fi
    if ! kill -0 "$(cat "$data/artemis.pid")" 2>/dev/null; then
      echo "artemis peer exited; log:" >&2; tail -30 "$data/artemis.log" >&2; return 1
    fi
    sleep 0.5
  done
  echo "artemis peer not ready after 60 s; log:" >&2; tail -30 "$data/artemis.log" >&2
  return 1
}

stop() {
  local data="$1" pid
  [ -f "$data/artemis.pid" ] || { echo "no $data/artemis.pid" >&2; return 0; }
  pid="$(cat "$data/artemis.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$data/artemis.pid"
}

case "$cmd" in
  start)   start "$@" ;;
  stop)    stop "$1" ;;
  restart) data="$1"; mapfile -t a < "$data/artemis.args"; stop "$data"; start "${a[@]:0:1}" "$data" "${a[@]:1}" ;;
  *) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
