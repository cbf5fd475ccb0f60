#!/usr/bin/env bash
# Re-runs the local-model menu measurement of BENCHMARKS.md ("Menu with the local model"):
# builds the shared corpus as one catalog with the local model (feature `local-model`) in a
# project folder that is kept between runs, so its vector cache (.skillc/cache/) makes a second
# run embed only texts it has not seen; then `skillc menu calibrate` on the battery and
# `benches/menu_fusion.rs` (every lever from the same cosines). The binary is built with the
# measurement-only feature `dense-parts`, so the catalog stores every dense part of every skill
# (`menu::doc::EMBEDDED` = `DensePart::ALL`) and calibrate reports recipe `fuse/4+parts`
# (whose scores are the shipped `fuse/4`'s: `dense::combine` reads only its three parts). The
# bench's rows are computed from the cosines; the shipped recipe (β 0.8 with the agreement
# bonus in both top 20) is a row of `benches/menu_fusion_rules.py DUMP --agreement` on the
# scores written with MENU_FUSION_DUMP=FILE.
#
#   bash benches/menu_fusion.sh [PROJECT_DIR]     # default /tmp/skillc-menu-fusion
#
# Env: SKILLC_CORPUS (default ../shared/corpus), SKILLC_LOCAL_MODEL (default: the folder
# benches/model_weights.sh prints), MENU_FUSION_ONLY / MENU_FUSION_BETAS (narrow the bench).
# Heavy: run it niced on a shared machine. Writes calibrate.txt and fusion.md into PROJECT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=${1:-/tmp/skillc-menu-fusion}
corpus=$(cd "${SKILLC_CORPUS:-../shared/corpus}" && pwd)
model=${SKILLC_LOCAL_MODEL:-$(bash benches/model_weights.sh)}
cargo build --features dense-parts
bin=$root/target/debug/skillc
mkdir -p "$dir"
cd "$dir"
[ -f test.key ] || "$bin" keygen -o test.key >/dev/null
cat > pipeline.toml <<EOF
[pipeline]
skills = ["$corpus"]
out = "out"

[menu]
gate_triggerless = true
embedder = { local = "$model" }
EOF
# Some corpus skills are rejected (exit 1); the catalog is written all the same.
SOURCE_DATE_EPOCH=1800000000 "$bin" build --key test.key --skip L5 >build.log 2>&1 || [ $? -eq 1 ]
rm -f s.json menu-calibration.toml
"$bin" menu calibrate "$root/tests/data/menu_battery.toml" --dry-run --state s.json | tee calibrate.txt
cd "$root"
cargo test --features dense-parts --bench menu_fusion -- --out "$dir/out" --model "$model" | tee "$dir/fusion.md"
