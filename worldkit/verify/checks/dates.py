"""The `date-conformance` check: a dated item appears on its date, not the day before, and nothing else moves.

A probe is an item a seat can see (a record from its `created` event, a document from its
`visible_from`, a mail, the first message of a chat channel) whose date lies after the world's first
day, so that the day before it is still inside the world's history. Between that day and the one
before, every difference in the seat's tree must be explained by what the world data says took
effect that day: the items dated that day, the pages rendered from the dated world context, and the
seat's tool bundle when its set of surfaces changes (a seat's records tools appear with its first
record). A failure names the item and the world file that dates it, never worldkit's own code.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from worldkit.access import Policy
from worldkit.check_result import CheckResult, Item, result
from worldkit.verify.audit import Auditor
from worldkit.verify.build import Built
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext
from worldkit.verify.paths import document_path, message_path, record_path
from worldkit.world.models import Record
from worldkit.world.state import WorldState

_DATE_DEPENDENT = ("world.as_of", "world.records", "world.documents", "world[")
_TEMPLATE_REF = re.compile(r"""["']([^"'\s]+\.j2)["']""")
_COLLECTION = {"document": "documents", "record": "records", "message": "messages"}

Change = tuple[str, str]
"""(kind, id) of an item whose existence or state changes on a day: kind is document, record or message."""


@dataclass(frozen=True)
class Probe:
    """One dated item to test, and the seats to test it with."""

    record: Record | None
    """The record, when the item is one (its later status change is tested too)."""
    day: dt.date
    """The item's effective date (it must be absent the day before and present on it)."""
    seat: str
    """A seat entitled to the item."""
    blind: str | None
    """A seat not entitled to it (it must never see it), if the world has one."""
    path: str
    """The item's projection path."""
    label: str
    """How reports name it, e.g. `record BP-26-0104`."""
    key: Change
    """Its (kind, id)."""


def _created(rec: Record) -> dt.date | None:
    events = sorted(enumerate(rec.events), key=lambda p: (p[1].date, p[0]))
    return events[0][1].date if events and events[0][1].kind == "created" else None


def _changes_by_day(state: WorldState) -> dict[dt.date, set[Change]]:
    """Day → the items whose existence or state differs between day-1 and day (one pass over the world)."""
    by_day: dict[dt.date, set[Change]] = defaultdict(set)
    for d in state.documents.values():
        by_day[d.visible_from].add(("document", d.id))
        if d.visible_until is not None:
            by_day[d.visible_until].add(("document", d.id))
    for r in state.records.values():
        for e in r.events:
            by_day[e.date].add(("record", r.id))
    for m in state.messages.values():
        by_day[m.date].add(("message", m.id))
    return dict(by_day)


def _changes_on(state: WorldState, day: dt.date, index: dict[dt.date, set[Change]] | None = None) -> set[Change]:
    """Items whose existence or state differs between day-1 and day (from the world data alone)."""
    return set((index if index is not None else _changes_by_day(state)).get(day, ()))


def _status_as_of(rec: Record, day: dt.date) -> str | None:
    status = None
    for _, event in sorted(enumerate(rec.events), key=lambda p: (p[1].date, p[0])):
        if event.date <= day and event.status is not None:
            status = event.status
    return status


class _Chooser:
    """Picks the probes: items a seat can see, dated after the world's first day, preferring an item
    that is the only change its seat can see on its day."""

    def __init__(self, state: WorldState, policy: Policy, start: dt.date) -> None:
        self.state, self.policy, self.start = state, policy, start
        self.index = _changes_by_day(state)
        self._sees: dict[tuple[str, Change], bool] = {}

    def sees(self, seat: str, key: Change) -> bool:
        found = self._sees.get((seat, key))
        if found is None:
            person, (kind, ident) = self.state.seats[seat].person, key
            if kind == "document":
                found = self.policy.document(person, self.state.documents[ident]) is not None
            elif kind == "record":
                found = self.policy.record(person, self.state.records[ident]) is not None
            else:
                found = self.policy.message(person, self.state.messages[ident]) is not None
            self._sees[(seat, key)] = found
        return found

    def alone(self, seat: str, key: Change, day: dt.date) -> bool:
        """The item is the only change on `day` that the seat can see (verifier-only items and other
        seats' items do not count: they cannot change this seat's tree)."""
        return {c for c in self.index.get(day, ()) if self.sees(seat, c)} == {key}

    def _options(self, key: Change, day: dt.date) -> tuple[bool, str, str | None] | None:
        """(alone, the seat, an unentitled seat) for a candidate item, or None if it cannot be probed."""
        if day <= self.start:  # the day before must be inside the world's history
            return None
        seats = [s for s in sorted(self.state.seats) if self.sees(s, key)]
        if not seats:
            return None
        blind = next((s for s in sorted(self.state.seats) if s not in seats), None)
        seat = next((s for s in seats if self.alone(s, key, day)), None)
        return (seat is not None, seat or seats[0], blind)

    def record(self) -> Probe | None:
        """The record to test: prefer one whose date changes nothing else its seat sees, then approvals."""
        ranked = []
        for rec in self.state.records.values():
            day = _created(rec)
            if rec.verifier_only or day is None:
                continue
            key = ("record", rec.id)
            options = self._options(key, day)
            if options is None:
                continue
            alone, seat, blind = options
            approval = "approval" in rec.type or any(e.kind == "approval" for e in rec.events)
            probe = Probe(rec, day, seat, blind, record_path(self.state, rec), f"record {rec.id}", key)
            ranked.append(((not alone, not approval, blind is None, rec.id), probe))
        return min(ranked, key=lambda r: r[0])[1] if ranked else None

    def file_or_message(self, only: int | None = None) -> Probe | None:
        """A document (from its `visible_from`) or a mail, or the first message of a chat channel (a
        later one would only change a file that already exists). `only`: documents (0) or messages (1)."""
        state = self.state
        candidates: list[tuple[int, dt.date, str, str, Change]] = []
        if only in (None, 0):
            for doc in state.documents.values():
                if not doc.verifier_only:
                    candidates.append((0, doc.visible_from, document_path(state, doc), f"document {doc.id}",
                                       ("document", doc.id)))  # fmt: skip
        if only in (None, 1):
            first_in_channel: dict[str, tuple[dt.date, str]] = {}
            for msg in state.messages.values():
                if msg.kind == "chat" and msg.channel:
                    first_in_channel[msg.channel] = min(first_in_channel.get(msg.channel, (msg.date, msg.id)),
                                                        (msg.date, msg.id))  # fmt: skip
            for msg in state.messages.values():
                if msg.kind == "chat" and (not msg.channel or first_in_channel[msg.channel] != (msg.date, msg.id)):
                    continue
                candidates.append((1, msg.date, message_path(msg), f"{msg.kind} message {msg.id}", ("message", msg.id)))
        ranked = []
        for order, day, path, label, key in candidates:
            options = self._options(key, day)
            if options is None:
                continue
            alone, seat, blind = options
            ranked.append(((not alone, blind is None, order, path), Probe(None, day, seat, blind, path, label, key)))
        return min(ranked, key=lambda r: r[0])[1] if ranked else None


def choose_probes(state: WorldState, policy: Policy | None = None) -> list[Probe]:
    """The items date-conformance tests: a record, a document and a message, as the world has them
    (the first is the main probe). Empty when no seat-visible item is dated after the world's first day."""
    span = state.date_span()
    if span is None:
        return []
    chooser = _Chooser(state, policy or Policy(state), span[0])
    first = chooser.record() or chooser.file_or_message()
    if first is None:
        return []
    probes = [first]
    for order in (0, 1):
        more = chooser.file_or_message(order)
        if more is not None and more.path not in {p.path for p in probes}:
            probes.append(more)
    return probes


@register
class DateConformance(BaseCheck):
    id = "date-conformance"
    cost = 1
    purpose = ("Dated items (a record, a document and a message, as the world has them) are invisible before their "
               "effective date and visible on it, dated on it (mtime), the rest of the view unchanged in bytes and mtimes.")
    fix = ("Check the dates of the named item in the named world file (a document's visible_from/visible_until, a "
           "record's events, a message's date) and of whatever else the seat sees change that day. If the world "
           "data dates them as intended, the projection disagrees with the world: report it with this output.")

    def run(self, ctx: VerifyContext) -> CheckResult:
        rev = ctx.latest_rev
        state = ctx.package.revision(rev)
        policy = Policy(state)
        probes = choose_probes(state, policy)
        if not probes:
            span = state.date_span()
            where = f" (its first day is {span[0].isoformat()})" if span else ""
            return self.skip("no item a seat can see is dated after the world's first day" + where
                             + ": there is no day before an item's date inside the world's history to compare with")
        items: list[Item] = []
        auditor = Auditor(state, policy)
        # The probes' builds render every source of each probed day anew, once (a memo of this check's
        # own, shared by the seats and probes of one day); office bytes come from the office cache,
        # keyed by their freshly rendered text and date. What is tested is the timeline fold and the
        # intended dates, which the text and its date decide; that the format libraries reproduce
        # their bytes is rebuild-repeat's first fresh process's to show.
        with ctx.repeat_round():
            done = [self._probe(ctx, rev, state, auditor, probe, items) for probe in probes]
        first = probes[0]
        counts = dict(item=first.label, record=first.record.id if first.record is not None else None,
                      effective=first.day.isoformat(), seat=first.seat, unentitled_seat=first.blind,
                      status_change=done[0], probes=[f"{p.label} on {p.day.isoformat()}" for p in probes])
        fix = self.fix
        if items:
            named = sorted({i.where for i in items if i.where})
            fix = f"{fix} Files named: {'; '.join(named)}." if named else fix
        return result(self.id, self.purpose, items, fix=fix, counts=counts)

    def _probe(self, ctx: VerifyContext, rev: str, state: WorldState, auditor: Auditor, probe: Probe,
               items: list[Item]) -> str | None:  # fmt: skip
        day, seat, path, label = probe.day, probe.seat, probe.path, probe.label
        where = _origin(ctx, probe.key)
        before_day, after_day = (day - dt.timedelta(days=1)).isoformat(), day.isoformat()
        before, after = ctx.fresh_build(rev, before_day, seat), ctx.fresh_build(rev, after_day, seat)
        try:
            a, b = before.tree(), after.tree()
            if path in a:
                items.append(Item(kind="visible-before", path=path, seat=seat, date=before_day, rev=rev, where=where,
                                  detail=f"{label} is dated {after_day} but the seat sees it the day before"))
            if path not in b:
                items.append(Item(kind="invisible-after", path=path, seat=seat, date=after_day, rev=rev, where=where,
                                  detail=f"{label} is dated {after_day} but the seat does not see it that day"))
            allowed, effects = _allowed_changes(state, auditor, seat, day, path)
            for p in sorted(set(a) | set(b)):
                if a.get(p) != b.get(p) and p not in allowed:
                    items.append(Item(kind="unexpected-change", path=p, seat=seat, rev=rev, date=after_day,
                                      expected=a.get(p), actual=b.get(p), where=where,
                                      detail=f"changed between {before_day} and {after_day}, though what took effect "
                                             f"that day ({effects}) does not touch it"))  # fmt: skip
            items += _mtime_items(before, after, day, path, label, where)
            status_checked = self._status(ctx, rev, probe, where, items) if probe.record is not None else None
        finally:
            before.discard()
            after.discard()
        if probe.blind is not None:
            for when in (before_day, after_day):
                other = ctx.fresh_build(rev, when, probe.blind)
                if path in other.tree():
                    items.append(Item(kind="visible-to-unentitled", path=path, seat=probe.blind, date=when, rev=rev,
                                      where=where, detail=f"no rule grants {label} to this seat"))
                other.discard()
        return status_checked

    def _status(self, ctx: VerifyContext, rev: str, probe: Probe, where: str, items: list[Item]) -> str | None:
        """If the record later changes status (e.g. approval), the old status shows the day before."""
        rec, seat, path = probe.record, probe.seat, probe.path
        assert rec is not None
        created = _created(rec)
        later = sorted({e.date for e in rec.events if e.status is not None and created and e.date > created})
        if not later:
            return None
        day = later[0]
        want = {d: _status_as_of(rec, d) for d in (day - dt.timedelta(days=1), day)}
        for when, expected in want.items():
            built = ctx.fresh_build(rev, when.isoformat(), seat)
            try:
                actual = json.loads(built.read(path)).get("status") if (built.root / path).is_file() else None
            finally:
                built.discard()
            if actual != expected:
                items.append(Item(kind="status", path=path, seat=seat, rev=rev, date=when.isoformat(),
                                  expected=str(expected), actual=str(actual), where=where,
                                  detail=f"the status of record {rec.id} as of this day, by its events"))
        return f"{want[day - dt.timedelta(days=1)]} → {want[day]} on {day.isoformat()}"


def _origin(ctx: VerifyContext, key: Change) -> str:
    """`<world file> (<kind> <id>)`: where the world data dates the item."""
    kind, ident = key
    file = ctx.package.origin.get((_COLLECTION[kind], ident))
    if file is None:
        shown = "world.yaml (a revision's changes)"
    else:
        try:
            shown = Path(file).resolve().relative_to(Path(ctx.package.root).resolve()).as_posix()
        except ValueError:
            shown = str(file)
    return f"{shown} ({kind} {ident})"


def _mtime_items(before: Built, after: Built, day: dt.date, path: str, label: str, where: str) -> list[Item]:
    """Across the effective day: what changed is dated that day (on disk and in the manifest), what did
    not change keeps its date, and the dated item itself is dated that day."""
    items: list[Item] = []
    a, b = before.tree(), after.tree()
    sa, sb = before.stamps(), after.stamps()
    listed = {e.path: e.mtime for e in after.manifest.files}
    on_day = day.isoformat()
    for p in sorted(b):
        if sb[p] != listed.get(p, sb[p]):
            items.append(Item(kind="mtime-not-recorded", path=p, date=on_day, expected=listed[p], actual=sb[p],
                              detail="the file's mtime on disk is not the one its manifest records"))
        if p == "seat.json":
            continue
        if a.get(p) == b[p] and sa.get(p) != sb[p]:
            items.append(Item(kind="restamped", path=p, date=on_day, expected=sa.get(p), actual=sb[p], where=where,
                              detail=f"same bytes as the day before, new mtime, though only {label} took effect"))
        elif (a.get(p) != b[p] or p == path) and not sb[p].startswith(on_day):
            items.append(Item(kind="misdated", path=p, date=on_day, expected=f"{on_day}T…", actual=sb[p], where=where,
                              detail=f"changed on {on_day} but its mtime names another day"))
    return items


def _date_dependent_templates(state: WorldState) -> set[str]:
    """Templates that read the dated world context, directly or through templates they include."""
    refs = {name: set(_TEMPLATE_REF.findall(src)) for name, src in state.templates.items()}
    dependent = {name for name, src in state.templates.items() if any(m in src for m in _DATE_DEPENDENT)}
    grew = True
    while grew:
        more = {name for name, used in refs.items() if used & dependent} - dependent
        dependent |= more
        grew = bool(more)
    return dependent


def _surfaces(paths: set[str]) -> set[str]:
    """The surfaces a seat's visible set gives it (what its tool bundle lists besides communication)."""
    return {surface for surface, prefix in (("files", "files/"), ("records", "records/"))
            if any(p.startswith(prefix) for p in paths)}  # fmt: skip


def _allowed_changes(state: WorldState, auditor: Auditor, seat: str, day: dt.date, path: str) -> tuple[set[str], str]:
    """(the files that may differ between day-1 and day, a short account of what took effect that day).

    Everything the world data dates that day may change, whoever can see it; so may pages rendered
    from the dated world context, the seat card, the record relations, and the tool bundle when the
    seat's set of surfaces changes that day (its first document or record)."""
    allowed = {path, "records/_relations.json", "seat.json"}
    changes = sorted(_changes_on(state, day))
    for kind, key in changes:
        if kind == "document":
            allowed.add(document_path(state, state.documents[key]))
        elif kind == "record":
            allowed.add(record_path(state, state.records[key]))
        else:
            allowed.add(message_path(state.messages[key]))
    dependent = _date_dependent_templates(state)
    allowed |= {document_path(state, d) for d in state.documents.values() if d.template in dependent}
    person = state.seats[seat].person
    had = _surfaces(set(auditor.expected(day - dt.timedelta(days=1), person)))
    has = _surfaces(set(auditor.expected(day, person)))
    account = ", ".join(f"{kind} {key}" for kind, key in changes[:5])
    if len(changes) > 5:
        account += f" and {len(changes) - 5} more"
    if had != has:
        allowed.add("tools.json")
        account += f"; the seat's surfaces become {', '.join(sorted(has)) or 'communication only'}"
    return allowed, account
