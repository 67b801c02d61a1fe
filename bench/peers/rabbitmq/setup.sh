#!/usr/bin/env bash
# RabbitMQ (Debian's package) with the AMQP 1.0 plugin as a peer broker, on a private port and
# data directory, without touching the system service or port 5672.
#
#   bench/peers/rabbitmq/setup.sh start PORT DIR   # install, start, declare interop queues, smoke test
#   bench/peers/rabbitmq/setup.sh stop DIR
#   bench/peers/rabbitmq/setup.sh check [PORT]     # start on PORT (5674) in a temp dir, smoke test, stop
#
# Queues from interop/queues.txt (or the file QUEUES_FILE names) are declared durable (maxdepth=N -> x-max-length=N with
# x-overflow=reject-publish) over AMQP 0-9-1 with pika; AMQP 1.0 clients address them as
# /amq/queue/NAME (INTEROP_QUEUE_PREFIX=/amq/queue/).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
RMQ=/usr/lib/rabbitmq/bin   # the real scripts: /usr/sbin wrappers switch to the rabbitmq user
venv="$here/.venv"

install() {
  if [ ! -x "$RMQ/rabbitmq-server" ]; then
    echo "== installing rabbitmq-server (apt)"
    # keep the package from starting the system service on 5672
    local own_policy=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; own_policy=1; fi
    (apt-get install -y -qq rabbitmq-server >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq rabbitmq-server; }) || { [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d; return 1; }
    [ $own_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  fi
  if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
  "$venv/bin/python" -c 'import pika, proton' 2>/dev/null ||
    "$venv/bin/pip" install -q pika==1.3.2 python-qpid-proton==0.40.0
}

env_for() {  # PORT DIR
  export HOME="$2"   # private Erlang cookie
  export RABBITMQ_NODENAME="ferrypeer$1@localhost"
  export RABBITMQ_NODE_PORT="$1"
  export RABBITMQ_DIST_PORT=$(( $1 + 20000 ))
  export RABBITMQ_MNESIA_BASE="$2/mnesia"
  export RABBITMQ_LOG_BASE="$2/log"
  export RABBITMQ_ENABLED_PLUGINS_FILE="$2/enabled_plugins"
  export RABBITMQ_CONFIG_FILE="$2/rabbitmq"      # rabbitmq.conf
  export RABBITMQ_PID_FILE="$2/rabbitmq.pid"
}

start() {  # PORT DIR
  local port="$1" dir; mkdir -p "$2"; dir="$(cd "$2" && pwd)"
  install
  env_for "$port" "$dir"
  echo "$port" > "$dir/port"
  echo '[rabbitmq_amqp1_0].' > "$RABBITMQ_ENABLED_PLUGINS_FILE"
  cat > "$dir/rabbitmq.conf" <<CONF
listeners.tcp.default = 127.0.0.1:$port
loopback_users = none
amqp1_0.default_user = guest
CONF
  echo "== starting RabbitMQ on 127.0.0.1:$port (node $RABBITMQ_NODENAME, data $dir)"
  nohup "$RMQ/rabbitmq-server" > "$dir/server.out" 2>&1 < /dev/null &
  "$RMQ/rabbitmqctl" wait --timeout 120 "$RABBITMQ_PID_FILE" >/dev/null
  echo "   version: $("$RMQ/rabbitmqctl" version)"
  "$RMQ/rabbitmq-plugins" list -e 2>/dev/null | grep -q amqp1_0 && echo "   plugin rabbitmq_amqp1_0 enabled"
  "$venv/bin/python" - "$port" "${QUEUES_FILE:-$root/interop/queues.txt}" <<'PY'
import re, sys, pika
port, queues = int(sys.argv[1]), sys.argv[2]
conn = pika.BlockingConnection(pika.ConnectionParameters("127.0.0.1", port))
ch = conn.channel()
n = 0
for line in open(queues):
    line = line.split("#")[0].split()
    if not line:
        continue
    args = {}
    for opt in line[1:]:
        m = re.match(r"(?i)maxdepth=(\d+)", opt)
        if m:
            args = {"x-max-length": int(m.group(1)), "x-overflow": "reject-publish"}
    ch.queue_declare(line[0], durable=True, arguments=args)
    n += 1
conn.close()
print(f"   declared {n} durable queues")
PY
}

smoke() {  # PORT: one message through the AMQP 1.0 plugin with python-qpid-proton
  "$venv/bin/python" - "$1" <<'PY'
import sys, uuid
from proton import Message
from proton.utils import BlockingConnection
url = f"amqp://127.0.0.1:{sys.argv[1]}"
body = "smoke " + uuid.uuid4().hex
c = BlockingConnection(url, timeout=20)
s = c.create_sender("/amq/queue/INTEROP.SENDRECV")
s.send(Message(body=body, durable=True))
r = c.create_receiver("/amq/queue/INTEROP.SENDRECV", credit=1)
m = r.receive(timeout=10)
r.accept()
c.close()
assert m.body == body, m.body
print(f"   proton send/receive via /amq/queue/INTEROP.SENDRECV on {url}: OK")
PY
}

stop() {  # DIR
  local dir; dir="$(cd "$1" && pwd)"
  env_for "$(cat "$dir/port")" "$dir"
  "$RMQ/rabbitmqctl" stop "$RABBITMQ_PID_FILE" >/dev/null && echo "== RabbitMQ ($RABBITMQ_NODENAME) stopped"
  # the Erlang port mapper daemon the node started: stop it when no other node uses it
  if command -v epmd >/dev/null && ! epmd -names 2>/dev/null | grep -q '^name '; then epmd -kill >/dev/null 2>&1 || true; fi
}

case "${1:-}" in
  start) start "$2" "$3"; smoke "$2" ;;
  stop) stop "$2" ;;
  check)
    port="${2:-5674}"; dir="$(mktemp -d /tmp/rabbitmq-peer.XXXXXX)"
    trap 'stop "$dir" || true; rm -rf "$dir"' EXIT
    start "$port" "$dir"; smoke "$port" ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
