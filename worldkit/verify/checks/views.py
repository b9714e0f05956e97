"""Checks across views: seats see different things, one source has one byte string (dates: `dates`)."""

from __future__ import annotations

from collections import defaultdict

from worldkit.check_result import CheckResult, Item
from worldkit.verify.checks import BaseCheck, register
from worldkit.verify.context import VerifyContext
from worldkit.verify.paths import SEAT_SPECIFIC

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
