"""The registry of verify checks: one small class per check, each with an id, purpose and fix.

A check reads a `VerifyContext` and returns a `CheckResult`; it never writes outside the context's
scratch folder. Register a new check with `@register` in one of the modules imported at the bottom
of this file, and give it a place in `ORDER` (the report order).
"""

from __future__ import annotations

import traceback
from collections.abc import Iterable
from typing import ClassVar, Protocol

from worldkit.check_result import CheckResult, Item, result
from worldkit.errors import ExitCode, WorldkitError
from worldkit.verify.context import ComponentMissing, VerifyContext


class Check(Protocol):
    """A verify check."""

    id: ClassVar[str]
    purpose: ClassVar[str]
    fix: ClassVar[str]
    tags: ClassVar[frozenset[str]]
    cost: ClassVar[int]

    def run(self, ctx: VerifyContext) -> CheckResult: ...


REGISTRY: dict[str, type[Check]] = {}

REPEAT = "repeat"
"""Tag of the reproducibility checks (several extra materializations; skipped in seeded copies)."""


def register(cls: type[Check]) -> type[Check]:
    if cls.id in REGISTRY:
        raise ValueError(f"check id {cls.id!r} registered twice")
    REGISTRY[cls.id] = cls
    return cls


class BaseCheck:
    """Helpers shared by checks."""

    id: ClassVar[str]
    purpose: ClassVar[str]
    fix: ClassVar[str]
    tags: ClassVar[frozenset[str]] = frozenset()
    cost: ClassVar[int] = 0
    """Rough cost: 0 reads manifests, 1 rebuilds projections, 2 stages overlays, 3 starts servers."""

    def outcome(self, items: list[Item], **counts: object) -> CheckResult:
        return result(self.id, self.purpose, items, fix=self.fix, counts=dict(counts))

    def skip(self, reason: str, **counts: object) -> CheckResult:
        return CheckResult(id=self.id, purpose=self.purpose, status="skip", reason=reason, counts=dict(counts))


ORDER = (
    "revision-digests", "manifest-integrity", "revision-pins", "projection-rebuild", "rebuild-repeat",
    "seat-repeat", "seat-views-distinct", "one-source-one-bytes", "date-conformance", "access-audit",
    "task-pairs-identical", "staged-workspaces", "package-integrity", "overlay-locks", "separation",
    "evidence-sufficiency", "rubric-sanity", "reference-access", "rubric-discrimination",
    "rubric-mutation", "tool-surface", "event-logs",
)  # fmt: skip
"""Report order: the frozen state first, then views, access, tasks and tools."""


def check_ids() -> list[str]:
    rank = {check_id: n for n, check_id in enumerate(ORDER)}
    return sorted(REGISTRY, key=lambda check_id: rank.get(check_id, len(ORDER)))


def run_checks(
    ctx: VerifyContext,
    *,
    only: Iterable[str] | None = None,
    exclude_tags: Iterable[str] = (),
    stop_on_fail: bool = False,
    cheapest_first: bool = False,
) -> list[CheckResult]:
    """Run the registered checks in order; a crash becomes status `error`, never a silent pass.

    `stop_on_fail` stops at the first failure (a failure blocks the run, so the rest cannot
    change the verdict); with `cheapest_first` the cheap checks run first. The mutation campaign
    uses both.
    """
    wanted = set(only) if only is not None else None
    excluded = set(exclude_tags)
    results: list[CheckResult] = []
    rank = {check_id: n for n, check_id in enumerate(ORDER)}

    def order(pair: tuple[str, type[Check]]) -> tuple[int, int]:
        return (pair[1].cost if cheapest_first else 0, rank.get(pair[0], len(ORDER)))

    for check_id, cls in sorted(REGISTRY.items(), key=order):
        if wanted is not None and check_id not in wanted:
            continue
        if cls.tags & excluded:
            continue
        results.append(run_one(cls(), ctx))
        if stop_on_fail and results[-1].status == "fail":
            break
    return results


def run_one(check: Check, ctx: VerifyContext) -> CheckResult:
    try:
        return check.run(ctx)
    except ComponentMissing as missing:
        return CheckResult(id=check.id, purpose=check.purpose, status="skip", reason=str(missing))
    except WorldkitError as error:
        if error.exit_code == ExitCode.CHECK_FAILED:
            return CheckResult(
                id=check.id, purpose=check.purpose, status="fail", fix=check.fix,
                items=[Item(kind="failed", detail=error.message)],
            )
        return CheckResult(id=check.id, purpose=check.purpose, status="error", reason=error.message)
    except Exception as error:  # noqa: BLE001 - a crashing check must be reported, not hidden
        where = traceback.extract_tb(error.__traceback__)[-1]
        return CheckResult(
            id=check.id, purpose=check.purpose, status="error",
            reason=f"{type(error).__name__}: {error} (at {where.filename}:{where.lineno}); this is a bug in the check",
        )


# Importing the check modules registers them (they need `register` and `BaseCheck` above).
from worldkit.verify.checks import (  # noqa: E402, F401
    access,
    dates,
    frozen,
    logs,
    rubric,
    rubric_discrimination,
    rubric_mutation,
    tasks,
    tools,
    views,
)
