#!/usr/bin/env python3
"""Generates a synthetic corpus of N skills for skillc benchmarks (deterministic, stdlib only).

Usage: gen_corpus.py N OUT_DIR [--seed S]

The same N and seed always produce the same bytes. Sizes follow the real corpus (SKILL.md
median about 4 KB with a long tail to about 40 KB; a quarter of the skills carry `references/`,
a few `assets/`; skills with sub-commands carry their script).

The mix is calibrated on the real corpus (1,689 skills: 16 % expose sub-commands, about 8 per
such skill): 84 % are instruction-only Markdown; 9 % expose sub-commands through a script of
their own (fenced shell blocks with an alias, as Hermes skills do), 6 % through a declared
binary (inline-code bullets, as OpenClaw skills do, with a JSON5-style metadata flow map), 1 %
through GAIA typed tools; about 5 % have a problem (name/folder mismatch, invalid YAML, missing
description). Each skill is named after its own made-up product (`kavolu-mail`), whose name
opens its description, as real skills are named after the service they drive.
"""
import os
import random
import sys

SERVICES = ["mail", "calendar", "files", "contacts", "tasks", "issues", "notes", "pages", "sheets", "docs"]
VERBS = ["list", "get", "search", "create", "update", "delete", "send", "share", "export", "append"]
WORDS = ("alpha beta gamma delta project report team budget review release invoice order "
         "customer ticket meeting summary draft archive backup schedule").split()


SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]


def brand(i):
    """A pronounceable product name, distinct for every i (base-70 syllables)."""
    parts = []
    n = i + 70 * 70  # at least three syllables
    while n:
        n, r = divmod(n, len(SYLLABLES))
        parts.append(SYLLABLES[r])
    return "".join(parts)


def paragraph(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def body(rng, name, kind):
    lines = [f"# {name}", "", paragraph(rng, 40), "", "## Usage", ""]
    if kind == "script":
        lines += ["```bash", f'T="python3 {{baseDir}}/scripts/{name.replace("-", "_")}.py"', "```", ""]
        for svc in rng.sample(SERVICES, 3):
            lines += [f"### {svc.capitalize()}", "", "```bash"]
            for verb in rng.sample(VERBS, 3):
                lines.append(f"# {verb.capitalize()} {svc}")
                lines.append(f'$T {svc} {verb} <id> --max {rng.randint(1, 50)} --query "{rng.choice(WORDS)}"')
            lines += ["```", ""]
    elif kind == "binary":
        for svc in rng.sample(SERVICES, 3):
            for verb in rng.sample(VERBS, 3):
                lines.append(f"- {verb.capitalize()} {svc}: `{name} {svc} {verb} <id> --json`")
        lines.append("")
    # Long tail: most skills have a few sections, some have dozens (real SKILL.md p99 ~ 37 KB).
    sections = rng.randint(2, 8) if rng.random() < 0.9 else rng.randint(10, 40)
    for _ in range(sections):
        lines += [f"## {rng.choice(WORDS).capitalize()}", "", paragraph(rng, rng.randint(20, 120)), ""]
    return "\n".join(lines) + "\n"


def pseudo_word(rng):
    """A made-up word: real descriptions name things only their skill talks about."""
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))


def frontmatter(rng, name, kind, broken):
    product = name.split("-")[0].capitalize()
    own = " ".join(pseudo_word(rng) for _ in range(rng.randint(3, 6)))
    desc = f"{product} {name.split('-')[1]} client for {own}. " + paragraph(rng, rng.randint(8, 40))
    fm = ["---", f"name: {name}", f"description: {desc}", "license: MIT", f"version: 1.{rng.randint(0, 9)}.0"]
    if kind == "binary":
        fm += ["metadata:", "  {", '    "openclaw":', f'      {{ "requires": {{ "bins": ["{name}"], "env": ["{name.upper().replace("-", "_")}_TOKEN"], }}, }},', "  }"]
    elif kind == "gaia":
        fm += ["metadata:", "  gaia:", "    security_tier: community", "    permissions:", "      - network:read",
               "    tools:", "      - name: search_pages", "        description: Search the pages",
               "        parameters:", "          query: {type: string, required: true}",
               "          max_results: {type: integer, required: false, default: 5}"]
    if broken == "yaml":
        fm.append("tags: [unclosed, flow")
    elif broken == "nodesc":
        fm = [line for line in fm if not line.startswith("description:")]
    fm.append("---")
    return "\n".join(fm) + "\n\n"


def support_files(rng, folder):
    """references/ in about a quarter of the skills, assets/ in a few (as in the real corpus)."""
    if rng.random() < 0.25:
        os.makedirs(os.path.join(folder, "references"), exist_ok=True)
        for k in range(rng.randint(1, 4)):
            text = "\n\n".join(paragraph(rng, rng.randint(40, 200)) for _ in range(rng.randint(3, 20)))
            with open(os.path.join(folder, "references", f"guide-{k}.md"), "w", encoding="utf-8") as f:
                f.write(f"# Guide {k}\n\n{text}\n")
    if rng.random() < 0.03:
        os.makedirs(os.path.join(folder, "assets"), exist_ok=True)
        with open(os.path.join(folder, "assets", "template.json"), "w", encoding="utf-8") as f:
            f.write('{"title": "%s", "sections": %d}\n' % (rng.choice(WORDS), rng.randint(1, 9)))


def main():
    args = sys.argv[1:]
    seed = 20261130
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i : i + 2]
    if len(args) != 2:
        sys.exit("usage: gen_corpus.py N OUT_DIR [--seed S]")
    n, out = int(args[0]), args[1]
    rng = random.Random(seed)
    for i in range(n):
        group = f"group-{i // 100:03d}"
        name = f"{brand(i)}-{rng.choice(SERVICES)}"
        kind = rng.choices(["plain", "script", "binary", "gaia"], weights=[84, 9, 6, 1])[0]
        broken = rng.choices([None, "mismatch", "yaml", "nodesc"], weights=[95, 2, 2, 1])[0]
        folder = os.path.join(out, group, name + ("-old" if broken == "mismatch" else ""))
        os.makedirs(os.path.join(folder, "scripts"), exist_ok=True)
        with open(os.path.join(folder, "SKILL.md"), "w", encoding="utf-8") as f:
            f.write(frontmatter(rng, name, kind, broken) + body(rng, name, kind))
        if kind == "script":
            with open(os.path.join(folder, "scripts", name.replace("-", "_") + ".py"), "w") as f:
                f.write("import json, sys\nprint(json.dumps({'argv': sys.argv[1:]}))\n")
        support_files(rng, folder)
        if kind == "gaia":
            with open(os.path.join(folder, "tools.py"), "w") as f:
                f.write("def search_pages(query, max_results=5):\n    return {'query': query, 'results': []}\n")


if __name__ == "__main__":
    main()
