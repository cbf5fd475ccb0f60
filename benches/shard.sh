#!/usr/bin/env bash
# Sharded builds (issue 16, acceptance 4): on the generated set (benches/gen_corpus.py, default
# 1,000 skills), the final assembly after N shards against a folder remote vs a single cold
# build, alternating (A B A B …), each run with `rm -rf out .skillc` first. Prints, per run,
# wall, user and sys seconds and the load average, then the final build's SKILLC_TIMINGS laps.
#
#   SKILLC_BIN=target/release/skillc RUNS=3 N=1000 SHARDS=4 bash benches/shard.sh [WORKDIR]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(realpath "${SKILLC_BIN:-$here/target/release/skillc}")"
runs="${RUNS:-3}"
n="${N:-1000}"
shards="${SHARDS:-4}"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
cd "$work"
export SOURCE_DATE_EPOCH=1800000000
[ -d gen ] || python3 "$here/benches/gen_corpus.py" "$n" gen/skills --seed 1 >/dev/null
[ -f bench.key ] || "$bin" keygen -o bench.key >/dev/null
rm -rf remote cold final shard-*
mkdir -p cold final
cp -r gen/skills cold/ && : > cold/pipeline.toml
cp -r gen/skills final/ && printf '[cache]\nremote = "%s/remote"\n' "$work" > final/pipeline.toml
for i in $(seq 1 "$shards"); do
  d="shard-$i"; mkdir -p "$d"; cp -r gen/skills "$d/"; cp final/pipeline.toml "$d/"
  (cd "$d" && /usr/bin/time -f "shard $i/$shards: %e s wall, %U user, %S sys" "$bin" build --key ../bench.key --shard "$i/$shards" | tail -1)
done

one() { # label dir
  (cd "$2" && rm -rf out .skillc && sync && /usr/bin/time -f "$1: %e s wall, %U user, %S sys, load $(cut -d' ' -f1 /proc/loadavg)" \
    "$bin" build --key ../bench.key -q >/dev/null 2>/tmp/skillc-shard-bench.err || true; grep -E "^(cold|final)" /tmp/skillc-shard-bench.err || tail -3 /tmp/skillc-shard-bench.err)
}
for _ in $(seq 1 "$runs"); do
  one "cold (A)" cold
  one "final after $shards shards (B)" final
done
echo "--- SKILLC_TIMINGS of the final assembly"
(cd final && rm -rf out .skillc && SKILLC_TIMINGS=1 "$bin" build --key ../bench.key -q 2>&1 >/dev/null | grep -v "^build cache" || true)
echo "--- SKILLC_TIMINGS of the cold build"
(cd cold && rm -rf out .skillc && SKILLC_TIMINGS=1 "$bin" build --key ../bench.key -q 2>&1 >/dev/null || true)
diff -r cold/out final/out >/dev/null && echo "out/ identical" || echo "out/ DIFFERS"
