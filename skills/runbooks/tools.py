#!/usr/bin/env python3
"""Typed tools of the `runbooks` skill: search and read the bundled runbooks.

Each tool is a plain function taking keyword arguments and returning a
JSON-serializable dict, as declared in SKILL.md (`metadata.gaia.tools`). The
runbooks are the Markdown files in `references/` beside this file: a page's
name is its file name without `.md`, its title the first `# ` heading, its
sections the `## ` headings. Nothing here touches the network or any file
outside the skill folder.

Invalid arguments raise ValueError with a message meant for the caller.
For a quick try from a shell:  python3 tools.py search_pages '{"query": "rollback"}'

Standard library only. License: MIT.
"""

import json
import os
import re
import sys

PAGES_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "references")
MAX_RESULTS_LIMIT = 50
SNIPPET_CHARS = 160
WORD_RE = re.compile(r"[a-z0-9]+")


def _words(text):
    """Lowercase words, with a plain English plural `s` dropped (`migrations` ~ `migration`)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in WORD_RE.findall(text.lower())]


def _load_pages():
    """[{page, title, sections: [{heading, text}]}], sorted by page name."""
    pages = []
    for file_name in sorted(os.listdir(PAGES_DIR)):
        if not file_name.endswith(".md"):
            continue
        with open(os.path.join(PAGES_DIR, file_name), encoding="utf-8") as f:
            lines = f.read().splitlines()
        title, sections = file_name[:-3], [{"heading": "", "lines": []}]
        for line in lines:
            before_text = len(sections) == 1 and not "".join(sections[0]["lines"]).strip()
            if line.startswith("# ") and before_text and title == file_name[:-3]:
                title = line[2:].strip()
            elif line.startswith("## "):
                sections.append({"heading": line[3:].strip(), "lines": []})
            else:
                sections[-1]["lines"].append(line)
        pages.append({
            "page": file_name[:-3],
            "title": title,
            "sections": [{"heading": s["heading"], "text": "\n".join(s["lines"]).strip()}
                         for s in sections if s["heading"] or "\n".join(s["lines"]).strip()],
        })
    return pages


def _text(value, name, allow_empty=False):
    if not isinstance(value, str):
        raise ValueError("`%s` must be a string, got %s" % (name, type(value).__name__))
    if not allow_empty and not value.strip():
        raise ValueError("`%s` must not be empty" % name)
    return value.strip()


def _find_page(pages, name):
    key = name.lower()
    key = key[:-3] if key.endswith(".md") else key
    for p in pages:
        if key in (p["page"], p["title"].lower()):
            return p
    raise ValueError("no runbook `%s`; known pages: %s"
                     % (name, ", ".join(p["page"] for p in pages)))


def search_pages(query, max_results=5, titles_only=False):
    """Rank runbook sections by how well they match the words of `query`.

    A word found in a section heading (or, for a page's opening section, in
    the page title) counts three times as much as one found in the text.
    With `titles_only`, only titles and headings are searched.
    """
    query = _text(query, "query")
    if isinstance(max_results, bool) or not isinstance(max_results, int):
        raise ValueError("`max_results` must be an integer")
    if not 1 <= max_results <= MAX_RESULTS_LIMIT:
        raise ValueError("`max_results` must be between 1 and %d" % MAX_RESULTS_LIMIT)
    if not isinstance(titles_only, bool):
        raise ValueError("`titles_only` must be true or false")
    terms = sorted(set(_words(query)))
    if not terms:
        raise ValueError("`query` has no letters or digits to search for")
    results = []
    for p in _load_pages():
        for s in p["sections"]:
            head = _words(s["heading"] or p["title"])
            body = [] if titles_only else _words(s["text"])
            score = sum(3 * head.count(t) + body.count(t) for t in terms)
            if score == 0:
                continue
            snippet = next((ln.strip() for ln in s["text"].splitlines()
                            if any(t in ln.lower() for t in terms)),
                           s["text"].splitlines()[0] if s["text"] else "")
            results.append({
                "page": p["page"],
                "title": p["title"],
                "section": s["heading"],
                "score": score,
                "snippet": snippet[:SNIPPET_CHARS],
            })
    results.sort(key=lambda r: (-r["score"], r["page"], r["section"]))
    return {"query": query, "total": len(results), "results": results[:max_results]}


def read_page(name, section=""):
    """The text of one runbook, or of one of its sections."""
    name = _text(name, "name")
    section = _text(section, "section", allow_empty=True)
    page = _find_page(_load_pages(), name)
    headings = [s["heading"] for s in page["sections"] if s["heading"]]
    if section:
        for s in page["sections"]:
            if s["heading"].lower() == section.lower():
                return {"page": page["page"], "title": page["title"],
                        "section": s["heading"], "text": s["text"]}
        raise ValueError("runbook `%s` has no section `%s`; its sections: %s"
                         % (page["page"], section, ", ".join(headings)))
    parts = ["# " + page["title"]]
    for s in page["sections"]:
        parts.append(("## %s\n\n%s" % (s["heading"], s["text"])) if s["heading"] else s["text"])
    return {"page": page["page"], "title": page["title"], "sections": headings,
            "text": "\n\n".join(parts).strip() + "\n"}


def list_pages():
    """Every runbook with its title, first sentence and section headings."""
    out = []
    for p in _load_pages():
        intro = next((s["text"] for s in p["sections"] if not s["heading"]), "")
        summary = " ".join(intro.split())
        end = summary.find(". ")
        out.append({
            "page": p["page"],
            "title": p["title"],
            "summary": summary if end < 0 else summary[:end + 1],
            "sections": [s["heading"] for s in p["sections"] if s["heading"]],
        })
    return {"pages": out}


TOOLS = {"search_pages": search_pages, "read_page": read_page, "list_pages": list_pages}


def main(argv):
    """`tools.py TOOL [JSON_KWARGS]`: call one tool and print its result as JSON."""
    try:
        if not argv or argv[0] not in TOOLS:
            raise ValueError("usage: tools.py {%s} [JSON object of arguments]"
                             % "|".join(sorted(TOOLS)))
        kwargs = json.loads(argv[1]) if len(argv) > 1 else {}
        if not isinstance(kwargs, dict):
            raise ValueError("the arguments must be a JSON object")
        result = TOOLS[argv[0]](**kwargs)
    except (ValueError, TypeError, OSError) as e:
        # TypeError: an unknown or missing keyword argument.
        json.dump({"error": str(e)}, sys.stderr)
        sys.stderr.write("\n")
        return 1
    try:
        json.dump(result, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `... | head`: the reader left, not an error
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
