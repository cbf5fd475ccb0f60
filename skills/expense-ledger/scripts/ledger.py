#!/usr/bin/env python3
"""ledger.py - a single-currency expense ledger kept in one JSON file.

Usage: ledger.py payments COMMAND [ARGS]     (see --help, or SKILL.md)

Commands: add, list, search, edit, delete, summary, export, import.

Environment:
  LEDGER_CURRENCY      required; ISO 4217 code of every amount (EUR, USD, JPY...).
                       A ledger keeps the currency it was created with and
                       refuses to mix in another one.
  EXPENSE_LEDGER_FILE  optional; the ledger file (default:
                       ${HERMES_HOME:-~/.hermes}/data/expense-ledger.json)

Output: JSON on stdout. Errors: {"error": {"code", "message"}} on stderr and
exit status 1 (bad value, unknown id), 2 (bad usage) or 3 (LEDGER_CURRENCY
missing or different from the ledger's).

Amounts are stored as integers in the currency's minor unit (cents), so sums
are exact. Standard library only. License: MIT.
"""

import argparse
import csv
import io
import json
import os
import re
import sys
import tempfile
from datetime import date, datetime
from decimal import Decimal, InvalidOperation

# Minor-unit digits for currencies that do not use two.
MINOR_DIGITS = {"JPY": 0, "KRW": 0, "VND": 0, "CLP": 0, "ISK": 0,
                "BHD": 3, "KWD": 3, "OMR": 3, "JOD": 3, "TND": 3}
CATEGORY_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CSV_FIELDS = ["date", "amount", "category", "note"]


class LedgerError(Exception):
    def __init__(self, message, code="invalid_input", status=1):
        super().__init__(message)
        self.code = code
        self.status = status


def fail(message, code="invalid_input"):
    raise LedgerError(message, code)


# --------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------

def currency():
    cur = os.environ.get("LEDGER_CURRENCY", "").strip().upper()
    if not cur:
        raise LedgerError("LEDGER_CURRENCY is not set; export the ISO 4217 code "
                          "of your amounts, e.g. LEDGER_CURRENCY=EUR",
                          "missing_currency", 3)
    if not re.fullmatch(r"[A-Z]{3}", cur):
        raise LedgerError("LEDGER_CURRENCY=%s is not an ISO 4217 code "
                          "(three letters, e.g. EUR)" % cur, "missing_currency", 3)
    return cur


def to_minor(text, cur, what="--amount"):
    digits = MINOR_DIGITS.get(cur, 2)
    try:
        value = Decimal(str(text).strip())
    except InvalidOperation:
        fail("%s: `%s` is not a number" % (what, text))
    if not value.is_finite() or value <= 0:
        fail("%s must be a positive amount" % what)
    minor = value.scaleb(digits)
    if minor != minor.to_integral_value():
        fail("%s: %s has more than %d decimal(s) for %s" % (what, text, digits, cur))
    return int(minor)


def fmt(minor, cur):
    digits = MINOR_DIGITS.get(cur, 2)
    return str(Decimal(minor).scaleb(-digits).quantize(Decimal(1).scaleb(-digits)))


def parse_date(text, what="--date"):
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d").date().isoformat()
    except ValueError:
        fail("%s: `%s` is not a date like 2026-11-28" % (what, text))


def parse_month(text):
    if not re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", text.strip()):
        fail("--month: `%s` is not a month like 2026-11" % text)
    return text.strip()


def parse_category(text, what="--category"):
    c = text.strip().lower()
    if not CATEGORY_RE.match(c):
        fail("%s: `%s` must be lowercase words joined by hyphens, "
             "e.g. groceries or eating-out" % (what, text))
    return c


# --------------------------------------------------------------------------
# Store
# --------------------------------------------------------------------------

def ledger_path():
    explicit = os.environ.get("EXPENSE_LEDGER_FILE")
    if explicit:
        return os.path.expanduser(explicit)
    home = os.environ.get("HERMES_HOME") or os.path.join(os.path.expanduser("~"), ".hermes")
    return os.path.join(home, "data", "expense-ledger.json")


class Ledger:
    def __init__(self):
        self.path = ledger_path()
        self.currency = currency()
        if os.path.exists(self.path):
            try:
                with open(self.path, encoding="utf-8") as f:
                    self.data = json.load(f)
            except (OSError, ValueError) as e:
                fail("cannot read %s (%s); move it aside to start a new ledger"
                     % (self.path, e), "store_unreadable")
            if not isinstance(self.data, dict) or self.data.get("format") != 1:
                fail("%s is not an expense ledger (format 1)" % self.path,
                     "store_unreadable")
            if self.data["currency"] != self.currency:
                raise LedgerError(
                    "this ledger is in %s but LEDGER_CURRENCY=%s; amounts in two "
                    "currencies cannot be summed, so use another EXPENSE_LEDGER_FILE"
                    % (self.data["currency"], self.currency), "currency_mismatch", 3)
        else:
            self.data = {"format": 1, "currency": self.currency, "next_id": 1,
                         "payments": []}

    def save(self):
        folder = os.path.dirname(self.path) or "."
        try:
            os.makedirs(folder, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".ledger-", dir=folder)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.data, f, indent=1, ensure_ascii=False)
                f.write("\n")
            os.replace(tmp, self.path)
        except OSError as e:
            fail("cannot write %s: %s" % (self.path, e), "store_unwritable")

    def add(self, day, minor, category, note):
        p = {"id": "p-%04d" % self.data["next_id"], "date": day, "amount": minor,
             "category": category, "note": note}
        self.data["next_id"] += 1
        self.data["payments"].append(p)
        return p

    def find(self, payment_id):
        for p in self.data["payments"]:
            if p["id"] == payment_id:
                return p
        fail("no payment with id `%s`" % payment_id, "not_found")

    def show(self, p):
        out = dict(p)
        out["amount"] = fmt(p["amount"], self.currency)
        out["currency"] = self.currency
        return out

    def sorted(self, payments):
        return sorted(payments, key=lambda p: (p["date"], p["id"]), reverse=True)


def positive(n, flag):
    if n < 1:
        fail("%s must be at least 1" % flag)
    return n


# --------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------

def cmd_add(lg, a):
    p = lg.add(parse_date(a.date) if a.date else date.today().isoformat(),
               to_minor(a.amount, lg.currency), parse_category(a.category),
               (a.note or "").strip())
    lg.save()
    return {"status": "added", "payment": lg.show(p)}


def selected(lg, a):
    found = lg.data["payments"]
    if getattr(a, "month", None):
        month = parse_month(a.month)
        found = [p for p in found if p["date"].startswith(month + "-")]
    if getattr(a, "category", None):
        cat = parse_category(a.category)
        found = [p for p in found if p["category"] == cat]
    return lg.sorted(found)


def cmd_list(lg, a):
    found = selected(lg, a)
    return {"currency": lg.currency, "count": len(found),
            "total": fmt(sum(p["amount"] for p in found), lg.currency),
            "payments": [lg.show(p) for p in found[:positive(a.max, "--max")]]}


def cmd_search(lg, a):
    q = a.query.strip().lower()
    if not q:
        fail("the query must not be empty")
    found = [p for p in lg.sorted(lg.data["payments"])
             if q in p["note"].lower() or q in p["category"]]
    return [lg.show(p) for p in found[:positive(a.max, "--max")]]


def cmd_edit(lg, a):
    p = lg.find(a.payment_id)
    changes = {}
    if a.amount is not None:
        changes["amount"] = to_minor(a.amount, lg.currency)
    if a.date is not None:
        changes["date"] = parse_date(a.date)
    if a.category is not None:
        changes["category"] = parse_category(a.category)
    if a.note is not None:
        changes["note"] = a.note.strip()
    if not changes:
        fail("nothing to change: give --amount, --date, --category or --note")
    p.update(changes)
    lg.save()
    return {"status": "updated", "payment": lg.show(p)}


def cmd_delete(lg, a):
    p = lg.find(a.payment_id)
    lg.data["payments"].remove(p)
    lg.save()
    return {"status": "deleted", "payment": lg.show(p)}


def cmd_summary(lg, a):
    if a.month and a.year:
        fail("give --month or --year, not both")
    if a.year:
        if not re.fullmatch(r"\d{4}", a.year):
            fail("--year: `%s` is not a year like 2026" % a.year)
        period = a.year
    else:
        period = parse_month(a.month) if a.month else date.today().strftime("%Y-%m")
    found = [p for p in lg.data["payments"] if p["date"].startswith(period + "-")]
    total = sum(p["amount"] for p in found)
    groups = {}
    for p in found:
        key = p["category"] if a.by == "category" else p["date"][:7]
        g = groups.setdefault(key, [0, 0])
        g[0] += p["amount"]
        g[1] += 1
    rows = sorted(groups.items(), key=lambda kv: (-kv[1][0], kv[0]) if a.by == "category"
                  else (kv[0],))
    return {"period": period, "currency": lg.currency, "count": len(found),
            "total": fmt(total, lg.currency),
            "by_" + a.by: [{a.by: k, "total": fmt(v[0], lg.currency), "count": v[1],
                            "share": round(100.0 * v[0] / total, 1) if total else 0.0}
                           for k, v in rows]}


def render(lg, payments, form):
    payments = sorted(payments, key=lambda p: (p["date"], p["id"]))
    if form == "json":
        return json.dumps([lg.show(p) for p in payments], indent=1, ensure_ascii=False) + "\n"
    if form == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["id"] + CSV_FIELDS + ["currency"])
        for p in payments:
            w.writerow([p["id"], p["date"], fmt(p["amount"], lg.currency), p["category"],
                        p["note"], lg.currency])
        return buf.getvalue()
    # Plain-text accounting journal (ledger-cli / hledger).
    out = []
    for p in payments:
        head = "%s %s" % (p["date"], p["note"] or p["category"])
        out.append("%s  ; id:%s\n    expenses:%s    %s %s\n    assets:checking\n"
                   % (head, p["id"], p["category"], fmt(p["amount"], lg.currency), lg.currency))
    return "\n".join(out)


def cmd_export(lg, a):
    found = selected(lg, a)
    text = render(lg, found, a.format)
    if not a.output:
        return {"format": a.format, "count": len(found), "content": text}
    path = os.path.expanduser(a.output)
    if os.path.exists(path) and not a.force:
        fail("`%s` exists; pass --force to overwrite it" % path, "conflict")
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(text)
    except OSError as e:
        fail("cannot write `%s`: %s" % (path, e))
    return {"status": "exported", "format": a.format, "count": len(found),
            "path": os.path.abspath(path)}


def cmd_import(lg, a):
    try:
        with open(os.path.expanduser(a.csv_path), encoding="utf-8-sig", newline="") as f:
            rows = list(csv.DictReader(f))
            header = rows and list(rows[0].keys())
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail("cannot read `%s`: %s" % (a.csv_path, e))
    if not rows:
        fail("`%s` has no rows; expected a header line %s" % (a.csv_path, ",".join(CSV_FIELDS)))
    missing = [c for c in CSV_FIELDS[:3] if c not in header]
    if missing:
        fail("`%s` lacks column(s) %s; expected %s" % (a.csv_path, ", ".join(missing),
                                                      ",".join(CSV_FIELDS)))
    parsed, errors = [], []
    for line, row in enumerate(rows, start=2):
        try:
            if row.get("currency") and row["currency"].strip().upper() != lg.currency:
                fail("currency %s is not the ledger's %s" % (row["currency"], lg.currency))
            parsed.append((parse_date(row["date"] or "", "date"),
                           to_minor(row["amount"] or "", lg.currency, "amount"),
                           parse_category(row["category"] or "", "category"),
                           (row.get("note") or "").strip()))
        except LedgerError as e:
            errors.append("line %d: %s" % (line, e))
    if errors:
        fail("nothing imported; fix these rows first: " + "; ".join(errors[:10])
             + ("; and %d more" % (len(errors) - 10) if len(errors) > 10 else ""))
    if a.dry_run:
        return {"status": "checked", "would_add": len(parsed),
                "total": fmt(sum(r[1] for r in parsed), lg.currency)}
    added = [lg.add(*r) for r in parsed]
    lg.save()
    return {"status": "imported", "added": len(added),
            "first_id": added[0]["id"], "last_id": added[-1]["id"],
            "total": fmt(sum(p["amount"] for p in added), lg.currency)}


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise LedgerError("%s (try `%s --help`)" % (message, self.prog), "usage", 2)


def build_parser():
    p = Parser(prog="ledger.py", description="Single-currency expense ledger. Output is JSON.")
    top = p.add_subparsers(dest="group", metavar="payments", parser_class=Parser)
    top.required = True
    pay = top.add_parser("payments", help="record and report payments")
    sub = pay.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True

    def cmd(name, func, help_text):
        c = sub.add_parser(name, help=help_text)
        c.set_defaults(func=func)
        return c

    c = cmd("add", cmd_add, "record a payment")
    c.add_argument("--amount", required=True)
    c.add_argument("--category", required=True)
    c.add_argument("--date", help="YYYY-MM-DD, default today")
    c.add_argument("--note")
    c = cmd("list", cmd_list, "list payments, newest first")
    c.add_argument("--month")
    c.add_argument("--category")
    c.add_argument("--max", type=int, default=50)
    c = cmd("search", cmd_search, "search notes and categories")
    c.add_argument("query")
    c.add_argument("--max", type=int, default=20)
    c = cmd("edit", cmd_edit, "change a payment")
    c.add_argument("payment_id")
    for flag in ("--amount", "--date", "--category", "--note"):
        c.add_argument(flag)
    c = cmd("delete", cmd_delete, "remove a payment")
    c.add_argument("payment_id")
    c = cmd("summary", cmd_summary, "totals for a month or a year")
    c.add_argument("--month")
    c.add_argument("--year")
    c.add_argument("--by", choices=["category", "month"], default="category")
    c = cmd("export", cmd_export, "write payments as csv, json or a ledger journal")
    c.add_argument("--format", choices=["csv", "json", "ledger"], default="csv")
    c.add_argument("--output")
    c.add_argument("--month")
    c.add_argument("--category")
    c.add_argument("--force", action="store_true")
    c = cmd("import", cmd_import, "add payments from a CSV file")
    c.add_argument("csv_path")
    c.add_argument("--dry-run", action="store_true")
    return p


def main(argv=None):
    try:
        args = build_parser().parse_args(argv)
        result = args.func(Ledger(), args)
    except LedgerError as e:
        json.dump({"error": {"code": e.code, "message": str(e)}}, sys.stderr)
        sys.stderr.write("\n")
        return e.status
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug: still answer in JSON, never a traceback
        json.dump({"error": {"code": "internal",
                             "message": "%s: %s" % (type(e).__name__, e)}}, sys.stderr)
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
