#!/usr/bin/env python3
"""The menu battery's figures (BENCHMARKS.md, "Menu"): the BM25 baseline over name +
description, beside `skillc menu calibrate` on the same battery and catalog.

    python3 benches/menu_battery.py --out OUT [--battery tests/data/menu_battery.toml] [--bin skillc]

BM25 (k1 = 1.2, b = 0.75) ranks every skill of the verified catalog for each turn, over its
name (hyphens as spaces) and description as `skillc read-properties` gives them; tokens are
lowercase runs of letters and digits, English stop words removed, no stemming. recall@3 per
kind is the share of labelled turns with an expected slug among the first three. Prints a
Markdown table; `--json` prints the figures as JSON.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict

STOP = set(
    "a an and are as at be by can do does for from has have how i in into is it its me my of on or our please "
    "should so some that the their them then there these this those to us was we what when which will with would "
    "you your".split()
)


def tokens(text):
    return [w for w in re.findall(r"[^\W_]+", text.lower()) if w not in STOP and len(w) > 1]


class BM25:
    def __init__(self, docs, k1=1.2, b=0.75):
        self.docs = [Counter(d) for d in docs]
        self.len = [len(d) for d in docs]
        self.avg = sum(self.len) / max(1, len(docs))
        df = Counter(w for d in self.docs for w in d)
        n = len(docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def scores(self, query):
        q = tokens(query)
        out = []
        for i, d in enumerate(self.docs):
            s = 0.0
            for w in q:
                f = d.get(w, 0)
                if f:
                    s += self.idf[w] * f * (self.k1 + 1) / (f + self.k1 * (1 - self.b + self.b * self.len[i] / self.avg))
            out.append(s)
        return out


def catalog_skills(out, binary):
    skills = sorted(os.listdir(os.path.join(out, "skills")))
    docs = []
    for s in skills:
        p = subprocess.run([binary, "read-properties", os.path.join(out, "skills", s)], capture_output=True, text=True)
        props = json.loads(p.stdout) if p.returncode == 0 else {"name": s, "description": ""}
        docs.append(tokens(props.get("name", s).replace("-", " ") + " " + props.get("description", "")))
    return skills, docs


def bm25_figures(turns, skills, docs):
    index = BM25(docs)
    hit = defaultdict(lambda: [0, 0])
    for t in turns:
        if not t["expected"]:
            continue
        sc = index.scores(t["text"])
        ranked = sorted(range(len(skills)), key=lambda i: (-sc[i], skills[i]))
        top = [skills[i] for i in ranked[:3] if sc[i] > 0]
        ok = any(e in top for e in t["expected"])
        for k in (t["kind"], "all"):
            hit[k][0] += ok
            hit[k][1] += 1
    return {k: a / b for k, (a, b) in hit.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--battery", default="tests/data/menu_battery.toml")
    ap.add_argument("--bin", default="target/release/skillc")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    turns = tomllib.load(open(a.battery, "rb"))["turn"]
    skills, docs = catalog_skills(a.out, a.bin)
    bm25 = bm25_figures(turns, skills, docs)
    cal = subprocess.run(
        [a.bin, "menu", "calibrate", a.battery, "--out", a.out, "--dry-run", "--format", "json"],
        capture_output=True, text=True,
    )
    if cal.returncode not in (0, 1):
        sys.exit(cal.stderr)
    c = json.loads(cal.stdout)
    ranking = c["ranking"]["all"]
    at_tau = (c.get("at_tau") or {}).get("all") or {}
    if a.json:
        print(json.dumps({"bm25": bm25, "skillc": c}, indent=2))
        return
    kinds = ["direct", "paraphrase", "italian", "indirect"]
    print(f"| recall@3 | BM25 name + description | {c['embedder']} ranking | {c['embedder']} at τ = {c['tau']} |")
    print("| --- | ---: | ---: | ---: |")
    for k in kinds + ["all"]:
        r = ranking["recall_at_3"] if k == "all" else ranking["recall_at_3_by_kind"].get(k, 0)
        t = at_tau.get("recall_at_3") if k == "all" else at_tau.get("recall_at_3_by_kind", {}).get(k)
        ts = f"{t:.3f}" if t is not None else "–"
        print(f"| {k} | {bm25.get(k, 0):.3f} | {r:.3f} | {ts} |")
    fo = at_tau.get("false_offers")
    print(f"| false offers (none turns offered a menu) | – | {ranking['false_offers']:.3f} | {fo if fo is None else f'{fo:.3f}'} |")


if __name__ == "__main__":
    main()
