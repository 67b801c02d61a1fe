#!/usr/bin/env bash
# Builds the Artemis peer (once; again when the sources are newer than the build).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
stamp="$here/target/lib/.built"
if [ ! -f "$stamp" ] || [ -n "$(find "$here/pom.xml" "$here/src" -newer "$stamp" -print -quit)" ]; then
  (cd "$here" && mvn -q -B -Dstyle.color=never package -DskipTests) >&2
  # the ASYNCIO journal's JNI wrapper ships inside activemq-artemis-native; Artemis loads it
  # from java.library.path only (the distribution keeps it in bin/lib/linux-x86_64)
  mkdir -p "$here/target/native"
  (cd "$here/target/native" && unzip -o -j -q "$here"/target/lib/activemq-artemis-native-*.jar 'lib/linux-x86_64/*' 2>/dev/null) || true
  touch "$stamp"
fi
