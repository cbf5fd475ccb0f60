#!/usr/bin/env python3
"""Watch-mode latency: time from the write of one SKILL.md to the updated signed catalog.

Usage: watch_latency.py SKILLC_BIN PROJECT_DIR SKILL_MD RUNS

Starts `skillc watch --message-format json` in PROJECT_DIR, waits for its `watching` event
(the first build is done), makes one untimed edit, then
RUNS times: toggles a
trailing comment line in SKILL_MD (a real change of that skill) and measures until
`out/catalog.toml.sig` -- written last, after the catalog -- has been replaced. Prints
hyperfine-shaped JSON (`{"times": [seconds...]}`) on stdout.
"""
import json
import os
import signal
import subprocess
import sys
import threading
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
    proc = subprocess.Popen([binary, "watch", "--message-format", "json"], cwd=project,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    times = []
    try:
        # The first build is done when watch says it is watching.
        for line in proc.stdout:
            if '"reason":"watching"' in line.replace(" ", ""):
                break
        else:
            sys.exit("skillc watch stopped before its first build was done")
        # Keep reading its events, or a full pipe would stop watch mid-rebuild.
        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
        time.sleep(1.0)
        # One untimed edit first: when the first build was answered "up to date", watch has
        # computed nothing yet, and the first change would pay for the whole analysis.
        for timed in [False] + [True] * runs:
            before = sig_stamp(sig)
            text = open(skill_md, encoding="utf-8").read()
            text = text[: -len(LINE)] if text.endswith(LINE) else text + LINE
            start = time.monotonic()
            with open(skill_md, "w", encoding="utf-8") as f:
                f.write(text)
            if not wait_change(sig, before, 600 if not timed else 60):
                sys.exit("the catalog was not updated in time")
            if timed:
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
