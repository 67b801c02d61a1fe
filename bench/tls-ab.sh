#!/usr/bin/env bash
# TLS against plain TCP on one queue manager, in alternating rounds: what TLS costs, as the
# IBM MQ reports measure it (seed 000 Tables 9-12: RR-CC 2 KB with each CipherSpec).
#
#   bench/tls-ab.sh                    # native RR-CC, non-persistent, 16 and 64 requesters
#   PERSISTENT=1 bench/tls-ab.sh       # persistent messages
#   bench/tls-ab.sh --jms              # Qpid JMS over amqp:// against amqps:// (AMQPS)
#   bench/tls-ab.sh --connect          # connections per second (ferry perf connect)
#   CIPHERSPEC=TLS_AES_256_GCM_SHA384 CLIENTS="16 64" ROUNDS=4 SECS=6 bench/tls-ab.sh
#
# One queue manager with a key repository made here by OpenSSL (a throwaway CA, the queue
# manager's certificate, nothing kept), the plain channel SYSTEM.DEF.SVRCONN beside
# TLS.SVRCONN with SSLCIPH(CIPHERSPEC) SSLCAUTH(OPTIONAL), and for --jms the plain AMQP
# channel beside TLS.AMQP on its own port. Each round measures plain then TLS (TLS first in
# even rounds), after 8 s of warm-up at 16 clients. Prints one line per point
# (`AB round=... mode=plain|tls clients=... rate=... server_us_per_rt=...`) and the medians:
# TLS's rate as a share of plain's and its CPU per round trip against plain's.
# FERRY=path uses that ferry binary instead of building a release one.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
what=native
case "${1:-}" in
  --jms) what=jms ;;
  --connect) what=connect ;;
  "") ;;
  *) sed -n 2,18p "$0" >&2; exit 2 ;;
esac
rounds="${ROUNDS:-4}"
clients="${CLIENTS:-16 64}"
secs="${SECS:-6}"
spec="${CIPHERSPEC:-TLS_AES_128_GCM_SHA256}"
persistent=()
[ "${PERSISTENT:-0}" = 1 ] && persistent=(--persistent)
if [ -n "${FERRY:-}" ]; then ferry=$FERRY; else
  (cd "$root" && cargo build --release --bins -q)
  ferry="$root/target/release/ferry"
fi
[ "$what" = jms ] && "$root/bench/jms-load/build.sh"
. "$root/bench/lib/private-qm.sh"
qm=QMTLS
work=""
trap 'remove_private_qm "$ferry" "$qm"' EXIT
create_private_qm "$ferry" "$qm"
tport=$(free_port)
maxn=$(echo "$clients" | tr ' ' '\n' | sort -n | tail -1)
results="$work/results.txt"
: > "$results"

# The key repository: a throwaway CA and the queue manager's certificate (EC P-256).
repo="$FERRY_HOME/qmgrs/$qm/ssl" client="$work/client"
mkdir -p "$repo" "$client"
(
  cd "$work"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/O=Ferry bench/CN=bench CA" -keyout ca.key -out ca.crt 2>/dev/null
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/O=Ferry bench/CN=$qm" \
    -keyout qm.key -out qm.csr 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' > qm.ext
  openssl x509 -req -in qm.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -extfile qm.ext -out qm.crt 2>/dev/null
  keytool -importcert -noprompt -alias ca -file ca.crt -keystore trust.p12 -storetype PKCS12 \
    -storepass changeit >/dev/null 2>&1 || true
)
label="ibmwebspheremq$(echo "$qm" | tr 'A-Z' 'a-z')"
cp "$work/qm.crt" "$repo/$label.crt"; cp "$work/qm.key" "$repo/$label.key"
cp "$work/ca.crt" "$repo/trust.pem"; cp "$work/ca.crt" "$client/trust.pem"

# Room for every client of the connection test (the reports' 5000).
sed -i 's/^\( *MaxChannels=\).*/\15000/; s/^\( *MaxActiveChannels=\).*/\15000/' \
  "$FERRY_HOME/qmgrs/$qm/qm.ini"
"$ferry" start "$qm" >/dev/null
pid=$(cat "$FERRY_HOME/qmgrs/$qm/run/qm.pid")
{ for i in $(seq 1 10); do echo "DEFINE QLOCAL(REQUEST.$i) REPLACE"; done
  echo "DEFINE QLOCAL(REPLY) REPLACE"
  for i in $(seq 1 "$maxn"); do echo "DEFINE QLOCAL(REPLY.$i) REPLACE"; done
  echo "DEFINE CHANNEL(TLS.SVRCONN) CHLTYPE(SVRCONN) SSLCIPH($spec) SSLCAUTH(OPTIONAL) MAXINST(999999999) MAXINSTC(999999999) REPLACE"
  echo "DEFINE CHANNEL(TLS.AMQP) CHLTYPE(AMQP) PORT($tport) SSLCIPH($spec) SSLCAUTH(OPTIONAL) REPLACE"
  echo "START CHANNEL(TLS.AMQP)"; } | "$ferry" mqsc "$qm" >/dev/null

# measure MODE N: one point; prints its fields
measure() {
  local mode=$1 n=$2 target=()
  case "$what" in
    jms)
      local url="amqp://localhost:$aport"
      [ "$mode" = tls ] && url="amqps://localhost:$tport?transport.trustStoreLocation=$work/trust.p12&transport.trustStorePassword=changeit&transport.trustStoreType=PKCS12"
      "$root/bench/jms-load/run.sh" rr --url "$url" --clients "$n" --secs "$secs" --warmup 2 \
        --broker ferry --broker-pid "$pid" --reply-queues per-requester ${persistent[@]+"${persistent[@]}"} 2>/dev/null \
        | python3 "$root/bench/lib/point.py" jms
      return ;;
    *)
      target=(--connect "localhost($port)" --qmgr "$qm" --server-pid "$pid")
      [ "$mode" = tls ] && target+=(--channel TLS.SVRCONN --cipherspec "$spec" --key-repository "$client")
      if [ "$what" = connect ]; then
        "$ferry" perf connect "${target[@]}" --clients "$n" --json "$work/perf.json" \
          --out "$work/perf" >/dev/null 2>&1
      else
        "$ferry" perf rr-cc "${target[@]}" ${persistent[@]+"${persistent[@]}"} --sizes 2KB \
          --clients "$n" --secs "$secs" --warmup 2 --json "$work/perf.json" --out "$work/perf" \
          >/dev/null 2>&1
      fi ;;
  esac
  # The connection test's rate is connections/s and its CPU per connection.
  python3 "$root/bench/lib/point.py" perf "$work/perf.json"
}

for r in $(seq 1 "$rounds"); do
  order="plain tls"; [ $((r % 2)) = 0 ] && order="tls plain"
  for mode in $order; do
    [ "$what" = connect ] || SECS=8 secs=8 measure "$mode" 16 >/dev/null || true
    for n in $clients; do
      line="AB round=$r mode=$mode clients=$n $(measure "$mode" "$n" || echo failed=1)"
      echo "$line"
      echo "$line" >> "$results"
    done
  done
done

python3 - "$results" "$spec" "$what" <<'PY'
import statistics, sys
path, spec, what = sys.argv[1:]
rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(path) if "failed" not in l]
print("\nmedians over the rounds (%s, %s):" % (what, spec))
print("| clients | plain rt/s | TLS rt/s | TLS/plain rate | plain µs/rt | TLS µs/rt | TLS/plain CPU |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for n in sorted({int(r["clients"]) for r in rows}):
    def med(mode, field):
        xs = [float(r[field]) for r in rows if r["mode"] == mode and int(r["clients"]) == n
              and r.get(field) not in (None, "NA", "None")]
        return statistics.median(xs) if xs else float("nan")
    rp, rt = med("plain", "rate"), med("tls", "rate")
    cp, ct = med("plain", "server_us_per_rt"), med("tls", "server_us_per_rt")
    print("| %d | %.0f | %.0f | %.2f | %.1f | %.1f | %.2f |" % (n, rp, rt, rt / rp, cp, ct, ct / cp))
PY
