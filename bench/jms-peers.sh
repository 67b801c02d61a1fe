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
#   ROUNDS=4 PEERS="ferry artemis" WORKLOADS=rr CLIENTS=16,64 bench/jms-peers.sh
#
# PEERS: ferry artemis rabbitmq (default all three). WORKLOADS (default all): rr, rr-persistent,
# rr-transacted (commit after each send and receive), sr, ps (N publishers, N subscribers on
# 10 topics), ps-cc (seed 001's shape: one publisher on one topic, CLIENTS subscribers; not in
# the default list). CLIENTS: the steps (1,16,64);
# SECS / WARMUP: measured and warm-up seconds per step (5 / 2); BROKER_WARMUP: seconds of RR at
# 16 clients run against each broker before it is measured (15); JMS_ARGS: more generator
# options (e.g. --ack none, --size 20KB). FERRY=path uses that ferry binary instead of building
# a release one. ROUNDS=N (default 1) runs the whole comparison N times, the brokers' order
# reversed every other round (results in round1..roundN), and ends with each round's ratio of
# Ferry's broker CPU per operation to Artemis's and their median: one run decides nothing on a
# machine where each broker's CPU per operation moves by ±20% from run to run.
#
# Ferry: a private queue manager (AMQP on 5672) with REQUEST.1-10, REPLY, REPLY.1..N and
# SR.1..N defined (topics need no definition). Artemis: embedded 2.55.0
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
rounds="${ROUNDS:-1}"
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
      ps-cc) args=(ps --queues 1 --publishers 1) ;;
      *) echo "unknown workload $w" >&2; return 2 ;;
    esac
    echo "== $name: $w"
    "$gen" "${args[@]}" --clients "$clients" --secs "$secs" --warmup "$warmup" "${common[@]}" \
      2> "$out/$name-$w.err" | tee "$out/$name-$w.txt" | sed 's/^/   /' || true
  done
}

# run_round DIR PEER...: every workload against each broker in turn, results in DIR
run_round() {
  local out=$1; shift
  mkdir -p "$out"
  local peer
  for peer in "$@"; do
    case "$peer" in
      ferry)
        if [ -n "${FERRY:-}" ]; then ferry="$FERRY"; else
          cargo build --release --bin ferry -p ferry >/dev/null; ferry="$root/target/release/ferry"; fi
        export FERRY_HOME; FERRY_HOME="$(mktemp -d /tmp/ferry-jms.XXXXXX)"
        "$ferry" create QMJMS --port "${FERRY_TCP_PORT:-14159}" --amqp-port "${FERRY_AMQP_PORT:-5672}" \
          --ic "$root/crates/ferry-launcher/test-clients.mqsc" >/dev/null
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
}

# summarize DIR: one table per workload, rate (broker CPU µs per operation) per broker and
# client count, into DIR/summary.md.
summarize() {
  local out=$1 w n p f cell line rate cpu errs
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
}

# ratios DIR...: Ferry's broker CPU per operation over Artemis's, per workload and client
# count, in each round's DIR, and their median.
ratios() {
  python3 - "$workloads" "$clients" "$@" <<'PY'
import re, statistics, sys
workloads, clients, dirs = sys.argv[1].split(), sys.argv[2].split(","), sys.argv[3:]
def cpu(d, broker, w, n):
    try:
        for line in open(f"{d}/{broker}-{w}.txt"):
            if line.startswith("RESULT ") and f" clients={n} " in line:
                m = re.search(r" broker_cpu_us_per_op=([0-9.]+)", line)
                return float(m.group(1)) if m else None
    except OSError:
        return None
print("\n## Ferry's broker CPU per operation / Artemis's, by round\n")
print("| workload | clients | " + " | ".join(f"round {i + 1}" for i in range(len(dirs))) + " | median |")
print("|---|---:|" + "---:|" * (len(dirs) + 1))
for w in workloads:
    for n in clients:
        rs = []
        for d in dirs:
            f, a = cpu(d, "ferry", w, n), cpu(d, "artemis", w, n)
            rs.append(f / a if f and a else None)
        cells = [f"{r:.2f}" if r is not None else "-" for r in rs]
        known = [r for r in rs if r is not None]
        med = f"{statistics.median(known):.2f}" if known else "-"
        print(f"| {w} | {n} | " + " | ".join(cells) + f" | {med} |")
PY
}

if [ "$rounds" = 1 ]; then
  run_round "$out" $peers
  summarize "$out"
else
  read -r -a order <<< "$peers"
  dirs=()
  for r in $(seq 1 "$rounds"); do
    echo "==== round $r of $rounds: ${order[*]}"
    run_round "$out/round$r" "${order[@]}"
    summarize "$out/round$r"
    dirs+=("$out/round$r")
    reversed=(); for ((i=${#order[@]}-1; i>=0; i--)); do reversed+=("${order[$i]}"); done
    order=("${reversed[@]}")
  done
  if [[ " $peers " == *" ferry "* && " $peers " == *" artemis "* ]]; then
    ratios "${dirs[@]}" | tee "$out/ratios.md"
  fi
fi
echo "== results in $out"
