# Ferry's developer commands. `make test` is what CI runs (see .ci/run).
.PHONY: test verify build fuzz bench suite deploy-test image

## Everything CI checks: toolchain setup, fmt, clippy, unit + integration tests, fuzz smoke.
test verify:
	./scripts/test.sh

## The deployment files alone (part of `make test`): Helm chart and manifests validated,
## Containerfile linted. FERRY_BLESS=1 rewrites deploy/kubernetes from the chart.
deploy-test:
	./deploy/test.sh

## The container image (needs a container engine: docker, or IMAGE_TOOL=podman).
image:
	$${IMAGE_TOOL:-docker} build -f deploy/Containerfile -t ferry:$${IMAGE_TAG:-latest} .

## Release build of the ferry binary and ferry-perf beside it (the harness `ferry perf` runs).
build:
	cargo build --release --bin ferry --bin ferry-perf

## Longer fuzz runs (needs nightly + cargo-fuzz): FUZZ_SECONDS=600 make fuzz
fuzz:
	FUZZ_SECONDS=$${FUZZ_SECONDS:-300} ./scripts/fuzz.sh

## The request/reply benchmark against the relay ceiling (see docs/performance.md).
bench:
	./bench/rr-cc.sh

## The standard suite (~10 minutes; results in bench/results/<date>, see bench/README.md)
suite:
	./bench/suite.sh
