#!/usr/bin/env python3
"""Naming misses of the truth set's tuning part, with their evidence (issue 12).

Usage: python3 tests/data/truth_misses.py [--skillc BIN] [--corpus DIR] [--dump FILE]

Runs `skillc plan --format json --explain` over the truth skills that are NOT in the held-out
part (the same hash as tests/it/truth.rs: the first SHA-256 byte of the path below 0x36, the
skills the issue names excepted) and prints each wrong name and each naming miss (a real
sub-command found but not translated, with a right name in the truth set) with the steps that
derived it, so that errors can be grouped by cause. The held-out part is never run here: its
aggregate figures are the truth test's `held-out part` line (`cargo test --test it truth --
--nocapture`). Scoring mirrors tests/it/truth.rs (`matches`): program, words or an alias, mode.
"""

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NAMED = ["google-workspace", "/gog", "himalaya", "productivity/notion", "todoist"]


def held_out(path):
    return hashlib.sha256(path.encode()).digest()[0] < 0x36 and not any(n in path for n in NAMED)


def found(plan):
    prog = plan["program"]
    kind = prog.get("kind")
    if kind == "script":
        program, words = prog.get("path", ""), list(plan.get("words", []))
    elif kind == "binary":
        program, words = prog.get("name", ""), list(plan.get("words", []))
    else:
        program = "tools.py"
        words = [w for w in prog.get("function", "").split("_") if w]
    mode = words.pop() if words and words[-1].startswith("--") else None
    return program, words, mode


def matches(f, c):
    program, words, mode = f
    alts = [c["words"]] + c.get("aliases", [])
    cm = c.get("mode")
    ok_mode = (cm is None and mode is None) or (cm is not None and mode is not None and cm.split()[0] == mode)
    return program == c["program"] and words in alts and ok_mode


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skillc", default=os.path.join(REPO, "target/debug/skillc"))
    ap.add_argument("--corpus", default=os.environ.get("SKILLC_CORPUS", os.path.join(REPO, "..", "shared", "corpus")))
    ap.add_argument("--dump", help="write the tuning part's matched plans with their verdicts (JSON lines)")
    opts = ap.parse_args()
    with open(os.path.join(HERE, "extraction_truth.toml"), "rb") as f:
        truth = tomllib.load(f)["skill"]
    part = [s for s in truth if not held_out(s["path"])]
    work = tempfile.mkdtemp()
    try:
        at = {}
        for s in part:
            src = os.path.join(opts.corpus, s["path"])
            if s.get("build_as"):
                dst = os.path.join(work, s["path"])
                dst = os.path.join(os.path.dirname(dst), s["build_as"])
                shutil.copytree(src, dst)
                at[s["path"]] = dst
            else:
                at[s["path"]] = src
        args = [opts.skillc, "plan", "--format", "json", "--explain"] + list(at.values())
        out = subprocess.run(args, capture_output=True, text=True, cwd=REPO)
        report = json.loads(out.stdout)
    finally:
        shutil.rmtree(work)
    by_path = {os.path.realpath(s["path"]): s for s in report["skills"]}
    real = translated = right = 0
    dump = open(opts.dump, "w") if opts.dump else None
    for s in part:
        plans = by_path.get(os.path.realpath(at[s["path"]]), {}).get("plans", [])
        for c in s.get("command", []):
            if c.get("optional"):
                continue
            real += 1
            hit = next((p for p in plans if matches(found(p), c)), None)
            if hit is None:
                continue
            name = hit.get("name") if hit.get("status") == "translated" else None
            if name:
                translated += 1
                right += name in c["names"]
            if dump:
                dump.write(json.dumps({"skill": s["path"], "want": c["names"], "right": name in c["names"], "plan": hit}) + "\n")
            if name in c["names"]:
                continue
            kind = "WRONG" if name else "UNNAMED"
            what = name or f"{hit.get('code')}: {hit.get('reason')}"
            print(f'{kind} {s["path"].split("/")[-1]} {c["program"]} {c["words"]} {c.get("mode") or ""}')
            print(f'    got  {what}')
            if not name and hit.get("proposal"):
                print(f'    proposal {hit["proposal"]["name"]}')
            print(f'    want {c["names"]}')
            sec = hit.get("source_section")
            if sec:
                print(f'    heading "{sec}"')
            for st in hit.get("explain") or []:
                print(f'      {st["word"]!r}: {st["meaning"]}')
    pct = lambda a, b: 100.0 * a / b if b else 100.0
    print(f"tuning part: named right {pct(right, real):.1f}% ({right}/{real}), wrong {pct(translated - right, translated):.1f}% ({translated - right}/{translated})")


if __name__ == "__main__":
    sys.exit(main())
