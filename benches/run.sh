#!/usr/bin/env bash
# Measures skillc on the real corpus and on a generated corpus of 10,000 skills.
# Method and results: BENCHMARKS.md. Needs hyperfine (apt-get install hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS="${SKILLC_CORPUS:-../shared/corpus}"
WORK="${BENCH_DIR:-/tmp/skillc-bench}"
RUNS="${RUNS:-10}"
command -v hyperfine >/dev/null || { echo "install hyperfine first (apt-get install hyperfine)" >&2; exit 2; }

cargo build --release --quiet
BIN="$PWD/target/release/skillc"
rm -rf "$WORK" && mkdir -p "$WORK"
python3 benches/gen_corpus.py 10000 "$WORK/gen10k"
echo "generated corpus: $(find "$WORK/gen10k" -name SKILL.md | wc -l) skills, $(du -sh "$WORK/gen10k" | cut -f1)"

export NO_COLOR=1 SOURCE_DATE_EPOCH=1800000000
hyperfine --warmup 2 --runs "$RUNS" -N -i --export-markdown "$WORK/check.md" \
  "$BIN check $CORPUS --quiet" \
  "$BIN -j 1 check $CORPUS --quiet" \
  "$BIN check $WORK/gen10k --quiet" \
  "$BIN -j 1 check $WORK/gen10k --quiet" \
  "$BIN plan $CORPUS --format json" \
  "$BIN plan $WORK/gen10k --format json"

# Builds: cold (empty out/ each run) and no-op (nothing changed since the last build).
mkdir -p "$WORK/proj"
hyperfine --warmup 1 --runs "$RUNS" -i --export-markdown "$WORK/build.md" \
  --prepare "rm -rf $WORK/proj/out" "cd $WORK/proj && $BIN build --skills $CORPUS --out out --quiet" \
  --prepare "rm -rf $WORK/proj/out10k" "cd $WORK/proj && $BIN build --skills $WORK/gen10k --out out10k --quiet"
(cd "$WORK/proj" && "$BIN" build --skills "$CORPUS" --out out --quiet >/dev/null || true)
(cd "$WORK/proj" && "$BIN" build --skills "$WORK/gen10k" --out out10k --quiet >/dev/null || true)
hyperfine --warmup 1 --runs "$RUNS" -i --export-markdown "$WORK/noop.md" \
  "cd $WORK/proj && $BIN build --skills $CORPUS --out out --quiet" \
  "cd $WORK/proj && $BIN build --skills $WORK/gen10k --out out10k --quiet"
cat "$WORK/check.md" "$WORK/build.md" "$WORK/noop.md"
