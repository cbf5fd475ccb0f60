#!/usr/bin/env python3
"""Check the shape and the counts of tests/data/extraction_truth.toml (issue 12, item 1).

Run from anywhere: python3 tests/data/check_extraction_truth.py [--corpus DIR]
The corpus defaults to $SKILLC_CORPUS, else ../shared/corpus next to the repository; without
it only the file itself is checked (and the script says so). Exit status 1 on any problem.
It never runs skillc: the truth set must not depend on skillc's output.
"""

import argparse
import collections
import os
import re
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
TRUTH = os.path.join(HERE, "extraction_truth.toml")

STYLES = {
    "hermes-alias", "openclaw-bins", "single-script", "script-subcommands", "command-table",
    "gaia-tools", "noun-verb", "undeclared-bin", "none",
}
COLLECTIONS = {
    "NousResearch__hermes-agent", "openclaw__openclaw", "K-Dense-AI__claude-scientific-skills",
    "amd__gaia", "openclaw__skills",
}
# Skills the issue names; google-workspace must keep its 24 sub-commands of google_api.py.
REQUIRED = {
    "NousResearch__hermes-agent/skills/productivity/google-workspace": ("scripts/google_api.py", 24),
    "openclaw__openclaw/skills/gog": ("gog", 21),
    "openclaw__openclaw/skills/himalaya": ("himalaya", None),
    "NousResearch__hermes-agent/skills/productivity/notion": ("ntn", None),
}
NAME = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)+")
PROVIDER = re.compile(r"[a-z0-9]+(?:_[a-z0-9]+)*")
SKILL_KEYS = {"path", "style", "provider", "build_as", "scripts_absent", "note", "command"}
COMMAND_KEYS = {"program", "words", "mode", "aliases", "optional", "source", "args", "names", "note"}
ARG_KEYS = {"name", "position", "flag", "short", "required", "variadic"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.environ.get("SKILLC_CORPUS")
                    or os.path.join(os.path.dirname(REPO), "shared", "corpus"))
    opts = ap.parse_args()
    corpus = opts.corpus if os.path.isdir(opts.corpus) else None
    errors = []

    def err(where, msg):
        errors.append(f"{where}: {msg}")

    with open(TRUTH, "rb") as f:
        data = tomllib.load(f)
    skills = data.get("skill", [])
    paths = [s.get("path", "") for s in skills]
    if paths != sorted(paths):
        err("file", "skills are not sorted by path")
    if len(set(paths)) != len(paths):
        err("file", "a path appears twice")

    by_style = collections.Counter()
    skills_by_style = collections.Counter()
    by_collection = collections.Counter()
    skills_by_collection = collections.Counter()
    optional = 0
    for s in skills:
        where = s.get("path", "?")
        for k in set(s) - SKILL_KEYS:
            err(where, f"unknown key `{k}`")
        style, provider = s.get("style"), s.get("provider", "")
        if style not in STYLES:
            err(where, f"unknown style {style!r}")
        if not PROVIDER.fullmatch(provider):
            err(where, f"provider {provider!r} is not [a-z0-9_]")
        collection = where.split("/")[0]
        if collection not in COLLECTIONS:
            err(where, f"unknown collection {collection!r}")
        folder = os.path.join(corpus, where) if corpus else None
        if folder and not os.path.isfile(os.path.join(folder, "SKILL.md")):
            err(where, "no SKILL.md in the corpus")
        commands = s.get("command", [])
        if (style == "none") != (not commands):
            err(where, "style `none` exactly when there is no command")
        seen = set()
        for c in commands:
            cw = f"{where} [{c.get('program')} {' '.join(c.get('words', []))}{' ' + c['mode'] if 'mode' in c else ''}]"
            for k in set(c) - COMMAND_KEYS:
                err(cw, f"unknown key `{k}`")
            key = (c.get("program"), tuple(c.get("words", [])), c.get("mode"))
            if key in seen:
                err(cw, "duplicate (program, words, mode)")
            seen.add(key)
            if not isinstance(c.get("words"), list) or not all(isinstance(w, str) and w for w in c["words"]):
                err(cw, "words must be a list of non-empty strings")
            if len(c.get("words", [])) > 3:
                err(cw, "more than three words")
            if not all(isinstance(a, list) for a in c.get("aliases", [])):
                err(cw, "aliases must be a list of word lists")
            prog = c.get("program", "")
            if folder and ("/" in prog or prog.endswith((".py", ".sh", ".js", ".mjs"))) \
                    and not s.get("scripts_absent") and not os.path.exists(os.path.join(folder, prog)):
                err(cw, f"program {prog} is not in the skill folder (set scripts_absent?)")
            positions = []
            arg_names = [a.get("name") for a in c.get("args", [])]
            if len(set(arg_names)) != len(arg_names):
                err(cw, "two arguments share a name")
            for a in c.get("args", []):
                for k in set(a) - ARG_KEYS:
                    err(cw, f"argument key `{k}`")
                if not re.fullmatch(r"[a-z0-9_]+", a.get("name", "")):
                    err(cw, f"argument name {a.get('name')!r}")
                if "position" in a and "flag" in a:
                    err(cw, f"argument {a['name']} has both a position and a flag")
                if "flag" in a and not a["flag"].startswith("-"):
                    err(cw, f"flag {a['flag']!r}")
                if not isinstance(a.get("required"), bool):
                    err(cw, f"argument {a.get('name')} needs required = true|false")
                if "position" in a:
                    positions.append(a["position"])
            if len(set(positions)) != len(positions):
                err(cw, "two positional arguments share a position")
            names = c.get("names", [])
            if not names:
                err(cw, "no accepted name")
            for n in names:
                if not NAME.fullmatch(n) or not n.endswith("_" + provider):
                    err(cw, f"name {n!r} is not action_object[_qualifier]_{provider}")
                elif not 2 <= len(n[: -len(provider) - 1].split("_")) <= 3:
                    err(cw, f"name {n!r}: action_object[_qualifier] before the provider")
            if c.get("optional"):
                optional += 1
            else:
                by_style[style] += 1
                by_collection[collection] += 1
        skills_by_style[style] += 1
        skills_by_collection[collection] += 1

    index = {s["path"]: s for s in skills}
    for path, (program, count) in REQUIRED.items():
        s = index.get(path)
        if s is None:
            err("file", f"required skill {path} is missing")
            continue
        n = sum(1 for c in s.get("command", []) if c["program"] == program and not c.get("optional"))
        if count is not None and n != count:
            err(path, f"{n} sub-commands of {program}, expected {count}")
    if not any(s["provider"] == "todoist" for s in skills):
        err("file", "no todoist skill")

    exposing = sum(1 for s in skills if s["style"] != "none")
    total = sum(by_style.values())
    if exposing < 40:
        err("file", f"{exposing} skills expose commands, need at least 40")
    if total < 300:
        err("file", f"{total} real sub-commands, need at least 300")
    for style in STYLES:
        if skills_by_style[style] == 0:
            err("file", f"no skill of style {style}")
    for collection in COLLECTIONS:
        if skills_by_collection[collection] == 0:
            err("file", f"no skill of {collection}")

    print(f"{len(skills)} skills ({exposing} exposing commands), {total} real sub-commands, "
          f"{optional} optional")
    print("by style (skills / sub-commands):")
    for style in sorted(STYLES):
        print(f"  {style:18} {skills_by_style[style]:3} {by_style[style]:4}")
    print("by collection (skills / sub-commands):")
    for collection in sorted(COLLECTIONS):
        print(f"  {collection:38} {skills_by_collection[collection]:3} {by_collection[collection]:4}")
    if corpus is None:
        print(f"note: corpus not found at {opts.corpus}: paths and scripts were not checked")
    for e in errors:
        print("error:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
