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
    """Every calendar day named in `text` (ISO, `2 Mar 2026`, `March 2, 2026`)."""
    found: list[dt.date] = []
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
        self._seq: dict[tuple[str, int], int] = defaultdict(int)
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
        for path in sorted((self.root / "data").rglob("*.yaml")):
            with open(path, encoding="utf-8") as handle:
                content = yaml.load(handle, Loader=_Loader) or {}
            for person in content.get("people", []):
                self.people[person["id"]] = person
            for key in ("documents", "records", "messages"):
                for item in content.get(key, []):
                    self.hand_ids.add(item["id"])
                    if key == "records":
                        self.hand_records[item["id"]] = item
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

    def next_id(self, prefix: str, year: int, width: int = 4) -> str:
        """The next free `PREFIX-YEAR-NNNN`, skipping numbers the hand-written data uses."""
        while True:
            self._seq[(prefix, year)] += 1
            candidate = f"{prefix}-{year}-{self._seq[(prefix, year)]:0{width}d}"
            if candidate not in self.hand_ids:
                return candidate

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
        key = f"{system}/{path}"
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
        return {"documents": self.documents, "records": self.records, "messages": self.messages}


def pick(rng: random.Random, seq: Any) -> Any:
    return seq[rng.randrange(len(seq))]


def clock(rng: random.Random, start: int = 8, end: int = 17) -> str:
    return f"{rng.randint(start, end - 1):02d}:{rng.choice((0, 5, 10, 12, 15, 20, 25, 30, 34, 40, 45, 48, 50, 55)):02d}"


def fill(template: str, **slots: Any) -> str:
    """`str.format` that names the missing slot in its error."""
    try:
        return template.format(**slots)
    except KeyError as missing:
        raise KeyError(f"phrase {template!r} needs slot {missing}") from None
