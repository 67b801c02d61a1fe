#!/usr/bin/env bash
# AMQP 1.0 side by side: Ferry (native protocol and AMQP), ActiveMQ Artemis and RabbitMQ,
# all driven by the same harness (ferry perf ... --protocol amqp) on this machine, one after
# the other in one session. Results (JSON/CSV/MD/charts per run, and a summary) go to
# bench/results/<date>/amqp (or OUT=dir).
#
#   bench/amqp-peers.sh            # RR-CC 2KB non-persistent and persistent, 1,16,64 requesters
#   CLIENTS=1,16 SECS=5 bench/amqp-peers.sh
#   PEERS="artemis rabbitmq" bench/amqp-peers.sh     # a subset (default: ferry artemis rabbitmq)
#   AMQP_ARGS=--sync-send bench/amqp-peers.sh        # every AMQP send waits for its outcome
#
# AMQP sends are Qpid JMS's by default: persistent ones wait for the broker's outcome,
# non-persistent ones go async; --sync-send (Qpid JMS's jms.forceSyncSend) makes every send wait.
#
# Artemis: embedded 2.55.0 (bench/peers/artemis), persistence on, ASYNCIO journal when libaio is
# there. RabbitMQ: Debian's 3.10 with rabbitmq_amqp1_0 (bench/peers/rabbitmq), queues declared
# durable and addressed as /amq/queue/NAME; it ignores selectors, so its requesters use their own
# reply queues (--reply-queues per-requester), as the issue says.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
clients="${CLIENTS:-1,16,64}"
secs="${SECS:-5}"
warmup="${WARMUP:-1}"
out="${OUT:-bench/results/$(date -u +%Y-%m-%d)/amqp}"
peers=" ${PEERS:-ferry artemis rabbitmq} "
read -r -a amqp_args <<< "${AMQP_ARGS:-}"
mkdir -p "$out"
cargo build --release --bins >/dev/null
ferry="$root/target/release/ferry"
maxn=$(echo "$clients" | tr ',' '\n' | sort -n | tail -1)
queues=(); for i in $(seq 1 10); do queues+=("REQUEST.$i"); done; queues+=(REPLY)
for i in $(seq 1 "$maxn"); do queues+=("REPLY.$i"); done
run() { # name, extra args...
  local name=$1; shift
  echo "== $name"
  "$ferry" perf rr-cc --sizes 2KB --clients "$clients" --secs "$secs" --warmup "$warmup" \
    --out "$out/$name" "$@" | tee "$out/$name.txt" | grep -E '^ +[0-9]+ \|' || true
}

# Ferry, native protocol and AMQP (embedded queue manager), non-persistent and persistent.
if [[ $peers == *" ferry "* ]]; then
  run ferry-native
  run ferry-native-persistent --persistent
  run ferry-amqp --protocol amqp ${amqp_args[@]+"${amqp_args[@]}"}
  run ferry-amqp-persistent --protocol amqp --persistent ${amqp_args[@]+"${amqp_args[@]}"}
fi

# ActiveMQ Artemis.
if [[ $peers == *" artemis "* ]]; then
adir="$(mktemp -d /tmp/artemis-bench.XXXXXX)"
bench/peers/artemis/ctl.sh start 5673 "$adir" "${queues[@]}" >/dev/null
apid="$(cat "$adir/artemis.pid")"
run artemis-amqp --protocol amqp --url amqp://localhost:5673 --server-pid "$apid" ${amqp_args[@]+"${amqp_args[@]}"}
run artemis-amqp-persistent --protocol amqp --url amqp://localhost:5673 --server-pid "$apid" --persistent ${amqp_args[@]+"${amqp_args[@]}"}
bench/peers/artemis/ctl.sh stop "$adir" >/dev/null; rm -rf "$adir"
fi

# RabbitMQ (the interop queues too: its setup's smoke test uses one).
if [[ $peers == *" rabbitmq "* ]]; then
rdir="$(mktemp -d /tmp/rabbitmq-bench.XXXXXX)"
qfile="$rdir/queues.txt"; { cat interop/queues.txt; printf '%s\n' "${queues[@]}"; } > "$qfile"
QUEUES_FILE="$qfile" bench/peers/rabbitmq/setup.sh start 5674 "$rdir" >/dev/null
rpid="$(pgrep -f "beam.smp.*$rdir" | head -1 || true)"
rargs=(--protocol amqp --url amqp://localhost:5674 --queue-prefix /amq/queue/ --reply-queues per-requester ${amqp_args[@]+"${amqp_args[@]}"})
[ -n "$rpid" ] && rargs+=(--server-pid "$rpid")
run rabbitmq-amqp "${rargs[@]}"
run rabbitmq-amqp-persistent "${rargs[@]}" --persistent
bench/peers/rabbitmq/setup.sh stop "$rdir" >/dev/null; rm -rf "$rdir"
fi

echo "== results in $out"
