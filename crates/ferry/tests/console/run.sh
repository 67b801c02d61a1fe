#!/usr/bin/env bash
# Runs the web console's browser test (console.mjs) against the queue manager the
# environment names (tests/console.rs starts one and calls this). Needs Debian's
# chromium (`make test` installs it with apt-get) and node with npm; installs
# playwright-core from package-lock.json (npm ci) when node_modules is missing or older
# than the lockfile, and checks the console's vendored files against their npm packages.
# Fails with a message saying what is missing; never skips.
set -euo pipefail
cd "$(dirname "$0")"
chromium="${FERRY_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  echo "console browser test: no browser at $chromium: install Debian's chromium (apt-get install chromium) or set FERRY_CHROMIUM" >&2
  exit 2
fi
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "console browser test: $tool is missing: install nodejs and npm (apt-get install nodejs npm)" >&2
    exit 2
  fi
done
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund --silent
fi
vendor=../../../ferry-server/src/runtime/web/console/vendor
"$vendor/refresh.sh" --check
exec node console.mjs
