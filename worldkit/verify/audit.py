"""The access audit: recompute what a seat may see from the policy and judge every file it was given.

Two independent judgements per file. The policy decides *authorized*; on top of it, guards that
no rule can override flag private items of another person (personal folders, mail not addressed
to the seat), cross-function confidential material reaching a seat outside the owning function
without a grant that names it, future-dated items and verifier-only items. Pure: no I/O except
`scan_dates`, which reads a tree on disk.
"""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from worldkit.access import Policy
from worldkit.access.policy import Grant
from worldkit.check_result import Item
from worldkit.materialize.manifest import Entry
from worldkit.verify.paths import SEAT_SPECIFIC, document_path, message_path, record_path
from worldkit.world.models import Document, Record, Subject, SystemKind
from worldkit.world.state import WorldState

EXPOSURES = ("private", "cross-function", "future-dated", "verifier-only", "unauthorized", "expired", "cross-seat",
             "unknown-source", "misplaced")
"""Item kinds that mean something is present that must not be."""


@dataclass
class AuditReport:
    items: list[Item] = field(default_factory=list)
    expected: int = 0
    present: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    def add(self, item: Item) -> None:
        self.items.append(item)
        self.kinds[item.kind] += 1


def _created(rec: Record) -> dt.date | None:
    events = sorted(enumerate(rec.events), key=lambda p: (p[1].date, p[0]))
    return events[0][1].date if events and events[0][1].kind == "created" else None


class Auditor:
    """Audits projections of one revision (build once per revision, audit many manifests)."""

    def __init__(self, state: WorldState, policy: Policy | None = None) -> None:
        self.state = state
        self.policy = policy or Policy(state)
        # A revision's auditor judges the same manifest several times (frozen, staged full packages):
        # each (entries, day, seat, subset) and each (day, person) is worked out once.
        self._audits: dict[tuple[Any, ...], tuple[list[tuple[str, str, str]], int, int]] = {}
        self._expected: dict[tuple[dt.date, str], dict[str, tuple[str, str]]] = {}

    @classmethod
    def shared(cls, state: WorldState) -> Auditor:
        """The auditor of `state` this process made last for that very state object (else a new
        one): its judgements are a pure function of the state, so a later audit of the same
        state (the mutation campaign's runs over an unchanged world) reuses them."""
        found = _SHARED.get(id(state))
        if found is None or found[0] is not state:
            found = _SHARED[id(state)] = (state, cls(state))
            while len(_SHARED) > _SHARED_KEEP:
                _SHARED.pop(next(iter(_SHARED)))
        return found[1]

    # -- expectations ---------------------------------------------------------------------------

    def expected(self, day: dt.date, person: str) -> dict[str, tuple[str, str]]:
        """path → (kind, id) of everything the policy grants `person` on `day`."""
        found = self._expected.get((day, person))
        if found is None:
            found = self._expected[(day, person)] = self._grants(day, person)
        return dict(found)

    def _grants(self, day: dt.date, person: str) -> dict[str, tuple[str, str]]:
        state, policy = self.state, self.policy
        out: dict[str, tuple[str, str]] = {}
        for doc in state.documents.values():
            if _doc_exists(doc, day) and policy.document(person, doc):
                out[document_path(state, doc)] = ("document", doc.id)
        for rec in state.records.values():
            created = _created(rec)
            if created is not None and created <= day and policy.record(person, rec):
                out[record_path(state, rec)] = ("record", rec.id)
        for msg in state.messages.values():
            if msg.date <= day and policy.message(person, msg):
                out[message_path(msg)] = ("message", msg.id) if msg.kind == "mail" else ("channel", msg.channel or "")
        return out

    # -- guards ---------------------------------------------------------------------------------

    def _same_function(self, person: str, dept: str | None) -> bool:
        if dept is None:
            return True
        home = self.state.people[person].department
        return bool(self.policy.dept_ancestors(home) & self.policy.dept_ancestors(dept))

    def _named(self, subject: Subject, person: str) -> bool:
        """The subject reaches `person` by naming them, a role, department or group they hold."""
        probe = subject.model_copy(update={"everyone": False, "owner": False})
        return self.policy.subject_matches(probe, person, None)

    def _explicit(self, grant: Grant, person: str, shares: list[Subject]) -> bool:
        if grant.reason == "share":
            return any(self._named(s, person) for s in shares)
        if grant.reason.startswith("rule:"):
            rule = self.state.permissions[grant.reason.split(":", 1)[1]]
            return not rule.subject.everyone and self._named(rule.subject, person)
        return grant.reason == "owner" or grant.reason.startswith("readable_by:")

    def _private_doc(self, doc: Document, person: str) -> bool:
        system = self.state.systems.get(doc.system)
        personal = system is not None and system.kind == SystemKind.personal
        if not personal or doc.owner == person:
            return False
        named = doc.readable_by is not None and person in doc.readable_by.people
        return not named and not any(person in s.persons for s in doc.shared_with)

    def judge_document(self, doc: Document, day: dt.date, person: str) -> str | None:
        """None if the seat may hold the document on `day`, else the exposure kind."""
        if doc.verifier_only:
            return "verifier-only"
        if doc.visible_from > day:
            return "future-dated"
        if doc.visible_until is not None and doc.visible_until <= day:
            return "expired"
        if self._private_doc(doc, person):
            return "private"
        grant = self.policy.document(person, doc)
        if doc.classification.value in ("confidential", "restricted") and not self._same_function(person, doc.department):
            if grant is None or not self._explicit(grant, person, doc.shared_with):
                return "cross-function"
        return None if grant else "unauthorized"

    def judge_record(self, rec: Record, day: dt.date, person: str) -> str | None:
        if rec.verifier_only:
            return "verifier-only"
        created = _created(rec)
        if created is None or created > day:
            return "future-dated"
        grant = self.policy.record(person, rec)
        if rec.classification.value in ("confidential", "restricted") and not self._same_function(person, rec.department):
            if grant is None or not self._explicit(grant, person, rec.shared_with):
                return "cross-function"
        return None if grant else "unauthorized"

    # -- the audit ------------------------------------------------------------------------------

    def audit(
        self,
        entries: Iterable[Entry],
        day: dt.date,
        seat: str,
        *,
        where: str,
        rev: str,
        subset: bool = False,
        report: AuditReport | None = None,
    ) -> AuditReport:
        """Judge every entry of one projection manifest; `subset` (curated packets) skips completeness."""
        report = report or AuditReport()
        entries = tuple(entries)
        key = (entries, day, seat, subset)
        judged = self._audits.get(key)
        if judged is None:
            judged = self._audits[key] = self._judge(entries, day, seat, subset)
        flags, expected, present = judged
        iso = day.isoformat()
        for kind, path, detail in flags:
            report.add(Item(kind=kind, path=path, rev=rev, date=iso, seat=seat, where=where, detail=detail))
        report.expected += expected
        report.present += present
        return report

    def _judge(
        self, entries: tuple[Entry, ...], day: dt.date, seat: str, subset: bool
    ) -> tuple[list[tuple[str, str, str]], int, int]:
        """(kind, path, detail) of every finding, and the expected and present counts, in report order."""
        state = self.state
        person = state.seats[seat].person
        expected = self.expected(day, person)
        present: set[str] = set()
        flags: list[tuple[str, str, str]] = []
        counts = [0, 0]

        def flag(kind: str, path: str, detail: str) -> None:
            flags.append((kind, path, detail))

        for entry in entries:
            present.add(entry.path)
            kind = self._judge_entry(entry, day, seat, person)
            if kind is not None:
                flag(kind, entry.path, f"source {entry.source} ({entry.surface})")
        for path, (kind, key) in sorted(expected.items()):
            exposure = self._judge_expected(kind, key, day, person)
            if exposure is not None:
                flag(f"policy-{exposure}", path, f"the policy grants {kind} {key} to {person}")
        if not subset:
            counts = [len(expected), len(set(expected) & present)]
            for path in sorted(set(expected) - present):
                kind, key = expected[path]
                flag("missing-authorized", path, f"{kind} {key} is granted by the policy but absent")
        return flags, counts[0], counts[1]

    def _judge_expected(self, kind: str, key: str, day: dt.date, person: str) -> str | None:
        if kind == "document":
            doc = self.state.documents[key]
            return "private" if self._private_doc(doc, person) else (
                "cross-function" if self.judge_document(doc, day, person) == "cross-function" else None)
        if kind == "record":
            return "cross-function" if self.judge_record(self.state.records[key], day, person) == "cross-function" else None
        return None

    def _judge_entry(self, entry: Entry, day: dt.date, seat: str, person: str) -> str | None:
        state = self.state
        if entry.path in SEAT_SPECIFIC:
            return None if entry.source == seat else "cross-seat"
        if entry.surface == "files":
            doc = state.documents.get(entry.source)
            if doc is None:
                return "unknown-source"
            if document_path(state, doc) != entry.path:
                return "misplaced"
            return self.judge_document(doc, day, person)
        if entry.surface == "records":
            rec = state.records.get(entry.source)
            if rec is None:
                return "unknown-source"
            if record_path(state, rec) != entry.path:
                return "misplaced"
            return self.judge_record(rec, day, person)
        if entry.surface == "mail":
            msg = state.messages.get(entry.source)
            if msg is None or msg.kind != "mail":
                return "unknown-source"
            if message_path(msg) != entry.path:
                return "misplaced"
            if msg.date > day:
                return "future-dated"
            return None if self.policy.message(person, msg) else "private"
        if entry.surface == "chat":
            group = state.groups.get(entry.source)
            if group is None or entry.path != f"chat/{group.id}.jsonl":
                return "unknown-source"
            if person not in self.policy.group_members.get(group.id, ()):
                return "unauthorized"
            dated = [m.date for m in state.messages.values() if m.kind == "chat" and m.channel == group.id]
            return None if any(d <= day for d in dated) else "future-dated"
        return "unknown-source"


_SHARED: dict[int, tuple[WorldState, Auditor]] = {}
"""id(state) → (state, its auditor): `Auditor.shared` (the state is held, so its id is not reused)."""
_SHARED_KEEP = 8


def _doc_exists(doc: Document, day: dt.date) -> bool:
    return doc.visible_from <= day and (doc.visible_until is None or day < doc.visible_until)


def scan_dates(root: Path, day: dt.date) -> list[tuple[str, str]]:
    """(path, offending date) for every record event, mail or chat line on disk dated after `day`."""
    iso = day.isoformat()
    found: list[tuple[str, str]] = []
    for path in sorted(root.glob("records/*/*.json")):
        try:
            body = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        dates = [e.get("date", "") for e in body.get("history", []) if isinstance(e, dict)]
        dates += [body.get("created") or "", body.get("updated") or ""]
        found += [(path.relative_to(root).as_posix(), d) for d in dates if isinstance(d, str) and d > iso]
    for path in sorted(root.glob("mail/*.json")):
        try:
            date = json.loads(path.read_bytes()).get("date", "")
        except (OSError, ValueError):
            continue
        if isinstance(date, str) and date > iso:
            found.append((path.relative_to(root).as_posix(), date))
    for path in sorted(root.glob("chat/*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                date = json.loads(line).get("date", "")
            except ValueError:
                continue
            if isinstance(date, str) and date > iso:
                found.append((path.relative_to(root).as_posix(), date))
    return sorted(set(found))
