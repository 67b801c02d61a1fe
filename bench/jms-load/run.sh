#!/usr/bin/env bash
# Runs the JMS load generator (building it first if needed); arguments as `run.sh --help` lists.
#
#   bench/jms-load/run.sh rr --url amqp://localhost:5672 --clients 1,16 --secs 5 --warmup 2
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/build.sh"
exec java ${JMS_LOAD_JAVA_OPTS:--Xms256m -Xmx1g} \
  -Dorg.slf4j.simpleLogger.defaultLogLevel=error \
  -cp "$here/target/classes:$here/target/lib/*" ferry.jmsload.JmsLoad "$@"
