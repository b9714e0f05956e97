"""What a check reports: its id, purpose, status, the offending items and the fix.

Pure data. `status` is `pass` or `fail` when the check ran, `skip` when the thing it checks does
not exist here (the reason says what is missing), `error` when the check itself could not run
(verify then exits non-zero with a code other than 1, because nothing was proven either way).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from worldkit._model import Model

Status = Literal["pass", "fail", "skip", "error"]


class Item(Model):
    """One offending thing found by a check."""


    kind: str
    """What is wrong: missing, changed, unexpected, private, future-dated, …"""
    path: str | None = None
    """File path (relative to the tree the check looked at) or entity locator."""
    expected: str | None = None
    """Expected digest or value."""
    actual: str | None = None
    """Digest or value found."""
    rev: str | None = None
    """Revision."""
    date: str | None = None
    """Projection date (ISO)."""
    seat: str | None = None
    """Seat id."""
    where: str | None = None
    """The artifact the item was found in (frozen manifest, staged package, overlay…)."""
    detail: str | None = None
    """One line of explanation."""

    def line(self) -> str:
        """A one-line, human-readable rendering."""
        parts = [self.kind]
        if self.path:
            parts.append(self.path)
        context = " ".join(
            f"{key}={value}" for key, value in (("rev", self.rev), ("date", self.date), ("seat", self.seat)) if value
        )
        if context:
            parts.append(f"[{context}]")
        if self.expected is not None or self.actual is not None:
            parts.append(f"expected {self.expected or '—'} actual {self.actual or '—'}")
        if self.where:
            parts.append(f"in {self.where}")
        if self.detail:
            parts.append(f"— {self.detail}")
        return " ".join(parts)


class CheckResult(Model):
    """The outcome of one check."""


    id: str
    """Stable check id, e.g. `projection-rebuild`."""
    purpose: str
    """One line: what the check proves."""
    status: Status
    """pass, fail, skip (nothing to check here; see `reason`) or error (the check could not run)."""
    items: list[Item] = Field(default_factory=list)
    """On failure: every offending item (capped; see `counts.items_total`)."""
    fix: str | None = None
    """On failure: how to repair it."""
    reason: str | None = None
    """On skip or error: why."""
    counts: dict[str, Any] = Field(default_factory=dict)
    """What was examined (feeds the validation record)."""

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    def as_json(self) -> dict[str, Any]:
        body = self.model_dump(mode="json", exclude_none=True)
        if not self.items:
            body.pop("items", None)
        return body


MAX_ITEMS = 200
"""Items kept per check; the total is in `counts["items_total"]`."""


def result(
    check_id: str,
    purpose: str,
    items: list[Item],
    *,
    fix: str,
    counts: dict[str, Any] | None = None,
) -> CheckResult:
    """pass when `items` is empty, else fail with the items (sorted, capped) and the fix."""
    ordered = sorted(items, key=lambda i: (i.kind, i.rev or "", i.date or "", i.seat or "", i.path or "", i.where or ""))
    counts = dict(counts or {})
    if len(ordered) > MAX_ITEMS:
        counts["items_total"] = len(ordered)
    return CheckResult(
        id=check_id,
        purpose=purpose,
        status="fail" if ordered else "pass",
        items=ordered[:MAX_ITEMS],
        fix=fix if ordered else None,
        counts=counts,
    )
