#!/bin/sh
# Corpus coverage of naming by collection (issue 12): `skillc plan --format json` over each
# top-level collection of the corpus, and the totals. Usage: benches/plan_coverage.sh [CORPUS]
# (default: ../shared/corpus from the project root). Needs jq and a built skillc: SKILLC, else
# target/debug/skillc (build it first: `cargo build`).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$root/../shared/corpus}
skillc=${SKILLC:-$root/target/debug/skillc}
printf '| collection | skills | with sub-commands | plans | translated | coverage |\n| --- | ---: | ---: | ---: | ---: | ---: |\n'
for c in "$corpus"/*/; do
    name=$(basename "$c")
    [ "$name" = LICENSES ] && continue
    "$skillc" plan --format json "$c" 2>/dev/null | jq -r --arg n "$name" \
        '.summary | "| \($n) | \(.skills) | \(.with_subcommands) | \(.plans) | \(.translated) | \(if .plans > 0 then (1000 * .translated / .plans | floor) / 10 else 0 end) % |"'
done
"$skillc" plan --format json "$corpus" 2>/dev/null | jq -r \
    '.summary | "| **all** | \(.skills) | \(.with_subcommands) | \(.plans) | \(.translated) | \(if .plans > 0 then (1000 * .translated / .plans | floor) / 10 else 0 end) % |"'
