#!/usr/bin/env bash
# Load test of `skillc serve` (issue 13, acceptance 3): the 10k generated catalog served on
# 127.0.0.1, `wrk` (Debian package) against `GET /api/skills/{name}` and `POST /api/menu`.
# Bounded: each run lasts $DURATION with $CONNS connections, then the server is stopped.
#
#   bash benches/serve_load.sh            # DURATION=20s CONNS=32 BENCH_DIR=/tmp/skillc-serve-bench
#   BENCH_PROJ=DIR SKIP_BUILD=1 bash benches/serve_load.sh   # a project already built
#
# Prints requests/s, p50/p99 latency, errors (socket errors and non-2xx answers) per route,
# and the server's RSS after the load (VmRSS) and at its peak (VmHWM). Method: BENCHMARKS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "install wrk first (apt-get install wrk)" >&2; exit 2; }
WORK="${BENCH_DIR:-/tmp/skillc-serve-bench}"
DURATION="${DURATION:-20s}"
CONNS="${CONNS:-32}"
[ -n "${SKIP_BUILD:-}" ] || cargo build --release --quiet
BIN="$PWD/target/release/skillc"
export NO_COLOR=1 SOURCE_DATE_EPOCH=1800000000

# BENCH_PROJ=DIR serves a project already built (its pipeline.toml names its out/) instead
# of generating and building one in $WORK.
PROJ="${BENCH_PROJ:-$WORK/proj}"
if [ -z "${BENCH_PROJ:-}" ]; then
  rm -rf "$WORK" && mkdir -p "$WORK/proj"
  python3 benches/gen_corpus.py 10000 "$WORK/proj/skills" >/dev/null
  (cd "$WORK/proj" && "$BIN" build >/dev/null 2>"$WORK/build.err") || true
  (cd "$WORK/proj" && "$BIN" verify out --state "$WORK/verify-state.json" >/dev/null)
else
  mkdir -p "$WORK"
fi

(cd "$PROJ" && exec "$BIN" serve --addr 127.0.0.1:0 >"$WORK/serve.out" 2>"$WORK/serve.err") &
PID=$!
trap 'kill "$PID" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  grep -q '^serving http://' "$WORK/serve.out" 2>/dev/null && break
  sleep 0.1
done
ADDR="$(sed -n 's|^serving http://\([^ ]*\).*|\1|p' "$WORK/serve.out")"
[ -n "$ADDR" ] || { echo "the server did not start" >&2; cat "$WORK/serve.err" >&2; exit 1; }
STARTUP_RSS="$(awk '/VmRSS/ {print $2}' "/proc/$PID/status")"
NAME="$(curl -s "http://$ADDR/api/skills?status=ok" | python3 -c 'import json,sys; print(json.load(sys.stdin)["skills"][0]["name"])')"
SKILLS="$(curl -s "http://$ADDR/api/catalog" | python3 -c 'import json,sys; print(json.load(sys.stdin)["skills"])')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "serving $SKILLS skills on $ADDR (pid $PID, RSS after start $((STARTUP_RSS / 1024)) MiB); detail of $NAME"

cat >"$WORK/menu.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"turn": "send the weekly report to the team by mail"}'
LUA

report() { # label file
  local rps p50 p99 errs non2xx
  rps="$(awk '/^Requests\/sec:/ {print $2}' "$2")"
  p50="$(awk '$1 == "50%" {print $2}' "$2")"
  p99="$(awk '$1 == "99%" {print $2}' "$2")"
  errs="$(awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$2")"
  non2xx="$(awk '/Non-2xx/ {print $5}' "$2")"
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$rps" "$p50" "$p99" "${errs:-0}" "${non2xx:-0}"
}

# A short warm-up renders the detail once (it is cached per snapshot).
wrk -t1 -c4 -d2s "http://$ADDR/api/skills/$NAME" >/dev/null
wrk -t1 -c"$CONNS" -d"$DURATION" --latency "http://$ADDR/api/skills/$NAME" >"$WORK/detail.txt"
wrk -t1 -c"$CONNS" -d"$DURATION" --latency -s "$WORK/menu.lua" "http://$ADDR/api/menu" >"$WORK/menu.txt"
wrk -t1 -c"$CONNS" -d"$DURATION" --latency "http://$ADDR/api/skills" >"$WORK/list.txt"

echo
echo "| route | requests/s | p50 | p99 | socket errors | non-2xx |"
echo "| --- | --- | --- | --- | --- | --- |"
report "GET /api/skills/{name}" "$WORK/detail.txt"
report "POST /api/menu" "$WORK/menu.txt"
report "GET /api/skills (10k list)" "$WORK/list.txt"
echo
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "RSS after the load: $(($(awk '/VmRSS/ {print $2}' "/proc/$PID/status") / 1024)) MiB; peak $(($(awk '/VmHWM/ {print $2}' "/proc/$PID/status") / 1024)) MiB"
