#!/usr/bin/env bash
# Ferry's native MQI client for the interop suites' native round trip
# (INTEROP_NATIVE_PUT_CMD / INTEROP_NATIVE_GET_CMD), through the amqsput/amqsget samples:
#   interop/ferry-native.sh put QUEUE TEXT    # puts TEXT as one MQSTR message
#   interop/ferry-native.sh get QUEUE         # prints the body of the first message
#   interop/ferry-native.sh pub TOPIC TEXT    # publishes TEXT on a topic string (amqspub)
#   interop/ferry-native.sh sub TOPIC         # subscribes (amqssub): prints `subscribed`,
#                                             # then the body of the first publication
# Connection: FERRY_CONNNAME / FERRY_CHANNEL / FERRY_QMGR (see ferry-client's examples).
# FERRY_PROFILE=debug runs the debug build of the samples (interop/run.sh sets it); they are
# in CARGO_TARGET_DIR when set (as cargo puts them), else target/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-target}"
[[ "$target" = /* ]] || target="$root/$target"
bin="$target/${FERRY_PROFILE:-release}/examples"
case "${1:-}" in
  put) printf '%s\n' "$3" | "$bin/amqsput" "$2" >/dev/null ;;
  get) FERRY_WAIT_MS="${FERRY_WAIT_MS:-5000}" "$bin/amqsget" "$2" \
         | sed -n 's/^message <\(.*\)>$/\1/p' | head -n 1 ;;
  pub) printf '%s\n' "$3" | "$bin/amqspub" "$2" >/dev/null ;;
  sub) FERRY_WAIT_MS="${FERRY_WAIT_MS:-5000}" "$bin/amqssub" "$2" \
         | sed -u -n 's/^subscribed$/subscribed/p; /^message </{s/^message <\(.*\)>$/\1/p;q;}' ;;
  *) echo "usage: $0 put QUEUE TEXT | get QUEUE | pub TOPIC TEXT | sub TOPIC" >&2; exit 2 ;;
esac
