"""Shared machinery of the PharmaCo generator: calendar, people, banks, id sequences, adders.

Pure apart from reading the world folder's own YAML (banks and the hand-written org and story
files). Every adder checks that an item's text never names a day later than the item's own date,
so no generated file can leak the future into an earlier projection.
"""

from __future__ import annotations

import calendar
import datetime as dt
import random
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

D = dt.date
HISTORY_START = D(2025, 1, 2)
TASK_DATE = D(2026, 3, 2)
WORLD_END = D(2026, 4, 30)
"""The world keeps going after the task date, so that projections at the task date prove they hide it."""

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MONTH_NAMES = tuple(calendar.month_name[1:])
_ISO = re.compile(r"\b(20\d\d)-(\d\d)-(\d\d)\b")
_DMY = re.compile(r"\b(\d{1,2}) (" + "|".join(MONTHS) + r")[a-z]* (20\d\d)\b")
_MDY = re.compile(r"\b(" + "|".join(MONTHS) + r")[a-z]* (\d{1,2}), (20\d\d)\b")
_DOT = re.compile(r"\b(\d{2})\.(\d{2})\.(20\d\d)\b")


def day_dates(text: str) -> list[dt.date]:
    """Every calendar day named in `text` (ISO, `2 Mar 2026`, `March 2, 2026`, `02.03.2026`)."""
    found: list[dt.date] = []
    if "20" not in text:
        return found
    for y, m, d in _ISO.findall(text):
        try:
            found.append(D(int(y), int(m), int(d)))
        except ValueError:
            pass
    for d, mon, y in _DMY.findall(text):
        found.append(D(int(y), MONTHS.index(mon[:3]) + 1, int(d)))
    for mon, d, y in _MDY.findall(text):
        found.append(D(int(y), MONTHS.index(mon[:3]) + 1, int(d)))
    for d, m, y in _DOT.findall(text):
        try:
            found.append(D(int(y), int(m), int(d)))
        except ValueError:
            pass
    return found


def _strings(value: Any):
    if isinstance(value, str):
        if len(value) >= 8:
            yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def iso(day: dt.date) -> str:
    return day.isoformat()


def long(day: dt.date) -> str:
    return f"{day.day:02d} {MONTHS[day.month - 1]} {day.year}"


def add_months(day: dt.date, months: int) -> dt.date:
    y, m = divmod(day.month - 1 + months, 12)
    year, month = day.year + y, m + 1
    return D(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def workday(day: dt.date) -> dt.date:
    """The day itself, or the next Monday if it falls on a weekend."""
    while day.weekday() >= 5:
        day += dt.timedelta(days=1)
    return day


def add_workdays(day: dt.date, n: int) -> dt.date:
    step = 1 if n >= 0 else -1
    while n:
        day += dt.timedelta(days=step)
        if day.weekday() < 5:
            n -= step
    return day


def month_starts(start: dt.date, end: dt.date) -> list[dt.date]:
    out, cur = [], D(start.year, start.month, 1)
    while cur <= end:
        out.append(cur)
        cur = add_months(cur, 1)
    return out


def weekdays(start: dt.date, end: dt.date, weekday: int, every: int = 1) -> list[dt.date]:
    """Every `every`-th given weekday (0 = Monday) from start to end inclusive."""
    cur = start + dt.timedelta(days=(weekday - start.weekday()) % 7)
    out = []
    while cur <= end:
        out.append(cur)
        cur += dt.timedelta(days=7 * every)
    return out


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")


class FutureText(ValueError):
    """A generated item names a day after its own date."""



OFFICE_FORMATS = {
    # Word: controlled documents and forms as their owners edit them
    "sop/sop.md.j2": ".docx",
    "sop/form.md.j2": ".docx",
    "lab/test_method.md.j2": ".docx",
    "lab/specification.md.j2": ".docx",
    "qms/impact_assessment.md.j2": ".docx",
    "site/policy.md.j2": ".docx",
    "meetings/qc_lab.md.j2": ".docx",
    # PDF: approved, signed or received documents
    "sop/sop_legacy.md.j2": ".pdf",
    "stability/protocol.md.j2": ".pdf",
    "stability/interim_report.md.j2": ".pdf",
    "stability/annual_report.md.j2": ".pdf",
    "eng/requal_report.md.j2": ".pdf",
    "eng/cal_vendor.md.j2": ".pdf",
    "mfg/batch_summary_vial.md.j2": ".pdf",
    "mfg/batch_summary_lyo.md.j2": ".pdf",
    "site/apqr.md.j2": ".pdf",
    "site/em_summary.md.j2": ".pdf",
    "site/newsletter.md.j2": ".pdf",
    "site/safety_bulletin.md.j2": ".pdf",
    # Excel: exports and registers
    "stability/results_export.csv.j2": ".xlsx",
    "supplier/asl.csv.j2": ".xlsx",
    "eng/equipment_register.csv.j2": ".xlsx",
    "site/phonelist.csv.j2": ".xlsx",
}
"""Templates whose documents are office files: the path's extension is the format (worldkit.render.office)."""

class Context:
    """What every generator part shares."""

    def __init__(self, world: Any, root: Path, seed: int) -> None:
        self.world = world
        self.root = root
        self.seed = seed
        self.products = {p.id: p for p in world.company.products}
        self.documents: list[dict[str, Any]] = []
        self.records: list[dict[str, Any]] = []
        self.messages: list[dict[str, Any]] = []
        self._paths: set[str] = set()
        self._banks: dict[str, Any] = {}
        self._tokens = 0
        self._pending: list[tuple[str, int, int, dt.date, int, str]] = []
        self.shared: dict[str, Any] = {}
        """Facts one part hands to a later one (SOP index, batches, change controls…)."""
        self._load_hand_data()

    # -- inputs ----------------------------------------------------------------------------------

    def rng(self, name: str) -> random.Random:
        return random.Random(f"{self.seed}:{name}")

    def bank(self, name: str) -> Any:
        if name not in self._banks:
            with open(self.root / "gen" / "banks" / f"{name}.yaml", encoding="utf-8") as handle:
                self._banks[name] = yaml.load(handle, Loader=_Loader)
        return self._banks[name]

    def _load_hand_data(self) -> None:
        self.people: dict[str, dict[str, Any]] = {}
        self.hand_ids: set[str] = set()
        self.hand_records: dict[str, dict[str, Any]] = {}
        self.hand_documents: dict[str, dict[str, Any]] = {}
        reserved = re.compile(r"\b[A-Z]{2,5}-20\d\d-\d{3,4}\b")
        for path in sorted((self.root / "data").rglob("*.yaml")):
            raw = path.read_text(encoding="utf-8")
            # numbers the hand-written data mentions (certificates, reports…) stay free for it
            self.hand_ids.update(reserved.findall(raw))
            content = yaml.load(raw, Loader=_Loader) or {}
            for person in content.get("people", []):
                self.people[person["id"]] = person
            for key in ("documents", "records", "messages"):
                for item in content.get(key, []):
                    self.hand_ids.add(item["id"])
                    if key == "records":
                        self.hand_records[item["id"]] = item
                    if key == "documents":
                        self.hand_documents[item["id"]] = item
            for doc in content.get("documents", []):
                self._paths.add(f"{doc['system']}/{doc['path']}")
        self.employees = sorted(p for p, v in self.people.items() if v["department"] != "EXT")
        self._dept_parent = {d.id: d.parent for d in self.world.company.departments}
        self._dept_names = {d.id: d.name for d in self.world.company.departments}

    # -- people ----------------------------------------------------------------------------------

    def dept_of(self, pid: str) -> str:
        return self.people[pid]["department"]

    def in_dept(self, pid: str, dept: str) -> bool:
        cur: str | None = self.dept_of(pid)
        while cur is not None:
            if cur == dept:
                return True
            cur = self._dept_parent.get(cur)
        return False

    def members(self, *depts: str) -> list[str]:
        return [p for p in self.employees if any(self.in_dept(p, d) for d in depts)]

    def dept_name(self, dept: str) -> str:
        return self._dept_names[dept]

    def name(self, pid: str) -> str:
        return self.people[pid]["name"]

    def title(self, pid: str) -> str:
        return self.people[pid]["title"]

    def first(self, pid: str) -> str:
        return self.people[pid]["name"].split()[0]

    def initials(self, pid: str) -> str:
        return "".join(part[0] for part in self.people[pid]["name"].split()).upper()

    # -- ids -------------------------------------------------------------------------------------

    def next_id(self, prefix: str, year: int, width: int = 4, day: dt.date | None = None) -> str:
        """A placeholder for the next `PREFIX-YEAR-NNNN`; `result()` numbers them in date order.

        Numbers used by the hand-written data are skipped, so a generated record never takes a
        number a story relies on, and sequence numbers rise with dates as in a real system.
        """
        self._tokens += 1
        token = f"{prefix}-{year}-T{self._tokens:05d}"
        self._pending.append((prefix, year, width, day or D(year, 1, 1), self._tokens, token))
        return token

    def _numbering(self) -> dict[str, str]:
        groups: dict[tuple[str, int], list[tuple]] = defaultdict(list)
        for item in self._pending:
            groups[(item[0], item[1])].append(item)
        mapping: dict[str, str] = {}
        for (prefix, year), items in sorted(groups.items()):
            n = 0
            for _, _, width, _, _, token in sorted(items, key=lambda i: (i[3], i[4])):
                while True:
                    n += 1
                    candidate = f"{prefix}-{year}-{n:0{width}d}"
                    if candidate not in self.hand_ids:
                        break
                mapping[token] = candidate
        return mapping

    # -- adders ----------------------------------------------------------------------------------

    def _check_dates(self, kind: str, ident: str, day: dt.date, payload: Any) -> None:
        for text in _strings(payload):
            for named in day_dates(text):
                if named > day:
                    raise FutureText(f"{kind} {ident} (dated {day}) names {named}: {text[:120]!r}")

    def doc(self, *, id: str, system: str, path: str, visible_from: dt.date, title: str, template: str | None = None,
            vars: dict[str, Any] | None = None, text: str | None = None, department: str | None = None,
            owner: str | None = None, classification: str = "internal", superseded_by: str | None = None,
            visible_until: dt.date | None = None) -> dict[str, Any]:
        if template in OFFICE_FORMATS:
            path = path.rsplit(".", 1)[0] + OFFICE_FORMATS[template]
        key = f"{system}/{path}"
        if any(part != part.strip() or part.endswith(".") for part in path.split("/")):
            raise ValueError(f"path segment of {path!r} starts/ends with a space or ends with a dot (tools refuse it)")
        if key in self._paths:
            raise ValueError(f"duplicate generated path {key}")
        self._paths.add(key)
        self._check_dates("document", id, visible_from, [vars or {}, text or "", title, path])
        item: dict[str, Any] = {"id": id, "system": system, "path": path, "title": title,
                                "visible_from": visible_from, "classification": classification}
        if template is not None:
            item["template"] = template
            item["vars"] = vars or {}
        else:
            item["text"] = text
        for k, v in (("department", department), ("owner", owner), ("superseded_by", superseded_by),
                     ("visible_until", visible_until)):
            if v is not None:
                item[k] = v
        self.documents.append(item)
        return item

    def record(self, *, id: str, system: str, type: str, title: str, events: list[dict[str, Any]],
               department: str | None = None, owner: str | None = None, classification: str = "internal",
               links: list[str] | None = None) -> dict[str, Any]:
        events = sorted(events, key=lambda e: e["date"])  # stable: same-day events keep their order
        for event in events:
            # field values may hold planned dates (a CAPA's due date); free text may not look ahead
            self._check_dates("record", id, event["date"], [event.get("note", "")])
        item: dict[str, Any] = {"id": id, "system": system, "type": type, "title": title, "events": events,
                                "classification": classification}
        if department:
            item["department"] = department
        if owner:
            item["owner"] = owner
        if links:
            item["links"] = sorted(set(links))
        self.records.append(item)
        return item

    def mail(self, *, id: str, date: dt.date, sender: str, to: list[str], subject: str, body: str,
             time: str = "09:00", cc: list[str] | None = None, thread: str | None = None,
             classification: str = "internal") -> dict[str, Any]:
        self._check_dates("mail", id, date, [subject, body])
        item: dict[str, Any] = {"id": id, "kind": "mail", "date": date, "time": time, "sender": sender,
                                "to": to, "subject": subject, "body": body, "classification": classification}
        if cc:
            item["cc"] = cc
        if thread:
            item["thread"] = thread
        self.messages.append(item)
        return item

    def chat(self, *, id: str, date: dt.date, sender: str, channel: str, body: str, time: str = "09:00",
             thread: str | None = None) -> dict[str, Any]:
        self._check_dates("chat", id, date, [body])
        item: dict[str, Any] = {"id": id, "kind": "chat", "date": date, "time": time, "sender": sender,
                                "channel": channel, "body": body}
        if thread:
            item["thread"] = thread
        self.messages.append(item)
        return item

    def result(self) -> dict[str, list[dict[str, Any]]]:
        mapping = self._numbering()
        token = re.compile(r"\b[A-Z]+-20\d\d-T\d{5}\b")

        def sub(value: Any) -> Any:
            if isinstance(value, str):
                return token.sub(lambda m: mapping[m.group(0)], value) if "-T" in value else value
            if isinstance(value, dict):
                return {k: sub(v) for k, v in value.items()}
            if isinstance(value, list):
                return [sub(v) for v in value]
            return value

        return {"documents": sub(self.documents), "records": sub(self.records), "messages": sub(self.messages)}


def pick(rng: random.Random, seq: Any) -> Any:
    return seq[rng.randrange(len(seq))]


def notes(ctx: Context, kind: str, ident: str, low: int = 1, high: int = 3) -> list[str]:
    """`low`–`high` distinct notes of `kind` (gen/banks/variety.yaml) for the item `ident`, in bank order.

    Drawn from the item's own `random.Random`, so adding notes never reshuffles anything else.
    """
    bank = ctx.bank("variety")[kind]
    rng = ctx.rng(f"notes:{kind}:{ident}")
    chosen = rng.sample(range(len(bank)), k=min(len(bank), rng.randint(low, high)))
    return [bank[i] for i in sorted(chosen)]


def clock(rng: random.Random, start: int = 8, end: int = 17) -> str:
    return f"{rng.randint(start, end - 1):02d}:{rng.choice((0, 5, 10, 12, 15, 20, 25, 30, 34, 40, 45, 48, 50, 55)):02d}"


def fill(template: str, **slots: Any) -> str:
    """`str.format` that names the missing slot in its error."""
    try:
        return template.format(**slots)
    except KeyError as missing:
        raise KeyError(f"phrase {template!r} needs slot {missing}") from None


# -- deviations and CAPAs (shared by the batch and quality parts) -------------------------------

ORIGINATORS = {
    "QC-MICRO": ("pkaur", "jmurray", "dsilva"), "MFG-FILL": ("ajohnson", "lmartin", "nkowalczyk", "hwright"),
    "MFG-FORM": ("mhughes", "ipopescu", "kobrien", "sahmed"), "MFG": ("abaker", "lmartin", "mhughes"),
    "QC-STAB": ("jkim", "aholm"), "QC-CHEM": ("efischer", "rsingh", "mlopez"), "QC": ("tnguyen", "mlopez", "efischer"),
    "SC": ("bnovak", "jmoore", "creyes"), "ENG": ("tmensah", "rbarnes", "gduarte"), "QA-COMP": ("jpatel", "rokonkwo"),
}
OWNERS = {
    "QC-MICRO": "azimmermann", "MFG-FILL": "lmartin", "MFG-FORM": "mhughes", "MFG": "rcallahan", "QC-STAB": "aholm",
    "QC-CHEM": "mlopez", "QC": "gokafor", "SC": "bnovak", "ENG": "tmensah", "QA-COMP": "jpatel",
}


def raise_deviation(ctx: Context, rng: random.Random, pattern: dict[str, Any], day: dt.date, slots: dict[str, Any],
                    batch: str | None = None, product: str | None = None, force_major: bool | None = None) -> dict[str, Any]:
    """One deviation record (and its CAPA when major) following the pattern; returns a summary."""
    dev_id = ctx.next_id("DEV", day.year, day=day)
    variant = rng.randrange(len(pattern["descriptions"]))
    title = fill(pattern["titles"][variant % len(pattern["titles"])], **slots)
    description = fill(pattern["descriptions"][variant], **slots)
    root = fill(pattern["root_causes"][variant % len(pattern["root_causes"])], **slots)
    impact = fill(pattern["impact"], **slots)
    major = force_major if force_major is not None else rng.random() < pattern["major"]
    dept = pattern["dept"]
    originator = pick(rng, ORIGINATORS[dept])
    owner = OWNERS[dept]
    qa = pick(rng, ("gmorris", "gmorris", "pdoyle", "lchen"))
    events: list[dict[str, Any]] = [{
        "date": day, "kind": "created", "by": originator, "status": "open",
        "fields": {"description": description, "area": pattern["area"], "occurred": day.isoformat(),
                   "batch": batch, "product": product, "immediate_action": pattern.get("immediate", "Area supervisor and QA informed the same day; affected material, if any, placed on hold.")},
    }]
    triage = add_workdays(day, rng.randint(1, 2))
    events.append({"date": triage, "kind": "update", "by": qa, "status": "under investigation",
                   "fields": {"classification": "major" if major else "minor", "investigation_owner": owner,
                              "due_date": add_workdays(day, 30 if major else 20).isoformat()}})
    rc_day = add_workdays(triage, rng.randint(5, 22 if major else 14))
    capa_id = None
    if rc_day <= WORLD_END:
        events.append({"date": rc_day, "kind": "update", "by": owner,
                       "fields": {"root_cause": root, "product_impact": impact}})
    if major and rc_day <= WORLD_END:
        capa_id = ctx.next_id("CAPA", rc_day.year, day=rc_day)
        _capa(ctx, rng, capa_id, dev_id, rc_day, owner, [fill(a, **slots) for a in pattern["actions"]], dept, title)
    pend = add_workdays(rc_day, rng.randint(1, 4))
    close = add_workdays(pend, rng.randint(1, 7))
    if pend <= WORLD_END:
        events.append({"date": pend, "kind": "status", "by": owner, "status": "pending QA approval"})
    if close <= WORLD_END:
        events.append({"date": close, "kind": "approval", "by": qa, "status": "closed",
                       "fields": {"capa": capa_id or "not required",
                                  "closure_summary": f"Root cause identified; {'CAPA ' + capa_id + ' raised' if capa_id else 'no CAPA required (isolated event)'}."}})
    links = [capa_id] if capa_id else []
    ctx.record(id=dev_id, system="qms", type="deviation", title=title, events=events, department=dept, owner=owner,
               links=links)
    summary = {"id": dev_id, "title": title, "date": day, "major": major, "dept": dept, "batch": batch,
               "capa": capa_id, "closed": close if close <= WORLD_END else None, "root_cause": root, "pattern": pattern["key"]}
    ctx.shared.setdefault("deviations", []).append(summary)
    return summary


def _capa(ctx: Context, rng: random.Random, capa_id: str, source: str, day: dt.date, owner: str, actions: list[str],
          dept: str, title: str) -> None:
    events: list[dict[str, Any]] = [{"date": day, "kind": "created", "by": owner, "status": "open",
                                     "fields": {"source": source, "problem": title, "actions": actions,
                                                "due_date": add_workdays(day, 60).isoformat()}}]
    steps = [(rng.randint(2, 6), "approval", "in implementation", "gmorris", "Action plan approved."),
             (rng.randint(15, 45), "status", "implemented", owner, "All actions completed; evidence attached."),
             (rng.randint(30, 70), "status", "effectiveness check", "gmorris", "Effectiveness check started."),
             (rng.randint(5, 20), "approval", "closed", "gmorris", "Effective: no recurrence in the monitoring period.")]
    cur = day
    for delay, kind, status, by, note in steps:
        cur = add_workdays(cur, delay)
        if cur > WORLD_END:
            break
        events.append({"date": cur, "kind": kind, "by": by, "status": status, "note": note})
    ctx.record(id=capa_id, system="qms", type="capa", title=f"CAPA for {source}: {title}", events=events,
               department=dept, owner=owner, links=[source])
    ctx.shared.setdefault("capas", []).append({"id": capa_id, "source": source, "date": day, "title": title})
