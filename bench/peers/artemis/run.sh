#!/usr/bin/env bash
# Embedded ActiveMQ Artemis 2.55.0 as a peer AMQP 1.0 broker (foreground; Ctrl-C stops it).
#
#   bench/peers/artemis/run.sh PORT DATA_DIR [QUEUES...]
#
# QUEUES: NAME | NAME:MAXDEPTH | @FILE (a queues list like interop/queues.txt:
# "NAME [maxdepth=N]" per line). Persistence is on (journal in DATA_DIR: ASYNCIO when
# libaio1 is installed, else NIO; the choice is printed), security off, auto-create off.
# Prints "artemis-peer: READY ..." once it accepts connections.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -lt 2 ]; then
  sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
# ASYNCIO journal wants libaio1 (Debian). Best effort: install when root and apt is there.
if ! ldconfig -p 2>/dev/null | grep -q 'libaio\.so\.1'; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq libaio1 >/dev/null 2>&1 || echo "artemis-peer: libaio1 not installed; NIO journal" >&2
  fi
fi
"$here/build.sh"
exec java -Xms256m -Xmx1g -Djava.library.path="$here/target/native" -cp "$here/target/classes:$here/target/lib/*" ferry.peers.ArtemisPeer "$@"
