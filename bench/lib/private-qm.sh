# Sourced by the bench scripts that run a queue manager of their own: free loopback ports
# and a private queue manager in a temporary FERRY_HOME.
#
#   free_port                      prints a TCP port free on 127.0.0.1
#   create_private_qm FERRY QM     makes $work (a temporary directory), exports
#                                  FERRY_HOME=$work/home, picks $port (native) and $aport
#                                  (AMQP) and creates queue manager QM there with FERRY,
#                                  its default channels open to this host's clients
#                                  (test_clients_mqsc, run at every start)
#   remove_private_qm FERRY QM     stops QM (immediately) and removes $work; scripts call it
#                                  on exit: trap 'remove_private_qm "$ferry" "$qm"' EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# The CHLAUTH records every test and benchmark queue manager runs with (one file, read by
# ferry-launcher too).
test_clients_mqsc="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/crates/ferry-launcher/test-clients.mqsc"

create_private_qm() {
  work=$(mktemp -d)
  export FERRY_HOME="$work/home"
  port=$(free_port)
  aport=$(free_port)
  "$1" create "$2" -p "$port" --amqp-port "$aport" --ic "$test_clients_mqsc" >/dev/null
}

remove_private_qm() {
  "$1" stop -i "$2" >/dev/null 2>&1 || true
  [ -z "${work:-}" ] || rm -rf "$work"
}
