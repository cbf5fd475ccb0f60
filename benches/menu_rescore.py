#!/usr/bin/env python3
"""Offline re-scoring of a built catalog's `menu.idx` under candidate scoring rules of the
built-in embedder, on the menu battery (BENCHMARKS.md, "Menu"): the fastest way to try a rule
before writing it in Rust.

    python3 benches/menu_rescore.py --out OUT [--bin skillc] [--battery tests/data/menu_battery.toml]
        [--rule NAME ...] [--turn TEXT]

It reads the index as FORMATS.md gives it (postings, norms, lexicon), re-implements the turn's
features of `src/menu/lexical.rs` (stop words and suffixes are read from that file) and scores
every turn under each rule; τ is the lowest multiple of 0.005 with false offers ≤ 15 %, as
`skillc menu calibrate` chooses it. Rule `coord` reproduces the shipped `lexical/3` (checked
to four decimals and its battery figures exactly on the corpus catalog, 2026-12-02); rule
`lexical4` reproduces the shipped `lexical/4` (its battery figures exactly, on an index built
by `lexical/4`, which holds the name twins it reads). Rules:

- `lexical4`: the shipped `lexical/4` — a word counted once (per skill the best product among
  its stem, prefix and concept features; trigrams summed), the turn's norm over the features
  some skill has, × coordination × the name bonus `1 + NAME_BONUS × share` (the share of the
  turn's words whose features have a name twin `n:<hash:08x>` in the skill); `lexical4:B`
  sets NAME_BONUS to B (shipped 1.0);
- `coord`: the cosine × coordination factor — `lexical/3`;
- `lexical3`: a word counted once (per skill the best product among its features, the norm
  counting the word by its own stem, or its largest known feature), × coordination — tried
  and not shipped (BENCHMARKS.md, "Tried 2026-12-02 and not shipped"; branch `direct`,
  093ef9d, where it reproduced that branch's binary);
- `head+A`: `lexical3` fused with a cosine over the head fields only (name, title, triggers,
  description, tags from `skillc read-properties`, their own df), weight A (e.g. `head+0.5`):
  an experiment that needs a second norm per skill in the index (not built).
"""

import argparse
import json
import math
import os
import re
import struct
import subprocess
import tomllib
import unicodedata
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = open(os.path.join(ROOT, "src/menu/lexical.rs")).read()
STOP = set(re.findall(r'^\s+"([^"]+)",$', SRC.split("const STOP_WORDS")[1].split("];")[0], re.M))
SUFFIXES = re.findall(r'"([^"]+)"', SRC.split("const SUFFIXES: &[&str] = &[")[1].split("];")[0])


def stem(w):
    if not w.isascii() or len(w) <= 4:
        return w
    for s in SUFFIXES:
        if w.endswith(s) and len(w) - len(s) >= (5 if len(s) >= 4 else 4):
            b = w[: len(w) - len(s)]
            return b + "y" if s in ("ies", "ied") else b
    return w


def tokens(text):
    f = unicodedata.normalize("NFKC", text).casefold()
    f = "".join(c for c in unicodedata.normalize("NFKD", f) if not unicodedata.combining(c))
    return [(w, stem(w)) for w in re.split(r"[^\w]|_", f) if len(w) > 1 and not w.isdigit() and w not in STOP]


def fnv(kind, text):
    h = 0x811C9DC5
    for b in (kind + ":" + text).encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


class Index:
    def __init__(self, path):
        b = open(path, "rb").read()
        at = 12
        _fmt, hl = struct.unpack_from("<II", b, at)
        at += 8
        self.header = json.loads(b[at : at + hl])
        at += hl
        self.n = n = self.header["skills"]

        def s():
            nonlocal at
            (l,) = struct.unpack_from("<H", b, at)
            at += 2
            v = b[at : at + l].decode()
            at += l
            return v

        self.slugs, self.norm = [], []
        for _ in range(n):
            self.slugs.append(s())
            s(), s()
            at += 1
            nt = b[at]
            at += 1
            for _ in range(nt):
                s()
            at += 36
            self.norm.append(struct.unpack_from("<f", b, at)[0])
            at += 4 + 8 + 32
        (nc,) = struct.unpack_from("<I", b, at)
        at += 4
        concepts = [s() for _ in range(nc)]
        (nw,) = struct.unpack_from("<I", b, at)
        at += 4
        self.words = {}
        for _ in range(nw):
            h, k = struct.unpack_from("<IB", b, at)
            at += 5
            self.words[h] = [concepts[c] for c in struct.unpack_from("<" + "H" * k, b, at)]
            at += 2 * k
        (nf,) = struct.unpack_from("<I", b, at)
        at += 4
        feats = [struct.unpack_from("<III", b, at + 12 * j) for j in range(nf)]
        base = at + 12 * nf
        self.post = {}
        for h, off, df in feats:
            p, prev, lst = base + off, 0, []
            for _ in range(df):
                v = sh = 0
                while True:
                    c = b[p]
                    p += 1
                    v |= (c & 0x7F) << sh
                    sh += 7
                    if c < 0x80:
                        break
                prev += v
                lst.append((prev, b[p] / 16.0))
                p += 1
            self.post[h] = lst

    def idf(self, df):
        return math.log(1 + self.n / max(df, 1))


def word_feats(idx, word, st, add):
    add("w", st, 1.0, False)
    if len(st) > 5:
        add("p", st[:5], 0.5, False)
    for c in idx.words.get(fnv("w", st), []):
        k, t = c.split(":", 1)
        if not (k == "w" and t == st):
            add(k, t, 0.8, False)
    if len(word) >= 4:
        pad = "^" + word + "$"
        for i in range(len(pad) - 2):
            add("g", pad[i : i + 3], 0.12, True)


def turn_features(idx, turn):
    """{hash: (weight, word or None, lead)}, and the number of words."""
    acc, stems = {}, []
    for word, st in tokens(turn):
        if st not in stems:
            stems.append(st)
        k = stems.index(st)

        def add(kind, text, w, gram):
            e = acc.setdefault(fnv(kind, text), [0.0, set(), False])
            e[0] += w
            if not gram:
                e[1].add(k)
            e[2] |= kind == "w" and text == st

        word_feats(idx, word, st, add)
    return {h: (math.log1p(w), min(ws) if ws else None, ws, lead) for h, (w, ws, lead) in acc.items()}, len(stems)


def cosine(idx, turn, post, norm, once=True):
    """Per skill the lexical score (× coordination); `post`/`norm` give the vectors."""
    f, nw = turn_features(idx, turn)
    df = {h: len(post[h]) for h in f if h in post}
    acc, cov = defaultdict(float), defaultdict(set)
    groups = defaultdict(list)
    for h, (w, word, ws, lead) in sorted(f.items()):
        groups[word if once else None].append((h, w, ws, lead))
    qn = 0.0
    for word, fs in groups.items():
        best, lead_q, known = {}, None, []
        for h, w, ws, lead in fs:
            q = w * idx.idf(df.get(h, 1))
            if word is None:
                qn += q * q
            if h in df:
                known.append(q)
            if lead:
                lead_q = (q, h in df)
            for i, dw in post.get(h, []):
                v = q * idx.idf(df[h]) * dw
                if word is None:
                    acc[i] += v
                else:
                    best[i] = max(best.get(i, 0.0), v)
                cov[i] |= ws
        if word is not None:
            q = lead_q[0] if lead_q and lead_q[1] else max(known) if known else lead_q[0] if lead_q else 0.0
            qn += q * q
            for i, v in best.items():
                acc[i] += v
    qn = math.sqrt(qn)
    return {i: a / (qn * norm[i]) * (len(cov[i]) / nw if nw else 1.0) for i, a in acc.items() if qn and norm[i]}


def head_vectors(idx, props):
    tagk = ("tags", "keywords", "category", "categories")

    def scal(v, out):
        if isinstance(v, (list, tuple)):
            [scal(x, out) for x in v]
        elif isinstance(v, dict):
            [scal(x, out) for x in v.values()]
        elif v is not None:
            out.append(str(v))

    post = defaultdict(list)
    for i, slug in enumerate(idx.slugs):
        p = props.get(slug, {"name": slug})
        meta = p.get("metadata") if isinstance(p.get("metadata"), dict) else {}
        fields = [(slug.replace("-", " "), 3.0), (str(meta.get("title") or slug), 2.0), (p.get("description") or "", 2.0)]
        tr, tags = [], []
        scal(meta.get("triggers"), tr)
        for m in [meta] + [v for v in meta.values() if isinstance(v, dict)]:
            for k in tagk:
                if k in m:
                    scal(m[k], tags)
        fields += [(", ".join(tr), 3.0), (", ".join(tags), 1.5)]
        acc = defaultdict(float)
        for text, fw in fields:
            for word, st in tokens(text):
                word_feats(idx, word, st, lambda k, t, w, g: acc.__setitem__(fnv(k, t), acc[fnv(k, t)] + w * fw))
        for h, v in acc.items():
            post[h].append((i, round(math.log1p(v) * 16) / 16))
    norm = [0.0] * idx.n
    for h, lst in post.items():
        for i, w in lst:
            norm[i] += (w * idx.idf(len(lst))) ** 2
    return dict(post), [math.sqrt(x) for x in norm]


def lexical4(idx, turn, bonus=1.0):
    """Per skill the `lexical/4` score (see the module doc)."""
    f, nw = turn_features(idx, turn)
    df = {h: len(idx.post[h]) for h in f if h in idx.post}
    acc, cov, named = defaultdict(float), defaultdict(set), defaultdict(set)
    groups = defaultdict(list)
    for h, (w, word, ws, lead) in sorted(f.items()):
        groups[word].append((h, w, ws))
    qn = 0.0
    for word in sorted(groups, key=lambda k: (k is None, k)):
        best = {}
        for h, w, ws in groups[word]:
            if h not in df:
                continue
            q = w * idx.idf(df[h])
            qn += q * q
            for i, dw in idx.post[h]:
                v = q * idx.idf(df[h]) * dw
                if word is None:
                    acc[i] += v
                else:
                    best[i] = max(best.get(i, 0.0), v)
                cov[i] |= ws
        for i, v in best.items():
            acc[i] += v
    for h, (w, word, ws, lead) in f.items():
        if ws:
            for i, _ in idx.post.get(fnv("n", f"{h:08x}"), []):
                named[i] |= ws
    qn = math.sqrt(qn)
    out = {}
    for i, a in acc.items():
        if qn and idx.norm[i]:
            share = len(named[i] & set(range(nw))) / nw if nw else 0.0
            out[i] = a / (qn * idx.norm[i]) * (len(cov[i]) / nw if nw else 1.0) * (1 + bonus * share)
    return out


def ranking(idx, turn, rule, head):
    if rule.startswith("lexical4"):
        s = lexical4(idx, turn, float(rule.split(":")[1]) if ":" in rule else 1.0)
    elif rule == "coord":
        s = cosine(idx, turn, idx.post, idx.norm, once=False)
    else:
        s = cosine(idx, turn, idx.post, idx.norm)
        if rule.startswith("head+"):
            a = float(rule[5:])
            h = cosine(idx, turn, *head)
            s = {i: (1 - a) * s.get(i, 0.0) + a * h.get(i, 0.0) for i in set(s) | set(h)}
    out = [(round(v, 4), idx.slugs[i]) for i, v in s.items()]
    return sorted(out, key=lambda x: (-x[0], x[1]))


def figures(idx, turns, rule, head):
    res = {t["id"]: ranking(idx, t["text"], rule, head) for t in turns}
    part = {t["id"]: "held-out" if fnv("turn", t["id"]) % 3 == 0 else "tuning" for t in turns}
    none = [t for t in turns if not t["expected"]]
    top = lambda t: res[t["id"]][0][0] if res[t["id"]] else 0.0
    tau = 0.0
    while sum(top(t) >= tau for t in none) > 0.15 * len(none) + 1e-9:
        tau = round(tau + 0.005, 3)
    hit = defaultdict(lambda: [0, 0, 0])
    for t in turns:
        if t["expected"]:
            sc = res[t["id"]]
            ok = any(s in t["expected"] for _, s in sc[:3])
            okt = any(s in t["expected"] for _, s in [x for x in sc if x[0] >= tau][:3])
            for k in (t["kind"], f"{t['kind']} {part[t['id']]}"):
                hit[k][0] += ok
                hit[k][1] += okt
                hit[k][2] += 1
    fo = {p: sum(top(t) >= tau for t in none if part[t["id"]] == p) / max(1, sum(part[t["id"]] == p for t in none)) for p in ("tuning", "held-out")}
    fo["all"] = sum(top(t) >= tau for t in none) / len(none)
    return hit, tau, fo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--bin", default="skillc")
    ap.add_argument("--battery", default=os.path.join(ROOT, "tests/data/menu_battery.toml"))
    ap.add_argument("--rule", action="append")
    ap.add_argument("--turn")
    a = ap.parse_args()
    idx = Index(os.path.join(a.out, "menu.idx"))
    rules = a.rule or ["lexical4", "coord"]
    head = None
    if any(r.startswith("head+") for r in rules):
        cache = os.path.join(a.out, ".rescore-props.json")
        if os.path.exists(cache):
            props = json.load(open(cache))
        else:
            props = {}
            for s in idx.slugs:
                p = subprocess.run([a.bin, "read-properties", os.path.join(a.out, "skills", s)], capture_output=True, text=True)
                props[s] = json.loads(p.stdout) if p.returncode == 0 else {"name": s}
            json.dump(props, open(cache, "w"))
        head = head_vectors(idx, props)
    if a.turn:
        for r in rules:
            print(r, ranking(idx, a.turn, r, head)[:8])
        return
    turns = tomllib.load(open(a.battery, "rb"))["turn"]
    for r in rules:
        hit, tau, fo = figures(idx, turns, r, head)
        print(f"{r}: τ {tau}, false offers {fo['all']:.3f} (tuning {fo['tuning']:.3f}, held-out {fo['held-out']:.3f})")
        for k in sorted(hit):
            n = hit[k][2]
            print(f"  {k:22} ranking {hit[k][0] / n:.3f}  at τ {hit[k][1] / n:.3f}  ({n} turns)")


if __name__ == "__main__":
    main()
