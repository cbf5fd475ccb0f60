#!/usr/bin/env python3
"""Explores dense-score and fusion rules on the scores `benches/menu_fusion.rs` dumps, in
seconds per rule instead of a rebuild of the bench (issue 19, acceptance 2; BENCHMARKS.md
"Menu with the local model"). Standard library only.

    MENU_FUSION_DUMP=/tmp/fusion.tsv target/debug/deps/menu_fusion-* --out CATALOG_OUT
    python3 benches/menu_fusion_rules.py /tmp/fusion.tsv [--agreement]

`--agreement`: instead of the dense-part rules, fuse/3's parts at several weights with a
bonus for the skills in both the lexical and the dense top k of the turn (`fuse/4`).

Prints, per rule, recall@3 of the ranking and of the menu at the lowest τ whose false offers
stay ≤ 15 % (gate_triggerless on, size 3, as the bench computes them), over all turns and
over the tuning / held-out parts, sorted by the tuning part at τ: choose on that column, read
the held-out one. Part tags as `menu::doc::DensePart`: 0 whole, 1 head, 2 when, 3 examples,
4 headings, 5 executors, 6 opening.
"""
import heapq
import itertools
import math
import sys

NAMES = ["whole", "head", "when", "examples", "headings", "executors", "opening"]


def load(path):
    """The dump: slugs, and per turn its labels and rows (skill, lexical, hits, {tag: [cos]})."""
    slugs, turns = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            x = line.rstrip("\n").split("\t")
            if x[0] == "S":
                slugs.append(x[1])
            elif x[0] == "T":
                exp = [] if x[4] == "-" else x[4].split(",")
                turns.append({"kind": x[2], "held": x[3] == "1", "exp": exp, "rows": []})
            else:
                parts = {}
                for c in x[3].split(","):
                    tag, cos = c.split(":")
                    parts.setdefault(int(tag), []).append(float(cos))
                turns[-1]["rows"].append((int(x[0]), float(x[1]), int(x[2]), parts))
    index = {s: i for i, s in enumerate(slugs)}
    for t in turns:
        t["want"] = {index[s] for s in t["exp"] if s in index}
    return turns


def evaluate(turns, fuse, cap=0.15):
    """fuse(rows) -> {skill: fused score}; returns (ranking, at τ, τ, false offers), the first
    two as {"all"|"tuning"|"held-out"|kind: recall@3}."""
    per = []
    for t in turns:
        f = fuse(t["rows"])
        hits = [i for (_, _, i) in sorted(((h, f[i], i) for (i, _, h, _) in t["rows"] if h), reverse=True)]
        rest = heapq.nlargest(3, ((f[i], -i, i) for (i, _, h, _) in t["rows"] if not h))
        per.append((t, hits, rest))
    none = [(h, r) for (t, h, r) in per if not t["exp"]]
    k = math.floor(cap * len(none) + 1e-9) - sum(1 for h, _ in none if h)
    maxes = sorted((r[0][0] for h, r in none if not h and r), reverse=True)
    tau = math.inf if k < 0 else (-math.inf if k >= len(maxes) else maxes[k] + 1e-9)

    def recall(tau):
        out = {}
        for t, h, r in per:
            if t["exp"]:
                menu = h + [x[2] for x in r if x[0] >= tau]
                ok = any(j in t["want"] for j in menu[:3])
                for key in ("all", "held-out" if t["held"] else "tuning", t["kind"]):
                    a = out.setdefault(key, [0, 0])
                    a[0] += ok
                    a[1] += 1
        return {key: a[0] / a[1] for key, a in out.items()}

    offers = sum(1 for h, r in none if h or (r and r[0][0] >= tau))
    return recall(-math.inf), recall(tau), tau, offers / max(1, len(none))


def best(p, tag):
    return max(p[tag]) if tag in p else None


def mean_of(tags):
    """Per part its best chunk, then the mean over the parts the skill has (fuse/3 for
    whole, head, opening)."""
    def dense(p):
        v = [best(p, t) for t in tags if t in p]
        return sum(v) / len(v) if v else 0.0
    return dense


def alpha_max(alpha, tags):
    """α·whole + (1 − α)·max(whole, the best of `tags`)."""
    def dense(p):
        w = best(p, 0) or 0.0
        return alpha * w + (1 - alpha) * max([w] + [best(p, t) for t in tags if t in p])
    return dense


def linear(beta, dense):
    return lambda rows: {i: (1 - beta) * l + beta * dense(p) for (i, l, _, p) in rows}


def agreement(beta, dense, bonus, k):
    """`linear`, plus `bonus` for a skill in both the lexical and the dense top `k` of the turn
    (its lexical score above 0): the two halves agreeing is evidence neither gives alone."""
    def fuse(rows):
        lex = {i: l for (i, l, _, _) in rows}
        den = {i: dense(p) for (i, _, _, p) in rows}
        lk = max(heapq.nlargest(k, lex.values())[-1] if lex else 0.0, 1e-9)
        dk = heapq.nlargest(k, den.values())[-1] if den else 0.0
        return {i: (1 - beta) * lex[i] + beta * den[i] + (bonus if lex[i] >= lk and den[i] >= dk else 0.0) for i in lex}
    return fuse


def main():
    turns = load(sys.argv[1] if len(sys.argv) > 1 else "/tmp/fusion.tsv")
    rules = []
    if "--agreement" in sys.argv:
        # fuse/3's parts, the weight and the agreement bonus (issue 19: `fuse/4`).
        for beta in (0.5, 0.6, 0.7, 0.8, 0.9):
            for bonus in (0.0, 0.03, 0.05, 0.08, 0.1, 0.12, 0.15):
                for k in (3, 5, 10, 20):
                    rules.append((f"mean(whole+head+opening) β {beta} +{bonus} in both top {k}", agreement(beta, mean_of((0, 1, 6)), bonus, k)))
        agreement_only = True
    else:
        agreement_only = False
    for r in () if agreement_only else (0, 1, 2):
        for extra in itertools.combinations(range(1, 7), r):
            name = "+".join(["whole"] + [NAMES[t] for t in extra])
            for beta in (0.4, 0.5, 0.6, 0.7):
                rules.append((f"mean({name}) β {beta}", linear(beta, mean_of((0,) + extra))))
                if extra:
                    for alpha in (0.3, 0.5, 0.7):
                        rules.append((f"{alpha}·whole + max({name}) β {beta}", linear(beta, alpha_max(alpha, extra))))
    rows = []
    for name, fuse in rules:
        rank, at, tau, fo = evaluate(turns, fuse)
        rows.append((at["tuning"], rank["tuning"], name, rank, at, tau, fo))
    rows.sort(key=lambda x: (-x[0], -x[1]))
    print("| rule | ranking all (tuning / held-out) | τ | at τ all (tuning / held-out) | false offers | at τ per kind |")
    print("| --- | ---: | ---: | ---: | ---: | --- |")
    for _, _, name, rank, at, tau, fo in rows:
        kinds = ", ".join(f"{k} {at.get(k, 0):.3f}" for k in ("direct", "paraphrase", "italian", "indirect"))
        print(
            f"| {name} | {rank['all']:.3f} ({rank['tuning']:.3f} / {rank['held-out']:.3f}) | {tau:.4f} "
            f"| {at['all']:.3f} ({at['tuning']:.3f} / {at['held-out']:.3f}) | {fo:.3f} | {kinds} |"
        )


if __name__ == "__main__":
    main()
