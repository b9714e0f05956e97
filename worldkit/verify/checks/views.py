"""Checks across views: seats see different things, one source has one byte string, dates behave."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import defaultdict

from worldkit.access import Policy
from worldkit.check_result import CheckResult, Item
from worldkit.verify.build import Built
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext
from worldkit.verify.paths import SEAT_SPECIFIC, document_path, message_path, record_path
from worldkit.world.models import Record
from worldkit.world.state import WorldState

_NO_INDEX = "no readable frozen index (see manifest-integrity)"


@register
class SeatViewsDistinct(BaseCheck):
    id = "seat-views-distinct"
    purpose = "At each frozen (rev, date), different seats have different fingerprints and different views."
    fix = "Two seats see exactly the same material: give the seats distinct roles/owners, or drop the duplicate seat."

    def run(self, ctx: VerifyContext) -> CheckResult:
        if ctx.index is None:
            return self.skip(_NO_INDEX)
        groups: dict[tuple[str, str], dict[str, tuple[str, frozenset]]] = defaultdict(dict)
        for (rev, date, seat), manifest in ctx.readable.items():
            view = frozenset((e.path, e.sha256) for e in manifest.files if e.path not in SEAT_SPECIFIC)
            groups[(rev, date)][seat] = (manifest.fingerprint, view)
        items: list[Item] = []
        distinct: dict[str, int] = {}
        for (rev, date), seats in sorted(groups.items()):
            names = sorted(seats)
            distinct[f"{rev}@{date}"] = len({seats[s][0] for s in names})
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    if seats[a][0] == seats[b][0]:
                        items.append(Item(kind="same-fingerprint", rev=rev, date=date, seat=f"{a},{b}",
                                          expected="different", actual=seats[a][0]))
                    elif seats[a][1] == seats[b][1]:
                        items.append(Item(kind="same-view", rev=rev, date=date, seat=f"{a},{b}",
                                          detail="identical files and bytes apart from the seat card and tool bundle"))
        return self.outcome(items, distinct_fingerprints=distinct)


@register
class OneSourceOneBytes(BaseCheck):
    id = "one-source-one-bytes"
    purpose = "A file visible to several seats (same rev and date) has the same bytes for each."
    fix = "Seat-specific content leaked into a shared file's rendering: render shared files from the seat-independent snapshot only."

    def run(self, ctx: VerifyContext) -> CheckResult:
        if ctx.index is None:
            return self.skip(_NO_INDEX)
        seen: dict[tuple[str, str, str], dict[str, str]] = defaultdict(dict)
        for (rev, date, seat), manifest in ctx.readable.items():
            for entry in manifest.files:
                if entry.path not in SEAT_SPECIFIC:
                    seen[(rev, date, entry.path)][seat] = entry.sha256
        items: list[Item] = []
        shared = 0
        for (rev, date, path), by_seat in sorted(seen.items()):
            if len(by_seat) > 1:
                shared += 1
                digests = sorted(set(by_seat.values()))
                if len(digests) > 1:
                    items.append(Item(kind="bytes-differ", rev=rev, date=date, path=path,
                                      seat=",".join(sorted(by_seat)), expected=digests[0], actual=",".join(digests[1:])))
        return self.outcome(items, shared_files=shared)


# -- date conformance --------------------------------------------------------------------------

_DATE_DEPENDENT = ("world.as_of", "world.records", "world.documents", "world[")
_TEMPLATE_REF = re.compile(r"""["']([^"'\s]+\.j2)["']""")


def _created(rec: Record) -> dt.date | None:
    events = sorted(enumerate(rec.events), key=lambda p: (p[1].date, p[0]))
    return events[0][1].date if events and events[0][1].kind == "created" else None


def _changes_by_day(state: WorldState) -> dict[dt.date, set[tuple[str, str]]]:
    """Day → the items whose existence or state differs between day-1 and day (one pass over the world)."""
    by_day: dict[dt.date, set[tuple[str, str]]] = defaultdict(set)
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


def _changes_on(state: WorldState, day: dt.date, index: dict[dt.date, set[tuple[str, str]]] | None = None) -> set[tuple[str, str]]:
    """Items whose existence or state differs between day-1 and day (from the world data alone)."""
    return set((index if index is not None else _changes_by_day(state)).get(day, ()))


def _status_as_of(rec: Record, day: dt.date) -> str | None:
    status = None
    for _, event in sorted(enumerate(rec.events), key=lambda p: (p[1].date, p[0])):
        if event.date <= day and event.status is not None:
            status = event.status
    return status


@register
class DateConformance(BaseCheck):
    id = "date-conformance"
    cost = 1
    purpose = ("Dated items (a record, a document and a message, as the world has them) are invisible before their "
               "effective date and visible on it, dated on it (mtime), the rest of the view unchanged in bytes and mtimes.")
    fix = ("The timeline fold leaks or drops dated items, or a file's mtime is not its last change: fix worldkit.timeline "
           "(only events dated <= D survive) or the intended dates (worldkit.render.dated, worldkit.materialize.project).")

    def run(self, ctx: VerifyContext) -> CheckResult:
        rev = ctx.latest_rev
        state = ctx.package.revision(rev)
        policy = Policy(state)
        first = _choose(state, policy) or _choose_file_or_message(state, policy)
        if first is None:
            return self.skip("the world has no seat-visible record, document or message with an effective date to test")
        probes = [first]
        for order in (0, 1):  # besides the record: a document and a message, where the world has them
            more = _choose_file_or_message(state, policy, order)
            if more is not None and more[4] not in {p[4] for p in probes}:
                probes.append(more)
        items: list[Item] = []
        done = [self._probe(ctx, rev, state, choice, items) for choice in probes]
        rec, day, seat, blind, _, label = first
        return self.outcome(items, item=label, record=rec.id if rec is not None else None, effective=day.isoformat(),
                            seat=seat, unentitled_seat=blind, status_change=done[0],
                            probes=[f"{p[5]} on {p[1].isoformat()}" for p in probes])

    def _probe(self, ctx: VerifyContext, rev: str, state: WorldState, choice: Choice, items: list[Item]) -> str | None:
        rec, day, seat, blind, path, label = choice
        before_day, after_day = (day - dt.timedelta(days=1)).isoformat(), day.isoformat()
        before, after = ctx.fresh_build(rev, before_day, seat), ctx.fresh_build(rev, after_day, seat)
        try:
            a, b = before.tree(), after.tree()
            if path in a:
                items.append(Item(kind="visible-before", path=path, seat=seat, date=before_day, rev=rev))
            if path not in b:
                items.append(Item(kind="invisible-after", path=path, seat=seat, date=after_day, rev=rev))
            allowed = _allowed_changes(state, day, path)
            for p in sorted(set(a) | set(b)):
                if a.get(p) != b.get(p) and p not in allowed:
                    items.append(Item(kind="unexpected-change", path=p, seat=seat, rev=rev, date=after_day,
                                      expected=a.get(p), actual=b.get(p),
                                      detail=f"changed between {before_day} and {after_day} though only {label} took effect"))
            items += _mtime_items(before, after, day, path, label)
            status_checked = self._status(ctx, rev, rec, seat, path, items) if rec is not None else None
        finally:
            before.discard()
            after.discard()
        if blind is not None:
            for probe in (before_day, after_day):
                other = ctx.fresh_build(rev, probe, blind)
                if path in other.tree():
                    items.append(Item(kind="visible-to-unentitled", path=path, seat=blind, date=probe, rev=rev))
                other.discard()
        return status_checked

    def _status(self, ctx: VerifyContext, rev: str, rec: Record, seat: str, path: str, items: list[Item]) -> str | None:
        """If the record later changes status (e.g. approval), the old status shows the day before."""
        created = _created(rec)
        later = sorted({e.date for e in rec.events if e.status is not None and created and e.date > created})
        if not later:
            return None
        day = later[0]
        want = {d: _status_as_of(rec, d) for d in (day - dt.timedelta(days=1), day)}
        for probe, expected in want.items():
            built = ctx.fresh_build(rev, probe.isoformat(), seat)
            try:
                actual = json.loads(built.read(path)).get("status") if (built.root / path).is_file() else None
            finally:
                built.discard()
            if actual != expected:
                items.append(Item(kind="status", path=path, seat=seat, rev=rev, date=probe.isoformat(),
                                  expected=str(expected), actual=str(actual)))
        return f"{want[day - dt.timedelta(days=1)]} → {want[day]} on {day.isoformat()}"


Choice = tuple[Record | None, dt.date, str, str | None, str, str]
"""(the record or None, effective date, an entitled seat, an unentitled seat or None, projection path, label)."""


def _mtime_items(before: Built, after: Built, day: dt.date, path: str, label: str) -> list[Item]:
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
            items.append(Item(kind="restamped", path=p, date=on_day, expected=sa.get(p), actual=sb[p],
                              detail=f"same bytes as the day before, new mtime, though only {label} took effect"))
        elif (a.get(p) != b[p] or p == path) and not sb[p].startswith(on_day):
            items.append(Item(kind="misdated", path=p, date=on_day, expected=f"{on_day}T…", actual=sb[p],
                              detail=f"changed on {on_day} but its mtime names another day"))
    return items


def _choose_file_or_message(state: WorldState, policy: Policy, only: int | None = None) -> Choice | None:
    """For a world with no dated record: a document (from its `visible_from`) or a mail, or the first
    message of a chat channel (a later one would only change a file that already exists). `only`
    limits the choice to documents (0) or messages (1)."""
    ranked = []
    for doc in state.documents.values():
        if doc.verifier_only:
            continue
        seats = [s for s in sorted(state.seats) if policy.document(state.seats[s].person, doc)]
        if seats:
            ranked.append((0, doc.visible_from, document_path(state, doc), f"document {doc.id}", seats))
    first_in_channel: dict[str, tuple[dt.date, str]] = {}
    for msg in state.messages.values():
        if msg.kind == "chat" and msg.channel:
            first_in_channel[msg.channel] = min(first_in_channel.get(msg.channel, (msg.date, msg.id)), (msg.date, msg.id))
    for msg in state.messages.values():
        if msg.kind == "chat" and (not msg.channel or first_in_channel[msg.channel] != (msg.date, msg.id)):
            continue
        seats = [s for s in sorted(state.seats) if policy.message(state.seats[s].person, msg)]
        if seats:
            ranked.append((1, msg.date, message_path(msg), f"{msg.kind} message {msg.id}", seats))
    ranked = [r for r in ranked if only is None or r[0] == only]
    if not ranked:
        return None
    options = []
    index = _changes_by_day(state)
    for order, day, path, label, seats in ranked:
        blind = next((s for s in sorted(state.seats) if s not in seats), None)
        alone = len(_changes_on(state, day, index)) == 1
        options.append(((not alone, blind is None, order, path), day, seats[0], blind, path, label))
    _, day, seat, blind, path, label = min(options, key=lambda o: o[0])
    return None, day, seat, blind, path, label


def _choose(state: WorldState, policy: Policy) -> Choice | None:
    """The record to test: prefer one whose effective date changes nothing else, then approvals."""
    ranked = []
    index = _changes_by_day(state)
    for rec in state.records.values():
        day = _created(rec)
        if rec.verifier_only or day is None:
            continue
        seats = [s for s in sorted(state.seats) if policy.record(state.seats[s].person, rec)]
        if not seats:
            continue
        blind = next((s for s in sorted(state.seats) if s not in seats), None)
        alone = _changes_on(state, day, index) == {("record", rec.id)}
        approval = "approval" in rec.type or any(e.kind == "approval" for e in rec.events)
        ranked.append((not alone, not approval, blind is None, rec.id, rec, day, seats[0], blind))
    if not ranked:
        return None
    best = min(ranked, key=lambda r: r[:4])
    return best[4], best[5], best[6], best[7], record_path(state, best[4]), f"record {best[4].id}"


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


def _allowed_changes(state: WorldState, day: dt.date, path: str) -> set[str]:
    """Files that may legitimately differ between day-1 and day besides the record itself."""
    allowed = {path, "records/_relations.json", "seat.json"}
    for kind, key in _changes_on(state, day):
        if kind == "document":
            allowed.add(document_path(state, state.documents[key]))
        elif kind == "record":
            allowed.add(record_path(state, state.records[key]))
        else:
            allowed.add(message_path(state.messages[key]))
    dependent = _date_dependent_templates(state)
    allowed |= {document_path(state, d) for d in state.documents.values() if d.template in dependent}
    return allowed
