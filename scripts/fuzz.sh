#!/usr/bin/env bash
# Runs every fuzz target for FUZZ_SECONDS each (default 20) with cargo-fuzz on nightly.
# Where nightly or cargo-fuzz cannot be had, says so: the same decoders are still driven
# by property tests (crates/*/src/fuzzing.rs, proptest) inside `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
secs="${FUZZ_SECONDS:-20}"
targets=(
  "crates/ferry-wire/fuzz frame_decoder"
  "crates/ferry-wire/fuzz inbound_sequence"
  "crates/ferry-wire/fuzz compressed_frame"
  "crates/ferry-wire/fuzz channel_frame"
  "crates/ferry-mqsc/fuzz mqsc_parser"
  "crates/ferry-amqp/fuzz amqp_frame"
  "crates/ferry-amqp/fuzz amqp_sequence"
  "crates/ferry-selector/fuzz selector_parser"
  "crates/ferry-engine/fuzz journal_record"
  "crates/ferry-engine/fuzz trigger_message"
  "crates/ferry-store/fuzz log_recovery"
  "crates/ferry-store/fuzz queue_file_open"
  "crates/ferry-server/fuzz catalogue_journal"
  "crates/ferry-server/fuzz rest_mqsc"
  "crates/ferry-security/fuzz security_text"
  "crates/ferry-pubsub/fuzz topic_text"
  "crates/ferry-mqi/fuzz pcf_message"
  "crates/ferry-mqi/fuzz property_text"
  "crates/ferry-mqi/fuzz trace_context"
)
if ! rustup run nightly rustc --version >/dev/null 2>&1; then
  echo "fuzz: skipped: no nightly toolchain here (the property tests in cargo test cover the decoders)"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked >/dev/null 2>&1 || {
    echo "fuzz: skipped: cargo-fuzz could not be installed (the property tests in cargo test cover the decoders)"
    exit 0
  }
fi
for t in "${targets[@]}"; do
  set -- $t
  dir=$1 target=$2
  [ -d "$dir" ] || { echo "fuzz: no $dir"; exit 1; }
  echo "fuzz: $target for ${secs}s"
  # One target directory for every fuzz crate: libFuzzer and the shared dependencies build once.
  (cd "$dir" && cargo +nightly fuzz run --target-dir "$root/target/fuzz" "$target" -- \
     -max_total_time="$secs" -rss_limit_mb=2048 2>&1 | tail -n 3)
done
echo "fuzz: all targets ran without a crash"
