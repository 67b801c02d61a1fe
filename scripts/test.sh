#!/usr/bin/env bash
# The one test command (README, CI): installs what it needs, then runs every check.
# Checks: rustfmt, clippy (warnings are errors), all unit and integration tests (which
# start real `ferry` server processes on loopback), and a short fuzz run of every decoder.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is required: install Rust with rustup (https://rustup.rs)" >&2
  exit 2
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
cargo --version

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo test (unit, integration against real server processes)"
cargo test --workspace --locked

step "fuzz smoke"
FUZZ_SECONDS="${FUZZ_SECONDS:-20}" ./scripts/fuzz.sh
