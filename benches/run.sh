#!/usr/bin/env bash
# The benchmark suite of skillc: every figure of BENCHMARKS.md, each the median of several runs.
#
#   RUNS=5 SKILLC_CORPUS=../shared/corpus bash benches/run.sh
#
# Needs hyperfine (apt-get install hyperfine) and python3. Writes everything under $BENCH_DIR
# (default /tmp/skillc-bench) and prints one Markdown table at the end (also in
# $BENCH_DIR/results.md). Method: BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
CORPUS="$(cd "${SKILLC_CORPUS:-../shared/corpus}" && pwd)"
WORK="${BENCH_DIR:-/tmp/skillc-bench}"
RUNS="${RUNS:-5}"
command -v hyperfine >/dev/null || { echo "install hyperfine first (apt-get install hyperfine)" >&2; exit 2; }

cargo build --release --quiet
BIN="$ROOT/target/release/skillc"
rm -rf "$WORK" && mkdir -p "$WORK/json"
for n in 1000 10000; do python3 benches/gen_corpus.py "$n" "$WORK/gen$n"; done
echo "gen10000: $(find "$WORK/gen10000" -name SKILL.md | wc -l) skills, $(find "$WORK/gen10000" -type f | wc -l) files"

export NO_COLOR=1 SOURCE_DATE_EPOCH=1800000000

# One project folder per input set, each with its own out/ and .skillc/; one key for all,
# outside the projects, so that a "cold" build can remove .skillc/ entirely.
"$BIN" keygen -o "$WORK/bench.key" >/dev/null
project() { # name skills-dir
  local p="$WORK/proj-$1"
  mkdir -p "$p"
  cp "$ROOT/src/vocab/default.toml" "$p/vocabulary.toml"
  printf '[pipeline]\nskills = ["%s"]\nout = "out"\nvocabulary = "vocabulary.toml"\n\n[signing]\nkey = "%s"\n' \
    "$2" "$WORK/bench.key" >"$p/pipeline.toml"
}
project 1k "$WORK/gen1000"
project 10k "$WORK/gen10000"
project corpus "$CORPUS"

bench() { # id folder command [hyperfine options...]
  local id="$1" dir="$2" cmd="$3"; shift 3
  (cd "$dir" && hyperfine --runs "$RUNS" -i --style none --export-json "$WORK/json/$id.json" "$@" "$cmd" >/dev/null)
  echo "measured $id"
}

# A SKILL.md (and the vocabulary) edited before every run: a trailing comment line is toggled
# so that each run sees a real change of its input.
TOGGLE="$WORK/toggle.py"
cat >"$TOGGLE" <<'PY'
import sys
path, line = sys.argv[1], sys.argv[2] + "\n"
text = open(path, encoding="utf-8").read()
text = text[: -len(line)] if text.endswith(line) else text + line
open(path, "w", encoding="utf-8").write(text)
PY
ONE="$(find "$WORK/gen10000/group-050" -name SKILL.md | sort | head -n 1)"

# Read-only commands.
bench check-corpus "$WORK" "$BIN check $CORPUS --quiet" --warmup 1 -N
bench check-10k "$WORK" "$BIN check $WORK/gen10000 --quiet" --warmup 1 -N
if "$BIN" scan --help >/dev/null 2>&1; then
  bench scan-corpus "$WORK" "$BIN scan $CORPUS --format json" --warmup 1 -N --output null
fi

# Cold builds: no out/ and no .skillc/ before each run.
for p in corpus 1k 10k; do
  bench "cold-$p" "$WORK/proj-$p" "$BIN build --quiet" --prepare "rm -rf out .skillc"
done

# Fresh-process rebuilds of the 10,000-skill project (a build runs first so out/ is current).
(cd "$WORK/proj-10k" && "$BIN" build --quiet >/dev/null || true)
bench noop-10k "$WORK/proj-10k" "$BIN build --quiet" --warmup 1
bench noop-corpus "$WORK/proj-corpus" "$BIN build --quiet" --warmup 1
bench one-skill-10k "$WORK/proj-10k" "$BIN build --quiet" --prepare "python3 $TOGGLE $ONE '<!-- bench edit -->'"
bench vocabulary-10k "$WORK/proj-10k" "$BIN build --quiet" \
  --prepare "python3 $TOGGLE vocabulary.toml '# bench edit'"

# Peak resident memory of the cold 10,000-skill build (KiB, GNU time).
(cd "$WORK/proj-10k" && rm -rf out .skillc && /usr/bin/time -f '%M' -o "$WORK/rss-cold-10k" "$BIN" build --quiet >/dev/null || true)

# Watch mode: time from the write of one SKILL.md to the updated signed catalog.
if "$BIN" watch --help >/dev/null 2>&1; then
  # Only a complete measurement enters the table.
  python3 "$ROOT/benches/watch_latency.py" "$BIN" "$WORK/proj-10k" "$ONE" "$RUNS" >"$WORK/watch-10k.json" \
    && mv "$WORK/watch-10k.json" "$WORK/json/watch-10k.json" || echo "watch latency not measured" >&2
fi

python3 - "$WORK" <<'PY' | tee "$WORK/results.md"
import json, os, statistics, sys
work = sys.argv[1]
print("| measurement | median | min | max | runs |")
print("| --- | ---: | ---: | ---: | ---: |")
def fmt(s):
    return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"
for name in sorted(os.listdir(os.path.join(work, "json"))):
    data = json.load(open(os.path.join(work, "json", name)))
    times = data["results"][0]["times"] if "results" in data else data["times"]
    print(f"| {name[:-5]} | **{fmt(statistics.median(times))}** | {fmt(min(times))} | {fmt(max(times))} | {len(times)} |")
rss = os.path.join(work, "rss-cold-10k")
if os.path.exists(rss):
    print(f"| peak RSS, cold build of 10k | **{int(open(rss).read().split()[-1]) / 1024:.0f} MiB** | | | 1 |")
PY
