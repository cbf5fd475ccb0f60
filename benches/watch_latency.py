#!/usr/bin/env python3
"""Watch-mode latency: time from the write of one SKILL.md to the updated signed catalog.

Usage: watch_latency.py SKILLC_BIN PROJECT_DIR SKILL_MD RUNS

Starts `skillc watch` in PROJECT_DIR, waits for its first build, then RUNS times: toggles a
trailing comment line in SKILL_MD (a real change of that skill) and measures until
`out/catalog.toml.sig` -- written last, after the catalog -- has been replaced. Prints
hyperfine-shaped JSON (`{"times": [seconds...]}`) on stdout.
"""
import json
import os
import signal
import subprocess
import sys
import time

LINE = "<!-- watch bench edit -->\n"


def sig_stamp(path):
    try:
        st = os.stat(path)
        return (st.st_ino, st.st_mtime_ns)
    except FileNotFoundError:
        return None


def wait_change(path, before, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        now = sig_stamp(path)
        if now is not None and now != before:
            return True
        time.sleep(0.0005)
    return False


def main():
    binary, project, skill_md, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    sig = os.path.join(project, "out", "catalog.toml.sig")
    proc = subprocess.Popen([binary, "watch", "--quiet"], cwd=project,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    times = []
    try:
        # The first build (or the "up to date" check) is done when the signature exists and
        # has stopped changing for a second.
        deadline = time.monotonic() + 600
        last = None
        while time.monotonic() < deadline:
            now = sig_stamp(sig)
            if now is not None and now == last:
                break
            last = now
            time.sleep(1.0)
        time.sleep(1.0)
        for _ in range(runs):
            before = sig_stamp(sig)
            text = open(skill_md, encoding="utf-8").read()
            text = text[: -len(LINE)] if text.endswith(LINE) else text + LINE
            start = time.monotonic()
            with open(skill_md, "w", encoding="utf-8") as f:
                f.write(text)
            if not wait_change(sig, before, 60):
                sys.exit("the catalog was not updated within 60 s")
            times.append(time.monotonic() - start)
            time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
    json.dump({"times": times}, sys.stdout)


if __name__ == "__main__":
    main()
