#!/usr/bin/env python3
"""Build scaling of skillc against the machine's floors (issue 16, acceptance 1 and 5).

    python3 benches/scale.py --bin target/release/skillc [--sizes 1000,3000,10000,30000]
        [--runs 3] [--work /tmp/skillc-scale] [--watch-runs 10]

For each size N: a generated set (`benches/gen_corpus.py N`, seed 1) as one project (the
built-in vocabulary copied beside it, one key outside it, `SOURCE_DATE_EPOCH` fixed), then
RUNS rounds, each running, one after another (A B A B: every kind of run sees the same
machine state over the rounds):

- floor: read + SHA-256 of every input file (`find -type f | xargs sha256sum`, 2 workers);
- cold build: `out/`, its spare generation `.out.skillc-next` and `.skillc/` moved aside
  first (into `WORK/trash/`, deleted once every size is measured: deleting ~120k files right
  before a cold build makes ext4 scan its recently deleted inodes for each new one, which
  measured up to 4x slower writes; BENCHMARKS.md);
- floor: create the same files (`cp -r out` into a fresh folder, then moved aside too);
- floor: `lstat` of every entry of `out/` (`find out -printf ''`);
- fresh-process no-op build;
- fresh-process build after one SKILL.md edit (a trailing comment line toggled): the first
  writing build after the cold one, which also makes the spare generation of `out/`;
- the same edit toggled back: a later edit, the spare kept (what every edit after the first
  costs);
- fresh-process build after a vocabulary edit (a synonym toggled on one action) — 10k only
  unless `--vocab-all`.

Each run's wall time and peak RSS come from `os.wait4` (the child's own rusage); each build
runs with `SKILLC_TIMINGS=1` and its stage laps are kept, so the profile of what remains is
the median lap of each stage. Then, at 10k, `benches/watch_latency.py` (one edit → signed
catalog). `results.json` in the work folder is rewritten after every round (an interrupted
run keeps what it measured); at the end `results.md` gets the table, which is also printed.
Stdlib only.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, cwd, env=None, capture=False):
    """Runs cmd; returns (wall seconds, peak RSS MiB, exit code, stderr text)."""
    start = time.perf_counter()
    p = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE if capture else subprocess.DEVNULL,
        shell=isinstance(cmd, str),
    )
    err = p.stderr.read().decode("utf-8", "replace") if capture else ""
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status), err


LAP = re.compile(r"^timing: (.+): ([0-9.]+) ms")


def laps(stderr):
    """The stage laps of SKILLC_TIMINGS output (`timing: <stage>: <ms> ms, RSS <n> MiB`): {stage: ms}."""
    out = {}
    for line in stderr.splitlines():
        m = LAP.match(line)
        if m:
            out[m.group(1)] = out.get(m.group(1), 0.0) + float(m.group(2))
    return out


def toggle_line(path, line):
    """Adds `line` at the end of the file, or takes it off when it is there."""
    text = open(path, encoding="utf-8").read()
    text = text[: -len(line)] if text.endswith(line) else text + line
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def toggle_text(path, a, b):
    """Replaces `a` by `b`, or `b` by `a`; fails when neither is in the file (the edit would
    measure a no-op)."""
    text = open(path, encoding="utf-8").read()
    if a in text:
        text = text.replace(a, b, 1)
    elif b in text:
        text = text.replace(b, a, 1)
    else:
        sys.exit(f"{path}: neither {a!r} nor {b!r} is there to toggle")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def save(work, results):
    with open(os.path.join(work, "results.json"), "w") as f:
        json.dump(results, f, indent=1)


def aside(path, trash):
    """Moves `path` (when it exists) into the folder `trash`, under a new name."""
    if os.path.lexists(path):
        os.makedirs(trash, exist_ok=True)
        os.rename(path, os.path.join(trash, f"{len(os.listdir(trash))}-{os.path.basename(path)}"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--sizes", default="1000,3000,10000,30000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--work", default="/tmp/skillc-scale")
    ap.add_argument("--watch-runs", type=int, default=10)
    ap.add_argument("--vocab-all", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    work = a.work
    os.makedirs(work, exist_ok=True)
    env = dict(os.environ, NO_COLOR="1", SOURCE_DATE_EPOCH="1800000000", SKILLC_TIMINGS="1")
    key = os.path.join(work, "bench.key")
    if not os.path.exists(key):
        subprocess.run([binary, "keygen", "-o", key], check=True, stdout=subprocess.DEVNULL)
    results = {}
    # What the rounds move aside (same file system as the projects, so a rename), and what an
    # interrupted earlier run left there.
    trash = os.path.join(work, "trash")
    shutil.rmtree(trash, ignore_errors=True)
    for n in [int(s) for s in a.sizes.split(",")]:
        gen = os.path.join(work, f"gen{n}")
        if not os.path.isdir(gen):
            subprocess.run([sys.executable, os.path.join(ROOT, "benches/gen_corpus.py"), str(n), gen, "--seed", "1"], check=True)
        proj = os.path.join(work, f"proj{n}")
        os.makedirs(proj, exist_ok=True)
        shutil.copy(os.path.join(ROOT, "src/vocab/default.toml"), os.path.join(proj, "vocabulary.toml"))
        with open(os.path.join(proj, "pipeline.toml"), "w") as f:
            f.write(f'[pipeline]\nskills = ["{gen}"]\nout = "out"\nvocabulary = "vocabulary.toml"\n\n[signing]\nkey = "{key}"\n')
        one = sorted(
            os.path.join(d, "SKILL.md") for d, _, files in os.walk(gen) if "SKILL.md" in files
        )[n // 2]
        files = sum(len(fs) for _, _, fs in os.walk(gen))
        rows = {}
        results[n] = {"files": files, "rows": rows}

        def record(kind, wall, rss, rc, err):
            r = rows.setdefault(kind, {"wall": [], "rss": [], "rc": [], "laps": []})
            r["wall"].append(wall)
            r["rss"].append(rss)
            r["rc"].append(rc)
            if err:
                r["laps"].append(laps(err))

        build = [binary, "build"]
        # One untimed build so that the rounds start from a current out/.
        run(build, proj, env)
        for r in range(a.runs):
            print(f"gen{n}: round {r + 1}/{a.runs}", file=sys.stderr)
            record("floor: read + hash inputs", *run(f"find {gen} -type f -print0 | xargs -0 -P2 -n 256 sha256sum >/dev/null", proj))
            # Truly cold: the spare generation goes too (a spare left without its record in
            # .skillc/ is removed by the build, 65k files at 10k: seconds of the cold lap).
            for d in ("out", ".out.skillc-next", ".skillc"):
                aside(os.path.join(proj, d), trash)
            subprocess.run(["sync"])
            record("cold build", *run(build, proj, env, capture=True))
            copy = os.path.join(work, "copy")
            aside(copy, trash)
            subprocess.run(["sync"])
            record("floor: create the same files", *run(f"cp -r out {copy}", proj))
            aside(copy, trash)
            record("floor: lstat of out/", *run("find out -printf ''", proj))
            record("no-op", *run(build, proj, env, capture=True))
            toggle_line(one, "<!-- bench edit -->\n")
            record("one SKILL.md edited", *run(build, proj, env, capture=True))
            # The first writing build after a cold one also makes the spare generation (every
            # file of out/ hard-linked, `emit::publish`); every later edit finds it kept.
            toggle_line(one, "<!-- bench edit -->\n")
            record("one SKILL.md edited again (spare kept)", *run(build, proj, env, capture=True))
            if n == 10000 or a.vocab_all:
                toggle_text(os.path.join(proj, "vocabulary.toml"), '"versus", "vs"]', '"versus", "vs", "benchtoggle"]')
                record("vocabulary edited", *run(build, proj, env, capture=True))
            save(work, results)
        if n == 10000 and a.watch_runs > 0:
            out = subprocess.run(
                [sys.executable, os.path.join(ROOT, "benches/watch_latency.py"), binary, proj, one, str(a.watch_runs)],
                capture_output=True,
                text=True,
                env={k: v for k, v in env.items() if k != "SKILLC_TIMINGS"},
            )
            if out.returncode == 0:
                rows["watch: one edit → signed catalog"] = {"wall": json.loads(out.stdout)["times"], "rss": [], "rc": [0], "laps": []}
            else:
                print(f"watch latency not measured: {out.stderr[-500:]}", file=sys.stderr)
        save(work, results)

    shutil.rmtree(trash, ignore_errors=True)

    def fmt(s):
        return f"{s * 1000:.0f} ms" if s < 1 else f"{s:.2f} s"

    lines = ["| set | run | median wall | min–max | peak RSS (median) | exit |", "| --- | --- | ---: | ---: | ---: | --- |"]
    for n, res in results.items():
        for kind, r in res["rows"].items():
            w = r["wall"]
            rss = f"{statistics.median(r['rss']):.0f} MiB" if r["rss"] else ""
            lines.append(
                f"| gen{n} ({res['files']} files) | {kind} | **{fmt(statistics.median(w))}** | {fmt(min(w))}–{fmt(max(w))} | {rss} | {sorted(set(r['rc']))} |"
            )
    lines.append("")
    lines.append("Median stage laps (ms, SKILLC_TIMINGS):")
    lines.append("")
    for n, res in results.items():
        for kind, r in res["rows"].items():
            if not r["laps"]:
                continue
            names = sorted({k for l in r["laps"] for k in l}, key=lambda k: -statistics.median([l.get(k, 0) for l in r["laps"]]))
            parts = [f"{k} {statistics.median([l.get(k, 0) for l in r['laps']]):.0f}" for k in names[:8]]
            lines.append(f"- gen{n} {kind}: " + "; ".join(parts))
    text = "\n".join(lines)
    with open(os.path.join(work, "results.md"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
