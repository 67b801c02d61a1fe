#!/usr/bin/env bash
# The JMS load generator (bench/jms-load, Apache Qpid JMS) against Ferry, ActiveMQ Artemis and
# RabbitMQ in one run, each broker on its own port, each warmed up before it is measured; one
# table per workload with the rate and the broker's CPU per operation of every broker.
# Results (the generator's output per broker and workload, and the tables) go to
# bench/results/<date>/jms (or OUT=dir).
#
#   bench/jms-peers.sh                                   # every workload at 1,16,64 clients
#   CLIENTS=1,16 SECS=5 WARMUP=2 bench/jms-peers.sh
#   PEERS="ferry artemis" WORKLOADS="rr rr-persistent" bench/jms-peers.sh
#   BROKER_WARMUP=30 JMS_ARGS="--share 10" bench/jms-peers.sh
#
# PEERS: ferry artemis rabbitmq (default all three). WORKLOADS (default all): rr, rr-persistent,
# rr-transacted (commit after each send and receive), sr, ps. CLIENTS: the steps (1,16,64);
# SECS / WARMUP: measured and warm-up seconds per step (5 / 2); BROKER_WARMUP: seconds of RR at
# 16 clients run against each broker before it is measured (15); JMS_ARGS: more generator
# options (e.g. --ack none, --size 20KB). FERRY=path uses that ferry binary instead of building
# a release one.
#
# Ferry: a private queue manager (AMQP on 5672) with REQUEST.1-10, REPLY, REPLY.1..N and
# SR.1..N defined; it has no topics yet, so ps reports "refused". Artemis: embedded 2.55.0
# (bench/peers/artemis, port 5673; auto-create on for the topics). RabbitMQ: Debian's 3.10
# (bench/peers/rabbitmq, port 5674), queues as /amq/queue/NAME and topics as /topic/NAME; it
# ignores selectors, so its requesters use their own reply queues.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
clients="${CLIENTS:-1,16,64}"
secs="${SECS:-5}"
warmup="${WARMUP:-2}"
broker_warmup="${BROKER_WARMUP:-15}"
workloads="${WORKLOADS:-rr rr-persistent rr-transacted sr ps}"
peers="${PEERS:-ferry artemis rabbitmq}"
out="${OUT:-bench/results/$(date -u +%Y-%m-%d)/jms}"
read -r -a jms_args <<< "${JMS_ARGS:-}"
mkdir -p "$out"
gen="$root/bench/jms-load/run.sh"
bench/jms-load/build.sh

maxn=$(echo "$clients" | tr ',' '\n' | sort -n | tail -1)
queues=(); for i in $(seq 1 10); do queues+=("REQUEST.$i"); done; queues+=(REPLY)
for i in $(seq 1 "$maxn"); do queues+=("REPLY.$i" "SR.$i"); done

cleanup_cmds=()
cleanup() { local c; for c in "${cleanup_cmds[@]}"; do eval "$c" || true; done; cleanup_cmds=(); }
trap cleanup EXIT

# measure NAME PID generator-args...: the broker warm-up, then every workload
measure() {
  local name=$1 pid=$2; shift 2
  local common=(--broker "$name" --broker-pid "$pid" "$@" ${jms_args[@]+"${jms_args[@]}"})
  if [ "$broker_warmup" != 0 ]; then
    echo "== $name: warming up ${broker_warmup}s (RR, 16 clients)"
    "$gen" rr --clients 16 --warmup 0 --secs "$broker_warmup" "${common[@]}" > "$out/$name-warmup.txt" 2>&1 || true
  fi
  local w args
  for w in $workloads; do
    case "$w" in
      rr) args=(rr) ;;
      rr-persistent) args=(rr --persistent) ;;
      rr-transacted) args=(rr --transacted) ;;
      sr) args=(sr) ;;
      ps) args=(ps) ;;
      *) echo "unknown workload $w" >&2; return 2 ;;
    esac
    echo "== $name: $w"
    "$gen" "${args[@]}" --clients "$clients" --secs "$secs" --warmup "$warmup" "${common[@]}" \
      2> "$out/$name-$w.err" | tee "$out/$name-$w.txt" | sed 's/^/   /' || true
  done
}

for peer in $peers; do
  case "$peer" in
    ferry)
      if [ -n "${FERRY:-}" ]; then ferry="$FERRY"; else
        cargo build --release --bin ferry -p ferry >/dev/null; ferry="$root/target/release/ferry"; fi
      export FERRY_HOME; FERRY_HOME="$(mktemp -d /tmp/ferry-jms.XXXXXX)"
      "$ferry" create QMJMS --port "${FERRY_TCP_PORT:-14159}" --amqp-port "${FERRY_AMQP_PORT:-5672}" >/dev/null
      cleanup_cmds+=("'$ferry' stop -i QMJMS >/dev/null 2>&1; '$ferry' delete QMJMS >/dev/null 2>&1; rm -rf '$FERRY_HOME'")
      "$ferry" start QMJMS >/dev/null
      printf 'DEFINE QLOCAL(%s) REPLACE\n' "${queues[@]}" | "$ferry" mqsc QMJMS >/dev/null
      fpid="$(cat "$FERRY_HOME/qmgrs/QMJMS/run/qm.pid")"
      measure ferry "$fpid" --url "amqp://localhost:${FERRY_AMQP_PORT:-5672}"
      cleanup ;;
    artemis)
      adir="$(mktemp -d /tmp/artemis-jms.XXXXXX)"
      ARTEMIS_AUTO_CREATE=true bench/peers/artemis/ctl.sh start 5673 "$adir" "${queues[@]}" >/dev/null
      cleanup_cmds+=("bench/peers/artemis/ctl.sh stop '$adir' >/dev/null; rm -rf '$adir'")
      measure artemis "$(cat "$adir/artemis.pid")" --url amqp://localhost:5673
      cleanup ;;
    rabbitmq)
      rdir="$(mktemp -d /tmp/rabbitmq-jms.XXXXXX)"
      qfile="$rdir/queues.txt"; { cat interop/queues.txt; printf '%s\n' "${queues[@]}"; } > "$qfile"
      QUEUES_FILE="$qfile" bench/peers/rabbitmq/setup.sh start 5674 "$rdir" >/dev/null
      cleanup_cmds+=("bench/peers/rabbitmq/setup.sh stop '$rdir' >/dev/null; rm -rf '$rdir'")
      rpid="$(pgrep -f "beam.smp.*$rdir" | head -1 || true)"
      measure rabbitmq "${rpid:-0}" --url amqp://localhost:5674 --queue-prefix /amq/queue/ \
        --topic-prefix /topic/ --reply-queues per-requester
      cleanup ;;
    *) echo "unknown peer $peer (ferry, artemis, rabbitmq)" >&2; exit 2 ;;
  esac
done

# One table per workload: rate (broker CPU µs per operation) per broker and client count.
{
  echo "# JMS load generator: $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD)"
  echo "CLIENTS=$clients SECS=$secs WARMUP=$warmup BROKER_WARMUP=$broker_warmup JMS_ARGS=${JMS_ARGS:-}"
  for w in $workloads; do
    echo; echo "## $w (rate/s, broker CPU µs per operation in brackets)"; echo
    printf '| clients |'; for p in $peers; do printf ' %s |' "$p"; done; echo
    printf '|---:|'; for _ in $peers; do printf -- '---:|'; done; echo
    for n in ${clients//,/ }; do
      printf '| %s |' "$n"
      for p in $peers; do
        f="$out/$p-$w.txt"; cell="-"
        if [ -f "$f" ]; then
          line="$(grep -E "^RESULT .* clients=$n " "$f" | head -1 || true)"
          if [ -n "$line" ]; then
            rate="$(sed -E 's/.* rate=([^ ]+).*/\1/' <<< "$line")"
            cpu="$(sed -E 's/.* broker_cpu_us_per_op=([^ ]+).*/\1/' <<< "$line")"
            errs="$(sed -E 's/.* errors=([^ ]+).*/\1/' <<< "$line")"
            cell="$rate ($cpu)"; [ "$errs" != 0 ] && cell="$cell, $errs errors"
          elif grep -qE "^FAILED .* clients=$n " "$f"; then
            cell="refused"
          fi
        fi
        printf ' %s |' "$cell"
      done
      echo
    done
  done
} > "$out/summary.md"
cat "$out/summary.md"
for p in $peers; do for w in $workloads; do
  grep -h '^FAILED' "$out/$p-$w.txt" 2>/dev/null | head -1 | sed "s/^/   $p $w: /" || true
done; done
echo "== results in $out"
