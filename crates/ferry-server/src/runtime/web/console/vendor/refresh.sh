#!/usr/bin/env bash
# Refreshes the web console's vendored front-end files from the npm registry: installs
# exactly what package-lock.json pins (`npm ci` checks each package against its
# integrity), copies the files the console serves into this folder and writes SHA512SUMS
# (each file's SHA-512, the package it came from and that package's lockfile integrity).
# A unit test (runtime::web::console::assets) checks the served files against SHA512SUMS
# and SHA512SUMS against package-lock.json, so nobody edits them by hand.
# `refresh.sh --check` copies nothing: it fails when a vendored file differs from the
# package's (the browser test runs it).
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund --silent
# file served <- package, path in the package
files=(
  "htmx.min.js htmx.org dist/htmx.min.js"
  "uPlot.iife.min.js uplot dist/uPlot.iife.min.js"
  "uPlot.min.css uplot dist/uPlot.min.css"
)
sums=""
for entry in "${files[@]}"; do
  read -r file package path <<<"$entry"
  if [ "${1:-}" = "--check" ]; then
    cmp "node_modules/$package/$path" "$file" || {
      echo "vendor: $file differs from $package's $path: run refresh.sh" >&2
      exit 1
    }
    continue
  fi
  cp "node_modules/$package/$path" "$file"
  version=$(node -p "require('./package-lock.json').packages['node_modules/$package'].version")
  integrity=$(node -p "require('./package-lock.json').packages['node_modules/$package'].integrity")
  sum=$(sha512sum "$file" | cut -d' ' -f1)
  sums+="$file $sum $package@$version $integrity"$'\n'
done
[ "${1:-}" = "--check" ] || printf '%s' "$sums" >SHA512SUMS
rm -rf node_modules
