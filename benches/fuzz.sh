#!/usr/bin/env bash
# The long run of the mutation fuzzer of tests/it/fuzz.rs (issue 18, item 18): the parser,
# `check` and the scan over mutated example, fixture and corpus skills, in release mode.
#
#   ITERATIONS=200000 SEED=1 SKILLC_CORPUS=../shared/corpus bash benches/fuzz.sh
#
# `cargo test` runs the same test with a small fixed budget (1500 inputs). A failing input is
# written to target/fuzz-failure-<seed>-<n>.md; rerun with the same SEED to reproduce it.
set -euo pipefail
cd "$(dirname "$0")/.."
export SKILLC_FUZZ_ITERATIONS="${ITERATIONS:-200000}"
export SKILLC_FUZZ_SEED="${SEED:-$(date +%s)}"
echo "fuzz: $SKILLC_FUZZ_ITERATIONS inputs, seed $SKILLC_FUZZ_SEED" >&2
exec cargo test --release --test it fuzz:: -- --nocapture
