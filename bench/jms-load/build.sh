#!/usr/bin/env bash
# Builds the JMS load generator (once; again when the sources are newer than the build).
# Needs a JDK 17+ and mvn; the first build downloads Qpid JMS from Maven Central into ~/.m2.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
stamp="$here/target/lib/.built"
if [ ! -f "$stamp" ] || [ -n "$(find "$here/pom.xml" "$here/src" -newer "$stamp" -print -quit)" ]; then
  log="$(mktemp)"
  if ! (cd "$here" && mvn -q -B -Dstyle.color=never package -DskipTests) > "$log" 2>&1; then
    cat "$log" >&2; rm -f "$log"; echo "jms-load: build failed" >&2; exit 1
  fi
  rm -f "$log"
  touch "$stamp"
fi
