#!/usr/bin/env bash
# Runs Ferry's AMQP 1.0 interop suites with real clients against a broker:
#   interop/qpid-jms  Apache Qpid JMS 2.x (Maven, JUnit 5)
#   interop/proton    python-qpid-proton (pytest), wire-level cases
#
#   AMQP_URL=amqp://host:port interop/run.sh [--peer] [--artemis] [--jms-only|--proton-only]
#
#   --peer      the broker is a peer (Artemis, RabbitMQ, ...), not Ferry: tests marked
#               ferry_semantics (what the issue demands of Ferry where peers differ) are skipped
#   --artemis   start the embedded Artemis peer (bench/peers/artemis) on ARTEMIS_PORT (5673) with
#               a fresh journal, wire up restart + native-client commands; implies --peer
#   --ferry     build and start a Ferry queue manager (AMQP on FERRY_AMQP_PORT, default 5672),
#               define the queues, wire up restart + native-client commands; also runs the
#               JMS load generator's smoke test (bench/jms-load: RR at 2 clients for 1 s,
#               non-persistent and persistent, must print a RESULT with rate > 0 and errors=0)
#
# Environment (also read by the tests): AMQP_URL, AMQP_USER, AMQP_PASSWORD, INTEROP_QUEUE_PREFIX,
# INTEROP_RESTART_CMD, INTEROP_NATIVE_PUT_CMD, INTEROP_NATIVE_GET_CMD, INTEROP_NATIVE_PUB_CMD,
# INTEROP_NATIVE_SUB_CMD (see README.md).
# Queues in interop/queues.txt must exist first. Exit code is non-zero on any failure.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"

peer=0; mode=""; run_jms=1; run_proton=1
for a in "$@"; do
  case "$a" in
    --peer) peer=1 ;;
    --artemis) mode=artemis; peer=1 ;;
    --ferry) mode=ferry ;;
    --jms-only) run_proton=0 ;;
    --proton-only) run_jms=0 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

cleanup_cmds=()
cleanup() { local c; for c in "${cleanup_cmds[@]}"; do eval "$c" || true; done; }
trap cleanup EXIT

# "NAME [maxdepth=N]" lines of queues.txt -> MQSC
queues_to_mqsc() {
  sed 's/#.*//' "$here/queues.txt" | awk 'NF {
      line = "DEFINE QLOCAL(" $1 ")"
      for (i = 2; i <= NF; i++) if (tolower($i) ~ /^maxdepth=/) { split($i, kv, "="); line = line " MAXDEPTH(" kv[2] ")" }
      print line " REPLACE" }'
}

# --ferry: a Ferry queue manager in a private FERRY_HOME (a release build; FERRY_PROFILE=debug
# uses the debug build, which `cargo test` has just made: the suites check behaviour), with the
# interop queues defined, its AMQP channel on FERRY_AMQP_PORT (default 5672), restarts with
# ferry stop/start, and the amqsput/amqsget samples as the native client. The binaries are
# cargo's, in CARGO_TARGET_DIR when set (as cargo puts them), else target/.
ferry_mode() {
  local profile="${FERRY_PROFILE:-release}" target="${CARGO_TARGET_DIR:-target}"
  [[ "$target" = /* ]] || target="$root/$target"
  local ferry="$target/$profile/ferry" port="${FERRY_AMQP_PORT:-5672}"
  local tcp="${FERRY_TCP_PORT:-14149}" build=(--release)
  [ "$profile" = debug ] && build=()
  export FERRY_PROFILE="$profile"
  # One build for both packages: their dependencies' features unify, so nothing is built twice.
  (cd "$root" && cargo build ${build[@]+"${build[@]}"} -p ferry --bin ferry \
     -p ferry-client --example amqsput --example amqsget --example amqspub --example amqssub) || return 1
  export FERRY_HOME="${FERRY_HOME:-$(mktemp -d /tmp/ferry-interop.XXXXXX)}"
  echo "== starting Ferry queue manager QMI (FERRY_HOME $FERRY_HOME, AMQP port $port)"
  # Channel and connection authentication, and object authorities, as an administrator
  # would set them for these clients (run at every start, crtmqm -ic, so after the users
  # below are in the user repository: SET AUTHREC refuses users the queue manager does not
  # know). The default channels open to this host's test clients, who run as an
  # administrator; CHLAUTH.AMQP closed to everyone, and user 'blockme' refused everywhere,
  # for the refusal tests; passwords checked when given. Users 'interop', 'blockme',
  # 'limited' and 'noconnect' are in the user repository, all with INTEROP_PASSWORD; none is
  # an administrator, so each has only the authorities granted here: 'interop' may connect
  # and use every queue (what the tests run as INTEROP_USER need); 'limited' may connect
  # and only browse, get and inquire on INTEROP.AUTH.Q; 'noconnect' has no authority at all
  # (ObjectAuthorityTest, test_authorities.py).
  local blocked_port="${FERRY_AMQP_BLOCKED_PORT:-5683}"
  cat > "$FERRY_HOME/interop.mqsc" <<EOF
SET CHLAUTH('SYSTEM.DEF.*') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(CHANNEL) ACTION(REPLACE)
SET CHLAUTH('*') TYPE(BLOCKUSER) USERLIST('blockme') ACTION(REPLACE)
DEFINE CHANNEL(CHLAUTH.AMQP) CHLTYPE(AMQP) PORT($blocked_port) REPLACE
SET CHLAUTH('CHLAUTH.AMQP') TYPE(ADDRESSMAP) ADDRESS('*') USERSRC(NOACCESS) ACTION(REPLACE)
ALTER AUTHINFO('SYSTEM.DEFAULT.AUTHINFO.IDPWOS') AUTHTYPE(IDPWOS) CHCKCLNT(OPTIONAL)
REFRESH SECURITY TYPE(CONNAUTH)
SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('interop') AUTHADD(CONNECT,INQ)
SET AUTHREC PROFILE('**') OBJTYPE(QUEUE) PRINCIPAL('interop') AUTHADD(ALLMQI,DSP)
DEFINE QLOCAL(INTEROP.AUTH.Q) REPLACE
SET AUTHREC OBJTYPE(QMGR) PRINCIPAL('limited') AUTHADD(CONNECT)
SET AUTHREC PROFILE('INTEROP.AUTH.Q') OBJTYPE(QUEUE) PRINCIPAL('limited') AUTHADD(BROWSE,GET,INQ)
EOF
  "$ferry" create QMI --port "$tcp" --amqp-port "$port" --ic "$FERRY_HOME/interop.mqsc" >/dev/null || return 1
  export INTEROP_USER=interop INTEROP_PASSWORD; INTEROP_PASSWORD="pw-$RANDOM-$RANDOM"
  export INTEROP_LIMITED_USER=limited INTEROP_NOCONNECT_USER=noconnect
  for u in interop blockme limited noconnect; do
    printf '%s\n' "$INTEROP_PASSWORD" | "$ferry" user add QMI "$u" >/dev/null || return 1
  done
  cleanup_cmds+=("'$ferry' stop -i QMI >/dev/null 2>&1; '$ferry' delete QMI >/dev/null 2>&1")
  "$ferry" start QMI >/dev/null || return 1
  # A command of interop.mqsc that fails only goes to the error log (FRY8951E) and the
  # queue manager starts anyway: stop here rather than fail tests for a missing record.
  local errlog="$FERRY_HOME/qmgrs/QMI/errors/FRYERR01.LOG"
  if grep -q '^FRY8951E:' "$errlog"; then
    echo "interop.mqsc failed at start:"; grep '^FRY8951E:' "$errlog"; return 1
  fi
  { queues_to_mqsc; for q in REPLY REPLY.1 REPLY.2 $(seq -f 'REQUEST.%g' 1 10); do
      echo "DEFINE QLOCAL($q) REPLACE"; done; } | "$ferry" mqsc QMI >/dev/null || return 1
  export FERRY_QM_PID; FERRY_QM_PID="$(cat "$FERRY_HOME/qmgrs/QMI/run/qm.pid")"
  # The AMQP channel starts with the queue manager: check it runs. (grep reads all the
  # output: grep -q stops at the match, and ferry, still writing, dies of SIGPIPE, which
  # pipefail turns into a failed check.)
  "$ferry" mqsc QMI <<< "DISPLAY CHSTATUS(SYSTEM.DEF.AMQP)" | grep "STATUS(RUNNING)" >/dev/null || {
    echo "the AMQP channel did not start:"; "$ferry" mqsc QMI <<< "DISPLAY CHSTATUS(*)"; return 1; }
  export AMQP_URL="amqp://localhost:$port" AMQP_BLOCKED_URL="amqp://localhost:$blocked_port"
  ferry_tls "$ferry" || return 1
  export INTEROP_RESTART_CMD="'$ferry' stop QMI >/dev/null && '$ferry' start QMI >/dev/null"
  export FERRY_CONNNAME="localhost($tcp)" FERRY_QMGR=QMI FERRY_CHANNEL=SYSTEM.DEF.SVRCONN
  export INTEROP_NATIVE_PUT_CMD="'$here/ferry-native.sh' put"
  export INTEROP_NATIVE_GET_CMD="'$here/ferry-native.sh' get"
  export INTEROP_NATIVE_PUB_CMD="'$here/ferry-native.sh' pub"
  export INTEROP_NATIVE_SUB_CMD="'$here/ferry-native.sh' sub"
}

# AMQPS for the TLS tests: a CA, the queue manager's certificate (label ibmwebspheremqqmi in
# its key repository, the ssl directory) and a client certificate, made here with OpenSSL
# (nothing committed); AMQP channels TLS.AMQP (SSLCAUTH(OPTIONAL)) and TLSAUTH.AMQP
# (SSLCAUTH(REQUIRED)) on their own ports; PKCS#12 stores for Java, PEM files for proton.
ferry_tls() {
  local ferry="$1" pki="$FERRY_HOME/pki" repo="$FERRY_HOME/qmgrs/QMI/ssl"
  local tls_port="${FERRY_AMQPS_PORT:-5681}" auth_port="${FERRY_AMQPS_AUTH_PORT:-5682}"
  mkdir -p "$pki" "$repo"
  (
    set -e; cd "$pki"
    ec() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
    ec ca.key
    openssl req -x509 -new -key ca.key -subj "/O=Ferry Interop/CN=Interop CA" -days 2 -out ca.crt
    for who in qm app; do
      ec "$who.key"
      cn=$([ "$who" = qm ] && echo QMI || echo app1)
      openssl req -new -key "$who.key" -subj "/O=Ferry/CN=$cn" -out "$who.csr"
      printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' > "$who.ext"
      openssl x509 -req -in "$who.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
        -extfile "$who.ext" -out "$who.crt" 2>/dev/null
    done
    rm -f trust.p12 app.p12
    keytool -importcert -noprompt -alias ca -file ca.crt -keystore trust.p12 \
      -storetype PKCS12 -storepass changeit >/dev/null 2>&1
    openssl pkcs12 -export -in app.crt -inkey app.key -name app -out app.p12 -passout pass:changeit
  ) || { echo "making the interop certificates failed"; return 1; }
  cp "$pki/qm.crt" "$repo/ibmwebspheremqqmi.crt"
  cp "$pki/qm.key" "$repo/ibmwebspheremqqmi.key"
  cp "$pki/ca.crt" "$repo/trust.pem"
  "$ferry" mqsc QMI >/dev/null <<EOF || return 1
REFRESH SECURITY TYPE(SSL)
DEFINE CHANNEL(TLS.AMQP) CHLTYPE(AMQP) PORT($tls_port) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLCAUTH(OPTIONAL) REPLACE
DEFINE CHANNEL(TLSAUTH.AMQP) CHLTYPE(AMQP) PORT($auth_port) SSLCIPH(ANY_TLS12_OR_HIGHER) SSLCAUTH(REQUIRED) REPLACE
START CHANNEL(TLS.AMQP)
START CHANNEL(TLSAUTH.AMQP)
EOF
  export AMQPS_URL="amqps://localhost:$tls_port" AMQPS_AUTH_URL="amqps://localhost:$auth_port"
  export INTEROP_TRUST_STORE="$pki/trust.p12" INTEROP_KEY_STORE="$pki/app.p12"
  export INTEROP_STORE_PASSWORD=changeit INTEROP_CA_PEM="$pki/ca.crt"
  export INTEROP_CLIENT_CERT="$pki/app.crt" INTEROP_CLIENT_KEY="$pki/app.key"
}

artemis_mode() {
  local port="${ARTEMIS_PORT:-5673}" data
  data="$(mktemp -d /tmp/artemis-interop.XXXXXX)"
  echo "== starting embedded Artemis peer on port $port (data $data)"
  "$root/bench/peers/artemis/ctl.sh" start "$port" "$data" "@$here/queues.txt" || return 1
  cleanup_cmds+=("'$root/bench/peers/artemis/ctl.sh' stop '$data'; rm -rf '$data'")
  export AMQP_URL="amqp://localhost:$port"
  export INTEROP_RESTART_CMD="'$root/bench/peers/artemis/ctl.sh' restart '$data'"
  export INTEROP_NATIVE_PUT_CMD="'$root/bench/peers/artemis/native.sh' $port put"
  export INTEROP_NATIVE_GET_CMD="'$root/bench/peers/artemis/native.sh' $port get"
}

case "$mode" in
  ferry) ferry_mode || { echo "ferry mode setup failed" >&2; exit 1; } ;;
  artemis) artemis_mode || { echo "artemis setup failed" >&2; exit 1; } ;;
esac
export AMQP_URL="${AMQP_URL:-amqp://localhost:5672}"

echo "== broker: $AMQP_URL${INTEROP_QUEUE_PREFIX:+ (queue prefix $INTEROP_QUEUE_PREFIX)}"
for v in INTEROP_RESTART_CMD INTEROP_NATIVE_PUT_CMD INTEROP_NATIVE_GET_CMD INTEROP_NATIVE_PUB_CMD \
  INTEROP_NATIVE_SUB_CMD; do
  [ -n "${!v:-}" ] && echo "   $v=${!v}" || echo "   $v unset: that test will be skipped"
done
if [ $peer = 1 ]; then
  echo "   --peer: skipping tests tagged ferry_semantics (they check what Ferry must do where peer brokers differ)"
fi

declare -A pass fail skip secs status
start_all=$(date +%s)

if [ $run_jms = 1 ]; then
  echo; echo "== Qpid JMS suite (interop/qpid-jms)"
  t0=$(date +%s)
  mvn_args=(-B -Dstyle.color=never test)
  [ $peer = 1 ] && mvn_args+=(-DexcludedGroups=ferry_semantics)
  # INTEROP_JMS_TESTS=TopicTest (Surefire's -Dtest syntax) runs only those.
  [ -n "${INTEROP_JMS_TESTS:-}" ] && mvn_args+=("-Dtest=$INTEROP_JMS_TESTS")
  log="$(mktemp)"
  (cd "$here/qpid-jms" && mvn "${mvn_args[@]}") 2>&1 | tee "$log" \
    | grep -E --line-buffered 'Tests run:|FAIL|ERROR\]|SKIPPED:|BUILD' || true
  line="$(grep -E '^\[[A-Z]+\] Tests run: [0-9]+, Failures: [0-9]+, Errors: [0-9]+, Skipped: [0-9]+$' "$log" | tail -1)"
  if [ -n "$line" ]; then
    read -r run f e s < <(echo "$line" | sed -E 's/.*Tests run: ([0-9]+), Failures: ([0-9]+), Errors: ([0-9]+), Skipped: ([0-9]+)/\1 \2 \3 \4/')
    pass[jms]=$((run - f - e - s)); fail[jms]=$((f + e)); skip[jms]=$s
  else
    pass[jms]=0; fail[jms]=1; skip[jms]=0; echo "!! no Surefire summary: build or setup failed (log: $log)"
  fi
  grep -q 'BUILD SUCCESS' "$log" || [ "${fail[jms]}" -gt 0 ] || fail[jms]=1
  secs[jms]=$(( $(date +%s) - t0 ))
fi

# The JMS load generator against the Ferry queue manager: a RESULT line with rate > 0 and
# errors=0 for RR non-persistent and persistent (whatever the rate; not a timing check).
if [ "$mode" = ferry ] && [ $run_jms = 1 ]; then
  echo; echo "== JMS load generator smoke test (bench/jms-load)"
  t0=$(date +%s); pass[load]=0; fail[load]=0; skip[load]=0
  # The Qpid JMS suite restarts the queue manager (BrokerLifecycleTest): its pid now.
  FERRY_QM_PID="$(cat "$FERRY_HOME/qmgrs/QMI/run/qm.pid")"
  for p in "" --persistent; do
    out="$(timeout 60 "$root/bench/jms-load/run.sh" rr --url "$AMQP_URL" --broker ferry --clients 2 \
           --warmup 0.5 --secs 1 --broker-pid "$FERRY_QM_PID" $p 2>&1)"; rc=$?
    line="$(grep '^RESULT ' <<< "$out" | head -1)"
    echo "   ${line:-no RESULT line (exit $rc)}"
    rate="$(sed -nE 's/.* rate=([0-9]+) .*/\1/p' <<< "$line")"
    if [ $rc = 0 ] && [ "${rate:-0}" -gt 0 ] && grep -q ' errors=0 ' <<< "$line" \
       && grep -qE ' broker_cpu_us_per_op=[0-9.]+ ' <<< "$line"; then
      pass[load]=$((pass[load] + 1))
    else
      fail[load]=$((fail[load] + 1)); echo "!! jms-load rr $p failed:"; tail -20 <<< "$out"
    fi
  done
  secs[load]=$(( $(date +%s) - t0 ))
fi

if [ $run_proton = 1 ]; then
  echo; echo "== python-qpid-proton suite (interop/proton)"
  t0=$(date +%s)
  venv="$here/.venv"
  stamp="$venv/.requirements.installed"
  if [ ! -x "$venv/bin/python" ]; then python3 -m venv "$venv"; fi
  if [ ! -f "$stamp" ] || ! cmp -s "$here/proton/requirements.txt" "$stamp"; then
    "$venv/bin/pip" install -q -r "$here/proton/requirements.txt" && cp "$here/proton/requirements.txt" "$stamp"
  fi
  py_args=(-q -p no:cacheprovider)
  [ $peer = 1 ] && py_args+=(-m "not ferry_semantics")
  # INTEROP_PROTON_TESTS=topics (pytest -k syntax) runs only those.
  [ -n "${INTEROP_PROTON_TESTS:-}" ] && py_args+=(-k "$INTEROP_PROTON_TESTS")
  log="$(mktemp)"
  (cd "$here/proton" && "$venv/bin/python" -m pytest "${py_args[@]}") 2>&1 | tee "$log"
  line="$(grep -E '(passed|failed|error|no tests ran)' "$log" | tail -1)"
  n() { echo "$line" | grep -oE "[0-9]+ $1" | grep -oE '[0-9]+' || echo 0; }
  pass[proton]=$(n passed); fail[proton]=$(( $(n failed) + $(n error) )); skip[proton]=$(( $(n skipped) ))
  desel=$(n deselected)
  if [ "$desel" -gt 0 ] && [ -n "${INTEROP_PROTON_TESTS:-}" ]; then
    echo "   $desel test(s) not selected by INTEROP_PROTON_TESTS=$INTEROP_PROTON_TESTS (not counted)"
  elif [ "$desel" -gt 0 ]; then
    echo "   SKIPPED $desel test(s) marked ferry_semantics (--peer: the peer broker differs from what Ferry must do)"
    skip[proton]=$(( skip[proton] + desel ))
  fi
  [ -n "$line" ] || { fail[proton]=1; echo "!! pytest printed no summary"; }
  secs[proton]=$(( $(date +%s) - t0 ))
fi

echo; echo "== interop summary ($AMQP_URL)"
tp=0; tf=0; ts=0
for k in jms load proton; do
  [ -n "${pass[$k]:-}" ] || continue
  printf '   %-7s %3d passed, %3d failed, %3d skipped  (%ds)\n' "$k" "${pass[$k]}" "${fail[$k]}" "${skip[$k]}" "${secs[$k]}"
  tp=$((tp + pass[$k])); tf=$((tf + fail[$k])); ts=$((ts + skip[$k]))
done
echo "   total time $(( $(date +%s) - start_all ))s"
echo "interop: $tp passed, $tf failed, $ts skipped"
[ $tf -eq 0 ] && [ $tp -gt 0 ]
