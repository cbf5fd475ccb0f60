#!/usr/bin/env python3
"""workspace.py - an offline, Google-Workspace-style office suite for agents.

Mail, calendar, files, contacts, spreadsheets and documents, kept in one JSON
file on this machine. Nothing leaves the machine: "sending" a message files it
under SENT, "sharing" a file records the grant. It behaves like the CLI of a
real suite so that an agent can practise the same workflows safely.

Usage: workspace.py SERVICE COMMAND [ARGS]   (see --help, or SKILL.md)

Environment:
  WORKSPACE_TOKEN     required; any non-empty value unlocks the local store
  WORKSPACE_DATA_DIR  where workspace.json lives
                      (default: $XDG_DATA_HOME/skillc-workspace-example,
                       else ~/.local/share/skillc-workspace-example)

Output: JSON on stdout. Errors: {"error": {"code", "message"}} on stderr and
exit status 1 (bad input, unknown id), 2 (bad usage) or 3 (no credential).

Standard library only. License: MIT.
"""

import argparse
import base64
import json
import os
import re
import shlex
import sys
import tempfile
from datetime import datetime, timedelta, timezone

ME = "me@example.com"
SYSTEM_LABELS = ["INBOX", "SENT", "TRASH", "UNREAD", "STARRED", "IMPORTANT"]
FOLDER_MIME = "application/vnd.workspace.folder"
SHARE_ROLES = ["reader", "commenter", "writer"]
MAX_UPLOAD_BYTES = 10 * 1024 * 1024
EMAIL_RE = re.compile(r"^[^@\s,]+@[^@\s,]+\.[^@\s,]+$")


class WsError(Exception):
    """A user-facing failure: printed as JSON, never as a traceback."""

    def __init__(self, message, code="invalid_input", status=1):
        super().__init__(message)
        self.code = code
        self.status = status


def fail(message, code="invalid_input"):
    raise WsError(message, code)


# --------------------------------------------------------------------------
# Time
# --------------------------------------------------------------------------

def now():
    return datetime.now(timezone.utc).replace(microsecond=0)


def iso(dt):
    return dt.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def parse_time(text, flag):
    """ISO 8601 date or date-time; a time without offset is read as UTC."""
    t = text.strip()
    if t.endswith("Z") or t.endswith("z"):
        t = t[:-1] + "+00:00"
    try:
        if len(t) == 10:
            dt = datetime.strptime(t, "%Y-%m-%d")
        else:
            dt = datetime.fromisoformat(t)
    except ValueError:
        fail("%s: `%s` is not an ISO 8601 date or date-time "
             "(e.g. 2026-03-02T09:30:00Z)" % (flag, text))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt


# --------------------------------------------------------------------------
# Store
# --------------------------------------------------------------------------

def data_dir():
    explicit = os.environ.get("WORKSPACE_DATA_DIR")
    if explicit:
        return os.path.expanduser(explicit)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "skillc-workspace-example")


def seed():
    """A small, believable starting point so that reads return something."""
    t = now()
    day = t.replace(hour=0, minute=0, second=0)

    def msg(i, sender, subject, body, hours_ago, labels):
        return {"id": "msg-%04d" % i, "thread_id": "thr-%04d" % i,
                "from": sender, "to": [ME], "cc": [], "subject": subject,
                "body": body, "date": iso(t - timedelta(hours=hours_ago)),
                "labels": labels}

    return {
        "format": 1,
        "counters": {"msg": 3, "thr": 3, "evt": 2, "fil": 2, "ctc": 3,
                     "sht": 1, "doc": 1},
        "labels": ["Finance"],
        "messages": [
            msg(1, "alice@example.com", "Q3 budget review",
                "Hi, can we go through the Q3 budget on Thursday? "
                "The draft is in the Budget spreadsheet.", 3,
                ["INBOX", "UNREAD", "Finance"]),
            msg(2, "bob@example.com", "Deploy window",
                "The release goes out Wednesday 14:00 UTC. "
                "Please hold merges after noon.", 26, ["INBOX"]),
            msg(3, "news@example.org", "Weekly digest",
                "Five things that happened this week.", 50,
                ["INBOX", "UNREAD"]),
        ],
        "events": [
            {"id": "evt-0001", "title": "Team standup",
             "start": iso(day + timedelta(days=1, hours=9)),
             "end": iso(day + timedelta(days=1, hours=9, minutes=15)),
             "location": "Room 2", "attendees": ["alice@example.com",
                                                 "bob@example.com"],
             "description": ""},
            {"id": "evt-0002", "title": "Budget review",
             "start": iso(day + timedelta(days=3, hours=14)),
             "end": iso(day + timedelta(days=3, hours=15)),
             "location": "", "attendees": ["alice@example.com"],
             "description": "Q3 numbers"},
        ],
        "files": [
            {"id": "fil-0001", "name": "Projects", "mime_type": FOLDER_MIME,
             "parent": None, "size": 0, "created": iso(t),
             "modified": iso(t), "shared": [], "trashed": False},
            {"id": "fil-0002", "name": "kickoff-notes.txt",
             "mime_type": "text/plain", "parent": "fil-0001",
             "size": 46, "created": iso(t), "modified": iso(t),
             "shared": [], "trashed": False,
             "content_b64": base64.b64encode(
                 b"Kickoff: scope agreed, next review in 2 weeks.").decode()},
        ],
        "contacts": [
            {"id": "ctc-0001", "name": "Alice Martin",
             "email": "alice@example.com", "phone": "+1 555 0101",
             "org": "Finance"},
            {"id": "ctc-0002", "name": "Bob Chen", "email": "bob@example.com",
             "phone": "", "org": "Platform"},
            {"id": "ctc-0003", "name": "Carla Rossi",
             "email": "carla@example.com", "phone": "+39 02 555 0199",
             "org": "Design"},
        ],
        "spreadsheets": [
            {"id": "sht-0001", "title": "Budget", "created": iso(t),
             "tabs": {"Sheet1": [["Item", "Q2", "Q3"],
                                 ["Cloud", 1200, 1350],
                                 ["Travel", 800, 450]]}},
        ],
        "documents": [
            {"id": "doc-0001", "title": "Onboarding checklist",
             "created": iso(t), "modified": iso(t),
             "body": "1. Get a laptop\n2. Read the handbook\n"},
        ],
    }


class Store:
    def __init__(self):
        self.dir = data_dir()
        self.path = os.path.join(self.dir, "workspace.json")
        if os.path.exists(self.path):
            self.data = self._load()
        else:  # first run: write the sample data so that ids and times stay put
            self.data = seed()
            self.save()

    def _load(self):
        try:
            with open(self.path, "r", encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, ValueError) as e:
            raise WsError("cannot read %s (%s); move it aside to start afresh"
                          % (self.path, e), "store_unreadable")
        if not isinstance(data, dict) or data.get("format") != 1:
            raise WsError("%s is not a workspace store (format 1); "
                          "move it aside to start afresh" % self.path,
                          "store_unreadable")
        return data

    def save(self):
        try:
            os.makedirs(self.dir, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".workspace-", dir=self.dir)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.data, f, indent=1, ensure_ascii=False)
                f.write("\n")
            os.replace(tmp, self.path)
        except OSError as e:
            raise WsError("cannot write %s: %s" % (self.path, e),
                          "store_unwritable")

    def new_id(self, kind):
        self.data["counters"][kind] = self.data["counters"].get(kind, 0) + 1
        return "%s-%04d" % (kind, self.data["counters"][kind])

    def find(self, collection, item_id, what):
        for item in self.data[collection]:
            if item["id"] == item_id:
                return item
        fail("no %s with id `%s`" % (what, item_id), "not_found")


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def emails(text, flag):
    out = [e.strip() for e in (text or "").split(",") if e.strip()]
    for e in out:
        if not EMAIL_RE.match(e):
            fail("%s: `%s` is not an email address" % (flag, e))
    return out


def positive(n, flag):
    if n < 1:
        fail("%s must be at least 1" % flag)
    return n


def read_text_file(path, flag):
    try:
        with open(os.path.expanduser(path), "r", encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as e:
        fail("%s: cannot read `%s`: %s" % (flag, path, e))


# --------------------------------------------------------------------------
# Mail
# --------------------------------------------------------------------------

def msg_summary(m):
    snippet = " ".join(m["body"].split())
    return {"id": m["id"], "thread_id": m["thread_id"], "from": m["from"],
            "to": m["to"], "subject": m["subject"], "date": m["date"],
            "snippet": snippet[:100], "labels": m["labels"]}


def mail_matches(m, terms):
    labels = [x.lower() for x in m["labels"]]
    for key, value in terms:
        v = value.lower() if isinstance(value, str) else value
        if key == "from" and v not in m["from"].lower():
            return False
        if key == "to" and not any(v in r.lower() for r in m["to"] + m["cc"]):
            return False
        if key == "subject" and v not in m["subject"].lower():
            return False
        if key in ("label", "in") and v not in labels:
            return False
        if key == "is":
            wanted = {"unread": "unread" in labels,
                      "read": "unread" not in labels,
                      "starred": "starred" in labels}
            if not wanted[v]:
                return False
        if key in ("newer_than", "older_than"):
            age = now() - parse_time(m["date"], "date")
            if (age <= value) != (key == "newer_than"):
                return False
        if key == "text" and v not in (m["subject"] + " " + m["body"] + " "
                                       + m["from"]).lower():
            return False
    return True


def parse_mail_query(query):
    try:
        words = shlex.split(query)
    except ValueError as e:
        fail("query: %s" % e)
    terms = []
    for w in words:
        key, sep, value = w.partition(":")
        key = key.lower()
        if not sep or key not in ("from", "to", "subject", "label", "in",
                                  "is", "newer_than", "older_than"):
            terms.append(("text", w))
            continue
        if not value:
            fail("query: `%s` needs a value after the colon" % w)
        if key == "is" and value.lower() not in ("unread", "read", "starred"):
            fail("query: `is:` takes unread, read or starred")
        if key in ("newer_than", "older_than"):
            m = re.fullmatch(r"(\d+)([dh])", value.lower())
            if not m:
                fail("query: `%s` takes a duration like 7d or 12h" % key)
            n = int(m.group(1))
            value = timedelta(days=n) if m.group(2) == "d" else timedelta(hours=n)
        terms.append((key, value))
    return terms


def mail_search(st, a):
    terms = parse_mail_query(a.query)
    wants_trash = any(k in ("label", "in") and v.lower() == "trash"
                      for k, v in terms)
    found = [m for m in st.data["messages"]
             if (wants_trash or "TRASH" not in m["labels"])
             and mail_matches(m, terms)]
    found.sort(key=lambda m: m["date"], reverse=True)
    return [msg_summary(m) for m in found[:positive(a.max, "--max")]]


def mail_get(st, a):
    m = st.find("messages", a.message_id, "message")
    if a.mark_read and "UNREAD" in m["labels"]:
        m["labels"].remove("UNREAD")
        st.save()
    return m


def mail_send(st, a):
    if a.body is not None and a.body_file is not None:
        fail("give either --body or --body-file, not both")
    body = a.body if a.body_file is None else read_text_file(a.body_file,
                                                             "--body-file")
    if body is None:
        fail("--body or --body-file is required")
    thread_id, subject, to = None, a.subject, emails(a.to, "--to")
    if a.reply_to:
        original = st.find("messages", a.reply_to, "message")
        thread_id = original["thread_id"]
        if not to:
            to = [original["from"]]
        if subject is None:
            s = original["subject"]
            subject = s if s.lower().startswith("re:") else "Re: " + s
    if not to:
        fail("--to is required (or --reply-to MESSAGE_ID to answer a message)")
    if subject is None:
        fail("--subject is required")
    m = {"id": st.new_id("msg"), "thread_id": thread_id or st.new_id("thr"),
         "from": ME, "to": to, "cc": emails(a.cc, "--cc"), "subject": subject,
         "body": body, "date": iso(now()), "labels": ["SENT"]}
    if a.reply_to:
        m["in_reply_to"] = a.reply_to
    st.data["messages"].append(m)
    st.save()
    return {"status": "sent", "id": m["id"], "thread_id": m["thread_id"],
            "to": m["to"], "subject": m["subject"]}


def all_labels(st):
    return SYSTEM_LABELS + st.data["labels"]


def canonical_label(st, name):
    for label in all_labels(st):
        if label.lower() == name.lower():
            return label
    fail("unknown label `%s` (known: %s); create it with `mail labels create`"
         % (name, ", ".join(all_labels(st))), "not_found")


def mail_modify(st, a):
    m = st.find("messages", a.message_id, "message")
    add = [canonical_label(st, x) for x in (a.add_labels or "").split(",")
           if x.strip()]
    remove = [canonical_label(st, x) for x in (a.remove_labels or "").split(",")
              if x.strip()]
    if not add and not remove:
        fail("give --add-labels and/or --remove-labels")
    for label in add:
        if label not in m["labels"]:
            m["labels"].append(label)
    m["labels"] = [x for x in m["labels"] if x not in remove]
    st.save()
    return {"status": "modified", "id": m["id"], "labels": m["labels"]}


def mail_archive(st, a):
    m = st.find("messages", a.message_id, "message")
    m["labels"] = [x for x in m["labels"] if x != "INBOX"]
    st.save()
    return {"status": "archived", "id": m["id"], "labels": m["labels"]}


def mail_delete(st, a):
    m = st.find("messages", a.message_id, "message")
    if a.permanent:
        st.data["messages"].remove(m)
        st.save()
        return {"status": "deleted", "id": m["id"], "permanent": True}
    m["labels"] = [x for x in m["labels"] if x not in ("INBOX", "UNREAD")]
    if "TRASH" not in m["labels"]:
        m["labels"].append("TRASH")
    st.save()
    return {"status": "trashed", "id": m["id"], "permanent": False}


def mail_labels_list(st, a):
    out = []
    for label in all_labels(st):
        tagged = [m for m in st.data["messages"] if label in m["labels"]]
        out.append({"name": label,
                    "type": "system" if label in SYSTEM_LABELS else "user",
                    "messages": len(tagged),
                    "unread": sum("UNREAD" in m["labels"] for m in tagged)})
    return out


def mail_labels_create(st, a):
    name = a.name.strip()
    if not name or "," in name:
        fail("--name must be non-empty and contain no comma")
    if any(x.lower() == name.lower() for x in all_labels(st)):
        fail("label `%s` already exists" % name, "conflict")
    st.data["labels"].append(name)
    st.save()
    return {"status": "created", "name": name}


# --------------------------------------------------------------------------
# Calendar
# --------------------------------------------------------------------------

def check_span(start, end):
    if parse_time(end, "--end") <= parse_time(start, "--start"):
        fail("--end must be after --start")


def calendar_list(st, a):
    start = parse_time(a.start, "--start") if a.start else now()
    end = parse_time(a.end, "--end") if a.end else start + timedelta(days=7)
    if end <= start:
        fail("--end must be after --start")
    found = [e for e in st.data["events"]
             if parse_time(e["end"], "end") > start
             and parse_time(e["start"], "start") < end]
    found.sort(key=lambda e: parse_time(e["start"], "start"))
    return found[:positive(a.max, "--max")]


def calendar_get(st, a):
    return st.find("events", a.event_id, "event")


def calendar_create(st, a):
    start = iso(parse_time(a.start, "--start"))
    end = iso(parse_time(a.end, "--end"))
    check_span(start, end)
    if not a.title.strip():
        fail("--title must not be empty")
    e = {"id": st.new_id("evt"), "title": a.title, "start": start, "end": end,
         "location": a.location or "",
         "attendees": emails(a.attendees, "--attendees"),
         "description": a.description or ""}
    st.data["events"].append(e)
    st.save()
    return {"status": "created", "event": e}


def calendar_update(st, a):
    e = st.find("events", a.event_id, "event")
    changes = {"title": a.title, "location": a.location,
               "description": a.description}
    if a.start is not None:
        changes["start"] = iso(parse_time(a.start, "--start"))
    if a.end is not None:
        changes["end"] = iso(parse_time(a.end, "--end"))
    if a.attendees is not None:
        changes["attendees"] = emails(a.attendees, "--attendees")
    changes = {k: v for k, v in changes.items() if v is not None}
    if not changes:
        fail("nothing to update: give at least one of --title, --start, "
             "--end, --location, --attendees, --description")
    check_span(changes.get("start", e["start"]), changes.get("end", e["end"]))
    e.update(changes)
    st.save()
    return {"status": "updated", "event": e}


def calendar_delete(st, a):
    e = st.find("events", a.event_id, "event")
    st.data["events"].remove(e)
    st.save()
    return {"status": "deleted", "id": e["id"]}


# --------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------

def file_info(f):
    return {k: v for k, v in f.items() if k != "content_b64"}


def find_folder(st, folder_id, flag):
    f = st.find("files", folder_id, "folder")
    if f["mime_type"] != FOLDER_MIME:
        fail("%s: `%s` is a file, not a folder" % (flag, folder_id))
    return f


def guess_mime(name):
    ext = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return {"txt": "text/plain", "md": "text/markdown", "csv": "text/csv",
            "json": "application/json", "pdf": "application/pdf",
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
            "html": "text/html"}.get(ext, "application/octet-stream")


def files_list(st, a):
    if a.folder:
        find_folder(st, a.folder, "--folder")
    found = [f for f in st.data["files"]
             if f["trashed"] == a.trashed
             and (a.folder is None or f["parent"] == a.folder)]
    found.sort(key=lambda f: f["modified"], reverse=True)
    return [file_info(f) for f in found[:positive(a.max, "--max")]]


def files_search(st, a):
    q = a.query.lower().strip()
    if not q:
        fail("the query must not be empty")
    found = []
    for f in st.data["files"]:
        if f["trashed"]:
            continue
        text = ""
        if f["mime_type"].startswith("text/") and "content_b64" in f:
            text = base64.b64decode(f["content_b64"]).decode("utf-8", "replace")
        if q in f["name"].lower() or q in text.lower():
            found.append(file_info(f))
    found.sort(key=lambda f: f["modified"], reverse=True)
    return found[:positive(a.max, "--max")]


def files_info(st, a):
    return file_info(st.find("files", a.file_id, "file"))


def files_download(st, a):
    f = st.find("files", a.file_id, "file")
    if f["mime_type"] == FOLDER_MIME:
        fail("`%s` is a folder; list it with `files list --folder %s`"
             % (f["id"], f["id"]))
    raw = base64.b64decode(f.get("content_b64", ""))
    if a.output:
        path = os.path.expanduser(a.output)
        if os.path.isdir(path):
            path = os.path.join(path, f["name"])
        if os.path.exists(path) and not a.force:
            fail("`%s` exists; pass --force to overwrite it" % path, "conflict")
        try:
            with open(path, "wb") as out:
                out.write(raw)
        except OSError as e:
            fail("cannot write `%s`: %s" % (path, e))
        return {"status": "downloaded", "id": f["id"], "name": f["name"],
                "path": os.path.abspath(path), "size": len(raw)}
    try:
        return {"id": f["id"], "name": f["name"], "encoding": "utf-8",
                "content": raw.decode("utf-8")}
    except UnicodeDecodeError:
        return {"id": f["id"], "name": f["name"], "encoding": "base64",
                "content": f.get("content_b64", "")}


def files_upload(st, a):
    path = os.path.expanduser(a.path)
    if not os.path.isfile(path):
        fail("`%s` is not a file" % a.path, "not_found")
    size = os.path.getsize(path)
    if size > MAX_UPLOAD_BYTES:
        fail("`%s` is %d bytes; the limit is %d" % (a.path, size,
                                                   MAX_UPLOAD_BYTES))
    if a.folder:
        find_folder(st, a.folder, "--folder")
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        fail("cannot read `%s`: %s" % (a.path, e))
    name = a.name or os.path.basename(path)
    t = iso(now())
    f = {"id": st.new_id("fil"), "name": name, "mime_type": guess_mime(name),
         "parent": a.folder, "size": len(raw), "created": t, "modified": t,
         "shared": [], "trashed": False,
         "content_b64": base64.b64encode(raw).decode()}
    st.data["files"].append(f)
    st.save()
    return {"status": "uploaded", "file": file_info(f)}


def files_create_folder(st, a):
    if not a.name.strip():
        fail("the folder name must not be empty")
    if a.parent:
        find_folder(st, a.parent, "--parent")
    t = iso(now())
    f = {"id": st.new_id("fil"), "name": a.name, "mime_type": FOLDER_MIME,
         "parent": a.parent, "size": 0, "created": t, "modified": t,
         "shared": [], "trashed": False}
    st.data["files"].append(f)
    st.save()
    return {"status": "created", "folder": file_info(f)}


def files_share(st, a):
    f = st.find("files", a.file_id, "file")
    email = emails(a.email, "--email")
    if len(email) != 1:
        fail("--email takes exactly one address")
    grants = [g for g in f["shared"] if g["email"] != email[0]]
    grants.append({"email": email[0], "role": a.role})
    f["shared"] = grants
    notified = None
    if a.notify:
        m = {"id": st.new_id("msg"), "thread_id": st.new_id("thr"),
             "from": ME, "to": email, "cc": [],
             "subject": "Shared with you: %s" % f["name"],
             "body": "%s shared \"%s\" with you (%s)." % (ME, f["name"],
                                                          a.role),
             "date": iso(now()), "labels": ["SENT"]}
        st.data["messages"].append(m)
        notified = m["id"]
    st.save()
    return {"status": "shared", "file_id": f["id"], "email": email[0],
            "role": a.role, "notification": notified}


def files_delete(st, a):
    f = st.find("files", a.file_id, "file")
    doomed = {f["id"]}
    if f["mime_type"] == FOLDER_MIME:
        changed = True
        while changed:
            changed = False
            for g in st.data["files"]:
                if g["parent"] in doomed and g["id"] not in doomed:
                    doomed.add(g["id"])
                    changed = True
    if a.permanent:
        st.data["files"] = [g for g in st.data["files"]
                            if g["id"] not in doomed]
    else:
        for g in st.data["files"]:
            if g["id"] in doomed:
                g["trashed"] = True
    st.save()
    return {"status": "deleted" if a.permanent else "trashed",
            "ids": sorted(doomed), "permanent": a.permanent}


# --------------------------------------------------------------------------
# Contacts
# --------------------------------------------------------------------------

def contacts_list(st, a):
    found = sorted(st.data["contacts"], key=lambda c: c["name"].lower())
    return found[:positive(a.max, "--max")]


def contacts_search(st, a):
    q = a.query.lower().strip()
    if not q:
        fail("the query must not be empty")
    found = [c for c in st.data["contacts"]
             if any(q in (c[k] or "").lower()
                    for k in ("name", "email", "phone", "org"))]
    found.sort(key=lambda c: c["name"].lower())
    return found[:positive(a.max, "--max")]


def contacts_create(st, a):
    if not a.name.strip():
        fail("--name must not be empty")
    email = emails(a.email, "--email")
    if len(email) != 1:
        fail("--email takes exactly one address")
    if any(c["email"].lower() == email[0].lower()
           for c in st.data["contacts"]):
        fail("a contact with email `%s` exists" % email[0], "conflict")
    c = {"id": st.new_id("ctc"), "name": a.name.strip(), "email": email[0],
         "phone": a.phone or "", "org": a.org or ""}
    st.data["contacts"].append(c)
    st.save()
    return {"status": "created", "contact": c}


# --------------------------------------------------------------------------
# Sheets (A1 notation: Tab!A1:C3, Tab!A:C, A1:B2, Tab)
# --------------------------------------------------------------------------

CELL_RE = re.compile(r"^([A-Za-z]{1,3})?(\d+)?$")


def col_index(letters):
    n = 0
    for ch in letters.upper():
        n = n * 26 + (ord(ch) - 64)
    return n - 1


def col_letters(i):
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(65 + r) + s
    return s


def parse_range(sheet, text):
    """-> (tab, row0, col0, row1 or None, col1 or None), zero-based inclusive."""
    tabs = sheet["tabs"]
    tab, sep, cells = text.rpartition("!")
    if not sep:
        if text.strip("'") in tabs:
            tab, cells = text.strip("'"), ""
        else:
            tab, cells = next(iter(tabs)), text
    tab = tab.strip("'")
    if tab not in tabs:
        fail("no tab `%s` in spreadsheet %s (tabs: %s)"
             % (tab, sheet["id"], ", ".join(tabs)), "not_found")
    if not cells:
        return tab, 0, 0, None, None
    first, _, last = cells.partition(":")
    a, b = CELL_RE.match(first), CELL_RE.match(last) if last else None
    if not a or not a.group(1) or (last and (not b or not b.group(1))):
        fail("`%s` is not an A1 range (e.g. Sheet1!A1:C10 or Sheet1!A:C)"
             % text)
    row0 = int(a.group(2)) - 1 if a.group(2) else 0
    col0 = col_index(a.group(1))
    if row0 < 0:
        fail("`%s`: rows are numbered from 1" % text)
    if not last:
        if not a.group(2):
            return tab, 0, col0, None, col0
        return tab, row0, col0, row0, col0
    row1 = int(b.group(2)) - 1 if b.group(2) else None
    col1 = col_index(b.group(1))
    if (row1 is not None and row1 < row0) or col1 < col0:
        fail("`%s` is an empty or reversed range" % text)
    return tab, row0, col0, row1, col1


def anchor_range(sheet, text):
    """Like parse_range, but a single cell (`Tab!B2`) is where writing starts."""
    tab, r0, c0, r1, c1 = parse_range(sheet, text)
    if ":" not in text.rpartition("!")[2] and r1 == r0:
        return tab, r0, c0, None, None
    return tab, r0, c0, r1, c1


def range_name(tab, row0, col0, row1, col1):
    return "%s!%s%d:%s%d" % (tab, col_letters(col0), row0 + 1,
                             col_letters(col1), row1 + 1)


def parse_values(text):
    try:
        values = json.loads(text)
    except ValueError as e:
        fail("--values must be a JSON array of rows, e.g. "
             "'[[\"a\",1],[\"b\",2]]' (%s)" % e)
    ok = (isinstance(values, list) and values
          and all(isinstance(r, list) for r in values)
          and all(v is None or isinstance(v, (str, int, float, bool))
                  for r in values for v in r))
    if not ok:
        fail("--values must be a non-empty JSON array of rows of "
             "strings, numbers, booleans or nulls")
    return values


def put_cell(grid, r, c, v):
    while len(grid) <= r:
        grid.append([])
    row = grid[r]
    while len(row) <= c:
        row.append("")
    row[c] = "" if v is None else v


def trim(grid):
    for row in grid:
        while row and row[-1] == "":
            row.pop()
    while grid and not grid[-1]:
        grid.pop()


def sheets_create(st, a):
    if not a.title.strip():
        fail("--title must not be empty")
    tab = a.sheet_name or "Sheet1"
    if "!" in tab or not tab.strip():
        fail("--sheet-name must be non-empty and contain no `!`")
    s = {"id": st.new_id("sht"), "title": a.title, "created": iso(now()),
         "tabs": {tab: []}}
    st.data["spreadsheets"].append(s)
    st.save()
    return {"status": "created", "spreadsheet_id": s["id"],
            "title": s["title"], "tabs": [tab]}


def sheets_get(st, a):
    s = st.find("spreadsheets", a.spreadsheet_id, "spreadsheet")
    tab, r0, c0, r1, c1 = parse_range(s, a.range)
    grid = s["tabs"][tab]
    last_row = len(grid) - 1 if r1 is None else min(r1, len(grid) - 1)
    values = []
    for r in range(r0, last_row + 1):
        row = grid[r]
        end = len(row) - 1 if c1 is None else min(c1, len(row) - 1)
        values.append(row[c0:end + 1])
    trim(values)
    return {"spreadsheet_id": s["id"], "range": a.range, "values": values}


def sheets_update(st, a):
    s = st.find("spreadsheets", a.spreadsheet_id, "spreadsheet")
    tab, r0, c0, r1, c1 = anchor_range(s, a.range)
    values = parse_values(a.values)
    width = max(len(r) for r in values)
    if (r1 is not None and r0 + len(values) - 1 > r1) or \
            (c1 is not None and c0 + width - 1 > c1):
        fail("%d row(s) x %d column(s) do not fit in `%s`"
             % (len(values), width, a.range))
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            put_cell(s["tabs"][tab], r0 + i, c0 + j, v)
    trim(s["tabs"][tab])
    st.save()
    return {"status": "updated", "spreadsheet_id": s["id"],
            "updated_range": range_name(tab, r0, c0, r0 + len(values) - 1,
                                        c0 + width - 1),
            "updated_cells": sum(len(r) for r in values)}


def sheets_append(st, a):
    s = st.find("spreadsheets", a.spreadsheet_id, "spreadsheet")
    tab, r0, c0, _, c1 = anchor_range(s, a.range)
    values = parse_values(a.values)
    width = max(len(r) for r in values)
    if c1 is not None and c0 + width - 1 > c1:
        fail("rows of %d column(s) do not fit in `%s`" % (width, a.range))
    grid = s["tabs"][tab]
    span_end = c1 if c1 is not None else c0 + width - 1
    start = r0
    for r in range(r0, len(grid)):
        if any(v != "" for v in grid[r][c0:span_end + 1]):
            start = r + 1
    for i, row in enumerate(values):
        for j, v in enumerate(row):
            put_cell(grid, start + i, c0 + j, v)
    trim(grid)
    st.save()
    return {"status": "appended", "spreadsheet_id": s["id"],
            "updated_range": range_name(tab, start, c0,
                                        start + len(values) - 1,
                                        c0 + width - 1),
            "rows": len(values)}


def sheets_clear(st, a):
    s = st.find("spreadsheets", a.spreadsheet_id, "spreadsheet")
    tab, r0, c0, r1, c1 = parse_range(s, a.range)
    grid = s["tabs"][tab]
    cleared = 0
    for r in range(r0, len(grid) if r1 is None else min(r1 + 1, len(grid))):
        row = grid[r]
        for c in range(c0, len(row) if c1 is None else min(c1 + 1, len(row))):
            if row[c] != "":
                row[c] = ""
                cleared += 1
    trim(grid)
    st.save()
    return {"status": "cleared", "spreadsheet_id": s["id"],
            "range": a.range, "cleared_cells": cleared}


# --------------------------------------------------------------------------
# Docs
# --------------------------------------------------------------------------

def docs_list(st, a):
    found = sorted(st.data["documents"], key=lambda d: d["modified"],
                   reverse=True)
    return [{"id": d["id"], "title": d["title"], "modified": d["modified"],
             "characters": len(d["body"])}
            for d in found[:positive(a.max, "--max")]]


def docs_get(st, a):
    return st.find("documents", a.document_id, "document")


def docs_create(st, a):
    if not a.title.strip():
        fail("--title must not be empty")
    t = iso(now())
    d = {"id": st.new_id("doc"), "title": a.title, "created": t,
         "modified": t, "body": a.body or ""}
    st.data["documents"].append(d)
    st.save()
    return {"status": "created", "document_id": d["id"], "title": d["title"]}


def docs_append(st, a):
    d = st.find("documents", a.document_id, "document")
    if not a.text:
        fail("--text must not be empty")
    at = len(d["body"])
    sep = "" if not d["body"] or d["body"].endswith("\n") else "\n"
    d["body"] += sep + a.text + ("" if a.text.endswith("\n") else "\n")
    d["modified"] = iso(now())
    st.save()
    return {"status": "appended", "document_id": d["id"], "inserted_at": at,
            "characters": len(d["body"]) - at}


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as JSON instead of text."""

    def error(self, message):
        raise WsError("%s (try `%s --help`)" % (message, self.prog), "usage", 2)


def build_parser():
    p = Parser(prog="workspace.py",
               description="Offline Google-Workspace-style suite. "
                           "Output is JSON.")
    services = p.add_subparsers(dest="service", metavar="SERVICE",
                                parser_class=Parser)
    services.required = True

    def group(name, help_text):
        sp = services.add_parser(name, help=help_text)
        sub = sp.add_subparsers(dest="command", metavar="COMMAND",
                                parser_class=Parser)
        sub.required = True
        return sub

    def cmd(sub, name, func, help_text):
        c = sub.add_parser(name, help=help_text)
        c.set_defaults(func=func)
        return c

    mail = group("mail", "messages and labels")
    c = cmd(mail, "search", mail_search, "search messages")
    c.add_argument("query", help="words and operators: from: to: subject: "
                   "label: in: is:unread|read|starred newer_than: older_than:")
    c.add_argument("--max", type=int, default=10)
    c = cmd(mail, "get", mail_get, "read one message")
    c.add_argument("message_id")
    c.add_argument("--mark-read", action="store_true")
    c = cmd(mail, "send", mail_send, "send a message or a reply")
    c.add_argument("--to", help="comma-separated addresses")
    c.add_argument("--cc")
    c.add_argument("--subject")
    c.add_argument("--body")
    c.add_argument("--body-file")
    c.add_argument("--reply-to", metavar="MESSAGE_ID")
    c = cmd(mail, "modify", mail_modify, "add or remove labels")
    c.add_argument("message_id")
    c.add_argument("--add-labels")
    c.add_argument("--remove-labels")
    c = cmd(mail, "archive", mail_archive, "remove from the inbox")
    c.add_argument("message_id")
    c = cmd(mail, "delete", mail_delete, "move to trash, or delete")
    c.add_argument("message_id")
    c.add_argument("--permanent", action="store_true")
    labels = mail.add_parser("labels", help="labels")
    lsub = labels.add_subparsers(dest="labels_command", metavar="COMMAND",
                                 parser_class=Parser)
    lsub.required = True
    cmd(lsub, "list", mail_labels_list, "list labels with counts")
    c = cmd(lsub, "create", mail_labels_create, "create a user label")
    c.add_argument("--name", required=True)

    cal = group("calendar", "events")
    c = cmd(cal, "list", calendar_list, "list events in a time window")
    c.add_argument("--start")
    c.add_argument("--end")
    c.add_argument("--max", type=int, default=25)
    c = cmd(cal, "get", calendar_get, "read one event")
    c.add_argument("event_id")
    c = cmd(cal, "create", calendar_create, "create an event")
    c.add_argument("--title", required=True)
    c.add_argument("--start", required=True)
    c.add_argument("--end", required=True)
    c.add_argument("--location")
    c.add_argument("--attendees", help="comma-separated addresses")
    c.add_argument("--description")
    c = cmd(cal, "update", calendar_update, "change an event")
    c.add_argument("event_id")
    for flag in ("--title", "--start", "--end", "--location", "--attendees",
                 "--description"):
        c.add_argument(flag)
    c = cmd(cal, "delete", calendar_delete, "delete an event")
    c.add_argument("event_id")

    files = group("files", "files and folders")
    c = cmd(files, "list", files_list, "list files, newest first")
    c.add_argument("--folder")
    c.add_argument("--max", type=int, default=20)
    c.add_argument("--trashed", action="store_true")
    c = cmd(files, "search", files_search, "search names and text content")
    c.add_argument("query")
    c.add_argument("--max", type=int, default=10)
    c = cmd(files, "info", files_info, "show a file's metadata")
    c.add_argument("file_id")
    c = cmd(files, "download", files_download, "read a file's content")
    c.add_argument("file_id")
    c.add_argument("--output")
    c.add_argument("--force", action="store_true")
    c = cmd(files, "upload", files_upload, "store a local file")
    c.add_argument("path")
    c.add_argument("--name")
    c.add_argument("--folder")
    c = cmd(files, "create-folder", files_create_folder, "create a folder")
    c.add_argument("name")
    c.add_argument("--parent")
    c = cmd(files, "share", files_share, "grant access to a person")
    c.add_argument("file_id")
    c.add_argument("--email", required=True)
    c.add_argument("--role", choices=SHARE_ROLES, default="reader")
    c.add_argument("--notify", action="store_true")
    c = cmd(files, "delete", files_delete, "move to trash, or delete")
    c.add_argument("file_id")
    c.add_argument("--permanent", action="store_true")

    con = group("contacts", "address book")
    c = cmd(con, "list", contacts_list, "list contacts by name")
    c.add_argument("--max", type=int, default=50)
    c = cmd(con, "search", contacts_search, "search name, email, phone, org")
    c.add_argument("query")
    c.add_argument("--max", type=int, default=10)
    c = cmd(con, "create", contacts_create, "add a contact")
    c.add_argument("--name", required=True)
    c.add_argument("--email", required=True)
    c.add_argument("--phone")
    c.add_argument("--org")

    sh = group("sheets", "spreadsheets")
    c = cmd(sh, "create", sheets_create, "create a spreadsheet")
    c.add_argument("--title", required=True)
    c.add_argument("--sheet-name")
    for name, func, help_text in (("get", sheets_get, "read a range"),
                                  ("clear", sheets_clear, "clear a range")):
        c = cmd(sh, name, func, help_text)
        c.add_argument("spreadsheet_id")
        c.add_argument("range")
    for name, func, help_text in (("update", sheets_update,
                                   "write values into a range"),
                                  ("append", sheets_append,
                                   "add rows after the last filled row")):
        c = cmd(sh, name, func, help_text)
        c.add_argument("spreadsheet_id")
        c.add_argument("range")
        c.add_argument("--values", required=True, help="JSON array of rows")

    docs = group("docs", "text documents")
    c = cmd(docs, "list", docs_list, "list documents")
    c.add_argument("--max", type=int, default=20)
    c = cmd(docs, "get", docs_get, "read a document")
    c.add_argument("document_id")
    c = cmd(docs, "create", docs_create, "create a document")
    c.add_argument("--title", required=True)
    c.add_argument("--body")
    c = cmd(docs, "append", docs_append, "append text to a document")
    c.add_argument("document_id")
    c.add_argument("--text", required=True)
    return p


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
        if not os.environ.get("WORKSPACE_TOKEN", "").strip():
            raise WsError("WORKSPACE_TOKEN is not set; export it (any "
                          "non-empty value unlocks the local store)",
                          "missing_credential", 3)
        result = args.func(Store(), args)
    except WsError as e:
        json.dump({"error": {"code": e.code, "message": str(e)}}, sys.stderr)
        sys.stderr.write("\n")
        return e.status
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: still answer in JSON, never a traceback
        json.dump({"error": {"code": "internal",
                             "message": "%s: %s" % (type(e).__name__, e)}},
                  sys.stderr)
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
    sys.exit(main())
