#!/usr/bin/env bash
# Artemis' own CORE-protocol client, standing in for Ferry's native client in the interop
# suite (INTEROP_NATIVE_PUT_CMD / INTEROP_NATIVE_GET_CMD):
#   bench/peers/artemis/native.sh PORT put QUEUE TEXT
#   bench/peers/artemis/native.sh PORT get QUEUE       # prints the body
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
"$here/build.sh"
exec java -cp "$here/target/classes:$here/target/lib/*" -Dorg.slf4j.simpleLogger.defaultLogLevel=warn ferry.peers.NativeClient "$@"
